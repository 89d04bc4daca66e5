//! The Exchange mailbox database model (Jetstress-class): from a mailbox profile (mailboxes,
//! mailbox size, IOPS per mailbox or messages per day, Exchange version) to the databases, log
//! streams and workers of a [`Job`], and the verdict rules that judge a run of it.
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
//! Every constant is documented with its source in docs/profiles.md.

use crate::job::IoLimit;
use crate::job::{
    Access, Arrivals, Distribution, EngineKind, Job, JobError, Rate, Target, TargetChoice, Worker,
};
use crate::results::ClassResult;
use crate::results::exchange::{DatabaseFigures, LatencyBrief};
use crate::results::verdict::{Comparison, Rule};
use crate::units::{Dur, Percent, Size, format_size};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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
    /// Parses `performance`, `stress`, `backup` or `recovery`.
    pub fn parse(s: &str) -> Result<TestType, String> {
        match s {
            "performance" => Ok(TestType::Performance),
            "stress" => Ok(TestType::Stress),
            "backup" => Ok(TestType::Backup),
            "recovery" => Ok(TestType::Recovery),
            o => Err(format!(
                "unknown test `{o}`; use performance, stress, backup or recovery"
            )),
        }
    }
}

/// A number or a word: `threads = 4` or `threads = "auto"`, `version = 2010` or `"2010"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ThreadsSpec {
    /// A fixed count per database.
    Count(u32),
    /// `auto`.
    Word(String),
}

/// The `[exchange]` section of a job file, as written. Flags of `storlab exchange` override it.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExchangeSpec {
    /// Number of mailboxes.
    pub mailboxes: Option<u64>,
    /// Mailbox size, e.g. "2GiB".
    pub mailbox_size: Option<Size>,
    /// Transactional IOPS per mailbox (excludes log I/O).
    pub iops_per_mailbox: Option<f64>,
    /// Messages sent and received per mailbox per day (converted with the version's table).
    pub messages_per_day: Option<u32>,
    /// 2007, 2010, 2013, 2016 or 2019 (a number or a string).
    pub version: Option<ThreadsSpec>,
    /// Number of databases.
    pub databases: Option<u32>,
    /// Directories (or LUN mount points) for databases; databases are spread over them.
    pub db_paths: Option<Vec<PathBuf>>,
    /// Directories for log streams; spread like databases.
    pub log_paths: Option<Vec<PathBuf>>,
    /// Threads per database, or "auto".
    pub threads: Option<ThreadsSpec>,
    /// Headroom over the profile's IOPS, e.g. "20%".
    pub headroom: Option<Percent>,
    /// Background database maintenance.
    pub maintenance: Option<bool>,
    /// performance, stress, backup or recovery.
    pub test: Option<String>,
    /// Measured duration.
    pub duration: Option<Dur>,
    /// Ramp before measurement.
    pub ramp: Option<Dur>,
    /// Build databases at this fraction of their real size, e.g. "2%".
    pub capacity: Option<Percent>,
    /// Throughput mode: databases fill this share of the free space on the database paths.
    pub db_capacity: Option<Percent>,
    /// Throughput mode: run at this share of the storage's maximum (closed-loop) throughput.
    pub throughput: Option<Percent>,
    /// Search for the largest mailbox count that passes.
    pub find_max_mailboxes: Option<bool>,
    /// Average database read latency limit.
    pub db_read_latency: Option<Dur>,
    /// Average log write latency limit.
    pub log_write_latency: Option<Dur>,
    /// Maximum database read latency limit.
    pub max_latency: Option<Dur>,
    /// Recovery test: log files replayed per database.
    pub log_files: Option<u32>,
    /// Database page size override (default: the version's).
    pub page_size: Option<Size>,
    /// Backup test: read size.
    pub backup_block_size: Option<Size>,
    /// Engine (io_uring, psync).
    pub engine: Option<String>,
    /// Seed.
    pub seed: Option<u64>,
    /// Time-series interval.
    pub interval: Option<Dur>,
    /// Allow overwriting existing files that storlab did not create.
    pub destroy_data: Option<bool>,
    /// Verify data: every page and log write carries a header and checksum, checked on every
    /// read and in a final read-back pass.
    pub verify: Option<bool>,
}

