//! Validation of a [`JobSpec`] into a [`Job`]: defaults filled in, sizes in bytes, times in
//! milliseconds, every reference checked, classes numbered. No syscalls. Errors name the file,
//! line and key.

use super::file::Source;
use super::pace::{min_rate_of, rate_of, think_ns};
use super::spec::{AccessSpec, JobSpec, TargetSpec, WorkerSpec};
use super::stream::{atomic, sequential, zones};
use super::{
    Access, Distribution, EngineKind, IoLimit, Job, JobError, OnDone, OnError, Target,
    TargetChoice, Worker, defaults,
};
use crate::units;
use std::path::Path;
use toml::Spanned;

/// Validates a spec into a job. `source` names the file (`None`: built from flags) and its
/// text is used to turn table positions into line numbers.
pub(crate) fn resolve(spec: &JobSpec, file: Option<(&Path, &str)>) -> Result<Job, JobError> {
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
    let settings = Settings::resolve(spec, &src)?;
    let data = super::data::resolve_data(spec, &src)?;
    let io_uring = super::uring::resolve(spec, &src)?;
    require_targets_and_workers(spec, &src)?;
    let mut warnings = Vec::new();
    let mut targets = resolve_targets(spec, &src)?;
    let (mut workers, classes) =
        resolve_workers(spec, &src, &targets, settings.engine, &mut warnings)?;
    super::cache::resolve_caches(spec, &src, &mut targets, &mut workers, &mut warnings)?;
    let sequence = super::steps::resolve_sequence(spec, &src, &workers, &targets)?;
    if let Some(class) = sequence.stop_when.as_ref().and_then(|r| r.class.as_ref()) {
        if !classes.contains(class) {
            return Err(src.top_level_error(
                "stop_when",
                format!(
                    "stop_when names class `{class}`, which the job does not have; classes: {}",
                    classes.join(", ")
                ),
            ));
        }
    }
    if settings.ramp_ms > settings.duration_ms {
        warnings.push(format!(
            "the ramp ({}) is longer than the measured duration ({}): most of the run is not measured",
            crate::units::format_ms(settings.ramp_ms),
            crate::units::format_ms(settings.duration_ms)
        ));
    }
    let job = Job {
        description: spec.description.clone(),
        engine: settings.engine,
        duration_ms: settings.duration_ms,
        ramp_ms: settings.ramp_ms,
        cooldown_ms: settings.cooldown_ms,
        interval_ms: settings.interval_ms,
        seed: spec.seed.unwrap_or(defaults::SEED),
        buffered: spec.buffered.unwrap_or(false),
        destroy_data: spec.destroy_data.unwrap_or(false),
        batch: settings.batch,
        verify: settings.verify,
        on_error: settings.on_error,
        sample_blocks: spec.sample_blocks.unwrap_or(false),
        targets,
        workers,
        classes,
        warnings,
        sequence,
        data,
        io_uring,
    };
    let cycled = (job.sequence.cycles.iter()).any(|c| {
        matches!(
            c.parameter,
            super::steps::Param::Compress | super::steps::Param::Dedupe
        )
    });
    super::data::check_units(&job, &src, cycled)?;
    super::uring::check_syncs(&job, &src)?;
    if job.buffered
        && let Some(w) = (job.workers.iter()).find(|w| w.access.iter().any(|a| a.atomic))
    {
        return Err(src.top_level_error(
            "buffered",
            format!(
                "worker `{}` writes atomically (atomic = true), which needs O_DIRECT: remove buffered = true",
                w.name
            ),
        ));
    }
    Ok(job)
}

/// The job's top-level scalars that are checked: the engine, the times, batching, what to do
/// on I/O errors and data verification.
struct Settings {
    engine: EngineKind,
    duration_ms: u64,
    ramp_ms: u64,
    cooldown_ms: u64,
    interval_ms: u64,
    batch: u32,
    on_error: OnError,
    verify: bool,
}

