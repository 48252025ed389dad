/* SPDX-License-Identifier: Apache-2.0 */
/* bench/bench_accountant.c: dpzo's side of the accountant benchmark (bench/run.sh runs
 * it next to dp_accounting and Opacus and prints the comparison table). Prints JSON.
 * Workloads mirror bench/anchors.py exactly: Poisson-sampled Gaussian q = 0.01,
 * sigma = 1 (sigma_i = linspace(1, 2, n) for heterogeneous steps), delta = 1e-6;
 * calibration for (epsilon 8, delta 1e-5, q 0.04, 2250 steps). Usage:
 *   dpzo-bench [--max-hetero N]   (default 1000000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dpzo/dpzo.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(dpzo_ctx *ctx, const char *what)
{
    fprintf(stderr, "dpzo-bench: %s: %s\n", what, dpzo_ctx_errmsg(ctx));
    exit(1);
}

static dpzo_event *sgm(dpzo_ctx *ctx, double q, double sigma)
{
    return dpzo_event_poisson_sampled(ctx, q, dpzo_event_gaussian(ctx, sigma));
}

/* Time to compute the RDP curve of one event on a grid, per order (min over reps). */
static void per_order(dpzo_ctx *ctx, dpzo_order_grid grid, const char *name, int last)
{
    const double *orders;
    size_t n = dpzo_order_grid_values(grid, &orders);
    double *rdp = malloc(n * sizeof *rdp), best = 1e30;
    dpzo_event *e = sgm(ctx, 0.01, 1.0);
    for (int rep = 0; rep < 50; rep++) {
        double t0 = now();
        if (dpzo_event_rdp(ctx, e, orders, n, rdp))
            die(ctx, "rdp");
        double t = now() - t0;
        best = t < best ? t : best;
    }
    double eps, order;
    if (dpzo_rdp_curve_to_epsilon(ctx, orders, rdp, n, 1e-6, DPZO_CONVERSION_IMPROVED, &eps, &order))
        die(ctx, "curve");
    printf("    \"%s\": {\"us_per_order\": %.6g, \"orders\": %zu, \"epsilon\": %.17g, \"order\": %.17g}%s\n",
           name, 1e6 * best / (double)n, n, eps, order, last ? "" : ",");
    dpzo_event_free(e);
    free(rdp);
}

static void hetero(dpzo_ctx *ctx, size_t n, dpzo_order_grid grid, const char *gname, int last)
{
    dpzo_event **list = malloc(n * sizeof *list);
    for (size_t i = 0; i < n; i++)
        list[i] = sgm(ctx, 0.01, n == 1 ? 1.0 : 1.0 + (double)i / (double)(n - 1));
    dpzo_event *e = dpzo_event_composed(ctx, list, n);
    free(list);
    if (e == NULL)
        die(ctx, "compose");
    dpzo_rdp_options o = dpzo_rdp_options_default();
    o.grid = grid;
    dpzo_dp_result r;
    double t0 = now();
    if (dpzo_event_epsilon(ctx, e, 1e-6, &o, &r))
        die(ctx, "epsilon");
    double t = now() - t0;
    /* the anchors' work: the fast RDP curve on the grid, then the conversion */
    char same[96] = "";
    const double *orders;
    size_t n_orders = dpzo_order_grid_values(grid, &orders);
    if (n_orders > 0) {
        double *rdp = malloc(n_orders * sizeof *rdp), eps, order;
        double t1 = now();
        if (dpzo_event_rdp(ctx, e, orders, n_orders, rdp)
            || dpzo_rdp_curve_to_epsilon(ctx, orders, rdp, n_orders, 1e-6,
                                         DPZO_CONVERSION_IMPROVED, &eps, &order))
            die(ctx, "curve");
        snprintf(same, sizeof same, ", \"seconds_same_work\": %.6g, \"epsilon_same_work\": %.17g",
                 now() - t1, eps);
        free(rdp);
    }
    printf("    {\"n\": %zu, \"grid\": \"%s\", \"seconds\": %.6g, \"epsilon\": %.17g, "
           "\"epsilon_estimate\": %.17g, \"order\": %.17g, \"rounding\": %.3g%s}%s\n",
           n, gname, t, r.epsilon, r.epsilon_estimate, r.order, r.rounding, same,
           last ? "" : ",");
    fflush(stdout);
    dpzo_event_free(e);
}

