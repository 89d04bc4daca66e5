//! vdbench's run definitions (`rd`) as storlab's run control and workers: `elapsed`,
//! `interval` and `warmup` become `duration`, `interval` and `ramp`; `iorate` closed loop
//! (`max`), an open-loop rate, a rate cycle (a list) or the rate curve (`curve`); the `for`
//! parameters `[cycle]` lists; each run definition's storage definitions one worker each (its
//! threads the worker's queue depth), in a group of its own when there are several run
//! definitions, one after another.

use super::defs::{Bound, Out, Sd, Wd, Xfer, matches, openflags, q, seekpct, threads, toml_num};
use super::parse::{Def, Item, Kind, Value, expand, number, seconds, size};
use crate::import::Unsupported;
use crate::units::format_size_exact;
use std::fmt::Write as _;

/// vdbench's default curve, percent of the maximum.
const DEFAULT_CURVE: [f64; 6] = [10.0, 50.0, 70.0, 80.0, 90.0, 100.0];
/// Steps a job makes at most (as storlab's `[cycle]`).
const MAX_STEPS: usize = 10_000;
/// Access entries a job holds at most (as storlab's workers; each worker here has one at
/// least, so this bounds the workers, at most `limits::MAX_WORKERS`, too).
const MAX_ENTRIES: usize = crate::job::MAX_WORKERS;

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

