#!/usr/bin/env python3
"""Checks that every command example in README.md and docs/*.md prints what the docs show.

A fenced block whose first line is `$ build/bin/dpzo ...` (or `$ cat FILE`) is an example:
each `$ ` line is run from the repository root (build/bin/dpzo replaced by --bin) and its
output must equal the lines that follow it, up to trailing whitespace. Other blocks are
prose. Exit 1 on any mismatch, with a diff; prints `N passed, M failed` at the end.
With --update the docs are rewritten with the actual outputs instead (review the diff)."""
import argparse
import difflib
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    ap.add_argument("--update", action="store_true", help="rewrite the docs' outputs")
    a = ap.parse_args()
    root = pathlib.Path(a.root)
    files = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    passed = failed = 0
    for f in files:
        text = f.read_text()
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
        if a.update:  # write a sibling file, then rename it over the original
            tmp = f.with_name(f.name + ".tmp")
            tmp.write_text(text)
            tmp.replace(f)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
