//! Results recovered from the NDJSON time series of a run that did not finish (killed with
//! `kill -9`, the machine crashed, the disk filled): every complete line is read back (a last
//! line cut off by the kill is left out), and the best [`RunResult`] the intervals allow is
//! built from them, marked `interrupted` with what was recovered and what is unknown, so every
//! report (`storlab report run.ndjson`, HTML, CSV, Markdown) can be made from it.
//!
//! An interval record holds counts (summed exactly), the mean latency (averaged weighted by
//! operations: exact), the maximum (exact) and the 99th percentile; the run-wide 99th
//! percentile is reported as the largest of the intervals' (an upper bound: no interval had
//! more than 1% of its I/Os above it, so neither had the run). Other percentiles cannot be
//! rebuilt from intervals and are left at 0. The job, the targets and the host are not in the
//! time series and are left empty.

use super::steps::{StepKind, StepResult};
use super::timeseries::{self, TimeSeries};
use super::{
    ClassResult, DeviceResult, EngineInfo, Interrupted, Phase, PhaseRecord, PhaseState, RunResult,
    StepRun,
};
use crate::job::{EngineKind, Job};
use crate::stats::histogram::LatencySummary;
use crate::stats::host::{CpuPercent, DiskDelta, HostInfo};
use crate::stats::summary::{ClassSummary, DirSummary};
use crate::stats::timeseries::{
    IntervalClass, IntervalDir, IntervalPhase, IntervalRecord, SequenceRun,
};
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::path::Path;

/// The results of the run whose time series is `path`, rebuilt from its records alone.
pub fn load(path: &Path) -> Result<RunResult> {
    let mut r = recover_file(path).map_err(|e| crate::Usage(format!("{e:#}")))?;
    r.warnings.push(
        "recovered from the time series: the job, the targets and the host are not in it and are left empty; start and end times are estimated from the file's modification time".into(),
    );
    Ok(r)
}

/// The measurements of the run whose time series is `path`.
fn recover_file(path: &Path) -> Result<RunResult> {
    let series = timeseries::read(path)?;
    if series.records.is_empty() {
        bail!(
            "{} holds no complete interval record: the run stopped before its first interval ended, so there is nothing to report",
            path.display()
        );
    }
    let modified = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .map(chrono::DateTime::<chrono::Utc>::from);
    Ok(recover(&series, &path.display().to_string(), modified))
}

/// Completes a results file that storlab wrote before its workers started and never replaced
/// (`interrupted` is [`super::UNFINISHED`]): the measurements are recovered from the time
/// series, the job, targets and host are the file's own.
pub fn complete(unfinished: RunResult, series: &Path) -> Result<RunResult> {
    let mut r = recover_file(series).map_err(|e| crate::Usage(format!("{e:#}")))?;
    r.warnings.extend(unfinished.warnings);
    r.command = unfinished.command;
    r.invocation = unfinished.invocation;
    r.job = unfinished.job;
    r.host = unfinished.host;
    r.started_at = unfinished.started_at;
    r.engine = unfinished.engine;
    r.targets = unfinished.targets;
    let phases = std::mem::take(&mut r.phases);
    r.phases = unfinished.phases;
    r.phases.extend(phases);
    Ok(r)
}

/// One direction summed over intervals.
#[derive(Debug, Clone, Copy, Default)]
struct DirSum {
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
struct ClassSum([DirSum; 3]);

impl ClassSum {
    fn add(&mut self, c: &IntervalClass) {
        self.0[0].add(&c.read);
        self.0[1].add(&c.write);
        self.0[2].add(&c.flush);
    }

    fn summary(&self, seconds: f64) -> ClassSummary {
        ClassSummary {
            read: self.0[0].summary(seconds),
            write: self.0[1].summary(seconds),
            flush: self.0[2].summary(seconds),
        }
    }
}

/// Measured intervals summed: totals, classes, CPU (weighted by time) and devices.
#[derive(Debug, Clone, Default)]
struct Sum {
    ms: u64,
    total: ClassSum,
    classes: BTreeMap<String, ClassSum>,
    cpu: CpuPercent,
    devices: BTreeMap<String, DiskDelta>,
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

    fn seconds(&self) -> f64 {
        self.ms as f64 / 1e3
    }

