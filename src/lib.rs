//! storlab: a storage benchmark for application workloads. It answers: *will this storage
//! carry my application's load, with the latency the application needs?*
//!
//! The data flow (docs/architecture.md has the module map and the rules):
//!
//! ```text
//! argv / job.toml ─cli─▶ JobSpec ─job::resolve─▶ Job ─run::execute─▶ engine workers ──▶ per-worker StatsSet
//!                                   each worker: RequestSource ─next()─▶ ring ─completed()─▶ source
//!                                   every interval: merged ─▶ results::progress::Observer + NDJSON
//!                                   end: merge ─▶ stats::summary ─▶ results::RunResult
//! Job with a sequence ─workloads::plain::steps─▶ one run per step, repetition, round or level ─▶ RunResult.steps
//! [exchange] ─workloads::exchange::jobs─▶ Jobs + verdict rules ─workloads::exchange::validation─▶ trials, search ─▶ RunResult.{exchange, verdict}
//! results file ─input (capped) ─results::file::load (validated)─▶ report::{console, html, csv, compare} (any report from the file; each room's part by its workloads::*::view)
//! run with sample_blocks ─engine::sample─▶ RUN.blocks ─cache::curve─▶ report::curve (cache-curve)
//! target with a cache ─run::workers─▶ cache::tier (a source around the worker's source) ─▶ RunResult.cache_tiers
//! block trace (MSR CSV, blkparse) ─trace::formats─▶ Trace ─trace::import─▶ RUN.json + RUN.blocks ─▶ cache-curve
//! mpirun ─▶ a storlab per rank ─cluster::share_job─▶ a Job per rank ─run::cluster─▶ NAME.rankR.json ─▶ cluster::merge ─▶ RunResult.hosts
//! --serve ─▶ live::Server (its own thread) ◀─ live::Feed, an Observer ─▶ page, /live.json, /metrics
//! other tools' job files (fio, Iometer, DiskSpd, vdbench) ─import─▶ storlab job TOML ─▶ the path of any job file
//! ```
//!
//! Dependencies point one way: units → input → job, stats → files → engine → results (with the
//! workloads' sections) → cache, cluster, trace → run, report, live → workloads (with their
//! views, which the report calls through `report::view::View`) → cli; `import`
//! (other tools' job files) uses `job` and only `cli` uses it. `cluster` is the seam of runs over many hosts (its
//! collectives, the shared job, the exact merge of every rank's results).

mod bell;
mod cache;
pub mod cli;
mod cluster;
mod engine;
mod fault;
mod files;
#[doc(hidden)]
pub mod fuzzing;
mod import;
mod input;
mod job;
mod live;
mod report;
pub mod results;
mod run;
mod stats;
mod trace;
pub mod units;
mod workloads;

/// What the benchmarks and the integration tests reach below the command line and the results
/// file: the worker loop and its parts (`benches/per_io.rs`, `benches/seal.rs`), the target
/// guard (`tests/integration/guard.rs`), the job model and the statistics whose errors and
/// figures the tests check. Not an interface: hidden from the documentation, and narrowed to
/// these names so that the rest of the crate stays `pub(crate)` (the `unreachable_pub` lint
/// holds it there).
#[doc(hidden)]
pub mod testing {
    pub use crate::engine::access::{AccessGen, TargetGeometry};
    pub use crate::engine::buf::{Slot, SlotArena};
    pub use crate::engine::null::NullBackend;
    pub use crate::engine::source::{ClosedLoop, RequestSource};
    pub use crate::engine::target::{self, TargetAction, TargetError, TargetRequest};
    pub use crate::engine::verify::{MapTarget, VerifyMap};
    pub use crate::engine::worker::{self, WorkerPlan};
    pub use crate::engine::{Backend, IoOp};
    pub use crate::job::{Access, Distribution, IoLimit, Job, JobError, Worker};
    pub use crate::stats::summary::DirSummary;
    pub use crate::stats::timeseries::IntervalGrid;
    pub use crate::stats::verification::VerifyCounts;
    pub use crate::stats::{Dir, Histogram, StatsSet};
}

/// A usage or validation error: the user asked for something that cannot be done as asked
/// (exit code 2). The message says what and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// Exit codes: the one table (the README and the man page repeat it, a test holds them to it).
///
/// | code | meaning |
/// |---|---|
/// | 0 | it ran and passed (or had nothing to judge) |
/// | 1 | a runtime error, or the run was interrupted (its results are written, marked) |
/// | 2 | a usage error or refused input, including every failure before the first I/O (a target that cannot be created, opened or prepared, too little space, a read-only filesystem): no results file is written |
/// | 3 | a verdict failed: a rule of the validation, an I/O error or a verification error, or a comparison's regression |
/// | 4 | inconclusive: every rule that failed missed by less than the host's own delays to the I/O threads (storlab's, and the kernel's on the I/O path) could account for (the host, not the storage, may have been the limit; docs/methodology.md) |
pub mod exit {
    use crate::results::RunResult;

    /// It ran and passed.
    pub const OK: i32 = 0;
    /// A runtime error, or interrupted.
    pub const RUNTIME: i32 = 1;
    /// A usage error or refused input (nothing ran).
    pub const USAGE: i32 = 2;
    /// A verdict failed.
    pub const FAIL: i32 = 3;
    /// A verdict is inconclusive: the run shows neither that the storage carries the load nor
    /// that it does not. The host, not the storage, may have been the limit (INCONCLUSIVE), or
    /// no rule failed but some had too few samples to judge (NOT MEASURED): in both, running it
    /// again differently (a quieter host, a longer run) can give a verdict, which exit code 3
    /// (the storage failed) and 0 (it passed) would both deny.
    pub const INCONCLUSIVE: i32 = 4;

    /// The code of an error: 2 for usage errors, refused input and failures before the first
    /// I/O, 1 otherwise.
    pub fn of_error(e: &anyhow::Error) -> i32 {
        if e.chain().any(|c| {
            c.is::<crate::Usage>()
                || c.is::<crate::job::JobError>()
                || c.is::<crate::input::Refused>()
        }) {
            USAGE
        } else {
            RUNTIME
        }
    }

    /// The code of a finished run: 3 when an I/O failed or verification found an error (even
    /// if the run stopped early), 1 when interrupted or failed, 4 when its verdict is
    /// INCONCLUSIVE or NOT MEASURED, 3 when it is FAIL, 0 otherwise.
    pub fn of_result(r: &RunResult) -> i32 {
        let rules = r.verdict.iter().flat_map(|v| &v.rules);
        if rules
            .into_iter()
            .any(|rule| rule.is_integrity() && !rule.pass)
        {
            FAIL
        } else if r.interrupted.stopped_early() {
            RUNTIME
        } else if (r.verdict.as_ref()).is_some_and(|v| v.inconclusive() || v.not_measured()) {
            INCONCLUSIVE
        } else if r.verdict.as_ref().is_some_and(|v| !v.passed()) {
            FAIL
        } else {
            OK
        }
    }
}
