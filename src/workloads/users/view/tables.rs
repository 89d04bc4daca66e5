//! The simulated users' task table, shared by their console lines and their HTML section.

use crate::report::tables::{known_ns, summary_mean};
use crate::units::{format_count, format_known_ns};

/// Column headings of the simulated users' tasks table (console and HTML).
pub(super) const TASK_COLUMNS: [&str; 9] = [
    "task",
    "planned",
    "completed",
    "failed",
    "mean",
    "p50",
    "p95",
    "p99",
    "max",
];

/// The row of the tasks table, formatted (latency from the time each task was due).
pub(super) fn task_cells(t: &crate::workloads::users::section::TaskResult) -> [String; 9] {
    let l = &t.latency;
    [
        t.task.clone(),
        format_count(t.planned),
        format_count(t.completed),
        format_count(t.failed),
        format_known_ns(summary_mean(l)),
        format_known_ns(known_ns(l.p50)),
        format_known_ns(known_ns(l.p95)),
        format_known_ns(known_ns(l.p99)),
        format_known_ns(known_ns(l.max)),
    ]
}
