#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages dpzo builds and tests with, if any is missing (libsodium-dev:
# SHA-256 and the batch sampler's ChaCha20; python3-venv:
# the virtual environment `make test` creates for the Python suite; libopenblas-dev: the
# built-in models' matrix products; clang and
# libclang-rt-14-dev: libFuzzer for `make fuzz`, docs/fuzzing.md; wordnet-base: the WordNet 3.0
# glosses of the MiniLM example, docs/minilm_wordnet.md).
# Runs as root (the project's machines do); uses sudo otherwise when available.
set -euo pipefail
packages=(build-essential cmake pkg-config libgsl-dev libmpfr-dev libgmp-dev libcjson-dev
          libsodium-dev libcmocka-dev python3-mpmath python3-venv zlib1g-dev gnuplot-nox libopenblas-dev
          dataset-fashion-mnist clang libclang-rt-14-dev wordnet-base)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "dpzo: installing missing packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}"
