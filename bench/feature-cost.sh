#!/usr/bin/env bash
# What each measurement feature costs storlab per I/O: CPU per I/O (1 / ops per CPU-second) of
# the null engine and of 4 KiB random reads from the page cache (io_uring, qd 32), with each
# feature on, next to the same run without it, alternating, ROUNDS rounds; fio's figure for
# each base case is measured in the same rounds for the ratio.
#
#   bench/feature-cost.sh                       # ROUNDS=3 DURATION=5s
#   FEATURES="base interval-10ms verify" bench/feature-cost.sh
#
# Features: interval-10ms (time series every 10 ms instead of 1 s), targets-8 (per-target
# statistics of 8 targets instead of 1), open-uniform and open-poisson (open-loop pacing,
# rate far above what a worker can do, so every slot is refilled at once and paced),
# zipf and zoned offsets, verify (every read checked; page cache only), workers-8 and
# workers-64 (that many workers on this machine's CPUs; the total is compared).
# Prepares a 1 GiB file and eight of 64 MiB under SCRATCH (a real disk, not tmpfs) the first
# time; run it on a quiet machine.
set -euo pipefail
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
SCRATCH=${SCRATCH:-/var/tmp/storlab-vs-fio}
# A file of its own, which no fio job writes (verification checks every block storlab reads).
FILE=$SCRATCH/features.dat
FEATURES=${FEATURES:-base interval-10ms targets-8 open-uniform open-poisson zipf zoned verify workers-8 workers-64}
RESULTS=${RESULTS:-$SCRATCH/feature-cost-$(date -u +%Y%m%dT%H%M%SZ)}
here=$(cd "$(dirname "$0")" && pwd)
STORLAB=${STORLAB:-$here/../target/release/storlab}
mkdir -p "$RESULTS"
echo "loadavg_before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$RESULTS/machine.txt"

# Eight 64 MiB files for the per-target case (made once, by storlab).
targets=()
for i in 1 2 3 4 5 6 7 8; do targets+=(--target "$SCRATCH/t$i.dat"); done
prepare() { # NAME ARGS...: a short run that creates and fills its targets the first time
    local name=$1
    shift
    "$STORLAB" run "$@" --duration 1s --ramp 0s --quiet -o "$RESULTS/$name.json" \
        >"$RESULTS/$name.log" 2>&1 || { cat "$RESULTS/$name.log" >&2; exit 1; }
}
prepare prepare-file --target "$FILE" --size 1GiB
prepare prepare-targets "${targets[@]}" --size 64MiB

args_of() {
    case $1 in
    base) ;;
    interval-10ms) echo --interval 10ms ;;
    targets-8) echo "${targets[@]}" --size 64MiB ;;
    open-uniform) echo --rate 100000000 --arrivals uniform ;;
    open-poisson) echo --rate 100000000 --arrivals poisson ;;
    zipf) echo --distribution zipf:1.2 ;;
    zoned) echo --distribution zoned:80/10:20/90 ;;
    verify) echo --verify ;;
    workers-8) echo --workers 8 ;;
    workers-64) echo --workers 64 ;;
    *) echo "unknown feature $1" >&2; exit 2 ;;
    esac
}

run() { # ENGINE FEATURE ROUND
    local engine=$1 feature=$2 round=$3 engine_args
    if [ "$engine" = null ]; then engine_args=(--engine null); else engine_args=(--engine io_uring --buffered); fi
    [ "$engine" = null ] && [ "$feature" = verify ] && return 0
    local target=(--target "$FILE")
    [ "$feature" = targets-8 ] && target=()
    # shellcheck disable=SC2046
    "$STORLAB" run "${target[@]}" --duration "$DURATION" --ramp 1s --bs 4k --qd 32 --read 100 \
        --random 100 --quiet "${engine_args[@]}" $(args_of "$feature") \
        -o "$RESULTS/$engine.$feature.$round.json" >"$RESULTS/$engine.$feature.$round.log" 2>&1 || {
        cat "$RESULTS/$engine.$feature.$round.log" >&2
        return 1
    }
}

for round in $(seq 1 "$ROUNDS"); do
    for engine in null page-cache; do
        for f in $FEATURES; do
            echo "round $round/$ROUNDS: $engine $f" >&2
            [ "$engine" = page-cache ] && cat "$FILE" "$SCRATCH"/t?.dat >/dev/null
            run "$engine" "$f" "$round"
        done
    done
    fio --name=null --ioengine=null --size=1g --bs=4k --iodepth=32 --rw=randread --time_based \
        --runtime="$DURATION" --output-format=json --output="$RESULTS/null.fio.$round.json"
    cat "$FILE" >/dev/null
    fio --name=pc --filename="$FILE" --size=1g --allow_file_create=0 --ioengine=io_uring \
        --direct=0 --invalidate=0 --bs=4k --iodepth=32 --rw=randread --time_based \
        --runtime="$DURATION" --output-format=json --output="$RESULTS/page-cache.fio.$round.json"
done
echo "loadavg_after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RESULTS/machine.txt"
python3 "$here/feature_cost_report.py" "$RESULTS" | tee "$RESULTS/summary.txt"
