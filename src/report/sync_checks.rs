//! etcd's disk check and the WAL sync comparison in the reports: the same rows, formatted the
//! same way, in the terminal summary and the HTML report. etcd's: the log written, the rate
//! of synced writes and the fdatasync time's percentiles against their limits, and the sync
//! time's histogram (a table in both, and a bar chart in the HTML report, id `etcd-sync`).
//! The WAL sync comparison's: a row per method (operations per second and latency, or why it
//! was not measured) and the fastest method per number of writes per sync (chart id
//! `wal-sync-ops`).

use crate::report::svg::{self, Axis, Bars};
use crate::results::RunResult;
use crate::units::{format_count, format_ns, format_pct, format_rate, format_seconds, format_size};
use crate::workloads::etcd::section::EtcdResult;
use crate::workloads::walsync::section::WalSyncResult;
use maud::{Markup, html};
use std::fmt::Write as _;

/// etcd's figures as (label, value) rows.
pub(crate) fn etcd_rows(e: &EtcdResult) -> Vec<(&'static str, String)> {
    let s = &e.sync_latency_ns;
    vec![
        (
            "log written",
            format!(
                "{} of {} writes of {} bytes ({} file), each followed by fdatasync",
                format_count(e.writes),
                format_count(e.planned_writes),
                e.write_bytes,
                format_size(e.file_bytes)
            ),
        ),
        (
            "synced writes",
            format!(
                "{} fdatasync calls in {}: {}/s (at least {}/s required)",
                format_count(e.syncs),
                format_seconds(e.seconds),
                format_rate(e.syncs_per_s),
                format_rate(e.min_syncs_per_s)
            ),
        ),
        (
            "fdatasync time",
            format!(
                "mean {} · p50 {} · p90 {} · p99 {} (at most {} required) · p99.9 {} · max {}",
                format_ns(s.mean),
                format_ns(s.p50 as f64),
                format_ns(s.p90 as f64),
                format_ns(s.p99 as f64),
                format_ns(e.sync_p99_limit_ns as f64),
                format_ns(s.p99_9 as f64),
                format_ns(s.max as f64)
            ),
        ),
        (
            "write time",
            format!(
                "mean {} · p99 {} (into the page cache)",
                format_ns(e.write_latency_ns.mean),
                format_ns(e.write_latency_ns.p99 as f64)
            ),
        ),
    ]
}

/// etcd's sync-time histogram as (range, syncs, share of syncs) rows.
pub(crate) fn etcd_histogram(e: &EtcdResult) -> Vec<[String; 3]> {
    let total: u64 = e.sync_histogram.iter().map(|b| b.count).sum();
    let mut from = 0;
    e.sync_histogram
        .iter()
        .map(|b| {
            let range = if from == 0 {
                format!("≤ {}", format_ns(b.up_to_ns as f64))
            } else {
                format!(
                    "{} – {}",
                    format_ns(from as f64),
                    format_ns(b.up_to_ns as f64)
                )
            };
            from = b.up_to_ns;
            [
                range,
                format_count(b.count),
                format_pct(if total == 0 {
                    0.0
                } else {
                    b.count as f64 * 100.0 / total as f64
                }),
            ]
        })
        .collect()
}

/// The WAL sync table's columns.
pub(crate) const WAL_COLUMNS: [&str; 6] = ["method", "writes/sync", "ops/s", "mean", "p50", "p99"];

/// The WAL sync table's rows: measured methods' figures, or why a method was not measured.
pub(crate) fn wal_rows(w: &WalSyncResult) -> Vec<([String; 6], Option<String>)> {
    w.methods
        .iter()
        .map(|m| {
            let l = &m.latency_ns;
            let cells = if m.unavailable.is_some() {
                [
                    m.name(),
                    m.writes_per_sync.to_string(),
                    "n/a".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]
            } else {
                [
                    m.name(),
                    m.writes_per_sync.to_string(),
                    format_rate(m.ops_per_s),
                    format_ns(l.mean),
                    format_ns(l.p50 as f64),
                    format_ns(l.p99 as f64),
                ]
            };
            (cells, m.unavailable.clone())
        })
        .collect()
}

/// `fastest with 1 write per sync: fdatasync (912/s)` lines.
pub(crate) fn wal_fastest(w: &WalSyncResult) -> Vec<String> {
    w.fastest
        .iter()
        .map(|f| {
            format!(
                "fastest with {} write{} of {} per sync: {} ({} ops/s)",
                f.writes_per_sync,
                if f.writes_per_sync == 1 { "" } else { "s" },
                format_size(w.block_bytes),
                f.method,
                format_rate(f.ops_per_s)
            )
        })
        .collect()
}

