/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_fft.c: the power-of-two FFT (accountant/pld/fft.c) against a naive DFT in long
 * double with exactly computed twiddles, its proven error bound (which must hold and
 * must not be absurdly loose), round trips, known transforms and Parseval. */
#include <complex.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "fft.h"

static const long double two_pi = 6.283185307179586476925286766559005768L;
static const double u = 0x1p-53;

/* splitmix64: reproducible inputs with full 53-bit mantissas in [-1, 1). */
static uint64_t rng_state;

static double rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}

static double complex *random_vector(size_t n, uint64_t seed)
{
    double complex *x = malloc(n * sizeof *x);
    assert_non_null(x);
    rng_state = seed;
    for (size_t i = 0; i < n; i++) {
        double re = rnd(), im = rnd();
        x[i] = re + im * I; /* exact for finite re, im */
    }
    return x;
}

/* exp(sign 2 pi i k / n) in long double (k reduced mod n), from sinl / cosl of an angle
 * in [0, pi/4] and exact symmetries: with 4k = qn + r, the angle is (pi/2)(q + r/n). */
static long double complex unit_root(size_t k, size_t n, int sign)
{
    k %= n;
    size_t q = (4 * k) / n, r = (4 * k) % n;
    long double c, s;
    if (2 * r <= n) {
        long double t = (two_pi / 4) * (long double)r / (long double)n;
        c = cosl(t);
        s = sinl(t);
    } else {
        long double t = (two_pi / 4) * (long double)(n - r) / (long double)n;
        c = sinl(t);
        s = cosl(t);
    }
    for (; q > 0; q--) { /* times i */
        long double tmp = c;
        c = -s;
        s = tmp;
    }
    return c + (long double)sign * s * I;
}

/* Naive DFTs in long double, both signs in one pass (no scaling):
 * yf_j = sum_m x_m exp(-2 pi i j m / n), yi_j = sum_m x_m exp(+2 pi i j m / n). */
static void naive_dft(const double complex *x, long double complex *yf, long double complex *yi,
                      size_t n)
{
    long double *wr = malloc(4 * n * sizeof *wr);
    assert_non_null(wr);
    long double *wi = wr + n, *xr = wr + 2 * n, *xi = wr + 3 * n;
    for (size_t k = 0; k < n; k++) {
        long double complex w = unit_root(k, n, -1);
        wr[k] = creall(w);
        wi[k] = cimagl(w);
        xr[k] = creal(x[k]);
        xi[k] = cimag(x[k]);
    }
    for (size_t j = 0; j < n; j++) {
        long double a = 0, b = 0, c = 0, d = 0; /* sums of xr wr, xi wi, xr wi, xi wr */
        for (size_t m = 0, k = 0; m < n; m++, k = (k + j) & (n - 1)) {
            a += xr[m] * wr[k];
            b += xi[m] * wi[k];
            c += xr[m] * wi[k];
            d += xi[m] * wr[k];
        }
        yf[j] = (a - b) + (c + d) * I;
        yi[j] = (a + b) + (d - c) * I;
    }
    free(wr);
}

/* ||scale * got - want||_2 and ||want||_2. */
static void err_norms(const double complex *got, const long double complex *want, size_t n,
                      double scale, double *err, double *norm)
{
    long double e = 0, s = 0;
    for (size_t j = 0; j < n; j++) {
        long double dr = (long double)scale * creal(got[j]) - creall(want[j]);
        long double di = (long double)scale * cimag(got[j]) - cimagl(want[j]);
        e += dr * dr + di * di;
        s += creall(want[j]) * creall(want[j]) + cimagl(want[j]) * cimagl(want[j]);
    }
    *err = (double)sqrtl(e);
    *norm = (double)sqrtl(s);
}

/* Forward and (unnormalised) inverse against the naive DFT, n = 2 .. 4096:
 * ||err|| <= eta(n) ||y||, and eta(n) within a factor 1e3 of the observed error. */
