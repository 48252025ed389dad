/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/orders.c: the named order grids of other libraries, reproduced exactly.
 * F(x) = 1 + x/10 is folded by the compiler with IEEE rounding, giving the same doubles
 * as Python's `1 + x / 10.0` in Opacus and dp_accounting. */
#include <string.h>
#include "rdp_internal.h"

#define F(x) (1.0 + (x) / 10.0)

/* Opacus RDPAccountant.DEFAULT_ALPHAS: 1.1..10.9, 12..63 (151 orders). */
static const double opacus_grid[] = {
    F(1), F(2), F(3), F(4), F(5), F(6), F(7), F(8), F(9), F(10), F(11), F(12),
    F(13), F(14), F(15), F(16), F(17), F(18), F(19), F(20), F(21), F(22), F(23), F(24),
    F(25), F(26), F(27), F(28), F(29), F(30), F(31), F(32), F(33), F(34), F(35), F(36),
    F(37), F(38), F(39), F(40), F(41), F(42), F(43), F(44), F(45), F(46), F(47), F(48),
    F(49), F(50), F(51), F(52), F(53), F(54), F(55), F(56), F(57), F(58), F(59), F(60),
    F(61), F(62), F(63), F(64), F(65), F(66), F(67), F(68), F(69), F(70), F(71), F(72),
    F(73), F(74), F(75), F(76), F(77), F(78), F(79), F(80), F(81), F(82), F(83), F(84),
    F(85), F(86), F(87), F(88), F(89), F(90), F(91), F(92), F(93), F(94), F(95), F(96),
    F(97), F(98), F(99), 12, 13, 14, 15, 16, 17, 18, 19, 20,
    21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
    33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
    45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,
    57, 58, 59, 60, 61, 62, 63,
};

/* dp_accounting DEFAULT_RDP_ORDERS: 1.1..10.9, 11..63, 128, 256, 512, 1024 (156 orders). */
static const double dpa_grid[] = {
    F(1), F(2), F(3), F(4), F(5), F(6), F(7), F(8), F(9), F(10), F(11), F(12),
    F(13), F(14), F(15), F(16), F(17), F(18), F(19), F(20), F(21), F(22), F(23), F(24),
    F(25), F(26), F(27), F(28), F(29), F(30), F(31), F(32), F(33), F(34), F(35), F(36),
    F(37), F(38), F(39), F(40), F(41), F(42), F(43), F(44), F(45), F(46), F(47), F(48),
    F(49), F(50), F(51), F(52), F(53), F(54), F(55), F(56), F(57), F(58), F(59), F(60),
    F(61), F(62), F(63), F(64), F(65), F(66), F(67), F(68), F(69), F(70), F(71), F(72),
    F(73), F(74), F(75), F(76), F(77), F(78), F(79), F(80), F(81), F(82), F(83), F(84),
    F(85), F(86), F(87), F(88), F(89), F(90), F(91), F(92), F(93), F(94), F(95), F(96),
    F(97), F(98), F(99), 11, 12, 13, 14, 15, 16, 17, 18, 19,
    20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
    32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
    44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55,
    56, 57, 58, 59, 60, 61, 62, 63, 128, 256, 512, 1024,
};

/* TF Privacy compute_dp_sgd_privacy orders (72). */
static const double tf_grid[] = {
    1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5, 5, 6,
    7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
    19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
    31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42,
    43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54,
    55, 56, 57, 58, 59, 60, 61, 62, 63, 128, 256, 512,
};

size_t dpzo_order_grid_values(dpzo_order_grid grid, const double **orders)
{
    switch (grid) {
    case DPZO_ORDERS_OPACUS: *orders = opacus_grid; return sizeof opacus_grid / sizeof(double);
    case DPZO_ORDERS_DP_ACCOUNTING: *orders = dpa_grid; return sizeof dpa_grid / sizeof(double);
    case DPZO_ORDERS_TF: *orders = tf_grid; return sizeof tf_grid / sizeof(double);
    default: *orders = NULL; return 0;
    }
}

dpzo_status dpzo_order_grid_parse(dpzo_ctx *ctx, const char *name, dpzo_order_grid *grid)
{
    static const struct {
        const char *name;
        dpzo_order_grid grid;
    } names[] = {{"default", DPZO_ORDERS_CONTINUOUS}, {"continuous", DPZO_ORDERS_CONTINUOUS},
                 {"opacus", DPZO_ORDERS_OPACUS},      {"tf", DPZO_ORDERS_TF},
                 {"dp_accounting", DPZO_ORDERS_DP_ACCOUNTING}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i].name) == 0) {
            *grid = names[i].grid;
            return DPZO_OK;
        }
    return dpzo__fail(ctx, DPZO_EINVAL,
                      "unknown order grid '%s' (expected default, opacus, tf, dp_accounting "
                      "or a list of orders)", name);
}
