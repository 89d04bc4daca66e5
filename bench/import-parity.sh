#!/usr/bin/env bash
# fio job files run by fio and by `storlab run FILE` side by side: do they agree on IOPS?
#
#   bench/import-parity.sh                      # ROUNDS=5 DURATION=10s
#   ROUNDS=7 DURATION=30s bench/import-parity.sh
#   JOBS="mixed holes" bench/import-parity.sh   # only some job files
#
# The job files (written into RESULTS, realistic in the options people use, closed loop so the
# figures are the device's as each tool drives it):
#   mixed   8 KiB random, rwmixwrite=30, io_uring qd 16, O_DIRECT
#   bsrange random reads of bsrange=4k-64k, blockalign=4k, io_uring qd 8
#   holes   sequential 64 KiB reads skipping 64 KiB (rw=read:64k) beside a backwards reader
#           (rw=read:-128k), qd 4 each
#   two     two jobs at once: 4 KiB random reads at qd 8 and 64 KiB sequential writes at qd 2
# Each round runs fio then storlab on every job file, or storlab then fio (odd rounds storlab
# first), on the same 1 GiB file, prepared once by storlab under SCRATCH (a real disk, never
# tmpfs). The table gives each tool's median IOPS (reads and writes of every job), its spread
# ((max - min) / median over the rounds) and the ratio storlab / fio. The issue's target: the
# ratio within 0.95-1.05. This is a benchmark, not a test: a miss is printed, not an error.
# Exit status: 0 unless a command fails.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10s}
SCRATCH=${SCRATCH:-/var/tmp/storlab-import-parity}
JOBS=${JOBS:-mixed bsrange holes two}
RESULTS=${RESULTS:-$SCRATCH/results-$(date -u +%Y%m%dT%H%M%SZ)}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

say() { printf '%s\n' "$*" >&2; }

# --- tools -------------------------------------------------------------------------------
command -v fio >/dev/null || (apt-get update && apt-get install -y fio)
command -v python3 >/dev/null || (apt-get update && apt-get install -y python3)
if [ -z "${STORLAB:-}" ]; then
    say "building storlab (release)"
    (cd "$repo" && cargo build --release --quiet)
    STORLAB=$repo/target/release/storlab
fi

# --- scratch dir and file ----------------------------------------------------------------
mkdir -p "$SCRATCH" "$RESULTS"
fstype=$(stat -f -c %T "$SCRATCH")
if [ "$fstype" = tmpfs ] || [ "$fstype" = ramfs ]; then
    say "error: $SCRATCH is on $fstype; set SCRATCH to a directory on a real disk"
    exit 1
fi
FILE=$SCRATCH/data.dat
say "preparing $FILE (1 GiB, by storlab)"
"$STORLAB" run --target "$FILE" --size 1GiB --engine io_uring --bs 4k --qd 1 --read 100 \
    --random 100 --duration 1s --quiet -o "$RESULTS/prepare.json" >"$RESULTS/prepare.log" 2>&1 || {
    cat "$RESULTS/prepare.log" >&2
    exit 1
}

{
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "nproc: $(nproc)"
    echo "kernel: $(uname -r)"
    echo "scratch: $SCRATCH ($(df -T "$SCRATCH" | awk 'NR==2 {print $2 " on " $1}'))"
    echo "fio: $(fio --version)"
    echo "storlab: $("$STORLAB" --version) ($STORLAB, commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown))"
    echo "rounds: $ROUNDS  duration: $DURATION  jobs: $JOBS"
    echo "loadavg_before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$RESULTS/machine.txt"

# --- the job files -----------------------------------------------------------------------
common="[global]
ioengine=io_uring
direct=1
filename=$FILE
size=1g
time_based
runtime=$DURATION
ramp_time=1
thread
random_generator=tausworthe64
"
jobfile() {
    case $1 in
    mixed) printf '%s\n[oltp]\nrw=randrw\nrwmixwrite=30\nbs=8k\niodepth=16\n' "$common" ;;
    bsrange) printf '%s\n[sizes]\nrw=randread\nbsrange=4k-64k\nblockalign=4k\niodepth=8\n' "$common" ;;
    holes) printf '%s\n[skip]\nrw=read:64k\nbs=64k\niodepth=4\n\n[back]\nrw=read:-128k\nbs=64k\niodepth=4\n' "$common" ;;
    two) printf '%s\n[db]\nrw=randread\nbs=4k\niodepth=8\n\n[log]\nrw=write\nbs=64k\niodepth=2\n' "$common" ;;
    *) say "JOBS: no job \`$1\`; the jobs are mixed, bsrange, holes and two"; exit 2 ;;
    esac
}
for job in $JOBS; do jobfile "$job" >"$RESULTS/$job.fio"; done

# --- runners -----------------------------------------------------------------------------
run_fio() {
    say "  [$1] fio round $2"
    fio "$RESULTS/$1.fio" --output-format=json --output="$RESULTS/$1.fio.$2.json" >/dev/null
}
run_storlab() {
    say "  [$1] storlab round $2"
    local log=$RESULTS/$1.storlab.$2.log
    "$STORLAB" run "$RESULTS/$1.fio" --quiet -o "$RESULTS/$1.storlab.$2.json" >"$log" 2>&1 || {
        cat "$log" >&2
        return 1
    }
}

for round in $(seq 1 "$ROUNDS"); do
    say "round $round/$ROUNDS"
    for job in $JOBS; do
        if [ $((round % 2)) = 1 ]; then
            run_storlab "$job" "$round"
            run_fio "$job" "$round"
        else
            run_fio "$job" "$round"
            run_storlab "$job" "$round"
        fi
    done
done

# --- the table ---------------------------------------------------------------------------
python3 - "$RESULTS" "$ROUNDS" $JOBS <<'EOF'
import json, statistics, sys
results, rounds, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def fio_iops(path):
    text = open(path).read()
    j = json.loads(text[text.index("{"):])
    return sum(x["read"]["iops"] + x["write"]["iops"] for x in j["jobs"])

def storlab_iops(path):
    r = json.load(open(path))
    return sum(c["read"]["iops"] + c["write"]["iops"] for c in r["classes"].values())

def spread(v):
    m = statistics.median(v)
    return (max(v) - min(v)) / m * 100 if m else 0.0

print(f"{'job':8} {'fio IOPS':>10} {'spread':>7} {'storlab IOPS':>13} {'spread':>7} {'ratio':>6}")
for job in jobs:
    f = [fio_iops(f"{results}/{job}.fio.{r}.json") for r in range(1, rounds + 1)]
    s = [storlab_iops(f"{results}/{job}.storlab.{r}.json") for r in range(1, rounds + 1)]
    ratio = statistics.median(s) / statistics.median(f)
    miss = "" if 0.95 <= ratio <= 1.05 else "  (outside 0.95-1.05)"
    print(f"{job:8} {statistics.median(f):10.0f} {spread(f):6.1f}% {statistics.median(s):13.0f} {spread(s):6.1f}% {ratio:6.3f}{miss}")
EOF
say "results: $RESULTS"