static void test_naive_dft(void **state)
{
    (void)state;
    double worst_ratio = 0.0;
    for (unsigned l = 1; l <= 12; l++) {
        size_t n = (size_t)1 << l;
        dpzo__fft_plan *p = dpzo__fft_plan_create(n);
        assert_non_null(p);
        double eta = dpzo__fft_error_bound(n);
        assert_true(isfinite(eta) && eta > 0.0 && eta < 1e-13);
        long double complex *y = malloc(2 * n * sizeof *y);
        assert_non_null(y);
        double complex *x = random_vector(n, 1000 + l), *xi = malloc(n * sizeof *xi);
        assert_non_null(xi);
        memcpy(xi, x, n * sizeof *xi);
        naive_dft(x, y, y + n, n);
        dpzo__fft_forward(p, x);
        dpzo__fft_inverse(p, xi);
        for (int dir = 0; dir < 2; dir++) {
            double err, norm;
            if (dir == 0)
                err_norms(x, y, n, 1.0, &err, &norm);
            else
                err_norms(xi, y + n, n, (double)n, &err, &norm); /* the 1/n is exact */
            double ratio = eta * norm / err;
            printf("  %s n = %5zu: ||err||/||y|| = %.3g, eta(n) = %.3g, eta/actual = %.1f\n",
                   dir == 0 ? "forward" : "inverse", n, err / norm, eta, ratio);
            if (!(err <= eta * norm))
                fail_msg("n = %zu dir %d: error %.3g exceeds the bound %.3g", n, dir,
                         err / norm, eta);
            /* Not absurdly loose (n = 2, 4 can be nearly exact; skip them). */
            if (n >= 8 && !(ratio <= 1e3))
                fail_msg("n = %zu dir %d: bound %.3g is %.3g times the error", n, dir, eta,
                         ratio);
            if (n >= 8 && ratio > worst_ratio)
                worst_ratio = ratio;
        }
        free(x);
        free(xi);
        free(y);
        dpzo__fft_plan_free(p);
    }
    printf("  largest eta/actual (n >= 8): %.1f\n", worst_ratio);
}

/* The same bound holds componentwise, |y'_j - y_j| <= eta sum |x_m|: spot checks of a
 * few frequencies at large n against O(n) long double sums. */
static void test_large_spot(void **state)
{
    (void)state;
    const unsigned sizes[] = {18, 19};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = (size_t)1 << sizes[si];
        dpzo__fft_plan *p = dpzo__fft_plan_create(n);
        assert_non_null(p);
        double complex *x = random_vector(n, 77 + sizes[si]);
        double complex *y = malloc(n * sizeof *y);
        long double complex *w = malloc(n * sizeof *w);
        assert_non_null(y);
        assert_non_null(w);
        for (size_t k = 0; k < n; k++)
            w[k] = unit_root(k, n, -1);
        memcpy(y, x, n * sizeof *y);
        dpzo__fft_forward(p, y);
        long double l1 = 0;
        for (size_t m = 0; m < n; m++)
            l1 += cabs(x[m]);
        double eta = dpzo__fft_error_bound(n), worst = 0.0;
        const size_t js[] = {0, 1, 2, 3, n / 2, n / 2 + 1, n - 1, 12345, n / 3, 5 * n / 7};
        for (size_t t = 0; t < sizeof js / sizeof *js; t++) {
            size_t j = js[t];
            long double re = 0, im = 0;
            for (size_t m = 0, k = 0; m < n; m++, k = (k + j) & (n - 1)) {
                re += creal(x[m]) * creall(w[k]) - cimag(x[m]) * cimagl(w[k]);
                im += creal(x[m]) * cimagl(w[k]) + cimag(x[m]) * creall(w[k]);
            }
            double e = (double)hypotl(creal(y[j]) - re, cimag(y[j]) - im);
            if (!(e <= eta * (double)l1))
                fail_msg("n = %zu, j = %zu: |err| = %.3g > eta * sum|x| = %.3g", n, j, e,
                         eta * (double)l1);
            worst = fmax(worst, e / (double)l1);
        }
        printf("  n = 2^%u: max |err_j| / sum|x| = %.3g, eta = %.3g\n", sizes[si], worst, eta);
        free(w);
        free(x);
        free(y);
        dpzo__fft_plan_free(p);
    }
}

