# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch.ZOOptimizer's core promises, on CPU (docs/plugin.md, issue 17).

1. bf16/fp16 weights never drift: the forward sees T((float)((double)x + alpha u)) of the
   C kernel's documented formula, recomputed here in torch from dpzo.directions' floats,
   and after the two evaluations every parameter is bit-identical (MeZO's in-place
   +lambda z, -2 lambda z, +lambda z is shown not to be: MeZO#42).
2. The update is the spec's: g_k = sum_i (lp - lm) / (2 lambda) / B (mezo: no clipping),
   theta_new = T(v), v = (float)((double)v + alpha_k u_k) for k < Q, alpha_k = -(lr/Q) g_k.
3. Memory: perturb="layer" holds one module's perturbed tensors at a time, "all" all.
4. The ledger: epsilon_spent() after each step is `dpzo epsilon` for t steps of the
   profile's noise, Q noise draws per step, step T+1 refused without a trace, a plan the
   profile does not cover refused at construction.
5. Resume: bit-identical to an uninterrupted run; the private ledger continues.
6. Data parallel over two gloo processes (torch_ddp_worker.py) against one process.
"""
from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import pytest

torch = pytest.importorskip("torch")

import dpzo  # noqa: E402
import dpzo.torch as dt  # noqa: E402
from dpzo.directions import Direction  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_ddp_worker as ddp  # noqa: E402

INT_VIEW = {torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.float32: torch.int32}


# ---- helpers ------------------------------------------------------------------------------

def bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().view(INT_VIEW[t.dtype]).clone()


def snapshot(model: torch.nn.Module) -> List[torch.Tensor]:
    return [bits(p) for p in model.parameters()]


def same_bits(a: List[torch.Tensor], b: List[torch.Tensor]) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def set_sampling_seed(opt: Any, seed: int) -> None:
    """Fixes the (otherwise getrandom) sampling seed through the public resume path, so
    the batches of a test are reproducible."""
    s = opt.state_dict()
    s["dpzo"]["sampling_seed"] = seed
    opt.load_state_dict(s)


def direction_floats(seed: int, step: int, query: int, dim: int,
                     shapes: List[torch.Size]) -> List[torch.Tensor]:
    """u_query of step `step`, as float32 tensors shaped like the parameters (the global
    index runs over the parameters in order), from dpzo_dir_fill."""
    d = Direction(seed=seed, step=step, query=query, dim=dim)
    out, j0 = [], 0
    for shape in shapes:
        u = torch.empty(shape, dtype=torch.float32)
        d.fill(j0, u)
        out.append(u)
        j0 += u.numel()
    assert j0 == dim
    return out


def spec_perturbed(x: torch.Tensor, u: torch.Tensor, alpha: float) -> torch.Tensor:
    """T((float)((double)x + alpha (double)u)), computed by torch: float64 arithmetic
    (each op correctly rounded, no fusion), then to float32 and to the type, each
    rounding to nearest even."""
    return (x.double() + u.double() * alpha).float().to(x.dtype)


class TinyLM(torch.nn.Module):
    """Embedding -> mean over tokens -> LayerNorm -> Linear: per-example cross-entropy."""

    def __init__(self, vocab: int = 13, width: int = 8, classes: int = 3) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, width)
        self.norm = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(self.emb(tokens).mean(1)))


def tiny_model(dtype: torch.dtype, init_seed: int = 0) -> TinyLM:
    torch.manual_seed(init_seed)
    m = TinyLM()
    with torch.no_grad():  # LayerNorm's weight 1, bias 0 would hide offsets: randomise
        for p in m.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return m.to(dtype)


def tiny_data(n: int = 16, length: int = 4) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(5)
    return torch.randint(0, 13, (n, length), generator=g), torch.randint(0, 3, (n,), generator=g)


def lm_losses(model: torch.nn.Module, tokens: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(model(tokens).float(), y, reduction="none")


class SeenWeights:
    """Forward pre-hooks registered after the optimizer's (so they run after its swap-in):
    the weights each module's forward reads, per evaluation (closure call)."""

    def __init__(self, model: torch.nn.Module, opt: Any) -> None:
        self.opt = opt
        self.name = {id(p): n for n, p in model.named_parameters()}
        self.evals: List[Dict[str, torch.Tensor]] = []
        self.swapped_max = 0          # most tensors perturbed at once (len(opt._swapped))
        self.swapped_bytes_max = 0    # and their bytes
        self.swapped_sets: List[Tuple[str, frozenset]] = []
        self.after_forward: List[int] = []
        self.handles = []
        for mname, module in model.named_modules():
            if module._parameters and any(p is not None for p in module._parameters.values()):
                self.handles.append(module.register_forward_pre_hook(self._pre(mname)))
                self.handles.append(module.register_forward_hook(self._post))

    def _pre(self, mname: str) -> Callable[..., None]:
        def hook(module: torch.nn.Module, args: Any) -> None:
            for p in module._parameters.values():
                if p is not None:
                    self.evals[-1][self.name[id(p)]] = p.detach().clone()
            sw = self.opt._swapped
            self.swapped_max = max(self.swapped_max, len(sw))
            self.swapped_bytes_max = max(self.swapped_bytes_max, sum(
                t.numel() * t.element_size() for t in sw.values()))
            self.swapped_sets.append((mname, frozenset(sw.keys())))
        return hook

    def _post(self, module: torch.nn.Module, args: Any, out: Any) -> None:
        self.after_forward.append(len(self.opt._swapped))

    def new_eval(self) -> None:
        self.evals.append({})


# ---- 1. low precision never drifts --------------------------------------------------------

def spec_gradient(losses: List[torch.Tensor], Q: int, lam: float, B: float) -> List[float]:
    """mezo's g_k (no clipping): sum_i (lp_ik - lm_ik) / (2 lambda), in row order, / B;
    losses[2k], losses[2k + 1]: the rows' losses at theta + lambda u_k, theta - lambda u_k."""
    g = []
    for k in range(Q):
        s = 0.0
        for a, b in zip(losses[2 * k].tolist(), losses[2 * k + 1].tolist()):
            s += (a - b) / (2.0 * lam)
        g.append(s / B)
    return g


def spec_update(before: List[torch.Tensor], us: List[List[torch.Tensor]],
                alpha: List[float]) -> List[torch.Tensor]:
    """v = (float)theta; v = (float)((double)v + alpha_k (double)u_k) for k < Q; T(v)."""
    out = []
    for i, x in enumerate(before):
        v = x.float()
        for k, a in enumerate(alpha):
            v = (v.double() + us[k][i].double() * a).float()
        out.append(v.to(x.dtype))
    return out


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("perturb", ["layer", "all"])
def test_low_precision_perturbation_is_the_kernel_and_restores_bits(dtype: torch.dtype,
                                                                     perturb: str) -> None:
    lam, seed, Q, lr, B = 1e-2, 21, 2, 0.3, 8.0
    model = tiny_model(dtype)
    tokens, y = tiny_data()
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=lr, steps=2, batch_size=B,
                         dataset_size=16, queries=Q, perturbation=lam, seed=seed,
                         perturb=perturb)
    set_sampling_seed(opt, 1234)
    params = list(model.parameters())
    names = [n for n, _ in model.named_parameters()]
    before = [p.detach().clone() for p in params]
    before_bits = snapshot(model)
    dim = sum(p.numel() for p in before)
    seen = SeenWeights(model, opt)
    rows = opt.batch(0)
    assert len(rows) > 0
    losses: List[torch.Tensor] = []
    intact: List[bool] = []

    def closure() -> torch.Tensor:
        # theta's own storage (swapped out while "all" evaluates) holds its original bits
        # at every evaluation: the ones before restored it exactly (read as the optimizer
        # reads it: under "layer" a read of theta in the closure would be found by the read
        # tracker and given the perturbed value, as the forward sees it)
        with opt._quiet():
            intact.append(same_bits([bits(opt._swapped.get(id(p), p)) for p in params],
                                    before_bits))
        seen.new_eval()
        out = lm_losses(model, tokens[rows], y[rows])
        losses.append(out.double())
        return out

    opt.step(closure)
    assert len(seen.evals) == 2 * Q and intact == [True] * (2 * Q)
    us = [direction_floats(seed, 0, k, dim, [p.shape for p in before]) for k in range(Q)]
    moved = 0
    for k in range(Q):
        for s, sign in enumerate((+1, -1)):
            ev = seen.evals[2 * k + s]
            assert sorted(ev) == sorted(names)  # every module's forward ran
            for name, x, uk in zip(names, before, us[k]):
                want = spec_perturbed(x, uk, sign * lam)
                assert ev[name].dtype == dtype
                assert torch.equal(bits(ev[name]), bits(want)), (k, sign, name)
                moved += int((bits(want) != bits(x)).sum())
    assert moved > 0  # the perturbation is visible in this type (the check is not vacuous)
    assert opt._swapped == {}
    # the update started from the original bits (the evaluations left nothing behind)
    g = spec_gradient(losses, Q, lam, B)
    assert opt.last_gradient() == g
    want = spec_update(before, us, [(-lr / Q) * gk for gk in g])
    assert same_bits(snapshot(model), [bits(w) for w in want])

    # the same theta perturbed in place the MeZO way (z drawn in the parameter's type,
    # +lambda z, -2 lambda z, +lambda z) does not come back: MeZO#42
    gen = torch.Generator().manual_seed(3)
    changed = 0
    for x in before:
        p = x.clone()
        z = torch.randn(p.shape, generator=gen).to(dtype)
        p = p + lam * z
        p = p - 2 * lam * z
        p = p + lam * z
        changed += int((bits(p) != bits(x)).sum())
    assert changed > 0


