/* SPDX-License-Identifier: Apache-2.0 */
/* bench/bench_lmo.c: timings of dpzo's LMO noise search (JSON on stdout; bench/run.sh
 * puts them beside the pure-Python replica of the released search, bench/lmo_replica.py,
 * measured in the same run, and bench/report_lmo.py prints the table).
 *
 *   dpzo-bench-lmo [--quick]
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <dpzo/dpzo.h>

typedef struct {
    const char *name, *grid;
    int paper;
    dpzo_lmo_objective objective;
    double epsilon;
    unsigned threads;
    int sst2; /* sound mode: SST-2 run (q = 2048/67350, T = 192, delta 1e-10) */
} bench_case;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    const bench_case cases[] = {
        {"paper-script max-epsilon 0.3, paper mode, 1 thread", "paper-script", 1,
         DPZO_LMO_OBJ_MAX_EPSILON, 0.3, 1, 0},
        {"paper-script max-epsilon 0.3, paper mode, 2 threads", "paper-script", 1,
         DPZO_LMO_OBJ_MAX_EPSILON, 0.3, 2, 0},
        {"paper max-epsilon 0.3, paper mode, 1 thread", "paper", 1, DPZO_LMO_OBJ_MAX_EPSILON, 0.3,
         1, 0},
        {"paper max-epsilon 0.3, paper mode, 2 threads", "paper", 1, DPZO_LMO_OBJ_MAX_EPSILON,
         0.3, 2, 0},
        {"paper usefulness 0.3, paper mode, 2 threads", "paper", 1, DPZO_LMO_OBJ_USEFULNESS, 0.3, 2,
         0},
        {"paper usefulness 3, sound (SST-2 run), 2 threads", "paper", 0, DPZO_LMO_OBJ_USEFULNESS, 3,
         2, 1},
        {"paper mean-abs 3, sound (SST-2 run), 2 threads", "paper", 0, DPZO_LMO_OBJ_MEAN_ABS, 3, 2,
         1},
        {"paper max-epsilon 3, sound (SST-2 run), 2 threads", "paper", 0, DPZO_LMO_OBJ_MAX_EPSILON,
         3, 2, 1},
    };
    size_t n = sizeof cases / sizeof *cases;
    if (quick)
        n = 5;
    dpzo_ctx *ctx = dpzo_ctx_new();
    printf("{\"cases\": [\n");
    for (size_t i = 0; i < n; i++) {
        const bench_case *c = &cases[i];
        dpzo_lmo_grid *g;
        if (dpzo_lmo_grid_preset(ctx, c->grid, &g) != DPZO_OK)
            return 1;
        dpzo_lmo_search_options o = dpzo_lmo_search_options_default();
        o.paper = c->paper;
        o.objective = c->objective;
        o.epsilon = c->epsilon;
        o.threads = c->threads;
        o.account.delta = 1e-10;
        if (c->sst2) {
            o.account.sampling = DPZO_LMO_SAMPLING_POISSON;
            o.account.q = 2048.0 / 67350.0;
            o.account.steps = 192;
        }
        dpzo_lmo_search_result r;
        double t0 = now_s();
        dpzo_status st = dpzo_lmo_search(ctx, g, &o, &r);
        double t = now_s() - t0;
        if (st != DPZO_OK) {
            fprintf(stderr, "%s: %s\n", c->name, dpzo_ctx_errmsg(ctx));
            return 1;
        }
        printf("  {\"name\": \"%s\", \"grid\": \"%s\", \"paper\": %d, \"objective\": \"%s\", "
               "\"epsilon_target\": %g, \"threads\": %u, \"seconds\": %.4f, \"points\": %zu, "
               "\"distinct\": %zu, \"certified\": %zu, \"index\": %zu, "
               "\"epsilon\": %.10g, \"usefulness\": %.10g}%s\n",
               c->name, c->grid, c->paper, dpzo_lmo_objective_name(c->objective), c->epsilon,
               c->threads, t, r.n_points, r.n_unique, r.n_exact, r.index, r.epsilon, r.usefulness,
               i + 1 < n ? "," : "");
        fflush(stdout);
        dpzo_lmo_grid_free(g);
    }
    printf("]}\n");
    dpzo_ctx_free(ctx);
    return 0;
}
