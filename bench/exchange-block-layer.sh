#!/usr/bin/env bash
# What an Exchange validation does at the block layer, against the constants of its version
# (docs/profiles.md, "Version constants against the block layer"): the databases on one loop
# device, the logs on another (each ext4, backed by a file in /dev/shm), the validation run
# once to build them and once measured, and for the measured run
#   - the devices' own counters over the measured time (the results file's `devices`):
#     reads and writes a second, the bytes of each;
#   - blktrace of both devices: every completed request's size, so that the database
#     device's page reads, page writes and maintenance reads, and the log device's writes,
#     are told apart by size (pages are the version's page size; maintenance reads 256 KiB,
#     or the pieces the block layer cuts them into; log writes 4 to 32 KiB, FUA).
# ext4's own journal writes land on both devices; they are counted apart (blktrace names
# the jbd2 thread that issued them).
#
#   sudo bench/exchange-block-layer.sh                       # VERSION=2010 COPIES=1
#   VERSION=2007 MAINTENANCE=off sudo bench/exchange-block-layer.sh
#   VERSION=2016 COPIES=2 sudo bench/exchange-block-layer.sh
#
# Needs root, losetup, mkfs.ext4, blktrace and blkparse (Debian: blktrace). Prints one line
# of figures; everything it made is removed at the end.
set -euo pipefail

STORLAB=${STORLAB:-target/debug/storlab}
VERSION=${VERSION:-2010}
COPIES=${COPIES:-1}
MAINTENANCE=${MAINTENANCE:-on}
DURATION=${DURATION:-30s}
MAILBOXES=${MAILBOXES:-2000}
IOPS=${IOPS:-0.5}

work=$(mktemp -d /dev/shm/storlab-blk.XXXXXX)
cleanup() {
    set +e
    for m in "$work/db" "$work/log"; do mountpoint -q "$m" && umount "$m"; done
    for d in ${DB_DEV:-} ${LOG_DEV:-}; do losetup -d "$d"; done
    rm -rf "$work"
}
trap cleanup EXIT

truncate -s 1536M "$work/db.img"
truncate -s 512M "$work/log.img"
DB_DEV=$(losetup --find --show "$work/db.img")
LOG_DEV=$(losetup --find --show "$work/log.img")
mkdir -p "$work/db" "$work/log"
mkfs.ext4 -q "$DB_DEV"
mkfs.ext4 -q "$LOG_DEV"
mount "$DB_DEV" "$work/db"
mount "$LOG_DEV" "$work/log"

args=(exchange --version "$VERSION" --mailboxes "$MAILBOXES" --mailbox-size 256MiB
    --capacity 0.2% --iops-per-mailbox "$IOPS" --databases 2 --threads 4 --copies "$COPIES"
    --maintenance "$MAINTENANCE" --db-path "$work/db" --log-path "$work/log" --quiet)
# Build the databases and logs, then run the measured validation under blktrace.
"$STORLAB" "${args[@]}" --duration 1s --ramp 0s -o "$work/build.json" >/dev/null || true
blktrace -d "$DB_DEV" -d "$LOG_DEV" -D "$work" -o trace >/dev/null 2>&1 &
tracer=$!
sleep 1
"$STORLAB" "${args[@]}" --duration "$DURATION" -o "$work/run.json" >/dev/null || true
sleep 1
kill -INT "$tracer"
wait "$tracer" || true

db=$(basename "$DB_DEV")
log=$(basename "$LOG_DEV")
blkparse -q -i "$work/trace" -f '%M,%m %a %d %n %C\n' -a complete -a issue >"$work/events.txt" 2>/dev/null || true

python3 - "$work/run.json" "$work/events.txt" "$db" "$log" "$VERSION" "$COPIES" <<'EOF'
import json, sys, collections
run, events, db, log, version, copies = sys.argv[1:7]
r = json.load(open(run))
s = r["measured_ms"] / 1e3
dev = {d["name"]: d["delta"] for d in r["devices"]}
x = r["exchange"]
page = x["page_size_bytes"]
# Requests the block layer issued (D), by device and direction, sized in sectors; the
# journal's (jbd2) apart. Completions (C) carry no issuer, so issues are what is counted.
sizes = collections.defaultdict(collections.Counter)
for line in open(events):
    f = line.split()
    if len(f) < 5 or f[1] != "D":
        continue
    name = db if f[0] == devnum_db else log if f[0] == devnum_log else None
EOF
true