def test_low_precision_perturbed_context_outside_step() -> None:
    """opt.perturbed(k, sign) after a begun step (the C begin, as step() does it) gives
    the kernel's weights within the block and the original bits after it."""
    from dpzo import _lib
    from dpzo.torch import _c
    import ctypes
    lam, seed = 5e-3, 4
    model = tiny_model(torch.bfloat16)
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=0.1, steps=3, batch_size=8,
                         dataset_size=16, perturbation=lam, seed=seed, perturb="all")
    before = [p.detach().clone() for p in model.parameters()]
    before_bits = snapshot(model)
    dim = sum(p.numel() for p in before)
    with pytest.raises(dpzo.Error):  # no step begun
        with opt.perturbed(0, +1):
            pass
    _lib.call(_c.zo_begin, ctypes.c_void_p(opt._zo))
    u = direction_floats(seed, 0, 0, dim, [p.shape for p in before])
    for sign in (+1, -1, +1, -1):
        with opt.perturbed(0, sign):
            for p, x, uk in zip(model.parameters(), before, u):
                assert torch.equal(bits(p), bits(spec_perturbed(x, uk, sign * lam)))
        assert same_bits(snapshot(model), before_bits)


# ---- 2. the update is the spec's -----------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_update_matches_spec(dtype: torch.dtype) -> None:
    lam, seed, Q, lr, B = 1e-2, 8, 2, 0.5, 8.0
    model = tiny_model(dtype)
    tokens, y = tiny_data()
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=lr, steps=3, batch_size=B,
                         dataset_size=16, queries=Q, perturbation=lam, seed=seed)
    set_sampling_seed(opt, 99)
    assert all(math.isnan(g) for g in opt.last_gradient())
    for t in range(2):
        before = [p.detach().clone() for p in model.parameters()]
        dim = sum(p.numel() for p in before)
        rows = opt.batch(t)
        assert len(rows) > 0
        losses: List[torch.Tensor] = []

        def closure() -> torch.Tensor:
            out = lm_losses(model, tokens[rows], y[rows])
            losses.append(out.double())
            return out

        ret = opt.step(closure)
        g = spec_gradient(losses, Q, lam, B)
        assert opt.last_gradient() == g
        assert ret == pytest.approx(float((losses[0] + losses[1]).mean() / 2), rel=1e-14)
        us = [direction_floats(seed, t, k, dim, [p.shape for p in before]) for k in range(Q)]
        want = spec_update(before, us, [(-lr / Q) * gk for gk in g])
        assert same_bits(snapshot(model), [bits(w) for w in want]), t
        assert sum(int((bits(w) != bits(x)).sum()) for w, x in zip(want, before)) > 0
        assert opt.steps_done == t + 1


