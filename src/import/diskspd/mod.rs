//! DiskSpd XML profiles and command lines as storlab jobs: `storlab run --diskspd "ARGS"`,
//! `storlab import PROFILE.xml`, `storlab run PROFILE.xml`. Both are read into one model
//! (time spans of targets with their parameters: `args.rs` reads a command line, `xml.rs` a
//! profile), which `render.rs` writes as a storlab job. DiskSpd's threads of a target become one
//! `[[worker]]` with `count` (each thread its own sequential position, as in DiskSpd),
//! its outstanding I/Os per thread per target the `queue_depth`; several time spans run one
//! after another: `group = N` and `[cycle] group = [...]`. Every option or element is
//! converted, accepted as having no effect in storlab (a note in the job), or unsupported:
//! listed with where it was written, an error unless `lenient`.

mod args;
mod render;
mod xml;

use super::{Converted, ImportError, Options, Unsupported};
use std::path::{Path, PathBuf};

/// Converts the DiskSpd XML profile `text`, read from `path`.
pub(super) fn convert(path: &Path, text: &str, opts: &Options) -> Result<Converted, ImportError> {
    let file = path.display().to_string();
    let mut out = Out::default();
    let spans = xml::read(&file, text, &mut out, &Given::default())?;
    finish(
        &format!("the DiskSpd profile {file}"),
        &file,
        spans,
        out,
        opts,
    )
}

/// Converts a DiskSpd command line (`-b8K -d60 -o4 -t2 -r -w30 -Sh D:\\test.dat`), as given
/// to `storlab run --diskspd`; one that runs a profile (`-d60 -Xprofile.xml first.bin`)
/// converts the profile with what the line gives it.
pub(super) fn convert_args(args: &str, opts: &Options) -> Result<Converted, ImportError> {
    let mut out = Out::default();
    if let Some(given) = args::profile_call(args, &mut out)? {
        if has_drive(&given.profile) {
            return Err(ImportError::Read(format!(
                "the DiskSpd command line, -X{}: a Windows path; give the profile's path on this system (-X/path/to/profile.xml, or relative to the current directory)",
                given.profile
            )));
        }
        let path = Path::new(&given.profile);
        let text = crate::input::read_text(path, crate::input::Kind::JobFile).map_err(|e| {
            ImportError::Read(format!(
                "the DiskSpd command line, -X{}: the profile {}",
                given.profile, e.why
            ))
        })?;
        let spans = xml::read(&given.profile, &text, &mut out, &given)?;
        let what = format!(
            "the DiskSpd profile {} (-X of a command line)",
            given.profile
        );
        return finish(&what, "the DiskSpd command line", spans, out, opts);
    }
    let span = args::read(args, &mut out)?;
    finish(
        "a DiskSpd command line",
        "the DiskSpd command line",
        vec![span],
        out,
        opts,
    )
}

fn finish(
    what: &str,
    name: &str,
    spans: Vec<Span>,
    mut out: Out,
    opts: &Options,
) -> Result<Converted, ImportError> {
    let threads: u64 = spans.iter().map(Span::threads).sum();
    if threads > crate::job::MAX_WORKERS as u64 {
        return Err(ImportError::Read(format!(
            "{}: {threads} threads in all (every target's threads, in every time span); storlab runs at most {} workers: use fewer threads or targets, or convert the time spans apart",
            spans[0].at,
            crate::job::MAX_WORKERS
        )));
    }
    let toml = render::render(what, &spans, &mut out, opts);
    if out.more > 0 {
        out.unsupported.push(Unsupported {
            at: spans[0].at.clone(),
            option: "...".into(),
            why: format!("{} more, not listed", out.more),
        });
    }
    if !out.unsupported.is_empty() && !opts.lenient {
        return Err(ImportError::Unsupported(out.unsupported, name.to_string()));
    }
    Ok(Converted {
        toml,
        left_out: out.unsupported,
        read: out.read,
    })
}

/// What a command line that runs a profile (`-Xprofile.xml`) gives it: DiskSpd lets `-d`,
/// `-W`, `-C` and `-z` set every time span's, and the line's targets take the places of the
/// profile's template paths `*1`, `*2`, ... in order.
#[derive(Debug, Default)]
struct Given {
    /// The profile's path, as written after `-X`.
    profile: String,
    duration: Option<u64>,
    warmup: Option<u64>,
    cooldown: Option<u64>,
    seed: Option<u64>,
    /// The line's targets, each with its argument's number (from 1).
    targets: Vec<(String, usize)>,
}