/// A job file holding an `[exchange]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExchangeFile {
    /// The section.
    pub exchange: ExchangeSpec,
}

/// Validated Exchange inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExchangeConfig {
    /// Version.
    pub version: Version,
    /// Test type.
    pub test: TestType,
    /// Mailboxes.
    pub mailboxes: u64,
    /// Mailbox size, bytes.
    pub mailbox_size_bytes: u64,
    /// Transactional IOPS per mailbox.
    pub iops_per_mailbox: f64,
    /// Where the IOPS per mailbox came from.
    pub iops_source: String,
    /// Databases.
    pub databases: u32,
    /// Database directories.
    pub db_paths: Vec<PathBuf>,
    /// Log directories.
    pub log_paths: Vec<PathBuf>,
    /// Threads per database; `None`: tune automatically.
    pub threads: Option<u32>,
    /// Headroom, percent.
    pub headroom_pct: f64,
    /// Background maintenance on.
    pub maintenance: bool,
    /// Measured duration, ms.
    pub duration_ms: u64,
    /// Ramp, ms.
    pub ramp_ms: u64,
    /// Interval, ms.
    pub interval_ms: u64,
    /// Fraction of the real database size that is built (1.0: full size).
    pub capacity_fraction: f64,
    /// Throughput mode: (database share of free space %, throughput %).
    pub throughput_mode: Option<(f64, f64)>,
    /// Search for the maximum mailbox count.
    pub find_max_mailboxes: bool,
    /// Average database read latency limit, ms.
    pub db_read_limit_ms: f64,
    /// Average log write latency limit, ms.
    pub log_write_limit_ms: f64,
    /// Maximum database read latency limit, ms.
    pub max_latency_ms: f64,
    /// Recovery: log files per database.
    pub log_files: u32,
    /// Backup: read size, bytes.
    pub backup_block_bytes: u64,
    /// Database page size, bytes.
    pub page_bytes: u64,
    /// Engine.
    pub engine: EngineKind,
    /// Seed.
    pub seed: u64,
    /// Overwrite foreign files.
    pub destroy_data: bool,
    /// Data verification.
    pub verify: bool,
}

/// What `storlab exchange` with no arguments runs: a quick validation on a scratch directory.
pub mod quick {
    /// Mailboxes.
    pub const MAILBOXES: u64 = 1000;
    /// Mailbox size.
    pub const MAILBOX_SIZE: u64 = 2 << 30;
    /// Capacity fraction: 1000 × 2 GiB × 0.1% = 2 GiB of databases.
    pub const CAPACITY_PCT: f64 = 0.1;
    /// Databases.
    pub const DATABASES: u32 = 2;
    /// Threads per database.
    pub const THREADS: u32 = 2;
    /// Duration, ms.
    pub const DURATION_MS: u64 = 60_000;
    /// Ramp, ms.
    pub const RAMP_MS: u64 = 5_000;
    /// Scratch directory.
    pub const DIR: &str = "storlab-scratch/exchange";
}

