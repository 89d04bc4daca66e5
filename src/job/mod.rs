//! Jobs: what to run. A [`spec::JobSpec`] (as written, in a TOML file or from flags) is validated
//! without syscalls by [`resolve`] into a [`Job`]: sizes in bytes, times in milliseconds, every
//! reference checked, classes numbered. Errors name the file, line and key.

pub(crate) mod cache;
pub(crate) mod data;
pub(crate) mod file;
mod limits;
mod pace;
pub(crate) mod priority;
mod resolve;
pub(crate) mod spec;
pub(crate) mod steps;
mod stream;
pub(crate) mod trace;
pub(crate) mod uring;

pub(crate) use resolve::resolve;

pub(crate) use limits::{MAX_TARGETS, MAX_WORKERS};

use crate::units;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// A validation error in a job, with where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct JobError {
    /// `job.toml:12` or `command line`.
    pub location: String,
    /// The key, e.g. `worker[0].access[1].block_size`, empty for the whole file.
    pub key: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.location, self.message)
        } else {
            write!(f, "{}: `{}`: {}", self.location, self.key, self.message)
        }
    }
}

impl std::error::Error for JobError {}

/// Errors about the keys of one section of a job (`[exchange]`, `[users]`): all at one
/// location, keyed `SECTION.KEY`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SectionErrors<'a> {
    /// Where the section is (`job.toml:12`, `command line`).
    pub location: &'a str,
    /// The section's name.
    pub section: &'static str,
}

impl SectionErrors<'_> {
    /// An error about the section's `key`.
    pub(crate) fn error(&self, key: &str, message: String) -> JobError {
        JobError {
            location: self.location.into(),
            key: format!("{}.{key}", self.section),
            message,
        }
    }
}

/// Which engine does the I/O.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// io_uring with registered buffers and files.
    #[default]
    IoUring,
    /// Blocking pread/pwrite, one I/O at a time per worker.
    Psync,
    /// No I/O: completes at once; measures storlab's own cost.
    Null,
}

impl EngineKind {
    /// Parses `io_uring`, `psync` or `null`.
    pub(crate) fn parse(s: &str) -> Result<Self, String> {
        match s {
            "io_uring" | "io-uring" | "uring" => Ok(Self::IoUring),
            "psync" => Ok(Self::Psync),
            "null" => Ok(Self::Null),
            other => Err(format!(
                "unknown engine `{other}`; use io_uring, psync or null"
            )),
        }
    }
}

/// How a worker picks the target of each I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TargetChoice {
    /// Cycle through the worker's targets.
    RoundRobin,
    /// Pick one at random for each I/O.
    Random,
}

/// Open-loop arrival process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly spaced.
    Uniform,
    /// Exponentially distributed gaps (a Poisson process).
    Poisson,
}

/// An open-loop rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rate {
    /// I/Os per second for this worker.
    pub iops: f64,
    /// Arrival process.
    pub arrivals: Arrivals,
}

/// A floor on a worker's rate (fio's `rate_iops_min`): a cycle below it ends the run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MinRate {
    /// I/Os per second (reads and writes together) each cycle must reach.
    pub iops: f64,
    /// The cycle over which the rate is averaged, ns (fio's `ratecycle`).
    pub cycle_ns: u64,
}

/// Offset distribution of random I/Os within the span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Every aligned offset equally likely.
    Uniform,
    /// Zipf over aligned blocks with exponent `theta` (block 0 hottest).
    Zipf {
        /// Exponent (> 0; 1.2 is a common skew).
        theta: f64,
    },
    /// Every aligned block once per pass, in a random order (a seeded permutation).
    Shuffle,
    /// Hot-spot bands, consecutive from the span's start.
    Zoned {
        /// The bands, in order.
        bands: Vec<Band>,
    },
}

