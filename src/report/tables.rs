//! Tables more than one renderer shows (console, HTML, CSV): the same columns and cells
//! everywhere.

use crate::results::RunResult;
use crate::stats::summary::DirSummary;
use crate::units::{
    format_count, format_mb_per_s, format_ns, format_number, format_pct, format_rate,
    format_seconds, format_size,
};
use crate::workloads::exchange::section::{DatabaseFigures, ExchangeResult};

/// Column headings of a class's direction (after its class and direction names).
pub(crate) const DIR_COLUMNS: [&str; 9] = [
    "IOPS", "MB/s", "mean", "p50", "p95", "p99", "p99.9", "max", "errors",
];

/// The cells of one direction's figures, under [`DIR_COLUMNS`].
pub(crate) fn dir_cells(d: &DirSummary) -> [String; 9] {
    let l = &d.latency_ns;
    [
        format_rate(d.iops),
        format_number(d.bytes_per_s / 1e6),
        format_ns(l.mean),
        format_ns(l.p50 as f64),
        format_ns(l.p95 as f64),
        format_ns(l.p99 as f64),
        format_ns(l.p99_9 as f64),
        format_ns(l.max as f64),
        d.errors.to_string(),
    ]
}

/// Column headings of the per-database table (console and HTML).
pub(crate) const DATABASE_COLUMNS: [&str; 12] = [
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
pub(crate) fn database_cells(d: &DatabaseFigures) -> [String; 12] {
    [
        d.name.clone(),
        format_number(d.db_reads_per_s),
        format_ns(d.db_read_latency_ns.mean),
        format_ns(d.db_read_latency_ns.p95 as f64),
        format_ns(d.db_read_latency_ns.p99 as f64),
        format_number(d.db_writes_per_s),
        format_ns(d.db_write_latency_ns.mean),
        format_number(d.log_writes_per_s),
        format_ns(d.log_write_latency_ns.mean),
        format_ns(d.log_write_latency_ns.p99 as f64),
        format_number(d.maintenance_mb_per_s),
        d.errors.to_string(),
    ]
}

/// What storlab and the machine did with their CPUs over the measured phase: storlab as a share
/// of one CPU, the machine as busy against idle, and iowait as the part of idle it is (idle time
/// with I/O pending, not load).
pub(crate) fn cpu_sentence(r: &RunResult) -> String {
    let c = &r.host_cpu;
    let cpus = match r.host.cpus {
        0 => String::new(),
        1 => " (1 CPU)".into(),
        n => format!(" ({n} CPUs)"),
    };
    let iowait = if c.system_iowait_pct >= 0.5 {
        format!(
            "; {} of it waiting for I/O (iowait: idle time with I/O pending, not load)",
            format_pct(c.system_iowait_pct)
        )
    } else {
        String::new()
    };
    format!(
        "storlab used {} of one CPU · the machine{cpus} was {} busy, {} idle{iowait}",
        format_pct(c.process_pct()),
        format_pct(c.machine_busy_pct()),
        format_pct(c.machine_idle_pct()),
    )
}

/// Column headings of the simulated users' tasks table (console and HTML).
pub(crate) const TASK_COLUMNS: [&str; 9] = [
    "task",
    "planned",
    "completed",
    "failed",
    "mean",
    "p50",
    "p95",
    "p99",
    "max",
];

/// The row of the tasks table, formatted (latency from the time each task was due).
pub(crate) fn task_cells(t: &crate::workloads::users::section::TaskResult) -> [String; 9] {
    let l = &t.latency;
    [
        t.task.clone(),
        format_count(t.planned),
        format_count(t.completed),
        format_count(t.failed),
        format_ns(l.mean),
        format_ns(l.p50 as f64),
        format_ns(l.p95 as f64),
        format_ns(l.p99 as f64),
        format_ns(l.max as f64),
    ]
}

/// Rows of the cache comparison (console and HTML): a heading, the value without the cache
/// and the value with it.
pub(crate) fn cache_comparison_rows(
    c: &crate::workloads::exchange::section::CacheComparison,
) -> Vec<[String; 3]> {
    use crate::workloads::exchange::section::CacheSide;
    let verdict = |s: &CacheSide| match s.pass {
        Some(true) => "PASS".to_string(),
        Some(false) => "FAIL".to_string(),
        None => "not judged".to_string(),
    };
    let row = |name: &str, f: &dyn Fn(&CacheSide) -> String| {
        [name.to_string(), f(&c.uncached), f(&c.cached)]
    };
    let mut rows = Vec::new();
    if c.uncached.max_mailboxes.is_some() || c.cached.max_mailboxes.is_some() {
        rows.push(row("maximum mailboxes that pass", &|s| {
            s.max_mailboxes.map_or("-".into(), |m| m.to_string())
        }));
    }
    rows.extend([
        row("verdict of the reported test", &verdict),
        row("mailboxes tested", &|s| s.mailboxes.to_string()),
        row("threads per database", &|s| {
            s.threads_per_database.to_string()
        }),
        row("achieved transactional IOPS", &|s| {
            format_rate(s.achieved_iops)
        }),
        row("database read avg (worst)", &|s| {
            format_ns(s.db_read_latency_ms * 1e6)
        }),
        row("log write avg (worst)", &|s| {
            format_ns(s.log_write_latency_ms * 1e6)
        }),
        row("cache read hits", &|s| {
            s.read_hit_pct.map_or("-".into(), format_pct)
        }),
        row("runs", &|s| s.runs.to_string()),
    ]);
    rows
}

/// One sentence on what the cache changed: mailboxes (after a search) and IOPS, as ratios.
pub(crate) fn cache_comparison_sentence(
    c: &crate::workloads::exchange::section::CacheComparison,
) -> String {
    let ratio = |off: f64, on: f64| {
        if off > 0.0 {
            format!("× {}", format_number(on / off))
        } else {
            "from none".to_string()
        }
    };
    let mailboxes = match (c.uncached.max_mailboxes, c.cached.max_mailboxes) {
        (Some(off), Some(on)) if off > 0 && on > 0 => format!(
            "{on} mailboxes pass with the cache, {off} without ({}); ",
            ratio(off as f64, on as f64)
        ),
        (Some(off), Some(on)) => format!(
            "{} mailboxes pass with the cache, {} without (a search whose every full-length confirmation failed finds none); ",
            on, off
        ),
        _ => String::new(),
    };
    format!(
        "{mailboxes}transactional IOPS {} → {} ({}); results without the cache: {}",
        format_rate(c.uncached.achieved_iops),
        format_rate(c.cached.achieved_iops),
        ratio(c.uncached.achieved_iops, c.cached.achieved_iops),
        c.uncached_results
    )
}

/// Column headings of the hosts table of a run over many hosts (console and HTML).
pub(crate) const HOST_COLUMNS: [&str; 8] = [
    "rank",
    "host",
    "read IOPS",
    "write IOPS",
    "read p99",
    "write p99",
    "verdict",
    "results",
];

/// A row of the hosts table.
pub(crate) fn host_cells(h: &crate::results::hosts::HostResult) -> [String; 8] {
    let verdict = match (h.present, h.pass, &h.interrupted) {
        (false, _, _) => "MISSING".to_string(),
        (true, _, Some(_)) => "STOPPED".to_string(),
        (true, Some(true), None) => "PASS".to_string(),
        (true, Some(false), None) => "FAIL".to_string(),
        (true, None, None) => "-".to_string(),
    };
    let t = &h.totals;
    [
        h.rank.to_string(),
        h.host.clone(),
        format_rate(t.read.iops),
        format_rate(t.write.iops),
        format_ns(t.read.latency_ns.p99 as f64),
        format_ns(t.write.latency_ns.p99 as f64),
        verdict,
        h.results_path.clone(),
    ]
}

/// What a backup or recovery test found, as rows (what, text) the console and the HTML report
/// both show: what was read or replayed, in how long, and for a backup how long a full backup
/// of the databases' real size takes at that rate. Empty for the transactional tests.
pub(crate) fn test_rows(x: &ExchangeResult) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    let built = (x.capacity_fraction < 1.0).then(|| format_pct(x.capacity_fraction * 100.0));
    if let Some(b) = &x.backup {
        let per_db: Vec<String> = (b.mb_per_s_per_database.iter())
            .map(|v| format_mb_per_s(v * 1e6))
            .collect();
        rows.push((
            "read",
            format!(
                "{} in {}{}, in {} reads",
                format_size(b.read_bytes),
                format_seconds(b.read_seconds),
                if b.complete {
                    String::new()
                } else {
                    format!(
                        ": {} of {} databases completely",
                        b.databases_complete, x.database_count
                    )
                },
                format_size(b.block_size_bytes)
            ),
        ));
        rows.push((
            "rate",
            format!(
                "{} in all ({} per database)",
                format_mb_per_s(b.mb_per_s_total * 1e6),
                per_db.join(" / ")
            ),
        ));
        rows.push((
            "full backup",
            match &built {
                Some(pct) => format!(
                    "the databases were built at {pct} of their real size: at that rate a full backup of their real {} takes {}",
                    format_size(b.real_bytes),
                    format_seconds(b.full_backup_real_seconds)
                ),
                None => format!(
                    "a full backup of the databases' {} takes {} at that rate",
                    format_size(b.real_bytes),
                    format_seconds(b.full_backup_real_seconds)
                ),
            },
        ));
    }
    if let Some(rc) = &x.recovery {
        rows.push((
            "replayed",
            format!(
                "{} log files per database in {}: {} per log file ({} page reads and {} page writes each)",
                rc.log_files,
                format_seconds(rc.seconds),
                format_seconds(rc.seconds_per_log_file),
                rc.reads_per_log_file,
                rc.writes_per_log_file
            ),
        ));
        if let Some(pct) = &built {
            rows.push((
                "scale",
                format!(
                    "the databases were built at {pct} of their real size: a cache holds more of them than it would in production, so page reads may be faster than there"
                ),
            ));
        }
    }
    rows
}

/// What each class's figures span in a sequence (`a: step 0, 3 s`), then every class
/// together's (`(all): every step, 6 s`); `None` for a run of one step.
pub(crate) fn class_spans(r: &RunResult) -> Option<Vec<String>> {
    r.steps.as_ref()?;
    let mut spans: Vec<String> = (r.classes.iter())
        .filter_map(|(name, c)| {
            let steps = c.steps.as_ref()?;
            let which = match steps.as_slice() {
                [] => "no step".to_string(),
                [one] => format!("step {one}"),
                many => format!(
                    "steps {}",
                    many.iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            Some(format!(
                "{name}: {which}, {}",
                crate::units::format_ms(c.measured_ms.unwrap_or(r.measured_ms))
            ))
        })
        .collect();
    if spans.is_empty() {
        return None;
    }
    spans.push(format!(
        "(all): every step, {}",
        crate::units::format_ms(r.measured_ms)
    ));
    Some(spans)
}
