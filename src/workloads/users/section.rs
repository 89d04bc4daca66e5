//! The part of a results file a simulated-users run adds: what population ran, per task type
//! what was planned and done with its latency, the mail store's counts, the simulator's own
//! cost, and a time series of the population (tasks, unfinished tasks, cache hits, log waits,
//! checkpoint depth) beside the engine's per-class series.

use crate::stats::databases::DatabaseFigures;
use crate::stats::downsample::Merge;
use crate::stats::histogram::LatencySummary;
use serde::{Deserialize, Serialize};

/// A simulated-users run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsersResult {
    /// What ran.
    pub setup: UsersSetup,
    /// Tasks that should have been dispatched in the run (paced: its simulated duration ÷ the
    /// dispatch interval; stress mode: those dispatched).
    pub planned: u64,
    /// Tasks dispatched.
    pub dispatched: u64,
    /// Tasks completed (failed ones included).
    pub completed: u64,
    /// Tasks with a failed I/O.
    pub failed: u64,
    /// Tasks dispatched and not completed when the run ended.
    pub unfinished: u64,
    /// The most tasks unfinished at once (at an interval's end, or when the run was found
    /// overloaded): what the overload rule judges (0 in files before schema 1.9).
    #[serde(default)]
    pub peak_unfinished: u64,
    /// Set when unfinished tasks exceeded 1.5 × users and the run stopped (LoadGen's rule).
    pub overloaded: Option<Overload>,
    /// Per task type, in LoadGen's order; types the profile never dispatched are left out.
    pub tasks: Vec<TaskResult>,
    /// The mail store's counts.
    pub store: StoreResult,
    /// What simulating cost.
    pub cost: SimulatorCost,
    /// Seconds from the start at which the population's IOPS settled (no later interval moves
    /// the running mean by more than the steady-state rule allows), if they did.
    pub steady_at_s: Option<f64>,
    /// One record per interval; a run of more intervals than
    /// [`crate::stats::downsample::SERIES_POINTS`] has consecutive ones merged
    /// ([`UsersPoint`]), into at most that many.
    pub series: Vec<UsersInterval>,
    /// Per database: its I/O figures over the run, as in the Exchange validation (empty in
    /// files before 1.3).
    #[serde(default)]
    pub databases: Vec<DatabaseFigures>,
}

/// The population and the store as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsersSetup {
    /// Users (one mailbox each).
    pub users: u64,
    /// The profile's name.
    pub profile: String,
    /// Tasks per user per simulated day.
    pub tasks_per_user_per_day: f64,
    /// Exchange version whose store is modelled.
    pub version: String,
    /// Databases.
    pub databases: u32,
    /// Database page size, bytes.
    pub page_bytes: u64,
    /// Mailbox size at initialisation, bytes.
    pub mailbox_bytes: u64,
    /// Buffer cache per mailbox, bytes.
    pub cache_per_mailbox_bytes: u64,
    /// Checkpoint depth target per database, bytes of log.
    pub checkpoint_bytes: u64,
    /// Simulated day, seconds.
    pub day_s: f64,
    /// Simulated duration, seconds.
    pub duration_s: f64,
    /// How many times faster than real time the day ran.
    pub compress: f64,
    /// Stress mode: tasks as fast as they complete, no pacing.
    pub stress: bool,
    /// Real seconds between two dispatches (0 in stress mode).
    pub dispatch_interval_s: f64,
    /// `cold` (empty cache, as LoadGen) or `preloaded`.
    pub warm_up: String,
    /// Calibration knob: log bytes per byte of message body.
    pub log_per_body_byte: f64,
    /// Calibration knob: secondary indexes per folder (0 in files before 1.3).
    #[serde(default)]
    pub secondary_indexes: u64,
    /// Calibration knob: bytes of a secondary index entry (0 in files before 1.4).
    #[serde(default)]
    pub index_entry_bytes: u64,
}

/// Why a run was overloaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Overload {
    /// Seconds from the start when it happened.
    pub at_s: f64,
    /// Unfinished tasks then.
    pub unfinished: u64,
    /// The limit (1.5 × users).
    pub limit: u64,
}

/// One task type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskResult {
    /// LoadGen's name (`Send Mail`).
    pub task: String,
    /// Dispatched.
    pub planned: u64,
    /// Completed (failed ones included).
    pub completed: u64,
    /// With a failed I/O.
    pub failed: u64,
    /// Latency from the time the task was due (queueing behind the user's earlier tasks
    /// included), ns.
    pub latency: LatencySummary,
    /// Latency from the time it started, ns.
    pub service: LatencySummary,
    /// Dispatched and not completed at the end of the run (0 in files before 1.3).
    #[serde(default)]
    pub unfinished: u64,
    /// The 95th percentile of the latency from due with the unfinished tasks counted at their
    /// age at the end (a lower bound of their latency), ns: the value the task's p95 rule
    /// judges. Equal to `latency.p95` when none is unfinished (0 in files before 1.3).
    #[serde(default)]
    pub p95_with_unfinished_ns: u64,
}

