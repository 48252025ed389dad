#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The DPZero step of dpzo's mlp:128 written in PyTorch, timed on the CPU: the anchor of
issue 18's goal "dpzo's step faster than the same step in PyTorch on the same CPU and thread
count" (bench/cpu_step.sh runs it interleaved with dpzo-bench-zo).

    python bench/torch_step.py [--threads T] [--batch 256] [--hidden 128] [--rounds 3]
                               [--steps 10] [--min-time 0.2] [--random-data]
                               [--tag KEY=VALUE]... [--alternate N -- CMD ARGS...]

The model is torch.nn.Sequential(Linear(784, H), ReLU, Linear(H, 10)) in float32 with
per-example cross-entropy. One step, the MeZO / DPZero way, under torch.no_grad():
  - draw a batch of B rows (torch.randint over the training rows) and gather them;
  - reseed a generator with the step's seed; per parameter tensor z = randn, p += lambda z
    (randn pass 1); forward -> per-example losses l+;
  - reseed; p -= 2 lambda z (randn pass 2); forward -> l-;
  - reseed; p += lambda z (randn pass 3): the parameters are back;
  - d_i = (l+_i - l-_i) / (2 lambda), clipped to [-C, C], summed, plus one Gaussian draw
    sigma C (torch's generator here: a benchmark, not a private run), divided by B;
  - reseed; p -= lr g z (randn pass 4).
lambda 1e-3, C 20, sigma 1, lr 1e-4 (the values do not change the work).
Also timed: fwd2, two plain forward passes over a fresh batch (the floor of any ZO step).
Each round runs --steps steps (every step one sample) and then fwd2 for --min-time
seconds; the JSON line gives min and median over all rounds' samples, in wall-clock time
and (cpu_*) in the process's CPU time (time.process_time, all threads).

With --alternate N -- CMD ARGS (bench/cpu_step.sh: CMD is dpzo-bench-zo), the process loads
torch and the data once, then N times runs CMD to completion (its JSON lines are printed,
with "side": "dpzo" and the tags added) and then its own --rounds rounds, so that the load
from other jobs hits both sides alike; the one torch line at the end pools all N x rounds.

Data: Fashion-MNIST's training images from $DPZO_FMNIST_DIR or Debian's
dataset-fashion-mnist (/usr/share/datasets/fashion-mnist, the IDX files read with numpy),
as dpzo_fmnist_find looks for them; with --random-data, or when they are not found,
uniform random pixels and labels of the same shape ("data" in the JSON says which).
torch.set_num_threads(T) (T = 0: the machine's online cores).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def load_fmnist_train():
    """(x float32 [n, 784] in [0, 1], y int64 [n], the directory) or None when not found."""
    dirs = [os.environ.get("DPZO_FMNIST_DIR"), "/usr/share/datasets/fashion-mnist"]
    for d in dirs:
        if not d:
            continue
        paths = []
        for base in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
            p = os.path.join(d, base)
            paths.append(p + ".gz" if os.path.exists(p + ".gz") else p)
        if not all(os.path.exists(p) for p in paths):
            continue

        def read(p):
            with (gzip.open(p, "rb") if p.endswith(".gz") else open(p, "rb")) as f:
                return f.read()

        img, lab = read(paths[0]), read(paths[1])
        n = int.from_bytes(img[4:8], "big")
        rows, cols = int.from_bytes(img[8:12], "big"), int.from_bytes(img[12:16], "big")
        x = np.frombuffer(img, dtype=np.uint8, offset=16).reshape(n, rows * cols)
        y = np.frombuffer(lab, dtype=np.uint8, offset=8)
        return x.astype(np.float32) / 255.0, y.astype(np.int64), d
    return None


def cpu_name() -> str:
    """The machine the times are of: /proc/cpuinfo's model name, else platform's."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10, help="timed steps per round")
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--random-data", action="store_true")
    ap.add_argument("--alternate", type=int, default=1,
                    help="alternations of COMMAND's run and this side's rounds")
    ap.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE",
                    help="a field added to every JSON line printed")
    ap.add_argument("command", nargs=argparse.REMAINDER,
                    help="-- CMD ARGS: dpzo's side, run before each alternation's rounds")
    a = ap.parse_args()
    if a.rounds < 1 or a.steps < 1:
        ap.error("--rounds and --steps must be at least 1 (the JSON line needs samples)")
    if a.command and a.command[0] == "--":
        a.command = a.command[1:]

    threads = a.threads if a.threads > 0 else (os.cpu_count() or 1)
    torch.set_num_threads(threads)
    loaded = None if a.random_data else load_fmnist_train()
    if loaded is not None:
        xn, yn, where = loaded
        X, Y = torch.from_numpy(xn), torch.from_numpy(yn)
        data = "fashion-mnist (%s)" % where
    else:
        g0 = torch.Generator().manual_seed(0)
        X = torch.rand(60000, 784, generator=g0)
        Y = torch.randint(0, 10, (60000,), generator=g0)
        data = "random (60000 x 784, 10 classes)"
    n, dim = X.shape
    B = a.batch
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(dim, a.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(a.hidden, 10))
    params = [p for p in model.parameters()]
    n_params = sum(p.numel() for p in params)
    lam, clip, sigma, lr = 1e-3, 20.0, 1.0, 1e-4
    zgen = torch.Generator()
    bgen = torch.Generator().manual_seed(2)
    ngen = torch.Generator().manual_seed(3)

    def perturb(seed, scale):
        zgen.manual_seed(seed)
        for p in params:
            z = torch.randn(p.shape, generator=zgen)
            p.add_(z, alpha=scale)

    def batch():
        idx = torch.randint(0, n, (B,), generator=bgen)
        return X[idx], Y[idx]

    @torch.no_grad()
    def step(t):
        x, y = batch()
        seed = 1000 + t
        perturb(seed, lam)
        lp = F.cross_entropy(model(x), y, reduction="none")
        perturb(seed, -2.0 * lam)
        lm = F.cross_entropy(model(x), y, reduction="none")
        perturb(seed, lam)
        d = ((lp - lm) / (2.0 * lam)).clamp_(-clip, clip)
        g = (d.sum() + sigma * clip * torch.randn((), generator=ngen)) / B
        perturb(seed, -lr * float(g))

    @torch.no_grad()
    def fwd2():
        x, y = batch()
        F.cross_entropy(model(x), y, reduction="none")
        F.cross_entropy(model(x), y, reduction="none")

    for t in range(3):  # warm-up
        step(t)
        fwd2()
    s_step, s_fwd2, c_step, c_fwd2 = [], [], [], []
    t_step = 3

    def rounds():
        nonlocal t_step
        for _ in range(a.rounds):
            for _ in range(a.steps):
                t0, c0 = time.perf_counter(), time.process_time()
                step(t_step)
                s_step.append(time.perf_counter() - t0)
                c_step.append(time.process_time() - c0)
                t_step += 1
            start = time.perf_counter()
            while True:
                t0, c0 = time.perf_counter(), time.process_time()
                fwd2()
                t1 = time.perf_counter()
                s_fwd2.append(t1 - t0)
                c_fwd2.append(time.process_time() - c0)
                if t1 - start >= a.min_time:
                    break

    tags = dict(kv.split("=", 1) for kv in a.tag)
    for k in range(max(a.alternate, 1)):
        if a.command:
            # dpzo's side of this alternation: its JSON lines pass through, tagged
            r = subprocess.run(a.command, stdout=subprocess.PIPE, text=True)
            if r.returncode != 0:
                print("torch_step.py: %s exited with %d" % (a.command[0], r.returncode),
                      file=sys.stderr)
                return r.returncode
            for line in r.stdout.splitlines():
                if line.strip():
                    row = json.loads(line)
                    row.update(tags, side="dpzo", alternation=k)
                    print(json.dumps(row), flush=True)
        rounds()
    out = {
        "side": "torch", "model": "mlp:%d" % a.hidden, "algorithm": "dpzero", "batch": B,
        "queries": 1, "n_params": n_params, "threads": a.threads,
        "torch_threads": torch.get_num_threads(), "rounds": a.rounds,
        "step_s": statistics.median(s_step), "step_min_s": min(s_step),
        "timed_steps": len(s_step),
        "fwd2_s": statistics.median(s_fwd2), "fwd2_min_s": min(s_fwd2), "fwd2_n": len(s_fwd2),
        "cpu_step_s": statistics.median(c_step), "cpu_step_min_s": min(c_step),
        "cpu_fwd2_s": statistics.median(c_fwd2), "cpu_fwd2_min_s": min(c_fwd2),
        "torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "mkl": torch.backends.mkl.is_available(), "data": data,
        "python": platform.python_version(), "alternations": max(a.alternate, 1),
        "cpu": cpu_name(), "nproc": os.cpu_count(),
    }
    out.update(tags)
    out["ratio"] = out["step_s"] / out["fwd2_s"]
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
