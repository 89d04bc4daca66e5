//! The results file schema: [`RunResult`] is the contract every output is rendered from.
//! Units are in field names; `schema_version` changes whenever a field is added, removed or
//! changes meaning, and storlab reads files of its own version only (every type rejects
//! unknown fields, so a file is never half-read): see docs/results-format.md.

use crate::engine::target::{PrepareReport, TargetKind};
use crate::engine::worker::ErrorDetail;
use crate::job::Job;
use crate::stats::host::{CpuPercent, DiskDelta, HostInfo};
use crate::stats::summary::ClassSummary;
use crate::stats::timeseries::IntervalRecord;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// Version of this schema.
pub const SCHEMA_VERSION: u32 = 1;

/// Whether a run was cut short: `false`, or the reason (JSON: `false` or a string).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Interrupted {
    /// It ran to the end.
    #[default]
    No,
    /// Why it stopped early (signal, fatal error).
    Yes(String),
}

impl Serialize for Interrupted {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Interrupted::No => s.serialize_bool(false),
            Interrupted::Yes(r) => s.serialize_str(r),
        }
    }
}

impl<'de> Deserialize<'de> for Interrupted {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Reason(String),
        }
        Ok(match Raw::deserialize(d)? {
            Raw::Flag(false) => Interrupted::No,
            Raw::Flag(true) => Interrupted::Yes("interrupted".into()),
            Raw::Reason(r) => Interrupted::Yes(r),
        })
    }
}

/// One run's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunResult {
    /// Schema version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// storlab version that wrote the file.
    pub storlab_version: String,
    /// The command line that started the run.
    pub command: Vec<String>,
    /// The resolved job.
    pub job: Job,
    /// The machine.
    pub host: HostInfo,
    /// Start of the run (prepare included), RFC 3339 UTC.
    pub started_at: String,
    /// End of the run, RFC 3339 UTC.
    pub ended_at: String,
    /// `false`, or why the run stopped early.
    pub interrupted: Interrupted,
    /// State of each phase, in order.
    pub phases: Vec<PhaseRecord>,
    /// The engine that did the I/O.
    pub engine: EngineInfo,
    /// Things a reader must know to trust the numbers (tmpfs, buffered I/O, small data set...).
    pub warnings: Vec<String>,
    /// Measured time, ms (the rates below are over this).
    pub measured_ms: u64,
    /// Every target.
    pub targets: Vec<TargetResult>,
    /// Every class together.
    pub totals: ClassSummary,
    /// Per class name.
    pub classes: BTreeMap<String, ClassResult>,
    /// Per worker.
    pub workers: Vec<WorkerResult>,
    /// Block devices under the targets: their own counters over the measured phase.
    pub devices: Vec<DeviceResult>,
    /// CPU use over the measured phase.
    pub host_cpu: CpuPercent,
    /// The first I/O errors, across workers.
    pub errors: Vec<ErrorDetail>,
    /// Path of the NDJSON time-series file (one [`IntervalRecord`] per line).
    pub timeseries_path: Option<String>,
    /// The time series, one record per interval (ramp intervals included, marked).
    pub timeseries: Vec<IntervalRecord>,
    /// Data verification (runs with `verify`): blocks checked and every kind of error found,
    /// during the run and in the final read-back pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::engine::verify::VerifyCounts>,
    /// The verdict: for runs that judge (Exchange), and for any run with data verification or
    /// failed I/Os.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::verdict::Verdict>,
    /// The Exchange model's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<ExchangeResult>,
    /// After `--find-max-mailboxes`: the largest mailbox count that passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_mailboxes: Option<u64>,
    /// After `--find-max-mailboxes`: every trial of the search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<Vec<Trial>>,
    /// Step sequences: one object per step, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<StepResult>>,
    /// Preconditioning, when the job asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<PreconditionResult>,
}