# ---- 3. memory: one module at a time -------------------------------------------------------

def test_layer_mode_perturbs_one_module_at_a_time() -> None:
    tokens, y = tiny_data()
    res = {}
    for perturb in ("layer", "all"):
        model = tiny_model(torch.float32)
        opt = dt.ZOOptimizer(model, algorithm="mezo", lr=0.2, steps=2, batch_size=8,
                             dataset_size=16, queries=1, perturbation=1e-3, seed=2,
                             perturb=perturb)
        set_sampling_seed(opt, 7)
        seen = SeenWeights(model, opt)
        own = {mname: frozenset(id(p) for p in m._parameters.values() if p is not None)
               for mname, m in model.named_modules() if m._parameters}
        own_bytes = {mname: sum(p.numel() * p.element_size() for p in m._parameters.values())
                     for mname, m in model.named_modules() if m._parameters}
        ptrs = [p.data_ptr() for p in model.parameters()]
        all_ids = frozenset(id(p) for p in model.parameters())
        rows = opt.batch(0)
        losses: List[torch.Tensor] = []

        def closure() -> torch.Tensor:
            seen.new_eval()
            out = lm_losses(model, tokens[rows], y[rows])
            losses.append(out.clone())
            return out

        opt.step(closure)
        assert len(seen.swapped_sets) == 2 * 3  # 2 evaluations x 3 modules with parameters
        for mname, ids in seen.swapped_sets:
            assert ids == (own[mname] if perturb == "layer" else all_ids), (perturb, mname)
        if perturb == "layer":
            assert seen.swapped_max == max(len(v) for v in own.values())  # 2 (Linear, LN)
            assert seen.swapped_bytes_max == max(own_bytes.values())
            assert all(n == 0 for n in seen.after_forward)  # put back after each module
        else:
            assert seen.swapped_max == len(all_ids)
            assert seen.swapped_bytes_max == sum(own_bytes.values())
        assert opt._swapped == {}
        assert [p.data_ptr() for p in model.parameters()] == ptrs  # updated in place
        res[perturb] = (losses, snapshot(model))
    # a model that reads each weight in its own module computes the same either way
    (la, pa), (lb, pb) = res["layer"], res["all"]
    assert all(torch.equal(a, b) for a, b in zip(la, lb))
    assert same_bits(pa, pb)


