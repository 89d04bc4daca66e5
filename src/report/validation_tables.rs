//! The validations' own tables that the console and the HTML report both show: the
//! per-database table of an Exchange validation (or simulated users), a trial's cells, what
//! a mailbox search found, a database run's checkpoints. Beside [`super::tables`], which holds
//! the tables of every run.

use super::tables::{apart, known_mean, known_ns};
use crate::units::{
    format_count, format_known_ns, format_ns, format_number, format_rate, format_seconds,
};
use crate::workloads::exchange::section::DatabaseFigures;

/// A database run's checkpoints, as the console and the HTML report say them: how many
/// bursts finished and how long they took, or, when none did, that none was measured and why.
pub(crate) fn checkpoint_text(c: &crate::workloads::database::section::Checkpoints) -> String {
    if c.bursts == 0 {
        return format!(
            "none finished in the measured time (one every {}, of {} page writes per data file): the data-file write rules are not measured without one; run for longer than {}",
            crate::units::format_ms(c.interval_ms),
            c.pages_per_burst,
            crate::units::format_ms(c.interval_ms)
        );
    }
    format!(
        "{} burst{} of {} page writes per data file, {} on average, the longest {}",
        c.bursts,
        if c.bursts == 1 { "" } else { "s" },
        c.pages_per_burst,
        format_seconds(c.average_seconds),
        format_seconds(c.longest_seconds)
    )
}

/// The per-database table (console and HTML): its headings and rows. A kind of I/O no
/// database did (log writes in a recovery test, log reads in a performance test, maintenance
/// when it is off) has no columns, rather than columns of zeros; a latency nothing timed is
/// `—`.
pub(crate) fn database_table(dbs: &[DatabaseFigures]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    type Cell = fn(&DatabaseFigures) -> String;
    let any = |f: fn(&DatabaseFigures) -> bool| dbs.iter().any(f);
    let mut columns: Vec<(&'static str, Cell)> = vec![
        ("db", |d| d.name.clone()),
        ("reads/s", |d| format_number(d.db_reads_per_s)),
        ("read avg", |d| {
            format_known_ns(known_mean(
                d.db_read_latency_ns.mean,
                d.db_read_latency_ns.max,
            ))
        }),
        ("read p95", |d| {
            format_known_ns(known_ns(d.db_read_latency_ns.p95))
        }),
        ("read p99", |d| {
            format_known_ns(known_ns(d.db_read_latency_ns.p99))
        }),
        ("writes/s", |d| format_number(d.db_writes_per_s)),
        ("write avg", |d| {
            format_known_ns(known_mean(
                d.db_write_latency_ns.mean,
                d.db_write_latency_ns.max,
            ))
        }),
    ];
    if any(|d| d.log_writes_per_s > 0.0 || d.log_write_latency_ns.max > 0) {
        columns.extend([
            (
                "log writes/s",
                (|d| format_number(d.log_writes_per_s)) as Cell,
            ),
            ("log avg", |d| {
                format_known_ns(known_mean(
                    d.log_write_latency_ns.mean,
                    d.log_write_latency_ns.max,
                ))
            }),
            ("log p99", |d| {
                format_known_ns(known_ns(d.log_write_latency_ns.p99))
            }),
        ]);
    }
    if any(|d| d.log_reads_per_s > 0.0) {
        columns.push(("log reads/s", |d| format_number(d.log_reads_per_s)));
    }
    if any(|d| d.maintenance_mb_per_s > 0.0 || d.maintenance_reads_per_s > 0.0) {
        columns.push(("maintenance MB/s", |d| {
            format_number(d.maintenance_mb_per_s)
        }));
    }
    columns.push(("errors", |d| d.errors.to_string()));
    let rows = dbs
        .iter()
        .map(|d| columns.iter().map(|(_, f)| f(d)).collect())
        .collect();
    (columns.into_iter().map(|(h, _)| h).collect(), rows)
}

/// The cells of a trial of thread tuning or of the search after its purpose, mailboxes and
/// threads (console and HTML): target and achieved IOPS (with the digits that show a miss),
/// the worst read, log and maximum read latency (`—` where the trial timed none), its length
/// and its result with the rules that did not pass.
pub(crate) fn trial_cells(t: &crate::workloads::exchange::section::Trial) -> [String; 7] {
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
pub(crate) fn max_mailboxes_text(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The recovery test's table: its log reads are a column; the log writes and maintenance
    /// it did not do are no columns (not zeros), and an untimed latency is `—`.
    #[test]
    fn a_database_table_shows_the_io_each_test_did() {
        let recovery = DatabaseFigures {
            name: "db1".into(),
            db_reads_per_s: 4512.0,
            db_writes_per_s: 2256.0,
            log_reads_per_s: 141.0,
            ..Default::default()
        };
        let (headings, rows) = database_table(std::slice::from_ref(&recovery));
        assert!(headings.contains(&"log reads/s"), "{headings:?}");
        assert!(!headings.contains(&"log writes/s") && !headings.contains(&"maintenance MB/s"));
        let at = |h: &str| headings.iter().position(|x| *x == h).unwrap();
        assert_eq!(rows[0][at("log reads/s")], "141");
        assert_eq!(rows[0][at("read avg")], "—");
        let mut performance = recovery.clone();
        performance.log_reads_per_s = 0.0;
        performance.log_writes_per_s = 12.0;
        performance.maintenance_mb_per_s = 5.0;
        let (headings, _) = database_table(&[performance]);
        assert!(headings.contains(&"log writes/s") && headings.contains(&"maintenance MB/s"));
        assert!(!headings.contains(&"log reads/s"));
    }

    /// A run that read nothing through the page cache says so, not "0% … 0 B read".
    #[test]
    fn a_page_cache_that_was_never_read_says_so() {
        let mut out = String::new();
        let p = crate::results::pagecache::PageCache {
            memcg_limit_bytes: None,
            cached_bytes: None,
            read_bytes: 0,
            device_read_bytes: 0,
            observed_hit_pct: 0.0,
        };
        crate::report::console::page_cache_line(&mut out, &p);
        assert!(out.contains("nothing was read through it"), "{out}");
        assert!(!out.contains("0 B read"), "{out}");
    }
}
