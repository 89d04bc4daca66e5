//! The interval time series: one record per interval, merged over workers, streamed as NDJSON.

use super::host::{CpuPercent, DiskDelta};
use super::{OpStats, StatsSet};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One direction over one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntervalDir {
    /// Operations completed in the interval.
    pub ops: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Failed operations.
    pub errors: u64,
    /// Operations per second.
    pub iops: f64,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// Mean latency, ns (response time in open loop).
    pub latency_mean_ns: f64,
    /// 99th percentile latency, ns.
    pub latency_p99_ns: u64,
    /// Largest latency, ns.
    pub latency_max_ns: u64,
}

impl IntervalDir {
    /// Summarises an interval's statistics over `seconds`.
    pub(crate) fn of(s: &OpStats, seconds: f64) -> Self {
        let per_s = |v: u64| super::per_second(v, seconds);
        IntervalDir {
            ops: s.ops,
            bytes: s.bytes,
            errors: s.errors,
            iops: per_s(s.ops),
            bytes_per_s: per_s(s.bytes),
            latency_mean_ns: s.latency.mean(),
            latency_p99_ns: s.latency.quantile(0.99),
            latency_max_ns: s.latency.max(),
        }
    }
}

/// Reads and writes of one class over one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntervalClass {
    /// Reads.
    pub read: IntervalDir,
    /// Writes.
    pub write: IntervalDir,
    /// Flushes.
    pub flush: IntervalDir,
}

/// Which part of a run an interval belongs to.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum IntervalPhase {
    /// The ramp: I/O that is not counted.
    Ramp,
    /// The measurement.
    #[default]
    Measure,
}

impl std::fmt::Display for IntervalPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IntervalPhase::Ramp => "ramp",
            IntervalPhase::Measure => "measure",
        })
    }
}

/// Which run of a step sequence an interval belongs to. In JSON it is the text
/// its `Display` writes (`rep 2`, `curve 50%`), parsed back by its `FromStr`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SequenceRun {
    /// Preconditioning, before the steps.
    Precondition,
    /// A step's only run.
    Run,
    /// Repetition N of a step, from 1.
    Rep(u32),
    /// Steady-state round N of a step, from 1.
    Round(u32),
    /// A rate curve's closed-loop maximum.
    CurveMax,
    /// A rate curve's open-loop level, percent of the maximum.
    CurveLevel(f64),
}

impl std::fmt::Display for SequenceRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SequenceRun::Precondition => f.write_str("precondition"),
            SequenceRun::Run => f.write_str("run"),
            SequenceRun::Rep(n) => write!(f, "rep {n}"),
            SequenceRun::Round(n) => write!(f, "round {n}"),
            SequenceRun::CurveMax => f.write_str("curve max"),
            SequenceRun::CurveLevel(pct) => write!(f, "curve {pct}%"),
        }
    }
}

impl std::str::FromStr for SequenceRun {
    type Err = String;
    fn from_str(s: &str) -> Result<SequenceRun, String> {
        let bad = || format!("`{s}` is not a run of a sequence");
        let count = |n: &str| n.parse::<u32>().map_err(|_| bad());
        Ok(match s.split_once(' ') {
            None if s == "precondition" => SequenceRun::Precondition,
            None if s == "run" => SequenceRun::Run,
            Some(("rep", n)) => SequenceRun::Rep(count(n)?),
            Some(("round", n)) => SequenceRun::Round(count(n)?),
            Some(("curve", "max")) => SequenceRun::CurveMax,
            Some(("curve", pct)) => SequenceRun::CurveLevel(
                pct.strip_suffix('%')
                    .and_then(|p| p.parse().ok())
                    .ok_or_else(bad)?,
            ),
            _ => return Err(bad()),
        })
    }
}

impl Serialize for SequenceRun {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl schemars::JsonSchema for SequenceRun {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SequenceRun".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`precondition`, `run`, `rep N`, `round N`, `curve max` or `curve P%`",
            "type": "string"
        })
    }
}

