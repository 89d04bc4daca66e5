//! A run's figures for the results section, from what the run measured: each operation of
//! each workload (its class's one direction: a write for what changes the tree, a read for the
//! rest), each workload's and the run's together (merged from the operations' histograms,
//! never averaged), the operations that found nothing to act on, the bytes copies moved, the
//! failures in detail; and the verdict's rules on them.

use super::config::{FsConfig, Limits};
use super::jobs::FsJob;
use super::op::FsOp;
use super::section::{FsFailure, FsOpFigures, FsRun, FsWorkloadFigures, TreeCounts};
use super::source::RunState;
use super::state::TreeState;
use crate::results::RunResult;
use crate::results::verdict::{self, Comparison, Measure, Rule};
use crate::stats::summary::DirSummary;
use std::sync::atomic::Ordering;

/// What exists of `state`.
pub(crate) fn counts(state: &TreeState) -> TreeCounts {
    let (files, dirs, bytes) = state.totals();
    TreeCounts { files, dirs, bytes }
}

/// The figures of `job`'s run, whose results are `r` and whose threads shared `run`.
pub(crate) fn run_figures(job: &FsJob, r: &RunResult, run: &RunState<'_>) -> FsRun {
    // The measured time to the nanosecond, as the classes' rates are over it (`measured_ms`
    // is whole milliseconds: 2 % of a 50 ms mdtest phase).
    let seconds = (r.cost.as_ref())
        .map(|c| c.measure.seconds)
        .filter(|s| *s > 0.0)
        .unwrap_or(r.measured_ms as f64 / 1e3);
    let mut operations = Vec::new();
    for (id, c) in job.classes.ops.iter().enumerate() {
        let Some(name) = job.job.classes.get(id) else {
            continue;
        };
        let unavailable = run.unavailable[id].load(Ordering::Relaxed);
        let Some(class) = r.classes.get(name) else {
            continue;
        };
        let mut figures = if c.op.modifies() {
            class.write.clone()
        } else {
            class.read.clone()
        };
        if figures.ops == 0 && unavailable == 0 {
            continue;
        }
        if c.op == FsOp::Copy {
            figures.bytes = run.copied[id].load(Ordering::Relaxed);
            figures.bytes_per_s = crate::stats::per_second(figures.bytes, seconds);
        }
        operations.push(FsOpFigures {
            workload: job.workloads[c.workload].name.clone(),
            operation: c.op.name().into(),
            data: c.op.moves_data(),
            figures,
            unavailable,
        });
    }
    let workloads = job
        .workloads
        .iter()
        .map(|w| {
            let parts: Vec<&DirSummary> = (operations.iter())
                .filter(|o| o.workload == w.name)
                .map(|o| &o.figures)
                .collect();
            FsWorkloadFigures {
                workload: w.name.clone(),
                threads: w.threads,
                figures: without_histograms(DirSummary::merge(&parts, seconds)),
            }
        })
        .collect();
    let all: Vec<&DirSummary> = operations.iter().map(|o| &o.figures).collect();
    FsRun {
        name: job.name.clone(),
        seconds,
        threads: job.job.workers.len() as u32,
        rate_ops_per_s: job.rate,
        interrupted: r.interrupted.stopped_early(),
        total: without_histograms(DirSummary::merge(&all, seconds)),
        workloads,
        operations,
    }
}

/// A merged summary without its histograms (each operation keeps its own: they merge again
/// exactly, over ranks too).
fn without_histograms(mut d: DirSummary) -> DirSummary {
    d.histogram = None;
    d.service_histogram = None;
    d
}

/// The first failures of `job`'s run in detail.
pub(crate) fn failures(job: &FsJob, run: &RunState<'_>) -> Vec<FsFailure> {
    let list = run
        .backends
        .failures
        .lock()
        .map(|l| l.clone())
        .unwrap_or_default();
    list.into_iter()
        .map(|f| {
            let c = job.classes.ops[f.class as usize];
            FsFailure {
                run: job.name.clone(),
                workload: job.workloads[c.workload].name.clone(),
                operation: c.op.name().into(),
                path: f.path,
                error: f.error,
            }
        })
        .collect()
}

/// The verdict's rules on the measured `runs`: each limit on each operation it names (or
/// every operation, for `*`), and the failed operations of every run (the format's too).
pub(crate) fn rules(limits: &Limits, runs: &[FsRun], all: &[FsRun]) -> Vec<Rule> {
    let mut rules = Vec::new();
    let several = runs.len() > 1;
    for run in runs {
        let ops_several = run.workloads.len() > 1;
        for o in &run.operations {
            if o.figures.ops == 0 {
                continue;
            }
            let named = |what: &str| {
                let op = if ops_several {
                    format!("{}/{}", o.workload, o.operation)
                } else {
                    o.operation.clone()
                };
                if several {
                    format!("{}: {what} of {op}", run.name)
                } else {
                    format!("{what} of {op}")
                }
            };
            let applies = |x: &Option<FsOp>| x.is_none_or(|op| op.name() == o.operation);
            for (op, ns) in limits.p99_ns.iter().filter(|(op, _)| applies(op)) {
                let _ = op;
                rules.push(
                    Rule::judge(
                        named("99th percentile latency"),
                        o.figures.latency_ns.p99 as f64 / 1e6,
                        Comparison::AtMost,
                        *ns as f64 / 1e6,
                        "ms",
                    )
                    .measuring(Measure::PercentileLatency(99.0)),
                );
            }
            for (_, ns) in limits.mean_ns.iter().filter(|(op, _)| applies(op)) {
                rules.push(
                    Rule::judge(
                        named("mean latency"),
                        o.figures.latency_ns.mean / 1e6,
                        Comparison::AtMost,
                        *ns as f64 / 1e6,
                        "ms",
                    )
                    .measuring(Measure::MeanLatency),
                );
            }
            for (_, rate) in limits.min_rate.iter().filter(|(op, _)| applies(op)) {
                rules.push(
                    Rule::judge(
                        named("rate"),
                        o.figures.iops,
                        Comparison::AtLeast,
                        *rate,
                        "ops/s",
                    )
                    .measuring(Measure::Rate),
                );
            }
        }
    }
    let errors: u64 = all.iter().map(|r| r.total.errors).sum();
    rules.push(Rule::judge(
        verdict::IO_ERRORS,
        errors as f64,
        Comparison::AtMost,
        limits.max_errors as f64,
        "errors",
    ));
    rules
}

/// The durability of `r`'s classes as the files were opened (the job's targets say
/// nothing: it has none).
pub(crate) fn align_classes(r: &mut RunResult, job: &FsJob, cfg: &FsConfig) {
    for (id, c) in job.classes.ops.iter().enumerate() {
        let Some(name) = job.job.classes.get(id) else {
            continue;
        };
        if let Some(class) = r.classes.get_mut(name) {
            class.write_durability = durability(cfg, c.op);
        }
    }
}

/// How the writes of `op` are made durable, as the results' classes say it.
fn durability(cfg: &FsConfig, op: FsOp) -> String {
    if !matches!(op, FsOp::Write | FsOp::Copy) {
        return "none".into();
    }
    let o = cfg.open;
    let mut kinds = Vec::new();
    if o.dsync {
        kinds.push("o_dsync");
    }
    if o.sync {
        kinds.push("o_sync");
    }
    if o.fsync {
        kinds.push("fsync_at_close");
    }
    if kinds.is_empty() {
        "none".into()
    } else {
        kinds.join("+")
    }
}
