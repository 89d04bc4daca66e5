//! The per-database table that two rooms' views show, in the console and the HTML report: an
//! Exchange validation's and simulated users' (one type of their sections,
//! `DatabaseFigures`). Beside [`super::tables`], which holds the tables of every run; each
//! room's own rows are in its view.

use super::tables::{known_mean, known_ns};
use crate::stats::databases::DatabaseFigures;
use crate::units::{format_known_ns, format_number};

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
