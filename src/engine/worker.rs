//! The worker loop: one OS thread, one backend (ring), `queue_depth` slots, one access
//! generator, its own statistics. Closed loop keeps every slot busy; open loop issues I/Os at
//! their intended times and records response time from that time (no coordinated omission)
//! and service time from submission. Every interval the worker hands its interval statistics
//! to the collector over a channel; nothing on the per-I/O path allocates, locks or prints.

use super::access::AccessGen;
use super::pacing::Pacer;
use super::verify::VerifyMap;
use super::{Backend, IoOp, OpKind};
use crate::job::{IoLimit, Worker};
use crate::stats::errors::{ErrorDetail, errno_text};
use crate::stats::timeseries::IntervalGrid;
use crate::stats::verification::VerifyCounts;
use crate::stats::{Dir, StatsSet, TargetCounters};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::Instant;

/// Longest a worker sleeps without looking at the stop flag.
const MAX_WAIT_NS: u64 = 50_000_000;
/// How long a worker waits before trying again an I/O whose blocks another I/O holds
/// (verification never lets a block be read while it is written).
const BLOCKED_RETRY_NS: u64 = 100_000;
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
    /// Notes from the backend (e.g. registration fallbacks).
    pub notes: Vec<String>,
    /// What data verification found in this worker's reads.
    pub verify: VerifyCounts,
}

/// What a worker needs besides its backend.
pub struct WorkerPlan<'a> {
    /// Worker index.
    pub index: usize,
    /// Its specification.
    pub spec: &'a Worker,
    /// Number of classes in the job.
    pub classes: usize,
    /// Offsets and choices.
    pub access: AccessGen,
    /// Seed for pacing.
    pub seed: u64,
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
    /// Closed loop: refill slots only when this many are free (1: each I/O as soon as it is
    /// ready). At most the queue depth.
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
}

#[derive(Clone, Copy, Default)]
struct Slot {
    op: Option<IoOp>,
    intended_ns: u64,
    submit_ns: u64,
}

