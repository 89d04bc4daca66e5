//! etcd's disk check in the views ([`crate::report::view::View`]): the same rows, formatted
//! the same way, in the terminal summary and the HTML report: the log written, the rate of
//! synced writes and the fdatasync time's percentiles against their limits, and the sync
//! time's histogram (a table in both, and a bar chart in the HTML report, id `etcd-sync`).

use crate::report::svg::{self, Axis, Bars};
use crate::report::view::View;
use crate::results::RunResult;
use crate::units::{format_count, format_ns, format_pct, format_rate, format_seconds, format_size};
use crate::workloads::etcd::section::EtcdResult;
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

/// etcd's disk check's view.
pub(crate) struct EtcdView;

impl View for EtcdView {
    fn console(&self, r: &RunResult, out: &mut String) {
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
    }

    fn html(&self, r: &RunResult) -> Markup {
        match &r.etcd {
            Some(e) => etcd_html(e),
            None => html! {},
        }
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
