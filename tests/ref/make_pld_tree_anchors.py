#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/ref/make_pld_tree_anchors.py: dp_accounting's PLD epsilon for n distinct
Poisson-sampled Gaussian steps (q = 0.01, sigma = numpy.linspace(1, 2, n), delta = 1e-6)
at the grid dpzo's test uses, for tests/test_pld_tree.c (written to pld_tree_anchors.h).

Run with the project's reference environment (dp_accounting 0.6.0, numpy):
    /work/main/build/venv/bin/python tests/ref/make_pld_tree_anchors.py
It takes about a minute."""
import os

import numpy as np
import dp_accounting
from dp_accounting.pld import PLDAccountant

ROWS = [("DP_ACC_100", 100, 1e-3), ("DP_ACC_1000", 1000, 1e-3)]


def epsilon(n, d):
    event = dp_accounting.ComposedDpEvent(
        [dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(float(s)))
         for s in np.linspace(1.0, 2.0, n)])
    acc = PLDAccountant(value_discretization_interval=d)
    acc.compose(event)
    return acc.get_epsilon(1e-6)


def main():
    lines = ["/* tests/ref/pld_tree_anchors.h: written by make_pld_tree_anchors.py",
             f" * (dp_accounting {dp_accounting.__version__ if hasattr(dp_accounting, '__version__') else '0.6.0'},"
             f" numpy {np.__version__}); do not edit. */"]
    for name, n, d in ROWS:
        lines.append(f"#define {name} {epsilon(n, d)!r} /* n = {n}, grid {d:g} */")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pld_tree_anchors.h")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
