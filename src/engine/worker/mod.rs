//! The worker loop: one OS thread, one backend (ring), `queue_depth` slots, one request
//! source, its own statistics. The source (`super::source`) decides what to issue and when:
//! closed loop keeps every slot busy; open loop issues I/Os at their intended times and the
//! loop records response time from that time (no coordinated omission) and service time from
//! submission. The loop owns the rest: slots, submission and reaping, the interval grid,
//! statistics, verification locks, batching, stopping, errors, and draining every I/O in
//! flight before it returns. Every interval the worker hands its interval statistics to the
//! collector over a channel; nothing on the per-I/O path allocates, locks or prints.

mod floor;
mod meter;

use super::buf::Slot;
use super::sample::{BlockSampler, SampleSpec};
use super::source::{Next, Request, RequestSource};
use super::verify::VerifyMap;
use super::{Backend, IoOp, OpKind};
use crate::bell::monotonic_ns;
use crate::job::Worker;
use crate::stats::blocks::BlockRef;
use crate::stats::cost::Cost;
use crate::stats::errors::{ErrorDetail, errno_text};
use crate::stats::timeseries::IntervalGrid;
use crate::stats::verification::VerifyCounts;
use crate::stats::{Dir, StatsSet, TargetCounters};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::time::Instant;

/// Longest a worker with I/O in flight waits for a completion without looking at the stop
/// flag (a worker with nothing in flight sleeps until its next deadline: the bell wakes it).
const MAX_WAIT_NS: u64 = 50_000_000;
/// The timer slack of a worker thread, ns: how late the kernel may end its timed sleeps to
/// group wake-ups (50 µs by default), which would be added to an open-loop I/O's response time.
const TIMER_SLACK_NS: u64 = 1_000;
/// How long a worker waits before trying again an I/O whose blocks another I/O holds
/// (verification never lets a block be read while it is written).
const BLOCKED_RETRY_NS: u64 = 100_000;
/// After a submission failed, how many more failed submissions in a row (each followed by a
/// pause of [`FAILED_SUBMIT_PAUSE`]) the worker tries while it drains, before it leaves what is
/// still in flight to its backend's drop (which waits for it too, or leaks the buffers).
const FAILED_SUBMITS: u32 = 1000;
/// The pause after a failed submission.
const FAILED_SUBMIT_PAUSE: std::time::Duration = std::time::Duration::from_millis(1);
/// How many I/O errors are kept in detail per worker.
pub const ERROR_DETAILS: usize = 8;
/// What a worker sends to the collector.
#[derive(Debug)]
pub enum WorkerMsg {
    /// Statistics of one finished interval.
    Interval {
        /// Worker index.
        worker: usize,
        /// Interval index in the run's [`IntervalGrid`].
        index: u64,
        /// The interval's statistics.
        stats: Box<StatsSet>,
    },
    /// Sampled block references (see `super::sample`), in the order issued.
    Blocks {
        /// Worker index.
        worker: usize,
        /// The references.
        refs: Vec<BlockRef>,
    },
    /// The worker has finished.
    Done(Box<WorkerReport>),
}

/// A worker's final account.
#[derive(Debug)]
pub struct WorkerReport {
    /// Worker index.
    pub worker: usize,
    /// Statistics of the measured phase.
    pub totals: StatsSet,
    /// Per-target counters of the measured phase (indexed like the job's targets).
    pub targets: Vec<TargetCounters>,
    /// Measured time, ns (shorter than planned when stopped early).
    pub measured_ns: u64,
    /// Open loop: I/Os whose intended time had passed but were never issued (backlog).
    pub unissued: u64,
    /// The first errors.
    pub errors: Vec<ErrorDetail>,
    /// A fatal problem that ended the worker early.
    pub fatal: Option<String>,
    /// It had done its I/Os and, by its `on_done`, ended the run for every worker.
    pub ended_run: bool,
    /// Notes from the backend (e.g. registration fallbacks).
    pub notes: Vec<String>,
    /// What data verification found in this worker's reads.
    pub verify: VerifyCounts,
    /// With a block sample: block references seen (sampled or not) and sampled ones dropped.
    pub sample: Option<(u64, u64)>,
    /// What a cache tier in front of its target did (filled in by the run, which puts the
    /// tier between the worker and its source).
    pub tier: Option<Box<crate::stats::tier::TierResult>>,
    /// With reduced data (`[data]`): what the sample of the units it wrote measured.
    pub data: Option<super::reduce::Measured>,
    /// The io_uring paths its ring used, and why any asked for was not.
    pub ring: Option<super::paths::RingPaths>,
}

