//! The Exchange validation's own part of the views ([`crate::report::view::View`]): its lines
//! of the console summary, the note under the verdict and the next step after the quick
//! check, and its sections of the HTML report.

use crate::report::view::View;
use crate::results::RunResult;
use maud::{Markup, html};

mod console;
mod html;
mod tables;

/// The Exchange validation's view.
pub(crate) struct ExchangeView;

impl View for ExchangeView {
    fn console(&self, r: &RunResult, out: &mut String) {
        if let Some(x) = &r.exchange {
            console::section(out, r, x);
        }
    }

    fn verdict_note(&self, r: &RunResult) -> Option<String> {
        console::target_note(r, r.exchange.as_ref()?)
    }

    fn next_step(&self, r: &RunResult) -> Option<String> {
        (r.exchange.is_some() && console::is_quick_check(r)).then(console::quick_check_next_step)
    }

    fn html(&self, r: &RunResult) -> Markup {
        match &r.exchange {
            Some(x) => html::exchange_section(r, x),
            None => html! {},
        }
    }
}
