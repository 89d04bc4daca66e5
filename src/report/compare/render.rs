//! A comparison shown: side-by-side tables for the terminal, and a self-contained HTML page
//! with the tables and charts (built with maud's templates: every label, metric and figure
//! inserted as text).

use super::Comparison;
use crate::report::svg::{self, Axis};
use maud::{Markup, html};
use std::fmt::Write as _;

/// Lays out rows of cells in columns: the first left-aligned, columns in `left` too, the
/// others right-aligned.
fn columns(rows: &[Vec<String>], left: &dyn Fn(usize) -> bool) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, s) in r.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = widths[i].saturating_sub(s.chars().count());
            if i == 0 || left(i) {
                line.push_str(s);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(s);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The comparison as console tables.
pub(crate) fn console(c: &Comparison) -> String {
    let mut out = String::new();
    let others = c.labels.get(1..).unwrap_or(&[]);
    let _ = writeln!(
        out,
        "storlab compare · baseline {} vs {} · noise threshold {}% (or the repeated steps' own CV)",
        c.labels.first().map(String::as_str).unwrap_or("-"),
        others.join(", "),
        c.noise_pct
    );
    if !c.job_differences.is_empty() {
        let _ = writeln!(out, "\nwarning: the jobs differ:");
        for d in &c.job_differences {
            let _ = writeln!(out, "  {d}");
        }
    }
    for n in &c.notes {
        let _ = writeln!(out, "note: {n}");
    }
    for t in &c.tables {
        let mut rows = Vec::new();
        let mut head = vec![t.title.clone(), c.labels[0].clone()];
        for l in others {
            head.extend([l.clone(), "diff".into(), String::new()]);
        }
        rows.push(head);
        for r in &t.rows {
            let mut line = vec![r.name.clone(), r.unit.format(r.baseline)];
            for x in &r.others {
                line.extend([
                    r.unit.format(x.value),
                    crate::units::format_change_pct(x.diff_pct),
                    x.mark.as_str().into(),
                ]);
            }
            rows.push(line);
        }
        out.push('\n');
        out.push_str(&columns(&rows, &|i| i >= 2 && (i - 2) % 3 == 2));
    }
    out
}

const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #59636e; --line: #d1d9e0; --better: #1a7f37; --worse: #d1242f; --noise: #818b98; --warn-bg: #fff8c5; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --better: #3fb950; --worse: #f85149; --noise: #7d8590; --warn-bg: #272115; } }
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg); background: var(--bg); margin: 2em auto; max-width: 76em; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid var(--line); }
div.table { overflow-x: auto; max-width: 100%; margin: 0.5em 0 1em; } table { border-collapse: collapse; } th, td { padding: 0.2em 0.7em; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { font-weight: 600; } td:first-child, th:first-child { text-align: left; }
.muted { color: var(--muted); } .better { color: var(--better); font-weight: 700; } .worse { color: var(--worse); font-weight: 700; } .noise { color: var(--noise); }
.warning { background: var(--warn-bg); border-left: 4px solid var(--worse); padding: 0.4em 1em; margin: 1em 0; }
figure.chart { margin: 1em 0; } svg { max-width: 100%; height: auto; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } table, figure { break-inside: avoid; } div.table { overflow: visible; } }
";

/// A chart from [`svg`] in its figure, named `id` (`id` and `data-chart`).
fn figure(id: &str, chart: Markup) -> Markup {
    html! {
        figure class="chart" id=(id) data-chart=(id) { (chart) }
    }
}

/// The comparison's charts: per step (when the runs had steps), IOPS over time, the latency
/// distribution.
fn charts(c: &Comparison) -> Vec<Markup> {
    let mut charts = Vec::new();
    if !c.steps.is_empty() {
        charts.push(figure(
            "cmp-steps-iops",
            svg::bar_chart(
                "IOPS per step",
                &c.steps,
                &Axis::linear("IOPS"),
                &c.step_iops,
            ),
        ));
        charts.push(figure(
            "cmp-steps-mbps",
            svg::bar_chart(
                "MB/s per step",
                &c.steps,
                &Axis::linear("MB/s"),
                &c.step_mbps,
            ),
        ));
    }
    if !c.iops_over_time.is_empty() {
        // From the start of the measurement to the end of the longest run, not beyond.
        let end = c
            .iops_over_time
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .fold(0.0, f64::max);
        charts.push(figure(
            "cmp-iops-over-time",
            svg::line_chart_with(
                "IOPS over time",
                &Axis::linear("measured time, s"),
                &Axis::linear("IOPS"),
                &c.iops_over_time,
                &svg::LineOptions {
                    x_range: Some((0.0, end)),
                    ..Default::default()
                },
            ),
        ));
    }
    if let Some(dir) = &c.latency_direction {
        charts.push(figure(
            "cmp-latency-distribution",
            svg::line_chart(
                &format!("{dir} latency distribution"),
                &Axis::log("1/(1 − percentile): 10 = p90, 100 = p99, 1000 = p99.9"),
                &Axis::log("latency, µs"),
                &c.latency_curves,
            ),
        ));
    }
    charts
}

/// The comparison's tables: a metric (or step) a row, the baseline's figure, then each other
/// run's figure and its difference, marked better, worse or noise.
fn tables(c: &Comparison) -> Markup {
    let others = c.labels.get(1..).unwrap_or(&[]);
    html! {
        @for t in &c.tables {
            h2 { (t.title) }
            div class="table" {
                table {
                    thead {
                        tr {
                            th { (if t.title.starts_with("steps") { "step" } else { "metric" }) }
                            th { (c.labels[0]) }
                            @for l in others { th { (l) } th { "diff" } }
                        }
                    }
                    tbody {
                        @for r in &t.rows {
                            tr {
                                td { (r.name) }
                                td { (r.unit.format(r.baseline)) }
                                @for x in &r.others {
                                    @let m = x.mark.as_str();
                                    td { (r.unit.format(x.value)) }
                                    td class=(m) title={ (m) " (noise threshold " (crate::units::format_pct(x.noise_pct)) ")" } {
                                        (crate::units::format_change_pct(x.diff_pct)) " " (m)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The comparison as a self-contained HTML page.
pub(crate) fn html(c: &Comparison) -> String {
    let baseline = c.labels.first().map(String::as_str).unwrap_or("-");
    let others = c.labels.get(1..).unwrap_or(&[]);
    let title = format!("storlab compare: {baseline} vs {}", others.join(", "));
    let charts = charts(c);
    let body = html! {
        h1 { (title) }
        p class="muted" {
            "Baseline: " strong { (baseline) } ". Differences are relative to the baseline; within "
            (crate::units::format_pct(c.noise_pct))
            " (or, for repeated steps, the repetitions' own coefficient of variation when larger) they are noise. Higher is better for IOPS and MB/s, lower for latency."
        }
        @if !c.job_differences.is_empty() {
            div class="warning" id="job-differences" {
                strong { "The jobs differ:" }
                ul { @for d in &c.job_differences { li { (d) } } }
            }
        }
        @for n in &c.notes { p class="muted" { "Note: " (n) } }
        (tables(c))
        @if !charts.is_empty() {
            h2 { "Charts" }
            @for chart in &charts { (chart) }
        }
    };
    crate::report::html::page(&title, STYLE, body)
}
