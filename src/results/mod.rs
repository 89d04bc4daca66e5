//! The results contract: [`RunResult`] and everything in a results file, which every output
//! (console, HTML, CSV, comparison) is rendered from, so `storlab report run.json` rebuilds any
//! report. It depends on `job`, `stats` and `units` only.
//!
//! - this module: the top level of a results file and its per-class, per-worker, per-target
//!   and per-device parts;
//! - `steps`: the parts of step sequences (a workload's own section is in its room:
//!   `crate::workloads::exchange::section`, `crate::workloads::users::section`);
//! - [`description`]: what ran, as the dry run, the summaries and the HTML header say it;
//! - `verdict`: threshold rules judged against measured values (PASS/FAIL);
//! - [`mod@file`]: loading (with the schema-version check) and the atomic write;
//! - `timeseries`: the NDJSON time series beside every results file, read back;
//! - `recovery`: results rebuilt from the time series of a run that did not finish;
//! - `validate`: what load refuses (numbers beyond any figure, indexes out of range);
//! - `progress`: what a run tells whoever shows progress while its results are produced.
//!
//! Units are in field names; every type rejects unknown fields, so a file is never
//! half-read. The versioning policy is in docs/results-format.md.

pub(crate) mod blocks;
pub(crate) mod cost;
pub(crate) mod data;
pub mod description;
pub mod file;
pub(crate) mod hosts;
pub(crate) mod pagecache;
pub(crate) mod progress;
pub(crate) mod recovery;
pub mod schema;
pub(crate) mod steps;
pub(crate) mod timeseries;
pub(crate) mod uring;
pub(crate) mod validate;
pub(crate) mod verdict;

use crate::job::Job;
use crate::stats::errors::ErrorDetail;
use crate::stats::host::{CpuPercent, DiskDelta, HostInfo};
use crate::stats::summary::ClassSummary;
use crate::stats::target::{PrepareReport, TargetKind};
use crate::stats::verification::VerifyCounts;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// The `interrupted` reason of a results file written before the workers start and replaced
/// when the run ends: seen only when storlab was killed or the machine stopped.
pub const UNFINISHED: &str = "the run did not finish: storlab stopped without writing its results (killed, or the machine stopped)";

/// How the `interrupted` reason of a results file written before the workers start reads once
/// storlab found, as the run ended, that it could not write the run's results (a full
/// filesystem): this text, then why.
pub const UNWRITTEN: &str = "the run did not finish: storlab could not write its results: ";
/// The start of the `interrupted` reason of a run a failure stopped.
const FAILED: &str = "failed: ";

/// Runs with at most this many intervals carry their time series inline in the results file
/// too (streamed into it from the NDJSON file as it is written, so memory stays flat however
/// long a run is); longer ones only name the NDJSON file.
pub const INLINE_INTERVALS: usize = 3600;

/// Whether a run was cut short: `false`, or the reason (JSON: `false` or a string).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Interrupted {
    /// It ran to the end.
    #[default]
    No,
    /// Why it stopped early (signal, fatal error).
    Yes(String),
    /// The run has not finished: the file written before the workers start, replaced when the
    /// run ends (JSON: the text [`UNFINISHED`]). Seen only when storlab was killed.
    Unfinished,
    /// That file, marked in place when the run's results could not be written as it ended:
    /// the whole reason, [`UNWRITTEN`] then why.
    Unwritten(String),
}

impl Interrupted {
    /// Whether the run stopped before its end (or has not finished).
    pub(crate) fn stopped_early(&self) -> bool {
        !matches!(self, Interrupted::No)
    }

    /// Why it stopped early.
    pub(crate) fn reason(&self) -> Option<&str> {
        match self {
            Interrupted::No => None,
            Interrupted::Yes(why) | Interrupted::Unwritten(why) => Some(why),
            Interrupted::Unfinished => Some(UNFINISHED),
        }
    }

    /// Why a failure (not a signal or a limit) stopped the run: `failed: ` then the reason.
    pub(crate) fn failure(why: &str) -> Interrupted {
        Interrupted::Yes(format!("{FAILED}{why}"))
    }

    /// Whether a failure stopped the run ([`Interrupted::failure`]).
    pub(crate) fn failed(&self) -> bool {
        matches!(self, Interrupted::Yes(why) if why.starts_with(FAILED))
    }