impl Settings {
    fn resolve(spec: &JobSpec, src: &Source) -> Result<Settings, JobError> {
        let engine = match &spec.engine {
            Some(e) => EngineKind::parse(e).map_err(|m| src.top_level_error("engine", m))?,
            None => EngineKind::IoUring,
        };
        let ms = |d: &Option<units::Dur>, default: u64| {
            d.map(|d| d.0.as_millis() as u64).unwrap_or(default)
        };
        let duration_ms = ms(&spec.duration, defaults::DURATION_MS);
        let ramp_ms = ms(&spec.ramp, defaults::RAMP_MS);
        let cooldown_ms = ms(&spec.cooldown, 0);
        let interval_ms = ms(&spec.interval, defaults::INTERVAL_MS);
        if duration_ms == 0 {
            return Err(src.top_level_error(
                "duration",
                "the duration must be at least 1ms, e.g. duration = \"30s\"".into(),
            ));
        }
        let shortest = shortest_interval_ms();
        if interval_ms < shortest {
            return Err(src.top_level_error(
                "interval",
                format!(
                    "the interval is {interval_ms}ms; it must be at least {shortest}ms, e.g. interval = \"1s\""
                ),
            ));
        }
        let batch = spec.batch.unwrap_or(1);
        if batch == 0 {
            return Err(src.top_level_error("batch", "batch must be at least 1".into()));
        }
        let on_error = resolve_on_error(spec, src)?;
        let verify = spec.verify.unwrap_or(false);
        if verify && engine == EngineKind::Null {
            return Err(src.top_level_error(
                "verify",
                "the null engine does no I/O, so there is nothing to verify; use engine = \"io_uring\" or \"psync\"".into(),
            ));
        }
        Ok(Settings {
            engine,
            duration_ms,
            ramp_ms,
            cooldown_ms,
            interval_ms,
            batch,
            on_error,
            verify,
        })
    }
}

/// What to do on I/O errors: `on_error` and `max_errors`.
/// The test hook of the shortest interval (debug builds only): `STORLAB_TEST_SHORTEST_INTERVAL_MS=1`
/// lets a test run 100,000 intervals in 100 s (the memory test of `tests/integration/longrun.rs`).
#[cfg(debug_assertions)]
const TEST_SHORTEST_INTERVAL: &str = "STORLAB_TEST_SHORTEST_INTERVAL_MS";

/// The shortest interval a job may have, ms: 10, or in a debug build what the test hook
/// [`TEST_SHORTEST_INTERVAL`] says (at least 1). A release build has no hook.
fn shortest_interval_ms() -> u64 {
    #[cfg(debug_assertions)]
    if let Some(ms) =
        (std::env::var(TEST_SHORTEST_INTERVAL).ok()).and_then(|v| v.parse::<u64>().ok())
    {
        return ms.max(1);
    }
    10
}

fn resolve_on_error(spec: &JobSpec, src: &Source) -> Result<OnError, JobError> {
    match spec.on_error.as_deref() {
        None | Some("continue") => match spec.max_errors {
            Some(0) => Err(src.top_level_error(
                "max_errors",
                "max_errors must be at least 1 (use on_error = \"stop\" to stop at the first error)".into(),
            )),
            Some(n) => Ok(OnError::Continue { max_errors: n }),
            None => Ok(OnError::default()),
        },
        Some("stop") => {
            if spec.max_errors.is_some() {
                return Err(src.top_level_error(
                    "max_errors",
                    "max_errors applies to on_error = \"continue\"; with \"stop\" the run stops at the first error".into(),
                ));
            }
            Ok(OnError::Stop)
        }
        Some(other) => Err(src.top_level_error(
            "on_error",
            format!("on_error is `{other}`; use \"continue\" or \"stop\""),
        )),
    }
}

/// A job needs at least one target and one worker.
fn require_targets_and_workers(spec: &JobSpec, src: &Source) -> Result<(), JobError> {
    if spec.target.is_empty() {
        return Err(src.top_level_error(
            "target",
            "the job has no target; add a [[target]] with a path (and a size for a new file), or use --target PATH".into(),
        ));
    }
    if spec.worker.is_empty() {
        return Err(src.top_level_error(
            "worker",
            "the job has no worker; add a [[worker]] with at least one [[worker.access]] entry"
                .into(),
        ));
    }
    Ok(())
}

/// Every `[[target]]`, each with its own name.
fn resolve_targets(spec: &JobSpec, src: &Source) -> Result<Vec<Target>, JobError> {
    if spec.target.len() > super::MAX_TARGETS {
        return Err(JobError {
            location: src.at(spec.target[super::MAX_TARGETS].span()),
            key: format!("target[{}]", super::MAX_TARGETS),
            message: format!(
                "the job has {} targets; a job has at most {}: split it into several jobs",
                spec.target.len(),
                super::MAX_TARGETS
            ),
        });
    }
    let targets = spec
        .target
        .iter()
        .enumerate()
        .map(|(i, t)| resolve_target(i, t, src))
        .collect::<Result<Vec<_>, _>>()?;
    let mut seen = std::collections::HashMap::new();
    for (i, t) in targets.iter().enumerate() {
        if let Some(&j) = seen.get(t.name.as_str()) {
            return Err(JobError {
                location: src.at(spec.target[i].span()),
                key: format!("target[{i}].name"),
                message: format!(
                    "target name `{}` is already used by target[{j}]; give each target its own name",
                    t.name
                ),
            });
        }
        seen.insert(t.name.as_str(), i);
    }
    Ok(targets)
}

