//! One fio job (its options with `[global]`'s merged in) as a storlab worker: the settings
//! storlab keeps for the whole job, the shape of its I/O, its pace, its files and its access
//! entry.

use super::{Global, JobOpts, Opt, Out, Worker, duration, size};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Converts one fio job into a worker (what cannot be converted is in `out`; it is left at
/// fio's defaults: 4 KiB sequential reads, one clone, one I/O in flight).
pub(super) fn convert_job<'a>(
    job: &JobOpts<'a>,
    name: &str,
    class: &str,
    group: u32,
    g: &mut Option<Global>,
    paths: &mut HashMap<String, String>,
    out: &mut Out,
) -> Worker {
    settings(job, g, out);
    let mut s = shape(job, out);
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
    }
    if let Some(d) = think_time {
        let _ = writeln!(t, "think_time = \"{d}\"");
    }
    let (targets, file_size) = files(job, name, s.count, paths, out);
    let names: Vec<String> = (targets.iter())
        .map(|(n, _, _)| toml::Value::String(n.clone()).to_string())
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
        if let Some(l) = limit.filter(|l| *l > 0) {
            let _ = writeln!(t, "io_limit = {l}");
        }
    }
    access(job, class, &s, &mut t, out);
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
    }
}

/// The settings fio lets the jobs of one file differ in and storlab sets for the whole job
/// (engine, page cache, duration, ramp, batch): the first job's, which the others must share.
/// What a job does not say is fio's default: psync, through the page cache (direct=0).
fn settings(job: &JobOpts<'_>, g: &mut Option<Global>, out: &mut Out) {
    let mut wide = Global {
        engine: Some("psync"),
        buffered: Some(true),
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
    ];
    if let Some(o) = keys.iter().find_map(|k| job.opts.get(k).copied()) {
        out.bad(o, "(settings)", "its engine, direct/buffered, runtime, ramp_time or batch differ from the jobs before it; storlab runs one engine, one page-cache mode and one duration per job file: give every fio job the same, or convert them apart");
    }
}

/// A job's I/O: clones, sizes, mix, depth.
struct Shape {
    count: u32,
    bs: u64,
    block_sizes: Option<Vec<(u64, u32)>>,
    min_bs: f64,
    mean_bs: f64,
    read: f64,
    random: f64,
    depth: u32,
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
    let mut bs = 4096u64;
    for key in ["bs", "blocksize"] {
        if let Some(o) = job.get(key) {
            let v = o.value.as_deref().unwrap_or("");
            let parts: Vec<Option<u64>> =
                v.split(',').filter(|p| !p.is_empty()).map(size).collect();
            match parts.as_slice() {
                [Some(b), rest @ ..] if rest.iter().all(|r| *r == Some(*b)) && *b > 0 => bs = *b,
                _ => out.bad(o, key, "one block size for reads and writes (storlab has no separate read and write sizes)"),
            }
        }
    }
    let mut block_sizes = None;
    if let Some(o) = job.get("bssplit") {
        block_sizes = super::bssplit(o.value.as_deref().unwrap_or(""));
        if block_sizes.is_none() {
            out.bad(
                o,
                "bssplit",
                "size/percent pairs separated by `:` (4k/50:64k/50), the same for reads and writes",
            );
        }
    }
    if let Some(o) = job.get("kb_base") {
        if o.value.as_deref() != Some("1024") {
            out.bad(o, "kb_base", "sizes are read 1024-based (kb_base=1024)");
        }
    }
    for key in ["bsrange", "blocksize_range", "blockalign", "ba"] {
        if let Some(o) = job.get(key) {
            out.bad(
                o,
                key,
                "storlab aligns to the block size; give bs or bssplit",
            );
        }
    }
    // fio's default: rw=read.
    let (mut read, mut random) = (100.0, 0.0);
    for key in ["rw", "readwrite"] {
        if let Some(o) = job.get(key) {
            match o.value.as_deref().unwrap_or("") {
                "read" => (read, random) = (100.0, 0.0),
                "write" => (read, random) = (0.0, 0.0),
                "randread" => (read, random) = (100.0, 100.0),
                "randwrite" => (read, random) = (0.0, 100.0),
                "rw" | "readwrite" => (read, random) = (50.0, 0.0),
                "randrw" => (read, random) = (50.0, 100.0),
                _ => out.bad(o, key, "storlab converts read, write, randread, randwrite, rw/readwrite and randrw (no trim, no `:N` offsets)"),
            }
        }
    }
    if job.opts.contains_key("rwmixread") {
        read = number(
            job,
            "rwmixread",
            0.0..=100.0,
            read,
            "a percentage, 0 to 100",
            out,
        );
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
    let (min_bs, mean_bs) = match &block_sizes {
        Some(l) => {
            let w: u32 = l.iter().map(|(_, w)| w).sum();
            let mean = l
                .iter()
                .map(|(b, w)| *b as f64 * f64::from(*w))
                .sum::<f64>()
                / f64::from(w.max(1));
            (l.iter().map(|(b, _)| *b).min().unwrap_or(bs) as f64, mean)
        }
        None => (bs as f64, bs as f64),
    };
    Shape {
        count,
        bs,
        block_sizes,
        min_bs,
        mean_bs,
        read,
        random,
        depth,
    }
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

/// A target: its name, path and size.
pub(super) type TargetOf = (String, String, Option<u64>);

/// The job's files (`filename`, in `directory`; without one, fio's own names, one file per
/// clone) as targets, a file other jobs use being their target; and the file size.
fn files(
    job: &JobOpts<'_>,
    name: &str,
    count: u32,
    paths: &mut HashMap<String, String>,
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
    let files: Vec<String> = match job.value("filename") {
        Some(f) => f
            .split(':')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        None => (0..count).map(|c| format!("{name}.{c}.0")).collect(),
    };
    let mut targets = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let p = match &dir {
            Some(d) if Path::new(f).is_relative() => d.join(f).display().to_string(),
            _ => f.clone(),
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
        targets.push((tname, p, file_size));
    }
    (targets, file_size)
}

/// The access entry: class, sizes, mix, distribution, offset, durability.
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
        if v.starts_with("zipf:") || v.starts_with("zoned:") {
            Some(v.to_string())
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
    if let Some(o) = job.get("offset") {
        match o.value.as_deref().and_then(size) {
            Some(off) => {
                let _ = writeln!(t, "offset = {off}");
            }
            None => out.bad(o, "offset", "a byte offset (a percentage is not converted)"),
        }
    }
    for key in ["fsync", "fdatasync"] {
        let n = number(job, key, 0..=u32::MAX, 0, "a count of writes", out);
        if n > 0 {
            let _ = writeln!(t, "fsync_every = {n}");
        }
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