/// Validates an Exchange spec. `location` names where it came from for errors.
pub fn resolve(spec: &ExchangeSpec, location: &str) -> Result<ExchangeConfig, JobError> {
    let err = |key: &str, message: String| JobError {
        location: location.into(),
        key: format!("exchange.{key}"),
        message,
    };
    let version = match &spec.version {
        Some(ThreadsSpec::Count(n)) => {
            Version::parse(&n.to_string()).map_err(|m| err("version", m))?
        }
        Some(ThreadsSpec::Word(v)) => Version::parse(v).map_err(|m| err("version", m))?,
        None => Version::V2010,
    };
    let model = version.model();
    let test = match &spec.test {
        Some(t) => TestType::parse(t).map_err(|m| err("test", m))?,
        None => TestType::Performance,
    };
    let throughput_mode = match (spec.db_capacity, spec.throughput) {
        (None, None) => None,
        (Some(c), Some(t)) => {
            if c.0 <= 0.0 || t.0 <= 0.0 {
                return Err(err(
                    "throughput",
                    "db_capacity and throughput must both be above 0%".into(),
                ));
            }
            Some((c.0, t.0))
        }
        _ => {
            return Err(err(
                "throughput",
                "throughput mode needs both a database capacity (--db-capacity) and a throughput percentage (--throughput)".into(),
            ));
        }
    };
    let mailboxes = spec.mailboxes.unwrap_or(quick::MAILBOXES);
    if mailboxes == 0 && throughput_mode.is_none() {
        return Err(err(
            "mailboxes",
            "the number of mailboxes must be at least 1".into(),
        ));
    }
    let mailbox_size_bytes = spec
        .mailbox_size
        .map(|s| s.0)
        .unwrap_or(quick::MAILBOX_SIZE);
    if mailbox_size_bytes == 0 {
        return Err(err(
            "mailbox_size",
            "the mailbox size must be more than 0".into(),
        ));
    }
    let (iops_per_mailbox, iops_source) = match (spec.iops_per_mailbox, spec.messages_per_day) {
        (Some(_), Some(_)) => {
            return Err(err(
                "iops_per_mailbox",
                "give either IOPS per mailbox or messages per day, not both".into(),
            ));
        }
        (Some(i), None) => {
            if !(i > 0.0 && i.is_finite() && i <= 100.0) {
                return Err(err(
                    "iops_per_mailbox",
                    format!("{i} is not a usable IOPS per mailbox; use e.g. 0.12"),
                ));
            }
            (i, "given".to_string())
        }
        (None, Some(m)) => {
            if m == 0 || m > 5000 {
                return Err(err(
                    "messages_per_day",
                    format!("{m} messages per day is out of range (1 to 5000)"),
                ));
            }
            let i = iops_for_messages(model.messages_table, m);
            (
                i,
                format!(
                    "{m} messages/day → {i:.3} IOPS (Exchange {} table{})",
                    version.name(),
                    if model.messages_table.iter().any(|(n, _)| *n == m) {
                        ""
                    } else {
                        ", interpolated"
                    }
                ),
            )
        }
        (None, None) => (
            model.default_iops_per_mailbox,
            format!("Exchange {} default", version.name()),
        ),
    };
    let databases = spec.databases.unwrap_or(quick::DATABASES);
    if databases == 0 || databases > 1000 {
        return Err(err(
            "databases",
            format!("{databases} databases: use 1 to 1000"),
        ));
    }
    let db_paths = spec
        .db_paths
        .clone()
        .unwrap_or_else(|| vec![PathBuf::from(quick::DIR)]);
    let log_paths = spec.log_paths.clone().unwrap_or_else(|| db_paths.clone());
    if db_paths.is_empty() || log_paths.is_empty() {
        return Err(err(
            "db_paths",
            "give at least one database path and one log path".into(),
        ));
    }
    let threads = match &spec.threads {
        None => Some(quick::THREADS),
        Some(ThreadsSpec::Count(0)) => {
            return Err(err(
                "threads",
                "threads must be at least 1, or \"auto\"".into(),
            ));
        }
        Some(ThreadsSpec::Count(n)) if *n > 256 => {
            return Err(err(
                "threads",
                format!("{n} threads per database: use 1 to 256 or \"auto\""),
            ));
        }
        Some(ThreadsSpec::Count(n)) => Some(*n),
        Some(ThreadsSpec::Word(w)) if w == "auto" => None,
        Some(ThreadsSpec::Word(w)) => match w.parse::<u32>() {
            Ok(n) if (1..=256).contains(&n) => Some(n),
            _ => {
                return Err(err(
                    "threads",
                    format!("`{w}`: use a number of threads or \"auto\""),
                ));
            }
        },
    };
    let headroom_pct = spec.headroom.map(|p| p.0).unwrap_or(DEFAULT_HEADROOM_PCT);
    let maintenance = spec
        .maintenance
        .unwrap_or(model.maintenance_bytes_per_s > 0);
    if maintenance && model.maintenance_bytes_per_s == 0 {
        return Err(err(
            "maintenance",
            "background database maintenance is modelled for Exchange 2010 and later; use --maintenance off with 2007".into(),
        ));
    }
    let ms = |d: Option<Dur>, default: u64| d.map(|d| d.0.as_millis() as u64).unwrap_or(default);
    let duration_ms = ms(spec.duration, quick::DURATION_MS);
    if duration_ms < 1000 {
        return Err(err("duration", "the duration must be at least 1s".into()));
    }
    let interval_ms = ms(spec.interval, 1000);
    if interval_ms < 10 {
        return Err(err("interval", "the interval must be at least 10ms".into()));
    }
    let capacity_fraction = match spec.capacity {
        Some(p) if p.0 <= 0.0 => {
            return Err(err(
                "capacity",
                "the capacity must be above 0%, e.g. 2%".into(),
            ));
        }
        Some(p) => p.0 / 100.0,
        None if spec.mailboxes.is_none() && spec.mailbox_size.is_none() => {
            quick::CAPACITY_PCT / 100.0
        }
        None => 1.0,
    };
    let limit =
        |d: Option<Dur>, default: f64| d.map(|d| d.0.as_secs_f64() * 1e3).unwrap_or(default);
    let log_files = spec.log_files.unwrap_or(RECOVERY_LOG_FILES);
    if log_files == 0 || log_files as u64 > LOG_FILES_PER_STREAM * 16 {
        return Err(err(
            "log_files",
            format!(
                "log_files is {log_files}; use 1 to {}",
                LOG_FILES_PER_STREAM * 16
            ),
        ));
    }
    let backup_block_bytes = spec
        .backup_block_size
        .map(|s| s.0)
        .unwrap_or(BACKUP_READ_BYTES);
    if backup_block_bytes == 0 || backup_block_bytes > 64 << 20 {
        return Err(err("backup_block_size", "use 4 KiB to 64 MiB".into()));
    }
    let engine = match &spec.engine {
        Some(e) => EngineKind::parse(e).map_err(|m| err("engine", m))?,
        None => EngineKind::IoUring,
    };
    let page_bytes = spec.page_size.map(|s| s.0).unwrap_or(model.page_bytes);
    if !(512..=1 << 20).contains(&page_bytes) || !page_bytes.is_power_of_two() {
        return Err(err(
            "page_size",
            format!("page size {page_bytes} bytes: use a power of two from 512 B to 1 MiB"),
        ));
    }
    // Each database's size in bytes must fit a file offset with room to spare (1 EiB).
    let per_db =
        mailboxes as f64 * mailbox_size_bytes as f64 * capacity_fraction / databases as f64;
    if per_db > (1u64 << 60) as f64 {
        return Err(err(
            "mailboxes",
            format!(
                "{mailboxes} mailboxes of {mailbox_size_bytes} bytes at {}% capacity make databases of {per_db:.3e} bytes each, more than any storage holds; lower mailboxes, mailbox_size or capacity",
                capacity_fraction * 100.0
            ),
        ));
    }
    let cfg = ExchangeConfig {
        version,
        test,
        mailboxes,
        mailbox_size_bytes,
        iops_per_mailbox,
        iops_source,
        databases,
        db_paths,
        log_paths,
        threads,
        headroom_pct,
        maintenance,
        duration_ms,
        ramp_ms: ms(spec.ramp, quick::RAMP_MS.min(duration_ms / 4)),
        interval_ms,
        capacity_fraction,
        throughput_mode,
        find_max_mailboxes: spec.find_max_mailboxes.unwrap_or(false),
        db_read_limit_ms: limit(spec.db_read_latency, DB_READ_AVG_LIMIT_MS),
        log_write_limit_ms: limit(spec.log_write_latency, LOG_WRITE_AVG_LIMIT_MS),
        max_latency_ms: limit(
            spec.max_latency,
            if test == TestType::Stress {
                MAX_LATENCY_STRESS_MS
            } else {
                MAX_LATENCY_PERFORMANCE_MS
            },
        ),
        log_files,
        backup_block_bytes,
        page_bytes,
        engine,
        seed: spec.seed.unwrap_or(crate::job::defaults::SEED),
        destroy_data: spec.destroy_data.unwrap_or(false),
        verify: spec.verify.unwrap_or(false),
    };
    if cfg.throughput_mode.is_none() && cfg.database_bytes() < cfg.page_bytes * 16 {
        return Err(err(
            "capacity",
            format!(
                "each database would be {} bytes; raise the mailbox size, mailboxes or capacity",
                cfg.database_bytes()
            ),
        ));
    }
    Ok(cfg)
}

