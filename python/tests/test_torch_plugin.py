# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch against `dpzo train`: the same directions, and the same DPZero trajectory.

The reference is `dpzo train`'s own step, run by ``dpzo-zo-reference`` (tests/zo_reference.c,
built beside the CLI) on the same data, configuration, sampling seed (so the same Poisson
batches) and noise (the tests' deterministic stand-in for the CSPRNG, fixed_noise of
tests/train_fixtures.h, re-implemented below from its integer definition) and dpzo's MLP
("mlp:5": Linear 6-5, ReLU, Linear 5-3, softmax cross-entropy). The plugin runs the same
architecture as a torch.nn.Module.

The tolerance, derived. Both sides evaluate at the same float32 weights
w = (float)((double)theta + s lambda u) (the same kernel, the same theta: the comparison
restarts every step from dpzo train's theta_t), so the only difference is the forward:
dpzo's MLP accumulates each pre-activation in double from the bias in increasing input
order, rounds the ReLU output to float and keeps the logits in double; the torch model does
the same operations in float64 with BLAS's summation order. A double dot product of m
terms is off by at most gamma_m sum |w_i x_i|, gamma_m = m 2^-53 / (1 - m 2^-53) (Higham,
Thm 3.1), so each hidden value differs by at most e_j = 2 gamma_7 S_j (S_j = |b_j| +
sum_i |W1_ji x_i|) before rounding, and after rounding to float by at most
e_j + ulp32(h_j) (a rounding boundary may lie between the two). The logits then differ by at
most D_c = sum_j |W2_cj| (e_j + ulp32(h_j)) + 2 gamma_6 (|b2_c| + sum_j |W2_cj h_j|), and the
loss logsumexp(z) - z_y (2-Lipschitz in the max norm, plus its own double rounding, below
1e-15 (1 + |loss|)) by E = 2 max_c D_c + 1e-15 (1 + |loss|). Each difference
d_ik = (l+ - l-) / (2 lambda) is then off by at most (E+ + E-) / (2 lambda); the Q-vector's
L2 clipping is 1-Lipschitz, so each clipped entry by at most the L2 norm of those; the
sum over the batch (Delta_k) by their sum plus 2^-50 sum |v|; g_k by Delta_k / B. The update
theta - (lr / Q) g_k u_k, rounded to float after each query, is then off by at most
sum_k (lr / Q) Delta g_k |u_kj| + Q ulp32(theta_j) (a rounding may flip) wherever any
Delta g_k > 0, and 0 where both g agree exactly. The test asserts that bound per element
and per step, and counts the steps that agree bit for bit (most do).
"""
from __future__ import annotations

import json
import math
import os
import pathlib
import struct
import subprocess
from typing import List

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import dpzo  # noqa: E402
import dpzo.torch as dt  # noqa: E402
from dpzo.directions import Direction  # noqa: E402

M64 = (1 << 64) - 1


def fixed_noise(scale: float, step: int, n: int) -> List[float]:
    """tests/train_fixtures.h's fixed_noise, from its integer definition."""
    out = []
    for i in range(n):
        z = ((step * 1000003 + i + 1) * 0x9E3779B97F4A7C15) & M64
        z = ((z ^ (z >> 31)) * 0xBF58476D1CE4E5B9) & M64
        z ^= z >> 29
        out.append(scale * 3.4641016151377544 * ((z >> 11) * 2.0 ** -53 - 0.5))
    return out


class Lin(torch.nn.Module):
    """A linear layer computed as dpzo's MLP does: float weights and inputs, products and
    sums in double; relu_float rounds the ReLU output to float as dpzo does."""

    def __init__(self, n_in: int, n_out: int, relu_float: bool) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(n_out, n_in))
        self.bias = torch.nn.Parameter(torch.zeros(n_out))
        self.relu_float = relu_float

    def forward(self, x: "torch.Tensor") -> "torch.Tensor":
        z = x.double() @ self.weight.double().T + self.bias.double()
        return torch.relu(z).float() if self.relu_float else z


def mlp() -> "torch.nn.Module":
    return torch.nn.Sequential(Lin(6, 5, True), Lin(5, 3, False))


