/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cuda/cu_ops.h: how libdpzo.so reaches the CUDA kernels (private).
 *
 * The kernels and their launchers (zo_cuda.cu, declared in zo_cuda.h) live in a library of
 * their own, libdpzo_cuda.so, the only part of dpzo linked to the CUDA runtime. It exports
 * one function, DPZO_CU_OPS_SYMBOL, which returns the table below: the launchers' addresses
 * (cu_table.c). libdpzo.so, the CLI and the tests link load.c instead of the launchers: its
 * dpzo__cu_* functions dlopen libdpzo_cuda.so at the first CUDA call (dpzo_cuda_available's
 * probe, which every other entry point makes first) and forward to the table, so accounting
 * never needs a CUDA runtime (docs/cuda.md, "Where the kernels are loaded from").
 *
 * A table from another build of dpzo is refused: abi, size and version must all match the
 * loader's (a change of any launcher's signature bumps DPZO_CU_OPS_ABI). */
#ifndef DPZO_KERNELS_CU_OPS_H
#define DPZO_KERNELS_CU_OPS_H

#include "zo_cuda.h"

#define DPZO_CU_OPS_ABI 1u
#define DPZO_CU_OPS_SYMBOL "dpzo__cu_ops_v1"
/* The file name load.c looks for. */
#define DPZO_CU_LIBRARY_NAME "libdpzo_cuda.so"

typedef struct {
    unsigned abi;        /* DPZO_CU_OPS_ABI of the library's build */
    size_t size;         /* sizeof(dpzo__cu_ops) there */
    const char *version; /* the dpzo version (CMake's PROJECT_VERSION) */
    const char *(*probe)(int *ok);
    const char *(*device_info)(char *name, size_t name_len, int *major, int *minor, int *sms);
    void (*set_launch)(unsigned blocks, unsigned threads);
    const char *(*mem_alloc)(void **p, size_t bytes);
    void (*mem_free)(void *p);
    const char *(*copy)(void *dst, const void *src, size_t bytes, int to_device);
    const char *(*sync)(void);
    const char *(*apply)(const dpzo_dir *dirs, const double *alpha, unsigned k, int axpy,
                         uint64_t j0, size_t n, float *out);
    const char *(*typed)(const dpzo_dir *dirs, const double *alpha, unsigned k, int dt,
                         uint64_t j0, size_t n, const void *x, void *out, void *stream);
    const char *(*sumsq)(const dpzo_dir *dir, double *total);
    const char *(*clip_sum)(double *diff, size_t b, unsigned Q, int mode, double clip,
                            double *qsum, double *factor);
} dpzo__cu_ops;

typedef const dpzo__cu_ops *(*dpzo__cu_ops_fn)(void);

/* Defined by libdpzo_cuda.so (cu_table.c), looked up by load.c with dlsym. */
const dpzo__cu_ops *dpzo__cu_ops_v1(void);

#endif
