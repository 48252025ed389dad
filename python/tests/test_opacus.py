# SPDX-License-Identifier: Apache-2.0
"""dpzo.opacus against Opacus 1.6 (the anchor): the accountant, the PrivacyEngine seam and
get_noise_multiplier.

Where Opacus is right, dpzo agrees with it: on Opacus's own order grid dpzo's certified RDP
epsilon equals Opacus's to 1e-9 (Opacus rounds to nearest, dpzo upward; both use the
conversion of Balle et al. 2020), and with dpzo's continuous orders it is never larger and,
where Opacus's best order is inside its grid, within 3%. Opacus's PRV accountant returns an
upper end; dpzo's PLD/PRV intervals must not lie above it.
"""
from __future__ import annotations

import itertools
import math
import warnings

import pytest

opacus = pytest.importorskip("opacus")

import dpzo  # noqa: E402
from dpzo.opacus import (  # noqa: E402
    DpzoAccountant,
    DpzoPldAccountant,
    calibrate_noise_multiplier,
    get_noise_multiplier,
    register,
)
from opacus.accountants import PRVAccountant, RDPAccountant  # noqa: E402
from opacus.accountants.accountant import IAccountant  # noqa: E402
from opacus.accountants.utils import get_noise_multiplier as opacus_get_noise_multiplier  # noqa: E402,E501

MNIST_Q = 256 / 60000
SETTINGS = list(itertools.product([0.6, 1.1, 2.0, 5.0], [MNIST_Q, 0.01, 0.1],
                                  [10, 1000, 14063]))


def _opacus_rdp(history, delta):
    acc = RDPAccountant()
    acc.history = list(history)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "optimal order is the largest alpha"
        return acc.get_privacy_spent(delta=delta)


def test_is_an_opacus_accountant() -> None:
    acc = DpzoAccountant()
    assert isinstance(acc, IAccountant)
    assert DpzoAccountant.mechanism() == "dpzo_rdp"
    assert acc.mechanism() == "dpzo_rdp"
    assert DpzoAccountant("pld").mechanism() == "dpzo_pld"
    assert DpzoPldAccountant().mechanism() == "dpzo_pld"
    assert DpzoAccountant("prv").kind == "prv"
    # before any step, as Opacus's accountants answer; delta is still checked
    assert acc.get_epsilon(1e-5) == 0.0 and len(acc) == 0
    assert DpzoAccountant("pld").get_epsilon(1e-5) == 0.0
    with pytest.raises(dpzo.Error, match="delta"):
        acc.get_epsilon(2.0)


@pytest.mark.parametrize("sigma,q,steps", SETTINGS)
def test_rdp_agrees_with_opacus_on_its_grid(sigma: float, q: float, steps: int) -> None:
    history = [(sigma, q, steps)]
    eps_o, alpha_o = _opacus_rdp(history, 1e-5)
    grid = DpzoAccountant(orders="opacus")
    grid.history = list(history)
    assert grid.get_epsilon(1e-5) == pytest.approx(eps_o, rel=1e-9)
    cont = DpzoAccountant()
    cont.history = list(history)
    e = cont.epsilon(1e-5)
    assert e.epsilon <= eps_o * (1 + 1e-12)
    assert e.estimate <= e.epsilon and e.lower is None and e.order is not None
    if 1.1 < alpha_o < 63:  # Opacus's optimum is interior: its grid is fine enough
        assert e.epsilon >= eps_o * (1 - 0.03)


def test_mnist_setting_matches_opacus_and_the_shortcut() -> None:
    """The README's MNIST setting: Opacus's grid gives 2.59665552..., dpzo's continuous
    orders 2.59664191... (the dpzo.epsilon shortcut's answer)."""
    acc = DpzoAccountant()
    acc.history = [(1.1, MNIST_Q, 14063)]
    eps_o, _ = _opacus_rdp(acc.history, 1e-5)
    assert eps_o == pytest.approx(2.5966555287, abs=1e-9)
    short = dpzo.epsilon(noise_multiplier=1.1, sampling_rate=MNIST_Q, steps=14063, delta=1e-5)
    assert acc.get_epsilon(1e-5) == short.epsilon
    assert 2.5966 < short.epsilon < eps_o


