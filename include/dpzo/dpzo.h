/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/dpzo.h: the whole public C API of dpzo's accountant.
 *
 * Link with libdpzo.so: `pkg-config --cflags --libs dpzo`, or find_package(dpzo) and the
 * target dpzo::dpzo in CMake (docs/install.md). The trainer, direction and CUDA APIs have
 * their own headers (dpzo/trainer.h, dpzo/model.h, dpzo/zo_dir.h, dpzo/cuda.h), in the same
 * library.
 *
 * Contract (dpzo/status.h): every call returns a dpzo_status with its message in the
 * context; the library never prints and never exits; it is safe to call from several
 * threads at once with one context per thread. */
#ifndef DPZO_DPZO_H
#define DPZO_DPZO_H

#include "dpzo/version.h"
#include "dpzo/status.h"
#include "dpzo/event.h"
#include "dpzo/rdp.h"
#include "dpzo/convert.h"
#include "dpzo/calibrate.h"
#include "dpzo/pld.h"
#include "dpzo/lmo.h"
#include "dpzo/profile.h"
#include "dpzo/audit.h"

#endif
