//! Fake runs, for the tests of sequences and of the Exchange validation: an [`Execute`] that
//! makes up each run's results from its job (every class at its intended rate, with the
//! latency a test chooses), so bracketing, bisection, confirmation, back-off, repetitions and
//! interruptions are tested exactly and without I/O.

use super::{Execute, RunOptions, Signals, Sources};
use crate::job::Job;
use crate::results::progress::{Observer, Quiet};
use crate::results::{self, Interrupted, Phase, PhaseRecord, PhaseState, RunResult};
use crate::stats::summary::ClassSummary;
use crate::stats::{Dir, StatsSet};
use anyhow::Result;

/// IOPS a closed-loop worker is taken to reach in a made-up run.
const CLOSED_LOOP_IOPS: f64 = 1000.0;

/// What a fake run of a job showed: the latency of its reads and writes, ns, the share of
/// its intended rate it achieved, and whether it was cut short.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Made {
    pub read_ns: u64,
    pub write_ns: u64,
    pub achieved: f64,
    pub interrupted: bool,
}

impl Default for Made {
    fn default() -> Self {
        Made {
            read_ns: 1_000_000,
            write_ns: 1_000_000,
            achieved: 1.0,
            interrupted: false,
        }
    }
}

/// Runs nothing: answers each job with the results `respond` makes up for it (written to the
/// results path, as a real run does), and keeps every job it was given.
pub(crate) struct Fake<F> {
    pub signals: Signals,
    pub respond: F,
    pub jobs: Vec<(Job, RunOptions)>,
    quiet: Quiet,
}

impl<F: FnMut(&Job, &Signals) -> Made> Fake<F> {
    pub(crate) fn new(respond: F) -> Self {
        Fake {
            signals: Signals::none(),
            respond,
            jobs: Vec::new(),
            quiet: Quiet,
        }
    }
}

impl<F: FnMut(&Job, &Signals) -> Made> Execute for Fake<F> {
    fn execute(&mut self, job: &Job, opts: &RunOptions, _: &dyn Sources) -> Result<RunResult> {
        let made = (self.respond)(job, &self.signals);
        let mut r = made_up(job, made);
        // As a real run does: the results keep the description the options carry.
        r.description = opts.description.clone();
        self.jobs.push((job.clone(), opts.clone()));
        results::file::save(&opts.results_path, &r)?;
        Ok(r)
    }

    fn signals(&self) -> &Signals {
        &self.signals
    }

    fn observer(&mut self) -> &mut dyn Observer {
        &mut self.quiet
    }
}

/// Intended I/Os per second of each class of `job` (a closed-loop worker counts as
/// [`CLOSED_LOOP_IOPS`]), split between reads and writes.
pub(crate) fn class_rates(job: &Job) -> Vec<[f64; 2]> {
    let mut rates = vec![[0.0; 2]; job.classes.len()];
    for w in &job.workers {
        let iops = w.rate.map_or(CLOSED_LOOP_IOPS, |r| r.iops);
        let weights: u32 = w.access.iter().map(|a| a.weight).sum();
        for a in &w.access {
            let share = iops * a.weight as f64 / weights.max(1) as f64;
            rates[a.class][0] += share * a.read_pct / 100.0;
            rates[a.class][1] += share * (100.0 - a.read_pct) / 100.0;
        }
    }
    rates
}

/// The results of a run of `job` in which every class ran at its intended rate (times
/// `made.achieved`) for the whole duration with the latencies of `made`.
pub(crate) fn made_up(job: &Job, made: Made) -> RunResult {
    let seconds = job.duration_ms as f64 / 1e3;
    let mut stats = StatsSet::new(job.classes.len());
    for (class, [reads, writes]) in class_rates(job).into_iter().enumerate() {
        for (dir, rate, ns) in [
            (Dir::Read, reads, made.read_ns),
            (Dir::Write, writes, made.write_ns),
        ] {
            for _ in 0..(rate * made.achieved * seconds).round() as u64 {
                stats.record(class, dir, 4096, ns, None);
            }
        }
    }
    let classes: Vec<&str> = job.classes.iter().map(String::as_str).collect();
    let mut r: RunResult =
        serde_json::from_value(results::sample_json("io_uring", &classes)).expect("sample");
    r.job = job.clone();
    r.measured_ms = job.duration_ms;
    r.totals = ClassSummary::of(&stats.total(), seconds, true);
    for (name, c) in job.classes.iter().zip(&stats.classes) {
        let s = ClassSummary::of(c, seconds, true);
        r.classes.insert(
            name.clone(),
            results::ClassResult {
                read: s.read,
                write: s.write,
                flush: s.flush,
                write_durability: "none".into(),
                measured_ms: None,
                steps: None,
            },
        );
    }
    let state = PhaseState::of(!made.interrupted);
    r.phases = vec![
        PhaseRecord {
            name: Phase::Prepare,
            state: PhaseState::Completed,
            seconds: 0.0,
            cpu_s: None,
        },
        PhaseRecord {
            name: Phase::Measure,
            state,
            seconds,
            cpu_s: None,
        },
    ];
    if made.interrupted {
        r.interrupted = Interrupted::Yes("interrupted by SIGINT (Ctrl-C) during measure".into());
    }
    r
}
