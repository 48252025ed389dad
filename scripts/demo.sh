#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make demo`: the main job on an embedded default. Calibrates noise for a typical DP run,
# writes a noise profile for DPZero on Fashion-MNIST (epsilon 3, delta 1/n), trains with it
# for about a minute and prints the test accuracy and the epsilon spent.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
dpzo="$BUILD/bin/dpzo"
out="$BUILD/demo"
mkdir -p "$out"

"$dpzo" demo
echo
echo "== DPZero on Fashion-MNIST at epsilon 3, delta 1/60000 (examples/fmnist-dpzero.json) =="
"$dpzo" profile gaussian --epsilon 3 --delta 1.6666666666666667e-05 \
    --sampling-rate 0.004266666666666667 --steps 10000 --sensitivity 20 -o "$out/profile.json"
sed "s|\"fmnist-dpzero-profile.json\"|\"$PWD/$out/profile.json\"|" examples/fmnist-dpzero.json \
    > "$out/fmnist-dpzero.json"
"$dpzo" train --config "$out/fmnist-dpzero.json" --metrics "$out/metrics.jsonl"
