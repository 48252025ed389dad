/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/dir_check.h: the direction set-up checks that kernels/cpu/zo_dir.c and
 * kernels/cuda/api.c share, so both back ends accept and refuse the same arguments with the
 * same messages. */
#ifndef DPZO_DIR_CHECK_H
#define DPZO_DIR_CHECK_H

#include "dpzo/status.h"
#include "dpzo/zo_dir.h"

/* A sphere direction's scale radius / sqrt(total) into *scale; when total (the draw's sum of
 * squares) is not > 0 and finite, DPZO_EINVAL naming the direction (masked: the masked
 * draw). */
dpzo_status dpzo__sphere_scale(dpzo_ctx *ctx, const dpzo_dir *d, double total, double radius,
                               int masked, double *scale);
/* The argument checks of a masked direction (dpzo_dir_set_mult and its CUDA twin). */
dpzo_status dpzo__mult_check(dpzo_ctx *ctx, const dpzo_dir *dir, const void *mult,
                             double radius);

#endif
