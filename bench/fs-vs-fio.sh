#!/usr/bin/env bash
# File creates, stats and deletes: storlab's mdtest phases against fio's `filecreate`,
# `filestat` and `filedelete` engines on the same tree (FILES files in one directory, one
# thread each), alternating, and the rates as ratios with their medians.
#
#   bench/fs-vs-fio.sh                               # ROUNDS=5 FILES=20000 on /dev/shm
#   SCRATCH=/mnt/ext4/bench ROUNDS=7 bench/fs-vs-fio.sh
#   CPU=1 bench/fs-vs-fio.sh                         # both tools on CPU 1 alone
#
# Each round runs, storlab first in odd rounds and fio first in even ones:
#
#   fio --ioengine=filecreate --create_on_open=1 --nrfiles=$FILES --filesize=4k --bs=4k
#       --openfiles=1 --fallocate=none --directory=DIR           (each file opened O_CREAT, closed)
#   fio --ioengine=filestat  ... (the same files: stat each)
#   fio --ioengine=filedelete ... (the same files: unlink each)
#   storlab fs --anchor DIR --mdtest-items $FILES --mdtest-unique-dir false --threads 1
#       --mdtest-phases create,stat,remove                        (create+close, statx, unlink)
#
# fio's rate is its IOPS (files a second over its job's runtime); storlab's its phase's items
# a second (from every thread's start to the last one's end), with every statistic a run of
# storlab keeps (a latency histogram per operation, the time series, its own cost). Printed:
# per round and as medians, each phase's rate of both and the ratio storlab ÷ fio (the goal:
# at least 1, docs/performance.md). Results (storlab's results files, fio's JSON) stay in
# RESULTS. STORLAB is the binary (default target/release/storlab).
set -euo pipefail

ROUNDS=${ROUNDS:-5}
FILES=${FILES:-20000}
SCRATCH=${SCRATCH:-/dev/shm/storlab-fs-vs-fio}
RESULTS=${RESULTS:-$SCRATCH-results-$(date -u +%Y%m%dT%H%M%SZ)}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
STORLAB=${STORLAB:-$repo/target/release/storlab}
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)" >&2; exit 1; }
[[ -x $STORLAB ]] || { echo "no storlab binary at $STORLAB (cargo build --release)" >&2; exit 1; }

mkdir -p "$SCRATCH" "$RESULTS"
{
    echo "storlab: $("$STORLAB" --version) ($STORLAB)"
    echo "fio: $(fio --version)"
    echo "kernel: $(uname -r)"
    echo "filesystem: $(df -T "$SCRATCH" | tail -1)"
    echo "command: ROUNDS=$ROUNDS FILES=$FILES CPU=${CPU:-} bench/fs-vs-fio.sh"
    echo "load: $(cat /proc/loadavg)"
} > "$RESULTS/machine.txt"
cat "$RESULTS/machine.txt" >&2

pin=()
[[ -z ${CPU:-} ]] || pin=(taskset -c "$CPU")
run_fio() {
    local dir=$SCRATCH/fio
    rm -rf "$dir" && mkdir -p "$dir"
    for engine in filecreate filestat filedelete; do
        local extra=()
        [[ $engine == filecreate ]] && extra=(--create_on_open=1)
        "${pin[@]}" fio --name=files --ioengine=$engine "${extra[@]}" --nrfiles="$FILES" \
            --filesize=4k --bs=4k --openfiles=1 --fallocate=none --directory="$dir" \
            --output-format=json --output="$RESULTS/fio-$engine-$1.json" >/dev/null
    done
    rm -rf "$dir"
}
run_storlab() {
    "${pin[@]}" "$STORLAB" fs --anchor "$SCRATCH/storlab" --mdtest-items "$FILES" \
        --mdtest-unique-dir false --threads 1 --mdtest-phases create,stat,remove \
        -q -o "$RESULTS/storlab-$1.json" >/dev/null
}
for round in $(seq 1 "$ROUNDS"); do
    if (( round % 2 == 1 )); then run_storlab "$round"; run_fio "$round"
    else run_fio "$round"; run_storlab "$round"; fi
    echo "round $round done" >&2
done
rm -rf "$SCRATCH/storlab"

python3 - "$RESULTS" "$ROUNDS" <<'PY'
import json, statistics, sys
results, rounds = sys.argv[1], int(sys.argv[2])
phases = [("create", "filecreate"), ("stat", "filestat"), ("remove", "filedelete")]
rows = []
for r in range(1, rounds + 1):
    s = json.load(open(f"{results}/storlab-{r}.json"))["fs"]["mdtest"]["phases"]
    row = {"round": r}
    for phase, engine in phases:
        f = json.load(open(f"{results}/fio-{engine}-{r}.json"))["jobs"][0]
        fio = max(f["read"]["iops"], f["write"]["iops"])
        mine = next(p for p in s if p["phase"] == phase)
        row[phase] = (mine["items_per_s"], fio, mine["items"], f["read"]["total_ios"] + f["write"]["total_ios"])
    rows.append(row)
print(f"{'round':>5} " + " ".join(f"{p + ' storlab':>15} {p + ' fio':>11} {'ratio':>6}" for p, _ in phases) + "   (files/s)")
for row in rows:
    print(f"{row['round']:>5} " + " ".join(
        f"{row[p][0]:15.0f} {row[p][1]:11.0f} {row[p][0] / row[p][1]:6.3f}" for p, _ in phases))
print()
for p, engine in phases:
    a = statistics.median(r[p][0] for r in rows)
    b = statistics.median(r[p][1] for r in rows)
    ratios = [r[p][0] / r[p][1] for r in rows]
    items = {r[p][2] for r in rows} | {r[p][3] for r in rows}
    print(f"{p:>6} vs {engine}: median storlab {a:.0f}/s, fio {b:.0f}/s; ratio of medians {a / b:.3f}, "
          f"median of round ratios {statistics.median(ratios):.3f} (rounds {min(ratios):.3f}-{max(ratios):.3f}); "
          f"files per round {sorted(items)}")
PY
echo "results: $RESULTS" >&2
