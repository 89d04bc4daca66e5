//! vdbench's file-system testing as storlab's `[fs]` section: the file-system definition
//! (`fsd`: anchor, depth, width, files, sizes, distribution, openflags, shared) is the tree,
//! each file-system workload definition (`fwd`: operation, fileio, fileselect, xfersize,
//! threads, skew, rdpct, stopafter) a `[[fs.workload]]`, each run definition that runs them
//! (`rd` with `fwd=`: fwdrate, format, elapsed, interval, warmup, operations, and the `for`
//! lists of operations, transfer sizes, threads, read shares and rates) a `[[fs.run]]`; `fwd=format`
//! the format's threads and transfer size. vdbench's meaning is kept: `files` is per directory
//! of the deepest level, a random read or write of a file makes `stopafter` transfers (its
//! size's worth by default) before the file is closed, `fwdrate` is every workload's operations
//! together, the format happens before the runs (vdbench's `format=` of its first run
//! definition: it deletes the tree storlab made, yes, makes it anew, yes and restart). What
//! has no equivalent is refused with its line and why.

use super::defs::{Out, matches, no_effect, q, toml_num};
use super::parse::{Def, Item, Kind, Value, expand, number, seconds, size};
use crate::import::{Options, Unsupported};
use crate::units::format_size_exact;
use std::fmt::Write as _;

/// vdbench's format workload's threads and transfer size, when `fwd=format` does not say.
const FORMAT_THREADS: u32 = 8;
const FORMAT_XFER: u64 = 128 << 10;

fn one(item: &Item) -> Option<&str> {
    match &item.value {
        Value::One(s) => Some(s),
        Value::List(_) => None,
    }
}

/// Whether the file holds file-system definitions.
pub(super) fn is_fs(defs: &[Def]) -> bool {
    defs.iter().any(|d| matches!(d.kind, Kind::Fsd | Kind::Fwd))
}

/// `size=` or `sizes=`: one size, or (size, percent) pairs, as `SIZE:WEIGHT,...`.
fn sizes(it: &Item, out: &mut Out) -> Option<String> {
    let items = it.value.items();
    let bad = |out: &mut Out, why: &str| {
        out.bad(it, why);
        None
    };
    match items.as_slice() {
        [one] => match size(one) {
            Some(b) => Some(format_size_exact(b)),
            None => bad(out, "a size, e.g. 128k"),
        },
        pairs if pairs.len() % 2 == 0 => {
            let mut parts = Vec::new();
            for p in pairs.chunks(2) {
                let (Some(b), Some(pct)) = (size(p[0]), number(p[1])) else {
                    return bad(out, "write sizes=(SIZE,PERCENT,SIZE,PERCENT...)");
                };
                if pct == 0.0 {
                    return bad(
                        out,
                        "sizes=(SIZE,0) asks for sizes drawn around an average; storlab's files have the sizes listed, each with its share",
                    );
                }
                if pct != pct.trunc() {
                    return bad(out, "each size's share is a whole percentage");
                }
                parts.push(format!("{}:{pct}", format_size_exact(b)));
            }
            Some(parts.join(","))
        }
        _ => bad(out, "write sizes=SIZE or sizes=(SIZE,PERCENT,...)"),
    }
}

/// `openflags=` as storlab's: o_direct (directio), o_dsync, o_sync (o_rsync: Linux's O_RSYNC
/// is O_SYNC), fsync.
fn openflags(it: &Item, out: &mut Out) -> Option<Vec<&'static str>> {
    let mut flags = Vec::new();
    for f in it.value.items() {
        let f = match f.to_ascii_lowercase().as_str() {
            "o_direct" | "directio" => "o_direct",
            "o_dsync" => "o_dsync",
            "o_sync" | "o_rsync" => "o_sync",
            "fsync" => "fsync",
            _ => {
                out.bad(
                    it,
                    "storlab opens files with o_direct, o_dsync, o_sync (o_rsync is o_sync on Linux) or fsync",
                );
                return None;
            }
        };
        if !flags.contains(&f) {
            flags.push(f);
        }
    }
    Some(flags)
}

