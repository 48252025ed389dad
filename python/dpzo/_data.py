# SPDX-License-Identifier: Apache-2.0
"""dpzo._data: the example and audit files that come with dpzo (:func:`dpzo.data_file`).

The wheel carries the JSON files of the source tree's ``docs/examples/`` (noise profiles, a
schedule, an LMO claim) and ``docs/audits/`` (the source papers' published numbers as claim
files) as ``dpzo/data/examples/`` and ``dpzo/data/audits/`` (cmake/install.cmake). The
docs' Python examples read them through :func:`data_file`, so they run the same in a
source checkout and after ``pip install dpzo-*.whl``.
"""
from __future__ import annotations

import os

__all__ = ["data_file", "data_files"]

_here = os.path.dirname(os.path.abspath(__file__))


def _folders() -> list[str]:
    out = [os.path.join(_here, "data")]
    root = os.path.dirname(os.path.dirname(_here))  # python/dpzo -> repository root
    if os.path.isfile(os.path.join(root, "include", "dpzo", "dpzo.h")):
        out.append(os.path.join(root, "docs"))
    return out


def data_file(name: str) -> str:
    """The path of the data file ``name`` (``"examples/profile-gaussian.json"``,
    ``"audits/pazo.json"``, ...): the installed package's ``dpzo/data/<name>``, else, when the
    package runs from a source tree, that tree's ``docs/<name>``. FileNotFoundError when
    neither exists."""
    parts = name.replace("\\", "/").split("/")
    if not name or os.path.isabs(name) or ".." in parts:
        raise ValueError(f"dpzo.data_file: {name!r} is not a name such as "
                         "'examples/profile-gaussian.json'")
    tried = []
    for folder in _folders():
        p = os.path.join(folder, *parts)
        if os.path.isfile(p):
            return p
        tried.append(p)
    raise FileNotFoundError(f"dpzo.data_file: {name!r} is not one of dpzo's data files "
                            f"(looked at {', '.join(tried)}; dpzo.data_files() lists them)")


def data_files() -> list[str]:
    """The names :func:`data_file` accepts (``examples/*.json`` and ``audits/*.json``), sorted."""
    for folder in _folders():
        names = sorted(f"{d}/{f}" for d in ("examples", "audits")
                       if os.path.isdir(os.path.join(folder, d))
                       for f in os.listdir(os.path.join(folder, d)) if f.endswith(".json"))
        if names:
            return names
    return []
