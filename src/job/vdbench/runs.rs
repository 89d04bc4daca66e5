//! vdbench's run definitions (`rd`) as storlab's run control and workers: `elapsed`,
//! `interval` and `warmup` become `duration`, `interval` and `ramp`; `iorate` closed loop
//! (`max`), an open-loop rate, a rate cycle (a list) or the rate curve (`curve`); the `for`
//! parameters `[cycle]` lists; each run definition's storage definitions one worker each (its
//! threads the worker's queue depth), in a group of its own when there are several run
//! definitions, one after another.

use super::defs::{Bound, Out, Sd, Wd, Xfer, matches, openflags, q, seekpct, threads, toml_num};
use super::parse::{Def, Item, Kind, Value, expand, number, seconds, size};
use crate::job::limits::MAX_WORKERS;
use crate::units::format_size_exact;
use std::fmt::Write as _;

/// vdbench's default curve, percent of the maximum.
const DEFAULT_CURVE: [f64; 6] = [10.0, 50.0, 70.0, 80.0, 90.0, 100.0];
/// Steps a job makes at most (as storlab's `[cycle]`).
const MAX_STEPS: usize = 10_000;
/// Access entries a job holds at most (as storlab's workers).
const MAX_ENTRIES: usize = 4096;

/// How a run definition paces its I/Os.
#[derive(Clone, PartialEq)]
enum Rate {
    Max,
    Curve,
    /// IOPS of the whole run; several: a step each.
    Iops(Vec<f64>),
}

/// What every step of a storlab job shares: the run definitions must agree on it.
#[derive(Clone, Default)]
pub(super) struct RunLevel {
    /// TOML lines (with their comments) of the top level.
    pub(super) top: String,
    /// `[cycle]` lines.
    pub(super) cycle: String,
    /// The values alone (no comments), to compare run definitions by.
    values: String,
}

/// The workers of the run definitions, and what they share.
pub(super) struct Runs {
    pub(super) level: RunLevel,
    pub(super) workers: String,
    pub(super) groups: u32,
    /// The sds some run uses, in order.
    pub(super) used: Vec<usize>,
    pub(super) buffered: Option<bool>,
}

fn one(item: &Item) -> Option<&str> {
    match &item.value {
        Value::One(s) => Some(s),
        Value::List(_) => None,
    }
}

