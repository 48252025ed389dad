#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Independent reference values for tests/test_zo_dir.c (kernels/cpu/philox.c, zo_dir.c).

Usage (from the repository root):
    /usr/bin/python3 tests/ref/gen_zo_dir_values.py
        writes tests/ref/zo_dir_values.h (next to this script);
    /usr/bin/python3 tests/ref/gen_zo_dir_values.py OUT.h   ('-' for stdout)

Requires only mpmath (Debian python3-mpmath 1.2.1). Deterministic, a few seconds. No dpzo
code is used; diagnostics go to stderr and the script exits non-zero without writing if a
self-check fails.

What is computed, from the defining formulas at mp.dps = 40:
  * sin and cos of the angle 2 pi b / 2^32 (mpmath sinpi / cospi of b / 2^31, exact at
    the quarter turns) for chosen 32-bit words b (next to every multiple of an eighth
    turn, where the quadrant reduction switches, and random ones);
  * the Box-Muller pair of words (a, b):  r = sqrt(-2 ln((a + 1) / 2^32)),
    z0 = r cos(2 pi b / 2^32), z1 = r sin(2 pi b / 2^32)  (the exact real numbers, which
    dpzo_normal_pair approximates with IEEE double operations);
  * direction elements u_j (GAUSSIAN: the Box-Muller value of the stream's words;
    RADEMACHER: the sign) for chosen (seed, step, query, j), with Philox4x32-10 written
    here in Python from the SC'11 paper's definition and the counter packing of
    kernels/cpu/philox.c section 2:
        key = (seed mod 2^32, seed >> 32),
        counter = ((j >> 2) mod 2^32, (j >> 34) mod 2^32, step, query)
        (one block per four elements 4m .. 4m + 3),
        words (w0, w1) -> Box-Muller (z0, z1), words (w2, w3) -> Box-Muller (z2, z3),
        element j takes z_(j mod 4);
        Rademacher: -1 when bit 31 of w_(j mod 4) is set.
    The Python Philox is checked first against Random123's published KAT vectors.
Values are written as the doubles nearest to the 40-digit results (repr round-trips);
comments carry 25 digits.

