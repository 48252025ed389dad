#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer target of a DPZO_FUZZ build for a bounded time (docs/fuzzing.md).
#   fuzz/run.sh [SECONDS]        (default $FUZZ_SECONDS, else 300 per target)
# Environment: FUZZ_BUILD (build-fuzz), FUZZ_TARGETS (all), FUZZ_JOBS (targets run at once,
# default: the cores), FUZZ_TIMEOUT (seconds one input may take, default 60), FUZZ_SEED
# (libFuzzer -seed; unset: random), FUZZ_RSS_MB (2048).
# New inputs go to $FUZZ_BUILD/fuzz-corpus/TARGET (kept between runs: the seeds in
# fuzz/corpus/TARGET and fuzz/regressions/TARGET are read, never written); a crashing,
# leaking or slow input is saved as $FUZZ_BUILD/fuzz-artifacts/TARGET/{crash,leak,timeout,
# oom}-HASH and the run fails, listing them. Keep one: copy it into fuzz/regressions/TARGET/.
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-${FUZZ_SECONDS:-300}}
B=${FUZZ_BUILD:-build-fuzz}
TIMEOUT=${FUZZ_TIMEOUT:-60}
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
ALL="rdp_poisson rdp_wor pld prv calibrate lmo_rdp lmo_pld audit profile config claim grid idx train_ckpt lmo_search_ckpt event"
TARGETS=${FUZZ_TARGETS:-$ALL}
LOGS=$B/fuzz-logs
rm -rf "$B/fuzz-artifacts" "$LOGS"
mkdir -p "$LOGS"

run_one() {
    local t=$1
    local bin=$B/bin/fuzz_$t
    if [ ! -x "$bin" ]; then
        echo "fuzz: $bin is missing (make fuzz builds it)" >"$LOGS/$t.log"
        return 1
    fi
    mkdir -p "$B/fuzz-corpus/$t" "$B/fuzz-artifacts/$t"
    local seed=()
    [ -n "${FUZZ_SEED:-}" ] && seed=(-seed="$FUZZ_SEED")
    # The dictionary-free default; -rss_limit_mb bounds memory, -timeout each input's time.
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        "$bin" -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" \
        -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -print_final_stats=1 "${seed[@]}" \
        -artifact_prefix="$B/fuzz-artifacts/$t/" \
        "$B/fuzz-corpus/$t" "fuzz/corpus/$t" "fuzz/regressions/$t" >"$LOGS/$t.log" 2>&1
}
export -f run_one
export B SECONDS_EACH TIMEOUT LOGS

start=$(date +%s)
echo "fuzz: $(echo $TARGETS | wc -w) targets, ${SECONDS_EACH} s each, $JOBS at a time, per-input timeout ${TIMEOUT} s${FUZZ_SEED:+, seed $FUZZ_SEED}"
printf '%s\n' $TARGETS | xargs -P "$JOBS" -I{} bash -c 'run_one {}; echo "$? {}"' >"$LOGS/status" 2>&1
fail=0
for t in $TARGETS; do
    rc=$(awk -v t="$t" '$2 == t {print $1}' "$LOGS/status")
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$LOGS/$t.log" | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]*' "$LOGS/$t.log" | tail -1)
    if [ "$rc" = "0" ]; then
        echo "fuzz: $t: ok (${execs:-?} inputs, ${cov:-cov: ?})"
    else
        fail=1
        echo "fuzz: $t: FAILED (exit ${rc:-?}); log $LOGS/$t.log"
        grep -E 'ERROR: |dpzo fuzz check failed|runtime error|SUMMARY|Test unit written|Deadly|timeout' "$LOGS/$t.log" | head -8 | sed 's/^/    /'
    fi
done
echo "fuzz: $(( $(date +%s) - start )) s"
if [ $fail -ne 0 ]; then
    echo "fuzz: failures. Reproduce: $B/bin/fuzz_TARGET FILE (or build-*/bin/fuzz_replay_TARGET FILE);"
    echo "      keep each as a regression test: cp FILE fuzz/regressions/TARGET/ (docs/fuzzing.md)"
    find "$B/fuzz-artifacts" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \
        -o -name 'leak-*' \) | sort | sed 's/^/    /' | head -40
fi
exit $fail
