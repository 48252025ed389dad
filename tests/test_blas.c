/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_blas.c: the choice of OpenBLAS kernels (dpzo/blas.h, trainer/blas.c).
 *
 * The decision is tested as a function for CPUs this machine is not (an Intel Xeon that
 * OpenBLAS 0.3.21 does not know, AVX2-only CPUs, an OS without AVX-512 state, ...). The
 * selection itself runs three ways (tests/trainer_tests.cmake):
 *   test_blas               whatever the environment says: a user's OPENBLAS_CORETYPE is
 *                           respected, else the kernels are at least the CPU's class (up to
 *                           AVX2, the class below which dpzo switches)
 *   test_blas_user_coretype OPENBLAS_CORETYPE=Prescott: kept, generic kernels run
 *   test_blas_unknown_cpu   OPENBLAS_CORETYPE=Prescott when OpenBLAS loads, removed before
 *                           dpzo looks (argument "unknown-cpu"): OpenBLAS then runs its
 *                           generic kernels as it does on a CPU it does not know, and dpzo
 *                           must switch to the kernels of this CPU's class
 * Each checks a product against a double reference within the float error bound, so the
 * kernels dpzo selected compute correctly. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>
#include <cblas.h>
#include "dpzo/blas.h"

static int unknown_cpu_mode;

#define AVX2_SET (DPZO_CPU_AVX | DPZO_CPU_AVX2 | DPZO_CPU_FMA | DPZO_CPU_OS_YMM)
#define AVX512_SET                                                                          \
    (AVX2_SET | DPZO_CPU_AVX512F | DPZO_CPU_AVX512CD | DPZO_CPU_AVX512BW |                   \
     DPZO_CPU_AVX512DQ | DPZO_CPU_AVX512VL | DPZO_CPU_OS_ZMM)

static void test_isa_classes(void **state)
{
    (void)state;
    assert_int_equal(dpzo_cpu_isa(0), DPZO_ISA_SSE);
    assert_int_equal(dpzo_cpu_isa(DPZO_CPU_AVX), DPZO_ISA_SSE); /* no OS support */
    assert_int_equal(dpzo_cpu_isa(DPZO_CPU_AVX | DPZO_CPU_OS_YMM), DPZO_ISA_AVX);
    assert_int_equal(dpzo_cpu_isa(AVX2_SET), DPZO_ISA_AVX2);
    assert_int_equal(dpzo_cpu_isa(AVX2_SET & ~DPZO_CPU_FMA), DPZO_ISA_AVX);
    assert_int_equal(dpzo_cpu_isa(AVX512_SET), DPZO_ISA_AVX512);
    assert_int_equal(dpzo_cpu_isa(AVX512_SET & ~DPZO_CPU_OS_ZMM), DPZO_ISA_AVX2);
    assert_int_equal(dpzo_cpu_isa(AVX512_SET & ~DPZO_CPU_AVX512BW), DPZO_ISA_AVX2);
    assert_int_equal(dpzo_cpu_isa(AVX512_SET & ~DPZO_CPU_AVX512VL), DPZO_ISA_AVX2);
    assert_string_equal(dpzo_isa_name(DPZO_ISA_AVX512), "AVX-512");
    assert_string_equal(dpzo_isa_name(DPZO_ISA_SSE), "SSE");
    assert_int_equal(dpzo_blas_core_isa("Prescott"), DPZO_ISA_SSE);
    assert_int_equal(dpzo_blas_core_isa("PRESCOTT"), DPZO_ISA_SSE);
    assert_int_equal(dpzo_blas_core_isa("Nehalem"), DPZO_ISA_SSE);
    assert_int_equal(dpzo_blas_core_isa("Sandybridge"), DPZO_ISA_AVX);
    assert_int_equal(dpzo_blas_core_isa("haswell"), DPZO_ISA_AVX2);
    assert_int_equal(dpzo_blas_core_isa("Zen"), DPZO_ISA_AVX2);
    assert_int_equal(dpzo_blas_core_isa("SkylakeX"), DPZO_ISA_AVX512);
    assert_int_equal(dpzo_blas_core_isa("Cooperlake"), DPZO_ISA_AVX512);
    assert_int_equal(dpzo_blas_core_isa("Neoverse"), -1);
    assert_int_equal(dpzo_blas_core_isa(NULL), -1);
}

