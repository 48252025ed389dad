#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An independent implementation of the noise-profile checksum rule (docs/profile.md).

Usage (from the repository root):
    /usr/bin/python3 tests/ref/make_profile_reference.py
        writes tests/ref/profile_reference.h (next to this script);
    /usr/bin/python3 tests/ref/make_profile_reference.py OUT.h   (or '-' for stdout)

No dpzo code is used. The fixture below is a valid LMO profile that exercises every
part of the rule: nested objects with keys out of order, arrays, nulls, the string
"inf", numbers that are integers, integers above 2^53, subnormals, numbers needing
16 and 17 significant digits, and a string with a quote, a backslash, a tab, a control
character and non-ASCII text. The script prints the fixture with Python's json module
(whose number spelling, e.g. "5.0" and "1e-300", differs from dpzo's), computes the
canonical text by the documented rule:

  * the object without its top-level "sha256" member;
  * object keys sorted by byte value (code point order of the UTF-8 text), at every
    level; array order kept;
  * no whitespace outside strings;
  * strings as JSON strings with '"' '\\' and the control characters escaped
    (\\b \\f \\n \\r \\t, others as \\u00xx in lowercase hex), everything else literal
    UTF-8;
  * numbers: an integral value of magnitude below 2^53 as a decimal integer,
    otherwise the shortest C "%.{p}g" (p = 1..17) that reads back as the same double;
  * true, false, null as such;

and its SHA-256 (hashlib), and writes all three into a C header for
tests/test_profile.c, with hashlib's SHA-256 of strings of 'a' whose lengths straddle
the padding boundaries (55/56 and 63/64 bytes mod 64).
"""
import hashlib
import json
import sys

FIXTURE = {
    "sha256": None,  # filled below
    "provenance": {
        "created": "2026-11-21T12:00:00Z",
        "dpzo_version": "0.1.0",
        "command": 'make_profile_reference.py "quoted" back\\slash\ttab \x01 \u00e9t\u00e9 \u03b5',
    },
    "objective": {
        "grid_index": 123456,
        "name": "usefulness",
        "value": 0.951229424500714,
        "usefulness_gamma": 0.9,
        "usefulness": 0.951229424500714,
        "mean_abs": 1.2345678901234567,
        "variance": "inf",
        "grid": "paper",
    },
    "format": "dpzo-noise-profile",
    "schema_version": 1,
    # the top-level mirror of noise.lmo that LMO profiles carry (must be equal)
    "lmo": {
        "gamma_weight": 0.5,
        "gamma_shape": 2.0,
        "gamma_scale": 1.0 / 3.0,
        "exp_weight": 0.3,
        "exp_rate": 2.5,
        "uniform_weight": 0.2,
        "uniform_low": 5.0,
        "uniform_high": 6.0,
    },
    "noise": {
        "lmo": {
            "uniform_high": 6.0,
            "uniform_low": 5.0,
            "uniform_weight": 0.2,
            "exp_rate": 2.5,
            "exp_weight": 0.3,
            "gamma_scale": 1.0 / 3.0,
            "gamma_shape": 2.0,
            "gamma_weight": 0.5,
        },
        "kind": "lmo",
        "sensitivity": 0.1,
        "clip": "scalar",
        "queries_per_step": 1,
    },
    "accounting": {
        "rdp": {
            "per_step": [1e-300, 0.1, 5e-324, "inf", 123456789012345678.0],
            "orders": [1.5, 2.0, 64.0, 1000.0, 1000000.0],
        },
        "eps0": 0.2347,
        "order": 17.5,
        "epsilon_bound": "proven-upper",
        "epsilon": 0.7071067811865476,
        "adjacency": "replace-one",
        "delta": 1e-10,
        "steps": 192,
        "dataset_size": 67349,
        "batch_size": 2048,
        "sampling_rate": 2048 / 67349,
        "sampling": "wor",
        "bound": "best",
        "accountant": "rdp",
    },
}


def number(x):
    x = float(x)
    if x == int(x) and abs(x) < 2.0**53:
        return "%d" % int(x)
    for p in range(1, 18):
        s = "%.*g" % (p, x)
        if float(s) == x:
            return s
    raise AssertionError(x)


def canonical(v):
    if isinstance(v, dict):
        items = sorted(v.items(), key=lambda kv: kv[0].encode("utf-8"))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(x)
                              for k, x in items) + "}"
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return number(v)


def c_literal(text, indent="    "):
    """A C string literal of the UTF-8 bytes of text, split at newlines."""
    out, line = [], ""
    for b in text.encode("utf-8"):
        c = chr(b)
        if c == "\\" or c == '"':
            line += "\\" + c
        elif c == "\n":
            out.append(line + "\\n")
            line = ""
        elif 32 <= b < 127 and c != "?":  # no trigraphs
            line += c
        else:
            line += "\\%03o" % b
    out.append(line)
    return "\n".join(indent + '"' + s + '"' for s in out)


def main():
    doc = dict(FIXTURE)
    del doc["sha256"]
    canon = canonical(doc)
    sha = hashlib.sha256(canon.encode("utf-8")).hexdigest()
    # self-checks of the rule's number spelling
    assert number(5.0) == "5" and number(1e-300) == "1e-300" and number(0.1) == "0.1"
    assert number(5e-324) == "5e-324" and number(1 / 3) == "0.3333333333333333"
    assert number(123456789012345678.0) == "1.2345678901234568e+17"
    assert '\\u0001' in canon and "\u00e9" in canon and '\\"quoted\\"' in canon
    fixture = dict(FIXTURE)
    fixture["sha256"] = sha
    text = json.dumps(fixture, indent=2, ensure_ascii=False)
    assert "5.0" in text and "1e-300" in text  # the fixture spells numbers differently
    out = sys.stdout if len(sys.argv) > 1 and sys.argv[1] == "-" else open(
        sys.argv[1] if len(sys.argv) > 1 else __file__.rsplit("/", 1)[0] + "/profile_reference.h",
        "w", encoding="utf-8")
    out.write("/* Generated by tests/ref/make_profile_reference.py: an independent (Python, "
              "hashlib)\n * implementation of the profile checksum rule. Do not edit. */\n")
    out.write("#ifndef DPZO_PROFILE_REFERENCE_H\n#define DPZO_PROFILE_REFERENCE_H\n\n")
    out.write("/* A valid LMO profile as Python's json module prints it (keys out of order). */\n")
    out.write("static const char PROFILE_REF_JSON[] =\n" + c_literal(text) + ";\n\n")
    out.write("/* Its canonical text (the checksummed bytes). */\n")
    out.write("static const char PROFILE_REF_CANONICAL[] =\n" + c_literal(canon) + ";\n\n")
    out.write('static const char PROFILE_REF_SHA256[] = "%s";\n\n' % sha)
    out.write("/* SHA-256 (hashlib) of n bytes 'a': lengths around the padding boundaries. */\n")
    out.write("static const struct {\n    size_t n;\n    const char *hex;\n} SHA_REF_A[] = {\n")
    for n in (55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000):
        out.write('    {%d, "%s"},\n' % (n, hashlib.sha256(b"a" * n).hexdigest()))
    out.write("};\n\n")
    out.write("#endif\n")
    if out is not sys.stdout:
        out.close()
    print("sha256 " + sha, file=sys.stderr)


if __name__ == "__main__":
    main()
