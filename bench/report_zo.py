#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Table of bench/bench_zo.c's JSON lines: a zeroth-order step against its two forward
passes, the step's fused +/- evaluation, steps per second, memory against inference and,
where the line has it, the step against cblas_sgemm's time for its matrix products. Times
are medians over the rounds' samples (lines without the *_min_s fields: means, as written
before the rounds).

    build/bin/dpzo-bench-zo --steps 60 > bench/results/ours_zo.jsonl
    python3 bench/report_zo.py bench/results/ours_zo.jsonl
"""
import json
import sys


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print("| model | params | batch | Q | 2 forward passes | fused +/- passes | ZO step "
          "| step / (Q x 2 fwd) | steps/s | peak RSS inference | peak RSS training "
          "| one batch of activations | step / sgemm |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        pm = "%.2f ms" % (1e3 * r["pm_s"]) if "pm_s" in r else "-"
        sg = ("%.2fx" % r["step_over_sgemm"]) if r.get("step_over_sgemm") else "-"
        print("| %s | %d | %d | %d | %.2f ms | %s | %.2f ms | %.2fx | %.1f | %.1f MiB "
              "| %.1f MiB | %.2f MiB | %s |" % (
                  r["model"], r["n_params"], r["batch"], r["queries"], 1e3 * r["fwd2_s"], pm,
                  1e3 * r["step_s"], r["ratio"], r["steps_per_s"], r["rss_inference_mib"],
                  r["rss_train_mib"], r["batch_activations_mib"], sg))
    print()
    print("Goal: a ZO step at most 1.2x its two forward passes; training memory at most one "
          "batch of activations above inference (peak RSS includes the data set).")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/ours_zo.jsonl")