/* dpzo_blas_choose(chosen, features, OPENBLAS_CORETYPE, DPZO_BLAS_SELECT) against the
 * expected switch and kernels. */
static void expect(const char *chosen, unsigned features, const char *env, const char *sel,
                   int do_switch, const char *core, const char *in_reason)
{
    dpzo_blas_choice c;
    memset(&c, 0x5a, sizeof c);
    dpzo_blas_choose(chosen, features, env, sel, &c);
    if (c.do_switch != do_switch || strcmp(c.core, core) != 0 ||
        strstr(c.reason, in_reason) == NULL)
        fail_msg("chosen %s, features %#x, OPENBLAS_CORETYPE %s, DPZO_BLAS_SELECT %s: got "
                 "switch %d to '%s' (%s); expected switch %d to '%s', reason with '%s'",
                 chosen ? chosen : "(null)", features, env ? env : "unset",
                 sel ? sel : "unset", c.do_switch, c.core, c.reason, do_switch, core,
                 in_reason);
}

static void test_choose(void **state)
{
    (void)state;
    /* issue 27's Intel Xeon (family 6, model 207: avx2, avx512f, avx512_bf16), OpenBLAS
     * 0.3.21 falls back to Prescott */
    expect("Prescott", AVX512_SET | DPZO_CPU_AVX512BF16, NULL, NULL, 1, "Cooperlake",
           "OpenBLAS did not know this AVX-512 CPU and chose its SSE kernels Prescott");
    expect("Prescott", AVX512_SET, NULL, NULL, 1, "SkylakeX", "switched to SkylakeX");
    expect("PRESCOTT", AVX512_SET, NULL, "1", 1, "SkylakeX", "switched to SkylakeX");
    /* AVX2-only CPUs unknown to OpenBLAS: Intel, AMD */
    expect("Prescott", AVX2_SET, NULL, NULL, 1, "Haswell", "AVX2 CPU");
    expect("Nehalem", AVX2_SET | DPZO_CPU_AMD, NULL, NULL, 1, "Zen", "switched to Zen");
    expect("Sandybridge", AVX2_SET, NULL, NULL, 1, "Haswell", "chose its AVX kernels");
    /* AVX without AVX2 */
    expect("Prescott", DPZO_CPU_AVX | DPZO_CPU_OS_YMM, NULL, NULL, 1, "Sandybridge", "AVX CPU");
    /* AVX-512 in the CPU, not saved by the operating system: AVX2 class */
    expect("Prescott", AVX512_SET & ~DPZO_CPU_OS_ZMM, NULL, NULL, 1, "Haswell", "AVX2 CPU");
    /* OpenBLAS knew the CPU: its choice stands, also an AVX2 choice on an AVX-512 CPU */
    expect("Cooperlake", AVX512_SET | DPZO_CPU_AVX512BF16, NULL, NULL, 0, "Cooperlake",
           "OpenBLAS chose them for this AVX-512 CPU");
    expect("Haswell", AVX512_SET, NULL, NULL, 0, "Haswell", "chose them");
    expect("Zen", AVX2_SET | DPZO_CPU_AMD, NULL, NULL, 0, "Zen", "chose them");
    /* an SSE-only CPU: Prescott is its class */
    expect("Prescott", 0, NULL, NULL, 0, "Prescott", "chose them for this SSE CPU");
    /* the user's OPENBLAS_CORETYPE and the opt-out are respected */
    expect("Prescott", AVX512_SET, "Prescott", NULL, 0, "Prescott",
           "OPENBLAS_CORETYPE=Prescott is set");
    expect("Haswell", AVX512_SET, "haswell", NULL, 0, "Haswell", "OPENBLAS_CORETYPE=haswell");
    expect("Prescott", AVX512_SET, NULL, "0", 0, "Prescott", "DPZO_BLAS_SELECT=0");
    /* an empty OPENBLAS_CORETYPE makes OpenBLAS fall back to Prescott: no user choice */
    expect("Prescott", AVX512_SET, "", NULL, 1, "SkylakeX", "switched to SkylakeX");
    /* only "0" opts out (scripts/campaign.py's environment phase: odd values) */
    expect("Prescott", AVX512_SET, NULL, "", 1, "SkylakeX", "switched to SkylakeX");
    expect("Prescott", AVX512_SET, NULL, "00", 1, "SkylakeX", "switched to SkylakeX");
    expect("Prescott", AVX512_SET, NULL, "no", 1, "SkylakeX", "switched to SkylakeX");
    /* an unknown or overlong OPENBLAS_CORETYPE is still the user's: kept, the reason cut
     * to its buffer */
    expect("Prescott", AVX512_SET, "bogus", NULL, 0, "Prescott", "OPENBLAS_CORETYPE=bogus");
    char longname[301];
    memset(longname, 'x', 300);
    longname[300] = '\0';
    dpzo_blas_choice c;
    dpzo_blas_choose("Prescott", AVX512_SET, longname, NULL, &c);
    assert_int_equal(c.do_switch, 0);
    assert_string_equal(c.core, "Prescott");
    assert_int_equal(strlen(c.reason), sizeof c.reason - 1);
    assert_true(strncmp(c.reason, "OPENBLAS_CORETYPE=xxx", 21) == 0);
    /* kernels dpzo does not know (another architecture, a newer OpenBLAS): kept */
    expect("Neoverse", AVX512_SET, NULL, NULL, 0, "Neoverse", "not in dpzo's table");
    expect(NULL, AVX512_SET, NULL, NULL, 0, "unknown", "not in dpzo's table");
}

