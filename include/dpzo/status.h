/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/status.h: status codes, the context handle that carries error messages,
 * and the {value, lower, upper} result used by every certified computation.
 *
 * Every public dpzo function returns a dpzo_status. On failure the context holds
 * a one-line message naming the bad value (dpzo_ctx_errmsg).
 *
 * The library never prints and never exits: no output to stdout or stderr, no exit(),
 * abort() or assert(); every failure, out-of-memory included, is a status and a message
 * (tests/install/abi.sh checks that libdpzo.so imports none of them). It writes only to
 * files whose names the caller passes ("-" there means standard output, on request).
 *
 * Threads: every function may be called from several threads at once, provided each
 * thread uses its own context. A context is not shared between threads; create one per
 * thread (they are cheap). Objects passed through const pointers (an event, a grid, a
 * direction, a profile being verified) may be read by several threads at once; any
 * other object (a sampler, a search, a trainer, a profile being filled) belongs to one
 * thread at a time. The library has no mutable global state of its own beyond tables
 * initialised once (pthread_once) and MPFR's per-thread exponent range and constant
 * caches; results do not depend on what other threads do (tests/test_threads.c: eight
 * threads agree bit for bit with one). Some calls start worker threads of their own and
 * join them before returning (the PLD accountant's two directions, the LMO search).
 * Process-wide side effect: the noise search and the audits switch GSL's error handler
 * off (gsl_set_error_handler_off, never restored), since GSL's default handler aborts. */
#ifndef DPZO_STATUS_H
#define DPZO_STATUS_H

#include <stddef.h>
#include "dpzo/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DPZO_OK = 0,
    DPZO_EINVAL = 1,       /* an argument is out of its domain (NaN, negative, ...) */
    DPZO_ENOMEM = 2,       /* allocation failed */
    DPZO_EUNSUPPORTED = 3, /* the event combination has no implemented analysis */
    DPZO_ENOCONV = 4,      /* a series or search did not reach the requested accuracy */
    DPZO_EPARSE = 5,       /* a file or string could not be parsed */
    DPZO_EINFEASIBLE = 6,  /* a calibration target cannot be met in the allowed range */
    DPZO_EINTERRUPTED = 7  /* stopped on request (a search can be resumed) */
} dpzo_status;

/* A real number known to lie in [lower, upper]; value is the best estimate.
 * For privacy quantities `upper` is what a guarantee may quote. */
typedef struct {
    double value;
    double lower;
    double upper;
} dpzo_bound;

typedef struct dpzo_ctx dpzo_ctx;

/* Returns NULL only when out of memory. */
dpzo_ctx *dpzo_ctx_new(void);
void dpzo_ctx_free(dpzo_ctx *ctx);

/* The library's version, e.g. "0.1.0": the DPZO_VERSION_STRING of the headers it was built
 * with (dpzo/version.h). A program can compare it with its own headers' version: */
const char *dpzo_version(void);
/* the same as a number, DPZO_VERSION_NUMBER of the library's headers (major * 10000 +
 * minor * 100 + patch, e.g. 100 for 0.1.0). While the major version is 0, a program built
 * with other headers is compatible when dpzo_version_number() / 100 equals its own
 * DPZO_VERSION_NUMBER / 100 (the same major.minor). */
int dpzo_version_number(void);

/* Frees memory that a dpzo function returned for the caller to free (the JSON text of
 * dpzo_profile_to_json, the claim arrays of dpzo_claims_from_json, ...). Use it rather
 * than free() from another language or runtime: it is the allocator the library used.
 * NULL is a no-op. */
void dpzo_free(void *ptr);

/* The message of the last failed call on this context ("" if none). */
const char *dpzo_ctx_errmsg(const dpzo_ctx *ctx);
/* A short name for a status code, e.g. "invalid argument". */
const char *dpzo_status_name(dpzo_status status);

/* Bits of MPFR precision used by the certified path (default 128; the
 * certified routines raise it automatically where cancellation needs it). */
dpzo_status dpzo_ctx_set_precision(dpzo_ctx *ctx, long bits);
long dpzo_ctx_precision(const dpzo_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
