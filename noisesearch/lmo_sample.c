/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_sample.c: drawing LMO noise (spec section 1.5).
 *
 *   g ~ Gamma(k, theta)      gsl_ran_gamma(r, k, theta)         (shape, scale)
 *   e ~ Exp(rate lam)        gsl_ran_exponential(r, 1/lam)      (GSL takes the MEAN)
 *   u ~ Uniform(a, b)        a + (b - a) * gsl_rng_uniform_pos(r)
 *   Y = wG g + wE e + wU u   (a component of weight 0 is not drawn)
 *   x ~ Laplace(0, 1/Y)      gsl_ran_laplace(r, 1/Y)            (scale)
 *
 * The uniform is gsl_ran_flat's transform with the open unit interval, so that U = a
 * exactly (Y = 0 when a = 0 and U is alone) cannot occur.
 *
 * Two generators feed the same transforms:
 *   seeded: GSL's mt19937; its seed is 32 bits, so the 64-bit seed is folded
 *           (seed ^ (seed >> 32)); GSL maps seed 0 to its default 4357.
 *   secure: a gsl_rng_type defined here whose bits come from getrandom(2), read
 *           through a 4096-byte buffer (EINTR retried, short reads continued).
 *           get() returns 32 bits, get_double() 53 bits in [0, 1) (GSL's
 *           distributions call gsl_rng_uniform_pos where they need (0, 1)).
 * If getrandom fails, the sampler records it (sticky) and the generator goes on
 * with a non-secret fallback stream only so that GSL's rejection loops terminate;
 * dpzo_lmo_sample then overwrites its output with NaN and fails. The random buffer
 * is wiped when the sampler is freed. */
#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "lmo_internal.h"

#define SECURE_BUF 4096

typedef struct {
    dpzo__entropy_fn fill;
    size_t pos, len;   /* unread bytes are buf[pos, len) */
    int failed;        /* sticky: the source failed once */
    int err;           /* its errno */
    uint64_t fallback; /* splitmix64 state, used only after a failure */
    unsigned char buf[SECURE_BUF];
} secure_state;

struct dpzo_lmo_sampler {
    dpzo_lmo lmo;
    gsl_rng rng; /* rng.state allocated here (not by gsl_rng_alloc, which may abort) */
    int secure;
    int gaussian; /* 1: standard normal draws instead of LMO (dpzo_gaussian_sampler_*) */
};

