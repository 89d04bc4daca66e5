//! vdbench's definitions read into what storlab needs of them: general parameters (data
//! reduction, validation, error limit), storage definitions (`sd`: a target each) and workload
//! definitions (`wd`: an access entry on each of its storage definitions). Run definitions are
//! in [`super::runs`]. What storlab cannot do is collected as [`Unsupported`], with its line.

use super::parse::{Def, Item, Kind, Value, number, size};
use crate::import::{Options, Unsupported, source_comment};
use crate::units::format_size_exact;
use std::fmt::Write as _;
use std::path::Path;

/// What the conversion collects while it goes.
pub(super) struct Out<'a> {
    pub(super) path: &'a Path,
    pub(super) unsupported: Vec<Unsupported>,
    pub(super) notes: Vec<String>,
}

impl Out<'_> {
    pub(super) fn at(&self, line: usize) -> String {
        format!("{}:{line}", self.path.display())
    }

    pub(super) fn bad(&mut self, item: &Item, why: impl Into<String>) {
        self.unsupported.push(Unsupported {
            at: self.at(item.line),
            option: item.text.clone(),
            why: why.into(),
        });
    }

    pub(super) fn comment(&self, line: usize, text: &str) -> String {
        source_comment(&self.at(line), text)
    }
}

/// Parameters that change nothing storlab measures, and why.
const NO_EFFECT: &[(&str, &str)] = &[
    ("messagescan", "storlab scans no system log"),
    ("histogram", "storlab keeps every latency's histogram"),
    ("report", "storlab writes one results file"),
    ("monitor", "storlab runs until its duration"),
    (
        "create_anchors",
        "storlab makes the directories of its files",
    ),
    ("showlba", "storlab does not log every LBA"),
    ("port", "storlab runs on one host"),
    ("jvms", "storlab's workers are threads of one process"),
    ("shell", "storlab runs on one host"),
    ("user", "storlab runs on one host"),
    ("vdbench", "storlab runs on one host"),
    ("clean", "storlab runs on one host"),
    (
        "formatxfersize",
        "storlab fills a new file once before the run, in its own block size",
    ),
];

/// General parameters storlab cannot convert, and why.
const REFUSED: &[(&str, &str)] = &[
    (
        "dedupsets",
        "storlab's [data] table takes a dedupe ratio and unit, not a number of duplicate sets",
    ),
    (
        "dedupflipflop",
        "storlab's [data] table takes a dedupe ratio and unit only",
    ),
    (
        "dedupharmonics",
        "storlab's [data] table takes a dedupe ratio and unit only",
    ),
    (
        "concatenatesds",
        "storlab's targets are separate; concatenate them below storlab (LVM, md) and name the result",
    ),
    (
        "journal",
        "storlab keeps no journal of written blocks across runs",
    ),
    (
        "rg",
        "replay groups replay a Swat trace; storlab replays MSR and blkparse block traces (a worker's trace): convert the trace to one of those",
    ),
    (
        "devices",
        "replay groups replay a Swat trace; storlab replays MSR and blkparse block traces (a worker's trace): convert the trace to one of those",
    ),
    ("pattern", "storlab writes its own data patterns"),
    ("patterns", "storlab writes its own data patterns"),
    ("startcmd", "storlab runs no commands"),
    ("start_cmd", "storlab runs no commands"),
    ("endcmd", "storlab runs no commands"),
    ("end_cmd", "storlab runs no commands"),
    (
        "loop",
        "storlab runs a job once; run it again, or use `repeat`",
    ),
];

/// A general parameter's no-effect reason, if it has none.
pub(super) fn no_effect(key: &str) -> Option<&'static str> {
    NO_EFFECT.iter().find(|(k, _)| *k == key).map(|(_, w)| *w)
}

fn one(item: &Item) -> Option<&str> {
    match &item.value {
        Value::One(s) => Some(s),
        Value::List(_) => None,
    }
}

