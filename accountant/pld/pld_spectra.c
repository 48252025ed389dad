/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_spectra.c: the pieces of an FFT composition that the flat composition
 * (pld_compose.c) and the tree of short transforms (pld_tree.c) share: the tilted weights'
 * functions, Chernoff bounds on the composition's tails, the window's FFT length, products
 * of spectra with their error bounds, the inverse transform's error bound and the window's
 * unpacking. pld_compose.c's file comment derives the bounds (its "Rounding" and "Window and
 * aliasing" parts); pld_tree.c's extends them to the tree. The code was pld_compose.c's, moved
 * unchanged so that pld_tree.c no longer calls back into the file that calls it. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include "pld_spectra.h"
#include "pld_tilt.h"

#define N_THETA DPZO__PLD_N_THETA

/* Work counter (pld_internal.h): both compositions add to it. */
_Atomic unsigned long long dpzo__pld_fft_points;

typedef dpzo__pld_term_stats term_stats; /* pld_spectra.h */

void dpzo__pld_tilt_init(dpzo__pld_tilt *T, double lambda, double d) { tilt_init(T, lambda, d); }

void dpzo__pld_tilt_masses(const dpzo__pld_tilt *T, const dpzo__pld_pmf *p, const double *a,
                           size_t k0, size_t m, double c, double *w, double *fb)
{
    double E[TILT_BLOCK];
    tilt_block(T, p, k0, m, c, E);
    for (size_t j = 0; j < m; j++)
        w[j] = tilt_weight(T, p, a, k0 + j, E[j], c, fb);
}

double dpzo__pld_tilt_err(const dpzo__pld_pmf *p, double lambda, double d, double c, double fb)
{
    return tilt_err(lambda, d, grid_lmax(p, d), grid_wide(p), c, fb);
}

/* Chernoff: the smallest w with P(S - M >= w) <= tau (sign 0) or P(S - M <= -w) <= tau. */
static double chernoff_width(const dpzo__pld_term *terms, const term_stats *st, size_t n, int side,
                             int sg, double log_tau)
{
    double best = INFINITY;
    for (int m = 0; m < N_THETA; m++) {
        double th = dpzo__pld_theta_at(st, m), K = 0.0;
        for (size_t t = 0; t < n && isfinite(K); t++)
            K += (double)terms[t].count
                 * (st[t].cgf[side][sg][m] - (sg ? -1.0 : 1.0) * th * (st[t].mean - (double)st[t].shift));
        /* K is the log MGF of S - M at +-th */
        double w = (K - log_tau) / th;
        if (w < best)
            best = w;
    }
    return best;
}

/* Chernoff bound on P(S - M >= w) (sign 0) or P(S - M <= -w). */
static double chernoff_tail(const dpzo__pld_term *terms, const term_stats *st, size_t n, int side,
                            int sg, double w)
{
    double best = 0.0; /* log bound, 0 = trivial */
    for (int m = 0; m < N_THETA; m++) {
        double th = dpzo__pld_theta_at(st, m), K = 0.0;
        for (size_t t = 0; t < n && isfinite(K); t++)
            K += (double)terms[t].count
                 * (st[t].cgf[side][sg][m] - (sg ? -1.0 : 1.0) * th * (st[t].mean - (double)st[t].shift));
        double b = K - th * w;
        if (b < best)
            best = b;
    }
    /* an upper end's mass, so rounded up: below DBL_MIN exp() is only accurate to an
     * absolute 2^-1075 and a finite log bound below -745 underflows to 0, so the result
     * moves one double up there (the query may multiply it by a large scale) */
    double v = exp(best) * (1.0 + 1e-12);
    if (best > -INFINITY && v < DBL_MIN)
        v = nextafter(v, INFINITY);
    return v;
}

static size_t pow2_at_least(double x)
{
    size_t n = 1024;
    while ((double)n < x && n < ((size_t)1 << 40))
        n <<= 1;
    return n;
}

/* Function multiversioning for the loops that the compiler vectorises (common/dpzo_clones.h:
 * every clone gives the same bits). */