/// What a worker needs besides its backend.
pub struct WorkerPlan<'a> {
    /// Worker index.
    pub index: usize,
    /// Its specification.
    pub spec: &'a Worker,
    /// Number of classes in the job.
    pub classes: usize,
    /// Run start (time 0 of the grid).
    pub start: Instant,
    /// Phases and intervals.
    pub grid: IntervalGrid,
    /// Set on Ctrl-C or SIGTERM (the worker only reads it).
    pub stop: &'a AtomicBool,
    /// Set by a worker to end the whole run: too many errors, or a fatal problem.
    pub halt: &'a AtomicBool,
    /// To the collector.
    pub tx: Sender<WorkerMsg>,
    /// Ask the source for I/O only when this many slots are free (1: each I/O as soon as it
    /// is ready; always 1 in open loop). At most the queue depth.
    pub batch: usize,
    /// Number of targets in the job.
    pub targets: usize,
    /// The targets' identities (every write is sealed with a header naming its target and
    /// offset) and, with verification, what every block should hold.
    pub blocks: &'a VerifyMap,
    /// Failed I/Os and verification errors of the whole run, across workers.
    pub failures: &'a AtomicU64,
    /// The run stops (sets `halt`) when `failures` reaches this.
    pub max_failures: u64,
    /// Record a sample of the blocks touched, in buffers from this pool.
    pub sample: Option<(SampleSpec, Receiver<Vec<BlockRef>>)>,
}

/// A slot's I/O in flight.
#[derive(Clone, Copy)]
struct InFlight {
    request: Request,
    submit_ns: u64,
}

