#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/prv_memory.sh: time and peak resident size of million-step PRV queries against the
# memory limit (issue 20, item 5), with dpzo's PLD at grid 1e-4 on the same case as the
# anchor, run back to back. Each query is one process; its peak resident size is GNU time's
# %M (the process's ru_maxrss). Writes bench/results/prv_memory.md.
#
#   bench/prv_memory.sh [path/to/dpzo] [output.md]
set -euo pipefail
BIN=${1:-build/bin/dpzo}
OUT=${2:-bench/results/prv_memory.md}
TIME=/usr/bin/time
[ -x "$BIN" ] || { echo "no dpzo binary at $BIN (build the dpzo target)" >&2; exit 1; }
[ -x "$TIME" ] || { echo "needs GNU time at $TIME" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# label | arguments
CASES=(
  "A: q=0.01 sigma=1 k=1e6 delta=1e-6|PLD grid 1e-4, default limit|--noise-multiplier 1 --sampling-rate 0.01 --steps 1000000 --delta 1e-6 --accountant pld"
  "A: q=0.01 sigma=1 k=1e6 delta=1e-6|PRV eps_error 0.01, default limit (2048 MiB)|--noise-multiplier 1 --sampling-rate 0.01 --steps 1000000 --delta 1e-6 --accountant prv"
  "A: q=0.01 sigma=1 k=1e6 delta=1e-6|PRV eps_error 0.01, limit 256 MiB|--noise-multiplier 1 --sampling-rate 0.01 --steps 1000000 --delta 1e-6 --accountant prv --memory-limit 256"
  "A: q=0.01 sigma=1 k=1e6 delta=1e-6|PRV eps_error 0.01, limit 4096 MiB (room for the requested mesh)|--noise-multiplier 1 --sampling-rate 0.01 --steps 1000000 --delta 1e-6 --accountant prv --memory-limit 4096"
  "B: q=1 sigma=0.3 k=1e6 delta=1e-30 (issue 20)|PRV eps_error 0.01, default limit (2048 MiB)|--noise-multiplier 0.3 --sampling-rate 1 --steps 1000000 --delta 1e-30 --accountant prv"
  "B: q=1 sigma=0.3 k=1e6 delta=1e-30 (issue 20)|PLD grid 1e-4, default limit|--noise-multiplier 0.3 --sampling-rate 1 --steps 1000000 --delta 1e-30 --accountant pld"
)

i=0
for c in "${CASES[@]}"; do
  IFS='|' read -r label acc args <<< "$c"
  # shellcheck disable=SC2086
  if "$TIME" -f '%e %M' -o "$TMP/t$i" "$BIN" epsilon $args --json > "$TMP/o$i" 2> "$TMP/e$i"; then
    echo ok > "$TMP/s$i"
  else
    echo failed > "$TMP/s$i"
  fi
  printf '%s\t%s\n' "$label" "$acc" > "$TMP/l$i"
  echo "ran: $label / $acc: $(tail -n 1 "$TMP/t$i")" >&2
  i=$((i + 1))
done

python3 - "$TMP" "$i" "$OUT" "$BIN" <<'EOF'
import json, os, platform, subprocess, sys, datetime
tmp, n, out, binary = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return ""
model = sh("lscpu | sed -n 's/^Model name: *//p'") or platform.processor()
cpus = os.cpu_count()
flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
isa = ", ".join(f for f in ("avx512f", "avx2") if f" {f}" in flags)
mem = sh("awk '/MemTotal/ {printf \"%.1f GB\", $2 / 1048576}' /proc/meminfo")
commit = sh("git rev-parse --short HEAD")
rows = []
for i in range(n):
    label, acc = open(f"{tmp}/l{i}").read().rstrip("\n").split("\t")
    # GNU time writes "Command exited with non-zero status N" first when the query fails
    secs, kb = [l for l in open(f"{tmp}/t{i}").read().splitlines() if l.strip()][-1].split()[:2]
    ok = open(f"{tmp}/s{i}").read().strip() == "ok"
    peak = int(kb) / 1024
    if ok:
        r = json.load(open(f"{tmp}/o{i}"))
        iv = f"[{r['epsilon_lower']:.6f}, {r['epsilon_upper']:.6f}]"
        if r.get("fallback"):
            iv += " (fallback: " + r.get("fallback_reason", "") + ")"
        err = f"{r['eps_error']:.3g}" if "eps_error" in r else "-"
        mesh = f"{r.get('mesh', r.get('grid')):.4g}"
        rep = f"{r['memory_bytes'] / 1048576:.1f}"
        fft = str(int(r["fft_size"]))
    else:
        msg = open(f"{tmp}/e{i}").read().strip().replace("|", "/")
        iv, err, mesh, rep, fft = f"refused: {msg}", "-", "-", "-", "-"
    rows.append((label, acc, iv, err, mesh, fft, rep, f"{peak:.1f}", secs))
with open(out, "w") as f:
    f.write("# PRV and PLD memory: million-step queries against the memory limit\n\n")
    f.write(f"Written by `bench/prv_memory.sh` on {datetime.date.today().isoformat()}, commit {commit}, "
            f"binary `{binary}`. Machine: {model}, {cpus} cores"
            + (f" ({isa})" if isa else "") + f", {mem}; shared with other jobs while it ran, so "
            "times are indicative (compare rows of one run). Peak RSS is GNU time's %M (the "
            "process's ru_maxrss); `reported` is the query's own count of its peak bytes "
            "(`memory_bytes`), which the memory limit bounds. Intervals are the proven "
            "[lower, upper] epsilon, rounded to 6 decimals.\n\n")
    f.write("| case | accountant | interval | eps_error | mesh/grid | FFT length | reported MiB | peak RSS MiB | time s |\n")
    f.write("|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write("| " + " | ".join(r) + " |\n")
print(open(out).read())
EOF
