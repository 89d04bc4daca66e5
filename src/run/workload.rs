//! The one interface every workload is run through. A workload (a room of `crate::workloads`)
//! knows its jobs, its description and how to judge what ran; the run knows how to run a job.

use super::{Execute, RunOptions};
use crate::job::Job;
use crate::results::RunResult;
use crate::results::description::Description;
use anyhow::Result;

/// A workload ready to run: resolved, validated, not started.
pub(crate) trait Workload {
    /// The prefix of its results file's default name, and the command that runs it: `run`,
    /// `exchange`, `users`.
    fn kind(&self) -> &'static str;
    /// What it will do, in the words its dry run prints, its results keep and every report
    /// shows ("what ran"): made from the same resolved jobs it runs.
    fn describe(&self) -> Description;
    /// The jobs whose targets it opens, in the order it first runs them (the dry run previews
    /// their targets; a run over many hosts checks them on every rank).
    fn jobs(&self) -> Vec<Job>;
    /// Things to say before it starts (a data set larger than the cache it models...).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// Its own figures for the live progress line, read each time the line is drawn
    /// (simulated users: tasks done and unfinished, Send Mail's 95th percentile).
    fn progress(&self) -> Option<Box<dyn Fn() -> String + Send>> {
        None
    }
    /// Runs it through `exec`, writing its results to `opts.results_path`.
    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> Result<RunResult>;
}
