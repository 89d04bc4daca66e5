//! A run, phase by phase: probe the engine, open and prepare targets (prepare), start the
//! workers, collect interval statistics and host samples (ramp, measure), merge, and write the
//! results file. Ctrl-C and SIGTERM stop every phase within a second; a run that stops early or
//! fails still writes its results, marked `interrupted` with the reason, and the time series is
//! streamed to NDJSON as it is produced.

pub mod exchange;
pub mod limits;
mod placement;
pub mod steps;

use crate::Usage;
use crate::engine::access::{AccessGen, TargetGeometry};
use crate::engine::buf::SlotArena;
use crate::engine::null::NullBackend;
use crate::engine::probe;
use crate::engine::ring::UringBackend;
use crate::engine::source::{ClosedLoop, OpenLoop, RequestSource};
use crate::engine::sync::SyncBackend;
use crate::engine::target::{self, OpenTarget, TargetError, TargetRequest};
use crate::engine::verify::{MapTarget, ReadBack, VerifyCounts, VerifyMap};
use crate::engine::worker::{self, WorkerMsg, WorkerPlan, WorkerReport};
use crate::job::units::format_size;
use crate::job::{EngineKind, Job, OnError};
pub use crate::report::run_result::StepResult;
use crate::report::run_result::*;
use crate::stats::host::{self, CpuPercent, CpuTimes, DiskCounters, DiskDelta};
use crate::stats::summary::ClassSummary;
use crate::stats::timeseries::{IntervalGrid, IntervalRecord};
use crate::stats::{StatsSet, TargetCounters};
use anyhow::{Context, Result, anyhow};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What the run tells whoever shows progress. Every method has a silent default.
pub trait Observer {
    /// A phase starts (`prepare`, `ramp`, `measure`).
    fn phase(&mut self, _name: &str) {}
    /// Preparation of `target` has written `done` of `total` bytes.
    fn prepare(&mut self, _target: &str, _done: u64, _total: u64) {}
    /// One interval of the time series is complete.
    fn interval(&mut self, _record: &IntervalRecord, _grid: &IntervalGrid) {}
    /// A step of a sequence has ended.
    fn step(&mut self, _step: &StepResult) {}
    /// The run is over (clear progress displays).
    fn finish(&mut self) {}
}

/// A silent observer.
pub struct Quiet;
impl Observer for Quiet {}

/// Where results go and what to record about the invocation.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Results file (JSON). The NDJSON time series is written beside it.
    pub results_path: PathBuf,
    /// The command line, recorded in the results.
    pub command: Vec<String>,
    /// Step index stamped on interval records (step sequences).
    pub step: Option<usize>,
    /// Run label stamped on interval records (`rep 2`, `round 3`, `precondition`).
    pub label: Option<String>,
    /// Append to the time series instead of starting it anew (later runs of a sequence).
    pub append_timeseries: bool,
}

impl RunOptions {
    /// Whether this run's results carry its time series inline. Runs inside a sequence (they
    /// carry a step or label) append to a shared time series that is inlined once, at its end.
    fn inlines_timeseries(&self) -> bool {
        !self.append_timeseries && self.step.is_none() && self.label.is_none()
    }

    /// Options for a plain run writing `results_path`.
    pub fn new(results_path: PathBuf, command: Vec<String>) -> Self {
        RunOptions {
            results_path,
            command,
            step: None,
            label: None,
            append_timeseries: false,
        }
    }
}

/// Signal flags shared by the process: set by SIGINT/SIGTERM.
pub struct Signals {
    /// Any stop request.
    pub stop: Arc<AtomicBool>,
    sigint: Arc<AtomicBool>,
    sigterm: Arc<AtomicBool>,
}

