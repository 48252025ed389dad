#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run.sh: the CUDA backend's evidence run on a lent GPU machine (docs/cuda.md).
#
# The GPU machine has nvcc, CMake and PyTorch but no Debian registry, so dpzo's C
# dependencies travel as .deb files in the git-ignored folder .gpu-deps/ (fetched on a
# machine with apt by `scripts/gpu-run.sh --fetch`), are unpacked with dpkg -x (or ar + tar)
# into a private prefix and found through CMAKE_PREFIX_PATH. Then: build with CUDA, the
# GPU tests (ctest -L gpu) with and without compute-sanitizer, the bandwidth benchmark,
# the compiler's resource report; everything into $OUT (default ./gpu-out).
#
#   here:        scripts/gpu-run.sh --fetch        # once: the .debs into .gpu-deps/
#   device tool: run(command="bash scripts/gpu-run.sh", carry=[".gpu-deps"])
#
# Environment: OUT (results folder), BUILD (build folder, default /tmp/dpzo-gpu-build),
# ARCHS (CMAKE_CUDA_ARCHITECTURES, default "80;90"), BENCH_D (parameters for the benchmark,
# default 2^28), SANITIZE=0 to skip compute-sanitizer, PLUGIN=1 to add the PyTorch plugin's
# CUDA tests and step benchmark (section 7; BENCH_TIMEOUT per model, default 120 s). Exit
# status: that of the GPU tests. $OUT receives at most 8 files (the device tool brings back
# 8): gpu-run.log, resource-usage.txt, ctest-gpu.txt, sanitizer.txt, bench-cuda.txt,
# bench-cuda.tsv, and with PLUGIN=1 plugin-tests.txt and bench-plugin.jsonl.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEPS_DIR=$ROOT/.gpu-deps
DEB_PACKAGES=(libgsl-dev libgsl27 libgslcblas0 libmpfr-dev libmpfr6 libgmp-dev libgmp10
              libgmpxx4ldbl libcjson-dev libcjson1 libcmocka-dev libcmocka0 zlib1g-dev zlib1g
              libopenblas-dev libopenblas-pthread-dev libopenblas0-pthread libopenblas0
              libgfortran5)

if [ "${1:-}" = "--fetch" ]; then
    mkdir -p "$DEPS_DIR"
    (cd "$DEPS_DIR" && apt-get download "${DEB_PACKAGES[@]}")
    du -sh "$DEPS_DIR"
    exit 0
fi

OUT=${OUT:-$ROOT/gpu-out}
BUILD=${BUILD:-/tmp/dpzo-gpu-build}
ARCHS=${ARCHS:-80;90}
BENCH_D=${BENCH_D:-268435456}
PREFIX=/tmp/dpzo-gpu-deps
mkdir -p "$OUT"
LOG=$OUT/gpu-run.log
: >"$LOG"
say() { echo "== $*" | tee -a "$LOG"; }
run() { echo "\$ $*" >>"$LOG"; "$@" >>"$LOG" 2>&1; }

# 1. the machine
say "machine"
run nvidia-smi
run nvcc --version || run /usr/local/cuda/bin/nvcc --version
run cmake --version
run gcc --version
export PATH=$PATH:/usr/local/cuda/bin

