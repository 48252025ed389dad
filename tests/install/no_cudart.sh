#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/install/no_cudart.sh: ctest abi_no_cudart (docs/cuda.md, docs/install.md).
#
#   no_cudart.sh <readelf> <nm> <libdpzo.so> <dpzo CLI> [<libdpzo_cuda.so>]
#
# libdpzo.so and the CLI must load without the CUDA runtime: no NEEDED entry for
# libcudart.so.* or the driver's libcuda.so.* (the kernels are libdpzo_cuda.so, opened with
# dlopen at the first CUDA call: kernels/cuda/load.c). In a CUDA build the kernels' library
# is given too and must be the one that carries that dependency (so the check above is not
# vacuous): NEEDED libcudart.so.<major>, never libcuda.so (the runtime opens the driver
# itself), and exactly one exported symbol, the launchers' table dpzo__cu_ops_v1.
set -euo pipefail
readelf=$1; nm=$2; lib=$3; cli=$4; cuda=${5:-}
fail() { echo "abi_no_cudart: $*" >&2; exit 1; }
needed() { "$readelf" -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

for f in "$lib" "$cli"; do
    [ -f "$f" ] || fail "$f does not exist"
    n=$(needed "$f")
    [ -n "$n" ] || fail "$f: no NEEDED entries at all (readelf failed?)"
    if bad=$(grep -E '^lib(cudart|cuda|nvidia|nvrtc)[^a-z]' <<< "$n"); then
        fail "$f needs $(tr '\n' ' ' <<< "$bad")(the CUDA kernels belong in libdpzo_cuda.so)"
    fi
    echo "$(basename "$f"): NEEDED $(tr '\n' ' ' <<< "$n")"
done
if [ -n "$cuda" ]; then
    [ -f "$cuda" ] || fail "$cuda does not exist"
    n=$(needed "$cuda")
    grep -Eq '^libcudart\.so\.[0-9]+$' <<< "$n" || fail "$cuda: no NEEDED libcudart.so.N: $n"
    if grep -Eq '^libcuda\.so' <<< "$n"; then fail "$cuda needs the driver libcuda.so"; fi
    syms=$("$nm" -D --defined-only "$cuda" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
    [ "$syms" = dpzo__cu_ops_v1 ] || fail "$cuda exports $(tr '\n' ' ' <<< "$syms")"
    echo "$(basename "$cuda"): NEEDED $(tr '\n' ' ' <<< "$n"); exports dpzo__cu_ops_v1"
fi
echo "abi_no_cudart: OK"
