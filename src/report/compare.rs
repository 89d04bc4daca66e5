//! Comparison of several results files: every common metric side by side with its relative
//! difference, coloured by whether higher or lower is better, differences within the runs'
//! own spread marked as noise, and a list of what differs between the jobs.

use crate::report::html::escape;
use crate::report::svg::{self, Axis, Bars, Series};
use crate::results::RunResult;
use crate::results::steps::StepResult;
use crate::stats::Dir;
use crate::stats::histogram::Histogram;
use crate::stats::repetition::Spread;
use crate::stats::summary::{ClassSummary, DirSummary};
use crate::stats::timeseries::IntervalPhase;
use crate::units::{format_duration, format_ns, format_rate, format_size};
use std::fmt::Write as _;
use std::time::Duration;

/// What a metric measures, which says how it is printed and which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Operations per second (higher is better).
    Iops,
    /// MB/s, 10^6 bytes/s (higher is better).
    MbPerS,
    /// Latency, ns (lower is better).
    Ns,
}

impl Unit {
    /// Whether a larger value is an improvement.
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Unit::Ns)
    }

    /// The value as a person reads it.
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Iops => format_rate(v),
            Unit::MbPerS => format!("{v:.2}"),
            Unit::Ns => format_ns(v),
        }
    }
}

/// How a run's value compares with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// An improvement beyond noise.
    Better,
    /// A degradation beyond noise.
    Worse,
    /// Within the noise threshold.
    Noise,
}

impl Mark {
    /// `better`, `worse` or `noise`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Better => "better",
            Mark::Worse => "worse",
            Mark::Noise => "noise",
        }
    }
}

/// One non-baseline run's value of a metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// The value.
    pub value: f64,
    /// Relative difference from the baseline, percent (infinite when the baseline is 0).
    pub diff_pct: f64,
    /// The noise threshold applied, percent.
    pub noise_pct: f64,
    /// Better, worse or noise.
    pub mark: Mark,
}

/// One metric of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Metric (`IOPS`, `p99`...) or, in step tables, the step label.
    pub name: String,
    /// Its unit.
    pub unit: Unit,
    /// The baseline's value.
    pub baseline: f64,
    /// Every other run, in order.
    pub others: Vec<Cell>,
}

/// A group of metrics (`totals read`, `class db write`, `steps: IOPS`).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Heading.
    pub title: String,
    /// Metrics.
    pub rows: Vec<Row>,
}

/// A comparison of runs (the first is the baseline).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Run labels, in order.
    pub labels: Vec<String>,
    /// The noise threshold asked for, percent.
    pub noise_pct: f64,
    /// What differs between the jobs: `engine: io_uring vs psync`.
    pub job_differences: Vec<String>,
    /// Why parts were not compared.
    pub notes: Vec<String>,
    /// The metric tables.
    pub tables: Vec<Table>,
    /// Step labels, when every run has the same steps (else empty).
    pub steps: Vec<String>,
    /// IOPS per step, one [`Bars`] per run (with 95% CI when repeated).
    pub step_iops: Vec<Bars>,
    /// MB/s per step, one [`Bars`] per run.
    pub step_mbps: Vec<Bars>,
    /// IOPS over time, one series per run (x seconds).
    pub iops_over_time: Vec<Series>,
    /// Direction of the latency distributions (`read` or `write`), when drawn.
    pub latency_direction: Option<String>,
    /// Latency distributions: x = 1/(1 − percentile), y = µs; one series per run.
    pub latency_curves: Vec<Series>,
}

/// Relative difference of `value` from `base`, percent.
fn diff_pct(base: f64, value: f64) -> f64 {
    if base == 0.0 {
        if value == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(value - base)
        }
    } else {
        (value - base) / base.abs() * 100.0
    }
}

fn cell(base: f64, value: f64, unit: Unit, noise_pct: f64) -> Cell {
    let diff = diff_pct(base, value);
    let mark = if diff.is_nan() || diff.abs() <= noise_pct {
        Mark::Noise
    } else if (diff > 0.0) == unit.higher_is_better() {
        Mark::Better
    } else {
        Mark::Worse
    };
    Cell {
        value,
        diff_pct: diff,
        noise_pct,
        mark,
    }
}

