# SPDX-License-Identifier: Apache-2.0
"""examples/plot_accuracy_eps.py (docs/results.md, issue 31): the points it plots are the
runs' means and sample standard deviations, the public-only reference is the step-0
accuracy of the pre-trained runs (one per seed), MiniLM's non-private methods are reference
lines, and the three files are written whole."""
import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "plot_accuracy_eps.py"


def _plot(tmp_path, *args):
    out = tmp_path / "fig"
    proc = subprocess.run([sys.executable, str(SCRIPT), *args, "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    return proc, out


def _points(out):
    return {(r["method"], r["epsilon"]): r for r in json.loads(out.with_suffix(".json").read_text())}


def test_summaries_points_and_public_reference(tmp_path):
    runs = lambda accs, step0=None: [  # noqa: E731
        dict(test_accuracy=a, seed=i + 1, **({"step0_accuracy": step0[i]} if step0 else {}))
        for i, a in enumerate(accs)]
    summaries = {
        "DPZero (zeroth-order, C = 20)|0.1": runs([0.70, 0.72, 0.74]),
        "PAZO-S (public + private ZO)|0.1": runs([0.82, 0.83, 0.81], [0.80, 0.81, 0.79]),
        "DPMD + public pre-training (first-order, C = 1)|3.0": runs([0.79, 0.80, 0.78],
                                                                     [0.80, 0.81, 0.79]),
        "SGD (first-order, non-private)|None": runs([0.85, 0.86, 0.87]),
    }
    path = tmp_path / "summaries.json"
    path.write_text(json.dumps(summaries))
    proc, out = _plot(tmp_path, "--summaries", str(path))
    assert proc.returncode == 0, proc.stderr
    pts = _points(out)
    assert pts[("dpzero", 0.1)]["mean"] == pytest.approx(72.0)
    assert pts[("dpzero", 0.1)]["sd"] == pytest.approx(statistics.stdev([70.0, 72.0, 74.0]))
    assert pts[("pazo-s", 0.1)]["n"] == 3 and pts[("dpmd", 3.0)]["mean"] == pytest.approx(79.0)
    assert pts[("public", None)]["mean"] == pytest.approx(80.0)      # seeds 1-3: 80, 81, 79
    assert pts[("sgd", None)]["mean"] == pytest.approx(86.0)
    for ext in (".png", ".svg", ".json"):
        assert out.with_suffix(ext).stat().st_size > 0
    assert not list(tmp_path.glob("*.tmp*"))
    # pre-trained runs of one seed that start from different accuracies are refused
    summaries["DPMD + public pre-training (first-order, C = 1)|3.0"][0]["step0_accuracy"] = 0.5
    path.write_text(json.dumps(summaries))
    proc, _ = _plot(tmp_path, "--summaries", str(path))
    assert proc.returncode != 0 and "different accuracies" in proc.stderr


def test_jsonl_non_private_methods_are_references(tmp_path):
    lines = [dict(method="pazo-m", epsilon_target=0.1, test_accuracy=a) for a in (0.76, 0.77)]
    lines += [dict(method="public-only", epsilon_target=3.0, test_accuracy=0.75),
              dict(method="non-private", epsilon_target=3.0, test_accuracy=0.79)]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    proc, out = _plot(tmp_path, "--jsonl", str(path), "--section", "minilm")
    assert proc.returncode == 0, proc.stderr
    pts = _points(out)
    assert pts[("pazo-m", 0.1)]["mean"] == pytest.approx(76.5)
    assert pts[("public", None)]["mean"] == pytest.approx(75.0)
    assert pts[("adam", None)]["mean"] == pytest.approx(79.0)
    assert ("public-only", 3.0) not in pts and ("non-private", 3.0) not in pts