/// The general parameters: the job's top-level keys (with their comments) and its `[data]`
/// table's.
#[derive(Default)]
pub(super) struct General {
    pub(super) top: String,
    pub(super) data: String,
}

pub(super) fn general(defs: &[Def], out: &mut Out) -> General {
    let mut g = General::default();
    for d in defs.iter().filter(|d| d.kind == Kind::General) {
        let it = &d.items[0];
        let v = one(it).unwrap_or("");
        let c = out.comment(it.line, &it.text);
        match it.key.as_str() {
            "compratio" | "dedupratio" => match number(v).filter(|n| *n >= 1.0 && *n <= 1e6) {
                Some(n) => {
                    let key = if it.key == "compratio" { "compress" } else { "dedupe" };
                    let _ = writeln!(g.data, "{c}{key} = {}", toml_num(n));
                }
                None => out.bad(it, "a ratio is a number of at least 1, e.g. 2 for 2:1"),
            },
            "dedupunit" => match size(v).filter(|b| *b > 0) {
                Some(b) => {
                    let _ = writeln!(g.data, "{c}dedupe_unit = \"{}\"", format_size_exact(b));
                }
                None => out.bad(it, "the dedupe unit is a size, e.g. 8k"),
            },
            "data_errors" => match v.parse::<u64>() {
                Ok(n) if n >= 1 => {
                    let _ = write!(g.top, "{c}on_error = \"continue\"\nmax_errors = {n}\n");
                }
                _ => out.bad(
                    it,
                    "storlab stops after a number of failed I/Os (max_errors), not on a command",
                ),
            },
            "validate" => match v.to_ascii_lowercase().as_str() {
                "yes" | "y" => {
                    let _ = writeln!(g.top, "{c}verify = true");
                }
                "no" | "n" => {}
                _ => out.bad(
                    it,
                    "storlab verifies every read and reads back every written block at the end (verify = true); vdbench's other validation modes have no equivalent",
                ),
            },
            k => {
                if let Some(why) = no_effect(k) {
                    out.notes.push(format!("{}: {}: no effect ({why})", out.at(it.line), it.text));
                } else if let Some((_, why)) = REFUSED.iter().find(|(r, _)| *r == k) {
                    out.bad(it, *why);
                } else {
                    out.bad(it, "not a vdbench parameter storlab converts");
                }
            }
        }
    }
    g
}

/// A number as TOML writes it.
pub(super) fn toml_num(n: f64) -> String {
    toml::Value::Float(n).to_string()
}

/// A quoted TOML string.
pub(super) fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// `hd`: one host storlab runs on is fine; more are refused.
pub(super) fn hosts(defs: &[Def], out: &mut Out) {
    for d in defs.iter().filter(|d| d.kind == Kind::Hd) {
        let local = d.get("system").and_then(one).is_none_or(|s| {
            ["localhost", "127.0.0.1", "::1"].contains(&s.to_ascii_lowercase().as_str())
        });
        if local
            && d.items
                .iter()
                .all(|i| i.key == "system" || no_effect(&i.key).is_some())
        {
            out.notes.push(format!(
                "{}: hd={}: the host storlab runs on",
                out.at(d.line),
                d.name
            ));
            continue;
        }
        out.unsupported.push(Unsupported {
            at: out.at(d.line),
            option: format!("hd={}", d.name),
            why: "storlab runs on the host it is started on; a run over several hosts is an MPI run of storlab (docs/multihost.md), not host definitions".into(),
        });
    }
}

/// A storage definition as storlab uses it: a target.
pub(super) struct Sd {
    pub(super) name: String,
    pub(super) line: usize,
    pub(super) text: String,
    pub(super) path: String,
    pub(super) size: Option<u64>,
    /// Outstanding I/Os (vdbench's threads of this sd), and the line that says so.
    pub(super) threads: (u32, Option<usize>),
    pub(super) offset: Option<u64>,
    pub(super) align: Option<u64>,
    pub(super) direct: bool,
    pub(super) sync: bool,
}

