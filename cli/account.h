/* cli/account.h: what the accounting commands share: the training description
 * (sigma, q, steps or a schedule) and the order/conversion options. */
#ifndef DPZO_CLI_ACCOUNT_H
#define DPZO_CLI_ACCOUNT_H

#include <dpzo/dpzo.h>
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

/* Maps a library failure to an exit status and prints its message. */
int report_failure(dpzo_ctx *ctx, dpzo_status st);

#define TRAINING_OPTS                                                                      \
    {"noise-multiplier", 1}, {"sampling-rate", 1}, {"steps", 1}, {"schedule", 1},          \
        {"batch-size", 1}, {"dataset-size", 1}
#define ORDER_OPTS {"orders", 1}, {"conversion", 1}, {"alpha-max", 1}

#endif