/// A repeated step's own noise, percent: the coefficient of variation of its repetitions.
///
/// The CV, rather than the relative half-width of the 95% confidence interval of the mean,
/// because repetitions are usually few: with 2 or 3 of them Student's t (12.7, 4.3) makes the
/// interval many times wider than the whole observed spread, and a step that went from 27k to
/// 9.7k IOPS (repetitions varying by 20%) would still be "noise". The CV is the run-to-run
/// variation itself: a difference smaller than what repeating the same job produces is not a
/// change. With many repetitions it is the more conservative of the two, which suits
/// `--fail-on-regression` (no false alarms).
fn own_spread_pct(s: &Spread) -> f64 {
    if s.n < 2 || !s.cv_pct.is_finite() {
        return 0.0;
    }
    s.cv_pct.max(0.0)
}

type DirMetric = (&'static str, Unit, fn(&DirSummary) -> f64);

const DIR_METRICS: [DirMetric; 8] = [
    ("IOPS", Unit::Iops, |d| d.iops),
    ("MB/s", Unit::MbPerS, |d| d.bytes_per_s / 1e6),
    ("mean", Unit::Ns, |d| d.latency_ns.mean),
    ("p50", Unit::Ns, |d| d.latency_ns.p50 as f64),
    ("p95", Unit::Ns, |d| d.latency_ns.p95 as f64),
    ("p99", Unit::Ns, |d| d.latency_ns.p99 as f64),
    ("p99.9", Unit::Ns, |d| d.latency_ns.p99_9 as f64),
    ("max", Unit::Ns, |d| d.latency_ns.max as f64),
];

/// Tables of one class summary per direction with operations in every run.
fn class_tables(title: &str, sums: &[ClassSummary], noise_pct: f64, out: &mut Vec<Table>) {
    for dir in Dir::ALL {
        let ds: Vec<&DirSummary> = sums.iter().map(|s| s.dir(dir)).collect();
        if ds.iter().any(|d| d.ops == 0) {
            continue;
        }
        let rows = DIR_METRICS
            .iter()
            .map(|(name, unit, f)| {
                let base = f(ds[0]);
                Row {
                    name: (*name).into(),
                    unit: *unit,
                    baseline: base,
                    others: ds[1..]
                        .iter()
                        .map(|d| cell(base, f(d), *unit, noise_pct))
                        .collect(),
                }
            })
            .collect();
        out.push(Table {
            title: format!("{title} {dir}"),
            rows,
        });
    }
}

/// Latency of a step's reads and writes together (as the steps table prints it).
fn step_latency(s: &StepResult) -> crate::stats::histogram::LatencySummary {
    s.totals.reads_and_writes()
}

type StepMetric = (
    &'static str,
    Unit,
    fn(&StepResult) -> f64,
    fn(&crate::results::steps::Repetitions) -> &Spread,
);

const STEP_METRICS: [StepMetric; 4] = [
    ("IOPS", Unit::Iops, |s| s.totals.iops(), |r| &r.iops),
    (
        "MB/s",
        Unit::MbPerS,
        |s| s.totals.bytes_per_s() / 1e6,
        |r| &r.mb_per_s,
    ),
    (
        "mean",
        Unit::Ns,
        |s| step_latency(s).mean,
        |r| &r.latency_mean_ns,
    ),
    (
        "p99",
        Unit::Ns,
        |s| step_latency(s).p99 as f64,
        |r| &r.latency_p99_ns,
    ),
];

/// Keeps the distinct values, in first-seen order, joined.
fn distinct(values: impl IntoIterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.join(", ")
}

fn pct(v: f64) -> String {
    format!("{v}%")
}

/// The properties of a run whose differences matter when comparing.
fn job_properties(r: &RunResult) -> Vec<(&'static str, String)> {
    let j = &r.job;
    let access = || j.workers.iter().flat_map(|w| w.access.iter());
    let engine = if r.engine.name.is_empty() {
        serde_json::to_value(j.engine)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    } else {
        r.engine.name.clone()
    };
    vec![
        ("storlab version", r.storlab_version.clone()),
        ("engine", engine),
        (
            "duration",
            format_duration(Duration::from_millis(j.duration_ms)),
        ),
        ("ramp", format_duration(Duration::from_millis(j.ramp_ms))),
        ("I/O", if j.buffered { "buffered" } else { "direct" }.into()),
        ("workers", j.workers.len().to_string()),
        (
            "queue depths",
            distinct(j.workers.iter().map(|w| w.queue_depth.to_string())),
        ),
        (
            "block sizes",
            distinct(access().flat_map(|a| {
                std::iter::once(a.block_size_bytes)
                    .chain(a.block_sizes.iter().map(|b| b.0))
                    .map(format_size)
                    .collect::<Vec<_>>()
            })),
        ),
        ("read", distinct(access().map(|a| pct(a.read_pct)))),
        ("random", distinct(access().map(|a| pct(a.random_pct)))),
        (
            "targets",
            distinct(r.targets.iter().map(|t| t.path.clone())),
        ),
        (
            "target sizes",
            distinct(r.targets.iter().map(|t| format_size(t.size_bytes))),
        ),
        (
            "filesystems",
            distinct(r.targets.iter().map(|t| t.filesystem.clone())),
        ),
        ("kernel", r.host.kernel.clone()),
        ("CPU", r.host.cpu_model.clone()),
        ("hostname", r.host.hostname.clone()),
    ]
}

fn job_differences(runs: &[(String, RunResult)]) -> Vec<String> {
    let props: Vec<_> = runs.iter().map(|r| job_properties(&r.1)).collect();
    let mut out = Vec::new();
    for (i, (name, first)) in props[0].iter().enumerate() {
        if props.iter().any(|p| p[i].1 != *first) {
            let values: Vec<&str> = props.iter().map(|p| p[i].1.as_str()).collect();
            out.push(format!("{name}: {}", values.join(" vs ")));
        }
    }
    out
}

/// Compares `runs` (label, results); differences under `noise_pct` (or the runs' own spread
/// from repetitions, when larger) are noise.
pub fn compare(runs: &[(String, RunResult)], noise_pct: f64) -> Comparison {
    let mut c = Comparison {
        labels: runs.iter().map(|r| r.0.clone()).collect(),
        noise_pct,
        job_differences: Vec::new(),
        notes: Vec::new(),
        tables: Vec::new(),
        steps: Vec::new(),
        step_iops: Vec::new(),
        step_mbps: Vec::new(),
        iops_over_time: Vec::new(),
        latency_direction: None,
        latency_curves: Vec::new(),
    };
    if runs.is_empty() {
        return c;
    }
    c.job_differences = job_differences(runs);

    // Totals, then classes present in every run (left out when each run has a single class:
    // it is the totals again).
    let totals: Vec<ClassSummary> = runs.iter().map(|r| r.1.totals.clone()).collect();
    class_tables("totals", &totals, noise_pct, &mut c.tables);
    if runs.iter().any(|r| r.1.classes.len() > 1) {
        for name in runs[0].1.classes.keys() {
            let sums: Option<Vec<ClassSummary>> = runs
                .iter()
                .map(|r| r.1.classes.get(name).map(|cr| cr.summary()))
                .collect();
            match sums {
                Some(sums) => {
                    class_tables(&format!("class {name}"), &sums, noise_pct, &mut c.tables)
                }
                None => c
                    .notes
                    .push(format!("class {name} is not in every run: not compared")),
            }
        }
    }

    // Steps, when every run has the same ones.
    let steps: Vec<&[StepResult]> = runs
        .iter()
        .map(|r| r.1.steps.as_deref().unwrap_or(&[]))
        .collect();
    let labels_of = |s: &[StepResult]| s.iter().map(|x| x.label.clone()).collect::<Vec<_>>();
    let first = labels_of(steps[0]);
    if steps.iter().all(|s| labels_of(s) == first) {
        if !first.is_empty() {
            c.steps = first.clone();
            for (name, unit, value, spread) in STEP_METRICS {
                let rows = (0..first.len())
                    .map(|i| {
                        let base = &steps[0][i];
                        let b = value(base);
                        Row {
                            name: first[i].clone(),
                            unit,
                            baseline: b,
                            others: steps[1..]
                                .iter()
                                .map(|s| {
                                    let own = [base, &s[i]]
                                        .iter()
                                        .filter_map(|x| x.repetitions.as_ref())
                                        .map(|r| own_spread_pct(spread(r)))
                                        .fold(0.0, f64::max);
                                    cell(b, value(&s[i]), unit, noise_pct.max(own))
                                })
                                .collect(),
                        }
                    })
                    .collect();
                c.tables.push(Table {
                    title: format!("steps: {name}"),
                    rows,
                });
            }
            let bars = |value: fn(&StepResult) -> f64,
                        spread: fn(&crate::results::steps::Repetitions) -> &Spread,
                        scale: f64| {
                runs.iter()
                    .zip(&steps)
                    .map(|(r, s)| Bars {
                        name: r.0.clone(),
                        values: s.iter().map(value).collect(),
                        errors: s
                            .iter()
                            .map(|x| {
                                x.repetitions.as_ref().map(|rep| {
                                    let sp = spread(rep);
                                    ((sp.ci95_low / scale).max(0.0), sp.ci95_high / scale)
                                })
                            })
                            .collect(),
                    })
                    .collect::<Vec<_>>()
            };
            c.step_iops = bars(STEP_METRICS[0].2, STEP_METRICS[0].3, 1.0);
            // The repetitions' MB/s spread is already in MB/s.
            c.step_mbps = bars(STEP_METRICS[1].2, STEP_METRICS[1].3, 1.0);
        }
    } else {
        let counts: Vec<String> = steps.iter().map(|s| s.len().to_string()).collect();
        c.notes.push(format!(
            "the runs' steps differ ({} steps): steps not compared",
            counts.join(" vs ")
        ));
    }

    // IOPS over time, against measured time: repetitions and steps each restart their clock,
    // so the intervals are laid end to end.
    c.iops_over_time = runs
        .iter()
        .map(|(label, r)| {
            let mut t_ms = 0u64;
            Series {
                name: label.clone(),
                points: r
                    .timeseries
                    .iter()
                    .filter(|t| t.phase == IntervalPhase::Measure)
                    .map(|t| {
                        t_ms += t.interval_ms;
                        (t_ms as f64 / 1e3, t.total.read.iops + t.total.write.iops)
                    })
                    .collect(),
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect();

    // Latency distributions of the totals' reads (or writes).
    let dir = [Dir::Read, Dir::Write]
        .into_iter()
        .find(|&d| runs.iter().all(|r| r.1.totals.dir(d).ops > 0));
    if let Some(dir) = dir {
        let name = dir.name();
        for (label, r) in runs {
            let d = r.totals.dir(dir);
            let Some(h) = d.histogram.as_ref().and_then(|h| Histogram::decode(h).ok()) else {
                c.notes.push(format!(
                    "{label}: no {name} latency histogram in the results"
                ));
                continue;
            };
            c.latency_curves.push(Series {
                name: label.clone(),
                points: h
                    .percentile_curve()
                    .into_iter()
                    .filter(|p| p.0 < 100.0)
                    .map(|(p, ns)| (1.0 / (1.0 - p / 100.0), ns as f64 / 1e3))
                    .collect(),
            });
        }
        if !c.latency_curves.is_empty() {
            c.latency_direction = Some(name.into());
        }
    }
    c
}

fn format_diff(d: f64) -> String {
    if d.is_finite() {
        format!("{d:+.1}%")
    } else {
        "n/a".into()
    }
}

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
pub fn console(c: &Comparison) -> String {
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
                    format_diff(x.diff_pct),
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
table { border-collapse: collapse; margin: 0.5em 0 1em; } th, td { padding: 0.2em 0.7em; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { font-weight: 600; } td:first-child, th:first-child { text-align: left; }
.muted { color: var(--muted); } .better { color: var(--better); font-weight: 700; } .worse { color: var(--worse); font-weight: 700; } .noise { color: var(--noise); }
.warning { background: var(--warn-bg); border-left: 4px solid var(--worse); padding: 0.4em 1em; margin: 1em 0; }
figure.chart { margin: 1em 0; } svg { max-width: 100%; height: auto; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } table, figure { break-inside: avoid; } }
";

/// Gives a chart from [`svg`] its `data-chart` name (wrapping it when it has no figure).
fn figure(id: &str, chart: String) -> String {
    const OPEN: &str = "<figure class=\"chart\"";
    if chart.starts_with(OPEN) && !chart[..chart.find('>').unwrap_or(0)].contains("data-chart") {
        chart.replacen(OPEN, &format!("{OPEN} id=\"{id}\" data-chart=\"{id}\""), 1)
    } else {
        format!("<figure class=\"chart\" id=\"{id}\" data-chart=\"{id}\">{chart}</figure>")
    }
}

/// The comparison as a self-contained HTML page.
pub fn html(c: &Comparison) -> String {
    let mut out = String::new();
    let others = c.labels.get(1..).unwrap_or(&[]);
    let title = format!(
        "storlab compare: {} vs {}",
        c.labels.first().map(String::as_str).unwrap_or("-"),
        others.join(", ")
    );
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{t}</title><style>{STYLE}{}</style></head><body>\n<h1>{t}</h1>\n<p class=\"muted\">Baseline: <strong>{}</strong>. Differences are relative to the baseline; within {}% (or, for repeated steps, the repetitions' own coefficient of variation when larger) they are noise. Higher is better for IOPS and MB/s, lower for latency.</p>\n",
        svg::STYLE,
        escape(c.labels.first().map(String::as_str).unwrap_or("-")),
        c.noise_pct,
        t = escape(&title),
    );
    if !c.job_differences.is_empty() {
        out.push_str(
            "<div class=\"warning\" id=\"job-differences\"><strong>The jobs differ:</strong><ul>",
        );
        for d in &c.job_differences {
            let _ = write!(out, "<li>{}</li>", escape(d));
        }
        out.push_str("</ul></div>\n");
    }
    for n in &c.notes {
        let _ = writeln!(out, "<p class=\"muted\">Note: {}</p>", escape(n));
    }
    for t in &c.tables {
        let _ = write!(
            out,
            "<h2>{}</h2>\n<table><thead><tr><th>{}</th><th>{}</th>",
            escape(&t.title),
            if t.title.starts_with("steps") {
                "step"
            } else {
                "metric"
            },
            escape(&c.labels[0])
        );
        for l in others {
            let _ = write!(out, "<th>{}</th><th>diff</th>", escape(l));
        }
        out.push_str("</tr></thead><tbody>\n");
        for r in &t.rows {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td>",
                escape(&r.name),
                escape(&r.unit.format(r.baseline))
            );
            for x in &r.others {
                let m = x.mark.as_str();
                let _ = write!(
                    out,
                    "<td>{}</td><td class=\"{m}\" title=\"{m} (noise threshold {:.1}%)\">{} {m}</td>",
                    escape(&r.unit.format(x.value)),
                    x.noise_pct,
                    escape(&format_diff(x.diff_pct)),
                );
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n");
    }
    let mut charts = String::new();
    if !c.steps.is_empty() {
        charts.push_str(&figure(
            "cmp-steps-iops",
            svg::bar_chart(
                "IOPS per step",
                &c.steps,
                &Axis::linear("IOPS"),
                &c.step_iops,
            ),
        ));
        charts.push_str(&figure(
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
        charts.push_str(&figure(
            "cmp-iops-over-time",
            svg::line_chart(
                "IOPS over time",
                &Axis::linear("measured time, s"),
                &Axis::linear("IOPS"),
                &c.iops_over_time,
            ),
        ));
    }
    if let Some(dir) = &c.latency_direction {
        charts.push_str(&figure(
            "cmp-latency-distribution",
            svg::line_chart(
                &format!("{dir} latency distribution"),
                &Axis::log("1/(1 − percentile): 10 = p90, 100 = p99, 1000 = p99.9"),
                &Axis::log("latency, µs"),
                &c.latency_curves,
            ),
        ));
    }
    if !charts.is_empty() {
        out.push_str("<h2>Charts</h2>\n");
        out.push_str(&charts);
        out.push('\n');
    }
    out.push_str("</body></html>\n");
    out
}

/// Throughput falls or latency rises beyond `pct` percent (and beyond noise): one line each.
pub fn regressions(c: &Comparison, pct: f64) -> Vec<String> {
    let mut out = Vec::new();
    for t in &c.tables {
        for r in &t.rows {
            for (i, x) in r.others.iter().enumerate() {
                if x.mark == Mark::Worse && x.diff_pct.abs() > pct {
                    let what = if t.title.starts_with("steps") {
                        format!("{} step {}", t.title, r.name)
                    } else {
                        format!("{} {}", t.title, r.name)
                    };
                    out.push(format!(
                        "{what}: {} {} vs {} {} ({})",
                        c.labels.get(i + 1).map(String::as_str).unwrap_or("?"),
                        r.unit.format(x.value),
                        c.labels[0],
                        r.unit.format(r.baseline),
                        format_diff(x.diff_pct)
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn dir(iops: f64, p99: u64) -> Value {
        let ops = (iops * 2.0) as u64;
        json!({
            "ops": ops, "bytes": ops * 4096, "errors": 0, "iops": iops,
            "bytes_per_s": iops * 4096.0,
            "latency_ns": {
                "min": 10, "mean": p99 as f64 / 3.0, "max": p99 * 10, "stddev": 1.0,
                "p50": p99 / 4, "p90": p99 / 2, "p95": p99 * 2 / 3, "p99": p99,
                "p99_9": p99 * 2, "p99_99": p99 * 3
            }
        })
    }

    fn run(engine: &str, iops: f64, p99: u64) -> RunResult {
        let class = json!({"read": dir(iops, p99), "write": dir(0.0, 0), "flush": dir(0.0, 0)});
        let mut with_durability = class.clone();
        with_durability["write_durability"] = json!("none");
        let mut v = crate::results::sample_json(engine, &["worker"]);
        v["totals"] = class;
        v["classes"] = json!({"worker": with_durability});
        serde_json::from_value(v).expect("a valid results file")
    }

    fn pair(a: RunResult, b: RunResult) -> Vec<(String, RunResult)> {
        vec![("a".into(), a), ("b".into(), b)]
    }

    #[test]
    fn identical_runs_are_noise() {
        let c = compare(
            &pair(run("io_uring", 1000.0, 800), run("io_uring", 1000.0, 800)),
            2.0,
        );
        assert!(c.job_differences.is_empty());
        assert!(!c.tables.is_empty());
        assert!(
            c.tables
                .iter()
                .flat_map(|t| &t.rows)
                .flat_map(|r| &r.others)
                .all(|x| x.mark == Mark::Noise)
        );
        assert!(regressions(&c, 10.0).is_empty());
        assert!(regressions(&c, 0.0).is_empty());
        assert!(console(&c).contains("noise"));
    }

    #[test]
    fn slower_run_is_worse_and_a_regression() {
        let c = compare(
            &pair(run("io_uring", 1000.0, 1000), run("io_uring", 800.0, 1300)),
            2.0,
        );
        let t = &c.tables[0];
        assert_eq!(t.title, "totals read");
        let row = |n: &str| t.rows.iter().find(|r| r.name == n).unwrap();
        let iops = row("IOPS").others[0];
        assert!((iops.diff_pct + 20.0).abs() < 1e-9);
        assert_eq!(iops.mark, Mark::Worse);
        let p99 = row("p99").others[0];
        assert!((p99.diff_pct - 30.0).abs() < 1e-9);
        assert_eq!(p99.mark, Mark::Worse);
        let found = regressions(&c, 10.0);
        assert!(
            found.iter().any(|l| l.starts_with("totals read IOPS:")),
            "{found:?}"
        );
        assert!(
            found.iter().any(|l| l.starts_with("totals read p99:")),
            "{found:?}"
        );
        assert!(regressions(&c, 50.0).is_empty());
        // The other way round it is better.
        let c = compare(
            &pair(run("io_uring", 800.0, 1300), run("io_uring", 1000.0, 1000)),
            2.0,
        );
        assert_eq!(c.tables[0].rows[0].others[0].mark, Mark::Better);
        assert!(regressions(&c, 10.0).is_empty());
        // A large noise threshold hides it.
        let c = compare(
            &pair(run("io_uring", 1000.0, 1000), run("io_uring", 800.0, 1300)),
            40.0,
        );
        assert!(regressions(&c, 10.0).is_empty());
    }

    #[test]
    fn job_differences_are_listed() {
        let c = compare(
            &pair(run("io_uring", 1000.0, 800), run("psync", 1000.0, 800)),
            2.0,
        );
        assert_eq!(
            c.job_differences,
            vec!["engine: io_uring vs psync".to_string()]
        );
        assert!(console(&c).contains("the jobs differ"));
        let page = html(&c);
        assert!(page.contains("engine: io_uring vs psync"));
        assert!(page.contains("class=\"noise\""));
        for bad in ["<script", "src=", "href="] {
            assert!(!page.contains(bad), "{bad}");
        }
    }

    #[test]
    fn repeated_steps_use_their_own_spread() {
        let spread = |mean: f64, half: f64| Spread {
            n: 3,
            mean,
            stddev: half / 2.0,
            min: mean - half,
            max: mean + half,
            ci95_low: mean - half,
            ci95_high: mean + half,
            cv_pct: half / 2.0 / mean * 100.0,
        };
        assert!((own_spread_pct(&spread(1000.0, 200.0)) - 10.0).abs() < 1e-9);
        assert_eq!(own_spread_pct(&Spread::default()), 0.0);
        let step = |iops: f64| {
            let r = run("io_uring", iops, 1000);
            StepResult {
                label: "bs=4KiB".into(),
                totals: r.totals.clone(),
                repetitions: Some(crate::results::steps::Repetitions {
                    iops: spread(iops, iops * 0.2),
                    ..Default::default()
                }),
                ..Default::default()
            }
        };
        let mut a = run("io_uring", 1000.0, 1000);
        let mut b = run("io_uring", 1000.0, 1000);
        a.steps = Some(vec![step(1000.0)]);
        b.steps = Some(vec![step(950.0)]);
        let c = compare(&pair(a, b), 2.0);
        let t = c.tables.iter().find(|t| t.title == "steps: IOPS").unwrap();
        assert_eq!(t.rows[0].others[0].mark, Mark::Noise);
        assert_eq!(c.steps, vec!["bs=4KiB".to_string()]);
        let page = html(&c);
        assert!(page.contains("data-chart=\"cmp-steps-iops\""));
        assert!(page.contains("data-chart=\"cmp-steps-mbps\""));
        assert!(page.contains("data-series=\"b\""));
        // Beyond the repetitions' spread it is a change.
        let mut a = run("io_uring", 1000.0, 1000);
        let mut b = run("io_uring", 1000.0, 1000);
        a.steps = Some(vec![step(1000.0)]);
        b.steps = Some(vec![step(700.0)]);
        let c = compare(&pair(a, b), 2.0);
        let t = c.tables.iter().find(|t| t.title == "steps: IOPS").unwrap();
        assert_eq!(t.rows[0].others[0].mark, Mark::Worse);
        assert!(
            regressions(&c, 10.0)
                .iter()
                .any(|l| l.starts_with("steps: IOPS step bs=4KiB"))
        );
    }
}
