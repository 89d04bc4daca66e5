//! `JobSpec`: a job as the user wrote it, in a TOML file or on the command line. Values keep
//! the user's units; nothing here touches the system. [`super::resolve`] validates it.

use crate::units::{Dur, Percent, Size};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use toml::Spanned;

/// The top level of a job file.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct JobSpec {
    /// Free text describing the job.
    pub description: Option<String>,
    /// `io_uring` (default), `psync` or `null`.
    pub engine: Option<String>,
    /// Measured duration (after the ramp), e.g. "30s".
    pub duration: Option<Dur>,
    /// Ramp-up before measurement: I/O runs but is not counted, e.g. "5s".
    pub ramp: Option<Dur>,
    /// Cool-down after measurement: I/O goes on but is not counted, so that the last measured
    /// interval runs under the same load as the others (DiskSpd's `-C`), e.g. "5s".
    pub cooldown: Option<Dur>,
    /// Time-series interval, e.g. "1s".
    pub interval: Option<Dur>,
    /// Seed for offsets and choices; the same seed gives the same sequence.
    pub seed: Option<u64>,
    /// Use the page cache instead of O_DIRECT.
    pub buffered: Option<bool>,
    /// Allow writing over devices and files that may hold data.
    pub destroy_data: Option<bool>,
    /// Submit I/Os in batches of this many (default 1: each as soon as it is ready).
    pub batch: Option<u32>,
    /// Verify data: every written block carries a header and checksum, every read checks
    /// it, and a final pass reads back every block written during the run.
    pub verify: Option<bool>,
    /// Record a sample of the blocks every I/O touches (SHARDS: about 64 Ki distinct 4 KiB
    /// blocks, every block of small targets) beside the results, for `storlab cache-curve`.
    pub sample_blocks: Option<bool>,
    /// What a failed I/O does: `continue` (default, up to `max_errors`) or `stop`.
    pub on_error: Option<String>,
    /// With `on_error = "continue"`: stop the run after this many failed I/Os (default 1000).
    pub max_errors: Option<u64>,
    /// Run each step this many times and report the spread (mean, stddev, 95% CI).
    pub repeat: Option<u32>,
    /// Pause between repetitions and steps, e.g. "5s".
    pub pause: Option<Dur>,
    /// Rate curve: percentages of the step's closed-loop maximum IOPS to run open loop.
    pub curve: Option<Vec<f64>>,
    /// End the curve early when this holds, e.g. "p99 > 20ms" or "db:mean > 5ms".
    pub stop_when: Option<String>,
    /// Repeat measurement rounds until the last rounds are steady (SNIA PTS style).
    pub until_steady: Option<bool>,
    /// Length of one steady-state round (default 60s).
    pub round: Option<Dur>,
    /// Rounds in the steady-state window (default 5).
    pub steady_rounds: Option<u32>,
    /// Every round's IOPS within ± this of the window's average (default 10%).
    pub steady_range: Option<Percent>,
    /// The linear fit's excursion over the window within ± this of the average (default 5%).
    pub steady_slope: Option<Percent>,
    /// Give up on steady state after this many rounds (default 25).
    pub max_rounds: Option<u32>,
    /// What the steady-state window judges: `iops` (default) or `latency` (each round's mean
    /// completion latency, as fio's `ss=lat`).
    pub steady_metric: Option<String>,
    /// Write every target in full before measuring.
    pub precondition: Option<PreconditionSpec>,
    /// Cycles of parameters: each combination is a step.
    #[schemars(with = "Option<CycleSpec>")]
    pub cycle: Option<Spanned<CycleSpec>>,
    /// What the written data is like: its compression and dedupe ratios.
    pub data: Option<super::data::DataSpec>,
    /// The io_uring fast paths and completion batching.
    pub io_uring: Option<super::uring::UringSpec>,
    /// Targets: files or block devices.
    #[serde(default)]
    #[schemars(with = "Vec<TargetSpec>")]
    pub target: Vec<Spanned<TargetSpec>>,
    /// Workers: threads, each with its own ring and access specification.
    #[serde(default)]
    #[schemars(with = "Vec<WorkerSpec>")]
    pub worker: Vec<Spanned<WorkerSpec>>,
}

