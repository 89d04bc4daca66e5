//! The hosts of a run over many hosts: one entry per rank, beside the merged figures of the
//! whole run (`classes`, `totals` and `timeseries` of the results file are every rank's,
//! merged exactly).

use super::DeviceResult;
#[cfg(any(feature = "mpi", test))]
use super::RunResult;
use crate::stats::host::CpuPercent;
use crate::stats::summary::ClassSummary;
#[cfg(any(feature = "mpi", test))]
use crate::stats::timeseries::{IntervalPhase, IntervalRecord};
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
    /// Its verdict was INCONCLUSIVE: every rule it failed, the host's delays may have failed
    /// (schema 1.18).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inconclusive: bool,
    /// Its verdict was NOT MEASURED: no rule failed, but some had too few samples to judge
    /// (schema 1.19).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_measured: bool,
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
    /// Its own time series, in brief (added in 1.8; its results file has the whole).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeseries: Vec<HostInterval>,
    /// Its own block devices over the measured phase (added in 1.8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceResult>,
}

/// One interval of a rank's own time series, in brief.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostInterval {
    /// Interval number from the start of the run (0-based): the same interval of every rank.
    pub index: u64,
    /// Whether it was in the ramp (not counted in totals).
    pub ramp: bool,
    /// End of the interval, ms since the run's I/O started.
    pub t_end_ms: u64,
    /// Reads per second.
    pub read_iops: f64,
    /// Writes per second.
    pub write_iops: f64,
    /// 99th percentile read latency, ns (0: no reads).
    pub read_p99_ns: u64,
    /// 99th percentile write latency, ns (0: no writes).
    pub write_p99_ns: u64,
}

impl HostInterval {
    #[cfg(any(feature = "mpi", test))]
    /// The brief of `rec`.
    pub(crate) fn of(rec: &IntervalRecord) -> HostInterval {
        HostInterval {
            index: rec.index,
            ramp: rec.phase == IntervalPhase::Ramp,
            t_end_ms: rec.t_end_ms,
            read_iops: rec.total.read.iops,
            write_iops: rec.total.write.iops,
            read_p99_ns: rec.total.read.latency_p99_ns,
            write_p99_ns: rec.total.write.latency_p99_ns,
        }
    }
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
    #[cfg(any(feature = "mpi", test))]
    /// Rank `rank`'s entry: from its results, or why they never arrived (`Err`).
    pub(crate) fn of(
        rank: usize,
        host: &str,
        results_path: String,
        result: &Result<RunResult, String>,
    ) -> HostResult {
        match result {
            Ok(r) => HostResult {
                rank,
                host: host.into(),
                present: true,
                results_path,
                measured_ms: r.measured_ms,
                totals: r.totals.clone(),
                host_cpu: r.host_cpu,
                pass: r.verdict.as_ref().map(|v| v.passed()),
                failed_rules: (r.verdict.iter()).flat_map(|v| v.failed_rules()).collect(),
                inconclusive: r.verdict.as_ref().is_some_and(|v| v.inconclusive()),
                not_measured: r.verdict.as_ref().is_some_and(|v| v.not_measured()),
                interrupted: r.interrupted.reason().map(str::to_string),
                timeseries: (r.timeseries.within(super::INLINE_INTERVALS).iter())
                    .map(HostInterval::of)
                    .collect(),
                devices: r.devices.clone(),
                ..HostResult::default()
            },
            Err(why) => HostResult {
                rank,
                host: host.into(),
                present: false,
                results_path,
                interrupted: Some(why.clone()),
                ..HostResult::default()
            },
        }
    }

    /// How far its clock certainly moved against rank 0's during the run, ns: the largest
    /// difference between a check's offset and the offset measured before the start, less
    /// both their uncertainties (0: no checks, or every check within them).
    pub(crate) fn clock_drift_ns(&self) -> u64 {
        (self.clock_checks.iter())
            .map(|c| {
                let moved = c.offset_ns.abs_diff(self.clock_offset_ns);
                moved.saturating_sub(c.uncertainty_ns.saturating_add(self.clock_uncertainty_ns))
            })
            .max()
            .unwrap_or(0)
    }
}

/// The workloads' own sections of every rank's results (`ranks`, rank 0's first) merged into
/// `out`, the root's: a file-system workload's runs, operations and mdtest phases (see
/// `workloads::fs::section::merged`).
#[cfg(any(feature = "mpi", test))]
pub(crate) fn merge_sections(out: &mut RunResult, ranks: &[&RunResult]) {
    let fs: Vec<&crate::workloads::fs::section::FsResult> =
        ranks.iter().filter_map(|r| r.fs.as_ref()).collect();
    if fs.len() == ranks.len() {
        if let Some(m) = crate::workloads::fs::section::merged(&fs) {
            out.fs = Some(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ClockCheck, HostResult};

    #[test]
    fn the_drift_is_the_largest_move_of_the_offset_from_the_one_at_the_start_beyond_the_uncertainties()
     {
        let check = |interval, offset_ns| ClockCheck {
            interval,
            offset_ns,
            uncertainty_ns: 10,
        };
        let mut h = HostResult {
            clock_offset_ns: -1_000,
            clock_uncertainty_ns: 100,
            ..HostResult::default()
        };
        assert_eq!(h.clock_drift_ns(), 0);
        // Within the uncertainties (100 + 10 ns): no move established.
        h.clock_checks = vec![check(59, -1_050), check(119, -900)];
        assert_eq!(h.clock_drift_ns(), 0);
        h.clock_checks = vec![check(59, -1_500), check(119, 2_000), check(179, 0)];
        assert_eq!(h.clock_drift_ns(), 3_000 - 110);
    }
}
