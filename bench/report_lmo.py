#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Table of the LMO search timings: dpzo (bench_lmo.c) against the pure-Python replica of
the released search (bench/lmo_replica.py), both measured in the same run of bench/run.sh.

    python3 bench/report_lmo.py REPLICA.json OURS.json
"""
import json
import sys


def main():
    replica = json.load(open(sys.argv[1]))["runs"]
    ours = json.load(open(sys.argv[2]))["cases"]
    print("## LMO noise search: dpzo vs the Python replica of the released search\n")
    print("Paper mode is the bug-compatible constraint (the released code's single-step")
    print("epsilon); sound mode accounts the SST-2 run (q = 2048/67350, T = 192, delta 1e-10)")
    print("with proven bounds and certifies (exact integral included) only candidates that")
    print("can still win. The replica is single-threaded; dpzo rows say their thread count.\n")
    print("| search | dpzo s | replica s | replica / dpzo | same pick |")
    print("|---|---:|---:|---:|---|")
    for c in ours:
        rep = None
        if c["paper"]:
            for r in replica:
                if (r["grid"], r["objective"], r["threshold"]) == (
                        c["grid"], c["objective"], c["epsilon_target"]):
                    rep = r
        if rep:
            same = "yes" if rep["pick"]["index"] == c["index"] or abs(
                rep["pick"]["epsilon"] - c["epsilon"]) < 1e-9 else "no"
            print(f"| {c['name']} | {c['seconds']:.3f} | {rep['seconds']:.2f} | "
                  f"{rep['seconds'] / c['seconds']:.0f}x | {same} |")
        else:
            extra = f" ({c['distinct']} distinct, {c['certified']} certified)"
            print(f"| {c['name']}{extra} | {c['seconds']:.3f} | - | - | - |")


if __name__ == "__main__":
    main()