/// One `[[target]]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TargetSpec {
    /// Name used by workers' `targets` lists (default: the path).
    pub name: Option<String>,
    /// File or block device path.
    pub path: Option<PathBuf>,
    /// Size for a file target (block devices use their own size; a limit if given).
    pub size: Option<Size>,
    /// Open with O_DSYNC: every write is durable when it completes.
    pub sync: Option<bool>,
    /// Flush (fdatasync) after every N writes to this target.
    pub fsync_every: Option<u32>,
    /// A cache tier in front of this target.
    pub cache: Option<CacheSpec>,
    /// `"slice"`: in a run over many hosts, the ranks share this target (one LUN every host
    /// sees) and each gets its own slice of every access span on it.
    pub shared: Option<String>,
}

/// `cache = { device = PATH, size = "30%", ... }` on a `[[target]]`: a cache tier in front of it.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CacheSpec {
    /// The cache device or file (zram, a loop device over tmpfs, an SSD, a file).
    pub device: Option<PathBuf>,
    /// Cache size: bytes (`"2GiB"`) or a share of the target (`"30%"`).
    pub size: Option<CacheSizeSpec>,
    /// Replacement policy: `lru`, `arc` or `s3fifo`.
    pub policy: Option<String>,
    /// Write policy: `back`, `through` or `around`.
    pub write: Option<String>,
    /// Sequential streams longer than this bypass the cache.
    pub sequential_bypass: Option<Size>,
    /// Cache line: the unit of allocation, fill and write-back.
    pub line: Option<Size>,
    /// A synthetic delay added to every hit (to mimic a slower cache device).
    pub hit_delay: Option<Dur>,
    /// Write-back starts when more than this share of the lines is dirty.
    pub dirty: Option<Percent>,
}

/// A cache size as written: a number of bytes, or text (`"2GiB"`, `"30%"`).
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum CacheSizeSpec {
    /// Bytes.
    Bytes(u64),
    /// A size or a percentage.
    Text(String),
}

impl CacheSizeSpec {
    /// A flag's value, as written (`--cache-size 30%`): read as the job file's string would be.
    pub(crate) fn text(s: &str) -> Result<CacheSizeSpec, std::convert::Infallible> {
        Ok(CacheSizeSpec::Text(s.to_string()))
    }
}

/// One `[[worker]]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkerSpec {
    /// Name (default `worker<N>`); copies made by `count` get `#i` appended.
    pub name: Option<String>,
    /// Number of identical workers (threads) to run.
    pub count: Option<u32>,
    /// Target names (or paths) this worker uses (default: all).
    pub targets: Option<Vec<String>>,
    /// With `count`: copy i uses only target i (modulo the list), as Iometer assigns one
    /// target per worker.
    pub one_target_each: Option<bool>,
    /// `round-robin` (default) or `random` choice of target per I/O.
    pub target_choice: Option<String>,
    /// Each target's weight in the random choice, one per target in the order of `targets`
    /// (or of the job's targets), as DiskSpd's `<Weight>`: a target of weight 3 beside one of
    /// weight 1 gets 3 of every 4 I/Os. Implies `target_choice = "random"`.
    pub target_weights: Option<Vec<u32>>,
    /// I/Os in flight (closed loop) or at most in flight (open loop).
    pub queue_depth: Option<u32>,
    /// Pin the worker thread(s) to these CPUs (one per copy, cycling).
    pub cpus: Option<Vec<usize>>,
    /// Open loop: issue this many I/Os per second per worker.
    pub rate_iops: Option<f64>,
    /// A floor on the worker's rate, I/Os a second (reads and writes together): once it has
    /// settled, a `rate_cycle` below it ends the run with an error (fio's `rate_iops_min`).
    pub min_iops: Option<f64>,
    /// The cycle `min_iops` is judged over, e.g. "500ms" (default 1 s; fio's `ratecycle`).
    pub rate_cycle: Option<Dur>,
    /// Open-loop arrivals: `uniform` (default) or `poisson`.
    pub arrivals: Option<String>,
    /// Stop after issuing this many I/Os (the run's duration still caps it).
    pub io_limit: Option<u64>,
    /// Its group (1 or more), for `[cycle] group`.
    pub group: Option<u32>,
    /// Closed loop: wait this long after each completion before the next I/O, one at a time.
    pub think_time: Option<crate::units::Dur>,
    /// Replay a block trace instead of (or, for its class, with) the access entries.
    pub trace: Option<TraceSpec>,
    /// Wait this long after the run starts before the first I/O, e.g. "2s" (fio's
    /// `startdelay`); the worker still stops with the others.
    pub start_delay: Option<Dur>,
    /// The I/O priority of the worker's I/Os: `"rt:N"`, `"be:N"` (N 0 to 7) or `"idle"`.
    pub io_priority: Option<String>,
    /// A share of the worker's I/Os at another priority (io_uring only), e.g.
    /// `{ share = "10%", priority = "rt:0" }` (fio's `cmdprio_percentage`).
    pub io_priority_mix: Option<PriorityMixSpec>,
    /// What its having done its `io_limit` does: `continue` (default: the others go on),
    /// `end-step` (every worker stops: the step ends, fio's `exitall` with
    /// `exit_what=stonewall`) or `end-run` (the steps after it do not run either,
    /// `exit_what=all`).
    pub on_done: Option<String>,
    /// The access specification.
    #[serde(default)]
    #[schemars(with = "Vec<AccessSpec>")]
    pub access: Vec<Spanned<AccessSpec>>,
}