/// Time spans a profile may hold (DiskSpd runs each one after the other).
const MAX_SPANS: usize = 256;
/// Threads DiskSpd's `-t`, `-F`, `ThreadsPerFile` or `ThreadCount` may ask for.
const MAX_THREADS: u32 = crate::job::MAX_WORKERS as u32;
/// Outstanding I/Os per thread (storlab's queue depth holds at most this many).
const MAX_REQUESTS: u32 = 32768;

/// One time span: a DiskSpd run of its targets, for its duration.
#[derive(Debug, Clone)]
struct Span {
    /// Where it was written (`profile.xml:3`, `command line`).
    at: String,
    /// What was written there, for the job's comment: the command line's options, or
    /// `<TimeSpan>`.
    source: String,
    /// From a profile (its elements' names in comments), not a command line (its options').
    xml: bool,
    /// Measured seconds (`-d`, `Duration`; DiskSpd's default 10).
    duration: u64,
    /// Seconds of warm-up (`-W`, `Warmup`; DiskSpd's default 5).
    warmup: u64,
    /// Seconds of cool-down (`-C`, `Cooldown`; DiskSpd's default 0).
    cooldown: u64,
    /// `-z`, `RandSeed`.
    seed: Option<u64>,
    /// `-D`, `IoBucketDuration`: the statistics interval, ms.
    interval_ms: Option<u64>,
    /// `-F`, `ThreadCount`: threads that each drive every target (else per target, `-t`).
    total_threads: Option<u32>,
    /// `-O`, the span's `RequestCount`: outstanding I/Os per thread over all targets.
    thread_requests: Option<u32>,
    /// `-a`, `Affinity`: CPUs the threads go to, round-robin in thread order.
    cpus: Option<Vec<usize>>,
    /// Where the affinity was written.
    cpus_at: String,
    targets: Vec<Target>,
}

impl Span {
    /// A span with DiskSpd's defaults (10 s measured after 5 s of warm-up), written at `at`.
    fn new(at: String, source: String, xml: bool) -> Span {
        Span {
            at,
            source,
            xml,
            duration: 10,
            warmup: 5,
            cooldown: 0,
            seed: None,
            interval_ms: None,
            total_threads: None,
            thread_requests: None,
            cpus: None,
            cpus_at: String::new(),
            targets: Vec::new(),
        }
    }

    /// The storlab workers (threads) the span makes.
    fn threads(&self) -> u64 {
        if let (Some(f), Some(_)) = (self.total_threads, self.thread_requests) {
            return u64::from(f);
        }
        (self.targets.iter())
            .map(|t| match self.total_threads {
                _ if t.params.interlocked && t.params.random.is_none() => 1,
                Some(f) => u64::from(f),
                None => u64::from(t.params.threads),
            })
            .sum()
    }
}

/// A target of a time span, with its parameters.
#[derive(Debug, Clone)]
struct Target {
    /// Where it was written.
    at: String,
    /// As DiskSpd names it: a path, `#1`, `E:`, `*1`.
    name: String,
    params: Params,
    /// `<Weight>`: its share of each thread's I/Os with a span's `ThreadCount` and
    /// `RequestCount` (`None`: not written, DiskSpd's default 1).
    weight: Option<u32>,
    /// `<ThreadTargets>`: the threads (numbered from 0) that use it, each with its weight
    /// there (0: the target's); empty: every thread.
    threads: Vec<(u32, u32)>,
}