impl<'de> Deserialize<'de> for SequenceRun {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl IntervalClass {
    /// Direction `dir`.
    pub(crate) fn dir(&self, dir: super::Dir) -> &IntervalDir {
        match dir {
            super::Dir::Read => &self.read,
            super::Dir::Write => &self.write,
            super::Dir::Flush => &self.flush,
        }
    }
}

/// One line of the NDJSON time series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntervalRecord {
    /// Interval number from the start of the run (0-based).
    pub index: u64,
    /// `ramp` (not counted in totals) or `measure`.
    pub phase: IntervalPhase,
    /// Step index, for runs of several steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// Which run of a sequence: `precondition`, `run`, `rep 2`, `round 3`, `curve max`,
    /// `curve 50%`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<SequenceRun>,
    /// End of the interval, ms since the run's I/O started.
    pub t_end_ms: u64,
    /// Length of the interval, ms.
    pub interval_ms: u64,
    /// Per class name.
    pub classes: BTreeMap<String, IntervalClass>,
    /// Every class together.
    pub total: IntervalClass,
    /// CPU use over the interval.
    pub cpu: CpuPercent,
    /// Block devices' own counters over the interval, by kernel name.
    pub devices: BTreeMap<String, DiskDelta>,
    /// The interval's latency histograms, kept by the ranks of a run over many hosts so that
    /// the root merges intervals exactly (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<IntervalHistograms>,
    /// What storlab's I/O threads themselves cost in the interval (schema 1.18; absent from
    /// older series).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<super::cost::Cost>,
}

/// An interval's latency histograms: per class and for every class together, one per
/// direction (read, write, flush; `None`: no operation).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntervalHistograms {
    /// Per class name.
    pub classes: BTreeMap<String, [Option<super::histogram::EncodedHistogram>; 3]>,
    /// Every class together.
    pub total: [Option<super::histogram::EncodedHistogram>; 3],
}

impl IntervalHistograms {
    /// The histograms of `stats` (classes named by `class_names`).
    pub(crate) fn of(stats: &StatsSet, class_names: &[String]) -> IntervalHistograms {
        let encode = |c: &super::ClassStats| {
            c.dirs
                .each_ref()
                .map(|d| (d.ops > 0).then(|| d.latency.encode()))
        };
        IntervalHistograms {
            classes: class_names
                .iter()
                .zip(&stats.classes)
                .map(|(n, c)| (n.clone(), encode(c)))
                .collect(),
            total: encode(&stats.total()),
        }
    }
}

impl IntervalRecord {
    /// Builds the class and total figures from merged interval statistics.
    pub(crate) fn fill(&mut self, stats: &StatsSet, class_names: &[String]) {
        let secs = self.interval_ms as f64 / 1000.0;
        let dirs = |c: &super::ClassStats| IntervalClass {
            read: IntervalDir::of(&c.dirs[0], secs),
            write: IntervalDir::of(&c.dirs[1], secs),
            flush: IntervalDir::of(&c.dirs[2], secs),
        };
        for (name, c) in class_names.iter().zip(&stats.classes) {
            self.classes.insert(name.clone(), dirs(c));
        }
        self.total = match stats.classes.as_slice() {
            [only] => dirs(only),
            _ => dirs(&stats.total()),
        };
        self.cost = Some(stats.cost);
    }
}

impl IntervalDir {
    /// Merges `next`, the same direction over the interval after (`ms` and `next_ms` long):
    /// counts add, rates are weighted by time, the mean latency by operations, the p99 and
    /// the maximum are the larger (the p99 an upper bound of the merged span's).
    fn absorb(&mut self, next: &IntervalDir, ms: f64, next_ms: f64) {
        let by_time =
            |a: f64, b: f64| (a * ms + b * next_ms) / (ms + next_ms).max(f64::MIN_POSITIVE);
        let ops = self.ops + next.ops;
        self.latency_mean_ns = if ops > 0 {
            (self.latency_mean_ns * self.ops as f64 + next.latency_mean_ns * next.ops as f64)
                / ops as f64
        } else {
            0.0
        };
        self.iops = by_time(self.iops, next.iops);
        self.bytes_per_s = by_time(self.bytes_per_s, next.bytes_per_s);
        self.ops = ops;
        self.bytes += next.bytes;
        self.errors += next.errors;
        self.latency_p99_ns = self.latency_p99_ns.max(next.latency_p99_ns);
        self.latency_max_ns = self.latency_max_ns.max(next.latency_max_ns);
    }
}

impl IntervalClass {
    fn absorb(&mut self, next: &IntervalClass, ms: f64, next_ms: f64) {
        self.read.absorb(&next.read, ms, next_ms);
        self.write.absorb(&next.write, ms, next_ms);
        self.flush.absorb(&next.flush, ms, next_ms);
    }
}

