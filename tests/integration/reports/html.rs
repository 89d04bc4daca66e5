//! The HTML report of every fixture: its headings, charts and series (`tier`: a run with a
//! cache tier, whose section and charts come first).

use super::scanner::check_page;
use super::{CURVE, EXCHANGE, STEADY, STEPS, expected, render_report};
use crate::harness::scratch;

#[test]
fn html_report_of_a_plain_run() {
    let dir = scratch();
    for name in ["plain", "plain-b", "tier"] {
        let (_, html) = render_report(dir.path(), name);
        check_page(&format!("report of {name}.json"), &html, expected(name));
    }
}

#[test]
fn html_report_of_cycled_steps_with_repetitions() {
    let dir = scratch();
    let (_, html) = render_report(dir.path(), "steps");
    check_page("report of steps.json", &html, &STEPS);
}

#[test]
fn html_report_of_a_rate_curve() {
    let dir = scratch();
    let (_, html) = render_report(dir.path(), "curve");
    check_page("report of curve.json", &html, &CURVE);
}

#[test]
fn html_report_of_an_exchange_validation() {
    let dir = scratch();
    let (_, html) = render_report(dir.path(), "exchange");
    check_page("report of exchange.json", &html, &EXCHANGE);
    assert!(
        html.contains("PASS"),
        "report of exchange.json: no PASS verdict"
    );
}

#[test]
fn html_report_of_a_run_until_steady_state() {
    let dir = scratch();
    let (_, html) = render_report(dir.path(), "steady");
    check_page("report of steady.json", &html, &STEADY);
}
