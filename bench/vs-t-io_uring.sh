#!/usr/bin/env bash
# storlab against fio's minimal tester t/io_uring (and fio): IOPS and CPU per I/O, alternating runs.
#
#   FIO_SRC=~/src/fio bench/vs-t-io_uring.sh                  # ROUNDS=5 DURATION=5s QDS="1 8 32 128"
#   FIO_SRC=~/src/fio ROUNDS=7 QDS="32 128" bench/vs-t-io_uring.sh
#   FIO_SRC=~/src/fio NVME_NG=/dev/ng0n1 SQPOLL=1 bench/vs-t-io_uring.sh   # + passthrough, SQPOLL
#   python3 bench/vs_t_io_uring_report.py RESULTS_DIR           # the tables again
#
# t/io_uring is fio's own minimal io_uring tester (the reference for "the fastest this kernel
# goes"); it is not vendored: FIO_SRC is a fio source tree (git clone https://github.com/axboe/fio)
# and t/io_uring is built there when missing (./configure --disable-native && make t/io_uring).
# fio is the one on PATH, storlab is STORLAB (default: target/release/storlab, built here with
# cargo build --release --locked).
#
# Cases: 4 KiB random reads, one thread (worker, job) per tool, on a 1 GiB file under SCRATCH
# written once by storlab, at each queue depth QD of QDS, with submission and completion in
# batches of B = min(QD, BATCH) (BATCH=8):
#   direct-qdN    O_DIRECT
#   buffered-qdN  through the page cache (the cache is warmed with `cat FILE` before every run)
#   poll-qdN      O_DIRECT with polled completions (IORING_SETUP_IOPOLL): only when the device
#                 under SCRATCH has poll queues (/sys/block/DEV/queue/io_poll = 1) and storlab
#                 has --hipri; otherwise skipped, and machine.txt says why
#   sqpoll-qdN    O_DIRECT with a submission-queue polling thread (IORING_SETUP_SQPOLL): only with
#                 SQPOLL=1 and a storlab that has --sqpoll; storlab against fio alone, as
#                 t/io_uring cannot express SQPOLL (fio 3.42: sq_thread_poll is a constant in
#                 t/io_uring.c, no option sets it; machine.txt says so, or that a newer -h lists
#                 one, to be added here)
#   passthru-qdN  NVMe passthrough (IORING_OP_URING_CMD) on NVME_NG=/dev/ngXnY, the whole
#                 namespace, reads only: only when NVME_NG names a character device
# The commands (TARGET the file, or NVME_NG for passthru):
#   t/io_uring -d QD -s B -c B -b 4096 -p 0|1 -B 1 -F 1 -n 1 -O 1|0 -r SECONDS+1 TARGET
#              (passthru: -u 1 -O 0 -p 0)
#   fio --ioengine=io_uring --fixedbufs=1 --registerfiles=1 --iodepth=QD --iodepth_batch_submit=B
#       --iodepth_batch_complete_min=B --direct=1|0 --invalidate=0 --rw=randread --bs=4k
#       --time_based --runtime=SECONDS [--hipri=1] [--sqthread_poll=1]
#       (passthru: --ioengine=io_uring_cmd --cmd_type=nvme, no --direct)
#   storlab run --target TARGET --random 100 --read 100 --bs 4k --qd QD --batch B --engine io_uring
#       [--batch-complete-min B] [--buffered] [--hipri] [--sqpoll] --duration SECONDSs --quiet
#       (--batch-complete-min only when `storlab run --help` lists it)
#
# CPU per I/O = (user + system CPU seconds of the whole process) / (the I/Os it counted), the
# same for the three tools: each runs under a small python3 wrapper (below) that starts it,
# waits, and reads getrusage(RUSAGE_CHILDREN) (µs resolution; user + system is the scheduler's
# run time, exact, while the split between the two is sampled at ticks), writing
# CASE.TOOL.ROUND.cpu (user, sys, wall seconds, exit status). That covers every thread of the
# process: io_uring's io-wq workers (iou-wrk-*) and SQPOLL thread (iou-sqp-*) are threads of the
# process that made the ring (checked here on kernel 6.18: fio --sqthread_poll=1's iou-sqp thread
# is a task of the fio job process, and its CPU time is in the rusage: 0.98 s of system time in a
# 3 s run whose job thread fio reports at 0.27 % system), and fio's job process (a child of fio's
# main process, which waits for it) is in it too. Interrupt and softirq time of completions is charged to
# whichever task the interrupt lands on (or to none, with IRQ time accounting), alike for all
# three. The I/Os counted:
#   storlab     totals.read.ops of its results file: its measured phase (DURATION; no ramp)
#   fio         jobs[0].read.total_ios of its JSON: its runtime (DURATION). fio keeps its default
#               random map (no --norandommap): part of its CPU, as in its users' runs.
#   t/io_uring  the sum of its once-a-second `IOPS=` lines (86416 and 991.42K are exact to 10
#               I/Os; above 1M, 1.22M is rounded to 10k: ±0.4 % a line, unbiased). With -r N it
#               prints N-1 lines and does the last second's I/O uncounted, so it runs with
#               -r SECONDS+1 and the wrapper stops it with SIGINT as soon as its SECONDS-th line
#               is out (stdbuf -oL, so that each line comes when it is printed): the lines cover
#               SECONDS seconds from the start of its submitter thread (ring set-up included),
#               and what it does after the last line is the I/O of the moment the signal takes
#               and its exit. (Had the signal failed, -r ends it one second later, and the
#               report's `outside` column shows that second.)
# So for all three the CPU is the whole process's (start-up, ring and buffer set-up; storlab's
# check of the file's preparation and its results file; fio's JSON) and the I/Os are those of the
# measured seconds: start-up is charged to each tool, the reason DURATION is 5s by default and not
# less. The wall time of each run is recorded too, and the report prints how much of it was
# outside the measured seconds.
#
# Each round runs every tool once per case; the first tool rotates from round to round (round 1:
# storlab, t/io_uring, fio; round 2: t/io_uring, fio, storlab; round 3: fio, storlab, t/io_uring;
# ...), so that none always inherits the state the others left. The report
# (bench/vs_t_io_uring_report.py, rerunnable on RESULTS) prints medians with [min–max], the
# ratios storlab ÷ t/io_uring and storlab ÷ fio with 95 % bootstrap intervals, and the verdict:
# CPU per I/O ≤ 1.15 × t/io_uring's; on the device-bound cases (all but buffered) IOPS ≥ 1.0 ×
# t/io_uring's (PASS when the interval includes or exceeds 1.0).
#
# Environment:
#   FIO_SRC     fio source tree (required)
#   STORLAB     storlab binary (default: target/release/storlab, built by this script)
#   ROUNDS=5  DURATION=5s (whole seconds)  QDS="1 8 32 128"  BATCH=8
#   SCRATCH=/var/tmp/storlab-vs-t-io_uring (a real disk, not tmpfs)  RESULTS=SCRATCH/results-TIME
#   NVME_NG=/dev/ngXnY   add the passthrough cases
#   SQPOLL=1             add the SQPOLL cases
#   FORCE=1              run even when the 1-minute load average is above 1.0
# Time: about (8 cases + optional ones) x ROUNDS x 3 tools x (DURATION + ~1 s): 13 minutes for
# the defaults. The machine should be otherwise idle: the script refuses to start when the
# 1-minute load average is above 1.0 (FORCE=1 to run anyway; machine.txt then says so, and
# runs.txt has the load average before every run).
# Exit status: 0 unless a command fails (a failed run is reported and the others go on, and the
# status is then 1); a missed target is a FAIL in the table, not an error.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5s}
QDS=${QDS:-1 8 32 128}
BATCH=${BATCH:-8}
SCRATCH=${SCRATCH:-/var/tmp/storlab-vs-t-io_uring}
RESULTS=${RESULTS:-$SCRATCH/results-$(date -u +%Y%m%dT%H%M%SZ)}
NVME_NG=${NVME_NG:-}
SQPOLL=${SQPOLL:-0}
FORCE=${FORCE:-0}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

