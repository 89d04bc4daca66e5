//! Step sequences: preconditioning, then every step of the job's cycles, each run once, `repeat`
//! times, in steady-state rounds, or as a rate curve (closed-loop maximum, then open-loop
//! levels). Every run goes through [`Execute`] (an ordinary [`super::execute`]); its time series is appended to the
//! one NDJSON file with the step index and run label. The results hold one object per step and
//! top-level totals merged from every step's histograms, and one phase per run (`step 2`,
//! `step 0 rep 3`, `step 1 round 4`): completed, interrupted, or (after an interruption) the
//! runs and steps that never started.

use crate::job::steps::{Param, Precondition, Statistic, SteadyMetric, expand};
use crate::job::{Access, Distribution, IoLimit, Job, OnDone, Worker};
use crate::results::steps::{
    PreconditionResult, Repetitions, RunFigures, SteadyResult, StepKind, StepResult,
};
use crate::results::{
    self, ClassResult, DeviceResult, DirCounts, Interrupted, Phase, PhaseRecord, PhaseState,
    RunResult, StepRun,
};
use crate::run::{Execute, FromAccess, RunOptions};
use crate::stats::histogram::LatencySummary;
use crate::stats::host::CpuPercent;
use crate::stats::repetition::spread;
use crate::stats::steady::{SteadyRule, check, first_steady_round};
use crate::stats::summary::ClassSummary;
use crate::stats::timeseries::SequenceRun;
use crate::stats::verification::VerifyCounts;
use anyhow::Result;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Repetitions whose IOPS coefficient of variation exceeds this are marked.
pub(crate) const CV_LIMIT_PCT: f64 = 5.0;
/// Preconditioning: writes in flight per target.
pub(crate) const PRECONDITION_QUEUE_DEPTH: u32 = 16;

struct Sequencer<'a> {
    opts: &'a RunOptions,
    exec: &'a mut dyn Execute,
    runs: usize,
    first_prepare: Option<PhaseRecord>,
    last: Option<RunResult>,
    warnings: Vec<String>,
    interrupted: Option<String>,
    /// Block devices' counters summed over every run.
    devices: BTreeMap<String, DeviceResult>,
    /// Per-target counts summed over every run: (ops, bytes, errors).
    targets: Vec<(DirCounts, DirCounts, DirCounts)>,
    /// The first I/O errors of every run.
    errors: Vec<crate::stats::errors::ErrorDetail>,
    /// One phase per run (and, after an interruption, per run or step that never started).
    phases: Vec<PhaseRecord>,
    /// Data verification's counts over every run (with `verify`).
    verify: Option<VerifyCounts>,
    /// storlab's own cost over every run.
    cost: Option<crate::results::cost::CostResult>,
}

