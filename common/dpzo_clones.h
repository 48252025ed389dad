/* SPDX-License-Identifier: Apache-2.0 */
/* common/dpzo_clones.h: function multiversioning for loops the compiler vectorises.
 *
 * DPZO_KERNEL_CLONES makes GCC compile AVX-512, AVX2 and baseline versions of a function and
 * pick one at load time. The results do not depend on which: each vector lane performs the
 * scalar code's IEEE operations in the same order (ISO C mode compiles with
 * -ffp-contract=off, so no FMA is formed, and nothing is reassociated). A build may define
 * it empty (no multiversioning: -DDPZO_EMULATE_AVX2). Used by kernels/cpu/zo_math.h,
 * accountant/pld/pld_compose.c, pld_spectra.c and pld_fast.c. */
#ifndef DPZO_CLONES_H
#define DPZO_CLONES_H

#ifndef DPZO_KERNEL_CLONES
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define DPZO_KERNEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#endif
#ifndef DPZO_KERNEL_CLONES
#define DPZO_KERNEL_CLONES
#endif

#endif
