//! A cache tier in the report: its setup (a synthetic hit delay marked as such), what it
//! served and wrote back, each tier's latency, and its time series.
//!
//! Chart ids (and series names): tier-hits-N (`read hit %`), tier-latency-N (`cache read
//! mean`, `backing read mean`), tier-traffic-N (`filled MB/s`, `written back MB/s`), N the
//! tier's index in the results' `cache_tiers`.

use crate::report::svg::{self, LineOptions};
use crate::stats::histogram::LatencySummary;
use crate::stats::tier::{TierInterval, TierResult};
use crate::units::{format_count, format_ns, format_pct, format_rate, format_size};
use maud::{Markup, html};

/// Every cache tier of a run.
pub(super) fn tiers_section(tiers: &[TierResult]) -> Markup {
    html! {
        @for (n, t) in tiers.iter().enumerate() { (tier(n, t)) }
    }
}

/// A tier's setup and what it did: a heading and a value a row.
fn setup_rows(t: &TierResult) -> Vec<(&'static str, Markup)> {
    let c = &t.totals;
    let setup = [
        ("cached target", t.target.clone()),
        ("cache device", t.device.clone()),
        (
            "size",
            format!(
                "{} ({} lines of {})",
                format_size(t.cache_bytes),
                format_count(t.cache_bytes / t.line_bytes.max(1)),
                format_size(t.line_bytes)
            ),
        ),
        ("policy", t.policy.clone()),
        ("writes", format!("write-{}", t.write)),
        (
            "sequential bypass",
            t.sequential_bypass_bytes.map_or("none".into(), |b| {
                format!("streams over {}", format_size(b))
            }),
        ),
    ];
    let figures = [
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
    let hit_delay = html! {
        @match t.synthetic_hit_delay_us {
            Some(d) => { strong { "SYNTHETIC" } ": " (format_ns(d * 1000.0)) " added to every hit" }
            None => "none",
        }
    };
    let text = |(k, v): (&'static str, String)| (k, html! { (v) });
    let mut rows: Vec<(&str, Markup)> = setup.into_iter().map(text).collect();
    rows.push(("hit delay", hit_delay));
    rows.extend(figures.into_iter().map(text));
    if let Some(e) = &t.drain.error {
        rows.push((
            "write-back after the run",
            html! { strong { "FAILED" } ": " (e) },
        ));
    }
    rows
}

fn tier(n: usize, t: &TierResult) -> Markup {
    let l = &t.latency;
    let latencies: Vec<(&str, &LatencySummary)> = [
        ("cache device reads", &l.cache_read),
        ("cache device writes", &l.cache_write),
        ("backing target reads", &l.backing_read),
        ("backing target writes", &l.backing_write),
    ]
    .into_iter()
    .filter_map(|(name, s)| s.as_ref().map(|s| (name, s)))
    .collect();
    html! {
        h2 { "Cache tier: " (t.target) }
        div class="table" {
            table data-table={ "tier-" (n) } {
                (super::labelled_rows(setup_rows(t)))
            }
        }
        div class="table" {
            table {
                (super::heading_row(&["tier I/O", "mean", "p50", "p99", "max"]))
                @for (name, s) in latencies {
                    tr {
                        th { (name) }
                        td { (format_ns(s.mean)) }
                        td { (format_ns(s.p50 as f64)) }
                        td { (format_ns(s.p99 as f64)) }
                        td { (format_ns(s.max as f64)) }
                    }
                }
            }
        }
        (charts(n, t))
    }
}

fn charts(n: usize, t: &TierResult) -> Markup {
    if t.series.is_empty() {
        return html! {};
    }
    let step = t
        .series
        .get(1)
        .map_or(1.0, |i| i.t_s - t.series[0].t_s)
        .max(1e-3);
    // What a point covers (older files: one interval, the first two points apart).
    let secs = |i: &TierInterval| i.interval_s.filter(|&s| s > 0.0).unwrap_or(step);
    let line = |f: &dyn Fn(&TierInterval) -> Option<f64>| -> Vec<(f64, f64)> {
        t.series
            .iter()
            .filter_map(|i| f(i).map(|v| (i.t_s, v)))
            .collect()
    };
    let chart = |id: String,
                 title: &str,
                 y: &str,
                 series: Vec<(&str, Vec<(f64, f64)>)>,
                 format: fn(f64) -> String| {
        let opts = LineOptions {
            y_format: Some(format),
            ..Default::default()
        };
        svg::time_chart(&id, title, y, series, &opts)
    };
    let hits = chart(
        format!("tier-hits-{n}"),
        "Read hits, % of reads in each interval",
        "%",
        vec![(
            "read hit %",
            line(&|i| (i.counts.reads > 0).then_some(i.read_hit_pct)),
        )],
        format_pct,
    );
    let latency = chart(
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
    let traffic = chart(
        format!("tier-traffic-{n}"),
        "The tier's own traffic: fills and write-backs",
        "MB/s",
        vec![
            (
                "filled MB/s",
                line(&|i| Some(i.counts.fill_bytes as f64 / secs(i) / 1e6)),
            ),
            (
                "written back MB/s",
                line(&|i| Some(i.counts.destage_bytes as f64 / secs(i) / 1e6)),
            ),
        ],
        format_rate,
    );
    html! { (hits) (latency) (traffic) }
}