    /// The mark of a file written before the workers started whose run's results could not be
    /// written, `why` ("cannot write the results file r.json: no space left on device").
    pub(crate) fn unwritten(why: &str) -> Interrupted {
        Interrupted::Unwritten(format!("{UNWRITTEN}{why}"))
    }

    /// Whether this is a file written before the workers started, never replaced by the run's
    /// results: its measurements are in the time series beside it.
    pub(crate) fn unfinished(&self) -> bool {
        matches!(self, Interrupted::Unfinished | Interrupted::Unwritten(_))
    }
}

impl Serialize for Interrupted {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.reason() {
            None => s.serialize_bool(false),
            Some(why) => s.serialize_str(why),
        }
    }
}

impl schemars::JsonSchema for Interrupted {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Interrupted".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`false`, or why the run stopped early",
            "anyOf": [{ "type": "boolean", "const": false }, { "type": "string" }]
        })
    }
}

impl<'de> Deserialize<'de> for Interrupted {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Reason(String),
        }
        Ok(match Raw::deserialize(d)? {
            Raw::Flag(false) => Interrupted::No,
            Raw::Flag(true) => Interrupted::Yes("interrupted".into()),
            Raw::Reason(r) if r == UNFINISHED => Interrupted::Unfinished,
            Raw::Reason(r) if r.starts_with(UNWRITTEN) => Interrupted::Unwritten(r),
            Raw::Reason(r) => Interrupted::Yes(r),
        })
    }
}

/// One run's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunResult {
    /// Schema version, `MAJOR.MINOR` ([`schema::SCHEMA_VERSION`]).
    pub schema_version: schema::SchemaVersion,
    /// storlab version that wrote the file.
    pub storlab_version: String,
    /// The command line that started the run.
    pub command: Vec<String>,
    /// What ran: where the job came from and the flags that changed it, recorded when the run
    /// started.
    #[serde(default)]
    pub invocation: Invocation,
    /// What ran, as its dry run described it and every report shows it (absent from files
    /// of storlab before 0.1 schema 1.x and from results rebuilt from a time series).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<description::Description>,
    /// The resolved job (for a workload of several runs, the last one that ran).
    pub job: Job,
    /// The machine.
    pub host: HostInfo,
    /// Start of the run (prepare included), RFC 3339 UTC.
    pub started_at: String,
    /// End of the run, RFC 3339 UTC.
    pub ended_at: String,
    /// `false`, or why the run stopped early.
    pub interrupted: Interrupted,
    /// State of each phase, in order.
    pub phases: Vec<PhaseRecord>,
    /// The engine that did the I/O.
    pub engine: EngineInfo,
    /// Things a reader must know to trust the numbers (tmpfs, buffered I/O, small data set...).
    pub warnings: Vec<String>,
    /// Measured time, ms (the rates below are over this).
    pub measured_ms: u64,
    /// Every target.
    pub targets: Vec<TargetResult>,
    /// Every class together.
    pub totals: ClassSummary,
    /// Per class name.
    pub classes: BTreeMap<String, ClassResult>,
    /// Per worker.
    pub workers: Vec<WorkerResult>,
    /// Block devices under the targets: their own counters over the measured phase.
    pub devices: Vec<DeviceResult>,
    /// CPU use over the measured phase.
    pub host_cpu: CpuPercent,
    /// Each CPU's use and the interrupt rate over the measured phase (a sequence: weighted
    /// over its steps; added in 1.18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpus: Option<crate::stats::host::cpus::PerCpu>,
    /// The first I/O errors, across workers.
    pub errors: Vec<ErrorDetail>,
    /// Path of the NDJSON time-series file (one interval record per line).
    pub timeseries_path: Option<String>,
    /// The time series, one record per interval (ramp intervals included, marked): inlined
    /// for runs of at most [`INLINE_INTERVALS`] intervals, else read from the NDJSON file as
    /// views need it.
    pub timeseries: timeseries::Series,
    /// What storlab itself cost per phase: CPU, system calls, context switches and run-queue
    /// wait of its I/O threads, in all and per I/O (schema 1.18; absent from older files and
    /// from results made without a run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<cost::CostResult>,
    /// Reduced data (`[data]`): the compression and dedupe ratios asked and achieved (the
    /// last run's, in a sequence; each step has its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<data::DataResult>,
    /// Data verification (runs with `verify`): blocks checked and every kind of error found,
    /// during the run and in the final read-back pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyCounts>,
    /// The verdict: for runs that judge (Exchange), and for any run with data verification or
    /// failed I/Os.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<verdict::Verdict>,
    /// The Exchange model's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<crate::workloads::exchange::section::ExchangeResult>,
    /// After `--find-max-mailboxes`: the largest mailbox count that passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_mailboxes: Option<u64>,
    /// After `--find-max-mailboxes`: every trial of the search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<Vec<crate::workloads::exchange::section::Trial>>,
    /// Step sequences: one object per step, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<steps::StepResult>>,
    /// Preconditioning, when the job asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<steps::PreconditionResult>,
    /// Simulated users: the population, its tasks and the mail store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<crate::workloads::users::section::UsersResult>,
    /// A database validation: the profile, per-file figures, group commit, checkpoints and
    /// the capacity search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<crate::workloads::database::section::DatabaseResult>,
    /// A calibration (`storlab calibrate`): its points, matrices and best figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrate: Option<crate::workloads::calibrate::section::CalibrateResult>,
    /// An etcd disk check: the fdatasync time's distribution, the rate, the limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd: Option<crate::workloads::etcd::section::EtcdResult>,
    /// PostgreSQL's WAL sync methods: each method's operations per second and latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_sync: Option<crate::workloads::walsync::section::WalSyncResult>,
    /// A file-system workload: the tree, every run's figures per operation and per workload,
    /// the failures, mdtest's phases (schema 1.19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<crate::workloads::fs::section::FsResult>,
    /// The block sample (`sample_blocks`): where it is and what it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_sample: Option<blocks::BlockSample>,
    /// What each cache tier did (targets with `cache`), in the order of their workers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_tiers: Vec<crate::stats::tier::TierResult>,
    /// Buffered runs: what the kernel's page cache served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<pagecache::PageCache>,
    /// The run's locality, from its block sample (every run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reuse: Option<crate::stats::reuse::Reuse>,
    /// A run over many hosts: one entry per rank (the figures above are every rank's, merged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<hosts::HostResult>,
}