/// The workers every `[[worker]]` makes (each with its own name), and the classes their access
/// entries name, numbered in order of first use.
fn resolve_workers(
    spec: &JobSpec,
    src: &Source,
    targets: &[Target],
    engine: EngineKind,
    warnings: &mut Vec<String>,
) -> Result<(Vec<Worker>, Vec<String>), JobError> {
    let mut classes = Classes::default();
    let by_name = TargetNames::of(targets);
    let mut workers = Vec::new();
    // The `[[worker]]` each worker comes from.
    let mut origin = Vec::new();
    let mut sizes = super::limits::Sizes::default();
    for (wi, w) in spec.worker.iter().enumerate() {
        sizes.add(wi, w, targets.len(), src)?;
        let made = resolve_worker(
            wi,
            w,
            src,
            (targets, &by_name),
            engine,
            &mut classes,
            warnings,
        )?;
        origin.extend(std::iter::repeat_n(wi, made.len()));
        workers.extend(made);
    }
    let mut seen = std::collections::HashMap::new();
    for (i, w) in workers.iter().enumerate() {
        if let Some(&j) = seen.get(w.name.as_str()) {
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
        seen.insert(w.name.as_str(), i);
    }
    Ok((workers, classes.names))
}

/// The classes numbered so far, in the order first named, and each one's number: a job with
/// thousands of workers (an import makes one per thread) numbers them in time linear in the
/// workers, not quadratic.
#[derive(Default)]
struct Classes {
    names: Vec<String>,
    ids: std::collections::HashMap<String, usize>,
}

impl Classes {
    /// The number of class `name`, adding it when new.
    fn id(&mut self, name: &str) -> usize {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }
}

/// Each target's index by its name and by its path: the first target either names.
struct TargetNames<'a>(std::collections::HashMap<&'a str, usize>);

impl<'a> TargetNames<'a> {
    fn of(targets: &'a [Target]) -> Self {
        let mut map = std::collections::HashMap::new();
        for (i, t) in targets.iter().enumerate() {
            map.entry(t.name.as_str()).or_insert(i);
            if let Some(path) = t.path.to_str() {
                map.entry(path).or_insert(i);
            }
        }
        TargetNames(map)
    }
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
    let shared_slice = match t.shared.as_deref() {
        None => false,
        Some("slice") => true,
        Some(other) => {
            return Err(err(
                "shared",
                format!(
                    "`{other}` is not a sharing mode; use shared = \"slice\" (each rank of a run over many hosts gets its own slice of the target)"
                ),
            ));
        }
    };
    Ok(Target {
        name: t.name.clone().unwrap_or_else(|| path.display().to_string()),
        path,
        size_bytes,
        sync: t.sync.unwrap_or(false),
        osync: false,
        fresh: false,
        fsync_every: t.fsync_every.unwrap_or(0),
        cache: None,
        shared_slice,
    })
}

