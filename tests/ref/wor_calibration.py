# SPDX-License-Identifier: Apache-2.0
"""tests/ref/wor_calibration.py: dp_accounting 0.6.0's RDP calibration of WOR-sampled
Gaussian training (B 256 of N 60000, 2000 steps, epsilon 3 at delta 1e-5, replace-one,
its DEFAULT_RDP_ORDERS). Prints 0.8089185188244594 (tests/test_calibrate.c test_wor)."""
import dp_accounting
from dp_accounting import dp_event as E
from dp_accounting.rdp import rdp_privacy_accountant as R


def make(s):
    return E.SelfComposedDpEvent(
        E.SampledWithoutReplacementDpEvent(60000, 256, E.GaussianDpEvent(s)), 2000)


print(repr(dp_accounting.calibrate_dp_mechanism(
    lambda: R.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE),
    make, 3.0, 1e-5, bracket_interval=dp_accounting.ExplicitBracketInterval(0.5, 5.0),
    tol=1e-9)))
