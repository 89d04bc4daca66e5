#!/usr/bin/env bash
# storlab against fio on the same jobs, on the same file, alternating runs.
#
#   bench/vs-fio.sh                      # ROUNDS=3 DURATION=10s SHORT=20s LONG=60s
#   ROUNDS=5 DURATION=30s bench/vs-fio.sh
#   ROUNDS=7 CASES="direct mixed" bench/vs-fio.sh    # only some cases
#
# Cases (targets in brackets; see docs/performance.md for what the figures mean):
#   1. null engine, 4 KiB, qd 32: ops per CPU-second      [storlab >= 1.5 x fio]
#      (fio as a process, and fio --thread, one job each)
#   2. 4 KiB random read, O_DIRECT, io_uring, qd 32     [IOPS >= 0.97 x fio; p50, p99 within 10%]
#   3. 4 KiB random read from the page cache:
#      a. psync qd 1, b. io_uring qd 32                 [IOPS >= 1.0 x fio]
#   4. 8 KiB random 35% read / 65% write, O_DIRECT, io_uring, 4 workers x qd 8
#                                                       [total IOPS >= 0.97 x fio]
#   5. storlab peak RSS of a SHORT and a LONG null-engine run   [must not grow with run length]
#   matrix: real-device parity, O_DIRECT io_uring: 4 KiB random read, 4 KiB random write,
#      8 KiB random 70% read, 128 KiB sequential read; at qd 1, 4, 8, 32, 128; with 1 worker and
#      with 4; on the prepared file (real disk) and on a loop device over a copy of it; the
#      tools take turns going first (odd rounds storlab, even rounds fio).
#      [IOPS >= 1.0 x fio (95% bootstrap interval includes or exceeds 1.0);
#       p50 and p99 <= 1.05 x fio's lat, submit included]
#      Not in the default CASES (80 cases: about 70 minutes at ROUNDS=5 DURATION=5s); run it
#      with CASES=matrix, and choose with MATRIX_TARGETS="file loop", MATRIX_WORKLOADS=
#      "randread4k randwrite4k mix8k seqread128k", MATRIX_QD="1 4 8 32 128", MATRIX_WORKERS="1 4",
#      or name single cases with MATRIX_ONLY="file-randread4k-qd1-w1 loop-seqread128k-qd128-w4"
#      (target-workload-qdN-wN; the others are skipped).
#   scaling: 1, 2, 4, 8 workers (SCALE_WORKERS) against fio --numjobs, on the null engine and on
#      the page cache (io_uring qd 32 each): IOPS, CPU and ops per CPU-second as workers grow.
#      Not in the default CASES; run it with CASES=scaling.
#
# CPU scheduling groups: with the kernel's autogroup on (kernel.sched_autogroup_enabled=1, the
# default of most distributions' kernels) every session is a CPU group of its own, and fio starts
# each job process in a session of its own (setsid) while storlab's workers are threads of one
# process. Where io_uring hands I/O to its worker threads (a device without NOWAIT submission,
# such as a loop device), that shares the CPU between fio's jobs' I/O more evenly than between
# storlab's (or fio --thread's), which narrows fio's latency tail at queue depths beyond the
# device's tags (docs/performance.md, "Why fio's tail was narrower at qd 128 x 4"). So the script
# turns autogroup off while it runs (one group for both tools, restored at exit) unless
# AUTOGROUP=keep; machine.txt says which.
#
# I/O buffers: storlab's are in transparent huge pages when a block spans more than a page
# (docs/methodology.md, "I/O buffers"); fio's default buffers are malloc'd pages, physically
# contiguous or not by the allocator's luck, which some devices serve more slowly (a virtio
# disk's 128 KiB reads, docs/performance.md). FIO_MEM is passed to fio as --mem: e.g.
# FIO_MEM=mmaphuge:/dev/hugepages/fio-buf after `sysctl vm.nr_hugepages=64` and
# `mount -t hugetlbfs none /dev/hugepages` gives fio huge-page buffers too; machine.txt says.
#
# The 1 GiB file is prepared once by storlab under SCRATCH (on the real disk, never tmpfs);
# fio reads and writes that same file (--filename, --allow_file_create=0: fio lays out nothing).
# Every storlab run writes its results file and every fio run its JSON into RESULTS; the
# table is printed by bench/vs_fio_report.py, which can be rerun on a results directory.
# Exit status: 0 unless a command fails (a missed target is printed as FAIL, not an error).
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
SHORT=${SHORT:-20s}
LONG=${LONG:-60s}
SCRATCH=${SCRATCH:-/var/tmp/storlab-vs-fio}
CASES=${CASES:-null direct buf-psync buf-uring mixed rss}
RESULTS=${RESULTS:-$SCRATCH/results-$(date -u +%Y%m%dT%H%M%SZ)}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