#include "dpzo_clones.h"

typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));

/* Rotates a[0 .. n) left by r in place (three reversals): a[i] <- a[(i + r) mod n]. */
static void reverse(double *a, size_t i, size_t j)
{
    while (i + 1 < j) {
        double t = a[i];
        a[i++] = a[--j];
        a[j] = t;
    }
}

static void rotate_left(double *a, size_t n, size_t r)
{
    if (r == 0 || r >= n)
        return;
    reverse(a, 0, r);
    reverse(a, r, n);
    reverse(a, 0, n);
}

/* The composed window out of the inverse transform: entry i of the window is entry
 * (i + rot) mod N of work. The optimistic side (imaginary parts) is copied out rotated into
 * yopt; the pessimistic side (real parts) is compacted into work's first N doubles (entry
 * j's real part moves from double 2j to double j, after every entry up to j has been read)
 * and rotated there. */
void dpzo__pld_unpack(double complex *work, size_t N, size_t rot, int want_opt, double *yopt)
{
    if (want_opt)
        for (size_t i = 0; i < N; i++)
            yopt[i] = cimag(work[(i + rot) & (N - 1)]);
    double *yp = (double *)work; /* a complex is an array of two doubles (C17 6.2.5) */
    for (size_t j = 1; j < N; j++)
        yp[j] = yp[2 * j];
    rotate_left(yp, N, rot);
}

static double complex cpow_polar(double complex z, uint64_t k, double *rho)
{
    double r = cabs(z);
    if (r == 0.0) {
        *rho = 0.0;
        return 0.0;
    }
    double ph = carg(z), lr = log(r), kk = (double)k;
    *rho = U * (4.0 + kk * (2.0 + 2.0 * fabs(lr) + 3.0 * fabs(ph)));
    double mag = exp(kk * lr);
    if (mag == 0.0)
        return 0.0;
    double s, c;
    sincos(kk * ph, &s, &c);
    return mag * c + I * (mag * s);
}

/* z^k and a bound on |computed - exact| given |z' - z| <= e (see the file comment);
 * rb bounds both |z^k| and |z'^k|. */
static double complex power_bound(double complex z, double e, uint64_t k, double small_r2,
                                  double *eb, double *rb)
{
    if (k == 1) {
        *eb = e;
        *rb = fabs(creal(z)) + fabs(cimag(z)) + e; /* >= |z| + e, without a hypot */
        return z;
    }
    double r2 = creal(z) * creal(z) + cimag(z) * cimag(z);
    double re = sqrt(small_r2) - e;
    if (re > 0.0 && r2 < re * re) {
        /* |z| + e < small_r: both powers are below 1e-300 */
        *eb = 0.0;
        *rb = 0.0;
        return 0.0;
    }
    double rho;
    double complex zk = cpow_polar(z, k, &rho);
    double r = sqrt(r2), R = r + e, azk = cabs(zk);
    double rk = pow(R, (double)k) * (1.0 + 4.0 * U * (double)k + 4.0 * U);
    *rb = rk > azk ? rk : azk;
    *eb = rho * azk + (double)k * e * rk / R;
    if (!(*eb <= *rb + azk))
        *eb = *rb + azk; /* the trivial bound */
    return zk;
}

/* One distinct step (count 1) into the product of spectra, per frequency pair (j, N - j):
 * `in` (work itself, or another array of N) holds the step's transform (pessimistic
 * + i optimistic); z_P, z_O are separated as in the file comment, e bounds their error (ec
 * the forward transform's, plus u of the separation), and with |z| <= rb = |Re z|
 * + |Im z| + e (power_bound's k = 1 case) the product, its error and its bound advance as
 *   prod' = prod z,  ea' = ra e + rb ea + ea e + 4u |prod'|,  ra' = ra rb (1 + 4u).
 * The complex product is written out (a c - b d, a d + b c, each product rounded): C's
 * complex multiplication computes the same for finite operands, without its check for
 * infinities and NaN, which kept the loop from being compiled as straight-line code.
 * first: prod, ra, ea start at 1, 1, 0 (the formulas above with those values: prod' = z
 * exactly, ea' = e + 4u |z|, ra' = rb (1 + 4u)). last: nothing is stored in prod, ra, ea;
 * the composed spectrum C_j = P + i O, C_{N-j} = conj(P) + i conj(O) goes into work, and
 * sum_e, sum_c get what the inverse transform's error needs: sum over all N frequencies of
 * the product's error (ea_P + ea_O) and of |Re C_j| + |Im C_j| (in the order of the pairs;
 * the caller bounds the rounding of these sums), and es_out (if not NULL) the error of
 * each side at each pair, es_out[s H + j], j < H = N/2 + 1 (see es_in). */