/// vdbench's default outstanding I/Os per storage definition.
pub(super) const DEFAULT_THREADS: u32 = 8;

/// `openflags=`: (O_DIRECT, O_SYNC/O_DSYNC); anything else unsupported.
pub(super) fn openflags(it: &Item, out: &mut Out) -> (bool, bool) {
    let (mut direct, mut sync) = (false, false);
    for f in it.value.items() {
        match f.to_ascii_lowercase().as_str() {
            "o_direct" | "directio" => direct = true,
            "o_sync" | "o_dsync" => sync = true,
            "" => {}
            _ => out.bad(
                it,
                format!("`{f}`: storlab opens with O_DIRECT and O_DSYNC only"),
            ),
        }
    }
    (direct, sync)
}

/// A thread count: 1 to 4096 (storlab's deepest queue is far above what devices take).
pub(super) fn threads(it: &Item, out: &mut Out) -> Option<u32> {
    match one(it).and_then(|v| v.parse::<u32>().ok()) {
        Some(n) if (1..=4096).contains(&n) => Some(n),
        _ => {
            out.bad(it, "threads is a count of outstanding I/Os from 1 to 4096");
            None
        }
    }
}

pub(super) fn sds(defs: &[Def], opts: &Options, out: &mut Out) -> Vec<Sd> {
    let mut sds = Vec::new();
    for d in defs.iter().filter(|d| d.kind == Kind::Sd) {
        let mut sd = Sd {
            name: d.name.clone(),
            line: d.line,
            text: d.text.clone(),
            path: String::new(),
            size: None,
            threads: (DEFAULT_THREADS, None),
            offset: None,
            align: None,
            direct: false,
            sync: false,
        };
        for it in d.keys() {
            let v = one(it).unwrap_or("");
            match it.key.as_str() {
                "sd" => {}
                "lun" => sd.path = lun(&d.name, v, opts, out),
                "size" => match size(v).filter(|b| *b > 0) {
                    Some(b) => sd.size = Some(b),
                    None => out.bad(it, "a size, e.g. 10g"),
                },
                "offset" => sd.offset = size(v).or_else(|| {
                    out.bad(it, "an offset in bytes, e.g. 1m");
                    None
                }),
                "align" => sd.align = size(v).filter(|b| *b > 0).or_else(|| {
                    out.bad(it, "an alignment in bytes, e.g. 4k");
                    None
                }),
                "threads" | "thread" => {
                    if let Some(n) = threads(it, out) {
                        sd.threads = (n, Some(it.line));
                    }
                }
                "openflags" => {
                    let (direct, sync) = openflags(it, out);
                    sd.direct |= direct;
                    sd.sync |= sync;
                }
                "hitarea" => out.notes.push(format!(
                    "{}: {}: no effect (storlab does not aim reads at a cache area)",
                    out.at(it.line),
                    it.text
                )),
                "host" | "hd" => out.bad(
                    it,
                    "storlab runs on the host it is started on; several hosts are an MPI run (docs/multihost.md)",
                ),
                "count" => out.bad(it, "write each storage definition out, one sd= line each"),
                _ => out.bad(
                    it,
                    "not a storage-definition parameter storlab converts (it does: lun, size, offset, align, threads, openflags)",
                ),
            }
        }
        if d.get("lun").is_none() {
            out.unsupported.push(Unsupported {
                at: out.at(d.line),
                option: format!("sd={}", d.name),
                why: "a storage definition needs lun= (the device or file)".into(),
            });
        }
        sds.push(sd);
    }
    sds
}