/// One hot-spot band: `io_pct` of I/Os go to the next `span_pct` of the span.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Band {
    /// Share of I/Os, percent.
    pub io_pct: f64,
    /// Share of the span, percent.
    pub span_pct: f64,
}

impl Distribution {
    /// Parses `uniform`, `zipf:1.2` or `zoned:80/10:20/90`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "uniform" || s == "random" {
            return Ok(Self::Uniform);
        }
        if s == "shuffle" {
            return Ok(Self::Shuffle);
        }
        if let Some(theta) = s.strip_prefix("zipf:") {
            let theta: f64 = theta
                .parse()
                .map_err(|_| format!("`{s}`: zipf needs a number, e.g. zipf:1.2"))?;
            if !(theta > 0.0 && theta.is_finite()) {
                return Err(format!("`{s}`: zipf theta must be > 0"));
            }
            return Ok(Self::Zipf { theta });
        }
        if let Some(zones) = s.strip_prefix("zoned:") {
            let mut bands = Vec::new();
            for zone in zones.split(':') {
                let (io, span) = zone.split_once('/').ok_or_else(|| {
                    format!("`{s}`: each zone is IO%/SPAN%, e.g. zoned:80/10:20/90")
                })?;
                let io_pct = units::parse_percent(io).map_err(|e| format!("`{s}`: {e}"))?;
                let span_pct = units::parse_percent(span).map_err(|e| format!("`{s}`: {e}"))?;
                bands.push(Band { io_pct, span_pct });
            }
            let io: f64 = bands.iter().map(|b| b.io_pct).sum();
            let span: f64 = bands.iter().map(|b| b.span_pct).sum();
            if (io - 100.0).abs() > 1e-6 || (span - 100.0).abs() > 1e-6 {
                return Err(format!(
                    "`{s}`: zone I/O shares add up to {io}% and spans to {span}%; both must add up to 100%"
                ));
            }
            if bands.iter().any(|b| b.span_pct == 0.0 && b.io_pct > 0.0) {
                return Err(format!("`{s}`: a zone with I/O must have a span > 0%"));
            }
            return Ok(Self::Zoned { bands });
        }
        Err(format!(
            "unknown distribution `{s}`; use uniform, shuffle, zipf:THETA (e.g. zipf:1.2) or zoned:IO%/SPAN%:... (e.g. zoned:80/10:20/90)"
        ))
    }
}

/// A validated job (the default: no targets, no workers; a job read back from results that
/// did not run one, such as an imported trace's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// Free text from the job file.
    pub description: Option<String>,
    /// The engine.
    pub engine: EngineKind,
    /// Measured duration, milliseconds.
    pub duration_ms: u64,
    /// Ramp before measurement, milliseconds.
    pub ramp_ms: u64,
    /// Cool-down after measurement, milliseconds: I/O goes on, uncounted (added in 1.20).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub cooldown_ms: u64,
    /// Time-series interval, milliseconds.
    pub interval_ms: u64,
    /// Seed of every random sequence.
    pub seed: u64,
    /// Page cache (true) or O_DIRECT (false).
    pub buffered: bool,
    /// Writing over possible data is allowed.
    pub destroy_data: bool,
    /// Submission batch size (1 = each I/O as soon as it is ready).
    pub batch: u32,
    /// Data verification (headers and checksums on every block, checked on every read).
    #[serde(default)]
    pub verify: bool,
    /// What failed I/Os do.
    #[serde(default)]
    pub on_error: OnError,
    /// Record a sample of the blocks every I/O touches (SHARDS), for cache curves.
    #[serde(default)]
    pub sample_blocks: bool,
    /// Targets, referenced by index from workers.
    pub targets: Vec<Target>,
    /// Workers (one thread each; `count` already expanded).
    pub workers: Vec<Worker>,
    /// Class names, referenced by index from access entries.
    pub classes: Vec<String>,
    /// Things worth knowing that are not errors.
    pub warnings: Vec<String>,
    /// Steps, repetitions, rate curve, steady state, preconditioning.
    #[serde(default)]
    pub sequence: steps::Sequence,
    /// What the written data is like: compression and dedupe ratios asked (`[data]`).
    #[serde(default)]
    pub data: data::DataReduction,
    /// The io_uring fast paths and completion batching asked for (`[io_uring]`; added in 1.17).
    #[serde(default)]
    pub io_uring: uring::UringOptions,
}

