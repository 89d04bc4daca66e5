//! The jobs a file-system workload runs: one per pass of its runs, one for the format, one for
//! removing a tree, one per mdtest phase. Each is an ordinary [`Job`] with no target (the
//! tree is the workload's): a worker per thread, a class per operation of each workload
//! (`read`, or `WORKLOAD/read` with several workloads), each worker's access entries one per
//! class it issues (sizing its buffer: its largest transfer), its rate its share of the
//! run's. [`FsSources`] drives each worker with its thread's [`FileOps`] on the file-system
//! backend (or the null engine's, which makes no system call: storlab's own cost).

use super::backend::{Backends, ClassOp, Classes, Maker};
use super::config::{FileIo, FsConfig, Pass, WorkloadConfig};
use super::mdtest::MdPhase;
use super::op::{FsOp, OpenMode};
use super::source::{FileOps, Ids, Plan, RunState};
use crate::engine::worker::WorkerReport;
use crate::job::{Access, EngineKind, IoLimit, Job, OnError, Rate, Worker};
use crate::run::{Driver, Sources, WorkerInput};

/// The longest a run that ends when its work is done may take (the format, a removal, an
/// mdtest phase).
const UNTIL_DONE_MS: u64 = 30 * 86_400_000;

/// What one job's threads do.
#[derive(Debug, Clone)]
pub(crate) enum Thread {
    /// Workload `w`'s mix.
    Mix(usize),
    /// The format.
    Format,
    /// Removing the tree.
    Clean,
    /// Nothing (see [`Plan::Idle`]).
    Idle,
    /// mdtest: `op` on each of `start..end`, reading `read_bytes` of each.
    Range {
        /// The operation.
        op: FsOp,
        /// The first file (directory).
        start: u64,
        /// The end.
        end: u64,
        /// Bytes read of each.
        read_bytes: u64,
    },
}

/// One job of the workload, with what its classes and threads are.
#[derive(Debug, Clone)]
pub(crate) struct FsJob {
    /// Its name in the results: `format`, the pass's label, `mdtest create 1`.
    pub name: String,
    /// The job.
    pub job: Job,
    /// Its classes.
    pub classes: Classes,
    /// Each worker's thread.
    pub threads: Vec<Thread>,
    /// The workloads, as this job runs them.
    pub workloads: Vec<WorkloadConfig>,
    /// The rate asked of all its threads (open loop).
    pub rate: Option<f64>,
}

/// The class names of `workloads`' operations, and what each class is.
fn classes(job: &mut Job, workloads: &[WorkloadConfig]) -> Classes {
    let mut c = Classes::default();
    for (wi, w) in workloads.iter().enumerate() {
        let mode = match (w.rdpct, w.mix.iter().any(|&(o, _)| o == FsOp::Write)) {
            (Some(_), _) => OpenMode::Both,
            (None, true) if w.mix.iter().any(|&(o, _)| o == FsOp::Read) => OpenMode::Both,
            (None, true) => OpenMode::Write,
            (None, false) => OpenMode::Read,
        };
        for op in w.issued() {
            let name = if workloads.len() == 1 {
                op.name().to_string()
            } else {
                format!("{}/{}", w.name, op.name())
            };
            let id = job.class(&name);
            if c.ops.len() <= id {
                c.ops.resize(
                    id + 1,
                    ClassOp {
                        workload: wi,
                        op,
                        mode,
                    },
                );
            }
            c.ops[id] = ClassOp {
                workload: wi,
                op,
                mode,
            };
        }
    }
    c
}

/// The access entries of workload `wi`'s threads: one per class it issues.
fn access(classes: &Classes, wi: usize, w: &WorkloadConfig) -> Vec<Access> {
    classes
        .ops
        .iter()
        .enumerate()
        .filter(|(_, c)| c.workload == wi)
        .map(|(id, c)| {
            let block = if c.op.moves_data() {
                w.max_xfer().max(4096)
            } else {
                4096
            };
            let random = match (c.op, w.fileio) {
                (FsOp::Read | FsOp::Write, FileIo::Random { .. }) => 100.0,
                _ => 0.0,
            };
            Access::new(id, block, if c.op.modifies() { 0.0 } else { 100.0 }, random)
        })
        .collect()
}