/// The tree of the one file-system definition used.
fn fsd(d: &Def, opts: &Options, out: &mut Out) -> (String, Vec<&'static str>) {
    let mut t = out.comment(d.line, &d.text);
    let mut flags = Vec::new();
    let mut depth_width_files = (false, false, false);
    for it in d.keys() {
        let v = one(it).unwrap_or("");
        let count = |out: &mut Out, max: f64| -> Option<u64> {
            let n = number(v).filter(|n| *n == n.trunc() && *n <= max);
            if n.is_none() {
                out.bad(it, "a whole number");
            }
            n.map(|n| n as u64)
        };
        match it.key.as_str() {
            "fsd" => {}
            "anchor" => {
                let path = opts
                    .mapped(v)
                    .map_or_else(|| v.to_string(), |p| p.display().to_string());
                let _ = writeln!(t, "anchor = {}", q(&path));
            }
            "depth" => {
                depth_width_files.0 = true;
                if let Some(n) = count(out, 32.0) {
                    let _ = writeln!(t, "depth = {n}");
                }
            }
            "width" => {
                depth_width_files.1 = true;
                if let Some(n) = count(out, 1e9) {
                    let _ = writeln!(t, "width = {n}");
                }
            }
            "files" => {
                depth_width_files.2 = true;
                if let Some(n) = count(out, 1e12) {
                    let _ = writeln!(t, "files = {n}");
                }
            }
            "size" | "sizes" => {
                if let Some(s) = sizes(it, out) {
                    let _ = writeln!(t, "sizes = {}", q(&s));
                }
            }
            "distribution" => match v.to_ascii_lowercase().as_str() {
                "bottom" | "all" => {
                    let _ = writeln!(t, "distribution = {}", q(&v.to_ascii_lowercase()));
                }
                _ => out.bad(it, "distribution is bottom or all"),
            },
            "openflags" => flags = openflags(it, out).unwrap_or_default(),
            "shared" => match v.to_ascii_lowercase().as_str() {
                "yes" | "y" => t.push_str("shared = true\n"),
                "no" | "n" => {}
                _ => out.bad(it, "shared is yes or no"),
            },
            "create_anchor" | "create_anchors" => {}
            "count" => out.bad(
                it,
                "storlab's [fs] has one tree; give one fsd (or one job per anchor) rather than a sequence of them",
            ),
            "mask" => out.bad(it, "storlab names its directories and files itself (d01, f0001)"),
            "totalsize" | "workingsetsize" | "wss" => out.bad(
                it,
                "storlab makes and uses every file of the tree; give the files and sizes that make that total",
            ),
            "journal" => out.bad(it, "storlab keeps no journal of written blocks across runs"),
            _ => out.bad(it, "not a file-system definition parameter storlab converts"),
        }
    }
    // vdbench's defaults for what the definition leaves out.
    let (depth, width, files) = depth_width_files;
    for (given, key) in [(depth, "depth"), (width, "width"), (files, "files")] {
        if !given {
            let _ = writeln!(t, "# vdbench's default {key}\n{key} = 1");
        }
    }
    (t, flags)
}

/// A file-system workload definition as a `[[fs.workload]]`; `None` for `fwd=format` (its
/// threads and transfer size are returned).
struct Fwd {
    name: String,
    toml: String,
    /// `fwd=format`: the format's threads and transfer size.
    format: Option<(Option<u32>, Option<u64>)>,
    flags: Option<Vec<&'static str>>,
    /// The fsd it names.
    fsd: Option<String>,
    /// Its line.
    line: usize,
}