say() { printf '%s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[[ $DURATION =~ ^([0-9]+)s?$ ]] || die "DURATION=$DURATION: whole seconds, e.g. 5s (t/io_uring counts whole seconds)"
SECONDS_=$((10#${BASH_REMATCH[1]}))
((SECONDS_ >= 1)) || die "DURATION=$DURATION: at least 1s"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS=$ROUNDS: a number of rounds, e.g. 5"
[[ $BATCH =~ ^[1-9][0-9]*$ ]] || die "BATCH=$BATCH: a batch size, e.g. 8"
for qd in $QDS; do [[ $qd =~ ^[1-9][0-9]*$ ]] || die "QDS: \`$qd\` is not a queue depth"; done
[ -n "$QDS" ] || die "QDS is empty"
[ -z "$NVME_NG" ] || [ -c "$NVME_NG" ] ||
    die "NVME_NG=$NVME_NG is not a character device (NVMe generic devices are /dev/ngXnY)"

# --- tools -----------------------------------------------------------------------------------
[ -n "${FIO_SRC:-}" ] || die "set FIO_SRC to a fio source tree, e.g.
    git clone https://github.com/axboe/fio && FIO_SRC=\$PWD/fio $0
  (t/io_uring is built there: ./configure --disable-native && make t/io_uring)"
[ -f "$FIO_SRC/t/io_uring.c" ] || die "FIO_SRC=$FIO_SRC has no t/io_uring.c: not a fio source tree (git clone https://github.com/axboe/fio)"
FIO_SRC=$(cd "$FIO_SRC" && pwd)
T_IO_URING=$FIO_SRC/t/io_uring
command -v fio >/dev/null || die "fio is not installed (apt-get install fio)"
command -v python3 >/dev/null || die "python3 is not installed"
command -v stdbuf >/dev/null || die "stdbuf (coreutils) is not installed"

# --- load (before building anything: a build would raise it) -------------------------------
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
LOAD_BEFORE=$(loadavg)
say "loadavg before: $LOAD_BEFORE"
if awk -v l="${LOAD_BEFORE%% *}" 'BEGIN { exit !(l > 1.0) }'; then
    if [ "$FORCE" = 1 ]; then
        say "WARNING: the 1-minute load average is ${LOAD_BEFORE%% *} (> 1.0): other work shares the CPUs"
        say "WARNING: and the figures, CPU per I/O above all, are not a quiet machine's (FORCE=1)"
    else
        die "the 1-minute load average is ${LOAD_BEFORE%% *} (> 1.0): wait for a quiet machine, or set FORCE=1 to run anyway"
    fi
fi

if [ ! -x "$T_IO_URING" ]; then
    say "building t/io_uring in $FIO_SRC (./configure --disable-native && make t/io_uring)"
    (cd "$FIO_SRC" && ./configure --disable-native >/dev/null && make t/io_uring >/dev/null) ||
        die "could not build t/io_uring in $FIO_SRC"
fi
BUILT=""
GIVEN=${STORLAB:+STORLAB=$STORLAB }
if [ -z "${STORLAB:-}" ]; then
    say "building storlab (cargo build --release --locked)"
    (cd "$repo" && cargo build --release --locked --quiet)
    STORLAB=$repo/target/release/storlab
    BUILT="; built here from commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet HEAD -- src Cargo.toml 2>/dev/null || echo ' with uncommitted changes in src/')"
fi
[ -x "$STORLAB" ] || die "no storlab binary at $STORLAB"

storlab_help=$("$STORLAB" run --help)
has_storlab() { grep -q -- "$1" <<<"$storlab_help"; }
# t/io_uring -h prints its options and exits non-zero.
t_help=$("$T_IO_URING" -h 2>&1 || true)

# --- scratch dir and file --------------------------------------------------------------------
mkdir -p "$SCRATCH"
fstype=$(stat -f -c %T "$SCRATCH")
if [ "$fstype" = tmpfs ] || [ "$fstype" = ramfs ]; then
    die "$SCRATCH is on $fstype; set SCRATCH to a directory on a real disk"
fi
mkdir -p "$RESULTS"
FILE=$SCRATCH/data.dat

# Written once by storlab (a later run reuses a storlab preparation of the same size), so that
# storlab's own runs find it prepared and do not write it again.
say "preparing $FILE (1 GiB, by storlab)"
"$STORLAB" run --target "$FILE" --size 1GiB --engine io_uring --bs 4k --qd 1 --read 100 \
    --random 100 --duration 1s --quiet -o "$RESULTS/prepare.json" >"$RESULTS/prepare.log" 2>&1 || {
    cat "$RESULTS/prepare.log" >&2
    exit 1
}

# --- which fast paths this machine and these tools have --------------------------------------
# The block device under SCRATCH (the whole disk for a partition) and its poll queues.
dev=$(stat -c %d "$FILE")
major=$(((dev >> 8) & 0xfff | ((dev >> 32) & ~0xfff)))
minor=$(((dev & 0xff) | ((dev >> 12) & ~0xff)))
sys=/sys/dev/block/$major:$minor
POLL=0
if [ -e "$sys" ]; then
    sys=$(readlink -f "$sys")
    [ -e "$sys/partition" ] && sys=$(dirname "$sys")
    DEV=$(basename "$sys")
    io_poll=$(cat "$sys/queue/io_poll" 2>/dev/null || echo 0)
    if [ "$io_poll" != 1 ]; then
        poll_note="skipped polled I/O: $DEV has no poll queues (io_poll=$io_poll); on NVMe load the driver with nvme.poll_queues=N (virtio-blk: virtio_blk.poll_queues=N)"
    elif ! has_storlab --hipri; then
        poll_note="skipped polled I/O: $DEV has poll queues but this storlab has no --hipri"
    else
        POLL=1
        poll_note="polled I/O: $DEV has poll queues (io_poll=1): poll-qdN cases"
    fi
else
    DEV="$major:$minor"
    poll_note="skipped polled I/O: the filesystem under $SCRATCH ($fstype, device $major:$minor) is not on a block device this script can find in /sys/dev/block; put SCRATCH on a filesystem on an NVMe disk with poll queues (nvme.poll_queues=N)"
fi
say "$poll_note"

PASSTHRU=0
if [ -z "$NVME_NG" ]; then
    passthru_note="skipped NVMe passthrough: set NVME_NG=/dev/ngXnY (an NVMe generic character device, kernel 5.19+; its reads cover the whole namespace) to add passthru-qdN cases"
else
    PASSTHRU=1
    passthru_note="NVMe passthrough: passthru-qdN cases on $NVME_NG (reads over the whole namespace)"
fi
say "$passthru_note"

if [ "$SQPOLL" != 1 ]; then
    sqpoll_note="skipped SQPOLL: set SQPOLL=1 to add sqpoll-qdN cases (storlab --sqpoll, fio --sqthread_poll=1)"
elif ! has_storlab --sqpoll; then
    SQPOLL=0
    sqpoll_note="skipped SQPOLL: this storlab has no --sqpoll"
else
    if grep -qiE 'sqpoll|sq.?thread' <<<"$t_help"; then
        t_sq="t/io_uring -h lists an SQPOLL option, which this script does not pass yet (see run_t_io_uring)"
    else
        t_sq="t/io_uring has no SQPOLL option (sq_thread_poll is a constant in t/io_uring.c)"
    fi
    sqpoll_note="SQPOLL: sqpoll-qdN cases, storlab against fio only ($t_sq); the SQ thread's CPU is counted (a thread of the process)"
fi
say "$sqpoll_note"

COMPLETE_MIN=0
has_storlab --batch-complete-min && COMPLETE_MIN=1

# --- machine ---------------------------------------------------------------------------------
# FIO-VERSION-FILE is fio's build's `git describe` (written by make).
fio_src_version() {
    sed -n 's/^FIO_VERSION = //p' "$FIO_SRC/FIO-VERSION-FILE" 2>/dev/null || echo unknown
}
{
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "command: ${GIVEN}FIO_SRC=$FIO_SRC ROUNDS=$ROUNDS DURATION=${SECONDS_}s QDS=\"$QDS\" BATCH=$BATCH${NVME_NG:+ NVME_NG=$NVME_NG}$([ "$SQPOLL" = 1 ] && echo " SQPOLL=1")$([ "$FORCE" = 1 ] && echo " FORCE=1") bench/vs-t-io_uring.sh"
    echo "nproc: $(nproc)"
    echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    echo "kernel: $(uname -r)"
    echo "scratch: $SCRATCH ($(df -T "$SCRATCH" | awk 'NR==2 {print $2 " on " $1}'), device $DEV)"
    echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "fio: $(fio --version)"
    echo "t/io_uring: $T_IO_URING (fio source $(fio_src_version))"
    echo "storlab: $("$STORLAB" --version) ($STORLAB$BUILT)"
    echo "storlab --batch-complete-min: $( ((COMPLETE_MIN)) && echo "yes, used" || echo "no (not in run --help)")"
    echo "rounds: $ROUNDS  duration: ${SECONDS_}s  qds: $QDS  batch: $BATCH (B = min(qd, batch))"
    echo "loadavg_before: $LOAD_BEFORE$([ "$FORCE" = 1 ] && echo "  (FORCE=1)")"
    echo "autogroup: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo absent)"
    echo "$poll_note"
    echo "$passthru_note"
    echo "$sqpoll_note"
} >"$RESULTS/machine.txt"

# --- the CPU wrapper -------------------------------------------------------------------------
# python3 -c "$WRAP" CPU_FILE STDOUT_FILE STOP_AFTER -- COMMAND...: runs COMMAND with its output
# in STDOUT_FILE and writes "user=S sys=S wall=S rc=N" to CPU_FILE (getrusage(RUSAGE_CHILDREN):
# COMMAND's process and every descendant it waited for, all their threads). STOP_AFTER > 0:
# sends COMMAND SIGINT once it has printed that many lines starting with "IOPS=" (t/io_uring),
# and adds "lines=STOP_AFTER": the report counts those lines only (t/io_uring's SIGINT handler
# calls printf, which, when the signal lands while its main thread is still in the printf of the
# last line, can print that line again). Exits with COMMAND's status.
WRAP=$(
    cat <<'EOF'
import resource, signal, subprocess, sys, time
cpu_file, out_file, stop_after, sep, *cmd = sys.argv[1:]
assert sep == "--" and cmd
stop_after = int(stop_after)
start = time.monotonic()
with open(out_file, "w") as out:
    if stop_after > 0:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = 0
        for line in p.stdout:
            out.write(line)
            if line.startswith("IOPS="):
                lines += 1
                if lines == stop_after:
                    p.send_signal(signal.SIGINT)
        rc = p.wait()
    else:
        rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
wall = time.monotonic() - start
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(cpu_file, "w") as f:
    f.write(f"user={ru.ru_utime:.6f} sys={ru.ru_stime:.6f} wall={wall:.6f} rc={rc}"
            + (f" lines={stop_after}" if stop_after > 0 else "") + "\n")
sys.exit(rc)
EOF
)

FAILED=0
# measure CASE TOOL ROUND OUT_FILE STOP_AFTER COMMAND...: one run under the wrapper, logged in
# runs.txt with the load average before it.
measure() {
    local case=$1 tool=$2 round=$3 out=$4 stop=$5
    shift 5
    say "  [$case] $tool round $round"
    printf '%s %s %s loadavg=%s: %s\n' "$case" "$tool" "$round" "$(loadavg | tr ' ' /)" "$*" \
        >>"$RESULTS/runs.txt"
    local base=$RESULTS/$case.$tool.$round
    if ! python3 -c "$WRAP" "$base.cpu" "$out" "$stop" -- "$@"; then
        say "  [$case] $tool round $round failed: see $out"
        FAILED=$((FAILED + 1))
    fi
}

# run_TOOL CASE ROUND KIND QD: KIND is direct, buffered, poll, sqpoll or passthru.
run_storlab() {
    local case=$1 round=$2 kind=$3 qd=$4 b
    b=$((qd < BATCH ? qd : BATCH))
    local target=$FILE args=()
    ((COMPLETE_MIN)) && args+=(--batch-complete-min "$b")
    case $kind in
    buffered) args+=(--buffered) ;;
    poll) args+=(--hipri) ;;
    sqpoll) args+=(--sqpoll) ;;
    passthru) target=$NVME_NG ;;
    esac
    measure "$case" storlab "$round" "$RESULTS/$case.storlab.$round.log" 0 \
        "$STORLAB" run --target "$target" --random 100 --read 100 --bs 4k --qd "$qd" --batch "$b" \
        --engine io_uring "${args[@]}" --duration "${SECONDS_}s" --quiet \
        -o "$RESULTS/$case.storlab.$round.json"
}