    fn busy_pct(&self) -> f64 {
        self.cpu.system_user_pct + self.cpu.system_system_pct
    }
}

/// Measured intervals summed: the whole run, and each step with the runs it came from.
#[derive(Debug, Default)]
struct Measured {
    all: Sum,
    steps: BTreeMap<usize, (Sum, Vec<SequenceRun>)>,
}

impl Measured {
    /// Sums the measured records: in a sequence only the steps are measured (not
    /// preconditioning); ramps never are.
    fn sum(records: &[IntervalRecord], sequence: bool) -> Measured {
        let measured = |r: &&IntervalRecord| {
            r.phase == IntervalPhase::Measure && (!sequence || r.step.is_some())
        };
        let mut m = Measured::default();
        for r in records.iter().filter(measured) {
            m.all.add(r);
            if let Some(i) = r.step {
                let (sum, labels) = m.steps.entry(i).or_default();
                sum.add(r);
                if let Some(l) = r.label.filter(|l| !labels.contains(l)) {
                    labels.push(l);
                }
            }
        }
        m
    }

    /// The row of every step, the last one interrupted.
    fn step_rows(&self) -> Vec<StepResult> {
        let last_step = self.steps.keys().next_back().copied();
        self.steps
            .iter()
            .map(|(&index, (sum, labels))| step_row(index, sum, labels, Some(index) == last_step))
            .collect()
    }
}

/// Builds the results of the run whose time series `series` is (`source` names it; `modified`
/// is when it was last written, which is about when the run stopped).
pub fn recover(
    series: &TimeSeries,
    source: &str,
    modified: Option<chrono::DateTime<chrono::Utc>>,
) -> RunResult {
    let records = &series.records;
    let sequence = records.iter().any(|r| r.step.is_some());
    let measured = Measured::sum(records, sequence);
    let ramp_ms = first_ramp_ms(records);
    let wall_ms: u64 = records.iter().map(|r| r.interval_ms).sum();
    let ended = modified.unwrap_or_else(chrono::Utc::now);
    let started = ended - chrono::Duration::milliseconds(wall_ms as i64);
    let stamp =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);

    let step_rows = measured.step_rows();
    let phases = if sequence {
        sequence_phases(records, &step_rows)
    } else {
        run_phases(&measured.all, ramp_ms)
    };
    let warnings = vec![
        "recovered from the time series: counts, rates, mean and maximum latency are exact; the 99th percentile is an upper bound (the largest of the intervals' 99th percentiles); the other percentiles, the minimum and the standard deviation are unknown and shown as 0".into(),
    ];
    let all = &measured.all;
    let secs = all.seconds();
    RunResult {
        schema_version: super::schema::SCHEMA_VERSION,
        storlab_version: env!("CARGO_PKG_VERSION").into(),
        command: Vec::new(),
        invocation: Default::default(),
        description: None,
        job: recovered_job(records, source, all, ramp_ms),
        host: HostInfo::default(),
        started_at: stamp(started),
        ended_at: stamp(ended),
        interrupted: Interrupted::Yes(interruption(series, source)),
        phases,
        engine: EngineInfo {
            name: "unknown".into(),
            fallback_reason: None,
            notes: Vec::new(),
        },
        warnings,
        measured_ms: all.ms,
        targets: Vec::new(),
        totals: all.total.summary(secs),
        classes: class_results(all),
        workers: Vec::new(),
        devices: device_results(all),
        host_cpu: all.cpu,
        errors: Vec::new(),
        timeseries_path: Some(source.to_string()),
        timeseries: records.clone(),
        verify: None,
        verdict: None,
        exchange: None,
        max_mailboxes: None,
        trials: None,
        steps: sequence.then_some(step_rows),
        precondition: None,
        users: None,
        block_sample: None,
        cache_tiers: Vec::new(),
        page_cache: None,
        reuse: None,
        hosts: Vec::new(),
    }
}

/// The ramp of the first run in the records, ms.
fn first_ramp_ms(records: &[IntervalRecord]) -> u64 {
    records
        .iter()
        .filter(|r| r.phase == IntervalPhase::Ramp && r.step == records[0].step)
        .filter(|r| r.label == records[0].label)
        .map(|r| r.interval_ms)
        .sum()
}

/// The record of phase `name`: how it ended and how long it took.
fn phase(name: Phase, state: PhaseState, seconds: f64) -> PhaseRecord {
    PhaseRecord {
        name,
        state,
        seconds,
    }
}