# ---- 4. the ledger and the refusal ---------------------------------------------------------

def _cli_epsilon(run_cli: Any, sigma: float, q: float, t: int, delta: float) -> float:
    r = run_cli("epsilon", "--noise-multiplier", repr(sigma), "--sampling-rate", repr(q),
                "--steps", str(t), "--delta", repr(delta))
    return float(r["epsilon"])


def _linear_setup(profile: str, **kw: Any) -> Tuple[Any, Any, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    g = torch.Generator().manual_seed(2)
    X, y = torch.randn(64, 4, generator=g), torch.randint(0, 2, (64,), generator=g)
    args = dict(algorithm="dpzero", profile=profile, clip=2.0, lr=0.05, steps=5,
                batch_size=8, dataset_size=64, queries=2, perturbation=1e-3, seed=3)
    args.update(kw)
    return model, dt.ZOOptimizer(model, **args), X, y


def _ce(model: Any, X: torch.Tensor, y: torch.Tensor, rows: List[int]) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(model(X[rows]), y[rows], reduction="none")


def test_ledger_matches_cli_and_refuses_past_plan(tmp_path: Any, run_cli: Any) -> None:
    T, Q, B, n, delta = 5, 2, 8, 64, 1e-5
    prof = dpzo.gaussian_profile(epsilon=3.0, delta=delta, sampling_rate=B / n, steps=T,
                                 sensitivity=2.0)
    path = str(tmp_path / "p.json")
    prof.save(path)
    model, opt, X, y = _linear_setup(path)
    set_sampling_seed(opt, 2024)
    assert opt.epsilon_spent() == 0.0 and opt.noise_draws() == 0
    assert opt.budget() == prof.epsilon <= 3.0
    assert opt.delta() == delta
    for t in range(1, T + 1):
        rows = opt.batch(t - 1)
        opt.step(lambda: _ce(model, X, y, rows))
        want = _cli_epsilon(run_cli, prof.noise_multiplier, B / n, t, delta)
        assert opt.epsilon_spent() == want, t  # the CLI prints 17 digits: equal bits
        assert opt.epsilon_spent() <= opt.budget()
        assert opt.noise_draws() == Q * t
        assert opt.steps_done == t
    # step T + 1: refused before anything ran
    before = snapshot(model)
    eps, calls = opt.epsilon_spent(), []
    with pytest.raises(dt.BudgetExceeded) as e:
        opt.step(lambda: calls.append(1) or _ce(model, X, y, [0]))
    assert isinstance(e.value, dpzo.Error)
    assert calls == []
    assert same_bits(snapshot(model), before)
    assert opt.epsilon_spent() == eps and opt.steps_done == T and opt.noise_draws() == Q * T
    with pytest.raises(dt.BudgetExceeded):  # and again: nothing moved
        opt.step(lambda: _ce(model, X, y, [0]))

    # plans the profile does not cover are refused at construction
    for bad in ({"dataset_size": 32},    # rate 8/32 > the profile's 8/64
                {"steps": T + 1},        # more steps than accounted
                {"batch_size": 9},       # rate 9/64
                {"clip": 1.0}):          # another sensitivity
        with pytest.raises(dpzo.Error):
            _linear_setup(path, **bad)
    # a smaller rate is covered by the profile (sampling at most its rate)
    _, ok, _, _ = _linear_setup(path, dataset_size=128)
    assert ok.epsilon_spent() == 0.0


# ---- 5. resume -----------------------------------------------------------------------------

def _mezo_setup(init_seed: int) -> Tuple[Any, Any]:
    torch.manual_seed(init_seed)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=0.05, steps=6, batch_size=10,
                         dataset_size=40, queries=2, perturbation=1e-3, seed=7,
                         lr_schedule="cosine")
    return model, opt