/// A run definition as read.
struct Rd<'a> {
    def: &'a Def,
    elapsed: u64,
    interval: u64,
    warmup: u64,
    pause: Option<u64>,
    rate: Rate,
    curve: Vec<f64>,
    /// The rd's threads and their line.
    threads: Option<(u32, usize)>,
    arrivals: Option<&'static str>,
    /// Indexes into the wds.
    chosen: Vec<usize>,
    /// `[cycle]` key, TOML values, the item.
    fors: Vec<(&'static str, Vec<String>, &'a Item)>,
    direct: bool,
    sync: bool,
    stop: Option<(f64, &'a Item)>,
    /// `maxdata=`: bytes, or (below 100) times the storage definitions' size.
    maxdata: Option<(f64, &'a Item)>,
}

/// A time in whole seconds of at least `min`, or unsupported.
fn secs(it: &Item, out: &mut Out, min: u64) -> Option<u64> {
    let s = one(it).and_then(seconds).filter(|s| *s >= min);
    if s.is_none() {
        out.bad(
            it,
            format!("a time in whole seconds, at least {min}, e.g. 60"),
        );
    }
    s
}

/// A `for` parameter (or a run definition's list of a wd parameter) as a `[cycle]` list.
fn for_list(it: &Item, out: &mut Out) -> Option<(&'static str, Vec<String>)> {
    let items = it.value.items();
    let pct = |l: Vec<f64>| l.iter().map(|p| q(&format!("{p}%"))).collect();
    let got = match it.key.as_str() {
        "forxfersize" | "xfersize" => expand(&items, |s| {
            size(s)
                .filter(|b| (1..=64 << 20).contains(b))
                .map(|b| b as f64)
        })
        .map(|l| {
            let sizes = l.iter().map(|b| q(&format_size_exact(*b as u64)));
            ("block_size", sizes.collect())
        }),
        "forrdpct" | "rdpct" => {
            expand(&items, |s| number(s).filter(|n| *n <= 100.0)).map(|l| ("read", pct(l)))
        }
        "forseekpct" | "seekpct" => expand(&items, |s| {
            seekpct(s).filter(|(_, eof)| !eof).map(|(r, _)| r)
        })
        .map(|l| ("random", pct(l))),
        _ => expand(&items, |s| {
            number(s).filter(|n| *n >= 1.0 && *n <= 4096.0 && *n == n.trunc())
        })
        .map(|l| ("queue_depth", l.iter().map(|n| n.to_string()).collect())),
    };
    got.map_err(|e| out.bad(it, e)).ok()
}

/// Reads one run definition's parameters.
fn read_rd<'a>(rd: &'a Def, wds: &[Wd], out: &mut Out) -> Rd<'a> {
    let mut r = Rd {
        def: rd,
        elapsed: 30,
        interval: 1,
        warmup: 0,
        pause: None,
        rate: Rate::Max,
        curve: DEFAULT_CURVE.to_vec(),
        threads: None,
        arrivals: Some("poisson"),
        chosen: Vec::new(),
        fors: Vec::new(),
        direct: false,
        sync: false,
        stop: None,
        maxdata: None,
    };
    const CACHE: &str = "storlab does not aim I/Os at a cache area: a cache hit is the device's, measured, not asked for";
    for it in rd.keys() {
        let v = one(it).unwrap_or("");
        match it.key.as_str() {
            "rd" => {}
            "wd" => {
                for p in it.value.items() {
                    let found: Vec<usize> = (0..wds.len())
                        .filter(|&i| matches(p, &wds[i].name) && !r.chosen.contains(&i))
                        .collect();
                    if found.is_empty() {
                        out.bad(it, format!("no workload definition is named `{p}`"));
                    }
                    r.chosen.extend(found);
                }
            }
            "elapsed" => r.elapsed = secs(it, out, 1).unwrap_or(r.elapsed),
            "interval" => r.interval = secs(it, out, 1).unwrap_or(r.interval),
            "warmup" => r.warmup = secs(it, out, 0).unwrap_or(r.warmup),
            "pause" => r.pause = secs(it, out, 0),
            "threads" | "thread" => r.threads = threads(it, out).map(|n| (n, it.line)),
            "iorate" => r.rate = iorate(it, out).unwrap_or(Rate::Max),
            "curve" => match expand(&it.value.items(), number) {
                Ok(l) if l.iter().all(|p| *p > 0.0 && *p <= 200.0) => r.curve = l,
                _ => out.bad(
                    it,
                    "curve points are percentages of the maximum above 0 and at most 200",
                ),
            },
            "stopcurve" => match number(v).filter(|n| *n > 0.0) {
                Some(ms) => r.stop = Some((ms, it)),
                None => out.bad(
                    it,
                    "stopcurve is a response time in milliseconds, e.g. 5.0",
                ),
            },
            "distribution" => match v.to_ascii_lowercase().as_str() {
                "exponential" => r.arrivals = Some("poisson"),
                "deterministic" => r.arrivals = Some("uniform"),
                _ => out.bad(
                    it,
                    "storlab's arrivals are exponential (poisson) or evenly spaced (deterministic); not uniformly drawn",
                ),
            },
            "openflags" => (r.direct, r.sync) = openflags(it, out),
            "forxfersize" | "xfersize" | "forrdpct" | "rdpct" | "forseekpct" | "seekpct"
            | "forthreads" => {
                if let Some((key, values)) = for_list(it, out) {
                    r.fors.push((key, values, it));
                }
            }
            "forrhpct" | "forwhpct" | "forhitarea" | "rhpct" | "whpct" | "hitarea" => {
                out.bad(it, CACHE);
            }
            "forcompratio" | "compratio" => out.bad(
                it,
                "storlab's data reduction is one [data] table for the whole job: write compratio= once, at the top",
            ),
            "maxdata" => match number(v).or_else(|| size(v).map(|b| b as f64)) {
                Some(n) if n > 0.0 => r.maxdata = Some((n, it)),
                _ => out.bad(it, "maxdata is bytes (e.g. 100g) or, below 100, times the storage's size"),
            },
            "format" | "fwd" | "fwdrate" => out.bad(it, FS_WHY),
            "sd" => out.bad(
                it,
                "name the storage definitions through the workloads (wd=), each wd's sd=",
            ),
            "startcmd" | "start_cmd" | "endcmd" | "end_cmd" => {
                out.bad(it, "storlab runs no commands");
            }
            _ => out.bad(it, "not a run-definition parameter storlab converts"),
        }
    }
    if rd.get("wd").is_none() {
        r.chosen = (0..wds.len()).collect();
    }
    if rd.get("iorate").is_none() && rd.get("fwd").is_none() {
        out.unsupported.push(Unsupported {
            at: out.at(rd.line),
            option: format!("rd={}", rd.name),
            why: "vdbench needs iorate= (max, curve or a rate); without it here: max".into(),
        });
    }
    r
}