/// Runs a job with a sequence (steps, repetitions, curve, steady state, preconditioning).
pub(crate) fn run(job: &Job, opts: &RunOptions, exec: &mut dyn Execute) -> Result<RunResult> {
    let started_at = chrono::Utc::now();
    let mut s = Sequencer {
        opts,
        exec,
        runs: 0,
        first_prepare: None,
        last: None,
        warnings: Vec::new(),
        interrupted: None,
        devices: BTreeMap::new(),
        targets: Vec::new(),
        errors: Vec::new(),
        phases: Vec::new(),
        verify: None,
        cost: None,
    };
    let precondition = match job.sequence.precondition {
        Some(p) => s.precondition(job, p)?,
        None => None,
    };
    let mut steps: Vec<StepResult> = Vec::new();
    let planned = expand(job);
    // A curve's levels are steps of their own.
    let rows_per_step = 1 + job.sequence.curve.len();
    // After an interruption: the first step index and the number of steps never started.
    let mut not_started = (0, planned.len() * rows_per_step);
    if s.interrupted.is_none() {
        for (n, step) in planned.iter().enumerate() {
            let label = if let Some(label) = job.sequence.step_labels.get(n) {
                label.clone()
            } else if step.parameters.is_empty() {
                "the job as written".to_string()
            } else {
                step.parameters
                    .iter()
                    .map(|(p, v)| format!("{}={}", p.name(), p.show(*v)))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let parameters: BTreeMap<String, f64> = step
                .parameters
                .iter()
                .map(|(p, v)| (p.name().to_string(), *v))
                .collect();
            let index = steps.len();
            let rows = if !job.sequence.curve.is_empty() {
                s.curve(&step.job, index, &parameters, &label)?
            } else if job.sequence.steady.is_some() {
                s.steady(&step.job, index, &parameters, &label)?
                    .into_iter()
                    .collect()
            } else {
                s.repeat(&step.job, index, &parameters, &label)?
                    .into_iter()
                    .collect()
            };
            // A stop rule without a curve ends the cycles at the first step where it holds
            // (a capacity search: the step before it is the answer).
            let stop = job.sequence.curve.is_empty()
                && (rows.last()).is_some_and(|row| holds(job.sequence.stop_when.as_ref(), row));
            for row in rows {
                s.exec.observer().step(&row);
                steps.push(row);
            }
            let later = planned.len() - n - 1;
            let plural = if later == 1 { "" } else { "s" };
            if stop && later > 0 {
                s.warnings.push(format!(
                    "the cycle stopped at step {index} ({label}): the stop rule held; {later} later step{plural} not run"
                ));
                break;
            }
            // A worker with on_done = "end-run" that had done its I/Os ends the sequence too.
            let ended_by = (s.last.as_ref()).and_then(|r| {
                (r.workers.iter()).find(|w| {
                    w.ended_run
                        && (step.job.workers.iter())
                            .any(|j| j.name == w.name && j.on_done == OnDone::EndRun)
                })
            });
            if let Some(w) = ended_by.filter(|_| later > 0) {
                s.warnings.push(format!(
                    "worker `{}` had done its I/Os in step {index} ({label}) and ended the run (on_done = \"end-run\"): {later} later step{plural} not run",
                    w.name
                ));
                break;
            }
            if s.interrupted.is_some() {
                let left = planned.len() - n - 1;
                not_started = (index + rows_per_step, left * rows_per_step);
                break;
            }
        }
    }
    if s.interrupted.is_some() {
        let (first, count) = not_started;
        for index in first..first + count {
            s.not_started(Phase::step(index, StepRun::Only));
        }
    }
    s.finish(job, started_at, steps, precondition)
}

impl Sequencer<'_> {
    /// One run, appended to the time series and recorded as phase `phase`. `None`: the run
    /// never started, because a stop was asked for before it (during the pause between runs).
    fn sub(
        &mut self,
        job: &Job,
        step: Option<usize>,
        label: SequenceRun,
        phase: Phase,
    ) -> Result<Option<RunResult>> {
        if self.runs > 0 {
            if job.sequence.pause_ms > 0 {
                // Asleep for the pause; a stop request rings the bell and ends it.
                let until = Instant::now() + Duration::from_millis(job.sequence.pause_ms);
                loop {
                    let ticket = crate::bell::ticket();
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() || self.exec.signals().stop.load(Ordering::Relaxed) {
                        break;
                    }
                    crate::bell::sleep_for(ticket, left.as_nanos() as u64);
                }
            }
            if let Some(why) = self
                .exec
                .signals()
                .reason(&format!("the pause before {phase}"))
            {
                self.interrupted = Some(why);
                self.not_started(phase);
                return Ok(None);
            }
        }
        let mut opts = self.opts.clone();
        opts.step = step;
        opts.label = Some(label);
        opts.append_timeseries = self.runs > 0;
        let mut plain = job.clone();
        plain.sequence = Default::default();
        let r = self.exec.execute(&plain, &opts, &FromAccess)?;
        self.runs += 1;
        if self.first_prepare.is_none() {
            self.first_prepare = r.phases.iter().find(|p| p.name == Phase::Prepare).cloned();
        }
        for w in &r.warnings {
            if !self.warnings.contains(w) {
                self.warnings.push(w.clone());
            }
        }
        if self.targets.len() < r.targets.len() {
            self.targets.resize(r.targets.len(), Default::default());
        }
        for (sum, t) in self.targets.iter_mut().zip(&r.targets) {
            sum.0.add(&t.ops);
            sum.1.add(&t.bytes);
            sum.2.add(&t.errors);
        }
        if let Some(c) = &r.cost {
            self.cost = Some(match &self.cost {
                Some(sum) => sum.and(c),
                None => c.clone(),
            });
        }
        if let Some(v) = &r.verify {
            let all = self.verify.get_or_insert_with(|| VerifyCounts {
                block_bytes: v.block_bytes,
                ..VerifyCounts::default()
            });
            all.merge(v);
            // The last run's read-back pass checked the targets as the sequence left them.
            all.read_back = v.read_back.clone();
        }
        let room = (crate::engine::worker::ERROR_DETAILS * 4).saturating_sub(self.errors.len());
        self.errors.extend(r.errors.iter().take(room).cloned());
        for d in &r.devices {
            let sum = self
                .devices
                .entry(d.name.clone())
                .or_insert_with(|| DeviceResult {
                    name: d.name.clone(),
                    model: d.model.clone(),
                    delta: Default::default(),
                });
            sum.delta.add(&d.delta);
        }
        // The run's own phases say where it stopped: before it measured anything (prepare,
        // ramp) or during its measurement.
        let stopped_in = r
            .phases
            .iter()
            .find(|p| p.state == PhaseState::Interrupted)
            .map(|p| p.name);
        self.phases.push(PhaseRecord {
            name: phase,
            state: match (r.interrupted.stopped_early(), stopped_in) {
                (false, _) => PhaseState::Completed,
                (true, Some(Phase::Prepare)) => PhaseState::NotStarted,
                (true, _) => PhaseState::Interrupted,
            },
            seconds: r
                .phases
                .iter()
                .filter(|p| p.name != Phase::Prepare)
                .map(|p| p.seconds)
                .sum(),
            cpu_s: (r.phases.iter())
                .filter(|p| p.name != Phase::Prepare)
                .map(|p| p.cpu_s)
                .sum(),
        });
        if let Some(why) = r.interrupted.reason() {
            // Ctrl-C or SIGTERM: say where in the sequence (other reasons say it themselves).
            let during = format!("{phase} ({})", stopped_in.unwrap_or(Phase::Measure));
            let signals = self.exec.signals();
            let reason = signals.reason(&during).filter(|_| signals.signalled());
            self.interrupted = Some(reason.unwrap_or_else(|| why.to_string()));
        }
        self.last = Some(r.clone());
        Ok(Some(r))
    }

    /// Records a run or step that never started.
    fn not_started(&mut self, phase: Phase) {
        self.phases.push(PhaseRecord::not_started(phase));
    }

    fn precondition(&mut self, job: &Job, p: Precondition) -> Result<Option<PreconditionResult>> {
        self.exec.observer().phase(Phase::Precondition);
        let mut pj = job.clone();
        pj.classes = vec!["precondition".into()];
        pj.ramp_ms = 0;
        pj.duration_ms = 30 * 24 * 3600 * 1000;
        pj.workers = (0..job.targets.len())
            .map(|t| {
                let random = if p.random { 100.0 } else { 0.0 };
                let access = Access {
                    distribution: if p.random {
                        Distribution::Shuffle
                    } else {
                        Distribution::Uniform
                    },
                    ..Access::new(0, p.block_bytes, 0.0, random)
                };
                Worker {
                    io_limit: Some(IoLimit::Passes(p.passes)),
                    ..Worker::closed_loop(
                        format!("precondition-{}", job.targets[t].name),
                        vec![t],
                        PRECONDITION_QUEUE_DEPTH,
                        vec![access],
                    )
                }
            })
            .collect();
        let Some(r) = self.sub(&pj, None, SequenceRun::Precondition, Phase::Precondition)? else {
            return Ok(None);
        };
        let bytes = r.totals.write.bytes;
        let seconds = r.measured_ms as f64 / 1e3;
        let needed: u64 = r
            .targets
            .iter()
            .map(|t| t.size_bytes / p.block_bytes * p.block_bytes * p.passes as u64)
            .sum();
        let result = PreconditionResult {
            passes: p.passes,
            pattern: if p.random { "random" } else { "sequential" }.into(),
            block_size_bytes: p.block_bytes,
            bytes_written: bytes,
            seconds,
            mb_per_s: if seconds > 0.0 {
                bytes as f64 / seconds / 1e6
            } else {
                0.0
            },
            complete: bytes >= needed && r.totals.errors() == 0,
        };
        if !result.complete {
            if let Some(phase) = self
                .phases
                .last_mut()
                .filter(|p| p.state == PhaseState::Completed)
            {
                phase.state = PhaseState::Interrupted;
            }
        }
        Ok(Some(result))
    }

    fn repeat(
        &mut self,
        job: &Job,
        index: usize,
        parameters: &BTreeMap<String, f64>,
        label: &str,
    ) -> Result<Option<StepResult>> {
        let n = job.sequence.repeat;
        let phase = |rep: u32| {
            Phase::step(
                index,
                if n > 1 {
                    StepRun::Rep(rep)
                } else {
                    StepRun::Only
                },
            )
        };
        let mut runs = Vec::new();
        for rep in 1..=n {
            let tag = if n > 1 {
                SequenceRun::Rep(rep)
            } else {
                SequenceRun::Run
            };
            let r = self.sub(job, Some(index), tag, phase(rep))?;
            runs.extend(r);
            if self.interrupted.is_some() {
                for later in rep + 1..=n {
                    self.not_started(phase(later));
                }
                break;
            }
        }
        if runs.is_empty() {
            return Ok(None);
        }
        let mut row = step_row(index, parameters, label, StepKind::Step, &runs);
        // Cut short, even when the stop came between two of its runs.
        row.interrupted |= self.interrupted.is_some();
        if n > 1 {
            let figures: Vec<RunFigures> = runs.iter().map(figures).collect();
            let col =
                |f: fn(&RunFigures) -> f64| spread(&figures.iter().map(f).collect::<Vec<_>>());
            let iops = col(|f| f.iops);
            let high = iops.cv_pct > CV_LIMIT_PCT;
            if high {
                self.warnings.push(format!(
                    "step {index} ({label}): IOPS varied by {:.1}% (coefficient of variation) across {} runs",
                    iops.cv_pct,
                    figures.len()
                ));
            }
            row.repetitions = Some(Repetitions {
                iops,
                mb_per_s: col(|f| f.mb_per_s),
                latency_mean_ns: col(|f| f.latency_mean_ns),
                latency_p50_ns: col(|f| f.latency_p50_ns as f64),
                latency_p99_ns: col(|f| f.latency_p99_ns as f64),
                high_variation: high,
                runs: figures,
            });
        }
        Ok(Some(row))
    }

    fn steady(
        &mut self,
        job: &Job,
        index: usize,
        parameters: &BTreeMap<String, f64>,
        label: &str,
    ) -> Result<Option<StepResult>> {
        let st = job.sequence.steady.expect("steady set");
        let rule = SteadyRule {
            window: st.window as usize,
            range_pct: st.range_pct,
            slope_pct: st.slope_pct,
        };
        let mut runs: Vec<RunResult> = Vec::new();
        // Each round's IOPS and mean latency; the window judges `st.metric`'s.
        let (mut iops, mut latency) = (Vec::new(), Vec::new());
        let judged = |iops: &'_ [f64], latency: &'_ [f64]| match st.metric {
            SteadyMetric::Iops => iops.to_vec(),
            SteadyMetric::Latency => latency.to_vec(),
        };
        let mut steady_at = None;
        for round in 1..=st.max_rounds {
            let mut rj = job.clone();
            rj.duration_ms = st.round_ms;
            if round > 1 {
                rj.ramp_ms = 0;
            }
            let phase = Phase::step(index, StepRun::Round(round));
            let Some(r) = self.sub(&rj, Some(index), SequenceRun::Round(round), phase)? else {
                break;
            };
            iops.push(r.totals.iops());
            latency.push(r.totals.reads_and_writes().mean);
            runs.push(r);
            if self.interrupted.is_some() {
                break;
            }
            if let Some(at) = first_steady_round(&judged(&iops, &latency), &rule) {
                steady_at = Some(at);
                break;
            }
        }
        if runs.is_empty() {
            return Ok(None);
        }
        let window_start = runs.len().saturating_sub(st.window as usize);
        let window = &runs[window_start..];
        let mut row = step_row(index, parameters, label, StepKind::Step, window);
        row.interrupted |= self.interrupted.is_some();
        if steady_at.is_none() {
            self.warnings.push(format!(
                "step {index} ({label}) did not reach steady state ({}) in {} rounds of {} ms: its figures are from the last {} rounds",
                st.metric.name(),
                runs.len(),
                st.round_ms,
                st.window
            ));
        }
        row.steady = Some(SteadyResult {
            metric: st.metric,
            window: check(&judged(&iops, &latency), &rule),
            rounds_iops: iops,
            rounds_latency_mean_ns: latency,
            steady_at_round: steady_at,
            window_rounds: st.window,
        });
        Ok(Some(row))
    }

    fn curve(
        &mut self,
        job: &Job,
        index: usize,
        parameters: &BTreeMap<String, f64>,
        label: &str,
    ) -> Result<Vec<StepResult>> {
        let seq = &job.sequence;
        let levels = |first: usize| first..=index + seq.curve.len();
        let only = |i: usize| Phase::step(i, StepRun::Only);
        let Some(max_run) = self.sub(job, Some(index), SequenceRun::CurveMax, only(index))? else {
            for later in levels(index + 1) {
                self.not_started(only(later));
            }
            return Ok(Vec::new());
        };
        let max = max_run.totals.iops();
        let mut rows = vec![step_row(
            index,
            parameters,
            label,
            StepKind::CurveMax,
            std::slice::from_ref(&max_run),
        )];
        rows[0].curve_level_pct = Some(100.0);
        if self.interrupted.is_some() {
            for later in levels(index + 1) {
                self.not_started(only(later));
            }
            return Ok(rows);
        }
        if max <= 0.0 {
            return Ok(rows);
        }
        for &level in &seq.curve {
            let total = max * level / 100.0;
            let mut lj = job.clone();
            let per_worker = total / lj.workers.len().max(1) as f64;
            crate::job::steps::apply(&mut lj, Param::Rate, per_worker);
            let at = index + rows.len();
            let Some(r) = self.sub(&lj, Some(at), SequenceRun::CurveLevel(level), only(at))? else {
                for later in levels(at + 1) {
                    self.not_started(only(later));
                }
                break;
            };
            let mut row = step_row(
                at,
                parameters,
                label,
                StepKind::CurveLevel,
                std::slice::from_ref(&r),
            );
            row.curve_level_pct = Some(level);
            row.target_iops = Some(total);
            row.parameters.insert("curve_level_pct".into(), level);
            let stop = holds(seq.stop_when.as_ref(), &row);
            rows.push(row);
            if stop {
                self.warnings.push(format!(
                    "step {index} ({label}): the curve stopped at {level}% of the maximum: the stop rule held"
                ));
                break;
            }
            if self.interrupted.is_some() {
                for later in levels(at + 1) {
                    self.not_started(only(later));
                }
                break;
            }
        }
        Ok(rows)
    }

    fn finish(
        self,
        job: &Job,
        started: chrono::DateTime<chrono::Utc>,
        steps: Vec<StepResult>,
        precondition: Option<PreconditionResult>,
    ) -> Result<RunResult> {
        let Some(mut r) = self.last else {
            anyhow::bail!("the sequence ran nothing");
        };
        let measured_ms: u64 = steps.iter().map(|s| s.measured_ms).sum();
        let secs = measured_ms as f64 / 1e3;
        r.job = job.clone();
        r.started_at = started.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        r.measured_ms = measured_ms;
        r.totals = ClassSummary::merge(&steps.iter().map(|s| &s.totals).collect::<Vec<_>>(), secs);
        let names: Vec<String> = job.classes.clone();
        r.classes = names
            .iter()
            .map(|n| {
                // Each class's rates over the time of the steps it ran in (a fio group's
                // class ran in its group's step only), not the whole sequence's.
                let ran: Vec<&StepResult> =
                    steps.iter().filter(|s| s.classes.contains_key(n)).collect();
                let ran_ms: u64 = ran.iter().map(|s| s.measured_ms).sum();
                let parts: Vec<&ClassSummary> =
                    ran.iter().filter_map(|s| s.classes.get(n)).collect();
                let m = ClassSummary::merge(&parts, ran_ms as f64 / 1e3);
                let durability = r
                    .classes
                    .get(n)
                    .map(|c| c.write_durability.clone())
                    .unwrap_or_else(|| "none".into());
                (
                    n.clone(),
                    ClassResult {
                        read: m.read,
                        write: m.write,
                        flush: m.flush,
                        write_durability: durability,
                        measured_ms: Some(ran_ms),
                        steps: Some(ran.iter().map(|s| s.index).collect()),
                    },
                )
            })
            .collect();
        r.host_cpu = weighted_cpu(&steps);
        r.host_cpus = crate::stats::host::cpus::PerCpu::weighted(
            (steps.iter()).filter_map(|s| Some((s.host_cpus.as_ref()?, s.measured_ms as f64))),
        );
        let precondition_ms = precondition.as_ref().map_or(0.0, |p| p.seconds * 1e3);
        r.devices = self
            .devices
            .into_values()
            .map(|mut d| {
                let wall_ms = measured_ms as f64 + precondition_ms;
                d.delta.util_pct = (d.delta.busy_ms as f64 / wall_ms.max(1.0) * 100.0).min(100.0);
                d
            })
            .collect();
        let mut phases: Vec<PhaseRecord> = self.first_prepare.into_iter().collect();
        phases.extend(self.phases);
        r.phases = phases;
        for (t, (ops, bytes, errors)) in r.targets.iter_mut().zip(self.targets) {
            t.ops = ops;
            t.bytes = bytes;
            t.errors = errors;
        }
        r.errors = self.errors;
        r.interrupted = match self.interrupted {
            Some(w) => Interrupted::Yes(w),
            None => Interrupted::No,
        };
        r.warnings = self.warnings;
        let ts = results::file::timeseries_path(&self.opts.results_path);
        r.timeseries = results::timeseries::Series::of_file(ts.clone());
        r.timeseries_path = Some(ts.display().to_string());
        r.steps = Some(steps);
        r.precondition = precondition;
        // Judged over every run: a failed I/O or a verification error in any step fails the
        // sequence, not only one in its last run.
        r.verify = self.verify;
        r.cost = self.cost;
        r.verdict = crate::run::integrity_verdict(&r, 0);
        self.exec.save(&self.opts.results_path, &r)?;
        Ok(r)
    }
}