/* The features dpzo reads agree with GCC's own cpuid reading (which also checks XCR0). */
static void test_features_agree_with_gcc(void **state)
{
    (void)state;
#if defined(__x86_64__)
    unsigned f = dpzo_cpu_features();
    __builtin_cpu_init();
    assert_int_equal(!!(f & DPZO_CPU_AVX2) && !!(f & DPZO_CPU_OS_YMM),
                     !!__builtin_cpu_supports("avx2"));
    assert_int_equal(!!(f & DPZO_CPU_FMA) && !!(f & DPZO_CPU_OS_YMM),
                     !!__builtin_cpu_supports("fma"));
    assert_int_equal(!!(f & DPZO_CPU_AVX512F) && !!(f & DPZO_CPU_OS_ZMM),
                     !!__builtin_cpu_supports("avx512f"));
    assert_int_equal(!!(f & DPZO_CPU_AVX512BW) && !!(f & DPZO_CPU_OS_ZMM),
                     !!__builtin_cpu_supports("avx512bw"));
    assert_int_equal(!!(f & DPZO_CPU_AMD), !!__builtin_cpu_is("amd"));
    print_message("CPU class %s (features %#x)\n", dpzo_isa_name(dpzo_cpu_isa(f)), f);
#else
    skip();
#endif
}

/* C = A B^T (M x N, K deep) by cblas_sgemm against a double reference, each element
 * within gamma_K sum |a||b| (any order, FMA or not) plus its own rounding. */
