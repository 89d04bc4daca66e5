//! The hosts of a run over many hosts: one entry per rank, beside the merged figures of the
//! whole run (`classes`, `totals` and `timeseries` of the results file are every rank's,
//! merged exactly).

use crate::stats::host::CpuPercent;
use crate::stats::summary::ClassSummary;
use serde::{Deserialize, Serialize};

/// One rank of a run over many hosts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostResult {
    /// Its rank (0: the root, which wrote this file).
    pub rank: usize,
    /// Its host name.
    pub host: String,
    /// Whether its results reached the root.
    pub present: bool,
    /// Its own results file, on its own host (the journal of its part of the run).
    pub results_path: String,
    /// Its measured time, ms.
    pub measured_ms: u64,
    /// Its own totals.
    pub totals: ClassSummary,
    /// Its CPU use over the measured phase.
    pub host_cpu: CpuPercent,
    /// Its verdict (`None`: its run judged nothing).
    pub pass: Option<bool>,
    /// The rules it failed.
    pub failed_rules: Vec<String>,
    /// Why it stopped early, or why its results never arrived (`None`: it ran to the end).
    pub interrupted: Option<String>,
    /// Its monotonic clock minus rank 0's, ns, as measured before the start.
    pub clock_offset_ns: i64,
    /// The offset is within this of the truth, ns (half the round trip it was measured in).
    pub clock_uncertainty_ns: u64,
    /// The offset measured again during the run, every 60 intervals (added in 1.8; empty: the
    /// run was shorter, or the rank did not answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_checks: Vec<ClockCheck>,
}

/// A rank's clock measured again during a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockCheck {
    /// After this interval (0-based) of the run.
    pub interval: u64,
    /// Its monotonic clock minus rank 0's, ns.
    pub offset_ns: i64,
    /// The offset is within this of the truth, ns.
    pub uncertainty_ns: u64,
}

impl HostResult {
    /// How far its clock moved against rank 0's during the run, ns: the largest difference
    /// between a check's offset and the offset measured before the start (0: no checks).
    pub fn clock_drift_ns(&self) -> u64 {
        (self.clock_checks.iter())
            .map(|c| c.offset_ns.abs_diff(self.clock_offset_ns))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::{ClockCheck, HostResult};

    #[test]
    fn the_drift_is_the_largest_move_of_the_offset_from_the_one_at_the_start() {
        let check = |interval, offset_ns| ClockCheck {
            interval,
            offset_ns,
            uncertainty_ns: 10,
        };
        let mut h = HostResult {
            clock_offset_ns: -1_000,
            ..HostResult::default()
        };
        assert_eq!(h.clock_drift_ns(), 0);
        h.clock_checks = vec![check(59, -1_500), check(119, 2_000), check(179, 0)];
        assert_eq!(h.clock_drift_ns(), 3_000);
    }
}