/// The mail store's counts over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreResult {
    /// Page references found in the buffer cache.
    pub cache_hits: u64,
    /// Page references that were not.
    pub cache_misses: u64,
    /// Hits per reference, percent.
    pub cache_hit_pct: f64,
    /// Pages the cache holds.
    pub cache_pages: u64,
    /// Commits.
    pub commits: u64,
    /// Durable commits (the task waited for the log).
    pub durable_commits: u64,
    /// Log record bytes appended.
    pub log_bytes: u64,
    /// Messages put in mailboxes (sent copies and deliveries).
    pub messages: u64,
    /// Log bytes per message.
    pub log_bytes_per_message: f64,
    /// Writes of dirty pages the cache evicted.
    pub eviction_writes: u64,
    /// Deepest checkpoint seen at an interval's end, bytes of log.
    pub max_checkpoint_depth_bytes: u64,
}

/// What the simulator cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulatorCost {
    /// CPU seconds of the thread that simulated the users and drove their I/O.
    pub cpu_s: f64,
    /// That, percent of one core over the run.
    pub cpu_pct_of_core: f64,
    /// CPU per completed task, µs (the engine's share included).
    pub cpu_per_task_us: f64,
    /// Bytes of state per user (mailbox record and queue).
    pub bytes_per_user: u64,
}

/// One interval of the population's time series, or consecutive ones merged ([`UsersPoint`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsersInterval {
    /// End of the interval, seconds from the start.
    pub t_s: f64,
    /// Tasks completed per second.
    pub tasks_per_s: f64,
    /// Unfinished tasks (queued and running) at its end.
    pub unfinished: u64,
    /// Cache hits per reference in the interval, percent (0 with no reference).
    pub cache_hit_pct: f64,
    /// Durable commits waiting for a log write at its end.
    pub log_waits: u64,
    /// Deepest checkpoint at its end, bytes of log.
    pub checkpoint_depth_bytes: u64,
    /// Store I/Os per second: database reads, database writes, log writes.
    pub db_reads_per_s: f64,
    /// Database writes per second.
    pub db_writes_per_s: f64,
    /// Log writes per second.
    pub log_writes_per_s: f64,
    /// The simulating thread's CPU, percent of one core.
    pub cpu_pct: f64,
    /// Send Mail p95 so far, ns (0 before the first).
    pub send_mail_p95_ns: u64,
}

/// An interval of the population's series as it is kept while the run goes: with what weighs
/// it when consecutive intervals merge (at most [`crate::stats::downsample::SERIES_POINTS`]
/// points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct UsersPoint {
    /// The interval, or the intervals merged into it.
    pub interval: UsersInterval,
    /// Its length, seconds.
    pub secs: f64,
    /// The cache references its hit share is of.
    pub refs: u64,
}

impl Merge for UsersPoint {
    fn continues(&self, next: &UsersPoint) -> bool {
        next.interval.t_s > self.interval.t_s
    }

    /// Rates and CPU over their time, the hit share over their references, the unfinished
    /// tasks, log waits and checkpoint depth the most at an interval's end, the end and the
    /// Send Mail p95 so far the later one's.
    fn absorb(&mut self, next: &UsersPoint) {
        let (ta, tb) = (self.secs, next.secs);
        let by_time = |a: f64, b: f64| (a * ta + b * tb) / (ta + tb).max(f64::MIN_POSITIVE);
        let (ra, rb) = (self.refs, next.refs);
        let (a, b) = (&mut self.interval, &next.interval);
        a.t_s = b.t_s;
        a.tasks_per_s = by_time(a.tasks_per_s, b.tasks_per_s);
        a.unfinished = a.unfinished.max(b.unfinished);
        a.cache_hit_pct = if ra + rb > 0 {
            (a.cache_hit_pct * ra as f64 + b.cache_hit_pct * rb as f64) / (ra + rb) as f64
        } else {
            0.0
        };
        a.log_waits = a.log_waits.max(b.log_waits);
        a.checkpoint_depth_bytes = a.checkpoint_depth_bytes.max(b.checkpoint_depth_bytes);
        a.db_reads_per_s = by_time(a.db_reads_per_s, b.db_reads_per_s);
        a.db_writes_per_s = by_time(a.db_writes_per_s, b.db_writes_per_s);
        a.log_writes_per_s = by_time(a.log_writes_per_s, b.log_writes_per_s);
        a.cpu_pct = by_time(a.cpu_pct, b.cpu_pct);
        a.send_mail_p95_ns = b.send_mail_p95_ns;
        self.secs = ta + tb;
        self.refs = ra + rb;
    }
}