static ssize_t os_getrandom(void *buf, size_t len, unsigned flags)
{
    return getrandom(buf, len, flags);
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void secure_refill(secure_state *st)
{
    size_t got = 0;
    while (!st->failed && got < SECURE_BUF) {
        ssize_t r = st->fill(st->buf + got, SECURE_BUF - got, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            st->err = errno;
            st->failed = 1;
        } else if (r == 0) {
            st->err = EIO;
            st->failed = 1;
        } else {
            got += (size_t)r;
        }
    }
    if (st->failed) {
        for (size_t i = 0; i + 8 <= SECURE_BUF; i += 8) {
            uint64_t v = splitmix64(&st->fallback);
            memcpy(st->buf + i, &v, 8);
        }
    }
    st->pos = 0;
    st->len = SECURE_BUF;
}

static void secure_take(secure_state *st, void *dst, size_t n)
{
    if (st->len - st->pos < n)
        secure_refill(st);
    memcpy(dst, st->buf + st->pos, n);
    st->pos += n;
}

static void secure_set(void *state, unsigned long seed)
{
    (void)seed; /* the operating system's CSPRNG takes no seed */
    secure_state *st = state;
    st->fill = os_getrandom;
    st->pos = st->len = 0;
    st->failed = 0;
    st->err = 0;
    st->fallback = 0x2545f4914f6cdd1dULL;
}

static unsigned long secure_get(void *state)
{
    uint32_t v;
    secure_take(state, &v, sizeof v);
    return v;
}

static double secure_get_double(void *state)
{
    uint64_t v;
    secure_take(state, &v, sizeof v);
    return (double)(v >> 11) * 0x1.0p-53; /* [0, 1), 53 random bits */
}

static const gsl_rng_type secure_type = {
    "dpzo-getrandom", 0xffffffffUL, 0, sizeof(secure_state),
    secure_set,       secure_get,   secure_get_double,
};

static dpzo_lmo_sampler *sampler_new(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                     const gsl_rng_type *type, int secure)
{
    dpzo_lmo_sampler *s = calloc(1, sizeof *s);
    void *state = s ? calloc(1, type->size) : NULL;
    if (state == NULL) {
        free(s);
        dpzo__fail(ctx, DPZO_ENOMEM, "out of memory (LMO sampler)");
        return NULL;
    }
    if (lmo != NULL)
        s->lmo = *lmo;
    s->gaussian = lmo == NULL;
    s->rng.type = type;
    s->rng.state = state;
    s->secure = secure;
    return s;
}

/* lmo NULL: a standard normal sampler */
static dpzo_lmo_sampler *make_seeded(dpzo_ctx *ctx, const dpzo_lmo *lmo, uint64_t seed)
{
    dpzo_lmo_sampler *s = sampler_new(ctx, lmo, gsl_rng_mt19937, 0);
    if (s)
        gsl_rng_set(&s->rng, (unsigned long)((seed ^ (seed >> 32)) & 0xffffffffULL));
    return s;
}

static dpzo_lmo_sampler *make_secure(dpzo_ctx *ctx, const dpzo_lmo *lmo);

dpzo_lmo_sampler *dpzo_lmo_sampler_seeded(dpzo_ctx *ctx, const dpzo_lmo *lmo, uint64_t seed)
{
    if (dpzo_lmo_validate(ctx, lmo) != DPZO_OK)
        return NULL;
    return make_seeded(ctx, lmo, seed);
}

dpzo_lmo_sampler *dpzo_gaussian_sampler_seeded(dpzo_ctx *ctx, uint64_t seed)
{
    return make_seeded(ctx, NULL, seed);
}

dpzo_lmo_sampler *dpzo_gaussian_sampler_secure(dpzo_ctx *ctx) { return make_secure(ctx, NULL); }

dpzo_lmo_sampler *dpzo_lmo_sampler_secure(dpzo_ctx *ctx, const dpzo_lmo *lmo)
{
    if (dpzo_lmo_validate(ctx, lmo) != DPZO_OK)
        return NULL;
    return make_secure(ctx, lmo);
}

static dpzo_lmo_sampler *make_secure(dpzo_ctx *ctx, const dpzo_lmo *lmo)
{
    dpzo_lmo_sampler *s = sampler_new(ctx, lmo, &secure_type, 1);
    if (s == NULL)
        return NULL;
    gsl_rng_set(&s->rng, 0);
    secure_state *st = s->rng.state;
    secure_refill(st); /* fail now if the CSPRNG is not there at all */
    if (st->failed) {
        dpzo__fail(ctx, DPZO_EUNSUPPORTED, "the operating system's CSPRNG (getrandom) failed: %s",
                   strerror(st->err));
        dpzo_lmo_sampler_free(s);
        return NULL;
    }
    return s;
}

int dpzo__lmo_sampler_set_entropy(dpzo_lmo_sampler *s, dpzo__entropy_fn fn)
{
    if (s == NULL || !s->secure)
        return 1;
    secure_state *st = s->rng.state;
    st->fill = fn;
    st->pos = st->len = 0;
    return 0;
}

static double draw(const dpzo_lmo *l, const gsl_rng *r)
{
    double y = 0.0;
    if (l->gamma_weight > 0.0)
        y += l->gamma_weight * gsl_ran_gamma(r, l->gamma_shape, l->gamma_scale);
    if (l->exp_weight > 0.0)
        y += l->exp_weight * gsl_ran_exponential(r, 1.0 / l->exp_rate);
    if (l->uniform_weight > 0.0)
        y += l->uniform_weight *
             (l->uniform_low + (l->uniform_high - l->uniform_low) * gsl_rng_uniform_pos(r));
    return gsl_ran_laplace(r, 1.0 / y);
}

static dpzo_status csprng_failed(dpzo_ctx *ctx, const secure_state *st)
{
    return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                      "the operating system's CSPRNG (getrandom) failed: %s; no noise drawn",
                      strerror(st->err));
}

dpzo_status dpzo_lmo_sample(dpzo_ctx *ctx, dpzo_lmo_sampler *s, double *out, size_t n)
{
    if (s == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "no LMO sampler given");
    if (n > 0 && out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "no output buffer given for %zu LMO draws", n);
    const secure_state *st = s->secure ? s->rng.state : NULL;
    if (st && st->failed)
        return csprng_failed(ctx, st);
    for (size_t i = 0; i < n; i++)
        out[i] = s->gaussian ? gsl_ran_gaussian_ziggurat(&s->rng, 1.0) : draw(&s->lmo, &s->rng);
    if (st && st->failed) {
        for (size_t i = 0; i < n; i++)
            out[i] = NAN;
        return csprng_failed(ctx, st);
    }
    return DPZO_OK;
}

void dpzo_lmo_sampler_free(dpzo_lmo_sampler *s)
{
    if (s == NULL)
        return;
    if (s->rng.state)
        explicit_bzero(s->rng.state, s->rng.type->size);
    free(s->rng.state);
    free(s);
}