fn fwd(d: &Def, out: &mut Out) -> Fwd {
    let mut f = Fwd {
        name: d.name.clone(),
        toml: format!(
            "\n{}[[fs.workload]]\nname = {}\n",
            out.comment(d.line, &d.text),
            q(&d.name)
        ),
        format: None,
        flags: None,
        fsd: None,
        line: d.line,
    };
    let is_format = d.name == "format";
    let mut format = (None, None);
    for it in d.keys() {
        let v = one(it).unwrap_or("");
        match it.key.as_str() {
            "fwd" => {}
            "fsd" => match &it.value {
                Value::One(n) => f.fsd = Some(n.clone()),
                Value::List(l) if l.len() == 1 => f.fsd = Some(l[0].clone()),
                Value::List(_) => out.bad(
                    it,
                    "storlab's [fs] has one tree; a workload on several fsds is several jobs",
                ),
            },
            "operation" | "operations" => {
                let ops: Vec<&str> = it.value.items();
                let known = ops.iter().all(|o| {
                    OPERATIONS.contains(&o.to_ascii_lowercase().as_str())
                });
                if known {
                    let mix: Vec<String> = ops.iter().map(|o| o.to_ascii_lowercase()).collect();
                    let _ = writeln!(f.toml, "mix = {}", q(&mix.join(",")));
                } else {
                    out.bad(it, format!("storlab's operations are {}", OPERATIONS.join(", ")));
                }
            }
            "fileio" => {
                let items: Vec<String> = it.value.items().iter().map(|s| s.to_ascii_lowercase()).collect();
                let items: Vec<&str> = items.iter().map(String::as_str).collect();
                let io = match items.as_slice() {
                    ["sequential" | "seq"] => Some("sequential"),
                    ["random"] => Some("random"),
                    ["random", "shared"] => Some("random,shared"),
                    _ => None,
                };
                match io {
                    Some(io) => {
                        let _ = writeln!(f.toml, "fileio = {}", q(io));
                    }
                    None => out.bad(
                        it,
                        "storlab's file I/O is sequential, random or (random,shared); (seq,delete) deletes a file before writing it, which storlab does not",
                    ),
                }
            }
            "fileselect" => match v.to_ascii_lowercase().as_str() {
                "random" => f.toml.push_str("fileselect = \"random\"\n"),
                "seq" | "sequential" => f.toml.push_str("fileselect = \"sequential\"\n"),
                _ => out.bad(it, "fileselect is random or sequential"),
            },
            "xfersize" => match super::defs::xfersize(&it.value.items()) {
                Ok(super::defs::Xfer::One(b)) => {
                    format.1 = Some(b);
                    let _ = writeln!(f.toml, "xfersize = {}", q(&format_size_exact(b)));
                }
                Ok(super::defs::Xfer::Dist(d)) => {
                    let l: Vec<String> = d
                        .iter()
                        .map(|(b, p)| format!("{}:{p}", format_size_exact(*b)))
                        .collect();
                    let _ = writeln!(f.toml, "xfersize = {}", q(&l.join(",")));
                }
                Err(e) => out.bad(it, e),
            },
            "threads" => {
                if let Some(n) = super::defs::threads(it, out) {
                    format.0 = Some(n);
                    let _ = writeln!(f.toml, "threads = {n}");
                }
            }
            "skew" => match number(v).filter(|n| *n > 0.0 && *n <= 100.0) {
                Some(n) => {
                    let _ = writeln!(f.toml, "skew = {}", toml_num(n));
                }
                None => out.bad(it, "skew is a percentage above 0, at most 100"),
            },
            "rdpct" => match number(v).filter(|n| *n <= 100.0) {
                Some(n) => {
                    let _ = writeln!(f.toml, "rdpct = {}", toml_num(n));
                }
                None => out.bad(it, "rdpct is a percentage from 0 to 100"),
            },
            "stopafter" => match number(v).filter(|n| *n >= 1.0 && *n == n.trunc()) {
                Some(n) => {
                    let _ = writeln!(f.toml, "stopafter = {n}");
                }
                None => out.bad(it, "stopafter is a number of transfers, at least 1"),
            },
            "openflags" => f.flags = openflags(it, out),
            "host" => out.bad(
                it,
                "storlab runs on the host it is started on; a run over several hosts is an MPI run of storlab (docs/multihost.md)",
            ),
            _ => out.bad(it, "not a file-system workload parameter storlab converts"),
        }
    }
    if is_format {
        f.format = Some(format);
    }
    f
}

/// Every operation vdbench names that storlab does (its `move` is storlab's `rename`).
pub(super) const OPERATIONS: [&str; 14] = [
    "read", "write", "create", "delete", "open", "close", "getattr", "setattr", "access", "mkdir",
    "rmdir", "copy", "move", "rename",
];