/// The phases of a sequence: preconditioning (when its intervals are there), then each step.
fn sequence_phases(records: &[IntervalRecord], step_rows: &[StepResult]) -> Vec<PhaseRecord> {
    let mut phases = Vec::new();
    let pre: Vec<&IntervalRecord> = records.iter().filter(|r| r.step.is_none()).collect();
    if !pre.is_empty() {
        let ms: u64 = pre.iter().map(|r| r.interval_ms).sum();
        phases.push(phase(
            Phase::Precondition,
            PhaseState::Completed,
            ms as f64 / 1e3,
        ));
    }
    for row in step_rows {
        phases.push(phase(
            Phase::step(row.index, StepRun::Only),
            PhaseState::of(!row.interrupted),
            row.measured_ms as f64 / 1e3,
        ));
    }
    phases
}

/// The phases of a single run: the ramp (when it ran), then the measurement, interrupted.
fn run_phases(all: &Sum, ramp_ms: u64) -> Vec<PhaseRecord> {
    let mut phases = Vec::new();
    if ramp_ms > 0 {
        let state = PhaseState::of(all.ms > 0);
        phases.push(phase(Phase::Ramp, state, ramp_ms as f64 / 1e3));
    }
    let state = if all.ms > 0 {
        PhaseState::Interrupted
    } else {
        PhaseState::NotStarted
    };
    phases.push(phase(Phase::Measure, state, all.seconds()));
    phases
}

/// Why the results are marked interrupted: what they were recovered from, and where the run
/// was last heard of.
fn interruption(series: &TimeSeries, source: &str) -> String {
    let records = &series.records;
    let mut why = format!(
        "the run did not finish (killed, or the machine stopped): these results are recovered from its time series {source} alone ({} intervals{})",
        records.len(),
        if series.cut_off {
            ", the last one cut off"
        } else {
            ""
        }
    );
    if let Some(last) = records.last() {
        why.push_str(&format!(
            "; it was last heard of {:.1} s into {}",
            last.t_end_ms as f64 / 1e3,
            match (last.step, &last.label) {
                (Some(i), Some(l)) => format!("step {i} ({l}), {}", last.phase),
                (Some(i), None) => format!("step {i}, {}", last.phase),
                (None, Some(l)) => format!("{l}, {}", last.phase),
                (None, None) => last.phase.to_string(),
            }
        ));
    }
    why
}

/// The job as far as the time series tells it: its times and classes; no targets or workers.
fn recovered_job(records: &[IntervalRecord], source: &str, all: &Sum, ramp_ms: u64) -> Job {
    Job {
        description: Some(format!("recovered from the time series {source}")),
        engine: EngineKind::IoUring,
        duration_ms: all.ms,
        ramp_ms,
        interval_ms: interval_ms(records),
        seed: 0,
        buffered: false,
        destroy_data: false,
        batch: 1,
        verify: false,
        on_error: Default::default(),
        sample_blocks: false,
        targets: Vec::new(),
        workers: Vec::new(),
        classes: all.classes.keys().cloned().collect(),
        warnings: Vec::new(),
        sequence: Default::default(),
    }
}

/// Each class's reads, writes and flushes; how writes were made durable is unknown.
fn class_results(all: &Sum) -> BTreeMap<String, ClassResult> {
    let secs = all.seconds();
    all.classes
        .iter()
        .map(|(name, c)| {
            let s = c.summary(secs);
            (
                name.clone(),
                ClassResult {
                    read: s.read,
                    write: s.write,
                    flush: s.flush,
                    write_durability: "unknown".into(),
                    measured_ms: None,
                    steps: None,
                },
            )
        })
        .collect()
}

/// Each device's counters, its utilisation over the measured time.
fn device_results(all: &Sum) -> Vec<DeviceResult> {
    all.devices
        .iter()
        .map(|(name, d)| {
            let mut delta = *d;
            delta.util_pct = (d.busy_ms as f64 / all.ms.max(1) as f64 * 100.0).min(100.0);
            DeviceResult {
                name: name.clone(),
                model: None,
                delta,
            }
        })
        .collect()
}

/// The most common interval length, ms.
fn interval_ms(records: &[IntervalRecord]) -> u64 {
    let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
    for r in records {
        *counts.entry(r.interval_ms).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(ms, n)| (n, ms))
        .map_or(1000, |(ms, _)| ms)
}

