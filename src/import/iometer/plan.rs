//! From a read `.icf` to what the storlab job holds: targets (placed with `--map`), one
//! worker per disk worker and assigned access specification (a group each when a worker has
//! several: Iometer runs its specifications one test after another), and the cycle its test
//! type asks for.

use super::parse::{At, Cycling, Icf, Spec, SpecLine, Worker};
use crate::import::{Options, Unsupported};
use std::path::PathBuf;

/// Iometer's sector, the unit of disk maximum size and starting sector.
const SECTOR: u64 = 512;
/// Outstanding I/Os a worker may keep (storlab's `queue_depth` limit).
const MAX_QUEUE_DEPTH: u64 = 32768;
/// Values a cycle may list.
const MAX_CYCLE: usize = 1024;
/// The size storlab gives a scratch target when the `.icf` leaves the size to the disk.
pub(super) const SCRATCH_SIZE: u64 = 1 << 30;

/// A `[[target]]`.
pub(super) struct TargetOut {
    pub name: String,
    pub path: PathBuf,
    pub size: Option<u64>,
    pub at: String,
    pub text: String,
    /// The size is storlab's choice (a scratch file for a whole-disk target).
    pub scratch_size: bool,
}

/// A `[[worker.access]]`.
pub(super) struct AccessOut {
    pub at: String,
    pub text: String,
    pub class: String,
    pub weight: u64,
    pub block: u64,
    pub read: u64,
    pub random: u64,
    pub align: u64,
    pub offset: u64,
    pub length: Option<u64>,
}

/// A `[[worker]]`.
pub(super) struct WorkerOut {
    pub at: String,
    pub text: String,
    pub name: String,
    pub group: Option<u32>,
    pub count: u32,
    pub targets: Vec<String>,
    pub one_target_each: bool,
    pub queue_depth: u64,
    pub think_ms: Option<u64>,
    /// The access specification's name and line.
    pub spec: (String, String),
    pub access: Vec<AccessOut>,
}

/// A `[cycle]` entry: its key, values, and the line it comes from.
pub(super) struct CycleOut {
    pub key: &'static str,
    pub values: Vec<u64>,
    pub at: String,
    pub text: String,
}

/// The job to write.
#[derive(Default)]
pub(super) struct Job {
    pub targets: Vec<TargetOut>,
    pub workers: Vec<WorkerOut>,
    pub groups: u32,
    pub cycles: Vec<CycleOut>,
    pub seed: Option<At<u64>>,
    /// Comments for the head of the job, each with its line when it has one.
    pub notes: Vec<String>,
    pub unsupported: Vec<Unsupported>,
    /// Each target's place in `targets`, by name: one look-up per worker's target.
    pub target_index: std::collections::HashMap<String, usize>,
}

impl Job {
    fn bad(&mut self, file: &str, line: usize, option: impl Into<String>, why: impl Into<String>) {
        self.unsupported.push(Unsupported {
            at: format!("{file}:{line}"),
            option: option.into(),
            why: why.into(),
        });
    }
}

/// The target's name as `--map` takes it: `C: "Local Disk"` → `C:`.
pub(super) fn target_name(text: &str) -> String {
    let id = text.split('"').next().unwrap_or(text).trim();
    if id.is_empty() {
        text.trim().trim_matches('"').to_string()
    } else {
        id.to_string()
    }
}

/// The values a cycling line runs, up to `end`.
fn steps(c: &Cycling, end: u64) -> Result<Vec<u64>, String> {
    if c.start == 0 {
        return Err("start 0: Iometer cycles from 1".into());
    }
    if c.start > end {
        return Ok(vec![end.max(1)]);
    }
    let mut v = vec![c.start];
    let mut x = c.start;
    loop {
        let next = if c.exponential {
            if c.step < 2 {
                return Err(format!("EXPONENTIAL step {}: it must be 2 or more", c.step));
            }
            x.checked_mul(c.step)
        } else {
            if c.step == 0 {
                return Err("LINEAR step 0: it must be 1 or more".into());
            }
            x.checked_add(c.step)
        };
        match next {
            Some(n) if n <= end => {
                if v.len() >= MAX_CYCLE {
                    return Err(format!("more than {MAX_CYCLE} steps"));
                }
                v.push(n);
                x = n;
            }
            _ => return Ok(v),
        }
    }
}