/// The job of `workloads` run by `threads` (each a worker), named `name`.
#[allow(clippy::too_many_arguments)]
fn job_of(
    cfg: &FsConfig,
    name: &str,
    workloads: Vec<WorkloadConfig>,
    threads: Vec<(usize, Thread)>,
    rates: &[Option<f64>],
    (duration_ms, ramp_ms, interval_ms): (u64, u64, u64),
    arrivals: crate::job::Arrivals,
    until_done: bool,
) -> FsJob {
    let mut job = Job {
        description: Some(format!(
            "file-system workload on {}: {name}",
            cfg.anchor.display()
        )),
        engine: cfg.engine,
        duration_ms,
        ramp_ms,
        interval_ms,
        seed: cfg.seed,
        buffered: !cfg.open.direct,
        destroy_data: false,
        batch: 1,
        on_error: if until_done {
            OnError::Stop
        } else {
            OnError::default()
        },
        data: cfg.data,
        ..Job::default()
    };
    let classes = classes(&mut job, &workloads);
    let mut per_workload = vec![0u32; workloads.len()];
    let mut plan = Vec::new();
    for (wi, thread) in threads {
        let w = &workloads[wi];
        let t = per_workload[wi];
        per_workload[wi] += 1;
        let worker_name = if workloads.len() == 1 && w.threads == 1 {
            w.name.clone()
        } else {
            format!("{}-{t}", w.name)
        };
        let rate = rates.get(wi).copied().flatten().map(|r| Rate {
            iops: r / f64::from(w.threads.max(1)),
            arrivals,
        });
        let ops: Vec<String> = w.mix.iter().map(|(o, n)| format!("{o}:{n}")).collect();
        job.workers.push(Worker {
            rate,
            driven_by: Some(format!("file-system operations ({})", ops.join(","))),
            io_limit: until_done.then_some(IoLimit::Ios(u64::MAX)),
            ..Worker::closed_loop(worker_name, Vec::new(), 1, access(&classes, wi, w))
        });
        plan.push(thread);
    }
    FsJob {
        name: name.to_string(),
        job,
        classes,
        threads: plan,
        workloads,
        rate: None,
    }
}

/// Each workload's share of `rate`: its skew, or an even share of what the skews leave.
fn shares(workloads: &[WorkloadConfig], rate: Option<f64>) -> Vec<Option<f64>> {
    let Some(rate) = rate else {
        return vec![None; workloads.len()];
    };
    let skewed: f64 = workloads.iter().filter_map(|w| w.skew).sum();
    let unskewed = workloads.iter().filter(|w| w.skew.is_none()).count();
    let rest = (100.0 - skewed).max(0.0) / unskewed.max(1) as f64;
    workloads
        .iter()
        .map(|w| Some(rate * w.skew.unwrap_or(rest) / 100.0).filter(|&r| r > 0.0))
        .collect()
}

/// The job of a pass.
pub(crate) fn pass_job(cfg: &FsConfig, pass: &Pass) -> FsJob {
    let threads = (pass.workloads.iter().enumerate())
        .flat_map(|(wi, w)| (0..w.threads).map(move |_| (wi, Thread::Mix(wi))))
        .collect();
    let rates = shares(&pass.workloads, pass.rate);
    let mut j = job_of(
        cfg,
        &pass.label,
        pass.workloads.clone(),
        threads,
        &rates,
        (pass.duration_ms, pass.ramp_ms, pass.interval_ms),
        pass.arrivals,
        false,
    );
    j.rate = pass.rate;
    j
}

/// A workload of one thread kind: its name, operations and threads.
fn fixed(name: &str, mix: Vec<(FsOp, u32)>, threads: u32, xfer: u64) -> WorkloadConfig {
    WorkloadConfig {
        name: name.into(),
        mix,
        rdpct: None,
        fileio: FileIo::Sequential,
        select: super::config::Select::Sequential,
        stopafter: None,
        xfer: vec![(xfer.max(1), 1)],
        threads,
        skew: None,
    }
}

/// The job of the format: the format's threads make every directory and file missing.
pub(crate) fn format_job(cfg: &FsConfig) -> FsJob {
    let w = fixed(
        "format",
        vec![(FsOp::Mkdir, 1), (FsOp::Create, 1), (FsOp::Write, 1)],
        cfg.format_threads,
        cfg.format_xfer,
    );
    let threads = (0..cfg.format_threads)
        .map(|_| (0, Thread::Format))
        .collect();
    job_of(
        cfg,
        "format",
        vec![w],
        threads,
        &[None],
        (UNTIL_DONE_MS, 0, cfg.interval_ms),
        crate::job::Arrivals::Uniform,
        true,
    )
}

/// The job that removes the tree: every file, then every directory, deepest first.
pub(crate) fn clean_job(cfg: &FsConfig) -> FsJob {
    let w = fixed(
        "clean",
        vec![(FsOp::Delete, 1), (FsOp::Rmdir, 1)],
        cfg.format_threads,
        4096,
    );
    let threads = (0..cfg.format_threads)
        .map(|_| (0, Thread::Clean))
        .collect();
    job_of(
        cfg,
        "clean",
        vec![w],
        threads,
        &[None],
        (UNTIL_DONE_MS, 0, cfg.interval_ms),
        crate::job::Arrivals::Uniform,
        true,
    )
}

