//! fio job files as storlab jobs: `storlab import-fio JOB.fio` and `storlab run --fio JOB.fio`.
//! The ini file is read as fio reads it (sections, `[global]` options for the jobs after them,
//! `include` lines, `${VAR}` from the environment, `;` and `#` comments), then each fio job
//! becomes a `[[worker]]` (its clones: `count`), its files `[[target]]`s, and its workload one
//! access entry. Jobs separated by `stonewall` run one group after another: `group = N` on the
//! workers and `[cycle] group = [1, 2, ...]`, a step each. Every option is either converted,
//! accepted as having no effect in storlab (said so in a comment of the job), or unsupported:
//! listed with its file and line, an error unless `lenient`. Each part of the converted job
//! follows a comment naming the source lines it came from (`# job.fio:12: rw=randread`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod features;
mod flow;
mod job;
mod read;
mod sizes;
mod zones;

use job::{TargetOf, convert_job};

use crate::import::{self, Converted, ImportError as FioError, Options, Unsupported};

/// An option of a fio job file and where it was written.
#[derive(Debug, Clone)]
struct Opt {
    value: Option<String>,
    file: PathBuf,
    line: usize,
    /// The name the file gave it when that is fio's other name for it (`timeout` for
    /// `runtime`): what messages and comments quote.
    written: Option<&'static str>,
}

impl Opt {
    /// The option as its file wrote it, `key` being the name storlab reads it by.
    fn shown(&self, key: &str) -> String {
        let key = self.written.unwrap_or(key);
        match &self.value {
            Some(v) => format!("{key}={v}"),
            None => key.to_string(),
        }
    }
}

/// A section: its name and options, in order (a later one replaces an earlier one of the
/// same name, as in fio).
#[derive(Debug, Clone, Default)]
struct Section {
    name: String,
    opts: BTreeMap<String, Opt>,
    /// Where its `[name]` line is.
    file: PathBuf,
    line: usize,
}

/// Options that have no effect on what storlab measures, and why.
const NO_EFFECT: &[(&str, &str)] = &[
    ("thread", "storlab's workers are threads"),
    // fio registers its profiles' options with its own (profiles/tiobench.c), so it reads
    // `threads` in any job, and uses it only with profile=tiobench (its own examples
    // steadystate.fio and waitfor.fio carry it).
    (
        "threads",
        "the tiobench profile's thread count, which fio uses only with profile=tiobench",
    ),
    ("new_group", "each job is reported as its own class"),
    ("randrepeat", "storlab's offsets are seeded (`seed`)"),
    ("gtod_reduce", "storlab times every I/O"),
    ("clocksource", "storlab uses the monotonic clock"),
    (
        "lat_percentiles",
        "storlab reports percentiles of every latency",
    ),
    (
        "clat_percentiles",
        "storlab reports percentiles of every latency",
    ),
    (
        "percentile_list",
        "storlab reports its own percentiles; every bucket is in the results",
    ),
    ("log_avg_msec", "storlab's time series has its `interval`"),
    ("write_bw_log", "storlab writes a time series"),
    ("write_lat_log", "storlab writes a time series"),
    ("write_iops_log", "storlab writes a time series"),
    ("write_hist_log", "storlab keeps the histograms"),
    ("per_job_logs", "storlab writes one time series"),
    ("invalidate", "storlab reads with O_DIRECT unless buffered"),
    (
        "fixedbufs",
        "storlab registers its buffers whenever the kernel allows (engine.io_uring in the results says)",
    ),
    (
        "registerfiles",
        "storlab registers its files whenever the kernel allows (engine.io_uring in the results says)",
    ),
    (
        "unified_rw_reporting",
        "storlab reports reads and writes apart",
    ),
    ("overwrite", "storlab fills its files before the run"),
    ("fallocate", "storlab fills its files before the run"),
    ("create_on_open", "storlab creates its files before the run"),
    ("allow_file_create", "storlab creates missing files"),
    ("disable_lat", "storlab times every I/O"),
    ("disable_clat", "storlab times every I/O"),
    ("disable_slat", "storlab times every I/O"),
    ("disable_bw_measurement", "storlab measures bandwidth"),
    ("stats", "storlab keeps statistics"),
    (
        "log_prio",
        "storlab writes a time series; each I/O's priority is the worker's",
    ),
    ("end_fsync", "storlab does not time a final fsync"),
    (
        "random_generator",
        "which generator draws fio's offsets; storlab draws the same distribution from its own seeded generator",
    ),
    (
        "io_submit_mode",
        "storlab submits from the worker (inline); with offload fio hands submissions to other threads, which storlab's open loop does not need to avoid coordinated omission",
    ),
    (
        "group_reporting",
        "storlab reports each class; jobs with group_reporting share one",
    ),
    ("unlink", "storlab leaves its files"),
    ("unlink_each_loop", "storlab leaves its files"),
    ("ioscheduler", "storlab uses the device's scheduler as set"),
    (
        "cpus_allowed_policy",
        "storlab pins a worker's copies to its CPUs in turn",
    ),
    ("log_offset", "storlab writes a time series"),
    ("log_hist_msec", "storlab keeps the histograms"),
    ("significant_figures", "storlab prints its own precision"),
    (
        "scramble_buffers",
        "storlab's buffers are unique unless [data] asks otherwise",
    ),
    (
        "refill_buffers",
        "storlab's buffers are unique unless [data] asks otherwise",
    ),
];