say() { printf '%s\n' "$*" >&2; }

MATRIX_TARGETS=${MATRIX_TARGETS:-file loop}
MATRIX_WORKLOADS=${MATRIX_WORKLOADS:-randread4k randwrite4k mix8k seqread128k}
MATRIX_QD=${MATRIX_QD:-1 4 8 32 128}
MATRIX_WORKERS=${MATRIX_WORKERS:-1 4}
# Every name in MATRIX_ONLY must be a case of the matrix: a typo would otherwise run nothing.
matrix_cases=" "
for where in $MATRIX_TARGETS; do for wl in $MATRIX_WORKLOADS; do for qd in $MATRIX_QD; do
    for w in $MATRIX_WORKERS; do matrix_cases+="$where-$wl-qd$qd-w$w "; done
done; done; done
for name in ${MATRIX_ONLY:-}; do
    if [[ "$matrix_cases" != *" $name "* ]]; then
        say "MATRIX_ONLY: no matrix case \`$name\`; names are target-workload-qdN-wN from MATRIX_TARGETS, MATRIX_WORKLOADS, MATRIX_QD and MATRIX_WORKERS, e.g. loop-seqread128k-qd128-w4"
        exit 2
    fi
done

# --- tools -------------------------------------------------------------------------------
command -v fio >/dev/null || (apt-get update && apt-get install -y fio)
[ -x /usr/bin/time ] || (apt-get update && apt-get install -y time)
command -v python3 >/dev/null || (apt-get update && apt-get install -y python3)

say "building storlab (release)"
(cd "$repo" && cargo build --release --quiet)
STORLAB=${STORLAB:-$repo/target/release/storlab}