def mlp_out(model: "torch.nn.Module", x: "torch.Tensor") -> "torch.Tensor":
    """The logits (double), as dpzo's model computes them."""
    return model(x)


def losses(model: "torch.nn.Module", x: "torch.Tensor", y: "torch.Tensor") -> "torch.Tensor":
    z = model(x)
    return torch.logsumexp(z, 1) - z[torch.arange(len(y)), y]


def loss_error_bound(model: "torch.nn.Module", x: "torch.Tensor",
                     y: "torch.Tensor") -> "torch.Tensor":
    """E per example: the derivation in the module's docstring, at the weights the forward
    sees (called inside the perturbation)."""
    l1, l2 = model[0], model[1]
    W1, b1 = l1.weight.double(), l1.bias.double()
    W2, b2 = l2.weight.double(), l2.bias.double()
    xd = x.double()
    g7, g6 = 7 * 2.0 ** -53 / (1 - 7 * 2.0 ** -53), 6 * 2.0 ** -53 / (1 - 6 * 2.0 ** -53)
    S = b1.abs() + xd.abs() @ W1.abs().T
    h = torch.relu(xd @ W1.T + b1).float()
    ulp = (torch.nextafter(h.abs(), torch.tensor(math.inf)) - h.abs()).double()
    e = 2 * g7 * S + ulp
    hd = h.double()
    D = e @ W2.abs().T + 2 * g6 * (b2.abs() + hd.abs() @ W2.abs().T)
    z = hd @ W2.T + b2
    loss = torch.logsumexp(z, 1) - z[torch.arange(len(y)), y]
    return 2 * D.max(1).values + 1e-15 * (1 + loss.abs())


@pytest.fixture(scope="module")
def reference_bin(cli_path: str) -> str:
    path = os.path.join(os.path.dirname(cli_path), "dpzo-zo-reference")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: build the target dpzo-zo-reference")
    return path


def data(n: int = 120, dim: int = 6, K: int = 3):
    rng = np.random.default_rng(5)
    centres = rng.random((K, dim))
    y = rng.integers(0, K, n).astype(np.int32)
    x = (centres[y] + 0.3 * (rng.random((n, dim)) - 0.5)).astype(np.float32)
    return x, y


