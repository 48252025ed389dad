/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz/fuzz_util.h: what the fuzz targets share (docs/fuzzing.md).
 *
 * Each target defines LLVMFuzzerTestOneInput. It is linked either with libFuzzer (clang,
 * -fsanitize=fuzzer, DPZO_FUZZ=ON) or with fuzz/replay.c, a main() that feeds it every file
 * of the target's seed corpus and regressions (ctest, every build).
 *
 * The input is read as a stream: numbers are taken from its front, a short input reads as
 * zeros after its end. A target never rejects an input: whatever the library is given, it
 * must answer DPZO_OK or an error with a message; the checks below abort() otherwise, which
 * libFuzzer and ctest both report as a failure with the message on stderr. With
 * DPZO_FUZZ_VERBOSE set in the environment, every call's status and message is printed. */
#ifndef DPZO_FUZZ_UTIL_H
#define DPZO_FUZZ_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dpzo/status.h"

#define FZ_UNUSED __attribute__((unused))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    const uint8_t *p;
    size_t n, pos;
} fz_in;

static FZ_UNUSED fz_in fz_make(const uint8_t *data, size_t size)
{
    fz_in in = {data, size, 0};
    return in;
}

static FZ_UNUSED uint8_t fz_u8(fz_in *in)
{
    return in->pos < in->n ? in->p[in->pos++] : 0;
}

static FZ_UNUSED uint64_t fz_u64(fz_in *in)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)fz_u8(in) << (8 * i);
    return v;
}

static FZ_UNUSED uint32_t fz_u32(fz_in *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)fz_u8(in) << (8 * i);
    return v;
}

/* A double: one selector byte, then eight bytes. Selector 0-127: the eight bytes are the
 * raw IEEE-754 bit pattern (the whole range: NaN, +-inf, subnormals, +-0, 1e308). 128-255:
 * a value from the table below (the edges of every documented range) scaled by
 * 1 + f, f in [0, 1) from the eight bytes' top bits, so that ordinary values are reached
 * quickly as well. */