int main(int argc, char **argv)
{
    size_t max_hetero = 1000000;
    if (argc == 3 && strcmp(argv[1], "--max-hetero") == 0)
        max_hetero = (size_t)strtoull(argv[2], NULL, 10);
    dpzo_ctx *ctx = dpzo_ctx_new();
    printf("{\n  \"per_order\": {\n");
    per_order(ctx, DPZO_ORDERS_DP_ACCOUNTING, "dp_accounting_grid", 0);
    per_order(ctx, DPZO_ORDERS_OPACUS, "opacus_grid", 0);
    {
        dpzo_event *e = sgm(ctx, 0.01, 1.0);
        dpzo_dp_result r;
        double best = 1e30;
        for (int rep = 0; rep < 20; rep++) {
            double t0 = now();
            if (dpzo_event_epsilon(ctx, e, 1e-6, NULL, &r))
                die(ctx, "epsilon");
            double t = now() - t0;
            best = t < best ? t : best;
        }
        printf("    \"continuous\": {\"us_total\": %.6g, \"epsilon\": %.17g, \"order\": %.17g}\n",
               1e6 * best, r.epsilon, r.order);
        dpzo_event_free(e);
    }
    printf("  },\n  \"hetero\": [\n");
    const size_t ns[] = {1, 10, 100, 1000, 10000, 1000000};
    struct {
        dpzo_order_grid g;
        const char *name;
    } grids[] = {{DPZO_ORDERS_DP_ACCOUNTING, "dp_accounting"},
                 {DPZO_ORDERS_OPACUS, "opacus"},
                 {DPZO_ORDERS_CONTINUOUS, "continuous"}};
    size_t count = 0, total = 0;
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
        total += ns[i] <= max_hetero ? 3 : 0;
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
        for (size_t g = 0; g < 3 && ns[i] <= max_hetero; g++)
            hetero(ctx, ns[i], grids[g].g, grids[g].name, ++count == total);
    printf("  ],\n");
    {
        dpzo_calibration c;
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now();
            if (dpzo_calibrate_noise(ctx, 8.0, 1e-5, 0.04, 2250, 0, NULL, &c))
                die(ctx, "calibrate");
            double t = now() - t0;
            best = t < best ? t : best;
        }
        printf("  \"calibrate\": {\"seconds\": %.6g, \"sigma\": %.17g, \"epsilon_at_sigma\": %.17g, "
               "\"evaluations\": %d},\n", best, c.value, c.epsilon, c.evaluations);
    }
    {
        const double *orders;
        size_t n = dpzo_order_grid_values(DPZO_ORDERS_DP_ACCOUNTING, &orders);
        double tf = now();
        for (size_t i = 0; i < n; i++) {
            double r;
            if (dpzo_rdp_sampled_gaussian(ctx, 0.01, 1.0, orders[i], &r))
                die(ctx, "fast");
        }
        tf = now() - tf;
        double tc = now();
        for (size_t i = 0; i < n; i++) {
            dpzo_bound b;
            if (dpzo_rdp_sampled_gaussian_certified(ctx, 0.01, 1.0, orders[i], &b))
                die(ctx, "certified");
        }
        tc = now() - tc;
        printf("  \"certified\": {\"us_per_order_fast\": %.6g, \"us_per_order_certified\": %.6g, "
               "\"ratio\": %.6g},\n", 1e6 * tf / (double)n, 1e6 * tc / (double)n, tc / tf);
    }
    {
        const double orders[] = {1024, 2048, 4096, 10000};
        printf("  \"large_order\": {\"orders\": [1024, 2048, 4096, 10000], \"rdp\": [");
        for (int i = 0; i < 4; i++) {
            double r;
            if (dpzo_rdp_sampled_gaussian(ctx, 0.01, 1.0, orders[i], &r))
                die(ctx, "large");
            printf("%.17g%s", r, i < 3 ? ", " : "");
        }
        printf("]}\n}\n");
    }
    dpzo_ctx_free(ctx);
    return 0;
}
