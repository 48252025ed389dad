# SPDX-License-Identifier: Apache-2.0
"""scripts/check_layers.py (`make check-layers`) on small trees of its own: a clean tree passes;
a tree with an include circle, a header that includes itself, a call circle, an arrow back up
and a Python import circle gets exactly those reports; the object check on compiled files."""
from __future__ import annotations

import importlib.util
import json
import pathlib
import shutil
import subprocess
import sys
from typing import Dict, List

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check_layers.py"
_spec = importlib.util.spec_from_file_location("check_layers", _PATH)
check_layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_layers)

# A tree that keeps every rule: common at the bottom, the accountant on it, the noise search
# on the accountant, a public header with a C++ guard, a static helper spelled like another
# file's function, a header inline function, a Python import only for type checking.
CLEAN = {
    "include/dpzo/api.h": '#ifdef __cplusplus\nextern "C" {\n#endif\n'
                          "int acc_value(int x);\nint ns_pick(int x);\n"
                          "#ifdef __cplusplus\n}\n#endif\n",
    "common/util.h": "static inline int util_twice(int x) { return 2 * x; }\n"
                     "int util_clamp(int x);\n",
    "common/util.c": '#include "util.h"\nint util_clamp(int x) { return x < 0 ? 0 : x; }\n',
    "accountant/internal.h": '#include "util.h"\n#include "dpzo/api.h"\n'
                             "#include <math.h>\n#include \"generated.h\"\n",
    "accountant/acc.c": '#include "internal.h"\n'
                        "/* ns_pick() is not called here: a comment */\n"
                        'static const char *name = "ns_pick";\n'
                        "static int ns_pick_local(int x) { return x; }\n"
                        "int acc_value(int x) { return util_twice(util_clamp(ns_pick_local(x))); }\n",
    "noisesearch/ns.c": '#include "internal.h"\n'
                        "int ns_pick(int x) { return acc_value(x) + 1; }\n",
    "tests/test_all.c": '#include "internal.h"\nint main(void) { return ns_pick(acc_value(1)); }\n',
    "python/dpzo/__init__.py": "from . import a\n",
    "python/dpzo/a.py": "from . import c\nfrom .c import helper\n",
    "python/dpzo/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                        "    from .a import helper2\n\ndef helper():\n    return 1\n",
}

# Four faults on top of it.
FAULTS = {
    # include circle: two accountant headers include each other
    "accountant/x.h": '#include "y.h"\n',
    "accountant/y.h": '#ifndef Y_H\n#define Y_H\n#include "x.h"\n#endif\n',
    # a header that includes itself
    "common/self.h": '#pragma once\n#include "self.h"\n',
    # call circle (source names only): two noise-search files call each other
    "noisesearch/p.c": "int ns_p(int n) { return n ? ns_q(n - 1) : 0; }\n",
    "noisesearch/q.c": "int ns_q(int n) { return n ? ns_p(n - 1) : 1; }\n",
    # arrow back up: the accountant includes a trainer header
    "trainer/run.h": "int trainer_run(void);\n",
    "accountant/up.c": '#include "../trainer/run.h"\n',
    # Python circle, one side deferred
    "python/dpzo/d.py": "from . import e\n",
    "python/dpzo/e.py": "def f():\n    from .d import g\n    return g\n",
}


def _tree(root: pathlib.Path, files: Dict[str, str]) -> pathlib.Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def _run(root: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(_PATH), "--root", str(root), "--json", *args],
                          capture_output=True, text=True, check=False)


def _found(out: str) -> List[tuple]:
    got = []
    for v in json.loads(out)["violations"]:
        if v["check"] == "layering":
            edges = sorted({(e["kind"], e["from"], e["to"]) for e in v["edges"]})
            got.append(("layering", v["from_unit"], v["to_unit"], tuple(edges)))
        else:
            got.append((v["check"], tuple(v["files"])))
    return sorted(got)


