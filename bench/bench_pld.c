/* SPDX-License-Identifier: Apache-2.0 */
/* bench/bench_pld.c: timings and values of dpzo's tight accountants on the cases of
 * bench/anchors_pld.py (dp_accounting PLD and microsoft prv_accountant), as JSON.
 * Each case is timed as the best of `reps` runs (one run above one second). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dpzo/dpzo.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int first = 1;

static dpzo_event *sgm(dpzo_ctx *ctx, double q, double sigma, uint64_t k)
{
    return dpzo_event_self_composed(
        ctx, dpzo_event_poisson_sampled(ctx, q, dpzo_event_gaussian(ctx, sigma)), k);
}

static dpzo_event *hetero(dpzo_ctx *ctx, int n)
{
    dpzo_phase *ph = malloc((size_t)n * sizeof *ph);
    for (int i = 0; i < n; i++) {
        ph[i].noise_multiplier = n > 1 ? 1.0 + (double)i / (double)(n - 1) : 1.0;
        ph[i].sampling_rate = 0.01;
        ph[i].steps = 1;
    }
    dpzo_event *e = dpzo_event_from_schedule(ctx, ph, (size_t)n);
    free(ph);
    return e;
}

/* method: 0 PLD (grid), 1 PRV (eps_error); want_delta: query delta at `target` */
static void run(dpzo_ctx *ctx, const char *cs, const char *label, dpzo_event *e, int method,
                double grid, double target, int want_delta)
{
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    o.method = method ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS;
    if (method)
        o.eps_error = 0.01;
    else
        o.grid = grid;
    o.memory_limit = (size_t)8 << 30;
    dpzo_pld_result r;
    double best = INFINITY;
    dpzo_status st = DPZO_OK;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        st = want_delta ? dpzo_pld_delta(ctx, e, target, &o, &r)
                        : dpzo_pld_epsilon(ctx, e, target, &o, &r);
        double t = now() - t0;
        if (st)
            break;
        best = t < best ? t : best;
        if (t > 1.0)
            break;
    }
    printf("%s  {\"case\": \"%s\", \"label\": \"%s\", \"library\": \"dpzo\", \"setting\": ",
           first ? "" : ",\n", cs, label);
    first = 0;
    if (method)
        printf("\"prv eps_error=0.01\"");
    else
        printf("\"pld d=%g\"", grid);
    if (st) {
        printf(", \"status\": \"error\", \"error\": \"%s\"}", dpzo_ctx_errmsg(ctx));
        return;
    }
    if (want_delta)
        printf(", \"status\": \"ok\", \"epsilon\": %.17g, \"delta_lower\": %.17g, "
               "\"delta_estimate\": %.17g, \"delta_upper\": %.17g",
               target, r.delta_lower, r.delta_estimate, r.delta_upper);
    else
        printf(", \"status\": \"ok\", \"delta\": %.17g, \"epsilon_lower\": %.17g, "
               "\"epsilon_estimate\": %.17g, \"epsilon_upper\": %.17g",
               target, r.epsilon_lower, r.epsilon_estimate, r.epsilon_upper);
    printf(", \"fallback\": %d, \"fft_size\": %zu, \"memory_mb\": %.1f, \"seconds\": %.6g}",
           r.fallback, r.fft_size, (double)r.memory_bytes / 1048576.0, best);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    dpzo_ctx *ctx = dpzo_ctx_new();
    printf("[\n");
    static const uint64_t ks[] = {1000, 10000, 100000, 1000000};
    static const char *kl[] = {"k=1e3", "k=1e4", "k=1e5", "k=1e6"};
    for (int i = 0; i < 4; i++) {
        dpzo_event *e = sgm(ctx, 0.01, 1.0, ks[i]);
        run(ctx, "A", kl[i], e, 0, 1e-4, 1e-6, 0);
        run(ctx, "A", kl[i], e, 0, 1e-3, 1e-6, 0);
        if (!quick || i < 2)
            run(ctx, "A", kl[i], e, 1, 0, 1e-6, 0);
        dpzo_event_free(e);
    }
    static const int ns[] = {10, 100, 1000};
    static const char *nl[] = {"n=10", "n=100", "n=1000"};
    for (int i = 0; i < 3; i++) {
        dpzo_event *e = hetero(ctx, ns[i]);
        run(ctx, "B", nl[i], e, 0, 1e-3, 1e-6, 0);
        if (!quick || i < 2)
            run(ctx, "B", nl[i], e, 0, 1e-4, 1e-6, 0);
        run(ctx, "B", nl[i], e, 1, 0, 1e-6, 0);
        dpzo_event_free(e);
    }
    static const double ds[] = {1e-10, 1e-15, 1e-20, 1e-30};
    static const char *dl[] = {"delta=1e-10", "delta=1e-15", "delta=1e-20", "delta=1e-30"};
    for (int i = 0; i < 4; i++) {
        dpzo_event *e = sgm(ctx, 0.01, 1.0, 1000);
        run(ctx, "C", dl[i], e, 0, 1e-4, ds[i], 0);
        run(ctx, "C", dl[i], e, 1, 0, ds[i], 0);
        dpzo_event_free(e);
    }
    dpzo_event *e = sgm(ctx, 0.2, 0.8, 1000);
    run(ctx, "D", "q=0.2,sigma=0.8,k=1000", e, 0, 1e-4, 1e-5, 0);
    run(ctx, "D", "q=0.2,sigma=0.8,k=1000", e, 1, 0, 1e-5, 0);
    dpzo_event_free(e);
    e = sgm(ctx, 0.05, 0.8, 20000);
    run(ctx, "D", "q=0.05,sigma=0.8,k=20000", e, 0, 1e-4, 1e-5, 0);
    if (!quick)
        run(ctx, "D", "q=0.05,sigma=0.8,k=20000", e, 1, 0, 1e-5, 0);
    dpzo_event_free(e);
    e = dpzo_event_self_composed(ctx, dpzo_event_gaussian(ctx, sqrt(3.0)), 3);
    run(ctx, "E", "gaussian sqrt(3) x3: delta(eps=1)", e, 0, 1e-4, 1.0, 1);
    dpzo_event_free(e);
    e = sgm(ctx, 0.2, 0.5, 3);
    run(ctx, "E", "SGM q=0.2,sigma=0.5 x3: delta(eps=1)", e, 0, 1e-4, 1.0, 1);
    dpzo_event_free(e);
    e = sgm(ctx, 256.0 / 60000.0, 1.1, 14063);
    run(ctx, "E", "TF MNIST: eps(delta=1e-5)", e, 0, 1e-4, 1e-5, 0);
    dpzo_event_free(e);
    printf("\n]\n");
    dpzo_ctx_free(ctx);
    return 0;
}