/// Where the lun is on this machine: its `--map` place, a Windows name placed by `--map` (or a
/// scratch file), or the path as written.
fn lun(name: &str, v: &str, opts: &Options, out: &mut Out) -> String {
    if let Some(p) = opts.mapped(v) {
        return p.display().to_string();
    }
    let b = v.as_bytes();
    let windows =
        v.starts_with("\\\\") || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':');
    if windows {
        let fallback = format!("storlab-{}.dat", name.replace(['/', '\\', ' '], "_"));
        return opts
            .place(v, &fallback, &mut out.notes)
            .display()
            .to_string();
    }
    v.to_string()
}

/// How a workload picks its transfer sizes.
#[derive(Clone, PartialEq)]
pub(super) enum Xfer {
    One(u64),
    /// (bytes, percent) pairs.
    Dist(Vec<(u64, u32)>),
}

/// A workload definition as storlab uses it: an access entry on each of its sds.
pub(super) struct Wd {
    pub(super) name: String,
    pub(super) line: usize,
    pub(super) text: String,
    /// Indexes into the sds.
    pub(super) sds: Vec<usize>,
    pub(super) xfer: Xfer,
    pub(super) read: f64,
    pub(super) random: f64,
    /// `seekpct=eof`: sequential, once through.
    pub(super) eof: bool,
    pub(super) skew: Option<f64>,
    /// `range=`: (from, to), bytes or percent of the sd.
    pub(super) range: Option<(Bound, Bound)>,
    pub(super) direct: bool,
    pub(super) sync: bool,
}

/// One end of a `range=`.
#[derive(Clone, Copy)]
pub(super) enum Bound {
    Bytes(u64),
    Percent(f64),
}

/// Whether `name` matches `pattern` (`*` anywhere: any characters).
pub(super) fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len()
                && name.starts_with(head)
                && (tail.contains('*') && matches(tail, &name[head.len()..])
                    || !tail.contains('*') && name.ends_with(tail))
        }
    }
}

pub(super) fn wds(defs: &[Def], sds: &[Sd], out: &mut Out) -> Vec<Wd> {
    let mut wds = Vec::new();
    for d in defs.iter().filter(|d| d.kind == Kind::Wd) {
        let mut wd = Wd {
            name: d.name.clone(),
            line: d.line,
            text: d.text.clone(),
            sds: Vec::new(),
            xfer: Xfer::One(4096),
            read: 100.0,
            random: 100.0,
            eof: false,
            skew: None,
            range: None,
            direct: false,
            sync: false,
        };
        for it in d.keys() {
            let v = one(it).unwrap_or("");
            match it.key.as_str() {
                "wd" => {}
                "sd" => {
                    for p in it.value.items() {
                        let found: Vec<usize> = (0..sds.len())
                            .filter(|&i| matches(p, &sds[i].name))
                            .filter(|i| !wd.sds.contains(i))
                            .collect();
                        if found.is_empty() {
                            out.bad(it, format!("no storage definition is named `{p}`"));
                        }
                        wd.sds.extend(found);
                    }
                }
                "xfersize" => match xfersize(&it.value.items()) {
                    Ok(x) => wd.xfer = x,
                    Err(why) => out.bad(it, why),
                },
                "rdpct" | "readpct" => match number(v).filter(|n| *n <= 100.0) {
                    Some(n) => wd.read = n,
                    None => out.bad(it, "rdpct is a percentage from 0 to 100"),
                },
                "writepct" | "wrpct" => match number(v).filter(|n| *n <= 100.0) {
                    Some(n) => wd.read = 100.0 - n,
                    None => out.bad(it, "writepct is a percentage from 0 to 100"),
                },
                "seekpct" | "seek" => match seekpct(v) {
                    Some((random, eof)) => (wd.random, wd.eof) = (random, eof),
                    None => out.bad(it, "seekpct is a percentage from 0 to 100, seq, random or eof"),
                },
                "skew" => match number(v).filter(|n| *n > 0.0 && *n <= 100.0) {
                    Some(n) => wd.skew = Some(n),
                    None => out.bad(it, "skew is a percentage above 0 and at most 100"),
                },
                "range" => match it.value.items().as_slice() {
                    [a, b] => match (bound(a), bound(b)) {
                        (Some(a), Some(b)) => wd.range = Some((a, b)),
                        _ => out.bad(
                            it,
                            "storlab's span lies within the target: write (FROM,TO) in percent from 0 to 100, or in bytes (1g,2g)",
                        ),
                    },
                    _ => out.bad(it, "write range=(FROM,TO)"),
                },
                "openflags" => {
                    let (direct, sync) = openflags(it, out);
                    wd.direct |= direct;
                    wd.sync |= sync;
                }
                "rhpct" | "whpct" | "hitarea" if number(v) == Some(0.0) => {}
                "rhpct" | "whpct" | "hitarea" => out.bad(
                    it,
                    "storlab does not aim I/Os at a cache area: a cache hit is the device's, measured, not asked for",
                ),
                "iorate" | "priority" => out.bad(
                    it,
                    "storlab paces each worker (rate_iops), not each workload: give the rate on the rd",
                ),
                "stride" => out.bad(it, "storlab's sequential I/Os follow one another, with no stride"),
                "hotband" => out.bad(it, "storlab has no hot band; its skewed distributions are zipf and zoned"),
                "threads" => out.bad(
                    it,
                    "storlab's outstanding I/Os are per storage definition here (sd or rd threads=), not per workload",
                ),
                "streams" => out.bad(it, "storlab runs one sequential stream per worker"),
                _ => out.bad(it, "not a workload-definition parameter storlab converts"),
            }
        }
        if d.get("sd").is_none() {
            wd.sds = (0..sds.len()).collect();
            out.notes.push(format!(
                "{}: wd={} names no sd: it runs on every storage definition",
                out.at(d.line),
                d.name
            ));
        }
        wds.push(wd);
    }
    wds
}

