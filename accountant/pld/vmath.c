/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/vmath.c: elementary functions over arrays (vmath.h). */
#include "vmath.h"
#include <math.h>

#if defined(DPZO_HAVE_LIBMVEC) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* glibc's libmvec, 4 doubles at a time, AVX2 (the x86-64 vector function ABI's 'd' ISA) */
__m256d _ZGVdN4v_erfc(__m256d);
__m256d _ZGVdN4v_log(__m256d);
__m256d _ZGVdN4v_expm1(__m256d);
#define VM_HAVE 1

#define VM_LOOP(name, vf)                                                                 \
    __attribute__((target("avx2,fma"))) static void name(const double *x, double *y, size_t n) \
    {                                                                                         \
        size_t i = 0;                                                                         \
        for (; i + 4 <= n; i += 4)                                                            \
            _mm256_storeu_pd(y + i, vf(_mm256_loadu_pd(x + i)));                              \
        if (i < n) { /* the last one to three through the same vector function */            \
            double bx[4] = {1.0, 1.0, 1.0, 1.0}, by[4];                                       \
            for (size_t j = 0; i + j < n; j++)                                                \
                bx[j] = x[i + j];                                                             \
            _mm256_storeu_pd(by, vf(_mm256_loadu_pd(bx)));                                    \
            for (size_t j = 0; i + j < n; j++)                                                \
                y[i + j] = by[j];                                                             \
        }                                                                                     \
    }
VM_LOOP(v_erfc, _ZGVdN4v_erfc)
VM_LOOP(v_log, _ZGVdN4v_log)
VM_LOOP(v_expm1, _ZGVdN4v_expm1)
#else
#define VM_HAVE 0
#endif

/* -1: not yet decided */
static _Atomic int use_vec = -1;

int dpzo__vm_vector(int force)
{
    int have = 0;
#if VM_HAVE
    __builtin_cpu_init();
    have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    if (force >= 0)
        use_vec = force && have;
    else if (use_vec < 0)
        use_vec = have;
    return use_vec;
}

#define VM_DISPATCH(name, vname, sf)                                                          \
    void name(const double *x, double *y, size_t n)                                           \
    {                                                                                         \
        if (use_vec < 0)                                                                      \
            dpzo__vm_vector(-1);                                                              \
        VM_VEC_CALL(vname)                                                                    \
        for (size_t i = 0; i < n; i++)                                                        \
            y[i] = sf(x[i]);                                                                  \
    }
#if VM_HAVE
#define VM_VEC_CALL(vname)                                                                    \
    if (use_vec) {                                                                            \
        vname(x, y, n);                                                                       \
        return;                                                                               \
    }
#else
#define VM_VEC_CALL(vname)
#endif
VM_DISPATCH(dpzo__vm_erfc, v_erfc, erfc)
VM_DISPATCH(dpzo__vm_log, v_log, log)
VM_DISPATCH(dpzo__vm_expm1, v_expm1, expm1)
