//! `storlab compare`: the comparison page and console, steps compared chart by chart, and the
//! regression check.

use super::scanner::check_page;
use super::{CMP_LABELS, COMPARISON, STEPS_COMPARISON, compare};
use crate::harness::scratch;

#[test]
fn comparison_page_and_console() {
    let dir = scratch();
    let out = compare(dir.path(), &["plain", "plain-b"], &CMP_LABELS, true, &[]);
    out.expect_ok();
    let html = std::fs::read_to_string(dir.path().join("cmp.html"))
        .unwrap_or_else(|e| panic!("no cmp.html: {e}"));
    check_page("comparison plain vs plain-b", &html, &COMPARISON);

    // The console: the same comparison, labelled, one line per metric.
    let out = compare(dir.path(), &["plain", "plain-b"], &CMP_LABELS, false, &[]);
    out.expect_ok();
    for label in CMP_LABELS {
        assert!(
            out.stdout.contains(label),
            "console comparison does not name {label}:\n{}",
            out.stdout
        );
    }
    for metric in ["IOPS", "MB/s", "p99"] {
        assert!(
            out.stdout.contains(metric),
            "console comparison has no {metric}:\n{}",
            out.stdout
        );
    }
    // Without labels the files' names label the runs.
    let out = compare(dir.path(), &["plain", "plain-b"], &[], false, &[]);
    out.expect_ok();
    for name in ["plain", "plain-b"] {
        assert!(
            out.stdout.contains(name),
            "console comparison without --label does not name {name}:\n{}",
            out.stdout
        );
    }
}

#[test]
fn comparison_of_steps_charts_every_step() {
    let dir = scratch();
    let out = compare(dir.path(), &["steps", "steps"], &["a", "b"], true, &[]);
    out.expect_ok();
    let html = std::fs::read_to_string(dir.path().join("cmp.html"))
        .unwrap_or_else(|e| panic!("no cmp.html: {e}"));
    check_page("comparison steps vs steps", &html, &STEPS_COMPARISON);
    for step in ["block_size=4 KiB", "block_size=16 KiB"] {
        assert!(
            out.stdout.contains(step),
            "console comparison of steps has no row for {step}:\n{}",
            out.stdout
        );
    }
}

#[test]
fn a_run_compared_with_itself_has_no_regression() {
    let dir = scratch();
    let out = compare(
        dir.path(),
        &["plain", "plain"],
        &["one", "two"],
        false,
        &["--fail-on-regression", "1%"],
    );
    out.expect_ok();
}

#[test]
fn a_slower_run_fails_on_regression_naming_each_throughput() {
    let dir = scratch();
    // plain-b (queue depth 8) is the baseline; plain (queue depth 1) has about a third of its
    // throughput, and lower latency (which is no regression).
    let out = compare(
        dir.path(),
        &["plain-b", "plain"],
        &["qd8", "qd1"],
        false,
        &["--fail-on-regression", "10%"],
    );
    // A regression is a failed verdict: exit 3.
    out.expect_code(3);
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains(" → "))
        .map(|l| l.split(':').next().unwrap_or_default())
        .collect();
    assert_eq!(
        lines,
        [
            "totals read IOPS",
            "totals read MB/s",
            "totals write IOPS",
            "totals write MB/s"
        ],
        "the regressions named on stderr:\n{}",
        out.stderr
    );
}