/// `seekpct=`: (random percent, once through to the end).
pub(super) fn seekpct(v: &str) -> Option<(f64, bool)> {
    match v.to_ascii_lowercase().as_str() {
        "seq" | "sequential" => Some((0.0, false)),
        "random" | "rand" => Some((100.0, false)),
        "eof" => Some((0.0, true)),
        n => number(n).filter(|n| *n <= 100.0).map(|n| (n, false)),
    }
}

fn bound(v: &str) -> Option<Bound> {
    let t = v.trim();
    if t.ends_with(|c: char| c.is_ascii_alphabetic()) {
        size(t).map(Bound::Bytes)
    } else {
        number(t).filter(|n| *n <= 100.0).map(Bound::Percent)
    }
}

/// `xfersize=`: one size, or (size, percent, ...) pairs adding to 100.
pub(super) fn xfersize(items: &[&str]) -> Result<Xfer, String> {
    let bad = || "a transfer size from 1 byte to 64m, e.g. 4k".to_string();
    let block = |s: &str| size(s).filter(|b| (1..=64 << 20).contains(b));
    match items {
        [one] => block(one).map(Xfer::One).ok_or_else(bad),
        [_, _, _] => Err(
            "a size drawn between a minimum and a maximum is not storlab's: list the sizes and their shares, e.g. (4k,50,8k,50)"
                .into(),
        ),
        pairs if pairs.len() % 2 == 0 => {
            let mut dist = Vec::new();
            for p in pairs.chunks(2) {
                let b = block(p[0]).ok_or_else(bad)?;
                let pct = number(p[1])
                    .filter(|n| *n == n.trunc() && *n <= 100.0)
                    .ok_or("each size's share is a whole percentage")?;
                if pct > 0.0 {
                    dist.push((b, pct as u32));
                }
            }
            let sum: u32 = dist.iter().map(|(_, p)| p).sum();
            if sum != 100 {
                return Err(format!("the shares add up to {sum} %; they add up to 100"));
            }
            Ok(Xfer::Dist(dist))
        }
        _ => Err("write xfersize=SIZE or xfersize=(SIZE,PERCENT,SIZE,PERCENT...)".into()),
    }
}