def test_steps_collapse_like_opacus_and_heterogeneous_history() -> None:
    ours, theirs = DpzoAccountant(), RDPAccountant()
    schedule = [(1.0, 0.01)] * 30 + [(1.5, 0.02)] * 20 + [(1.0, 0.01)] * 5
    for sigma, q in schedule:
        ours.step(noise_multiplier=sigma, sample_rate=q)
        theirs.step(noise_multiplier=sigma, sample_rate=q)
    assert ours.history == theirs.history == [(1.0, 0.01, 30), (1.5, 0.02, 20), (1.0, 0.01, 5)]
    assert len(ours) == 55  # steps, as IAccountant documents (Opacus's RDP counts entries)
    eps_o, _ = _opacus_rdp(theirs.history, 1e-5)
    eps = ours.get_epsilon(1e-5)
    assert eps <= eps_o * (1 + 1e-12) and eps >= eps_o * 0.95
    # more steps never spend less
    ours.step(noise_multiplier=1.0, sample_rate=0.01)
    assert ours.get_epsilon(1e-5) > eps
    # the same composition through dpzo's own accountant
    acc = dpzo.RdpAccountant()
    for sigma, q, n in ours.history:
        acc.compose(dpzo.PoissonSampledEvent(q, dpzo.GaussianEvent(sigma)), n)
    assert acc.epsilon(1e-5).epsilon == ours.get_epsilon(1e-5)


def test_alphas_like_opacus_get_epsilon() -> None:
    history = [(1.1, 0.01, 1000)]
    acc = DpzoAccountant()
    acc.history = list(history)
    alphas = [2, 4, 8, 16, 32]
    o = RDPAccountant()
    o.history = list(history)
    assert acc.get_epsilon(1e-5, alphas=alphas) == pytest.approx(
        o.get_epsilon(1e-5, alphas=alphas), rel=1e-9)
    eps, order = acc.get_privacy_spent(delta=1e-5, alphas=alphas)
    eps_o, order_o = o.get_privacy_spent(delta=1e-5, alphas=alphas)
    assert order == order_o and eps == pytest.approx(eps_o, rel=1e-9)


def test_tight_accountants_not_above_opacus_prv() -> None:
    """Opacus's PRV accountant returns an upper end of its interval: dpzo's proven lower
    ends must not exceed it, and dpzo's upper ends are within 1% of it."""
    history = [(1.1, MNIST_Q, 3000)]
    o = PRVAccountant()
    o.history = list(history)
    eps_o = o.get_epsilon(1e-5)
    rdp = DpzoAccountant()
    rdp.history = list(history)
    for kind in ("pld", "prv"):
        acc = DpzoAccountant(kind)
        acc.history = list(history)
        e = acc.epsilon(1e-5)
        assert e.lower is not None and e.lower <= e.epsilon
        assert e.lower <= eps_o
        assert e.epsilon <= eps_o * 1.01
        assert acc.get_epsilon(1e-5) == e.epsilon
        assert e.epsilon < rdp.get_epsilon(1e-5)  # tight beats RDP here
    # PRV's error targets per call, as Opacus's PRVAccountant.get_epsilon takes them
    prv = DpzoAccountant("prv")
    prv.history = list(history)
    fine, coarse = prv.epsilon(1e-5), prv.epsilon(1e-5, eps_error=0.2)
    assert coarse.lower <= fine.lower <= fine.epsilon <= coarse.epsilon
    assert prv.get_epsilon(1e-5, eps_error=0.2) == coarse.epsilon
    with pytest.raises(dpzo.Error, match="eps_error"):
        rdp.get_epsilon(1e-5, eps_error=0.2)


