//! The Exchange validation's rows, shared by its console lines and its HTML sections: the
//! test's own rows (backup, recovery), the cache comparison's, and the trials'.

use crate::report::tables::apart;
use crate::units::{
    format_count, format_mb_per_s, format_ns, format_number, format_pct, format_rate,
    format_seconds, format_size,
};
use crate::workloads::exchange::section::ExchangeResult;

/// What a backup or recovery test found, as rows (what, text) the console and the HTML report
/// both show: what was read or replayed, in how long, and for a backup how long a full backup
/// of the databases' real size takes at that rate. Empty for the transactional tests.
pub(super) fn test_rows(x: &ExchangeResult) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    let built = (x.capacity_fraction < 1.0).then(|| format_pct(x.capacity_fraction * 100.0));
    if let Some(b) = &x.backup {
        let per_db: Vec<String> = (b.mb_per_s_per_database.iter())
            .map(|v| format_mb_per_s(v * 1e6))
            .collect();
        rows.push((
            "read",
            format!(
                "read {} in {}{}, in {} reads",
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
                "at {} in all ({} per database)",
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
                "replayed {} log files per database in {}: {} per log file ({} page reads and {} page writes each)",
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

/// Rows of the cache comparison (console and HTML): a heading, the value without the cache
/// and the value with it.
pub(super) fn cache_comparison_rows(
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
pub(super) fn cache_comparison_sentence(
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

/// The cells of a trial of thread tuning or of the search after its purpose, mailboxes and
/// threads (console and HTML): target and achieved IOPS (with the digits that show a miss),
/// the worst read, log and maximum read latency (`—` where the trial timed none), its length
/// and its result with the rules that did not pass.
pub(super) fn trial_cells(t: &crate::workloads::exchange::section::Trial) -> [String; 7] {
    let (target, achieved) = apart(t.target_iops, t.achieved_iops, format_rate, "");
    let ms = |v: f64| {
        if v > 0.0 {
            format_ns(v * 1e6)
        } else {
            "—".to_string()
        }
    };
    let result = match (t.pass, t.result.as_str()) {
        (true, _) => "pass".to_string(),
        (false, "" | "FAIL") => format!("FAIL ({})", t.failed_rules.join("; ")),
        (false, other) => format!("{other} ({})", t.failed_rules.join("; ")),
    };
    [
        target,
        achieved,
        ms(t.db_read_latency_ms),
        ms(t.log_write_latency_ms),
        ms(t.max_read_latency_ms),
        format_seconds(t.seconds),
        result,
    ]
}

/// What a search found, as every view says it: `4,900 mailboxes`, or, when no count passed,
/// `none (down to 31 mailboxes, every count tried failed)` — never "0 mailboxes".
pub(super) fn max_mailboxes_text(
    max: u64,
    trials: &[crate::workloads::exchange::section::Trial],
) -> String {
    if max > 0 {
        return format!("{} mailboxes", format_count(max));
    }
    match trials.iter().map(|t| t.mailboxes).min() {
        Some(least) => format!(
            "none (every count tried, down to {}, failed)",
            format_count(least)
        ),
        None => "none".to_string(),
    }
}