/// Runs the worker to the end of the grid, until its source is done, or until stopped, and
/// returns its report. `slots` are the tokens of every slot of `backend`, all free; the worker
/// returns only once every I/O it issued has completed (or, when the backend can no longer
/// wait, leaves the rest to the backend's drop).
// The one function over clippy's 150 lines, on purpose: this is the per-I/O loop. Split into
// functions, its state (slots, ring, source, statistics, clocks) would move into structs the
// compiler may not keep in registers; the instruction counts in docs/performance.md ("The
// request-source seam: cost") are the check for any change here.
#[allow(clippy::too_many_lines)]
pub fn run<'a, B: Backend<'a>, S: RequestSource + ?Sized>(
    plan: WorkerPlan<'_>,
    mut backend: B,
    slots: Vec<Slot<'a>>,
    source: &mut S,
    notes: Vec<String>,
) -> WorkerReport {
    let WorkerPlan {
        index,
        spec,
        classes,
        start,
        grid,
        stop,
        halt,
        tx,
        batch,
        targets,
        blocks,
        failures,
        max_failures,
        sample,
    } = plan;
    let mut sampler =
        sample.map(|(spec, spares)| BlockSampler::new(spec, targets, index, spares, tx.clone()));
    // Sleeps end when asked, not up to 50 µs later.
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(TIMER_SLACK_NS));
    let mut own = Own::start();
    let verify = blocks.track.then_some(blocks);
    let mut written = (blocks.reduce).map(|r| super::reduce::DataSample::new(r.asked.unit_bytes));
    let qd = slots.len();
    // What `flights` holds for a slot never used.
    let idle = InFlight {
        request: Request::NONE,
        submit_ns: 0,
    };
    let mut flights = vec![idle; qd];
    // Free slots; slot 0 is used first.
    let mut free = slots;
    free.reverse();
    let mut pending: Vec<u32> = Vec::with_capacity(qd);
    let mut done: Vec<(Slot<'a>, i32)> = Vec::with_capacity(qd * 2);
    // When the completions in `done` were reaped: (index of the first of a reap, its time).
    let mut reaps: Vec<(usize, u64)> = Vec::with_capacity(qd + 1);
    let mut interval = StatsSet::new(classes);
    let mut totals = StatsSet::new(classes);
    let mut counters = vec![TargetCounters::default(); targets];
    let mut errors = Vec::new();
    let mut checks = VerifyCounts::default();
    // A request offered but not yet issued: its blocks were busy (verification only).
    let mut blocked: Option<Request> = None;
    // Ends the whole run: every worker's sleep ends at once.
    let halt_run = || {
        halt.store(true, Ordering::Relaxed);
        crate::bell::ring();
    };
    let fail = |n: u64| {
        if failures.fetch_add(n, Ordering::Relaxed) + n >= max_failures {
            halt_run();
        }
    };
    let ramp_ns = grid.ramp_ns;
    let end_ns = grid.end_ns();
    // Issuing goes on through the cool-down; what completes after `end_ns` is not counted.
    let issue_until = end_ns + grid.cooldown_ns;
    let (mut cur, mut cur_end) = grid.at(0);
    let mut inflight = 0usize;
    let mut issuing = true;
    // The source said it has nothing more to offer.
    let mut finished = false;
    let mut stopped_at = end_ns;
    let mut fatal = None;
    let mut ended_run = false;
    let mut failed_submits = 0u32;
    let mut last_completion = 0u64;
    // The run's clock: CLOCK_MONOTONIC, as `start` (an Instant) reads it, less the start, in
    // plain integers (std's `elapsed` checks and converts through 128-bit durations).
    let origin = {
        let before = monotonic_ns();
        let since = start.elapsed().as_nanos() as u64;
        before.saturating_sub(since)
    };
    let now_ns = || monotonic_ns().saturating_sub(origin);
    // The time of the last reap, when nothing has waited since: the next turn of the loop
    // starts from it rather than reading the clock again (it is older by the completions'
    // bookkeeping: what the loop decides with it, when to issue, end or stop, is late by that
    // much; no latency is measured from it).
    let mut carried: Option<u64> = None;
    let mut floor = (spec.min_rate.as_ref())
        .map(|r| floor::Floor::new(r, spec.start_delay_ns.unwrap_or(0), ramp_ns));
    // When the floor is next judged (never without one): one comparison a turn of the loop.
    let mut floor_due = floor.as_ref().map_or(u64::MAX, |f| f.due_ns);

    loop {
        // Read before the flags: a stop or halt after this ends the sleep below at once.
        let ticket = crate::bell::ticket();
        let now = carried.take().unwrap_or_else(now_ns);
        advance(
            now,
            &grid,
            (&mut cur, &mut cur_end),
            (&mut interval, &mut totals, &mut sampler),
            (&mut own, backend.syscalls()),
            &tx,
            index,
        );
        own.peek(now);
        if issuing
            && (now >= issue_until || stop.load(Ordering::Relaxed) || halt.load(Ordering::Relaxed))
        {
            issuing = false;
            stopped_at = now.min(end_ns);
        }
        if now >= floor_due
            && issuing
            && now < end_ns
            && let Some(f) = floor.as_mut()
        {
            // The totals so far: those of the measured intervals that ended, and this one's.
            let current = if cur >= grid.ramp_intervals() {
                floor::completed(&interval)
            } else {
                0
            };
            if let Some(below) = f.check(now, floor::completed(&totals) + current) {
                // Below its floor: the run ends, as fio's rate_iops_min ends the job.
                fatal.get_or_insert(below);
                halt_run();
                issuing = false;
                stopped_at = now.min(end_ns);
            }
            floor_due = f.due_ns;
        }
        // When the source has nothing before some time: wake up then.
        let mut wake_at = u64::MAX;
        if issuing && free.len() >= batch {
            // Submit each batch as soon as the next is ready, until one completes inline.
            let mut early = true;
            while let Some(slot) = free.pop() {
                let request = match blocked.take() {
                    Some(r) => r,
                    None if finished => {
                        free.push(slot);
                        break;
                    }
                    None => match source.next(now) {
                        Next::Issue(r) => r,
                        Next::At(t) => {
                            wake_at = t;
                            free.push(slot);
                            break;
                        }
                        Next::AwaitCompletion => {
                            free.push(slot);
                            break;
                        }
                        Next::Done => {
                            finished = true;
                            free.push(slot);
                            break;
                        }
                    },
                };
                let op = request.op;
                // Where the data belongs: verification and the sample go by it.
                let (home_target, home_offset, copy) = home_of(&request);
                if let Some(map) = verify.filter(|_| !op.kind.is_sync()) {
                    if !map.aligned(home_offset, op.len) {
                        // The source's I/O does not fit the blocks the job declared: the
                        // run ends, saying so (nothing of it is issued).
                        fatal.get_or_insert_with(|| {
                            format!(
                                "cannot verify an I/O of {} bytes at offset {}: verification works on whole {}-byte blocks, and the job's access entries declared that size and alignment",
                                op.len, op.offset, map.block
                            )
                        });
                        halt_run();
                        issuing = false;
                        stopped_at = now.min(end_ns);
                        free.push(slot);
                        break;
                    }
                    let exclusive = op.kind == OpKind::Write && !copy;
                    if !map.lock(home_target, home_offset, op.len, exclusive) {
                        blocked = Some(request);
                        free.push(slot);
                        break;
                    }
                }
                if op.kind == OpKind::Write {
                    let buf = backend.slot_buf(&slot);
                    blocks.seal(buf, home_target, home_offset, op.len, copy);
                    if let Some(w) = written.as_mut() {
                        w.record(&buf[..op.len as usize]);
                    }
                }
                if let Some(s) = sampler.as_mut() {
                    match request.home {
                        None => s.record(&op, now),
                        // The application's I/O, where its data belongs.
                        Some(h) if !h.background => s.record(
                            &IoOp {
                                target: h.target,
                                offset: h.offset,
                                ..op
                            },
                            now,
                        ),
                        Some(_) => {}
                    }
                }
                // A whole batch waits and another I/O is ready: the batch is submitted now, so
                // the device starts on it while the next is prepared (the last batch is
                // submitted by the wait below, which also reports a failure). When a batch
                // completed within its own submission (a page-cache hit, the null engine),
                // there is nothing to start early: the rest of this refill goes in one call.
                let mut submitted = true;
                if early && pending.len() >= batch {
                    let t = now_ns();
                    stamp(&mut pending, &mut flights, t);
                    submitted = backend.submit(false, 0).is_ok();
                    let before = done.len();
                    backend.reap(&mut done);
                    if done.len() > before {
                        // Their latency ends now, not after the rest of the refill.
                        reaps.push((before, now_ns()));
                    }
                    early = !done[before..]
                        .iter()
                        .any(|(s, _)| flights[s.index() as usize].submit_ns == t);
                }
                let i = slot.index();
                flights[i as usize].request = request;
                pending.push(i);
                backend.push(slot, &op);
                inflight += 1;
                if !submitted {
                    break;
                }
            }
        }
        if finished && issuing && inflight == 0 && blocked.is_none() {
            // Done: the measured time ends with the last completion.
            issuing = false;
            stopped_at = last_completion.max(ramp_ns).min(end_ns);
            if !spec.on_done.goes_on() && !halt.load(Ordering::Relaxed) {
                // Its on_done: every worker stops now.
                ended_run = true;
                halt_run();
            }
        }
        if !issuing && inflight == 0 {
            break;
        }
        if !pending.is_empty() {
            stamp(&mut pending, &mut flights, now_ns());
        }
        let mut deadline = cur_end;
        if inflight > 0 {
            deadline = deadline.min(now + MAX_WAIT_NS);
        }
        if issuing {
            deadline = deadline.min(issue_until).min(wake_at);
            if now < end_ns {
                deadline = deadline.min(end_ns).min(floor_due);
            }
            if blocked.is_some() {
                deadline = deadline.min(now + BLOCKED_RETRY_NS);
            }
        }
        let timeout = deadline.saturating_sub(now);
        if inflight == 0 {
            // Nothing in flight, so nothing can complete: sleep until the deadline (the next
            // intended I/O, the interval's end, the run's end) in one system call, or until
            // the bell rings (a stop, a halt). Never a spin.
            if timeout > 0 {
                crate::bell::sleep_until(ticket, origin + deadline);
                own.calls += 1;
                let woke = now_ns();
                if woke >= deadline {
                    interval.cost.woke_late(woke - deadline);
                }
                carried = Some(woke);
            }
            continue;
        }
        // Completions reaped while refilling are not held back by a wait for more.
        let wait = timeout > 0 && done.is_empty();
        if let Err(e) = backend.submit(wait, timeout) {
            // Fatal: stop issuing, end the run, and drain what is in flight.
            fatal.get_or_insert_with(|| format!("submitting I/O failed: {e}"));
            if issuing {
                issuing = false;
                stopped_at = now.min(end_ns);
            }
            halt_run();
            failed_submits += 1;
        } else {
            failed_submits = 0;
        }
        let before = done.len();
        backend.reap(&mut done);
        if done.is_empty() {
            if failed_submits > 0 {
                if failed_submits > FAILED_SUBMITS {
                    // The backend can neither submit nor wait: its drop takes over.
                    break;
                }
                std::thread::sleep(FAILED_SUBMIT_PAUSE);
            }
            continue;
        }
        let reaped = now_ns();
        if done.len() > before {
            reaps.push((before, reaped));
        }
        // Completions go to the interval of the last reap (one reaped earlier in a refill, and
        // timed then, can have its time in the interval before, by at most the refill's
        // length).
        advance(
            reaped,
            &grid,
            (&mut cur, &mut cur_end),
            (&mut interval, &mut totals, &mut sampler),
            (&mut own, backend.syscalls()),
            &tx,
            index,
        );
        // In the order reaped: reversed, then popped. (A `Drain` costs as much to set up and
        // tear down as the rest of the loop's bookkeeping of an I/O at queue depth 1.)
        done.reverse();
        let (mut k, mut reap) = (0, 0);
        while let Some((slot, res)) = done.pop() {
            // Each completion's time is that of the reap that found it.
            while reap + 1 < reaps.len() && reaps[reap + 1].0 <= k {
                reap += 1;
            }
            let t = reaps[reap].1;
            k += 1;
            let InFlight { request, submit_ns } = &flights[slot.index() as usize];
            let op = request.op;
            let ok = res >= 0 && (op.kind.is_sync() || res as u32 == op.len);
            if let Some(map) = verify {
                let (home_target, home_offset, copy) = home_of(request);
                match op.kind {
                    OpKind::Write if copy => map.release(home_target, home_offset, op.len),
                    OpKind::Write => map.written(home_target, home_offset, op.len, ok),
                    OpKind::Read => {
                        let before = checks.errors();
                        map.read(
                            backend.slot_buf(&slot),
                            home_target,
                            home_offset,
                            op.len,
                            ok,
                            "run",
                            t / 1_000_000,
                            &mut checks,
                        );
                        if checks.errors() > before {
                            fail(checks.errors() - before);
                        }
                    }
                    OpKind::Flush | OpKind::Fsync => {}
                }
            }
            free.push(slot);
            inflight -= 1;
            if !ok {
                fail(1);
            }
            source.completed(request, res, t);
            // Which interval, and whether it counts, goes by the last reap, as the intervals
            // were advanced to it: the measure intervals add up to the totals exactly.
            if reaped > end_ns || reaped > stopped_at {
                continue;
            }
            last_completion = reaped;
            let latency = t.saturating_sub(request.intended_ns.unwrap_or(*submit_ns));
            let service = request.intended_ns.map(|_| t.saturating_sub(*submit_ns));
            let dir = match op.kind {
                OpKind::Read => Dir::Read,
                OpKind::Write => Dir::Write,
                OpKind::Flush | OpKind::Fsync => Dir::Flush,
            };
            let class = op.class as usize;
            let counted = reaped >= ramp_ns;
            // A cache tier's own I/O counts for its target only.
            let application = request.home.is_none_or(|h| !h.background);
            if ok {
                let bytes = op.len as u64;
                if application {
                    interval.record(class, dir, bytes, latency, service);
                }
                // A workload's own backend may name no target of the job (a file of a
                // file-system tree): its I/O counts for its class only.
                if counted && let Some(c) = counters.get_mut(op.target as usize) {
                    c.ops[dir as usize] += 1;
                    c.bytes[dir as usize] += bytes;
                }
            } else {
                if application {
                    interval.record_error(class, dir, latency);
                }
                if counted && let Some(c) = counters.get_mut(op.target as usize) {
                    c.ops[dir as usize] += 1;
                    c.errors[dir as usize] += 1;
                }
                if errors.len() < ERROR_DETAILS {
                    errors.push(error_detail(&op, res, t));
                }
            }
        }
        reaps.clear();
        carried = Some(reaped);
    }
    if let Some(s) = sampler.as_mut() {
        s.finish();
    }
    if cur < grid.intervals() {
        interval
            .cost
            .add(&own.interval(now_ns(), backend.syscalls()));
        if cur >= grid.ramp_intervals() {
            totals.add(&interval);
        }
        let _ = tx.send(WorkerMsg::Interval {
            worker: index,
            index: cur,
            stats: Box::new(interval),
        });
    }
    // A request held for its busy blocks was due too, and never issued.
    let held = blocked.is_some_and(|r| r.intended_ns.is_some_and(|t| t < stopped_at));
    let unissued = source.unissued(stopped_at) + held as u64;
    WorkerReport {
        worker: index,
        totals,
        targets: counters,
        measured_ns: stopped_at.saturating_sub(ramp_ns),
        unissued,
        errors,
        fatal,
        ended_run,
        notes,
        verify: checks,
        sample: sampler.map(|s| (s.references, s.dropped)),
        tier: None,
        data: written.map(|w| w.finish()),
        ring: backend.paths(),
    }
}