/// The row of step `index` from its measured intervals (`runs`: which runs they came from).
fn step_row(index: usize, sum: &Sum, runs: &[SequenceRun], interrupted: bool) -> StepResult {
    let secs = sum.seconds();
    let totals = sum.total.summary(secs);
    let (kind, curve_level_pct) = match runs.first() {
        Some(SequenceRun::CurveMax) => (StepKind::CurveMax, Some(100.0)),
        Some(&SequenceRun::CurveLevel(pct)) => (StepKind::CurveLevel, Some(pct)),
        _ => (StepKind::Step, None),
    };
    let busy = sum.busy_pct();
    let shown: Vec<String> = runs
        .iter()
        .filter(|r| **r != SequenceRun::Run)
        .map(SequenceRun::to_string)
        .collect();
    StepResult {
        index,
        parameters: BTreeMap::new(),
        label: if shown.is_empty() {
            format!("step {index}")
        } else {
            format!("step {index} ({})", shown.join(", "))
        },
        kind,
        curve_level_pct,
        target_iops: None,
        measured_ms: sum.ms,
        ios_per_cpu_pct: if busy > 0.0 {
            totals.iops() / busy
        } else {
            0.0
        },
        classes: sum
            .classes
            .iter()
            .map(|(n, c)| (n.clone(), c.summary(secs)))
            .collect(),
        totals,
        host_cpu: sum.cpu,
        cpu_busy_pct: busy,
        repetitions: None,
        steady: None,
        interrupted,
        cache_tiers: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        index: u64,
        phase: IntervalPhase,
        ops: u64,
        mean: f64,
        p99: u64,
        max: u64,
    ) -> IntervalRecord {
        let dir = IntervalDir {
            ops,
            bytes: ops * 4096,
            errors: 0,
            iops: ops as f64,
            bytes_per_s: (ops * 4096) as f64,
            latency_mean_ns: mean,
            latency_p99_ns: p99,
            latency_max_ns: max,
        };
        let class = IntervalClass {
            read: dir,
            ..Default::default()
        };
        IntervalRecord {
            index,
            phase,
            t_end_ms: (index + 1) * 1000,
            interval_ms: 1000,
            classes: [("c".to_string(), class)].into_iter().collect(),
            total: class,
            ..Default::default()
        }
    }

    #[test]
    fn totals_sum_the_measured_intervals() {
        let series = TimeSeries {
            records: vec![
                record(0, IntervalPhase::Ramp, 1000, 50.0, 60, 70),
                record(1, IntervalPhase::Measure, 100, 100.0, 150, 400),
                record(2, IntervalPhase::Measure, 300, 200.0, 900, 1000),
            ],
            cut_off: false,
        };
        let r = recover(&series, "x.ndjson", None);
        assert!(matches!(r.interrupted, Interrupted::Yes(ref w) if w.contains("x.ndjson")));
        assert_eq!(r.measured_ms, 2000);
        let read = &r.totals.read;
        assert_eq!(read.ops, 400);
        assert_eq!(read.bytes, 400 * 4096);
        assert_eq!(read.iops, 200.0);
        assert_eq!(
            read.latency_ns.mean,
            (100.0 * 100.0 + 300.0 * 200.0) / 400.0
        );
        assert_eq!(read.latency_ns.max, 1000);
        assert_eq!(read.latency_ns.p99, 900);
        assert_eq!(r.classes["c"].read.ops, 400);
        assert_eq!(r.timeseries.len(), 3);
        let phases: Vec<(Phase, PhaseState)> = r.phases.iter().map(|p| (p.name, p.state)).collect();
        assert_eq!(
            phases,
            [
                (Phase::Ramp, PhaseState::Completed),
                (Phase::Measure, PhaseState::Interrupted)
            ]
        );
        assert!(r.steps.is_none());
    }

    #[test]
    fn steps_are_rebuilt_from_their_intervals() {
        let tag = |mut r: IntervalRecord, step: usize, rep: u32| {
            r.step = Some(step);
            r.label = Some(SequenceRun::Rep(rep));
            r
        };
        let series = TimeSeries {
            records: vec![
                record(0, IntervalPhase::Measure, 5, 1.0, 1, 1),
                tag(record(0, IntervalPhase::Measure, 10, 1.0, 1, 1), 0, 1),
                tag(record(0, IntervalPhase::Measure, 20, 1.0, 1, 1), 0, 2),
                tag(record(0, IntervalPhase::Measure, 30, 1.0, 1, 1), 1, 1),
            ],
            cut_off: true,
        };
        let r = recover(&series, "s.ndjson", None);
        let steps = r.steps.as_ref().unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].totals.read.ops, 30);
        assert!(!steps[0].interrupted);
        assert_eq!(steps[0].label, "step 0 (rep 1, rep 2)");
        assert!(steps[1].interrupted);
        // Preconditioning (no step) is not measured.
        assert_eq!(r.totals.read.ops, 60);
        assert_eq!(r.phases[0].name, Phase::Precondition);
        assert_eq!(r.phases[2].state, PhaseState::Interrupted);
    }
}
