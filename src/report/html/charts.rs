//! The report's charts: the time series (IOPS, MB/s, latency, CPU, devices) with the ramp
//! marked, the latency percentile plot, and for sequences throughput and latency against the
//! cycled parameter, the rate curve and the steady-state rounds.

use super::svg::{self, Axis, Band, Bars, LineOptions, Series};
use crate::results::RunResult;
use crate::results::steps::{Repetitions, SteadyResult, StepKind, StepResult};
use crate::results::timeseries::Charted;
use crate::stats::histogram::Histogram;
use crate::stats::host::CpuPercent;
use crate::stats::summary::ClassSummary;
use crate::stats::timeseries::{IntervalDir, IntervalPhase, IntervalRecord};
use crate::units::{format_count, format_ns, format_pct, format_rate, format_size};
use maud::{Markup, html};
use std::collections::BTreeSet;

/// Latency tick labels (values in ns).
fn ns_tick(v: f64) -> String {
    format_ns(v)
}

/// Percent tick labels.
fn pct_tick(v: f64) -> String {
    format_pct(v)
}

/// The time of each record, seconds, continuous across the runs of a sequence (each run's
/// records restart at 0: later runs are shifted past the end of the earlier ones).
pub(super) fn record_times(recs: &[IntervalRecord]) -> Vec<f64> {
    let (mut offset, mut last) = (0.0, 0.0);
    let mut key = None;
    let mut out = Vec::with_capacity(recs.len());
    for (i, rec) in recs.iter().enumerate() {
        let t = rec.t_end_ms as f64 / 1e3;
        let k = (rec.step, rec.label);
        if i > 0 && (t < last || (Some(&k) != key.as_ref() && t <= last)) {
            offset += last;
        }
        key = Some(k);
        last = t;
        out.push(offset + t);
    }
    out
}

fn series(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: name.into(),
        points,
    }
}

/// The ramps of a run on the charts' time axis, (start, end) in seconds: one per run of a
/// sequence that ramped (its consecutive `ramp` intervals, from the start of the first).
pub(super) fn ramp_spans(recs: &[IntervalRecord], times: &[f64]) -> Vec<(f64, f64)> {
    let mut spans: Vec<(f64, f64)> = Vec::new();
    let mut in_ramp = false;
    for (rec, &t) in recs.iter().zip(times) {
        let ramp = rec.phase == IntervalPhase::Ramp;
        if ramp {
            match spans.last_mut() {
                Some(span) if in_ramp => span.1 = t,
                _ => spans.push(((t - rec.interval_ms as f64 / 1e3).max(0.0), t)),
            }
        }
        in_ramp = ramp;
    }
    spans
}

/// The interval records of a run and the time of each on the charts' time axis.
pub(super) struct Timeline<'a> {
    records: &'a [IntervalRecord],
    /// Seconds, continuous across the runs of a sequence ([`record_times`]).
    times: Vec<f64>,
    axis: Axis,
    /// Shaded ramps (one per run that ramped).
    ramps: Vec<Band>,
}