/// The loop's own cost: its thread's counters, and the system calls it makes besides its
/// backend's (sleeps, the counters' reads).
struct Own {
    meter: meter::Meter,
    calls: u64,
    /// Of `calls` and the backend's, those already given to an interval.
    counted: u64,
    /// When the run-queue wait is read next if no interval ends before (loop time, ns).
    peek_at: u64,
}

impl Own {
    fn start() -> Own {
        Own {
            meter: meter::Meter::start(),
            calls: 0,
            counted: 0,
            peek_at: meter::PEEK_NS,
        }
    }

    /// At loop time `now`: the run-queue wait is read when a second has passed since the last
    /// reading (an interval longer than that).
    #[inline]
    fn peek(&mut self, now: u64) {
        if now >= self.peek_at {
            self.meter.peek();
            self.calls += 1;
            self.peek_at = now + meter::PEEK_NS;
        }
    }

    /// The thread's cost since the last interval ended (at loop time `t`), `backend_calls`
    /// being the backend's system calls so far.
    fn interval(&mut self, t: u64, backend_calls: u64) -> Cost {
        let mut c = self.meter.read();
        self.peek_at = t + meter::PEEK_NS;
        self.calls += meter::READ_SYSCALLS;
        let all = self.calls + backend_calls;
        c.syscalls = all - self.counted;
        self.counted = all;
        c
    }
}

