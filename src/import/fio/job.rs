//! One fio job (its options with `[global]`'s merged in) as a storlab worker: the settings
//! storlab keeps for the whole job, the shape of its I/O, its pace, its files and its access
//! entry.

use super::features::{self, from};
use super::{Global, JobOpts, Opt, Out, Worker, duration, size};
use crate::import::Options;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Converts one fio job into a worker (what cannot be converted is in `out`; it is left at
/// fio's defaults: 4 KiB sequential reads, one clone, one I/O in flight).
#[allow(clippy::too_many_arguments)]
pub(super) fn convert_job<'a>(
    job: &JobOpts<'a>,
    name: &str,
    class: &str,
    group: u32,
    g: &mut Option<Global>,
    paths: &mut HashMap<String, String>,
    opts: &Options,
    out: &mut Out,
) -> Worker {
    let mut s = shape(job, out);
    settings(job, g, &s, out);
    let rate = pace(job, &mut s, out);
    let mut t = String::new();
    if s.count > 1 {
        let _ = writeln!(t, "count = {}", s.count);
    }
    let think_time = think(job, rate.is_some(), out);
    // With a think time, one I/O at a time (see `think`).
    let depth = if think_time.is_some() { 1 } else { s.depth };
    let _ = writeln!(t, "queue_depth = {depth}");
    if let Some(r) = rate {
        let _ = writeln!(t, "rate_iops = {}", (r * 1000.0).round() / 1000.0);
        // fio's rate_process=poisson: exponentially distributed gaps, storlab's poisson.
        match job.value("rate_process") {
            Some("poisson") => t.push_str("arrivals = \"poisson\"\n"),
            Some("linear") | None => {}
            Some(_) => {
                if let Some(o) = job.get("rate_process") {
                    out.bad(o, "rate_process", "linear or poisson");
                }
            }
        }
    }
    if let Some(d) = think_time {
        let _ = writeln!(t, "think_time = \"{d}\"");
    }
    floor(job, &s, &mut t, out);
    let engine_async = g.as_ref().and_then(|g| g.engine) == Some("io_uring");
    features::worker_keys(job, engine_async, &mut t, out);
    let (targets, file_size) = files(job, name, s.count, paths, opts, out);
    let names: Vec<String> = (targets.iter())
        .map(|(n, _, _, _)| toml::Value::String(n.clone()).to_string())
        .collect();
    let _ = writeln!(t, "targets = [{}]", names.join(", "));
    if job.value("filename").is_none() && s.count > 1 {
        t.push_str("one_target_each = true\n");
    }
    // How much: without time_based fio stops after the data (size, or io_size) once.
    if !job.flag("time_based") {
        let io_bytes = (job.get("io_size").or_else(|| job.get("io_limit")))
            .and_then(|o| o.value.as_deref().and_then(size))
            .or(file_size);
        let number_ios = job.value("number_ios").and_then(|v| v.parse::<u64>().ok());
        let limit = number_ios.or(io_bytes.map(|b| (b as f64 / s.mean_bs).ceil() as u64));
        // loops: fio does the job's I/O that many times over.
        let loops: u32 = number(job, "loops", 1..=1_000_000, 1, "a count of 1 or more", out);
        if let Some(l) = limit.filter(|l| *l > 0) {
            let l = l.saturating_mul(u64::from(loops));
            let _ = writeln!(t, "io_limit = {l}");
        }
    } else if job.get("loops").is_some() {
        out.note("loops: no effect with time_based (the job runs for its runtime)");
    }
    entries(job, class, &s, &mut t, out);
    // Read only to be listed when unsupported.
    for key in [
        "stonewall",
        "wait_for_previous",
        "name",
        "description",
        "group_reporting",
    ] {
        let _ = job.get(key);
    }
    Worker {
        name: name.to_string(),
        clones: s.count,
        toml: t,
        targets,
        group,
        sources: String::new(),
        report_group: 0,
        exit_what: None,
        flow: None,
    }
}

