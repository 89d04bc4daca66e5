//! What a run does, in its own vocabulary and units: the lines of the dry run, of the "what
//! ran" block of every summary and of the HTML report's header. A workload makes its
//! description from the same resolved jobs it runs, the results file keeps it, and every view
//! prints it from there, so they cannot differ from each other or from what ran. The targets'
//! lines are not part of it: they say what happened to each target (or, in a dry run, what
//! would), and a view puts them between the head and the body.

use crate::job::steps::{Param, Statistic};
use crate::job::{
    Access, Arrivals, Distribution, EngineKind, IoLimit, Job, OnDone, TargetChoice, Worker,
};
use crate::units::{
    format_count, format_ms, format_number, format_pct, format_rate, format_size, format_size_exact,
};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// A run's description: the lines before its targets and those after.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Description {
    /// What runs, before the targets: the job, an application's profile and sizing.
    pub head: Vec<Line>,
    /// After the targets: caches, workers and their access, the sequence, timing, engine.
    pub body: Vec<Line>,
}

/// One labelled line (`workers    mixed (2 workers): ...`); an empty label continues the
/// line before.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Line {
    /// The label (`job`, `workers`, `timing`...), or empty.
    pub label: String,
    /// The text.
    pub text: String,
}

impl Line {
    /// `label      text`.
    pub(crate) fn new(label: impl Into<String>, text: impl Into<String>) -> Line {
        Line {
            label: label.into(),
            text: text.into(),
        }
    }
}

impl Description {
    /// The description of an ordinary job: its own description, then its caches, workers and
    /// their access, sequence, timing, engine and seed.
    pub(crate) fn of_job(job: &Job) -> Description {
        let mut d = Description::default();
        if let Some(text) = &job.description {
            d.head.push(Line::new("job", text.trim()));
        }
        d.body = job_body(job);
        d
    }
}

/// Caches, workers and access, sequence, timing, engine and seed of `job`.
pub(crate) fn job_body(job: &Job) -> Vec<Line> {
    let mut lines = Vec::new();
    for t in &job.targets {
        let Some(c) = &t.cache else { continue };
        let size = match c.size {
            crate::job::cache::CacheSize::Bytes(b) => format_size(b),
            crate::job::cache::CacheSize::Pct(0.0) => "none (this step)".into(),
            crate::job::cache::CacheSize::Pct(p) => format!("{} of it", format_pct(p)),
        };
        let delay = match c.hit_delay_ns {
            0 => String::new(),
            ns => format!(
                ", SYNTHETIC hit delay {}",
                crate::units::format_ns(ns as f64)
            ),
        };
        lines.push(Line::new(
            "cache",
            format!(
                "{}: {size} on {} ({}, write-{}, {} lines){delay}",
                t.name,
                job.targets[c.device].name,
                c.policy.name(),
                c.write.name(),
                format_size(c.line_bytes)
            ),
        ));
    }
    lines.extend(workers(job));
    lines.extend(sequence(job));
    lines.push(Line::new("timing", timing(job)));
    lines.push(Line::new("engine", engine(job)));
    lines.push(Line::new(
        "seed",
        format!("{} (the same seed gives the same offsets)", job.seed),
    ));
    lines
}

/// The `workers` lines: one per group of like workers (the same settings, their names and
/// class names the same but for their numbers: `db1-thread1` … `db2-thread2`), each followed by
/// its access entries, in the order the job first names each group.
pub fn workers(job: &Job) -> Vec<Line> {
    let mut lines = Vec::new();
    for group in worker_groups(job) {
        let label = if lines.is_empty() { "workers" } else { "" };
        lines.push(Line::new(label, worker_line(job, &group)));
        let w = group[0];
        // A trace's I/Os are its own: its access entry gives only their class; a worker
        // driven by a workload's source has none of its own.
        if w.trace.is_some() || w.driven_by.is_some() {
            continue;
        }
        for a in &w.access {
            lines.push(Line::new("", format!("  {}", access_line(job, &group, a))));
        }
    }
    lines
}

