//! The Exchange mailbox database model (Jetstress-class): from a mailbox profile (mailboxes,
//! mailbox size, IOPS per mailbox or messages per day, Exchange version) to the databases, log
//! streams and workers of a [`crate::job::Job`], and the verdict rules that judge a run of it.
//!
//! Per database the job has:
//! - transactional I/O: `threads` workers, each one outstanding I/O at a time, issuing random
//!   reads and writes of the version's page size open loop at the database's share of the
//!   target rate (latency is response time);
//! - one log writer: sequential, variable-size, O_DSYNC writes into a stream of 1 MiB log
//!   files (never crossing a file boundary), at the version's ratio to database I/O;
//! - background database maintenance (when on): 256 KiB sequential reads paced at the
//!   version's rate.
//!
//! The room's parts: its configuration (`config`), its jobs (`jobs`), its rules (`judge`), the
//! validation that runs them (`validation`) and its section of the results file (`section`).
//! Every constant is documented with its source in docs/profiles.md.

use serde::{Deserialize, Serialize};

mod backup_recovery;
mod config;
mod jobs;
mod judge;
pub mod section;
pub(crate) mod validation;
#[cfg(test)]
mod validation_tests;
pub mod workload;

/// `[exchange]` job files.
pub(crate) const ROOM: crate::workloads::Room = crate::workloads::Room {
    section: "exchange",
    what: "an Exchange job (its I/O comes from the mailbox profile)",
    hint: "storlab exchange FILE --mailboxes ...",
    flags: crate::workloads::OVERRIDE_FLAGS,
    load: workload::load,
};

pub use config::{
    ExchangeConfig, ExchangeFile, ExchangeSpec, ThreadsSpec, is_exchange_job, quick, resolve,
};
pub use jobs::{Load, backup_job, class_name, recovery_job, transactional_job};
pub use judge::{
    StorageLimits, achieved_iops_watch, database_figures, database_figures_at, min_passing_iops,
    rules, storage_rules,
};

/// Exchange versions storlab models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Version {
    /// Exchange Server 2007.
    #[serde(rename = "2007")]
    V2007,
    /// Exchange Server 2010.
    #[serde(rename = "2010")]
    V2010,
    /// Exchange Server 2013.
    #[serde(rename = "2013")]
    V2013,
    /// Exchange Server 2016.
    #[serde(rename = "2016")]
    V2016,
    /// Exchange Server 2019.
    #[serde(rename = "2019")]
    V2019,
}

/// A version's I/O constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VersionModel {
    /// ESE database page size, bytes.
    pub page_bytes: u64,
    /// Share of transactional database I/O that is reads, percent.
    pub read_pct: f64,
    /// Log write IOPS as a fraction of ...
    pub log_ratio: LogRatio,
    /// Background maintenance read rate per database, bytes/s (0: not modelled).
    pub maintenance_bytes_per_s: u64,
    /// Default IOPS per mailbox when neither IOPS nor messages per day is given.
    pub default_iops_per_mailbox: f64,
    /// IOPS per mailbox for messages sent+received per day: (messages, IOPS) points.
    pub messages_table: &'static [(u32, f64)],
    /// Log write sizes: (bytes, weight).
    pub log_sizes: &'static [(u64, u32)],
}

/// What log write IOPS are proportional to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LogRatio {
    /// Log IOPS = this fraction of all transactional database IOPS.
    OfDatabaseIops(f64),
    /// Log IOPS = this fraction of database write IOPS.
    OfDatabaseWrites(f64),
}