impl RunResult {
    /// Gives the run `verdict`, unless Ctrl-C or SIGTERM stopped it early (`signalled`): a run
    /// that did not go to its end is not judged, and the warning `unjudged` says so.
    pub(crate) fn judge_unless_stopped(
        &mut self,
        signalled: bool,
        verdict: verdict::Verdict,
        unjudged: &str,
    ) {
        if signalled && self.interrupted.stopped_early() {
            self.warnings.push(unjudged.into());
            self.verdict = None;
        } else {
            self.verdict = Some(verdict);
        }
    }
}

/// What ran, as recorded when the run started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Invocation {
    /// Where the job came from.
    pub source: JobSource,
    /// The flags given that changed the job (`--duration`, `--qd`...), in the order they were
    /// applied; their values are in `command`.
    pub flags: Vec<String>,
}

/// The tool a converted job came from, as people write its name, for the `format` of a
/// [`JobSource::Imported`] (`iometer` → `Iometer`); any other value as it is.
pub(crate) fn imported_tool(format: &str) -> &str {
    match format {
        "fio" => "fio",
        "iometer" => "Iometer",
        "diskspd" => "DiskSpd",
        "vdbench" => "vdbench",
        other => other,
    }
}

/// Where the job of a run came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum JobSource {
    /// `storlab run` with no job file and no target: storlab's default job.
    Default {
        /// The job file it is a copy of, e.g. `examples/quickstart.toml`.
        file: String,
    },
    /// A job file.
    File {
        /// Its path, as given.
        path: String,
    },
    /// Another tool's job file (or DiskSpd command line), converted (`storlab run FILE`,
    /// `--diskspd`; `--fio` files are recorded as `file`).
    Imported {
        /// The tool: `fio`, `iometer`, `diskspd` or `vdbench`.
        #[serde(default)]
        format: String,
        /// The file's path as given, or the command line.
        #[serde(default)]
        from: String,
    },
    /// A built-in preset.
    Preset {
        /// Its name.
        name: String,
    },
    /// A one-line job from `--target` and the other flags.
    Flags,
    /// An Exchange validation: from `storlab exchange`'s flags, or a job file's `[exchange]`
    /// section.
    Exchange {
        /// The job file, when there was one.
        path: Option<String>,
    },
    /// Simulated users: from `storlab users`'s flags, or a job file's `[users]` section.
    Users {
        /// The job file, when there was one.
        path: Option<String>,
    },
    /// A database validation: from `storlab database`'s flags, or a job file's `[database]`
    /// section.
    Database {
        /// The job file, when there was one.
        path: Option<String>,
    },
    /// A calibration: from `storlab calibrate`'s flags, or a job file's `[calibrate]`
    /// section.
    Calibrate {
        /// The job file, when there was one.
        path: Option<String>,
    },
    /// An etcd disk check: from `storlab etcd`'s flags, or a job file's `[etcd]` section.
    Etcd {
        /// The job file, when there was one.
        path: Option<String>,
    },
    /// PostgreSQL's WAL sync methods compared: from `storlab wal-sync`'s flags, or a job
    /// file's `[wal_sync]` section.
    WalSync {
        /// The job file, when there was one.
        path: Option<String>,
    },
    /// A file-system workload: from `storlab fs`'s flags, or a job file's `[fs]` section.
    Fs {
        /// The job file, when there was one.
        path: Option<String>,
    },
    /// Not recorded: a file from an older storlab, or results rebuilt from a time series.
    #[default]
    Unknown,
}