/// `2 s ramp, then 30 s measured, then 5 s cool-down (not counted), in 1 s intervals`; a job whose every worker stops after its
/// I/Os: `measured until every worker has done its I/Os (at most 1 min)`.
pub fn timing(job: &Job) -> String {
    let ramp = match job.ramp_ms {
        0 => String::new(),
        ms if job.sequence.steady.is_some() => {
            format!("{} ramp before a step's first round, then ", format_ms(ms))
        }
        ms => format!("{} ramp, then ", format_ms(ms)),
    };
    // Steady-state rounds each run `round` long, the ramp before the first only.
    let (duration_ms, per_step) = match &job.sequence.steady {
        Some(st) => (st.round_ms, " per round"),
        None if job.sequence.is_sequence() => (job.duration_ms, " per run"),
        None => (job.duration_ms, ""),
    };
    let limited = !job.workers.is_empty() && job.workers.iter().all(|w| w.io_limit.is_some());
    let how_long = if limited {
        format!(
            "measured{per_step} until every worker has done its I/Os (at most {})",
            format_ms(duration_ms)
        )
    } else {
        format!("{} measured{per_step}", format_ms(duration_ms))
    };
    let cooldown = if job.cooldown_ms > 0 {
        format!(
            ", then {} cool-down (not counted)",
            format_ms(job.cooldown_ms)
        )
    } else {
        String::new()
    };
    format!(
        "{ramp}{how_long}{cooldown}, in {} intervals",
        format_ms(job.interval_ms)
    )
}

/// `io_uring, O_DIRECT (no page cache)`.
pub(crate) fn engine(job: &Job) -> String {
    let engine = match job.engine {
        EngineKind::IoUring => "io_uring",
        EngineKind::Psync => "psync (one I/O at a time)",
        EngineKind::Null => "null (no I/O: storlab's own cost)",
    };
    let caching = if job.buffered {
        "buffered (through the page cache)"
    } else {
        "O_DIRECT (no page cache)"
    };
    let paths = job.io_uring.describe();
    if job.engine == EngineKind::IoUring && !paths.is_empty() {
        format!("{engine} with {}, {caching}", paths.join(", "))
    } else {
        format!("{engine}, {caching}")
    }
}

/// `name` with every run of digits as `*` (`db1-thread2` → `db*-thread*`), and a copy's
/// `#N` suffix dropped (`mixed#1` → `mixed`).
fn masked(name: &str) -> String {
    let name = name.split('#').next().unwrap_or(name);
    let mut out = String::new();
    for c in name.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('*') {
            out.push('*');
        }
    }
    out
}

/// Whether two workers run alike: the same settings, access entries equal but for their
/// classes, whose names are the same but for their numbers.
fn alike(job: &Job, a: &Worker, b: &Worker) -> bool {
    let class = |i: usize| masked(job.classes.get(i).map_or("", String::as_str));
    masked(&a.name) == masked(&b.name)
        && a.queue_depth == b.queue_depth
        && a.rate == b.rate
        && a.min_rate == b.min_rate
        && a.think_ns == b.think_ns
        && a.io_limit == b.io_limit
        && a.driven_by == b.driven_by
        && a.trace == b.trace
        && a.target_choice == b.target_choice
        && a.target_weights == b.target_weights
        && a.targets.len() == b.targets.len()
        && a.access.len() == b.access.len()
        && a.access.iter().zip(&b.access).all(|(x, y)| {
            class(x.class) == class(y.class)
                && Access {
                    class: 0,
                    ..x.clone()
                } == Access {
                    class: 0,
                    ..y.clone()
                }
        })
}

/// The job's workers in groups of like ones ([`alike`]), each group where its first worker is.
fn worker_groups(job: &Job) -> Vec<Vec<&Worker>> {
    let mut groups: Vec<Vec<&Worker>> = Vec::new();
    for w in &job.workers {
        match groups.iter_mut().find(|g| alike(job, g[0], w)) {
            Some(g) => g.push(w),
            None => groups.push(vec![w]),
        }
    }
    groups
}

/// A group's name: its one worker's; copies of one `[[worker]]` (`mixed#0`, `mixed#1`) by
/// theirs; others with their numbers as `*` (`db*-thread*`).
fn group_name(group: &[&Worker]) -> String {
    let first = &group[0].name;
    let base = first.split('#').next().unwrap_or(first);
    if group.len() == 1 {
        first.clone()
    } else if group.iter().all(|w| w.name.split('#').next() == Some(base)) {
        base.to_string()
    } else {
        masked(first)
    }
}

