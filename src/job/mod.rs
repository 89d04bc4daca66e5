//! Jobs: what to run. A [`JobSpec`] (as written, in a TOML file or from flags) is validated
//! without syscalls by [`resolve`] into a [`Job`]: sizes in bytes, times in milliseconds, every
//! reference checked, classes numbered. Errors name the file, line and key.

pub mod spec;
pub mod steps;

use crate::units;
use serde::{Deserialize, Serialize};
use spec::{AccessSpec, JobSpec, TargetSpec, WorkerSpec};
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;

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

/// Which engine does the I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// io_uring with registered buffers and files.
    IoUring,
    /// Blocking pread/pwrite, one I/O at a time per worker.
    Psync,
    /// No I/O: completes at once; measures storlab's own cost.
    Null,
}

impl EngineKind {
    /// Parses `io_uring`, `psync` or `null`.
    pub fn parse(s: &str) -> Result<Self, String> {
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

/// A validated job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
}

impl Job {
    /// The id of class `name`, adding it when new.
    pub fn class(&mut self, name: &str) -> usize {
        class_id(&mut self.classes, name)
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
    pub fn limit(self) -> u64 {
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
    /// fdatasync after every N writes (0 = never).
    pub fsync_every: u32,
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
    /// I/Os in flight.
    pub queue_depth: u32,
    /// CPU to pin to.
    pub cpu: Option<usize>,
    /// Open-loop rate; `None` is closed loop.
    pub rate: Option<Rate>,
    /// The access specification.
    pub access: Vec<Access>,
    /// Stop after this much I/O.
    pub io_limit: Option<IoLimit>,
}

impl Worker {
    /// Whether any entry writes.
    pub fn writes(&self) -> bool {
        self.access.iter().any(|a| a.read_pct < 100.0)
    }
    /// Largest block size of its entries, bytes.
    pub fn max_block_bytes(&self) -> u64 {
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
    /// Reads, percent.
    pub read_pct: f64,
    /// Random I/Os, percent.
    pub random_pct: f64,
    /// Alignment of random offsets, bytes.
    pub align_bytes: u64,
    /// Offset distribution.
    pub distribution: Distribution,
    /// Span start within each target, bytes.
    pub offset_bytes: u64,
    /// Span length, bytes (`None`: to the end).
    pub length_bytes: Option<u64>,
    /// Writes carry RWF_DSYNC.
    pub sync: bool,
    /// fdatasync after every N writes of this entry (0 = never).
    pub fsync_every: u32,
}

/// Where a spanned table starts, as `file:line`.
struct Source<'a> {
    name: String,
    text: Option<&'a str>,
}

impl Source<'_> {
    /// `file:line` of a top-level key (or of a `[key]` table), or `file:1` when the key is not
    /// written (an error about the file as a whole).
    fn top_level(&self, key: &str) -> String {
        match self.text {
            Some(text) => format!("{}:{}", self.name, key_line(text, None, key).unwrap_or(1)),
            None => self.name.clone(),
        }
    }

    fn at(&self, span: std::ops::Range<usize>) -> String {
        match self.text {
            Some(text) => format!("{}:{}", self.name, line_at(text, span.start)),
            None => self.name.clone(),
        }
    }
}

/// The 1-based line of byte `offset` in `text` (clamped to the text, any byte boundary).
fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The 1-based line where `key` is written in `table` of a TOML text (`None`: the top level,
/// before any table header), as `key = ...` (bare or quoted) or as a `[table.key]` header;
/// `None` when it is not written there. A line scanner, not a parser: it serves error
/// locations, so it never fails.
pub fn key_line(text: &str, table: Option<&str>, key: &str) -> Option<usize> {
    let header = |l: &str| -> Option<String> {
        let inner = l.strip_prefix('[')?;
        let inner = inner.strip_prefix('[').unwrap_or(inner);
        let name = inner.split(']').next()?;
        Some(
            name.split('.')
                .map(|part| part.trim().trim_matches('"').trim_matches('\''))
                .collect::<Vec<_>>()
                .join("."),
        )
    };
    let wanted_header = match table {
        Some(t) => format!("{t}.{key}"),
        None => key.to_string(),
    };
    let mut current: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let l = line.trim_start();
        if l.starts_with('[') {
            let h = header(l);
            if h.as_deref() == Some(wanted_header.as_str()) {
                return Some(i + 1);
            }
            current = h;
            continue;
        }
        if current.as_deref() != table {
            continue;
        }
        for quoted in [key.to_string(), format!("\"{key}\""), format!("'{key}'")] {
            if let Some(rest) = l.strip_prefix(quoted.as_str()) {
                if rest.trim_start().starts_with('=') {
                    return Some(i + 1);
                }
            }
        }
    }
    None
}

/// `name:line` of `key` in `table` of `text` (see [`key_line`]); when the key is not written,
/// the line of the table's header, else line 1.
pub fn locate(name: &Path, text: &str, table: Option<&str>, key: &str) -> String {
    let line = key_line(text, table, key)
        .or_else(|| {
            let (parent, last) = table?.rsplit_once('.').unwrap_or(("", table?));
            key_line(text, (!parent.is_empty()).then_some(parent), last)
        })
        .unwrap_or(1);
    format!("{}:{line}", name.display())
}

/// Parses TOML text into `T`. Syntax errors, unknown keys, wrong types and bad units name the
/// file, line and column, and quote the line.
pub fn parse_toml<T: serde::de::DeserializeOwned>(name: &Path, text: &str) -> Result<T, JobError> {
    toml::from_str(text).map_err(|e| {
        let (line, col) = match e.span() {
            Some(s) => {
                let start = s.start.min(text.len());
                let line = line_at(text, start);
                let line_start = text.as_bytes()[..start]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map(|i| i + 1)
                    .unwrap_or(0);
                (line, start - line_start + 1)
            }
            None => (1, 1),
        };
        let snippet: String = text
            .lines()
            .nth(line.saturating_sub(1))
            .unwrap_or_default()
            .trim()
            .chars()
            .map(|c| {
                if c.is_control() {
                    format!("\\u{{{:x}}}", c as u32)
                } else {
                    c.to_string()
                }
            })
            .collect();
        let mut message = e.message().trim().to_string();
        if message.is_empty() {
            // toml gives no text for a stray character; say which one it is.
            let at = e.span().map(|s| s.start).unwrap_or(0);
            message = match text.get(at..).and_then(|t| t.chars().next()) {
                Some(c) if c.is_control() => format!(
                    "control character U+{:04X} is not allowed in TOML, not even in a comment",
                    c as u32
                ),
                Some(c) => format!("unexpected `{c}`"),
                None => "unexpected end of the file".to_string(),
            };
        }
        let message = if snippet.is_empty() {
            message
        } else {
            format!("{message}\n    | {snippet}")
        };
        JobError {
            location: format!("{}:{line}:{col}", name.display()),
            key: String::new(),
            message,
        }
    })
}

/// Parses a TOML job file's text. Syntax errors, unknown keys and bad units name the line.
pub fn parse(name: &Path, text: &str) -> Result<JobSpec, JobError> {
    parse_toml(name, text)
}

/// A job file's bytes as text; bytes that are not UTF-8 are an error naming their line.
pub fn decode(name: &Path, bytes: Vec<u8>) -> Result<String, JobError> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        JobError {
            location: format!("{}:{line}", name.display()),
            key: String::new(),
            message: format!("byte {at} is not UTF-8 text; a job file is TOML, which is UTF-8"),
        }
    })
}

