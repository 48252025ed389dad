/* SPDX-License-Identifier: Apache-2.0 */
/* tests/install/consumer.c: a program a user would write against an installed dpzo.
 *
 * Built by tests/install/run.sh twice against a copy installed with `cmake --install`: once
 * with the flags of `pkg-config --cflags --libs dpzo`, once by the CMake project next to it
 * (find_package(dpzo), dpzo::dpzo). It prints which libdpzo.so the loader bound (so the test
 * can check that it is the installed copy, not the build tree's) and checks published values:
 *  - TF Privacy's MNIST tutorial (sigma 1.1, q 256/60000, 14063 steps, delta 1e-5), its own
 *    72 orders: TF Privacy reports 2.5970795196566616 (compute_dp_sgd_privacy, order 8);
 *  - the same with dpzo's continuous orders: the certified epsilon is at least the exact
 *    optimum computed with mpmath at 30 digits (2.59664191485651526676..., tests/ref) and
 *    within 1e-9 of it (docs/accountant.md: 2.596641915 at order 8.12);
 *  - a bad argument comes back as a status and a message in the context, not a print or an
 *    exit;
 *  - the installed headers' version (dpzo/version.h) is the loaded library's, as a string
 *    and as a number (the run-time check dpzo/status.h recommends).
 * Exit status 0 when every check holds. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <dpzo/dpzo.h>

static int failures = 0;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAILED: %s\n", what);
        failures++;
    }
}

static dpzo_status mnist(dpzo_ctx *ctx, dpzo_order_grid grid, dpzo_dp_result *r)
{
    dpzo_event *e = dpzo_event_self_composed(
        ctx, dpzo_event_poisson_sampled(ctx, 256.0 / 60000, dpzo_event_gaussian(ctx, 1.1)),
        14063);
    if (e == NULL)
        return DPZO_ENOMEM;
    dpzo_rdp_options opts = dpzo_rdp_options_default();
    opts.grid = grid;
    dpzo_status st = dpzo_event_epsilon(ctx, e, 1e-5, &opts, r);
    dpzo_event_free(e);
    return st;
}

int main(void)
{
    Dl_info info;
    if (dladdr((void *)dpzo_ctx_new, &info) && info.dli_fname != NULL)
        printf("library %s\n", info.dli_fname);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL) {
        printf("FAILED: dpzo_ctx_new\n");
        return 1;
    }

    dpzo_dp_result tf, cont;
    dpzo_status st = mnist(ctx, DPZO_ORDERS_TF, &tf);
    check(st == DPZO_OK, dpzo_ctx_errmsg(ctx));
    const double tf_published = 2.5970795196566616;
    printf("tf orders epsilon %.12f order %g (TF Privacy: 2.597079519657 order 8)\n",
           tf.epsilon, tf.order);
    check(st == DPZO_OK && fabs(tf.epsilon - tf_published) <= 1e-10 * tf_published &&
              tf.order == 8,
          "TF orders: TF Privacy's 2.5970795196566616 at order 8");

    st = mnist(ctx, DPZO_ORDERS_CONTINUOUS, &cont);
    check(st == DPZO_OK, dpzo_ctx_errmsg(ctx));
    const double exact = 2.59664191485651526676; /* mpmath, 30 digits */
    printf("certified epsilon %.9f order %.2f\n", cont.epsilon, cont.order);
    check(st == DPZO_OK && cont.epsilon >= exact && cont.epsilon - exact <= 1e-9 * exact,
          "continuous orders: at least the exact optimum 2.5966419148565, within 1e-9");

    dpzo_event *bad = dpzo_event_gaussian(ctx, -1.0);
    check(bad == NULL && strlen(dpzo_ctx_errmsg(ctx)) > 0, "sigma -1 is refused");
    printf("sigma -1: %s\n", dpzo_ctx_errmsg(ctx));

    printf("version %s (headers %s, number %d)\n", dpzo_version(), DPZO_VERSION_STRING,
           dpzo_version_number());
    check(strcmp(dpzo_version(), DPZO_VERSION_STRING) == 0
              && dpzo_version_number() == DPZO_VERSION_NUMBER
              && dpzo_version_number() / 100 == DPZO_VERSION_NUMBER / 100,
          "the library's version is the headers' version");

    dpzo_ctx_free(ctx);
    puts(failures ? "FAILED" : "OK");
    return failures ? 1 : 0;
}
