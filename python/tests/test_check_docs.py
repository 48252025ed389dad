# SPDX-License-Identifier: Apache-2.0
"""The docs check's comparison (tests/check_docs.py): exact unless a marker states a relative
tolerance, and then only the numbers may move, within it."""
import importlib.util
import pathlib

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "tests" / "check_docs.py"
_spec = importlib.util.spec_from_file_location("check_docs", _PATH)
check_docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_docs)

EXACT = (0.0, False)
R10 = (1e-10, False)


def test_exact_without_marker():
    assert check_docs.same(["eps 2.3718106357115953"], ["eps 2.3718106357115953"], EXACT)
    # the last digit of an unmarked number is a failure
    assert not check_docs.same(["eps 2.3718106357115953"], ["eps 2.3718106357114332"], EXACT)


def test_issue_27_numbers_within_rtol():
    # the AMD EPYC's and the Intel Xeon's libm, issue 27
    want = ["2.3718106357115953 2.3817858480799083"]
    got = ["2.3718106357114332 2.3817858480799434"]
    assert check_docs.same(want, got, R10)
    # 1.5e-14 relative apart: a tolerance of 1e-15 rejects it
    assert not check_docs.same(want, got, (1e-15, False))


@pytest.mark.parametrize("got", [
    ["2.3718106357115953 2.3817858480799083 extra"],     # text added
    ["2.3718106357115953, 2.3817858480799083"],          # text between numbers changed
    ["2.3718106357115953"],                              # a number missing
    ["2.3718106357115953 2.3817858480799083", ""],       # a line added
    ["2.3718106357115953 2.3818858480799083"],           # 4e-5 relative
    ["-2.3718106357115953 2.3817858480799083"],          # sign
    ["2.3718106357115953 nan"],                          # not a number
])
def test_rtol_rejects(got):
    assert not check_docs.same(["2.3718106357115953 2.3817858480799083"], got, R10)


def test_digest_only_with_sha256_marker():
    a = "sha256 " + "0" * 63 + "1"
    b = "sha256 " + "f" * 64
    assert not check_docs.same([a], [b], R10)
    assert check_docs.same([a], [b], (1e-10, True))


def test_marker_parsing():
    lines = ["text", "<!-- check_docs: rtol 1e-10 -->", "```python",
             "<!-- check_docs: rtol 2e-12, sha256 -->", "```console", "```"]
    assert check_docs.tolerance(lines, 2) == (1e-10, False)
    assert check_docs.tolerance(lines, 4) == (2e-12, True)
    assert check_docs.tolerance(lines, 5) == EXACT
    assert check_docs.tolerance(lines, 0) == EXACT