impl Job {
    /// The id of class `name`, adding it when new.
    pub(crate) fn class(&mut self, name: &str) -> usize {
        class_id(&mut self.classes, name)
    }

    /// Whether target `index` is the cache device of another target's cache tier.
    pub(crate) fn is_cache_device(&self, index: usize) -> bool {
        self.targets
            .iter()
            .any(|t| t.cache.as_ref().is_some_and(|c| c.device == index))
    }

    /// Bytes of each of `worker`'s I/O buffers: its largest I/O, or the cache line of its
    /// cached target if larger (a fill or a write-back moves whole lines).
    pub(crate) fn slot_bytes(&self, worker: &Worker) -> u64 {
        let line = worker
            .targets
            .iter()
            .filter_map(|&t| self.targets[t].cache.as_ref())
            .map(|c| c.line_bytes)
            .max()
            .unwrap_or(0);
        worker.max_block_bytes().max(line)
    }
}

fn class_id(classes: &mut Vec<String>, name: &str) -> usize {
    match classes.iter().position(|c| c == name) {
        Some(i) => i,
        None => {
            classes.push(name.to_string());
            classes.len() - 1
        }
    }
}

/// What the run does when an I/O fails. Every failure is counted and reported either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// Keep going; stop the run once this many I/Os have failed.
    Continue {
        /// Failed I/Os after which the run stops.
        max_errors: u64,
    },
    /// Stop the run at the first failed I/O.
    Stop,
}

impl Default for OnError {
    fn default() -> Self {
        OnError::Continue {
            max_errors: defaults::MAX_ERRORS,
        }
    }
}

impl OnError {
    /// Failed I/Os after which the run stops.
    pub(crate) fn limit(self) -> u64 {
        match self {
            OnError::Continue { max_errors } => max_errors,
            OnError::Stop => 1,
        }
    }
}

/// When a worker stops before the duration ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IoLimit {
    /// After issuing this many I/Os.
    Ios(u64),
    /// After this many full passes over its (single-entry, single-target) span: every block
    /// once per pass.
    Passes(u32),
}

/// A validated target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// Name.
    pub name: String,
    /// Path.
    pub path: PathBuf,
    /// Requested size in bytes (files); `None`: the existing size.
    pub size_bytes: Option<u64>,
    /// Opened with O_DSYNC.
    pub sync: bool,
    /// Opened with O_SYNC (writes durable with the file's metadata).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub osync: bool,
    /// A file made anew before each run, preallocated and not written (a log segment, as
    /// etcd's WAL), rather than filled with data and reused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
    /// fdatasync after every N writes (0 = never).
    pub fsync_every: u32,
    /// A cache tier in front of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<cache::CacheTier>,
    /// Shared by the ranks of a run over many hosts, each on its own slice (`shared =
    /// "slice"`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_slice: bool,
}

impl Target {
    /// A target `name` on `path` of `size_bytes` (`None`: the existing size), opened plainly:
    /// without O_DSYNC or O_SYNC, not made anew, never synced, with no cache tier and not
    /// shared by ranks.
    pub fn file(name: String, path: PathBuf, size_bytes: Option<u64>) -> Target {
        Target {
            name,
            path,
            size_bytes,
            sync: false,
            osync: false,
            fresh: false,
            fsync_every: 0,
            cache: None,
            shared_slice: false,
        }
    }
}

