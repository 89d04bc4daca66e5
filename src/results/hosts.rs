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
}
