/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cuda/cu_table.c: the one entry point of libdpzo_cuda.so (kernels/cuda/cu_ops.h):
 * the table of zo_cuda.cu's launchers that load.c asks for. */
#include "cu_ops.h"

#ifndef DPZO_CU_VERSION
#error "DPZO_CU_VERSION (the dpzo version) must be defined by the build"
#endif

static const dpzo__cu_ops OPS = {
    .abi = DPZO_CU_OPS_ABI,
    .size = sizeof(dpzo__cu_ops),
    .version = DPZO_CU_VERSION,
    .probe = dpzo__cu_probe,
    .device_info = dpzo__cu_device_info,
    .set_launch = dpzo__cu_set_launch,
    .mem_alloc = dpzo__cu_malloc,
    .mem_free = dpzo__cu_free,
    .copy = dpzo__cu_copy,
    .sync = dpzo__cu_sync,
    .apply = dpzo__cu_apply,
    .typed = dpzo__cu_typed,
    .sumsq = dpzo__cu_sumsq,
    .clip_sum = dpzo__cu_clip_sum,
};

const dpzo__cu_ops *dpzo__cu_ops_v1(void) { return &OPS; }