/* one frequency pair (j, N - j) of dpzo__pld_spectra_step1 */
static inline __attribute__((always_inline)) void
step1_at(size_t j, const double *xi, double *x, size_t N, int nsides, double ec,
         const double *es_in, double sep,
         int first, int last, double *pr, double *ra, double *ea, double *es_out, double *se,
         double *sc)
{
    const size_t H = N / 2 + 1;
    const double gu = 1.0 + 4.0 * U;
    const size_t jm = (N - j) & (N - 1);
    const double ar = xi[2 * j], ai = xi[2 * j + 1], br = xi[2 * jm], bi = -xi[2 * jm + 1];
    const double rnd = sep * (fabs(ar) + fabs(ai) + fabs(br) + fabs(bi));
    const double es[2] = {(es_in ? es_in[j] : ec) + rnd, (es_in ? es_in[H + j] : ec) + rnd};
    /* z_P = (a + b) / 2, z_O = -i (a - b) / 2 */
    const double zr[2] = {0.5 * (ar + br), 0.5 * (ai - bi)};
    const double zi[2] = {0.5 * (ai + bi), -0.5 * (ar - br)};
    double P[2][2] = {{0.0, 0.0}, {0.0, 0.0}}, eas[2] = {0.0, 0.0};
    for (int s = 0; s < nsides; s++) {
        const size_t ix = (size_t)s * H + j;
        const double e = es[s];
        const double rb = fabs(zr[s]) + fabs(zi[s]) + e;
        double qr, qi, ne, nr;
        if (first) {
            qr = zr[s];
            qi = zi[s];
            ne = e;
            nr = rb * gu;
        } else {
            const double pr0 = pr[2 * ix], pi0 = pr[2 * ix + 1];
            ne = ra[ix] * e + rb * ea[ix] + ea[ix] * e;
            qr = pr0 * zr[s] - pi0 * zi[s];
            qi = pr0 * zi[s] + pi0 * zr[s];
            nr = ra[ix] * (rb * gu);
        }
        const double nea = ne + 4.0 * U * (fabs(qr) + fabs(qi));
        if (last) {
            P[s][0] = qr;
            P[s][1] = qi;
            eas[s] = nea;
        } else {
            pr[2 * ix] = qr;
            pr[2 * ix + 1] = qi;
            ea[ix] = nea;
            ra[ix] = nr;
        }
    }
    if (last) {
        const double Pr = P[0][0], Pi = P[0][1], Or = P[1][0], Oi = P[1][1];
        *se += (j == 0 || j == jm ? 1.0 : 2.0) * (eas[0] + eas[1]);
        if (es_out) {
            es_out[j] = j == jm ? eas[0] + eas[1] : eas[0];
            es_out[H + j] = j == jm ? eas[0] + eas[1] : eas[1];
        }
        /* C_{N-j} = conj(P) + i conj(O) */
        const double cr = Pr + Oi, ci = Or - Pi;
        if (j != jm) {
            const double dr = Pr - Oi, di = Pi + Or; /* C_j = P + i O */
            x[2 * j] = dr;
            x[2 * j + 1] = di;
            *sc += fabs(dr) + fabs(di);
        }
        x[2 * jm] = cr;
        x[2 * jm + 1] = ci;
        *sc += fabs(cr) + fabs(ci);
    }
}

