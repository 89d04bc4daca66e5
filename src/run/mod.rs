//! A run, phase by phase: choose the engine, open and prepare the targets (prepare), start the
//! workers and collect interval statistics and host samples (ramp, measure), read back what was
//! written (verification), assemble and write the results file. Ctrl-C and SIGTERM stop every
//! phase within a second; a run that stops early or fails still writes its results, marked
//! `interrupted` with the reason, and the time series is streamed to NDJSON as it is produced.
//!
//! The parts: [`prepare`] (engine, alignment, targets, access generators), [`workers`] (threads
//! and the start gate), [`collect`] (intervals, host samples, the time series), [`verification`]
//! (block table, read-back, integrity verdict), [`assemble`] (the results), [`signals`] (stop
//! requests), [`sources`] (what drives each worker), `cluster` (one job over the ranks of a
//! run over many hosts; with MPI and in tests).
//!
//! Any workload (`crate::workloads`) is run through the small interface of [`workload`]: it
//! runs its jobs through [`Execute`] (so sequences and searches are tested with fake runs) and
//! gives each run the [`Sources`] of its workers.

mod assemble;
// Runs over many hosts: only with MPI, and in the tests (in-process ranks).
#[cfg(any(feature = "mpi", test))]
pub(crate) mod cluster;
mod collect;
#[cfg(test)]
pub(crate) mod fake;
pub(crate) mod limits;
mod pagecache;
mod placement;
pub(crate) mod prepare;
mod signals;
mod sources;
mod verification;
mod watchdog;
mod workers;
mod workload;

pub(crate) use signals::Signals;
pub(crate) use sources::{FromAccess, Sources, WorkerInput};
pub(crate) use verification::{integrity_verdict, verification_rule};
pub(crate) use workers::{Driver, OwnBackend};
pub(crate) use workload::Workload;

use crate::Usage;
use crate::engine::sample::{self, SampleSpec};
use crate::job::{Job, OnError};
use crate::results::description::Description;
use crate::results::progress::Observer;
use crate::results::{self, Interrupted, Invocation, Phase, PhaseState, RunResult};
use crate::stats::host;
use crate::stats::timeseries::{IntervalGrid, SequenceRun};
use anyhow::Result;
use assemble::{Draft, assemble, device_names, fill_measurement, target_result};
use collect::{Collected, Collector};
use prepare::Opened;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Where results go and what to record about the invocation.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    /// Results file (JSON). The NDJSON time series is written beside it.
    pub results_path: PathBuf,
    /// The command line, recorded in the results.
    pub command: Vec<String>,
    /// What ran, recorded in the results.
    pub invocation: Invocation,
    /// What the workload said it would do, recorded in the results.
    pub description: Option<Description>,
    /// Step index stamped on interval records (step sequences).
    pub step: Option<usize>,
    /// Which run of a sequence, stamped on interval records (`rep 2`, `round 3`).
    pub label: Option<SequenceRun>,
    /// Append to the time series instead of starting it anew (later runs of a sequence).
    pub append_timeseries: bool,
    /// Keep every interval's latency histograms in the time series (a rank of a run over many
    /// hosts: the root merges intervals exactly).
    pub interval_histograms: bool,
}

impl RunOptions {
    /// Whether this run's results carry its time series inline. Runs inside a sequence (they
    /// carry a step or label) append to a shared time series that is inlined once, at its end.
    fn inlines_timeseries(&self) -> bool {
        !self.append_timeseries && self.step.is_none() && self.label.is_none()
    }

    /// Options for a plain run writing `results_path`.
    pub(crate) fn new(results_path: PathBuf, command: Vec<String>) -> Self {
        RunOptions {
            results_path,
            command,
            invocation: Invocation::default(),
            description: None,
            step: None,
            label: None,
            append_timeseries: false,
            interval_histograms: false,
        }
    }
}

