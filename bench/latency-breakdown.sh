#!/usr/bin/env bash
# Where the time of an O_DIRECT I/O goes, for storlab and for fio on the same file: each tool's
# own latency next to what the kernel saw (bench/latency-breakdown.bt): io_uring's time from
# the SQE's submission to its CQE, and the device's time from block issue to block completion.
#
#   bench/latency-breakdown.sh                    # QD=32 DURATION=5 ROUNDS=3
#   QD=1 bench/latency-breakdown.sh
#
# Needs root and bpftrace (apt-get install -y bpftrace). Uses the 1 GiB file bench/vs-fio.sh
# prepares (run it first, e.g. CASES=null ROUNDS=1). Tools alternate, one at a time.
set -euo pipefail
QD=${QD:-32}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
SCRATCH=${SCRATCH:-/var/tmp/storlab-vs-fio}
FILE=$SCRATCH/data.dat
OUT=${OUT:-$SCRATCH/breakdown-$(date -u +%Y%m%dT%H%M%SZ)}
here=$(cd "$(dirname "$0")" && pwd)
STORLAB=${STORLAB:-$here/../target/release/storlab}
[ -f "$FILE" ] || { echo "error: $FILE is missing; run bench/vs-fio.sh first" >&2; exit 1; }
command -v bpftrace >/dev/null || (apt-get update && apt-get install -y bpftrace)
# The tracepoints live in tracefs, which a fresh machine may not have mounted.
[ -d /sys/kernel/tracing/events/io_uring ] || mount -t tracefs nodev /sys/kernel/tracing
mkdir -p "$OUT"

# traced NAME COMMAND...: the command, with the tracer around it.
traced() {
    local name=$1
    shift
    bpftrace "$here/latency-breakdown.bt" >"$OUT/$name.bt.txt" 2>/dev/null &
    local tracer=$!
    sleep 3 # attaching takes a moment
    local rc=0
    "$@" >"$OUT/$name.log" 2>&1 || rc=$?
    kill -INT "$tracer"
    wait "$tracer" || true
    if [ "$rc" != 0 ]; then
        # Say why, and leave no tracer behind.
        echo "error: $name failed (exit $rc):" >&2
        cat "$OUT/$name.log" >&2
        exit 1
    fi
}

for round in $(seq 1 "$ROUNDS"); do
    echo "round $round/$ROUNDS" >&2
    traced "storlab.$round" "$STORLAB" run --target "$FILE" --duration "${DURATION}s" --ramp 0s \
        --engine io_uring --bs 4k --qd "$QD" --read 100 --quiet -o "$OUT/storlab.$round.json"
    traced "fio.$round" fio --name=x --filename="$FILE" --size=1g --allow_file_create=0 \
        --ioengine=io_uring --direct=1 --bs=4k --iodepth="$QD" --rw=randread --time_based \
        --runtime="${DURATION}s" --lat_percentiles=1 --output-format=json \
        --output="$OUT/fio.$round.json"
done
python3 "$here/latency_breakdown_report.py" "$OUT"