/// The settings fio lets the jobs of one file differ in and storlab sets for the whole job
/// (engine, page cache, duration, ramp, batch): the first job's, which the others must share.
/// What a job does not say is fio's default: psync, through the page cache (direct=0).
/// Verification, steady state, the latency target and data reduction are job-wide in storlab
/// too ([`features::wide`]).
fn settings(job: &JobOpts<'_>, g: &mut Option<Global>, s: &Shape, out: &mut Out) {
    let text = features::wide(job, s.block_sizes.is_none() && s.write_sizes.is_none(), out);
    let mut wide = Global {
        engine: Some("psync"),
        buffered: Some(true),
        extra: (text.lines())
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n"),
        ..Global::default()
    };
    if let Some(o) = job.get("ioengine") {
        let v = o.value.as_deref().unwrap_or("");
        if matches!(v, "libaio" | "posixaio")
            && !out.notes.iter().any(|n| n.starts_with("ioengine"))
        {
            out.notes.push(format!(
                "ioengine={v}: run with io_uring, storlab's asynchronous engine"
            ));
        }
        match v {
            "io_uring" | "libaio" | "posixaio" => wide.engine = Some("io_uring"),
            "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => wide.engine = Some("psync"),
            "null" => wide.engine = Some("null"),
            _ => out.bad(o, "ioengine", "storlab's engines are io_uring (for io_uring, libaio, posixaio), psync (for psync, sync, pvsync, pvsync2, vsync) and null"),
        }
    }
    if let Some(d) = job.value("direct") {
        wide.buffered = Some(d == "0");
    }
    if let Some(b) = job.value("buffered") {
        wide.buffered = Some(b != "0");
    }
    for (key, slot) in [
        ("runtime", &mut wide.duration),
        ("ramp_time", &mut wide.ramp),
    ] {
        if let Some(o) = job.get(key) {
            match o.value.as_deref().and_then(duration) {
                Some(d) => *slot = Some(d),
                None => out.bad(
                    o,
                    key,
                    "not a time fio and storlab both read (60, 60s, 500ms, 2m)",
                ),
            }
        }
    }
    for key in ["iodepth_batch_submit", "iodepth_batch"] {
        if let Some(o) = job.get(key) {
            match o.value.as_deref().and_then(|v| v.parse::<u32>().ok()) {
                Some(b) if b >= 1 => wide.batch = Some(b),
                _ => out.bad(o, key, "a count of I/Os, at least 1"),
            }
        }
    }
    match g {
        None => {
            for key in super::SETTINGS {
                if let Some(o) = job.opts.get(key) {
                    out.top.push_str(&from(o, key));
                }
            }
            out.extra = text;
            *g = Some(wide);
            return;
        }
        Some(first) if *first == wide => return,
        Some(_) => {}
    }
    let keys = [
        "ioengine",
        "direct",
        "buffered",
        "runtime",
        "ramp_time",
        "iodepth_batch_submit",
        "iodepth_batch_complete_min",
        "iodepth_batch_complete_max",
        "hipri",
        "sqthread_poll",
        "verify",
        "ss",
        "latency_target",
        "buffer_compress_percentage",
        "dedupe_percentage",
    ];
    if let Some(o) = keys.iter().find_map(|k| job.opts.get(k).copied()) {
        out.bad(o, "(settings)", "its engine, direct/buffered, runtime, ramp_time, batch, completion batch, io_uring options, verify, ss, latency_target or data reduction differ from the jobs before it; storlab runs one of each per job file: give every fio job the same, or convert them apart");
    }
}

/// A job's I/O: clones, sizes, mix, depth.
#[derive(Clone)]
struct Shape {
    count: u32,
    bs: u64,
    block_sizes: Option<Vec<(u64, u32)>>,
    /// Writes' own sizes when they differ from the reads' (fio's `bs=R,W`, `bssplit=R,W`).
    write_sizes: Option<super::sizes::Sizes>,
    min_bs: f64,
    mean_bs: f64,
    read: f64,
    random: f64,
    depth: u32,
    /// Sequential I/O: bytes skipped after each I/O (negative: back), fio's `rw=read:N`.
    gap: i64,
    /// Alignment of random offsets (`blockalign`), bytes.
    align: Option<u64>,
}

/// An option's value as a number in `range`, or `default` (and the option listed: `why`).
fn number<T: std::str::FromStr + PartialOrd>(
    job: &JobOpts<'_>,
    key: &'static str,
    range: std::ops::RangeInclusive<T>,
    default: T,
    why: &str,
    out: &mut Out,
) -> T {
    let Some(o) = job.opts.get(key).copied() else {
        return default;
    };
    let _ = job.get(key);
    match o.value.as_deref().and_then(|v| v.trim().parse::<T>().ok()) {
        Some(n) if range.contains(&n) => n,
        _ => {
            out.bad(o, key, why);
            default
        }
    }
}