/// One run definition as a `[[fs.run]]`, and what it asks of the format.
struct Rd {
    toml: String,
    format: Option<(&'static str, usize)>,
}

/// The run definitions' `fwd=` names of `fwds` matching `pattern`.
fn chosen(it: &Item, fwds: &[Fwd], out: &mut Out) -> Vec<String> {
    let mut names = Vec::new();
    for p in it.value.items() {
        let found: Vec<&Fwd> = fwds
            .iter()
            .filter(|f| f.format.is_none() && matches(p, &f.name))
            .collect();
        if found.is_empty() {
            out.bad(
                it,
                format!("no file-system workload definition is named `{p}`"),
            );
        }
        for f in found {
            if !names.contains(&f.name) {
                names.push(f.name.clone());
            }
        }
    }
    names
}

/// A run definition's `format=` as storlab's `format` (`None`: refused, said in `out`).
fn format_word(it: &Item, out: &mut Out) -> Option<&'static str> {
    let items: Vec<String> = it
        .value
        .items()
        .iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    let has = |w: &str| items.iter().any(|i| i == w);
    let bad_word = (items.iter())
        .find(|i| !["yes", "no", "restart", "only", "clean", "once"].contains(&i.as_str()));
    if let Some(w) = bad_word {
        out.bad(
            it,
            format!(
                "format={w} has no equivalent: storlab's format is yes, no, restart, only or clean, once before its runs"
            ),
        );
        return None;
    }
    Some(if has("only") {
        "only"
    } else if has("clean") {
        "clean"
    } else if has("yes") {
        "yes"
    } else if has("restart") {
        "restart"
    } else {
        "no"
    })
}

