#!/usr/bin/env bash
# What a cache tier costs storlab per logical (application) I/O, beyond the device I/Os it
# issues, next to the plain path's CPU per I/O.
#
# Null engine (no I/O, so all CPU is storlab's): the exchange-cache-levels workload (32 KiB,
# 60 % reads, 100 % random, the preset's zoned hot bands, one worker at queue depth 5) on a
# 1 GiB stand-in, alternated ROUNDS times as
#   plain        no tier (the plain path's CPU per I/O),
#   plain-read   no tier, 100 % reads  \  the plain path's CPU per read and per write, to
#   plain-write  no tier, 0 % reads    /  charge the tier's engine I/Os by direction,
#   tier         CACHE of it cached (POLICY, write-back); the null engine makes no files.
# The tier's own CPU per logical I/O = (the tier run's CPU − its physical reads × the plain
# read's − its physical writes × the plain write's) ÷ its logical I/Os: what is left once every
# I/O the engine did (the application's and the tier's fills and write-backs) is charged at
# the plain path's price. Each physical I/O is charged a whole plain I/O, offset generation
# included, which a fill or write-back does not do: the figure errs low, by about 10 ns.
#
# PRESET=1 also runs the preset itself PRESET_ROUNDS times (real I/O: a 1 GiB file under
# SCRATCH/storlab-scratch, kept for the next run, its cache a 1 GiB file in /dev/shm, removed
# afterwards; about a minute a run) and
# prints storlab's user and system CPU per logical I/O at each cache level, and the user CPU
# beyond the plain level's per physical I/O (the system CPU is the kernel's I/O).
#
#   bench/tier-cost.sh                                   # ROUNDS=5 DURATION=2s
#   POLICY=arc CACHE=50% bench/tier-cost.sh
#   PRESET=1 PRESET_ROUNDS=1 bench/tier-cost.sh
#   ROUNDS=0 PRESET=1 bench/tier-cost.sh                # the preset only
#
# Medians over rounds (ranges in brackets); the load average before and after is printed:
# run it on a quiet machine.
set -euo pipefail
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-2s}
RAMP=${RAMP:-1s}
CACHE=${CACHE:-25%}
POLICY=${POLICY:-lru}
PRESET=${PRESET:-0}
PRESET_ROUNDS=${PRESET_ROUNDS:-1}
SCRATCH=${SCRATCH:-/var/tmp/storlab-tier-cost}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${STORLAB:-}" ]; then
    (cd "$here/.." && cargo build --release --locked -q)
    STORLAB=$here/../target/release/storlab