/// Bytes of each background maintenance read (ESE's 256 KiB sequential checksum reads).
pub const MAINTENANCE_READ_BYTES: u64 = 256 << 10;
/// Size of one transaction log file (Exchange 2007 and later).
pub const LOG_FILE_BYTES: u64 = 1 << 20;
/// Log files in each log stream (the log target is this many 1 MiB files end to end).
pub const LOG_FILES_PER_STREAM: u64 = 64;
/// Outstanding transactional I/Os per thread: a Jetstress thread behaves as one synchronous
/// issuer, so thread count is the concurrency.
pub const THREAD_QUEUE_DEPTH: u32 = 1;
/// Default headroom over the profile's IOPS (Jetstress and Microsoft's calculator use 20%).
pub const DEFAULT_HEADROOM_PCT: f64 = 20.0;
/// Default average database read latency limit (Jetstress: 20 ms).
pub const DB_READ_AVG_LIMIT_MS: f64 = 20.0;
/// Default average log write latency limit (Jetstress: 10 ms).
pub const LOG_WRITE_AVG_LIMIT_MS: f64 = 10.0;
/// Default maximum database read latency for the performance test.
pub const MAX_LATENCY_PERFORMANCE_MS: f64 = 100.0;
/// Default maximum database read latency for the stress test.
pub const MAX_LATENCY_STRESS_MS: f64 = 200.0;
/// Achieved transactional IOPS may fall this short of the target (the edges of the measured
/// window) and still pass.
pub const ACHIEVED_IOPS_TOLERANCE: f64 = 0.01;
/// Backup test: read size.
pub const BACKUP_READ_BYTES: u64 = 64 << 10;
/// Backup test: reads in flight per database.
pub const BACKUP_QUEUE_DEPTH: u32 = 4;
/// Recovery test: database page reads caused by replaying one log file (storlab's estimate).
pub const RECOVERY_READS_PER_LOG: u64 = 32;
/// Recovery test: database page writes caused by replaying one log file (storlab's estimate).
pub const RECOVERY_WRITES_PER_LOG: u64 = 16;
/// Recovery test: default log files replayed per database.
pub const RECOVERY_LOG_FILES: u32 = 32;

/// Exchange 2007 IOPS per mailbox by messages per day: light 25 (5 sent/20 received) 0.08,
/// average 50 → 0.16, heavy 100 → 0.32, very heavy 150 → 0.48 (Microsoft, "Mailbox Server
/// Storage Design", Exchange 2007 TechNet library).
const TABLE_2007: &[(u32, f64)] = &[(25, 0.08), (50, 0.16), (100, 0.32), (150, 0.48)];
/// Exchange 2010 IOPS per mailbox (stand-alone column) by messages per day (Microsoft,
/// "Understanding Database and Log Performance Factors", Exchange 2010; 50 → 0.06, 150 → 0.18,
/// 300 → 0.36 as quoted in Dell BP1026).
const TABLE_2010: &[(u32, f64)] = &[
    (50, 0.06),
    (100, 0.12),
    (150, 0.18),
    (200, 0.24),
    (250, 0.30),
    (300, 0.36),
    (350, 0.42),
    (400, 0.48),
    (450, 0.54),
    (500, 0.60),
];
/// Exchange 2013/2016/2019 IOPS per mailbox by messages per day (Microsoft, "Sizing Exchange
/// 2013 Deployments" and the Exchange Server Role Requirements Calculator).
const TABLE_2013: &[(u32, f64)] = &[
    (50, 0.034),
    (100, 0.067),
    (150, 0.101),
    (200, 0.134),
    (250, 0.168),
    (300, 0.201),
    (350, 0.235),
    (400, 0.268),
    (450, 0.302),
    (500, 0.335),
];
/// Exchange 2007 log writes: small, averaging 6–8 KiB (mean of this mix: 7.8 KiB).
const LOG_SIZES_2007: &[(u64, u32)] = &[(4096, 55), (8192, 30), (16384, 10), (32768, 5)];
/// Exchange 2010 and later log writes: mostly under 32 KiB (mean of this mix: 9.8 KiB).
const LOG_SIZES_2010: &[(u64, u32)] = &[(4096, 45), (8192, 30), (16384, 15), (32768, 10)];

impl Version {
    /// Parses `2007`, `2010`, `2013`, `2016` or `2019`.
    pub fn parse(s: &str) -> Result<Version, String> {
        match s.trim() {
            "2007" => Ok(Version::V2007),
            "2010" => Ok(Version::V2010),
            "2013" => Ok(Version::V2013),
            "2016" => Ok(Version::V2016),
            "2019" => Ok(Version::V2019),
            o => Err(format!(
                "unknown Exchange version `{o}`; use 2007, 2010, 2013, 2016 or 2019"
            )),
        }
    }