impl ExchangeConfig {
    /// Target transactional IOPS for `mailboxes`: mailboxes × IOPS per mailbox × (1 + headroom).
    pub fn target_iops(&self, mailboxes: u64) -> f64 {
        mailboxes as f64 * self.iops_per_mailbox * (1.0 + self.headroom_pct / 100.0)
    }

    /// Size of each database as built, bytes (a multiple of the page size).
    pub fn database_bytes(&self) -> u64 {
        let page = self.page_bytes;
        let per_db =
            self.mailboxes as f64 * self.mailbox_size_bytes as f64 * self.capacity_fraction
                / self.databases as f64;
        ((per_db / page as f64) as u64) * page
    }

    /// Size of each log stream, bytes.
    pub fn log_stream_bytes(&self) -> u64 {
        LOG_FILE_BYTES * LOG_FILES_PER_STREAM.max(self.log_files as u64)
    }

    /// Database file paths, spread round-robin over the database paths.
    pub fn database_path(&self, db: u32) -> PathBuf {
        self.db_paths[db as usize % self.db_paths.len()].join(format!("storlab-db{}.edb", db + 1))
    }

    /// Log stream paths.
    pub fn log_path(&self, db: u32) -> PathBuf {
        self.log_paths[db as usize % self.log_paths.len()]
            .join(format!("storlab-db{}-logs.log", db + 1))
    }
}

