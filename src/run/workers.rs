//! The workers of one run: one OS thread each, with its backend (io_uring ring, psync or null)
//! set up before a start gate opens, so set-up time is never counted as latency; the collector
//! runs on the calling thread while they work.

use super::collect::{Collected, Collector};
use super::sources::{Sources, WorkerInput};
use crate::cache::tier::{Tier, TierPlan};
use crate::engine::access::AccessGen;
use crate::engine::buf::SlotArena;
use crate::engine::null::NullBackend;
use crate::engine::ring::UringBackend;
use crate::engine::sample::SampleSpec;
use crate::engine::source::RequestSource;
use crate::engine::sync::SyncBackend;
use crate::engine::target::OpenTarget;
use crate::engine::verify::VerifyMap;
use crate::engine::worker::{self, WorkerMsg, WorkerPlan, WorkerReport};
use crate::fault::Failure;
use crate::job::{EngineKind, Job};
use crate::stats::tier::TierResult;
use crate::stats::timeseries::IntervalGrid;
use crate::stats::verification::VerifyCounts;
use crate::stats::{StatsSet, TargetCounters};
use crate::trace::Trace;
use crate::trace::replay::Replay;
use anyhow::{Result, anyhow};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// What every worker of a run shares.
pub(super) struct Shared<'a> {
    /// Set on Ctrl-C or SIGTERM, or by a thread that failed.
    pub stop: &'a AtomicBool,
    /// Where a thread that panics leaves its reason (it sets `stop`).
    pub failure: &'a Failure,
    /// Set by a worker to end the run (too many errors, a fatal problem). Workers end the run
    /// through this one, not the signal flag, so that a Ctrl-C after an internal stop still
    /// gets a clean exit with results.
    pub halt: &'a AtomicBool,
    /// Failed I/Os and verification errors of the whole run.
    pub failures: &'a AtomicU64,
    /// The targets' identities and, with verification, what every block should hold.
    pub blocks: &'a VerifyMap,
    /// The blocks to sample (every run: its reuse summary).
    pub sample: SampleSpec,
    /// The sample is recorded for cache curves (larger buffers).
    pub recorded: bool,
    /// Lines of each target's cache tier (0: none), indexed like the job's targets.
    pub cache_lines: &'a [u32],
    /// The trace each worker replays, indexed like the job's workers.
    pub traces: &'a [Option<Arc<Trace>>],
}

