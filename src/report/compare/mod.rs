//! Comparison of several results files: every common metric side by side with its relative
//! difference, coloured by whether higher or lower is better, differences within the runs'
//! own spread marked as noise, and a list of what differs between the jobs.

use crate::report::svg::{Bars, Series};
use crate::results::RunResult;
use crate::results::steps::StepResult;
use crate::stats::Dir;
use crate::stats::histogram::Histogram;
use crate::stats::repetition::Spread;
use crate::stats::summary::{ClassSummary, DirSummary};
use crate::stats::timeseries::IntervalPhase;
use crate::units::{format_duration, format_ns, format_rate, format_size};
use std::time::Duration;

/// About the most points of a run on the IOPS-over-time chart (at most twice as many).
const OVER_TIME_POINTS: usize = 300;

mod render;

pub(crate) use render::{console, html};

/// What a metric measures, which says how it is printed and which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Operations per second (higher is better).
    Iops,
    /// MB/s, 10^6 bytes/s (higher is better).
    MbPerS,
    /// Latency, ns (lower is better).
    Ns,
}

impl Unit {
    /// Whether a larger value is an improvement.
    pub(crate) fn higher_is_better(self) -> bool {
        !matches!(self, Unit::Ns)
    }

    /// The value as a person reads it.
    pub(crate) fn format(self, v: f64) -> String {
        match self {
            Unit::Iops => format_rate(v),
            Unit::MbPerS => crate::units::format_number(v),
            Unit::Ns => format_ns(v),
        }
    }
}

/// How a run's value compares with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// An improvement beyond noise.
    Better,
    /// A degradation beyond noise.
    Worse,
    /// Within the noise threshold.
    Noise,
}

impl Mark {
    /// `better`, `worse` or `noise`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mark::Better => "better",
            Mark::Worse => "worse",
            Mark::Noise => "noise",
        }
    }
}

/// One non-baseline run's value of a metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Cell {
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
pub(crate) struct Row {
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
pub(crate) struct Table {
    /// Heading.
    pub title: String,
    /// Metrics.
    pub rows: Vec<Row>,
}

/// A comparison of runs (the first is the baseline).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Comparison {
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
        (
            "cool-down",
            format_duration(Duration::from_millis(j.cooldown_ms)),
        ),
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
    ]
    .into_iter()
    .chain(
        crate::report::view::installed()
            .iter()
            .flat_map(|v| v.setup(r)),
    )
    .chain([
        ("kernel", r.host.kernel.clone()),
        ("CPU", r.host.cpu_model.clone()),
        ("hostname", r.host.hostname.clone()),
    ])
    .collect()
}

/// A row of one metric: the first of `values` is the baseline's.
pub(crate) fn metric_row(name: String, unit: Unit, values: &[f64], noise_pct: f64) -> Row {
    Row {
        name,
        unit,
        baseline: values[0],
        others: values[1..]
            .iter()
            .map(|&v| cell(values[0], v, unit, noise_pct))
            .collect(),
    }
}

/// Runs over many hosts: each host's IOPS and p99 side by side, when every run has the same
/// ranks on the same hosts.
fn hosts_tables(runs: &[(String, RunResult)], noise_pct: f64, c: &mut Comparison) {
    let ranks = |r: &RunResult| -> Vec<(usize, String)> {
        r.hosts.iter().map(|h| (h.rank, h.host.clone())).collect()
    };
    let first = ranks(&runs[0].1);
    if runs.iter().all(|r| r.1.hosts.is_empty()) {
        return;
    }
    if first.is_empty() || runs.iter().any(|r| ranks(&r.1) != first) {
        c.notes.push(
            "the runs do not have the same ranks on the same hosts: hosts not compared side by side"
                .into(),
        );
        return;
    }
    type Metric = fn(&ClassSummary) -> f64;
    let metrics: [(&str, Unit, Metric); 4] = [
        ("read IOPS", Unit::Iops, |t| t.read.iops),
        ("write IOPS", Unit::Iops, |t| t.write.iops),
        ("read p99", Unit::Ns, |t| t.read.latency_ns.p99 as f64),
        ("write p99", Unit::Ns, |t| t.write.latency_ns.p99 as f64),
    ];
    for (metric, unit, f) in metrics {
        let rows = first
            .iter()
            .enumerate()
            .map(|(i, (rank, host))| {
                let values: Vec<f64> = runs.iter().map(|r| f(&r.1.hosts[i].totals)).collect();
                metric_row(format!("rank {rank} ({host})"), unit, &values, noise_pct)
            })
            .collect();
        c.tables.push(Table {
            title: format!("hosts: {metric}"),
            rows,
        });
    }
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

/// Totals, then the classes present in every run (left out when each run has a single class:
/// it is the totals again).
fn totals_and_classes(runs: &[(String, RunResult)], noise_pct: f64, c: &mut Comparison) {
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
}

/// Compares `runs` (label, results); differences under `noise_pct` (or the runs' own spread
/// from repetitions, when larger) are noise.
pub(crate) fn compare(runs: &[(String, RunResult)], noise_pct: f64) -> Comparison {
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
    for v in crate::report::view::installed() {
        v.compare(runs, noise_pct, &mut c);
    }

    totals_and_classes(runs, noise_pct, &mut c);
    hosts_tables(runs, noise_pct, &mut c);

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
    // so the intervals are laid end to end (a long series merged into a bounded number of
    // points, read one record at a time).
    c.iops_over_time = runs
        .iter()
        .map(|(label, r)| {
            let mut t_ms = 0u64;
            Series {
                name: label.clone(),
                points: (r.timeseries.downsampled(OVER_TIME_POINTS).points.iter())
                    .filter(|t| t.phase == IntervalPhase::Measure)
                    .map(|t| {
                        t_ms = t_ms.saturating_add(t.interval_ms);
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

/// Throughput falls or latency rises beyond `pct` percent (and beyond noise): one line each,
/// the baseline's value first (`totals read IOPS: a 1000 → b 800 (-20.0%)`).
pub(crate) fn regressions(c: &Comparison, pct: f64) -> Vec<String> {
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
                    // Baseline first, as the tables read: from it to the run compared.
                    out.push(format!(
                        "{what}: {} {} → {} {} ({})",
                        c.labels[0],
                        r.unit.format(r.baseline),
                        c.labels.get(i + 1).map(String::as_str).unwrap_or("?"),
                        r.unit.format(x.value),
                        crate::units::format_change_pct(x.diff_pct)
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