def test_state_dict_round_trip_and_opacus_checkpoints() -> None:
    acc = DpzoAccountant()
    for _ in range(7):
        acc.step(noise_multiplier=1.2, sample_rate=0.02)
    sd = acc.state_dict()
    assert sd["mechanism"] == "dpzo_rdp" and sd["history"] == [(1.2, 0.02, 7)]
    back = DpzoAccountant()
    back.load_state_dict(sd)
    assert back.history == acc.history and back.get_epsilon(1e-6) == acc.get_epsilon(1e-6)
    # an Opacus RDP checkpoint carries the same history
    o = RDPAccountant()
    for _ in range(7):
        o.step(noise_multiplier=1.2, sample_rate=0.02)
    moved = DpzoAccountant("pld")
    moved.load_state_dict(o.state_dict())
    assert moved.history == o.history and len(moved) == 7
    with pytest.raises(dpzo.Error, match="gdp"):
        moved.load_state_dict({"history": [(1.0, 0.1, 3)], "mechanism": "gdp"})
    with pytest.raises(dpzo.Error, match="num_steps"):
        moved.load_state_dict({"history": [(1.0, 0.1, 2.5)], "mechanism": "rdp"})
    with pytest.raises(dpzo.Error):
        moved.load_state_dict({"history": [(1.0, 1.5, 2)], "mechanism": "rdp"})
    with pytest.raises(dpzo.Error, match="history"):
        moved.load_state_dict({"mechanism": "rdp"})
    assert moved.history == o.history  # a refused load changes nothing


def test_bad_inputs_raise_dpzo_error() -> None:
    acc = DpzoAccountant()
    with pytest.raises(dpzo.Error, match="noise_multiplier"):
        acc.step(noise_multiplier=True, sample_rate=0.01)
    with pytest.raises(dpzo.Error, match="NaN"):
        acc.step(noise_multiplier=float("nan"), sample_rate=0.01)
    with pytest.raises(dpzo.Error, match="1.5"):
        acc.step(noise_multiplier=1.0, sample_rate=1.5)  # the library's message
    assert acc.history == []
    acc.step(noise_multiplier=1.0, sample_rate=0.01)
    with pytest.raises(dpzo.Error, match="delta"):
        acc.get_epsilon(0.0)
    with pytest.raises(dpzo.Error, match="gdp"):
        DpzoAccountant("gdp")
    with pytest.raises(dpzo.Error, match="conversion"):
        DpzoAccountant("pld", conversion="standard")  # an RDP option
    pld = DpzoAccountant("pld")
    pld.step(noise_multiplier=1.0, sample_rate=0.01)
    with pytest.raises(dpzo.Error, match="alphas"):
        pld.get_epsilon(1e-5, alphas=[2, 3])


def test_get_noise_multiplier_against_opacus() -> None:
    """Opacus's sigma meets its target under dpzo's certified accountant too; dpzo's sigma
    is certified and no larger than Opacus's (dpzo's continuous orders are at least as
    good as Opacus's grid, and its bisection is tighter than epsilon_tolerance)."""
    for eps, q, steps in [(1.0, MNIST_Q, 3000), (3.0, 0.01, 1000), (8.0, 0.05, 500)]:
        kw = dict(target_epsilon=eps, target_delta=1e-5, sample_rate=q, steps=steps)
        s_o = opacus_get_noise_multiplier(**kw, epsilon_tolerance=0.01)
        s_d = get_noise_multiplier(**kw, epsilon_tolerance=0.01)
        e_o = dpzo.epsilon(noise_multiplier=s_o, sampling_rate=q, steps=steps, delta=1e-5)
        assert e_o.epsilon <= eps
        e_d = dpzo.epsilon(noise_multiplier=s_d, sampling_rate=q, steps=steps, delta=1e-5)
        assert e_d.epsilon <= eps
        assert s_d <= s_o * (1 + 1e-6)
        # tight: 0.1% less noise fails the target
        e_less = dpzo.epsilon(noise_multiplier=s_d * 0.999, sampling_rate=q, steps=steps,
                              delta=1e-5)
        assert e_less.epsilon > eps
    full = calibrate_noise_multiplier(target_epsilon=3.0, target_delta=1e-5, sample_rate=0.01,
                                      steps=1000)
    assert isinstance(full, dpzo.Calibration) and full.epsilon <= 3.0 and full.steps == 1000


