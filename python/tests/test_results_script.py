# SPDX-License-Identifier: Apache-2.0
"""scripts/results.py's helpers that scripts/minilm_results.py shares: the learning-rate
choice on validation accuracy and the atomic JSON write."""
import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import results  # noqa: E402


def _c(m, acc):
    return {"multiplier": m, "lr": 0.01 * m, "val": acc}


def test_choose_best_and_the_next_rate_beyond_an_end():
    best, beyond = results.choose([_c(3, 0.7), _c(1 / 3, 0.6), _c(1, 0.65)], "val")
    assert best["multiplier"] == 3 and beyond == 9          # best at the top: try x 3
    best, beyond = results.choose([_c(1, 0.6), _c(1 / 3, 0.7), _c(3, 0.5)], "val")
    assert best["multiplier"] == 1 / 3 and beyond == pytest.approx(1 / 9)
    best, beyond = results.choose([_c(1 / 3, 0.6), _c(1, 0.7), _c(3, 0.6)], "val")
    assert best["multiplier"] == 1 and beyond is None       # inside the grid: done
    # a tie goes to the multiplier nearer 1, and that is no end to extend past
    best, beyond = results.choose([_c(1 / 3, 0.7), _c(1, 0.7), _c(3, 0.7)], "val")
    assert best["multiplier"] == 1 and beyond is None
    best, beyond = results.choose([_c(1, 0.7)], "val")      # one candidate: nothing beyond
    assert best["multiplier"] == 1 and beyond is None


def test_write_json_replaces_a_file_and_refuses_a_fifo(tmp_path):
    p = tmp_path / "tuning.json"
    results.write_json(str(p), {"a": 1})
    results.write_json(str(p), {"a": 2})
    assert json.loads(p.read_text()) == {"a": 2}
    assert sorted(os.listdir(tmp_path)) == ["tuning.json"]  # no temporary file left
    f = tmp_path / "fifo.json"
    os.mkfifo(f)
    with pytest.raises(SystemExit, match="not a regular file"):
        results.write_json(str(f), {})
    assert sorted(os.listdir(tmp_path)) == ["fifo.json", "tuning.json"]