static FZ_UNUSED double fz_double(fz_in *in)
{
    static const double table[] = {0.0,     -0.0,    5e-324, 1e-320, 1e-300, 1e-17,  1e-12,
                                   1e-10,   1e-6,    1e-5,   1e-4,   1e-3,   0.004,  0.01,
                                   0.1,     0.5,     0.9,    1.0,    1.1,    2.0,    3.0,
                                   8.0,     10.0,    64.0,   100.0,  256.0,  1000.0, 6e4,
                                   1e5,     1e6,     1e9,    1e18,   1e300,  1e308,  INFINITY,
                                   -1.0,    -1e-300, NAN};
    uint8_t sel = fz_u8(in);
    uint64_t bits = fz_u64(in);
    if (sel < 128) {
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    double base = table[(sel - 128) % (sizeof table / sizeof table[0])];
    double f = (sel & 1) ? 0.0 : (double)(bits >> 11) * 0x1p-53;
    return base * (1.0 + f);
}

/* A count: the raw 64 bits (selector odd) or a small value in [0, 2^k) (selector even,
 * k from the selector), so that 0, 1, small, huge and UINT64_MAX all occur. */
static FZ_UNUSED uint64_t fz_count(fz_in *in)
{
    uint8_t sel = fz_u8(in);
    uint64_t v = fz_u64(in);
    if (sel & 1)
        return v;
    unsigned k = (sel >> 1) % 64;
    return k == 0 ? 0 : v & ((UINT64_C(1) << k) - 1);
}

/* The rest of the input as a NUL-terminated string (malloc'ed). */
static FZ_UNUSED char *fz_rest_string(fz_in *in, size_t *len)
{
    size_t n = in->pos < in->n ? in->n - in->pos : 0;
    char *s = malloc(n + 1);
    if (s == NULL)
        abort();
    if (n > 0)
        memcpy(s, in->p + in->pos, n);
    s[n] = '\0';
    in->pos = in->n;
    if (len != NULL)
        *len = n;
    return s;
}

/* ---- failures ---------------------------------------------------------------------- */

static FZ_UNUSED void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dpzo fuzz check failed: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

/* 1 when DPZO_FUZZ_VERBOSE is set: the targets print their decoded inputs and every
 * call's status (to read a crashing input). */
static FZ_UNUSED int fz_verbose(void)
{
    static int verbose = -1;
    if (verbose < 0)
        verbose = getenv("DPZO_FUZZ_VERBOSE") != NULL;
    return verbose;
}

#define FZ_LOG(...)                                                                              \
    do {                                                                                         \
        if (fz_verbose())                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                        \
    } while (0)

/* The contract of every public function: DPZO_OK, or a known error code with a message. */
static FZ_UNUSED int fz_ok(dpzo_ctx *ctx, dpzo_status st, const char *what)
{
    if (fz_verbose())
        fprintf(stderr, "  %s: %s%s%s\n", what, dpzo_status_name(st), st ? ": " : "",
                st ? dpzo_ctx_errmsg(ctx) : "");
    if (st == DPZO_OK)
        return 1;
    if ((int)st < 0 || st > DPZO_EINTERRUPTED)
        fz_fail("%s: unknown status %d", what, (int)st);
    const char *msg = dpzo_ctx_errmsg(ctx);
    if (msg == NULL || msg[0] == '\0')
        fz_fail("%s: status %s with an empty message", what, dpzo_status_name(st));
    return 0;
}

/* a <= b * (1 + rel) + abs, NaN-safe (NaN fails). */
static FZ_UNUSED int fz_le(double a, double b, double rel, double abs)
{
    if (isnan(a) || isnan(b))
        return 0;
    if (a <= b)
        return 1;
    return a <= b + fabs(b) * rel + abs;
}

/* A proven upper epsilon: not NaN, >= 0, >= its lower end (when the lower end is known). */
static FZ_UNUSED void fz_check_upper(const char *what, double upper, double lower)
{
    if (isnan(upper) || upper < 0.0)
        fz_fail("%s: proven upper bound %.17g is NaN or negative", what, upper);
    if (!isnan(lower) && !(lower <= upper))
        fz_fail("%s: lower end %.17g above the proven upper bound %.17g", what, lower, upper);
}

/* ---- an independent lower bound ---------------------------------------------------------
 * One step of the Gaussian with sensitivity 1 and noise multiplier s, the record present
 * with probability q: P = (1-q) N(0, s^2) + q N(1, s^2) against Q = N(0, s^2). Any number
 * of steps of the Poisson-sampled Gaussian (add-remove) contains this pair (its first
 * step), so its hockey-stick divergence H_eps(P || Q) is a lower bound on the delta(eps)
 * of the whole run, and a claimed (eps, delta) with delta below it is false. The same pair
 * is realised by sampling without replacement at q = B/n under replace-one adjacency
 * (the replaced record moves the sum by 1, the other by 0), and with q = 1 by no sampling.
 *
 * The privacy loss of P against Q is increasing in x, so H = P(x > x0) - e^eps Q(x > x0)
 * with (1-q) + q e^{(2 x0 - 1) / (2 s^2)} = e^eps: x0 = s^2 L + 1/2, L = ln((e^eps - 1 +
 * q) / q). Then H = q Phi_bar(s L - 1/(2s)) - (e^eps - 1 + q) Phi_bar(s L + 1/(2s)).
 * Computed in logarithms (double precision; callers allow a relative slack). Returns log H
 * (-inf: 0, or too close to 0 to tell from rounding). */
static FZ_UNUSED double fz_log_phi_bar(double z)
{
    if (z < 37.0)
        return log(0.5 * erfc(z / M_SQRT2));
    double z2 = z * z;
    return -0.5 * z2 - log(z) - 0.5 * log(2.0 * M_PI) +
           log1p(-1.0 / z2 + 3.0 / (z2 * z2) - 15.0 / (z2 * z2 * z2));
}

static FZ_UNUSED double fz_log_hockey_stick(double q, double s, double eps)
{
    if (!(q > 0.0 && q <= 1.0 && s > 0.0 && isfinite(s) && eps >= 0.0 && isfinite(eps)))
        return -INFINITY;
    /* L = eps + ln(1 - (1 - q) e^-eps) - ln q */
    double L = eps + log1p(-(1.0 - q) * exp(-eps)) - log(q);
    double a = s * L - 0.5 / s, b = s * L + 0.5 / s;
    if (isnan(a) || isnan(b))
        return -INFINITY;
    /* H = q Phi_bar(a) - (e^eps - 1 + q) Phi_bar(b) is a lower bound for ANY threshold x0,
     * so a rounded L only moves x0; the second factor is formed from eps, not as q e^L
     * (which equals it only for the exact L: at eps = 0 and sigma 7e223 the rounding of L,
     * 1e-16, times sigma made H read 4e-17 where it is 1e-226). */
    double t1 = log(q) + fz_log_phi_bar(a);
    double t2 = log(expm1(eps) + q) + fz_log_phi_bar(b);
    /* the two terms carry relative errors up to about 1e-10 (erfc, the asymptotic series
     * beyond z = 37, the logs): a difference below 1e-9 of them is no evidence */
    if (!(t2 < t1) || -expm1(t2 - t1) < 1e-9)
        return -INFINITY;
    return t1 + log(-expm1(t2 - t1));
}

/* Fails when (eps, delta) is claimed proven although one step already spends more: the
 * lower bound exceeds delta by more than 1% (far beyond the rounding of the formula). */
static FZ_UNUSED void fz_check_not_below_one_step(const char *what, double q, double s,
                                                  double eps, double delta)
{
    if (!(delta > 0.0) || !isfinite(eps))
        return;
    double lh = fz_log_hockey_stick(q, s, eps);
    if (lh > log(delta) + 0.01)
        fz_fail("%s: epsilon %.17g at delta %.17g is claimed proven, but one step of the "
                "sampled Gaussian (q %.17g, sigma %.17g) alone has delta(eps) >= %.6g",
                what, eps, delta, q, s, exp(lh));
}

/* ---- files ------------------------------------------------------------------------- */

static char fz_dir[256];

/* Removes the files of fz_tmpdir() and the directory (at exit). */
static FZ_UNUSED void fz_cleanup(void)
{
    DIR *d = opendir(fz_dir);
    if (d == NULL)
        return;
    struct dirent *e;
    char path[600];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", fz_dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(fz_dir);
}

/* A private directory for the process's temporary files (made once, removed at exit). */
static FZ_UNUSED const char *fz_tmpdir(void)
{
    char *dir = fz_dir;
    if (dir[0] == '\0') {
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof fz_dir, "%s/dpzo-fuzz-XXXXXX", base && base[0] ? base : "/tmp");
        if (mkdtemp(dir) == NULL)
            fz_fail("cannot create a temporary directory %s", dir);
        atexit(fz_cleanup);
    }
    return dir;
}

/* Writes data to fz_tmpdir()/name (replacing it) and returns the path (static storage,
 * one per name slot: slot 0..3). */
static FZ_UNUSED const char *fz_write_file(int slot, const char *name, const void *data,
                                           size_t n)
{
    static char paths[4][512];
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", fz_tmpdir(), name);
    FILE *f = fopen(paths[slot], "wb");
    if (f == NULL || (n > 0 && fwrite(data, 1, n, f) != n) || fclose(f) != 0)
        fz_fail("cannot write %s", paths[slot]);
    return paths[slot];
}

#endif