#[allow(clippy::too_many_arguments)]
fn resolve_worker(
    wi: usize,
    w: &Spanned<WorkerSpec>,
    src: &Source,
    (targets, by_name): (&[Target], &TargetNames),
    engine: EngineKind,
    classes: &mut Classes,
    warnings: &mut Vec<String>,
) -> Result<Vec<Worker>, JobError> {
    // The line is found only for an error: finding it reads the file up to it.
    let err = |key: &str, message: String| JobError {
        location: src.at(w.span()),
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
                by_name.0.get(n.as_str()).copied().ok_or_else(|| {
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
    let (target_choice, target_weights) =
        choice_of(spec, target_ids.len()).map_err(|(key, why)| err(key, why))?;
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
    let think_ns =
        think_ns(spec, &name, &mut queue_depth, warnings).map_err(|m| err("think_time", m))?;
    let (io_priority, io_priority_mix) =
        super::priority::of_worker(spec, engine == EngineKind::IoUring)
            .map_err(|(k, m)| err(k, m))?;
    let rate = rate_of(spec).map_err(|(k, m)| err(k, m))?;
    let min_rate = min_rate_of(spec, rate.as_ref()).map_err(|(k, m)| err(k, m))?;
    if spec.io_limit == Some(0) {
        return Err(err("io_limit", "io_limit must be at least 1".into()));
    }
    let on_done = match spec.on_done.as_deref() {
        None | Some("continue") => OnDone::Continue,
        Some("end-step") => OnDone::EndStep,
        Some("end-run") => OnDone::EndRun,
        Some(other) => {
            return Err(err(
                "on_done",
                format!("unknown on_done `{other}`; use continue, end-step or end-run"),
            ));
        }
    };
    if !on_done.goes_on() && spec.io_limit.is_none() {
        return Err(err(
            "on_done",
            "on_done ends the step once the worker has done its io_limit; give it one".into(),
        ));
    }
    let trace = (spec.trace.as_ref())
        .map(|t| super::trace::resolve(t).map_err(|(k, m)| err(&format!("trace.{k}"), m)))
        .transpose()?;
    if trace.is_some() && rate.is_some() {
        return Err(err(
            "rate_iops",
            "a trace is replayed at its own times (its speed scales them); remove rate_iops".into(),
        ));
    }
    if spec.access.is_empty() && trace.is_none() {
        return Err(err(
            "access",
            "the worker has no access entry; add [[worker.access]] with block_size, read and random".into(),
        ));
    }
    let mut access = spec
        .access
        .iter()
        .enumerate()
        .map(|(ai, a)| resolve_access(wi, ai, a, src, &name, targets, &target_ids, classes))
        .collect::<Result<Vec<_>, _>>()?;
    if access.is_empty() {
        // A trace's I/O goes to the class `trace` (an access entry names another).
        access.push(Access::new(classes.id("trace"), 4096, 100.0, 100.0));
    }
    let cpus = spec.cpus.clone().unwrap_or_default();
    let each = spec.one_target_each.unwrap_or(false);
    let increments = copies_apart(wi, spec, src, &name, count, &access, targets, &target_ids)?;
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
            target_weights: target_weights.clone(),
            queue_depth,
            cpu: (!cpus.is_empty()).then(|| cpus[c as usize % cpus.len()]),
            rate,
            access: (access.iter().zip(&increments))
                .map(|(a, &inc)| Access {
                    offset_bytes: a.offset_bytes + u64::from(c) * inc,
                    ..a.clone()
                })
                .collect(),
            min_rate,
            io_limit: spec.io_limit.map(IoLimit::Ios),
            trace: trace.clone(),
            group: spec.group,
            think_ns,
            driven_by: None,
            start_delay_ns: spec.start_delay.map(|d| d.0.as_nanos() as u64),
            io_priority,
            io_priority_mix,
            on_done,
        })
        .collect())
}

/// A worker's choice of each I/O's target and the targets' weights (`target_choice`,
/// `target_weights`) among its `targets`; an error names its key.
fn choice_of(
    spec: &WorkerSpec,
    targets: usize,
) -> Result<(TargetChoice, Vec<u32>), (&'static str, String)> {
    let target_weights = match &spec.target_weights {
        None => Vec::new(),
        Some(ws) => {
            let why = if ws.len() != targets {
                Some(format!(
                    "{} weights for {} targets: give one weight for each target, in the order of `targets` (or of the job's targets when the worker names none)",
                    ws.len(),
                    targets
                ))
            } else if ws.contains(&0) {
                Some(
                    "a weight is 0: each is at least 1 (leave the target out of `targets` instead)"
                        .into(),
                )
            } else if spec.one_target_each == Some(true) {
                Some(
                    "with one_target_each each copy has one target: there is nothing to weigh"
                        .into(),
                )
            } else {
                None
            };
            if let Some(why) = why {
                return Err(("target_weights", why));
            }
            ws.clone()
        }
    };
    let target_choice = match spec.target_choice.as_deref() {
        None if !target_weights.is_empty() => TargetChoice::Random,
        Some("round-robin") | Some("round_robin") if !target_weights.is_empty() => {
            return Err((
                "target_choice",
                "target_weights weigh a random choice of each I/O's target: write target_choice = \"random\", or leave it out".into(),
            ));
        }
        None | Some("round-robin") | Some("round_robin") => TargetChoice::RoundRobin,
        Some("random") => TargetChoice::Random,
        Some(o) => {
            return Err((
                "target_choice",
                format!("unknown choice `{o}`; use round-robin or random"),
            ));
        }
    };
    Ok((target_choice, target_weights))
}