/// `rw`/`readwrite`: the read share, the random share, and the gap of `:N` (fio's default:
/// rw=read).
fn rw(job: &JobOpts<'_>, out: &mut Out) -> (f64, f64, i64) {
    let (mut read, mut random) = (100.0, 0.0);
    let mut gap = 0i64;
    for key in ["rw", "readwrite"] {
        if let Some(o) = job.get(key) {
            let v = o.value.as_deref().unwrap_or("");
            let (kind, modifier) = match v.split_once(':') {
                Some((k, m)) => (k.trim(), Some(m.trim())),
                None => (v.trim(), None),
            };
            match kind {
                "read" => (read, random) = (100.0, 0.0),
                "write" => (read, random) = (0.0, 0.0),
                "randread" => (read, random) = (100.0, 100.0),
                "randwrite" => (read, random) = (0.0, 100.0),
                "rw" | "readwrite" => (read, random) = (50.0, 0.0),
                "randrw" => (read, random) = (50.0, 100.0),
                _ => out.bad(o, key, "storlab converts read, write, randread, randwrite, rw/readwrite and randrw (no trim)"),
            }
            match modifier {
                None => {}
                Some(m) if random > 0.0 && m != "1" => {
                    out.bad(
                        o,
                        key,
                        "storlab draws a new random offset for every I/O (no `:N` on random I/O)",
                    );
                }
                Some(_) if random > 0.0 => {}
                Some(m) => {
                    let (neg, n) = match m.strip_prefix('-') {
                        Some(n) => (true, n),
                        None => (false, m),
                    };
                    match size(n).and_then(|b| i64::try_from(b).ok()) {
                        Some(b) => gap = if neg { -b } else { b },
                        None => out.bad(o, key, "`:N`: bytes to skip after each I/O (negative: back), e.g. read:8k or read:-8k"),
                    }
                }
            }
        }
    }
    (read, random, gap)
}

fn shape(job: &JobOpts<'_>, out: &mut Out) -> Shape {
    let count = number(job, "numjobs", 1..=4096, 1, "a count of 1 to 4096", out);
    let depth = number(
        job,
        "iodepth",
        1..=32768,
        1,
        "1 to 32768 I/Os in flight",
        out,
    );
    let (reads, write_sizes) = super::sizes::of(job, out);
    let (bs, block_sizes) = (reads.bs, reads.mix.clone());
    if let Some(o) = job.get("kb_base") {
        if o.value.as_deref() != Some("1024") {
            out.bad(o, "kb_base", "sizes are read 1024-based (kb_base=1024)");
        }
    }
    let mut align = None;
    for key in ["blockalign", "ba"] {
        if let Some(o) = job.get(key) {
            let v = o.value.as_deref().unwrap_or("");
            let parts: Vec<Option<u64>> =
                v.split(',').filter(|p| !p.is_empty()).map(size).collect();
            match parts.as_slice() {
                [Some(a), rest @ ..] if rest.iter().all(|r| *r == Some(*a)) && *a > 0 => {
                    align = Some(*a)
                }
                _ => out.bad(o, key, "one alignment for reads and writes, in bytes"),
            }
        }
    }
    let (mut read, mut random, gap) = rw(job, out);
    if let Some(o) = job.get("rw_sequencer") {
        let v = o.value.as_deref().unwrap_or("").trim();
        if !v.starts_with("sequential") {
            out.bad(o, "rw_sequencer", "storlab converts sequential (identical repeats one offset, which storlab does not)");
        }
    }
    if let Some(o) = job.get("percentage_random") {
        let v = o.value.as_deref().unwrap_or("");
        let mut parts = v.split(',').map(str::trim).filter(|p| !p.is_empty());
        let first = parts
            .next()
            .and_then(|p| p.trim_end_matches('%').parse::<f64>().ok());
        match first {
            Some(p)
                if (0.0..=100.0).contains(&p)
                    && parts.all(|q| q.trim_end_matches('%').parse::<f64>().ok() == Some(p)) =>
            {
                // fio: it applies to random jobs only.
                if random > 0.0 {
                    random = p;
                }
            }
            _ => out.bad(
                o,
                "percentage_random",
                "a percentage from 0 to 100, one for reads and writes",
            ),
        }
    }
    read = mix(job, read, out);
    let (mut min_bs, mut mean_bs) = reads.min_mean();
    if let Some(w) = &write_sizes {
        // Each direction's own sizes, in the job's mix (the smallest of those it does).
        let (w_min, w_mean) = w.min_mean();
        let r = read.clamp(0.0, 100.0) / 100.0;
        mean_bs = mean_bs * r + w_mean * (1.0 - r);
        min_bs = [(min_bs, r > 0.0), (w_min, r < 1.0)]
            .into_iter()
            .filter_map(|(b, used)| used.then_some(b))
            .fold(f64::MAX, f64::min);
    }
    Shape {
        count,
        bs,
        block_sizes,
        write_sizes,
        min_bs,
        mean_bs,
        read,
        random,
        depth,
        gap,
        align,
    }
}