fn rd(d: &Def, fwds: &[Fwd], out: &mut Out) -> Rd {
    // storlab's own runs are `format` and `clean`: a run definition of that name is renamed.
    let name = match d.name.as_str() {
        n @ ("format" | "clean") => format!("{n} run"),
        n => n.to_string(),
    };
    let mut r = Rd {
        toml: format!(
            "\n{}[[fs.run]]\nname = {}\n",
            out.comment(d.line, &d.text),
            q(&name)
        ),
        format: None,
    };
    let mut order: Vec<&str> = Vec::new();
    // vdbench's arrivals in open loop are exponential unless told otherwise.
    let mut arrivals = "poisson";
    let mut elapsed = false;
    for it in d.keys() {
        let v = one(it).unwrap_or("");
        let list = |out: &mut Out, f: &dyn Fn(&str) -> Option<f64>| {
            expand(&it.value.items(), f)
                .map_err(|e| out.bad(it, e))
                .ok()
        };
        match it.key.as_str() {
            "rd" => {}
            "fwd" => {
                let names: Vec<String> = chosen(it, fwds, out).iter().map(|n| q(n)).collect();
                let _ = writeln!(r.toml, "workloads = [{}]", names.join(", "));
            }
            "elapsed" | "interval" | "warmup" => match seconds(v).filter(|s| *s >= 1 || it.key == "warmup") {
                Some(s) => {
                    elapsed |= it.key == "elapsed";
                    let key = match it.key.as_str() {
                        "elapsed" => "duration",
                        "warmup" => "ramp",
                        k => k,
                    };
                    let _ = writeln!(r.toml, "{key} = \"{s}s\"");
                }
                None => out.bad(it, "a time in whole seconds, e.g. 60"),
            },
            "fwdrate" | "forfwdrate" => {
                let items = it.value.items();
                if items == ["max"] {
                    r.toml.push_str("rate = \"max\"\n");
                } else if items == ["curve"] {
                    out.bad(it, "storlab's rate curve is for block I/O; give the file-system rates to run (fwdrate=(100,200,...))");
                } else if let Some(l) = list(out, &|s| number(s).filter(|n| *n > 0.0)) {
                    if l.len() == 1 && it.key == "fwdrate" {
                        let _ = writeln!(r.toml, "rate = {}", toml_num(l[0]));
                    } else {
                        let vals: Vec<String> = l.iter().map(|n| toml_num(*n)).collect();
                        let _ = writeln!(r.toml, "for_rate = [{}]", vals.join(", "));
                        order.push("rate");
                    }
                }
            }
            "distribution" => match v.to_ascii_lowercase().as_str() {
                "exponential" => arrivals = "poisson",
                "deterministic" => arrivals = "uniform",
                _ => out.bad(
                    it,
                    "storlab's arrivals are exponential (poisson) or evenly spaced (deterministic); not uniformly drawn",
                ),
            },
            "format" => {
                if let Some(f) = format_word(it, out) {
                    r.format = Some((f, it.line));
                }
            }
            "operations" | "operation" | "foroperations" => {
                let ops: Vec<String> = it.value.items().iter().map(|o| o.to_ascii_lowercase()).collect();
                if ops.iter().all(|o| OPERATIONS.contains(&o.as_str())) {
                    if it.key == "foroperations" {
                        let vals: Vec<String> = ops.iter().map(|o| q(o)).collect();
                        let _ = writeln!(r.toml, "for_mix = [{}]", vals.join(", "));
                        order.push("mix");
                    } else {
                        let _ = writeln!(r.toml, "mix = {}", q(&ops.join(",")));
                    }
                } else {
                    out.bad(it, format!("storlab's operations are {}", OPERATIONS.join(", ")));
                }
            }
            "forxfersize" => {
                if let Some(l) = list(out, &|s| size(s).filter(|b| (1..=64 << 20).contains(b)).map(|b| b as f64)) {
                    let vals: Vec<String> = l.iter().map(|b| q(&format_size_exact(*b as u64))).collect();
                    let _ = writeln!(r.toml, "for_xfersize = [{}]", vals.join(", "));
                    order.push("xfersize");
                }
            }
            "forthreads" => {
                if let Some(l) = list(out, &|s| number(s).filter(|n| *n >= 1.0 && *n <= 1024.0 && *n == n.trunc())) {
                    let vals: Vec<String> = l.iter().map(|n| n.to_string()).collect();
                    let _ = writeln!(r.toml, "for_threads = [{}]", vals.join(", "));
                    order.push("threads");
                }
            }
            "forrdpct" => {
                if let Some(l) = list(out, &|s| number(s).filter(|n| *n <= 100.0)) {
                    let vals: Vec<String> = l.iter().map(|n| toml_num(*n)).collect();
                    let _ = writeln!(r.toml, "for_rdpct = [{}]", vals.join(", "));
                    order.push("rdpct");
                }
            }
            "fordepth" | "forwidth" | "forfiles" | "forsizes" | "fortotal" | "forwss"
            | "forworkingsetsize" => out.bad(
                it,
                "each value would be a tree of its own shape, made anew; storlab's [fs] has one tree: a job per shape",
            ),
            "pause" => out.bad(it, "storlab's runs of a file-system workload follow one another without a pause"),
            "startcmd" | "start_cmd" | "endcmd" | "end_cmd" => out.bad(it, "storlab runs no commands"),
            k if no_effect(k).is_some() => {}
            _ => out.bad(it, "not a run-definition parameter storlab converts for file systems"),
        }
    }
    if !elapsed {
        // vdbench's default elapsed time.
        r.toml.push_str("duration = \"30s\"\n");
    }
    if d.get("fwdrate").is_none() && d.get("forfwdrate").is_none() {
        out.unsupported.push(Unsupported {
            at: out.at(d.line),
            option: format!("rd={}", d.name),
            why: "vdbench needs fwdrate= (max or operations a second)".into(),
        });
    }
    let _ = writeln!(r.toml, "arrivals = {}", q(arrivals));
    if order.len() > 1 {
        let o: Vec<String> = order.iter().map(|o| q(o)).collect();
        let _ = writeln!(r.toml, "order = [{}]", o.join(", "));
    }
    r
}