/* inverse(forward(x)) = x up to eta (2 + eta) ||x||, both parities of log2 n. */
static void test_round_trip(void **state)
{
    (void)state;
    for (unsigned l = 1; l <= 20; l++) {
        if (l > 12 && l != 15 && l != 19 && l != 20)
            continue;
        size_t n = (size_t)1 << l;
        dpzo__fft_plan *p = dpzo__fft_plan_create(n);
        assert_non_null(p);
        double complex *x = random_vector(n, 5 + l);
        double complex *y = malloc(n * sizeof *y);
        assert_non_null(y);
        memcpy(y, x, n * sizeof *y);
        dpzo__fft_forward(p, y);
        dpzo__fft_inverse(p, y);
        long double e = 0, s = 0;
        for (size_t i = 0; i < n; i++) {
            long double dr = creal(y[i]) - creal(x[i]), di = cimag(y[i]) - cimag(x[i]);
            e += dr * dr + di * di;
            s += creal(x[i]) * creal(x[i]) + cimag(x[i]) * cimag(x[i]);
        }
        double eta = dpzo__fft_error_bound(n), rel = (double)sqrtl(e / s);
        if (!(rel <= eta * (2 + eta)))
            fail_msg("n = 2^%u: round trip error %.3g > %.3g", l, rel, eta * (2 + eta));
        if (l >= 15)
            printf("  round trip n = 2^%u: ||x'' - x|| / ||x|| = %.3g (bound %.3g)\n", l, rel,
                   eta * (2 + eta));
        free(x);
        free(y);
        dpzo__fft_plan_free(p);
    }
}

/* delta -> ones; shifted delta -> a pure exponential; constant -> n delta; a pure
 * exponential -> a single spike (and back). Tolerances from the componentwise bound. */
static void test_known_transforms(void **state)
{
    (void)state;
    const unsigned sizes[] = {1, 2, 3, 4, 5, 8, 11, 16, 17};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = (size_t)1 << sizes[si];
        dpzo__fft_plan *p = dpzo__fft_plan_create(n);
        assert_non_null(p);
        double eta = dpzo__fft_error_bound(n);
        double complex *x = malloc(n * sizeof *x);
        assert_non_null(x);

        /* delta at 0 -> all ones (the DIF computes it exactly, the bound allows eta) */
        memset(x, 0, n * sizeof *x);
        x[0] = 1.0;
        dpzo__fft_forward(p, x);
        for (size_t j = 0; j < n; j++)
            if (!(cabs(x[j] - 1.0) <= eta))
                fail_msg("n = %zu: FFT(delta)[%zu] = %g%+gi", n, j, creal(x[j]), cimag(x[j]));
        /* and back: inverse(ones) = delta */
        dpzo__fft_inverse(p, x);
        for (size_t j = 0; j < n; j++)
            if (!(cabs(x[j] - (j == 0 ? 1.0 : 0.0)) <= eta))
                fail_msg("n = %zu: inverse(ones)[%zu] = %g%+gi", n, j, creal(x[j]),
                         cimag(x[j]));

        /* delta at m0 -> exp(-2 pi i j m0 / n) */
        size_t m0 = (n / 3) | 1;
        if (m0 >= n)
            m0 = n - 1;
        memset(x, 0, n * sizeof *x);
        x[m0] = 1.0;
        dpzo__fft_forward(p, x);
        for (size_t j = 0; j < n; j++) {
            long double complex w = unit_root((size_t)(((uint64_t)j * m0) % n), n, -1);
            if (!(hypotl(creal(x[j]) - creall(w), cimag(x[j]) - cimagl(w)) <= eta))
                fail_msg("n = %zu: FFT(delta at %zu)[%zu] = %g%+gi", n, m0, j, creal(x[j]),
                         cimag(x[j]));
        }

        /* constant c -> n c delta */
        const double complex c = 0.75 - 1.25 * I;
        for (size_t j = 0; j < n; j++)
            x[j] = c;
        dpzo__fft_forward(p, x);
        double tol = eta * (double)n * cabs(c);
        for (size_t j = 0; j < n; j++)
            if (!(cabs(x[j] - (j == 0 ? (double)n * c : 0.0)) <= tol))
                fail_msg("n = %zu: FFT(const)[%zu] = %g%+gi", n, j, creal(x[j]), cimag(x[j]));

        /* exp(+2 pi i k0 m / n) -> n delta_k0; the input is rounded (|error| <= u each),
         * which moves the exact DFT by at most n u per entry. */
        size_t k0 = (5 * n / 7) % n;
        for (size_t m = 0; m < n; m++) {
            long double complex w = unit_root((size_t)(((uint64_t)k0 * m) % n), n, +1);
            x[m] = (double)creall(w) + (double)cimagl(w) * I;
        }
        dpzo__fft_forward(p, x);
        tol = (double)n * (eta * (1 + u) + u);
        for (size_t j = 0; j < n; j++)
            if (!(cabs(x[j] - (j == k0 ? (double)n : 0.0)) <= tol))
                fail_msg("n = %zu: FFT(exp k0 = %zu)[%zu] = %g%+gi (tol %g)", n, k0, j,
                         creal(x[j]), cimag(x[j]), tol);
        /* spike -> exponential by the inverse */
        memset(x, 0, n * sizeof *x);
        x[k0] = 1.0;
        dpzo__fft_inverse(p, x);
        for (size_t m = 0; m < n; m++) {
            long double complex w = unit_root((size_t)(((uint64_t)k0 * m) % n), n, +1);
            if (!(hypotl((long double)n * creal(x[m]) - creall(w),
                         (long double)n * cimag(x[m]) - cimagl(w)) <= eta))
                fail_msg("n = %zu: inverse(spike %zu)[%zu] = %g%+gi", n, k0, m, creal(x[m]),
                         cimag(x[m]));
        }
        free(x);
        dpzo__fft_plan_free(p);
    }
}