/// Class names of database `db` (1-based in names).
pub fn class_name(db: u32, what: &str) -> String {
    format!("db{}/{what}", db + 1)
}

/// How a job is loaded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Open loop at this total transactional IOPS.
    Rate(f64),
    /// Closed loop: every thread keeps its I/O outstanding (throughput mode, calibration).
    Max,
}

/// The job for a performance or stress test (or a trial of one): `threads` per database at
/// `load`, on databases of `db_bytes` each.
pub fn transactional_job(
    cfg: &ExchangeConfig,
    threads: u32,
    load: Load,
    db_bytes: u64,
    duration_ms: u64,
    ramp_ms: u64,
) -> Job {
    let model = cfg.version.model();
    let mut job = base_job(cfg, db_bytes, duration_ms, ramp_ms);
    let per_db = match load {
        Load::Rate(total) => Some(total / cfg.databases as f64),
        Load::Max => None,
    };
    for db in 0..cfg.databases {
        let (t_db, t_log) = (db as usize * 2, db as usize * 2 + 1);
        let read = job.class(&class_name(db, "read"));
        let write = job.class(&class_name(db, "write"));
        let log = job.class(&class_name(db, "log-write"));
        for t in 0..threads {
            job.workers.push(Worker {
                name: format!("db{}-thread{}", db + 1, t + 1),
                targets: vec![t_db],
                target_choice: TargetChoice::RoundRobin,
                queue_depth: THREAD_QUEUE_DEPTH,
                cpu: None,
                rate: per_db.map(|r| Rate {
                    iops: r / threads as f64,
                    arrivals: Arrivals::Uniform,
                }),
                access: vec![
                    page_access(read, cfg.page_bytes, model.read_pct.round() as u32, 100.0),
                    page_access(
                        write,
                        cfg.page_bytes,
                        (100.0 - model.read_pct).round() as u32,
                        0.0,
                    ),
                ],
                io_limit: None,
            });
        }
        // The log writer: its rate follows the database rate (in closed loop, an estimate from
        // the first second is not possible, so it runs at the profile's target ratio of the
        // configured mailboxes).
        let db_rate =
            per_db.unwrap_or_else(|| cfg.target_iops(cfg.mailboxes) / cfg.databases as f64);
        let log_iops = match model.log_ratio {
            LogRatio::OfDatabaseIops(f) => db_rate * f,
            LogRatio::OfDatabaseWrites(f) => db_rate * (100.0 - model.read_pct) / 100.0 * f,
        };
        if log_iops > 0.0 {
            job.workers.push(Worker {
                name: format!("db{}-log", db + 1),
                targets: vec![t_log],
                target_choice: TargetChoice::RoundRobin,
                queue_depth: 1,
                cpu: None,
                rate: Some(Rate {
                    iops: log_iops,
                    arrivals: Arrivals::Uniform,
                }),
                access: vec![Access {
                    class: log,
                    weight: 1,
                    block_size_bytes: model.log_sizes.last().map(|s| s.0).unwrap_or(4096),
                    block_sizes: model.log_sizes.to_vec(),
                    roll_every_bytes: LOG_FILE_BYTES,
                    read_pct: 0.0,
                    random_pct: 0.0,
                    align_bytes: 4096,
                    distribution: Distribution::Uniform,
                    offset_bytes: 0,
                    length_bytes: None,
                    sync: false,
                    fsync_every: 0,
                }],
                io_limit: None,
            });
        }
        if cfg.maintenance {
            let m = job.class(&class_name(db, "maintenance"));
            job.workers.push(Worker {
                name: format!("db{}-maintenance", db + 1),
                targets: vec![t_db],
                target_choice: TargetChoice::RoundRobin,
                queue_depth: 1,
                cpu: None,
                rate: Some(Rate {
                    iops: model.maintenance_bytes_per_s as f64 / MAINTENANCE_READ_BYTES as f64,
                    arrivals: Arrivals::Uniform,
                }),
                access: vec![sequential(m, MAINTENANCE_READ_BYTES, 100.0)],
                io_limit: None,
            });
        }
    }
    job
}

