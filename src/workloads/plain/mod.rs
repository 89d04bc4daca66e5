//! The plain job: a job file, a preset, a converted fio file or a one-line job, run once or as
//! a sequence of steps (`steps`: cycles, fio's stonewall groups, repetitions, rate curves,
//! steady state, preconditioning). Its workers are driven by their own access entries
//! (`run::FromAccess`); its verdict is the run's integrity (I/O errors, verification).

pub(crate) mod steps;
#[cfg(test)]
mod tests;

use crate::job::Job;
use crate::results::RunResult;
use crate::results::description::Description;
use crate::run::{Execute, FromAccess, RunOptions, Workload};
use anyhow::Result;

/// A plain job ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Plain {
    /// The resolved job.
    pub job: Job,
}

impl Workload for Plain {
    fn kind(&self) -> &'static str {
        "run"
    }

    fn describe(&self) -> Description {
        Description::of_job(&self.job)
    }

    fn jobs(&self) -> Vec<Job> {
        vec![self.job.clone()]
    }

    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> Result<RunResult> {
        if self.job.sequence.is_sequence() {
            steps::run(&self.job, opts, exec)
        } else {
            exec.execute(&self.job, opts, &FromAccess)
        }
    }
}