fn find_spec<'a>(icf: &'a Icf, name: &str) -> Option<&'a Spec> {
    let name = name.trim();
    icf.specs
        .iter()
        .find(|s| s.name == name)
        .or_else(|| icf.specs.iter().find(|s| s.name.eq_ignore_ascii_case(name)))
}

/// Plans the storlab job of `icf` (read from `file`); `cpus` stands for `NUMBER_OF_CPUS`.
pub(super) fn plan(file: &str, icf: &Icf, opts: &Options, cpus: usize) -> Result<Job, String> {
    let mut job = Job {
        unsupported: icf.unknown.clone(),
        ..Job::default()
    };
    let at = |line: usize| format!("{file}:{line}");
    for i in &icf.ignored {
        job.notes.push(format!("{}: {}", at(i.line), i.v));
    }
    if let Some(r) = &icf.setup.record {
        job.notes.push(format!(
            "{}: Record Results {}: storlab records every figure of every worker and class",
            at(r.line),
            r.v
        ));
    }
    // The workers to convert: the managers' lists, or the workers Iometer spawns by default.
    let mut managers: Vec<(String, Vec<Worker>)> = icf
        .managers
        .iter()
        .map(|m| (m.name.clone(), m.workers.clone()))
        .collect();
    if managers.iter().all(|m| m.1.is_empty()) {
        spawn_defaults(file, icf, cpus, &mut job, &mut managers);
    }
    for m in icf.managers.iter().skip(1) {
        if let Some(a) = m.address.as_ref().filter(|a| !a.v.is_empty()) {
            job.notes.push(format!(
                "{}: manager {} at {}: its workers run on this machine, beside the others",
                at(a.line),
                m.name,
                a.v
            ));
        }
    }
    let many = managers.len() > 1;
    let mut names: std::collections::HashSet<String> = Default::default();
    for (mname, workers) in &managers {
        for w in workers {
            let name = if many {
                format!("{mname}/{}", w.name)
            } else {
                w.name.clone()
            };
            let mut unique = name.clone();
            let mut n = 2;
            while names.contains(&unique) {
                unique = format!("{name} ({n})");
                n += 1;
            }
            names.insert(unique.clone());
            worker(file, icf, opts, w, &unique, &mut job)?;
        }
    }
    job.groups = job
        .workers
        .iter()
        .filter_map(|w| w.group)
        .max()
        .unwrap_or(1);
    if job.groups == 1 {
        for w in &mut job.workers {
            w.group = None;
        }
    }
    cycle(file, icf, &managers, &mut job)?;
    Ok(job)
}

/// No manager lists a worker: Iometer spawns its default disk (and network) workers, each
/// with the specifications assigned by default; storlab gives them one shared scratch target.
fn spawn_defaults(
    file: &str,
    icf: &Icf,
    cpus: usize,
    job: &mut Job,
    managers: &mut Vec<(String, Vec<Worker>)>,
) {
    let at = |line: usize| format!("{file}:{line}");
    if let Some(n) = &icf.setup.network_workers
        && n.v != Some(0)
    {
        job.bad(
            file,
            n.line,
            "Default Network Workers to Spawn",
            "network workers measure TCP connections between machines; storlab measures storage",
        );
    }
    let (count, line) = match &icf.setup.disk_workers {
        Some(At { line, v: Some(n) }) => (*n as usize, Some(*line)),
        Some(At { line, v: None }) => {
            job.notes.push(format!(
                "{}: NUMBER_OF_CPUS: {cpus}, the CPUs of the machine that converted the file",
                at(*line)
            ));
            (cpus, Some(*line))
        }
        None => {
            job.notes.push(format!(
                "no MANAGER LIST and no Default Disk Workers to Spawn: Iometer's default, one disk worker per CPU ({cpus} here)"
            ));
            (cpus, None)
        }
    };
    let count = count.min(super::parse::MAX_WORKERS);
    let specs: Vec<At<String>> = icf
        .specs
        .iter()
        .filter(|s| matches!(s.assign.as_str(), "ALL" | "DISK"))
        .map(|s| At {
            line: s.line,
            v: s.name.clone(),
        })
        .collect();
    let line = line.unwrap_or(1);
    job.notes.push(format!(
        "{}: the file lists no worker: {count} default disk worker{} with the access specifications assigned by default ({}), on one scratch target (storlab's choice: Iometer's default workers have none)",
        at(line),
        if count == 1 { "" } else { "s" },
        if specs.is_empty() { "none".to_string() } else { specs.iter().map(|s| s.v.as_str()).collect::<Vec<_>>().join(", ") }
    ));
    let workers = (0..count)
        .map(|i| Worker {
            line,
            name: format!("Worker {}", i + 1),
            kind: Some(At {
                line,
                v: "DISK".into(),
            }),
            specs: specs.clone(),
            targets: vec![super::parse::Target {
                line,
                text: "iobw.tst".into(),
                kind: None,
            }],
            ..Worker::default()
        })
        .collect();
    managers.clear();
    managers.push((String::new(), workers));
}

