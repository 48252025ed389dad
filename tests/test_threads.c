/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_threads.c: the library is safe to call from several threads with separate
 * contexts (include/dpzo/status.h), tested on the real artifact: this program links the
 * shared library libdpzo.so (target dpzo_shared), not the archives.
 *
 * One "mix" of work touches each module's shared state (MPFR's per-thread exponent range and
 * caches, the once-initialised tables, GSL's error handler, the PLD accountant's own worker
 * threads, the profile parser and checksum, the Philox direction generator):
 *   RDP epsilon (certified) of TF Privacy's MNIST run, certified RDP of one sampled Gaussian,
 *   a noise calibration, a PLD epsilon on a coarse grid, parsing and verifying an example
 *   profile, an LMO run's epsilon and a direction fill; and, on objects made once and
 *   shared by every thread through const pointers, an RDP and a PLD epsilon of one event
 *   and a fill of one direction.
 * The mix is first run alone and its answers checked against published or independently
 * computed values; then THREADS (8) threads, each with its own context, run it ROUNDS times
 * (4; 2 in the sanitizer build, where a mix costs about 3 times as much), all at once, and
 * every answer must be bit-identical to the single-threaded one. Under the
 * ASan build (make test-asan) this also checks the concurrent runs for memory errors. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "dpzo/zo_dir.h"

#ifndef DPZO_SOURCE_DIR
#error "DPZO_SOURCE_DIR must name the source tree (docs/examples/profile-gaussian.json)"
#endif

/* THREADS and ROUNDS may be lowered by hand for a run under valgrind --tool=helgrind or
 * -fsanitize=thread (docs/install.md reports one). */
#ifndef THREADS
#define THREADS 8
#endif
#ifndef ROUNDS
#define ROUNDS 4
#endif
enum { DIR_N = 4099 };

/* Everything a mix computes, as plain numbers (compared with memcmp after a memset, so no
 * padding can differ). */
typedef struct {
    double rdp_eps, rdp_eps_est, rdp_order;
    dpzo_bound sgm;
    double cal_sigma, cal_eps, cal_order;
    double pld_upper, pld_lower, pld_est;
    int pld_fallback;
    int prof_ok;
    double prof_eps, prof_order, prof_ratio;
    double lmo_eps, lmo_est, lmo_order, lmo_eps0;
    float dir[DIR_N];
    double shared_rdp_eps, shared_pld_upper; /* from the events every thread shares */
    float shared_dir[64];
    dpzo_status first_error; /* DPZO_OK when every call succeeded */
    char errmsg[256];
} mix_result;

static const char *profile_path = DPZO_SOURCE_DIR "/docs/examples/profile-gaussian.json";

/* Objects made once and then only read, through const pointers, by every thread at once
 * (status.h: const objects may be shared). */
static const dpzo_event *shared_rdp_event, *shared_pld_event;
static dpzo_dir shared_dir;

static void note(mix_result *m, dpzo_ctx *ctx, dpzo_status st)
{
    if (st != DPZO_OK && m->first_error == DPZO_OK) {
        m->first_error = st;
        snprintf(m->errmsg, sizeof m->errmsg, "%s", dpzo_ctx_errmsg(ctx));
    }
}