# --- scheduling groups ----------------------------------------------------------------------
AUTOGROUP=${AUTOGROUP:-off}
case $AUTOGROUP in
off | keep) ;;
*) say "error: AUTOGROUP=$AUTOGROUP: use off (the default) or keep"; exit 2 ;;
esac
AG=/proc/sys/kernel/sched_autogroup_enabled
AG_BEFORE=$(cat "$AG" 2>/dev/null || echo absent)
LOOP=""
cleanup() {
    [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
    [ "$AUTOGROUP" = off ] && [ "$AG_BEFORE" = 1 ] && echo 1 >"$AG"
    true
}
trap cleanup EXIT
if [ "$AUTOGROUP" = off ] && [ "$AG_BEFORE" = 1 ]; then
    echo 0 >"$AG" || { say "error: cannot turn autogroup off (root needed); or set AUTOGROUP=keep"; exit 1; }
fi

# --- scratch dir and file ----------------------------------------------------------------
mkdir -p "$SCRATCH" "$RESULTS"
fstype=$(stat -f -c %T "$SCRATCH")
if [ "$fstype" = tmpfs ] || [ "$fstype" = ramfs ]; then
    say "error: $SCRATCH is on $fstype; set SCRATCH to a directory on a real disk"
    exit 1
fi
FILE=$SCRATCH/data.dat

# Prepares the file (or reuses an earlier storlab preparation of the same size).
say "preparing $FILE (1 GiB, by storlab)"
"$STORLAB" run --target "$FILE" --size 1GiB --engine io_uring --bs 4k --qd 1 --read 100 \
    --random 100 --duration 1s --quiet -o "$RESULTS/prepare.json" >"$RESULTS/prepare.log" 2>&1 || {
    cat "$RESULTS/prepare.log" >&2
    exit 1
}

# --- machine -----------------------------------------------------------------------------
{
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "nproc: $(nproc)"
    echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    echo "kernel: $(uname -r)"
    echo "scratch: $SCRATCH ($(df -T "$SCRATCH" | awk 'NR==2 {print $2 " on " $1}'))"
    echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "fio: $(fio --version)"
    echo "storlab: $("$STORLAB" --version) (commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet HEAD -- src Cargo.toml 2>/dev/null || echo ', with uncommitted changes in src/'))"
    echo "rounds: $ROUNDS  duration: $DURATION  rss runs: $SHORT / $LONG  cases: $CASES"
    echo "loadavg_before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "fio buffers: ${FIO_MEM:-malloc, fio default}"
    echo "autogroup: $AG_BEFORE before, $(cat "$AG" 2>/dev/null || echo absent) during the run (AUTOGROUP=$AUTOGROUP)"
} >"$RESULTS/machine.txt"

# --- runners -----------------------------------------------------------------------------
# storlab CASE ROUND ARGS...  -> RESULTS/CASE.storlab.ROUND.json
storlab() {
    local case=$1 round=$2
    shift 2
    say "  [$case] storlab round $round"
    local log=$RESULTS/$case.storlab.$round.log
    "$STORLAB" run --target "$FILE" --random 100 --duration "$DURATION" --quiet \
        -o "$RESULTS/$case.storlab.$round.json" "$@" >"$log" 2>&1 || {
        cat "$log" >&2
        return 1
    }
}

# fio_run CASE TOOL ROUND ARGS...  -> RESULTS/CASE.TOOL.ROUND.json
fio_run() {
    local case=$1 tool=$2 round=$3
    shift 3
    say "  [$case] $tool round $round"
    fio --name="$case" --time_based --runtime="$DURATION" --output-format=json \
        ${FIO_MEM:+--mem="$FIO_MEM"} --output="$RESULTS/$case.$tool.$round.json" "$@" >/dev/null
}

# On the storlab file: it exists at 1 GiB, so fio neither creates nor lays it out.
FIO_FILE=(--filename="$FILE" --size=1g --allow_file_create=0)

warm() { cat "$FILE" >/dev/null; }

# storlab_on TARGET CASE ROUND ARGS...: a storlab run on TARGET (file or device).
storlab_on() {
    local target=$1 case=$2 round=$3
    shift 3
    say "  [$case] storlab round $round"
    local log=$RESULTS/$case.storlab.$round.log
    "$STORLAB" run --target "$target" --duration "$DURATION" --ramp 1s --quiet \
        -o "$RESULTS/$case.storlab.$round.json" "$@" >"$log" 2>&1 || {
        cat "$log" >&2
        return 1
    }
}
want() { [[ " $CASES " == *" $1 "* ]]; }

want null && for round in $(seq 1 "$ROUNDS"); do
    say "case 1: null engine, 4 KiB, qd 32 (round $round/$ROUNDS)"
    storlab null "$round" --engine null --bs 4k --qd 32 --read 100
    fio_run null fio "$round" --ioengine=null --size=1g --bs=4k --iodepth=32 --rw=randread
    fio_run null fio-thread "$round" --ioengine=null --size=1g --bs=4k --iodepth=32 \
        --rw=randread --thread --numjobs=1
done

want direct && for round in $(seq 1 "$ROUNDS"); do
    say "case 2: 4 KiB random read, O_DIRECT, io_uring qd 32 (round $round/$ROUNDS)"
    storlab direct "$round" --engine io_uring --bs 4k --qd 32 --read 100
    # lat_percentiles: fio's submit-to-completion percentiles too (clat starts after the
    # submit syscall; storlab's latency starts before it).
    fio_run direct fio "$round" "${FIO_FILE[@]}" --ioengine=io_uring --direct=1 --bs=4k \
        --iodepth=32 --rw=randread --lat_percentiles=1
done

want buf-psync && for round in $(seq 1 "$ROUNDS"); do
    say "case 3a: 4 KiB random read, page cache, psync qd 1 (round $round/$ROUNDS)"
    warm
    storlab buf-psync "$round" --engine psync --buffered --bs 4k --qd 1 --read 100
    warm
    # invalidate=0: fio would otherwise drop the file's pages from the cache before the job.
    fio_run buf-psync fio "$round" "${FIO_FILE[@]}" --ioengine=psync --direct=0 --invalidate=0 \
        --bs=4k --iodepth=1 --rw=randread
done

want buf-uring && for round in $(seq 1 "$ROUNDS"); do
    say "case 3b: 4 KiB random read, page cache, io_uring qd 32 (round $round/$ROUNDS)"
    warm
    storlab buf-uring "$round" --engine io_uring --buffered --bs 4k --qd 32 --read 100
    warm
    fio_run buf-uring fio "$round" "${FIO_FILE[@]}" --ioengine=io_uring --direct=0 \
        --invalidate=0 --bs=4k --iodepth=32 --rw=randread
done

want mixed && for round in $(seq 1 "$ROUNDS"); do
    say "case 4: 8 KiB random 35/65 read/write, O_DIRECT, 4 x qd 8 (round $round/$ROUNDS)"
    storlab mixed "$round" --engine io_uring --workers 4 --qd 8 --read 35 --bs 8k
    fio_run mixed fio "$round" "${FIO_FILE[@]}" --ioengine=io_uring --direct=1 --bs=8k \
        --iodepth=8 --numjobs=4 --group_reporting --rw=randrw --rwmixread=35
done

if want matrix; then
    if [[ " $MATRIX_TARGETS " == *" loop "* ]]; then
        # A loop device (direct I/O to its backing file) over a copy of the prepared file.
        cp --sparse=never "$FILE" "$SCRATCH/loop.img"
        LOOP=$(losetup --direct-io=on --show -f "$SCRATCH/loop.img")
        echo "loop: $LOOP over $SCRATCH/loop.img (direct-io on)" >>"$RESULTS/machine.txt"
    fi
    for where in $MATRIX_TARGETS; do
        if [ "$where" = loop ]; then target=$LOOP; else target=$FILE; fi
        for wl in $MATRIX_WORKLOADS; do
            case $wl in
            randread4k) s_args=(--bs 4k --read 100 --random 100); f_args=(--bs=4k --rw=randread) ;;
            randwrite4k) s_args=(--bs 4k --read 0 --random 100); f_args=(--bs=4k --rw=randwrite) ;;
            mix8k) s_args=(--bs 8k --read 70 --random 100); f_args=(--bs=8k --rw=randrw --rwmixread=70) ;;
            seqread128k) s_args=(--bs 128k --read 100 --random 0); f_args=(--bs=128k --rw=read) ;;
            *) say "unknown workload $wl"; exit 2 ;;
            esac
            for qd in $MATRIX_QD; do
                for w in $MATRIX_WORKERS; do
                    case_id="m-$where-$wl-qd$qd-w$w"
                    if [ -n "${MATRIX_ONLY:-}" ] && [[ " $MATRIX_ONLY " != *" ${case_id#m-} "* ]]; then
                        continue
                    fi
                    for round in $(seq 1 "$ROUNDS"); do
                        say "matrix $case_id (round $round/$ROUNDS)"
                        # Odd rounds storlab first, even rounds fio first: neither tool always
                        # inherits the device, cache and host state the other left.
                        for tool in $( ((round % 2)) && echo "storlab fio" || echo "fio storlab"); do
                            if [ "$tool" = storlab ]; then
                                storlab_on "$target" "$case_id" "$round" --engine io_uring \
                                    --destroy-data --qd "$qd" --workers "$w" "${s_args[@]}"
                            else
                                fio_run "$case_id" fio "$round" --filename="$target" --size=1g \
                                    --allow_file_create=0 --ioengine=io_uring --direct=1 \
                                    --ramp_time=1s --iodepth="$qd" --numjobs="$w" \
                                    --group_reporting --lat_percentiles=1 "${f_args[@]}"
                            fi
                        done
                    done
                done
            done
        done
    done
