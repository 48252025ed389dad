/* SPDX-License-Identifier: Apache-2.0 */
/* cli/account.h: what the accounting commands share: the training description
 * (sigma, q, steps or a schedule) and the order/conversion options. */
#ifndef DPZO_CLI_ACCOUNT_H
#define DPZO_CLI_ACCOUNT_H

#include <dpzo/dpzo.h>
#include <cjson/cJSON.h>
#include "args.h"

typedef struct {
    dpzo_rdp_options opts;
    double *custom_orders; /* owned */
    const char *orders_name;
} order_choice;

/* --orders and --conversion and --alpha-max into `oc`; 0 or exit status 2. */
int order_choice_parse(const parsed_args *a, order_choice *oc);
void order_choice_free(order_choice *oc);

/* --sampling-rate Q (Poisson) or --batch-size B --dataset-size N (fixed batches: *size
 * N > 0, *q = B / N); neither leaves *q 0 and *size 0. 0 or exit status 2. */
int training_sampling(const parsed_args *a, double *q, uint64_t *batch, uint64_t *size);
/* --steps T or --epochs E, never both: T = ceil(E N / B) with fixed batches (size > 0;
 * exact for whole epochs), ceil(E / q) for Poisson (rounded up: never fewer steps than
 * the epochs run). `note` receives " (E epochs of ..., rounded up)" or "". 0 or exit
 * status 2. */
int training_steps(const parsed_args *a, double q, uint64_t batch, uint64_t size,
                   uint64_t *steps, char *note, size_t note_size);
/* The event of --noise-multiplier, the sampling and the steps above, of --schedule, or of
 * --event FILE (an event written as JSON, docs/accountant.md section 7). */
int training_event(dpzo_ctx *ctx, const parsed_args *a, dpzo_event **event, char *desc,
                   size_t desc_size);

/* --accountant rdp|pld|prv and the tight accountants' options. */
typedef struct {
    int tight;             /* 0: RDP */
    dpzo_pld_options opts; /* opts.rdp points into the order_choice given to the parser */
    const char *name;      /* "rdp", "pld" or "prv" */
} accountant_choice;

/* 0 or exit status 2. */
int accountant_choice_parse(const parsed_args *a, const order_choice *oc, accountant_choice *ac);
/* Text lines and JSON keys describing a tight result. */
void tight_print_text(const accountant_choice *ac, const dpzo_pld_result *r, int want_delta);
void tight_add_json(cJSON *o, const accountant_choice *ac, const dpzo_pld_result *r);

/* Maps a library failure to an exit status and prints its message. */
int report_failure(dpzo_ctx *ctx, dpzo_status st);

#define TRAINING_OPTS                                                                      \
    {"noise-multiplier", 1}, {"sampling-rate", 1}, {"steps", 1}, {"schedule", 1},          \
        {"batch-size", 1}, {"dataset-size", 1}, {"epochs", 1}, {"event", 1}
#define ORDER_OPTS {"orders", 1}, {"conversion", 1}, {"alpha-max", 1}
#define TIGHT_OPTS                                                                         \
    {"accountant", 1}, {"grid", 1}, {"eps-error", 1}, {"delta-error", 1}, {"memory-limit", 1}

/* One story for fixed batches everywhere (README, docs/accountant.md, docs/audit.md 3,
 * docs/trainer.md 2.3): the without-replacement accounting proves batches drawn afresh at
 * every step, not the batches of a shuffled epoch. */
#define FIXED_BATCH_HELP                                                                   \
    "  --batch-size B --dataset-size N\n"                                                  \
    "                    instead of --sampling-rate: every step draws a batch of exactly B\n" \
    "                    of the N records without replacement, independently of the other\n" \
    "                    steps (replace-one adjacency, Wang-Balle-Kasiviswanathan 2019).\n"   \
    "                    That is what is proven. It is not a proof for shuffled batches\n"   \
    "                    (one permutation per epoch, cut into batches): those are not\n"     \
    "                    independent, and no amplification is proven for them; `dpzo audit\n" \
    "                    --pipeline shuffled` gives what is (docs/audit.md section 3)\n"     \
    "  --epochs E        instead of --steps: T = ceil(E N / B) steps with --batch-size\n"      \
    "                    (exact for whole epochs), ceil(E / Q) with --sampling-rate; rounded\n" \
    "                    up, never fewer steps than E epochs. --steps and --epochs together\n" \
    "                    are refused\n"

#define EVENT_HELP                                                                         \
    "  --event FILE      instead of all the above: any event, written as JSON with\n"       \
    "                    dp_accounting's names (docs/accountant.md section 7), e.g.\n"       \
    "                    {\"type\": \"SelfComposed\", \"count\": 1000, \"event\":\n"     \
    "                     {\"type\": \"PoissonSampled\", \"sampling_probability\": 0.01,\n" \
    "                      \"event\": {\"type\": \"Gaussian\", \"noise_multiplier\": 1.1}}}\n"

#define TIGHT_HELP                                                                         \
    "  --accountant      rdp (default), pld (privacy loss distributions: proven lower and\n" \
    "                    upper bounds, tight) or prv (Gopi-Lee-Wutschitz: mesh from an\n"    \
    "                    error target)\n"                                                    \
    "  --grid D          pld: loss discretisation interval (default 1e-4, refined up to\n"  \
    "                    100x where the interval is wider than max(1e-3 eps, 1e-6) and\n"  \
    "                    that fits 16 MiB). A D given is rounded down to {1,2,5}x10^k\n"   \
    "                    and the tightest ends over it and every coarser such grid are\n"  \
    "                    answered: a finer D never gives a looser end (about twice the\n" \
    "                    work of one grid)\n"                                              \
    "  --eps-error E     prv: epsilon error target (default 0.01); pld: fall back to RDP\n"  \
    "                    when the interval is wider than E (default: never)\n"               \
    "  --delta-error D   prv: delta error (default delta/1000); the mesh is solved at D\n"   \
    "                    when given, else at 1e-13, the same at every delta\n"              \
    "  --memory-limit M  MiB the tight accountants may hold at once (default 2048; in\n"    \
    "                    [1, 1048576], fractions kept: 1.5 is 1536 KiB); pld: larger\n"      \
    "                    requests are refused with the size they need (exit 1); prv:\n"      \
    "                    the finest mesh that fits is used (a larger epsilon error)\n"

#endif
