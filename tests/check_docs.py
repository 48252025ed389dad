#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every command example in README.md and docs/*.md prints what the docs show.

A fenced block whose first line is `$ build/bin/dpzo ...` (or `$ cat FILE`) is an example:
each `$ ` line is run from the repository root (build/bin/dpzo replaced by --bin) and its
output must equal the lines that follow it, up to trailing whitespace. Other blocks are
prose. Exit 1 on any mismatch, with a diff; prints `N passed, M failed` at the end.
With --update the docs are rewritten with the actual outputs instead (review the diff).

A ```python block followed by an output block (a bare ``` or ```text fence, blank lines
between allowed) is a Python example: the block runs alone in a fresh interpreter
(--python, default $DPZO_PYTHON or this one) from the repository root with the source tree's package
(PYTHONPATH=python) and the library built beside --bin (DPZO_LIBRARY=<bin's build>/lib/
libdpzo.so, or --library), and its stdout and stderr must equal the output block.

Numbers are compared exactly, unless the line just above the example's fence is a marker
    <!-- check_docs: rtol R -->   or   <!-- check_docs: rtol R, sha256 -->
(R a relative tolerance such as 1e-10): then every number of that example's output may differ
from the documented one by R relative, and the text between the numbers must still be equal;
with ", sha256" a 64-digit hex SHA-256 digest may be any other (the checksum of a profile
that holds such numbers).
The marker is for outputs whose last digits depend on the CPU's libm (the PLD and PRV ends,
the audits built on them, printed with all 17 digits: glibc picks its exp, log, erfc and
vector variants by CPU, and they may differ in the last bit); printed guarantees rounded
outward, RDP values and everything else have no marker and must match exactly
(docs/python.md, "How the examples are checked"). With --update, an output within its
tolerance is left as documented."""
import argparse
import difflib
import os
import pathlib
import re
import shlex
import subprocess
import sys


MARKER = re.compile(r"^<!-- check_docs: rtol ([0-9.eE+-]+)(, sha256)? -->$")
DIGEST = re.compile(r"\b[0-9a-f]{64}\b")
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def tolerance(lines, fence):
    """(rtol, digests) that the marker above line index `fence` states, else (0, False):
    exact."""
    if fence > 0:
        m = MARKER.match(lines[fence - 1].strip())
        if m:
            return float(m.group(1)), m.group(2) is not None
    return 0.0, False


def same(want, got, tol):
    """want == got, or with tol = (rtol > 0, digests): the same text between the numbers,
    every number within rtol relative, and (digests) any SHA-256 hex digest for any other
    (the checksum of a file that holds such numbers)."""
    rtol, digests = tol
    if want == got:
        return True
    if rtol <= 0 or len(want) != len(got):
        return False
    if digests:
        want = [DIGEST.sub("<sha256>", w) for w in want]
        got = [DIGEST.sub("<sha256>", g) for g in got]
    for w, g in zip(want, got):
        if NUMBER.split(w) != NUMBER.split(g):
            return False
        wn, gn = NUMBER.findall(w), NUMBER.findall(g)
        if len(wn) != len(gn):
            return False
        for a, b in zip(wn, gn):
            x, y = float(a), float(b)
            if not abs(x - y) <= rtol * max(abs(x), abs(y)):
                return False
    return True


def examples(path):
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            block = lines[i + 1:j]
            if block and (block[0].startswith("$ build/bin/dpzo") or block[0].startswith("$ cat ")):
                cmd, out = None, []
                rtol = tolerance(lines, i)
                for line in block + ["$ "]:
                    if line.startswith("$ "):
                        if cmd is not None:
                            yield i + 1, cmd, out, rtol
                        cmd, out = line[2:], []
                    else:
                        out.append(line)
            i = j + 1
        else:
            i += 1


def python_examples(path):
    """(line of the code fence, code lines, output lines, the output block's text span)."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            k = j + 1
            while k < len(lines) and lines[k].strip() == "":
                k += 1
            if k < len(lines) and lines[k].strip() in ("```", "```text"):
                m = k + 1
                while m < len(lines) and not lines[m].startswith("```"):
                    m += 1
                yield i + 1, lines[i + 1:j], lines[k + 1:m], (k, m), tolerance(lines, i)
                i = m + 1
                continue
            i = j + 1
        else:
            i += 1


def run_python(code, root, python, library):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root / "python")] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["DPZO_LIBRARY"] = str(library)
    res = subprocess.run([python, "-c", "\n".join(code)], cwd=root, capture_output=True,
                         text=True, env=env)
    return [l.rstrip() for l in (res.stdout + res.stderr).splitlines()]