def run_reference(binary: str, tmp: pathlib.Path, cfg: dict, x, y, seed: int,
                  scale: float, prefix=None) -> np.ndarray:
    (tmp / "cfg.json").write_text(json.dumps(cfg))
    with open(tmp / "data.bin", "wb") as f:
        f.write(struct.pack("<3Q", x.shape[0], x.shape[1], int(y.max()) + 1))
        f.write(x.tobytes())
        f.write(y.tobytes())
    res = subprocess.run([binary, str(tmp / "cfg.json"), str(tmp / "data.bin"), str(seed),
                          repr(scale), str(tmp / "theta.bin")] + ([prefix] if prefix else []),
                         capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert "fc1.weight [5 x 6] (out, in) at 0" in res.stdout  # torch's parameter order
    theta = np.fromfile(tmp / "theta.bin", dtype=np.float32)
    return theta.reshape(cfg["steps"] + 1, -1)


def dpzo_direction(seed: int, step: int, query: int, dim: int) -> np.ndarray:
    u = torch.zeros(dim, dtype=torch.float32)
    Direction(seed=seed, step=step, query=query, dim=dim).fill(0, u)
    return u.numpy()


def set_theta(model: "torch.nn.Module", theta: np.ndarray) -> None:
    j = 0
    for p in model.parameters():
        p.data.copy_(torch.from_numpy(theta[j:j + p.numel()].copy()).view_as(p))
        j += p.numel()


def get_theta(model: "torch.nn.Module") -> np.ndarray:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy().copy()


def read_rows(path: pathlib.Path):
    raw = path.read_bytes()
    n, dim, _ = struct.unpack("<3Q", raw[:24])
    x = np.frombuffer(raw, dtype=np.float32, count=n * dim, offset=24).reshape(n, dim)
    y = np.frombuffer(raw, dtype=np.int32, count=n, offset=24 + 4 * n * dim)
    return torch.from_numpy(x.copy()), torch.from_numpy(y.astype(np.int64))


def read_public_batches(path: pathlib.Path, count: int) -> List[List[int]]:
    raw = np.fromfile(path, dtype=np.uint64)
    out, at = [], 0
    for _ in range(count):
        nb = int(raw[at])
        out.append([int(v) for v in raw[at + 1:at + 1 + nb]])
        at += 1 + nb
    return out


@pytest.mark.parametrize("algorithm,queries",
                         [("dpzero", 1), ("dpzero", 3), ("mezo", 2), ("dpzopo", 2),
                          ("pazo-m", 2), ("pazo-p", 2), ("pazo-s", 1)])
@pytest.mark.filterwarnings("ignore:dpzo.torch. perturb=.layer.:UserWarning")
def test_same_trajectory_as_dpzo_train(tmp_path, reference_bin, algorithm, queries):
    torch.manual_seed(0)
    x, y = data()
    n, T, B, lr, lam, C, seed, scale = len(y), 10, 30, 0.5, 1e-3, 0.5, 99, 0.3
    n_pub = 40 if algorithm.startswith("pazo") else 0
    alpha = 0.3 if algorithm == "pazo-m" else 0.0
    k_pub = 1 if algorithm == "pazo-m" else 3
    n_priv = n - n_pub
    B = 20 if n_pub else B
    cfg = {"algorithm": algorithm, "model": "mlp:5", "steps": T, "batch_size": B,
           "lr": lr, "lambda": lam, "queries": queries, "seed": 7}
    kw = {}
    if algorithm != "mezo":
        prof = dpzo.profiles.gaussian_profile(epsilon=3, delta=1e-5, sampling_rate=B / n_priv,
                                              steps=T, clip=C)
        prof.save(tmp_path / "profile.json")
        cfg.update(profile=str(tmp_path / "profile.json"), clip=C)
        kw = {"profile": str(tmp_path / "profile.json"), "clip": C}
    public = {"batch_size": 8}
    if algorithm == "pazo-m":
        public["alpha"] = alpha
    elif n_pub:
        public["k"] = k_pub
    if algorithm == "pazo-s":
        public["candidate_scale"] = 0.05
        cfg.pop("lambda")
        cfg.pop("queries")
    prune = {"strategy": "incremental", "rate": 0.2, "multipliers": "rank", "queries": 2}
    if algorithm == "dpzopo":  # stages of 2, 4 and 4 steps; masks from the score
        cfg.update(stages={"count": 3, "first_steps": 2}, prune=prune)
        kw.update(stages={"count": 3, "first_steps": 2}, prune=prune,
                  score_closure=lambda: mlp_out(model, torch.ones(1, 6)).sum())
    if n_pub:
        cfg.update(data={"public_size": n_pub}, public=public)
        if algorithm != "pazo-s":
            cfg["direction"] = "gaussian"
    ref = run_reference(reference_bin, tmp_path, cfg, x, y, seed, scale,
                        str(tmp_path / "rows") if n_pub else None)
    model = mlp()
    pub_grad_ulp: List[np.ndarray] = []
    if n_pub:
        X, Y = read_rows(tmp_path / "rows.priv")
        PX, PY = read_rows(tmp_path / "rows.pub")
        pub_batches = read_public_batches(tmp_path / "rows.pubidx", T * k_pub)
        calls = [0]

        def public_closure():
            rows = pub_batches[calls[0]]
            calls[0] += 1
            loss = losses(model, PX[rows], PY[rows]).mean()
            # the gradient C computes in double and rounds to float may sit one float ulp
            # away from torch's float64 gradient rounded to float
            g = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
            pub_grad_ulp.append(np.concatenate([np.spacing(np.abs(
                gi.detach().float().numpy().reshape(-1))) for gi in g]))
            return loss

        kw.update(public={k: v for k, v in public.items() if k != "batch_size"},
                  public_closure=public_closure)
        if algorithm != "pazo-s":
            kw["direction"] = "gaussian"
    else:
        X, Y = torch.from_numpy(x), torch.from_numpy(y).long()
    if algorithm != "pazo-s":
        kw.update(perturbation=lam, queries=queries)
    opt = dt.ZOOptimizer(model, algorithm=algorithm, lr=lr, steps=T, batch_size=B,
                         dataset_size=n_priv, seed=7, **kw)
    state = opt.state_dict()
    state["dpzo"]["sampling_seed"] = seed  # the reference's batches (a test's known seed)
    opt.load_state_dict(state)
    if algorithm != "mezo":
        opt._noise_override = lambda t, q: fixed_noise(scale, t, q)
    exact, worst = 0, 0.0
    for t in range(T):
        set_theta(model, ref[t])
        idx = opt.batch(t)
        xb, yb = X[idx], Y[idx]
        bounds: List["torch.Tensor"] = []

        def closure():
            # the bound reads the weights outside the model's forward: perturb="layer"'s read
            # tracker finds it at the first evaluation (a warning, filtered below) and keeps
            # those tensors perturbed for the whole evaluation, so the bound is computed at
            # the weights the forward sees
            bounds.append(loss_error_bound(model, xb, yb))
            return losses(model, xb, yb)

        opt.step(closure)
        got = get_theta(model)
        if np.array_equal(got, ref[t + 1]):
            exact += 1
            continue
        if algorithm in ("pazo-p", "pazo-s"):
            # the directions (pazo-p: G c over the basis of the k public gradients) or the
            # step (pazo-s: a candidate g_j) are built from float32 public gradients that
            # PyTorch and dpzo's model (OpenBLAS) each sum in float32 in their own orders:
            # they agree to a few float roundings of the batch sums (relative 1e-6 or so per
            # entry); Gram-Schmidt on k = 3 columns multiplies that by their condition
            # number. Stated tolerance: 2.5e-4 of the step's largest move (measured: at most
            # 6.1e-5 of it, 2.7e-6 when dpzo's model summed in double), plus one float ulp
            # per rounding of the update. pazo-s's choice of candidate is the same on
            # both sides unless two noisy sums lie within the forward error (then the test
            # would fail loudly).
            d = np.abs(got.astype(np.float64) - ref[t + 1].astype(np.float64))
            move = float(np.abs(ref[t + 1].astype(np.float64) - ref[t]).max())
            tol = 2.5e-4 * move + (queries + 1) * np.spacing(np.abs(ref[t + 1])).astype(np.float64)
            assert np.all(d <= tol), (t, float(d.max()), move)
            worst = max(worst, float(d.max()) / move)
            continue
        # the bound: E per example and evaluation, in the order (k, +), (k, -)
        E = torch.stack(bounds).reshape(queries, 2, -1)
        dd = (E[:, 0] + E[:, 1]) / (2 * lam)            # per query and example
        per_example = dd.pow(2).sum(0).sqrt()             # L2 over the Q-vector
        dg = float(per_example.sum()) * (1 + 2.0 ** -40) / B + 1e-300
        bound = np.zeros_like(got, dtype=np.float64)
        share = 1.0 - alpha
        mult_max = 1.2 if algorithm == "dpzopo" else 1.0
        for k in range(queries):
            u = dpzo_direction(7, t, k, len(got))
            # dpzopo's masked direction is m_j z_j with m_j <= rank_upper = 1.2
            bound += lr * share / queries * dg * np.abs(u.astype(np.float64)) * mult_max
        if n_pub:  # the public gradient's float rounding, and that of its own pass
            bound += lr * alpha * pub_grad_ulp[t] + np.spacing(np.abs(ref[t + 1]))
        ulp = np.spacing(np.abs(ref[t + 1])).astype(np.float64)
        bound += queries * ulp
        diff = np.abs(got.astype(np.float64) - ref[t + 1].astype(np.float64))
        assert np.all(diff <= bound), (t, float(diff.max()), float(bound.min()))
        move = float(np.abs(ref[t + 1].astype(np.float64) - ref[t]).max())
        worst = max(worst, float(diff.max()) / move)
    print(f"{algorithm} Q={queries}: {exact} of {T} steps bit-identical, worst difference "
          f"{worst:.3g} of the step's move")
    if algorithm in ("pazo-p", "pazo-s"):
        return
    # Both forwards are float32 with their own summation orders (PyTorch's and OpenBLAS's),
    # so few steps agree to the bit; the bound above is the check, and the trajectories'
    # difference is a rounding-level part of each step's move (measured: at most 5.1e-4,
    # dpzopo, whose rank multipliers and masks amplify it)
    assert worst < 2e-3, worst
    if algorithm != "mezo":
        assert opt.steps_done == T
        assert opt.epsilon_spent() <= opt.budget()


def test_directions_are_dpzo_trains_whatever_the_split(tmp_path):
    """The weights the forward sees at theta + lambda u are (float)((double)theta +
    lambda u) with u dpzo's direction (seed, step, query, GLOBAL index), whether the 53
    parameters are two layers' four tensors or a different split of the same numbers."""
    torch.manual_seed(1)
    model = mlp()
    theta0 = get_theta(model)
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=0.1, steps=3, batch_size=10,
                         dataset_size=50, queries=2, seed=12345)
    seen = {}
    current: List[np.ndarray] = []
    for layer in model:  # after the optimizer's: runs with the perturbed weights in place
        layer.register_forward_pre_hook(
            lambda m, a: current.append(torch.cat([m.weight.detach().reshape(-1),
                                                   m.bias.detach().reshape(-1)]).numpy().copy()))

    def closure():
        current.clear()
        out = losses(model, torch.ones(4, 6), torch.zeros(4, dtype=torch.long))
        seen[len(seen)] = np.concatenate(current)
        return out

    opt.step(closure)
    u = [dpzo_direction(12345, 0, k, 53) for k in range(2)]
    for i, (k, s) in enumerate([(0, 1), (0, -1), (1, 1), (1, -1)]):
        want = (theta0.astype(np.float64) + s * 1e-3 * u[k].astype(np.float64)).astype(np.float32)
        assert np.array_equal(seen[i], want)
    # the same numbers in one flat tensor: the same perturbed values
    flat = torch.nn.Linear(53, 1, bias=False)
    flat.weight.data.copy_(torch.from_numpy(theta0).view(1, 53))
    opt2 = dt.ZOOptimizer(flat, algorithm="mezo", lr=0.1, steps=3, batch_size=10,
                          dataset_size=50, queries=2, seed=12345)
    seen2 = []

    flat.register_forward_pre_hook(
        lambda m, a: seen2.append(m.weight.detach().reshape(-1).numpy().copy()))

    def closure2():
        return flat(torch.ones(1, 53)).reshape(-1).detach()

    opt2.step(closure2)
    for i in range(4):
        assert np.array_equal(seen2[i], seen[i])