/// `io_priority_mix = { share = "10%", priority = "rt:0" }` on a `[[worker]]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PriorityMixSpec {
    /// The share of the worker's I/Os.
    pub share: Option<Percent>,
    /// Their priority: `"rt:N"`, `"be:N"` or `"idle"`.
    pub priority: Option<String>,
}

/// A signed number of bytes: an integer, or text such as `"8k"` or `"-8k"`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum GapSpec {
    /// Bytes.
    Bytes(i64),
    /// A size with an optional leading `-`.
    Text(String),
}

impl GapSpec {
    /// The bytes: a multiple of 512 (O_DIRECT's alignment), at most 1 TiB either way.
    pub(crate) fn bytes(&self) -> Result<i64, String> {
        let b = match self {
            GapSpec::Bytes(b) => *b,
            GapSpec::Text(t) => {
                let t = t.trim();
                let (neg, n) = match t.strip_prefix('-') {
                    Some(n) => (true, n),
                    None => (false, t),
                };
                let n = crate::units::parse_size(n)?;
                let n = i64::try_from(n).map_err(|_| format!("`{t}` is too large"))?;
                if neg { -n } else { n }
            }
        };
        if b % 512 != 0 || b.unsigned_abs() > 1 << 40 {
            return Err(format!(
                "gap is {b} bytes; use a multiple of 512 bytes, at most 1 TiB either way (negative: back)"
            ));
        }
        Ok(b)
    }
}

/// `trace = { file = ..., format = ..., speed = ... }` on a `[[worker]]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TraceSpec {
    /// The trace file (MSR Cambridge CSV or blkparse text).
    pub file: Option<PathBuf>,
    /// `msr` or `blkparse` (default: from its first line).
    pub format: Option<String>,
    /// How much faster than recorded, or `"max"`.
    pub speed: Option<SpeedSpec>,
}

/// A replay speed as written: a factor, or `"max"`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum SpeedSpec {
    /// Times faster than recorded.
    Times(f64),
    /// `"max"`.
    Word(String),
}

