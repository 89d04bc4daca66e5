//! The calibration's own part of the views ([`crate::report::view::View`]): its lines of the
//! console summary and its section of the HTML report.

use crate::report::view::View;
use crate::results::RunResult;
use maud::{Markup, html};

mod console;
mod html;

/// The calibration's view.
pub(crate) struct CalibrateView;

impl View for CalibrateView {
    fn console(&self, r: &RunResult, out: &mut String) {
        if let Some(c) = &r.calibrate {
            console::section(out, c);
        }
    }

    fn html(&self, r: &RunResult) -> Markup {
        match &r.calibrate {
            Some(c) => html::calibrate_section(c),
            None => html! {},
        }
    }
}