/* A step of count k > 1 into the product of spectra (prod, with each entry's bound ra on its
 * magnitude and ea on its error): its transform `work` (forward rounding ec per entry) split
 * into the sides' Hermitian parts, raised to the k-th power with power_bound's bound. */
void dpzo__pld_spectra_stepk(const double complex *work, size_t N, int nsides, double ec,
                             uint64_t k, double complex *prod, double *ra, double *ea)
{
    const size_t H = N / 2 + 1;
    const double small_r2 = exp(-1380.0 / (double)k);
    /* frequencies j and N - j together: the sides' spectra are Hermitian */
    for (size_t j = 0; j < H; j++) {
        size_t jm = (N - j) & (N - 1);
        double complex a = work[j], b = conj(work[jm]);
        double e = ec + U * (fabs(creal(a)) + fabs(cimag(a)) + fabs(creal(b)) + fabs(cimag(b)));
        double complex z[2] = {0.5 * (a + b), -0.5 * I * (a - b)};
        for (int s = 0; s < nsides; s++) {
            double eb, rb;
            double complex zk = power_bound(z[s], e, k, small_r2, &eb, &rb);
            size_t ix = (size_t)s * H + j;
            double newe = ra[ix] * eb + rb * ea[ix] + ea[ix] * eb;
            prod[ix] *= zk;
            ea[ix] = newe + 4.0 * U * (fabs(creal(prod[ix])) + fabs(cimag(prod[ix])));
            ra[ix] *= rb * (1.0 + 4.0 * U);
        }
    }
}

/* The composed spectrum from the product of spectra: work = P + i O (O = 0 without the
 * optimistic side), the products' error bounds summed into *sum_e. */
void dpzo__pld_spectra_assemble(double complex *work, size_t N, int want_opt,
                                const double complex *prod, const double *ea, double *sum_e)
{
    const size_t H = N / 2 + 1;
    for (size_t j = 0; j < H; j++) {
        size_t jm = (N - j) & (N - 1);
        double complex P = prod[j], O = want_opt ? prod[H + j] : 0.0;
        work[j] = P + I * O;
        work[jm] = conj(P) + I * conj(O);
        double e = ea[j] + (want_opt ? ea[H + j] : 0.0);
        *sum_e += (j == 0 || j == jm ? 1.0 : 2.0) * e;
    }
}

/* The error bound on every entry of the inverse transform of `work` (length N, forward bound
 * eta), given the spectrum's summed error sum_e; sum_c: its l1 norm, or a negative value to
 * have it summed here. sum_e and sum_c add at most 2N nonnegative terms each: within
 * (2N + 2) u. */
double dpzo__pld_inverse_err(const double complex *work, size_t N, double eta, double sum_e,
                             double sum_c)
{
    if (sum_c < 0.0) {
        sum_c = 0.0;
        for (size_t j = 0; j < N; j++)
            sum_c += fabs(creal(work[j])) + fabs(cimag(work[j]));
    }
    return (sum_e + eta * sum_c) / (double)N * (1.0 + 2.0 * U * (2.0 * (double)N + 8.0));
}

/* The pairs j = j0 .. j0 + 4 m - 1 (1 <= j0, j0 + 4 m <= N/2: j != N - j, and the two
 * blocks of four pairs that an iteration reads and writes do not meet) four at a time,
 * in GCC vectors of four doubles: lane by lane the operations of step1_at, in its
 * order (ISO C mode: no FMA is formed), so the same values; only se and sc are summed
 * in another order (four partial sums), which their bound allows. Locals only: no
 * vector crosses a call. */
#define V4ABS(v) ((v4d)((v4l)(v) & (v4l){0x7fffffffffffffffLL, 0x7fffffffffffffffLL,              \
                                              0x7fffffffffffffffLL, 0x7fffffffffffffffLL}))
#define V4EVEN(a, b) __builtin_shufflevector((a), (b), 0, 2, 4, 6)
#define V4ODD(a, b) __builtin_shufflevector((a), (b), 1, 3, 5, 7)

