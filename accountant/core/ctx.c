/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/core/ctx.c: the context handle, status names and shared input checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <gsl/gsl_errno.h>
#include <mpfr.h>
#include "dpzo/dpzo.h"
#include "internal.h"

static pthread_once_t gsl_quiet_once = PTHREAD_ONCE_INIT;
static void gsl_quiet_now(void) { gsl_set_error_handler_off(); }

/* GSL's default error handler prints and aborts; the library never does either and checks
 * every GSL status instead. The handler is process-wide state, so it is switched off once
 * (not by each call, which raced between threads, if harmlessly) and never restored. */
void dpzo__gsl_quiet(void) { pthread_once(&gsl_quiet_once, gsl_quiet_now); }

dpzo_ctx *dpzo_ctx_new(void)
{
    dpzo__gsl_quiet();
    dpzo_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx != NULL)
        ctx->precision = 128;
    return ctx;
}

/* Also releases the calling thread's MPFR caches and pools (constants such as pi, the
 * mpz pool): MPFR keeps them per thread and frees them only on request, so a thread that
 * made certified calls and then exits would leak them. Contexts are per thread, so freeing
 * one is the caller's "this thread is done with dpzo"; MPFR rebuilds what a later call
 * needs. */
void dpzo_ctx_free(dpzo_ctx *ctx)
{
    if (ctx != NULL && ctx->cache_free != NULL)
        ctx->cache_free(ctx->cache);
    free(ctx);
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
}

void dpzo_free(void *ptr) { free(ptr); }

const char *dpzo_version(void) { return DPZO_VERSION_STRING; }

int dpzo_version_number(void) { return DPZO_VERSION_NUMBER; }

const char *dpzo_ctx_errmsg(const dpzo_ctx *ctx) { return ctx != NULL ? ctx->errmsg : ""; }

const char *dpzo_status_name(dpzo_status status)
{
    switch (status) {
    case DPZO_OK: return "ok";
    case DPZO_EINVAL: return "invalid argument";
    case DPZO_ENOMEM: return "out of memory";
    case DPZO_EUNSUPPORTED: return "unsupported event";
    case DPZO_ENOCONV: return "no convergence";
    case DPZO_EPARSE: return "parse error";
    case DPZO_EINFEASIBLE: return "infeasible target";
    case DPZO_EINTERRUPTED: return "interrupted";
    }
    return "unknown status";
}

dpzo_status dpzo_ctx_set_precision(dpzo_ctx *ctx, long bits)
{
    if (bits < 64 || bits > 65536)
        return dpzo__fail(ctx, DPZO_EINVAL, "precision must be in [64, 65536] bits, got %ld",
                          bits);
    ctx->precision = bits;
    return DPZO_OK;
}

long dpzo_ctx_precision(const dpzo_ctx *ctx) { return ctx != NULL ? ctx->precision : 128; }

dpzo_status dpzo__fail(dpzo_ctx *ctx, dpzo_status status, const char *fmt, ...)
{
    if (ctx != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
        va_end(ap);
    }
    return status;
}

dpzo_status dpzo__check_order(dpzo_ctx *ctx, double alpha)
{
    if (!(alpha > 1.0 && alpha <= DPZO_MAX_ORDER))
        return dpzo__fail(ctx, DPZO_EINVAL, "order alpha must be in (1, %g], got %g",
                          (double)DPZO_MAX_ORDER, alpha);
    return DPZO_OK;
}

dpzo_status dpzo__check_sigma(dpzo_ctx *ctx, double sigma)
{
    if (!(sigma >= 0.0) || !isfinite(sigma))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "noise multiplier must be finite and >= 0, got %g", sigma);
    return DPZO_OK;
}

dpzo_status dpzo__check_rate(dpzo_ctx *ctx, double q)
{
    if (!(q >= 0.0 && q <= 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "sampling rate must be in [0, 1], got %g", q);
    return DPZO_OK;
}

dpzo_status dpzo__check_delta(dpzo_ctx *ctx, double delta)
{
    if (!(delta > 0.0 && delta < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "delta must be in (0, 1), got %g", delta);
    return DPZO_OK;
}

dpzo_status dpzo__check_epsilon(dpzo_ctx *ctx, double epsilon)
{
    if (!(epsilon >= 0.0) || !isfinite(epsilon))
        return dpzo__fail(ctx, DPZO_EINVAL, "epsilon must be finite and >= 0, got %g", epsilon);
    return DPZO_OK;
}

double dpzo__log_add(double a, double b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    if (a == INFINITY || b == INFINITY)
        return INFINITY;
    double hi = a > b ? a : b, lo = a > b ? b : a;
    return hi + log1p(exp(lo - hi));
}