impl JobSource {
    /// Where a room's run came from: the preset `preset` when one was named, else `room` of
    /// the job file `path` when there was one (`|path| JobSource::Etcd { path }`).
    pub(crate) fn of(
        path: Option<&std::path::Path>,
        preset: Option<&str>,
        room: fn(Option<String>) -> JobSource,
    ) -> JobSource {
        match preset {
            Some(name) => JobSource::Preset { name: name.into() },
            None => room(path.map(|p| p.display().to_string())),
        }
    }
}

/// A phase of the run and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseRecord {
    /// Which phase (JSON: `prepare`, `ramp`, `measure`, `cooldown`, `read-back`, `step 2 rep 1`...).
    pub name: Phase,
    /// How it ended.
    pub state: PhaseState,
    /// Wall time spent in it, seconds.
    pub seconds: f64,
    /// CPU time storlab's process used in it (every thread, user and kernel), seconds
    /// (schema 1.18; absent where not measured: older files, sequences' own records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
}

impl PhaseRecord {
    /// A phase that never started.
    pub(crate) fn not_started(name: Phase) -> PhaseRecord {
        PhaseRecord {
            name,
            state: PhaseState::NotStarted,
            seconds: 0.0,
            cpu_s: None,
        }
    }
}

/// A phase of a run, of a step sequence or of an Exchange validation. In JSON it is the text
/// its `Display` writes (`prepare`, `step 0 rep 3`), parsed back by its `FromStr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Opening and preparing the targets.
    Prepare,
    /// I/O that is not counted, before the measurement.
    Ramp,
    /// The measured I/O.
    Measure,
    /// I/O that is not counted, after the measurement (`cooldown`).
    Cooldown,
    /// Data verification's final pass over every block written.
    ReadBack,
    /// A sequence's preconditioning.
    Precondition,
    /// Exchange: building the databases and logs (the first run's preparation).
    Initialise,
    /// Exchange: finding the closed-loop maximum (`--throughput`).
    Throughput,
    /// Exchange: `--threads auto`.
    Threads,
    /// Exchange: `--find-max-mailboxes`, bracketing and bisection.
    Search,
    /// One run of a step sequence.
    Step {
        /// The step's index.
        index: usize,
        /// Which run of the step.
        run: StepRun,
    },
}

/// Which run of a step a phase is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepRun {
    /// The step's only run (`step 2`).
    Only,
    /// Repetition N, from 1 (`step 2 rep 3`).
    Rep(u32),
    /// Steady-state round N, from 1 (`step 2 round 4`).
    Round(u32),
}

impl Phase {
    /// Run `run` of step `index`.
    pub(crate) fn step(index: usize, run: StepRun) -> Phase {
        Phase::Step { index, run }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = match self {
            Phase::Prepare => "prepare",
            Phase::Ramp => "ramp",
            Phase::Measure => "measure",
            Phase::Cooldown => "cooldown",
            Phase::ReadBack => "read-back",
            Phase::Precondition => "precondition",
            Phase::Initialise => "initialise",
            Phase::Throughput => "throughput",
            Phase::Threads => "threads",
            Phase::Search => "search",
            Phase::Step { index, run } => {
                return match run {
                    StepRun::Only => write!(f, "step {index}"),
                    StepRun::Rep(n) => write!(f, "step {index} rep {n}"),
                    StepRun::Round(n) => write!(f, "step {index} round {n}"),
                };
            }
        };
        f.write_str(word)
    }
}