impl Signals {
    /// Installs handlers: the first SIGINT/SIGTERM asks the run to stop, a second one exits at
    /// once with status 130.
    pub fn install() -> Result<Signals> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let stop = Arc::new(AtomicBool::new(false));
        let sigint = Arc::new(AtomicBool::new(false));
        let sigterm = Arc::new(AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM] {
            signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))?;
            signal_hook::flag::register(sig, Arc::clone(&stop))?;
        }
        signal_hook::flag::register(SIGINT, Arc::clone(&sigint))?;
        signal_hook::flag::register(SIGTERM, Arc::clone(&sigterm))?;
        Ok(Signals {
            stop,
            sigint,
            sigterm,
        })
    }

    /// Flags that no signal will set (tests, library use).
    pub fn none() -> Signals {
        Signals {
            stop: Arc::new(AtomicBool::new(false)),
            sigint: Arc::new(AtomicBool::new(false)),
            sigterm: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Whether SIGINT or SIGTERM arrived.
    pub fn signalled(&self) -> bool {
        self.sigint.load(Ordering::Relaxed) || self.sigterm.load(Ordering::Relaxed)
    }

    fn reason(&self, phase: &str) -> Option<String> {
        let by = if self.sigint.load(Ordering::Relaxed) {
            "SIGINT (Ctrl-C)"
        } else if self.sigterm.load(Ordering::Relaxed) {
            "SIGTERM"
        } else if self.stop.load(Ordering::Relaxed) {
            "a stop request"
        } else {
            return None;
        };
        Some(format!("interrupted by {by} during {phase}"))
    }
}

/// The `interrupted` reason of a results file written before the workers start and replaced
/// when the run ends: seen only when storlab was killed or the machine stopped.
pub const UNFINISHED: &str = "the run did not finish: storlab stopped without writing its results (killed, or the machine stopped)";

/// Runs with at most this many intervals carry their time series inline in the results file
/// too; longer ones only name the NDJSON file (so memory stays flat however long a run is).
pub const INLINE_INTERVALS: usize = 3600;

/// Reads the NDJSON time series back for inlining: empty when the file is missing, unreadable
/// or longer than [`INLINE_INTERVALS`].
pub(crate) fn inline_timeseries(path: &Path) -> Vec<IntervalRecord> {
    use std::io::BufRead;
    let Ok(f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    // Count first, so a long series is never held in memory.
    let lines = std::io::BufReader::new(&f)
        .lines()
        .take(INLINE_INTERVALS + 1)
        .count();
    if lines > INLINE_INTERVALS {
        return Vec::new();
    }
    let Ok(f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in std::io::BufReader::new(f).lines() {
        let Ok(line) = line else { return Vec::new() };
        match serde_json::from_str(&line) {
            Ok(rec) if out.len() < INLINE_INTERVALS => out.push(rec),
            _ => return Vec::new(),
        }
    }
    out
}

/// The NDJSON time-series path for a results path: `run.json` → `run.ndjson`.
pub fn timeseries_path(results: &Path) -> PathBuf {
    results.with_extension("ndjson")
}

#[derive(Default, Clone)]
struct Partial {
    started: Option<chrono::DateTime<chrono::Utc>>,
    phases: Vec<PhaseRecord>,
    warnings: Vec<String>,
    engine: EngineInfo,
    targets: Vec<TargetResult>,
    timeseries: Vec<IntervalRecord>,
}

impl Partial {
    fn phase(&mut self, name: &str, state: &str, seconds: f64) {
        self.phases.push(PhaseRecord {
            name: name.into(),
            state: state.into(),
            seconds,
        });
    }
}

/// Runs `job` and writes its results file. On interruption the results are written (marked)
/// and returned; on a runtime failure they are written and the error is returned.
pub fn execute(
    job: &Job,
    opts: &RunOptions,
    signals: &Signals,
    obs: &mut dyn Observer,
) -> Result<RunResult> {
    let mut partial = Partial {
        started: Some(chrono::Utc::now()),
        phases: Vec::new(),
        warnings: job.warnings.clone(),
        engine: EngineInfo {
            name: engine_name(job.engine).into(),
            fallback_reason: None,
            notes: Vec::new(),
        },
        targets: Vec::new(),
        timeseries: Vec::new(),
    };
    let outcome = execute_inner(job, opts, signals, obs, &mut partial);
    obs.finish();
    match outcome {
        Ok(result) => Ok(result),
        Err(e) if e.downcast_ref::<Usage>().is_some() => Err(e),
        Err(e) => {
            let reason = format!("failed: {e:#}");
            let ts_path = timeseries_path(&opts.results_path);
            if opts.inlines_timeseries() {
                partial.timeseries = inline_timeseries(&ts_path);
            }
            let mut result = assemble(job, opts, partial, Interrupted::Yes(reason), None);
            if ts_path.exists() {
                result.timeseries_path = Some(ts_path.display().to_string());
            }
            write_results(&opts.results_path, &result)
                .with_context(|| format!("{e:#}; and the partial results could not be written"))?;
            Err(e.context(format!(
                "partial results written to {}",
                opts.results_path.display()
            )))
        }
    }
}

fn engine_name(e: EngineKind) -> &'static str {
    match e {
        EngineKind::IoUring => "io_uring",
        EngineKind::Psync => "psync",
        EngineKind::Null => "null",
    }
}

fn execute_inner(
    job: &Job,
    opts: &RunOptions,
    signals: &Signals,
    obs: &mut dyn Observer,
    partial: &mut Partial,
) -> Result<RunResult> {
    let mut engine = job.engine;
    if engine == EngineKind::IoUring {
        if let Err(why) = probe::io_uring() {
            partial.engine.name = "psync".into();
            partial.engine.fallback_reason = Some(why.clone());
            partial.warnings.push(format!(
                "io_uring is not usable, psync was used instead: {why}"
            ));
            engine = EngineKind::Psync;
        }
    }
    let one_at_a_time;
    let job = if engine == EngineKind::Psync && job.workers.iter().any(|w| w.queue_depth > 1) {
        let mut j = job.clone();
        for w in &mut j.workers {
            if w.queue_depth > 1 {
                partial.warnings.push(format!(
                    "worker `{}`: the psync engine does one I/O at a time; queue_depth {} is run as 1",
                    w.name, w.queue_depth
                ));
                w.queue_depth = 1;
            }
        }
        one_at_a_time = j;
        &one_at_a_time
    } else {
        job
    };
    let host = host::host_info();

    // Refuse a misaligned job before preparing (writing) anything; checked again once open.
    if !job.buffered {
        let expected: Vec<u32> = job
            .targets
            .iter()
            .map(|t| target::expected_block_size(&t.path).unwrap_or(0))
            .collect();
        check_alignment(job, &expected)?;
    }

    limits::ensure_open_files(job, engine)?;
    // Prepare: open (and fill) every target.
    obs.phase("prepare");
    let prep_start = Instant::now();
    let mut opened: Vec<OpenTarget> = Vec::new();
    for (ti, t) in job.targets.iter().enumerate() {
        let writes = job
            .workers
            .iter()
            .any(|w| w.targets.contains(&ti) && w.writes());
        let request = TargetRequest {
            path: t.path.clone(),
            size_bytes: t.size_bytes,
            buffered: job.buffered,
            dsync: t.sync,
            writes,
            destroy_data: job.destroy_data,
        };
        let name = t.name.clone();
        let stop = &signals.stop;
        let r = if engine == EngineKind::Null && t.size_bytes.is_some() && !t.path.exists() {
            Err(None)
        } else {
            target::open(&request, &mut |done, total| {
                obs.prepare(&name, done, total);
                !stop.load(Ordering::Relaxed)
            })
            .map_err(Some)
        };
        match r {
            Ok(o) => opened.push(o),
            Err(None) => {
                return Err(Usage(format!(
                    "target `{}` ({}) does not exist; the null engine does no I/O but still needs its targets (run once with another engine to prepare it)",
                    t.name,
                    t.path.display()
                ))
                .into());
            }
            Err(Some(TargetError::Interrupted { .. })) => {
                partial.phase("prepare", "interrupted", prep_start.elapsed().as_secs_f64());
                let reason = signals
                    .reason("prepare")
                    .unwrap_or_else(|| "interrupted during prepare".into());
                let result = assemble(
                    job,
                    opts,
                    std::mem::take(partial),
                    Interrupted::Yes(reason),
                    Some(&host),
                );
                write_results(&opts.results_path, &result)?;
                return Ok(result);
            }
            Err(Some(e @ (TargetError::Guarded { .. } | TargetError::Invalid { .. }))) => {
                return Err(Usage(e.to_string()).into());
            }
            Err(Some(e)) => return Err(anyhow!(e)),
        }
    }
    partial.phase("prepare", "completed", prep_start.elapsed().as_secs_f64());
    let direct: Vec<u32> = opened
        .iter()
        .map(|o| if o.direct { o.logical_block_size } else { 0 })
        .collect();
    check_alignment(job, &direct)?;
    partial.targets = opened
        .iter()
        .zip(&job.targets)
        .map(|(o, t)| target_result(t, o))
        .collect();
    let data_bytes: u64 = opened.iter().map(|o| o.size_bytes).sum();
    partial.warnings.extend(placement::warnings(
        job,
        &partial.targets,
        data_bytes,
        host.memory_bytes,
    ));
    let geometry: Vec<TargetGeometry> = opened
        .iter()
        .zip(&job.targets)
        .map(|(o, t)| TargetGeometry {
            size_bytes: o.size_bytes,
            dsync: t.sync,
            fsync_every: t.fsync_every,
        })
        .collect();
    let mut gens = Vec::with_capacity(job.workers.len());
    for (wi, w) in job.workers.iter().enumerate() {
        let seed = job.seed ^ (wi as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        gens.push(AccessGen::new(w, &geometry, seed).map_err(Usage)?);
    }

    let blocks = verify_map(job, &opened, &host, &mut partial.warnings)?;
    let verify_map = job.verify.then_some(&blocks);
    let failures = AtomicU64::new(0);
    let max_failures = job.on_error.limit();

    // Ramp and measure.
    let grid = IntervalGrid {
        ramp_ns: job.ramp_ms * 1_000_000,
        measure_ns: job.duration_ms * 1_000_000,
        interval_ns: job.interval_ms * 1_000_000,
    };
    let ts_path = timeseries_path(&opts.results_path);
    if let Some(dir) = ts_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the results directory {}", dir.display()))?;
    }
    let mut ndjson = std::io::BufWriter::new(
        std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(opts.append_timeseries)
            .truncate(!opts.append_timeseries)
            .open(&ts_path)
            .with_context(|| format!("cannot create the time-series file {}", ts_path.display()))?,
    );
    if opts.inlines_timeseries() {
        // Until the run writes its results, the file says the run has not finished, with
        // the job, targets and host: after a kill -9, `storlab report` completes it from the
        // time series.
        let mut unfinished = assemble(
            job,
            opts,
            partial.clone(),
            Interrupted::Yes(UNFINISHED.into()),
            Some(&host),
        );
        unfinished.timeseries_path = Some(ts_path.display().to_string());
        write_results(&opts.results_path, &unfinished)?;
    }
    let devices = device_names(&partial.targets);
    let (tx, rx) = std::sync::mpsc::channel::<WorkerMsg>();
    let fds: Vec<_> = opened.iter().map(|o| o.file.as_fd()).collect();
    let n_workers = job.workers.len();
    let stop = &*signals.stop;
    // Workers end the run through this one, not the signal flag, so that a Ctrl-C after an
    // internal stop still gets a clean exit with results.
    let halt = &AtomicBool::new(false);
    let gate = StartGate::new();
    let collected = std::thread::scope(|scope| -> Result<Collected> {
        let gate = &gate;
        let mut spawned = 0;
        let mut spawn_error = None;
        for ((wi, w), access) in job.workers.iter().enumerate().zip(gens) {
            let seed = job.seed ^ ((wi as u64) << 32);
            let plan = WorkerPlan {
                index: wi,
                spec: w,
                classes: job.classes.len(),
                start: Instant::now(),
                grid,
                stop,
                halt,
                tx: tx.clone(),
                batch: match w.rate {
                    Some(_) => 1,
                    None => (job.batch as usize).min(w.queue_depth as usize),
                },
                targets: job.targets.len(),
                blocks: &blocks,
                failures: &failures,
                max_failures,
            };
            let fds = fds.clone();
            let slot_bytes = w.max_block_bytes() as usize;
            let spawn = std::thread::Builder::new()
                .name(format!("storlab-{}", w.name))
                .spawn_scoped(scope, move || {
                    let tx = plan.tx.clone();
                    let report = run_worker(plan, access, seed, engine, fds, slot_bytes, gate);
                    let _ = tx.send(WorkerMsg::Done(Box::new(report)));
                });
            match spawn {
                Ok(_) => spawned += 1,
                Err(e) => {
                    spawn_error = Some(e);
                    break;
                }
            }
        }
        drop(tx);
        if let Some(e) = spawn_error {
            // Release the workers that did start, stopped at once.
            halt.store(true, Ordering::Relaxed);
            gate.start(spawned);
            return Err(anyhow!(e).context(format!(
                "cannot start worker thread {} of {n_workers}; lower the number of workers or raise the thread limit (ulimit -u)",
                spawned + 1
            )));
        }
        let start = gate.start(spawned);
        let first = sample(start, &devices);
        obs.phase(if grid.ramp_ns > 0 { "ramp" } else { "measure" });
        collect(
            rx,
            n_workers,
            grid,
            (start, first),
            &devices,
            job,
            opts,
            &mut ndjson,
            obs,
        )
    })?;
    ndjson.flush().context("writing the time series")?;
    let mut verified = verify_map.map(|map| {
        let mut counts = VerifyCounts {
            block_bytes: map.block,
            ..VerifyCounts::default()
        };
        for r in &collected.reports {
            counts.merge(&r.verify);
        }
        counts
    });
    let failed_total = failures.load(Ordering::Relaxed);
    let stopped_on_errors = failed_total >= max_failures && !signals.signalled();
    let ramp_s = (grid.ramp_ns.min(collected.elapsed_ns) as f64) / 1e9;
    let interrupted = signals.reason(if collected.elapsed_ns < grid.ramp_ns {
        "ramp"
    } else {
        "measure"
    });
    let state = |done: bool| if done { "completed" } else { "interrupted" };
    if grid.ramp_ns > 0 {
        partial.phase("ramp", state(collected.elapsed_ns >= grid.ramp_ns), ramp_s);
    }
    partial.phase(
        "measure",
        if collected.elapsed_ns <= grid.ramp_ns {
            "not_started"
        } else {
            // Stopped early by a signal, by errors (on_error) or by a worker's fatal error.
            state(
                interrupted.is_none()
                    && !stopped_on_errors
                    && collected.reports.iter().all(|r| r.fatal.is_none()),
            )
        },
        collected.elapsed_ns.saturating_sub(grid.ramp_ns) as f64 / 1e9,
    );
    if opts.inlines_timeseries() {
        partial.timeseries = inline_timeseries(&ts_path);
    }
    let fatal: Vec<String> = collected
        .reports
        .iter()
        .filter_map(|r| {
            r.fatal
                .as_ref()
                .map(|f| format!("worker `{}`: {f}", job.workers[r.worker].name))
        })
        .collect();
    for r in &collected.reports {
        for n in &r.notes {
            if !partial.engine.notes.contains(n) {
                partial.engine.notes.push(n.clone());
            }
        }
        // At the end of a run up to a queue's worth of I/Os can be due while every slot is
        // still busy: that edge is recorded (workers[].unissued) but only a larger backlog
        // means the target could not keep the rate.
        if r.unissued > job.workers[r.worker].queue_depth as u64 {
            partial.warnings.push(format!(
                "worker `{}` could not keep its rate: {} scheduled I/Os were never issued (every slot busy); latency counts from the intended time",
                job.workers[r.worker].name, r.unissued
            ));
        }
    }
    let interrupted = if stopped_on_errors {
        Some(match job.on_error {
            OnError::Stop => format!(
                "stopped at the first failed I/O or verification error (on_error = \"stop\"); {failed_total} in all"
            ),
            OnError::Continue { max_errors } => format!(
                "stopped after {failed_total} failed I/Os and verification errors (max_errors = {max_errors})"
            ),
        })
    } else {
        interrupted
    };
    if let (Some(map), Some(counts)) = (verify_map, verified.as_mut()) {
        // The final pass reads back every block written, unless the user stopped the run.
        obs.phase("read-back");
        let start = Instant::now();
        let back = read_back(map, &opened, job.buffered, signals, counts);
        partial.phase(
            "read-back",
            if back.state == "completed" {
                "completed"
            } else {
                "interrupted"
            },
            start.elapsed().as_secs_f64(),
        );
        counts.read_back = Some(back);
    }
    let interrupted = match (interrupted, fatal.is_empty()) {
        (Some(r), _) => Interrupted::Yes(r),
        (None, false) => Interrupted::Yes(format!("failed: {}", fatal.join("; "))),
        (None, true) => Interrupted::No,
    };
    let mut result = assemble(job, opts, std::mem::take(partial), interrupted, Some(&host));
    fill_measurement(&mut result, job, &collected);
    result.verify = verified;
    let io_failures = failed_total.saturating_sub(
        collected
            .reports
            .iter()
            .map(|r| r.verify.errors())
            .sum::<u64>(),
    );
    result.verdict = integrity_verdict(&result, io_failures);
    result.timeseries_path = Some(ts_path.display().to_string());
    write_results(&opts.results_path, &result)?;
    Ok(result)
}

/// Starts the workers together: each sets up its ring and buffers, then waits; time 0 of
/// the run is taken when all are ready, so set-up time is never counted as latency.
struct StartGate {
    state: std::sync::Mutex<(usize, Option<Instant>)>,
    cond: std::sync::Condvar,
}

impl StartGate {
    fn new() -> Self {
        StartGate {
            state: std::sync::Mutex::new((0, None)),
            cond: std::sync::Condvar::new(),
        }
    }

    /// A worker is ready; returns time 0 once every worker is.
    fn ready(&self) -> Instant {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        self.cond.notify_all();
        loop {
            if let Some(t) = s.1 {
                return t;
            }
            s = self.cond.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits for `workers` to be ready, then starts them; returns time 0.
    fn start(&self, workers: usize) -> Instant {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.0 < workers {
            s = self.cond.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        let t = Instant::now();
        s.1 = Some(t);
        self.cond.notify_all();
        t
    }
}

/// Runs worker `plan` with its request source: closed loop, or open loop at its rate.
fn run_worker(
    plan: WorkerPlan<'_>,
    access: AccessGen,
    seed: u64,
    engine: EngineKind,
    fds: Vec<std::os::fd::BorrowedFd<'_>>,
    slot_bytes: usize,
    gate: &StartGate,
) -> WorkerReport {
    let spec = plan.spec;
    match spec.rate {
        None => {
            let source = &mut ClosedLoop::new(access, spec.io_limit);
            drive(plan, source, seed, engine, fds, slot_bytes, gate)
        }
        Some(rate) => {
            let source = &mut OpenLoop::new(access, rate, seed, spec.io_limit);
            drive(plan, source, seed, engine, fds, slot_bytes, gate)
        }
    }
}

/// Pins the worker, makes its slots and backend, waits at the start gate and runs it on
/// `source`.
fn drive<S: RequestSource>(
    mut plan: WorkerPlan<'_>,
    source: &mut S,
    seed: u64,
    engine: EngineKind,
    fds: Vec<std::os::fd::BorrowedFd<'_>>,
    slot_bytes: usize,
    gate: &StartGate,
) -> WorkerReport {
    let qd = plan.spec.queue_depth as usize;
    if let Some(cpu) = plan.spec.cpu {
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu);
        if let Err(e) = rustix::thread::sched_setaffinity(None, &set) {
            plan.start = gate.ready();
            return failed(&plan, format!("cannot pin to CPU {cpu}: {e}"));
        }
    }
    SlotArena::with(qd, slot_bytes, seed, |arena, slots| match engine {
        EngineKind::Null => {
            let b = NullBackend::new(arena);
            plan.start = gate.ready();
            worker::run(plan, b, slots, source, Vec::new())
        }
        EngineKind::Psync => {
            let b = SyncBackend::new(fds, arena);
            plan.start = gate.ready();
            worker::run(plan, b, slots, source, Vec::new())
        }
        EngineKind::IoUring => match UringBackend::new(fds, arena) {
            Ok(b) => {
                let notes = b.notes.clone();
                plan.start = gate.ready();
                worker::run(plan, b, slots, source, notes)
            }
            Err(e) => {
                plan.start = gate.ready();
                failed(
                    &plan,
                    format!("cannot create an io_uring ring of {qd} entries: {e}"),
                )
            }
        },
    })
}

fn failed(plan: &WorkerPlan<'_>, why: String) -> WorkerReport {
    plan.halt.store(true, Ordering::Relaxed);
    WorkerReport {
        worker: plan.index,
        totals: StatsSet::new(plan.classes),
        targets: vec![TargetCounters::default(); plan.targets],
        measured_ns: 0,
        unissued: 0,
        errors: Vec::new(),
        fatal: Some(why),
        notes: Vec::new(),
        verify: VerifyCounts::default(),
    }
}

struct Collected {
    reports: Vec<WorkerReport>,
    cpu_measure: CpuPercent,
    disk_measure: BTreeMap<String, DiskDelta>,
    elapsed_ns: u64,
}

#[derive(Clone)]
struct Sample {
    t_ns: u64,
    cpu: CpuTimes,
    disks: BTreeMap<String, DiskCounters>,
}

fn sample(start: Instant, devices: &[String]) -> Sample {
    Sample {
        t_ns: start.elapsed().as_nanos() as u64,
        cpu: host::cpu_times(),
        disks: devices
            .iter()
            .filter_map(|d| host::disk_counters(d).map(|c| (d.clone(), c)))
            .collect(),
    }
}

fn deltas(a: &Sample, b: &Sample) -> (CpuPercent, BTreeMap<String, DiskDelta>) {
    let wall = b.t_ns.saturating_sub(a.t_ns);
    let disks = b
        .disks
        .iter()
        .filter_map(|(n, after)| {
            a.disks
                .get(n)
                .map(|before| (n.clone(), DiskDelta::between(before, after, wall)))
        })
        .collect();
    (CpuPercent::between(&a.cpu, &b.cpu, wall), disks)
}

#[allow(clippy::too_many_arguments)]
fn collect(
    rx: std::sync::mpsc::Receiver<WorkerMsg>,
    n_workers: usize,
    grid: IntervalGrid,
    (start, first): (Instant, Sample),
    devices: &[String],
    job: &Job,
    opts: &RunOptions,
    ndjson: &mut impl Write,
    obs: &mut dyn Observer,
) -> Result<Collected> {
    let classes = job.classes.len();
    // Host samples: `first` at time 0, then one at the end of each interval.
    let mut ends: BTreeMap<u64, Sample> = BTreeMap::new();
    let mut measure_start: Option<Sample> = None;
    let mut measure_end: Option<Sample> = None;
    let mut next_sample = 0u64;
    // Interval statistics waiting for every worker.
    let mut pending: BTreeMap<u64, StatsSet> = BTreeMap::new();
    let mut last_reported: Vec<Option<u64>> = vec![None; n_workers];
    let mut finished = vec![false; n_workers];
    let mut reports = Vec::new();
    let mut announced_measure = grid.ramp_ns == 0;
    if grid.ramp_ns == 0 {
        measure_start = Some(first.clone());
    }
    let mut done = 0;
    loop {
        let now = start.elapsed().as_nanos() as u64;
        while next_sample < grid.intervals() {
            let (_, end, _) = grid.bounds(next_sample);
            if now < end {
                break;
            }
            let s = sample(start, devices);
            if end == grid.ramp_ns && measure_start.is_none() {
                measure_start = Some(s.clone());
            }
            if end == grid.ramp_ns + grid.measure_ns {
                measure_end = Some(s.clone());
            }
            ends.insert(next_sample, s);
            next_sample += 1;
        }
        if !announced_measure && now >= grid.ramp_ns {
            announced_measure = true;
            obs.phase("measure");
        }
        // Emit every interval that every running worker has reported.
        while let Some((&index, _)) = pending.first_key_value() {
            let complete =
                (0..n_workers).all(|w| finished[w] || last_reported[w].is_some_and(|l| l >= index));
            if !complete {
                break;
            }
            let stats = pending.pop_first().expect("non-empty").1;
            let before = if index == 0 {
                Some(&first)
            } else {
                ends.get(&(index - 1))
            };
            let host = before.zip(ends.get(&index)).map(|(a, b)| deltas(a, b));
            let now = start.elapsed().as_nanos() as u64;
            let mut rec = interval_record(index, &grid, now, &stats, &job.classes, host);
            rec.step = opts.step;
            rec.label.clone_from(&opts.label);
            serde_json::to_writer(&mut *ndjson, &rec)?;
            ndjson.write_all(b"\n")?;
            ndjson.flush()?;
            obs.interval(&rec, &grid);
            if index > 0 {
                ends.retain(|&k, _| k + 1 >= index);
            }
        }
        if done == n_workers {
            break;
        }
        let wait_until = if next_sample < grid.intervals() {
            grid.bounds(next_sample).1
        } else {
            now + 100_000_000
        };
        let timeout =
            Duration::from_nanos(wait_until.saturating_sub(now).clamp(1_000_000, 100_000_000));
        match rx.recv_timeout(timeout) {
            Ok(WorkerMsg::Interval {
                worker,
                index,
                stats,
            }) => {
                pending
                    .entry(index)
                    .or_insert_with(|| StatsSet::new(classes))
                    .add(&stats);
                last_reported[worker] = Some(index);
            }
            Ok(WorkerMsg::Done(r)) => {
                finished[r.worker] = true;
                done += 1;
                reports.push(*r);
                if done == n_workers && next_sample < grid.intervals() {
                    // The run ended before this interval's planned end: sample now.
                    ends.insert(next_sample, sample(start, devices));
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                finished.iter_mut().for_each(|f| *f = true);
                done = n_workers;
            }
        }
    }
    let elapsed_ns = start.elapsed().as_nanos() as u64;
    let measure_end = measure_end.unwrap_or_else(|| sample(start, devices));
    let (cpu_measure, disk_measure) = match &measure_start {
        Some(s) => deltas(s, &measure_end),
        None => (CpuPercent::default(), BTreeMap::new()),
    };
    reports.sort_by_key(|r| r.worker);
    Ok(Collected {
        reports,
        cpu_measure,
        disk_measure,
        elapsed_ns,
    })
}

/// The record of interval `index`; an interval cut short (the run stopped at `now_ns`, before
/// its planned end) gets its real length, so its rates are not understated.
fn interval_record(
    index: u64,
    grid: &IntervalGrid,
    now_ns: u64,
    stats: &StatsSet,
    classes: &[String],
    host: Option<(CpuPercent, BTreeMap<String, DiskDelta>)>,
) -> IntervalRecord {
    let (s, e, ramp) = grid.bounds(index);
    let e = e.min(now_ns.max(s + 1));
    let mut rec = IntervalRecord {
        index,
        phase: if ramp { "ramp" } else { "measure" }.into(),
        step: None,
        t_end_ms: e / 1_000_000,
        interval_ms: ((e - s) / 1_000_000).max(1),
        ..Default::default()
    };
    rec.fill(stats, classes);
    if let Some((cpu, devices)) = host {
        rec.cpu = cpu;
        rec.devices = devices;
    }
    rec
}

/// The end of an alignment error: how to avoid O_DIRECT's constraint in a job file.
pub const BUFFERED_HINT: &str = " or `buffered = true` (--buffered)";

/// Memory the verification map may take, as a fraction of the host's memory.
const VERIFY_MAP_MEMORY_SHARE: u64 = 4;
/// Bytes per read of the final read-back pass.
const READ_BACK_BYTES: u64 = 1 << 20;
/// Reads the final read-back pass keeps in flight (one thread each).
const READ_BACK_THREADS: usize = 8;

/// The verification map of a job: the targets' identities, and with verification one entry
/// per block of every target, where a block is the largest size every I/O is a multiple of
/// and aligned to.
fn verify_map(
    job: &Job,
    opened: &[OpenTarget],
    host: &host::HostInfo,
    warnings: &mut Vec<String>,
) -> Result<VerifyMap> {
    let mut values = Vec::new();
    for a in job.workers.iter().flat_map(|w| &w.access) {
        values.extend([
            a.block_size_bytes,
            a.align_bytes,
            a.offset_bytes,
            a.roll_every_bytes,
        ]);
        values.extend(a.block_sizes.iter().map(|&(b, _)| b));
    }
    let run = crate::engine::buf::splitmix(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ (u64::from(std::process::id()) << 32),
    )
    .max(1);
    let targets: Vec<MapTarget> = opened
        .iter()
        .map(|o| MapTarget {
            size_bytes: o.size_bytes,
            prepared_id: o.prepare.data_seed,
        })
        .collect();
    let block = crate::engine::verify::block_size(values);
    if !job.verify {
        return Ok(VerifyMap::new(&targets, block.unwrap_or(512), run, false));
    }
    let Some(block) = block else {
        return Err(Usage(
            "verify needs every block size, alignment, span offset and roll_every to be a multiple of 512 bytes (each sector carries a header); change them or turn verify off".into(),
        )
        .into());
    };
    let bytes = VerifyMap::memory_bytes(&targets, block);
    if host.memory_bytes > 0 && bytes > host.memory_bytes / VERIFY_MAP_MEMORY_SHARE {
        return Err(Usage(format!(
            "verify needs {} of memory to track every {}-byte block of the targets, more than a quarter of this host's {}; verify a smaller span (size, or access offset/length) or use larger blocks",
            format_size(bytes),
            block,
            format_size(host.memory_bytes)
        ))
        .into());
    }
    for (t, o) in job.targets.iter().zip(opened) {
        if o.prepare.data_seed.is_none() {
            warnings.push(format!(
                "verify: target `{}` was not prepared by storlab, so its blocks can only be checked once the run has written them",
                t.name
            ));
        }
    }
    Ok(VerifyMap::new(&targets, block, run, true))
}

/// The final pass: reads back and checks every block written during the run, with
/// [`READ_BACK_THREADS`] reads in flight.
fn read_back(
    map: &VerifyMap,
    opened: &[OpenTarget],
    buffered: bool,
    signals: &Signals,
    counts: &mut VerifyCounts,
) -> ReadBack {
    let start = Instant::now();
    if buffered {
        // Read what reached the device, not what the page cache holds.
        for o in opened {
            let _ = rustix::fs::fdatasync(&o.file);
            let _ = rustix::fs::fadvise(&o.file, 0, None, rustix::fs::Advice::DontNeed);
        }
    }
    let ranges: Vec<(usize, u64, u32)> = (0..opened.len())
        .flat_map(|t| {
            map.written_ranges(t, READ_BACK_BYTES)
                .into_iter()
                .map(move |(offset, len)| (t, offset, len))
        })
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failure = std::sync::Mutex::new(None::<String>);
    let interrupted = AtomicBool::new(false);
    let parts: Vec<(VerifyCounts, u64)> = std::thread::scope(|scope| {
        let reader = || {
            let mut arena = crate::engine::buf::BufArena::new(1, READ_BACK_BYTES as usize, 0);
            let mut part = VerifyCounts::default();
            let mut bytes = 0u64;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(t, offset, len)) = ranges.get(i) else {
                    break;
                };
                if signals.signalled() {
                    interrupted.store(true, Ordering::Relaxed);
                    break;
                }
                let buf = &mut arena.slot_mut(0)[..len as usize];
                let why = match rustix::io::pread(&opened[t].file, &mut *buf, offset) {
                    Ok(n) if n == len as usize => None,
                    Ok(n) => Some(format!("short read of {n} of {len} bytes")),
                    Err(e) => Some(format!("reading {len} bytes: {e}")),
                };
                if let Some(why) = why {
                    let mut f = failure.lock().unwrap_or_else(|e| e.into_inner());
                    f.get_or_insert(format!("failed: {why} at offset {offset} of target {t}"));
                    // Stop every reader.
                    next.store(ranges.len(), Ordering::Relaxed);
                    break;
                }
                bytes += len as u64;
                // A block still held by an I/O a failed worker left in flight is not checkable.
                if map.lock(t as u32, offset, len, false) {
                    let at = start.elapsed().as_millis() as u64;
                    map.read(buf, t as u32, offset, len, true, "read-back", at, &mut part);
                }
            }
            (part, bytes)
        };
        let threads: Vec<_> = (0..READ_BACK_THREADS.min(ranges.len().max(1)))
            .map(|_| scope.spawn(reader))
            .collect();
        threads.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let mut back = ReadBack::default();
    for (part, bytes) in &parts {
        back.blocks_checked += part.blocks_checked;
        back.bytes += bytes;
        counts.merge(part);
    }
    back.state = match failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(why) => why,
        None if interrupted.load(Ordering::Relaxed) => "interrupted".into(),
        None => "completed".into(),
    };
    back.seconds = start.elapsed().as_secs_f64();
    back
}

/// The verdict every run gets once it verifies data or an I/O failed: no I/O errors, and no
/// verification errors. `None` for a run with neither (nothing to judge).
fn integrity_verdict(result: &RunResult, io_failures: u64) -> Option<crate::verdict::Verdict> {
    let errors = io_failures.max(result.totals.errors());
    if result.verify.is_none() && errors == 0 {
        return None;
    }
    let mut rules = vec![crate::verdict::Rule::judge(
        crate::verdict::IO_ERRORS,
        errors as f64,
        crate::verdict::Comparison::AtMost,
        0.0,
        "errors",
    )];
    rules.extend(verification_rule(result));
    Some(crate::verdict::Verdict::of(rules))
}

/// The rule a run with data verification is judged by (`None` without verification): every
/// verdict includes it.
pub fn verification_rule(result: &RunResult) -> Option<crate::verdict::Rule> {
    result.verify.as_ref().map(|v| {
        crate::verdict::Rule::judge(
            crate::verdict::VERIFY_ERRORS,
            v.errors() as f64,
            crate::verdict::Comparison::AtMost,
            0.0,
            "errors",
        )
    })
}

/// Checks every offset and size the workers use against each target's O_DIRECT granularity
/// (`block_sizes[t]`; 0 or 1: nothing to check).
fn check_alignment(job: &Job, block_sizes: &[u32]) -> Result<()> {
    for w in &job.workers {
        for (ai, a) in w.access.iter().enumerate() {
            for &t in &w.targets {
                let lbs = block_sizes[t] as u64;
                if lbs <= 1 {
                    continue;
                }
                let mut what = vec![
                    ("block size", a.block_size_bytes, "a block size"),
                    ("alignment", a.align_bytes, "an alignment"),
                    ("span offset", a.offset_bytes, "an offset"),
                    ("roll_every", a.roll_every_bytes, "a roll_every"),
                ];
                what.extend(
                    a.block_sizes
                        .iter()
                        .map(|&(b, _)| ("block size", b, "block sizes")),
                );
                for (name, value, fix) in what {
                    if value % lbs != 0 {
                        return Err(Usage(format!(
                            "cannot use {} with O_DIRECT: its logical block size is {lbs} but worker `{}` access[{ai}] has {name} {value}; use {fix} that is a multiple of {}{BUFFERED_HINT}",
                            job.targets[t].path.display(),
                            w.name,
                            format_size(lbs)
                        ))
                        .into());
                    }
                }
            }
        }
    }
    Ok(())
}

fn target_result(t: &crate::job::Target, o: &OpenTarget) -> TargetResult {
    let p = host::placement(&o.canonical_path);
    TargetResult {
        name: t.name.clone(),
        path: o.path.display().to_string(),
        kind: o.kind,
        size_bytes: o.size_bytes,
        logical_block_size_bytes: o.logical_block_size,
        direct: o.direct,
        dsync: o.dsync,
        filesystem: p.filesystem,
        mount_point: p.mount_point.map(|m| m.display().to_string()),
        mount_options: p.mount_options,
        device: p.device,
        device_model: p.device_model,
        prepare: o.prepare.clone(),
        ops: DirCounts::default(),
        bytes: DirCounts::default(),
        errors: DirCounts::default(),
    }
}

fn device_names(targets: &[TargetResult]) -> Vec<String> {
    let mut names: Vec<String> = targets.iter().filter_map(|t| t.device.clone()).collect();
    names.sort();
    names.dedup();
    names
}

fn assemble(
    job: &Job,
    opts: &RunOptions,
    partial: Partial,
    interrupted: Interrupted,
    host: Option<&host::HostInfo>,
) -> RunResult {
    let started = partial.started.unwrap_or_else(chrono::Utc::now);
    let classes = job
        .classes
        .iter()
        .enumerate()
        .map(|(i, name)| {
            (
                name.clone(),
                ClassResult {
                    read: Default::default(),
                    write: Default::default(),
                    flush: Default::default(),
                    write_durability: durability(job, i),
                },
            )
        })
        .collect();
    RunResult {
        schema_version: SCHEMA_VERSION,
        storlab_version: env!("CARGO_PKG_VERSION").into(),
        command: opts.command.clone(),
        job: job.clone(),
        host: host.cloned().unwrap_or_else(host::host_info),
        started_at: started.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        ended_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        interrupted,
        phases: partial.phases,
        engine: partial.engine,
        warnings: partial.warnings,
        measured_ms: 0,
        targets: partial.targets,
        totals: ClassSummary::default(),
        classes,
        workers: Vec::new(),
        devices: Vec::new(),
        host_cpu: CpuPercent::default(),
        errors: Vec::new(),
        timeseries_path: None,
        timeseries: partial.timeseries,
        verify: None,
        verdict: None,
        exchange: None,
        max_mailboxes: None,
        trials: None,
        steps: None,
        precondition: None,
    }
}

/// How class `class`'s writes are made durable, from the job.
fn durability(job: &Job, class: usize) -> String {
    let mut kinds: Vec<String> = Vec::new();
    let mut add = |k: String| {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    };
    for w in &job.workers {
        for a in w
            .access
            .iter()
            .filter(|a| a.class == class && a.read_pct < 100.0)
        {
            if a.sync {
                add("rwf_dsync".into());
            }
            if a.fsync_every > 0 {
                add(format!("fsync_every_{}", a.fsync_every));
            }
            for &t in &w.targets {
                let t = &job.targets[t];
                if t.sync {
                    add("o_dsync".into());
                }
                if t.fsync_every > 0 {
                    add(format!("fsync_every_{}", t.fsync_every));
                }
            }
        }
    }
    if kinds.is_empty() {
        "none".into()
    } else {
        kinds.join("+")
    }
}

fn fill_measurement(result: &mut RunResult, job: &Job, c: &Collected) {
    let measured_ns = c.reports.iter().map(|r| r.measured_ns).max().unwrap_or(0);
    let secs = measured_ns as f64 / 1e9;
    result.measured_ms = measured_ns / 1_000_000;
    let mut all = StatsSet::new(job.classes.len());
    for r in &c.reports {
        all.add(&r.totals);
    }
    result.totals = ClassSummary::of(&all.total(), secs, true);
    for (i, name) in job.classes.iter().enumerate() {
        if let Some(cr) = result.classes.get_mut(name) {
            let s = ClassSummary::of(&all.classes[i], secs, true);
            cr.read = s.read;
            cr.write = s.write;
            cr.flush = s.flush;
        }
    }
    result.workers = c
        .reports
        .iter()
        .map(|r| {
            let wsecs = r.measured_ns as f64 / 1e9;
            let spec = &job.workers[r.worker];
            let used: Vec<usize> = spec.access.iter().map(|a| a.class).collect();
            WorkerResult {
                name: spec.name.clone(),
                totals: ClassSummary::of(&r.totals.total(), wsecs, true),
                classes: used
                    .iter()
                    .map(|&i| {
                        (
                            job.classes[i].clone(),
                            ClassSummary::of(&r.totals.classes[i], wsecs, true),
                        )
                    })
                    .collect(),
                unissued: r.unissued,
                fatal: r.fatal.clone(),
            }
        })
        .collect();
    for (ti, t) in result.targets.iter_mut().enumerate() {
        for r in &c.reports {
            let k = &r.targets[ti];
            t.ops.read += k.ops[0];
            t.ops.write += k.ops[1];
            t.ops.flush += k.ops[2];
            t.bytes.read += k.bytes[0];
            t.bytes.write += k.bytes[1];
            t.errors.read += k.errors[0];
            t.errors.write += k.errors[1];
            t.errors.flush += k.errors[2];
        }
    }
    let models: BTreeMap<String, Option<String>> = result
        .targets
        .iter()
        .filter_map(|t| t.device.clone().map(|d| (d, t.device_model.clone())))
        .collect();
    result.devices = c
        .disk_measure
        .iter()
        .map(|(name, delta)| DeviceResult {
            name: name.clone(),
            model: models.get(name).cloned().flatten(),
            delta: *delta,
        })
        .collect();
    result.host_cpu = c.cpu_measure;
    result.errors = c
        .reports
        .iter()
        .flat_map(|r| r.errors.iter().cloned())
        .take(worker::ERROR_DETAILS * 4)
        .collect();
}

/// Writes `result` atomically: to a temporary file beside it, synced, then renamed.
pub fn write_results(path: &Path, result: &RunResult) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the results directory {}", dir.display()))?;
    }
    let tmp = path.with_extension("json.tmp");
    let f = std::fs::File::create(&tmp)
        .with_context(|| format!("cannot write the results file {}", tmp.display()))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    serde_json::to_writer_pretty(&mut w, result)?;
    w.write_all(b"\n")?;
    let f = w.into_inner().map_err(|e| e.into_error())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
    Ok(())
}