DPZO_KERNEL_CLONES static void step1_block4(size_t j0, size_t m, const double *xi, double *x,
                                            size_t N,
                                            int nsides, double ec, const double *es_in,
                                            double sep, int first, int last,
                                            double *restrict pr, double *restrict ra,
                                            double *restrict ea, double *restrict es_out,
                                            double *se, double *sc)
{
    const size_t H = N / 2 + 1;
    const double gu = 1.0 + 4.0 * U, u4 = 4.0 * U;
    v4d vse = {0.0, 0.0, 0.0, 0.0}, vsc = vse;
    for (size_t it = 0; it < m; it++) {
        const size_t j = j0 + 4 * it, jb = N - j - 3; /* pairs j .. j+3 and N-j .. N-j-3 */
        v4d A0, A1, B0, B1;
        memcpy(&A0, xi + 2 * j, sizeof A0);
        memcpy(&A1, xi + 2 * j + 4, sizeof A1);
        memcpy(&B0, xi + 2 * jb, sizeof B0);
        memcpy(&B1, xi + 2 * jb + 4, sizeof B1);
        const v4d ar = V4EVEN(A0, A1), ai = V4ODD(A0, A1);
        /* lane l: pair N - j - l, stored in reverse order */
        const v4d br = __builtin_shufflevector(B0, B1, 6, 4, 2, 0);
        const v4d bi = -__builtin_shufflevector(B0, B1, 7, 5, 3, 1);
        const v4d rnd = sep * (V4ABS(ar) + V4ABS(ai) + V4ABS(br) + V4ABS(bi));
        const v4d zr[2] = {0.5 * (ar + br), 0.5 * (ai - bi)};
        const v4d zi[2] = {0.5 * (ai + bi), -0.5 * (ar - br)};
        const v4d zero = {0.0, 0.0, 0.0, 0.0};
        v4d Qr[2] = {zero, zero}, Qi[2] = {zero, zero}, Ea[2] = {zero, zero};
        for (int s = 0; s < nsides; s++) {
            const size_t ix = (size_t)s * H + j;
            v4d e;
            if (es_in)
                memcpy(&e, es_in + ix, sizeof e);
            else
                e = (v4d){ec, ec, ec, ec};
            e = e + rnd;
            const v4d rb = V4ABS(zr[s]) + V4ABS(zi[s]) + e;
            v4d qr, qi, ne, nr;
            if (first) {
                qr = zr[s];
                qi = zi[s];
                ne = e;
                nr = rb * gu;
            } else {
                v4d P0, P1, r, a;
                memcpy(&P0, pr + 2 * ix, sizeof P0);
                memcpy(&P1, pr + 2 * ix + 4, sizeof P1);
                memcpy(&r, ra + ix, sizeof r);
                memcpy(&a, ea + ix, sizeof a);
                const v4d p_r = V4EVEN(P0, P1), p_i = V4ODD(P0, P1);
                ne = r * e + rb * a + a * e;
                qr = p_r * zr[s] - p_i * zi[s];
                qi = p_r * zi[s] + p_i * zr[s];
                nr = r * (rb * gu);
            }
            const v4d nea = ne + u4 * (V4ABS(qr) + V4ABS(qi));
            if (last) {
                Qr[s] = qr;
                Qi[s] = qi;
                Ea[s] = nea;
            } else {
                const v4d P0 = __builtin_shufflevector(qr, qi, 0, 4, 1, 5);
                const v4d P1 = __builtin_shufflevector(qr, qi, 2, 6, 3, 7);
                memcpy(pr + 2 * ix, &P0, sizeof P0);
                memcpy(pr + 2 * ix + 4, &P1, sizeof P1);
                memcpy(ea + ix, &nea, sizeof nea);
                memcpy(ra + ix, &nr, sizeof nr);
            }
        }
        if (last) {
            const v4d Pr = Qr[0], Pi = Qi[0], Or = Qr[1], Oi = Qi[1], e1 = Ea[1];
            vse += 2.0 * (Ea[0] + e1);
            if (es_out) {
                memcpy(es_out + j, &Ea[0], sizeof Ea[0]);
                memcpy(es_out + H + j, &e1, sizeof e1);
            }
            const v4d cr = Pr + Oi, ci = Or - Pi; /* C_{N-j} */
            const v4d dr = Pr - Oi, di = Pi + Or; /* C_j */
            const v4d D0 = __builtin_shufflevector(dr, di, 0, 4, 1, 5);
            const v4d D1 = __builtin_shufflevector(dr, di, 2, 6, 3, 7);
            const v4d C0 = __builtin_shufflevector(cr, ci, 3, 7, 2, 6);
            const v4d C1 = __builtin_shufflevector(cr, ci, 1, 5, 0, 4);
            memcpy(x + 2 * j, &D0, sizeof D0);
            memcpy(x + 2 * j + 4, &D1, sizeof D1);
            memcpy(x + 2 * jb, &C0, sizeof C0);
            memcpy(x + 2 * jb + 4, &C1, sizeof C1);
            vsc += V4ABS(dr) + V4ABS(di) + V4ABS(cr) + V4ABS(ci);
        }
    }
    *se += (vse[0] + vse[1]) + (vse[2] + vse[3]);
    *sc += (vsc[0] + vsc[1]) + (vsc[2] + vsc[3]);
}