impl std::str::FromStr for Phase {
    type Err = String;
    fn from_str(s: &str) -> Result<Phase, String> {
        let simple = [
            Phase::Prepare,
            Phase::Ramp,
            Phase::Measure,
            Phase::Cooldown,
            Phase::ReadBack,
            Phase::Precondition,
            Phase::Initialise,
            Phase::Throughput,
            Phase::Threads,
            Phase::Search,
        ];
        if let Some(p) = simple.into_iter().find(|p| p.to_string() == s) {
            return Ok(p);
        }
        let bad = || format!("`{s}` is not a phase");
        let words: Vec<&str> = s.split(' ').collect();
        let number = |w: &str| w.parse::<u32>().map_err(|_| bad());
        match words.as_slice() {
            ["step", i] => Ok(Phase::step(number(i)? as usize, StepRun::Only)),
            ["step", i, "rep", n] => Ok(Phase::step(number(i)? as usize, StepRun::Rep(number(n)?))),
            ["step", i, "round", n] => {
                Ok(Phase::step(number(i)? as usize, StepRun::Round(number(n)?)))
            }
            _ => Err(bad()),
        }
    }
}

impl Serialize for Phase {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl schemars::JsonSchema for Phase {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Phase".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`prepare`, `ramp`, `measure`, `read-back`, `precondition`, `initialise`, `throughput`, `threads`, `search`, or `step N` with ` rep K` or ` round K`",
            "type": "string"
        })
    }
}

impl<'de> Deserialize<'de> for Phase {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// How a phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhaseState {
    /// It ran to its end.
    Completed,
    /// It was cut short.
    Interrupted,
    /// It never started (the run stopped before it).
    NotStarted,
}

impl std::fmt::Display for PhaseState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PhaseState::Completed => "completed",
            PhaseState::Interrupted => "interrupted",
            PhaseState::NotStarted => "not_started",
        })
    }
}

impl PhaseState {
    /// `Completed` when `done`, else `Interrupted`.
    pub(crate) fn of(done: bool) -> PhaseState {
        if done {
            PhaseState::Completed
        } else {
            PhaseState::Interrupted
        }
    }
}

/// Which engine ran and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EngineInfo {
    /// `io_uring`, `psync` or `null`.
    pub name: String,
    /// Why the requested engine was replaced, when it was.
    pub fallback_reason: Option<String>,
    /// Notes (registration fallbacks...).
    pub notes: Vec<String>,
    /// io_uring: the paths the rings used and why any was not (added in 1.17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_uring: Option<uring::UringPaths>,
}

/// One target as it was used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetResult {
    /// Name from the job.
    pub name: String,
    /// Path.
    pub path: String,
    /// File or block device.
    pub kind: TargetKind,
    /// Size used, bytes.
    pub size_bytes: u64,
    /// Logical block size (O_DIRECT granularity), bytes.
    pub logical_block_size_bytes: u32,
    /// Opened with O_DIRECT.
    pub direct: bool,
    /// Opened with O_DSYNC.
    pub dsync: bool,
    /// Filesystem type, or `block device`.
    pub filesystem: String,
    /// Mount point of that filesystem.
    pub mount_point: Option<String>,
    /// Its mount options.
    pub mount_options: String,
    /// Kernel name of the block device underneath.
    pub device: Option<String>,
    /// Model of that device.
    pub device_model: Option<String>,
    /// How the target was prepared.
    pub prepare: PrepareReport,
    /// Measured reads, writes and flushes on this target.
    pub ops: DirCounts,
    /// Measured bytes read and written.
    pub bytes: DirCounts,
    /// Errors.
    pub errors: DirCounts,
}

/// A count per direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirCounts {
    /// Reads.
    pub read: u64,
    /// Writes.
    pub write: u64,
    /// Flushes.
    pub flush: u64,
}

impl DirCounts {
    /// Adds `other`'s counts.
    pub(crate) fn add(&mut self, other: &DirCounts) {
        self.read += other.read;
        self.write += other.write;
        self.flush += other.flush;
    }
}

