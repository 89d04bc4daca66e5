//! A cache tier in the report: its setup (a synthetic hit delay marked as such), what it
//! served and wrote back, each tier's latency, and its time series.
//!
//! Chart ids (and series names): tier-hits-N (`read hit %`), tier-latency-N (`cache read
//! mean`, `backing read mean`), tier-traffic-N (`filled MB/s`, `written back MB/s`), N the
//! tier's index in the results' `cache_tiers`.

use super::escape;
use crate::report::svg::{self, LineOptions};
use crate::stats::histogram::LatencySummary;
use crate::stats::tier::{TierInterval, TierResult};
use crate::units::{format_count, format_ns, format_pct, format_rate, format_size};
use std::fmt::Write as _;

/// Every cache tier of a run.
pub(super) fn tiers_section(o: &mut String, tiers: &[TierResult]) {
    for (n, t) in tiers.iter().enumerate() {
        tier(o, n, t);
    }
}

fn tier(o: &mut String, n: usize, t: &TierResult) {
    let c = &t.totals;
    let rows = [
        ("cached target", escape(&t.target)),
        ("cache device", escape(&t.device)),
        (
            "size",
            format!(
                "{} ({} lines of {})",
                format_size(t.cache_bytes),
                format_count(t.cache_bytes / t.line_bytes.max(1)),
                format_size(t.line_bytes)
            ),
        ),
        ("policy", escape(&t.policy)),
        ("writes", format!("write-{}", escape(&t.write))),
        (
            "sequential bypass",
            t.sequential_bypass_bytes.map_or("none".into(), |b| {
                format!("streams over {}", format_size(b))
            }),
        ),
        (
            "hit delay",
            t.synthetic_hit_delay_us.map_or("none".into(), |d| {
                format!(
                    "<strong>SYNTHETIC</strong>: {} added to every hit",
                    format_ns(d * 1000.0)
                )
            }),
        ),
        (
            "read hits",
            format!(
                "{} ({} of {})",
                format_pct(t.read_hit_pct),
                format_count(c.read_hits),
                format_count(c.reads)
            ),
        ),
        (
            "writes to the cache device",
            format!(
                "{} of {}",
                format_count(c.write_hits),
                format_count(c.writes)
            ),
        ),
        (
            "bypassed, spanning, waited",
            format!(
                "{}, {}, {}",
                format_count(c.bypassed),
                format_count(c.spanning),
                format_count(c.held)
            ),
        ),
        ("filled", format_size(c.fill_bytes)),
        (
            "written back",
            format!(
                "{} during the run (dirty above {}), {} after it",
                format_size(c.destage_bytes),
                format_pct(t.dirty_target_pct),
                format_size(t.drain.bytes)
            ),
        ),
        ("evictions", format_count(c.evictions)),
    ];
    let _ = write!(
        o,
        "<h2>Cache tier: {}</h2><div class=\"table\"><table data-table=\"tier-{n}\">",
        escape(&t.target)
    );
    for (k, v) in rows {
        let _ = write!(o, "<tr><th>{k}</th><td>{v}</td></tr>");
    }
    if let Some(e) = &t.drain.error {
        let _ = write!(
            o,
            "<tr><th>write-back after the run</th><td><strong>FAILED</strong>: {}</td></tr>",
            escape(e)
        );
    }
    o.push_str("</table></div><div class=\"table\"><table><tr><th>tier I/O</th><th>mean</th><th>p50</th><th>p99</th><th>max</th></tr>");
    let l = &t.latency;
    for (name, s) in [
        ("cache device reads", &l.cache_read),
        ("cache device writes", &l.cache_write),
        ("backing target reads", &l.backing_read),
        ("backing target writes", &l.backing_write),
    ] {
        let Some(s): &Option<LatencySummary> = s else {
            continue;
        };
        let _ = write!(
            o,
            "<tr><th>{name}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            format_ns(s.mean),
            format_ns(s.p50 as f64),
            format_ns(s.p99 as f64),
            format_ns(s.max as f64)
        );
    }
    o.push_str("</table></div>");
    charts(o, n, t);
}

fn charts(o: &mut String, n: usize, t: &TierResult) {
    if t.series.is_empty() {
        return;
    }
    let step = t
        .series
        .get(1)
        .map_or(1.0, |i| i.t_s - t.series[0].t_s)
        .max(1e-3);
    let line = |f: &dyn Fn(&TierInterval) -> Option<f64>| -> Vec<(f64, f64)> {
        t.series
            .iter()
            .filter_map(|i| f(i).map(|v| (i.t_s, v)))
            .collect()
    };
    let mut chart = |id: String,
                     title: &str,
                     y: &str,
                     series: Vec<(&str, Vec<(f64, f64)>)>,
                     format: fn(f64) -> String| {
        let opts = LineOptions {
            y_format: Some(format),
            ..Default::default()
        };
        o.push_str(&svg::time_chart(&id, title, y, series, &opts));
    };
    chart(
        format!("tier-hits-{n}"),
        "Read hits, % of reads in each interval",
        "%",
        vec![(
            "read hit %",
            line(&|i| (i.counts.reads > 0).then_some(i.read_hit_pct)),
        )],
        format_pct,
    );
    chart(
        format!("tier-latency-{n}"),
        "Mean read latency of each tier",
        "latency",
        vec![
            (
                "cache read mean",
                line(&|i| i.cache_read_mean_us.map(|v| v * 1e3)),
            ),
            (
                "backing read mean",
                line(&|i| i.backing_read_mean_us.map(|v| v * 1e3)),
            ),
        ],
        format_ns,
    );
    chart(
        format!("tier-traffic-{n}"),
        "The tier's own traffic: fills and write-backs",
        "MB/s",
        vec![
            (
                "filled MB/s",
                line(&|i| Some(i.counts.fill_bytes as f64 / step / 1e6)),
            ),
            (
                "written back MB/s",
                line(&|i| Some(i.counts.destage_bytes as f64 / step / 1e6)),
            ),
        ],
        format_rate,
    );
}