run_t_io_uring() {
    local case=$1 round=$2 kind=$3 qd=$4 b
    b=$((qd < BATCH ? qd : BATCH))
    local target=$FILE args=()
    case $kind in
    direct) args+=(-p 0 -O 1) ;;
    buffered) args+=(-p 0 -O 0) ;;
    poll) args+=(-p 1 -O 1) ;;
    passthru) args+=(-u 1 -O 0 -p 0) && target=$NVME_NG ;;
    *) die "t/io_uring has no $kind case" ;;
    esac
    # -r SECONDS+1, stopped after SECONDS lines (see the header).
    measure "$case" t_io_uring "$round" "$RESULTS/$case.t_io_uring.$round.out" "$SECONDS_" \
        stdbuf -oL "$T_IO_URING" -d "$qd" -s "$b" -c "$b" -b 4096 "${args[@]}" -B 1 -F 1 -n 1 \
        -r $((SECONDS_ + 1)) "$target"
}

run_fio() {
    local case=$1 round=$2 kind=$3 qd=$4 b
    b=$((qd < BATCH ? qd : BATCH))
    local args=(--filename="$FILE" --size=1g --allow_file_create=0 --ioengine=io_uring)
    case $kind in
    direct) args+=(--direct=1) ;;
    buffered) args+=(--direct=0) ;;
    poll) args+=(--direct=1 --hipri=1) ;;
    sqpoll) args+=(--direct=1 --sqthread_poll=1) ;;
    passthru) args=(--filename="$NVME_NG" --ioengine=io_uring_cmd --cmd_type=nvme) ;;
    esac
    measure "$case" fio "$round" "$RESULTS/$case.fio.$round.log" 0 \
        fio --name="$case" "${args[@]}" --fixedbufs=1 --registerfiles=1 --iodepth="$qd" \
        --iodepth_batch_submit="$b" --iodepth_batch_complete_min="$b" --invalidate=0 \
        --rw=randread --bs=4k --time_based --runtime="${SECONDS_}s" --output-format=json \
        --output="$RESULTS/$case.fio.$round.json"
}

