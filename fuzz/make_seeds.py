#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/TARGET/), python3 stdlib only.

Each numeric seed is a valid setting in the byte layout its target reads (fuzz/fuzz_util.h:
a double is a selector byte then 8 bytes, selector 0 = the raw bits; a count is a selector
byte then 8 bytes, selector 1 = the raw 64 bits), so the fuzzer starts from inputs that
reach the accountants' deep paths; parser seeds are the project's own example files with
the target's mode byte in front. Seeds must stay fast (each replays under ASan in ctest).
Run from anywhere: python3 fuzz/make_seeds.py (it rewrites the seed files, nothing else).
"""
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def d(x):
    return b"\x00" + struct.pack("<d", x)


def c(n):
    return b"\x01" + struct.pack("<Q", n)


def u8(b):
    return bytes([b])


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def read(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return f.read()


def lmo(wg=0.9, k=1.0, th=2.0, we=0.1, lam=5.0, wu=0.5, a=1.0, b=2.0):
    return b"".join(d(x) for x in (wg, k, th, we, lam, wu, a, b))


def lmo_opts(sel=0, sens=1.0, q=0.01, batch=0, n=0, steps=10, delta=1e-5):
    return u8(sel) + d(sens) + d(q) + c(batch) + c(n) + c(steps) + d(delta)


def main():
    # rdp_poisson: q, sigma, target, steps, mode (1: delta query, 2: monotonicity)
    for name, (q, s, t, T, m) in {
        "dpsgd": (0.004, 1.1, 1e-5, 1000, 0),
        "delta": (0.004, 1.1, 1.0, 1000, 1),
        "monotone": (0.01, 1.0, 1e-5, 100, 2),
        "full-batch": (1.0, 2.0, 1e-5, 1, 0),
        "q-zero": (0.0, 1.0, 1e-5, 10, 0),
        "nan": (float("nan"), 1.0, 1e-5, 10, 0),
    }.items():
        write("rdp_poisson", name, d(q) + d(s) + d(t) + c(T) + u8(m))
    # rdp_wor: batch, n, steps, sigma, delta, alpha, mode (1: one order, 2: monotonicity)
    for name, (b, n, T, s, dl, a, m) in {
        "fmnist": (256, 60000, 1000, 1.0, 1e-5, 8.0, 0),
        "order": (256, 60000, 1, 1.0, 1e-5, 8.0, 1),
        "monotone": (16, 100, 10, 2.0, 1e-6, 2.0, 2),
    }.items():
        write("rdp_wor", name, c(b) + c(n) + c(T) + d(s) + d(dl) + d(a) + u8(m))
    # pld / prv: mode, sigma, q, target, steps, batch, n
    for tgt in ("pld", "prv"):
        for name, (m, s, q, t, T, b, n) in {
            "poisson": (0, 1.0, 0.01, 1e-5, 100, 0, 0),
            "delta": (1, 1.0, 0.01, 1.0, 100, 0, 0),
            "rdp-cross": (2, 1.0, 0.01, 1e-5, 100, 0, 0),
            "wor": (0x20, 1.0, 0.0, 1e-5, 50, 256, 60000),
            "unsampled": (0x40, 4.0, 0.0, 1e-5, 10, 0, 0),
        }.items():
            write(tgt, name, u8(m) + d(s) + d(q) + d(t) + c(T) + c(b) + c(n))
    # calibrate: mode, eps, delta, q, sigma, tol, steps
    for name, (m, e, dl, q, s, tol, T) in {
        "noise": (0, 1.0, 1e-5, 0.01, 1.0, 0.0, 100),
        "noise-recheck": (16, 3.0, 1e-5, 0.004, 1.0, 0.0, 1000),
        "steps": (1, 1.0, 1e-5, 0.01, 1.0, 0.0, 0),
        "rate": (2, 1.0, 1e-5, 0.0, 1.0, 0.0, 100),
        "noise-pld": (4, 2.0, 1e-5, 0.01, 1.0, 1e-2, 50),
    }.items():
        write("calibrate", name, u8(m) + d(e) + d(dl) + d(q) + d(s) + d(tol) + c(T))
    # lmo_rdp: mode (1: sensitivity halved), lmo, options
    write("lmo_rdp", "mgf-none", u8(0) + lmo() + lmo_opts(0, steps=10))
    write("lmo_rdp", "mgf-poisson", u8(1) + lmo() + lmo_opts(0 | 4, steps=100))
    write("lmo_rdp", "pure-wor", u8(0) + lmo() + lmo_opts(2 | 8, sens=2.0, batch=64, n=6000,
                                                          steps=50))
    write("lmo_rdp", "gamma-only", u8(1) + lmo(1.0, 2.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0)
          + lmo_opts(0, steps=3))
    # lmo_pld: mode (1: against RDP), lmo, options, grid
    write("lmo_pld", "none", u8(1) + lmo() + lmo_opts(0, steps=10) + d(1e-2))
    write("lmo_pld", "poisson", u8(0) + lmo() + lmo_opts(4, steps=100) + d(1e-2))
    # audit: mode, sel, sigma, [sensitivity], q, batch, n, steps, eps, delta, [pipeline],
    #        [effective batch], grid, [lmo]
    write("audit", "poisson", u8(0) + u8(0) + d(1.1) + d(0.004) + c(0) + c(0) + c(1000)
          + d(3.0) + d(1e-5) + d(1e-2))
    write("audit", "poisson-prv", u8(8) + u8(0) + d(1.1) + d(0.004) + c(0) + c(0) + c(1000)
          + d(1.0) + d(1e-5) + d(1e-2))
    write("audit", "fixed", u8(0) + u8(1) + d(1.0) + d(0.0) + c(256) + c(60000) + c(200)
          + d(2.0) + d(1e-5) + d(1e-2))
    write("audit", "lmo", u8(0x20) + u8(0) + d(1.0) + d(0.01) + c(0) + c(0) + c(50)
          + d(3.0) + d(1e-5) + d(1e-2) + lmo())
    # parsers: the project's own files
    prof = read("docs/examples/profile-gaussian.json")
    for m in (0, 1, 2, 4):
        write("profile", "gaussian-mode%d" % m, u8(m) + prof)
    write("profile", "wor-prv", u8(0) + read("docs/examples/profile-gaussian-wor-prv.json"))
    write("profile", "tampered", u8(0) + read("docs/examples/profile-gaussian-tampered.json"))
    write("profile", "understated", u8(2) + read("docs/examples/profile-gaussian-understated.json"))
    write("profile", "dpzero", u8(6) + read("examples/fmnist-dpzero-profile.json"))
    for f in ("fmnist-dpzero", "fmnist-dpzopo", "fmnist-pazo-s", "fmnist-mezo", "fmnist-dpsgd"):
        write("config", f, u8(2) + read("examples/%s.json" % f))
    write("config", "file", u8(1) + read("examples/fmnist-dpzero.json"))
    write("claim", "lmo-sst2", u8(0) + read("docs/examples/claim-lmo-sst2.json"))
    write("claim", "tf-privacy-mnist", u8(0) + read("docs/audits/tf-privacy-mnist.json"))
    write("claim", "pazo", u8(1) + read("docs/audits/pazo.json"))
    write("claim", "dp-ftrl-tree", u8(0) + read("docs/audits/dp-ftrl-tree.json"))
    write("claim", "gboard-zcdp", u8(1) + read("docs/audits/gboard-zcdp.json"))
    # event: the text alone (issue 30, docs/accountant.md section 7)
    write("event", "sgm", read("docs/examples/event-sgm.json"))
    write("event", "mixed", read("docs/examples/event-mixed.json"))
    write("event", "tree-multi", read("docs/examples/event-gboard-tree.json"))
    write("event", "every-kind", b'{"type": "Composed", "events": [{"type": "NoOp"}, '
          b'{"type": "NonPrivateDpEvent"}, {"type": "ZCDp", "rho": 0.5, "xi": 0.1}, '
          b'{"type": "RandomizedResponse", "noise_parameter": 0.5, "num_buckets": 4}, '
          b'{"type": "DiscreteLaplace", "noise_parameter": 0.7, "sensitivity": 3}, '
          b'{"type": "SingleEpochTreeAggregation", "noise_multiplier": 3, "step_counts": [100, 7]}, '
          b'{"type": "SelfComposed", "count": 10, "event": {"type": "SampledWithoutReplacement", '
          b'"source_dataset_size": 1000, "sample_size": 10, "event": {"type": "Laplace", '
          b'"noise_multiplier": 2}}}]}')
    write("grid", "sixteen", b'{"gamma_weight": [0.9, 0.3], "exp_weight": [0.1],'
          b' "uniform_weight": [0.5, 0.25], "gamma": [[1, 2], [3, 2]], "exp_rate": [5],'
          b' "uniform": [[1, 2], [2, 4]]}')
    write("grid", "one", b'{"gamma_weight": [1], "exp_weight": [0], "uniform_weight": [0],'
          b' "gamma": [[2, 1]], "exp_rate": [1], "uniform": [[0, 1]]}')
    # idx: two little-endian length bytes, the image file, the label file
    img = struct.pack(">IIII", 0x803, 3, 2, 2) + bytes([0, 255, 128, 7] * 3)
    lab = struct.pack(">II", 0x801, 3) + bytes([0, 1, 2])
    write("idx", "three", struct.pack("<H", len(img)) + img + lab)
    write("idx", "count-mismatch", struct.pack("<H", len(img)) + img
          + struct.pack(">II", 0x801, 2) + bytes([0, 1]))
    # checkpoints: mode 1 with no edits is the valid checkpoint of the target's own run
    write("train_ckpt", "valid", u8(1))
    write("train_ckpt", "step-edit", u8(1) + struct.pack("<H", 52) + u8(3))
    write("train_ckpt", "raw-magic", u8(0) + b"DPZOCKPT" + b"\x01\x00\x00\x00")
    write("lmo_search_ckpt", "valid", u8(1))
    write("lmo_search_ckpt", "raw", u8(0) + b"DPZOSRC2" + b"\x00" * 16)
    write("lmo_search_ckpt", "header-only", u8(2))


if __name__ == "__main__":
    main()
