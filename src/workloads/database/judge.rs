//! Judging a database run: each file's figures from the run's classes, and the verdict rules
//! (the engine's latency limits on data-file reads, data-file writes and log writes, no
//! errors, the target rates achieved).

use super::jobs::{LOG_CLASS, data_class};
use super::section::FileFigures;
use super::{ACHIEVED_SHARE, DatabaseConfig, Durability};
use crate::results::ClassResult;
use crate::results::verdict::{Comparison, MIN_LATENCY_SAMPLES, Measure, Rule};
use crate::stats::databases::LatencyBrief;
use crate::stats::summary::DirSummary;
use std::collections::BTreeMap;

/// Latency limits, ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limits {
    /// Average data-file read latency.
    pub data_read_ms: f64,
    /// Average data-file write latency (steady and checkpoint writes together).
    pub data_write_ms: f64,
    /// Average log write latency (until durable: with fdatasync, the write and its flush).
    pub log_write_ms: f64,
}

/// The rule on the achieved data-file IOPS.
pub(crate) const ACHIEVED_IOPS_RULE: &str = "achieved data-file IOPS";
/// The rule on the achieved transaction rate (commits made durable a second).
pub(crate) const ACHIEVED_TPS_RULE: &str = "achieved transaction rate";
/// The rule on the log writes.
pub(crate) const LOG_RULE: &str = "average log write latency";

/// Each data file's figures and the log's, from a run's classes.
pub(crate) fn file_figures(
    cfg: &DatabaseConfig,
    classes: &BTreeMap<String, ClassResult>,
) -> Vec<FileFigures> {
    let mut files: Vec<FileFigures> = (0..cfg.data_files)
        .map(|n| {
            let get = |what: &str| classes.get(&data_class(n, what));
            let mut f = FileFigures {
                name: format!("data{}", n + 1),
                path: cfg.data_path(n).display().to_string(),
                role: "data".into(),
                ..Default::default()
            };
            if let Some(c) = get("read") {
                f.reads_per_s = c.read.iops;
                f.read_latency_ns = LatencyBrief::of(&c.read.latency_ns);
                f.errors += errors(c);
            }
            let steady = get("write").map(|c| &c.write);
            let checkpoint = get("checkpoint").map(|c| &c.write);
            if let Some(w) = steady {
                f.writes_per_s = w.iops;
                f.write_latency_ns = LatencyBrief::of(&w.latency_ns);
            }
            if let Some(w) = checkpoint {
                f.checkpoint_writes_per_s = w.iops;
                f.checkpoint_latency_ns = LatencyBrief::of(&w.latency_ns);
            }
            f.data_write_mean_ns = mean_of(&[steady, checkpoint]);
            for what in ["write", "checkpoint", "scan"] {
                f.errors += get(what).map_or(0, errors);
            }
            if let Some(c) = get("scan") {
                f.scan_mb_per_s = c.read.bytes_per_s / 1e6;
                f.scan_latency_ns = LatencyBrief::of(&c.read.latency_ns);
            }
            f
        })
        .collect();
    let mut log = FileFigures {
        name: "log".into(),
        path: cfg.log_file().display().to_string(),
        role: "log".into(),
        ..Default::default()
    };
    if let Some(c) = classes.get(LOG_CLASS) {
        log.writes_per_s = c.write.iops;
        log.write_latency_ns = LatencyBrief::of(&c.write.latency_ns);
        log.write_bytes_avg = if c.write.ops > 0 {
            c.write.bytes as f64 / c.write.ops as f64
        } else {
            0.0
        };
        log.flush_latency_ns = LatencyBrief::of(&c.flush.latency_ns);
        log.errors = errors(c);
        log.log_durable_mean_ns = match cfg.engine.model().durability {
            Durability::Dsync => c.write.latency_ns.mean,
            Durability::Fdatasync => c.write.latency_ns.mean + c.flush.latency_ns.mean,
        };
    }
    files.push(log);
    files
}