/// One class's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassResult {
    /// Reads.
    pub read: crate::stats::summary::DirSummary,
    /// Writes.
    pub write: crate::stats::summary::DirSummary,
    /// Flushes.
    pub flush: crate::stats::summary::DirSummary,
    /// How this class's writes were made durable: `none`, `o_dsync` (target opened with
    /// O_DSYNC), `o_sync` (opened with O_SYNC), `rwf_dsync` (per write), `fsync_every_N`, or
    /// several joined by `+`.
    pub write_durability: String,
    /// A sequence's class: the measured time of the steps it ran in, ms, over which its rates
    /// are (absent: the run's `measured_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_ms: Option<u64>,
    /// A sequence's class: the indexes of the steps it ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<usize>>,
}

impl ClassResult {
    /// The figures without the durability note.
    pub(crate) fn summary(&self) -> ClassSummary {
        ClassSummary {
            read: self.read.clone(),
            write: self.write.clone(),
            flush: self.flush.clone(),
        }
    }
}

/// One worker's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerResult {
    /// Name.
    pub name: String,
    /// Every class of the worker together.
    pub totals: ClassSummary,
    /// Per class name (classes the worker did not use are left out).
    pub classes: BTreeMap<String, ClassSummary>,
    /// Open loop: I/Os whose time came but were never issued because every slot was busy.
    pub unissued: u64,
    /// A fatal problem that ended the worker early.
    pub fatal: Option<String>,
    /// It had done its I/Os and, by its `on_done`, ended the measured time for every worker
    /// (schema 1.22; absent: false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended_run: bool,
}

/// A block device's own view of the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceResult {
    /// Kernel name (`sda`, `nvme0n1`, `loop3`).
    pub name: String,
    /// Model, when known.
    pub model: Option<String>,
    /// Counter deltas over the measured phase.
    pub delta: DiskDelta,
}

/// A complete, minimal results file as JSON for unit tests of the renderers: one 16 MiB target,
/// one worker, the given classes, zero totals and no time series. Tests replace fields before
/// deserialising it.
#[cfg(test)]
pub(crate) fn sample_json(engine: &str, classes: &[&str]) -> serde_json::Value {
    use serde_json::json;
    let dir = json!({
        "ops": 0, "bytes": 0, "errors": 0, "iops": 0.0, "bytes_per_s": 0.0,
        "latency_ns": {"min": 0, "mean": 0.0, "max": 0, "stddev": 0.0, "p50": 0, "p90": 0,
                       "p95": 0, "p99": 0, "p99_9": 0, "p99_99": 0}
    });
    json!({
        "schema_version": schema::SCHEMA_VERSION, "storlab_version": "0.1.0", "command": ["storlab"],
        "job": {
            "description": null, "engine": engine, "duration_ms": 2000, "ramp_ms": 0,
            "interval_ms": 1000, "seed": 1, "buffered": false, "destroy_data": false,
            "batch": 1,
            "targets": [{"name": "t", "path": "/tmp/t", "size_bytes": 16777216,
                         "sync": false, "fsync_every": 0}],
            "workers": [{
                "name": "worker", "targets": [0], "target_choice": "round-robin",
                "queue_depth": 1, "cpu": null, "rate": null, "io_limit": null,
                "access": [{
                    "class": 0, "weight": 1, "block_size_bytes": 4096, "block_sizes": [],
                    "roll_every_bytes": 0, "read_pct": 100.0, "random_pct": 100.0,
                    "align_bytes": 4096, "distribution": "uniform", "offset_bytes": 0,
                    "length_bytes": null, "sync": false, "fsync_every": 0
                }]
            }],
            "classes": classes, "warnings": []
        },
        "host": {"hostname": "h", "kernel": "6.1", "cpu_model": "cpu", "cpus": 2,
                 "memory_bytes": 1},
        "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:02Z",
        "interrupted": false, "phases": [],
        "engine": {"name": engine, "fallback_reason": null, "notes": []},
        "warnings": [], "measured_ms": 2000, "targets": [],
        "totals": {"read": dir, "write": dir, "flush": dir}, "classes": {}, "workers": [],
        "devices": [],
        "host_cpu": {"process_user_pct": 0.0, "process_system_pct": 0.0,
                     "system_user_pct": 0.0, "system_system_pct": 0.0,
                     "system_iowait_pct": 0.0, "system_idle_pct": 100.0},
        "errors": [], "timeseries_path": null, "timeseries": []
    })
}