/// The job of mdtest phase `phase` (iteration `iteration`): each thread of this rank on its
/// own files (those of the thread `shift` ranks on, but for the create).
pub(crate) fn mdtest_job(cfg: &FsConfig, phase: MdPhase, iteration: u32) -> FsJob {
    let m = cfg.mdtest.as_ref().expect("an mdtest job");
    let (op, mix) = match phase {
        MdPhase::Create => (FsOp::Create, vec![(FsOp::Create, 1)]),
        MdPhase::Stat => (FsOp::Getattr, vec![(FsOp::Getattr, 1)]),
        MdPhase::Read => (FsOp::Read, vec![(FsOp::Read, 1)]),
        MdPhase::Remove => (FsOp::Delete, vec![(FsOp::Delete, 1)]),
    };
    let mut w = fixed("mdtest", mix, m.threads, m.write_bytes.max(m.read_bytes));
    if phase == MdPhase::Read && m.read_bytes == 0 {
        // mdtest's read phase of empty files: each opened and closed.
        w.mix = vec![(FsOp::Open, 1)];
    }
    let r = cfg.rank;
    let shift = if phase == MdPhase::Create { 0 } else { m.shift };
    let owner = (r.rank + shift) % r.ranks;
    let threads = (0..u64::from(m.threads))
        .map(|t| {
            let task = owner * u64::from(m.threads) + t;
            let start = task * m.items;
            (
                0,
                Thread::Range {
                    op: if w.mix[0].0 == FsOp::Open {
                        FsOp::Open
                    } else {
                        op
                    },
                    start,
                    end: start + m.items,
                    read_bytes: m.read_bytes,
                },
            )
        })
        .collect();
    job_of(
        cfg,
        &format!("mdtest {} {iteration}", phase.name()),
        vec![w],
        threads,
        &[None],
        (UNTIL_DONE_MS, 0, cfg.interval_ms),
        crate::job::Arrivals::Uniform,
        true,
    )
}

/// The job of mdtest's tree phase: each thread of this rank makes (or removes) its own
/// directory.
pub(crate) fn mdtest_tree_job(cfg: &FsConfig, make: bool, iteration: u32) -> FsJob {
    let m = cfg.mdtest.as_ref().expect("an mdtest job");
    let op = if make { FsOp::Mkdir } else { FsOp::Rmdir };
    let w = fixed("mdtest", vec![(op, 1)], m.threads, 4096);
    let r = cfg.rank;
    let threads = (0..u64::from(m.threads))
        .map(|t| {
            let d = 1 + r.rank * u64::from(m.threads) + t;
            (
                0,
                Thread::Range {
                    op,
                    start: d,
                    end: d + 1,
                    read_bytes: 0,
                },
            )
        })
        .collect();
    let name = format!(
        "mdtest tree {} {iteration}",
        if make { "create" } else { "remove" }
    );
    job_of(
        cfg,
        &name,
        vec![w],
        threads,
        &[None],
        (UNTIL_DONE_MS, 0, cfg.interval_ms),
        crate::job::Arrivals::Uniform,
        true,
    )
}

/// What drives each worker of an [`FsJob`].
pub(crate) struct FsSources<'r> {
    /// What the threads share.
    pub run: &'r RunState<'r>,
    /// The job.
    pub job: &'r FsJob,
    /// What the tree holds is learnt again (a walk) before any worker starts, once: a rank
    /// whose tree another made.
    pub refresh: Option<(&'r super::anchor::Tree, std::sync::Once)>,
}

impl Sources for FsSources<'_> {
    fn drive(&self, input: WorkerInput<'_>, driver: Driver<'_, '_, '_>) -> WorkerReport {
        let run = self.run;
        if let Some((tree, once)) = &self.refresh {
            // Before the start gate: not measured.
            once.call_once(|| {
                tree.state.clear();
                let _ = tree.walk(&tree.state.shape, &tree.state);
            });
        }
        let thread = &self.job.threads[input.index];
        let (plan, wi) = match thread {
            Thread::Mix(wi) => (
                Plan::Mix {
                    cfg: &self.job.workloads[*wi],
                    workload: *wi,
                },
                *wi,
            ),
            Thread::Format => (Plan::Format, 0),
            Thread::Clean => (Plan::Clean, 0),
            Thread::Idle => (Plan::Idle, 0),
            Thread::Range {
                op,
                start,
                end,
                read_bytes,
            } => (
                Plan::Range {
                    op: *op,
                    next: *start,
                    end: *end,
                    read_bytes: *read_bytes,
                },
                0,
            ),
        };
        let xfer = &self.job.workloads[wi].xfer;
        let mut source = FileOps::new(
            run,
            Ids::of(run, wi),
            plan,
            input.seed,
            input.spec.rate,
            xfer,
        );
        if self.job.job.engine == EngineKind::Null {
            driver.run(&mut source)
        } else {
            driver.run_on(Maker(&run.backends), &mut source)
        }
    }
}

/// The shared state of a run of `job` on `tree`.
pub(crate) fn run_state<'t>(
    cfg: &FsConfig,
    tree: &'t super::anchor::Tree,
    job: &FsJob,
) -> RunState<'t> {
    let slice = if cfg.shared && cfg.mdtest.is_none() {
        cfg.rank
    } else {
        super::config::Rank::default()
    };
    let ramp_ns = job.job.ramp_ms * 1_000_000;
    RunState::new(
        Backends::new(tree, job.classes.clone(), cfg.open),
        job.workloads.len(),
        slice,
        (ramp_ns, ramp_ns + job.job.duration_ms * 1_000_000),
    )
}