def test_get_noise_multiplier_epochs_and_errors() -> None:
    # epochs 1 at q 0.1: 10 steps by both rules (dpzo rounds up, Opacus truncates)
    s = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.1, epochs=1)
    assert s == get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.1,
                                     steps=10)
    s_prv = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.1,
                                 steps=10, accountant="prv")
    assert s_prv < s  # the tight accountant needs less noise
    e = dpzo.epsilon(noise_multiplier=s_prv, sampling_rate=0.1, steps=10, delta=1e-5,
                     accountant="prv")
    assert e.epsilon <= 2.0
    base = dict(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.01)
    with pytest.raises(dpzo.Error, match="steps or epochs"):
        get_noise_multiplier(**base)
    with pytest.raises(dpzo.Error, match="steps or epochs"):
        get_noise_multiplier(**base, steps=10, epochs=1)
    with pytest.raises(dpzo.Error, match="gdp"):
        get_noise_multiplier(**base, steps=10, accountant="gdp")
    with pytest.raises(dpzo.Error, match="frobnicate"):
        get_noise_multiplier(**base, steps=10, frobnicate=1)
    with pytest.raises(dpzo.Error, match="epsilon_tolerance"):
        get_noise_multiplier(**base, steps=10, epsilon_tolerance=0.0)
    with pytest.raises(dpzo.Error, match="epsilon"):
        get_noise_multiplier(target_epsilon=-1.0, target_delta=1e-5, sample_rate=0.01,
                             steps=10)


def _tiny_training(engine, steps: int):
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    x = torch.randn(200, 4)
    y = (x[:, 0] > 0).long()
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(x, y), batch_size=20)
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=1.3, max_grad_norm=1.0)
    done = 0
    for xb, yb in loader:
        if done == steps:
            break
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
        done += 1
    return done, model


def test_privacy_engine_end_to_end(tmp_path) -> None:
    """The two supported seams: assign the accountant after constructing the engine, or
    register dpzo's names and pass one to PrivacyEngine. Opacus's checkpoints carry it."""
    import torch
    from opacus import PrivacyEngine

    engine = PrivacyEngine()
    engine.accountant = DpzoAccountant()
    steps, model = _tiny_training(engine, 5)
    assert steps == 5 and len(engine.accountant) == 5
    assert engine.accountant.history == [(1.3, 0.1, 5)]  # q = 1 / len(loader) = 20/200
    eps = engine.get_epsilon(1e-5)
    assert eps == dpzo.epsilon(noise_multiplier=1.3, sampling_rate=0.1, steps=5,
                               delta=1e-5).epsilon
    eps_o, _ = _opacus_rdp(engine.accountant.history, 1e-5)
    assert eps <= eps_o * (1 + 1e-12)
    path = tmp_path / "ckpt.pt"
    engine.save_checkpoint(path=path, module=model)
    saved = torch.load(path, weights_only=True)["privacy_accountant_state_dict"]
    resumed = DpzoAccountant()
    resumed.load_state_dict(saved)
    assert resumed.history == [(1.3, 0.1, 5)] and resumed.get_epsilon(1e-5) == eps

    register()
    register()  # again: nothing changes
    engine2 = PrivacyEngine(accountant="dpzo_pld")
    assert isinstance(engine2.accountant, DpzoAccountant)
    assert engine2.accountant.kind == "pld"
    _tiny_training(engine2, 3)
    e = engine2.accountant.epsilon(1e-5)
    assert engine2.get_epsilon(1e-5) == e.epsilon and e.lower <= e.epsilon
    sd = engine2.accountant.state_dict()
    assert sd["mechanism"] == "dpzo_pld"


