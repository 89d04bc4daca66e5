//! A time series summed as it is read, one record at a time: what results are rebuilt from
//! (counts, means weighted by operations, maxima, CPU weighted by time, devices; each step's),
//! without holding the series.

use super::super::timeseries;
use crate::results::steps::StepResult;
use crate::stats::histogram::LatencySummary;
use crate::stats::host::{CpuPercent, DiskDelta};
use crate::stats::summary::{ClassSummary, DirSummary};
use crate::stats::timeseries::{
    IntervalClass, IntervalDir, IntervalPhase, IntervalRecord, SequenceRun,
};
use anyhow::Result;
use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hasher};
use std::path::Path;

/// One direction summed over intervals.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct DirSum {
    ops: u64,
    bytes: u64,
    errors: u64,
    /// Σ mean × ops, ns.
    latency_ns_sum: f64,
    max_ns: u64,
    p99_bound_ns: u64,
}

impl DirSum {
    fn add(&mut self, d: &IntervalDir) {
        self.ops += d.ops;
        self.bytes += d.bytes;
        self.errors += d.errors;
        self.latency_ns_sum += d.latency_mean_ns * d.ops as f64;
        self.max_ns = self.max_ns.max(d.latency_max_ns);
        self.p99_bound_ns = self.p99_bound_ns.max(d.latency_p99_ns);
    }

    fn summary(&self, seconds: f64) -> DirSummary {
        let per_s = |v: u64| crate::stats::per_second(v, seconds);
        DirSummary {
            ops: self.ops,
            bytes: self.bytes,
            errors: self.errors,
            iops: per_s(self.ops),
            bytes_per_s: per_s(self.bytes),
            latency_ns: LatencySummary {
                mean: if self.ops > 0 {
                    self.latency_ns_sum / self.ops as f64
                } else {
                    0.0
                },
                max: self.max_ns,
                p99: self.p99_bound_ns,
                ..Default::default()
            },
            service_latency_ns: None,
            histogram: None,
            service_histogram: None,
        }
    }
}

/// Reads, writes and flushes of one class (or of everything) summed over intervals.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ClassSum([DirSum; 3]);

impl ClassSum {
    fn add(&mut self, c: &IntervalClass) {
        self.0[0].add(&c.read);
        self.0[1].add(&c.write);
        self.0[2].add(&c.flush);
    }

    pub(super) fn summary(&self, seconds: f64) -> ClassSummary {
        ClassSummary {
            read: self.0[0].summary(seconds),
            write: self.0[1].summary(seconds),
            flush: self.0[2].summary(seconds),
        }
    }
}

/// Measured intervals summed: totals, classes, CPU (weighted by time) and devices.
#[derive(Debug, Clone, Default)]
pub(super) struct Sum {
    pub(super) ms: u64,
    pub(super) total: ClassSum,
    pub(super) classes: BTreeMap<String, ClassSum>,
    pub(super) cpu: CpuPercent,
    pub(super) devices: BTreeMap<String, DiskDelta>,
}

impl Sum {
    fn add(&mut self, r: &IntervalRecord) {
        let (before, w) = (self.ms as f64, r.interval_ms as f64);
        self.ms += r.interval_ms;
        self.total.add(&r.total);
        for (name, c) in &r.classes {
            self.classes.entry(name.clone()).or_default().add(c);
        }
        self.cpu = CpuPercent::weighted([(self.cpu, before), (r.cpu, w)]);
        for (name, d) in &r.devices {
            self.devices.entry(name.clone()).or_default().add(d);
        }
    }

    pub(super) fn seconds(&self) -> f64 {
        self.ms as f64 / 1e3
    }

    pub(super) fn busy_pct(&self) -> f64 {
        self.cpu.machine_busy_pct()
    }
}

/// Measured intervals summed: the whole run, and each step with the runs it came from.
#[derive(Debug, Clone, Default)]
pub(super) struct Measured {
    pub(super) all: Sum,
    pub(super) steps: BTreeMap<usize, (Sum, Vec<SequenceRun>)>,
}

impl Measured {
    /// Adds a measured record.
    fn add(&mut self, r: &IntervalRecord) {
        self.all.add(r);
        if let Some(i) = r.step {
            let (sum, labels) = self.steps.entry(i).or_default();
            sum.add(r);
            if let Some(l) = r.label.filter(|l| !labels.contains(l)) {
                labels.push(l);
            }
        }
    }

    /// The row of every step, the last one interrupted.
    pub(super) fn step_rows(&self) -> Vec<StepResult> {
        let last_step = self.steps.keys().next_back().copied();
        self.steps
            .iter()
            .map(|(&index, (sum, labels))| {
                super::step_row(index, sum, labels, Some(index) == last_step)
            })
            .collect()
    }
}