fn figures(r: &RunResult) -> RunFigures {
    let t = &r.totals;
    let lat = t.reads_and_writes();
    RunFigures {
        iops: t.iops(),
        mb_per_s: t.bytes_per_s() / 1e6,
        latency_mean_ns: lat.mean,
        latency_p50_ns: lat.p50,
        latency_p99_ns: lat.p99,
        seconds: r.measured_ms as f64 / 1e3,
    }
}

fn step_row(
    index: usize,
    parameters: &BTreeMap<String, f64>,
    label: &str,
    kind: StepKind,
    runs: &[RunResult],
) -> StepResult {
    let measured_ms: u64 = runs.iter().map(|r| r.measured_ms).sum();
    let secs = measured_ms as f64 / 1e3;
    let totals = ClassSummary::merge(&runs.iter().map(|r| &r.totals).collect::<Vec<_>>(), secs);
    let mut classes = BTreeMap::new();
    for r in runs {
        // The classes this step's workers issue (a fio group's step runs its group's only).
        let issued: Vec<&str> = (r.job.workers.iter())
            .flat_map(|w| &w.access)
            .filter_map(|a| r.job.classes.get(a.class).map(String::as_str))
            .collect();
        for n in r.classes.keys().filter(|n| issued.contains(&n.as_str())) {
            if classes.contains_key(n) {
                continue;
            }
            let parts: Vec<ClassSummary> = runs
                .iter()
                .filter_map(|x| x.classes.get(n).map(|c| c.summary()))
                .collect();
            classes.insert(
                n.clone(),
                ClassSummary::merge(&parts.iter().collect::<Vec<_>>(), secs),
            );
        }
    }
    let host_cpu = CpuPercent::weighted(runs.iter().map(|r| (r.host_cpu, r.measured_ms as f64)));
    let busy = host_cpu.machine_busy_pct();
    StepResult {
        index,
        parameters: parameters.clone(),
        label: label.into(),
        kind,
        curve_level_pct: None,
        target_iops: None,
        measured_ms,
        ios_per_cpu_pct: if busy > 0.0 {
            totals.iops() / busy
        } else {
            0.0
        },
        totals,
        classes,
        host_cpu,
        cpu_busy_pct: busy,
        repetitions: None,
        steady: None,
        interrupted: runs.iter().any(|r| r.interrupted.stopped_early()),
        cache_tiers: runs
            .last()
            .map(|r| r.cache_tiers.clone())
            .unwrap_or_default(),
        data: runs.last().and_then(|r| r.data.clone()),
        workers: step_workers(runs, secs),
        host_cpus: crate::stats::host::cpus::PerCpu::weighted(
            (runs.iter()).filter_map(|r| Some((r.host_cpus.as_ref()?, r.measured_ms as f64))),
        ),
    }
}