def test_make_private_with_epsilon_through_the_registry() -> None:
    """make_private_with_epsilon calls Opacus's get_noise_multiplier with the engine's
    mechanism name; registered, that runs Opacus's bisection on dpzo's certified epsilon,
    so the chosen sigma meets the target under dpzo."""
    import torch
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    register()
    engine = PrivacyEngine(accountant="dpzo_rdp")
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(torch.randn(100, 4), torch.zeros(100).long()),
                        batch_size=10)
    _, opt, _ = engine.make_private_with_epsilon(
        module=model, optimizer=opt, data_loader=loader, target_epsilon=2.0,
        target_delta=1e-5, epochs=3, max_grad_norm=1.0)
    sigma = opt.noise_multiplier
    e = dpzo.epsilon(noise_multiplier=sigma, sampling_rate=0.1, steps=30, delta=1e-5)
    assert e.epsilon <= 2.0 and e.epsilon >= 2.0 - 0.01 - 1e-9
    assert math.isfinite(sigma) and sigma > 0


def _shuffled_run(loader_kwargs, passes, per_pass=None, accumulate=1, poisson=False):
    """Opacus's make_private on a loader of 600 examples in batches of 60; `passes` passes,
    each cut after `per_pass` batches (None: whole)."""
    import torch
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    data = TensorDataset(torch.randn(600, 8), torch.randint(0, 2, (600,)))
    model = torch.nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine()
    engine.accountant = DpzoAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus's notices
        model, opt, loader = engine.make_private(
            module=model, optimizer=opt, data_loader=DataLoader(data, **loader_kwargs),
            noise_multiplier=1.1, max_grad_norm=1.0, poisson_sampling=poisson)
    for _ in range(passes):
        for i, (x, y) in enumerate(loader):
            if per_pass is not None and i == per_pass:
                break
            torch.nn.functional.cross_entropy(model(x), y).backward()
            if (i + 1) % accumulate == 0:
                opt.step()
                opt.zero_grad()
    return engine


def test_shuffled_loader_is_accounted_as_run() -> None:
    """Issue 28 item 3: poisson_sampling=False with a shuffling loader was labelled with the
    Poisson proof (4.0237 here, 30 steps at q = 0.1). The accountant now sees the loader
    make_private runs and accounts one Gaussian release per pass (docs/audit.md section 3):
    3 passes, the 3-fold Gaussian at sigma 1.1, which dpzo's audit of the same shuffled run
    brackets."""
    from dpzo.opacus import UnprovenWarning

    engine = _shuffled_run(dict(batch_size=60, shuffle=True), passes=3)
    acc = engine.accountant
    assert acc.pipeline == "shuffled" and acc.proven and acc.releases == [1.1, 1.1, 1.1]
    assert len(acc) == 30 and acc.history == [(1.1, 0.1, 30)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnprovenWarning)
        eps = engine.get_epsilon(1e-5)
    gauss = dpzo.RdpAccountant().compose(dpzo.GaussianEvent(1.1), 3).epsilon(1e-5).epsilon
    poisson = dpzo.epsilon(noise_multiplier=1.1, sampling_rate=0.1, steps=30,
                           delta=1e-5).epsilon
    assert eps == gauss and eps > 1.9 * poisson
    v, = dpzo.audit(dpzo.Claim(epsilon=eps, delta=1e-5, noise_multiplier=1.1,
                               sampling="shuffled", batch_size=60, dataset_size=600, steps=30,
                               adjacency="zero-out"), calibrate=False)
    assert v.lower <= eps and v.upper <= eps * (1 + 1e-12)
    # fixed-order batches (no shuffle): the same bound, same passes
    fixed = _shuffled_run(dict(batch_size=60), passes=3).accountant
    assert fixed.pipeline == "shuffled" and fixed.get_epsilon(1e-5) == eps


def test_shuffled_passes_are_counted_not_assumed() -> None:
    """Passes cut short start new permutations: 3 passes of 5 batches are 3 releases, not
    ceil(15 / 10) = 2."""
    acc = _shuffled_run(dict(batch_size=60, shuffle=True), passes=3, per_pass=5).accountant
    assert len(acc) == 15 and acc.releases == [1.1, 1.1, 1.1]


