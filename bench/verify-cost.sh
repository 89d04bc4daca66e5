#!/usr/bin/env bash
# What data verification costs: the same job with and without --verify, alternated, ROUNDS
# times, on one prepared file. Prints IOPS, storlab's CPU per I/O and the read-back pass.
#
#   ROUNDS=3 DURATION=10s SIZE=512MiB FILE=/var/tmp/storlab-verify.dat bench/verify-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
SIZE=${SIZE:-512MiB}
FILE=${FILE:-/var/tmp/storlab-verify.dat}
JOB=${JOB:---bs 4k --read 70 --random 100 --qd 32}
cargo build --release --locked -q
BIN=target/release/storlab
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$BIN" run --target "$FILE" --size "$SIZE" --duration 1s -q -o "$OUT/prepare.json" >/dev/null
printf '%-8s %6s %10s %10s %12s\n' mode round IOPS "µs CPU/IO" "read-back"
for r in $(seq "$ROUNDS"); do
  for mode in plain verify; do
    flag=()
    [ "$mode" = verify ] && flag=(--verify)
    # shellcheck disable=SC2086
    "$BIN" run --target "$FILE" $JOB --duration "$DURATION" -q "${flag[@]}" \
      -o "$OUT/$mode-$r.json" >/dev/null 2>&1 || true
    python3 - "$OUT/$mode-$r.json" "$mode" "$r" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
t, c = v["totals"], v["host_cpu"]
iops = t["read"]["iops"] + t["write"]["iops"]
cpu = (c["process_user_pct"] + c["process_system_pct"]) / 100
back = (v.get("verify") or {}).get("read_back")
rb = f'{back["bytes"] / back["seconds"] / 1e6:.0f} MB/s' if back and back["seconds"] else "-"
errs = (v.get("verify") or {})
bad = sum(errs.get(k, 0) for k in ("corrupted", "misdirected", "lost", "torn"))
print(f'{sys.argv[2]:<8} {sys.argv[3]:>6} {iops:>10.0f} {cpu / iops * 1e6:>10.2f} {rb:>12}' + (f'  ERRORS {bad}' if bad else ''))
PY
  done
done