impl<'a> Timeline<'a> {
    /// The timeline of a run's records.
    pub(super) fn of(records: &'a [IntervalRecord]) -> Timeline<'a> {
        let times = record_times(records);
        let ramps = ramp_spans(records, &times)
            .into_iter()
            .map(|(from, to)| Band {
                from,
                to,
                label: "ramp".into(),
            })
            .collect();
        Timeline {
            records,
            times,
            axis: Axis::linear("time (s)"),
            ramps,
        }
    }

    /// The time axis: from the run's start (0 s) to the end of its last interval.
    pub(super) fn range(&self) -> (f64, f64) {
        (0.0, self.times.last().copied().unwrap_or(0.0))
    }

    /// Options every time chart starts from: the time axis' range and the ramps shaded.
    fn options(&self) -> LineOptions {
        LineOptions {
            x_range: Some(self.range()),
            bands: self.ramps.clone(),
            ..Default::default()
        }
    }
}

/// About the most points a chart over time draws per series (at most twice as many): a longer
/// series is read from its file one record at a time and merged into this many points.
pub(super) const CHART_POINTS: usize = 300;

/// The charts over time: throughput, latency, CPU and device utilisation, from the series read
/// one record at a time (from the NDJSON file when the results file does not hold it) and
/// merged into at most about [`CHART_POINTS`] points; what was merged, or why there are no
/// charts, said above them.
pub(super) fn time_charts(r: &RunResult) -> Markup {
    if r.timeseries.is_empty() {
        return html! {};
    }
    let charted = r.timeseries.downsampled(CHART_POINTS);
    let note = series_note(&charted);
    if charted.points.is_empty() {
        return html! { @if let Some(n) = note { p class="warn" data-series-note { (n) } } };
    }
    let timeline = Timeline::of(&charted.points);
    html! {
        @if let Some(n) = note { p class="muted" data-series-note { (n) } }
        @for chart in throughput_over_time(r, &timeline) { (chart) }
        (latency_over_time(r, &timeline))
        (cpu_over_time(&timeline))
        (device_util_over_time(&timeline))
    }
}

/// What the charts over time leave out or merge: the series that could not be read (or not
/// all of it), or the intervals merged into each point.
fn series_note(c: &Charted) -> Option<String> {
    let points = c.points.len();
    if let Some(unread) = &c.unread {
        let shown = match points {
            0 => "no charts over time".to_string(),
            _ => format!(
                "the charts over time show the {} intervals read before the problem",
                c.intervals
            ),
        };
        return Some(match unread.missing {
            true => format!(
                "{}: it is not beside this results file (moved without it?), so there are no charts over time; put it back beside the results file to see them",
                unread.why
            ),
            false => format!("{}; {shown}", unread.why),
        });
    }
    (c.widest > 1).then(|| {
        format!(
            "The charts over time show {points} points for {} intervals: each point merges up to {} consecutive intervals of its run and phase (I/Os added, rates over their time, mean latency over their I/Os, device use and CPU over their time); a merged point's p99 is the largest of its intervals' p99s, an upper bound of the p99 over its span, and its maximum the largest of theirs.",
            format_count(c.intervals),
            c.widest
        )
    })
}

/// IOPS and MB/s over time: the total, and each class when there are several.
fn throughput_over_time(r: &RunResult, timeline: &Timeline) -> Vec<Markup> {
    let several = r.classes.len() > 1;
    let mut charts = Vec::new();
    for (id, title, unit, f) in [
        (
            "iops-over-time",
            "IOPS over time",
            "I/Os per second",
            (|d: &IntervalDir| d.iops) as fn(&IntervalDir) -> f64,
        ),
        (
            "mbps-over-time",
            "MB/s over time",
            "MB/s (10⁶ bytes/s)",
            |d: &IntervalDir| d.bytes_per_s / 1e6,
        ),
    ] {
        let mut s = vec![series(
            "total",
            timeline
                .records
                .iter()
                .zip(&timeline.times)
                .map(|(rec, &t)| (t, f(&rec.total.read) + f(&rec.total.write)))
                .collect(),
        )];
        if several {
            for name in r.classes.keys() {
                s.push(series(
                    name.clone(),
                    timeline
                        .records
                        .iter()
                        .zip(&timeline.times)
                        .map(|(rec, &t)| {
                            let c = rec.classes.get(name).copied().unwrap_or_default();
                            (t, f(&c.read) + f(&c.write))
                        })
                        .collect(),
                ));
            }
        }
        charts.push(svg::figure(
            id,
            svg::line_chart_with(
                title,
                &timeline.axis,
                &Axis::linear(unit),
                &s,
                &timeline.options(),
            ),
        ));
    }
    charts
}

/// Latency over time: mean (solid) and p99 (dashed) per class and direction that did I/O.
fn latency_over_time(r: &RunResult, timeline: &Timeline) -> Markup {
    let mut s = Vec::new();
    let mut opts = timeline.options();
    let mut colour = 0;
    for (name, c) in &r.classes {
        for (dir, d) in c.summary().dirs() {
            if d.ops == 0 {
                continue;
            }
            let pick = |rec: &IntervalRecord| {
                let c = rec.classes.get(name).copied().unwrap_or_default();
                *c.dir(dir)
            };
            for (stat, dashed) in [("mean", false), ("p99", true)] {
                let points: Vec<(f64, f64)> = timeline
                    .records
                    .iter()
                    .zip(&timeline.times)
                    .filter_map(|(rec, &t)| {
                        let d = pick(rec);
                        (d.ops > 0).then_some((
                            t,
                            if dashed {
                                d.latency_p99_ns as f64
                            } else {
                                d.latency_mean_ns
                            },
                        ))
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                s.push(series(format!("{name} {dir} {stat}"), points));
                opts.colours.push(colour);
                opts.dashed.push(dashed);
            }
            colour += 1;
        }
    }
    if s.is_empty() {
        return html! {};
    }
    opts.y_format = Some(ns_tick);
    svg::figure(
        "latency-over-time",
        svg::line_chart_with(
            "Latency over time (mean solid, p99 dashed)",
            &timeline.axis,
            &Axis::log("latency"),
            &s,
            &opts,
        ),
    )
}

/// CPU over time: storlab's own, the machine's busy share, and the idle share with I/O pending.
fn cpu_over_time(timeline: &Timeline) -> Markup {
    let cpu = |f: fn(&CpuPercent) -> f64| -> Vec<(f64, f64)> {
        timeline
            .records
            .iter()
            .zip(&timeline.times)
            .map(|(rec, &t)| (t, f(&rec.cpu)))
            .collect()
    };
    let s = vec![
        series("storlab user+sys", cpu(CpuPercent::process_pct)),
        series("machine busy", cpu(CpuPercent::machine_busy_pct)),
        series("machine iowait (idle)", cpu(|c| c.system_iowait_pct)),
    ];
    svg::figure(
        "cpu-over-time",
        svg::line_chart_with(
            "CPU over time (storlab: % of one CPU; machine: % of all CPUs)",
            &timeline.axis,
            &Axis::linear("CPU %"),
            &s,
            &LineOptions {
                y_format: Some(pct_tick),
                ..timeline.options()
            },
        ),
    )
}

/// Utilisation over time of every device the records name.
fn device_util_over_time(timeline: &Timeline) -> Markup {
    let recs = timeline.records;
    let names: BTreeSet<&String> = recs.iter().flat_map(|rec| rec.devices.keys()).collect();
    if names.is_empty() {
        return html! {};
    }
    let s: Vec<Series> = names
        .into_iter()
        .map(|dev| {
            series(
                dev.clone(),
                recs.iter()
                    .zip(&timeline.times)
                    .filter_map(|(rec, &t)| rec.devices.get(dev).map(|d| (t, d.util_pct)))
                    .collect(),
            )
        })
        .collect();
    svg::figure(
        "device-util-over-time",
        svg::line_chart_with(
            "Device utilisation over time",
            &timeline.axis,
            &Axis::linear("busy %"),
            &s,
            &LineOptions {
                y_format: Some(pct_tick),
                ..timeline.options()
            },
        ),
    )
}

/// The percentile plot of every class and direction with a histogram.
pub(super) fn distribution_chart(r: &RunResult) -> Markup {
    let mut s = Vec::new();
    let mut max_x: f64 = 3.0;
    for (name, c) in &r.classes {
        for (dir, d) in c.summary().dirs() {
            let Some(h) = d.histogram.as_ref().filter(|_| d.ops > 0) else {
                continue;
            };
            let Ok(h) = Histogram::decode(h) else {
                continue;
            };
            let count = h.count().max(1) as f64;
            let mut points: Vec<(f64, f64)> = Vec::new();
            for (p, ns) in h.percentile_curve() {
                // The maximum sits at the percentile of the last I/O.
                let x = if p >= 100.0 {
                    count.log10()
                } else {
                    svg::nines(p)
                };
                if points.last().is_some_and(|l| x <= l.0) {
                    if p >= 100.0 {
                        if let Some(l) = points.last_mut() {
                            l.1 = l.1.max(ns as f64);
                        }
                    }
                    continue;
                }
                points.push((x, ns as f64));
            }
            if let Some(l) = points.last() {
                max_x = max_x.max(l.0);
            }
            s.push(series(format!("{name} {dir}"), points));
        }
    }
    if s.is_empty() {
        return html! {};
    }
    // The axis ends at the last tick (the maximum's nines rounded up), labelled at the edge.
    let ticks = svg::nines_ticks(max_x);
    let end = ticks.last().map_or(1.0, |t| t.0);
    svg::figure(
        "latency-distribution",
        svg::line_chart_with(
            "Latency distribution (percentiles)",
            &Axis::linear("percentile"),
            &Axis::log("latency"),
            &s,
            &LineOptions {
                x_ticks: Some(ticks),
                x_range: Some((0.0, end)),
                y_format: Some(ns_tick),
                ..Default::default()
            },
        ),
    )
}

/// Mean and p99 latency of a step's reads and writes together, ns: from the merged
/// histograms, or when there are none, the ops-weighted mean and the larger p99.
pub(super) fn step_latency(s: &StepResult) -> (f64, f64) {
    let l = s.totals.reads_and_writes();
    (l.mean, l.p99 as f64)
}

/// Parameters that a sequence cycles with a numeric axis of their own.
const NUMERIC_PARAMETERS: [(&str, &str); 7] = [
    ("cache", "cache size (% of the target)"),
    ("block_size", "block size"),
    ("workers", "workers"),
    ("queue_depth", "queue depth"),
    ("rate", "rate (IOPS per worker)"),
    ("read", "reads (%)"),
    ("random", "random (%)"),
];

/// Step sequences: throughput against the cycled parameter, the rate curve, steady state.
pub(super) fn step_charts(steps: &[StepResult]) -> Markup {
    let plain: Vec<&StepResult> = steps.iter().filter(|s| s.kind == StepKind::Step).collect();
    let reps = plain.iter().any(|s| s.repetitions.is_some());
    html! {
        @if plain.len() >= 2 || reps {
            @for chart in throughput_per_step(&plain) { (chart) }
            @if reps {
                p class="muted" { "Error bars: 95% confidence interval of the mean over the repetitions." }
            }
        }
        (curve_chart(steps))
        (steady_chart(steps))
    }
}

/// A figure the per-step charts show, with the chart's id, title and unit.
struct StepMetric {
    id: &'static str,
    title: &'static str,
    unit: &'static str,
    /// The figure of a step (or of a class in it).
    value: fn(&ClassSummary) -> f64,
    /// Its spread over a step's repetitions, if the repetitions keep one.
    pick: Option<fn(&Repetitions) -> &crate::stats::repetition::Spread>,
}

impl StepMetric {
    fn value(&self, c: &ClassSummary) -> f64 {
        (self.value)(c)
    }
}

/// One metric of every step: a row for the total (then each class when there are several),
/// and the total's 95% confidence interval over the repetitions.
struct StepFigures {
    rows: Vec<(String, Vec<f64>)>,
    errors: Vec<Option<(f64, f64)>>,
}

impl StepFigures {
    fn of(metric: &StepMetric, plain: &[&StepResult], classes: &BTreeSet<&String>) -> StepFigures {
        let errors: Vec<Option<(f64, f64)>> = plain
            .iter()
            .map(|s| {
                let pick = metric.pick?;
                s.repetitions.as_ref().map(|rep| {
                    let sp = pick(rep);
                    (sp.ci95_low, sp.ci95_high)
                })
            })
            .collect();
        let mut rows: Vec<(String, Vec<f64>)> = vec![(
            "total".into(),
            plain.iter().map(|s| metric.value(&s.totals)).collect(),
        )];
        if classes.len() > 1 {
            for c in classes {
                rows.push((
                    (*c).clone(),
                    plain
                        .iter()
                        .map(|s| s.classes.get(*c).map(|c| metric.value(c)).unwrap_or(0.0))
                        .collect(),
                ));
            }
        }
        StepFigures { rows, errors }
    }
}

/// IOPS and MB/s per step: against the cycled parameter when one numeric parameter is cycled,
/// else as bars per step.
fn throughput_per_step(plain: &[&StepResult]) -> Vec<Markup> {
    let numeric = numeric_parameter(plain);
    let classes: BTreeSet<&String> = plain.iter().flat_map(|s| s.classes.keys()).collect();
    let mut metrics = vec![
        StepMetric {
            id: "steps-iops",
            title: "IOPS per step",
            unit: "I/Os per second",
            value: ClassSummary::iops,
            pick: Some(|r| &r.iops),
        },
        StepMetric {
            id: "steps-mbps",
            title: "MB/s per step",
            unit: "MB/s (10⁶ bytes/s)",
            value: |c| c.bytes_per_s() / 1e6,
            pick: Some(|r| &r.mb_per_s),
        },
    ];
    if plain.iter().any(|s| !s.cache_tiers.is_empty()) {
        // A cache study: read latency against cache size, as the published figures show it.
        metrics.push(StepMetric {
            id: "steps-read-latency",
            title: "Mean read latency per step",
            unit: "mean read latency (µs)",
            value: |c| c.read.latency_ns.mean / 1e3,
            pick: None,
        });
    }
    (metrics.iter())
        .map(|metric| {
            let figures = StepFigures::of(metric, plain, &classes);
            let chart = match numeric {
                Some(parameter) => line_by_parameter(metric, parameter, plain, &figures),
                None => bars_by_step(metric, plain, figures),
            };
            svg::figure(metric.id, chart)
        })
        .collect()
}

/// The one parameter the steps cycle, as (key, axis label), when it has a numeric axis of its
/// own and every step sets it.
fn numeric_parameter(plain: &[&StepResult]) -> Option<(&'static str, &'static str)> {
    let mut keys: BTreeSet<&String> = BTreeSet::new();
    for s in plain {
        keys.extend(s.parameters.keys());
    }
    let cycled: Vec<&String> = keys
        .into_iter()
        .filter(|k| {
            let first = plain[0].parameters.get(*k);
            plain.iter().any(|s| s.parameters.get(*k) != first)
        })
        .collect();
    match cycled.as_slice() {
        [k] => NUMERIC_PARAMETERS
            .iter()
            .find(|(n, _)| n == k)
            .filter(|_| plain.iter().all(|s| s.parameters.contains_key(k.as_str())))
            .map(|&(n, label)| (n, label)),
        _ => None,
    }
}

/// A metric against the cycled parameter `(key, label)`, steps in the parameter's order (a
/// log axis when it spans 8× or more), with the total's error bars.
fn line_by_parameter(
    metric: &StepMetric,
    (key, label): (&str, &str),
    plain: &[&StepResult],
    figures: &StepFigures,
) -> Markup {
    let xs: Vec<f64> = plain.iter().map(|s| s.parameters[key]).collect();
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|a, b| xs[*a].total_cmp(&xs[*b]));
    let (lo, hi) = (xs[order[0]], xs[order[order.len() - 1]]);
    let log = lo > 0.0 && hi / lo >= 8.0;
    let mut ticks: Vec<(f64, String)> = Vec::new();
    for &i in &order {
        if ticks.last().is_some_and(|t| t.0 == xs[i]) {
            continue;
        }
        let text = if key == "block_size" {
            format_size(xs[i] as u64)
        } else {
            svg::number(xs[i])
        };
        ticks.push((xs[i], text));
    }
    let s: Vec<Series> = figures
        .rows
        .iter()
        .map(|(n, v)| series(n.clone(), order.iter().map(|&i| (xs[i], v[i])).collect()))
        .collect();
    let axis = Axis {
        label: label.into(),
        log,
    };
    svg::line_chart_with(
        metric.title,
        &axis,
        &Axis::linear(metric.unit),
        &s,
        &LineOptions {
            x_ticks: Some(ticks),
            errors: vec![order.iter().map(|&i| figures.errors[i]).collect()],
            markers: true,
            ..Default::default()
        },
    )
}

/// A metric as bars, one group per step (named by its label), the total with error bars.
fn bars_by_step(metric: &StepMetric, plain: &[&StepResult], figures: StepFigures) -> Markup {
    let cats: Vec<String> = plain
        .iter()
        .map(|s| {
            if s.label.is_empty() {
                format!("step {}", s.index)
            } else {
                s.label.clone()
            }
        })
        .collect();
    let StepFigures { rows, errors } = figures;
    let bars: Vec<Bars> = rows
        .into_iter()
        .enumerate()
        .map(|(i, (name, values))| Bars {
            name,
            values,
            errors: if i == 0 { errors.clone() } else { Vec::new() },
        })
        .collect();
    svg::bar_chart(metric.title, &cats, &Axis::linear(metric.unit), &bars)
}

/// The rate curve: latency against load, and the closed-loop maximum the levels are of.
fn curve_chart(steps: &[StepResult]) -> Markup {
    let mut levels: Vec<&StepResult> = steps
        .iter()
        .filter(|s| s.kind == StepKind::CurveLevel)
        .collect();
    if levels.is_empty() {
        return html! {};
    }
    levels.sort_by(|a, b| a.totals.iops().total_cmp(&b.totals.iops()));
    let s = vec![
        series(
            "mean",
            levels
                .iter()
                .map(|s| (s.totals.iops(), step_latency(s).0))
                .collect(),
        ),
        series(
            "p99",
            levels
                .iter()
                .map(|s| (s.totals.iops(), step_latency(s).1))
                .collect(),
        ),
    ];
    let chart = svg::line_chart_with(
        "Latency against load (rate curve levels)",
        &Axis::linear("achieved IOPS"),
        &Axis::log("latency"),
        &s,
        &LineOptions {
            y_format: Some(ns_tick),
            dashed: vec![false, true],
            markers: true,
            ..Default::default()
        },
    );
    let at: Vec<String> = (levels.iter())
        .filter_map(|s| s.curve_level_pct.map(format_pct))
        .collect();
    html! {
        (svg::figure("curve-latency", chart))
        @if let Some(max) = steps.iter().find(|s| s.kind == StepKind::CurveMax) {
            p class="muted" {
                "Closed-loop maximum: " (format_rate(max.totals.iops())) " IOPS; levels at " (at.join(", ")) "."
            }
        }
    }
}

/// Steady state: what the window judged (IOPS, or mean latency in ms) of each round, the
/// window highlighted.
fn steady_chart(steps: &[StepResult]) -> Markup {
    let steady: Vec<(&StepResult, &SteadyResult)> = steps
        .iter()
        .filter_map(|s| s.steady.as_ref().map(|st| (s, st)))
        .filter(|(_, st)| !st.rounds_iops.is_empty())
        .collect();
    if steady.is_empty() {
        return html! {};
    }
    let mut s = Vec::new();
    let mut opts = LineOptions {
        markers: true,
        ..Default::default()
    };
    for (i, (step, st)) in steady.iter().enumerate() {
        let prefix = if steady.len() == 1 {
            String::new()
        } else if step.label.is_empty() {
            format!("step {} ", step.index)
        } else {
            format!("{} ", step.label)
        };
        // Latency in ms, from the results' ns.
        let scale = if st.metric.is_iops() { 1.0 } else { 1e-6 };
        let rounds: Vec<(f64, f64)> = (st.judged().iter().enumerate())
            .map(|(k, v)| ((k + 1) as f64, v * scale))
            .collect();
        let end = st.steady_at_round.unwrap_or(rounds.len()).min(rounds.len());
        let start = end.saturating_sub((st.window_rounds as usize).max(1));
        s.push(series(format!("{prefix}rounds"), rounds.clone()));
        s.push(series(
            format!("{prefix}window"),
            rounds[start..end].to_vec(),
        ));
        opts.colours.extend([2 * i, 2 * i + 1]);
        opts.thick.extend([false, true]);
        opts.dashed.extend([false, false]);
    }
    let most = steady
        .iter()
        .map(|(_, st)| st.rounds_iops.len())
        .max()
        .unwrap_or(0);
    if most <= 20 {
        opts.x_ticks = Some((1..=most).map(|k| (k as f64, k.to_string())).collect());
    }
    let (title, unit) = if steady[0].1.metric.is_iops() {
        (
            "Steady state: IOPS per round (window highlighted)",
            "I/Os per second",
        )
    } else {
        (
            "Steady state: mean latency per round (window highlighted)",
            "mean latency, ms",
        )
    };
    svg::figure(
        "steady-rounds",
        svg::line_chart_with(
            title,
            &Axis::linear("round"),
            &Axis::linear(unit),
            &s,
            &opts,
        ),
    )
}