# 2. the dependencies
say "dependencies from $DEPS_DIR"
mkdir -p "$PREFIX"
shopt -s nullglob
debs=("$DEPS_DIR"/*.deb)
if [ ${#debs[@]} -eq 0 ]; then
    say "no .deb in $DEPS_DIR (carry .gpu-deps; fetch with scripts/gpu-run.sh --fetch): using the system's"
fi
for f in "${debs[@]}"; do
    if command -v dpkg >/dev/null; then
        dpkg -x "$f" "$PREFIX"
    else
        tmp=$(mktemp -d)
        (cd "$tmp" && ar x "$f" && tar -xf data.tar.* -C "$PREFIX")
        rm -rf "$tmp"
    fi
done
LIBDIR=$PREFIX/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$LIBDIR:$LIBDIR/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Debian's libgmp-dev puts gmp.h in the multiarch folder, which mpfr.h includes as <gmp.h>
# (measured at 81bcb55 on an H100: without this the build stops there)
export CPATH=$PREFIX/usr/include/x86_64-linux-gnu:$PREFIX/usr/include${CPATH:+:$CPATH}

# 3. configure and build (warnings not fatal: the host compiler there may be newer)
say "build in $BUILD (CUDA architectures $ARCHS)"
start=$(date +%s)
if ! run cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPZO_WERROR=OFF \
        -DCMAKE_PREFIX_PATH="$PREFIX/usr" -DCMAKE_INCLUDE_PATH="$PREFIX/usr/include" \
        -DCMAKE_LIBRARY_PATH="$LIBDIR" -DGSL_ROOT_DIR="$PREFIX/usr" \
        -DCMAKE_CUDA_ARCHITECTURES="$ARCHS"; then
    say "configure FAILED (see $LOG)"; tail -40 "$LOG"; exit 2
fi
grep -q 'kernels/cuda is built' "$LOG" || { say "CUDA was NOT enabled (see $LOG)"; tail -40 "$LOG"; exit 2; }
if ! run cmake --build "$BUILD" -j "$(nproc)" --target test_cuda test_zo_dir dpzo-bench-cuda; then
    say "build FAILED (see $LOG)"; tail -60 "$LOG"; exit 2
fi
say "built in $(( $(date +%s) - start )) s"

# 4. the compiler's resource report and the SASS (no spills, no local memory, no FMA)
say "resources"
obj=$(find "$BUILD/kernels" -name 'zo_cuda.cu.o' | head -1)
if command -v cuobjdump >/dev/null && [ -n "$obj" ]; then
    cuobjdump --dump-resource-usage "$obj" >"$OUT/resource-usage.txt" 2>&1
    cuobjdump --dump-sass "$obj" >"$BUILD/sass.txt" 2>&1
    {
        echo "SASS instruction counts, all kernel images (DFMA/FFMA must be 0: -fmad=false;"
        echo "LDL/STL: local memory):"
        grep -oE '\b(DFMA|FFMA|DADD|DMUL|MUFU\.[A-Z0-9]+|LDL|STL)\b' "$BUILD/sass.txt" | sort | uniq -c
    } | tee -a "$LOG"
fi

# 5. the GPU tests, plain and under compute-sanitizer
say "ctest -L gpu"
(cd "$BUILD" && ctest -L gpu --output-on-failure -V) 2>&1 | tee "$OUT/ctest-gpu.txt" | tail -30
status=${PIPESTATUS[0]}
grep -q 'Skipped' "$OUT/ctest-gpu.txt" && say "WARNING: the GPU test was SKIPPED (no usable device?)"
if [ "${SANITIZE:-1}" != 0 ] && command -v compute-sanitizer >/dev/null; then
    : >"$OUT/sanitizer.txt"
    for tool in memcheck racecheck initcheck synccheck; do
        say "compute-sanitizer --tool $tool"
        echo "==== compute-sanitizer --tool $tool" >>"$OUT/sanitizer.txt"
        timeout "${SANITIZE_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 3 \
            "$BUILD/bin/test_cuda" >"$BUILD/sanitizer-$tool.txt" 2>&1
        rc=$?
        tail -25 "$BUILD/sanitizer-$tool.txt" >>"$OUT/sanitizer.txt"
        echo "   exit $rc ($(tail -1 "$BUILD/sanitizer-$tool.txt"))" | tee -a "$LOG"
    done
fi

# 6. the bandwidth benchmark
say "dpzo-bench-cuda $BENCH_D"
"$BUILD/bin/dpzo-bench-cuda" "$BENCH_D" "$OUT/bench-cuda.tsv" 2>&1 | tee "$OUT/bench-cuda.txt"

# 7. the PyTorch plugin (PLUGIN=1; docs/plugin.md): its CUDA tests against the CPU, bit for
# bit, then the step against MeZO's and the two forwards for the issue's models (bench/
# zo_step.py). Needs the machine's PyTorch (and transformers for the benchmark); pytest when
# present. Two more files in $OUT: plugin-tests.txt and bench-plugin.jsonl.
if [ "${PLUGIN:-0}" = 1 ]; then
    say "plugin: build the shared library, the CLI and dpzo-zo-reference"
    if run cmake --build "$BUILD" -j "$(nproc)" --target dpzo_shared dpzo dpzo-zo-reference; then
        export PYTHONPATH=$ROOT/python DPZO_LIBRARY=$BUILD/lib/libdpzo.so DPZO_CLI=$BUILD/bin/dpzo
        if python3 -c 'import pytest' 2>/dev/null; then
            say "plugin tests (pytest)"
            python3 -m pytest -q -p no:cacheprovider python/tests/test_torch_cuda.py \
                python/tests/test_torch_plugin.py >"$OUT/plugin-tests.txt" 2>&1
            tail -3 "$OUT/plugin-tests.txt" | tee -a "$LOG"
        else
            say "no pytest on this machine: the plugin's CUDA tests did not run" |
                tee "$OUT/plugin-tests.txt"
        fi
        say "bench/zo_step.py (the issue's sizes)"
        for spec in "minilm float32 64 128" "roberta-base float32 64 128" \
                    "roberta-large float32 64 128" "roberta-large bfloat16 64 128" \
                    "opt-1.3b bfloat16 16 256"; do
            set -- $spec
            timeout "${BENCH_TIMEOUT:-120}" python3 bench/zo_step.py --device cuda --model "$1" \
                --dtype "$2" --batch "$3" --seq "$4" --reps 5 --json "$OUT/bench-plugin.jsonl" \
                2>&1 | tee -a "$LOG" | tail -5
        done
    else
        say "plugin build FAILED (see $LOG)"
    fi
fi

say "done: GPU tests exit $status; results in $OUT"
exit "$status"