fn worker(
    file: &str,
    icf: &Icf,
    opts: &Options,
    w: &Worker,
    name: &str,
    job: &mut Job,
) -> Result<(), String> {
    let at = |line: usize| format!("{file}:{line}");
    if let Some(k) = w.kind.as_ref().filter(|k| k.v != "DISK") {
        job.bad(
            file,
            k.line,
            format!("Worker type {} (worker {})", k.v, w.name),
            "a network worker measures TCP or VI connections between machines; storlab measures storage",
        );
        return Ok(());
    }
    settings(file, w, job);
    let disk_targets: Vec<&super::parse::Target> = w
        .targets
        .iter()
        .filter(|t| match &t.kind {
            Some(k) if k.v != "DISK" => {
                job.bad(
                    file,
                    k.line,
                    format!("Target type {} ({})", k.v, t.text),
                    "a network target; storlab measures storage",
                );
                false
            }
            _ => true,
        })
        .collect();
    if disk_targets.is_empty() {
        job.notes.push(format!(
            "{}: worker {} has no disk target: Iometer runs nothing on it, and neither does storlab",
            at(w.line),
            w.name
        ));
        return Ok(());
    }
    let mut specs: Vec<At<String>> = w.specs.clone();
    if specs.is_empty() {
        specs = icf
            .specs
            .iter()
            .filter(|s| matches!(s.assign.as_str(), "ALL" | "DISK"))
            .map(|s| At {
                line: s.line,
                v: s.name.clone(),
            })
            .collect();
    }
    if specs.is_empty() {
        job.notes.push(format!(
            "{}: worker {} has no access specification assigned: Iometer runs nothing on it, and neither does storlab",
            at(w.line),
            w.name
        ));
        return Ok(());
    }
    let start = w.start_sector.as_ref().map_or(0, |s| s.v);
    let max = w.max_sectors.as_ref().map_or(0, |m| m.v);
    let (Some(offset), Some(length)) = (start.checked_mul(SECTOR), max.checked_mul(SECTOR)) else {
        let line = w
            .start_sector
            .as_ref()
            .or(w.max_sectors.as_ref())
            .map_or(w.line, |a| a.line);
        return Err(format!(
            "{}: disk maximum size {max} and starting sector {start} are beyond 2^64 bytes",
            at(line)
        ));
    };
    let target_names = place(file, opts, &disk_targets, offset, length, job)?;
    let queue_depth = w.outstanding.as_ref().map_or(1, |o| o.v).max(1);
    if let Some(o) = w.outstanding.as_ref().filter(|o| o.v > MAX_QUEUE_DEPTH) {
        return Err(format!(
            "{}: worker {}: {} outstanding I/Os; storlab keeps at most {MAX_QUEUE_DEPTH} in flight per worker",
            at(o.line),
            w.name,
            o.v
        ));
    }
    for (i, s) in specs.iter().enumerate() {
        let Some(spec) = find_spec(icf, &s.v) else {
            return Err(format!(
                "{}: worker {} is assigned access specification `{}`, which the file does not define under 'ACCESS SPECIFICATIONS",
                at(s.line),
                w.name,
                s.v
            ));
        };
        let group = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let (access, think_ms) = access(file, spec, offset, (length > 0).then_some(length), job);
        if access.is_empty() {
            continue;
        }
        job.workers.push(WorkerOut {
            at: at(w.line),
            text: w.name.clone(),
            name: if specs.len() > 1 {
                format!("{name} [{}]", spec.name)
            } else {
                name.to_string()
            },
            group: Some(group),
            count: 1,
            targets: target_names.clone(),
            one_target_each: false,
            queue_depth,
            think_ms,
            spec: (spec.name.clone(), at(s.line)),
            access,
        });
    }
    Ok(())
}