/// Runs one job: the real thing ([`Runner`]) or, in tests of sequences and of the Exchange
/// validation, a fake that makes up results.
pub(crate) trait Execute {
    /// Runs `job` with `opts`, its workers driven by `sources`, and returns its results
    /// (written to `opts.results_path`).
    fn execute(&mut self, job: &Job, opts: &RunOptions, sources: &dyn Sources)
    -> Result<RunResult>;
    /// The stop requests the runs obey.
    fn signals(&self) -> &Signals;
    /// Where progress goes.
    fn observer(&mut self) -> &mut dyn Observer;
    /// Waits until every rank of a run over many hosts is here (at once on one host): a
    /// workload whose ranks share what they act on calls it before it looks at the result of
    /// all their work, such as a tree many ranks made and removed.
    fn together(&mut self) -> Result<()> {
        Ok(())
    }
    /// Writes `r` as the results file `path`: how a workload hands the run layer what it made
    /// of its runs (its section, rules and verdict added), the one place results are saved.
    fn save(&mut self, path: &Path, r: &RunResult) -> Result<()> {
        results::file::save(path, r)
    }
}

/// Runs jobs for real, with these signals and this observer.
pub(crate) struct Runner<'a> {
    /// Stop requests.
    pub signals: &'a Signals,
    /// Progress.
    pub obs: &'a mut dyn Observer,
    /// Called once a run's targets are prepared, before its first I/O (see [`Drive`]).
    pub start: Option<&'a dyn Fn() -> Result<()>>,
    /// What [`Execute::together`] calls: the ranks' barrier.
    pub together: Option<&'a dyn Fn() -> Result<()>>,
}

impl<'a> Runner<'a> {
    /// Runs jobs with `signals`, telling `obs` of their progress.
    pub(crate) fn new(signals: &'a Signals, obs: &'a mut dyn Observer) -> Self {
        Runner {
            signals,
            obs,
            start: None,
            together: None,
        }
    }
}

impl Execute for Runner<'_> {
    fn execute(
        &mut self,
        job: &Job,
        opts: &RunOptions,
        sources: &dyn Sources,
    ) -> Result<RunResult> {
        execute(job, opts, self.signals, self.obs, (sources, self.start))
    }

    fn signals(&self) -> &Signals {
        self.signals
    }

    fn observer(&mut self) -> &mut dyn Observer {
        self.obs
    }

    fn together(&mut self) -> Result<()> {
        self.together.map_or(Ok(()), |f| f())
    }
}

/// What drives the workers of a run, and what is called once its targets are prepared,
/// before the first I/O: the run starts when it returns (a rank of a run over many hosts waits
/// there for the others and the scheduled start); an error ends the run before any I/O.
type Drive<'a> = (&'a dyn Sources, Option<&'a dyn Fn() -> Result<()>>);

/// Runs `job` and writes its results file. On interruption the results are written (marked)
/// and returned; on a runtime failure they are written and the error is returned.
fn execute(
    job: &Job,
    opts: &RunOptions,
    signals: &Signals,
    obs: &mut dyn Observer,
    drive: Drive,
) -> Result<RunResult> {
    // Held until the run's results are written: a second run on the same results is refused.
    let _results_lock = results::file::ResultsLock::acquire(&opts.results_path)?;
    let mut draft = Draft::new(job);
    let outcome = execute_inner(job, opts, signals, obs, &mut draft, drive);
    obs.finish();
    match outcome {
        Ok(result) => Ok(result),
        Err(e) if e.downcast_ref::<Usage>().is_some() => Err(e),
        // A failure before the first I/O (a target that cannot be created, opened or
        // prepared): the run never started, so it leaves no results and exits 2.
        Err(e) if !draft.starting && opts.inlines_timeseries() => {
            Err(anyhow::anyhow!(Usage(format!(
                "the run did not start: {}",
                crate::units::strip_os_error(&format!("{e:#}"))
            ))))
        }
        Err(e) => {
            let reason = Interrupted::failure(&crate::units::strip_os_error(&format!("{e:#}")));
            let ts_path = results::file::timeseries_path(&opts.results_path);
            if opts.inlines_timeseries() && ts_path.exists() {
                draft.timeseries = results::timeseries::Series::of_file(ts_path.clone());
            }
            let mut result = assemble(job, opts, draft, reason, None);
            if ts_path.exists() {
                result.timeseries_path = Some(ts_path.display().to_string());
            }
            if let Err(unsaved) = results::file::save(&opts.results_path, &result) {
                return Err(unsaved_results(&opts.results_path, &e, &unsaved));
            }
            Err(e.context(format!(
                "partial results written to {}",
                opts.results_path.display()
            )))
        }
    }
}

