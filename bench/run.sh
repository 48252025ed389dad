#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Accountant benchmark: dpzo vs dp_accounting and Opacus on the same workloads.
# Installs the reference libraries with pip (benchmark only; never a build or test
# dependency), runs both sides and prints the comparison tables.
#   bash bench/run.sh [--full]     (--full also times the RDP anchors at 1000 events, ~30 s,
#                                   and runs every PLD/PRV anchor case, ~9 min)
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q dp-accounting >/dev/null 2>&1 || true
python3 -m pip install -q --no-deps opacus >/dev/null 2>&1 || true
out=${BENCH_OUT:-bench/results}
mkdir -p "$out"
python3 bench/anchors.py "$@" > "$out/anchors.json"
build/bin/dpzo-bench ${DPZO_BENCH_ARGS:-} > "$out/ours.json"
python3 bench/report.py "$out/anchors.json" "$out/ours.json" | tee "$out/report.md"

# Tight accountants (PLD / PRV) against dp_accounting's PLD and prv_accountant.
# The anchors take about 9 minutes in full; without --full only the quick subset runs.
python3 -m pip install -q prv-accountant >/dev/null 2>&1 || true
if [[ " $* " == *" --full "* ]]; then
    python3 bench/anchors_pld.py --out "$out/anchors_pld.json"
    anchors_pld="$out/anchors_pld.json"
else
    python3 bench/anchors_pld.py --quick --out "$out/anchors_pld.quick.json"
    anchors_pld="$out/anchors_pld.quick.json"
fi
build/bin/dpzo-bench-pld > "$out/ours_pld.json"
python3 bench/report_pld.py "$anchors_pld" "$out/ours_pld.json" | tee "$out/report_pld.md"
# 1000 distinct steps at grid 1e-4 against dp_accounting, one run (issue 20; about 2 min)
if [[ " $* " == *" --full "* ]]; then
    python3 bench/pld_distinct.py --out "$out/pld_distinct.md"
fi

# LMO noise search against the pure-Python replica of the released search (one core).
{
    echo '{"runs": ['
    python3 bench/lmo_replica.py --grid paper-script --objective max-epsilon --epsilon 0.3 --json
    echo ','
    python3 bench/lmo_replica.py --grid paper --objective max-epsilon --epsilon 0.3 --json
    echo ','
    python3 bench/lmo_replica.py --grid paper --objective usefulness --epsilon 0.3 --json
    echo ']}'
} > "$out/replica_lmo.json"
build/bin/dpzo-bench-lmo > "$out/ours_lmo.json"
python3 bench/report_lmo.py "$out/replica_lmo.json" "$out/ours_lmo.json" | tee "$out/report_lmo.md"

# Zeroth-order training step against its two forward passes (Fashion-MNIST).
build/bin/dpzo-bench-zo > "$out/ours_zo.jsonl"
python3 bench/report_zo.py "$out/ours_zo.jsonl" | tee "$out/report_zo.md"

# Python package call overhead: dpzo.epsilon / dpzo.calibrate against the C library, the CLI,
# dp_accounting and Opacus (bench/python_overhead.py; needs the dpzo_shared target, and
# dp-accounting and opacus with torch for its anchor rows, which it reports as not run
# otherwise).
PYTHONPATH=python DPZO_LIBRARY=build/lib/libdpzo.so python3 bench/python_overhead.py \
    --cli build/bin/dpzo --out "$out/python_overhead.md"
