/* SPDX-License-Identifier: Apache-2.0 */
/* cli/audit_cli.h: what `dpzo audit` and `dpzo plot` share: claims from files and from
 * command-line flags. */
#ifndef DPZO_CLI_AUDIT_CLI_H
#define DPZO_CLI_AUDIT_CLI_H

#include <dpzo/audit_claim.h>
#include "account.h"
#include "args.h"

#define CLAIM_OPTS                                                                          \
    {"noise-multiplier", 1}, {"sampling-rate", 1}, {"batch-size", 1}, {"dataset-size", 1},  \
        {"sampling", 1}, {"steps", 1}, {"epochs", 1}, {"epsilon", 1}, {"delta", 1},         \
        {"adjacency", 1}, {"pipeline", 1}, {"effective-batch-size", 1}, {"orders", 1},      \
        {"conversion", 1}, {"name", 1}

#define CLAIM_HELP                                                                          \
    "A claim on the command line (instead of, or besides, claim files):\n"                  \
    "  --noise-multiplier S   Gaussian noise: std S*C on the sum of contributions clipped\n" \
    "                         to C\n"                                                        \
    "  --sampling-rate Q      Poisson sampling at rate Q, or\n"                              \
    "  --batch-size B --dataset-size N   batches of B of N: fixed (drawn without\n"          \
    "                         replacement each step; the default), or with --sampling\n"     \
    "  --sampling S           poisson, fixed, shuffled (per-epoch shuffling) or full\n"      \
    "  --steps T | --epochs E steps, or epochs (steps = ceil(E N / B), as TF Privacy)\n"      \
    "  --epsilon E --delta D  the claimed (epsilon, delta)\n"                                \
    "  --adjacency A          add-remove (default for poisson/full), replace-one (default\n" \
    "                         for fixed/shuffled) or zero-out\n"                             \
    "  --pipeline S           how the code really drew batches, when it differs from the\n"  \
    "                         accounted sampling (e.g. shuffled)\n"                           \
    "  --effective-batch-size K  examples per optimiser step after gradient accumulation\n"  \
    "  --orders O --conversion C  the authors' RDP accountant (tf, opacus, dp_accounting or\n" \
    "                         a list; standard or improved): the claim is also evaluated\n"  \
    "                         with it\n"                                                     \
    "  --name TEXT            a name for the claim\n"

/* Splits argv into positional file names and the options (with their values) that
 * args_parse understands; option values are recognised through `specs`. */
/* Splits argv into file arguments and options (an option's value stays with it) and
 * parses the options into *a. *files is allocated (argc + 1 entries, the files first, NULL
 * after them); the caller frees it whatever the result. Returns args_parse's status, or a
 * usage error when out of memory (*files NULL then). */
int cli_parse_files(int argc, char **argv, const opt_spec *specs, const char ***files,
                    int *nfiles, parsed_args *a);

typedef struct {
    dpzo_claim_spec *specs; /* files' claims, then the inline one */
    size_t n;
    dpzo_claim_spec **blocks; /* one allocation per file */
    size_t nblocks;
    order_choice oc;          /* owns the inline claim's custom orders */
    int inline_claim;         /* the last spec came from flags */
} claim_set;

/* Claims of the files and of the flags (need_epsilon: --epsilon is required for an inline
 * claim; otherwise it defaults to 0). Exit status (0 or 2, message printed). */
int claims_load(dpzo_ctx *ctx, const char **files, int nfiles, const parsed_args *a,
                int need_epsilon, claim_set *out);
void claims_free(claim_set *s);

#endif