/// The error of a run that failed with `e` and whose partial results could not be written
/// either (`unsaved`: a full filesystem, most often). The file written before the workers
/// started, if any, is marked with why, so that no later report blames a kill.
fn unsaved_results(
    path: &std::path::Path,
    e: &anyhow::Error,
    unsaved: &anyhow::Error,
) -> anyhow::Error {
    let failed = crate::units::strip_os_error(&format!("{e:#}"));
    let unsaved = crate::units::strip_os_error(&format!("{unsaved:#}"));
    let mut text = failed.clone();
    if unsaved != failed {
        text.push_str(&format!(
            "; and the partial results could not be written: {unsaved}"
        ));
    }
    if results::file::mark_unwritten(path, &failed) {
        text.push_str(&format!(
            "; {} (written as the run started) now says so: `storlab report {}` reports what its time series holds",
            path.display(),
            path.display()
        ));
    }
    anyhow::anyhow!(text)
}

fn execute_inner(
    job: &Job,
    opts: &RunOptions,
    signals: &Signals,
    obs: &mut dyn Observer,
    draft: &mut Draft,
    (sources, start): Drive,
) -> Result<RunResult> {
    let (engine, job) = prepare::engine(job, &mut draft.engine, &mut draft.warnings);
    let job = job.as_ref();
    let host = host::host_info();
    prepare::check_expected_alignment(job)?;
    limits::ensure_open_files(job, engine)?;
    limits::ensure_cpus(job)?;
    limits::ensure_buffers(job, host.memory_bytes)?;
    obs.job(job);
    obs.phase(Phase::Prepare);
    let prepare_start = Instant::now();
    let cpu_at_start = host::process_cpu_s();
    let opened = match prepare::open_targets(job, engine, signals, obs)? {
        Opened::All(opened) => opened,
        Opened::Interrupted => {
            let seconds = prepare_start.elapsed().as_secs_f64();
            let cpu_s = host::process_cpu_s() - cpu_at_start;
            draft.phase(Phase::Prepare, PhaseState::Interrupted, seconds, cpu_s);
            let reason = signals
                .reason_in(Phase::Prepare)
                .unwrap_or_else(|| "interrupted during prepare".into());
            let why = Interrupted::Yes(reason);
            let result = assemble(job, opts, std::mem::take(draft), why, Some(&host));
            results::file::save(&opts.results_path, &result)?;
            return Ok(result);
        }
    };
    let seconds = prepare_start.elapsed().as_secs_f64();
    let cpu_s = host::process_cpu_s() - cpu_at_start;
    draft.phase(Phase::Prepare, PhaseState::Completed, seconds, cpu_s);
    prepare::check_open_alignment(job, &opened)?;
    draft.targets = opened
        .iter()
        .zip(&job.targets)
        .map(|(o, t)| target_result(t, o))
        .collect();
    // A cache device holds copies of the data, not data of its own.
    let data_bytes: u64 = (opened.iter().enumerate())
        .filter(|&(i, _)| !job.is_cache_device(i))
        .map(|(_, o)| o.size_bytes)
        .sum();
    let cache_lines = prepare::cache_lines(job, &opened)?;
    prepare::atomic_writes(job, &opened)?;
    let traces = prepare::traces(job, &opened)?;
    let placement = placement::warnings(job, &draft.targets, data_bytes, host.memory_bytes);
    draft.warnings.extend(placement);
    let gens = prepare::access_generators(job, &opened)?;
    let blocks = verification::verify_map(job, &opened, &host, &mut draft.warnings)?;

    if let Some(start) = start {
        start()?;
    }

    // Ramp and measure.
    draft.starting = true;
    let grid = IntervalGrid::of(job.ramp_ms, job.duration_ms, job.interval_ms)
        .with_cooldown(job.cooldown_ms);
    let ts_path = results::file::timeseries_path(&opts.results_path);
    let mut ndjson = collect::open_series(&ts_path, opts.append_timeseries)?;
    if opts.inlines_timeseries() {
        // Until the run writes its results, the file says the run has not finished, with
        // the job, targets and host: after a kill -9, `storlab report` completes it from the
        // time series.
        let why = Interrupted::Unfinished;
        let mut unfinished = assemble(job, opts, draft.clone(), why, Some(&host));
        unfinished.timeseries_path = Some(ts_path.display().to_string());
        results::file::save(&opts.results_path, &unfinished)?;
    }
    let failures = AtomicU64::new(0);
    let halt = AtomicBool::new(false);
    let devices = device_names(&draft.targets);
    // Every run samples its blocks, for its reuse summary; one with `sample_blocks` keeps a
    // larger sample and writes it for cache curves.
    let spec = match job.sample_blocks {
        true => SampleSpec::for_size(data_bytes, sample::BLOCK_BYTES),
        false => SampleSpec::keeping(data_bytes, sample::BLOCK_BYTES, sample::REUSE_BLOCKS),
    };
    let sample = job.sample_blocks.then_some(spec);
    let sample_path = results::blocks::blocks_path(&opts.results_path);
    let mut sample_file = match sample {
        Some(_) => Some(results::blocks::create(
            &sample_path,
            opts.append_timeseries,
        )?),
        None => None,
    };
    let shared = workers::Shared {
        stop: &signals.stop,
        failure: &signals.failure,
        halt: &halt,
        failures: &failures,
        blocks: &blocks,
        sample: spec,
        recorded: job.sample_blocks,
        cache_lines: &cache_lines,
        traces: &traces,
    };
    let collector = Collector {
        grid,
        devices: &devices,
        job,
        opts,
        ndjson: &mut ndjson,
        blocks: sample_file.as_mut().map(|f| f as &mut dyn Write),
        obs: &mut *obs,
    };
    // A thread that does not end within a grace time of a stop request ends the process.
    let watchdog = watchdog::Watchdog::start(signals, opts.results_path.clone());
    let collected = workers::run(job, engine, &opened, gens, grid, shared, collector, sources)?;
    drop(watchdog);
    (ndjson.flush()).map_err(|e| crate::files::cannot_write("the time series", &ts_path, &e))?;
    if let Some(f) = sample_file.as_mut() {
        (f.flush())
            .map_err(|e| crate::files::cannot_write("the block sample", &sample_path, &e))?;
    }
    let failed = failures.load(Ordering::Relaxed);
    let mut interrupted = ending(job, grid, &collected, signals, failed, draft);
    let mut verified = job.verify.then(|| {
        let reports = collected.reports.iter().map(|r| &r.verify);
        let read = (&blocks, opened.as_slice(), job.buffered);
        verification::verified(reports, read, signals, obs, draft)
    });
    // A read-back cut short is a run stopped early: its results say why, it is never a pass.
    if let (Interrupted::No, Some(why)) = (
        &interrupted,
        (verified.as_ref()).and_then(|v| verification::cut_short(v, signals)),
    ) {
        interrupted = Interrupted::Yes(why);
    }
    if opts.inlines_timeseries() {
        // Read from the file, one record at a time, by whoever needs them: the results file
        // as it is written (inlined when short), the views.
        draft.timeseries = results::timeseries::Series::of_file(ts_path.clone());
    }
    let mut result = assemble(job, opts, std::mem::take(draft), interrupted, Some(&host));
    draft.starting = true;
    fill_measurement(&mut result, job, &collected);
    result.verify = verified.take();
    let (references, dropped) = (collected.reports.iter())
        .filter_map(|r| r.sample)
        .fold((0, 0), |(r, d), s| (r + s.0, d + s.1));
    result.reuse = Some(collected.reuse.summary(
        spec.rate(),
        spec.block_bytes,
        references,
        dropped,
    ));
    result.block_sample = sample.map(|spec| results::blocks::BlockSample {
        path: sample_path.display().to_string(),
        block_bytes: spec.block_bytes,
        rate: spec.rate(),
        threshold: spec.threshold,
        modulus: sample::MODULUS,
        references,
        sampled: collected.sampled,
        dropped,
    });
    result.page_cache = pagecache::page_cache(job, &result);
    let verify_errors: u64 = collected.reports.iter().map(|r| r.verify.errors()).sum();
    result.verdict = verification::integrity_verdict(&result, failed.saturating_sub(verify_errors));
    result.timeseries_path = Some(ts_path.display().to_string());
    results::file::save(&opts.results_path, &result)?;
    Ok(result)
}

