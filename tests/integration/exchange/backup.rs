//! The backup and recovery tests: the figures they report, and each database's backup rate
//! measured on its own.

use super::devices::{BlkioCgroup, LoopFs, blkio_skip_reason, dev_number, ram_dir};
use super::{class_counts, failing};
use crate::harness::{
    ExchangeArgs, MIB, array_at, at, close, f64_at, load_json, scratch, skip, str_at, u64_at,
};
use serde_json::Value;

#[test]
fn backup_and_recovery_tests_report_their_figures() {
    let dir = scratch();
    let layout = ExchangeArgs::sized(100, "32MiB", "1%", 2)
        .flags(&["--duration", "10s"])
        .db_path(dir.path());
    let v = layout
        .clone()
        .flags(&["--test", "backup"])
        .results(&dir.path().join("backup.json"))
        .run_ok(dir.path());
    assert_eq!(str_at(&v, "/exchange/test"), "backup");
    assert_eq!(str_at(&v, "/verdict/result"), "PASS");
    assert!(failing(&v).is_empty());
    let db_bytes = u64_at(&v, "/exchange/database_size_bytes");
    assert_eq!(db_bytes, 16 * MIB);
    let total = f64_at(&v, "/exchange/backup/mb_per_s_total");
    assert!(total > 0.0, "backup at {total} MB/s");
    assert_eq!(at(&v, "/exchange/backup/complete"), &Value::Bool(true));
    assert_eq!(u64_at(&v, "/exchange/backup/block_size_bytes"), 65536);
    let per_db = array_at(&v, "/exchange/backup/mb_per_s_per_database");
    assert_eq!(per_db.len(), 2);
    let full = f64_at(&v, "/exchange/backup/full_backup_seconds");
    assert!(full > 0.0);
    // The time to read both databases at the total rate (the measured time is whole ms).
    let expected = 2.0 * db_bytes as f64 / (total * 1e6);
    assert!(
        (full - expected).abs() <= (expected * 0.01).max(0.0015),
        "full backup {full} s for 2 × {db_bytes} B at {total} MB/s"
    );
    for db in ["db1", "db2"] {
        let (ops, bytes) = class_counts(&v, &format!("{db}/backup-read"), "read");
        assert_eq!(bytes, db_bytes, "{db} was not read exactly once");
        assert_eq!(ops, db_bytes / 65536);
    }
    assert_eq!(
        u64_at(&v, "/totals/write/ops"),
        0,
        "a backup writes nothing"
    );

    let v = layout
        .flags(&["--test", "recovery", "--log-files", "4"])
        .results(&dir.path().join("recovery.json"))
        .run_ok(dir.path());
    assert_eq!(str_at(&v, "/exchange/test"), "recovery");
    assert_eq!(str_at(&v, "/verdict/result"), "PASS");
    assert_eq!(
        at(&v, "/exchange/initialisation/reused"),
        &Value::Bool(true),
        "the backup's databases were not reused"
    );
    let per_log = f64_at(&v, "/exchange/recovery/seconds_per_log_file");
    let seconds = f64_at(&v, "/exchange/recovery/seconds");
    assert!(per_log > 0.0, "{per_log} s per log file");
    assert!(close(per_log, seconds / 4.0, 1e-6));
    assert_eq!(u64_at(&v, "/exchange/recovery/log_files"), 4);
    let per_file = u64_at(&v, "/exchange/recovery/reads_per_log_file")
        + u64_at(&v, "/exchange/recovery/writes_per_log_file");
    for db in ["db1", "db2"] {
        let (log_reads, log_bytes) = class_counts(&v, &format!("{db}/log-read"), "read");
        assert_eq!(log_reads, 4, "{db}: log files replayed");
        assert_eq!(log_bytes, 4 * MIB, "{db}: log files are 1 MiB");
        let (reads, _) = class_counts(&v, &format!("{db}/read"), "read");
        let (writes, _) = class_counts(&v, &format!("{db}/write"), "write");
        assert_eq!(
            reads + writes,
            4 * per_file,
            "{db}: page I/O of 4 log files"
        );
    }
}

/// Two databases on two devices, one read at 8 MiB/s at most: each database's backup rate is
/// its own (the fast one's is not the slow one's), and the total is all bytes over the time
/// the whole backup took.
#[test]
fn backup_rate_per_database_is_each_databases_own() {
    if let Some(reason) = blkio_skip_reason() {
        return skip("backup_rate_per_database_is_each_databases_own", &reason);
    }
    let dir = scratch();
    // db1 on a loop device whose image is in memory (when /dev/shm is there): reading its
    // 16 MiB takes milliseconds even on a loaded machine, whatever else the scratch disk is
    // doing, so "more than 3 times the throttled one" (which cannot beat its 8.4 MB/s) holds
    // however busy the machine is. On the shared scratch disk it would depend on the disk.
    let ram = ram_dir();
    let fast_fs = LoopFs::create_with_image(
        ram.as_ref().map_or(dir.path(), |r| r.path()),
        dir.path(),
        "fast",
        256,
        &[],
        &[],
    )
    .expect("filesystem");
    let fast = fast_fs.mount_point.clone();
    let slow = LoopFs::create(dir.path(), "slow", 256, &[], &[]).expect("filesystem");
    let (major, minor) = dev_number(&slow.device);
    let cgroup = BlkioCgroup::create(
        "backup",
        &[(
            "blkio.throttle.read_bps_device",
            format!("{major}:{minor} {}", 8 * MIB),
        )],
    )
    .expect("blkio cgroup");
    let results = dir.path().join("r.json");
    let out = cgroup.run_exchange(
        dir.path(),
        &ExchangeArgs::sized(100, "32MiB", "1%", 2)
            .flags(&["--test", "backup", "--duration", "20s"])
            .db_path(&fast)
            .db_path(&slow.mount_point)
            .results(&results),
    );
    out.expect_ok();
    let v = load_json(&results);
    assert_eq!(at(&v, "/exchange/backup/complete"), &Value::Bool(true));
    let per_db: Vec<f64> = array_at(&v, "/exchange/backup/mb_per_s_per_database")
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let total = f64_at(&v, "/exchange/backup/mb_per_s_total");
    // db1 is on the fast path, db2 on the throttled device (8 MiB/s = 8.4 MB/s).
    assert!(
        per_db[1] <= 8.4 * 1.2,
        "db2 backed up at {} MB/s through an 8.4 MB/s limit (per database: {per_db:?})",
        per_db[1]
    );
    assert!(
        per_db[0] > 3.0 * per_db[1],
        "db1 (unthrottled) backed up at {} MB/s, db2 (8.4 MB/s limit) at {} MB/s",
        per_db[0],
        per_db[1]
    );
    // The total is every byte over the time until the last database was read.
    let seconds = u64_at(&v, "/measured_ms") as f64 / 1e3;
    let bytes = u64_at(&v, "/totals/read/bytes") as f64;
    assert!(
        close(total, bytes / seconds / 1e6, 0.01),
        "total {total} MB/s for {bytes} B in {seconds} s"
    );
    assert!(total <= per_db.iter().sum::<f64>() * 1.01);
    eprintln!("backup MB/s per database {per_db:?}, total {total}");
}
