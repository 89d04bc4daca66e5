//! Assembling a run's [`RunResult`]: what the run has learned so far (a [`Draft`]: phases,
//! warnings, engine, targets) becomes a results file at the end, or early when the run stops or
//! fails, and the workers' reports fill in the measurement.

use super::RunOptions;
use super::collect::Collected;
use crate::engine::target::OpenTarget;
use crate::job::{EngineKind, Job};
use crate::results::cost::{CostResult, PhaseCost};
use crate::results::{
    ClassResult, DeviceResult, DirCounts, EngineInfo, Interrupted, Phase, PhaseRecord, PhaseState,
    RunResult, TargetResult, WorkerResult,
};
use crate::stats::StatsSet;
use crate::stats::host::{self, CpuPercent, HostInfo};
use crate::stats::summary::ClassSummary;
use std::collections::BTreeMap;

/// What a run has learned so far, from which its results are assembled.
#[derive(Default, Clone)]
pub(super) struct Draft {
    pub started: Option<chrono::DateTime<chrono::Utc>>,
    pub phases: Vec<PhaseRecord>,
    pub warnings: Vec<String>,
    pub engine: EngineInfo,
    pub targets: Vec<TargetResult>,
    pub timeseries: crate::results::timeseries::Series,
    /// The set-up is over and the workers may start: a failure from here on is the run's
    /// (results written, exit 1); before it, the run never started (no results, exit 2).
    pub starting: bool,
}

impl Draft {
    /// The draft of a run of `job` starting now.
    pub(super) fn new(job: &Job) -> Draft {
        Draft {
            started: Some(chrono::Utc::now()),
            warnings: job.warnings.clone(),
            engine: EngineInfo {
                name: engine_name(job.engine).into(),
                fallback_reason: None,
                notes: Vec::new(),
                io_uring: None,
            },
            ..Draft::default()
        }
    }

    /// Records that `phase` ended in `state` after `seconds`, in which storlab used `cpu_s`
    /// seconds of CPU.
    pub(super) fn phase(&mut self, phase: Phase, state: PhaseState, seconds: f64, cpu_s: f64) {
        self.phases.push(PhaseRecord {
            name: phase,
            state,
            seconds,
            cpu_s: Some(cpu_s),
        });
    }
}

fn engine_name(e: EngineKind) -> &'static str {
    match e {
        EngineKind::IoUring => "io_uring",
        EngineKind::Psync => "psync",
        EngineKind::Null => "null",
    }
}

pub(super) fn target_result(t: &crate::job::Target, o: &OpenTarget) -> TargetResult {
    let p = host::placement(&o.canonical_path);
    TargetResult {
        name: t.name.clone(),
        path: o.path.display().to_string(),
        kind: o.kind,
        size_bytes: o.size_bytes,
        logical_block_size_bytes: o.logical_block_size,
        direct: o.direct,
        dsync: o.dsync,
        filesystem: p.filesystem,
        mount_point: p.mount_point.map(|m| m.display().to_string()),
        mount_options: p.mount_options,
        device: p.device,
        device_model: p.device_model,
        prepare: o.prepare.clone(),
        ops: DirCounts::default(),
        bytes: DirCounts::default(),
        errors: DirCounts::default(),
    }
}

pub(super) fn device_names(targets: &[TargetResult]) -> Vec<String> {
    let mut names: Vec<String> = targets.iter().filter_map(|t| t.device.clone()).collect();
    names.sort();
    names.dedup();
    names
}