    /// The version's year as text.
    pub fn name(self) -> &'static str {
        match self {
            Version::V2007 => "2007",
            Version::V2010 => "2010",
            Version::V2013 => "2013",
            Version::V2016 => "2016",
            Version::V2019 => "2019",
        }
    }

    /// The version's constants.
    pub fn model(self) -> VersionModel {
        match self {
            // 8 KiB pages; reads:writes about 1:1; database:log IOPS 4:1 (QLogic study,
            // seeds/000: "a 4:1 database to log ratio similar to exchange 2007").
            Version::V2007 => VersionModel {
                page_bytes: 8 << 10,
                read_pct: 50.0,
                log_ratio: LogRatio::OfDatabaseIops(0.25),
                maintenance_bytes_per_s: 0,
                default_iops_per_mailbox: 0.32,
                messages_table: TABLE_2007,
                log_sizes: LOG_SIZES_2007,
            },
            // 32 KiB pages; reads:writes about 3:2; log writes about half the database
            // writes; background maintenance 5 MB/s per database; ~0.10 IOPS per typical
            // mailbox (NetApp TR-3867, seeds/002).
            Version::V2010 => VersionModel {
                page_bytes: 32 << 10,
                read_pct: 60.0,
                log_ratio: LogRatio::OfDatabaseWrites(0.5),
                maintenance_bytes_per_s: 5_000_000,
                default_iops_per_mailbox: 0.10,
                messages_table: TABLE_2010,
                log_sizes: LOG_SIZES_2010,
            },
            // As 2010, with background maintenance throttled to 1 MB/s per database.
            Version::V2013 | Version::V2016 | Version::V2019 => VersionModel {
                page_bytes: 32 << 10,
                read_pct: 60.0,
                log_ratio: LogRatio::OfDatabaseWrites(0.5),
                maintenance_bytes_per_s: 1_000_000,
                default_iops_per_mailbox: 0.067,
                messages_table: TABLE_2013,
                log_sizes: LOG_SIZES_2010,
            },
        }
    }
}

/// IOPS per mailbox for `messages` per day from a version's table: exact points, linear
/// interpolation between them, proportional beyond the ends.
pub fn iops_for_messages(table: &[(u32, f64)], messages: u32) -> f64 {
    let m = messages as f64;
    if let Some(&(_, v)) = table.iter().find(|(n, _)| *n == messages) {
        return v;
    }
    let first = table[0];
    let last = table[table.len() - 1];
    if messages < first.0 {
        return first.1 * m / first.0 as f64;
    }
    if messages > last.0 {
        return last.1 * m / last.0 as f64;
    }
    let i = table
        .iter()
        .position(|(n, _)| *n > messages)
        .unwrap_or(table.len() - 1);
    let (a, b) = (table[i - 1], table[i]);
    a.1 + (b.1 - a.1) * (m - a.0 as f64) / (b.0 - a.0) as f64
}

/// The Jetstress test types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestType {
    /// Transactional load at the target rate, judged on averages and a 100 ms maximum.
    Performance,
    /// The same load, judged with a 200 ms maximum (meant for long runs).
    Stress,
    /// Sequential reads of every database as fast as possible.
    Backup,
    /// Soft recovery: replaying log files and the database I/O they cause.
    Recovery,
}

impl TestType {
    /// Every test type.
    const ALL: [TestType; 4] = [
        TestType::Performance,
        TestType::Stress,
        TestType::Backup,
        TestType::Recovery,
    ];