/// What a disk worker's target settings say beyond its outstanding I/Os and span.
fn settings(file: &str, w: &Worker, job: &mut Job) {
    let at = |line: usize| format!("{file}:{line}");
    if let Some(c) = &w.connection_rate {
        job.bad(
            file,
            c.line,
            format!("test connection rate ENABLED, {} transactions per connection", c.v),
            "storlab keeps each target open for the whole run; it does not reopen it every N transactions",
        );
    }
    if let Some(s) = &w.seed {
        match &job.seed {
            None => job.seed = Some(s.clone()),
            Some(first) if first.v != s.v => job.notes.push(format!(
                "{}: fixed seed {} of worker {}: storlab has one seed per job, {} (line {})",
                at(s.line),
                s.v,
                w.name,
                first.v,
                first.line
            )),
            Some(_) => {}
        }
    }
    if let Some(p) = w.data_pattern.as_ref().filter(|p| p.v != 2) {
        job.notes.push(format!(
            "{}: data pattern {} ({}): storlab writes unique, incompressible data, as Iometer's full random pattern (2)",
            at(p.line),
            p.v,
            if p.v == 0 { "repeating bytes" } else { "pseudo-random" }
        ));
    }
}

/// The worker's targets as `[[target]]`s (each once, however many workers use it; sized to
/// reach the furthest span a worker gives it), placed with `--map`; returns their names.
fn place(
    file: &str,
    opts: &Options,
    disk_targets: &[&super::parse::Target],
    offset: u64,
    length: u64,
    job: &mut Job,
) -> Result<Vec<String>, String> {
    let at = |line: usize| format!("{file}:{line}");
    let mut target_names = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for t in disk_targets {
        let tname = target_name(&t.text);
        let end = if length > 0 {
            offset.checked_add(length)
        } else {
            None
        };
        match job.target_index.get(&tname).map(|&i| &mut job.targets[i]) {
            Some(x) => {
                if let (Some(e), Some(s)) = (end, x.size) {
                    x.size = Some(s.max(e));
                }
            }
            None => {
                if job.targets.len() >= crate::job::MAX_TARGETS {
                    return Err(format!(
                        "{}: more than {} targets; storlab runs at most {}",
                        at(t.line),
                        crate::job::MAX_TARGETS,
                        crate::job::MAX_TARGETS
                    ));
                }
                let safe: String = tname
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .collect();
                let fallback = format!(
                    "iometer-{}.dat",
                    if safe.is_empty() { "target" } else { &safe }
                );
                let mapped = opts.mapped(&tname).is_some() || opts.mapped(&t.text).is_some();
                let path = match opts.mapped(&t.text) {
                    Some(p) => p.to_path_buf(),
                    None => opts.place(&tname, &fallback, &mut job.notes),
                };
                let scratch_size = end.is_none() && !mapped;
                job.target_index.insert(tname.clone(), job.targets.len());
                job.targets.push(TargetOut {
                    name: tname.clone(),
                    path,
                    size: end.or(scratch_size.then_some(SCRATCH_SIZE)),
                    at: at(t.line),
                    text: t.text.clone(),
                    scratch_size,
                });
            }
        }
        if seen.insert(tname.clone()) {
            target_names.push(tname);
        }
    }
    Ok(target_names)
}

