# SPDX-License-Identifier: Apache-2.0
"""dpzo.audit: the repository's claim files give the verdicts and numbers of `dpzo audit --json`;
Claim objects, claim dicts and profiles give those of the same claims in files and flags;
the published verdicts of docs/audit.md; attack lower bounds against the mpmath values of
tests/ref/audit_values.h; bad claims."""
from __future__ import annotations

import ast
import json
import math
import pathlib
import re
import subprocess
from typing import Any, Dict, List, Optional

import pytest

import dpzo

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cli_audit(cli_path: str, *args: str) -> List[Dict[str, Any]]:
    res = subprocess.run([cli_path, "audit", *args, "--json"], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    claims: List[Dict[str, Any]] = json.loads(res.stdout)["claims"]
    return claims


def num(x: Optional[float]) -> Any:
    """A Python field as the CLI's JSON writes it (infinity as the string "inf")."""
    if x is not None and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def same_bounds(b: dpzo.AuditBounds, j: Dict[str, Any]) -> None:
    assert num(b.lower) == j["lower"] and num(b.upper) == j["upper"]
    assert b.lower_from == j["lower_from"] and b.upper_from == j["upper_from"]
    for k in ("rdp", "rdp_order", "pld_lower", "pld_upper", "pld_grid", "prv_lower",
              "prv_upper"):
        assert num(getattr(b, k)) == j[k], k
    assert b.lower_on_realised_pair == j["lower_on_realised_pair"]


def same(v: dpzo.Verdict, j: Dict[str, Any]) -> None:
    assert v.name == j["name"] and v.source == j["source"] and v.noise == j["noise"]
    if v.noise == "gaussian":
        assert v.noise_multiplier == j["noise_multiplier"]
    assert v.sampling == j["sampling"] and v.steps == j["steps"]
    assert v.claimed_epsilon == j["epsilon"] and v.delta == j["delta"]
    assert v.accounted == j["accounted"] and v.verdict == j["verdict"], v.name
    assert num(v.lower) == j["lower"] and num(v.upper) == j["upper"]
    same_bounds(v.bounds, j["bounds"])
    for k in ("stated_epsilon", "sigma_needed", "sigma_needed_tight", "sigma_needed_rdp"):
        assert num(getattr(v, k)) == j[k], k
    assert list(v.mismatches) == j["mismatches"] and list(v.notes) == j["notes"]
    if j["pipeline"] is None:
        assert v.pipeline is None
    else:
        assert v.pipeline is not None
        assert v.pipeline.sampling == j["pipeline"]["sampling"]
        assert v.pipeline.verdict == j["pipeline"]["verdict"]
        assert v.pipeline.accounted == j["pipeline"]["accounted"]
        same_bounds(v.pipeline.bounds, j["pipeline"]["bounds"])
    if j["attack"] is None:
        assert v.attack is None
    else:
        assert v.attack is not None and v.attack.kind == j["attack"]["kind"]
        assert v.attack.epsilon_lower == j["attack"]["epsilon_lower"]
        assert v.attack.exceeds_upper == j["attack"]["exceeds_upper"]


@pytest.fixture(scope="module")
def pazo(cli_path: str) -> Any:
    """docs/audits/pazo.json audited by Python and by the CLI (without the calibration)."""
    f = ROOT / "docs" / "audits" / "pazo.json"
    return dpzo.audit(f, calibrate=False), cli_audit(cli_path, str(f), "--no-calibrate")


@pytest.mark.parametrize("files,flags", [
    (["docs/examples/claim-lmo-sst2.json", "docs/examples/profile-gaussian.json"], []),
    (["docs/audits/lmo-dp-table2.json"], ["--no-calibrate"]),
    (["docs/audits/tf-privacy-mnist.json"], ["--no-calibrate", "--no-prv"]),
])
def test_claim_files_match_cli(files: List[str], flags: List[str], cli_path: str) -> None:
    kw: Dict[str, Any] = {}
    if "--no-calibrate" in flags:
        kw["calibrate"] = False
    if "--no-prv" in flags:
        kw["prv"] = False
    got = dpzo.audit([ROOT / f for f in files], **kw)
    want = cli_audit(cli_path, *[str(ROOT / f) for f in files], *flags)
    assert len(got) == len(want) >= 2
    for v, j in zip(got, want):
        same(v, j)


def test_pazo_matches_cli(pazo: Any) -> None:
    got, want = pazo
    assert len(got) == len(want) == 8
    for v, j in zip(got, want):
        same(v, j)


def test_published_verdicts(pazo: Any) -> None:
    """docs/audit.md 5.5: PAZO's claims 6 and 7 are VIOLATED, as stated and as run; the
    others HOLD as stated (Poisson) and are UNDETERMINED with shuffled batches."""
    vs = pazo[0]
    assert [v.verdict for v in vs] == ["HOLDS"] * 5 + ["VIOLATED"] * 2 + ["HOLDS"]
    for v in vs:
        assert v.lower <= v.upper
        assert (v.upper <= v.claimed_epsilon) == v.holds
        assert (v.lower > v.claimed_epsilon) == v.violated
        assert v.pipeline is not None
        assert v.pipeline.verdict == ("VIOLATED" if v.violated else "UNDETERMINED")
        assert "poisson-for-fixed" in v.mismatches


def test_claim_objects() -> None:
    """The reviewer's example of docs/audit.md section 1, as a Claim."""
    c = dpzo.Claim(epsilon=1, delta=1e-5, noise_multiplier=2.1, sampling="poisson",
                   batch_size=64, dataset_size=100000, epochs=100)
    v, = dpzo.audit(c)
    assert v.verdict == "HOLDS" and v.steps == 156250 and v.adjacency == "add-remove"
    # PRV's interval (its mesh, the same at every delta since issue 28, item 4)
    assert math.floor(v.lower * 1e8) / 1e8 == 0.43762843      # printed rounded down
    assert math.ceil(v.upper * 1e8) / 1e8 == 0.44551156       # printed rounded up
    assert v.sigma_needed is not None and math.ceil(v.sigma_needed * 1e5) / 1e5 == 1.15849
    assert v.mismatches == ("delta-large",) and v.pipeline is None
    r, = dpzo.audit(dpzo.Claim(epsilon=1, delta=1e-5, noise_multiplier=2.1, sampling="poisson",
                               batch_size=64, dataset_size=100000, epochs=100,
                               pipeline="shuffled"), calibrate=False)
    assert r.mismatches == ("poisson-for-fixed", "delta-large")
    assert r.pipeline is not None and r.pipeline.verdict == "UNDETERMINED"
    assert math.floor(r.pipeline.lower * 1e8) / 1e8 == 0.41492055
    # 31.149095 before single steps were read off their tails (docs/accountant.md 6.5)
    assert math.ceil(r.pipeline.upper * 1e6) / 1e6 == 31.148987
    assert r.sigma_needed is None
    # the same claim with a smaller epsilon than its proven lower bound is VIOLATED
    w, = dpzo.audit(dpzo.Claim(epsilon=0.4, delta=1e-5, noise_multiplier=2.1,
                               sampling_rate=64 / 100000, steps=156250), calibrate=False)
    assert w.verdict == "VIOLATED" and w.lower > 0.4


def test_threshold_test_lower_end() -> None:
    """Issue 28 item 5: at a noise where the PLD does not fit in memory, fixed batches get a
    proven lower end from the threshold test (mpmath's supremum over thresholds: 50045776.6224178854,
    tests/ref/audit_lower_values.h), and the claim that was UNDETERMINED [0, 2.0e11] is
    VIOLATED; the same run's CLI JSON says so too."""
    c = dpzo.Claim(epsilon=1, delta=1e-5, noise_multiplier=1e-4, sampling="fixed",
                   batch_size=256, dataset_size=60000, steps=1000)
    v, = dpzo.audit(c, calibrate=False, prv=False)
    assert v.verdict == "VIOLATED"
    assert v.bounds.lower_from == "test" and v.bounds.lower_on_realised_pair
    assert 50045776.622417885 * (1 - 1e-3) <= v.lower <= 50045776.622417885
    assert v.lower <= v.upper and "no-lower" not in v.mismatches


def test_claim_equals_file(cli_path: str, tmp_path: pathlib.Path) -> None:
    # the LMO claim of docs/examples/claim-lmo-sst2.json, as a Claim and as a dict
    f = ROOT / "docs" / "examples" / "claim-lmo-sst2.json"
    d = json.loads(f.read_text())
    m = d["mechanism"]
    lmo = dpzo.Lmo(**{k: v for k, v in m.items() if k != "noise"})
    c = dpzo.Claim(epsilon=0.16, delta=1e-10, lmo=lmo, sampling="poisson", batch_size=2048,
                   dataset_size=67350, steps=192, name=d["name"], source=d["source"])
    a, b, e = dpzo.audit([c, d, f])
    assert a == b == e
    assert a.noise == "lmo" and a.lmo == lmo and a.verdict == "UNDETERMINED"
    assert "no-lower" in a.mismatches and a.lower == 0
    assert a.upper == dpzo.lmo_epsilon(lmo, delta=1e-10, sampling_rate=2048 / 67350,
                                       steps=192).epsilon
    # a profile is a claim: as an object, as a file, and as a Claim's mechanism
    p = dpzo.Profile.load(ROOT / "docs" / "examples" / "profile-gaussian.json")
    pv, fv = dpzo.audit([p, ROOT / "docs" / "examples" / "profile-gaussian.json"],
                        calibrate=False, prv=False)
    assert dataclasses_equal_but(pv, fv, "name", "source")
    assert pv.verdict == "HOLDS" and pv.claimed_epsilon == p.epsilon
    cv, = dpzo.audit(dpzo.Claim(epsilon=3, delta=1e-5,
                                profile=ROOT / "docs" / "examples" / "profile-gaussian.json",
                                sampling_rate=0.01, steps=1000), calibrate=False, prv=False)
    assert cv.noise_multiplier == p.noise_multiplier and cv.verdict == "HOLDS"
    assert cv.upper == pv.upper


def dataclasses_equal_but(a: Any, b: Any, *skip: str) -> bool:
    import dataclasses

    return dataclasses.replace(a, **{k: "" for k in skip}) == \
        dataclasses.replace(b, **{k: "" for k in skip})


def counts_refs() -> List[List[Any]]:
    text = re.sub(r"/\*.*?\*/", "", (ROOT / "tests" / "ref" / "audit_values.h").read_text(),
                  flags=re.S)
    m = re.search(r"COUNTS_REF\[\]\s*=\s*(\{.*?\});", text, flags=re.S)
    assert m
    rows: List[List[Any]] = ast.literal_eval(m.group(1).replace("{", "[").replace("}", "]"))
    return rows


def test_attack_bounds_against_mpmath(cli_path: str) -> None:
    """An attack on a claim's run: its epsilon lower bound is the membership-inference bound
    (tests/ref/make_audit_reference.py, 50 digits), never above it (Clopper-Pearson widened
    outward by 1e-9 relative), and equal to `dpzo audit ... --tp ...`'s."""
    rows = counts_refs()
    assert len(rows) >= 4
    for tp, fp, tn, fn, delta, conf, eps, _, _ in rows:
        c = dpzo.Claim(epsilon=1, delta=1e-5, noise_multiplier=1.0, sampling_rate=0.01,
                       steps=100, attack={"tp": tp, "fp": fp, "tn": tn, "fn": fn,
                                          "confidence": conf, "delta": delta})
        v, = dpzo.audit(c, calibrate=False, prv=False)
        assert v.attack is not None and v.attack.kind == "membership-inference"
        assert eps * (1 - 1e-7) <= v.attack.epsilon_lower <= eps * (1 + 1e-15)
        assert v.attack.exceeds_upper == (v.attack.epsilon_lower > v.upper)
    tp, fp, tn, fn = rows[0][:4]
    j, = cli_audit(cli_path, "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps",
                   "100", "--epsilon", "1", "--delta", "1e-5", "--tp", str(tp), "--fp",
                   str(fp), "--tn", str(tn), "--fn", str(fn), "--no-calibrate", "--no-prv")
    v, = dpzo.audit(dpzo.Claim(epsilon=1, delta=1e-5, noise_multiplier=1.0, sampling_rate=0.01,
                               steps=100, attack={"tp": tp, "fp": fp, "tn": tn, "fn": fn}),
                    calibrate=False, prv=False)
    same(dataclasses_replace_name(v, j["name"], j["source"]), j)


def dataclasses_replace_name(v: dpzo.Verdict, name: str, source: str) -> dpzo.Verdict:
    import dataclasses

    return dataclasses.replace(v, name=name, source=source)


def test_bad_claims(tmp_path: pathlib.Path) -> None:
    base: Dict[str, Any] = dict(epsilon=1, delta=1e-5, sampling_rate=0.01, steps=100)
    with pytest.raises(dpzo.Error, match="exactly one mechanism"):
        dpzo.audit(dpzo.Claim(**base))
    with pytest.raises(dpzo.Error, match="exactly one mechanism"):
        dpzo.audit(dpzo.Claim(noise_multiplier=1.0, lmo=dpzo.Lmo(gamma_weight=1), **base))
    with pytest.raises(dpzo.Error, match="steps"):
        dpzo.audit(dpzo.Claim(epsilon=1, delta=1e-5, noise_multiplier=1.0, sampling_rate=0.01))
    with pytest.raises(dpzo.Error, match="epsilon"):
        dpzo.audit(dpzo.Claim(noise_multiplier=1.0, **{**base, "epsilon": True}))
    with pytest.raises(dpzo.Error, match="sampling"):
        dpzo.audit(dpzo.Claim(noise_multiplier=1.0, sampling="bernoulli", steps=10, epsilon=1,
                              delta=1e-5))
    with pytest.raises(dpzo.Error, match="delta"):
        dpzo.audit(dpzo.Claim(noise_multiplier=1.0, **{**base, "delta": 2.0}))
    d = json.loads((ROOT / "docs" / "examples" / "claim-lmo-sst2.json").read_text())
    d["colour"] = "blue"
    with pytest.raises(dpzo.Error, match="colour") as e:
        dpzo.audit(d)
    assert e.value.status_name == "parse error"
    with pytest.raises(dpzo.Error):
        dpzo.audit(str(tmp_path / "missing.json"))
    with pytest.raises(dpzo.Error, match="no claim"):
        dpzo.audit([])
    with pytest.raises(dpzo.Error, match="grid"):
        dpzo.audit(d, grid=0)
    with pytest.raises(dpzo.Error, match="claim 1 must be"):
        dpzo.audit([42])  # type: ignore[list-item]
    # issue 28, item 7 for claims: the authors' orders bound the audit's work (two orders
    # near 1e6 took 28.5 s, an arange of 1e6 orders hours); refused at once, within passes
    for orders in ([999999.5, 999998.5], [2 + 0.01 * i for i in range(20000)],
                   {"from": 1.5, "to": 1000000.5, "step": 1.0}):
        with pytest.raises(dpzo.Error, match="units of work.*limit of 1000000"):
            dpzo.audit(dpzo.Claim(noise_multiplier=1.0, accountant={"orders": orders}, **base),
                       calibrate=False)
    v, = dpzo.audit(dpzo.Claim(noise_multiplier=1.0, accountant={"orders": [2.0, 99749.5]},
                               **base), calibrate=False, prv=False)
    assert v.stated_epsilon is not None
