//! The WAL sync comparison in the views ([`crate::report::view::View`]): a row per method
//! (operations per second and latency, or why it was not measured) and the fastest method per
//! number of writes per sync (chart id `wal-sync-ops`), in the terminal summary and the HTML
//! report.

use crate::report::svg::{self, Axis, Bars};
use crate::report::view::View;
use crate::results::RunResult;
use crate::units::{format_ns, format_rate, format_seconds, format_size};
use crate::workloads::walsync::section::WalSyncResult;
use maud::{Markup, html};
use std::fmt::Write as _;

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

/// The WAL sync comparison's view.
pub(crate) struct WalSyncView;

impl View for WalSyncView {
    fn console(&self, r: &RunResult, out: &mut String) {
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

    fn html(&self, r: &RunResult) -> Markup {
        match &r.wal_sync {
            Some(w) => wal_html(w),
            None => html! {},
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