/// What preconditioning did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreconditionResult {
    /// Full passes over every target.
    pub passes: u32,
    /// `sequential` or `random`.
    pub pattern: String,
    /// Write size, bytes.
    pub block_size_bytes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Write rate, MB/s (10^6 bytes/s).
    pub mb_per_s: f64,
    /// Whether every pass completed.
    pub complete: bool,
}

/// One measured run inside a step (a repetition, a steady-state round, a curve level).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunFigures {
    /// I/Os per second (reads and writes).
    pub iops: f64,
    /// MB/s (10^6 bytes/s).
    pub mb_per_s: f64,
    /// Mean latency, ns.
    pub latency_mean_ns: f64,
    /// Median latency, ns.
    pub latency_p50_ns: u64,
    /// 99th percentile latency, ns.
    pub latency_p99_ns: u64,
    /// Measured seconds.
    pub seconds: f64,
}

/// Spread of a step's repetitions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repetitions {
    /// Each run.
    pub runs: Vec<RunFigures>,
    /// IOPS.
    pub iops: crate::stats::repetition::Spread,
    /// MB/s.
    pub mb_per_s: crate::stats::repetition::Spread,
    /// Mean latency, ns.
    pub latency_mean_ns: crate::stats::repetition::Spread,
    /// Median latency, ns.
    pub latency_p50_ns: crate::stats::repetition::Spread,
    /// 99th percentile latency, ns.
    pub latency_p99_ns: crate::stats::repetition::Spread,
    /// IOPS varied by more than 5% (coefficient of variation).
    pub high_variation: bool,
}

/// Steady-state rounds of a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteadyResult {
    /// Each round's IOPS, in order.
    pub rounds_iops: Vec<f64>,
    /// The 1-based round at which the window became steady; `None`: never.
    pub steady_at_round: Option<usize>,
    /// The check of the last window.
    pub window: Option<crate::stats::steady::WindowCheck>,
    /// Rounds in the window.
    pub window_rounds: u32,
}

/// One step of a sequence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepResult {
    /// 0-based step index.
    pub index: usize,
    /// The parameter values that define it: block_size in bytes, read/random in percent,
    /// rate in IOPS per worker, counts as numbers.
    pub parameters: BTreeMap<String, f64>,
    /// The same, as a person reads them.
    pub label: String,
    /// `step`, `curve-max` or `curve-level`.
    pub kind: String,
    /// Rate curve: the level, percent of the closed-loop maximum.
    pub curve_level_pct: Option<f64>,
    /// Rate curve: the total open-loop rate, IOPS.
    pub target_iops: Option<f64>,
    /// Measured time, ms (every run of the step).
    pub measured_ms: u64,
    /// Every class together.
    pub totals: ClassSummary,
    /// Per class name.
    pub classes: BTreeMap<String, ClassSummary>,
    /// CPU use.
    pub host_cpu: CpuPercent,
    /// Machine CPU busy (user + system), percent of all CPUs.
    pub cpu_busy_pct: f64,
    /// I/Os per second per percent of CPU busy (Iometer's efficiency figure).
    pub ios_per_cpu_pct: f64,
    /// Repetitions (`repeat` > 1).
    pub repetitions: Option<Repetitions>,
    /// Steady state (`until_steady`).
    pub steady: Option<SteadyResult>,
    /// The step was cut short.
    pub interrupted: bool,
}

/// A phase of the run and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseRecord {
    /// `prepare`, `ramp` or `measure`.
    pub name: String,
    /// `completed`, `interrupted` or `not_started`.
    pub state: String,
    /// Wall time spent in it, seconds.
    pub seconds: f64,
}

/// Which engine ran and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineInfo {
    /// `io_uring`, `psync` or `null`.
    pub name: String,
    /// Why the requested engine was replaced, when it was.
    pub fallback_reason: Option<String>,
    /// Notes (registration fallbacks...).
    pub notes: Vec<String>,
}

