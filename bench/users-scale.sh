#!/usr/bin/env bash
# Scale of the simulated users (docs/performance.md, "Simulated users at scale"): 1,000,000 users
# in model-only mode at real-time pace, briefly with 5 MB of cache a mailbox and for longer with
# 512 KB (long enough for the cache and its history to fill, which 5 MB never would here);
# 2,000 Heavy users with the day compressed 48 times on a scratch directory; 16,000 Heavy
# users at real-time pace on a scratch directory, with 256 KiB of cache a mailbox and with 16 KiB
# (the seed study's I/O rate). Prints, per
# case, the simulator's CPU (% of one core, per task), memory (the process's peak RSS, per
# user), IOPS and Send Mail's p95. Run on a quiet machine; each case removes its files after.
#   SCRATCH=/mnt/scratch bench/users-scale.sh      # default ./storlab-scratch/users-scale
#   MODEL_MIN=3 FILLED_MIN=10 COMPRESSED_MIN=10 REALTIME_MIN=30 bench/users-scale.sh
#   CASES=realtime-16000 bench/users-scale.sh          # one case (names below)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q
bin="$PWD/target/release/storlab"
scratch="${SCRATCH:-$PWD/storlab-scratch/users-scale}"
out="${OUT:-$PWD/storlab-results/users-scale}"
mkdir -p "$scratch" "$out"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# case NAME USERS FLAGS...: runs storlab users, prints the figures.
case_() {
  local name=$1 users=$2; shift 2
  case " ${CASES:-model-1M model-1M-filled compressed-2000 realtime-16000 realtime-16000-seed-rate} " in *" $name "*) ;; *) return 0 ;; esac
  local dir="$scratch/$name"
  rm -rf "$dir"; mkdir -p "$dir"
  /usr/bin/time -f "%M" -o "$out/$name.rss" \
    "$bin" users --users "$users" --profile heavy --version 2007 --quiet \
      --db-path "$dir" -o "$out/$name.json" "$@" >"$out/$name.txt" 2>&1 || true
  rm -rf "$dir"
  python3 - "$out/$name.json" "$out/$name.rss" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); rss_kb = int(open(sys.argv[2]).read().split()[-1])
u = r["users"]; c = u["cost"]; s = u["setup"]
secs = r["measured_ms"] / 1e3
io = sum(v["read"]["ops"] + v["write"]["ops"] for v in r["classes"].values()) / secs
send = next(t for t in u["tasks"] if t["task"] == "Send Mail")["latency"]
print(f"{sys.argv[3]}: {s['users']} users, {s['mailbox_bytes']>>20} MiB mailboxes, "
      f"{s['duration_s']/60:.0f} simulated min at {s['compress']}x, engine {r['engine']['name']}: "
      f"{u['completed']} of {u['planned']} tasks ({u['unfinished']} unfinished at the end, "
      f"at most {max((x['unfinished'] for x in u['series']), default=0)}), {io:,.0f} IOPS, "
      f"Send Mail p95 {send['p95']/1e6:.1f} ms; simulator {c['cpu_pct_of_core']:.2f}% of one core, "
      f"{c['cpu_per_task_us']:.1f} us CPU per task; peak RSS {rss_kb/1024:.0f} MiB, "
      f"{rss_kb*1024/s['users']:,.0f} B per user; verdict {r['verdict']['result']}")
PY
}

case_ model-1M 1000000 --engine null --databases 100 --mailbox-size 250MB \
  --cache-per-mailbox 5MB --duration "${MODEL_MIN:-3}m" --compress 1
case_ model-1M-filled 1000000 --engine null --databases 100 --mailbox-size 250MB \
  --cache-per-mailbox 512KB --duration "${FILLED_MIN:-10}m" --compress 1
case_ compressed-2000 2000 --databases 4 --mailbox-size 4MiB --cache-per-mailbox 256KiB \
  --duration "$(( ${COMPRESSED_MIN:-10} * 48 ))m" --compress 48
case_ realtime-16000 16000 --databases 8 --mailbox-size 1MiB --cache-per-mailbox 256KiB \
  --duration "${REALTIME_MIN:-30}m" --compress 1
# The seed study's I/O rate (about 3,700 IOPS for 16,000 Heavy users): its 250 MB mailboxes
# do not fit here, and 1 MiB ones with 256 KiB of cache make half that rate, so the cache is
# cut to 16 KiB a mailbox (the model's rate with nearly every page missed: about 0.23 IOPS a
# user in the first half hour). What it measures is the simulator's cost at that rate.
case_ realtime-16000-seed-rate 16000 --databases 8 --mailbox-size 1MiB --cache-per-mailbox 16KiB \
  --duration "${REALTIME_MIN:-30}m" --compress 1
