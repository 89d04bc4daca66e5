#!/usr/bin/env bash
# etcd's disk check: `storlab etcd` against the fio check it reproduces, on the same
# filesystem, alternating runs, and their fdatasync percentiles side by side.
#
#   bench/etcd-vs-fio.sh                        # ROUNDS=5 SIZE=22m BS=2300
#   ROUNDS=7 BS=8000 bench/etcd-vs-fio.sh       # OpenShift's write size
#   SCRATCH=/var/lib/etcd/bench bench/etcd-vs-fio.sh
#   CPU=1 ROUNDS=11 bench/etcd-vs-fio.sh        # both tools on CPU 1 alone
#
# Each round runs both tools once on a new file (fio: a new directory, as the fio check is
# run; storlab: its log file made anew, preallocated and not written, as fio lays its file
# out), storlab first in odd rounds and fio first in even ones:
#
#   fio --rw=write --ioengine=sync --fdatasync=1 --size=$SIZE --bs=$BS --directory=DIR
#   storlab etcd --directory DIR --file-size $SIZE --write-size $BS --duration 10m
#
# and prints, per round and as medians over the rounds, the fdatasync time's p50, p90 and p99
# of each (fio's `sync` section of its JSON; storlab's `etcd.sync_latency_ns`), the ratio
# storlab ÷ fio and its spread (the lowest and highest ratio of a round). The target is a
# median ratio within 5% of 1 (docs/performance.md). Results (storlab's results files, fio's
# JSON) stay in RESULTS. STORLAB is the binary (default: target/release/storlab, else
# target/debug/storlab: the sync time is the device's, milliseconds, not storlab's CPU).
# Exit status: 0 unless a command fails.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
SIZE=${SIZE:-22m}
BS=${BS:-2300}
SCRATCH=${SCRATCH:-/var/tmp/storlab-etcd-vs-fio}
RESULTS=${RESULTS:-$SCRATCH/results-$(date -u +%Y%m%dT%H%M%SZ)}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
if [[ -z "${STORLAB:-}" ]]; then
    STORLAB=$repo/target/release/storlab
    [[ -x $STORLAB ]] || STORLAB=$repo/target/debug/storlab
fi
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)" >&2; exit 1; }
[[ -x $STORLAB ]] || { echo "no storlab binary at $STORLAB (cargo build --release)" >&2; exit 1; }

# fio's size suffixes are binary (22m = 22 MiB), as storlab's MiB.
storlab_size=${SIZE%m}MiB
mkdir -p "$SCRATCH" "$RESULTS"
{
    echo "storlab: $("$STORLAB" --version) ($STORLAB)"
    echo "fio: $(fio --version)"
    echo "kernel: $(uname -r)"
    echo "filesystem: $(df -T "$SCRATCH" | tail -1)"
    echo "command: ROUNDS=$ROUNDS SIZE=$SIZE BS=$BS SETSID=${SETSID:-yes} CPU=${CPU:-} bench/etcd-vs-fio.sh"
    echo "autogroup: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo unknown)"
} > "$RESULTS/machine.txt"
cat "$RESULTS/machine.txt" >&2

# fio runs each job in a process of its own, in a session of its own (setsid), so with the
# kernel's autogroup on (kernel.sched_autogroup_enabled=1) it is a CPU group of its own; storlab
# is run the same way (setsid -w) unless SETSID=no, so that on a loaded machine neither tool's
# wake-ups after a sync share their CPU group with the shell (docs/performance.md).
SETSID=${SETSID:-yes}
own_session=()
[[ $SETSID == no ]] || own_session=(setsid -w)
# CPU=N runs both tools on CPU N alone (taskset): the one thread that writes and syncs then
# never moves between CPUs, in either tool.
pin=()
[[ -z ${CPU:-} ]] || pin=(taskset -c "$CPU")
run_storlab() {
    "${pin[@]}" "${own_session[@]}" "$STORLAB" etcd --directory "$SCRATCH/storlab" --file-size "$storlab_size" --write-size "$BS" \
        --duration 10m -q -o "$RESULTS/storlab-$1.json" >/dev/null 2>>"$RESULTS/storlab.log" || [[ $? == 3 ]]
}
run_fio() {
    rm -rf "$SCRATCH/fio" && mkdir -p "$SCRATCH/fio"
    "${pin[@]}" fio --rw=write --ioengine=sync --fdatasync=1 --size="$SIZE" --bs="$BS" \
        --directory="$SCRATCH/fio" --name=etcd-check --output-format=json \
        --output="$RESULTS/fio-$1.json" >/dev/null
}
mkdir -p "$SCRATCH/storlab"
for round in $(seq 1 "$ROUNDS"); do
    if (( round % 2 == 1 )); then run_storlab "$round"; run_fio "$round"
    else run_fio "$round"; run_storlab "$round"; fi
    echo "round $round done" >&2
done
rm -rf "$SCRATCH/fio" "$SCRATCH/storlab"

python3 - "$RESULTS" "$ROUNDS" <<'PY'
import json, statistics, sys
results, rounds = sys.argv[1], int(sys.argv[2])
keys = [("p50", "50.000000"), ("p90", "90.000000"), ("p99", "99.000000")]
rows = []
for r in range(1, rounds + 1):
    s = json.load(open(f"{results}/storlab-{r}.json"))["etcd"]
    f = json.load(open(f"{results}/fio-{r}.json"))["jobs"][0]
    fs = f["sync"]["lat_ns"]
    row = {"round": r, "storlab_syncs": s["syncs"], "fio_syncs": fs["N"],
           "storlab_mean": s["sync_latency_ns"]["mean"], "fio_mean": fs["mean"]}
    for name, key in keys:
        row["storlab_" + name] = s["sync_latency_ns"][name]
        row["fio_" + name] = fs["percentile"][key]
    rows.append(row)
us = lambda ns: f"{ns / 1e3:9.1f}"
print(f"{'round':>5} {'syncs s/f':>13} " + " ".join(
    f"{n + ' storlab':>12} {n + ' fio':>9} {'ratio':>6}" for n, _ in keys + [("mean", "")]) + "   (µs)")
for row in rows:
    cells = []
    for n in [k for k, _ in keys] + ["mean"]:
        a, b = row["storlab_" + n], row["fio_" + n]
        cells.append(f"{us(a):>12} {us(b):>9} {a / b:6.3f}")
    print(f"{row['round']:>5} {row['storlab_syncs']:>6}/{row['fio_syncs']:<6} " + " ".join(cells))
print()
for n in [k for k, _ in keys] + ["mean"]:
    a = statistics.median(r["storlab_" + n] for r in rows)
    b = statistics.median(r["fio_" + n] for r in rows)
    ratios = [r["storlab_" + n] / r["fio_" + n] for r in rows]
    print(f"{n:>4}: median storlab {a / 1e3:.1f} µs, fio {b / 1e3:.1f} µs; "
          f"ratio of medians {a / b:.3f}, median of round ratios {statistics.median(ratios):.3f} "
          f"(rounds {min(ratios):.3f}–{max(ratios):.3f}); storlab's rounds {min(r['storlab_' + n] for r in rows) / 1e3:.1f}–"
          f"{max(r['storlab_' + n] for r in rows) / 1e3:.1f} µs, fio's {min(r['fio_' + n] for r in rows) / 1e3:.1f}–"
          f"{max(r['fio_' + n] for r in rows) / 1e3:.1f} µs")
PY
echo "results: $RESULTS" >&2
