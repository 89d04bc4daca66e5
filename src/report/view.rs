//! The seam through which a workload renders its own part of the views: each room's
//! `view.rs` implements [`View`] for the results it leaves (its section of the results file),
//! with the primitives of this module's siblings (the console's labelled lines, the HTML
//! report's tables, the charts); the console summary, the HTML report and the comparison of
//! runs call every installed view in the order the rooms are registered, and know no room.
//!
//! The rooms are above this layer (they run), so the report cannot name them: the command
//! line installs them once ([`install`]), from the rooms' registry.

use crate::report::compare::Comparison;
use crate::results::RunResult;
use maud::Markup;
use std::sync::OnceLock;

/// A room's own part of the views of a results file. Each method renders nothing for a
/// results file that does not hold the room's section.
pub(crate) trait View: Sync {
    /// Its lines of the console summary (after the common ones, before the warnings).
    fn console(&self, r: &RunResult, out: &mut String);

    /// A line under the verdict's rules, saying how a rule's limit comes about.
    fn verdict_note(&self, r: &RunResult) -> Option<String> {
        let _ = r;
        None
    }

    /// What to do next, after the run (a quick check: how to test one's own storage).
    fn next_step(&self, r: &RunResult) -> Option<String> {
        let _ = r;
        None
    }

    /// Its sections of the HTML report (after the verdict, before the cache tiers).
    fn html(&self, r: &RunResult) -> Markup;

    /// Its rows of the setup table of a comparison of runs (`storlab compare`), for run `r`:
    /// the same labels for every run, a value empty when `r` does not hold its section.
    fn setup(&self, r: &RunResult) -> Vec<(&'static str, String)> {
        let _ = r;
        Vec::new()
    }

    /// Its tables of a comparison of `runs` (each run's label and results), each metric's
    /// difference judged against `noise_pct`; or a note when only some runs hold its
    /// section.
    fn compare(&self, runs: &[(String, RunResult)], noise_pct: f64, c: &mut Comparison) {
        let _ = (runs, noise_pct, c);
    }
}

static VIEWS: OnceLock<Vec<&'static dyn View>> = OnceLock::new();

/// Installs the rooms' views (the command line does, before it renders anything; the first
/// call wins).
pub(crate) fn install(views: Vec<&'static dyn View>) {
    let _ = VIEWS.set(views);
}

/// The installed views (none before [`install`]: a view renders only the common parts).
pub(crate) fn installed() -> &'static [&'static dyn View] {
    VIEWS.get().map_or(&[], Vec::as_slice)
}
