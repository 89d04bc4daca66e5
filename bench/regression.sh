#!/usr/bin/env bash
# A regression gate for storlab's own per-I/O cost: runs the criterion benches of the per-I/O
# path (benches/per_io.rs: offset generation per distribution, histogram record, one whole turn
# of the worker loop on the null backend) and compares each with the baseline committed for
# this machine in bench/baselines/MACHINE.json. Fails (exit 1) when any case is more than
# 10% slower than its baseline. A machine without a baseline gets one recorded (exit 0, and it
# says so); RECORD=1 records a new baseline after a deliberate change.
#
#   bench/regression.sh              # compare (or record the first baseline)
#   RECORD=1 bench/regression.sh     # record this machine's baseline
#   LIMIT=1.05 bench/regression.sh   # a tighter limit (default 1.10)
#
# The machine is named by its CPU model, CPU count and memory, so a baseline is only compared
# on the hardware it was made on. Run on a quiet machine: check `uptime` first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
LIMIT=${LIMIT:-1.10}
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
machine=$(printf '%s-%scpu-%sGiB' "$cpu" "$(nproc)" \
    "$(awk '/MemTotal/ {printf "%d", $2/1048576+0.5}' /proc/meminfo)" |
    tr -cs 'A-Za-z0-9.-' '-' | sed 's/-*$//')
baseline="$here/baselines/$machine.json"
echo "machine: $machine; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
(cd "$repo" && cargo bench --locked --bench per_io -- --noplot >&2)
python3 - "$repo/target/criterion" "$baseline" "$LIMIT" "${RECORD:-0}" <<'PY'
import json, os, sys
root, baseline, limit, record = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1"
now = {}
for dirpath, _, files in os.walk(root):
    if "estimates.json" in files and os.path.basename(dirpath) == "new":
        bench = json.load(open(os.path.join(dirpath, "benchmark.json")))
        est = json.load(open(os.path.join(dirpath, "estimates.json")))
        ns = est["mean"]["point_estimate"]
        tp = bench.get("throughput") or {}
        per = tp.get("Elements") or tp.get("elements") or 1
        now[bench["full_id"]] = ns / per
if not now:
    sys.exit("no criterion results under " + root)
if record or not os.path.exists(baseline):
    os.makedirs(os.path.dirname(baseline), exist_ok=True)
    json.dump({"ns_per_op": dict(sorted(now.items()))}, open(baseline, "w"), indent=2)
    print(f"recorded the baseline of this machine: {baseline} ({len(now)} cases); commit it")
    sys.exit(0)
base = json.load(open(baseline))["ns_per_op"]
worse = []
print(f"{'case':<34} {'baseline ns':>12} {'now ns':>10} {'ratio':>7}")
for case, ns in sorted(now.items()):
    b = base.get(case)
    if b is None:
        print(f"{case:<34} {'-':>12} {ns:>10.2f}   (new case: RECORD=1 to add it)")
        continue
    r = ns / b
    flag = "  SLOWER" if r > limit else ""
    print(f"{case:<34} {b:>12.2f} {ns:>10.2f} {r:>7.3f}{flag}")
    if r > limit:
        worse.append(case)
if worse:
    print(f"FAIL: {len(worse)} case(s) more than {(limit - 1) * 100:.0f}% slower than the baseline: {', '.join(worse)}")
    sys.exit(1)
print(f"PASS: every case within {(limit - 1) * 100:.0f}% of the baseline")
PY