/// The share of reads `rwmixread`, `rwmixwrite` or both (adding up to 100) give; `read` when
/// neither is written.
fn mix(job: &JobOpts<'_>, read: f64, out: &mut Out) -> f64 {
    let mut read = read;
    if job.opts.contains_key("rwmixread") {
        read = number(
            job,
            "rwmixread",
            0.0..=100.0,
            read,
            "a percentage, 0 to 100",
            out,
        );
        // Both given (fio's jesd219 and fio-rand-RW examples): fio takes the two together.
        if job.opts.contains_key("rwmixwrite") {
            let write = number(
                job,
                "rwmixwrite",
                0.0..=100.0,
                100.0 - read,
                "a percentage, 0 to 100",
                out,
            );
            if (read + write - 100.0).abs() > 1e-9 {
                if let Some(o) = job.get("rwmixwrite") {
                    out.bad(
                        o,
                        "rwmixwrite",
                        format!(
                            "rwmixread={read} and rwmixwrite={write} add up to {}, not 100",
                            read + write
                        ),
                    );
                }
            }
        }
    } else if job.opts.contains_key("rwmixwrite") {
        read = 100.0
            - number(
                job,
                "rwmixwrite",
                0.0..=100.0,
                100.0 - read,
                "a percentage, 0 to 100",
                out,
            );
    }
    read
}

/// The job's rate of all I/Os (`rate_iops` or `rate`), adjusting the read share. fio limits
/// reads and writes each to their rate (one value: the same for both), whatever rwmixread
/// says: a mixed job at rate_iops=100 does 100 reads and 100 writes a second; storlab's rate
/// is of all I/Os, so it is their sum, and the read share theirs. fio paces by bytes:
/// rate_iops is rate_iops × the smallest block size a second, so with several sizes it is
/// fewer I/Os (that bandwidth over the mean size).
fn pace(job: &JobOpts<'_>, s: &mut Shape, out: &mut Out) -> Option<f64> {
    let per_direction = |o: &Opt, key: &str, out: &mut Out| -> Option<(f64, f64)> {
        let v = o.value.as_deref().unwrap_or("");
        let parts: Vec<Option<f64>> = v
            .split(',')
            .map(|p| match key {
                "rate" => size(p).map(|b| b as f64 / s.mean_bs),
                _ => p
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .map(|r| r * s.min_bs / s.mean_bs),
            })
            .collect();
        match parts.as_slice() {
            [Some(r)] if *r > 0.0 => Some((*r, *r)),
            [Some(r), Some(w), ..] if *r > 0.0 && *w > 0.0 => Some((*r, *w)),
            _ => {
                out.bad(o, key, "a rate for reads and writes (one value, or reads,writes), above 0; storlab cannot leave one direction unlimited");
                None
            }
        }
    };
    let (r, w) = match (job.get("rate_iops"), job.get("rate")) {
        (Some(o), _) | (None, Some(o)) if s.write_sizes.is_some() => {
            let key = if job.opts.contains_key("rate_iops") {
                "rate_iops"
            } else {
                "rate"
            };
            out.bad(o, key, "a rate with the reads' and writes' own sizes (bs=R,W), which fio paces each by its own bytes: not converted");
            return None;
        }
        (Some(o), _) => per_direction(o, "rate_iops", out)?,
        (None, Some(o)) => per_direction(o, "rate", out)?,
        (None, None) => return None,
    };
    Some(match s.read {
        p if p >= 100.0 => r,
        p if p <= 0.0 => w,
        _ => {
            s.read = r * 100.0 / (r + w);
            r + w
        }
    })
}