/// Reads a job file as text; errors name the file (and the line of a byte that is not UTF-8).
pub fn read_text(path: &Path) -> Result<String, JobError> {
    let bytes = std::fs::read(path).map_err(|e| JobError {
        location: path.display().to_string(),
        key: String::new(),
        message: format!("cannot read the job file: {e}"),
    })?;
    decode(path, bytes)
}

/// Reads and parses a job file.
pub fn load(path: &Path) -> Result<(JobSpec, String), JobError> {
    let text = read_text(path)?;
    Ok((parse(path, &text)?, text))
}

/// Defaults that apply when neither the job nor the flags set a value.
pub mod defaults {
    /// Measured duration.
    pub const DURATION_MS: u64 = 30_000;
    /// Ramp.
    pub const RAMP_MS: u64 = 0;
    /// Time-series interval.
    pub const INTERVAL_MS: u64 = 1_000;
    /// Queue depth.
    pub const QUEUE_DEPTH: u32 = 1;
    /// Block size.
    pub const BLOCK_SIZE: u64 = 4096;
    /// Seed.
    pub const SEED: u64 = 0x0570_71ab;
    /// Failed I/Os after which a run with `on_error = "continue"` stops.
    pub const MAX_ERRORS: u64 = 1000;
}

/// Validates a spec into a job. `source` names the file (`None`: built from flags) and its
/// text is used to turn table positions into line numbers.
pub fn resolve(spec: &JobSpec, file: Option<(&Path, &str)>) -> Result<Job, JobError> {
    let src = match file {
        Some((p, t)) => Source {
            name: p.display().to_string(),
            text: Some(t),
        },
        None => Source {
            name: "command line".into(),
            text: None,
        },
    };
    let whole = |key: &str, message: String| JobError {
        location: src.top_level(key),
        key: key.into(),
        message,
    };
    let engine = match &spec.engine {
        Some(e) => EngineKind::parse(e).map_err(|m| whole("engine", m))?,
        None => EngineKind::IoUring,
    };
    let ms =
        |d: &Option<units::Dur>, default: u64| d.map(|d| d.0.as_millis() as u64).unwrap_or(default);
    let duration_ms = ms(&spec.duration, defaults::DURATION_MS);
    let ramp_ms = ms(&spec.ramp, defaults::RAMP_MS);
    let interval_ms = ms(&spec.interval, defaults::INTERVAL_MS);
    if duration_ms == 0 {
        return Err(whole(
            "duration",
            "the duration must be at least 1ms, e.g. duration = \"30s\"".into(),
        ));
    }
    if interval_ms < 10 {
        return Err(whole(
            "interval",
            format!(
                "the interval is {interval_ms}ms; it must be at least 10ms, e.g. interval = \"1s\""
            ),
        ));
    }
    let batch = spec.batch.unwrap_or(1);
    if batch == 0 {
        return Err(whole("batch", "batch must be at least 1".into()));
    }
    let on_error = match spec.on_error.as_deref() {
        None | Some("continue") => match spec.max_errors {
            Some(0) => {
                return Err(whole(
                    "max_errors",
                    "max_errors must be at least 1 (use on_error = \"stop\" to stop at the first error)".into(),
                ));
            }
            Some(n) => OnError::Continue { max_errors: n },
            None => OnError::default(),
        },
        Some("stop") => {
            if spec.max_errors.is_some() {
                return Err(whole(
                    "max_errors",
                    "max_errors applies to on_error = \"continue\"; with \"stop\" the run stops at the first error".into(),
                ));
            }
            OnError::Stop
        }
        Some(other) => {
            return Err(whole(
                "on_error",
                format!("on_error is `{other}`; use \"continue\" or \"stop\""),
            ));
        }
    };
    let verify = spec.verify.unwrap_or(false);
    if verify && engine == EngineKind::Null {
        return Err(whole(
            "verify",
            "the null engine does no I/O, so there is nothing to verify; use engine = \"io_uring\" or \"psync\"".into(),
        ));
    }
    if spec.target.is_empty() {
        return Err(whole(
            "target",
            "the job has no target; add a [[target]] with a path (and a size for a new file), or use --target PATH".into(),
        ));
    }
    if spec.worker.is_empty() {
        return Err(whole(
            "worker",
            "the job has no worker; add a [[worker]] with at least one [[worker.access]] entry"
                .into(),
        ));
    }
    let mut warnings = Vec::new();
    let targets = spec
        .target
        .iter()
        .enumerate()
        .map(|(i, t)| resolve_target(i, t, &src))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, t) in targets.iter().enumerate() {
        if let Some(j) = targets[..i].iter().position(|o| o.name == t.name) {
            return Err(JobError {
                location: src.at(spec.target[i].span()),
                key: format!("target[{i}].name"),
                message: format!(
                    "target name `{}` is already used by target[{j}]; give each target its own name",
                    t.name
                ),
            });
        }
    }
    let mut classes: Vec<String> = Vec::new();
    let mut workers = Vec::new();
    // The `[[worker]]` each worker comes from.
    let mut origin = Vec::new();
    for (wi, w) in spec.worker.iter().enumerate() {
        let made = resolve_worker(wi, w, &src, &targets, engine, &mut classes, &mut warnings)?;
        origin.extend(std::iter::repeat_n(wi, made.len()));
        workers.extend(made);
    }
    for (i, w) in workers.iter().enumerate() {
        if let Some(j) = workers[..i].iter().position(|o| o.name == w.name) {
            let wi = origin[i];
            return Err(JobError {
                location: src.at(spec.worker[wi].span()),
                key: format!("worker[{wi}].name"),
                message: format!(
                    "worker[{}] and worker[{wi}] both make a worker named `{}`; give each its own name",
                    origin[j], w.name
                ),
            });
        }
    }
    let sequence = resolve_sequence(spec, &src, &workers, &targets)?;
    if let Some(class) = sequence.stop_when.as_ref().and_then(|r| r.class.as_ref()) {
        if !classes.contains(class) {
            return Err(whole(
                "stop_when",
                format!(
                    "stop_when names class `{class}`, which the job does not have; classes: {}",
                    classes.join(", ")
                ),
            ));
        }
    }
    if ramp_ms > duration_ms {
        warnings.push(format!(
            "the ramp ({ramp_ms} ms) is longer than the measured duration ({duration_ms} ms)"
        ));
    }
    Ok(Job {
        description: spec.description.clone(),
        engine,
        duration_ms,
        ramp_ms,
        interval_ms,
        seed: spec.seed.unwrap_or(defaults::SEED),
        buffered: spec.buffered.unwrap_or(false),
        destroy_data: spec.destroy_data.unwrap_or(false),
        batch,
        verify,
        on_error,
        targets,
        workers,
        classes,
        warnings,
        sequence,
    })
}