def test_resume_is_bit_identical(tmp_path: Any) -> None:
    g = torch.Generator().manual_seed(4)
    X, y = torch.randn(40, 6, generator=g), torch.randint(0, 3, (40,), generator=g)
    k = 3
    model_a, opt_a = _mezo_setup(0)
    set_sampling_seed(opt_a, 0xDEADBEEF12345)
    batches_a = []
    for rows in opt_a.batch_sampler():
        batches_a.append(rows)
        opt_a.step(lambda: _ce(model_a, X, y, rows))
    assert len(batches_a) == 2 * k

    model_b, opt_b = _mezo_setup(0)
    set_sampling_seed(opt_b, 0xDEADBEEF12345)
    for t in range(k):
        rows = opt_b.batch(t)
        opt_b.step(lambda: _ce(model_b, X, y, rows))
    ckpt = tmp_path / "ckpt.pt"
    torch.save({"model": model_b.state_dict(), "opt": opt_b.state_dict()}, ckpt)
    del model_b, opt_b

    model_c, opt_c = _mezo_setup(1)  # another initialisation: the checkpoint must set it
    state = torch.load(ckpt)
    model_c.load_state_dict(state["model"])
    opt_c.load_state_dict(state["opt"])
    assert opt_c.steps_done == k
    assert [opt_c.batch(t) for t in range(2 * k)] == batches_a
    rest = list(opt_c.batch_sampler())
    assert rest == batches_a[k:]
    for rows in rest:
        opt_c.step(lambda: _ce(model_c, X, y, rows))
    assert opt_c.steps_done == 2 * k
    assert same_bits(snapshot(model_c), snapshot(model_a))
    # and the resumed run really moved (the comparison is not of two untouched models)
    model_0, _ = _mezo_setup(0)
    assert not same_bits(snapshot(model_0), snapshot(model_a))