def test_a_failing_closure_abandons_the_step(tmp_path):
    """An exception in the closure leaves the optimizer usable: nothing released, nothing
    counted, the parameters untouched; the step runs again afterwards."""
    model = mlp()
    before = get_theta(model)
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=0.1, steps=2, batch_size=10,
                         dataset_size=50, seed=3)

    def boom():
        raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError):
        opt.step(boom)
    assert opt.steps_done == 0
    assert np.array_equal(get_theta(model), before)
    opt.step(lambda: losses(model, torch.ones(3, 6), torch.zeros(3, dtype=torch.long)))
    assert opt.steps_done == 1


def test_dpzopo_resume_keeps_the_mask(tmp_path):
    """A dpzopo run resumed mid-stage (the mask comes back from state_dict) gives the
    uninterrupted run's parameters bit for bit, with the same noise stand-in."""
    x, y = data()
    X, Y = torch.from_numpy(x), torch.from_numpy(y).long()
    prof = dpzo.profiles.gaussian_profile(epsilon=3, delta=1e-5, sampling_rate=0.25, steps=8,
                                          clip=0.5)
    prof.save(tmp_path / "p.json")
    prune = {"strategy": "incremental", "rate": 0.3, "queries": 1}

    def make():
        torch.manual_seed(4)
        model = mlp()
        for p in model.parameters():
            p.data.uniform_(-0.5, 0.5)
        opt = dt.ZOOptimizer(model, algorithm="dpzopo", profile=str(tmp_path / "p.json"),
                             clip=0.5, lr=0.5, steps=8, batch_size=30, dataset_size=120,
                             seed=3, stages={"count": 2, "first_steps": 3}, prune=prune,
                             score_closure=lambda: mlp_out(model, torch.ones(1, 6)).sum())
        opt._noise_override = lambda t, q: fixed_noise(0.2, t, q)
        return model, opt

    def run(model, opt, until):
        while opt.steps_done < until:
            idx = opt.batch(opt.steps_done)
            opt.step(lambda: losses(model, X[idx], Y[idx]))

    model, opt = make()
    state = opt.state_dict()
    state["dpzo"]["sampling_seed"] = 42
    opt.load_state_dict(state)
    run(model, opt, 8)
    want = get_theta(model)
    frozen = (opt.mask() == 0).numpy()
    model, opt = make()
    opt.load_state_dict(state)
    run(model, opt, 5)  # stage 2 (steps 3..7) began at step 3: its mask is set
    saved_model, saved_opt = model.state_dict(), opt.state_dict()
    assert saved_opt["dpzo"]["mask"].shape == (53,)
    model, opt = make()
    model.load_state_dict(saved_model)
    opt.load_state_dict(saved_opt)
    run(model, opt, 8)
    assert np.array_equal(get_theta(model), want)
    # frozen coordinates of the last mask did not move in its stage
    assert frozen.sum() > 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_threaded_pieces_give_the_same_bits(monkeypatch, dtype):
    """A CPU tensor of 2^21 + 3 elements is perturbed and updated in pieces on torch's threads;
    the bits equal one call over the whole tensor."""
    from dpzo.torch import _c

    def run(parallel_min):
        monkeypatch.setattr(_c, "_PARALLEL_MIN", parallel_min)
        torch.manual_seed(0)
        lin = torch.nn.Linear((1 << 21) + 3, 1, bias=False).to(dtype)
        opt = dt.ZOOptimizer(lin, algorithm="mezo", lr=0.1, steps=1, batch_size=4,
                             dataset_size=8, queries=2, seed=9)
        seen = []
        lin.register_forward_pre_hook(lambda m, a: seen.append(m.weight.detach().clone()))
        opt.step(lambda: lin(torch.ones(1, (1 << 21) + 3, dtype=dtype)).reshape(-1).float())
        return seen, lin.weight.detach().clone()

    old = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seen1, w1 = run(1 << 40)
        seen2, w2 = run(1 << 20)
        assert len(_c._pieces((1 << 21) + 3)) == 2
    finally:
        torch.set_num_threads(old)
    view = torch.int32 if dtype == torch.float32 else torch.int16
    for a, b in zip(seen1, seen2):
        assert torch.equal(a.view(view), b.view(view))
    assert torch.equal(w1.view(view), w2.view(view))