/// The backup test's job: every database read sequentially once, as fast as possible.
pub fn backup_job(cfg: &ExchangeConfig, db_bytes: u64) -> Job {
    let mut job = base_job(cfg, db_bytes, cfg.duration_ms, 0);
    for db in 0..cfg.databases {
        let c = job.class(&class_name(db, "backup-read"));
        job.workers.push(Worker {
            name: format!("db{}-backup", db + 1),
            targets: vec![db as usize * 2],
            target_choice: TargetChoice::RoundRobin,
            queue_depth: BACKUP_QUEUE_DEPTH,
            cpu: None,
            rate: None,
            access: vec![sequential(c, cfg.backup_block_bytes, 100.0)],
            io_limit: Some(IoLimit::Ios(db_bytes.div_ceil(cfg.backup_block_bytes))),
        });
    }
    job
}

/// The recovery test's job: per database, `log_files` log files read sequentially (1 MiB
/// each) and the database page reads and writes their replay causes.
pub fn recovery_job(cfg: &ExchangeConfig, db_bytes: u64) -> Job {
    let mut job = base_job(cfg, db_bytes, cfg.duration_ms, 0);
    let n = cfg.log_files as u64;
    for db in 0..cfg.databases {
        let log = job.class(&class_name(db, "log-read"));
        let read = job.class(&class_name(db, "read"));
        let write = job.class(&class_name(db, "write"));
        job.workers.push(Worker {
            name: format!("db{}-replay-log", db + 1),
            targets: vec![db as usize * 2 + 1],
            target_choice: TargetChoice::RoundRobin,
            queue_depth: 1,
            cpu: None,
            rate: None,
            access: vec![sequential(log, LOG_FILE_BYTES, 100.0)],
            io_limit: Some(IoLimit::Ios(n)),
        });
        job.workers.push(Worker {
            name: format!("db{}-replay-pages", db + 1),
            targets: vec![db as usize * 2],
            target_choice: TargetChoice::RoundRobin,
            queue_depth: 4,
            cpu: None,
            rate: None,
            access: vec![
                page_access(read, cfg.page_bytes, RECOVERY_READS_PER_LOG as u32, 100.0),
                page_access(write, cfg.page_bytes, RECOVERY_WRITES_PER_LOG as u32, 0.0),
            ],
            io_limit: Some(IoLimit::Ios(
                n * (RECOVERY_READS_PER_LOG + RECOVERY_WRITES_PER_LOG),
            )),
        });
    }
    job
}