static void run_mix(dpzo_ctx *ctx, mix_result *m)
{
    memset(m, 0, sizeof *m);
    const double q = 256.0 / 60000;

    /* RDP epsilon (certified upper bound, continuous orders) */
    dpzo_event *e = dpzo_event_self_composed(
        ctx, dpzo_event_poisson_sampled(ctx, q, dpzo_event_gaussian(ctx, 1.1)), 14063);
    dpzo_dp_result r;
    memset(&r, 0, sizeof r);
    note(m, ctx, e ? dpzo_event_epsilon(ctx, e, 1e-5, NULL, &r) : DPZO_ENOMEM);
    dpzo_event_free(e);
    m->rdp_eps = r.epsilon;
    m->rdp_eps_est = r.epsilon_estimate;
    m->rdp_order = r.order;

    /* certified RDP of one sampled Gaussian at a fractional order */
    note(m, ctx, dpzo_rdp_sampled_gaussian_certified(ctx, 0.01, 0.8, 12.5, &m->sgm));

    /* calibration: smallest sigma with certified epsilon <= 3 */
    dpzo_calibration c;
    memset(&c, 0, sizeof c);
    note(m, ctx, dpzo_calibrate_noise(ctx, 3.0, 1e-5, 0.01, 1000, 0.0, NULL, &c));
    m->cal_sigma = c.value;
    m->cal_eps = c.epsilon;
    m->cal_order = c.order;

    /* PLD epsilon at a coarse grid (its two directions run in worker threads) */
    dpzo_pld_options po;
    dpzo_pld_options_default(&po);
    po.grid = 1e-2;
    dpzo_pld_result pr;
    memset(&pr, 0, sizeof pr);
    e = dpzo_event_self_composed(
        ctx, dpzo_event_poisson_sampled(ctx, 0.01, dpzo_event_gaussian(ctx, 1.0)), 1000);
    note(m, ctx, e ? dpzo_pld_epsilon(ctx, e, 1e-5, &po, &pr) : DPZO_ENOMEM);
    dpzo_event_free(e);
    m->pld_upper = pr.epsilon_upper;
    m->pld_lower = pr.epsilon_lower;
    m->pld_est = pr.epsilon_estimate;
    m->pld_fallback = pr.fallback;

    /* an example profile: read (schema, checksum), then verified (guarantee recomputed) */
    dpzo_profile p;
    dpzo_status st = dpzo_profile_read_file(ctx, profile_path, &p);
    note(m, ctx, st);
    if (st == DPZO_OK) {
        dpzo_profile_check chk;
        memset(&chk, 0, sizeof chk);
        note(m, ctx, dpzo_profile_verify(ctx, &p, &chk));
        m->prof_ok = chk.ok;
        m->prof_eps = chk.epsilon_recomputed;
        m->prof_order = chk.order;
        m->prof_ratio = chk.rdp_worst_ratio;
        dpzo_profile_free(&p);
    }

    /* an LMO run: Poisson-sampled, 1000 steps */
    dpzo_lmo lmo = {.5, .5, 9, .3, .1, .2, 0, 1};
    dpzo_lmo_account_options lo = dpzo_lmo_account_options_default();
    lo.sampling = DPZO_LMO_SAMPLING_POISSON;
    lo.q = 0.01;
    lo.steps = 1000;
    lo.delta = 1e-5;
    dpzo_lmo_account_result lr;
    memset(&lr, 0, sizeof lr);
    note(m, ctx, dpzo_lmo_epsilon(ctx, &lmo, &lo, &lr));
    m->lmo_eps = lr.epsilon;
    m->lmo_est = lr.epsilon_estimate;
    m->lmo_order = lr.order;
    m->lmo_eps0 = lr.eps0;

    /* a sphere direction (its norm is a blocked sum), filled from an unaligned start */
    dpzo_dir d;
    st = dpzo_dir_init(ctx, &d, DPZO_DIR_SPHERE, 0x243f6a8885a308d3ULL, 7, 1, 100003, 1.0);
    note(m, ctx, st);
    if (st == DPZO_OK)
        dpzo_dir_fill(&d, 3, DIR_N, m->dir);

    /* the shared, read-only objects */
    memset(&r, 0, sizeof r);
    note(m, ctx, dpzo_event_epsilon(ctx, shared_rdp_event, 1e-6, NULL, &r));
    m->shared_rdp_eps = r.epsilon;
    memset(&pr, 0, sizeof pr);
    note(m, ctx, dpzo_pld_epsilon(ctx, shared_pld_event, 1e-6, &po, &pr));
    m->shared_pld_upper = pr.epsilon_upper;
    dpzo_dir_fill(&shared_dir, 1000, 64, m->shared_dir);
}

static int make_shared(void **state)
{
    (void)state;
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 1;
    shared_rdp_event = dpzo_event_self_composed(
        ctx, dpzo_event_poisson_sampled(ctx, 0.02, dpzo_event_gaussian(ctx, 1.3)), 500);
    shared_pld_event = dpzo_event_self_composed(
        ctx, dpzo_event_poisson_sampled(ctx, 0.02, dpzo_event_gaussian(ctx, 1.3)), 500);
    dpzo_status st = dpzo_dir_init(ctx, &shared_dir, DPZO_DIR_GAUSSIAN, 42, 3, 0, 1u << 20, 0);
    dpzo_ctx_free(ctx);
    return shared_rdp_event == NULL || shared_pld_event == NULL || st != DPZO_OK;
}