static void check_sgemm(void)
{
    enum { M = 37, N = 29, K = 301 };
    static float A[M * K], B[N * K], C[M * N];
    uint64_t s = 12345;
    for (size_t i = 0; i < M * K; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        A[i] = (float)((double)(s >> 11) * 0x1p-53 - 0.5);
    }
    for (size_t i = 0; i < N * K; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        B[i] = (float)((double)(s >> 11) * 0x1p-53 - 0.5);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, A, K, B, K, 0.0f, C, N);
    const double u = 0x1p-24, gamma = K * u / (1 - K * u);
    double worst = 0;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double exact = 0, mag = 0;
            for (size_t k = 0; k < K; k++) {
                exact += (double)A[i * K + k] * B[j * K + k];
                mag += fabs((double)A[i * K + k] * B[j * K + k]);
            }
            double bound = gamma * mag + u * fabs(exact) + 1e-12 * mag;
            double err = fabs(C[i * N + j] - exact);
            if (!(err <= bound))
                fail_msg("C[%zu][%zu] = %.9g, exact %.17g: error %.3g over the bound %.3g", i,
                         j, (double)C[i * N + j], exact, err, bound);
            worst = fmax(worst, err / bound);
        }
    print_message("sgemm on %s kernels: largest error %.2g of its bound\n",
                  openblas_get_corename(), worst);
}

static void test_selection(void **state)
{
    (void)state;
    dpzo_blas_info info;
    const char *env = getenv("OPENBLAS_CORETYPE"), *sel = getenv("DPZO_BLAS_SELECT");
    dpzo_blas_select(&info);
    char line[512];
    dpzo_blas_describe(&info, line, sizeof line);
    print_message("%s\n", line);
    assert_string_equal(info.core, openblas_get_corename());
    assert_non_null(strstr(line, info.core));
    unsigned f = dpzo_cpu_features();
    int cpu = (int)dpzo_cpu_isa(f), have = dpzo_blas_core_isa(info.core);
    int dynamic = strstr(info.library, "DYNAMIC_ARCH") != NULL;
    if ((env != NULL && env[0] != '\0') || (sel != NULL && strcmp(sel, "0") == 0)) {
        /* the user's choice: nothing switched */
        assert_int_equal(info.switched, 0);
        assert_string_equal(info.core, info.chosen);
        assert_non_null(strstr(info.reason, env != NULL && env[0] != '\0' ? "OPENBLAS_CORETYPE"
                                                                           : "DPZO_BLAS"));
    } else if (dynamic && have >= 0) {
        /* at least the CPU's class, up to AVX2 (above it OpenBLAS's choice stands) */
        int floor = cpu < (int)DPZO_ISA_AVX2 ? cpu : (int)DPZO_ISA_AVX2;
        if (have < floor)
            fail_msg("kernels %s (%s) on a %s CPU", info.core, dpzo_isa_name((dpzo_isa)have),
                     info.cpu);
        assert_int_equal(info.switched, strcasecmp(info.core, info.chosen) != 0);
    }
    if (unknown_cpu_mode) {
        /* OpenBLAS loaded with Prescott, as on a CPU it does not know */
        assert_string_equal(info.chosen, "Prescott");
        if (!dynamic) {
            skip();
        } else if (cpu >= (int)DPZO_ISA_AVX) {
            assert_int_equal(info.switched, 1);
            assert_non_null(strstr(info.reason, "did not know"));
            assert_int_equal(dpzo_blas_core_isa(info.core), cpu);
        } else {
            assert_int_equal(info.switched, 0);
        }
    }
    /* a second call is the first one's result */
    dpzo_blas_info again;
    dpzo_blas_select(&again);
    assert_memory_equal(&again, &info, sizeof info);
    check_sgemm();
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "unknown-cpu") == 0) {
        /* OpenBLAS read OPENBLAS_CORETYPE when it was loaded, before main */
        if (getenv("OPENBLAS_CORETYPE") == NULL ||
            strcasecmp(getenv("OPENBLAS_CORETYPE"), "Prescott") != 0) {
            fprintf(stderr, "test_blas unknown-cpu: run with OPENBLAS_CORETYPE=Prescott\n");
            return 2;
        }
        unsetenv("OPENBLAS_CORETYPE");
        unsetenv("DPZO_BLAS_SELECT");
        unknown_cpu_mode = 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_isa_classes),
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_features_agree_with_gcc),
        cmocka_unit_test(test_selection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