/// How DiskSpd drives one target.
#[derive(Debug, Clone, PartialEq)]
struct Params {
    /// `-b`, `BlockSize` (default 64 KiB).
    block: u64,
    /// `-B`, `BaseFileOffset`.
    base: u64,
    /// `-B base:length`.
    length: Option<u64>,
    /// `-f`, `MaxFileSize`: the offset I/O stays below.
    max: Option<u64>,
    /// Share of random I/Os, percent (`-r` alone: 100; `-rs`, `RandomRatio`); `None`:
    /// sequential.
    random: Option<f64>,
    /// `-r<align>`, `Random`: offsets of random I/Os are multiples of it.
    align: Option<u64>,
    /// `-rdpct`, `Distribution/Percent`: storlab's `zoned:...`.
    zones: Option<String>,
    /// `-si`, `InterlockedSequential`: the threads share one sequential stream.
    interlocked: bool,
    /// `-s<stride>`, `StrideSize`: sequential I/O moves this far each time (`None`: the
    /// block size).
    stride: Option<u64>,
    /// `-T`, `ThreadStride`: thread k's sequential stream starts k times this far in.
    thread_stride: u64,
    /// `-w`, `WriteRatio`: percent of writes.
    write: f64,
    /// `-o`, `RequestCount`: outstanding I/Os per thread on this target (default 2).
    requests: u32,
    /// `-t`, `ThreadsPerFile` (default 1).
    threads: u32,
    /// `-g`, `Throughput`: I/Os a second per thread on this target.
    rate_iops: Option<f64>,
    /// `-j`, `ThinkTime`: ms a thread waits after each I/O (bursts of one).
    think_ms: Option<u64>,
    /// `-c`, `FileSize`: create the file at this size.
    size: Option<u64>,
    /// `-Su`, `DisableOSCache`: no page cache (O_DIRECT).
    uncached: bool,
    /// `-Z<size>,<file>`, `<RandomDataSource>` with a `<FilePath>`: writes are windows of a
    /// buffer of this many bytes filled from the file (its name as DiskSpd has it).
    source: Option<(u64, String)>,
    /// `-Sw`, `WriteThrough`: every write durable (O_DSYNC).
    write_through: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            block: 64 << 10,
            base: 0,
            length: None,
            max: None,
            random: None,
            align: None,
            zones: None,
            interlocked: false,
            stride: None,
            thread_stride: 0,
            write: 0.0,
            requests: 2,
            threads: 1,
            rate_iops: None,
            think_ms: None,
            size: None,
            uncached: false,
            source: None,
            write_through: false,
        }
    }
}

/// What the conversion collects while it goes.
#[derive(Default, Debug)]
struct Out {
    unsupported: Vec<Unsupported>,
    /// Files read besides the profile or line (a write-data file).
    read: Vec<PathBuf>,
    /// Unsupported beyond [`MAX_LISTED`], counted only.
    more: usize,
    notes: Vec<String>,
    /// The notes already said (each is said once; a set, so that a file of thousands of
    /// targets, each with its note, takes time in proportion to them).
    said: std::collections::HashSet<String>,
}

/// Unsupported options or elements listed at most (a file of thousands has one mistake made
/// many times).
const MAX_LISTED: usize = 1000;

impl Out {
    fn bad(&mut self, at: &str, option: &str, why: impl Into<String>) {
        if self.unsupported.len() >= MAX_LISTED {
            self.more += 1;
            return;
        }
        self.unsupported.push(Unsupported {
            at: at.to_string(),
            option: option.to_string(),
            why: why.into(),
        });
    }

    /// A note, once.
    fn note(&mut self, note: String) {
        if self.said.insert(note.clone()) {
            self.notes.push(note);
        }
    }
}

/// Why zero-filled writes (`-Z`, `<Pattern>zero`) are refused.
const ZERO_WHY: &str = "zero-filled writes: every sector storlab writes carries its own header, so it cannot write zeros (they compress and deduplicate to nothing on arrays that reduce data); for data that reduces, drop them and set [data] compress (up to 8:1) and dedupe";

/// `-Z<size>`, `<RandomDataSource>`: DiskSpd's buffer of random data, noted.
fn random_buffer_note(out: &mut Out, what: &str) {
    out.note(format!("{what}: storlab writes unique, incompressible blocks, not windows of one random buffer of this size (DiskSpd takes each write from a random place in it, 512-byte aligned without caching: the same to a drive, but an array that deduplicates finds at most one distinct unit per 512 bytes of the buffer in DiskSpd's data, and none in storlab's)"));
}

/// `-Z` and `WriteBufferContent`: what DiskSpd writes.
fn write_buffer_note(out: &mut Out, what: &str) {
    out.note(format!(
        "{what}: storlab writes unique, incompressible blocks (as DiskSpd's -Zr); arrays that compress or deduplicate reduce them less than DiskSpd's repeating buffer"
    ));
}

/// Bytes of a write-data file storlab measures (DiskSpd fills its buffer from the file's start).
const SOURCE_SAMPLE: u64 = 32 << 20;