fn resolve_sequence(
    spec: &JobSpec,
    src: &Source,
    workers: &[Worker],
    targets: &[Target],
) -> Result<steps::Sequence, JobError> {
    use steps::{Cycle, Param, Precondition, Sequence, Steady, StopRule, doubling};
    let top = |key: &str, message: String| JobError {
        location: src.top_level(key),
        key: key.into(),
        message,
    };
    let mut seq = Sequence {
        repeat: spec.repeat.unwrap_or(1),
        pause_ms: spec.pause.map(|d| d.0.as_millis() as u64).unwrap_or(0),
        ..Sequence::default()
    };
    if seq.repeat == 0 || seq.repeat > 1000 {
        return Err(top(
            "repeat",
            format!("repeat is {}; use 1 to 1000", seq.repeat),
        ));
    }
    if let Some(c) = &spec.cycle {
        let at = src.at(c.span());
        let err = |key: &str, message: String| JobError {
            location: at.clone(),
            key: format!("cycle.{key}"),
            message,
        };
        let c = c.get_ref();
        let counts = |key: &str,
                      v: &Option<spec::CountCycle>,
                      max: u32|
         -> Result<Option<Vec<f64>>, JobError> {
            let values = match v {
                None => return Ok(None),
                Some(spec::CountCycle::List(l)) => l.iter().map(|&n| n as f64).collect::<Vec<_>>(),
                Some(spec::CountCycle::Doubling { from, to }) => {
                    if *from == 0 || to < from {
                        return Err(err(
                            key,
                            format!(
                                "{{ from = {from}, to = {to} }}: from must be at least 1 and to at least from"
                            ),
                        ));
                    }
                    doubling(*from as u64, *to as u64)
                }
            };
            if values.is_empty() || values.iter().any(|&n| n < 1.0 || n > max as f64) {
                return Err(err(key, format!("values must be 1 to {max}, at least one")));
            }
            Ok(Some(values))
        };
        let mut found: Vec<(Param, Vec<f64>)> = Vec::new();
        if let Some(v) = counts("targets", &c.targets, targets.len() as u32)? {
            found.push((Param::Targets, v));
        }
        if let Some(v) = counts("workers", &c.workers, 4096)? {
            if workers.iter().any(|w| w.name.split('#').count() > 2) {
                return Err(err(
                    "workers",
                    "worker names used with a workers cycle must not contain `#`".into(),
                ));
            }
            found.push((Param::Workers, v));
        }
        if let Some(v) = counts("queue_depth", &c.queue_depth, 32768)? {
            found.push((Param::QueueDepth, v));
        }
        if let Some(b) = &c.block_size {
            let values: Vec<f64> = match b {
                spec::SizeCycle::List(l) => l.iter().map(|s| s.0 as f64).collect(),
                spec::SizeCycle::Doubling { from, to } => {
                    if from.0 == 0 || to.0 < from.0 {
                        return Err(err(
                            "block_size",
                            "from must be more than 0 and to at least from".into(),
                        ));
                    }
                    doubling(from.0, to.0)
                }
            };
            if values.is_empty() || values.iter().any(|&b| b < 1.0 || b > (64 << 20) as f64) {
                return Err(err(
                    "block_size",
                    "block sizes must be 1 B to 64 MiB, at least one".into(),
                ));
            }
            for t in targets {
                if let (Some(size), Some(max)) =
                    (t.size_bytes, values.iter().cloned().reduce(f64::max))
                {
                    if max > size as f64 {
                        return Err(err(
                            "block_size",
                            format!(
                                "the largest block size ({max} bytes) does not fit in target `{}` ({size} bytes)",
                                t.name
                            ),
                        ));
                    }
                }
            }
            found.push((Param::BlockSize, values));
        }
        for (key, v, p) in [
            ("read", &c.read, Param::Read),
            ("random", &c.random, Param::Random),
        ] {
            if let Some(l) = v {
                if l.is_empty() {
                    return Err(err(key, "the list is empty".into()));
                }
                found.push((p, l.iter().map(|p| p.0).collect()));
            }
        }
        if let Some(l) = &c.rate {
            if l.is_empty() || l.iter().any(|r| !(*r > 0.0 && r.is_finite() && *r <= 1e9)) {
                return Err(err(
                    "rate",
                    "rates must be IOPS above 0 and at most 1e9 (as rate_iops), at least one"
                        .into(),
                ));
            }
            found.push((Param::Rate, l.clone()));
        }
        let order: Vec<Param> = match &c.order {
            None => Param::DEFAULT_ORDER.to_vec(),
            Some(names) => {
                let mut order = Vec::new();
                for n in names {
                    let p = Param::parse(n).ok_or_else(|| {
                        err("order", format!("unknown parameter `{n}`; use targets, workers, queue_depth, block_size, read, random or rate"))
                    })?;
                    if !found.iter().any(|(f, _)| *f == p) {
                        return Err(err(
                            "order",
                            format!("`{n}` is in the order but has no values in [cycle]"),
                        ));
                    }
                    order.push(p);
                }
                if let Some((missing, _)) = found.iter().find(|(f, _)| !order.contains(f)) {
                    return Err(err(
                        "order",
                        format!("`{}` is cycled but missing from the order", missing.name()),
                    ));
                }
                order
            }
        };
        for p in order {
            if let Some(i) = found.iter().position(|(f, _)| *f == p) {
                let (parameter, values) = found.remove(i);
                seq.cycles.push(Cycle { parameter, values });
            }
        }
        let steps = seq
            .cycles
            .iter()
            .fold(1usize, |n, c| n.saturating_mul(c.values.len()));
        if steps > 10_000 {
            return Err(err(
                "order",
                format!("the cycles make {steps} steps; keep it under 10000"),
            ));
        }
    }
    if let Some(levels) = &spec.curve {
        if levels.is_empty() || levels.iter().any(|l| !(*l > 0.0 && *l <= 200.0)) {
            return Err(top("curve", "levels are percentages of the maximum above 0 and at most 200, e.g. curve = [10, 50, 90, 100]".into()));
        }
        if workers.iter().any(|w| w.rate.is_some())
            || seq.cycles.iter().any(|c| c.parameter == Param::Rate)
        {
            return Err(top(
                "curve",
                "a curve finds the maximum closed loop first; remove rate_iops and the rate cycle"
                    .into(),
            ));
        }
        seq.curve = levels.clone();
    }
    if let Some(s) = &spec.stop_when {
        if seq.curve.is_empty() {
            return Err(top(
                "stop_when",
                "stop_when ends a rate curve; add curve = [...]".into(),
            ));
        }
        seq.stop_when = Some(StopRule::parse(s).map_err(|m| top("stop_when", m))?);
    }
    if spec.until_steady == Some(true) {
        if !seq.curve.is_empty() || seq.repeat > 1 {
            return Err(top(
                "until_steady",
                "until_steady cannot be combined with curve or repeat".into(),
            ));
        }
        let pct = |p: Option<units::Percent>, d: f64| p.map(|p| p.0).unwrap_or(d);
        let steady = Steady {
            round_ms: spec.round.map(|d| d.0.as_millis() as u64).unwrap_or(60_000),
            window: spec.steady_rounds.unwrap_or(5),
            range_pct: pct(spec.steady_range, 10.0),
            slope_pct: pct(spec.steady_slope, 5.0),
            max_rounds: spec.max_rounds.unwrap_or(25),
        };
        if steady.round_ms < 100 || steady.window < 2 || steady.max_rounds < steady.window {
            return Err(top("until_steady", "round must be at least 100ms, steady_rounds at least 2 and max_rounds at least steady_rounds".into()));
        }
        seq.steady = Some(steady);
    } else if let Some(key) = [
        ("round", spec.round.is_some()),
        ("steady_rounds", spec.steady_rounds.is_some()),
        ("max_rounds", spec.max_rounds.is_some()),
    ]
    .iter()
    .find_map(|(k, set)| set.then_some(*k))
    {
        return Err(top(
            key,
            "round, steady_rounds and max_rounds apply to until_steady = true".into(),
        ));
    }
    if !seq.curve.is_empty() && seq.repeat > 1 {
        return Err(top("repeat", "repeat cannot be combined with curve".into()));
    }
    if let Some(p) = &spec.precondition {
        let block = p.block_size.map(|s| s.0).unwrap_or(128 << 10);
        let passes = p.passes.unwrap_or(1);
        if passes == 0 || passes > 100 || block == 0 || block > 64 << 20 {
            return Err(top(
                "precondition",
                "passes must be 1 to 100 and block_size 512 B to 64 MiB".into(),
            ));
        }
        let random = match p.pattern.as_deref() {
            None | Some("sequential") => false,
            Some("random") => true,
            Some(o) => {
                return Err(top(
                    "precondition",
                    format!("pattern `{o}`: use sequential or random"),
                ));
            }
        };
        seq.precondition = Some(Precondition {
            passes,
            random,
            block_bytes: block,
        });
    }
    Ok(seq)
}

