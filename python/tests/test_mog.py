# SPDX-License-Identifier: Apache-2.0
"""dp_accounting's MixtureOfGaussiansDpEvent and TruncatedSubsampledGaussianDpEvent (issue
30), as dpzo events and through the dp_accounting drop-in.

Truths: one mixture-of-Gaussians release's exact delta(eps) is the larger hockey-stick
divergence of the pair (either direction), integrated here with mpmath from the densities;
its epsilon(delta) by bisection. dpzo's proven epsilon is never below it. For the truncated
sampled Gaussian the truth is unknown; one concrete dataset pair (others at -1, the
differing record at +1, one dimension) gives a lower bound on its Renyi divergences, which
tests/test_mog.c checks dpzo's bound against; here dpzo's epsilon is checked against
dp_accounting's PLD answer (dpzo's RDP bound is the looser) and the untruncated case; the
PLD/PRV sources of both are tested in test_pld_mog.py and test_pld_tsg.py.
"""
from __future__ import annotations

import pytest

import dpzo

dp_accounting = pytest.importorskip("dp_accounting")
mp = pytest.importorskip("mpmath")

from dp_accounting import dp_event as E  # noqa: E402
from dp_accounting.pld import PLDAccountant  # noqa: E402
from dp_accounting.privacy_accountant import NeighboringRelation  # noqa: E402

from dpzo.dp_accounting import DpzoAccountant, UnsupportedDpEventError  # noqa: E402

ADD_REMOVE = NeighboringRelation.ADD_OR_REMOVE_ONE
REPLACE_ONE = NeighboringRelation.REPLACE_ONE
SPECIAL = NeighboringRelation.REPLACE_SPECIAL


def _bisect(f, lo, hi, iters=200):
    """the root of the increasing f in [lo, hi]"""
    for _ in range(iters):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def mog_exact_eps(sigma, cs, ps, delta):
    """epsilon(delta) of one release. In units of sigma the privacy loss
    L(y) = log sum_i p_i exp(d_i y - d_i^2 / 2) increases (d_i >= 0), so each direction's
    hockey-stick divergence is Gaussian tails at the root of L = eps (or L = -eps):
    forward sum_i p_i Qbar(y - d_i) - e^eps Qbar(y), reverse Phi(y) - e^eps sum_i p_i
    Phi(y - d_i); epsilon(delta) by bisection on their maximum."""
    with mp.workdps(30):
        ds = [mp.mpf(c) / sigma for c in cs]
        ws = [mp.mpf(p) for p in ps]
        L = lambda y: mp.log(mp.fsum(w * mp.e ** (d * y - d * d / 2) for w, d in zip(ws, ds)))
        inf_l = mp.log(sum(w for w, d in zip(ws, ds) if d == 0)) if min(ds) == 0 else -mp.inf
        span = 60 + 10 * max(ds)

        def dl(eps):
            ee = mp.e ** eps
            y = _bisect(lambda t: L(t) - eps, -span * 10, span * 10)
            fwd = mp.fsum(w * mp.ncdf(d - y) for w, d in zip(ws, ds)) - ee * mp.ncdf(-y)
            rev = mp.mpf(0)
            if -eps > inf_l:
                y = _bisect(lambda t: L(t) + eps, -span * 10, span * 10)
                rev = mp.ncdf(y) - ee * mp.fsum(w * mp.ncdf(y - d) for w, d in zip(ws, ds))
            return max(fwd, rev)

        return float(_bisect(lambda e: delta - dl(e), mp.mpf(0), mp.mpf(50), 60))


MOG_CASES = [(1.0, [0.0, 1.0], [0.9, 0.1]), (0.8, [0.0, 0.5, 1.0], [0.5, 0.3, 0.2])]


@pytest.mark.parametrize("sigma,cs,ps", MOG_CASES)
def test_mog_epsilon_above_truth(sigma, cs, ps):
    delta = 1e-3
    truth = mog_exact_eps(sigma, cs, ps, delta)
    ev = E.MixtureOfGaussiansDpEvent(sigma, cs, ps)
    ours = DpzoAccountant().compose(ev).epsilon(delta)
    pld = PLDAccountant()
    pld.compose(ev)
    theirs = pld.get_epsilon(delta)
    print(f"MoG {sigma} {cs} {ps}: truth {truth:.6g}, dp_accounting PLD {theirs:.6g}, "
          f"dpzo RDP {ours.epsilon:.6g}")
    assert ours.epsilon >= truth
    assert theirs <= truth * 1.01 + 1e-3  # dp_accounting's PLD is close to the truth here
    if sigma != 1.0:
        return
    # the PLD/PRV accountants compose the mixture's own loss distribution (test_pld_mog.py)
    p = DpzoAccountant("pld").compose(ev).epsilon(delta)
    assert not p.fallback
    assert p.lower <= truth * (1 + 1e-9) and truth * (1 - 1e-9) <= p.epsilon <= truth * (1 + 1e-3)


