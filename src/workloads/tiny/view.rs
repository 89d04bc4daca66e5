//! The tiny workload's own part of the views: a line of the console summary, a section of the
//! HTML report and a row of a comparison of runs, each saying how many blocks were read back
//! (its rule's measured value, as the results file holds it). Nothing outside this folder
//! names it.

use crate::report::view::View;
use crate::results::RunResult;
use crate::units::format_count;
use maud::{Markup, html};
use std::fmt::Write as _;

/// Its rule: every block read back.
pub(super) const RULE: &str = "blocks read back";

/// The tiny workload's view.
pub(crate) struct TinyView;

/// The blocks read back of a tiny run (`None`: not a tiny run).
fn read_back(r: &RunResult) -> Option<u64> {
    let rules = &r.verdict.as_ref()?.rules;
    let rule = rules.iter().find(|x| x.rule == RULE)?;
    Some(rule.measured as u64)
}

impl View for TinyView {
    fn console(&self, r: &RunResult, out: &mut String) {
        if let Some(n) = read_back(r) {
            let _ = writeln!(out, "\ntiny       {} blocks read back", format_count(n));
        }
    }

    fn html(&self, r: &RunResult) -> Markup {
        match read_back(r) {
            Some(n) => html! {
                h2 { "Tiny" }
                p { (format_count(n)) " blocks read back" }
            },
            None => html! {},
        }
    }

    fn setup(&self, r: &RunResult) -> Vec<(&'static str, String)> {
        vec![(
            "tiny blocks read back",
            read_back(r).map(format_count).unwrap_or_default(),
        )]
    }
}
