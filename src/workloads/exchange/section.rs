//! The Exchange part of a results file: the model's figures, one row per database, the
//! trials of thread tuning and of the maximum-mailboxes search, backup and recovery figures.

pub(crate) use crate::stats::databases::{DatabaseFigures, LatencyBrief};
use serde::{Deserialize, Serialize};

fn one_copy() -> u32 {
    1
}

/// What a trial of an Exchange validation was for.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TrialPurpose {
    /// `--threads auto`: a thread count tried.
    #[default]
    Threads,
    /// The maximum-mailboxes search: doubling or halving until a pass and a fail bracket it.
    Bracket,
    /// The search: halving the bracket.
    Bisect,
    /// The search: a full-length run confirming the count found.
    Confirm,
}

impl std::fmt::Display for TrialPurpose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TrialPurpose::Threads => "threads",
            TrialPurpose::Bracket => "bracket",
            TrialPurpose::Bisect => "bisect",
            TrialPurpose::Confirm => "confirm",
        })
    }
}

/// One trial of the thread tuning or the maximum-mailboxes search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trial {
    /// What the trial was for.
    pub purpose: TrialPurpose,
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
    /// Rules that did not pass (marked when inconclusive or not measured).
    pub failed_rules: Vec<String>,
    /// Its verdict: `PASS`, `FAIL`, `INCONCLUSIVE` or `NOT MEASURED` (schema 1.19; empty in
    /// older files).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub result: String,
}

/// How the databases were initialised.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackupFigures {
    /// Read size, bytes.
    pub block_size_bytes: u64,
    /// Per database MB/s (10^6 bytes/s), in database order.
    pub mb_per_s_per_database: Vec<f64>,
    /// All databases together, MB/s.
    pub mb_per_s_total: f64,
    /// Time to read every database once, as built, at the measured rate, seconds (the time
    /// taken when every database was read completely).
    pub full_backup_seconds: f64,
    /// Whether every database was read completely within the duration.
    pub complete: bool,
    /// Bytes read, every database together (0 in files before schema 1.9).
    #[serde(default)]
    pub read_bytes: u64,
    /// Time the reads took, until the last reader finished, seconds.
    #[serde(default)]
    pub read_seconds: f64,
    /// Databases read completely.
    #[serde(default)]
    pub databases_complete: u32,
    /// The databases' real size, all together, bytes: as built, divided by the capacity
    /// fraction they were built at.
    #[serde(default)]
    pub real_bytes: u64,
    /// Time to back up every database at its real size at the measured rate, seconds.
    #[serde(default)]
    pub full_backup_real_seconds: f64,
}

/// The recovery test's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Threads per database used (the most any database had, when they are shared).
    pub threads_per_database: u32,
    /// Exchange 2013 and later: the threads shared by all databases, as Jetstress 2013 counts
    /// them (schema 1.19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_shared: Option<u32>,
    /// Copies of each database (schema 1.19; 1: stand-alone).
    #[serde(default = "one_copy")]
    pub copies: u32,
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
    /// `compare_cache`: the validation without the cache tier, then with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_comparison: Option<CacheComparison>,
}

/// The same validation (the search, or the test at a fixed count) run without the cache tier,
/// then with it: what each found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheComparison {
    /// The results file of the validation without the cache (its trials, time series and
    /// databases in full).
    pub uncached_results: String,
    /// Without the cache.
    pub uncached: CacheSide,
    /// With the cache (this results file).
    pub cached: CacheSide,
}

/// What one side of a [`CacheComparison`] found: its reported test and, after a search, the
/// largest count that passed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheSide {
    /// Whether its reported test passed (`None`: it was interrupted and not judged).
    pub pass: Option<bool>,
    /// After a search: the largest mailbox count that passed (0: none did).
    pub max_mailboxes: Option<u64>,
    /// Mailboxes of its reported test.
    pub mailboxes: u64,
    /// Threads per database.
    pub threads_per_database: u32,
    /// Achieved transactional IOPS of its reported test.
    pub achieved_iops: f64,
    /// Worst database's average read latency, ms.
    pub db_read_latency_ms: f64,
    /// Worst database's average log write latency, ms.
    pub log_write_latency_ms: f64,
    /// Share of database reads the cache served, percent (`None`: no cache).
    pub read_hit_pct: Option<f64>,
    /// Trials it ran (thread tuning and search), the reported test included.
    pub runs: usize,
}
