#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks dpzo's layering (README.md, "Layout"; issue 29): no circle of includes or calls
between files, no arrow back up between folders, no circle of Python imports.

    check_layers.py [--root DIR] [--build DIR] [--include-tests] [--json]

Exit status 0 when nothing is found, 1 when something is (one block per violation, then a
summary line), 2 on bad usage (a --build DIR that does not exist).

What each check sees, and what it cannot see:

include-cycle   Every `#include "..."` line (comments stripped; the line is read whatever
                #if it sits under) in the project's C and CUDA files (.c .h .cu .cuh) under
                SOURCE_DIRS (tests/ only with --include-tests). A name is looked up in the
                including file's folder, then in the include dirs derived from the tree:
                include/ and every folder (with its subfolders) of SOURCE_DIRS, as -I would;
                a name found nowhere (<...> or "..." of a system or generated header) is
                external and ignored. When a name matches files in several folders, the one
                in the including file's top-level folder wins, then the first in sorted order
                (a real build may pick another: CMake's -I order is not read). Reported:
                every strongly connected component of two or more files, and every file that
                includes itself, with one shortest chain through it and every edge inside.
                Cannot see: includes built by macros (#include MACRO), generated headers.

object-call     From the CMake build folder's object files (BUILD/**/CMakeFiles/<target>.dir/
                <source>.o, mapped back to <source> in the tree; `__` is CMake's `..`), `nm`
                gives each object's defined global symbols (T D B R C G S V W, i) and the ones
                it uses (U, and weak references w v). A -> B when A's object uses a symbol
                that B's object, and only B's, defines. An object per source file (a source
                built into two targets counts once); tests/, bench/ and fuzz/ objects left out
                unless --include-tests. Reported: every component of two or more files, and
                for each pair of files in it the symbols used each way. Cannot see: static
                functions, calls inlined away or removed by the optimiser, calls made through
                header inline functions (they are the includer's own code in its object),
                calls through function pointers, sources not built in this configuration
                (the CUDA kernels without nvcc), and objects of a stale build.

source-call     A complement from the sources themselves (no build needed): each .c file's
                top-level non-static function definitions, each header's inline function
                definitions and function-like macros (a regex-free brace scan of the text
                with comments, strings and preprocessor lines blanked) are the names it
                defines; every identifier inside braces (function bodies, initialiser tables)
                or in a #define body, not after `.` or `->`, is a name it mentions. A -> B when
                A mentions a name that B, and only B, defines. It sees what the objects lose
                (static inline helpers in headers, calls in code the optimiser removed, both
                sides of #if), and it can be wrong where they are right: a local variable or
                struct member spelled like another file's function makes an edge that is not
                a call; a function defined twice (a CUDA stub and the real one) is ignored;
                functions defined through macros (DPZO_KERNEL_CLONES-style generators) are not
                seen as definitions.

layering        Every include, object-call and source-call edge between files is checked
                against RULES below: a file belongs to the longest folder prefix named there
                (accountant/core/ before accountant/), else to its top-level folder; a unit
                may use itself, include/ (the public headers, usable by all) and the units
                RULES lists for it (a listed folder covers its subfolders). Folders that do
                not exist yet (audit/, accountant/core/, ...) simply match no file. A unit
                missing from RULES (tests/, bench/, fuzz/, examples/) may use anything.

python-cycle    The imports among the modules of python/dpzo (ast): `import dpzo.x`,
                `from dpzo.x import y`, `from . import x`, `from .x import y`; `from P import
                n` is an edge to the module P.n when that is a module, else to P. Imports
                inside functions are "deferred" edges: they count (a deferred import is how a
                circle hides) and are marked as such. Imports under `if TYPE_CHECKING:` never
                run and are not edges. Importing a submodule also runs its package's
                __init__; that implicit edge is not drawn. Reported: every component of two or
                more modules with its edges. Cannot see: importlib / __import__ calls.

Standard library only; runs in a second or two on dpzo."""
from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
from typing import Dict, Iterable, List, Optional, Set, Tuple

# Folders whose C/CUDA files are checked (those that do not exist are skipped).
SOURCE_DIRS = ("common", "include", "accountant", "noisesearch", "audit", "trainer", "kernels",
               "cli", "fuzz", "bench")
TEST_DIRS = ("tests",)
# Folders whose objects the object-call and source-call checks leave out by default: a test,
# a benchmark or a fuzz target may call anything, and nothing calls them.
CALL_EXCLUDED = ("tests", "bench", "fuzz")
C_SUFFIXES = (".c", ".h", ".cu", ".cuh")

# The layering (the architecture notes: data flows one way, accountant -> noisesearch ->
# profile -> trainer -> kernels, cli on top). unit -> the units it may include or call besides itself and
# include/. A listed folder covers its subfolders ("accountant" covers "accountant/rdp").
# "*": anything. A unit not listed here may use anything. To add a room, add a line.
PUBLIC = "include"  # include/dpzo/: usable by every unit
RULES: Dict[str, Tuple[str, ...]] = {
    "include": (),
    "common": (),
    # Inside the accountant: a numeric core (context, interval arithmetic, conversions) that
    # RDP and PLD/PRV (with the FFT and vector math) both use and that uses neither; the event
    # algebra and the accountant interface (what stays in accountant/ itself) above them.
    "accountant/core": ("common",),
    "accountant/rdp": ("accountant/core", "common"),
    # The PLD takes its tilt from the RDP accountant's optimal order and reports the RDP
    # bound where it cannot run (accountant/pld/pld.c: dpzo__event_query): one way, pld -> rdp.
    "accountant/pld": ("accountant/core", "accountant/rdp", "common"),
    "accountant": ("accountant/core", "accountant/rdp", "accountant/pld", "common"),
    "noisesearch": ("accountant", "common"),
    # audit/: the audits use the accountant and the noise search, a room above both.
    "audit": ("accountant", "noisesearch", "common"),
    "trainer": ("noisesearch", "accountant", "common", "kernels"),
    # kernels/: the hot loops, called by the trainer. They report errors through the library's
    # context (struct dpzo_ctx, dpzo__fail: the handle that carries the message, SQLite's
    # way), which sits at the bottom of the accountant's numeric core: that and common/ only.
    "kernels": ("common", "accountant/core"),
    "cli": ("*",),
}


# ---- small graph helpers -----------------------------------------------------------------

def sccs(nodes: Iterable[str], edges: Dict[str, Set[str]]) -> List[List[str]]:
    """Tarjan's strongly connected components (iterative), each sorted, in sorted order."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on_stack: Set[str] = set()
    stack: List[str] = []
    out: List[List[str]] = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return sorted(out)


def cycles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """Components of two or more nodes, and single nodes with an edge to themselves."""
    nodes = set(edges) | {w for ws in edges.values() for w in ws}
    return [c for c in sccs(nodes, edges) if len(c) > 1 or c[0] in edges.get(c[0], ())]


def shortest_cycle(comp: List[str], edges: Dict[str, Set[str]]) -> List[str]:
    """A shortest chain from the component's first node back to it, inside the component."""
    members = set(comp)
    start = comp[0]
    prev: Dict[str, str] = {}
    queue = collections.deque([start])
    seen = {start}
    while queue:
        v = queue.popleft()
        for w in sorted(edges.get(v, ())):
            if w not in members:
                continue
            if w == start:
                chain = [v]
                while chain[-1] != start:
                    chain.append(prev[chain[-1]])
                return list(reversed(chain)) + [start]
            if w not in seen:
                seen.add(w)
                prev[w] = v
                queue.append(w)
    return [start, start]


# ---- C sources ---------------------------------------------------------------------------

_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\()?(.*)$")
_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static struct
switch typedef union unsigned void volatile while _Bool _Complex _Static_assert _Alignof
_Atomic _Generic _Noreturn _Thread_local __attribute__ __inline__ __restrict__ defined""".split())


def _blank(match: "re.Match[str]", keep_strings: bool) -> str:
    s = match.group(0)
    if s.startswith("/"):
        return re.sub(r"[^\n]", " ", s)  # comments: keep the line breaks
    if keep_strings:
        return s
    return s[0] + re.sub(r"[^\n]", " ", s[1:-1]) + s[-1]


def strip_comments(text: str) -> str:
    return _TOKEN.sub(lambda m: _blank(m, True), text)


def strip_all(text: str) -> str:
    return _TOKEN.sub(lambda m: _blank(m, False), text)


def split_preprocessor(text: str) -> Tuple[str, List[str]]:
    """(text with every preprocessor line, continuations included, blanked; the lines)."""
    out: List[str] = []
    directives: List[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("#"):
            whole = [line]
            while whole[-1].endswith("\\") and i + 1 < len(lines):
                i += 1
                whole.append(lines[i])
            directives.append(" ".join(w.rstrip("\\") for w in whole))
            out.extend("" for _ in whole)
        else:
            out.append(line)
        i += 1
    return "\n".join(out), directives


class CFile:
    """What the source-call check reads of one C/CUDA file."""

    def __init__(self, rel: str, text: str):
        self.rel = rel
        self.is_header = rel.endswith((".h", ".cuh"))
        commented = strip_comments(text)
        self.includes = [(m.group(1), commented.count("\n", 0, m.start()) + 1)
                         for m in _INCLUDE.finditer(commented)]
        code, directives = split_preprocessor(strip_all(text))
        self.defines: Set[str] = set()
        self.mentions: Set[str] = set()
        self._static_macros = {"static"}  # names that expand to `static ...` (INLINE)
        for d in directives:
            m = _DEFINE.match(d)
            if not m:
                continue
            if not m.group(2) and "static" in _IDENT.findall(m.group(3)):
                self._static_macros.add(m.group(1))
            if m.group(2) and self.is_header:
                self.defines.add(m.group(1))  # a function-like macro: callable from includers
            self.mentions.update(self._idents(m.group(3)))
        self._scan(code)

    @staticmethod
    def _idents(s: str) -> Set[str]:
        out = set()
        for m in _IDENT.finditer(s):
            before = s[max(0, m.start() - 2):m.start()].rstrip()
            if before.endswith(".") or before.endswith("->"):
                continue
            if m.group(0) not in _KEYWORDS:
                out.add(m.group(0))
        return out

    def _scan(self, code: str) -> None:
        depth = 0
        boundary = 0  # where the current top-level declaration starts
        body_start = 0
        opened: List[bool] = []  # per open brace: True for a C++ `extern "C" {`, not a body
        for i, ch in enumerate(code):
            if ch == "{":
                if depth == 0:
                    head = code[boundary:i]
                    if re.search(r'\bextern\s*"\s*"\s*$', head):
                        opened.append(True)
                        boundary = i + 1
                        continue
                    self._definition(head)
                    body_start = i + 1
                opened.append(False)
                depth += 1
            elif ch == "}":
                if opened and opened.pop():
                    boundary = i + 1
                    continue
                depth = max(depth - 1, 0)
                if depth == 0:
                    self.mentions.update(self._idents(code[body_start:i]))
                    boundary = i + 1
            elif ch == ";" and depth == 0:
                boundary = i + 1

    def _definition(self, head: str) -> None:
        head = head.strip()
        # drop trailing __attribute__((...)) groups
        while True:
            m = re.search(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)\s*$", head)
            if not m:
                break
            head = head[:m.start()].rstrip()
        if not head.endswith(")") or "=" in head:
            return
        depth = 0
        for j in range(len(head) - 1, -1, -1):
            if head[j] == ")":
                depth += 1
            elif head[j] == "(":
                depth -= 1
                if depth == 0:
                    break
        else:
            return
        m = re.search(r"([A-Za-z_]\w*)\s*$", head[:j])
        if not m or m.group(1) in _KEYWORDS:
            return
        words = set(_IDENT.findall(head[:m.start()]))
        static = bool(words & self._static_macros)
        inline = bool(words & {"inline", "__inline__"})
        if self.is_header:
            if inline:
                self.defines.add(m.group(1))
        elif not static:
            self.defines.add(m.group(1))


def top(rel: str) -> str:
    return rel.split("/", 1)[0]


def unit_of(rel: str, rules: Dict[str, Tuple[str, ...]]) -> str:
    best = top(rel)
    for key in rules:
        if (rel + "/").startswith(key + "/") and len(key) > len(best):
            best = key
    return best


def allowed(src: str, dst: str, rules: Dict[str, Tuple[str, ...]]) -> bool:
    if src == dst or dst == PUBLIC:
        return True
    may = rules.get(src)
    if may is None or "*" in may:
        return True
    return any(dst == a or dst.startswith(a + "/") for a in may)


class Tree:
    def __init__(self, root: pathlib.Path, with_tests: bool):
        self.root = root
        dirs = SOURCE_DIRS + (TEST_DIRS if with_tests else ())
        self.files: Dict[str, CFile] = {}
        self.folders: List[str] = []
        for d in dirs:
            base = root / d
            if not base.is_dir():
                continue
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames.sort()
                self.folders.append(pathlib.Path(dirpath).relative_to(root).as_posix())
                for f in sorted(filenames):
                    if f.endswith(C_SUFFIXES):
                        p = pathlib.Path(dirpath) / f
                        rel = p.relative_to(root).as_posix()
                        self.files[rel] = CFile(rel, p.read_text(encoding="utf-8",
                                                                 errors="replace"))
        # include dirs: include/ first, then every source folder, as -I would give them
        self.include_dirs = sorted(self.folders, key=lambda f: (f != "include", f))

    def resolve(self, including: str, name: str) -> Optional[str]:
        here = posix_norm(posix_dir(including), name)
        if here in self.files:
            return here
        found = [c for c in (posix_norm(d, name) for d in self.include_dirs) if c in self.files]
        if not found:
            return None
        same = [c for c in found if top(c) == top(including)]
        return (same or found)[0]


def posix_dir(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def posix_norm(folder: str, name: str) -> str:
    return os.path.normpath(os.path.join(folder, name)).replace(os.sep, "/")


# ---- checks ------------------------------------------------------------------------------

Violation = Dict[str, object]


def cycle_violations(check: str, edges: Dict[str, Set[str]],
                     where: Dict[Tuple[str, str], List[str]]) -> List[Violation]:
    """One violation per cycle of EDGES: its members, a shortest cycle through them and the
    source lines (WHERE) of every edge inside it."""
    out: List[Violation] = []
    for comp in cycles(edges):
        inside = [w for a in comp for b in comp if b in edges.get(a, ()) for w in where[(a, b)]]
        out.append({"check": check, "files": comp,
                    "chain": shortest_cycle(comp, edges), "edges": inside})
    return out


def check_includes(tree: Tree) -> Tuple[List[Violation], Dict[Tuple[str, str], List[str]]]:
    edges: Dict[str, Set[str]] = collections.defaultdict(set)
    where: Dict[Tuple[str, str], List[str]] = collections.defaultdict(list)
    for rel, f in tree.files.items():
        for name, line in f.includes:
            dst = tree.resolve(rel, name)
            if dst is None:
                continue
            edges[rel].add(dst)
            where[(rel, dst)].append(f'{rel}:{line}: #include "{name}"')
    return cycle_violations("include-cycle", edges, where), where


def parse_object_path(rel: str) -> Optional[str]:
    """build-relative object path -> source path relative to the source tree."""
    m = re.match(r"^(?:(.*)/)?CMakeFiles/[^/]+\.dir/(.+)\.o(?:bj)?$", rel)
    if not m:
        return None
    parts = [".." if p == "__" else p for p in m.group(2).split("/")]
    return posix_norm(m.group(1) or "", "/".join(parts))


_DEFINED = frozenset("TDBRCGSVWi")  # nm's global definitions (i: an indirect function)


def read_objects(root: pathlib.Path, build: pathlib.Path, with_tests: bool,
                 notes: List[str]) -> Dict[str, Tuple[Set[str], Set[str]]]:
    """source path -> (defined globals, used symbols) from nm, one object per source."""
    objects: Dict[str, pathlib.Path] = {}
    for p in sorted(build.rglob("CMakeFiles/*.dir/**/*.o")):
        src = parse_object_path(p.relative_to(build).as_posix())
        if src is None or src.startswith("..") or not (root / src).is_file():
            continue
        if not with_tests and top(src) in CALL_EXCLUDED:
            continue
        objects.setdefault(src, p)
    if not objects:
        notes.append(f"object-call: no project objects under {build}")
        return {}
    nm = shutil.which("nm")
    if nm is None:
        notes.append("object-call: skipped, nm not found")
        return {}
    by_path = {str(p): src for src, p in objects.items()}
    out: Dict[str, Tuple[Set[str], Set[str]]] = {src: (set(), set()) for src in objects}
    paths = list(by_path)
    for i in range(0, len(paths), 200):
        res = subprocess.run([nm, "-P", "-A", *paths[i:i + 200]], capture_output=True,
                             text=True, check=False)
        for line in res.stdout.splitlines():
            head, sep, rest = line.partition(": ")
            if not sep or head not in by_path:
                continue
            fields = rest.split()
            if len(fields) < 2:
                continue
            name, kind = fields[0], fields[1]
            defined, used = out[by_path[head]]
            if kind in _DEFINED:
                defined.add(name)
            elif kind in ("U", "w", "v"):
                used.add(name)
    return out


def call_edges(defs: Dict[str, Set[str]], uses: Dict[str, Set[str]]
               ) -> Dict[Tuple[str, str], Set[str]]:
    owner: Dict[str, List[str]] = collections.defaultdict(list)
    for f, names in defs.items():
        for n in names:
            owner[n].append(f)
    out: Dict[Tuple[str, str], Set[str]] = collections.defaultdict(set)
    for a, names in uses.items():
        for n in names:
            o = owner.get(n)
            if o and len(o) == 1 and o[0] != a:
                out[(a, o[0])].add(n)
    return out


def call_cycles(kind: str, pairs: Dict[Tuple[str, str], Set[str]]) -> List[Violation]:
    edges: Dict[str, Set[str]] = collections.defaultdict(set)
    for a, b in pairs:
        edges[a].add(b)
    out: List[Violation] = []
    for comp in cycles(edges):
        listed = []
        for i, a in enumerate(comp):
            for b in comp[i + 1:]:
                ab, ba = sorted(pairs.get((a, b), ())), sorted(pairs.get((b, a), ()))
                if ab or ba:
                    listed.append({"a": a, "b": b, "a_uses_b": ab, "b_uses_a": ba})
        out.append({"check": kind, "files": comp, "chain": shortest_cycle(comp, edges),
                    "pairs": listed})
    return out


def source_pairs(tree: Tree, with_tests: bool) -> Dict[Tuple[str, str], Set[str]]:
    files = {r: f for r, f in tree.files.items() if with_tests or top(r) not in CALL_EXCLUDED}
    defs = {r: f.defines for r, f in files.items()}
    uses = {r: f.mentions - f.defines for r, f in files.items()}
    return call_edges(defs, uses)


def check_layering(include_where: Dict[Tuple[str, str], List[str]],
                   object_pairs: Dict[Tuple[str, str], Set[str]],
                   source_pairs_: Dict[Tuple[str, str], Set[str]],
                   rules: Dict[str, Tuple[str, ...]]) -> List[Violation]:
    found: Dict[Tuple[str, str], Dict[str, Dict[Tuple[str, str], List[str]]]] = {}
    for kind, pairs in (("include", {k: v for k, v in include_where.items()}),
                        ("object-call", {k: sorted(v) for k, v in object_pairs.items()}),
                        ("source-call", {k: sorted(v) for k, v in source_pairs_.items()})):
        for (a, b), what in pairs.items():
            ua, ub = unit_of(a, rules), unit_of(b, rules)
            if allowed(ua, ub, rules):
                continue
            found.setdefault((ua, ub), {}).setdefault(kind, {})[(a, b)] = list(what)
    out: List[Violation] = []
    for (ua, ub), kinds in sorted(found.items()):
        edges = []
        for kind in ("include", "object-call", "source-call"):
            for (a, b), what in sorted(kinds.get(kind, {}).items()):
                edges.append({"kind": kind, "from": a, "to": b, "what": what})
        out.append({"check": "layering", "from_unit": ua, "to_unit": ub,
                    "may_use": list(rules.get(ua, ())), "edges": edges})
    return out


# ---- Python ------------------------------------------------------------------------------

class _Imports(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: List[Tuple[int, int, Optional[str], List[str], str]] = []
        self._func = 0
        self._typing = 0

    def _mode(self) -> str:
        return "typing-only" if self._typing else "deferred" if self._func else "top-level"

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self._func += 1
        self.generic_visit(node)
        self._func -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        t = node.test
        typing = (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
            isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")
        if typing:
            self._typing += 1
            for n in node.body:
                self.visit(n)
            self._typing -= 1
            for n in node.orelse:
                self.visit(n)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.found.append((node.lineno, 0, a.name, [], self._mode()))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append((node.lineno, node.level, node.module,
                           [a.name for a in node.names], self._mode()))


def python_modules(pkg: pathlib.Path) -> Dict[str, pathlib.Path]:
    mods: Dict[str, pathlib.Path] = {}
    for p in sorted(pkg.rglob("*.py")):
        parts = list(p.relative_to(pkg.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = p
    return mods


def check_python(root: pathlib.Path, notes: List[str]) -> List[Violation]:
    pkg = root / "python" / "dpzo"
    if not pkg.is_dir():
        notes.append("python-cycle: no python/dpzo")
        return []
    mods = python_modules(pkg)
    top_name = pkg.name

    def existing(name: str) -> Optional[str]:
        parts = name.split(".")
        while parts:
            n = ".".join(parts)
            if n in mods:
                return n
            parts.pop()
        return None

    edges: Dict[str, Set[str]] = collections.defaultdict(set)
    where: Dict[Tuple[str, str], List[str]] = collections.defaultdict(list)
    for mod, path in mods.items():
        rel = path.relative_to(root).as_posix()
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for line, level, module, names, mode in visitor.found:
            if level:
                base_parts = package.split(".")
                if level > 1:
                    base_parts = base_parts[:len(base_parts) - (level - 1)]
                base = ".".join(base_parts + ([module] if module else []))
            else:
                base = module or ""
            if base.split(".")[0] != top_name:
                continue
            targets = set()
            if not names:  # import a.b.c
                t = existing(base)
                if t:
                    targets.add(t)
            for n in names:
                t = f"{base}.{n}" if f"{base}.{n}" in mods else existing(base)
                if t:
                    targets.add(t)
            for t in sorted(targets):
                if t == mod:
                    continue
                shown = ("." * level) + (module or "")
                what = f"{rel}:{line}: from {shown} import {', '.join(names)}" if level or names \
                    else f"{rel}:{line}: import {base}"
                if mode == "typing-only":
                    continue
                edges[mod].add(t)
                where[(mod, t)].append(f"{what}  [{mode}]")
    return cycle_violations("python-cycle", edges, where)


# ---- report ------------------------------------------------------------------------------

def render(v: Violation) -> str:
    lines: List[str] = []
    kind = v["check"]
    if kind == "layering":
        may = ", ".join(v["may_use"]) or "nothing"  # type: ignore[arg-type]
        lines.append(f"[layering] {v['from_unit']}/ uses {v['to_unit']}/ "
                     f"({v['from_unit']} may use: {may}, include)")
        for e in v["edges"]:  # type: ignore[union-attr]
            what = e["what"]
            if e["kind"] == "include":
                lines.append(f"  include      {'; '.join(w.split(': ', 1)[0] for w in what)}"
                             f" -> {e['to']}")
            else:
                shown = ", ".join(what[:8]) + (f", ... ({len(what)})" if len(what) > 8 else "")
                lines.append(f"  {e['kind']:<12} {e['from']} -> {e['to']}: {shown}")
        return "\n".join(lines)
    files = v["files"]
    lines.append(f"[{kind}] {len(files)} files: {', '.join(files)}")  # type: ignore[arg-type]
    lines.append("  chain: " + " -> ".join(v["chain"]))  # type: ignore[arg-type]
    if "edges" in v:
        for e in v["edges"]:  # type: ignore[union-attr]
            lines.append("  " + e)
    for p in v.get("pairs", ()):  # type: ignore[union-attr]
        lines.append(f"  {p['a']} -> {p['b']}: {', '.join(p['a_uses_b']) or '-'}")
        lines.append(f"  {p['b']} -> {p['a']}: {', '.join(p['b_uses_a']) or '-'}")
    return "\n".join(lines)


def run(root: pathlib.Path, build: Optional[pathlib.Path], with_tests: bool,
        rules: Dict[str, Tuple[str, ...]] = RULES) -> Tuple[List[Violation], List[str]]:
    notes: List[str] = []
    tree = Tree(root, with_tests)
    violations, include_where = check_includes(tree)
    object_pairs: Dict[Tuple[str, str], Set[str]] = {}
    if build is not None:
        objs = read_objects(root, build, with_tests, notes)
        if objs:
            object_pairs = call_edges({s: d for s, (d, _) in objs.items()},
                                      {s: u for s, (_, u) in objs.items()})
            violations += call_cycles("object-call-cycle", object_pairs)
    else:
        notes.append("object-call: skipped, no build folder")
    spairs = source_pairs(tree, with_tests)
    violations += call_cycles("source-call-cycle", spairs)
    violations += check_layering(include_where, object_pairs, spairs, rules)
    violations += check_python(root, notes)
    return violations, notes


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[1]),
                    help="the source tree (default: this script's repository)")
    ap.add_argument("--build", help="CMake build folder, relative to --root (default: build, "
                    "skipped when it does not exist)")
    ap.add_argument("--include-tests", action="store_true",
                    help="also check tests/ (includes) and tests/, bench/, fuzz/ (calls)")
    ap.add_argument("--json", action="store_true", help="print the violations as JSON")
    args = ap.parse_args(argv)
    root = pathlib.Path(args.root).resolve()
    build: Optional[pathlib.Path] = root / (args.build or "build")
    if args.build and not build.is_dir():  # type: ignore[union-attr]
        print(f"check_layers: no build folder {build}", file=sys.stderr)
        return 2
    if not build.is_dir():  # type: ignore[union-attr]
        build = None
    violations, notes = run(root, build, args.include_tests)
    counts = collections.Counter(v["check"] for v in violations)
    order = ("include-cycle", "object-call-cycle", "source-call-cycle", "layering",
             "python-cycle")
    summary = ", ".join(f"{counts.get(k, 0)} {k}" for k in order)
    if args.json:
        print(json.dumps({"violations": violations, "notes": notes,
                          "counts": {k: counts.get(k, 0) for k in order}}, indent=2))
    else:
        for v in violations:
            print(render(v))
            print()
        for n in notes:
            print(f"note: {n}")
        print(f"check_layers: {len(violations)} violation(s): {summary}")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
