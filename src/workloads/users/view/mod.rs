//! The simulated users's own part of the views ([`crate::report::view::View`]): its lines of the
//! console summary, its section of the HTML report, and its part of a comparison of runs.

use crate::report::compare::Comparison;
use crate::report::view::View;
use crate::results::RunResult;
use crate::units::format_size;
use maud::{Markup, html};

mod compare;
mod console;
mod html;
mod tables;

/// The simulated users's view.
pub(crate) struct UsersView;

impl View for UsersView {
    fn console(&self, r: &RunResult, out: &mut String) {
        if let Some(u) = &r.users {
            console::section(out, u);
        }
    }

    fn setup(&self, r: &RunResult) -> Vec<(&'static str, String)> {
        use compare::users_setup as setup;
        vec![
            ("simulated users", setup(r, |u| u.users.to_string())),
            ("profile", setup(r, |u| u.profile.clone())),
            ("Exchange version", setup(r, |u| u.version.clone())),
            ("mailbox size", setup(r, |u| format_size(u.mailbox_bytes))),
            (
                "cache per mailbox",
                setup(r, |u| format_size(u.cache_per_mailbox_bytes)),
            ),
            ("day compressed", setup(r, |u| format!("{}×", u.compress))),
        ]
    }

    fn compare(&self, runs: &[(String, RunResult)], noise_pct: f64, c: &mut Comparison) {
        compare::tables(runs, noise_pct, c);
    }

    fn html(&self, r: &RunResult) -> Markup {
        match &r.users {
            Some(u) => html::users_section(u),
            None => html! {},
        }
    }
}
