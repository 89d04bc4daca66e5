//! A job file with two targets, two worker groups and two classes (a database's random 8 KiB
//! 70/30 I/O and its log's sequential 64 KiB durable writes), run for real.

use crate::harness::{
    RunArgs, array_at, at, check_dir_summary, scratch, share_tolerance, str_at, u64_at, write_job,
};

#[test]
fn job_file_with_two_targets_workers_and_classes() {
    let dir = scratch();
    let data = dir.path().join("data.dat");
    let log = dir.path().join("log.dat");
    let job = write_job(
        dir.path(),
        "db.toml",
        &format!(
            r#"description = "database: random 8k data I/O and a sequential durable log"
duration = "2s"
interval = "1s"

[[target]]
name = "data"
path = "{data}"
size = "32MiB"

[[target]]
name = "log"
path = "{log}"
size = "16MiB"

[[worker]]
name = "db"
count = 2
targets = ["data"]
queue_depth = 4

[[worker.access]]
class = "db"
block_size = "8k"
read = "70%"
random = "100%"

[[worker]]
name = "logger"
targets = ["log"]
queue_depth = 1

[[worker.access]]
class = "log"
block_size = "64k"
read = "0%"
random = "0%"
sync = true
"#,
            data = data.display(),
            log = log.display()
        ),
    );
    let v = RunArgs::job(&job)
        .results(&dir.path().join("db.json"))
        .run_ok(dir.path());
    assert_eq!(at(&v, "/interrupted"), &serde_json::Value::Bool(false));

    // Both classes, each with its own block size and direction.
    let classes = at(&v, "/classes").as_object().unwrap();
    assert!(
        classes.contains_key("db") && classes.contains_key("log"),
        "classes: {:?}",
        classes.keys().collect::<Vec<_>>()
    );
    for p in [
        "/classes/db/read",
        "/classes/db/write",
        "/classes/log/write",
    ] {
        check_dir_summary(&v, p);
        let ops = u64_at(&v, &format!("{p}/ops"));
        assert!(ops > 0, "{p}: no ops");
    }
    let db_reads = u64_at(&v, "/classes/db/read/ops");
    let db_writes = u64_at(&v, "/classes/db/write/ops");
    // Each db I/O is a read with probability 70%: within 8 points, or more when the machine
    // made too few I/Os for that (see `share_tolerance`).
    let share = db_reads as f64 / (db_reads + db_writes) as f64;
    let within = share_tolerance(0.7, db_reads + db_writes, 0.08);
    assert!(
        (share - 0.7).abs() <= within,
        "db read share {share} of {} I/Os, expected 0.7 ± {within}",
        db_reads + db_writes
    );
    assert_eq!(u64_at(&v, "/classes/db/read/bytes"), db_reads * 8192);
    assert_eq!(u64_at(&v, "/classes/db/write/bytes"), db_writes * 8192);
    let log_writes = u64_at(&v, "/classes/log/write/ops");
    assert_eq!(u64_at(&v, "/classes/log/read/ops"), 0);
    assert_eq!(u64_at(&v, "/classes/log/write/bytes"), log_writes * 65536);

    // Durability is recorded per class.
    let log_durability = str_at(&v, "/classes/log/write_durability");
    assert!(
        log_durability.contains("dsync"),
        "log writes are RWF_DSYNC, results say {log_durability:?}"
    );
    assert_eq!(str_at(&v, "/classes/db/write_durability"), "none");

    // Workers: db#0, db#1 and logger, each on its own target.
    let names: Vec<&str> = array_at(&v, "/workers")
        .iter()
        .map(|w| str_at(w, "/name"))
        .collect();
    assert_eq!(names, ["db#0", "db#1", "logger"]);
    assert_eq!(
        at(&v, "/workers/2/classes")
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["log"]
    );

    // Targets: the data file gets the db I/O, the log file only the log's writes.
    assert_eq!(str_at(&v, "/targets/0/name"), "data");
    assert_eq!(str_at(&v, "/targets/1/name"), "log");
    assert_eq!(u64_at(&v, "/targets/0/ops/read"), db_reads);
    assert_eq!(u64_at(&v, "/targets/0/ops/write"), db_writes);
    assert_eq!(u64_at(&v, "/targets/1/ops/read"), 0);
    assert_eq!(u64_at(&v, "/targets/1/ops/write"), log_writes);
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 32 << 20);
    assert_eq!(std::fs::metadata(&log).unwrap().len(), 16 << 20);
    assert_eq!(
        u64_at(&v, "/totals/write/ops"),
        db_writes + log_writes,
        "totals are the sum of the classes"
    );
}