def test_unproven_pipelines_warn() -> None:
    """A sampler that may draw an example twice per pass, or gradient accumulation over a
    shuffled loader, proves nothing: proven is False and get_epsilon warns."""
    import torch
    from dpzo.opacus import UnprovenWarning
    from torch.utils.data import RandomSampler

    sampler = RandomSampler(range(600), replacement=True)
    acc = _shuffled_run(dict(batch_size=60, sampler=sampler), passes=1).accountant
    assert acc.pipeline == "unknown" and not acc.proven
    with pytest.warns(UnprovenWarning, match="not a proven bound"):
        e = acc.get_epsilon(1e-5)
    assert e == dpzo.epsilon(noise_multiplier=1.1, sampling_rate=0.1, steps=10,
                             delta=1e-5).epsilon
    acc2 = _shuffled_run(dict(batch_size=60, shuffle=True), passes=1, accumulate=2).accountant
    assert acc2.pipeline == "shuffled" and not acc2.proven and "once per 2 batches" in \
        acc2._unproven
    with pytest.warns(UnprovenWarning):
        acc2.get_epsilon(1e-5)
    # Opacus's own Poisson loader: proven, no warning, the Poisson figure
    acc3 = _shuffled_run(dict(batch_size=60), passes=1, poisson=True).accountant
    assert acc3.pipeline == "poisson" and acc3.proven and acc3.releases == []
    assert torch is not None


def test_shuffled_state_round_trip(tmp_path) -> None:
    """Opacus's checkpoints (weights_only) carry the releases; a resumed accountant gives
    the same epsilon, and a state dict whose pipeline does not match its history is
    refused."""
    import torch

    engine = _shuffled_run(dict(batch_size=60, shuffle=True), passes=2)
    eps = engine.get_epsilon(1e-5)
    path = tmp_path / "ckpt.pt"
    torch.save({"privacy_accountant_state_dict": engine.accountant.state_dict()}, path)
    saved = torch.load(path, weights_only=True)["privacy_accountant_state_dict"]
    resumed = DpzoAccountant()
    resumed.load_state_dict(saved)
    assert resumed.releases == [1.1, 1.1] and resumed.get_epsilon(1e-5) == eps
    bad = dict(saved)
    bad["dpzo_pipeline"] = dict(saved["dpzo_pipeline"], releases=[])
    with pytest.raises(dpzo.Error, match="does not match its history"):
        DpzoAccountant().load_state_dict(bad)


def test_passes_are_counted_through_wrappers_and_open_passes_refused() -> None:
    """Review of item 3: passes were counted at the loader's __iter__, so Opacus's own
    BatchMemoryManager (a new DataLoader around the same batch sampler) folded 3 passes into
    one release (4.2395, called proven, where 8.0385 is the bound). They are counted at the
    sampler now; steps taken while two passes are open cannot be attributed: unproven."""
    import torch
    from opacus import PrivacyEngine
    from opacus.utils.batch_memory_manager import BatchMemoryManager
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    data = TensorDataset(torch.randn(600, 8), torch.randint(0, 2, (600,)))

    def engine_and_loader():
        model = torch.nn.Linear(8, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        engine = PrivacyEngine()
        engine.accountant = DpzoAccountant()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, opt, loader = engine.make_private(
                module=model, optimizer=opt,
                data_loader=DataLoader(data, batch_size=60, shuffle=True),
                noise_multiplier=1.1, max_grad_norm=1.0, poisson_sampling=False)
        return engine, model, opt, loader

    def step(model, opt, x, y):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    engine, model, opt, loader = engine_and_loader()
    for _ in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with BatchMemoryManager(data_loader=loader, max_physical_batch_size=60,
                                    optimizer=opt) as wrapped:
                for x, y in wrapped:
                    step(model, opt, x, y)
    acc = engine.accountant
    assert len(acc) == 30 and acc.releases == [1.1, 1.1, 1.1] and acc.proven
    gauss = dpzo.RdpAccountant().compose(dpzo.GaussianEvent(1.1), 3).epsilon(1e-5).epsilon
    assert engine.get_epsilon(1e-5) == gauss

    engine, model, opt, loader = engine_and_loader()
    for (x, y), _ in zip(loader, loader):
        step(model, opt, x, y)
    assert not engine.accountant.proven and "2 passes open" in engine.accountant._unproven