def test_resume_finds_the_profile_by_its_checksum(tmp_path, monkeypatch):
    """The state names the profile by its checksum: a run resumed from another folder with a
    copy of the same profile is accepted; another profile is refused."""
    prof = dpzo.profiles.gaussian_profile(epsilon=3, delta=1e-5, sampling_rate=0.25, steps=4,
                                          clip=0.5)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    prof.save(tmp_path / "a" / "p.json")
    prof.save(tmp_path / "b" / "p.json")
    other = dpzo.profiles.gaussian_profile(epsilon=2, delta=1e-5, sampling_rate=0.25, steps=4,
                                           clip=0.5)
    other.save(tmp_path / "other.json")

    def make(path):
        return dt.ZOOptimizer(mlp(), algorithm="dpzero", profile=str(path), clip=0.5, lr=0.1,
                              steps=4, batch_size=30, dataset_size=120, seed=1)

    state = make(tmp_path / "a" / "p.json").state_dict()
    assert len(state["dpzo"]["profile_sha256"]) == 64
    state["dpzo"]["steps_done"] = 2
    monkeypatch.chdir(tmp_path / "b")
    opt = make("p.json")
    opt.load_state_dict(state)
    assert opt.steps_done == 2
    with pytest.raises(dpzo.Error, match="another configuration"):
        make(tmp_path / "other.json").load_state_dict(state)
