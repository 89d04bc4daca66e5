//! Database validations compared (`storlab compare`): the rates achieved and the log's time to
//! durable.

use crate::report::compare::{Comparison, Table, Unit, metric_row};
use crate::results::RunResult;

/// Database validations: the rates achieved and the log's time to durable, when every run is
/// one.
pub(super) fn tables(runs: &[(String, RunResult)], noise_pct: f64, c: &mut Comparison) {
    let dbs: Option<Vec<&crate::workloads::database::section::DatabaseResult>> =
        runs.iter().map(|r| r.1.database.as_ref()).collect();
    let Some(dbs) = dbs else {
        if runs.iter().any(|r| r.1.database.is_some()) {
            c.notes
                .push("not every run is a database validation: their rates not compared".into());
        }
        return;
    };
    let row = |name: &str,
               unit: Unit,
               f: fn(&crate::workloads::database::section::DatabaseResult) -> f64| {
        let values: Vec<f64> = dbs.iter().map(|d| f(d)).collect();
        metric_row(name.into(), unit, &values, noise_pct)
    };
    let log = |d: &crate::workloads::database::section::DatabaseResult| {
        d.files
            .iter()
            .find(|f| f.role == "log")
            .map_or(0.0, |f| f.log_durable_mean_ns)
    };
    c.tables.push(Table {
        title: "database".into(),
        rows: vec![
            row("transactions/s achieved", Unit::Iops, |d| d.achieved_tps),
            row("data-file IOPS achieved", Unit::Iops, |d| d.achieved_iops),
            row("log write until durable, mean", Unit::Ns, log),
        ],
    });
}