void dpzo__pld_spectra_step1(const double complex *in, double complex *work, size_t N,
                             int nsides, double ec, const double *es_in, int first, int last,
                             double complex *prod, double *ra, double *ea, double *es_out,
                             double *sum_e, double *sum_c)
{
    /* es_in: work holds a spectrum composed by dpzo__pld_spectra_step1 (last, es_out) at
     * this length instead of a forward transform: its separated z_P, z_O are within
     * es_in[j], es_in[H + j] (that pass's ea of each side; ea_P + ea_O for both at j = 0
     * and N/2, where C_j = C_{N-j} = conj(P) + i conj(O) mixes the sides' imaginary
     * parts, which are errors there: the exact P and O are real) plus the rounding of
     * forming C = P + i O there (u |C| a component) and of separating it here:
     * 3u (|a| + |b|) covers both */
    const double sep = es_in ? 3.0 * U : U;
    /* arrays of two doubles (C17 6.2.5) */
    const double *xi = (const double *)in;
    double *x = (double *)work, *pr = (double *)prod;
    const size_t H = N / 2 + 1, m = N >= 8 ? (N / 2 - 1) / 4 : 0;
    double se = 0.0, sc = 0.0;
    step1_at(0, xi, x, N, nsides, ec, es_in, sep, first, last, pr, ra, ea, es_out, &se, &sc);
    step1_block4(1, m, xi, x, N, nsides, ec, es_in, sep, first, last, pr, ra, ea, es_out, &se,
                 &sc);
    for (size_t j = 1 + 4 * m; j < H; j++)
        step1_at(j, xi, x, N, nsides, ec, es_in, sep, first, last, pr, ra, ea, es_out, &se, &sc);
    if (last) {
        *sum_e = se;
        *sum_c = sc;
    }
}

/* The static functions above, for pld_compose.c and pld_tree.c (pld_spectra.h). */
double dpzo__pld_chernoff_width(const dpzo__pld_term *terms, const dpzo__pld_term_stats *st,
                                size_t n, int side, int sg, double log_tau)
{
    return chernoff_width(terms, st, n, side, sg, log_tau);
}

double dpzo__pld_chernoff_tail(const dpzo__pld_term *terms, const dpzo__pld_term_stats *st,
                               size_t n, int side, int sg, double w)
{
    return chernoff_tail(terms, st, n, side, sg, w);
}

double complex dpzo__pld_power_bound(double complex z, double e, uint64_t k, double small_r2,
                                     double *eb, double *rb)
{
    return power_bound(z, e, k, small_r2, eb, rb);
}

size_t dpzo__pld_pow2_at_least(double x) { return pow2_at_least(x); }

uint64_t dpzo__pld_mulmod(uint64_t a, uint64_t b, uint64_t N)
{
    uint64_t r = 0;
    a %= N;
    while (b) {
        if (b & 1)
            r = (r + a) % N;
        a = (a + a) % N;
        b >>= 1;
    }
    return r;
}