/// Consecutive intervals of one run and phase merged into one record, for charts of a bounded
/// number of points ([`super::downsample`]): it spans from the first one's start to the last
/// one's end (`index` is the first's, `t_end_ms` the last's, `interval_ms` their sum); its
/// figures are merged as [`IntervalDir`]'s, CPU and device utilisation weighted by time,
/// devices' queue times by their operations; the costs add; histograms are left out.
impl super::downsample::Merge for IntervalRecord {
    fn continues(&self, next: &IntervalRecord) -> bool {
        self.phase == next.phase
            && self.step == next.step
            && self.label == next.label
            && next.index > self.index
            && next.t_end_ms > self.t_end_ms
    }

    fn absorb(&mut self, next: &IntervalRecord) {
        let (ms, next_ms) = (self.interval_ms as f64, next.interval_ms as f64);
        for (name, c) in &next.classes {
            (self.classes.entry(name.clone()).or_default()).absorb(c, ms, next_ms);
        }
        for (name, c) in self.classes.iter_mut() {
            if !next.classes.contains_key(name) {
                c.absorb(&IntervalClass::default(), ms, next_ms);
            }
        }
        self.total.absorb(&next.total, ms, next_ms);
        self.cpu = CpuPercent::weighted([(self.cpu, ms), (next.cpu, next_ms)]);
        for (name, d) in &next.devices {
            match self.devices.get_mut(name) {
                Some(mine) => {
                    let util =
                        (mine.util_pct * ms + d.util_pct * next_ms) / (ms + next_ms).max(1.0);
                    mine.add(d);
                    mine.util_pct = util;
                }
                None => {
                    self.devices.insert(name.clone(), *d);
                }
            }
        }
        match (&mut self.cost, &next.cost) {
            (Some(mine), Some(c)) => mine.add(c),
            (None, Some(c)) => self.cost = Some(*c),
            _ => {}
        }
        self.histograms = None;
        self.t_end_ms = next.t_end_ms;
        self.interval_ms += next.interval_ms;
    }
}

/// How a run's time is cut into intervals: ramp intervals from 0 (the last one cut at the end
/// of the ramp), then measurement intervals from the end of the ramp (the last one cut at the
/// end). Workers and the collector agree on indexes through this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalGrid {
    /// Ramp length, ns.
    pub ramp_ns: u64,
    /// Measured length, ns.
    pub measure_ns: u64,
    /// Interval length, ns.
    pub interval_ns: u64,
    /// After the measurement, I/O goes on uncounted for this long (no interval covers it), ns.
    pub cooldown_ns: u64,
}

impl IntervalGrid {
    /// The grid of a run with this ramp, measured duration and interval, ms.
    pub fn of(ramp_ms: u64, duration_ms: u64, interval_ms: u64) -> IntervalGrid {
        IntervalGrid {
            ramp_ns: ramp_ms * 1_000_000,
            measure_ns: duration_ms * 1_000_000,
            interval_ns: interval_ms * 1_000_000,
            cooldown_ns: 0,
        }
    }

    /// This grid with a cool-down of `cooldown_ms` after the measurement.
    pub(crate) fn with_cooldown(self, cooldown_ms: u64) -> IntervalGrid {
        IntervalGrid {
            cooldown_ns: cooldown_ms * 1_000_000,
            ..self
        }
    }

    /// When the measurement ends, ns from the start.
    pub(crate) fn end_ns(&self) -> u64 {
        self.ramp_ns + self.measure_ns
    }

    /// Number of ramp intervals.
    pub(crate) fn ramp_intervals(&self) -> u64 {
        self.ramp_ns.div_ceil(self.interval_ns)
    }

    /// Total number of intervals.
    pub(crate) fn intervals(&self) -> u64 {
        self.ramp_intervals() + self.measure_ns.div_ceil(self.interval_ns)
    }

    /// The interval containing time `t_ns`: (index, end ns). Past the end: (intervals(), MAX).
    #[inline]
    pub(crate) fn at(&self, t_ns: u64) -> (u64, u64) {
        if t_ns < self.ramp_ns {
            let i = t_ns / self.interval_ns;
            return (i, ((i + 1) * self.interval_ns).min(self.ramp_ns));
        }
        let end = self.ramp_ns + self.measure_ns;
        if t_ns >= end {
            return (self.intervals(), u64::MAX);
        }
        let k = (t_ns - self.ramp_ns) / self.interval_ns;
        (
            self.ramp_intervals() + k,
            (self.ramp_ns + (k + 1) * self.interval_ns).min(end),
        )
    }