/// `mixed (2 workers): 16 outstanding I/Os each, closed loop, on scratch`.
fn worker_line(job: &Job, group: &[&Worker]) -> String {
    let w = group[0];
    let count = match group.len() {
        1 => format!("{} (1 worker)", group_name(group)),
        n => format!("{} ({n} workers)", group_name(group)),
    };
    let each = if group.len() > 1 { " each" } else { "" };
    let pace = match (w.rate, &w.trace, &w.driven_by) {
        (_, _, Some(by)) => format!("driven by {by}"),
        (None, Some(t), None) => format!(
            "replaying the trace {} {}",
            t.file.display(),
            match t.speed {
                None => "as fast as it can (closed loop)".to_string(),
                Some(1.0) => "at its recorded times (open loop)".to_string(),
                Some(x) => format!("{}× faster than recorded (open loop)", format_number(x)),
            }
        ),
        (None, None, None) => match w.think_ns {
            Some(ns) => format!(
                "closed loop, {} of think time after each I/O",
                crate::units::format_ns(ns as f64)
            ),
            None => "closed loop".to_string(),
        },
        (Some(r), _, None) => format!(
            "open loop at {} IOPS{each} ({})",
            format_rate(r.iops),
            match r.arrivals {
                Arrivals::Uniform => "evenly spaced",
                Arrivals::Poisson => "Poisson arrivals",
            }
        ),
    };
    let on = targets_of(job, group);
    let limit = match w.io_limit {
        Some(IoLimit::Ios(n)) => format!(
            ", at most {} I/Os{each}{}",
            format_count(n),
            match w.on_done {
                OnDone::Continue => "",
                OnDone::EndStep => ", then every worker stops (on_done = \"end-step\")",
                OnDone::EndRun => {
                    ", then every worker stops and no later step runs (on_done = \"end-run\")"
                }
            }
        ),
        Some(IoLimit::Passes(p)) => format!(", {p} passes over its span"),
        None => String::new(),
    };
    let outstanding = match (w.queue_depth, &w.driven_by) {
        (1, None) => "1 outstanding I/O".to_string(),
        (n, None) => format!("{n} outstanding I/Os"),
        (1, Some(_)) => "up to 1 I/O in flight".to_string(),
        (n, Some(_)) => format!("up to {n} I/Os in flight"),
    };
    let group_of = match w.group {
        Some(g) => format!(", group {g}"),
        None => String::new(),
    };
    let floor = match w.min_rate {
        Some(m) => format!(
            ", ending the run below {} IOPS{each} over any {} once settled",
            format_rate(m.iops),
            crate::units::format_ns(m.cycle_ns as f64)
        ),
        None => String::new(),
    };
    let on = if on.is_empty() { on } else { format!(", {on}") };
    format!("{count}: {outstanding}{each}, {pace}{on}{limit}{group_of}{floor}")
}