fi
RESULTS=${RESULTS:-$SCRATCH/tier-cost-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$RESULTS"
echo "loadavg_before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$RESULTS/machine.txt"

job() { # READ_PCT CACHE_LINE: the workload, with or without a tier
    cat <<EOF
duration = "$DURATION"
ramp = "$RAMP"

[[target]]
name = "lun"
path = "$SCRATCH/null-lun.dat"
size = "1GiB"
$2

[[worker]]
name = "jetstress"
queue_depth = 5

[[worker.access]]
class = "database"
block_size = "32k"
read = "$1%"
random = "100%"
distribution = "zoned:50/12:15/25:35/63"
EOF
}
tier_line="cache = { device = \"$SCRATCH/null-cache.dat\", size = \"$CACHE\", policy = \"$POLICY\", write = \"back\" }"
job 60 "" >"$RESULTS/plain.toml"
job 100 "" >"$RESULTS/plain-read.toml"
job 0 "" >"$RESULTS/plain-write.toml"
job 60 "$tier_line" >"$RESULTS/tier.toml"

for round in $(seq 1 "$ROUNDS"); do
    for case in plain plain-read plain-write tier; do
        echo "round $round/$ROUNDS: null $case" >&2
        "$STORLAB" run "$RESULTS/$case.toml" --engine null --quiet \
            -o "$RESULTS/null.$case.$round.json" >"$RESULTS/null.$case.$round.log" 2>&1 || {
            cat "$RESULTS/null.$case.$round.log" >&2
            exit 1
        }
    done
done

if [ "$PRESET" = 1 ]; then
    for round in $(seq 1 "$PRESET_ROUNDS"); do
        echo "round $round/$PRESET_ROUNDS: preset exchange-cache-levels" >&2
        (cd "$SCRATCH" && "$STORLAB" run --preset exchange-cache-levels --duration 4s --ramp 4s \
            --quiet -o "$RESULTS/preset.levels.$round.json" >"$RESULTS/preset.$round.log" 2>&1) || {
            cat "$RESULTS/preset.$round.log" >&2
            exit 1
        }
    done
    rm -f /dev/shm/storlab-exchange-cache.dat /dev/shm/storlab-exchange-cache.dat.storlab.json
fi
echo "loadavg_after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RESULTS/machine.txt"

python3 - "$RESULTS" <<'PY'
import glob, json, os, statistics, sys

res = sys.argv[1]


def cpu_s(d, part=("process_user_pct", "process_system_pct")):
    c = d["host_cpu"]
    return sum(c[p] for p in part) / 100 * d["measured_ms"] / 1000


def null_figures(path):
    d = json.load(open(path))
    t = d["totals"]
    logical = t["read"]["ops"] + t["write"]["ops"]
    reads = sum(x["ops"]["read"] for x in d["targets"])
    writes = sum(x["ops"]["write"] for x in d["targets"])
    return {"cpu": cpu_s(d), "logical": logical, "reads": reads, "writes": writes}


def med(v, f=".1f"):
    return f"{statistics.median(v):7{f}} [{min(v):{f}}–{max(v):{f}}]"


runs = {}
for path in sorted(glob.glob(os.path.join(res, "null.*.*.json"))):
    _, case, rnd, _ = os.path.basename(path).split(".")
    runs.setdefault(int(rnd), {})[case] = null_figures(path)
cols = {k: [] for k in ("plain", "read", "write", "tier", "extra", "own", "ratio")}
for rnd, r in sorted(runs.items()):
    if len(r) < 4:
        continue
    ns = {c: r[c]["cpu"] / r[c]["logical"] * 1e9 for c in r}
    t = r["tier"]
    engine = t["reads"] * ns["plain-read"] + t["writes"] * ns["plain-write"]
    own = (t["cpu"] * 1e9 - engine) / t["logical"]
    cols["plain"].append(ns["plain"])
    cols["read"].append(ns["plain-read"])
    cols["write"].append(ns["plain-write"])
    cols["tier"].append(ns["tier"])
    cols["extra"].append((t["reads"] + t["writes"]) / t["logical"] - 1)
    cols["own"].append(own)
    cols["ratio"].append(own / ns["plain"])
print(open(os.path.join(res, "machine.txt")).read().rstrip())
if cols["plain"]:
    print(f"null engine, {len(cols['plain'])} rounds, medians [ranges], storlab user+system CPU:")
    print(f"  plain path, ns per I/O (60 % reads)          {med(cols['plain'])}")
    print(f"  plain path, ns per read / per write          {med(cols['read'])} / {med(cols['write'])}")
    print(f"  with the tier, ns per logical I/O            {med(cols['tier'])}")
    print(f"  the tier's extra engine I/Os per logical     {med(cols['extra'], '.2f')}")
    print(f"  the tier's own, ns per logical I/O           {med(cols['own'])}")
    print(f"  the tier's own ÷ the plain path's            {med(cols['ratio'], '.2f')}")

levels = {}
for path in sorted(glob.glob(os.path.join(res, "preset.levels.*.json"))):
    d = json.load(open(path))
    for s in d["steps"]:
        t = s["totals"]
        logical = t["read"]["ops"] + t["write"]["ops"]
        if not logical:
            continue
        sec = s["measured_ms"] / 1000
        c = s["host_cpu"]
        tiers = s.get("cache_tiers") or []
        extra_r = extra_w = 0.0
        for x in tiers:
            line = x["line_bytes"]
            destaged = x["totals"]["destage_bytes"] / line
            extra_r += destaged
            extra_w += destaged + x["totals"]["fill_bytes"] / line
        levels.setdefault(s["label"], []).append({
            "iops": logical / sec,
            "user": c["process_user_pct"] / 100 * sec / logical * 1e9,
            "sys": c["process_system_pct"] / 100 * sec / logical * 1e9,
            "phys": 1 + (extra_r + extra_w) / logical,
        })
if levels:
    n = len(next(iter(levels.values())))
    print(f"preset exchange-cache-levels (--duration 4s --ramp 4s), medians of {n} run(s):")
    print(f"  {'level':<22} {'IOPS':>8} {'user ns/I/O':>12} {'sys ns/I/O':>11} "
          f"{'engine I/Os':>11} {'tier own user':>14}")
    plain_user = None
    for label, v in levels.items():
        m = {k: statistics.median(x[k] for x in v) for k in v[0]}
        if plain_user is None:
            plain_user = m["user"]
        own = m["user"] - plain_user * m["phys"]
        print(f"  {label:<22} {m['iops']:>8.0f} {m['user']:>12.0f} {m['sys']:>11.0f} "
              f"{m['phys']:>11.2f} {own:>14.0f}")
    print("  user and system CPU of the whole process per logical I/O; engine I/Os per logical"
          " from the tier's fill and write-back bytes; the tier's own user CPU = user − the"
          " first level's user per I/O × engine I/Os")
PY
echo "results: $RESULTS" >&2
