#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How dpzo gets full-width BLAS kernels on a CPU that OpenBLAS 0.3.21 does not know (issue 27),
# chosen by measurement: mlp:128's step products (bench/blas_choice.c, one thread, best of
# 3,000) with Debian's OpenBLAS under its own choice and under every kernel set this CPU can
# run (OPENBLAS_CORETYPE), and with Debian's BLIS (libblis4-serial, which dispatches by CPU
# features: its .deb is downloaded and unpacked into a temporary folder, never installed).
#   bash bench/blas_choice.sh          # writes bench/results/blas_choice.md (OUT=folder)
# Not part of CI (benchmarks are not tests). Needs gcc and apt-get (for BLIS; without it the
# BLIS row says so).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -std=c17 -O2 -Wall -Wextra -o "$tmp/blas_choice" bench/blas_choice.c -ldl
OPENBLAS=${OPENBLAS:-$(ls /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0 2>/dev/null || true)}
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { [[ " $flags " == *" $1 "* ]]; }
cores=(Prescott Sandybridge)
has avx2 && has fma && cores+=(Haswell)
has avx512f && has avx512bw && has avx512vl && has avx512dq && has avx512cd && cores+=(SkylakeX)
has avx512_bf16 && cores+=(Cooperlake)
rows=()
obv=$(dpkg-query -W -f '${Version}' libopenblas0-pthread 2>/dev/null || true)
if [[ -n $OPENBLAS ]]; then
    rows+=("OpenBLAS ${obv}, its own choice|$(env -u OPENBLAS_CORETYPE "$tmp/blas_choice" "$OPENBLAS")")
    for c in "${cores[@]}"; do
        rows+=("OpenBLAS ${obv}, OPENBLAS_CORETYPE=$c|$(OPENBLAS_CORETYPE=$c "$tmp/blas_choice" "$OPENBLAS")")
    done
fi
blis_note=""
if (cd "$tmp" && apt-get download libblis4-serial >/dev/null 2>&1); then
    dpkg -x "$tmp"/libblis4-serial_*.deb "$tmp/blis"
    lib=$(find "$tmp/blis" -name 'libblis.so.*' | head -1)
    rows+=("BLIS $(dpkg-deb -f "$tmp"/libblis4-serial_*.deb Version) (serial), its own choice|$("$tmp/blas_choice" "$lib")")
else
    blis_note="BLIS: not measured (apt-get download libblis4-serial failed)."
fi
mkdir -p "$OUT"
{
    echo "# Which BLAS gives mlp:128's step products full width (issue 27)"
    echo
    echo "Machine: **$(lscpu | sed -n 's/^Model name: *//p')** (family $(lscpu | sed -n 's/^CPU family: *//p'), model $(lscpu | sed -n 's/^Model: *//p')), $(nproc) logical CPUs; flags: $(for f in avx2 fma avx512f avx512_bf16; do has $f && printf '%s ' $f || printf 'no-%s ' $f; done); kernel $(uname -r). Run $(date -u +%Y-%m-%dT%H:%M:%SZ) with bench/blas_choice.sh at git $(git rev-parse --short HEAD 2>/dev/null || echo '?'); load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
    echo
    echo "The step's products (for each sign X[256x784] W1^T and H[256x128] W2^T: 104 MFLOP) with each library's cblas_sgemm, one thread, best of 3,000 repetitions; ratio = time over the fastest row."
    echo
    echo "| BLAS | kernels | 4 products | GFLOP/s | ratio |"
    echo "|---|---|---:|---:|---:|"
    best=$(for r in "${rows[@]}"; do python3 -c 'import json,sys; print(json.loads(sys.argv[1])["seconds"])' "${r#*|}"; done | sort -g | head -1)
    for r in "${rows[@]}"; do
        python3 -c '
import json, sys
name, j, best = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
print("| %s | %s | %.3f ms | %.0f | %.2f |" % (name, j["kernels"], j["seconds"] * 1e3, j["gflops"], j["seconds"] / best))
' "${r%%|*}" "${r#*|}" "$best"
    done
    [[ -n $blis_note ]] && { echo; echo "$blis_note"; }
} > "$tmp/blas_choice.md"
mv "$tmp/blas_choice.md" "$OUT/blas_choice.md"
cat "$OUT/blas_choice.md"