/// Each access entry's `offset_increment` (bytes; 0 without one), checked: a multiple of the
/// entry's alignment, and the last copy's span inside every target whose size is known.
#[allow(clippy::too_many_arguments)]
fn copies_apart(
    wi: usize,
    spec: &WorkerSpec,
    src: &Source,
    name: &str,
    count: u32,
    access: &[Access],
    targets: &[Target],
    target_ids: &[usize],
) -> Result<Vec<u64>, JobError> {
    let mut increments = Vec::with_capacity(access.len());
    for (ai, (a, s)) in access.iter().zip(&spec.access).enumerate() {
        let inc = s.get_ref().offset_increment.map_or(0, |i| i.0);
        let err = |message: String| JobError {
            location: src.at(s.span()),
            key: format!("worker[{wi}].access[{ai}].offset_increment"),
            message,
        };
        if inc % 512 != 0 {
            return Err(err(format!(
                "{inc} bytes is not a multiple of 512 bytes (O_DIRECT's alignment); use one"
            )));
        }
        let last = u64::from(count - 1)
            .checked_mul(inc)
            .and_then(|d| d.checked_add(a.offset_bytes))
            .ok_or_else(|| {
                err(format!(
                    "copy {} of `{name}` would start past 16 EiB",
                    count - 1
                ))
            })?;
        for &t in target_ids {
            let Some(size) = targets[t].size_bytes else {
                continue;
            };
            let end = last.saturating_add(a.length_bytes.unwrap_or(a.block_size_bytes));
            if inc > 0 && end > size {
                return Err(err(format!(
                    "copy {} of `{name}` ({count} copies, {inc} bytes apart) starts at byte {last}, and its span ends at {end}, past the end of target `{}` ({size} bytes); make the target larger, or the increment or the count smaller",
                    count - 1,
                    targets[t].name
                )));
            }
        }
        increments.push(inc);
    }
    // A trace's own entry (no access entry given) has none.
    increments.resize(access.len(), 0);
    Ok(increments)
}

/// An entry's mix of block sizes (`block_sizes`), smallest first (empty without one); an
/// error says what is wrong with it.
fn block_mix(a: &AccessSpec) -> Result<Vec<(u64, u32)>, String> {
    let mut block_sizes = Vec::new();
    let Some(mix) = &a.block_sizes else {
        return Ok(block_sizes);
    };
    if a.block_size.is_some() {
        return Err("set either block_size or block_sizes, not both".into());
    }
    if mix.is_empty() {
        return Err("the table is empty; give at least one size = weight".into());
    }
    for (size, weight) in mix {
        let bytes = units::parse_size(size)?;
        if bytes == 0 || bytes > 64 << 20 {
            return Err(format!("block size `{size}` must be 1 B to 64 MiB"));
        }
        if *weight == 0 {
            return Err(format!("the weight of `{size}` must be at least 1"));
        }
        block_sizes.push((bytes, *weight));
    }
    block_sizes.sort();
    Ok(block_sizes)
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
    classes: &mut Classes,
) -> Result<Access, JobError> {
    let err = |key: &str, message: String| JobError {
        location: src.at(a.span()),
        key: format!("worker[{wi}].access[{ai}].{key}"),
        message,
    };
    let a = a.get_ref();
    let block_sizes = block_mix(a).map_err(|m| err("block_sizes", m))?;
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
    let scatter = match a.hot_set.as_deref() {
        None | Some("start") => false,
        Some("scattered") => true,
        Some(o) => {
            return Err(err(
                "hot_set",
                format!("unknown hot set `{o}`; use start or scattered"),
            ));
        }
    };
    let offset = a.offset.map(|s| s.0).unwrap_or(0);
    let length = a.length.map(|s| s.0);
    if length == Some(0) {
        return Err(err("length", "length must be more than 0".into()));
    }
    if offset % 512 != 0 {
        return Err(err(
            "offset",
            format!(
                "offset {offset} is not a multiple of 512 bytes (O_DIRECT's alignment); use one, e.g. offset = \"{}\"",
                offset / 512 * 512
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
    let class = classes.id(&class_name);
    let (gap_bytes, start_bytes) = sequential(a).map_err(|(k, m)| err(k, m))?;
    let zones = zones(a, block, length).map_err(|(k, m)| err(k, m))?;
    let geometry = [
        align,
        offset,
        gap_bytes.unsigned_abs(),
        start_bytes,
        roll_every,
    ];
    let atomic = atomic(a, block, &block_sizes, geometry, zones).map_err(|(k, m)| err(k, m))?;
    Ok(Access {
        class,
        weight,
        block_size_bytes: block,
        block_sizes,
        roll_every_bytes: roll_every,
        gap_bytes,
        start_bytes,
        read_pct,
        random_pct,
        align_bytes: align,
        distribution,
        scatter,
        offset_bytes: offset,
        length_bytes: length,
        sync: a.sync.unwrap_or(false),
        fsync_every: a.fsync_every.unwrap_or(0),
        atomic,
        zones,
    })
}

#[cfg(test)]
mod tests;
