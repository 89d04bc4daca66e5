//! Simulated-users runs compared (`storlab compare`): their setup, each task type's latency
//! and the tasks completed a second.

use crate::report::compare::{Comparison, Table, Unit, metric_row};
use crate::results::RunResult;
use crate::stats::histogram::LatencySummary;

/// A property of a simulated-users run's setup (empty for other runs).
pub(super) fn users_setup(
    r: &RunResult,
    f: impl Fn(&crate::workloads::users::section::UsersSetup) -> String,
) -> String {
    r.users.as_ref().map(|u| f(&u.setup)).unwrap_or_default()
}

/// Simulated-users runs: each task type's latency (from the time it was due) and the tasks
/// completed a second, for the task types every run has.
pub(super) fn tables(runs: &[(String, RunResult)], noise_pct: f64, c: &mut Comparison) {
    let users: Option<Vec<&crate::workloads::users::section::UsersResult>> =
        runs.iter().map(|r| r.1.users.as_ref()).collect();
    let Some(users) = users else {
        if runs.iter().any(|r| r.1.users.is_some()) {
            c.notes
                .push("not every run simulated users: their tasks not compared".into());
        }
        return;
    };
    let row =
        |name: String, unit: Unit, values: Vec<f64>| metric_row(name, unit, &values, noise_pct);
    type Metric = fn(&LatencySummary) -> f64;
    let metrics: [(&str, Metric); 3] = [
        ("p95", |l| l.p95 as f64),
        ("p99", |l| l.p99 as f64),
        ("mean", |l| l.mean),
    ];
    for (metric, f) in metrics {
        let rows = users[0]
            .tasks
            .iter()
            .filter_map(|t| {
                let values: Option<Vec<f64>> = users
                    .iter()
                    .map(|u| {
                        u.tasks
                            .iter()
                            .find(|x| x.task == t.task && x.completed > 0)
                            .map(|x| f(&x.latency))
                    })
                    .collect();
                Some(row(t.task.clone(), Unit::Ns, values?))
            })
            .collect();
        c.tables.push(Table {
            title: format!("users: task latency {metric}"),
            rows,
        });
    }
    let rate: Vec<f64> = runs
        .iter()
        .zip(&users)
        .map(|(r, u)| u.completed as f64 / (r.1.measured_ms.max(1) as f64 / 1e3))
        .collect();
    c.tables.push(Table {
        title: "users".into(),
        rows: vec![row("tasks completed a second".into(), Unit::Iops, rate)],
    });
}
