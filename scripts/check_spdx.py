#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every source file of dpzo names its license: `SPDX-License-Identifier: Apache-2.0`
in one of its first lines, in the file's own comment syntax (ctest spdx_headers; README.md,
"License").

The files are those git knows, tracked or new and not ignored (`git ls-files --cached
--others --exclude-standard`), that are code:

    C, CUDA (.c .h .cu .cuh)                      /* SPDX-License-Identifier: Apache-2.0 */
    Python (.py), shell (.sh), CMake (.cmake,     # SPDX-License-Identifier: Apache-2.0
    CMakeLists.txt, .cmake.in), pkg-config
    templates (.pc.in), Makefile, TOML (.toml),
    and files without a known suffix that start
    with a #! line naming sh, bash or python

Documentation (.md), data (JSON, corpora, images), LICENSE and NOTICE are not checked.
The line must be among the first HEAD_LINES lines after a #! line and a Python encoding
line (PEP 263), and it must be a comment of the file's syntax: for C `/* ... */`, `// ...`
or ` * ...` inside the opening block comment; otherwise `# ...`. A file naming another
license (third-party code) is reported, never changed.

    check_spdx.py [--root DIR] [--fix] [--list]

Exit status 0 when every file has the line; 1 when some do not (each is listed); 2 on bad
usage; 77 when DIR is not a git work tree (a source tarball: ctest counts it as skipped).
--fix inserts the line where it is missing (first
line, or after the #! and encoding lines) and reports what it changed; --list prints the
files checked and their syntax."""
from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys

LICENSE = "Apache-2.0"
TAG = "SPDX-License-Identifier:"
HEAD_LINES = 5  # where the line may be, counted after the #! and encoding lines

C_LINE = f"/* {TAG} {LICENSE} */"
HASH_LINE = f"# {TAG} {LICENSE}"

C_SUFFIXES = (".c", ".h", ".cu", ".cuh")
HASH_SUFFIXES = (".py", ".sh", ".cmake", ".cmake.in", ".pc.in", ".toml")
HASH_NAMES = ("CMakeLists.txt", "Makefile")
SHEBANG = re.compile(r"^#!.*\b(sh|bash|python[0-9.]*)\b")
ENCODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")  # PEP 263
IDENT = re.compile(re.escape(TAG) + r"\s*(\S.*?)\s*(\*/)?\s*$")


def syntax(path: pathlib.Path) -> str | None:
    """'c', '#' or None (not checked) for a file under the root."""
    name = path.name
    if name.endswith(C_SUFFIXES):
        return "c"
    if name.endswith(HASH_SUFFIXES) or name in HASH_NAMES:
        return "#"
    if "." not in name:
        try:
            with path.open("rb") as f:
                first = f.readline(200).decode("utf-8", "replace")
        except OSError:
            return None
        if SHEBANG.match(first):
            return "#"
    return None


def preamble(lines: list[str], kind: str) -> int:
    """How many leading lines must stay first: a #! line, then (Python) an encoding line."""
    n = 0
    if n < len(lines) and lines[n].startswith("#!"):
        n += 1
    if kind == "#" and n < len(lines) and n < 2 and ENCODING.match(lines[n]):
        n += 1
    return n


def is_comment(line: str, kind: str) -> bool:
    s = line.lstrip()
    if kind == "c":
        return s.startswith(("/*", "//", "*"))
    return s.startswith("#")


def find(lines: list[str], kind: str) -> tuple[str | None, int]:
    """(the identifier found in a comment near the top, or None; the preamble's length)."""
    start = preamble(lines, kind)
    for line in lines[start:start + HEAD_LINES]:
        m = IDENT.search(line)
        if m and is_comment(line, kind):
            return m.group(1), start
    return None, start


def tracked(root: pathlib.Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], capture_output=True, check=True).stdout
    return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent),
                    help="the repository (default: the one holding this script)")
    ap.add_argument("--fix", action="store_true", help="insert the line where it is missing")
    ap.add_argument("--list", action="store_true", help="print the files checked")
    args = ap.parse_args(argv)
    root = pathlib.Path(args.root)
    try:
        names = tracked(root)
    except (OSError, subprocess.CalledProcessError) as e:
        why = e.stderr.decode(errors="replace").strip() if isinstance(
            e, subprocess.CalledProcessError) else str(e)
        print(f"check_spdx: no file list from git in {root}: {why}; nothing checked",
              file=sys.stderr)
        return 77

    checked = missing = fixed = 0
    wrong: list[str] = []
    for name in names:
        path = root / name
        if not path.is_file() or path.is_symlink():
            continue  # deleted in the work tree, or a link to a file checked under its own name
        kind = syntax(path)
        if kind is None:
            continue
        checked += 1
        if args.list:
            print(f"{kind:2} {name}")
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        lines = text.splitlines(keepends=True)
        ident, start = find(lines, kind)
        if ident == LICENSE:
            continue
        if ident is not None:
            wrong.append(f"{name}: SPDX-License-Identifier: {ident}, not {LICENSE}")
            continue
        if not args.fix:
            missing += 1
            print(f"{name}: no '{TAG} {LICENSE}' in its first lines")
            continue
        newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
        if start > 0 and not lines[start - 1].endswith(("\n", "\r")):
            lines[start - 1] += newline  # a file that is only a #! line without a newline
        lines.insert(start, (C_LINE if kind == "c" else HASH_LINE) + newline)
        path.write_bytes("".join(lines).encode("utf-8", "surrogateescape"))
        fixed += 1
        print(f"{name}: inserted at line {start + 1}")
    for w in wrong:
        print(w)
    verb = "fixed" if args.fix else "missing"
    print(f"check_spdx: {checked} source files, {fixed if args.fix else missing} {verb}, "
          f"{len(wrong)} with another license")
    return 1 if missing or wrong else 0


if __name__ == "__main__":
    sys.exit(main())
