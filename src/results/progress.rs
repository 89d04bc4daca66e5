//! What a run tells whoever shows progress while its results are produced (the console's live
//! line, later a live dashboard): phases, preparation, each interval of the time series and
//! each finished step. Defined here, beside the results it carries, so that `run` calls it and
//! `report` implements it without either depending on the other.

use super::Phase;
use super::steps::StepResult;
use crate::stats::timeseries::{IntervalGrid, IntervalRecord};

/// What the run tells whoever shows progress. Every method has a silent default.
pub(crate) trait Observer {
    /// A phase starts.
    fn phase(&mut self, _phase: Phase) {}
    /// Preparation of `target` has written `done` of `total` bytes.
    fn prepare(&mut self, _target: &str, _done: u64, _total: u64) {}
    /// One interval of the time series is complete.
    fn interval(&mut self, _record: &IntervalRecord, _grid: &IntervalGrid) {}
    /// A step of a sequence has ended.
    fn step(&mut self, _step: &StepResult) {}
    /// The run is over (clear progress displays).
    fn finish(&mut self) {}
    /// A run of `job` starts (before its targets are prepared).
    fn job(&mut self, _job: &crate::job::Job) {}
    /// Worker `worker` (an index into the job's workers) finished interval `index` with
    /// `stats`; [`Observer::interval`] follows once every worker has.
    fn worker_interval(&mut self, _worker: usize, _index: u64, _stats: &crate::stats::StatsSet) {}
    /// The run has a rule on the rate of some classes (an Exchange validation's achieved
    /// transactional IOPS) that progress displays may follow while it goes.
    fn watch(&mut self, _watch: &RateWatch) {}
}

/// A verdict rule on the rate of some classes, as a progress display follows it while the run
/// goes: the rule's own name and threshold, so that "on target" there means the rule passes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RateWatch {
    /// The rule's name, as the verdict names it.
    pub rule: String,
    /// The rate asked for, IOPS.
    pub target_iops: f64,
    /// The least rate that passes the rule (its threshold), IOPS.
    pub pass_at_iops: f64,
    /// The classes whose reads and writes count.
    pub classes: Vec<String>,
}

impl RateWatch {
    /// The rate of the watched classes in interval `r`: their reads and writes a second.
    pub(crate) fn iops_in(&self, r: &IntervalRecord) -> f64 {
        (self.classes.iter())
            .filter_map(|c| r.classes.get(c))
            .map(|c| c.read.iops + c.write.iops)
            .sum()
    }
}

/// A silent observer.
#[cfg(test)]
pub(crate) struct Quiet;
#[cfg(test)]
impl Observer for Quiet {}
