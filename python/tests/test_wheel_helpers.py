# SPDX-License-Identifier: Apache-2.0
"""The wheel's helpers in the source tree: dpzo.data_file / data_files (python/dpzo/_data.py)
and the `dpzo` console script's entry point (python/dpzo/_cli.py). The installed wheel itself
is tested by tests/wheel/run.sh (`make test-wheel`)."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

import dpzo
from dpzo import _cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG_PARENT = str(pathlib.Path(dpzo.__file__).resolve().parents[1])


def test_data_file_finds_the_docs_copy_in_a_source_tree() -> None:
    p = dpzo.data_file("examples/profile-gaussian.json")
    # installed (dpzo/data) or the source tree's docs/: the same bytes either way
    assert pathlib.Path(p).read_bytes() == (ROOT / "docs/examples/profile-gaussian.json").read_bytes()
    assert dpzo.Profile.load(p).epsilon == 2.999997518858909
    names = dpzo.data_files()
    want = sorted(f"{d}/{f.name}" for d in ("examples", "audits")
                  for f in (ROOT / "docs" / d).glob("*.json"))
    assert names == want and len(names) == 19  # issue 30 added 8 (event files, audits)
    for n in names:
        assert os.path.isfile(dpzo.data_file(n))


@pytest.mark.parametrize("bad", ["", "/etc/passwd", "../README.md", "examples/../../README.md"])
def test_data_file_rejects_paths_outside(bad: str) -> None:
    with pytest.raises(ValueError):
        dpzo.data_file(bad)


def test_data_file_unknown_name() -> None:
    with pytest.raises(FileNotFoundError, match="no-such.json"):
        dpzo.data_file("examples/no-such.json")


def _script(args: list[str], cli: str | None) -> subprocess.CompletedProcess[str]:
    """python -c 'dpzo._cli.main(args)' in a child (main replaces its process)."""
    env = dict(os.environ, PYTHONPATH=PKG_PARENT)
    env.pop("DPZO_CLI", None)
    if cli is not None:
        env["DPZO_CLI"] = cli
    code = f"import sys, dpzo._cli as c; sys.exit(c.main({args!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)


def test_console_script_runs_the_cli(cli_path: str) -> None:
    q = _script(["epsilon", "--noise-multiplier", "1.1", "--sampling-rate",
                 "0.004266666666666667", "--steps", "14063", "--delta", "1e-5", "--json"],
                cli_path)
    assert q.returncode == 0, q.stderr
    r = dpzo.epsilon(noise_multiplier=1.1, sampling_rate=256 / 60000, steps=14063, delta=1e-5)
    assert json.loads(q.stdout)["epsilon"] == r.epsilon == 2.596641914856823
    v = _script(["--version"], cli_path)
    assert v.returncode == 0 and v.stdout.startswith(f"dpzo {dpzo.__version__}")


def test_console_script_passes_the_exit_status(cli_path: str) -> None:
    q = _script(["epsilon", "--noise-multiplier", "-1", "--sampling-rate", "0.01", "--steps",
                 "3", "--delta", "1e-5"], cli_path)
    assert q.returncode == 2
    assert "--noise-multiplier must be >= 0" in q.stderr


def test_console_script_without_a_cli(tmp_path: pathlib.Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    missing = str(tmp_path / "no-dpzo")
    q = _script(["--help"], missing)
    assert q.returncode == 127
    assert "the command line was not found" in q.stderr and missing in q.stderr
    monkeypatch.setenv("DPZO_CLI", missing)
    with pytest.raises(FileNotFoundError, match="set DPZO_CLI"):
        _cli.cli_path()