/// What a run definition sets for the whole job, with `workers` workers.
fn level(r: &mut Rd, workers: usize, out: &mut Out) -> Result<RunLevel, String> {
    let rd = r.def;
    let mut level = RunLevel::default();
    let _ = write!(level.top, "{}", out.comment(rd.line, &rd.text));
    let _ = writeln!(
        level.values,
        "duration = \"{}s\"\ninterval = \"{}s\"",
        r.elapsed, r.interval
    );
    if r.warmup > 0 {
        let _ = writeln!(level.values, "ramp = \"{}s\"", r.warmup);
    }
    if let Some(p) = r.pause {
        let _ = writeln!(level.values, "pause = \"{p}s\"");
    }
    let mut steps = 1usize;
    if r.rate == Rate::Curve {
        let list: Vec<String> = r.curve.iter().map(|p| toml_num(*p)).collect();
        let _ = writeln!(level.values, "curve = [{}]", list.join(", "));
        steps = r.curve.len();
        if let Some((ms, _)) = r.stop {
            let _ = writeln!(level.values, "stop_when = \"mean > {ms}ms\"");
        }
    } else if let Some((_, it)) = r.stop {
        out.bad(
            it,
            "stopcurve ends a curve; this run has none (iorate=curve)",
        );
    }
    level.top.push_str(&level.values);
    if let Rate::Iops(list) = &r.rate
        && list.len() > 1
    {
        let n = workers.max(1) as f64;
        let per: Vec<String> = list.iter().map(|v| toml_num(v / n)).collect();
        r.fors
            .push(("rate", per, rd.get("iorate").unwrap_or(&rd.items[0])));
    }
    for (key, values, it) in &r.fors {
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
    Ok(level)
}

/// The `[cycle]` nesting: the group outermost, then the `for` lists as written.
fn order(level: &mut RunLevel, fors: &[(&'static str, Vec<String>, &Item)], several: bool) {
    if fors.len() > 1 || (!fors.is_empty() && several) {
        let mut order: Vec<String> = Vec::new();
        if several {
            order.push(q("group"));
        }
        order.extend(fors.iter().map(|(k, _, _)| q(k)));
        let line = format!("order = [{}]\n", order.join(", "));
        level.cycle.push_str(&line);
        level.values.push_str(&line);
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
    let mut entries = 0usize;
    let several = rds.len() > 1;
    let (mut direct_all, mut direct_any) = (true, false);
    for rd in &rds {
        if let Some(it) = rd.get("fwd") {
            out.bad(it, FS_WHY);
            continue;
        }
        let mut run = read_rd(rd, wds, out);
        // Each (workload, storage definition) pair of the run is an access entry: counted
        // before any is made (a worker has one at least, so workers are bounded too).
        entries += run.chosen.iter().map(|&w| wds[w].sds.len()).sum::<usize>();
        if entries > MAX_ENTRIES {
            return Err(format!(
                "{}: the run definitions up to rd={} make {} access entries (one per workload, storage definition and run); storlab holds at most {MAX_ENTRIES}",
                out.at(rd.line),
                rd.name,
                entries
            ));
        }
        let mut sd_list: Vec<usize> = Vec::new();
        for &w in &run.chosen {
            for &s in &wds[w].sds {
                if !sd_list.contains(&s) {
                    sd_list.push(s);
                }
            }
        }
        sd_list.sort_unstable();
        let mut lvl = level(&mut run, sd_list.len(), out)?;
        order(&mut lvl, &run.fors, several);
        match &first {
            None => first = Some((lvl, rd)),
            Some((l, f)) if l.values != lvl.values => {
                // Left out whole (with --lenient): its workers would run with the first's.
                out.unsupported.push(Unsupported {
                    at: out.at(rd.line),
                    option: format!("rd={}", rd.name),
                    why: format!(
                        "its elapsed, interval, warmup, pause, curve or for lists differ from rd={}'s: storlab runs every step of a job with the same ones (put this rd in a file of its own)",
                        f.name
                    ),
                });
                continue;
            }
            Some(_) => {}
        }
        r.groups += 1;
        for s in sd_list {
            if !r.used.contains(&s) {
                r.used.push(s);
            }
            let direct = worker(&mut r, &run, s, sds, wds, several, out);
            direct_all &= direct;
            direct_any |= direct;
        }
    }
    if !rds.is_empty() && !direct_all {
        if direct_any {
            out.unsupported.push(Unsupported {
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

/// The worker of run `run` on sd `s`, written into `r.workers`; whether it opens O_DIRECT.
fn worker(
    r: &mut Runs,
    run: &Rd,
    s: usize,
    sds: &[Sd],
    wds: &[Wd],
    several: bool,
    out: &mut Out,
) -> bool {
    let (rd, sd) = (run.def, &sds[s]);
    let shares = shares(&run.chosen, wds);
    let on: Vec<(usize, f64)> = run
        .chosen
        .iter()
        .zip(&shares)
        .filter(|(w, _)| wds[**w].sds.contains(&s))
        .map(|(w, share)| (*w, share / wds[*w].sds.len() as f64))
        .collect();
    let direct = sd.direct || run.direct || on.iter().any(|(w, _)| wds[*w].direct);
    let name = if several {
        format!("{}.{}", rd.name, sd.name)
    } else {
        sd.name.clone()
    };
    let w = &mut r.workers;
    let _ = write!(
        w,
        "\n{}[[worker]]\nname = {}\ntargets = [{}]\n",
        out.comment(rd.line, &rd.text),
        q(&name),
        q(&sd.name)
    );
    if several {
        let _ = writeln!(w, "group = {}", r.groups);
    }
    let (qd, qd_line) = match run.threads {
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
    let _ = writeln!(w, "{qd_src}queue_depth = {qd}");
    let total: f64 = on.iter().map(|(_, s)| s).sum();
    if let Rate::Iops(list) = &run.rate
        && list.len() == 1
    {
        let _ = writeln!(
            w,
            "# iorate={}: this sd's share of the run's rate ({} %)\nrate_iops = {}",
            list[0],
            (total * 100.0).round() / 100.0,
            toml_num(list[0] * total / 100.0)
        );
        if let Some(a) = run.arrivals {
            let _ = writeln!(w, "arrivals = {}", q(a));
        }
    }
    if let [(wi, _)] = on.as_slice() {
        match run.maxdata {
            Some(m) => max_data(w, out, m, &wds[*wi], sd),
            None => once_through(w, out, &wds[*wi], sd),
        }
    } else if let Some((_, it)) = run.maxdata {
        out.bad(it, "maxdata stops the run after its bytes over every workload; storlab's limit is a count of I/Os per worker, exact only for a run of one workload on one storage definition");
    }
    for (wi, share) in &on {
        entry(
            w,
            out,
            &wds[*wi],
            sd,
            (on.len() > 1).then_some(*share),
            run.sync,
        );
    }
    direct
}

/// `seekpct=eof` on a worker's only workload: an I/O limit of once through its span.
fn once_through(w: &mut String, out: &mut Out, wd: &Wd, sd: &Sd) {
    let Xfer::One(b) = wd.xfer else {
        return;
    };
    if !wd.eof {
        return;
    }
    let len = span(wd, sd).and_then(|(o, l)| l.or(sd.size.map(|s| s.saturating_sub(o))));
    match len {
        Some(len) => {
            let _ = writeln!(
                w,
                "# seekpct=eof: once through the span\nio_limit = {}",
                (len / b).max(1)
            );
        }
        None => out.notes.push(format!(
            "{}: wd={}: seekpct=eof runs sequentially for the run's duration (the size of sd={} is not known, give it size=)",
            out.at(wd.line),
            wd.name,
            sd.name
        )),
    }
}

/// `maxdata=` of a run of one workload on one storage definition: an I/O limit of that many
/// bytes (below 100: times the sd's size) in I/Os of its one transfer size. vdbench checks it
/// at each interval's end; storlab stops at the I/O that reaches it (noted).
fn max_data(w: &mut String, out: &mut Out, (n, it): (f64, &Item), wd: &Wd, sd: &Sd) {
    let Xfer::One(b) = wd.xfer else {
        return out.bad(it, "maxdata with several transfer sizes: storlab's limit is a count of I/Os; give one xfersize");
    };
    let bytes = if n < 100.0 {
        match sd.size {
            Some(size) => n * size as f64,
            None => return out.bad(
                it,
                format!(
                    "maxdata={n} is times the size of sd={}: give it size=, or maxdata in bytes",
                    sd.name
                ),
            ),
        }
    } else {
        n
    };
    let ios = (bytes / b as f64).ceil().max(1.0);
    if ios > 1e15 {
        return out.bad(it, "maxdata of more than 10^15 I/Os");
    }
    let _ = writeln!(
        w,
        "{}io_limit = {}",
        out.comment(it.line, &format!("{}: {} bytes in {b}-byte I/Os (vdbench stops at the interval's end after it; storlab at the I/O that reaches it)", it.text, bytes)),
        ios as u64
    );
}

/// Why file-system workloads are not converted.
pub(super) const FS_WHY: &str = "a file-system parameter (fwd, fwdrate, format) in a run of block workloads: give the file-system workloads (fsd, fwd and their rd) a parameter file of their own";

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

/// `range=(A,B)` in percent of a fully random workload as storlab's zones: no I/O before A,
/// all of it from A to B, none after (`zoned:0/10:100/10:0/80` for `(10,20)`).
fn percent_zones(wd: &Wd) -> Option<String> {
    let Some((Bound::Percent(a), Bound::Percent(b))) = wd.range else {
        return None;
    };
    if wd.random < 100.0 || b <= a {
        return None;
    }
    let zones: Vec<String> = [(0.0, a), (100.0, b - a), (0.0, 100.0 - b)]
        .iter()
        .filter(|(_, span)| *span > 0.0)
        .map(|(io, span)| format!("{io}/{span}"))
        .collect();
    Some(format!("zoned:{}", zones.join(":")))
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
        None => match percent_zones(wd) {
            // Random I/O within a share of a device of unknown size: all of the I/O in that
            // zone of the target, as vdbench draws it within the range.
            Some(zones) => {
                let _ = writeln!(w, "distribution = {}", q(&zones));
            }
            None => out.unsupported.push(Unsupported {
                at: out.at(wd.line),
                option: format!("wd={} range", wd.name),
                why: format!("sequential I/O in a range in percent needs the size of sd={}: give it size=, or write the range in bytes (random I/O in a range in percent converts without it)", sd.name),
            }),
        },
    }
    if let Some(a) = sd.align {
        let _ = writeln!(w, "align = {}", q(&format_size_exact(a)));
    }
    if wd.sync || sync || sd.sync {
        let _ = writeln!(w, "sync = true");
    }
}