/// The job's floor on its rate (`rate_iops_min`, or `ratemin` in bytes a second, judged over
/// each `ratecycle`) as storlab's floor on all its I/Os (`min_iops`). fio judges reads and
/// writes each against their own floor; the job's mix is fixed, so reads are its read share of
/// all I/Os, and all I/Os must reach the larger of each direction's floor over its share.
fn floor(job: &JobOpts<'_>, s: &Shape, t: &mut String, out: &mut Out) {
    let (o, key) = match (job.get("rate_iops_min"), job.get("ratemin")) {
        (Some(o), _) => (o, "rate_iops_min"),
        (None, Some(o)) => (o, "ratemin"),
        (None, None) => {
            if job.get("ratecycle").is_some() {
                out.note("ratecycle: no effect without rate_iops_min or ratemin (storlab paces rate and rate_iops exactly, not averaged over a cycle)");
            }
            return;
        }
    };
    if s.write_sizes.is_some() {
        return out.bad(
            o,
            key,
            "a floor with the reads' and writes' own sizes (bs=R,W): not converted",
        );
    }
    let v = o.value.as_deref().unwrap_or("");
    let parts: Vec<Option<f64>> = v
        .split(',')
        .map(|p| match (p.trim(), key) {
            ("", _) => Some(0.0),
            (p, "ratemin") => size(p).map(|b| b as f64 / s.mean_bs),
            (p, _) => p.parse::<f64>().ok().filter(|r| r.is_finite() && *r >= 0.0),
        })
        .collect();
    let (r, w) = match parts.as_slice() {
        [Some(r)] => (*r, *r),
        [Some(r), Some(w), ..] => (*r, *w),
        _ => {
            out.bad(
                o,
                key,
                "a floor for reads and writes (one value, or reads,writes), 0 or above",
            );
            return;
        }
    };
    let read = s.read / 100.0;
    let all = [(r, read), (w, 1.0 - read)]
        .iter()
        .filter(|(f, share)| *f > 0.0 && *share > 0.0)
        .map(|(f, share)| f / share)
        .fold(0.0, f64::max);
    if all <= 0.0 {
        return;
    }
    let _ = writeln!(
        t,
        "{}# fio judges reads and writes each; with this job's mix, all its I/Os must reach this\nmin_iops = {}",
        from(o, key),
        (all * 1000.0).round() / 1000.0
    );
    if let Some(c) = job.get("ratecycle") {
        let v = c.value.as_deref().unwrap_or("").trim();
        // fio's ratecycle is in milliseconds unless it names a unit.
        let given = if v.bytes().all(|b| b.is_ascii_digit()) {
            format!("{v}ms")
        } else {
            v.to_string()
        };
        match duration(&given) {
            Some(d) => {
                let _ = writeln!(t, "{}rate_cycle = \"{d}\"", from(c, "ratecycle"));
            }
            None => out.bad(
                c,
                "ratecycle",
                "a time of 10 ms or more (milliseconds without a unit)",
            ),
        }
    }
}

/// A target: its name, path, size and the comment naming its source line.
pub(super) type TargetOf = (String, String, Option<u64>, Option<String>);

/// The job's files (`filename`, in `directory`; without one, fio's own names, one file per
/// clone) as targets, a file other jobs use being their target; and the file size.
fn files(
    job: &JobOpts<'_>,
    name: &str,
    count: u32,
    paths: &mut HashMap<String, String>,
    opts: &Options,
    out: &mut Out,
) -> (Vec<TargetOf>, Option<u64>) {
    let file_size = ["filesize", "size"].iter().find_map(|k| {
        let o = job.get(k)?;
        let v = o.value.as_deref().unwrap_or("");
        match size(v) {
            Some(s) if !v.ends_with('%') && s > 0 => Some(s),
            _ => {
                out.bad(
                    o,
                    k,
                    "a size in bytes, below 16 EiB (a percentage of a device is not converted)",
                );
                None
            }
        }
    });
    let dir = job.value("directory").map(PathBuf::from);
    let filename = job.get("filename");
    let files: Vec<String> = match filename.and_then(|o| o.value.as_deref()) {
        Some(f) => split_names(f),
        None => (0..count).map(|c| format!("{name}.{c}.0")).collect(),
    };
    let at = filename.map(|o| from(o, "filename"));
    let mut targets = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let p = match (opts.mapped(f), &dir) {
            (Some(m), _) => m.display().to_string(),
            (None, _) if windows_name(f) => {
                if let Some(o) = filename {
                    out.bad(o, "filename", format!("`{f}` is a Windows name: place it on this machine with --map \"{f}=PATH\""));
                }
                f.clone()
            }
            (None, Some(d)) if Path::new(f).is_relative() => d.join(f).display().to_string(),
            (None, _) => f.clone(),
        };
        let tname = match paths.get(&p) {
            Some(n) => n.clone(),
            None => {
                let n = if files.len() == 1 {
                    format!("{name}-file")
                } else {
                    format!("{name}-file{i}")
                };
                paths.insert(p.clone(), n.clone());
                n
            }
        };
        targets.push((tname, p, file_size, at.clone()));
    }
    (targets, file_size)
}