/// One target as it was used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetResult {
    /// Name from the job.
    pub name: String,
    /// Path.
    pub path: String,
    /// File or block device.
    pub kind: TargetKind,
    /// Size used, bytes.
    pub size_bytes: u64,
    /// Logical block size (O_DIRECT granularity), bytes.
    pub logical_block_size_bytes: u32,
    /// Opened with O_DIRECT.
    pub direct: bool,
    /// Opened with O_DSYNC.
    pub dsync: bool,
    /// Filesystem type, or `block device`.
    pub filesystem: String,
    /// Mount point of that filesystem.
    pub mount_point: Option<String>,
    /// Its mount options.
    pub mount_options: String,
    /// Kernel name of the block device underneath.
    pub device: Option<String>,
    /// Model of that device.
    pub device_model: Option<String>,
    /// How the target was prepared.
    pub prepare: PrepareReport,
    /// Measured reads, writes and flushes on this target.
    pub ops: DirCounts,
    /// Measured bytes read and written.
    pub bytes: DirCounts,
    /// Errors.
    pub errors: DirCounts,
}

/// A count per direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirCounts {
    /// Reads.
    pub read: u64,
    /// Writes.
    pub write: u64,
    /// Flushes.
    pub flush: u64,
}

/// One class's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassResult {
    /// Reads.
    pub read: crate::stats::summary::DirSummary,
    /// Writes.
    pub write: crate::stats::summary::DirSummary,
    /// Flushes.
    pub flush: crate::stats::summary::DirSummary,
    /// How this class's writes were made durable: `none`, `o_dsync` (target opened with
    /// O_DSYNC), `rwf_dsync` (per write), `fsync_every_N`, or several joined by `+`.
    pub write_durability: String,
}

impl ClassResult {
    /// The figures without the durability note.
    pub fn summary(&self) -> ClassSummary {
        ClassSummary {
            read: self.read.clone(),
            write: self.write.clone(),
            flush: self.flush.clone(),
        }
    }
}

/// One worker's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerResult {
    /// Name.
    pub name: String,
    /// Every class of the worker together.
    pub totals: ClassSummary,
    /// Per class name (classes the worker did not use are left out).
    pub classes: BTreeMap<String, ClassSummary>,
    /// Open loop: I/Os whose time came but were never issued because every slot was busy.
    pub unissued: u64,
    /// A fatal problem that ended the worker early.
    pub fatal: Option<String>,
}

/// A block device's own view of the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceResult {
    /// Kernel name (`sda`, `nvme0n1`, `loop3`).
    pub name: String,
    /// Model, when known.
    pub model: Option<String>,
    /// Counter deltas over the measured phase.
    pub delta: DiskDelta,
}

/// One database's figures from a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseFigures {
    /// `db1`...
    pub name: String,
    /// Database file.
    pub path: String,
    /// Log stream file.
    pub log_path: String,
    /// Database size as built, bytes.
    pub size_bytes: u64,
    /// Transactional reads per second.
    pub db_reads_per_s: f64,
    /// Transactional writes per second.
    pub db_writes_per_s: f64,
    /// Read latency, ns: mean, p95, p99, max.
    pub db_read_latency_ns: LatencyBrief,
    /// Write latency, ns.
    pub db_write_latency_ns: LatencyBrief,
    /// Average bytes per read.
    pub db_read_bytes_avg: f64,
    /// Average bytes per write.
    pub db_write_bytes_avg: f64,
    /// Log writes per second.
    pub log_writes_per_s: f64,
    /// Log write latency, ns.
    pub log_write_latency_ns: LatencyBrief,
    /// Average bytes per log write.
    pub log_write_bytes_avg: f64,
    /// Maintenance reads per second.
    pub maintenance_reads_per_s: f64,
    /// Maintenance read rate, MB/s (10^6 bytes/s).
    pub maintenance_mb_per_s: f64,
    /// I/O errors on this database and its log.
    pub errors: u64,
}

impl DatabaseFigures {
    /// Column headings of the per-database table (console and HTML).
    pub const COLUMNS: [&'static str; 12] = [
        "db",
        "reads/s",
        "read avg",
        "read p95",
        "read p99",
        "writes/s",
        "write avg",
        "log writes/s",
        "log avg",
        "log p99",
        "maintenance MB/s",
        "errors",
    ];

