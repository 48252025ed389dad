/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/version.h: the version of these headers, as numbers a program can test with the
 * preprocessor. Macros only: any build system can read them, and any header may include it.
 *
 *   #if DPZO_VERSION_NUMBER >= 100   (0.1.0 or later)
 *
 * DPZO_VERSION_NUMBER is major * 10000 + minor * 100 + patch (minor and patch below 100).
 * The library that a program runs with answers dpzo_version() and dpzo_version_number()
 * (dpzo/status.h); it may be another release than the headers the program was compiled
 * with. While the major version is 0, only the same major.minor is compatible (the
 * SONAME, libdpzo.so.0.1, says the same); from 1.0 on, the same major.
 *
 * The single source of the version is `project(dpzo VERSION x.y.z)` in CMakeLists.txt:
 * configuring fails when this file says otherwise (cmake/version.cmake). */
#ifndef DPZO_VERSION_H
#define DPZO_VERSION_H

#define DPZO_VERSION_MAJOR 0
#define DPZO_VERSION_MINOR 1
#define DPZO_VERSION_PATCH 0
#define DPZO_VERSION_STRING "0.1.0"
#define DPZO_VERSION_NUMBER \
    (DPZO_VERSION_MAJOR * 10000 + DPZO_VERSION_MINOR * 100 + DPZO_VERSION_PATCH)

/* The name the headers have always had for DPZO_VERSION_STRING. */
#define DPZO_VERSION DPZO_VERSION_STRING

#endif
