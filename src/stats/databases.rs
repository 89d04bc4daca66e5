//! A database's figures from a run, as the results of three rooms hold them: an Exchange
//! validation's and simulated users' per-database table (one row per database and its log),
//! and the brief of a latency (mean and tail) that the database validation's files carry too.

use serde::{Deserialize, Serialize};

/// One database's figures from a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Transactional reads in the measured time (schema 1.19): what the read latency rules
    /// rest on.
    #[serde(default)]
    pub db_reads: u64,
    /// Transactional writes in the measured time (schema 1.19).
    #[serde(default)]
    pub db_writes: u64,
    /// Log writes in the measured time (schema 1.19): what the log latency rule rests on.
    #[serde(default)]
    pub log_writes: u64,
    /// Log reads per second (the recovery test's replay; schema 1.19).
    #[serde(default)]
    pub log_reads_per_s: f64,
}

/// Mean and tail of a latency, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    pub(crate) fn of(s: &crate::stats::histogram::LatencySummary) -> LatencyBrief {
        LatencyBrief {
            mean: s.mean,
            p95: s.p95,
            p99: s.p99,
            p99_9: s.p99_9,
            max: s.max,
        }
    }
}
