/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/blas.h: which BLAS kernels the built-in models' matrix products run on.
 *
 * dpzo's models (dpzo/model.h) compute their products with OpenBLAS's cblas_sgemm.
 * OpenBLAS built with DYNAMIC_ARCH (Debian's is) chooses its kernels when it is loaded,
 * by the CPU's family and model number. A CPU newer than the OpenBLAS release gets its
 * generic kernels: OpenBLAS 0.3.21 gives an Intel Xeon of family 6, model 207 (avx2,
 * avx512f) its SSE3 kernels "Prescott" (bench/results/cpu_step_blas.md measures what
 * that costs). The CPU's features say what it can run, so dpzo selects by them:
 *
 *   - when OpenBLAS chose kernels older than AVX2 (its generic SSE/AVX fallbacks) on a CPU
 *     whose features and operating system support AVX2 and FMA or AVX-512, dpzo switches
 *     OpenBLAS to the kernels of the CPU's class: "SkylakeX" for AVX-512 (F, CD, BW, DQ,
 *     VL), "Cooperlake" when AVX-512 BF16 is there too (OpenBLAS's own choice for such
 *     CPUs), "Haswell" for AVX2 with FMA ("Zen" on AMD);
 *   - an OPENBLAS_CORETYPE set by the user is respected: nothing is switched;
 *   - DPZO_BLAS_SELECT=0 keeps OpenBLAS's own choice;
 *   - an OpenBLAS built for one CPU (no DYNAMIC_ARCH) cannot switch: it is reported.
 *
 * The switch happens once per process, at the first dpzo_model_create (or an explicit
 * dpzo_blas_select), before dpzo calls the BLAS. It changes the kernels of the process's
 * OpenBLAS, so it should not run while another thread is inside an OpenBLAS call.
 * Results of the models stay within their stated tolerance (docs/trainer.md, section 4.1)
 * whatever kernels run; the bits may differ between kernels, never between runs. */
#ifndef DPZO_BLAS_H
#define DPZO_BLAS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The vector instruction classes that matter for the BLAS kernels. */
typedef enum {
    DPZO_ISA_SSE = 0,   /* SSE2/SSE3 only (x86-64's baseline) */
    DPZO_ISA_AVX = 1,   /* AVX without AVX2 */
    DPZO_ISA_AVX2 = 2,  /* AVX2 and FMA */
    DPZO_ISA_AVX512 = 3 /* AVX-512 F, CD, BW, DQ and VL */
} dpzo_isa;

/* CPU feature bits (dpzo_cpu_features). The OS_ bits say that the operating system saves
 * the registers (XCR0): without them the instructions cannot be used. */
#define DPZO_CPU_AVX (1u << 0)
#define DPZO_CPU_AVX2 (1u << 1)
#define DPZO_CPU_FMA (1u << 2)
#define DPZO_CPU_AVX512F (1u << 3)
#define DPZO_CPU_AVX512CD (1u << 4)
#define DPZO_CPU_AVX512BW (1u << 5)
#define DPZO_CPU_AVX512DQ (1u << 6)
#define DPZO_CPU_AVX512VL (1u << 7)
#define DPZO_CPU_AVX512BF16 (1u << 8)
#define DPZO_CPU_OS_YMM (1u << 9)
#define DPZO_CPU_OS_ZMM (1u << 10)
#define DPZO_CPU_AMD (1u << 11) /* vendor AuthenticAMD (or HygonGenuine) */

/* This CPU's features (cpuid and XCR0; 0 on a non-x86 machine). */
unsigned dpzo_cpu_features(void);
/* The class a feature set can run (OS support included). */
dpzo_isa dpzo_cpu_isa(unsigned features);
/* "SSE", "AVX", "AVX2" or "AVX-512". */
const char *dpzo_isa_name(dpzo_isa isa);
/* The class of an OpenBLAS x86-64 kernel set by its name as openblas_get_corename()
 * gives it (any case): "Prescott" SSE, "Sandybridge" AVX, "Haswell" AVX2, "SkylakeX"
 * AVX-512, ...; -1 for a name this table does not know. */
int dpzo_blas_core_isa(const char *core);

/* dpzo's decision, as a function of what it reads (no side effect): the kernels OpenBLAS
 * chose (`chosen`), the CPU's features, and the environment's OPENBLAS_CORETYPE and
 * DPZO_BLAS_SELECT (NULL when unset). */
typedef struct {
    int do_switch;    /* 1: switch OpenBLAS to `core` */
    char core[32];    /* the kernels to run (the chosen ones when do_switch is 0) */
    char reason[200]; /* one sentence, for --verbose and the docs */
} dpzo_blas_choice;

void dpzo_blas_choose(const char *chosen, unsigned features, const char *env_coretype,
                      const char *env_select, dpzo_blas_choice *out);

/* What the process's BLAS is and runs. */
typedef struct {
    char library[160]; /* openblas_get_config() after the selection, e.g. "OpenBLAS 0.3.21
                        * NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64" */
    char core[32];     /* the kernels in use now (openblas_get_corename()) */
    char chosen[32];   /* the kernels OpenBLAS chose by itself */
    char cpu[16];      /* the CPU's class: dpzo_isa_name(dpzo_cpu_isa(...)) */
    int switched;      /* 1 when dpzo switched the kernels */
    char reason[200];  /* why these kernels (dpzo_blas_choice's reason, or the failure) */
} dpzo_blas_info;

/* Applies dpzo_blas_choose to the process's OpenBLAS once (later calls and concurrent
 * callers wait for the first and get its result); info may be NULL. */
void dpzo_blas_select(dpzo_blas_info *info);
/* One line: "OpenBLAS 0.3.21 ..., kernels Cooperlake (AVX-512 CPU; ...)". */
void dpzo_blas_describe(const dpzo_blas_info *info, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