pub(super) fn assemble(
    job: &Job,
    opts: &RunOptions,
    draft: Draft,
    interrupted: Interrupted,
    host: Option<&HostInfo>,
) -> RunResult {
    let started = draft.started.unwrap_or_else(chrono::Utc::now);
    let classes = job
        .classes
        .iter()
        .enumerate()
        .map(|(i, name)| {
            (
                name.clone(),
                ClassResult {
                    read: Default::default(),
                    write: Default::default(),
                    flush: Default::default(),
                    write_durability: durability(job, i),
                    measured_ms: None,
                    steps: None,
                },
            )
        })
        .collect();
    RunResult {
        schema_version: crate::results::schema::SCHEMA_VERSION,
        storlab_version: env!("CARGO_PKG_VERSION").into(),
        command: opts.command.clone(),
        invocation: opts.invocation.clone(),
        description: opts.description.clone(),
        job: job.clone(),
        host: host.cloned().unwrap_or_else(host::host_info),
        started_at: started.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        ended_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        interrupted,
        phases: draft.phases,
        engine: draft.engine,
        warnings: draft.warnings,
        measured_ms: 0,
        targets: draft.targets,
        totals: ClassSummary::default(),
        classes,
        workers: Vec::new(),
        devices: Vec::new(),
        host_cpu: CpuPercent::default(),
        host_cpus: None,
        errors: Vec::new(),
        timeseries_path: None,
        timeseries: draft.timeseries,
        cost: None,
        data: None,
        verify: None,
        verdict: None,
        exchange: None,
        max_mailboxes: None,
        trials: None,
        steps: None,
        precondition: None,
        users: None,
        database: None,
        calibrate: None,
        etcd: None,
        wal_sync: None,
        fs: None,
        block_sample: None,
        cache_tiers: Vec::new(),
        page_cache: None,
        reuse: None,
        hosts: Vec::new(),
    }
}

/// storlab's own cost: the measured time's from the workers' totals (whose intervals add up
/// to them), the ramp's from the ramp's intervals.
fn cost(job: &Job, c: &Collected, all: &StatsSet) -> CostResult {
    let ios = |s: &StatsSet| -> u64 {
        let t = s.total();
        t.dirs.iter().map(|d| d.ops).sum()
    };
    let threads = c.reports.len();
    let measure_s = c.reports.iter().map(|r| r.measured_ns).max().unwrap_or(0) as f64 / 1e9;
    let ramp = c
        .ramp
        .as_ref()
        .map(|(stats, cpu, seconds)| PhaseCost::of(*seconds, ios(stats), threads, stats.cost, cpu));
    CostResult {
        measure: PhaseCost::of(measure_s, ios(all), threads, all.cost, &c.cpu_measure),
        ramp,
        probe_lateness_max_ns: c.probe_lateness_max_ns,
        kernel_wait_max_ns: c.kernel_wait.as_ref().map(|k| k.0),
        kernel_wait_thread: c.kernel_wait.as_ref().map(|k| k.1.clone()),
        spinning: spinning(&job.io_uring),
    }
}

/// What spins on purpose with these io_uring options.
fn spinning(u: &crate::job::uring::UringOptions) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(sq) = &u.sqpoll {
        out.push(format!(
            "sqpoll: the kernel's submission thread of each ring polls for work, and spins until it has been idle {} ms",
            sq.idle_ms
        ));
    }
    if u.poll {
        out.push(
            "poll: completions are polled (IOPOLL) by the worker's own calls, not signalled".into(),
        );
    }
    if u.batch_complete_min == 0 {
        out.push("batch_complete_min = 0: a worker with I/O in flight looks for completions without waiting for one".into());
    }
    out
}

/// How class `class`'s writes are made durable, from the job.
fn durability(job: &Job, class: usize) -> String {
    let mut kinds: Vec<String> = Vec::new();
    let mut add = |k: String| {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    };
    for w in &job.workers {
        for a in w
            .access
            .iter()
            .filter(|a| a.class == class && a.read_pct < 100.0)
        {
            if a.sync {
                add("rwf_dsync".into());
            }
            if a.fsync_every > 0 {
                add(format!("fsync_every_{}", a.fsync_every));
            }
            for &t in &w.targets {
                let t = &job.targets[t];
                if t.sync {
                    add("o_dsync".into());
                }
                if t.osync {
                    add("o_sync".into());
                }
                if t.fsync_every > 0 {
                    add(format!("fsync_every_{}", t.fsync_every));
                }
            }
        }
    }
    if kinds.is_empty() {
        "none".into()
    } else {
        kinds.join("+")
    }
}

