//! The database validation's own part of the views ([`crate::report::view::View`]): its lines of the
//! console summary, its section of the HTML report, and its part of a comparison of runs.

use crate::report::compare::Comparison;
use crate::report::view::View;
use crate::results::RunResult;
use maud::{Markup, html};

mod compare;
mod console;
mod html;
mod tables;

/// The database validation's view.
pub(crate) struct DatabaseView;

impl View for DatabaseView {
    fn console(&self, r: &RunResult, out: &mut String) {
        if let Some(d) = &r.database {
            console::section(out, d);
        }
    }

    fn setup(&self, r: &RunResult) -> Vec<(&'static str, String)> {
        let d = r.database.as_ref();
        vec![
            (
                "database engine",
                d.map(|d| d.engine.clone()).unwrap_or_default(),
            ),
            (
                "target transactions/s",
                d.map(|d| crate::units::format_number(d.target_tps))
                    .unwrap_or_default(),
            ),
        ]
    }

    fn compare(&self, runs: &[(String, RunResult)], noise_pct: f64, c: &mut Comparison) {
        compare::tables(runs, noise_pct, c);
    }

    fn html(&self, r: &RunResult) -> Markup {
        match &r.database {
            Some(d) => html::database_section(d),
            None => html! {},
        }
    }
}