fi

if want scaling; then
    # How IOPS and CPU grow with workers, next to fio's numjobs: the null engine, and 4 KiB
    # random reads from the page cache with io_uring at qd 32 per worker.
    for n in ${SCALE_WORKERS:-1 2 4 8}; do
        for round in $(seq 1 "$ROUNDS"); do
            say "scaling: $n workers (round $round/$ROUNDS)"
            storlab "scale-null-w$n" "$round" --engine null --bs 4k --qd 32 --read 100 --workers "$n"
            fio_run "scale-null-w$n" fio "$round" --ioengine=null --size=1g --bs=4k --iodepth=32 \
                --rw=randread --numjobs="$n" --group_reporting
            warm
            storlab "scale-buf-w$n" "$round" --engine io_uring --buffered --bs 4k --qd 32 \
                --read 100 --workers "$n"
            warm
            fio_run "scale-buf-w$n" fio "$round" "${FIO_FILE[@]}" --ioengine=io_uring --direct=0 \
                --invalidate=0 --bs=4k --iodepth=32 --rw=randread --numjobs="$n" --group_reporting
        done
    done
fi

want rss && for d in "$SHORT" "$LONG"; do
    say "case 5: storlab peak RSS, null engine, $d"
    /usr/bin/time -v -o "$RESULTS/rss.$d.time.txt" \
        "$STORLAB" run --target "$FILE" --engine null --bs 4k --qd 32 --read 100 --random 100 \
        --duration "$d" --quiet -o "$RESULTS/rss.$d.json" >"$RESULTS/rss.$d.log" 2>&1 || {
        cat "$RESULTS/rss.$d.log" >&2
        exit 1
    }
done

echo "loadavg_after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RESULTS/machine.txt"
say "results: $RESULTS"
python3 "$here/vs_fio_report.py" "$RESULTS" | tee "$RESULTS/summary.txt"