    /// Start and end (ns) of interval `index`, and whether it is a ramp interval.
    pub(crate) fn bounds(&self, index: u64) -> (u64, u64, bool) {
        let nr = self.ramp_intervals();
        if index < nr {
            let s = index * self.interval_ns;
            (s, ((index + 1) * self.interval_ns).min(self.ramp_ns), true)
        } else {
            let s = self.ramp_ns + (index - nr) * self.interval_ns;
            (
                s,
                (s + self.interval_ns).min(self.ramp_ns + self.measure_ns),
                false,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::downsample::Merge;

    #[test]
    fn merged_intervals_add_counts_and_weigh_rates_by_time_and_means_by_operations() {
        let dir = |ops: u64, ms: f64, mean: f64, p99: u64| IntervalDir {
            ops,
            bytes: ops * 4096,
            errors: 1,
            iops: ops as f64 / (ms / 1e3),
            bytes_per_s: (ops * 4096) as f64 / (ms / 1e3),
            latency_mean_ns: mean,
            latency_p99_ns: p99,
            latency_max_ns: p99 * 2,
        };
        let mut a = IntervalRecord {
            index: 0,
            t_end_ms: 1000,
            interval_ms: 1000,
            ..Default::default()
        };
        a.total.read = dir(100, 1000.0, 10.0, 50);
        a.classes.insert("x".into(), a.total);
        a.cpu.system_user_pct = 10.0;
        a.devices.insert(
            "sda".into(),
            DiskDelta {
                reads: 100,
                util_pct: 40.0,
                read_await_ms: 1.0,
                ..Default::default()
            },
        );
        let mut b = IntervalRecord {
            index: 1,
            t_end_ms: 1250,
            interval_ms: 250,
            ..Default::default()
        };
        b.total.read = dir(300, 250.0, 30.0, 20);
        b.classes.insert("y".into(), b.total);
        b.cpu.system_user_pct = 60.0;
        b.devices.insert(
            "sda".into(),
            DiskDelta {
                reads: 300,
                util_pct: 100.0,
                read_await_ms: 3.0,
                ..Default::default()
            },
        );
        assert!(a.continues(&b) && !b.continues(&a));
        let mut ramp = b.clone();
        ramp.phase = IntervalPhase::Ramp;
        assert!(
            !a.continues(&ramp),
            "a ramp never merges with a measurement"
        );
        a.absorb(&b);
        assert_eq!((a.index, a.t_end_ms, a.interval_ms), (0, 1250, 1250));
        let r = a.total.read;
        assert_eq!((r.ops, r.bytes, r.errors), (400, 400 * 4096, 2));
        assert!((r.iops - 400.0 / 1.25).abs() < 1e-9, "{}", r.iops);
        assert!((r.latency_mean_ns - (100.0 * 10.0 + 300.0 * 30.0) / 400.0).abs() < 1e-9);
        assert_eq!((r.latency_p99_ns, r.latency_max_ns), (50, 100));
        // A class of one interval only: no I/O in the other, over its time.
        assert!((a.classes["x"].read.iops - 100.0 / 1.25).abs() < 1e-9);
        assert!((a.classes["y"].read.iops - 300.0 / 1.25).abs() < 1e-9);
        assert_eq!(a.classes["y"].read.ops, 300);
        assert!((a.cpu.system_user_pct - (10.0 + 60.0 * 0.25) / 1.25).abs() < 1e-9);
        let d = a.devices["sda"];
        assert_eq!(d.reads, 400);
        assert!((d.util_pct - (40.0 + 100.0 * 0.25) / 1.25).abs() < 1e-9);
        assert!((d.read_await_ms - 2.5).abs() < 1e-9);
    }

    #[test]
    fn grid_cuts_ramp_and_measure() {
        let g = IntervalGrid {
            ramp_ns: 2500,
            measure_ns: 3500,
            interval_ns: 1000,
            cooldown_ns: 0,
        };
        assert_eq!(g.ramp_intervals(), 3);
        assert_eq!(g.intervals(), 7);
        assert_eq!(g.at(0), (0, 1000));
        assert_eq!(g.at(2400), (2, 2500));
        assert_eq!(g.at(2500), (3, 3500));
        assert_eq!(g.at(5999), (6, 6000));
        assert_eq!(g.at(6000), (7, u64::MAX));
        assert_eq!(g.bounds(2), (2000, 2500, true));
        assert_eq!(g.bounds(6), (5500, 6000, false));
        for i in 0..g.intervals() {
            let (s, e, _) = g.bounds(i);
            assert_eq!(g.at(s).0, i);
            assert_eq!(g.at(e - 1), (i, e));
        }
    }
}