fn base_job(cfg: &ExchangeConfig, db_bytes: u64, duration_ms: u64, ramp_ms: u64) -> Job {
    let mut targets = Vec::new();
    for db in 0..cfg.databases {
        targets.push(Target {
            name: format!("db{}", db + 1),
            path: cfg.database_path(db),
            size_bytes: Some(db_bytes),
            sync: false,
            fsync_every: 0,
        });
        targets.push(Target {
            name: format!("db{}-logs", db + 1),
            path: cfg.log_path(db),
            size_bytes: Some(cfg.log_stream_bytes()),
            // Exchange writes its log through to stable storage.
            sync: true,
            fsync_every: 0,
        });
    }
    Job {
        description: Some(format!(
            "Exchange {} {} test: {} mailboxes, {} databases",
            cfg.version.name(),
            match cfg.test {
                TestType::Performance => "performance",
                TestType::Stress => "stress",
                TestType::Backup => "backup",
                TestType::Recovery => "recovery",
            },
            cfg.mailboxes,
            cfg.databases
        )),
        engine: cfg.engine,
        duration_ms,
        ramp_ms,
        interval_ms: cfg.interval_ms,
        seed: cfg.seed,
        buffered: false,
        destroy_data: cfg.destroy_data,
        batch: 1,
        verify: cfg.verify,
        on_error: Default::default(),
        targets,
        workers: Vec::new(),
        classes: Vec::new(),
        warnings: Vec::new(),
        sequence: Default::default(),
    }
}

fn page_access(class: usize, page: u64, weight: u32, read_pct: f64) -> Access {
    Access {
        class,
        weight: weight.max(1),
        block_size_bytes: page,
        block_sizes: Vec::new(),
        roll_every_bytes: 0,
        read_pct,
        random_pct: 100.0,
        align_bytes: page,
        distribution: Distribution::Uniform,
        offset_bytes: 0,
        length_bytes: None,
        sync: false,
        fsync_every: 0,
    }
}

fn sequential(class: usize, block: u64, read_pct: f64) -> Access {
    Access {
        random_pct: 0.0,
        read_pct,
        ..page_access(class, block, 1, read_pct)
    }
}