/// Options of storlab's job-wide settings: their comments are at the top of the job.
const SETTINGS: [&str; 7] = [
    "ioengine",
    "direct",
    "buffered",
    "runtime",
    "ramp_time",
    "iodepth_batch_submit",
    "iodepth_batch",
];

/// Options whose source comment is beside the key they become (the others are listed before
/// their job's `[[worker]]`, or `[global]`'s at the top).
const INLINE: &[&str] = &[
    "iodepth_batch_complete_min",
    "iodepth_batch_complete",
    "iodepth_batch_complete_max",
    "hipri",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "verify",
    "ss",
    "ss_dur",
    "ss_ramp",
    "ss_interval",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "buffer_compress_percentage",
    "dedupe_percentage",
    "startdelay",
    "rate_iops_min",
    "ratemin",
    "ratecycle",
    "prioclass",
    "prio",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "numa_cpu_nodes",
    "filename",
];

/// Converts the fio job file `text`, read from `path` (the files it includes are read beside
/// it): `opts.lenient` leaves out what cannot be converted, `opts.map` places `filename`s
/// written for another machine.
pub(super) fn convert(path: &Path, text: &str, opts: &Options) -> Result<Converted, FioError> {
    let sections = read::read(path, text)?;
    convert_sections(path, &sections, opts)
}

/// A fio job with its global options merged in, ready to convert.
struct JobOpts<'a> {
    opts: BTreeMap<&'a str, &'a Opt>,
    /// Options seen (converted or accepted): the rest are unsupported.
    used: std::cell::RefCell<Vec<&'a str>>,
}

