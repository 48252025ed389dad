#!/usr/bin/env python3
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
libdpzo.so, or --library), and its stdout and stderr must equal the output block."""
import argparse
import difflib
import os
import pathlib
import shlex
import subprocess
import sys


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
                for line in block + ["$ "]:
                    if line.startswith("$ "):
                        if cmd is not None:
                            yield i + 1, cmd, out
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
                yield i + 1, lines[i + 1:j], lines[k + 1:m], (k, m)
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
    for line_no, code, expected, span in python_examples(f):
        got = run_python(code, root, a.python, library)
        want = [l.rstrip() for l in expected]
        while want and want[-1] == "":
            want.pop()
        if got == want:
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
    passed = failed = 0
    for f in files:
        text = original = f.read_text()
        for line_no, cmd, expected in examples(f):
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
            if got == want:
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