/// What results are rebuilt from: a time series read once, one record at a time, kept as sums
/// and the two records the results need (its first and its last), never whole.
#[derive(Debug, Clone, Default)]
pub(super) struct Facts {
    /// Complete records.
    pub(super) count: u64,
    /// Its last line was cut off in its write (and left out).
    pub(super) cut_off: bool,
    pub(super) first: Option<IntervalRecord>,
    pub(super) last: Option<IntervalRecord>,
    /// Some interval is of a step: a sequence's series.
    pub(super) stepped: bool,
    /// Some interval carries a step or the label of a sequence's run.
    pub(super) tagged: bool,
    /// Every interval's length, ms, in all.
    pub(super) wall_ms: u64,
    /// The intervals of no step (preconditioning, in a sequence): how many, and their length.
    pub(super) unstepped: (u64, u64),
    /// The first run's ramp, ms.
    pub(super) first_ramp_ms: u64,
    /// How many intervals have each length (ms).
    lengths: BTreeMap<u64, u64>,
    /// Every measured interval summed.
    measured: Sum,
    /// The measured intervals of steps summed (a sequence's measurement: not its
    /// preconditioning).
    stepped_measured: Measured,
    /// A fingerprint of the intervals (each one's number, phase, step, run, times and
    /// operations), to tell whether a results file's inline series is this one.
    pub(super) keys: u64,
}

/// What identifies an interval of a run, hashed into a fingerprint.
fn hash_key(h: &mut impl Hasher, x: &IntervalRecord) {
    let t = &x.total;
    for v in [
        x.index,
        x.t_end_ms,
        x.interval_ms,
        t.read.ops,
        t.write.ops,
        t.flush.ops,
    ] {
        h.write_u64(v);
    }
    h.write_u8(u8::from(x.phase == IntervalPhase::Ramp));
    h.write_u64(x.step.map_or(u64::MAX, |s| s as u64));
    h.write(
        x.label
            .map(|l| l.to_string())
            .unwrap_or_default()
            .as_bytes(),
    );
}

/// The fingerprint of `records`, as [`Facts::keys`] is of a series'.
pub(super) fn fingerprint<'a>(records: impl IntoIterator<Item = &'a IntervalRecord>) -> u64 {
    let mut h = DefaultHasher::new();
    for r in records {
        hash_key(&mut h, r);
    }
    h.finish()
}

impl Facts {
    /// The facts of the time series at `path`, read one record at a time.
    pub(super) fn read(path: &Path) -> Result<Facts> {
        let mut facts = Facts::default();
        let mut h = DefaultHasher::new();
        facts.cut_off = timeseries::read_each(path, |r| facts.add(&mut h, r))?;
        facts.keys = h.finish();
        Ok(facts)
    }

    /// The facts of `records` (a last one cut off after them if `cut_off`).
    #[cfg(test)]
    pub(super) fn of(records: &[IntervalRecord], cut_off: bool) -> Facts {
        let mut facts = Facts::default();
        let mut h = DefaultHasher::new();
        for r in records {
            facts.add(&mut h, r.clone());
        }
        facts.keys = h.finish();
        facts.cut_off = cut_off;
        facts
    }

    fn add(&mut self, h: &mut impl Hasher, r: IntervalRecord) {
        hash_key(h, &r);
        self.count += 1;
        let first = self.first.get_or_insert_with(|| r.clone());
        if r.phase == IntervalPhase::Ramp && r.step == first.step && r.label == first.label {
            self.first_ramp_ms += r.interval_ms;
        }
        self.stepped |= r.step.is_some();
        self.tagged |= r.step.is_some() || r.label.is_some();
        self.wall_ms += r.interval_ms;
        if r.step.is_none() {
            self.unstepped = (self.unstepped.0 + 1, self.unstepped.1 + r.interval_ms);
        }
        *self.lengths.entry(r.interval_ms).or_default() += 1;
        if r.phase == IntervalPhase::Measure {
            self.measured.add(&r);
            if r.step.is_some() {
                self.stepped_measured.add(&r);
            }
        }
        self.last = Some(r);
    }

    /// The measured intervals summed: in a sequence only the steps are measured (not
    /// preconditioning); ramps never are.
    pub(super) fn measured(&self) -> Measured {
        match self.stepped {
            true => self.stepped_measured.clone(),
            false => Measured {
                all: self.measured.clone(),
                steps: BTreeMap::new(),
            },
        }
    }

    /// The most common interval length, ms (1000 with none).
    pub(super) fn interval_ms(&self) -> u64 {
        (self.lengths.iter())
            .max_by_key(|&(ms, n)| (n, ms))
            .map_or(1000, |(&ms, _)| ms)
    }
}
