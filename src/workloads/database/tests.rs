//! The database model: profiles into jobs, the rules, and the inputs refused.

use super::jobs::{self, LOG_WORKER, Load};
use super::judge::{self, LOG_RULE};
use super::section::FileFigures;
use super::*;
use crate::units::{Dur, Size};

fn spec(engine: &str) -> DatabaseSpec {
    DatabaseSpec {
        engine: Some(engine.into()),
        data_size: Some(Size(64 << 20)),
        tps: Some(100.0),
        ..Default::default()
    }
}

fn cfg(engine: &str) -> DatabaseConfig {
    resolve(&spec(engine), "test").unwrap()
}

#[test]
fn a_profile_becomes_data_io_at_the_rate_a_log_writer_and_checkpoints() {
    let c = cfg("sqlserver");
    let job = jobs::job(&c, Load::Tps(100.0), 10_000, 1_000);
    assert_eq!(job.targets.len(), 2);
    assert_eq!(job.targets[0].size_bytes, Some(64 << 20));
    let data: Vec<_> = job
        .workers
        .iter()
        .filter(|w| w.name.starts_with("data1-worker"))
        .collect();
    assert_eq!(data.len(), quick::THREADS as usize);
    // 100 transactions/s × 4 data-file I/Os, over 4 workers.
    let total: f64 = data.iter().map(|w| w.rate.unwrap().iops).sum();
    assert!((total - 400.0).abs() < 1e-9, "{total}");
    let access = &data[0].access;
    assert_eq!(access[0].block_size_bytes, 8 << 10);
    assert_eq!((access[0].weight, access[1].weight), (70, 30));
    assert_eq!((access[0].read_pct, access[1].read_pct), (100.0, 0.0));
    let log = job.workers.iter().find(|w| w.name == LOG_WORKER).unwrap();
    assert_eq!(log.queue_depth, 1);
    assert_eq!(log.targets, vec![1]);
    assert!(
        log.access[0].sync,
        "SQL Server's log writes are write-through"
    );
    assert_eq!(log.access[0].block_size_bytes, 60 << 10);
    let cp = job
        .workers
        .iter()
        .find(|w| w.name == "data1-checkpoint")
        .unwrap();
    assert_eq!(cp.access[0].read_pct, 0.0);
    // Every 10 s, half a page per transaction: 500 pages.
    assert_eq!(jobs::checkpoint_pages(&c, 100.0), 500);
    assert!(!job.workers.iter().any(|w| w.name.starts_with("scan")));
}

#[test]
fn each_engine_has_its_page_size_log_and_durability() {
    let mysql = cfg("mysql");
    assert_eq!(mysql.page_bytes, 16 << 10);
    let job = jobs::job(&mysql, Load::Tps(10.0), 10_000, 0);
    let log = job.workers.iter().find(|w| w.name == LOG_WORKER).unwrap();
    assert_eq!(log.access[0].fsync_every, 1, "InnoDB flushes its redo");
    assert!(!log.access[0].sync);
    let pg = cfg("postgresql");
    assert_eq!((pg.page_bytes, pg.log_write_bytes), (8 << 10, 8 << 10));
    assert_eq!(pg.engine.model().durability, Durability::Fdatasync);
    let oracle = cfg("oracle");
    assert_eq!(oracle.engine.model().limits.data_read_ms, 10.0);
    assert_eq!(jobs::group_largest(&oracle), 64 << 10);
    // Scans: the engine's read size, each on a data file in turn.
    let scans = resolve(
        &DatabaseSpec {
            scans: Some(3),
            data_files: Some(2),
            ..spec("oracle")
        },
        "test",
    )
    .unwrap();
    let job = jobs::job(&scans, Load::Tps(10.0), 10_000, 0);
    let s: Vec<_> = job
        .workers
        .iter()
        .filter(|w| w.name.starts_with("scan"))
        .collect();
    assert_eq!(s.len(), 3);
    assert_eq!(s[0].access[0].block_size_bytes, 1 << 20);
    assert_eq!(
        (s[0].targets[0], s[1].targets[0], s[2].targets[0]),
        (0, 1, 0)
    );
}