pub(super) fn fill_measurement(result: &mut RunResult, job: &Job, c: &Collected) {
    let measured_ns = c.reports.iter().map(|r| r.measured_ns).max().unwrap_or(0);
    let secs = measured_ns as f64 / 1e9;
    result.measured_ms = measured_ns / 1_000_000;
    let mut all = StatsSet::new(job.classes.len());
    for r in &c.reports {
        all.add(&r.totals);
    }
    result.totals = ClassSummary::of(&all.total(), secs, true);
    for (i, name) in job.classes.iter().enumerate() {
        if let Some(cr) = result.classes.get_mut(name) {
            let s = ClassSummary::of(&all.classes[i], secs, true);
            cr.read = s.read;
            cr.write = s.write;
            cr.flush = s.flush;
        }
    }
    result.cache_tiers = (c.reports.iter())
        .filter_map(|r| r.tier.as_deref().cloned())
        .collect();
    result.data = job.data.active().then(|| {
        let samples: Vec<_> = (c.reports.iter()).filter_map(|r| r.data.clone()).collect();
        crate::results::data::DataResult::new(
            job.data,
            crate::engine::reduce::achieved(&samples),
            samples.iter().map(|m| m.written).sum(),
            samples.iter().map(|m| m.units).sum(),
        )
        .with_units(crate::engine::reduce::achieved_by_unit(&samples))
    });
    for t in &result.cache_tiers {
        if let Some(e) = &t.drain.error {
            result.warnings.push(format!(
                "the cache tier of `{}` could not write back all its dirty data: {e}",
                t.target
            ));
        }
    }
    result.workers = c
        .reports
        .iter()
        .map(|r| {
            let wsecs = r.measured_ns as f64 / 1e9;
            let spec = &job.workers[r.worker];
            let used: Vec<usize> = spec.access.iter().map(|a| a.class).collect();
            WorkerResult {
                name: spec.name.clone(),
                totals: ClassSummary::of(&r.totals.total(), wsecs, true),
                classes: used
                    .iter()
                    .map(|&i| {
                        (
                            job.classes[i].clone(),
                            ClassSummary::of(&r.totals.classes[i], wsecs, true),
                        )
                    })
                    .collect(),
                unissued: r.unissued,
                fatal: r.fatal.clone(),
                ended_run: r.ended_run,
            }
        })
        .collect();
    for (ti, t) in result.targets.iter_mut().enumerate() {
        for r in &c.reports {
            let k = &r.targets[ti];
            t.ops.read += k.ops[0];
            t.ops.write += k.ops[1];
            t.ops.flush += k.ops[2];
            t.bytes.read += k.bytes[0];
            t.bytes.write += k.bytes[1];
            t.errors.read += k.errors[0];
            t.errors.write += k.errors[1];
            t.errors.flush += k.errors[2];
        }
    }
    let models: BTreeMap<String, Option<String>> = result
        .targets
        .iter()
        .filter_map(|t| t.device.clone().map(|d| (d, t.device_model.clone())))
        .collect();
    result.devices = c
        .disk_measure
        .iter()
        .map(|(name, delta)| DeviceResult {
            name: name.clone(),
            model: models.get(name).cloned().flatten(),
            delta: *delta,
        })
        .collect();
    result.host_cpu = c.cpu_measure;
    result.cost = Some(cost(job, c, &all));
    result.host_cpus = c.cpus_measure.clone();
    result.errors = c
        .reports
        .iter()
        .flat_map(|r| r.errors.iter().cloned())
        .take(crate::engine::worker::ERROR_DETAILS * 4)
        .collect();
}
