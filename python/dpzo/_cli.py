# SPDX-License-Identifier: Apache-2.0
"""dpzo._cli: the ``dpzo`` console script of the wheel (pyproject.toml, ``[project.scripts]``).

``dpzo ARGS...`` replaces the Python process with dpzo's C command line (``os.execv``), so
its output, its exit status and its signals are the CLI's own. Which binary, first match
wins (:func:`cli_path`):

1. ``$DPZO_CLI``: the path of a ``dpzo`` executable (the test suite's variable);
2. the copy installed with the package, ``dpzo/bin/dpzo`` (what the wheel carries: its
   libraries are bundled beside it by ``make wheel``, docs/install.md);
3. when the package runs from a source tree (``PYTHONPATH=python``), that tree's
   ``build/bin/dpzo``.

It never searches ``$PATH``: the first ``dpzo`` there is this script.
"""
from __future__ import annotations

import os
import sys
from typing import Optional, Sequence

__all__ = ["cli_path", "main"]

_here = os.path.dirname(os.path.abspath(__file__))


def _candidates() -> list[str]:
    env = os.environ.get("DPZO_CLI")
    if env:
        return [env]
    out = [os.path.join(_here, "bin", "dpzo")]
    root = os.path.dirname(os.path.dirname(_here))  # python/dpzo -> repository root
    if os.path.isfile(os.path.join(root, "include", "dpzo", "dpzo.h")):
        out.append(os.path.join(root, "build", "bin", "dpzo"))
    return out


def cli_path() -> str:
    """The dpzo executable the console script runs; FileNotFoundError naming the places
    looked at when there is none."""
    tried = _candidates()
    for p in tried:
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    raise FileNotFoundError("dpzo: the command line was not found (looked for an executable "
                            "at " + ", ".join(tried) + "); set DPZO_CLI to its path")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the CLI with ``argv`` (default ``sys.argv[1:]``) in place of this process.
    Returns (127) only when there is no CLI to run."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        path = cli_path()
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [path] + args)
    return 127  # not reached: execv returns only by raising OSError


if __name__ == "__main__":
    sys.exit(main())
