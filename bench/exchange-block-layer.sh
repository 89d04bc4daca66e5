#!/usr/bin/env bash
# What an Exchange validation does at the block layer, against its version's constants
# (docs/profiles.md, "The constants at the block layer"): the databases on one loop device,
# the logs on another (each ext4, backed by a file in /dev/shm), the validation run once to
# build them and once measured, and the measured run's device counters (the results file's
# `devices`, from /sys/block/*/stat over the measured time) printed beside what the profile
# asks for:
#   database device: reads/s, writes/s, bytes per read and per write, the read share;
#   log device: writes/s, bytes per write, log writes per database I/O;
#   the database device's read MB/s (with MAINTENANCE=on, less the same run's without it:
#   the maintenance reads' MB/s).
# The database device is ext4, made without a journal unless JOURNAL=1; the log device XFS
# (LOG_FS=ext4 for ext4 as the database's), whose O_DIRECT|O_DSYNC overwrites of allocated
# blocks are the writes alone (FUA), so that the devices see storlab's I/O and not the
# filesystem's: on ext4 each O_DSYNC log write also writes the file's metadata (and, with a
# journal, commits it), about 2.5 device writes per log write. storlab's own count of its log
# writes is printed beside the device's.
#
#   bench/exchange-block-layer.sh                              # VERSION=2010, maintenance off
#   VERSION=2010 MAINTENANCE=on bench/exchange-block-layer.sh
#   VERSION=2007 bench/exchange-block-layer.sh
#   VERSION=2016 COPIES=2 MAINTENANCE=on bench/exchange-block-layer.sh
#   JOURNAL=1 bench/exchange-block-layer.sh
#
# Needs root, losetup and mkfs.ext4, about 2.2 GiB of /dev/shm; removes what it made. (blktrace,
# which would give each request's size, needs debugfs's block tracing, which this machine's
# kernel refuses: "Operation not permitted".)
set -euo pipefail

STORLAB=${STORLAB:-target/debug/storlab}
VERSION=${VERSION:-2010}
COPIES=${COPIES:-1}
MAINTENANCE=${MAINTENANCE:-off}
DURATION=${DURATION:-30s}
MAILBOXES=${MAILBOXES:-2000}
IOPS=${IOPS:-0.5}
JOURNAL=${JOURNAL:-0}
MOUNT_OPTIONS=${MOUNT_OPTIONS:-lazytime}
LOG_FS=${LOG_FS:-xfs}

work=$(mktemp -d /dev/shm/storlab-blk.XXXXXX)
DB_DEV=
LOG_DEV=
cleanup() {
    set +e
    for m in "$work/db" "$work/log"; do mountpoint -q "$m" && umount "$m"; done
    [ -n "$DB_DEV" ] && losetup -d "$DB_DEV"
    [ -n "$LOG_DEV" ] && losetup -d "$LOG_DEV"
    rm -rf "$work"
}
trap cleanup EXIT

truncate -s 1536M "$work/db.img"
truncate -s 512M "$work/log.img"
DB_DEV=$(losetup --find --show "$work/db.img")
LOG_DEV=$(losetup --find --show "$work/log.img")
features=()
[ "$JOURNAL" = 1 ] || features=(-O ^has_journal)
mkdir -p "$work/db" "$work/log"
mkfs.ext4 -q "${features[@]}" "$DB_DEV"
if [ "$LOG_FS" = xfs ]; then
    mkfs.xfs -q "$LOG_DEV"
else
    mkfs.ext4 -q "${features[@]}" "$LOG_DEV"
fi
mount -o "$MOUNT_OPTIONS" "$DB_DEV" "$work/db"
mount -o "$MOUNT_OPTIONS" "$LOG_DEV" "$work/log"

args=(exchange --version "$VERSION" --mailboxes "$MAILBOXES" --mailbox-size 256MiB
    --capacity 0.2% --iops-per-mailbox "$IOPS" --databases 2 --threads 4 --copies "$COPIES"
    --maintenance "$MAINTENANCE" --db-path "$work/db" --log-path "$work/log" --quiet)
# Build the databases and logs, then the measured run (its verdict does not matter here).
"$STORLAB" "${args[@]}" --duration 1s --ramp 0s -o "$work/build.json" >/dev/null 2>&1 || true
"$STORLAB" "${args[@]}" --duration "$DURATION" -o "$work/run.json" >/dev/null 2>&1 || true

jq -r --arg db "$(basename "$DB_DEV")" --arg log "$(basename "$LOG_DEV")" \
    --arg v "$VERSION" --arg c "$COPIES" --arg m "$MAINTENANCE" --arg j "$JOURNAL" '
  (.measured_ms / 1000) as $s
  | (.devices | map({key: .name, value: .delta}) | from_entries) as $d
  | $d[$db] as $dd | $d[$log] as $ld
  | ($dd.reads / $s) as $r | ($dd.writes / $s) as $w | ($ld.writes / $s) as $l
  | def kib(b; n): if n > 0 then (b / n / 1024 * 10 | round / 10) else 0 end;
    def r1(x): (x * 10 | round / 10);
    def r3(x): (x * 1000 | round / 1000);
  "version \($v) copies \($c) maintenance \($m) journal \($j) · target \(.exchange.target_iops) IOPS · "
  + "db: \(r1($r)) reads/s (\(kib($dd.read_bytes; $dd.reads)) KiB each), \(r1($w)) writes/s (\(kib($dd.write_bytes; $dd.writes)) KiB each), "
  + "\(r1(100 * $r / ($r + $w)))% reads, \(r3($dd.read_bytes / $s / 1e6)) MB/s read · "
  + "log: \(r1($l)) writes/s (\(kib($ld.write_bytes; $ld.writes)) KiB each), \(r3($l / ($r + $w))) per database I/O"
  + ", \(r3($ld.write_bytes / $s / 1e6)) MB/s, \(r1($ld.flushes / $s)) flushes/s"
  + " · storlab: " + ([.classes | to_entries[] | select(.key | endswith("/log-write")) | .value.write] as $lw
      | "\(r1(($lw | map(.ops) | add) / $s)) log writes/s of \(kib($lw | map(.bytes) | add; $lw | map(.ops) | add)) KiB, \(r3(($lw | map(.bytes) | add) / $s / 1e6)) MB/s")
' "$work/run.json"
