# SPDX-License-Identifier: Apache-2.0
"""scripts/check_spdx.py (ctest spdx_headers) on a small git repository of its own: which files
it checks, where --fix puts the line in each comment syntax, and that it never touches a file
that names another license."""
from __future__ import annotations

import importlib.util
import pathlib
import shutil
import subprocess

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check_spdx.py"
_spec = importlib.util.spec_from_file_location("check_spdx", _PATH)
check_spdx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_spdx)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

# name -> (content before, content after --fix); None after: not checked, left alone
FILES = {
    "a.c": ("/* a.c: a module. */\nint a;\n",
            "/* SPDX-License-Identifier: Apache-2.0 */\n/* a.c: a module. */\nint a;\n"),
    "inc/b.h": ("#ifndef B_H\n#define B_H\n#endif\n",
                "/* SPDX-License-Identifier: Apache-2.0 */\n#ifndef B_H\n#define B_H\n#endif\n"),
    "k.cu": ("__global__ void k() {}\n",
             "/* SPDX-License-Identifier: Apache-2.0 */\n__global__ void k() {}\n"),
    "tool.py": ("#!/usr/bin/env python3\n\"\"\"Doc.\"\"\"\n",
                "#!/usr/bin/env python3\n# SPDX-License-Identifier: Apache-2.0\n\"\"\"Doc.\"\"\"\n"),
    "enc.py": ("#!/usr/bin/python3\n# -*- coding: utf-8 -*-\nx = 'é'\n",
               "#!/usr/bin/python3\n# -*- coding: utf-8 -*-\n"
               "# SPDX-License-Identifier: Apache-2.0\nx = 'é'\n"),
    "mod.py": ("\"\"\"A module.\"\"\"\n",
               "# SPDX-License-Identifier: Apache-2.0\n\"\"\"A module.\"\"\"\n"),
    "CMakeLists.txt": ("project(x C)\n",
                       "# SPDX-License-Identifier: Apache-2.0\nproject(x C)\n"),
    "cmake/x.cmake": ("set(A 1)\n", "# SPDX-License-Identifier: Apache-2.0\nset(A 1)\n"),
    "cmake/x.pc.in": ("Name: x\n", "# SPDX-License-Identifier: Apache-2.0\nName: x\n"),
    "Makefile": ("all:\n\ttrue\n", "# SPDX-License-Identifier: Apache-2.0\nall:\n\ttrue\n"),
    "pyproject.toml": ("[project]\n", "# SPDX-License-Identifier: Apache-2.0\n[project]\n"),
    "run.sh": ("#!/bin/sh\necho hi\n", "#!/bin/sh\n# SPDX-License-Identifier: Apache-2.0\necho hi\n"),
    ".ci/run": ("#!/usr/bin/env bash\nmake\n",
                "#!/usr/bin/env bash\n# SPDX-License-Identifier: Apache-2.0\nmake\n"),
    "crlf.c": ("int c;\r\n", "/* SPDX-License-Identifier: Apache-2.0 */\r\nint c;\r\n"),
    "empty.h": ("", "/* SPDX-License-Identifier: Apache-2.0 */\n"),
    # already right, in the other accepted spellings: unchanged
    "ok.c": ("// SPDX-License-Identifier: Apache-2.0\nint ok;\n", None),
    "ok2.h": ("/*\n * SPDX-License-Identifier: Apache-2.0\n */\n", None),
    # another license: reported, never changed
    "third_party.c": ("/* SPDX-License-Identifier: MIT */\nint t;\n", None),
    # not code: not checked
    "README.md": ("# x\n", None),
    "data.json": ("{}\n", None),
    "LICENSE": ("Apache License\n", None),
    "corpus/seed": ("\x00binary\n", None),
}


def _repo(tmp_path: pathlib.Path) -> pathlib.Path:
    root = tmp_path / "repo"
    for name, (before, _) in FILES.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(before.encode())
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)  # b.h etc. tracked
    (root / "new.py").write_text("x = 1\n")  # untracked, not ignored: checked too
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "gen.c").write_text("int g;\n")  # ignored: not checked
    return root


def test_check_lists_missing_and_fix_inserts(tmp_path: pathlib.Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = _repo(tmp_path)
    assert check_spdx.main(["--root", str(root)]) == 1
    out = capsys.readouterr().out
    missing = {line.split(":")[0] for line in out.splitlines() if "no 'SPDX" in line}
    want = {n for n, (_, after) in FILES.items() if after is not None} | {"new.py"}
    assert missing == want
    assert "third_party.c: SPDX-License-Identifier: MIT, not Apache-2.0" in out
    assert "check_spdx: 19 source files, 16 missing, 1 with another license" in out

    # --fix inserts everywhere but in the MIT file, which keeps the exit status at 1
    assert check_spdx.main(["--root", str(root), "--fix"]) == 1
    for name, (before, after) in FILES.items():
        got = (root / name).read_bytes().decode()
        assert got == (before if after is None else after), name
    assert (root / "new.py").read_text() == "# SPDX-License-Identifier: Apache-2.0\nx = 1\n"
    assert (root / "build" / "gen.c").read_text() == "int g;\n"

    # a second --fix changes nothing; without the MIT file the check passes
    capsys.readouterr()
    check_spdx.main(["--root", str(root), "--fix"])
    assert "inserted" not in capsys.readouterr().out
    (root / "third_party.c").unlink()
    assert check_spdx.main(["--root", str(root)]) == 0


def test_line_must_be_a_comment_near_the_top(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    # in a string, not a comment; and a comment too far down
    (root / "s.py").write_text('X = "SPDX-License-Identifier: Apache-2.0"\n')
    (root / "late.c").write_text("int a;\n" * 6 + "/* SPDX-License-Identifier: Apache-2.0 */\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert check_spdx.main(["--root", str(root)]) == 1


def test_not_a_git_tree_is_skipped(tmp_path: pathlib.Path) -> None:
    assert check_spdx.main(["--root", str(tmp_path)]) == 77