warm() { cat "$FILE" >/dev/null; }

# run_case KIND QD TOOLS...: ROUNDS rounds, the first tool rotating.
run_case() {
    local kind=$1 qd=$2
    shift 2
    local tools=("$@") case=$kind-qd$qd n=$#
    for round in $(seq 1 "$ROUNDS"); do
        say "$case (round $round/$ROUNDS)"
        for i in $(seq 0 $((n - 1))); do
            local tool=${tools[$(((round - 1 + i) % n))]}
            [ "$kind" = buffered ] && warm
            "run_$tool" "$case" "$round" "$kind" "$qd"
        done
    done
}

ALL=(storlab t_io_uring fio)
for qd in $QDS; do run_case direct "$qd" "${ALL[@]}"; done
for qd in $QDS; do run_case buffered "$qd" "${ALL[@]}"; done
if ((POLL)); then for qd in $QDS; do run_case poll "$qd" "${ALL[@]}"; done; fi
if ((PASSTHRU)); then for qd in $QDS; do run_case passthru "$qd" "${ALL[@]}"; done; fi
if [ "$SQPOLL" = 1 ]; then for qd in $QDS; do run_case sqpoll "$qd" storlab fio; done; fi

echo "loadavg_after: $(loadavg)" >>"$RESULTS/machine.txt"
((FAILED == 0)) || echo "failed runs: $FAILED (see runs.txt and the logs)" >>"$RESULTS/machine.txt"
say "results: $RESULTS"
python3 "$here/vs_t_io_uring_report.py" "$RESULTS" | tee "$RESULTS/summary.md"
((FAILED == 0)) || { say "$FAILED runs failed"; exit 1; }
