//! What drives each worker: the seam between a workload and the engine. A workload hands a
//! run its [`Sources`]; the run asks it for each worker's request source on that worker's own
//! thread, and the worker drives whatever it gets through the one loop of
//! [`crate::engine::worker`]. A cache tier in front of a target wraps any source (the run does
//! that: a tier belongs to the target, not to the workload).

use crate::engine::access::AccessGen;
use crate::engine::source::{ClosedLoop, OpenLoop, RequestSource, Thinking};
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

/// The request sources of a workload's workers. Built on each worker's own thread (a source
/// need not be `Send`) and dropped there when the worker ends.
pub(crate) trait Sources: Sync {
    /// The source that drives worker `input.index`.
    fn source<'s>(&'s self, input: WorkerInput<'_>) -> Box<dyn RequestSource + 's>;
}

/// Each worker driven by its own access entries: a trace's replay, or its access generator in
/// closed loop (with think time when it has one) or open loop at its rate. The sources of
/// every ordinary job.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FromAccess;

impl Sources for FromAccess {
    fn source<'s>(&'s self, input: WorkerInput<'_>) -> Box<dyn RequestSource + 's> {
        let WorkerInput {
            spec,
            access,
            seed,
            replay,
            ..
        } = input;
        if let Some(replay) = replay {
            return Box::new(replay);
        }
        match (spec.rate, spec.think_ns) {
            (Some(rate), _) => Box::new(OpenLoop::new(access, rate, seed, spec.io_limit)),
            (None, Some(think)) => {
                Box::new(Thinking::new(ClosedLoop::new(access, spec.io_limit), think))
            }
            (None, None) => Box::new(ClosedLoop::new(access, spec.io_limit)),
        }
    }
}