    /// The row of the per-database table, formatted.
    pub fn cells(&self) -> [String; 12] {
        use crate::report::console::format_ns;
        [
            self.name.clone(),
            format!("{:.1}", self.db_reads_per_s),
            format_ns(self.db_read_latency_ns.mean),
            format_ns(self.db_read_latency_ns.p95 as f64),
            format_ns(self.db_read_latency_ns.p99 as f64),
            format!("{:.1}", self.db_writes_per_s),
            format_ns(self.db_write_latency_ns.mean),
            format!("{:.1}", self.log_writes_per_s),
            format_ns(self.log_write_latency_ns.mean),
            format_ns(self.log_write_latency_ns.p99 as f64),
            format!("{:.2}", self.maintenance_mb_per_s),
            self.errors.to_string(),
        ]
    }
}

/// Mean and tail of a latency, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyBrief {
    /// Mean.
    pub mean: f64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// Maximum.
    pub max: u64,
}

impl LatencyBrief {
    /// The brief of a full summary.
    pub fn of(s: &crate::stats::histogram::LatencySummary) -> LatencyBrief {
        LatencyBrief {
            mean: s.mean,
            p95: s.p95,
            p99: s.p99,
            p99_9: s.p99_9,
            max: s.max,
        }
    }
}

/// One trial of the thread tuning or the maximum-mailboxes search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trial {
    /// `threads`, `bracket`, `bisect` or `confirm`.
    pub purpose: String,
    /// Mailboxes simulated.
    pub mailboxes: u64,
    /// Threads per database.
    pub threads: u32,
    /// Target transactional IOPS.
    pub target_iops: f64,
    /// Achieved transactional IOPS.
    pub achieved_iops: f64,
    /// Worst database's average read latency, ms.
    pub db_read_latency_ms: f64,
    /// Worst database's average log write latency, ms.
    pub log_write_latency_ms: f64,
    /// Largest database read latency, ms.
    pub max_read_latency_ms: f64,
    /// Measured seconds.
    pub seconds: f64,
    /// Whether every rule passed.
    pub pass: bool,
    /// Rules that failed.
    pub failed_rules: Vec<String>,
}

/// How the databases were initialised.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Initialisation {
    /// Wall time of the preparation phase, seconds.
    pub seconds: f64,
    /// Every database and log stream was reused from an earlier run.
    pub reused: bool,
    /// Bytes written.
    pub written_bytes: u64,
}

/// The backup test's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackupFigures {
    /// Read size, bytes.
    pub block_size_bytes: u64,
    /// Per database MB/s (10^6 bytes/s), in database order.
    pub mb_per_s_per_database: Vec<f64>,
    /// All databases together, MB/s.
    pub mb_per_s_total: f64,
    /// Time to read every database once at the measured rate, seconds.
    pub full_backup_seconds: f64,
    /// Whether every database was read completely within the duration.
    pub complete: bool,
}

/// The recovery test's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryFigures {
    /// Log files replayed per database.
    pub log_files: u32,
    /// Database page reads per log file.
    pub reads_per_log_file: u64,
    /// Database page writes per log file.
    pub writes_per_log_file: u64,
    /// Wall time of the replay, seconds.
    pub seconds: f64,
    /// Seconds per log file (per database, databases replaying in parallel).
    pub seconds_per_log_file: f64,
}