/// Starts one thread per worker of `job` on `opened`, each driven by the source `sources` gives
/// it (behind its target's cache tier, if it has one), lets `collector` gather their intervals
/// until every worker is done, and returns what it collected.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    job: &Job,
    engine: EngineKind,
    opened: &[OpenTarget],
    gens: Vec<AccessGen>,
    grid: IntervalGrid,
    shared: Shared<'_>,
    collector: Collector<'_>,
    sources: &dyn Sources,
) -> Result<Collected> {
    let Shared {
        stop,
        failure,
        halt,
        failures,
        blocks,
        sample,
        recorded,
        cache_lines,
        traces,
    } = shared;
    let max_failures = job.on_error.limit();
    let (tx, rx) = std::sync::mpsc::channel::<WorkerMsg>();
    let fds: Vec<_> = opened.iter().map(|o| o.file.as_fd()).collect();
    let probe_lens: Vec<u32> = opened
        .iter()
        .map(|o| {
            if job.io_uring.poll && o.direct {
                o.logical_block_size
            } else {
                0
            }
        })
        .collect();
    let n_workers = job.workers.len();
    let gate = StartGate::new();
    std::thread::scope(|scope| -> Result<Collected> {
        let gate = &gate;
        let mut spawned = 0;
        let mut spawn_error = None;
        // Each worker's pool of block-sample buffers, and where the collector returns them.
        let mut backs = Vec::new();
        for ((wi, w), access) in job.workers.iter().enumerate().zip(gens) {
            let seed = job.seed ^ ((wi as u64) << 32);
            let (back, spares) = match recorded {
                true => crate::engine::sample::pool(),
                false => crate::engine::sample::pool_of(
                    crate::engine::sample::REUSE_BUFFERS,
                    crate::engine::sample::REUSE_BUFFER_REFS,
                ),
            };
            backs.push(back);
            let sample = Some((sample, spares));
            let plan = WorkerPlan {
                index: wi,
                spec: w,
                classes: job.classes.len(),
                start: Instant::now(),
                grid,
                stop,
                halt,
                tx: tx.clone(),
                // Open loop issues each I/O at its time: no batching.
                batch: match (w.rate, &w.trace) {
                    (Some(_), _) => 1,
                    (None, Some(t)) if t.speed.is_some() => 1,
                    _ => (job.batch as usize).min(w.queue_depth as usize),
                },
                targets: job.targets.len(),
                blocks,
                failures,
                max_failures,
                sample,
            };
            let fds = fds.clone();
            let probe_lens = probe_lens.clone();
            let trace = traces.get(wi).cloned().flatten().map(|t| {
                let targets = w.targets.iter().map(|&t| t as u32).collect();
                let class = w.access.first().map_or(0, |a| a.class as u16);
                let speed = w.trace.as_ref().and_then(|r| r.speed);
                Replay::new(t, speed, targets, class)
            });
            let slot_bytes =
                job.slot_bytes(w)
                    .max(trace.as_ref().map_or(0, Replay::largest)) as usize;
            let tier = tier_of(job, w, opened, cache_lines, grid);
            let who = format!("worker `{}`", w.name);
            let spawn = std::thread::Builder::new()
                .name(format!("storlab-{}", w.name))
                .spawn_scoped(scope, move || {
                    failure.guard(&who, || {
                        let tx = plan.tx.clone();
                        let input = WorkerInput {
                            index: wi,
                            spec: w,
                            access,
                            seed,
                            replay: trace,
                        };
                        let driver = Driver {
                            plan,
                            seed,
                            io: Io {
                                uring: job.io_uring,
                                probe_lens,
                                ..Io::new(engine, fds, slot_bytes, gate)
                            },
                            tier,
                        };
                        let report = sources.drive(input, driver);
                        let _ = tx.send(WorkerMsg::Done(Box::new(report)));
                    })
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
            crate::bell::ring();
            gate.start(spawned, stop);
            return Err(anyhow!(e).context(format!(
                "cannot start worker thread {} of {n_workers}; lower the number of workers or raise the thread limit (ulimit -u)",
                spawned + 1
            )));
        }
        let start = gate.start(spawned, stop);
        // The collector (and the host sampler in it) runs on this thread, in the same guard as
        // the workers: a panic there stops the workers and fails the run, and so does an
        // error (the time series cannot be written): the workers are not left to run on.
        let collected = failure.guard("the collector", || {
            collector.collect(rx, n_workers, start, backs)
        });
        let collected = collected.unwrap_or_else(|| {
            let why = failure.reason();
            Err(anyhow!(
                why.unwrap_or_else(|| "the collector failed".into())
            ))
        });
        if collected.is_err() {
            halt.store(true, Ordering::Relaxed);
            crate::bell::ring();
        }
        collected
    })
}

/// Starts the workers together: each sets up its ring and buffers, then waits; time 0 of
/// the run is taken when all are ready, so set-up time is never counted as latency. A worker
/// that fails before it is ready (a panic) never comes: the gate opens anyway once the run is
/// asked to stop, and the workers that came see the stop at once.
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

    /// Waits for `workers` to be ready, or for `stop`, then starts them; returns time 0.
    fn start(&self, workers: usize, stop: &AtomicBool) -> Instant {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.0 < workers && !stop.load(Ordering::Relaxed) {
            let poll = std::time::Duration::from_millis(20);
            s = (self.cond.wait_timeout(s, poll))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let t = Instant::now();
        s.1 = Some(t);
        self.cond.notify_all();
        t
    }
}

/// How a worker does I/O: its engine, the targets' descriptors, its buffers' size, and the
/// gate it starts at.
struct Io<'f, 'g> {
    engine: EngineKind,
    /// Slots (I/Os in flight at most): the worker's queue depth, more with a cache tier.
    slots: usize,
    fds: Vec<std::os::fd::BorrowedFd<'f>>,
    slot_bytes: usize,
    gate: &'g StartGate,
    /// The io_uring paths asked for.
    uring: crate::job::uring::UringOptions,
    /// With polled completions asked for: one O_DIRECT read's length per target, to probe.
    probe_lens: Vec<u32>,
}

impl<'f, 'g> Io<'f, 'g> {
    fn new(
        engine: EngineKind,
        fds: Vec<std::os::fd::BorrowedFd<'f>>,
        slot_bytes: usize,
        gate: &'g StartGate,
    ) -> Self {
        Io {
            engine,
            slots: 0,
            fds,
            slot_bytes,
            uring: Default::default(),
            probe_lens: Vec::new(),
            gate,
        }
    }
}

/// What runs a worker on the source its workload gives it: its plan, seed, I/O and its
/// target's cache tier. [`Driver::run`] is generic over the source, so the worker's loop calls
/// it directly, without a virtual call per I/O.
pub(crate) struct Driver<'p, 'f, 'g> {
    plan: WorkerPlan<'p>,
    seed: u64,
    io: Io<'f, 'g>,
    tier: Option<TierSpec>,
}

impl Driver<'_, '_, '_> {
    /// Runs the worker on `source` (behind its target's cache tier, if it has one) to its end.
    pub(crate) fn run<S: RequestSource + ?Sized>(self, source: &mut S) -> WorkerReport {
        let Driver {
            plan,
            seed,
            io,
            tier,
        } = self;
        match tier {
            None => drive(plan, source, seed, io),
            Some(t) => tiered(plan, source, seed, io, t),
        }
    }

    /// Runs the worker on `source` with a backend of the workload's own, which `own` makes on
    /// the worker's thread over the worker's buffers (a file-system workload's operations):
    /// the same loop, clock, statistics and stop as every worker, whatever the job's engine.
    /// A cache tier does not apply (the workload's job has none).
    pub(crate) fn run_on<M: OwnBackend, S: RequestSource + ?Sized>(
        self,
        own: M,
        source: &mut S,
    ) -> WorkerReport {
        let Driver {
            mut plan, seed, io, ..
        } = self;
        if let Err(report) = settle(&mut plan, io.gate) {
            return *report;
        }
        let qd = (plan.spec.queue_depth as usize).max(1);
        SlotArena::with(qd, io.slot_bytes, seed, |arena, slots| {
            let b = own.make(arena);
            plan.start = io.gate.ready();
            worker::run(plan, b, slots, source, Vec::new())
        })
    }
}