#[test]
fn an_iops_target_sets_the_rate_through_the_model() {
    let c = resolve(
        &DatabaseSpec {
            tps: None,
            iops: Some(2000.0),
            ..spec("postgresql")
        },
        "test",
    )
    .unwrap();
    assert_eq!(c.tps, 500.0);
    assert_eq!(c.data_iops(c.tps), 2000.0);
    assert!(c.rate_source.contains("2000"), "{}", c.rate_source);
}

fn files() -> Vec<FileFigures> {
    let mut data = FileFigures {
        name: "data1".into(),
        role: "data".into(),
        ..Default::default()
    };
    data.read_latency_ns.mean = 4e6;
    data.data_write_mean_ns = 6e6;
    (data.reads_per_s, data.writes_per_s) = (280.0, 120.0);
    let log = FileFigures {
        name: "log".into(),
        role: "log".into(),
        log_durable_mean_ns: 2e6,
        writes_per_s: 50.0,
        ..Default::default()
    };
    vec![data, log]
}

#[test]
fn the_rules_judge_each_limit() {
    let c = cfg("sqlserver");
    let seen = judge::Evidence {
        seconds: 60.0,
        bursts: Some(6),
    };
    let judge = |f: &[FileFigures], errors, iops, tps| {
        judge::rules(&c, f, errors, 100.0, (iops, tps), seen)
    };
    let failed = |rules: Vec<crate::results::verdict::Rule>| {
        rules
            .into_iter()
            .filter(|r| !r.pass)
            .map(|r| (r.rule, r.measured))
            .collect::<Vec<_>>()
    };
    assert_eq!(failed(judge(&files(), 0, 400.0, 100.0)), vec![]);
    let mut slow_read = files();
    slow_read[0].read_latency_ns.mean = 21e6;
    assert_eq!(
        failed(judge(&slow_read, 0, 400.0, 100.0)),
        vec![("data1 average data-file read latency".to_string(), 21.0)]
    );
    let mut slow_write = files();
    slow_write[0].data_write_mean_ns = 25e6;
    assert_eq!(
        failed(judge(&slow_write, 0, 400.0, 100.0)),
        vec![("data1 average data-file write latency".to_string(), 25.0)]
    );
    // SQL Server's log limit is 5 ms; PostgreSQL's (storlab's choice) 10 ms.
    let mut slow_log = files();
    slow_log[1].log_durable_mean_ns = 6e6;
    assert_eq!(
        failed(judge(&slow_log, 0, 400.0, 100.0)),
        vec![(LOG_RULE.to_string(), 6.0)]
    );
    let pg = cfg("postgresql");
    assert!(
        judge::rules(&pg, &slow_log, 0, 100.0, (400.0, 100.0), seen)
            .iter()
            .all(|r| r.pass)
    );
    // No checkpoint finished (a run shorter than its interval): the data-file write rule,
    // which judges the checkpoint's writes too, is not measured, and the verdict not PASS.
    let none = judge::Evidence {
        bursts: Some(0),
        ..seen
    };
    let rules = judge::rules(&c, &files(), 0, 100.0, (400.0, 100.0), none);
    let unmeasured: Vec<&str> = (rules.iter().filter(|r| !r.measured()))
        .map(|r| r.rule.as_str())
        .collect();
    assert_eq!(unmeasured, ["data1 average data-file write latency"]);
    assert_eq!(
        crate::results::verdict::Verdict::of(rules).result,
        "NOT MEASURED"
    );
    // Nor is a rule on a few I/Os: a second of a slow profile.
    let brief = judge::Evidence {
        seconds: 0.05,
        ..seen
    };
    let rules = judge::rules(&c, &files(), 0, 100.0, (400.0, 100.0), brief);
    assert!(
        rules
            .iter()
            .filter(|r| r.unit == "ms")
            .all(|r| !r.measured())
    );
    assert_eq!(
        failed(judge(&files(), 2, 400.0, 100.0)),
        vec![(crate::results::verdict::IO_ERRORS.to_string(), 2.0)]
    );
    // 95% of the target passes, less does not.
    assert_eq!(failed(judge(&files(), 0, 380.0, 95.0)), vec![]);
    assert_eq!(
        failed(judge(&files(), 0, 379.0, 94.0)),
        vec![
            (judge::ACHIEVED_IOPS_RULE.to_string(), 379.0),
            (judge::ACHIEVED_TPS_RULE.to_string(), 94.0)
        ]
    );
}

