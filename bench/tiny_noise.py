# SPDX-License-Identifier: Apache-2.0
"""Issue 30: the tiny-noise and fixed-batch queries whose answers and times the stop notes
quote, for two dpzo binaries in one run (a baseline and the one under test), each command
run in turn on each binary, wall time and peak memory from /usr/bin/time.

  python3 bench/tiny_noise.py --old OLD/bin/dpzo --new build/bin/dpzo \
      [--out bench/results/tiny_noise_issue30.md]

Answers are the --json fields named per row; ratios are new time / old time."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchutil import emit, machine  # noqa: E402

TINY = ["--noise-multiplier", "0.01", "--sampling-rate", "0.004", "--steps", "1000",
        "--delta", "1e-5"]
BATCHES = ["--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size", "60000"]
ROWS = [
    ("RDP, sigma 0.01, q 0.004, 1000 steps", ["epsilon"] + TINY + ["--json"],
     lambda j: "%.6g (order %.6g)" % (j["epsilon"], j["order"])),
    ("PLD default grid, same", ["epsilon"] + TINY + ["--accountant", "pld", "--json"],
     lambda j: "[%.10g, %.10g]" % (j["epsilon_lower"], j["epsilon_upper"])),
    ("PLD grid 0.05, same", ["epsilon"] + TINY + ["--accountant", "pld", "--grid", "0.05",
                                                  "--json"],
     lambda j: "[%.10g, %.10g]" % (j["epsilon_lower"], j["epsilon_upper"])),
    ("audit of epsilon 11000 at grid 0.05, same",
     ["audit"] + TINY + ["--epsilon", "11000", "--grid", "0.05", "--json"],
     lambda j: "%s [%.8g, %.8g]" % (j["claims"][0]["verdict"], j["claims"][0]["lower"],
                                    j["claims"][0]["upper"])),
    ("PLD, batches of 256 of 60000, sigma 1.1, 1000 steps",
     ["epsilon"] + BATCHES + ["--steps", "1000", "--delta", "1e-5", "--accountant", "pld",
                              "--json"],
     lambda j: "[%.10g, %.10g]" % (j["epsilon_lower"], j["epsilon_upper"])),
    ("calibrate, batches of 256 of 60000, 60 epochs, epsilon 3 (PLD)",
     ["calibrate", "--epsilon", "3", "--delta", "1e-5", "--batch-size", "256",
      "--dataset-size", "60000", "--epochs", "60", "--accountant", "pld", "--json"],
     lambda j: "sigma %.8g, lower %.8g" % (j["noise_multiplier"], j["epsilon_lower"])),
    ("audit, batches of 256 of 60000, 60 epochs, epsilon 3",
     ["audit"] + BATCHES + ["--epochs", "60", "--epsilon", "3", "--delta", "1e-5", "--json"],
     lambda j: "%s [%.8g, %.8g]" % (j["claims"][0]["verdict"], j["claims"][0]["lower"],
                                    j["claims"][0]["upper"])),
]


def run(binary, argv):
    """(seconds, peak MiB, answer or the error's last line)."""
    with tempfile.NamedTemporaryFile("r") as tf:
        p = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", tf.name, binary] + argv,
                           capture_output=True, text=True)
        secs, kb = tf.read().split()[-2:]
    if p.returncode != 0:
        return float(secs), int(kb) / 1024, "exit %d: %s" % (
            p.returncode, (p.stderr.strip().splitlines() or [""])[-1])
    return float(secs), int(kb) / 1024, json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="the baseline dpzo binary")
    ap.add_argument("--new", required=True, help="the dpzo binary under test")
    ap.add_argument("--out", help="also write the report here")
    a = ap.parse_args()
    lines = ["# Tiny noise and fixed batches, two binaries in one run (issue 30)", "",
             "Machine: " + machine(), "", "old: `%s`; new: `%s`" % (a.old, a.new), "",
             "| query | old: answer | old s (MiB) | new: answer | new s (MiB) | new/old |",
             "|---|---|---:|---|---:|---:|"]
    for label, argv, fmt in ROWS:
        cells = []
        for b in (a.old, a.new):
            s, mib, j = run(b, argv)
            ans = j if isinstance(j, str) else fmt(j)
            cells.append((ans, s, mib))
        (ao, so, mo), (an, sn, mn) = cells
        lines.append("| %s | %s | %.2f (%.0f) | %s | %.2f (%.0f) | %.2f |" % (
            label, ao, so, mo, an, sn, mn, sn / so if so > 0 else float("nan")))
    lines += ["", "Command lines: `dpzo " + "`; `dpzo ".join(" ".join(r[1]) for r in ROWS) + "`."]
    emit("\n".join(lines) + "\n", a.out)


if __name__ == "__main__":
    main()