/// A backend a workload brings for its own operations, made on each worker's thread over the
/// worker's buffers (`Driver::run_on`).
pub(crate) trait OwnBackend {
    /// The backend over the slots of an arena of brand `'a`.
    type Backend<'a>: crate::engine::Backend<'a>;
    /// Makes it.
    fn make<'a>(self, arena: SlotArena<'a>) -> Self::Backend<'a>;
}

/// A cache tier in front of a worker's target: its plan, and its setup as results show it.
struct TierSpec {
    plan: TierPlan,
    setup: TierResult,
}

/// The tier of worker `w`'s target, if it has one.
fn tier_of(
    job: &Job,
    w: &crate::job::Worker,
    opened: &[OpenTarget],
    cache_lines: &[u32],
    grid: IntervalGrid,
) -> Option<TierSpec> {
    let &[t] = w.targets.as_slice() else {
        return None;
    };
    let c = job.targets[t].cache.as_ref()?;
    let lines = cache_lines.get(t).copied().filter(|&l| l > 0)?;
    let plan = TierPlan {
        backing: t as u32,
        backing_bytes: opened[t].size_bytes,
        device: c.device as u32,
        lines,
        line_bytes: c.line_bytes,
        policy: c.policy,
        write: c.write,
        bypass_bytes: c.sequential_bypass_bytes,
        hit_delay_ns: c.hit_delay_ns,
        dirty_pct: c.dirty_pct,
        queue_depth: w.queue_depth,
        ramp_ns: grid.ramp_ns,
        end_ns: grid.end_ns(),
        interval_ns: grid.interval_ns,
    };
    let setup = TierResult {
        target: job.targets[t].name.clone(),
        device: job.targets[c.device].path.display().to_string(),
        cache_bytes: u64::from(lines) * c.line_bytes,
        line_bytes: c.line_bytes,
        policy: c.policy.name().into(),
        write: c.write.name().into(),
        sequential_bypass_bytes: c.sequential_bypass_bytes,
        synthetic_hit_delay_us: (c.hit_delay_ns > 0).then(|| c.hit_delay_ns as f64 / 1000.0),
        dirty_target_pct: c.dirty_pct,
        totals: Default::default(),
        read_hit_pct: 0.0,
        latency: Default::default(),
        series: Vec::new(),
        drain: Default::default(),
    };
    Some(TierSpec { plan, setup })
}

