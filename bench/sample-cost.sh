#!/usr/bin/env bash
# What recording a block sample (--sample-blocks) costs on the I/O path: the null engine (no
# I/O, so the per-I/O cost is all storlab's), one worker at queue depth 1, with and without the
# sample, alternated ROUNDS times, on a small target (every block recorded: the most work) and
# a large one (1 block in 256 recorded: mostly the hash). Prints ns of storlab CPU per I/O.
#
#   ROUNDS=5 DURATION=5s bench/sample-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5s}
cargo build --release --locked -q
BIN=target/release/storlab
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
printf '%-7s %-8s %6s %12s %12s %10s\n' target mode round IOPS "ns CPU/IO" sampled
for r in $(seq "$ROUNDS"); do
  for size in 16MiB 64GiB; do
    for mode in plain sample; do
      flag=()
      [ "$mode" = sample ] && flag=(--sample-blocks)
      "$BIN" run --target "$OUT/absent-$size" --size "$size" --engine null --bs 4k \
        --read 70 --random 100 --qd 1 --duration "$DURATION" -q "${flag[@]}" \
        -o "$OUT/$size-$mode-$r.json" >/dev/null 2>&1
      python3 - "$OUT/$size-$mode-$r.json" "$size" "$mode" "$r" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
t, c = v["totals"], v["host_cpu"]
iops = t["read"]["iops"] + t["write"]["iops"]
cpu = (c["process_user_pct"] + c["process_system_pct"]) / 100
s = v.get("block_sample") or {}
print(f'{sys.argv[2]:<7} {sys.argv[3]:<8} {sys.argv[4]:>6} {iops:>12.0f} {cpu / iops * 1e9:>12.1f} {s.get("sampled", "-"):>10}')
PY
    done
  done
done