/// Runs the worker to the end of the grid (or until stopped) and returns its report.
pub fn run<B: Backend>(plan: WorkerPlan<'_>, mut backend: B, notes: Vec<String>) -> WorkerReport {
    let WorkerPlan {
        index,
        spec,
        classes,
        mut access,
        seed,
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
    } = plan;
    let verify = blocks.track.then_some(blocks);
    let qd = spec.queue_depth as usize;
    let mut slots = vec![Slot::default(); qd];
    let mut free: Vec<u32> = (0..qd as u32).rev().collect();
    let mut pending: Vec<u32> = Vec::with_capacity(qd);
    let mut done: Vec<(u32, i32)> = Vec::with_capacity(qd * 2);
    let mut interval = StatsSet::new(classes);
    let mut totals = StatsSet::new(classes);
    let mut counters = vec![TargetCounters::default(); targets];
    let mut errors = Vec::new();
    let mut checks = VerifyCounts::default();
    // An I/O drawn but not yet issued: its blocks were busy (verification only).
    let mut blocked: Option<IoOp> = None;
    let fail = |n: u64| {
        if failures.fetch_add(n, Ordering::Relaxed) + n >= max_failures {
            halt.store(true, Ordering::Relaxed);
        }
    };
    let mut pacer = spec.rate.map(|r| Pacer::new(r, seed ^ 0x7061_6365));
    let open = pacer.is_some();
    let mut next_intended = pacer.as_mut().map(|p| p.next_ns()).unwrap_or(0);
    let ramp_ns = grid.ramp_ns;
    let end_ns = grid.ramp_ns + grid.measure_ns;
    let (mut cur, mut cur_end) = grid.at(0);
    let mut inflight = 0usize;
    let mut issuing = true;
    let mut stopped_at = end_ns;
    let mut fatal = None;
    let limit = match spec.io_limit {
        None => u64::MAX,
        Some(IoLimit::Ios(n)) => n,
        Some(IoLimit::Passes(p)) => access.ops_per_pass().saturating_mul(p as u64),
    };
    let mut issued = 0u64;
    let mut last_completion = 0u64;
    let now_ns = || start.elapsed().as_nanos() as u64;

    loop {
        let now = now_ns();
        advance(
            now,
            &grid,
            (&mut cur, &mut cur_end),
            &mut interval,
            &tx,
            index,
        );
        if issuing
            && (now >= end_ns || stop.load(Ordering::Relaxed) || halt.load(Ordering::Relaxed))
        {
            issuing = false;
            stopped_at = now.min(end_ns);
        }
        if issuing && (open || free.len() >= batch) {
            while let Some(&slot) = free.last() {
                let intended = if open {
                    if next_intended > now {
                        break;
                    }
                    next_intended
                } else {
                    0
                };
                if issued >= limit {
                    break;
                }
                let op = blocked.take().unwrap_or_else(|| access.next_op().0);
                if let Some(map) = verify {
                    if op.kind != OpKind::Flush
                        && !map.lock(op.target, op.offset, op.len, op.kind == OpKind::Write)
                    {
                        blocked = Some(op);
                        break;
                    }
                }
                issued += 1;
                free.pop();
                if op.kind == OpKind::Write {
                    blocks.seal(backend.slot_buf(slot), op.target, op.offset, op.len);
                }
                backend.push(slot, &op);
                slots[slot as usize] = Slot {
                    op: Some(op),
                    intended_ns: intended,
                    submit_ns: 0,
                };
                pending.push(slot);
                inflight += 1;
                if let Some(p) = pacer.as_mut() {
                    next_intended = p.next_ns();
                }
            }
        }
        if issued >= limit && inflight == 0 && issuing {
            issuing = false;
            stopped_at = last_completion.max(ramp_ns).min(end_ns);
        }
        if !issuing && inflight == 0 {
            break;
        }
        if !pending.is_empty() {
            let t = now_ns();
            for &s in &pending {
                let slot = &mut slots[s as usize];
                slot.submit_ns = t;
                if !open {
                    slot.intended_ns = t;
                }
            }
            pending.clear();
        }
        let mut deadline = cur_end.min(now + MAX_WAIT_NS);
        if issuing {
            deadline = deadline.min(end_ns);
            if open && !free.is_empty() {
                deadline = deadline.min(next_intended);
            }
            if blocked.is_some() {
                deadline = deadline.min(now + BLOCKED_RETRY_NS);
            }
        }
        let timeout = deadline.saturating_sub(now);
        if let Err(e) = backend.submit(timeout > 0, timeout) {
            fatal = Some(format!("submitting I/O failed: {e}"));
            issuing = false;
            stopped_at = now.min(end_ns);
            halt.store(true, Ordering::Relaxed);
        }
        backend.reap(&mut done);
        if done.is_empty() {
            if fatal.is_some() && inflight > 0 {
                break;
            }
            continue;
        }
        let t = now_ns();
        // Completions belong to the interval of the time they were reaped.
        advance(
            t,
            &grid,
            (&mut cur, &mut cur_end),
            &mut interval,
            &tx,
            index,
        );
        for &(slot_id, res) in &done {
            let slot = slots[slot_id as usize];
            let Some(op) = slot.op else { continue };
            slots[slot_id as usize].op = None;
            free.push(slot_id);
            inflight -= 1;
            let ok = res >= 0 && (op.kind == OpKind::Flush || res as u32 == op.len);
            if let Some(map) = verify {
                match op.kind {
                    OpKind::Write => map.written(op.target, op.offset, op.len, ok),
                    OpKind::Read => {
                        let before = checks.errors();
                        map.read(
                            backend.slot_buf(slot_id),
                            op.target,
                            op.offset,
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
                    OpKind::Flush => {}
                }
            }
            if !ok {
                fail(1);
            }
            if t > end_ns || t > stopped_at {
                continue;
            }
            last_completion = t;
            let latency = t.saturating_sub(slot.intended_ns);
            let service = open.then(|| t.saturating_sub(slot.submit_ns));
            let dir = match op.kind {
                OpKind::Read => Dir::Read,
                OpKind::Write => Dir::Write,
                OpKind::Flush => Dir::Flush,
            };
            let class = op.class as usize;
            let counted = t >= ramp_ns;
            if ok {
                let bytes = op.len as u64;
                interval.record(class, dir, bytes, latency, service);
                if counted {
                    totals.record(class, dir, bytes, latency, service);
                    let c = &mut counters[op.target as usize];
                    c.ops[dir as usize] += 1;
                    c.bytes[dir as usize] += bytes;
                }
            } else {
                interval.record_error(class, dir, latency);
                if counted {
                    totals.record_error(class, dir, latency);
                    let c = &mut counters[op.target as usize];
                    c.ops[dir as usize] += 1;
                    c.errors[dir as usize] += 1;
                }
                if errors.len() < ERROR_DETAILS {
                    errors.push(error_detail(&op, res, t));
                }
            }
        }
        done.clear();
    }
    if cur < grid.intervals() {
        let _ = tx.send(WorkerMsg::Interval {
            worker: index,
            index: cur,
            stats: Box::new(interval),
        });
    }
    let unissued = match (&pacer, open) {
        (Some(p), true) if next_intended < stopped_at && issued < limit => {
            p.expected_between(next_intended, stopped_at)
        }
        _ => 0,
    };
    WorkerReport {
        worker: index,
        totals,
        targets: counters,
        measured_ns: stopped_at.saturating_sub(ramp_ns),
        unissued,
        errors,
        fatal,
        notes,
        verify: checks,
    }
}

/// Sends every interval that ended at or before `t` and moves on to the one containing `t`.
#[inline]
fn advance(
    t: u64,
    grid: &IntervalGrid,
    (cur, cur_end): (&mut u64, &mut u64),
    interval: &mut StatsSet,
    tx: &Sender<WorkerMsg>,
    worker: usize,
) {
    while t >= *cur_end && *cur < grid.intervals() {
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
        }
        .into(),
        offset: op.offset,
        len: op.len,
        error,
        t_ms: t_ns / 1_000_000,
    }
}