#[test]
fn given_limits_replace_the_engines() {
    let c = resolve(
        &DatabaseSpec {
            log_write_latency: Some(Dur(std::time::Duration::from_millis(1))),
            ..spec("oracle")
        },
        "test",
    )
    .unwrap();
    assert_eq!(c.limits.log_write_ms, 1.0);
    assert_eq!(c.limits.data_read_ms, 10.0);
}

#[test]
fn bad_inputs_are_refused_naming_their_key() {
    let refused = |s: DatabaseSpec| resolve(&s, "job.toml").unwrap_err();
    let cases: Vec<(DatabaseSpec, &str, &str)> = vec![
        (spec("db2"), "database.engine", "oracle, sqlserver"),
        (
            DatabaseSpec {
                iops: Some(100.0),
                ..spec("oracle")
            },
            "database.tps",
            "not both",
        ),
        (
            DatabaseSpec {
                tps: Some(-1.0),
                ..spec("oracle")
            },
            "database.tps",
            "-1",
        ),
        (
            DatabaseSpec {
                tps: Some(f64::NAN),
                ..spec("oracle")
            },
            "database.tps",
            "NaN",
        ),
        (
            DatabaseSpec {
                page_size: Some(Size(3000)),
                ..spec("oracle")
            },
            "database.page_size",
            "power of two",
        ),
        (
            DatabaseSpec {
                data_size: Some(Size(64 << 10)),
                ..spec("oracle")
            },
            "database.data_size",
            "16 pages",
        ),
        (
            DatabaseSpec {
                log_write_size: Some(Size(1 << 20)),
                ..spec("sqlserver")
            },
            "database.log_write_size",
            "61440",
        ),
        (
            DatabaseSpec {
                threads: Some(0),
                ..spec("oracle")
            },
            "database.threads",
            "1 to 256",
        ),
        (
            DatabaseSpec {
                checkpoint_interval: Some(Dur(std::time::Duration::from_millis(50))),
                ..spec("oracle")
            },
            "database.checkpoint_interval",
            "100 ms",
        ),
        (
            DatabaseSpec {
                data_files: Some(0),
                ..spec("oracle")
            },
            "database.data_files",
            "1 to 64",
        ),
        (
            DatabaseSpec {
                data_size: Some(Size(u64::MAX)),
                ..spec("oracle")
            },
            "database.data_size",
            "more than any storage",
        ),
        (
            DatabaseSpec {
                data_read_latency: Some(Dur(std::time::Duration::ZERO)),
                ..spec("oracle")
            },
            "database.data_read_latency",
            "above 0",
        ),
    ];
    for (s, key, says) in cases {
        let e = refused(s);
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains(says), "{key}: {}", e.message);
        assert_eq!(e.location, "job.toml");
    }
}

#[test]
fn the_job_file_section_is_a_room() {
    let text = "[database]\nengine = \"postgresql\"\ntps = 50\n";
    let room = crate::workloads::room_of(text).expect("a room");
    assert_eq!(room.section, "database");
    let path = std::path::Path::new("db.toml");
    let w = (room.load)(
        &crate::workloads::JobText { path, text },
        &crate::workloads::Overrides::default(),
    )
    .unwrap();
    assert_eq!(w.kind(), "database");
    let job = &w.jobs()[0];
    assert!(job.workers.iter().any(|w| w.name == LOG_WORKER));
    // `--engine` of `storlab run` is the I/O engine, blamed as the flag.
    let o = crate::workloads::Overrides {
        engine: Some("nonsense".into()),
        ..Default::default()
    };
    let e = (room.load)(&crate::workloads::JobText { path, text }, &o)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("--engine"), "{e}");
}