/// The access entries of `spec`, and the think time its transfer delay gives.
fn access(
    file: &str,
    spec: &Spec,
    offset: u64,
    length: Option<u64>,
    job: &mut Job,
) -> (Vec<AccessOut>, Option<u64>) {
    let mut out = Vec::new();
    let delays: Vec<&SpecLine> = spec.lines.iter().filter(|l| l.delay > 0).collect();
    let mut think = None;
    if let Some(first) = delays.first() {
        let one = delays.len() == spec.lines.len()
            && spec
                .lines
                .iter()
                .all(|l| l.delay == first.delay && l.burst <= 1);
        if one {
            think = Some(first.delay);
        } else {
            for l in &delays {
                job.bad(
                    file,
                    l.line,
                    l.text.clone(),
                    format!(
                        "transfer delay {} ms between bursts of {} I/Os: storlab's think time waits after every I/O of a worker alike; it is faithful only when every line of the specification has the same delay and a burst of 1",
                        l.delay, l.burst
                    ),
                );
            }
        }
    }
    for l in &spec.lines {
        if l.reply != 0 {
            job.bad(
                file,
                l.line,
                l.text.clone(),
                format!(
                    "reply size {} bytes: replies are for network workers; a disk worker has none",
                    l.reply
                ),
            );
            continue;
        }
        if l.share == 0 {
            continue;
        }
        if l.size == 0 {
            job.bad(
                file,
                l.line,
                l.text.clone(),
                "transfer size 0 bytes: there is no I/O to issue",
            );
            continue;
        }
        out.push(AccessOut {
            at: format!("{file}:{}", l.line),
            text: l.text.clone(),
            class: spec.name.clone(),
            weight: l.share,
            block: l.size,
            read: l.reads,
            random: l.random,
            align: l.align,
            offset,
            length,
        });
    }
    (out, think)
}

/// The `[cycle]` the test type asks for.
fn cycle(
    file: &str,
    icf: &Icf,
    managers: &[(String, Vec<Worker>)],
    job: &mut Job,
) -> Result<(), String> {
    let at = |line: usize| format!("{file}:{line}");
    let Some(tt) = &icf.setup.test_type else {
        return Ok(());
    };
    let (targets, workers, queue) = match tt.v.as_str() {
        "NORMAL" => return Ok(()),
        "CYCLE_TARGETS" | "INCREMENT_TARGETS_PARALLEL" => (true, false, false),
        "CYCLE_WORKERS" => (false, true, false),
        "CYCLE_WORKERS_AND_TARGETS" => (true, true, false),
        "CYCLE_OUTSTANDING_IOS" => (false, false, true),
        "CYCLE_OUTSTANDING_IOS_AND_TARGETS" => (true, false, true),
        "INCREMENT_TARGETS_SERIAL" => {
            job.bad(
                file,
                tt.line,
                "Test Type INCREMENT_TARGETS_SERIAL",
                "adds targets to one worker at a time; storlab's targets cycle gives every worker the same number of targets (use CYCLE_TARGETS)",
            );
            return Ok(());
        }
        other => {
            job.bad(
                file,
                tt.line,
                format!("Test Type {other}"),
                "not a test type of any Iometer version storlab knows",
            );
            return Ok(());
        }
    };
    let linear = Cycling {
        start: 1,
        end: None,
        step: 1,
        exponential: false,
    };
    let push = |key: &'static str,
                c: Option<&At<Cycling>>,
                default: &Cycling,
                end: u64,
                job: &mut Job| {
        let (line, c) = c.map_or((tt.line, default), |c| (c.line, &c.v));
        let end = c.end.unwrap_or(end);
        match steps(c, end) {
            Ok(values) if key == "queue_depth" && values.iter().any(|&v| v > MAX_QUEUE_DEPTH) => {
                Err(format!(
                    "{}: queue depth cycling from {} to {end}: storlab keeps at most {MAX_QUEUE_DEPTH} I/Os in flight per worker; end the cycle at {MAX_QUEUE_DEPTH} or below",
                    at(line),
                    c.start
                ))
            }
            Ok(values) => {
                job.cycles.push(CycleOut {
                    key,
                    values,
                    at: at(line),
                    text: format!(
                        "{key}: start {}, end {end}, step {} {}",
                        c.start,
                        c.step,
                        if c.exponential {
                            "EXPONENTIAL"
                        } else {
                            "LINEAR"
                        }
                    ),
                });
                Ok(())
            }
            Err(e) => Err(format!("{}: {key} cycling: {e}", at(line))),
        }
    };
    if targets {
        let most = job
            .workers
            .iter()
            .map(|w| w.targets.len())
            .max()
            .unwrap_or(1) as u64;
        push(
            "targets",
            icf.setup.disk_cycling.as_ref(),
            &linear,
            most,
            job,
        )?;
    }
    if queue {
        let qd = Cycling {
            start: 1,
            end: Some(32),
            step: 2,
            exponential: true,
        };
        push(
            "queue_depth",
            icf.setup.queue_cycling.as_ref(),
            &qd,
            32,
            job,
        )?;
    }
    if workers {
        if managers.len() > 1 {
            job.bad(
                file,
                tt.line,
                format!("Test Type {}", tt.v),
                "worker cycling over several managers: storlab's workers cycle counts one machine's workers",
            );
            return Ok(());
        }
        match merge(&mut job.workers) {
            Ok(n) => push(
                "workers",
                icf.setup.worker_cycling.as_ref(),
                &linear,
                n,
                job,
            )?,
            Err(why) => job.bad(file, tt.line, format!("Test Type {}", tt.v), why),
        }
    }
    Ok(())
}