/// Runs `inner` through the cache tier of `spec`, then writes its dirty lines back.
fn tiered<S: RequestSource + ?Sized>(
    plan: WorkerPlan<'_>,
    inner: &mut S,
    seed: u64,
    io: Io<'_, '_>,
    spec: TierSpec,
) -> WorkerReport {
    let TierSpec { plan: tp, setup } = spec;
    let (fds, null) = (io.fds.clone(), io.engine == EngineKind::Null);
    let io = Io {
        slots: Tier::<&mut S>::slots(tp.queue_depth) as usize,
        ..io
    };
    let ramp_ns = plan.grid.ramp_ns;
    let mut tier = Tier::new(inner, tp);
    let mut report = drive(plan, &mut tier, seed, io);
    let outcome = tier.outcome(ramp_ns + report.measured_ns);
    // The null engine moved no data: there is nothing to write back.
    let drain = if null {
        Default::default()
    } else {
        tier.drain(fds[tp.device as usize], fds[tp.backing as usize])
    };
    report.tier = Some(Box::new(TierResult {
        read_hit_pct: outcome.totals.read_hit_pct(),
        totals: outcome.totals,
        latency: outcome.latency,
        series: outcome.series,
        drain,
        ..setup
    }));
    report
}

/// Pins the worker, makes its slots and backend, waits at the start gate and runs it on
/// `source`.
fn drive<S: RequestSource + ?Sized>(
    mut plan: WorkerPlan<'_>,
    source: &mut S,
    seed: u64,
    io: Io<'_, '_>,
) -> WorkerReport {
    let Io {
        engine,
        slots: qd,
        fds,
        slot_bytes,
        gate,
        uring,
        probe_lens,
    } = io;
    let qd = qd.max(plan.spec.queue_depth as usize);
    if let Err(report) = settle(&mut plan, gate) {
        return *report;
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
        EngineKind::IoUring => match UringBackend::new(fds, arena, &uring, &probe_lens) {
            Ok(mut b) => {
                let base = plan.spec.io_priority.map_or(0, |p| p.value());
                let mix = (plan.spec.io_priority_mix).map(|m| (m.priority.value(), m.share_pct));
                b.set_priority(base, mix);
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

/// Settles the worker's thread before its backend is made: pinned to its CPU, at its I/O
/// priority. A failure has the worker pass the start gate and report why.
fn settle(plan: &mut WorkerPlan<'_>, gate: &StartGate) -> Result<(), Box<WorkerReport>> {
    crate::fault::inject(crate::fault::Kind::Worker);
    let fail = |plan: &mut WorkerPlan<'_>, why: String| {
        plan.start = gate.ready();
        Err(Box::new(failed(plan, why)))
    };
    if let Some(cpu) = plan.spec.cpu {
        if cpu >= rustix::thread::CpuSet::MAX_CPU {
            return fail(plan, format!("cannot pin to CPU {cpu}: no such CPU"));
        }
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu);
        if let Err(e) = rustix::thread::sched_setaffinity(None, &set) {
            return fail(plan, format!("cannot pin to CPU {cpu}: {e}"));
        }
    }
    if let Some(p) = plan.spec.io_priority {
        if let Err(e) = crate::engine::ring::set_thread_io_priority(p.value()) {
            return fail(
                plan,
                format!(
                    "cannot set the I/O priority {} (ioprio_set): {}; the real-time class needs root (CAP_SYS_ADMIN)",
                    p.show(),
                    crate::stats::errors::errno_text(e.raw_os_error().unwrap_or(0))
                ),
            );
        }
    }
    Ok(())
}

fn failed(plan: &WorkerPlan<'_>, why: String) -> WorkerReport {
    plan.halt.store(true, Ordering::Relaxed);
    crate::bell::ring();
    WorkerReport {
        worker: plan.index,
        totals: StatsSet::new(plan.classes),
        targets: vec![TargetCounters::default(); plan.targets],
        measured_ns: 0,
        unissued: 0,
        errors: Vec::new(),
        fatal: Some(why),
        ended_run: false,
        notes: Vec::new(),
        verify: VerifyCounts::default(),
        sample: None,
        tier: None,
        data: None,
        ring: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_gate_opens_on_a_stop_when_a_worker_never_comes() {
        let (gate, stop) = (StartGate::new(), AtomicBool::new(false));
        std::thread::scope(|s| {
            s.spawn(|| gate.ready());
            // Two workers were started; one fails before it is ready.
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                stop.store(true, Ordering::Relaxed);
            });
            gate.start(2, &stop);
        });
        assert!(gate.state.lock().unwrap().1.is_some());
    }
}