/// The Exchange section of a results file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExchangeResult {
    /// Exchange version modelled.
    pub version: String,
    /// performance, stress, backup or recovery.
    pub test: String,
    /// Mailboxes of this run.
    pub mailboxes: u64,
    /// Mailbox size, bytes.
    pub mailbox_size_bytes: u64,
    /// Transactional IOPS per mailbox.
    pub iops_per_mailbox: f64,
    /// Where that figure came from.
    pub iops_source: String,
    /// Headroom, percent.
    pub headroom_pct: f64,
    /// Target transactional IOPS (0 for backup and recovery).
    pub target_iops: f64,
    /// Achieved transactional IOPS (database reads + writes).
    pub achieved_iops: f64,
    /// Number of databases.
    pub database_count: u32,
    /// Size of each database as built, bytes.
    pub database_size_bytes: u64,
    /// Databases were built at this fraction of their real size.
    pub capacity_fraction: f64,
    /// Database page size, bytes.
    pub page_size_bytes: u64,
    /// Threads per database used.
    pub threads_per_database: u32,
    /// Background maintenance on.
    pub maintenance: bool,
    /// Database directories.
    pub db_paths: Vec<String>,
    /// Log directories.
    pub log_paths: Vec<String>,
    /// Limits: average database read latency, ms.
    pub db_read_latency_limit_ms: f64,
    /// Limits: average log write latency, ms.
    pub log_write_latency_limit_ms: f64,
    /// Limits: maximum database read latency, ms.
    pub max_latency_limit_ms: f64,
    /// Throughput mode: the closed-loop maximum found, IOPS.
    pub throughput_max_iops: Option<f64>,
    /// Initialisation.
    pub initialisation: Initialisation,
    /// Per database.
    pub databases: Vec<DatabaseFigures>,
    /// The thread-tuning trials (`--threads auto`).
    pub thread_trials: Vec<Trial>,
    /// Backup test figures.
    pub backup: Option<BackupFigures>,
    /// Recovery test figures.
    pub recovery: Option<RecoveryFigures>,
}

/// A complete, minimal results file as JSON for unit tests of the renderers: one 16 MiB target,
/// one worker, the given classes, zero totals and no time series. Tests replace fields before
/// deserialising it.
#[cfg(test)]
pub(crate) fn sample_json(engine: &str, classes: &[&str]) -> serde_json::Value {
    use serde_json::json;
    let dir = json!({
        "ops": 0, "bytes": 0, "errors": 0, "iops": 0.0, "bytes_per_s": 0.0,
        "latency_ns": {"min": 0, "mean": 0.0, "max": 0, "stddev": 0.0, "p50": 0, "p90": 0,
                       "p95": 0, "p99": 0, "p99_9": 0, "p99_99": 0}
    });
    json!({
        "schema_version": SCHEMA_VERSION, "storlab_version": "0.1.0", "command": ["storlab"],
        "job": {
            "description": null, "engine": engine, "duration_ms": 2000, "ramp_ms": 0,
            "interval_ms": 1000, "seed": 1, "buffered": false, "destroy_data": false,
            "batch": 1,
            "targets": [{"name": "t", "path": "/tmp/t", "size_bytes": 16777216,
                         "sync": false, "fsync_every": 0}],
            "workers": [{
                "name": "worker", "targets": [0], "target_choice": "round-robin",
                "queue_depth": 1, "cpu": null, "rate": null, "io_limit": null,
                "access": [{
                    "class": 0, "weight": 1, "block_size_bytes": 4096, "block_sizes": [],
                    "roll_every_bytes": 0, "read_pct": 100.0, "random_pct": 100.0,
                    "align_bytes": 4096, "distribution": "uniform", "offset_bytes": 0,
                    "length_bytes": null, "sync": false, "fsync_every": 0
                }]
            }],
            "classes": classes, "warnings": []
        },
        "host": {"hostname": "h", "kernel": "6.1", "cpu_model": "cpu", "cpus": 2,
                 "memory_bytes": 1},
        "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:02Z",
        "interrupted": false, "phases": [],
        "engine": {"name": engine, "fallback_reason": null, "notes": []},
        "warnings": [], "measured_ms": 2000, "targets": [],
        "totals": {"read": dir, "write": dir, "flush": dir}, "classes": {}, "workers": [],
        "devices": [],
        "host_cpu": {"process_user_pct": 0.0, "process_system_pct": 0.0,
                     "system_user_pct": 0.0, "system_system_pct": 0.0,
                     "system_iowait_pct": 0.0, "system_idle_pct": 100.0},
        "errors": [], "timeseries_path": null, "timeseries": []
    })
}