/// Worker cycling: the workers of each group become one `[[worker]]` with `count` (storlab's
/// workers cycle sets the count of each); they must be alike but for their targets. Returns
/// the most workers a group has.
fn merge(workers: &mut Vec<WorkerOut>) -> Result<u64, String> {
    let mut merged: Vec<WorkerOut> = Vec::new();
    for w in workers.drain(..) {
        match merged.iter_mut().find(|m| m.group == w.group) {
            None => merged.push(w),
            Some(m) => {
                let same = m.queue_depth == w.queue_depth
                    && m.think_ms == w.think_ms
                    && m.spec.0 == w.spec.0
                    && m.access.len() == w.access.len();
                if !same {
                    return Err(format!(
                        "worker cycling with unlike workers ({} and {}: queue depth, delay or access specification differ): storlab's workers cycle copies one worker",
                        m.name, w.name
                    ));
                }
                m.count += 1;
                if m.count == 2 {
                    m.one_target_each =
                        m.targets.len() == 1 && w.targets.len() == 1 && w.targets != m.targets;
                }
                let alike = if m.one_target_each {
                    w.targets.len() == 1 && !m.targets.contains(&w.targets[0])
                } else {
                    w.targets == m.targets
                };
                if !alike {
                    return Err(format!(
                        "worker cycling with workers on different sets of targets ({} and {}): storlab's workers cycle copies one worker, with one target each or all the same targets",
                        m.name, w.name
                    ));
                }
                if m.one_target_each {
                    m.targets.push(w.targets[0].clone());
                }
            }
        }
    }
    let most = merged.iter().map(|m| u64::from(m.count)).max().unwrap_or(1);
    *workers = merged;
    Ok(most)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycling_steps_as_iometer_counts_them() {
        let lin = Cycling {
            start: 1,
            end: None,
            step: 2,
            exponential: false,
        };
        assert_eq!(steps(&lin, 6).unwrap(), vec![1, 3, 5]);
        let exp = Cycling {
            start: 1,
            end: Some(32),
            step: 2,
            exponential: true,
        };
        assert_eq!(steps(&exp, 32).unwrap(), vec![1, 2, 4, 8, 16, 32]);
        let bad = Cycling {
            start: 1,
            end: None,
            step: 1,
            exponential: true,
        };
        assert!(steps(&bad, 8).unwrap_err().contains("EXPONENTIAL step 1"));
        let huge = Cycling {
            start: 1,
            end: None,
            step: 1,
            exponential: false,
        };
        assert!(
            steps(&huge, u64::MAX)
                .unwrap_err()
                .contains("more than 1024")
        );
        assert_eq!(target_name("C: \"Local Disk\""), "C:");
        assert_eq!(target_name("PHYSICALDRIVE:1"), "PHYSICALDRIVE:1");
    }
}
