//! Sequences stopped in the middle: a step of a `[cycle]`, a repetition, the pause between
//! repetitions, a rate-curve level.

use super::{assert_phases, has_record, interrupted, label, records, start_job, step};
use crate::harness::{array_at, at, scratch, str_at, u64_at};
use serde_json::Value;
use std::time::Duration;

#[test]
fn sigint_in_the_middle_step_of_a_cycle() {
    let dir = scratch();
    let (mut run, results, ndjson) = start_job(
        dir.path(),
        r#"duration = "3s"
interval = "200ms"
ramp = "0s"

[cycle]
block_size = ["4k", "8k", "16k"]"#,
        "c",
    );
    let status = run.stop_after(
        "step 1",
        || has_record(&ndjson, |r| step(r) == Some(1)),
        Duration::from_millis(300),
        "INT",
    );
    let v = interrupted(&run, status, &results, "SIGINT", &["step 1", "measure"]);
    assert_phases(
        &v,
        &[
            ("prepare", "completed"),
            ("step 0", "completed"),
            ("step 1", "interrupted"),
            ("step 2", "not_started"),
        ],
    );
    let steps = array_at(&v, "/steps");
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert_eq!(at(&steps[0], "/interrupted"), &Value::Bool(false));
    assert_eq!(at(&steps[1], "/interrupted"), &Value::Bool(true));
    assert!(u64_at(&steps[1], "/measured_ms") > 0);
    assert!(u64_at(&steps[1], "/totals/read/ops") > 0);
    assert_eq!(records(&ndjson).len(), array_at(&v, "/timeseries").len());
}

#[test]
fn sigint_during_a_repetition() {
    let dir = scratch();
    let (mut run, results, ndjson) = start_job(
        dir.path(),
        r#"duration = "2s"
interval = "200ms"
ramp = "0s"
repeat = 3

[cycle]
block_size = ["4k", "8k"]"#,
        "rep",
    );
    let status = run.stop_after(
        "rep 2 of step 0",
        || has_record(&ndjson, |r| step(r) == Some(0) && label(r) == "rep 2"),
        Duration::from_millis(300),
        "INT",
    );
    let v = interrupted(
        &run,
        status,
        &results,
        "SIGINT",
        &["step 0 rep 2", "measure"],
    );
    assert_phases(
        &v,
        &[
            ("prepare", "completed"),
            ("step 0 rep 1", "completed"),
            ("step 0 rep 2", "interrupted"),
            ("step 0 rep 3", "not_started"),
            ("step 1", "not_started"),
        ],
    );
    let steps = array_at(&v, "/steps");
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(at(&steps[0], "/interrupted"), &Value::Bool(true));
    assert_eq!(array_at(&steps[0], "/repetitions/runs").len(), 2);
}

#[test]
fn sigint_during_the_pause_between_repetitions() {
    let dir = scratch();
    let (mut run, results, ndjson) = start_job(
        dir.path(),
        r#"duration = "1s"
interval = "200ms"
ramp = "0s"
repeat = 2
pause = "30s""#,
        "pause",
    );
    // Rep 1 has ended once its last interval (ending at 1 s) is written.
    let status = run.stop_after(
        "the end of rep 1",
        || {
            has_record(&ndjson, |r| {
                label(r) == "rep 1" && r["t_end_ms"].as_u64().unwrap_or(0) >= 1000
            })
        },
        Duration::from_millis(500),
        "INT",
    );
    let v = interrupted(&run, status, &results, "SIGINT", &["pause", "step 0 rep 2"]);
    assert_phases(
        &v,
        &[
            ("prepare", "completed"),
            ("step 0 rep 1", "completed"),
            ("step 0 rep 2", "not_started"),
        ],
    );
    let steps = array_at(&v, "/steps");
    assert_eq!(steps.len(), 1);
    assert_eq!(at(&steps[0], "/interrupted"), &Value::Bool(true));
    assert!(u64_at(&steps[0], "/measured_ms") >= 900);
}

#[test]
fn sigint_during_a_rate_curve_level() {
    let dir = scratch();
    let (mut run, results, ndjson) = start_job(
        dir.path(),
        r#"duration = "2s"
interval = "200ms"
ramp = "0s"
curve = [25, 50, 75]"#,
        "curve",
    );
    let status = run.stop_after(
        "the 50% level",
        || has_record(&ndjson, |r| label(r) == "curve 50%"),
        Duration::from_millis(300),
        "INT",
    );
    let v = interrupted(&run, status, &results, "SIGINT", &["step 2", "measure"]);
    assert_phases(
        &v,
        &[
            ("prepare", "completed"),
            ("step 0", "completed"),
            ("step 1", "completed"),
            ("step 2", "interrupted"),
            ("step 3", "not_started"),
        ],
    );
    let steps = array_at(&v, "/steps");
    let kinds: Vec<&str> = steps.iter().map(|s| str_at(s, "/kind")).collect();
    assert_eq!(kinds, ["curve-max", "curve-level", "curve-level"]);
    let cut: Vec<bool> = steps
        .iter()
        .map(|s| at(s, "/interrupted").as_bool().unwrap())
        .collect();
    assert_eq!(cut, [false, false, true]);
}