    /// The name users write and results carry.
    pub fn name(self) -> &'static str {
        match self {
            TestType::Performance => "performance",
            TestType::Stress => "stress",
            TestType::Backup => "backup",
            TestType::Recovery => "recovery",
        }
    }

    /// Parses `performance`, `stress`, `backup` or `recovery`.
    pub fn parse(s: &str) -> Result<TestType, String> {
        TestType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                format!("unknown test `{s}`; use performance, stress, backup or recovery")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::exchange::section::DatabaseFigures;

    fn cfg() -> ExchangeConfig {
        resolve(&ExchangeSpec::default(), "test").unwrap()
    }

    #[test]
    fn messages_tables() {
        let m = Version::V2010.model();
        assert_eq!(iops_for_messages(m.messages_table, 150), 0.18);
        assert!((iops_for_messages(m.messages_table, 125) - 0.15).abs() < 1e-9);
        assert!((iops_for_messages(m.messages_table, 1000) - 1.2).abs() < 1e-9);
        assert!((iops_for_messages(m.messages_table, 25) - 0.03).abs() < 1e-9);
        assert_eq!(
            iops_for_messages(Version::V2007.model().messages_table, 100),
            0.32
        );
        assert_eq!(
            iops_for_messages(Version::V2016.model().messages_table, 150),
            0.101
        );
    }

    #[test]
    fn target_iops_and_sizes() {
        let c = cfg();
        assert!((c.target_iops(1000) - 120.0).abs() < 1e-9);
        assert_eq!(c.database_bytes() % (32 << 10), 0);
        let total = c.database_bytes() * 2;
        assert!((total as f64 - 2.0 * 1024f64.powi(3)).abs() / total as f64 <= 0.01);
    }

    #[test]
    fn job_has_the_model() {
        let c = cfg();
        let job = transactional_job(&c, 3, Load::Rate(120.0), c.database_bytes(), 10_000, 0);
        assert_eq!(job.targets.len(), 4);
        assert!(job.targets[1].sync, "log stream is O_DSYNC");
        let threads: Vec<_> = job
            .workers
            .iter()
            .filter(|w| w.name.starts_with("db1-thread"))
            .collect();
        assert_eq!(threads.len(), 3);
        assert!((threads[0].rate.unwrap().iops - 20.0).abs() < 1e-9);
        assert_eq!(threads[0].access[0].block_size_bytes, 32 << 10);
        let log = job.workers.iter().find(|w| w.name == "db1-log").unwrap();
        // 60 IOPS per database, 40% writes = 24 writes/s, half as many log writes.
        assert!((log.rate.unwrap().iops - 12.0).abs() < 1e-9);
        assert_eq!(log.access[0].roll_every_bytes, LOG_FILE_BYTES);
        let m = job
            .workers
            .iter()
            .find(|w| w.name == "db1-maintenance")
            .unwrap();
        assert!((m.rate.unwrap().iops - 5e6 / 262_144.0).abs() < 1e-9);
        assert_eq!(job.classes.len(), 8);
    }

    #[test]
    fn bad_inputs() {
        let spec = ExchangeSpec {
            mailboxes: Some(0),
            ..Default::default()
        };
        assert!(
            resolve(&spec, "x")
                .unwrap_err()
                .message
                .contains("at least 1")
        );
        let spec = ExchangeSpec {
            version: Some(ThreadsSpec::Word("2003".into())),
            ..Default::default()
        };
        assert!(resolve(&spec, "x").is_err());
        let spec = ExchangeSpec {
            version: Some(ThreadsSpec::Count(2007)),
            maintenance: Some(true),
            ..Default::default()
        };
        assert!(resolve(&spec, "x").unwrap_err().message.contains("2010"));
        let spec = ExchangeSpec {
            iops_per_mailbox: Some(0.1),
            messages_per_day: Some(100),
            ..Default::default()
        };
        assert!(resolve(&spec, "x").is_err());
    }

    #[test]
    fn rules_judge_each_limit() {
        let c = cfg();
        let mut d = DatabaseFigures {
            name: "db1".into(),
            ..Default::default()
        };
        d.db_read_latency_ns.mean = 5e6;
        d.log_write_latency_ns.mean = 2e6;
        d.db_read_latency_ns.max = 50_000_000;
        let all = |d: &DatabaseFigures, errors, achieved| {
            rules(&c, std::slice::from_ref(d), errors, Some(100.0), achieved)
        };
        assert!(all(&d, 0, 100.0).iter().all(|r| r.pass));
        let mut slow = d.clone();
        slow.db_read_latency_ns.mean = 25e6;
        let r = all(&slow, 0, 100.0);
        assert_eq!(r.iter().filter(|r| !r.pass).count(), 1);
        assert!(!r[0].pass);
        let mut slow_log = d.clone();
        slow_log.log_write_latency_ns.mean = 11e6;
        assert!(!all(&slow_log, 0, 100.0)[1].pass);
        let mut spike = d.clone();
        spike.db_read_latency_ns.max = 150_000_000;
        assert!(!all(&spike, 0, 100.0)[2].pass);
        assert!(!all(&d, 1, 100.0)[3].pass);
        assert!(!all(&d, 0, 95.0)[4].pass);
        assert!(all(&d, 0, 99.5)[4].pass);
    }

    #[test]
    fn the_live_watch_is_the_achieved_iops_rule() {
        let mut c = cfg();
        let w = achieved_iops_watch(&c).expect("a performance test has the rule");
        let target = c.target_iops(c.mailboxes);
        assert_eq!(w.target_iops, target);
        assert_eq!(
            w.classes,
            ["db1/read", "db1/write", "db2/read", "db2/write"]
        );
        let rule = |achieved| {
            let r = rules(&c, &[], 0, Some(target), achieved);
            r.into_iter().find(|r| r.rule == w.rule).expect("the rule")
        };
        // The watch's threshold is the rule's: the rule passes at it and not just under it.
        assert_eq!(rule(w.pass_at_iops).threshold, w.pass_at_iops);
        assert!(rule(w.pass_at_iops).pass);
        assert!(!rule(w.pass_at_iops - 1e-6).pass);
        assert!(w.pass_at_iops < target && w.pass_at_iops > target * 0.95);
        // No rule at one target: no watch.
        c.find_max_mailboxes = true;
        assert_eq!(achieved_iops_watch(&c), None);
        c.find_max_mailboxes = false;
        c.test = TestType::Backup;
        assert_eq!(achieved_iops_watch(&c), None);
    }
}
