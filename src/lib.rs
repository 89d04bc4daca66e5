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
//! Job with a sequence ─run::steps─▶ one run per step, repetition, round or level ─▶ RunResult.steps
//! profiles::exchange ─▶ Jobs + verdict rules ─run::exchange─▶ trials, search ─▶ RunResult.{exchange, verdict}
//! results file ─results::file::load─▶ report::{console, html, csv, compare} (any report from the file)
//! run with sample_blocks ─engine::sample─▶ RUN.blocks ─cache::curve─▶ report::curve (cache-curve)
//! target with a cache ─run::workers─▶ cache::tier (a source around the worker's source) ─▶ RunResult.cache_tiers
//! block trace (MSR CSV, blkparse) ─trace::formats─▶ Trace ─trace::import─▶ RUN.json + RUN.blocks ─▶ cache-curve
//! mpirun ─▶ a storlab per rank ─cluster::share_job─▶ a Job per rank ─run::cluster─▶ NAME.rankR.json ─▶ cluster::merge ─▶ RunResult.hosts
//! --serve ─▶ live::Server (its own thread) ◀─ live::Feed, an Observer ─▶ page, /live.json, /metrics
//! fio job file ─job::fio─▶ storlab job TOML ─▶ the path of any job file
//! ```
//!
//! Dependencies point one way: units → job, stats → engine → results → cache, cluster, profiles,
//! trace → users → run → report, live → cli. `cluster` is the seam of runs over many hosts (its
//! collectives, the shared job, the exact merge of every rank's results).

pub mod cache;
pub mod cli;
pub mod cluster;
pub mod engine;
pub mod job;
pub mod live;
mod report;
pub mod results;
mod run;
pub mod stats;
pub mod trace;
pub mod units;
pub mod workloads;

/// A usage or validation error: the user asked for something that cannot be done as asked
/// (exit code 2). The message says what and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// Exit codes.
pub mod exit {
    /// Success.
    pub const OK: i32 = 0;
    /// Runtime error.
    pub const RUNTIME: i32 = 1;
    /// Usage or validation error.
    pub const USAGE: i32 = 2;
    /// Verdict FAIL.
    pub const FAIL: i32 = 3;
}
