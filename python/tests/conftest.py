# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the dpzo Python tests.

The package is imported from the installed copy when there is one, else from the source
tree (python/). The library is what dpzo._lib finds ($DPZO_LIBRARY first). The command
line (for the agreement tests) is $DPZO_CLI, default build/bin/dpzo of the repository; a
missing one fails the tests that need it (nothing is skipped silently).
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any, Callable, Dict, List

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
try:
    import dpzo  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))
    import dpzo  # noqa: F401


@pytest.fixture(scope="session")
def cli_path() -> str:
    """The dpzo command line: $DPZO_CLI, else build/bin/dpzo of the repository."""
    path = os.environ.get("DPZO_CLI") or str(ROOT / "build" / "bin" / "dpzo")
    if not os.access(path, os.X_OK):
        pytest.fail(f"the dpzo CLI {path} is missing: build it (cmake --build build --target "
                    "dpzo) or set DPZO_CLI to its path")
    return path


@pytest.fixture(scope="session")
def run_cli(cli_path: str) -> Callable[..., Dict[str, Any]]:
    """run_cli("epsilon", "--noise-multiplier", "1.1", ...) -> the --json object."""

    def run(*args: str) -> Dict[str, Any]:
        argv: List[str] = [cli_path, *args, "--json"]
        res = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if res.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {res.returncode}: {res.stderr}")
        out: Dict[str, Any] = json.loads(res.stdout)
        return out

    return run