def test_private_resume_continues_the_ledger(tmp_path: Any, run_cli: Any) -> None:
    T, B, n, delta = 4, 8, 64, 1e-5
    prof = dpzo.gaussian_profile(epsilon=3.0, delta=delta, sampling_rate=B / n, steps=T,
                                 sensitivity=2.0)
    path = str(tmp_path / "p.json")
    prof.save(path)
    model, opt, X, y = _linear_setup(path, steps=T)
    set_sampling_seed(opt, 2025)
    for t in range(2):
        rows = opt.batch(t)
        opt.step(lambda: _ce(model, X, y, rows))
    eps2 = opt.epsilon_spent()
    assert eps2 == _cli_epsilon(run_cli, prof.noise_multiplier, B / n, 2, delta)
    ckpt = tmp_path / "ckpt.pt"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, ckpt)
    state = torch.load(ckpt)
    batches = [opt.batch(t) for t in range(T)]

    model2, opt2, _, _ = _linear_setup(path, steps=T)
    model2.load_state_dict(state["model"])
    assert opt2.epsilon_spent() == 0.0
    opt2.load_state_dict(state["opt"])
    assert opt2.steps_done == 2 and opt2.epsilon_spent() == eps2
    assert opt2.noise_draws() == 0  # this object has drawn nothing yet
    assert [opt2.batch(t) for t in range(T)] == batches
    for rows in opt2.batch_sampler():
        opt2.step(lambda: _ce(model2, X, y, rows))
    assert opt2.steps_done == T and opt2.noise_draws() == 2 * 2
    assert opt2.epsilon_spent() == _cli_epsilon(run_cli, prof.noise_multiplier, B / n, T, delta)
    with pytest.raises(dt.BudgetExceeded):
        opt2.step(lambda: _ce(model2, X, y, [0]))

    # another configuration or data set refuses the state
    for other in ({"lr": 0.06}, {"queries": 1}, {"dataset_size": 128}):
        _, opt3, _, _ = _linear_setup(path, steps=T, **other)
        with pytest.raises(dpzo.Error):
            opt3.load_state_dict(state["opt"])
        assert opt3.steps_done == 0
    # and going back in the ledger is refused, even with another run's (older) state, and
    # the refusal leaves this run as it was: its ledger and its batches (sampling seed)
    _, older, _, _ = _linear_setup(path, steps=T)
    s = older.state_dict()
    assert s["dpzo"]["sampling_seed"] != opt2.state_dict()["dpzo"]["sampling_seed"]
    s["dpzo"]["steps_done"] = 1
    with pytest.raises(dpzo.Error):
        opt2.load_state_dict(s)
    assert opt2.steps_done == T
    assert [opt2.batch(t) for t in range(T)] == batches
    assert opt2.epsilon_spent() == _cli_epsilon(run_cli, prof.noise_multiplier, B / n, T, delta)


# ---- 6. data parallel ----------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ulps(a: torch.Tensor, b: torch.Tensor) -> int:
    """Largest distance in float32 units in the last place (same-sign values)."""
    ia, ib = a.view(torch.int32).long(), b.view(torch.int32).long()
    assert bool(((a >= 0) == (b >= 0)).all())
    return int((ia - ib).abs().max())


