#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/install/run.sh: ctest install_consumer (docs/install.md).
#
# Installs the build tree's dpzo to a fresh prefix P with `cmake --install`, builds
# tests/install/consumer.c against P both ways a user would (pkg-config, and a CMake project
# with find_package(dpzo)), runs both and checks that each passed its published-value checks
# and bound P's libdpzo.so, not the build tree's. Also checks the installed layout, the
# CLI, the license files and the license in dpzo.pc and in the CMake package.
#
# usage: run.sh <build dir> <source dir> <work dir> <C compiler> [extra C flags]
set -euo pipefail
build=$(cd "$1" && pwd); src=$(cd "$2" && pwd); work=$3; cc=$4; cflags=${5:-}
rm -rf "$work"; mkdir -p "$work"; work=$(cd "$work" && pwd)
P=$work/prefix
fail() { echo "install_consumer: $*" >&2; exit 1; }
command -v pkg-config > /dev/null || fail "pkg-config not found (Debian: apt-get install pkgconf)"

cmake --install "$build" --prefix "$P" > "$work/install.log" || fail "cmake --install failed"
for f in include/dpzo/dpzo.h include/dpzo/status.h lib/pkgconfig/dpzo.pc \
         lib/cmake/dpzo/dpzoConfig.cmake lib/cmake/dpzo/dpzoConfigVersion.cmake \
         lib/cmake/dpzo/dpzoTargets.cmake bin/dpzo; do
    [ -e "$P/$f" ] || fail "not installed: P/$f"
done
soname=$(readelf -d "$P/lib/libdpzo.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] && [ -L "$P/lib/$soname" ] && [ -L "$P/lib/libdpzo.so" ] \
    || fail "P/lib/libdpzo.so and its SONAME link ($soname) are not both links"
if ls "$P"/lib/*.a > /dev/null 2>&1; then fail "static archives installed: $(ls "$P"/lib/*.a)"; fi
# a CUDA build's kernels go beside libdpzo.so, where kernels/cuda/load.c looks for them
if [ -e "$build/lib/libdpzo_cuda.so" ] && [ ! -f "$P/lib/libdpzo_cuda.so" ]; then
    fail "not installed: P/lib/libdpzo_cuda.so (the build has the CUDA kernels)"
fi
"$P/bin/dpzo" --version | grep -q '^dpzo ' || fail "P/bin/dpzo --version"
# the license: its text and notice beside the library, its identifier in dpzo.pc
for f in LICENSE NOTICE; do
    cmp -s "$src/$f" "$P/share/doc/dpzo/$f" || fail "P/share/doc/dpzo/$f is not the source tree's $f"
done
grep -qx 'License: Apache-2.0' "$P/lib/pkgconfig/dpzo.pc" || fail "dpzo.pc has no 'License: Apache-2.0'"

run_consumer() { # name, executable, [env...]
    local name=$1 exe=$2; shift 2
    env "$@" "$exe" > "$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "$name: consumer failed"; }
    cat "$work/$name.out"
    grep -qx OK "$work/$name.out" || fail "$name: no OK"
    local lib; lib=$(sed -n 's/^library //p' "$work/$name.out")
    [ "$(readlink -f "$lib")" = "$(readlink -f "$P/lib/libdpzo.so")" ] \
        || fail "$name: bound $lib, not the installed $P/lib/libdpzo.so"
}

# 1. pkg-config, run with LD_LIBRARY_PATH as a user without an rpath would. Only P's .pc
# files are visible: linking the shared library must not need the dependencies' .pc files
# (GSL or MPFR built from source often have none; the loader finds their libraries).
export PKG_CONFIG_LIBDIR=$P/lib/pkgconfig
unset PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs dpzo) || fail "pkg-config --cflags --libs dpzo"
echo "pkg-config --cflags --libs dpzo: $flags"
# shellcheck disable=SC2086
"$cc" -std=c17 -Wall -Wextra -Werror $cflags -o "$work/consumer-pc" "$src/tests/install/consumer.c" \
    $flags -lm || fail "compiling with pkg-config's flags"
run_consumer pkg-config "$work/consumer-pc" LD_LIBRARY_PATH="$P/lib"

# 2. find_package(dpzo): CMake records P/lib in the program's build rpath by itself.
unset PKG_CONFIG_LIBDIR
cmake -S "$src/tests/install" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$P" \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" > "$work/cmake.log" 2>&1 \
    || { cat "$work/cmake.log"; fail "configuring the find_package project"; }
cmake --build "$work/cmake-build" > "$work/cmake-build.log" 2>&1 \
    || { cat "$work/cmake-build.log"; fail "building the find_package project"; }
run_consumer find_package "$work/cmake-build/consumer"
echo "install_consumer: OK"