/// Each worker of a step's runs, its figures over the runs merged (by name, in the order they
/// first ran).
fn step_workers(runs: &[RunResult], secs: f64) -> Vec<results::WorkerResult> {
    let mut names: Vec<&str> = Vec::new();
    for w in runs.iter().flat_map(|r| &r.workers) {
        if !names.contains(&w.name.as_str()) {
            names.push(&w.name);
        }
    }
    (names.into_iter())
        .map(|name| {
            let parts: Vec<&results::WorkerResult> = (runs.iter())
                .flat_map(|r| &r.workers)
                .filter(|w| w.name == name)
                .collect();
            let totals: Vec<&ClassSummary> = parts.iter().map(|w| &w.totals).collect();
            let mut classes = BTreeMap::new();
            for class in parts.iter().flat_map(|w| w.classes.keys()) {
                if classes.contains_key(class) {
                    continue;
                }
                let of: Vec<&ClassSummary> =
                    parts.iter().filter_map(|w| w.classes.get(class)).collect();
                classes.insert(class.clone(), ClassSummary::merge(&of, secs));
            }
            results::WorkerResult {
                name: name.to_string(),
                totals: ClassSummary::merge(&totals, secs),
                classes,
                unissued: parts.iter().map(|w| w.unissued).sum(),
                fatal: parts.iter().find_map(|w| w.fatal.clone()),
                ended_run: parts.iter().any(|w| w.ended_run),
            }
        })
        .collect()
}

fn weighted_cpu(steps: &[StepResult]) -> CpuPercent {
    CpuPercent::weighted(steps.iter().map(|s| (s.host_cpu, s.measured_ms as f64)))
}

/// A stop rule's statistic of a latency summary, ns.
/// Whether the stop rule holds for a step's row.
fn holds(rule: Option<&crate::job::steps::StopRule>, row: &StepResult) -> bool {
    rule.is_some_and(|rule| {
        let lat = match &rule.class {
            Some(c) => row.classes.get(c),
            None => Some(&row.totals),
        }
        .map(ClassSummary::reads_and_writes);
        lat.is_some_and(|l| statistic(rule.statistic, &l) > rule.threshold_ns as f64)
    })
}

fn statistic(s: Statistic, l: &LatencySummary) -> f64 {
    match s {
        Statistic::Mean => l.mean,
        Statistic::P50 => l.p50 as f64,
        Statistic::P90 => l.p90 as f64,
        Statistic::P95 => l.p95 as f64,
        Statistic::P99 => l.p99 as f64,
        Statistic::P99_9 => l.p99_9 as f64,
        Statistic::P99_99 => l.p99_99 as f64,
        Statistic::Max => l.max as f64,
    }
}