/// Where a group's workers do their I/O: `on db1`, `on a, b in turn`, `one each on a, b`, `2
/// each on db1, db2`.
fn targets_of(job: &Job, group: &[&Worker]) -> String {
    let w = group[0];
    let name_of = |t: usize| job.targets[t].name.as_str();
    if group.iter().all(|g| g.targets == w.targets) {
        let names: Vec<&str> = w.targets.iter().map(|&t| name_of(t)).collect();
        return match (names.as_slice(), w.target_choice) {
            // A workload's own operations (a file-system tree's) have no target.
            ([], _) => String::new(),
            ([one], _) => format!("on {one}"),
            // Its source chooses the target of each I/O.
            (all, _) if w.driven_by.is_some() => format!("on {}", all.join(", ")),
            (all, TargetChoice::RoundRobin) => format!("on {} in turn", all.join(", ")),
            (all, TargetChoice::Random) if w.target_weights.is_empty() => {
                format!("on {}, chosen at random", all.join(", "))
            }
            (all, TargetChoice::Random) => {
                let weights: Vec<String> = w.target_weights.iter().map(u32::to_string).collect();
                format!(
                    "on {}, chosen at random, weighted {}",
                    all.join(", "),
                    weights.join(":")
                )
            }
        };
    }
    // Each on targets of its own: how many on each, in the order they come.
    let mut counts: Vec<(String, usize)> = Vec::new();
    for g in group {
        let names: Vec<&str> = g.targets.iter().map(|&t| name_of(t)).collect();
        let key = names.join("+");
        match counts.iter_mut().find(|c| c.0 == key) {
            Some(c) => c.1 += 1,
            None => counts.push((key, 1)),
        }
    }
    let names: Vec<&str> = counts.iter().map(|c| c.0.as_str()).collect();
    match counts[0].1 {
        n if counts.iter().all(|c| c.1 == n) && n == 1 => {
            format!("one each on {}", names.join(", "))
        }
        n if counts.iter().all(|c| c.1 == n) => {
            format!("{n} workers on each of {}", names.join(", "))
        }
        _ => format!(
            "on {}",
            counts
                .iter()
                .map(|(t, n)| format!("{t} ({n})"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `random-8k: 90% of I/Os, 8 KiB, 70% reads, 100% random (uniform)`; a group's class names
/// with their numbers as `*` when they differ (`db*/read`).
fn access_line(job: &Job, group: &[&Worker], a: &Access) -> String {
    let w = group[0];
    let at = w
        .access
        .iter()
        .position(|e| std::ptr::eq(e, a))
        .unwrap_or(0);
    let names: Vec<&str> = (group.iter())
        .filter_map(|g| g.access.get(at))
        .filter_map(|e| job.classes.get(e.class).map(String::as_str))
        .collect();
    let class = match names.first() {
        Some(first) if names.iter().all(|n| n == first) => first.to_string(),
        _ => masked(&job.classes[a.class]),
    };
    let total: u64 = w.access.iter().map(|e| u64::from(e.weight)).sum();
    let share = 100.0 * a.weight as f64 / total.max(1) as f64;
    let size = if a.block_sizes.is_empty() {
        format_size(a.block_size_bytes)
    } else {
        let weights: u64 = a.block_sizes.iter().map(|&(_, w)| u64::from(w)).sum();
        a.block_sizes
            .iter()
            .map(|&(b, wt)| {
                format!(
                    "{} ({})",
                    format_size(b),
                    format_pct(100.0 * wt as f64 / weights.max(1) as f64)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mix = match a.read_pct {
        r if r >= 100.0 => "reads".to_string(),
        r if r <= 0.0 => "writes".to_string(),
        r => format!("{} reads", format_pct(r)),
    };
    let pattern = match a.random_pct {
        r if r <= 0.0 => "sequential".to_string(),
        r => format!(
            "{} random ({})",
            format_pct(r),
            match &a.distribution {
                Distribution::Uniform => "uniform".to_string(),
                Distribution::Shuffle => "each block once per pass".to_string(),
                Distribution::Zipf { theta } => format!("zipf, theta {theta}"),
                Distribution::Zoned { bands } => bands
                    .iter()
                    .map(|b| format!(
                        "{} of I/Os on {}",
                        format_pct(b.io_pct),
                        format_pct(b.span_pct)
                    ))
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        ),
    };
    let mut line = format!(
        "{class}: {} of I/Os, {size}, {mix}, {pattern}",
        format_pct(share)
    );
    if a.sync {
        line.push_str(", durable writes (RWF_DSYNC)");
    }
    if a.atomic {
        line.push_str(", atomic writes (RWF_ATOMIC)");
    }
    match a.fsync_every {
        0 => {}
        1 => line.push_str(", fdatasync after every write"),
        n => {
            let _ = write!(line, ", fdatasync after every {n} writes");
        }
    }
    if a.roll_every_bytes > 0 {
        let _ = write!(
            line,
            ", rolls every {}",
            format_size_exact(a.roll_every_bytes)
        );
    }
    if let Some(z) = &a.zones {
        let _ = write!(
            line,
            ", in zones of {}: {} in each, then {} skipped",
            format_size_exact(z.size_bytes),
            format_size_exact(z.transfer_bytes),
            format_size_exact(z.skip_bytes)
        );
    }
    line
}

/// The unit a cycled parameter's values are in.
fn unit(p: Param) -> &'static str {
    match p {
        Param::Targets => " targets",
        Param::Workers => " workers",
        Param::QueueDepth => " outstanding I/Os",
        Param::Rate => " IOPS per worker",
        Param::Cache => " of the cached target",
        Param::Group => "",
        Param::Compress | Param::Dedupe => ":1",
        Param::BlockSize | Param::Read | Param::Random => "",
    }
}

/// The value of a cycled parameter as people read it.
fn value(p: Param, v: f64) -> String {
    match p {
        Param::BlockSize => format_size(v as u64),
        Param::Read | Param::Random | Param::Cache => format_pct(v),
        Param::Rate => format_rate(v),
        _ => format_number(v),
    }
}

fn statistic(s: Statistic) -> &'static str {
    match s {
        Statistic::Mean => "mean",
        Statistic::P50 => "p50",
        Statistic::P90 => "p90",
        Statistic::P95 => "p95",
        Statistic::P99 => "p99",
        Statistic::P99_9 => "p99.9",
        Statistic::P99_99 => "p99.99",
        Statistic::Max => "max",
    }
}

/// The sequence: cycles, repetitions, the rate curve, steady state, preconditioning.
fn sequence(job: &Job) -> Vec<Line> {
    let seq = &job.sequence;
    if !seq.is_sequence() {
        return Vec::new();
    }
    let steps = crate::job::steps::expand(job);
    let mut lines = vec![Line::new("sequence", format!("{} steps", steps.len()))];
    let mut sub =
        |what: &str, text: String| lines.push(Line::new("", format!("  {what:<8} {text}")));
    for c in &seq.cycles {
        let values: Vec<String> = c.values.iter().map(|&v| value(c.parameter, v)).collect();
        if c.parameter == Param::Group {
            // fio's stonewall: each group's workers in a step of their own.
            sub(
                "cycle",
                format!(
                    "the worker groups one after another: group {}",
                    values.join(", group ")
                ),
            );
            continue;
        }
        sub(
            "cycle",
            format!(
                "{}: {}{}",
                c.parameter.name(),
                values.join(", "),
                unit(c.parameter)
            ),
        );
    }
    if let Some(r) = seq.stop_when.as_ref().filter(|_| seq.curve.is_empty()) {
        sub(
            "stop",
            format!(
                "the cycle stops at the first step where {}{} exceeds {}",
                r.class
                    .as_ref()
                    .map(|c| format!("{c}'s "))
                    .unwrap_or_default(),
                statistic(r.statistic),
                format_ms(r.threshold_ns / 1_000_000)
            ),
        );
    }
    if seq.repeat > 1 {
        sub(
            "repeat",
            format!(
                "each step {} times, {} apart",
                seq.repeat,
                format_ms(seq.pause_ms)
            ),
        );
    }
    if !seq.curve.is_empty() {
        let levels: Vec<String> = seq.curve.iter().map(|&l| format_pct(l)).collect();
        let stop = seq.stop_when.as_ref().map_or(String::new(), |r| {
            format!(
                ", stopping when {}{} exceeds {}",
                r.class
                    .as_ref()
                    .map(|c| format!("{c}'s "))
                    .unwrap_or_default(),
                statistic(r.statistic),
                format_ms(r.threshold_ns / 1_000_000)
            )
        });
        sub(
            "curve",
            format!(
                "the closed-loop maximum, then {} of it open loop{stop}",
                levels.join(", ")
            ),
        );
    }
    if let Some(st) = &seq.steady {
        sub(
            "steady",
            format!(
                "rounds of {} until the last {} rounds' {} is within ±{} of its mean and its fit within ±{}; at most {} rounds",
                format_ms(st.round_ms),
                st.window,
                st.metric.name(),
                format_pct(st.range_pct),
                format_pct(st.slope_pct),
                st.max_rounds
            ),
        );
    }
    if let Some(p) = &seq.precondition {
        sub(
            "precondition",
            format!(
                "{} {} passes of {} writes over every target (writes every target in full)",
                p.passes,
                if p.random { "random" } else { "sequential" },
                format_size(p.block_bytes)
            ),
        );
    }
    lines
}