/// Per-database figures from a run's classes.
pub fn database_figures(
    cfg: &ExchangeConfig,
    db_bytes: u64,
    classes: &std::collections::BTreeMap<String, ClassResult>,
) -> Vec<DatabaseFigures> {
    let avg = |bytes: u64, ops: u64| {
        if ops > 0 {
            bytes as f64 / ops as f64
        } else {
            0.0
        }
    };
    (0..cfg.databases)
        .map(|db| {
            let get = |what: &str| classes.get(&class_name(db, what));
            let mut f = DatabaseFigures {
                name: format!("db{}", db + 1),
                path: cfg.database_path(db).display().to_string(),
                log_path: cfg.log_path(db).display().to_string(),
                size_bytes: db_bytes,
                ..Default::default()
            };
            if let Some(c) = get("read") {
                f.db_reads_per_s = c.read.iops;
                f.db_read_latency_ns = LatencyBrief::of(&c.read.latency_ns);
                f.db_read_bytes_avg = avg(c.read.bytes, c.read.ops);
                f.errors += c.read.errors + c.write.errors;
            }
            if let Some(c) = get("write") {
                f.db_writes_per_s = c.write.iops;
                f.db_write_latency_ns = LatencyBrief::of(&c.write.latency_ns);
                f.db_write_bytes_avg = avg(c.write.bytes, c.write.ops);
                f.errors += c.read.errors + c.write.errors;
            }
            if let Some(c) = get("log-write") {
                f.log_writes_per_s = c.write.iops;
                f.log_write_latency_ns = LatencyBrief::of(&c.write.latency_ns);
                f.log_write_bytes_avg = avg(c.write.bytes, c.write.ops);
                f.errors += c.write.errors;
            }
            if let Some(c) = get("maintenance") {
                f.maintenance_reads_per_s = c.read.iops;
                f.maintenance_mb_per_s = c.read.bytes_per_s / 1e6;
                f.errors += c.read.errors;
            }
            for what in ["backup-read", "log-read"] {
                if let Some(c) = get(what) {
                    f.errors += c.read.errors;
                }
            }
            f
        })
        .collect()
}

/// The verdict rules of a performance or stress run: per database average read and log write
/// latency and maximum read latency, zero errors, and the achieved rate (when there is a
/// target).
pub fn rules(
    cfg: &ExchangeConfig,
    dbs: &[DatabaseFigures],
    errors: u64,
    target_iops: Option<f64>,
    achieved_iops: f64,
) -> Vec<Rule> {
    let ms = |ns: f64| ns / 1e6;
    let mut rules = Vec::new();
    for d in dbs {
        rules.push(Rule::judge(
            format!("{} average database read latency", d.name),
            ms(d.db_read_latency_ns.mean),
            Comparison::AtMost,
            cfg.db_read_limit_ms,
            "ms",
        ));
        if d.log_writes_per_s > 0.0 || cfg.test != TestType::Backup {
            rules.push(Rule::judge(
                format!("{} average log write latency", d.name),
                ms(d.log_write_latency_ns.mean),
                Comparison::AtMost,
                cfg.log_write_limit_ms,
                "ms",
            ));
        }
        rules.push(Rule::judge(
            format!("{} maximum database read latency", d.name),
            ms(d.db_read_latency_ns.max as f64),
            Comparison::AtMost,
            cfg.max_latency_ms,
            "ms",
        ));
    }
    rules.push(Rule::judge(
        crate::results::verdict::IO_ERRORS,
        errors as f64,
        Comparison::AtMost,
        0.0,
        "errors",
    ));
    if let Some(target) = target_iops {
        rules.push(Rule::judge(
            format!(
                "achieved transactional IOPS ≥ target {:.1} (less {:.0}% for the window's edges)",
                target,
                ACHIEVED_IOPS_TOLERANCE * 100.0
            ),
            achieved_iops,
            Comparison::AtLeast,
            target * (1.0 - ACHIEVED_IOPS_TOLERANCE),
            "IOPS",
        ));
    }
    rules
}

/// Describes the sizing for `--dry-run` and the console.
pub fn sizing_summary(cfg: &ExchangeConfig) -> String {
    format!(
        "Exchange {} · {} mailboxes × {} · {} IOPS/mailbox ({}) · headroom {}% → target {:.1} transactional IOPS · {} database(s) of {}{} · threads {}",
        cfg.version.name(),
        cfg.mailboxes,
        format_size(cfg.mailbox_size_bytes),
        cfg.iops_per_mailbox,
        cfg.iops_source,
        cfg.headroom_pct,
        cfg.target_iops(cfg.mailboxes),
        cfg.databases,
        format_size(cfg.database_bytes()),
        if cfg.capacity_fraction < 1.0 {
            format!(
                " (built at {}% of their real size)",
                cfg.capacity_fraction * 100.0
            )
        } else {
            String::new()
        },
        cfg.threads
            .map(|t| t.to_string())
            .unwrap_or_else(|| "auto".into())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