Besides these real values, the script implements the BIT-EXACT specification of
kernels/cpu/philox.c (sections 2-5: log, sin/cos of a turn, Box-Muller, the SPHERE scale
in 4096-element blocks) operation by operation in Python floats, which are IEEE binary64
with one round-to-nearest per +, -, *, / and math.sqrt, with every constant derived here
from its stated definition. It checks that implementation against the 40-digit values
(within 3 ulps) and writes its exact results (*_exact, hexadecimal literals) and an FNV-1a
hash of 200000 pairs, which the C code (and later the CUDA port) must match bit for bit.
"""
import math
import random
import struct
import sys
from fractions import Fraction

import mpmath as mp

mp.mp.dps = 40
M32 = 0xFFFFFFFF


def philox4x32_10(ctr, key):
    x0, x1, x2, x3 = ctr
    k0, k1 = key
    for rnd in range(10):
        if rnd:
            k0 = (k0 + 0x9E3779B9) & M32
            k1 = (k1 + 0xBB67AE85) & M32
        p0 = 0xD2511F53 * x0
        p1 = 0xCD9E8D57 * x2
        x0, x1, x2, x3 = ((p1 >> 32) ^ x1 ^ k0, p1 & M32, (p0 >> 32) ^ x3 ^ k1, p0 & M32)
    return (x0, x1, x2, x3)


KAT = [  # Random123 kat_vectors, philox4x32 10 rounds
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((M32, M32, M32, M32), (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def sincos_turn(b):
    """sin and cos of 2 pi b / 2^32, exact at the multiples of a quarter turn."""
    x = mp.mpf(b) / mp.mpf(2) ** 31
    return mp.sinpi(x), mp.cospi(x)


def normal_pair(a, b):
    u1 = mp.mpf(a + 1) / mp.mpf(2) ** 32
    r = mp.sqrt(-2 * mp.log(u1))
    s, c = sincos_turn(b)
    return r * c, r * s


def words(seed, step, query, j):
    ctr = ((j >> 2) & M32, (j >> 34) & M32, step, query)
    return philox4x32_10(ctr, (seed & M32, seed >> 32))


def element(kind, seed, step, query, j):
    w = words(seed, step, query, j)
    if kind == "rademacher":
        return mp.mpf(-1 if w[j & 3] >> 31 else 1)
    h = j & 2  # words (w0, w1) for j mod 4 in {0, 1}, (w2, w3) for {2, 3}
    return normal_pair(w[h], w[h + 1])[j & 1]


# ---- the bit-exact specification (kernels/cpu/philox.c sections 3-5) in Python floats ----
# Python's float +, -, *, / and math.sqrt are IEEE-754 binary64 with round-to-nearest-even
# and one rounding per operation, so this is an independent implementation of the
# documented operation sequence; the constants are derived here from their definitions.

def _trunc_bits(x, bits):
    """x > 0 truncated to `bits` significant bits (an exact double)."""
    e = int(mp.floor(mp.log(x, 2)))
    q = mp.floor(x / mp.mpf(2) ** (e - bits + 1))
    return float(q * mp.mpf(2) ** (e - bits + 1))


SQRT2 = float(mp.sqrt(2))
LN2_HI = _trunc_bits(mp.log(2), 33)
LN2_LO = float(mp.log(2) - LN2_HI)
LOGC = [float(Fraction(2, 2 * n + 1)) for n in range(1, 11)]
SINC = [float(Fraction((-1) ** k, math.factorial(2 * k + 1))) for k in range(1, 9)]
COSC = [float(Fraction((-1) ** k, math.factorial(2 * k))) for k in range(2, 9)]
PH = _trunc_bits(2 * mp.pi / mp.mpf(2) ** 32, 23)
PL = float(2 * mp.pi / mp.mpf(2) ** 32 - PH)


def _horner(z, coefs):
    """c0 + z * (c1 + z * (... + z * cn))"""
    acc = coefs[-1]
    for c in reversed(coefs[:-1]):
        acc = c + z * acc
    return acc


def spec_log(x):
    """section 4 for a positive normal double x"""
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    k = (bits >> 52) - 1023
    m = struct.unpack("<d", struct.pack("<Q", (bits & ((1 << 52) - 1)) | (1023 << 52)))[0]
    if m > SQRT2:
        m = m * 0.5
        k += 1
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    hfsq = 0.5 * f * f
    R = z * _horner(z, LOGC)
    dk = float(k)
    return dk * LN2_HI - ((hfsq - (s * (hfsq + R) + dk * LN2_LO)) - f)


def spec_sincos_turn32(b):
    """section 5"""
    q = ((b + (1 << 29)) & M32) >> 30
    rr = (b - (q << 30)) & M32
    r = rr - (1 << 32) if rr >> 31 else rr
    t = float(r) * PH + float(r) * PL
    z = t * t
    st = t + (t * z) * _horner(z, SINC)
    hz = 0.5 * z
    w = 1.0 - hz
    ct = w + (((1.0 - w) - hz) + (z * z) * _horner(z, COSC))
    return [(st, ct), (ct, -st), (-st, -ct), (-ct, st)][q]


def spec_normal_pair(a, b):
    """section 3"""
    u1 = (float(a) + 1.0) * 2.0 ** -32
    r = math.sqrt(-2.0 * spec_log(u1))
    s, c = spec_sincos_turn32(b)
    return r * c, r * s


def spec_element(seed, step, query, j):
    w = words(seed, step, query, j)
    h = j & 2
    return spec_normal_pair(w[h], w[h + 1])[j & 1]


def spec_sphere_scale(seed, step, query, dim, radius):
    """section 2: blocks of 4096, each left to right, block sums left to right"""
    total = 0.0
    for j0 in range(0, dim, 4096):
        block = 0.0
        for j in range(j0, min(j0 + 4096, dim)):
            z = spec_element(seed, step, query, j)
            block += z * z
        total += block
    return radius / math.sqrt(total)


def ulps(x, y):
    def o(v):
        i = struct.unpack("<q", struct.pack("<d", v))[0]
        return -(i & 0x7FFFFFFFFFFFFFFF) if i < 0 else i
    return abs(o(x) - o(y))


# FNV-1a (64 bit) over the little-endian bytes of z0, z1 of dpzo_normal_pair for the words
# of an LCG: s <- s * 6364136223846793005 + 1442695040888963407 (mod 2^64) from s = 1,
# a = s >> 32, b = s mod 2^32 (the state after each step).
HASH_PAIRS = 200000


def spec_pair_hash(n):
    h = 0xCBF29CE484222325
    s = 1
    for _ in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        z0, z1 = spec_normal_pair(s >> 32, s & M32)
        for byte in struct.pack("<dd", z0, z1):
            h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def d(x):
    """The nearest double, as a C literal that round-trips."""
    v = float(x)  # mpmath rounds to nearest
    if v == 0.0:
        return "0.0"
    return repr(v)


def hexd(x):
    """An exact C hexadecimal literal of the double x (sign of zero kept)."""
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return x.hex()


def main():
    for ctr, key, want in KAT:
        got = philox4x32_10(ctr, key)
        if got != want:
            sys.exit("self-check failed: philox %s %s -> %s, want %s" % (ctr, key, got, want))
    print("Philox KAT vectors reproduced", file=sys.stderr)

    rng = random.Random(20240917)
    # sin/cos of the turn: every eighth-turn boundary +-1, +-0 and random words
    turn_b = []
    for k in range(8):
        base = k << 29
        for off in (-1, 0, 1):
            turn_b.append((base + off) & M32)
    turn_b += [1, M32, 0x7FFFFFFF, 0x80000001, 12345, 0x0FFFFFFF]
    turn_b += [rng.getrandbits(32) for _ in range(30)]
    turns = [(b,) + sincos_turn(b) for b in turn_b]

    # Box-Muller pairs: extremes of a (u1 = 2^-32, ..., u1 = 1) and random words
    pair_ab = [(0, 0), (0, 0x40000000), (0, 0x20000000), (M32, 0x12345678), (M32 - 1, 0x9ABCDEF0),
               (0x7FFFFFFF, 0x80000000), (0x7FFFFFFF, 0x80000001), (1, 0xC0000000),
               (0xFFFF0000, 0x60000001), (0x00000FFF, 0xDFFFFFFF)]
    pair_ab += [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(40)]
    pairs = [(a, b) + normal_pair(a, b) + spec_normal_pair(a, b) for a, b in pair_ab]

    # direction elements
    elems = []
    specs = [(0, 0, 0), (42, 7, 3), (0x0123456789ABCDEF, 0xFFFFFFFF, 0xFFFFFFFF),
             (0xFFFFFFFFFFFFFFFF, 1, 0)]
    # every position in two blocks, both sides of the high counter word (j = 2^34) and the
    # last valid elements (dim 2^64 - 1: the last block holds 2^64 - 4 .. 2^64 - 2)
    js = [0, 1, 2, 3, 4, 5, 6, 7, 4095, 4096, 100001, (1 << 34) - 1, 1 << 34, (1 << 34) + 1,
          (1 << 34) + 2, (1 << 40) + 12345, (1 << 64) - 4, (1 << 64) - 3, (1 << 64) - 2]
    for kind in ("gaussian", "rademacher"):
        for seed, step, query in specs:
            for j in js:
                v = element(kind, seed, step, query, j)
                x = spec_element(seed, step, query, j) if kind == "gaussian" else float(v)
                elems.append((kind, seed, step, query, j, v, x))

    # SPHERE scales (dims across the 4096-element blocks)
    spheres = []
    # dims with every residue mod 4 (a partial last Philox block) and across 4096-blocks
    for seed, step, query, dim, radius in [(7, 8, 9, 1, 3.5), (7, 8, 9, 6, 3.5),
                                           (7, 8, 9, 4097, 3.5), (11, 3, 2, 4099, 1.0),
                                           (2024, 17, 4, 10001, math.sqrt(10001.0)),
                                           (5, 0, 1, 8192, 0.25)]:
        spheres.append((seed, step, query, dim, radius,
                        spec_sphere_scale(seed, step, query, dim, radius)))

    pair_hash = spec_pair_hash(HASH_PAIRS)

    # self-checks: identities the 40-digit values must satisfy, and the bit-exact
    # specification within 3 ulps of them
    for b, s, c in turns:
        if abs(s * s + c * c - 1) > mp.mpf(10) ** -35:
            sys.exit("self-check failed: sin^2 + cos^2 at b = %d" % b)
        ss, cc = spec_sincos_turn32(b)
        if ulps(ss, float(s)) > 2 or ulps(cc, float(c)) > 2:
            sys.exit("self-check failed: spec sincos at b = %d" % b)
    worst = 0
    for a, b, z0, z1, x0, x1 in pairs:
        r2 = -2 * mp.log(mp.mpf(a + 1) / mp.mpf(2) ** 32)
        if abs(z0 * z0 + z1 * z1 - r2) > mp.mpf(10) ** -34:
            sys.exit("self-check failed: z0^2 + z1^2 at (%d, %d)" % (a, b))
        worst = max(worst, ulps(x0, float(z0)), ulps(x1, float(z1)))
    s = 1
    for i in range(2000):  # a sample of the hashed pairs
        s = (s * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        if i % 10 == 0:
            a, b = s >> 32, s & M32
            x0, x1 = spec_normal_pair(a, b)
            z0, z1 = normal_pair(a, b)
            worst = max(worst, ulps(x0, float(z0)), ulps(x1, float(z1)))
    for kind, seed, step, query, j, v, x in elems:
        worst = max(worst, ulps(x, float(v)))
    if worst > 3:
        sys.exit("self-check failed: the specification is %d ulps from mpmath" % worst)
    for k in range(1, 200000):
        x = (k * 21475.0 + 1.0) * 2.0 ** -32
        if ulps(spec_log(x), float(mp.log(x))) > 1:
            sys.exit("self-check failed: spec log at %r" % x)
    for seed, step, query, dim, radius, scale in spheres:
        norm2 = mp.fsum(mp.mpf(spec_element(seed, step, query, j)) ** 2 for j in range(dim))
        if abs(radius / mp.sqrt(norm2) / scale - 1) > 1e-14:
            sys.exit("self-check failed: sphere scale (dim %d)" % dim)
    print("self-checks passed: %d turns, %d pairs (spec within %d ulps), %d elements, "
          "%d sphere scales, pair hash %016x" % (len(turns), len(pairs), worst, len(elems),
                                                 len(spheres), pair_hash), file=sys.stderr)

    out = []
    w = out.append
    w("/* Generated file - do not edit.")
    w(" *")
    w(" * Regenerate (from the repository root):")
    w(" *     /usr/bin/python3 tests/ref/gen_zo_dir_values.py")
    w(" * (see its docstring). mpmath %s, dps 40. Self-checks passed: the Python Philox" % mp.__version__)
    w(" * reproduces Random123's KAT vectors; sin^2 + cos^2 = 1 and z0^2 + z1^2 = -2 ln u1;")
    w(" * the Python float implementation of the bit-exact specification is within %d ulps" % worst)
    w(" * of the 40-digit values. Real values are the doubles nearest to the 40-digit results")
    w(" * (comments: 25 digits); *_exact fields are what the specification must produce. */")
    w("#ifndef DPZO_ZO_DIR_VALUES_H")
    w("#define DPZO_ZO_DIR_VALUES_H")
    w("")
    w("#include <stdint.h>")
    w("")
    w("/* sin and cos of 2 pi b / 2^32 */")
    w("typedef struct {")
    w("    uint32_t b;")
    w("    double sin, cos;")
    w("} dpzo_turn_ref;")
    w("")
    w("static const dpzo_turn_ref DPZO_TURN_REF[] = {")
    for b, s, c in turns:
        w("    {0x%08xu, %s, %s}, /* %s %s */" % (b, d(s), d(c), mp.nstr(s, 25), mp.nstr(c, 25)))
    w("};")
    w("")
    w("/* Box-Muller: r = sqrt(-2 ln((a + 1) / 2^32)), z0 = r cos(2 pi b / 2^32), z1 = r sin(...);")
    w(" * z0_exact, z1_exact: dpzo_normal_pair's specified result */")
    w("typedef struct {")
    w("    uint32_t a, b;")
    w("    double z0, z1, z0_exact, z1_exact;")
    w("} dpzo_pair_ref;")
    w("")
    w("static const dpzo_pair_ref DPZO_PAIR_REF[] = {")
    for a, b, z0, z1, x0, x1 in pairs:
        w("    {0x%08xu, 0x%08xu, %s, %s, %s, %s}, /* %s %s */" %
          (a, b, d(z0), d(z1), hexd(x0), hexd(x1), mp.nstr(z0, 25), mp.nstr(z1, 25)))
    w("};")
    w("")
    w("/* FNV-1a 64 over the little-endian bytes of (z0, z1) = dpzo_normal_pair(a, b) for")
    w(" * DPZO_PAIR_HASH_N pairs: s <- s * 6364136223846793005 + 1442695040888963407 (mod 2^64)")
    w(" * from s = 1, a = s >> 32, b = s mod 2^32 (the state after each step). */")
    w("#define DPZO_PAIR_HASH_N %d" % HASH_PAIRS)
    w("#define DPZO_PAIR_HASH 0x%016xull" % pair_hash)
    w("")
    w("/* direction elements: kind 0 gaussian, 2 rademacher (dpzo_dir_kind); value_exact is")
    w(" * dpzo_dir_at's specified result */")
    w("typedef struct {")
    w("    int kind;")
    w("    uint64_t seed, step;")
    w("    uint32_t query;")
    w("    uint64_t j;")
    w("    double value, value_exact;")
    w("} dpzo_elem_ref;")
    w("")
    w("static const dpzo_elem_ref DPZO_ELEM_REF[] = {")
    for kind, seed, step, query, j, v, x in elems:
        w("    {%d, 0x%016xull, %uu, %uu, 0x%016xull, %s, %s}, /* %s */" %
          (0 if kind == "gaussian" else 2, seed, step, query, j, d(v), hexd(x), mp.nstr(v, 25)))
    w("};")
    w("")
    w("/* SPHERE: the specified scale radius / sqrt(S), S summed in 4096-element blocks */")
    w("typedef struct {")
    w("    uint64_t seed, step;")
    w("    uint32_t query;")
    w("    uint64_t dim;")
    w("    double radius, scale_exact;")
    w("} dpzo_sphere_ref;")
    w("")
    w("static const dpzo_sphere_ref DPZO_SPHERE_REF[] = {")
    for seed, step, query, dim, radius, scale in spheres:
        w("    {%dull, %dull, %du, %dull, %s, %s}," % (seed, step, query, dim, hexd(radius), hexd(scale)))
    w("};")
    w("")
    w("#endif")
    text = "\n".join(out) + "\n"

    dest = sys.argv[1] if len(sys.argv) > 1 else __file__.rsplit("/", 1)[0] + "/zo_dir_values.h"
    if "/" not in __file__ and len(sys.argv) <= 1:
        dest = "zo_dir_values.h"
    if dest == "-":
        sys.stdout.write(text)
    else:
        with open(dest, "w") as f:
            f.write(text)
        print("wrote %s" % dest, file=sys.stderr)


if __name__ == "__main__":
    main()