/// Where a request's data belongs (target, offset) and whether it is a copy (see
/// [`super::source::Home`]).
#[inline]
fn home_of(request: &Request) -> (u32, u64, bool) {
    match request.home {
        None => (request.op.target, request.op.offset, false),
        Some(h) => (h.target, h.offset, h.copy),
    }
}

/// Gives the I/Os in `pending` their submission time `t`: they are submitted next.
#[inline]
fn stamp(pending: &mut Vec<u32>, flights: &mut [InFlight], t: u64) {
    for &s in pending.iter() {
        flights[s as usize].submit_ns = t;
    }
    pending.clear();
}

/// Sends every interval that ended at or before `t` and moves on to the one containing `t`.
#[inline]
fn advance(
    t: u64,
    grid: &IntervalGrid,
    (cur, cur_end): (&mut u64, &mut u64),
    (interval, totals, sampler): (&mut StatsSet, &mut StatsSet, &mut Option<BlockSampler>),
    (own, backend_calls): (&mut Own, u64),
    tx: &Sender<WorkerMsg>,
    worker: usize,
) {
    while t >= *cur_end && *cur < grid.intervals() {
        // What the thread itself cost goes with the interval's I/Os.
        interval.cost.add(&own.interval(t, backend_calls));
        // A measured interval's I/Os join the totals as it ends (every I/O is recorded once).
        if *cur >= grid.ramp_intervals() {
            totals.add(interval);
        }
        // The sampled references so far go out with the interval.
        if let Some(s) = sampler.as_mut() {
            s.flush();
        }
        // A compact copy (only non-empty buckets); the worker's own set is emptied in place.
        let stats = Box::new(interval.take());
        let _ = tx.send(WorkerMsg::Interval {
            worker,
            index: *cur,
            stats,
        });
        (*cur, *cur_end) = grid.at(*cur_end);
    }
}

fn error_detail(op: &IoOp, res: i32, t_ns: u64) -> ErrorDetail {
    let error = if res < 0 {
        errno_text(-res)
    } else {
        format!("short transfer: {res} of {} bytes", op.len)
    };
    ErrorDetail {
        target: op.target as usize,
        op: match op.kind {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Flush => "flush",
            OpKind::Fsync => "fsync",
        }
        .into(),
        offset: op.offset,
        len: op.len,
        error,
        t_ms: t_ns / 1_000_000,
    }
}
#[cfg(test)]
mod tests;
