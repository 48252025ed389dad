#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 18's CPU speed goals for `dpzo train`, as ratios measured in one run on this machine:
#   step / sgemm     mlp:128's DPZero step (Fashion-MNIST 784-128-10, batch 256, Q = 1,
#                    Gaussian directions, the trainer's real step) over OpenBLAS's cblas_sgemm
#                    time for the step's four matrix products (104 MFLOP), same process and
#                    threads (goal <= 1.5);
#   dpzo / PyTorch   the same step over the same DPZero step in PyTorch (bench/torch_step.py:
#                    nn.Sequential(Linear, ReLU, Linear), four randn passes, clip, noise,
#                    update), same CPU and thread count (goal < 1);
#   step / fwd2      the step over its two plain forward passes, mlp:128 and cnn:8-16
#                    (goal <= 1.2).
# The BLAS and its kernels (dpzo's selection, dpzo/blas.h: on a CPU with AVX2 or AVX-512 that
# OpenBLAS does not know, dpzo switches OpenBLAS from its generic SSE3 kernels to the CPU's
# class) are printed for each variant.
# For each thread count (1 and nproc); unless PRESCOTT=0, again with OpenBLAS held to its
# generic SSE3 kernels (OPENBLAS_CORETYPE=Prescott, which dpzo respects: what OpenBLAS 0.3.21
# alone gives a CPU it does not know; PyTorch unchanged); unless HASWELL=0, again with
# OpenBLAS forced to its AVX2 kernels (OPENBLAS_CORETYPE=Haswell; PyTorch held to AVX2 likewise; dpzo's own
# target_clones code still picks AVX-512 on an AVX-512 machine, so this only approximates an
# AVX2-only CPU). dpzo's rounds and PyTorch's alternate in one PyTorch process (load from other
# jobs hits both); each side reports min and median.
#
# How to run (builds nothing; takes about 1.5-3 minutes on 2 cores):
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target dpzo-bench-zo
#   make test            # or anything that creates build/venv with torch (requirements-test.txt)
#   bash bench/cpu_step.sh
# writes bench/results/cpu_step.jsonl (raw lines) and bench/results/cpu_step.md (the table).
# Settings (environment): BUILD (build dir, default build), AVX2_BUILD (see below), PYTHON (default build/venv/bin/python),
# OUT (default bench/results), THREADS (default "1 $(nproc)"), HASWELL (1/0), PRESCOTT (1/0),
# ALTERNATIONS (3),
# ROUNDS (3 rounds per process), STEPS (dpzo steps per process, 30), TORCH_STEPS (PyTorch steps
# per round, 10), MIN_TIME (seconds per round of each forward/sgemm timing, 0.15), NOTE (a
# sentence printed under the machine line, e.g. which source the build is of).
# Without torch the dpzo side still runs (the PyTorch column says "not run") and the script
# says how to get torch; it exits 0. Not part of CI (benchmarks are not tests).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BENCH=$BUILD/bin/dpzo-bench-zo
PY=${PYTHON:-build/venv/bin/python}
OUT=${OUT:-bench/results}
NPROC=$(nproc)
THREADS=${THREADS:-"1 $NPROC"}
HASWELL=${HASWELL:-1}
PRESCOTT=${PRESCOTT:-1}
ALTERNATIONS=${ALTERNATIONS:-3}
ROUNDS=${ROUNDS:-3}
STEPS=${STEPS:-30}
TORCH_STEPS=${TORCH_STEPS:-10}
MIN_TIME=${MIN_TIME:-0.15}
# AVX2_BUILD: a build configured with -DDPZO_EMULATE_AVX2=ON (dpzo's own loops for Haswell,
# no multiversioning); the haswell variant then runs its dpzo-bench-zo, so that dpzo's code
# and OpenBLAS's are both AVX2 (default: none, and the haswell variant is OpenBLAS's only)
AVX2_BUILD=${AVX2_BUILD:-}
if [[ -n $AVX2_BUILD && ! -x $AVX2_BUILD/bin/dpzo-bench-zo ]]; then
    echo "cpu_step.sh: $AVX2_BUILD/bin/dpzo-bench-zo not found; build it first:" >&2
    echo "  cmake -S . -B $AVX2_BUILD -DCMAKE_BUILD_TYPE=Release -DDPZO_EMULATE_AVX2=ON && cmake --build $AVX2_BUILD --target dpzo-bench-zo" >&2
    exit 1
