#!/usr/bin/env bash
# Accountant benchmark: dpzo vs dp_accounting and Opacus on the same workloads.
# Installs the reference libraries with pip (benchmark only; never a build or test
# dependency), runs both sides and prints the comparison tables.
#   bash bench/run.sh [--full]     (--full also times the anchors at 1000 events, ~30 s)
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q dp-accounting >/dev/null 2>&1 || true
python3 -m pip install -q --no-deps opacus >/dev/null 2>&1 || true
out=${BENCH_OUT:-bench/results}
mkdir -p "$out"
python3 bench/anchors.py "$@" > "$out/anchors.json"
build/bin/dpzo-bench ${DPZO_BENCH_ARGS:-} > "$out/ours.json"
python3 bench/report.py "$out/anchors.json" "$out/ours.json" | tee "$out/report.md"