/// The terminal summary's part.
pub(crate) fn console(out: &mut String, r: &RunResult) {
    const LABEL: usize = 16;
    if let Some(e) = &r.etcd {
        let _ = writeln!(out, "\netcd disk check");
        for (label, text) in etcd_rows(e) {
            let _ = writeln!(out, "{label:<LABEL$}{text}");
        }
        let _ = writeln!(out, "fdatasync time histogram");
        for [range, count, share] in etcd_histogram(e) {
            let _ = writeln!(out, "  {range:<22}{count:>10}{share:>9}");
        }
    }
    if let Some(w) = &r.wal_sync {
        let rows = wal_rows(w);
        // Each column as wide as its widest cell (a method's name may be long: `open_datasync
        // +O_DIRECT`), two spaces apart.
        let width = |i: usize| {
            (rows.iter().map(|(c, _)| c[i].chars().count()))
                .chain([WAL_COLUMNS[i].chars().count()])
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..WAL_COLUMNS.len()).map(width).collect();
        let line = |cells: [&str; 6]| {
            let mut l = format!("{:<w$}", cells[0], w = widths[0]);
            for (c, w) in cells.iter().zip(&widths).skip(1) {
                let _ = write!(l, "  {c:>w$}");
            }
            l
        };
        let _ = writeln!(
            out,
            "\nWAL sync methods ({} writes; an operation is its writes and its sync)\n{}",
            format_size(w.block_bytes),
            line(WAL_COLUMNS)
        );
        for (cells, why) in &rows {
            let [a, b, c, d, e, f] = cells;
            let _ = write!(out, "{}", line([a, b, c, d, e, f].map(String::as_str)));
            match why {
                Some(why) => {
                    let _ = writeln!(out, "  {why}");
                }
                None => out.push('\n'),
            }
        }
        for line in wal_fastest(w) {
            let _ = writeln!(out, "{line}");
        }
    }
}

/// The HTML report's section.
pub(crate) fn html_section(r: &RunResult) -> Markup {
    html! {
        @if let Some(e) = &r.etcd { (etcd_html(e)) }
        @if let Some(w) = &r.wal_sync { (wal_html(w)) }
    }
}

fn etcd_html(e: &EtcdResult) -> Markup {
    let bins = etcd_histogram(e);
    let categories: Vec<String> = bins.iter().map(|b| b[0].clone()).collect();
    let counts = Bars {
        name: "syncs".into(),
        values: e.sync_histogram.iter().map(|b| b.count as f64).collect(),
        errors: Vec::new(),
    };
    html! {
        section id="etcd" {
            h2 { "etcd disk check" }
            div.table { table {
                @for (label, text) in etcd_rows(e) {
                    tr { td { (label) } td.text { (text) } }
                }
            } }
            h3 { "fdatasync time histogram" }
            div.table { table {
                tr { th { "fdatasync time" } th { "syncs" } th { "share" } }
                @for [range, count, share] in &bins {
                    tr { td { (range) } td { (count) } td { (share) } }
                }
            } }
            (svg::figure("etcd-sync", svg::bar_chart("fdatasync time histogram", &categories, &Axis::linear("syncs"), &[counts])))
        }
    }
}

fn wal_html(w: &WalSyncResult) -> Markup {
    let measured: Vec<&crate::workloads::walsync::section::MethodResult> = w
        .methods
        .iter()
        .filter(|m| m.unavailable.is_none())
        .collect();
    let categories: Vec<String> = measured
        .iter()
        .map(|m| format!("{} ×{}", m.name(), m.writes_per_sync))
        .collect();
    let ops = Bars {
        name: "ops/s".into(),
        values: measured.iter().map(|m| m.ops_per_s).collect(),
        errors: Vec::new(),
    };
    html! {
        section id="wal-sync" {
            h2 { "WAL sync methods" }
            p { "Writes of " (format_size(w.block_bytes)) " at the start of a " (format_size(w.file_bytes)) " file; an operation is its writes and its sync, each method measured for " (format_seconds(w.seconds_per_method)) "." }
            div.table { table {
                tr { @for c in WAL_COLUMNS { th { (c) } } th.text { "note" } }
                @for (cells, why) in wal_rows(w) {
                    tr {
                        @for c in &cells { td { (c) } }
                        td.text { (why.unwrap_or_default()) }
                    }
                }
            } }
            ul { @for line in wal_fastest(w) { li { (line) } } }
            (svg::figure("wal-sync-ops", svg::bar_chart("operations per second", &categories, &Axis::linear("ops/s"), &[ops])))
        }
    }
}