/// The job's `[data] compress` for the targets' write-data files (`-Z<size>,<file>`): each
/// target that writes takes its data from the same file (storlab's `[data]` is the job's); the
/// file, placed as a target is, is sampled from its start (at most its buffer's size, as
/// DiskSpd fills the buffer) and deflated in storlab's calibration unit. `None`: no file, or
/// one that does not compress (storlab's default data); an error is listed.
fn source_compress(spans: &[Span], out: &mut Out, opts: &Options) -> Option<(f64, String)> {
    let writers: Vec<&Target> = (spans.iter().flat_map(|s| &s.targets))
        .filter(|t| t.params.write > 0.0)
        .collect();
    let (first, rest) = writers.split_first()?;
    let (size, name) = first.params.source.clone()?;
    if let Some(t) = rest.iter().find(|t| t.params.source != first.params.source) {
        let why = "its writes' data differs from the first target's (-Z, <WriteBufferContent>); storlab's [data] is the job's: give every target that writes the same";
        out.bad(&t.at, &format!("target {}", t.name), why);
        return None;
    }
    let Some(path) = local(&name, opts) else {
        let why =
            "a Windows path: place it with --map (a whole path, or its drive), as a target is";
        out.bad(&first.at, &format!("write-data file {name}"), why);
        return None;
    };
    out.read.push(path.clone());
    let bytes = match crate::input::read_prefix(
        &path,
        crate::input::Kind::WriteData,
        size.min(SOURCE_SAMPLE),
    ) {
        Ok(b) => b,
        Err(e) => {
            out.bad(
                &first.at,
                &format!("write-data file {name}"),
                format!("{}: {}", path.display(), e.unnamed()),
            );
            return None;
        }
    };
    let unit = crate::job::data::CALIBRATION_UNIT;
    let Some(ratio) = crate::job::data::compress_ratio(&bytes, unit) else {
        let why = format!(
            "{}: {} bytes, less than the {} KiB storlab measures compression in",
            path.display(),
            bytes.len(),
            unit >> 10
        );
        out.bad(&first.at, &format!("write-data file {name}"), why);
        return None;
    };
    let max = crate::job::data::MAX_COMPRESS;
    let asked = ratio.min(max);
    let capped = if ratio > max {
        format!(", more than storlab's {max}:1: {max}:1 asked")
    } else {
        String::new()
    };
    out.note(format!("writes from {name} ({}): storlab writes its own data, as compressible as the file's first {} bytes ({ratio:.2}:1 deflated in {} KiB units{capped}), not the file's bytes; DiskSpd takes each write from a random place in that buffer, so an array that deduplicates also finds at most one distinct unit per 512 bytes of it in DiskSpd's data", path.display(), bytes.len(), unit >> 10));
    (asked >= 1.05).then(|| {
        (
            asked,
            format!("{} ({ratio:.2}:1 in {} KiB units)", name, unit >> 10),
        )
    })
}

/// Where DiskSpd's target `name` goes: its `--map` path; for `D:\dir\f.dat`, the `--map` of its
/// drive `D:` joined with `dir/f.dat`; a path of this system's shape (`/mnt/f.dat`,
/// `f.dat`, `dir\f.dat` read as `dir/f.dat`) as it is; anything else (`#1`, `E:`, `D:\f.dat`
/// unmapped, `\\server\share\f.dat`, `*1`) a new file in the current directory (noted).
fn place(name: &str, index: usize, opts: &Options, notes: &mut Vec<String>) -> PathBuf {
    local(name, opts)
        .unwrap_or_else(|| opts.place(name, &format!("diskspd-target{}.dat", index + 1), notes))
}

/// Whether `name` starts with a Windows drive (`D:`).
fn has_drive(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Where DiskSpd's `name` is on this system: its `--map`, its drive's `--map` joined with the
/// rest, or a path of this system's shape as it is; `None` for a Windows name not mapped.
fn local(name: &str, opts: &Options) -> Option<PathBuf> {
    if let Some(p) = opts.mapped(name) {
        return Some(p.to_path_buf());
    }
    let drive = has_drive(name);
    if drive {
        if let Some(root) = opts.mapped(&name[..2]) {
            let rest = name[2..].trim_start_matches(['\\', '/']);
            return Some(if rest.is_empty() {
                root.to_path_buf()
            } else {
                root.join(rest.replace('\\', "/"))
            });
        }
    }
    let windows_only = drive
        || name.starts_with('#')
        || name.starts_with('*')
        || name.starts_with("\\\\")
        || name.starts_with('\\');
    (!windows_only).then(|| PathBuf::from(name.replace('\\', "/")))
}

#[cfg(test)]
mod tests;
