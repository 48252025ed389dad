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

/* The event of --noise-multiplier/--sampling-rate/--steps or of --schedule. */
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
        {"batch-size", 1}, {"dataset-size", 1}
#define ORDER_OPTS {"orders", 1}, {"conversion", 1}, {"alpha-max", 1}
#define TIGHT_OPTS                                                                         \
    {"accountant", 1}, {"grid", 1}, {"eps-error", 1}, {"delta-error", 1}, {"memory-limit", 1}

#define TIGHT_HELP                                                                         \
    "  --accountant      rdp (default), pld (privacy loss distributions: proven lower and\n" \
    "                    upper bounds, tight) or prv (Gopi-Lee-Wutschitz: mesh from an\n"    \
    "                    error target)\n"                                                    \
    "  --grid D          pld: loss discretisation interval (default 1e-4; smaller is\n"     \
    "                    tighter and slower)\n"                                              \
    "  --eps-error E     prv: epsilon error target (default 0.01); pld: fall back to RDP\n"  \
    "                    when the interval is wider than E (default: never)\n"               \
    "  --delta-error D   prv: delta error (default delta/1000)\n"                            \
    "  --memory-limit M  MiB the tight accountants may allocate (default 2048); larger\n"    \
    "                    requests are refused with the size they need\n"

#endif
