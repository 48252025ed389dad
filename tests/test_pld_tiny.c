/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_pld_tiny.c (issue 28, item 4): the tight accountants at tiny noise and their
 * consistency: what a fallback quotes, the sampling bound delta <= 1 - (1 - q)^T, epsilon
 * non-increasing in delta, memory refusals predicted before the work, and a grid that fits. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

static dpzo_pld_options prv_opts(void)
{
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    o.method = DPZO_PLD_PRV;
    return o;
}

/* The number a fallback's reason quotes after `key` (NaN when it quotes none). */
static double quoted(const char *reason, const char *key)
{
    const char *p = strstr(reason, key);
    if (p == NULL)
        return NAN;
    for (p += strlen(key); *p != '\0' && !(*p >= '0' && *p <= '9'); p++)
        ; /* past a word such as "certified" */
    return *p == '\0' ? NAN : strtod(p, NULL);
}

/* Sub-item 1: a PRV fallback reported rdp_bound 0 with a reason quoting 0.0001543 for the RDP
 * bound (sigma 100, q 1e-4, 1000 steps, delta 3e-5): the reason compared the upper end with
 * the standard conversion's estimate (the tilt's), the fallback reported the certified
 * improved one. Whatever a reason quotes as the RDP accountant's bound must be rdp_epsilon,
 * and it must name the accountant that answered. */
static void test_fallback_quotes_its_bound(void **state)
{
    dpzo_ctx *ctx = *state;
    static const struct {
        double q, sigma, delta;
        uint64_t steps;
    } cases[] = {{1e-4, 100, 3e-5, 1000}, {1e-3, 100, 3e-5, 10}, {0.01, 100, 3e-5, 1},
                 {0.01, 100, 1e-5, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpzo_event *e = sgm_event(ctx, cases[i].q, cases[i].sigma, cases[i].steps);
        dpzo_pld_options o = prv_opts();
        dpzo_pld_result r;
        assert_ok(ctx, dpzo_pld_epsilon(ctx, e, cases[i].delta, &o, &r));
        if (r.fallback) {
            double v = quoted(r.reason, "RDP accountant's ");
            if (!isnan(v) && !(v >= r.rdp_epsilon && v <= r.rdp_epsilon * (1.0 + 1e-9)))
                fail_msg("case %zu: the reason \"%s\" quotes %.10g, rdp_epsilon is %.17g", i,
                         r.reason, v, r.rdp_epsilon);
            if (strstr(r.reason, "PLD's") != NULL)
                fail_msg("case %zu: a PRV result's reason names the PLD: \"%s\"", i, r.reason);
            assert_true(r.epsilon_upper <= r.rdp_epsilon);
        }
        dpzo_event_free(e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fallback_quotes_its_bound),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