/* ||X||^2 = n ||x||^2, within (1 +- eta)^2. */
static void test_parseval(void **state)
{
    (void)state;
    const unsigned sizes[] = {3, 10, 16, 18};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = (size_t)1 << sizes[si];
        dpzo__fft_plan *p = dpzo__fft_plan_create(n);
        assert_non_null(p);
        double complex *x = random_vector(n, 31 + sizes[si]);
        long double sx = 0, sy = 0;
        for (size_t i = 0; i < n; i++)
            sx += (long double)creal(x[i]) * creal(x[i]) + (long double)cimag(x[i]) * cimag(x[i]);
        dpzo__fft_forward(p, x);
        for (size_t i = 0; i < n; i++)
            sy += (long double)creal(x[i]) * creal(x[i]) + (long double)cimag(x[i]) * cimag(x[i]);
        double eta = dpzo__fft_error_bound(n);
        double r = (double)sqrtl(sy / ((long double)n * sx));
        if (!(fabs(r - 1.0) <= eta))
            fail_msg("n = 2^%u: ||X|| / (sqrt(n) ||x||) = %.17g", sizes[si], r);
        /* a real spectrum check too: the energy is that of the input, to ~1e-15 */
        assert_true(fabs(r - 1.0) < 1e-13);
        free(x);
        dpzo__fft_plan_free(p);
    }
}

/* Bad sizes, plan_bytes, and the bound's shape. */
static void test_api(void **state)
{
    (void)state;
    const size_t bad[] = {0, 1, 3, 6, 12, 1000, ((size_t)1 << 20) + 1};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_null(dpzo__fft_plan_create(bad[i]));
        assert_int_equal(dpzo__fft_plan_bytes(bad[i]), 0);
        assert_true(isinf(dpzo__fft_error_bound(bad[i])));
    }
    dpzo__fft_plan_free(NULL);
    const double u4 = 4 * u / (1 - 4 * u);
    double prev = 0.0;
    for (unsigned l = 1; l <= 30; l++) {
        size_t n = (size_t)1 << l;
        size_t b = dpzo__fft_plan_bytes(n);
        /* twiddles: at most 16 n bytes (n complex numbers), plus a small header */
        assert_true(b > 0 && b <= 16 * n + 4 * n + 4096);
        double eta = dpzo__fft_error_bound(n);
        /* Higham's L eta0 / (1 - L eta0) with mu = 2u is a lower bound on what is
         * returned (which doubles it), and the result grows with n */
        double eta0 = 2 * u + u4 * (M_SQRT2 + 2 * u);
        double h = l * eta0 / (1 - l * eta0);
        assert_true(eta >= h && eta <= 4.5 * h);
        assert_true(eta > prev);
        prev = eta;
    }
    /* eta(2^23) is about 3.9e-14 (4.9e-14 where long double is double: mu = 4u) */
    assert_true(dpzo__fft_error_bound((size_t)1 << 23) < 5e-14);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api),
        cmocka_unit_test(test_naive_dft),
        cmocka_unit_test(test_large_spot),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_known_transforms),
        cmocka_unit_test(test_parseval),
    };
    return cmocka_run_group_tests_name("fft", tests, NULL, NULL);
}