def test_mog_is_sampled_gaussian():
    """c = {0, 1}, p = {1 - q, q}: dpzo's sampled-Gaussian answer, within the quadrature's
    certified slack."""
    q, sigma, steps = 0.02, 1.0, 200
    a = dpzo.RdpAccountant().compose(dpzo.MixtureOfGaussiansEvent(sigma, [0, 1], [1 - q, q]),
                                     steps).epsilon(1e-5)
    b = dpzo.RdpAccountant().compose(
        dpzo.PoissonSampledEvent(q, dpzo.GaussianEvent(sigma)), steps).epsilon(1e-5)
    assert a.epsilon == pytest.approx(b.epsilon, rel=2e-3)


def test_mog_relations_and_checks():
    ev = E.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.5])
    assert DpzoAccountant(neighboring_relation=ADD_REMOVE).supports(ev)
    assert DpzoAccountant(neighboring_relation=SPECIAL).supports(ev)
    acc = DpzoAccountant(neighboring_relation=REPLACE_ONE)
    assert not acc.supports(ev)
    with pytest.raises(UnsupportedDpEventError, match="ADD_OR_REMOVE_ONE"):
        acc.compose(ev)
    # nothing released (dp_accounting's special case), and no noise
    assert DpzoAccountant().compose(E.MixtureOfGaussiansDpEvent(1.0, [0.0], [1.0])) \
        .get_epsilon(1e-5) == 0.0
    assert DpzoAccountant().compose(E.MixtureOfGaussiansDpEvent(0.0, [1.0], [1.0])) \
        .get_epsilon(1e-5) == float("inf")
    # bad values: Python's type checks, then the library's messages naming the parameter
    with pytest.raises(dpzo.Error, match="same length"):
        dpzo.MixtureOfGaussiansEvent(1.0, [0.0, 1.0], [1.0])
    with pytest.raises(dpzo.Error, match=r"sensitivities\[1\]"):
        dpzo.MixtureOfGaussiansEvent(1.0, [0.0, "x"], [0.5, 0.5])
    with pytest.raises(dpzo.Error, match="sequence"):
        dpzo.MixtureOfGaussiansEvent(1.0, 1.0, [1.0])
    for args, what in [((1.0, [0.0, -1.0], [0.5, 0.5]), r"sensitivities\[1\]"),
                       ((1.0, [0.0, 1.0], [0.5, 0.4]), "sum to 1"),
                       ((-1.0, [1.0], [1.0]), "standard_deviation"),
                       ((1.0, [1.0], [1.5]), r"sampling_probs\[0\]"),
                       ((1.0, [], []), "components")]:
        with pytest.raises(dpzo.Error, match=what):
            dpzo.MixtureOfGaussiansEvent(*args).describe()
        assert not DpzoAccountant().supports(E.MixtureOfGaussiansDpEvent(*args))
    assert dpzo.MixtureOfGaussiansEvent(2, [0, 1], [0.25, 0.75]).describe() == \
        "mixture_of_gaussians(sigma=2, [0:0.25, 1:0.75])"


def test_tsg_epsilon():
    # a realistic batch: above dp_accounting's PLD estimate (RDP is the looser method)
    ev = E.TruncatedSubsampledGaussianDpEvent(60000, 256 / 60000, 320, 1.1)
    ours = DpzoAccountant().compose(ev, 100).get_epsilon(1e-5)
    pld = PLDAccountant()
    pld.compose(ev, 100)
    assert ours >= pld.get_epsilon(1e-5)
    # never truncated (B > n): the Poisson-sampled Gaussian's epsilon exactly
    a = DpzoAccountant().compose(E.TruncatedSubsampledGaussianDpEvent(100, 0.1, 101, 1.3), 10)
    b = DpzoAccountant().compose(E.PoissonSampledDpEvent(0.1, E.GaussianDpEvent(1.3)), 10)
    assert a.get_epsilon(1e-5) == b.get_epsilon(1e-5)


def test_tsg_relations_and_checks():
    ev = E.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 20, 1.0)
    assert DpzoAccountant().supports(ev)
    for rel in (REPLACE_ONE, SPECIAL):
        acc = DpzoAccountant(neighboring_relation=rel)
        assert not acc.supports(ev)
        with pytest.raises(UnsupportedDpEventError, match="ADD_OR_REMOVE_ONE"):
            acc.compose(ev)
    # PRV: the dominating pair's upper end (test_pld_tsg.py), at most RDP's; the lower end a
    # concrete instance's
    p = DpzoAccountant("prv").compose(ev, 10).epsilon(1e-5)
    r = DpzoAccountant().compose(ev, 10).epsilon(1e-5)
    assert not p.fallback and "dominating pair" in p.reason
    assert 0.0 < p.lower <= float(p) <= float(r)
    for args, what in [((1000, 1.5, 20, 1.0), "sampling_probability"),
                       ((1000, 0.1, 20, -1.0), "noise_multiplier")]:
        with pytest.raises(dpzo.Error, match=what):
            dpzo.TruncatedSubsampledGaussianEvent(*args).describe()
    with pytest.raises(dpzo.Error, match="dataset_size"):
        dpzo.TruncatedSubsampledGaussianEvent(-1, 0.1, 20, 1.0)
    assert DpzoAccountant().compose(E.TruncatedSubsampledGaussianDpEvent(1000, 0.0, 20, 1.0)) \
        .get_epsilon(1e-5) == 0.0
    assert DpzoAccountant().compose(E.TruncatedSubsampledGaussianDpEvent(1000, 0.1, 20, 0.0)) \
        .get_epsilon(1e-5) == float("inf")
