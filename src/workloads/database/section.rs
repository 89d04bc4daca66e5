//! The database part of a results file: the profile and its model, one row per file (each data
//! file and the log), group commit and checkpoint figures, and the capacity search's trials.

use crate::stats::databases::LatencyBrief;
use serde::{Deserialize, Serialize};

/// One file's figures from a run: a data file (reads, steady writes, checkpoint writes, scans)
/// or the log (writes and their flushes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileFigures {
    /// `data1`..., or `log`.
    pub name: String,
    /// The file.
    pub path: String,
    /// `data` or `log`.
    pub role: String,
    /// Data file: random page reads per second.
    pub reads_per_s: f64,
    /// Their latency (response time from when each was due), ns.
    pub read_latency_ns: LatencyBrief,
    /// Data file: steady page writes per second; log: log writes per second.
    pub writes_per_s: f64,
    /// Their latency, ns.
    pub write_latency_ns: LatencyBrief,
    /// Data file: checkpoint page writes per second (over the measured time).
    pub checkpoint_writes_per_s: f64,
    /// Their latency (from submission), ns.
    pub checkpoint_latency_ns: LatencyBrief,
    /// Data file: mean latency of every data-file write, steady and checkpoint, ns (what the
    /// data-file write rule judges).
    pub data_write_mean_ns: f64,
    /// Data file: read-ahead scan reads, MB/s (10^6 bytes/s).
    pub scan_mb_per_s: f64,
    /// Their latency, ns.
    pub scan_latency_ns: LatencyBrief,
    /// Log: average bytes per log write.
    pub write_bytes_avg: f64,
    /// Log: fdatasync latency after each write (engines that flush), ns.
    pub flush_latency_ns: LatencyBrief,
    /// Log: mean time to make a log write durable, ns: the write's latency (RWF_DSYNC), or
    /// the write's and its fdatasync's together (what the log rule judges).
    pub log_durable_mean_ns: f64,
    /// I/O errors on this file.
    pub errors: u64,
}

/// Group commit in the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupCommit {
    /// Commits made durable.
    pub commits: u64,
    /// Log writes that made them durable.
    pub log_writes: u64,
    /// Commits per log write, on average.
    pub commits_per_write: f64,
    /// Most commits one log write carried.
    pub max_commits_per_write: u64,
}

/// Checkpoint bursts that started and finished in the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Checkpoints {
    /// Interval between bursts, ms.
    pub interval_ms: u64,
    /// Page writes per burst per data file.
    pub pages_per_burst: u64,
    /// Bursts that finished.
    pub bursts: u64,
    /// Average burst time, seconds (first write issued to last completed).
    pub average_seconds: f64,
    /// Longest burst, seconds.
    pub longest_seconds: f64,
}

/// One trial of the capacity search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trial {
    /// `bracket` (doubling or halving), `bisect`, or `confirm` (a full-length run).
    pub purpose: String,
    /// Target transactions per second.
    pub tps: f64,
    /// Achieved transactions per second (commits made durable).
    pub achieved_tps: f64,
    /// Worst data file's average read latency, ms.
    pub data_read_latency_ms: f64,
    /// Worst data file's average write latency, ms.
    pub data_write_latency_ms: f64,
    /// Average log write latency (until durable), ms.
    pub log_write_latency_ms: f64,
    /// Measured seconds.
    pub seconds: f64,
    /// Whether every rule passed.
    pub pass: bool,
    /// Rules that failed.
    pub failed_rules: Vec<String>,
}

/// The capacity search (`find_max`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Search {
    /// The highest transaction rate that passed, transactions/s (`None`: none did).
    pub max_tps: Option<f64>,
    /// Every trial, in order; the last is the reported run.
    pub trials: Vec<Trial>,
}

/// The database section of a results file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatabaseResult {
    /// Engine modelled: oracle, sqlserver, postgresql or mysql.
    pub engine: String,
    /// Target transactions per second of the reported run.
    pub target_tps: f64,
    /// Where the rate came from.
    pub rate_source: String,
    /// Achieved transactions per second (commits made durable).
    pub achieved_tps: f64,
    /// Target data-file IOPS (reads and steady writes).
    pub target_iops: f64,
    /// Achieved data-file IOPS (reads and steady writes).
    pub achieved_iops: f64,
    /// Data-file I/Os per transaction.
    pub data_ios_per_transaction: f64,
    /// Share of the steady data-file I/Os that are reads, percent.
    pub data_read_pct: f64,
    /// Data files.
    pub data_files: u32,
    /// Size of each data file, bytes.
    pub data_file_bytes: u64,
    /// Page size, bytes.
    pub page_size_bytes: u64,
    /// Log bytes per commit.
    pub log_write_bytes: u64,
    /// Largest log write, bytes.
    pub log_max_write_bytes: u64,
    /// How log writes were made durable: `rwf_dsync` or `fdatasync`.
    pub log_durability: String,
    /// Log file size, bytes.
    pub log_bytes: u64,
    /// Workers per data file.
    pub threads_per_file: u32,
    /// Read-ahead scans.
    pub scans: u32,
    /// Size of each scan read, bytes.
    pub scan_read_bytes: u64,
    /// Limit: average data-file read latency, ms.
    pub data_read_limit_ms: f64,
    /// Limit: average data-file write latency, ms.
    pub data_write_limit_ms: f64,
    /// Limit: average log write latency, ms.
    pub log_write_limit_ms: f64,
    /// Where the limits come from.
    pub limits_source: String,
    /// Per file: each data file, then the log.
    pub files: Vec<FileFigures>,
    /// Group commit.
    pub group_commit: GroupCommit,
    /// Checkpoints (`None`: none ran).
    pub checkpoints: Option<Checkpoints>,
    /// The capacity search, when asked.
    pub search: Option<Search>,
}