/// A validated worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Worker {
    /// Name (unique).
    pub name: String,
    /// Indexes into [`Job::targets`].
    pub targets: Vec<usize>,
    /// How a target is chosen per I/O.
    pub target_choice: TargetChoice,
    /// With a random choice, each target's weight (in the order of `targets`; empty: equal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_weights: Vec<u32>,
    /// I/Os in flight.
    pub queue_depth: u32,
    /// CPU to pin to.
    pub cpu: Option<usize>,
    /// Open-loop rate; `None` is closed loop.
    pub rate: Option<Rate>,
    /// The access specification.
    pub access: Vec<Access>,
    /// A floor on its rate, judged each cycle once it has settled (`min_iops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rate: Option<MinRate>,
    /// Stop after this much I/O.
    pub io_limit: Option<IoLimit>,
    /// Replay this trace (the access entries then give only its class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<trace::TraceReplay>,
    /// Its group: with `[cycle] group`, each step runs one group's workers (and those without
    /// a group), as fio's `stonewall` runs jobs one group after another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
    /// Closed loop: after each I/O completes, the worker waits this long (ns) before it
    /// issues the next, one I/O at a time (fio's `thinktime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_ns: Option<u64>,
    /// What issues this worker's I/O when it is not its access entries (a workload's own
    /// request source, e.g. simulated users' tasks); its access entries then only size its
    /// buffers and say which directions it may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driven_by: Option<String>,
    /// Its first I/O waits this long after the run starts, ns (fio's `startdelay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_delay_ns: Option<u64>,
    /// The I/O priority of its I/Os (`None`: the process's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_priority: Option<priority::IoPriority>,
    /// A share of its I/Os at another priority (io_uring).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_priority_mix: Option<priority::PriorityMix>,
    /// What its having done its `io_limit` does (schema 1.22; absent: the others go on).
    #[serde(default, skip_serializing_if = "OnDone::goes_on")]
    pub on_done: OnDone,
}

/// What a worker's having done its I/Os (`io_limit`) does to the others.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum OnDone {
    /// Nothing: the others go on.
    #[default]
    Continue,
    /// Every worker stops: the step ends (fio's `exitall` with `exit_what=stonewall`).
    EndStep,
    /// Every worker stops, and the steps after this one do not run (`exit_what=all`).
    EndRun,
}

impl OnDone {
    /// Whether the others go on (the default).
    pub(crate) fn goes_on(&self) -> bool {
        *self == OnDone::Continue
    }
}

impl Worker {
    /// A closed-loop worker on `targets` (indexes into [`Job::targets`], taken in turn), not
    /// pinned, without an I/O limit.
    pub fn closed_loop(
        name: impl Into<String>,
        targets: Vec<usize>,
        queue_depth: u32,
        access: Vec<Access>,
    ) -> Worker {
        Worker {
            name: name.into(),
            targets,
            target_choice: TargetChoice::RoundRobin,
            target_weights: Vec::new(),
            queue_depth,
            cpu: None,
            rate: None,
            access,
            min_rate: None,
            io_limit: None,
            trace: None,
            group: None,
            think_ns: None,
            driven_by: None,
            start_delay_ns: None,
            io_priority: None,
            io_priority_mix: None,
            on_done: OnDone::Continue,
        }
    }
    /// Whether any entry writes (a trace replay may: it counts as writing, for the guard).
    pub(crate) fn writes(&self) -> bool {
        self.trace.is_some() || self.access.iter().any(|a| a.read_pct < 100.0)
    }
    /// Largest block size of its entries, bytes.
    pub(crate) fn max_block_bytes(&self) -> u64 {
        self.access
            .iter()
            .map(|a| a.block_size_bytes)
            .max()
            .unwrap_or(0)
    }
}

