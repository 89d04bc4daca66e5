//! Judging an Exchange run: each database's figures from the run's classes, the verdict rules
//! (Jetstress's latency limits, no errors, the target rate achieved), and the sizing summary.

use super::{ACHIEVED_IOPS_TOLERANCE, ExchangeConfig, TestType, class_name};
use crate::results::ClassResult;
use crate::results::progress::RateWatch;
use crate::results::verdict::{Comparison, MIN_LATENCY_SAMPLES, MIN_RATE_SAMPLES, Measure, Rule};
use crate::units::Dur;
use crate::workloads::exchange::section::{DatabaseFigures, LatencyBrief};

/// Per-database figures from a run's classes.
pub(crate) fn database_figures(
    cfg: &ExchangeConfig,
    db_bytes: u64,
    classes: &std::collections::BTreeMap<String, ClassResult>,
) -> Vec<DatabaseFigures> {
    let paths: Vec<_> = (0..cfg.databases)
        .map(|db| (cfg.database_path(db), cfg.log_path(db)))
        .collect();
    database_figures_at(&paths, db_bytes, classes)
}

/// Per-database figures from a run's classes (named as [`class_name`] names them), for
/// databases at `paths` (database file, log), each of `db_bytes`.
pub(crate) fn database_figures_at(
    paths: &[(std::path::PathBuf, std::path::PathBuf)],
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
    paths
        .iter()
        .enumerate()
        .map(|(db, (path, log_path))| {
            let get = |what: &str| classes.get(&class_name(db as u32, what));
            let mut f = DatabaseFigures {
                name: format!("db{}", db + 1),
                path: path.display().to_string(),
                log_path: log_path.display().to_string(),
                size_bytes: db_bytes,
                ..Default::default()
            };
            if let Some(c) = get("read") {
                f.db_reads = c.read.ops;
                f.db_reads_per_s = c.read.iops;
                f.db_read_latency_ns = LatencyBrief::of(&c.read.latency_ns);
                f.db_read_bytes_avg = avg(c.read.bytes, c.read.ops);
                f.errors += c.read.errors + c.write.errors;
            }
            if let Some(c) = get("write") {
                f.db_writes = c.write.ops;
                f.db_writes_per_s = c.write.iops;
                f.db_write_latency_ns = LatencyBrief::of(&c.write.latency_ns);
                f.db_write_bytes_avg = avg(c.write.bytes, c.write.ops);
                f.errors += c.read.errors + c.write.errors;
            }
            if let Some(c) = get("log-write") {
                f.log_writes = c.write.ops;
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
            if let Some(c) = get("log-read") {
                f.log_reads_per_s = c.read.iops;
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

/// The measured window a rate is judged over: its length and the open-loop workers whose
/// I/Os it counts (each may have one I/O on the other side of either edge).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Window {
    /// Measured seconds.
    pub seconds: f64,
    /// Transactional threads (open-loop workers) of every database.
    pub workers: u32,
}

/// The verdict rules of a performance or stress run: per database average read and log write
/// latency and maximum read latency, zero errors, and the achieved rate (when there is a
/// target) over `window`. A rule whose I/Os were too few to judge is not measured.
pub(crate) fn rules(
    cfg: &ExchangeConfig,
    dbs: &[DatabaseFigures],
    errors: u64,
    target_iops: Option<f64>,
    achieved_iops: f64,
    window: Window,
) -> Vec<Rule> {
    let limits = StorageLimits {
        db_read_ms: cfg.db_read_limit_ms,
        log_write_ms: cfg.log_write_limit_ms,
        max_read_ms: cfg.max_latency_ms,
    };
    let mut rules = storage_rules(dbs, &limits, cfg.test != TestType::Backup);
    rules.push(Rule::judge(
        crate::results::verdict::IO_ERRORS,
        errors as f64,
        Comparison::AtMost,
        0.0,
        "errors",
    ));
    if let Some(target) = target_iops {
        // The I/Os the target asks for in the window: too few, and one at an edge decides.
        let due = (target * window.seconds).floor() as u64;
        rules.push(
            Rule::judge(
                ACHIEVED_IOPS_RULE,
                achieved_iops,
                Comparison::AtLeast,
                min_passing_iops(target, window),
                "IOPS",
            )
            .measuring(Measure::Rate)
            .sampled(due, MIN_RATE_SAMPLES, "I/Os due at the target"),
        );
    }
    rules
}

/// The least achieved transactional IOPS that passes the rule for a target of `target_iops`
/// over `window`: the target less [`ACHIEVED_IOPS_TOLERANCE`], or less one I/O per worker
/// over the window when that is more (an open-loop worker's I/O due just before the window
/// ends completes after it).
pub(crate) fn min_passing_iops(target_iops: f64, window: Window) -> f64 {
    let edges = if window.seconds > 0.0 {
        window.workers as f64 / window.seconds
    } else {
        0.0
    };
    (target_iops - (target_iops * ACHIEVED_IOPS_TOLERANCE).max(edges)).max(0.0)
}

/// The achieved-IOPS rule of `cfg`'s validation as the live views follow it: its databases'
/// read and write classes against the target, passing from [`min_passing_iops`]. `None` when
/// the validation has no such rule at one target: backup and recovery tests, throughput mode
/// (no target), and the search for the largest mailbox count (a target per trial).
pub(crate) fn achieved_iops_watch(cfg: &ExchangeConfig) -> Option<RateWatch> {
    let one_target = matches!(cfg.test, TestType::Performance | TestType::Stress)
        && cfg.throughput_mode.is_none()
        && !cfg.find_max_mailboxes;
    let target = cfg.target_iops(cfg.mailboxes);
    let threads = cfg.threads.unwrap_or(cfg.thread_steps()[0]);
    let window = Window {
        seconds: cfg.duration_ms as f64 / 1e3,
        workers: cfg.threads_of_databases(threads).iter().sum(),
    };
    one_target.then(|| RateWatch {
        rule: ACHIEVED_IOPS_RULE.into(),
        target_iops: target,
        pass_at_iops: min_passing_iops(target, window),
        classes: (0..cfg.databases)
            .flat_map(|db| ["read", "write"].map(|w| class_name(db, w)))
            .collect(),
    })
}

/// Jetstress's latency limits, ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StorageLimits {
    /// Average database read latency.
    pub db_read_ms: f64,
    /// Average log write latency.
    pub log_write_ms: f64,
    /// Maximum database read latency.
    pub max_read_ms: f64,
}

impl StorageLimits {
    /// The limits a job sets (average database read, average log write, maximum database
    /// read), Jetstress's where it sets none; `max_read_default_ms` is the test type's maximum.
    pub(crate) fn of(
        db_read: Option<Dur>,
        log_write: Option<Dur>,
        max_read: Option<Dur>,
        max_read_default_ms: f64,
    ) -> StorageLimits {
        let ms = |d: Option<Dur>, default: f64| d.map_or(default, |d| d.0.as_secs_f64() * 1e3);
        StorageLimits {
            db_read_ms: ms(db_read, super::DB_READ_AVG_LIMIT_MS),
            log_write_ms: ms(log_write, super::LOG_WRITE_AVG_LIMIT_MS),
            max_read_ms: ms(max_read, max_read_default_ms),
        }
    }
}

/// Per database: average read and log write latency (the log rule also without log writes
/// when `logs_expected`) and maximum read latency, each not measured when it rests on fewer
/// than [`MIN_LATENCY_SAMPLES`] I/Os.
pub(crate) fn storage_rules(
    dbs: &[DatabaseFigures],
    limits: &StorageLimits,
    logs_expected: bool,
) -> Vec<Rule> {
    let ms = |ns: f64| ns / 1e6;
    let mut rules = Vec::new();
    for d in dbs {
        rules.push(
            Rule::judge(
                format!("{} average database read latency", d.name),
                ms(d.db_read_latency_ns.mean),
                Comparison::AtMost,
                limits.db_read_ms,
                "ms",
            )
            .measuring(Measure::MeanLatency)
            .sampled(d.db_reads, MIN_LATENCY_SAMPLES, "database reads"),
        );
        if d.log_writes_per_s > 0.0 || logs_expected {
            rules.push(
                Rule::judge(
                    format!("{} average log write latency", d.name),
                    ms(d.log_write_latency_ns.mean),
                    Comparison::AtMost,
                    limits.log_write_ms,
                    "ms",
                )
                .measuring(Measure::MeanLatency)
                .sampled(d.log_writes, MIN_LATENCY_SAMPLES, "log writes"),
            );
        }
        rules.push(
            Rule::judge(
                format!("{} maximum database read latency", d.name),
                ms(d.db_read_latency_ns.max as f64),
                Comparison::AtMost,
                limits.max_read_ms,
                "ms",
            )
            .measuring(Measure::MaxLatency)
            .sampled(d.db_reads, MIN_LATENCY_SAMPLES, "database reads"),
        );
    }
    rules
}

/// The rule on the achieved rate: at least the target, less [`ACHIEVED_IOPS_TOLERANCE`] for the
/// measured window's edges (the threshold says how much that is).
const ACHIEVED_IOPS_RULE: &str = "achieved transactional IOPS";