def check_python(f, root, a, library):
    """Runs f's Python examples (with --update, rewrites their outputs); returns (passed,
    failed)."""
    passed = failed = 0
    original = f.read_text()
    lines = original.splitlines()
    edits = []
    for line_no, code, expected, span, rtol in python_examples(f):
        got = run_python(code, root, a.python, library)
        want = [l.rstrip() for l in expected]
        while want and want[-1] == "":
            want.pop()
        if same(want, got, rtol):
            passed += 1
        elif a.update and any(l.startswith("Traceback (most recent call last)") for l in got) \
                and not any(l.startswith("Traceback (most recent call last)") for l in want):
            failed += 1  # never write a crash over a documented output (a missing package?)
            print(f"{f.relative_to(root)}:{line_no}: not updated, the python example failed "
                  f"with {a.python}: {got[-1] if got else ''}")
        elif a.update:
            edits.append((span, got))
            print(f"{f.relative_to(root)}:{line_no}: updated the python example's output")
        else:
            failed += 1
            print(f"{f.relative_to(root)}:{line_no}: python example output differs:")
            sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(want, got, "docs", "actual", lineterm=""))
    if not edits:
        return passed, failed
    for (k, m), got in reversed(edits):
        lines[k + 1:m] = got
    if not rewrite(f, root, original, "\n".join(lines) + "\n"):
        failed += len(edits)
    return passed, failed


def rewrite(f, root, original, text):
    """Writes text over f (a sibling file renamed over it) unless f changed since it was read
    as original: another edit made while the examples ran is never clobbered. False then."""
    if text == original:
        return True
    if f.read_text() != original:
        print(f"{f.relative_to(root)}: changed while its examples ran; not updated, run again")
        return False
    tmp = f.with_name(f.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(f)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    ap.add_argument("--update", action="store_true", help="rewrite the docs' outputs")
    ap.add_argument("--file", action="append", help="check (or update) only this file (repeatable)")
    ap.add_argument("--exclude", action="append", default=[],
                    help="skip this file (repeatable; the sanitizer build skips the files whose "
                    "commands its own C tests already run, tests/CMakeLists.txt)")
    ap.add_argument("--python", default=os.environ.get("DPZO_PYTHON") or sys.executable,
                    help="the interpreter of the python examples (default $DPZO_PYTHON, else "
                    "this one); the drop-in examples need opacus and dp_accounting in it")
    ap.add_argument("--library", help="libdpzo.so for the python examples (default: beside --bin's build)")
    ap.add_argument("--no-python", action="store_true",
                    help="skip the python examples (sanitizer builds: their libdpzo.so cannot be "
                    "loaded into a Python started without the sanitizer's runtime; the normal "
                    "build checks them)")
    a = ap.parse_args()
    root = pathlib.Path(a.root)
    library = pathlib.Path(a.library) if a.library else (
        pathlib.Path(a.bin).resolve().parent.parent / "lib" / "libdpzo.so")
    files = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    if a.file:
        files = [root / f for f in a.file]
    skip = {(root / f).resolve() for f in a.exclude}
    files = [f for f in files if f.resolve() not in skip]
    passed = failed = 0
    for f in files:
        text = original = f.read_text()
        for line_no, cmd, expected, rtol in examples(f):
            if not cmd.strip():
                continue
            argv = shlex.split(cmd)
            if argv[0] == "build/bin/dpzo":
                argv[0] = a.bin
            res = subprocess.run(argv, cwd=root, capture_output=True, text=True)
            got = [l.rstrip() for l in (res.stdout + res.stderr).splitlines()]
            want = [l.rstrip() for l in expected]
            while want and want[-1] == "":
                want.pop()
            if same(want, got, rtol):
                passed += 1
            elif a.update:
                old = "\n".join(["$ " + cmd] + expected)
                text = text.replace(old, "\n".join(["$ " + cmd] + got), 1)
                print(f"{f.relative_to(root)}:{line_no}: updated `{cmd}`")
            else:
                failed += 1
                print(f"{f.relative_to(root)}:{line_no}: `{cmd}` output differs:")
                sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(want, got, "docs", "actual", lineterm=""))
        if a.update and not rewrite(f, root, original, text):
            failed += 1
        if not a.no_python and any(True for _ in python_examples(f)):
            if not library.is_file():
                failed += 1
                print(f"{f.relative_to(root)}: python examples need {library} (build the "
                      "target dpzo_shared, or give --library)")
                continue
            p, q = check_python(f, root, a, library)
            passed, failed = passed + p, failed + q
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
