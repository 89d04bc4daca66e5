//! The step-sequence part of a results file: one [`StepResult`] per step (with repetitions,
//! steady-state rounds or a rate-curve level), and preconditioning.

use crate::job::Job;
use crate::job::steps::{Param, apply};
use crate::stats::host::CpuPercent;
use crate::stats::summary::ClassSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What preconditioning did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreconditionResult {
    /// Full passes over every target.
    pub passes: u32,
    /// `sequential` or `random`.
    pub pattern: String,
    /// Write size, bytes.
    pub block_size_bytes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Write rate, MB/s (10^6 bytes/s).
    pub mb_per_s: f64,
    /// Whether every pass completed.
    pub complete: bool,
}

/// One measured run inside a step (a repetition, a steady-state round, a curve level).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunFigures {
    /// I/Os per second (reads and writes).
    pub iops: f64,
    /// MB/s (10^6 bytes/s).
    pub mb_per_s: f64,
    /// Mean latency, ns.
    pub latency_mean_ns: f64,
    /// Median latency, ns.
    pub latency_p50_ns: u64,
    /// 99th percentile latency, ns.
    pub latency_p99_ns: u64,
    /// Measured seconds.
    pub seconds: f64,
}

/// Spread of a step's repetitions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Repetitions {
    /// Each run.
    pub runs: Vec<RunFigures>,
    /// IOPS.
    pub iops: crate::stats::repetition::Spread,
    /// MB/s.
    pub mb_per_s: crate::stats::repetition::Spread,
    /// Mean latency, ns.
    pub latency_mean_ns: crate::stats::repetition::Spread,
    /// Median latency, ns.
    pub latency_p50_ns: crate::stats::repetition::Spread,
    /// 99th percentile latency, ns.
    pub latency_p99_ns: crate::stats::repetition::Spread,
    /// IOPS varied by more than 5% (coefficient of variation).
    pub high_variation: bool,
}

/// Steady-state rounds of a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SteadyResult {
    /// What the window judged (schema 1.22; absent: IOPS).
    #[serde(
        default,
        skip_serializing_if = "crate::job::steps::SteadyMetric::is_iops"
    )]
    pub metric: crate::job::steps::SteadyMetric,
    /// Each round's IOPS, in order.
    pub rounds_iops: Vec<f64>,
    /// Each round's mean completion latency (reads and writes), ns, in order (schema 1.22;
    /// absent in older files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds_latency_mean_ns: Vec<f64>,
    /// The 1-based round at which the window became steady; `None`: never.
    pub steady_at_round: Option<usize>,
    /// The check of the last window, of `metric`'s values.
    pub window: Option<crate::stats::steady::WindowCheck>,
    /// Rounds in the window.
    pub window_rounds: u32,
}

impl SteadyResult {
    /// Each round's value of what the window judged (`metric`).
    pub(crate) fn judged(&self) -> &[f64] {
        if self.metric.is_iops() {
            &self.rounds_iops
        } else {
            &self.rounds_latency_mean_ns
        }
    }

    /// What views add after "steady": nothing for IOPS, ` (mean latency)` otherwise.
    pub(crate) fn metric_note(&self) -> String {
        if self.metric.is_iops() {
            String::new()
        } else {
            format!(" ({})", self.metric.name())
        }
    }
}

/// What a step of a sequence is.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    /// A step of the job's cycles (run once, repeated, or in steady-state rounds).
    #[default]
    Step,
    /// A rate curve's closed-loop maximum.
    CurveMax,
    /// A rate curve's open-loop level.
    CurveLevel,
}

impl std::fmt::Display for StepKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StepKind::Step => "step",
            StepKind::CurveMax => "curve-max",
            StepKind::CurveLevel => "curve-level",
        })
    }
}

/// One step of a sequence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepResult {
    /// 0-based step index.
    pub index: usize,
    /// The parameter values that define it: block_size in bytes, read/random in percent,
    /// rate in IOPS per worker, counts as numbers.
    pub parameters: BTreeMap<String, f64>,
    /// The same, as a person reads them.
    pub label: String,
    /// What the step is.
    pub kind: StepKind,
    /// Rate curve: the level, percent of the closed-loop maximum.
    pub curve_level_pct: Option<f64>,
    /// Rate curve: the total open-loop rate, IOPS.
    pub target_iops: Option<f64>,
    /// Measured time, ms (every run of the step).
    pub measured_ms: u64,
    /// Every class together.
    pub totals: ClassSummary,
    /// Per class name.
    pub classes: BTreeMap<String, ClassSummary>,
    /// CPU use.
    pub host_cpu: CpuPercent,
    /// Machine CPU busy (user + system), percent of all CPUs.
    pub cpu_busy_pct: f64,
    /// I/Os per second per percent of CPU busy (Iometer's efficiency figure).
    pub ios_per_cpu_pct: f64,
    /// Repetitions (`repeat` > 1).
    pub repetitions: Option<Repetitions>,
    /// Steady state (`until_steady`).
    pub steady: Option<SteadyResult>,
    /// The step was cut short.
    pub interrupted: bool,
    /// What each cache tier did in this step (its last run's, with repetitions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_tiers: Vec<crate::stats::tier::TierResult>,
    /// Reduced data (`[data]`): the ratios asked and achieved in this step (its last run's,
    /// with repetitions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<super::data::DataResult>,
    /// Each worker of the step, its runs merged, in the order they ran (added in 1.18).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<super::WorkerResult>,
    /// Each CPU's use and the interrupt rate in this step, weighted over its runs (added in
    /// 1.18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpus: Option<crate::stats::host::cpus::PerCpu>,
}

impl StepResult {
    /// The job this step ran: `job` (the sequence's, as a results file holds it) with the
    /// step's parameters applied in the order of its cycles, a curve level's rate shared by
    /// its workers; without a sequence of its own.
    pub fn job(&self, job: &Job) -> Job {
        let mut j = job.clone();
        for c in &job.sequence.cycles {
            if let Some(&v) = self.parameters.get(c.parameter.name()) {
                apply(&mut j, c.parameter, v);
            }
        }
        if let (StepKind::CurveLevel, Some(total)) = (self.kind, self.target_iops) {
            let per_worker = total / j.workers.len().max(1) as f64;
            apply(&mut j, Param::Rate, per_worker);
        }
        j.sequence = Default::default();
        j
    }
}