/// One validated access entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Access {
    /// Index into [`Job::classes`].
    pub class: usize,
    /// Relative weight.
    pub weight: u32,
    /// Block size, bytes (the largest, when `block_sizes` is set).
    pub block_size_bytes: u64,
    /// Variable block sizes: (bytes, weight); empty when every I/O is `block_size_bytes`.
    pub block_sizes: Vec<(u64, u32)>,
    /// Sequential I/O does not cross multiples of this many bytes from the span start (0: off).
    pub roll_every_bytes: u64,
    /// Sequential I/O: bytes skipped after each I/O (negative: back; 0: contiguous).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gap_bytes: i64,
    /// Sequential I/O: where the first I/O is, bytes from the span's start (0: at it); the
    /// stream wraps to the span's start as always (added in 1.18).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub start_bytes: u64,
    /// Reads, percent.
    pub read_pct: f64,
    /// Random I/Os, percent.
    pub random_pct: f64,
    /// Alignment of random offsets, bytes.
    pub align_bytes: u64,
    /// Offset distribution.
    pub distribution: Distribution,
    /// The distribution's positions are scattered over the span by a seeded bijection (the
    /// hot set at places the seed fixes) instead of counted from its start.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scatter: bool,
    /// Span start within each target, bytes.
    pub offset_bytes: u64,
    /// Span length, bytes (`None`: to the end).
    pub length_bytes: Option<u64>,
    /// Writes carry RWF_DSYNC.
    pub sync: bool,
    /// fdatasync after every N writes of this entry (0 = never).
    pub fsync_every: u32,
    /// Writes carry RWF_ATOMIC: each is done whole or not at all, whatever fails (schema 1.22;
    /// absent: false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub atomic: bool,
    /// Strided zones (fio's `zonemode=strided`): the I/O stays in one zone of the span until
    /// it has transferred the zone's share, then moves on (schema 1.22; absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<Zones>,
}

/// Strided zones of a span: its I/O stays in a zone of `size_bytes` from the span's start
/// until `transfer_bytes` have been transferred there (sequential I/O going round the zone
/// if that is more than the zone), then moves to the zone `skip_bytes` past this one's end,
/// back to the span's start once a zone would start with no room for a block before the
/// span's end. A last zone the span's end cuts short is used as far as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Zones {
    /// Each zone's size, bytes (fio's `zonerange`).
    pub size_bytes: u64,
    /// Bytes transferred in a zone before the next (fio's `zonesize`).
    pub transfer_bytes: u64,
    /// Bytes skipped between a zone's end and the next zone (fio's `zoneskip`).
    pub skip_bytes: u64,
}

impl Access {
    /// An entry of class `class`: I/Os of `block` bytes aligned to their size, `read_pct` %
    /// reads, `random_pct` % at uniformly random offsets over the whole target, weight 1,
    /// neither synchronous nor flushed.
    pub fn new(class: usize, block: u64, read_pct: f64, random_pct: f64) -> Access {
        Access {
            class,
            weight: 1,
            block_size_bytes: block,
            block_sizes: Vec::new(),
            roll_every_bytes: 0,
            gap_bytes: 0,
            start_bytes: 0,
            read_pct,
            random_pct,
            align_bytes: block,
            distribution: Distribution::Uniform,
            scatter: false,
            offset_bytes: 0,
            length_bytes: None,
            sync: false,
            fsync_every: 0,
            atomic: false,
            zones: None,
        }
    }
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// Defaults that apply when neither the job nor the flags set a value.
pub(crate) mod defaults {
    /// Measured duration.
    pub(crate) const DURATION_MS: u64 = 30_000;
    /// Ramp.
    pub(crate) const RAMP_MS: u64 = 0;
    /// Time-series interval.
    pub(crate) const INTERVAL_MS: u64 = 1_000;
    /// Queue depth.
    pub(crate) const QUEUE_DEPTH: u32 = 1;
    /// Block size.
    pub(crate) const BLOCK_SIZE: u64 = 4096;
    /// Seed.
    pub(crate) const SEED: u64 = 0x0570_71ab;
    /// Failed I/Os after which a run with `on_error = "continue"` stops.
    pub(crate) const MAX_ERRORS: u64 = 1000;
}