/// One `[[worker.access]]` entry of an access specification.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AccessSpec {
    /// Class name under which results are reported (e.g. `db`, `log`).
    pub class: Option<String>,
    /// Relative weight of this entry among the worker's entries (default 1).
    pub weight: Option<u32>,
    /// Block size of each I/O.
    pub block_size: Option<Size>,
    /// Variable block sizes instead of one: size → weight, e.g.
    /// `{ "4k" = 50, "8k" = 30, "32k" = 20 }`.
    pub block_sizes: Option<std::collections::BTreeMap<String, u32>>,
    /// Sequential I/O never crosses a multiple of this many bytes from the span start: the
    /// stream skips to the next multiple (like a log that rolls over to a new 1 MiB file).
    pub roll_every: Option<Size>,
    /// Share of reads (the rest are writes).
    pub read: Option<Percent>,
    /// Share of random I/Os (the rest continue sequentially).
    pub random: Option<Percent>,
    /// Offset alignment of random I/Os (default: the block size).
    pub align: Option<Size>,
    /// Sequential I/O: bytes skipped after each I/O before the next (negative: back, so
    /// `gap = "-8k"` with 4 KiB blocks reads backwards), as fio's `rw=read:8k`.
    pub gap: Option<GapSpec>,
    /// Sequential I/O: where the stream's first I/O is, from the span's start (default 0); it
    /// wraps to the span's start. Threads of one target started apart, as DiskSpd's `-T`.
    pub start: Option<Size>,
    /// `uniform`, `zipf:THETA` or `zoned:IO%/SPAN%:IO%/SPAN%...`.
    pub distribution: Option<String>,
    /// Where the hot positions of a skewed distribution lie: `start` (from the span's start)
    /// or `scattered` (over the span, at places the seed fixes).
    pub hot_set: Option<String>,
    /// Start of the span within each target (default 0).
    pub offset: Option<Size>,
    /// With the worker's `count`: copy i's span starts i × this further than `offset` (fio's
    /// `offset_increment`: clones on disjoint parts of one target). Default 0.
    pub offset_increment: Option<Size>,
    /// Length of the span (default: to the end of the target).
    pub length: Option<Size>,
    /// Writes with RWF_ATOMIC (fio's `atomic=1`): each is done whole or not at all. O_DIRECT,
    /// one block size, a power of two the target's atomic write unit allows, every offset a
    /// multiple of it.
    pub atomic: Option<bool>,
    /// Strided zones (fio's `zonemode=strided`): each zone's size; the I/O stays in a zone
    /// until it has transferred `zone_transfer`, then moves `zone_skip` past its end.
    pub zone_size: Option<Size>,
    /// With `zone_size`: bytes transferred in a zone before the next (default: `zone_size`).
    pub zone_transfer: Option<Size>,
    /// With `zone_size`: bytes skipped between a zone's end and the next zone (default 0).
    pub zone_skip: Option<Size>,
    /// Make this entry's writes durable (RWF_DSYNC per write).
    pub sync: Option<bool>,
    /// Flush (fdatasync) the target after every N writes of this entry.
    pub fsync_every: Option<u32>,
}

/// `precondition = { passes = 2, pattern = "sequential", block_size = "128k" }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PreconditionSpec {
    /// Full writes of every target (default 1).
    pub passes: Option<u32>,
    /// `sequential` (default) or `random`.
    pub pattern: Option<String>,
    /// Write size (default 128k).
    pub block_size: Option<Size>,
}

/// A list of values, or a doubling range `{ from = .., to = .. }`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum SizeCycle {
    /// Explicit values.
    List(Vec<Size>),
    /// From `from` doubling up to `to` (inclusive).
    Doubling {
        /// First value.
        from: Size,
        /// Last value.
        to: Size,
    },
}

/// A list of counts, or a doubling range.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum CountCycle {
    /// Explicit values.
    List(Vec<u32>),
    /// From `from` doubling up to `to` (inclusive).
    Doubling {
        /// First value.
        from: u32,
        /// Last value.
        to: u32,
    },
}

/// `[cycle]`: the parameters to cycle; every combination is one step.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CycleSpec {
    /// Nesting, outermost first, e.g. ["workers", "block_size"] (default: targets, workers,
    /// queue_depth, block_size, read, random, rate).
    pub order: Option<Vec<String>>,
    /// Block size of every access entry.
    pub block_size: Option<SizeCycle>,
    /// Count of every worker group.
    pub workers: Option<CountCycle>,
    /// Queue depth of every worker.
    pub queue_depth: Option<CountCycle>,
    /// Number of targets each worker uses (its first N).
    pub targets: Option<CountCycle>,
    /// Read share of every access entry.
    pub read: Option<Vec<Percent>>,
    /// Random share of every access entry.
    pub random: Option<Vec<Percent>>,
    /// Open-loop rate of every worker, IOPS.
    pub rate: Option<Vec<f64>>,
    /// Size of every cache tier, percent of its target (`"0%"`: no cache).
    pub cache: Option<Vec<Percent>>,
    /// The worker groups, one a step.
    pub group: Option<Vec<u32>>,
    /// Compression ratio of the written data, N:1 (as `[data] compress`).
    pub compress: Option<Vec<f64>>,
    /// Dedupe ratio of the written data, N:1 (as `[data] dedupe`).
    pub dedupe: Option<Vec<f64>>,
}