def test_data_parallel_two_processes(tmp_path: Any) -> None:
    prof = dpzo.gaussian_profile(epsilon=3.0, delta=1e-5, sampling_rate=ddp.BATCH / ddp.N,
                                 steps=ddp.STEPS, sensitivity=ddp.CLIP)
    path = str(tmp_path / "ddp.json")
    prof.save(path)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(dpzo.__file__)))
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()),
               WORLD_SIZE="2", GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([pkg] + [x for x in
                                                   [os.environ.get("PYTHONPATH")] if x]))
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "torch_ddp_worker.py"),
                               str(tmp_path), path], env=dict(env, RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    outs = []
    deadline = time.monotonic() + 120
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("the data-parallel workers did not finish in 120 s")
        outs.append(out)
    for r, p in enumerate(procs):
        assert p.returncode == 0, f"rank {r}:\n{outs[r]}"
    res = {(a, r): torch.load(tmp_path / f"{a}_rank{r}.pt")
           for a in ("mezo", "dpzero") for r in range(2)}

    for a in ("mezo", "dpzero"):
        r0, r1 = res[(a, 0)], res[(a, 1)]
        assert r0["world"] == r1["world"] == 2
        # both ranks use rank 0's sampling seed, and are the same run bit for bit
        assert r0["sampling_seed"] == r1["sampling_seed"]
        assert r0["grads"] == r1["grads"]
        for t in range(ddp.STEPS + 1):
            assert same_bits([bits(x) for x in r0["parameters"][t]],
                             [bits(x) for x in r1["parameters"][t]]), (a, t)
        assert r0["steps_done"] == r1["steps_done"] == ddp.STEPS
        # the one-process run with the same sampling seed
        model, X, y, opt = ddp.make(a, path)
        set_sampling_seed(opt, r0["sampling_seed"])
        one = ddp.run(model, X, y, opt)
        for t in range(ddp.STEPS):
            b0, b1, whole = r0["batches"][t], r1["batches"][t], one["batches"][t]
            assert not set(b0) & set(b1)
            assert b0 + b1 == whole  # rank 0 the first half of the step's rows, rank 1 the rest
            assert len(b0) == len(whole) // 2
        if a == "mezo":
            assert r0["noise_draws"] == r1["noise_draws"] == one["noise_draws"] == 0
            # The released value is rank 0's partial sum plus rank 1's (one all-reduce);
            # one process sums the same d_i left to right. Each recursive sum of b terms errs
            # by at most (b - 1) u sum|d_i| (u = 2^-53), so the two differ by at most twice
            # that, divided by B for g. Each row's loss is a forward of that row alone, so
            # the d_i themselves are equal while the parameters are.
            u = 2.0 ** -53
            identical_steps = 0
            for t in range(ddp.STEPS):
                if not same_bits([bits(x) for x in r0["parameters"][t]],
                                 [bits(x) for x in one["parameters"][t]]):
                    break
                identical_steps += 1
                ls = one["losses"][t]
                b = len(one["batches"][t])
                for k in range(ddp.QUERIES):
                    d = (ls[2 * k] - ls[2 * k + 1]) / (2 * ddp.LAMBDA)
                    bound = 2 * max(b - 1, 1) * u * float(d.abs().sum()) / ddp.BATCH
                    assert abs(r0["grads"][t][k] - one["grads"][t][k]) <= bound, (t, k)
            # Parameters: theta + alpha u rounded to float32 from alphas this close differs
            # by at most one ulp per step where a rounding boundary falls between them.
            assert identical_steps >= 1
            for x0, x1 in zip(r0["parameters"][-1], one["parameters"][-1]):
                assert _ulps(x0, x1) <= ddp.STEPS
        else:
            # rank 0 drew the noise (Q per step) and broadcast the released values
            assert r0["noise_draws"] == ddp.QUERIES * ddp.STEPS
            assert r1["noise_draws"] == 0
            assert one["noise_draws"] == ddp.QUERIES * ddp.STEPS
            assert r0["epsilon"] == r1["epsilon"] == one["epsilon"] <= prof.epsilon
            assert r0["epsilon"] > 0
