/* SPDX-License-Identifier: Apache-2.0 */
/* tests/testutil.h: cmocka helpers for numeric assertions. */
#ifndef DPZO_TESTUTIL_H
#define DPZO_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include <dpzo/dpzo.h>

/* |got - want| <= rtol * |want| (and both finite), with a readable failure. */
#define assert_rel(got, want, rtol)                                                        \
    do {                                                                                  \
        double g_ = (got), w_ = (want), t_ = (rtol);                                      \
        if (!(isfinite(g_) && fabs(g_ - w_) <= t_ * fabs(w_)))                            \
            fail_msg("%s = %.17g, expected %.17g (rtol %g, rel err %.3g)", #got, g_, w_,  \
                     t_, fabs(g_ - w_) / fabs(w_));                                       \
    } while (0)

#define assert_ok(ctx, call)                                                               \
    do {                                                                                  \
        dpzo_status s_ = (call);                                                          \
        if (s_ != DPZO_OK)                                                                \
            fail_msg("%s failed: %s (%s)", #call, dpzo_status_name(s_),                   \
                     dpzo_ctx_errmsg(ctx));                                                \
    } while (0)

/* FOLDER/NAME in one of four rotating buffers (so that up to four may be used at once, as
 * in an argument list): the tests' temporary files. */
static inline const char *test_path(const char *folder, const char *name)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", folder, name);
    return buf[k];
}

static inline int ctx_setup(void **state)
{
    *state = dpzo_ctx_new();
    return *state == NULL;
}

static inline int ctx_teardown(void **state)
{
    dpzo_ctx_free(*state);
    return 0;
}

/* Poisson(q, Gaussian(sigma)) repeated `steps` times. */
static inline dpzo_event *sgm_event(dpzo_ctx *ctx, double q, double sigma, uint64_t steps)
{
    return dpzo_event_self_composed(
        ctx, dpzo_event_poisson_sampled(ctx, q, dpzo_event_gaussian(ctx, sigma)), steps);
}

/* splitmix64: the next 64-bit value of the stream `state`. */
static inline uint64_t test_splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A uniform double in [0, 1) from splitmix64 with the caller's state (seeded random cases
 * that do not depend on other tests' draws). */
static inline double test_urand(uint64_t *state)
{
    return (double)(test_splitmix(state) >> 11) * 0x1p-53;
}

#endif