fn resolve_target(i: usize, t: &Spanned<TargetSpec>, src: &Source) -> Result<Target, JobError> {
    let err = |key: &str, message: String| JobError {
        location: src.at(t.span()),
        key: format!("target[{i}].{key}"),
        message,
    };
    let t = t.get_ref();
    let path = t.path.clone().ok_or_else(|| {
        err(
            "path",
            "a target needs a path, e.g. path = \"/data/storlab.dat\" or \"/dev/sdb\"".into(),
        )
    })?;
    if path.as_os_str().is_empty() {
        return Err(err("path", "the path is empty".into()));
    }
    if t.name.as_ref().is_some_and(|n| n.trim().is_empty()) {
        return Err(err("name", "the name is empty".into()));
    }
    let size_bytes = t.size.map(|s| s.0);
    if size_bytes == Some(0) {
        return Err(err(
            "size",
            "the size must be more than 0, e.g. size = \"1GiB\"".into(),
        ));
    }
    Ok(Target {
        name: t.name.clone().unwrap_or_else(|| path.display().to_string()),
        path,
        size_bytes,
        sync: t.sync.unwrap_or(false),
        fsync_every: t.fsync_every.unwrap_or(0),
    })
}

#[allow(clippy::too_many_arguments)]
fn resolve_worker(
    wi: usize,
    w: &Spanned<WorkerSpec>,
    src: &Source,
    targets: &[Target],
    engine: EngineKind,
    classes: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Worker>, JobError> {
    let at = src.at(w.span());
    let err = |key: &str, message: String| JobError {
        location: at.clone(),
        key: format!("worker[{wi}].{key}"),
        message,
    };
    let spec = w.get_ref();
    let name = spec.name.clone().unwrap_or_else(|| format!("worker{wi}"));
    if name.trim().is_empty() {
        return Err(err("name", "the name is empty".into()));
    }
    let count = spec.count.unwrap_or(1);
    if count == 0 || count > 4096 {
        return Err(err("count", format!("count is {count}; use 1 to 4096")));
    }
    let target_ids: Vec<usize> = match &spec.targets {
        None => (0..targets.len()).collect(),
        Some(list) if list.is_empty() => {
            return Err(err(
                "targets",
                "the list is empty; name at least one target".into(),
            ));
        }
        Some(list) => list
            .iter()
            .map(|n| {
                targets
                    .iter()
                    .position(|t| &t.name == n || t.path.as_os_str() == n.as_str())
                    .ok_or_else(|| {
                        let known: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
                        err(
                            "targets",
                            format!(
                                "no target is named `{n}`; known targets: {}",
                                known.join(", ")
                            ),
                        )
                    })
            })
            .collect::<Result<_, _>>()?,
    };
    let target_choice = match spec.target_choice.as_deref() {
        None | Some("round-robin") | Some("round_robin") => TargetChoice::RoundRobin,
        Some("random") => TargetChoice::Random,
        Some(o) => {
            return Err(err(
                "target_choice",
                format!("unknown choice `{o}`; use round-robin or random"),
            ));
        }
    };
    let mut queue_depth = spec.queue_depth.unwrap_or(defaults::QUEUE_DEPTH);
    if queue_depth == 0 || queue_depth > 32768 {
        return Err(err(
            "queue_depth",
            format!("queue_depth is {queue_depth}; use 1 to 32768"),
        ));
    }
    if engine == EngineKind::Psync && queue_depth > 1 {
        warnings.push(format!(
            "worker `{name}`: the psync engine does one I/O at a time; queue_depth {queue_depth} is run as 1"
        ));
        queue_depth = 1;
    }
    let rate = match spec.rate_iops {
        None => {
            if spec.arrivals.is_some() {
                return Err(err(
                    "arrivals",
                    "arrivals applies to open loop only; set rate_iops too".into(),
                ));
            }
            None
        }
        Some(iops) if !(iops > 0.0 && iops.is_finite() && iops <= 1e9) => {
            return Err(err(
                "rate_iops",
                format!("rate_iops is {iops}; use a number of I/Os per second above 0"),
            ));
        }
        Some(iops) => Some(Rate {
            iops,
            arrivals: match spec.arrivals.as_deref() {
                None | Some("uniform") => Arrivals::Uniform,
                Some("poisson") => Arrivals::Poisson,
                Some(o) => {
                    return Err(err(
                        "arrivals",
                        format!("unknown arrivals `{o}`; use uniform or poisson"),
                    ));
                }
            },
        }),
    };
    if spec.io_limit == Some(0) {
        return Err(err("io_limit", "io_limit must be at least 1".into()));
    }
    if spec.access.is_empty() {
        return Err(err(
            "access",
            "the worker has no access entry; add [[worker.access]] with block_size, read and random".into(),
        ));
    }
    let access = spec
        .access
        .iter()
        .enumerate()
        .map(|(ai, a)| resolve_access(wi, ai, a, src, &name, targets, &target_ids, classes))
        .collect::<Result<Vec<_>, _>>()?;
    let cpus = spec.cpus.clone().unwrap_or_default();
    let each = spec.one_target_each.unwrap_or(false);
    Ok((0..count)
        .map(|c| Worker {
            name: if count == 1 {
                name.clone()
            } else {
                format!("{name}#{c}")
            },
            targets: if each {
                vec![target_ids[c as usize % target_ids.len()]]
            } else {
                target_ids.clone()
            },
            target_choice,
            queue_depth,
            cpu: (!cpus.is_empty()).then(|| cpus[c as usize % cpus.len()]),
            rate,
            access: access.clone(),
            io_limit: spec.io_limit.map(IoLimit::Ios),
        })
        .collect())
}

#[allow(clippy::too_many_arguments)]
fn resolve_access(
    wi: usize,
    ai: usize,
    a: &Spanned<AccessSpec>,
    src: &Source,
    worker_name: &str,
    targets: &[Target],
    target_ids: &[usize],
    classes: &mut Vec<String>,
) -> Result<Access, JobError> {
    let err = |key: &str, message: String| JobError {
        location: src.at(a.span()),
        key: format!("worker[{wi}].access[{ai}].{key}"),
        message,
    };
    let a = a.get_ref();
    let mut block_sizes = Vec::new();
    if let Some(mix) = &a.block_sizes {
        if a.block_size.is_some() {
            return Err(err(
                "block_sizes",
                "set either block_size or block_sizes, not both".into(),
            ));
        }
        if mix.is_empty() {
            return Err(err(
                "block_sizes",
                "the table is empty; give at least one size = weight".into(),
            ));
        }
        for (size, weight) in mix {
            let bytes = units::parse_size(size).map_err(|m| err("block_sizes", m))?;
            if bytes == 0 || bytes > 64 << 20 {
                return Err(err(
                    "block_sizes",
                    format!("block size `{size}` must be 1 B to 64 MiB"),
                ));
            }
            if *weight == 0 {
                return Err(err(
                    "block_sizes",
                    format!("the weight of `{size}` must be at least 1"),
                ));
            }
            block_sizes.push((bytes, *weight));
        }
        block_sizes.sort();
    }
    let block = match block_sizes.last() {
        Some(&(largest, _)) => largest,
        None => a.block_size.map(|s| s.0).unwrap_or(defaults::BLOCK_SIZE),
    };
    let roll_every = a.roll_every.map(|s| s.0).unwrap_or(0);
    if roll_every != 0 && roll_every < block {
        return Err(err(
            "roll_every",
            format!(
                "roll_every ({roll_every} bytes) is smaller than the block size ({block} bytes)"
            ),
        ));
    }
    if block == 0 || block > 64 << 20 {
        return Err(err(
            "block_size",
            format!(
                "block_size is {block} bytes; use 1 B to 64 MiB (a multiple of the device's logical block size for O_DIRECT), e.g. block_size = \"4k\""
            ),
        ));
    }
    let smallest = block_sizes.first().map(|&(b, _)| b).unwrap_or(block);
    let align = a.align.map(|s| s.0).unwrap_or(smallest);
    if align == 0 {
        return Err(err("align", "align must be more than 0".into()));
    }
    let weight = a.weight.unwrap_or(1);
    if weight == 0 {
        return Err(err(
            "weight",
            "weight must be at least 1 (remove the entry instead)".into(),
        ));
    }
    let distribution = match &a.distribution {
        Some(d) => Distribution::parse(d).map_err(|m| err("distribution", m))?,
        None => Distribution::Uniform,
    };
    let offset = a.offset.map(|s| s.0).unwrap_or(0);
    let length = a.length.map(|s| s.0);
    if length == Some(0) {
        return Err(err("length", "length must be more than 0".into()));
    }
    if offset % align != 0 && offset % block != 0 {
        return Err(err(
            "offset",
            format!(
                "offset {offset} is not a multiple of the alignment ({align} bytes) or the block size ({block} bytes)"
            ),
        ));
    }
    let span = length.unwrap_or(u64::MAX);
    if span < block {
        return Err(err(
            "length",
            format!("the span ({span} bytes) is smaller than one block ({block} bytes)"),
        ));
    }
    for &t in target_ids {
        if let Some(size) = targets[t].size_bytes {
            let end = offset.saturating_add(length.unwrap_or(size - offset.min(size)));
            if offset.saturating_add(block) > size || end > size {
                return Err(err(
                    "length",
                    format!(
                        "the span {offset}..{end} with {block}-byte blocks does not fit in target `{}` ({size} bytes); make the target larger or the span smaller",
                        targets[t].name
                    ),
                ));
            }
        }
    }
    let read_pct = a.read.map(|p| p.0).unwrap_or(100.0);
    let random_pct = a.random.map(|p| p.0).unwrap_or(100.0);
    let class_name = a.class.clone().unwrap_or_else(|| worker_name.to_string());
    if class_name.trim().is_empty() {
        return Err(err("class", "the class name is empty".into()));
    }
    let class = class_id(classes, &class_name);
    Ok(Access {
        class,
        weight,
        block_size_bytes: block,
        block_sizes,
        roll_every_bytes: roll_every,
        read_pct,
        random_pct,
        align_bytes: align,
        distribution,
        offset_bytes: offset,
        length_bytes: length,
        sync: a.sync.unwrap_or(false),
        fsync_every: a.fsync_every.unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_text(text: &str) -> Result<Job, JobError> {
        let p = Path::new("job.toml");
        let spec = parse(p, text)?;
        resolve(&spec, Some((p, text)))
    }

    const GOOD: &str = r#"
duration = "10s"
[[target]]
name = "db"
path = "/tmp/x.dat"
size = "1GiB"
[[worker]]
name = "w"
count = 2
queue_depth = 8
[[worker.access]]
class = "db"
block_size = "8k"
read = "70%"
weight = 9
[[worker.access]]
class = "log"
block_size = "64k"
read = 0
random = 0
"#;

    #[test]
    fn keys_of_issue_6_are_checked() {
        let with = |extra: &str| resolve_text(&format!("{extra}\n{GOOD}"));
        let job = with("verify = true\non_error = \"stop\"").unwrap();
        assert!(job.verify);
        assert_eq!(job.on_error, OnError::Stop);
        assert_eq!(
            with("max_errors = 5").unwrap().on_error,
            OnError::Continue { max_errors: 5 }
        );
        assert_eq!(with("").unwrap().on_error.limit(), defaults::MAX_ERRORS);
        for (extra, key) in [
            ("max_errors = 0", "max_errors"),
            ("on_error = \"stop\"\nmax_errors = 3", "max_errors"),
            ("on_error = \"retry\"", "on_error"),
            ("verify = true\nengine = \"null\"", "verify"),
        ] {
            let e = with(extra).unwrap_err();
            assert_eq!(e.key, key, "{extra}: {e}");
            assert!(e.to_string().contains("job.toml:"), "{e}");
        }
        let e = resolve_text(&format!("{GOOD}\n[cycle]\nrate = [100, 2e9]")).unwrap_err();
        assert_eq!(e.key, "cycle.rate", "{e}");
    }

    #[test]
    fn resolves_a_good_job() {
        let job = resolve_text(GOOD).unwrap();
        assert_eq!(job.duration_ms, 10_000);
        assert_eq!(job.workers.len(), 2);
        assert_eq!(job.workers[1].name, "w#1");
        assert_eq!(job.classes, vec!["db", "log"]);
        assert_eq!(job.workers[0].access[1].block_size_bytes, 65536);
        assert_eq!(job.targets[0].size_bytes, Some(1 << 30));
    }

    #[test]
    fn unknown_key_names_line() {
        let e = resolve_text("duration = \"1s\"\nbogus = 1\n").unwrap_err();
        assert!(e.location.starts_with("job.toml:2"), "{e}");
        assert!(e.message.contains("bogus"), "{e}");
    }

    #[test]
    fn bad_unit_names_line() {
        let text = GOOD.replace("\"8k\"", "\"8q\"");
        let e = resolve_text(&text).unwrap_err();
        assert!(e.to_string().contains("unknown size unit `q`"), "{e}");
        assert!(e.location.starts_with("job.toml:13"), "{e}");
    }

    #[test]
    fn validation_errors_name_table_and_key() {
        let text = GOOD.replace("queue_depth = 8", "queue_depth = 0");
        let e = resolve_text(&text).unwrap_err();
        assert_eq!(e.key, "worker[0].queue_depth");
        assert_eq!(e.location, "job.toml:7");
        let text = GOOD.replace("block_size = \"64k\"", "block_size = \"2GiB\"");
        let e = resolve_text(&text).unwrap_err();
        assert_eq!(e.key, "worker[0].access[1].block_size");
        assert_eq!(e.location, "job.toml:16");
    }

    #[test]
    fn distributions_parse() {
        assert_eq!(Distribution::parse("uniform"), Ok(Distribution::Uniform));
        assert_eq!(
            Distribution::parse("zipf:1.2"),
            Ok(Distribution::Zipf { theta: 1.2 })
        );
        let Distribution::Zoned { bands } = Distribution::parse("zoned:80/10:20/90").unwrap()
        else {
            panic!()
        };
        assert_eq!(bands.len(), 2);
        assert!(Distribution::parse("zoned:80/10:10/90").is_err());
        assert!(Distribution::parse("zipf:-1").is_err());
        assert!(Distribution::parse("pareto").is_err());
    }

    #[test]
    fn keys_are_located_in_their_table() {
        let text = "duration = \"1s\"\n\"ramp\" = 1\n[precondition]\npasses = 2\n[exchange]\nmailboxes = 0\n";
        assert_eq!(key_line(text, None, "duration"), Some(1));
        assert_eq!(key_line(text, None, "ramp"), Some(2));
        assert_eq!(key_line(text, None, "precondition"), Some(3));
        assert_eq!(key_line(text, None, "passes"), None);
        assert_eq!(key_line(text, Some("exchange"), "mailboxes"), Some(6));
        let p = Path::new("x.toml");
        assert_eq!(locate(p, text, Some("exchange"), "mailboxes"), "x.toml:6");
        assert_eq!(locate(p, text, Some("exchange"), "capacity"), "x.toml:5");
        assert_eq!(locate(p, text, None, "target"), "x.toml:1");
    }

    #[test]
    fn whole_file_errors_name_a_line() {
        let e = resolve_text("duration = \"1s\"\n").unwrap_err();
        assert_eq!(
            (e.location.as_str(), e.key.as_str()),
            ("job.toml:1", "target")
        );
        let text = GOOD.replace("duration", "round");
        let e = resolve_text(&text).unwrap_err();
        assert_eq!(
            (e.location.as_str(), e.key.as_str()),
            ("job.toml:2", "round")
        );
        let text = format!("{GOOD}[[worker]]\nname = \"w#1\"\n[[worker.access]]\n");
        let e = resolve_text(&text).unwrap_err();
        assert_eq!(
            (e.location.as_str(), e.key.as_str()),
            ("job.toml:21", "worker[1].name")
        );
    }

    #[test]
    fn text_that_is_not_utf8_or_has_control_characters_names_its_line() {
        let e = decode(Path::new("j.toml"), b"a = 1\nb = \"\xff\"\n".to_vec()).unwrap_err();
        assert_eq!(e.location, "j.toml:2");
        let e = resolve_text("# \u{1}\n").unwrap_err();
        assert!(e.location.starts_with("job.toml:1:"), "{e}");
        assert!(e.message.contains("U+0001"), "{e}");
    }

    #[test]
    fn unknown_target_reference() {
        let text = GOOD.replace("count = 2", "count = 2\ntargets = [\"nope\"]");
        let e = resolve_text(&text).unwrap_err();
        assert!(e.message.contains("no target is named `nope`"), "{e}");
    }
}