/// I/O errors of a class, every direction.
fn errors(c: &ClassResult) -> u64 {
    c.read.errors + c.write.errors + c.flush.errors
}

/// The mean latency of several directions' I/Os together, ns (weighted by their counts).
fn mean_of(dirs: &[Option<&DirSummary>]) -> f64 {
    let (ops, sum) = dirs.iter().flatten().fold((0u64, 0.0), |(n, s), d| {
        (n + d.ops, s + d.latency_ns.mean * d.ops as f64)
    });
    if ops == 0 { 0.0 } else { sum / ops as f64 }
}

/// What a run's rules rest on: its measured seconds (each rate times them is a count of
/// I/Os) and, when the profile has checkpoints, how many bursts finished in them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Evidence {
    /// Measured seconds.
    pub seconds: f64,
    /// Checkpoint bursts finished (`None`: the profile has none).
    pub bursts: Option<u64>,
}

/// The verdict rules of a run at `target_tps`: per data file the average read and write
/// latency, the log's average write latency (until durable), no I/O errors, and the achieved
/// data-file IOPS and transaction rate. A latency rule on fewer I/Os than it needs is not
/// measured, and so is the data-file write rule of a profile with checkpoints when none
/// finished: it judges the checkpoint's writes too.
pub(crate) fn rules(
    cfg: &DatabaseConfig,
    files: &[FileFigures],
    errors: u64,
    target_tps: f64,
    (achieved_iops, achieved_tps): (f64, f64),
    evidence: Evidence,
) -> Vec<Rule> {
    let ms = |ns: f64| ns / 1e6;
    let count = |per_s: f64| (per_s * evidence.seconds).round() as u64;
    let l = &cfg.limits;
    let mut rules = Vec::new();
    for f in files.iter().filter(|f| f.role == "data") {
        rules.push(
            Rule::judge(
                format!("{} average data-file read latency", f.name),
                ms(f.read_latency_ns.mean),
                Comparison::AtMost,
                l.data_read_ms,
                "ms",
            )
            .measuring(Measure::MeanLatency)
            .sampled(count(f.reads_per_s), MIN_LATENCY_SAMPLES, "data-file reads"),
        );
        let mut write = Rule::judge(
            format!("{} average data-file write latency", f.name),
            ms(f.data_write_mean_ns),
            Comparison::AtMost,
            l.data_write_ms,
            "ms",
        )
        .measuring(Measure::MeanLatency)
        .sampled(
            count(f.writes_per_s + f.checkpoint_writes_per_s),
            MIN_LATENCY_SAMPLES,
            "data-file writes",
        );
        if let Some(bursts) = evidence.bursts {
            write = write.sampled(bursts, 1, "checkpoint bursts");
        }
        rules.push(write);
    }
    if let Some(log) = files.iter().find(|f| f.role == "log") {
        rules.push(
            Rule::judge(
                LOG_RULE,
                ms(log.log_durable_mean_ns),
                Comparison::AtMost,
                l.log_write_ms,
                "ms",
            )
            .measuring(Measure::MeanLatency)
            .sampled(count(log.writes_per_s), MIN_LATENCY_SAMPLES, "log writes"),
        );
    }
    rules.push(Rule::judge(
        crate::results::verdict::IO_ERRORS,
        errors as f64,
        Comparison::AtMost,
        0.0,
        "errors",
    ));
    rules.push(
        Rule::judge(
            ACHIEVED_IOPS_RULE,
            achieved_iops,
            Comparison::AtLeast,
            cfg.data_iops(target_tps) * ACHIEVED_SHARE,
            "IOPS",
        )
        .measuring(Measure::Rate),
    );
    rules.push(
        Rule::judge(
            ACHIEVED_TPS_RULE,
            achieved_tps,
            Comparison::AtLeast,
            target_tps * ACHIEVED_SHARE,
            "transactions/s",
        )
        .measuring(Measure::Rate),
    );
    rules
}