/// How the measured part of the run ended: records the ramp and measure phases, the engine's
/// notes and any backlog warning in `draft`, and returns why the run stopped early (a signal,
/// too many errors, a worker's fatal error) or [`Interrupted::No`].
fn ending(
    job: &Job,
    grid: IntervalGrid,
    collected: &Collected,
    signals: &Signals,
    failed: u64,
    draft: &mut Draft,
) -> Interrupted {
    let elapsed = collected.elapsed_ns;
    let stopped_on_errors = failed >= job.on_error.limit() && !signals.signalled();
    let end_ns = grid.end_ns();
    // In the cool-down: every worker measured its whole duration, and the run went on.
    let cooling = grid.cooldown_ns > 0
        && elapsed > end_ns
        && (collected.reports.iter()).all(|r| r.measured_ns >= grid.measure_ns);
    let signalled = signals.reason_in(if elapsed < grid.ramp_ns {
        Phase::Ramp
    } else if cooling {
        Phase::Cooldown
    } else {
        Phase::Measure
    });
    let fatal: Vec<String> = collected
        .reports
        .iter()
        .filter_map(|r| {
            let name = &job.workers[r.worker].name;
            r.fatal.as_ref().map(|f| format!("worker `{name}`: {f}"))
        })
        .collect();
    if grid.ramp_ns > 0 {
        let ramp_s = grid.ramp_ns.min(elapsed) as f64 / 1e9;
        let cpu_s =
            (collected.ramp.as_ref()).map_or(0.0, |(_, cpu, s)| cpu.process_pct() / 100.0 * s);
        draft.phase(
            Phase::Ramp,
            PhaseState::of(elapsed >= grid.ramp_ns),
            ramp_s,
            cpu_s,
        );
    }
    // Stopped early by a signal, by errors (on_error) or by a worker's fatal error.
    let clean = signalled.is_none() && !stopped_on_errors && fatal.is_empty();
    let measure = if elapsed <= grid.ramp_ns {
        PhaseState::NotStarted
    } else {
        // A signal in the cool-down leaves the measurement whole (the run is still
        // interrupted: the cool-down was cut short).
        PhaseState::of(clean || cooling && !stopped_on_errors && fatal.is_empty())
    };
    // With a cool-down, the measurement ends at its planned end; without, it takes the
    // drain of what was in flight too.
    let measured_until = if grid.cooldown_ns > 0 {
        elapsed.min(end_ns)
    } else {
        elapsed
    };
    let measure_s = measured_until.saturating_sub(grid.ramp_ns) as f64 / 1e9;
    let cpu_s = collected.cpu_measure.process_pct() / 100.0 * measure_s;
    draft.phase(Phase::Measure, measure, measure_s, cpu_s);
    if grid.cooldown_ns > 0 {
        let (state, cooldown_s) = if cooling {
            let s = elapsed - end_ns;
            (PhaseState::of(clean && s >= grid.cooldown_ns), s)
        } else {
            (PhaseState::NotStarted, 0)
        };
        let seconds = cooldown_s as f64 / 1e9;
        let cpu_s = collected.cpu_cooldown.process_pct() / 100.0 * seconds;
        draft.phase(Phase::Cooldown, state, seconds, cpu_s);
    }
    for r in &collected.reports {
        if let Some(ring) = &r.ring {
            draft
                .engine
                .io_uring
                .get_or_insert_with(Default::default)
                .merge(&ring.used, &ring.not_used, ring.sqpoll_cpu_ns);
        }
        for n in &r.notes {
            if !draft.engine.notes.contains(n) {
                draft.engine.notes.push(n.clone());
            }
        }
        // At the end of a run up to a queue's worth of I/Os can be due while every slot is
        // still busy: that edge is recorded (workers[].unissued) but only a larger backlog
        // means the target could not keep the rate.
        let w = &job.workers[r.worker];
        if r.ended_run {
            draft.warnings.push(format!(
                "worker `{}` had done its I/Os and ended the measured time for every worker (on_done = \"{}\")",
                w.name,
                if w.on_done == crate::job::OnDone::EndRun { "end-run" } else { "end-step" }
            ));
        }
        if r.unissued > w.queue_depth as u64 {
            draft.warnings.push(format!(
                "worker `{}` could not keep its rate: {} scheduled I/Os were never issued (every slot busy); latency counts from the intended time",
                w.name, r.unissued
            ));
        }
    }
    let on_errors = stopped_on_errors.then(|| match job.on_error {
        OnError::Stop => format!(
            "stopped at the first failed I/O or verification error (on_error = \"stop\"); {failed} in all"
        ),
        OnError::Continue { max_errors } => format!(
            "stopped after {failed} failed I/Os and verification errors (max_errors = {max_errors})"
        ),
    });
    match on_errors.or(signalled) {
        Some(why) => Interrupted::Yes(why),
        None if !fatal.is_empty() => Interrupted::failure(&fatal.join("; ")),
        None => Interrupted::No,
    }
}