impl<'a> JobOpts<'a> {
    fn get(&self, key: &'a str) -> Option<&'a Opt> {
        let o = self.opts.get(key).copied();
        if o.is_some() {
            self.used.borrow_mut().push(key);
        }
        o
    }

    fn value(&self, key: &'a str) -> Option<&'a str> {
        self.get(key).map(|o| o.value.as_deref().unwrap_or("1"))
    }

    fn flag(&self, key: &'a str) -> bool {
        self.value(key).is_some_and(|v| v != "0")
    }
}

/// What the conversion collects while it goes.
#[derive(Default)]
struct Out {
    unsupported: Vec<Unsupported>,
    notes: Vec<String>,
    /// Comments naming the source lines of the job-wide keys (engine, duration, ...).
    top: String,
    /// The first job's verification, steady state, latency target and `[data]` keys.
    extra: String,
    /// fio's latency target: queue depths doubling from 1 to this, each a step this long.
    depth_cycle: Option<(u32, Option<String>)>,
}

impl Out {
    /// A note for the job's comments, once.
    fn note(&mut self, n: &str) {
        if !self.notes.iter().any(|m| m == n) {
            self.notes.push(n.to_string());
        }
    }

    fn bad(&mut self, o: &Opt, key: &str, why: impl Into<String>) {
        self.unsupported.push(Unsupported {
            at: format!("{}:{}", o.file.display(), o.line),
            option: o.shown(key),
            why: why.into(),
        });
    }
}

/// One converted fio job: its worker's TOML and its targets.
struct Worker {
    name: String,
    /// Its `numjobs`: the storlab workers it makes.
    clones: u32,
    toml: String,
    targets: Vec<TargetOf>,
    group: u32,
    /// Comments naming the source lines it came from.
    sources: String,
    /// fio's reporting group (its `groupid`: a new one at each `stonewall` or `new_group`),
    /// what `exit_what=group` stops.
    report_group: u32,
    /// Its `exit_what`, if given.
    exit_what: Option<Opt>,
    /// Its `flow`, if it has one.
    flow: Option<flow::Flow>,
}

/// Job-wide settings every fio job must agree on.
#[derive(Default, PartialEq, Clone)]
struct Global {
    engine: Option<&'static str>,
    buffered: Option<bool>,
    duration: Option<String>,
    ramp: Option<String>,
    batch: Option<u32>,
    /// Verification, steady state, latency target and data reduction (the TOML keys, without
    /// their comments).
    extra: String,
}

fn convert_sections(
    path: &Path,
    sections: &[Section],
    opts: &Options,
) -> Result<Converted, FioError> {
    let mut out = Out::default();
    let mut global: BTreeMap<String, Opt> = BTreeMap::new();
    let mut workers: Vec<Worker> = Vec::new();
    let mut job_wide: Option<Global> = None;
    let mut group = 1u32;
    // The last group any job is in (wait_for puts a job after the one it names).
    let mut last_group = 1u32;
    let mut groups_of: std::collections::HashMap<String, u32> = Default::default();
    let mut description = None;
    let mut group_class: Option<String> = None;
    let mut paths = std::collections::HashMap::new();
    let mut clones = 0usize;
    let mut global_lines = Vec::new();
    // fio's reporting groups (`groupid`), and the jobs in the current one.
    let mut reporting = (0u32, 0usize);
    // fio's `exitall` in any job: every job that ends stops others (its `exit_what`).
    let mut exitall: Option<Opt> = None;
    for s in sections {
        if s.name == "global" {
            add_global(path, s, &mut global, &mut global_lines)?;
            continue;
        }
        let mut merged: BTreeMap<&str, &Opt> =
            global.iter().map(|(k, v)| (k.as_str(), v)).collect();
        for (k, v) in &s.opts {
            merged.insert(k.as_str(), v);
        }
        let job = JobOpts {
            opts: merged,
            used: Default::default(),
        };
        let name = job.value("name").unwrap_or(&s.name).to_string();
        // stonewall (or wait_for_previous) on a job: it waits for every job before it.
        if (job.flag("stonewall") || job.flag("wait_for_previous")) && !workers.is_empty() {
            last_group += 1;
            group = last_group;
            group_class = None;
        }
        if (job.flag("stonewall") || job.flag("new_group")) && reporting.1 > 0 {
            reporting = (reporting.0 + 1, 0);
        }
        reporting.1 += 1;
        if let Some(o) = job.get("exitall") {
            exitall.get_or_insert_with(|| o.clone());
        }
        let exit_what = job.get("exit_what").cloned();
        // wait_for=NAME: the job starts when NAME has finished: the group after NAME's.
        let mut my_group = group;
        if let Some(o) = job.get("wait_for") {
            match o.value.as_deref().and_then(|n| groups_of.get(n.trim())) {
                Some(g) => {
                    my_group = g + 1;
                    last_group = last_group.max(my_group);
                }
                None => out.bad(o, "wait_for", "names no job before this one (fio waits for a job defined earlier in the file)"),
            }
        }
        if let Some(d) = job.value("description") {
            description.get_or_insert_with(|| d.to_string());
        }
        let class = if job.flag("group_reporting") {
            group_class.get_or_insert_with(|| name.clone()).clone()
        } else {
            name.clone()
        };
        let w = convert_job(
            &job,
            &name,
            &class,
            my_group,
            &mut job_wide,
            &mut paths,
            opts,
            &mut out,
        );
        groups_of.insert(name.clone(), my_group);
        let flow = flow::of(&job, &mut out);
        for (key, why) in features::LACKS {
            if let Some(o) = job.get(key) {
                out.bad(o, key, *why);
            }
        }
        for (key, why) in NO_EFFECT {
            if job.get(key).is_some()
                && !out.notes.iter().any(|n| n.starts_with(&format!("{key}:")))
            {
                out.notes.push(format!("{key}: no effect ({why})"));
            }
        }
        let used = job.used.borrow();
        for (key, o) in &job.opts {
            if !used.contains(key) {
                out.bad(o, key, "not an option storlab converts");
            }
        }
        let mut w = w;
        w.sources = job_sources(s);
        w.report_group = reporting.0;
        w.exit_what = exit_what;
        w.flow = flow;
        clones += w.clones as usize;
        if clones > crate::job::MAX_WORKERS {
            let at = match job.opts.get("numjobs") {
                Some(o) => format!("{}:{}", o.file.display(), o.line),
                None => format!("{} [{}]", path.display(), s.name),
            };
            return Err(FioError::Read(format!(
                "{at}: the jobs up to [{}] make {clones} workers (numjobs counted); storlab runs at most {} workers in all: lower numjobs, or convert the jobs apart",
                s.name,
                crate::job::MAX_WORKERS
            )));
        }
        workers.push(w);
    }
    let engine = job_wide.as_ref().and_then(|g| g.engine);
    let mut workers = flow::merge(workers, engine, &mut out);
    exits(&mut workers, exitall.as_ref(), &mut out);
    once_in_file_order(&mut out.unsupported);
    if workers.is_empty() && out.unsupported.is_empty() {
        return Err(FioError::Read(format!(
            "{}: no job section (only [global]); fio runs nothing from it, and neither can storlab",
            path.display()
        )));
    }
    global_lines.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    out.top = global_lines
        .into_iter()
        .map(|(_, _, c)| c)
        .collect::<String>()
        + &out.top;
    if !out.unsupported.is_empty() && !opts.lenient {
        return Err(FioError::Unsupported(
            out.unsupported,
            path.display().to_string(),
        ));
    }
    Ok(Converted {
        toml: render(
            path,
            &workers,
            &job_wide.unwrap_or_default(),
            description,
            last_group,
            &out,
        ),
        left_out: out.unsupported,
        read: Vec::new(),
    })
}

/// A `[global]` section's options, for the jobs after it, and their source comments.
fn add_global(
    path: &Path,
    s: &Section,
    global: &mut BTreeMap<String, Opt>,
    lines: &mut Vec<(PathBuf, usize, String)>,
) -> Result<(), FioError> {
    for (k, v) in &s.opts {
        global.insert(k.clone(), v.clone());
    }
    lines.push((s.file.clone(), s.line, section_comment(s)));
    for (k, v) in &s.opts {
        if !INLINE.contains(&k.as_str()) && !SETTINGS.contains(&k.as_str()) {
            lines.push((v.file.clone(), v.line, features::from(v, k)));
        }
    }
    if global.len() > read::MAX_OPTIONS {
        return Err(FioError::Read(format!(
            "{}: its [global] sections hold {} options together; they hold at most {} (fio has about 400)",
            path.display(),
            global.len(),
            read::MAX_OPTIONS
        )));
    }
    Ok(())
}

/// An option unsupported in [global] listed once, not for every job; in file order.
fn once_in_file_order(unsupported: &mut Vec<Unsupported>) {
    unsupported.sort_by_key(|u| {
        let (file, line) = u.at.rsplit_once(':').unwrap_or((&u.at, "0"));
        (file.to_string(), line.parse::<usize>().unwrap_or(0))
    });
    let mut seen = std::collections::HashSet::new();
    unsupported.retain(|u| seen.insert((u.at.clone(), u.option.clone())));
}

/// fio's `exitall` (in any job, it holds for all): a job that has done its I/O stops others,
/// as its `exit_what` says: `stonewall` the jobs running (the step: `on_done = "end-step"`),
/// `all` those and the ones still to run (`"end-run"`), `group` (the default) those of its
/// reporting group: the step when that group is the step's every job, nothing more when the
/// job is alone in it, and otherwise what storlab cannot do (it ends a whole step). A job
/// that runs for its runtime ends with the others and needs nothing.
fn exits(workers: &mut [Worker], exitall: Option<&Opt>, out: &mut Out) {
    let Some(all) = exitall else {
        if workers.iter().any(|w| w.exit_what.is_some()) {
            out.note("exit_what: no effect (fio uses it with exitall)");
        }
        return;
    };
    let members = |workers: &[Worker], pick: &dyn Fn(&Worker) -> bool| -> u32 {
        workers.iter().filter(|w| pick(w)).map(|w| w.clones).sum()
    };
    let mut ends = Vec::with_capacity(workers.len());
    for w in workers.iter() {
        let what =
            (w.exit_what.as_ref()).map_or("group", |o| o.value.as_deref().unwrap_or("").trim());
        let at = w.exit_what.as_ref().unwrap_or(all);
        let key = if w.exit_what.is_some() {
            "exit_what"
        } else {
            "exitall"
        };
        let limited = io_limit_line(&w.toml).is_some();
        let end = match what {
            _ if !limited => None,
            "all" => Some(("end-run", "exit_what=all")),
            "stonewall" => Some(("end-step", "exit_what=stonewall")),
            "group" => {
                let group = members(workers, &|o| o.report_group == w.report_group);
                let step = members(workers, &|o| o.group == w.group);
                let both = members(workers, &|o| {
                    o.report_group == w.report_group && o.group == w.group
                });
                if group == 1 {
                    None
                } else if both == step && group == step {
                    Some((
                        "end-step",
                        "exit_what=group, its reporting group the step's jobs",
                    ))
                } else {
                    out.bad(at, key, "fio then stops the jobs of its reporting group only, and storlab ends a whole step: give it exit_what=stonewall, or put the group's jobs in a step of their own (stonewall)");
                    None
                }
            }
            _ => {
                out.bad(at, "exit_what", "group, stonewall or all");
                None
            }
        };
        ends.push(end);
    }
    if ends.iter().all(Option::is_none) {
        out.note("exitall: no effect (no job here that ends before the others stops another)");
    }
    for (w, end) in workers.iter_mut().zip(ends) {
        if let (Some((on_done, why)), Some(after)) = (end, io_limit_line(&w.toml)) {
            w.toml.insert_str(
                after,
                &format!("# fio's exitall ({why}): once it has done its I/Os, every worker stops\non_done = \"{on_done}\"\n"),
            );
        }
    }
}

/// Where the line after a worker's `io_limit` starts in its TOML (`None`: it has none).
fn io_limit_line(toml: &str) -> Option<usize> {
    let at = if toml.starts_with("io_limit = ") {
        0
    } else {
        toml.find("\nio_limit = ")? + 1
    };
    Some(at + toml[at..].find('\n')? + 1)
}

/// The source lines of a job: its section and its own options (those of [global] are listed
/// at the top; some are beside the key they become), in file order.
fn job_sources(s: &Section) -> String {
    let mut lines: Vec<(&Path, usize, String)> =
        vec![(s.file.as_path(), s.line, section_comment(s))];
    for (key, o) in &s.opts {
        if !INLINE.contains(&key.as_str()) && !SETTINGS.contains(&key.as_str()) {
            lines.push((o.file.as_path(), o.line, features::from(o, key)));
        }
    }
    lines.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    lines.into_iter().map(|(_, _, c)| c).collect()
}

/// `# job.fio:3: [name]`.
fn section_comment(s: &Section) -> String {
    import::source_comment(
        &format!("{}:{}", s.file.display(), s.line),
        &format!("[{}]", s.name),
    )
}

/// The storlab job, as TOML text.
fn render(
    path: &Path,
    workers: &[Worker],
    g: &Global,
    description: Option<String>,
    groups: u32,
    out: &Out,
) -> String {
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut t = format!(
        "# Converted from the fio job file {} by storlab import-fio.\n# Each part follows the source lines it came from (# FILE:LINE: OPTION).\n",
        path.display()
    );
    for n in &out.notes {
        let _ = writeln!(t, "# {n}");
    }
    for u in &out.unsupported {
        let _ = writeln!(t, "# left out ({}): {}: {}", u.at, u.option, u.why);
    }
    t.push('\n');
    if let Some(d) = description {
        let _ = writeln!(t, "description = {}", q(&d));
    }
    t.push_str(&out.top);
    if let Some(e) = g.engine {
        let _ = writeln!(t, "engine = {}", q(e));
    }
    let duration = match &out.depth_cycle {
        Some((_, Some(window))) => window.as_str(),
        _ => g.duration.as_deref().unwrap_or("30s"),
    };
    let _ = writeln!(t, "duration = {}", q(duration));
    if let Some(r) = &g.ramp {
        let _ = writeln!(t, "ramp = {}", q(r));
    }
    if g.buffered == Some(true) {
        t.push_str("buffered = true\n");
    }
    if let Some(b) = g.batch {
        let _ = writeln!(t, "batch = {b}");
    }
    // Top-level keys before the [data] table the extra text may end with.
    let (keys, data) = match out.extra.find("\n[data]") {
        Some(i) => out.extra.split_at(i),
        None => (out.extra.as_str(), ""),
    };
    t.push_str(keys);
    if groups > 1 || out.depth_cycle.is_some() {
        t.push_str("\n[cycle]\n");
    }
    if let Some((depth, _)) = &out.depth_cycle {
        let _ = writeln!(t, "queue_depth = {{ from = 1, to = {depth} }}");
    }
    if groups > 1 {
        let list: Vec<String> = (1..=groups).map(|g| g.to_string()).collect();
        let _ = writeln!(
            t,
            "# fio's stonewall (and wait_for): one group of jobs after another, a step each.\ngroup = [{}]",
            list.join(", ")
        );
    }
    t.push_str(data);
    let mut names: Vec<&str> = Vec::new();
    for w in workers {
        for (name, p, size, at) in &w.targets {
            if names.contains(&name.as_str()) {
                continue;
            }
            names.push(name);
            t.push('\n');
            if let Some(at) = at {
                t.push_str(at);
            }
            let _ = write!(t, "[[target]]\nname = {}\npath = {}\n", q(name), q(p));
            if let Some(s) = size {
                let _ = writeln!(t, "size = {s}");
            }
        }
    }
    for w in workers {
        let _ = write!(t, "\n{}[[worker]]\nname = {}\n", w.sources, q(&w.name));
        if groups > 1 {
            let _ = writeln!(t, "group = {}", w.group);
        }
        t.push_str(&w.toml);
    }
    t
}

/// A fio size: a number with an optional k/m/g/t/p suffix (1024-based, `i` and `b` allowed),
/// bytes.
fn size(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    let v = v.strip_suffix('b').unwrap_or(&v);
    let v = v.strip_suffix('i').unwrap_or(v);
    let (num, mult) = match v.chars().last()? {
        'k' => (&v[..v.len() - 1], 1u64 << 10),
        'm' => (&v[..v.len() - 1], 1 << 20),
        'g' => (&v[..v.len() - 1], 1 << 30),
        't' => (&v[..v.len() - 1], 1 << 40),
        'p' => (&v[..v.len() - 1], 1 << 50),
        _ => (v, 1),
    };
    let n: f64 = num.trim().parse().ok()?;
    // Refused beyond 2^64 bytes (16 EiB), never saturated to it.
    let bytes = (n * mult as f64).round();
    (n >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

/// A fio time (seconds unless a unit says otherwise: us, ms, s, m, h, d) as a storlab
/// duration, e.g. `"60s"`, `"500ms"`.
fn duration(v: &str) -> Option<String> {
    let v = v.trim().to_ascii_lowercase();
    let units = [
        ("us", 1e-3),
        ("ms", 1.0),
        ("s", 1e3),
        ("m", 60e3),
        ("h", 3600e3),
        ("d", 86400e3),
    ];
    let (num, ms) = units
        .iter()
        .find_map(|(u, ms)| v.strip_suffix(u).map(|n| (n, *ms)))
        .unwrap_or((&v, 1e3));
    let n: f64 = num.trim().parse().ok()?;
    let total = n * ms;
    let ms = total.round() as u64;
    (total >= 1.0 && total.is_finite()).then(|| match ms % 1000 {
        0 => format!("{}s", ms / 1000),
        _ => format!("{ms}ms"),
    })
}

/// `4k/50:64k/30:8k/` (the last share may be empty: the rest) as (bytes, percent) pairs.
fn bssplit(v: &str) -> Option<Vec<(u64, u32)>> {
    let mut parts = v.split(',');
    let first = parts.next()?;
    if parts.any(|p| !p.is_empty() && p != first) {
        return None;
    }
    let mut list = Vec::new();
    let mut rest: Option<u64> = None;
    for item in first.split(':').filter(|i| !i.is_empty()) {
        let (b, p) = item.split_once('/').unwrap_or((item, ""));
        let b = size(b)?;
        if p.is_empty() {
            rest = Some(b);
            continue;
        }
        list.push((b, p.trim().parse::<u32>().ok()?));
    }
    let sum: u32 = list.iter().map(|(_, p)| p).sum();
    if let Some(b) = rest {
        list.push((b, 100u32.checked_sub(sum)?));
    }
    let total: u32 = list.iter().map(|(_, p)| p).sum();
    list.retain(|(_, p)| *p > 0);
    (total == 100 && list.iter().all(|(b, _)| *b > 0)).then_some(list)
}

#[cfg(test)]
mod tests;
