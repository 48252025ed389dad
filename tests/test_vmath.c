/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_vmath.c (issue 20, item 4): the array functions of accountant/pld/vmath.c, which
 * the PLD discretisation's error bounds assume within DPZO__VM_ULPS ulp (vmath.h):
 *  - erfc, log and expm1 against 40-digit references (tests/ref/vmath_values.h, mpmath,
 *    as double-double pairs) at the arguments pld_fast.c gives them: every error below
 *    half the assumption, for the vector functions (glibc's libmvec, where this build and
 *    CPU have them) and the scalar ones;
 *  - a value does not depend on where it sits in the array or how long the array is (the
 *    discretisation recomputes a threshold in a call of three and relies on getting the
 *    same double): lengths 1 to 9 at every offset, bit for bit;
 *  - special arguments: erfc(0) = 1, log(1) = 0, expm1(0) = 0 exactly. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "vmath.h"
#include "ref/vmath_values.h"

typedef void (*vm_fn)(const double *, double *, size_t);

/* the error of y against hi + lo in ulps of hi */
static double ulps(double y, double hi, double lo)
{
    if (hi == 0.0)
        return y == 0.0 ? 0.0 : INFINITY;
    double ulp = nextafter(fabs(hi), INFINITY) - fabs(hi);
    return fabs((y - hi) - lo) / ulp;
}

static double worst(vm_fn f, const double (*ref)[3], size_t n, const char *name, int vec)
{
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), w = 0.0;
    assert_non_null(x);
    assert_non_null(y);
    for (size_t i = 0; i < n; i++)
        x[i] = ref[i][0];
    f(x, y, n);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double e = ulps(y[i], ref[i][1], ref[i][2]);
        if (!(e <= w)) {
            w = e;
            at = i;
        }
    }
    printf("  %-6s %s: max error %.3f ulp at x = %.17g\n", name, vec ? "vector" : "scalar", w,
           x[at]);
    free(x);
    free(y);
    return w;
}

static void test_accuracy(void **state)
{
    (void)state;
    int have = dpzo__vm_vector(1);
    for (int vec = have; vec >= 0; vec--) {
        dpzo__vm_vector(vec);
        assert_true(worst(dpzo__vm_erfc, vm_ref_erfc, sizeof vm_ref_erfc / sizeof *vm_ref_erfc,
                          "erfc", vec) < 0.5 * DPZO__VM_ULPS);
        assert_true(worst(dpzo__vm_log, vm_ref_log, sizeof vm_ref_log / sizeof *vm_ref_log,
                          "log", vec) < 0.5 * DPZO__VM_ULPS);
        assert_true(worst(dpzo__vm_expm1, vm_ref_expm1,
                          sizeof vm_ref_expm1 / sizeof *vm_ref_expm1, "expm1", vec)
                    < 0.5 * DPZO__VM_ULPS);
    }
    dpzo__vm_vector(1);
    if (!have)
        printf("  (no vector functions in this build or on this CPU: scalar only)\n");
}

static void test_position_independent(void **state)
{
    (void)state;
    const vm_fn fns[3] = {dpzo__vm_erfc, dpzo__vm_log, dpzo__vm_expm1};
    const double (*refs[3])[3] = {vm_ref_erfc, vm_ref_log, vm_ref_expm1};
    for (int f = 0; f < 3; f++) {
        double x[16], whole[16];
        for (int i = 0; i < 16; i++)
            x[i] = refs[f][3 * i + 1][0];
        fns[f](x, whole, 16);
        for (size_t len = 1; len <= 9; len++)
            for (size_t off = 0; off + len <= 16; off++) {
                double y[9];
                fns[f](x + off, y, len);
                for (size_t i = 0; i < len; i++)
                    assert_memory_equal(&y[i], &whole[off + i], sizeof(double));
            }
        /* in place, as pld_fast.c calls them */
        double z[16];
        memcpy(z, x, sizeof z);
        fns[f](z, z, 16);
        assert_memory_equal(z, whole, sizeof z);
    }
}

static void test_special(void **state)
{
    (void)state;
    double x[3] = {0.0, 1.0, 0.0}, y[3];
    dpzo__vm_erfc(x, y, 1);
    assert_true(y[0] == 1.0);
    dpzo__vm_log(x + 1, y + 1, 1);
    assert_true(y[1] == 0.0);
    dpzo__vm_expm1(x + 2, y + 2, 1);
    assert_true(y[2] == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accuracy),
        cmocka_unit_test(test_position_independent),
        cmocka_unit_test(test_special),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