fi

if [[ ! -x $BENCH ]]; then
    echo "cpu_step.sh: $BENCH not found; build it first:" >&2
    echo "  cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release && cmake --build $BUILD --target dpzo-bench-zo" >&2
    exit 1
fi
have_torch=1
if ! "$PY" -c 'import torch, numpy' >/dev/null 2>&1; then
    have_torch=0
    PY=python3
    torch_msg="cpu_step.sh: no torch (and numpy) in ${PYTHON:-build/venv/bin/python}: the PyTorch side is not run.
  To get it: 'make test' creates build/venv from requirements-test.txt, or
  python3 -m venv build/venv && build/venv/bin/pip install torch numpy
  (or set PYTHON to a Python that has torch), then run bash bench/cpu_step.sh again."
    echo "$torch_msg" >&2
fi

mkdir -p "$OUT"
raw=$OUT/cpu_step.jsonl
# both outputs are written next to their final names and renamed into place (atomic: an
# interrupted run or a failing report leaves the previous results whole)
tmp=$(mktemp "$OUT/.cpu_step.jsonl.XXXXXX")
tmp_md=$(mktemp "$OUT/.cpu_step.md.XXXXXX")
trap 'rm -f "$tmp" "$tmp_md"' EXIT
python3 bench/report_cpu_step.py machine --build "$BUILD" > "$tmp"

# unique thread counts, in order
declare -A seen=()
threads=()
for t in $THREADS; do
    [[ -n ${seen[$t]:-} ]] || { seen[$t]=1; threads+=("$t"); }
done
variants=(native)
[[ $HASWELL == 1 ]] && variants+=(haswell)
[[ $PRESCOTT == 1 ]] && variants+=(prescott)

for variant in "${variants[@]}"; do
    envs=()
    if [[ $variant == haswell ]]; then
        envs=(OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2
              ONEDNN_MAX_CPU_ISA=AVX2)
    elif [[ $variant == prescott ]]; then
        envs=(OPENBLAS_CORETYPE=Prescott)
    else
        envs=(-u OPENBLAS_CORETYPE)   # OpenBLAS chooses, then dpzo's selection
    fi
    for t in "${threads[@]}"; do
        echo "cpu_step.sh: $variant, $t thread(s)" >&2
        bench=$BENCH
        [[ $variant == haswell && -n $AVX2_BUILD ]] && bench=$AVX2_BUILD/bin/dpzo-bench-zo
        zo=("$bench" --algorithm dpzero --threads "$t" --rounds "$ROUNDS" --steps "$STEPS"
            --min-time "$MIN_TIME")
        if [[ $have_torch == 1 ]]; then
            env "${envs[@]}" "$PY" bench/torch_step.py --threads "$t" --rounds "$ROUNDS" \
                --steps "$TORCH_STEPS" --min-time "$MIN_TIME" --alternate "$ALTERNATIONS" \
                --tag variant="$variant" -- "${zo[@]}" --model mlp:128 >> "$tmp"
        else
            for ((a = 0; a < ALTERNATIONS; a++)); do
                env "${envs[@]}" "${zo[@]}" --model mlp:128 |
                    python3 bench/report_cpu_step.py tag variant="$variant" side=dpzo >> "$tmp"
            done
        fi
        env "${envs[@]}" "${zo[@]}" --model cnn:8-16 |
            python3 bench/report_cpu_step.py tag variant="$variant" side=dpzo >> "$tmp"
    done
done
python3 bench/report_cpu_step.py machine --end >> "$tmp"
AVX2_BUILD=$AVX2_BUILD python3 bench/report_cpu_step.py report "$tmp" > "$tmp_md"
chmod 644 "$tmp" "$tmp_md"
mv "$tmp" "$raw"
mv "$tmp_md" "$OUT/cpu_step.md"
trap - EXIT
cat "$OUT/cpu_step.md"
if [[ $have_torch == 0 ]]; then
    echo "$torch_msg" >&2
fi
exit 0
