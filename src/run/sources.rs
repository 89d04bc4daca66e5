//! What drives each worker: the seam between a workload and the engine. A workload hands a
//! run its [`Sources`]; on each worker's own thread the run asks it to drive that worker, and
//! it makes the worker's request source and hands it to the run's `Driver`, which runs the one
//! loop of [`crate::engine::worker`] on it. A cache tier in front of a target wraps any source
//! (the driver does that: a tier belongs to the target, not to the workload).

use super::workers::Driver;
use crate::engine::access::AccessGen;
use crate::engine::source::{ClosedLoop, Delayed, OpenLoop, Thinking};
use crate::engine::worker::WorkerReport;
use crate::job::Worker;
use crate::trace::replay::Replay;

/// What the run prepared for one worker: its specification, its access generator, its seed
/// and the trace it replays, if any.
pub(crate) struct WorkerInput<'a> {
    /// Worker index in the job.
    pub index: usize,
    /// Its specification.
    pub spec: &'a Worker,
    /// Offsets, sizes and directions from its access entries.
    pub access: AccessGen,
    /// Its seed (the job's, mixed with its index).
    pub seed: u64,
    /// The trace it replays (a worker with `trace`).
    pub replay: Option<Replay>,
}

/// The request sources of a workload's workers. A source is made on its worker's own thread (it
/// need not be `Send`), handed to the [`Driver`] that runs the worker on it, and dropped there
/// when the worker ends. `Driver::run` is generic: each kind of source gets a worker loop of
/// its own, with no virtual call per I/O.
pub(crate) trait Sources: Sync {
    /// Runs worker `input.index` on its source: `driver.run(&mut source)`.
    fn drive(&self, input: WorkerInput<'_>, driver: Driver<'_, '_, '_>) -> WorkerReport;
}

/// Each worker driven by its own access entries: a trace's replay, or its access generator in
/// closed loop (with think time when it has one) or open loop at its rate. The sources of
/// every ordinary job.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FromAccess;

impl Sources for FromAccess {
    fn drive(&self, input: WorkerInput<'_>, driver: Driver<'_, '_, '_>) -> WorkerReport {
        let WorkerInput {
            spec,
            access,
            seed,
            replay,
            ..
        } = input;
        if let Some(mut replay) = replay {
            return driver.run(&mut replay);
        }
        let closed = |access| ClosedLoop::new(access, spec.io_limit);
        // A start delay: nothing before it (an open loop's schedule starts then).
        let delay = spec.start_delay_ns.unwrap_or(0);
        match (spec.rate, spec.think_ns) {
            (Some(rate), _) => {
                let open = OpenLoop::new(access, rate, seed, spec.io_limit).starting_at(delay);
                driver.run(&mut Delayed::new(open, delay))
            }
            (None, Some(think)) => driver.run(&mut Delayed::new(
                Thinking::new(closed(access), think),
                delay,
            )),
            (None, None) if delay > 0 => driver.run(&mut Delayed::new(closed(access), delay)),
            (None, None) => driver.run(&mut closed(access)),
        }
    }
}