def test_clean_tree_passes(tmp_path: pathlib.Path) -> None:
    root = _tree(tmp_path, CLEAN)
    r = _run(root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _found(r.stdout) == []
    text = subprocess.run([sys.executable, str(_PATH), "--root", str(root)],
                          capture_output=True, text=True, check=False).stdout
    assert text.strip().endswith("check_layers: 0 violation(s): 0 include-cycle, "
                                 "0 object-call-cycle, 0 source-call-cycle, 0 layering, "
                                 "0 python-cycle")


def test_tests_may_use_anything(tmp_path: pathlib.Path) -> None:
    root = _tree(tmp_path, CLEAN)
    assert _run(root, "--include-tests").returncode == 0


def test_finds_exactly_the_faults(tmp_path: pathlib.Path) -> None:
    root = _tree(tmp_path, {**CLEAN, **FAULTS})
    r = _run(root)
    assert r.returncode == 1, r.stdout + r.stderr
    assert _found(r.stdout) == sorted([
        ("include-cycle", ("accountant/x.h", "accountant/y.h")),
        ("include-cycle", ("common/self.h",)),
        ("source-call-cycle", ("noisesearch/p.c", "noisesearch/q.c")),
        ("layering", "accountant", "trainer",
         (("include", "accountant/up.c", "trainer/run.h"),)),
        ("python-cycle", ("dpzo.d", "dpzo.e")),
    ])
    data = json.loads(r.stdout)
    assert data["counts"] == {"include-cycle": 2, "object-call-cycle": 0,
                              "source-call-cycle": 1, "layering": 1, "python-cycle": 1}
    calls = next(v for v in data["violations"] if v["check"] == "source-call-cycle")
    assert calls["pairs"] == [{"a": "noisesearch/p.c", "b": "noisesearch/q.c",
                               "a_uses_b": ["ns_q"], "b_uses_a": ["ns_p"]}]
    py = next(v for v in data["violations"] if v["check"] == "python-cycle")
    assert any("[deferred]" in e and "e.py:2" in e for e in py["edges"])
    text = _run(root).stdout
    assert '"chain": [\n        "accountant/x.h",\n        "accountant/y.h",\n' \
           '        "accountant/x.h"\n      ]' in text


def test_layering_rules_of_rooms() -> None:
    rules = check_layers.RULES
    unit = check_layers.unit_of
    assert unit("accountant/core/ival.c", rules) == "accountant/core"
    assert unit("accountant/pld/fft.c", rules) == "accountant/pld"
    assert unit("accountant/event.c", rules) == "accountant"
    assert unit("tests/test_x.c", rules) == "tests"
    ok = check_layers.allowed
    assert not ok("accountant/core", "accountant/rdp", rules)
    assert not ok("accountant/core", "accountant/pld", rules)
    assert ok("accountant/pld", "accountant/core", rules)
    assert ok("trainer", "accountant/rdp", rules)  # a listed folder covers its rooms
    assert ok("audit", "noisesearch", rules) and not ok("noisesearch", "audit", rules)
    assert not ok("kernels", "trainer", rules) and ok("trainer", "kernels", rules)
    assert ok("cli", "trainer", rules) and ok("tests", "cli", rules)
    assert ok("common", "include", rules) and not ok("include", "common", rules)


def test_object_paths() -> None:
    parse = check_layers.parse_object_path
    assert parse("accountant/CMakeFiles/dpzo_accountant.dir/ctx.c.o") == "accountant/ctx.c"
    assert parse("kernels/CMakeFiles/dpzo_kernels.dir/cpu/zo_dir.c.o") == "kernels/cpu/zo_dir.c"
    assert parse("CMakeFiles/dpzo_shared.dir/accountant/ival.c.o") == "accountant/ival.c"
    assert parse("tests/CMakeFiles/t.dir/__/accountant/ctx.c.o") == "accountant/ctx.c"
    assert parse("accountant/libdpzo_accountant.a") is None


@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("nm") is None,
                    reason="needs cc and nm")
def test_object_call_cycle(tmp_path: pathlib.Path) -> None:
    """Two objects that call each other through nothing the sources show (the callee's name
    is made by a macro): the object check sees the circle, the source check does not."""
    root = _tree(tmp_path, {
        "trainer/m.c": "#define CALL(x) tr_##x()\nint tr_n(void);\n"
                       "int tr_m(void) { return CALL(n); }\n",
        "trainer/n.c": "int tr_m(void);\nint tr_n(void) { return tr_m() + 1; }\n",
        # the same source built into a second target counts once
        "python/dpzo/__init__.py": "",
    })
    for folder in ("build/trainer/CMakeFiles/dpzo_trainer.dir",
                   "build/CMakeFiles/dpzo_shared.dir/trainer"):
        for src in ("m", "n"):
            obj = tmp_path / folder / f"{src}.c.o"
            obj.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cc", "-c", "-o", str(obj), str(root / "trainer" / f"{src}.c")],
                           check=True)
    r = _run(root, "--build", "build")
    assert r.returncode == 1, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert [(v["check"], v["files"]) for v in data["violations"]] == [
        ("object-call-cycle", ["trainer/m.c", "trainer/n.c"])]
    assert data["violations"][0]["pairs"] == [
        {"a": "trainer/m.c", "b": "trainer/n.c", "a_uses_b": ["tr_n"], "b_uses_a": ["tr_m"]}]
    assert _run(root, "--build", "no-such-folder").returncode == 2