pub(super) fn runs(defs: &[Def], sds: &[Sd], wds: &[Wd], out: &mut Out) -> Result<Runs, String> {
    let rds: Vec<&Def> = defs.iter().filter(|d| d.kind == Kind::Rd).collect();
    let mut r = Runs {
        level: RunLevel::default(),
        workers: String::new(),
        groups: 0,
        used: Vec::new(),
        buffered: None,
    };
    let mut first: Option<(RunLevel, &Def)> = None;
    let (mut workers, mut entries) = (0usize, 0usize);
    let several = rds.len() > 1;
    let mut direct_all = true;
    let mut direct_any = false;
    for rd in &rds {
        if let Some(it) = rd.get("fwd") {
            out.bad(it, FS_WHY);
            continue;
        }
        let mut level = RunLevel::default();
        let (mut elapsed, mut interval, mut warmup) = (30u64, 1u64, 0u64);
        let mut rate = None;
        let mut curve = DEFAULT_CURVE.to_vec();
        let mut rd_threads: Option<(u32, usize)> = None;
        let mut arrivals: Option<&str> = Some("poisson");
        let mut chosen: Vec<usize> = Vec::new();
        let mut fors: Vec<(&'static str, Vec<String>, &Item)> = Vec::new();
        let (mut direct, mut sync) = (false, false);
        let mut stop = None;
        let mut pause = None;
        for it in rd.keys() {
            let v = one(it).unwrap_or("");
            let secs = |it: &Item, out: &mut Out, min: u64| match seconds(v).filter(|s| *s >= min) {
                Some(s) => Some(s),
                None => {
                    out.bad(
                        it,
                        format!("a time in whole seconds, at least {min}, e.g. 60"),
                    );
                    None
                }
            };
            match it.key.as_str() {
                "rd" => {}
                "wd" => {
                    for p in it.value.items() {
                        let found: Vec<usize> = (0..wds.len())
                            .filter(|&i| matches(p, &wds[i].name) && !chosen.contains(&i))
                            .collect();
                        if found.is_empty() {
                            out.bad(it, format!("no workload definition is named `{p}`"));
                        }
                        chosen.extend(found);
                    }
                }
                "elapsed" => elapsed = secs(it, out, 1).unwrap_or(elapsed),
                "interval" => interval = secs(it, out, 1).unwrap_or(interval),
                "warmup" => warmup = secs(it, out, 0).unwrap_or(warmup),
                "pause" => pause = secs(it, out, 0),
                "threads" => rd_threads = threads(it, out).map(|n| (n, it.line)),
                "iorate" => rate = iorate(it, out),
                "curve" => match expand(&it.value.items(), number) {
                    Ok(l) if l.iter().all(|p| *p > 0.0 && *p <= 200.0) => curve = l,
                    _ => out.bad(it, "curve points are percentages of the maximum above 0 and at most 200"),
                },
                "stopcurve" => match number(v).filter(|n| *n > 0.0) {
                    Some(ms) => stop = Some((ms, it)),
                    None => out.bad(it, "stopcurve is a response time in milliseconds, e.g. 5.0"),
                },
                "distribution" => match v.to_ascii_lowercase().as_str() {
                    "exponential" => arrivals = Some("poisson"),
                    "deterministic" => arrivals = Some("uniform"),
                    _ => out.bad(
                        it,
                        "storlab's arrivals are exponential (poisson) or evenly spaced (deterministic); not uniformly drawn",
                    ),
                },
                "openflags" => (direct, sync) = openflags(it, out),
                "forxfersize" | "xfersize" => match expand(&it.value.items(), |s| {
                    size(s).filter(|b| (1..=64 << 20).contains(b)).map(|b| b as f64)
                }) {
                    Ok(l) => fors.push((
                        "block_size",
                        l.iter().map(|b| q(&format_size_exact(*b as u64))).collect(),
                        it,
                    )),
                    Err(e) => out.bad(it, e),
                },
                "forrdpct" | "rdpct" => match expand(&it.value.items(), |s| number(s).filter(|n| *n <= 100.0)) {
                    Ok(l) => fors.push(("read", l.iter().map(|p| q(&format!("{p}%"))).collect(), it)),
                    Err(e) => out.bad(it, e),
                },
                "forseekpct" | "seekpct" => {
                    match expand(&it.value.items(), |s| seekpct(s).filter(|(_, eof)| !eof).map(|(r, _)| r)) {
                        Ok(l) => fors.push(("random", l.iter().map(|p| q(&format!("{p}%"))).collect(), it)),
                        Err(e) => out.bad(it, e),
                    }
                }
                "forthreads" => match expand(&it.value.items(), |s| {
                    number(s).filter(|n| *n >= 1.0 && *n <= 4096.0 && *n == n.trunc())
                }) {
                    Ok(l) => fors.push(("queue_depth", l.iter().map(|n| n.to_string()).collect(), it)),
                    Err(e) => out.bad(it, e),
                },
                "forrhpct" | "forwhpct" | "forhitarea" | "rhpct" | "whpct" | "hitarea" => out.bad(
                    it,
                    "storlab does not aim I/Os at a cache area: a cache hit is the device's, measured, not asked for",
                ),
                "forcompratio" | "compratio" => out.bad(
                    it,
                    "storlab's data reduction is one [data] table for the whole job: write compratio= once, at the top",
                ),
                "maxdata" => out.bad(it, "storlab stops a worker after a count of I/Os (io_limit), not of bytes"),
                "format" => out.bad(it, FS_WHY),
                "sd" => out.bad(it, "name the storage definitions through the workloads (wd=), each wd's sd="),
                "startcmd" | "start_cmd" | "endcmd" | "end_cmd" => out.bad(it, "storlab runs no commands"),
                _ => out.bad(it, "not a run-definition parameter storlab converts"),
            }
        }
        if rd.get("wd").is_none() {
            chosen = (0..wds.len()).collect();
        }
        let rate = match rate {
            Some(r) => r,
            None => {
                if rd.get("iorate").is_none() {
                    out.unsupported.push(super::super::import::Unsupported {
                        at: out.at(rd.line),
                        option: format!("rd={}", rd.name),
                        why: "vdbench needs iorate= (max, curve or a rate); without it here: max"
                            .into(),
                    });
                }
                Rate::Max
            }
        };
        // The run level: duration, interval, ramp, curve, cycles.
        let c = out.comment(rd.line, &rd.text);
        let _ = write!(level.top, "{c}");
        let _ = write!(
            level.values,
            "duration = \"{elapsed}s\"\ninterval = \"{interval}s\"\n"
        );
        if warmup > 0 {
            let _ = writeln!(level.values, "ramp = \"{warmup}s\"");
        }
        if let Some(p) = pause {
            let _ = writeln!(level.values, "pause = \"{p}s\"");
        }
        let mut steps = 1usize;
        if rate == Rate::Curve {
            let list: Vec<String> = curve.iter().map(|p| toml_num(*p)).collect();
            let _ = writeln!(level.values, "curve = [{}]", list.join(", "));
            steps = curve.len();
            if let Some((ms, _)) = stop {
                let _ = writeln!(level.values, "stop_when = \"mean > {ms}ms\"");
            }
        } else if let Some((_, it)) = stop {
            out.bad(
                it,
                "stopcurve ends a curve; this run has none (iorate=curve)",
            );
        }
        // Outstanding I/Os: the rd's threads, or each sd's.
        let mut sd_list: Vec<usize> = Vec::new();
        for &w in &chosen {
            for &s in &wds[w].sds {
                if !sd_list.contains(&s) {
                    sd_list.push(s);
                }
            }
        }
        sd_list.sort_unstable();
        workers += sd_list.len();
        if workers > MAX_WORKERS {
            return Err(format!(
                "{}: the run definitions up to rd={} make {workers} workers (one per storage definition and run); storlab makes at most {MAX_WORKERS}",
                out.at(rd.line),
                rd.name
            ));
        }
        if let Rate::Iops(list) = &rate {
            let n = sd_list.len().max(1) as f64;
            if list.len() > 1 {
                let per: Vec<String> = list.iter().map(|r| toml_num(r / n)).collect();
                fors.push(("rate", per, rd.get("iorate").unwrap_or(&rd.items[0])));
            }
        }
        level.top.push_str(&level.values);
        for (key, values, it) in &fors {
            steps = steps.saturating_mul(values.len().max(1));
            let line = format!("{key} = [{}]\n", values.join(", "));
            let _ = write!(level.cycle, "{}{line}", out.comment(it.line, &it.text));
            level.values.push_str(&line);
        }
        if steps > MAX_STEPS {
            return Err(format!(
                "{}: rd={} makes {steps} runs (its for lists and curve multiplied); storlab runs at most {MAX_STEPS} steps",
                out.at(rd.line),
                rd.name
            ));
        }
        if fors.len() > 1 || (!fors.is_empty() && several) {
            let mut order: Vec<&str> = Vec::new();
            if several {
                order.push("\"group\"");
            }
            let names: Vec<String> = fors.iter().map(|(k, _, _)| q(k)).collect();
            let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
            order.append(&mut names);
            let line = format!("order = [{}]\n", order.join(", "));
            level.cycle.push_str(&line);
            level.values.push_str(&line);
        }
        match &first {
            None => first = Some((level.clone(), rd)),
            Some((l, f)) if l.values != level.values => out.unsupported.push(super::super::import::Unsupported {
                at: out.at(rd.line),
                option: format!("rd={}", rd.name),
                why: format!(
                    "its elapsed, interval, warmup, pause, curve or for lists differ from rd={}'s: storlab runs every step of a job with the same ones (put this rd in a file of its own)",
                    f.name
                ),
            }),
            Some(_) => {}
        }
        // Each sd: one worker.
        r.groups += 1;
        let shares = shares(&chosen, wds);
        for &s in &sd_list {
            let sd = &sds[s];
            if !r.used.contains(&s) {
                r.used.push(s);
            }
            let on: Vec<(usize, f64)> = chosen
                .iter()
                .zip(&shares)
                .filter(|(w, _)| wds[**w].sds.contains(&s))
                .map(|(w, share)| (*w, share / wds[*w].sds.len() as f64))
                .collect();
            entries += on.len();
            if entries > MAX_ENTRIES {
                return Err(format!(
                    "{}: the run definitions up to rd={} make {entries} access entries (one per workload, storage definition and run); storlab holds at most {MAX_ENTRIES}",
                    out.at(rd.line),
                    rd.name
                ));
            }
            let is_direct = sd.direct || direct || on.iter().any(|(w, _)| wds[*w].direct);
            direct_all &= is_direct;
            direct_any |= is_direct;
            let name = if several {
                format!("{}.{}", rd.name, sd.name)
            } else {
                sd.name.clone()
            };
            let w = &mut r.workers;
            let _ = write!(
                w,
                "\n{c}[[worker]]\nname = {}\ntargets = [{}]\n",
                q(&name),
                q(&sd.name)
            );
            if several {
                let _ = writeln!(w, "group = {}", r.groups);
            }
            let (qd, qd_line) = match rd_threads {
                Some((n, l)) => (n, Some(l)),
                None => sd.threads,
            };
            let qd_src = match qd_line {
                Some(l) => out.comment(
                    l,
                    &format!("threads={qd}: vdbench's outstanding I/Os on sd={}", sd.name),
                ),
                None => format!(
                    "# vdbench's default: 8 outstanding I/Os on sd={}\n",
                    sd.name
                ),
            };
            let _ = write!(w, "{qd_src}queue_depth = {qd}\n");
            let total: f64 = on.iter().map(|(_, s)| s).sum();
            if let Rate::Iops(list) = &rate
                && list.len() == 1
            {
                let mine = list[0] * total / 100.0;
                let _ = write!(
                    w,
                    "# iorate={}: this sd's share of the run's rate ({} %)\nrate_iops = {}\n",
                    list[0],
                    (total * 100.0).round() / 100.0,
                    toml_num(mine)
                );
                if let Some(a) = arrivals {
                    let _ = writeln!(w, "arrivals = {}", q(a));
                }
            }
            if let [(wi, _)] = on.as_slice()
                && wds[*wi].eof
                && let Xfer::One(b) = wds[*wi].xfer
            {
                let span =
                    span(&wds[*wi], sd).map(|(o, l)| l.or(sd.size.map(|s| s.saturating_sub(o))));
                match span.flatten() {
                    Some(len) => {
                        let _ = write!(w, "# seekpct=eof: once through the span\nio_limit = {}\n", (len / b).max(1));
                    }
                    None => out.notes.push(format!(
                        "{}: wd={}: seekpct=eof runs sequentially for the run's duration (the size of sd={} is not known, give it size=)",
                        out.at(wds[*wi].line),
                        wds[*wi].name,
                        sd.name
                    )),
                }
            }
            for (wi, share) in &on {
                entry(
                    w,
                    out,
                    &wds[*wi],
                    sd,
                    (on.len() > 1).then_some(*share),
                    sync,
                );
            }
        }
    }
    if !rds.is_empty() && !direct_all {
        if direct_any {
            out.unsupported.push(super::super::import::Unsupported {
                at: out.at(rds[0].line),
                option: "openflags".into(),
                why: "some storage definitions are opened with o_direct and some without; storlab opens every target one way (buffered = true or not)".into(),
            });
        } else {
            r.buffered = Some(true);
        }
    }
    if let Some((l, _)) = first {
        r.level = l;
    }
    Ok(r)
}

/// Why file-system workloads are not converted.
pub(super) const FS_WHY: &str = "file-system workloads (fsd/fwd: trees of files, file operations) are not converted: storlab does block I/O on a fixed list of files and devices; for one large file, write sd=NAME,lun=FILE,size=SIZE and a wd";

/// Each chosen workload's share of the run's I/Os, percent: its skew, or an equal part of
/// what the skews leave.
fn shares(chosen: &[usize], wds: &[Wd]) -> Vec<f64> {
    let given: f64 = chosen.iter().filter_map(|&w| wds[w].skew).sum();
    let free = chosen.iter().filter(|&&w| wds[w].skew.is_none()).count();
    let rest = if free > 0 {
        (100.0 - given).max(0.0) / free as f64
    } else {
        0.0
    };
    chosen
        .iter()
        .map(|&w| wds[w].skew.unwrap_or(rest))
        .collect()
}

/// `iorate=`: max, curve, a rate or a list of rates.
fn iorate(it: &Item, out: &mut Out) -> Option<Rate> {
    let items = it.value.items();
    match items.as_slice() {
        [w] if w.eq_ignore_ascii_case("max") => Some(Rate::Max),
        [w] if w.eq_ignore_ascii_case("curve") => Some(Rate::Curve),
        _ => match expand(&items, |s| number(s).filter(|n| *n > 0.0 && *n <= 1e9)) {
            Ok(l) => Some(Rate::Iops(l)),
            Err(_) => {
                out.bad(
                    it,
                    "iorate is max, curve, or I/Os per second above 0 (one or a list)",
                );
                None
            }
        },
    }
}

/// The span of `wd` on `sd`: (offset, length), bytes; `None` when a percentage needs the sd's
/// size and it has none.
fn span(wd: &Wd, sd: &Sd) -> Option<(u64, Option<u64>)> {
    let base = sd.offset.unwrap_or(0);
    let Some((a, b)) = wd.range else {
        return Some((base, None));
    };
    let at = |x: Bound| match x {
        Bound::Bytes(n) => Some(n),
        Bound::Percent(p) => sd.size.map(|s| (s as f64 * p / 100.0) as u64),
    };
    let (a, b) = (at(a)?, at(b)?);
    Some((base + a, Some(b.saturating_sub(a))))
}

/// One access entry: `wd` on `sd`.
fn entry(w: &mut String, out: &mut Out, wd: &Wd, sd: &Sd, weight: Option<f64>, sync: bool) {
    let _ = write!(
        w,
        "\n{}[[worker.access]]\nclass = {}\n",
        out.comment(wd.line, &wd.text),
        q(&wd.name)
    );
    if let Some(s) = weight {
        let _ = writeln!(w, "weight = {}", ((s * 100.0).round() as u32).max(1));
    }
    match &wd.xfer {
        Xfer::One(b) => {
            let _ = writeln!(w, "block_size = {}", q(&format_size_exact(*b)));
        }
        Xfer::Dist(d) => {
            let list: Vec<String> = d
                .iter()
                .map(|(b, p)| format!("{} = {p}", q(&format_size_exact(*b))))
                .collect();
            let _ = writeln!(w, "block_sizes = {{ {} }}", list.join(", "));
        }
    }
    let _ = writeln!(
        w,
        "read = {}\nrandom = {}",
        q(&format!("{}%", wd.read)),
        q(&format!("{}%", wd.random))
    );
    match span(wd, sd) {
        Some((off, len)) => {
            if off > 0 {
                let _ = writeln!(w, "offset = {}", q(&format_size_exact(off)));
            }
            if let Some(l) = len {
                let _ = writeln!(w, "length = {}", q(&format_size_exact(l.max(1))));
            }
        }
        None => out.unsupported.push(super::super::import::Unsupported {
            at: out.at(wd.line),
            option: format!("wd={} range", wd.name),
            why: format!("a range in percent needs the size of sd={}: give it size=, or write the range in bytes", sd.name),
        }),
    }
    if let Some(a) = sd.align {
        let _ = writeln!(w, "align = {}", q(&format_size_exact(a)));
    }
    if wd.sync || sync || sd.sync {
        let _ = writeln!(w, "sync = true");
    }
}