/// fio's `filename` list: names separated by `:`, a `\:` being a colon of the name (as in
/// `C\:\test`).
fn split_names(f: &str) -> Vec<String> {
    let mut names = vec![String::new()];
    let mut chars = f.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                if let Some(n) = names.last_mut() {
                    n.push(':');
                }
            }
            ':' => names.push(String::new()),
            c => {
                if let Some(n) = names.last_mut() {
                    n.push(c);
                }
            }
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// A Windows drive, device or path (`C:`, `C:\test`, `\\.\PhysicalDrive1`).
fn windows_name(f: &str) -> bool {
    let b = f.as_bytes();
    f.starts_with("\\\\") || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

/// The access entry: class, sizes, mix, distribution, offset, durability.
/// The job's access entries: one, or with the writes' own sizes in a mix of reads and
/// writes (`bs=R,W`), one of reads and one of writes, weighted by the mix (tenths of a percent),
/// as fio picks each I/O's direction, then its size for that direction.
fn entries(job: &JobOpts<'_>, class: &str, s: &Shape, t: &mut String, out: &mut Out) {
    let Some(w) = &s.write_sizes else {
        return access(job, class, s, t, out);
    };
    let writes = Shape {
        bs: w.bs,
        block_sizes: w.mix.clone(),
        ..s.clone()
    };
    match s.read {
        r if r >= 100.0 => access(job, class, s, t, out),
        r if r <= 0.0 => access(job, class, &writes, t, out),
        r => {
            for (shape, read, share) in [(s, 100.0, r), (&writes, 0.0, 100.0 - r)] {
                let one = Shape {
                    read,
                    ..shape.clone()
                };
                let mut entry = String::new();
                access(job, class, &one, &mut entry, out);
                let weight = (share * 10.0).round().max(1.0);
                t.push_str(&entry.replacen(
                    "[[worker.access]]\n",
                    &format!("[[worker.access]]\n# fio's bs=R,W: this direction's own sizes, {share}% of the I/Os\nweight = {weight}\n"),
                    1,
                ));
            }
        }
    }
}

fn access(job: &JobOpts<'_>, class: &str, s: &Shape, t: &mut String, out: &mut Out) {
    let _ = write!(
        t,
        "\n[[worker.access]]\nclass = {}\n",
        toml::Value::String(class.to_string())
    );
    match &s.block_sizes {
        Some(list) => {
            let parts: Vec<String> = list.iter().map(|(b, w)| format!("\"{b}\" = {w}")).collect();
            let _ = writeln!(t, "block_sizes = {{ {} }}", parts.join(", "));
        }
        None => {
            let _ = writeln!(t, "block_size = {}", s.bs);
        }
    }
    let _ = writeln!(t, "read = \"{}%\"\nrandom = \"{}%\"", s.read, s.random);
    // fio's random I/O visits each block once a pass (its random map) unless norandommap.
    let norandommap = job.flag("norandommap");
    let distribution = job.get("random_distribution").and_then(|o| {
        let v = o.value.as_deref().unwrap_or("random");
        if v.starts_with("zipf:") {
            Some(v.to_string())
        } else if let Some(zones) = v.strip_prefix("zoned:") {
            // A zone with its span left empty (`zoned:50/5:30/15:20/`) is the rest, as in fio.
            let given: f64 = zones
                .split(':')
                .filter_map(|z| z.split_once('/')?.1.trim().parse::<f64>().ok())
                .sum();
            let fixed: Vec<String> = zones
                .split(':')
                .map(|z| match z.split_once('/') {
                    Some((io, "")) => format!("{io}/{}", (100.0 - given).max(0.0)),
                    _ => z.to_string(),
                })
                .collect();
            Some(format!("zoned:{}", fixed.join(":")))
        } else {
            if v != "random" {
                out.bad(o, "random_distribution", "storlab converts random, zipf:THETA and zoned:... (no pareto, normal or zoned_abs)");
            }
            None
        }
    });
    match distribution {
        Some(d) => {
            let _ = writeln!(t, "distribution = {}", toml::Value::String(d));
        }
        None if s.random > 0.0 && !norandommap => t.push_str("distribution = \"shuffle\"\n"),
        None => {}
    }
    if let Some(a) = s.align {
        let _ = writeln!(t, "align = {a}");
    }
    if s.gap != 0 {
        let _ = writeln!(
            t,
            "# fio's rw=...:N: after each sequential I/O, skip N bytes (negative: back)\ngap = {}",
            s.gap
        );
    }
    if let Some(o) = job.get("offset") {
        match o.value.as_deref().and_then(size) {
            Some(off) => {
                let _ = writeln!(t, "offset = {off}");
            }
            None => out.bad(o, "offset", "a byte offset (a percentage is not converted)"),
        }
    }
    // fio's clones (numjobs) each start this much further than the one before.
    if let Some(o) = job.get("offset_increment") {
        match o.value.as_deref().and_then(size) {
            Some(0) => {}
            Some(inc) => {
                let _ = writeln!(t, "offset_increment = {inc}");
            }
            None => out.bad(
                o,
                "offset_increment",
                "bytes between clones' offsets (a percentage is not converted)",
            ),
        }
    }
    super::zones::zones(job, t, out);
    for key in ["fsync", "fdatasync"] {
        let n = number(job, key, 0..=u32::MAX, 0, "a count of writes", out);
        if n > 0 {
            let _ = writeln!(t, "fsync_every = {n}");
        }
    }
    // fio's atomic=1: writes with RWF_ATOMIC (O_DIRECT; resolve and the run check the rest).
    if job.flag("atomic") {
        t.push_str("atomic = true\n");
    }
    if let Some(o) = job.get("sync") {
        match o.value.as_deref().unwrap_or("1") {
            "0" | "none" => {}
            "1" | "sync" | "dsync" => t.push_str("sync = true\n"),
            _ => out.bad(o, "sync", "0, 1, sync or dsync"),
        }
    }
}

/// fio's `thinktime` (µs unless a unit says otherwise) as the worker's think time: fio stalls
/// the job that long after each I/O, and measured with fio 3.33 a job at iodepth 4 then does
/// as many I/Os a second as one at iodepth 1, so storlab runs one I/O at a time, each that
/// long after the previous one completed. `thinktime_blocks` other than 1, `thinktime_spin`
/// and `thinktime_iotime` are not converted.
fn think(job: &JobOpts<'_>, rate: bool, out: &mut Out) -> Option<String> {
    for key in ["thinktime_spin", "thinktime_iotime"] {
        if let Some(o) = job.get(key) {
            if o.value.as_deref() != Some("0") {
                out.bad(
                    o,
                    key,
                    "storlab's think time is a plain wait after each I/O (thinktime)",
                );
            }
        }
    }
    if let Some(o) = job.get("thinktime_blocks") {
        if o.value.as_deref() != Some("1") {
            out.bad(
                o,
                "thinktime_blocks",
                "storlab waits after every I/O (thinktime_blocks=1)",
            );
        }
    }
    let o = job.get("thinktime")?;
    let v = o.value.as_deref().unwrap_or("");
    let v = v.trim().to_ascii_lowercase();
    let units = [("us", 1.0), ("ms", 1e3), ("s", 1e6), ("m", 60e6)];
    let (num, scale) = (units.iter())
        .find_map(|(u, scale)| v.strip_suffix(u).map(|n| (n, *scale)))
        .unwrap_or((&v, 1.0));
    let us = num.trim().parse::<f64>().ok().map(|n| n * scale);
    match us {
        Some(n) if n > 0.0 && rate => {
            out.bad(
                o,
                "thinktime",
                "storlab does not pace a worker both by a rate and a think time",
            );
            None
        }
        Some(n) if n > 0.0 => Some(format!("{}us", n.round() as u64)),
        Some(n) if n >= 0.0 => None,
        _ => {
            out.bad(
                o,
                "thinktime",
                "a time (µs unless a unit says otherwise: 500, 2ms)",
            );
            None
        }
    }
}