/// The `[fs]` section of `defs`, the file's file-system definitions, workloads and runs;
/// `None` (with what is refused in `out`) when none of it can be made.
pub(super) fn convert(defs: &[Def], opts: &Options, out: &mut Out) -> Option<String> {
    for d in defs
        .iter()
        .filter(|d| matches!(d.kind, Kind::Sd | Kind::Wd))
    {
        out.unsupported.push(Unsupported {
            at: out.at(d.line),
            option: d.text.chars().take(60).collect(),
            why: "a storlab job runs file-system workloads or block workloads, not both: give each its own parameter file".into(),
        });
    }
    for d in defs.iter().filter(|d| d.kind == Kind::General) {
        let it = &d.items[0];
        if matches!(it.key.as_str(), "data_errors" | "validate") {
            out.bad(
                it,
                "storlab's file-system workload verifies nothing and judges its failed operations against max_errors; leave it out",
            );
        }
    }
    let fsds: Vec<&Def> = defs.iter().filter(|d| d.kind == Kind::Fsd).collect();
    let fwds: Vec<Fwd> = defs
        .iter()
        .filter(|d| d.kind == Kind::Fwd)
        .map(|d| fwd(d, out))
        .collect();
    let rds: Vec<&Def> = defs
        .iter()
        .filter(|d| d.kind == Kind::Rd && d.get("fwd").is_some())
        .collect();
    let Some(&tree) = fsds.first() else {
        out.unsupported.push(Unsupported {
            at: out.at(defs.first().map_or(1, |d| d.line)),
            option: "fwd=".into(),
            why: "no file-system definition (fsd=): the workloads have no tree".into(),
        });
        return None;
    };
    for d in &fsds[1..] {
        out.unsupported.push(Unsupported {
            at: out.at(d.line),
            option: format!("fsd={}", d.name),
            why: "storlab's [fs] has one tree; a second fsd is a job of its own".into(),
        });
    }
    for f in &fwds {
        if let Some(n) = &f.fsd {
            if *n != tree.name && f.format.is_none() {
                out.unsupported.push(Unsupported {
                    at: out.at(f.line),
                    option: format!("fwd={},fsd={n}", f.name),
                    why: format!("storlab's [fs] has one tree, fsd={}", tree.name),
                });
            }
        }
    }
    let (tree_toml, mut flags) = fsd(tree, opts, out);
    for f in &fwds {
        if let Some(fl) = &f.flags {
            for x in fl {
                if !flags.contains(x) {
                    flags.push(x);
                }
            }
        }
    }
    let runs: Vec<Rd> = rds.iter().map(|d| rd(d, &fwds, out)).collect();
    let mut t = String::from("\n[fs]\n");
    t.push_str(&tree_toml);
    if !flags.is_empty() {
        let _ = writeln!(t, "openflags = {}", q(&flags.join(",")));
    }
    // The format: the first run definition's (vdbench's default: none).
    let mut format = "no";
    for (i, r) in runs.iter().enumerate() {
        if let Some((f, line)) = r.format {
            if i == 0 {
                format = f;
            } else if f != "no" {
                out.unsupported.push(Unsupported {
                    at: out.at(line),
                    option: format!("format={f}"),
                    why: "storlab formats the tree once, before its first run: give the format to the first run definition".into(),
                });
            }
        }
    }
    let _ = writeln!(t, "format = {}", q(format));
    let spec = fwds.iter().find_map(|f| f.format).unwrap_or((None, None));
    let first_threads = fwds.iter().filter(|f| f.format.is_none()).find_map(|f| {
        f.toml
            .lines()
            .find_map(|l| l.strip_prefix("threads = "))
            .and_then(|n| n.parse::<u32>().ok())
    });
    // vdbench formats with fwd=format's threads and transfer size, else 8 threads of 128k
    // (its examples say the thread count is taken from the first fwd: it is, with no
    // fwd=format, in vdbench 5.02).
    let _ = writeln!(
        t,
        "format_threads = {}\nformat_xfersize = {}",
        spec.0.or(first_threads).unwrap_or(FORMAT_THREADS),
        q(&format_size_exact(spec.1.unwrap_or(FORMAT_XFER)))
    );
    for f in fwds.iter().filter(|f| f.format.is_none()) {
        t.push_str(&f.toml);
    }
    for r in &runs {
        t.push_str(&r.toml);
    }
    if runs.is_empty() {
        out.unsupported.push(Unsupported {
            at: out.at(tree.line),
            option: "rd=".into(),
            why: "no run definition runs the file-system workloads (rd=...,fwd=...)".into(),
        });
    }
    Some(t)
}