static int free_shared(void **state)
{
    (void)state;
    dpzo_event_free((dpzo_event *)shared_rdp_event);
    dpzo_event_free((dpzo_event *)shared_pld_event);
    return 0;
}

static mix_result reference;

/* The single-threaded answers, checked against values the program did not produce. */
static void test_single_thread(void **state)
{
    (void)state;
    dpzo_ctx *ctx = dpzo_ctx_new();
    assert_non_null(ctx);
    run_mix(ctx, &reference);
    dpzo_ctx_free(ctx);
    if (reference.first_error != DPZO_OK)
        fail_msg("the mix failed: %s (%s)", dpzo_status_name(reference.first_error),
                 reference.errmsg);
    /* mpmath's optimum at 30 digits (tests/ref/reference_values.h) */
    const double exact = 2.59664191485651526676;
    assert_true(reference.rdp_eps >= exact);
    assert_rel(reference.rdp_eps, exact, 1e-9);
    assert_true(reference.sgm.lower <= reference.sgm.upper && reference.sgm.upper > 0);
    assert_true(reference.cal_eps <= 3.0 && reference.cal_eps > 2.99);
    /* PLD's bracket holds the truth, which dp_accounting 0.6.0 (PLD, discretization 1e-4)
     * puts between 1.7782397279070383 (optimistic, privacy buckets) and 1.8282436455855091
     * (pessimistic, connect-the-dots) */
    assert_true(reference.pld_lower <= reference.pld_upper && reference.pld_lower > 0);
    assert_true(reference.pld_lower <= 1.8282436455855091 &&
                reference.pld_upper >= 1.7782397279070383);
    /* the example profile states 2.999997518858909 (docs/examples/profile-gaussian.json) */
    assert_int_equal(reference.prof_ok, 1);
    assert_true(reference.prof_eps <= 2.999997518858909 * (1 + 1e-9) + 1e-12);
    assert_true(reference.lmo_eps > 0 && isfinite(reference.lmo_eps) &&
                reference.lmo_eps <= reference.lmo_eps0 * 1000);
    /* a unit sphere direction of d = 100003: mean square 1/d */
    double s = 0;
    for (int i = 0; i < DIR_N; i++)
        s += (double)reference.dir[i] * reference.dir[i];
    assert_rel(s / DIR_N, 1.0 / 100003, 0.1);
    /* the shared event: PLD's proven upper end is below RDP's */
    assert_true(reference.shared_pld_upper > 0 &&
                reference.shared_pld_upper <= reference.shared_rdp_eps);
}

typedef struct {
    int index;
    int mismatches;
    char first[512];
} worker;

static pthread_barrier_t start;

static void *work(void *arg)
{
    worker *w = arg;
    dpzo_ctx *ctx = dpzo_ctx_new();
    pthread_barrier_wait(&start); /* all threads start the mix together */
    static _Thread_local mix_result m;
    for (int round = 0; round < ROUNDS && ctx != NULL; round++) {
        run_mix(ctx, &m);
        if (memcmp(&m, &reference, sizeof m) != 0 && w->mismatches++ == 0)
            snprintf(w->first, sizeof w->first,
                     "thread %d round %d: rdp %.17g pld %.17g lmo %.17g cal %.17g (%.200s)",
                     w->index, round, m.rdp_eps, m.pld_upper, m.lmo_eps, m.cal_sigma,
                     m.errmsg);
    }
    if (ctx == NULL)
        w->mismatches = -1;
    dpzo_ctx_free(ctx);
    return NULL;
}

static void test_threads_agree(void **state)
{
    (void)state;
    pthread_t tid[THREADS];
    worker w[THREADS];
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.index = i};
        assert_int_equal(pthread_create(&tid[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(tid[i], NULL), 0);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < THREADS; i++) {
        if (w[i].mismatches < 0)
            fail_msg("thread %d: no context", i);
        if (w[i].mismatches > 0)
            fail_msg("%d of %d rounds differ from the single-threaded answers; first: %s",
                     w[i].mismatches, ROUNDS, w[i].first);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_thread),
        cmocka_unit_test(test_threads_agree),
    };
    return cmocka_run_group_tests(tests, make_shared, free_shared);
}
