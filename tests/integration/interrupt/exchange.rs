//! `storlab exchange` stopped during database initialisation, thread tuning and the test:
//! no verdict for a validation that did not run to its end.

use super::{Running, expect, has_record, interrupted, manifest, phases, s, strs};
use crate::harness::{array_at, at, scratch, u64_at};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// `storlab exchange` arguments: one database of `mailbox_size` × 100 mailboxes × 1% in `dir`,
/// lenient latency limits, results to `results`.
fn exchange_args(dir: &Path, mailbox_size: &str, results: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "exchange",
        "--mailboxes",
        "100",
        "--mailbox-size",
        mailbox_size,
        "--capacity",
        "1%",
        "--databases",
        "1",
        "--db-path",
        s(dir),
        "--db-read-latency",
        "500ms",
        "--log-write-latency",
        "500ms",
        "--max-latency",
        "5s",
        "-q",
        "-o",
        s(results),
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    a.extend(extra.iter().map(|x| x.to_string()));
    a
}

#[test]
fn sigint_during_exchange_database_initialisation() {
    let dir = scratch();
    let results = dir.path().join("x.json");
    // One database of 512 MiB: several seconds to initialise.
    let args = exchange_args(dir.path(), "512MiB", &results, &["--duration", "30s"]);
    let manifest_path = dir.path().join("storlab-db1.edb.storlab.json");
    let mut run = Running::start(dir.path(), &strs(&args));
    run.wait_until("initialisation to start", || {
        manifest(&manifest_path).is_some()
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(
        &run,
        status,
        &results,
        "SIGINT",
        &["database initialisation"],
    );
    assert_eq!(
        phases(&v),
        expect(&[
            ("initialise", "interrupted"),
            ("ramp", "not_started"),
            ("measure", "not_started"),
        ])
    );
    assert!(v.get("verdict").is_none(), "an interrupted run was judged");
    let m = manifest(&manifest_path).unwrap();
    assert_eq!(at(&m, "/complete"), &Value::Bool(false));
}

#[test]
fn sigint_during_the_exchange_test() {
    let dir = scratch();
    let results = dir.path().join("x.json");
    let ndjson = dir.path().join("x.ndjson");
    let args = exchange_args(
        dir.path(),
        "32MiB",
        &results,
        &["--threads", "1", "--duration", "30s", "--ramp", "1s"],
    );
    let mut run = Running::start(dir.path(), &strs(&args));
    run.wait_until("measurement", || {
        has_record(&ndjson, |r| r["phase"] == "measure")
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(&run, status, &results, "SIGINT", &["the test", "measure"]);
    assert_eq!(
        phases(&v),
        expect(&[
            ("initialise", "completed"),
            ("ramp", "completed"),
            ("measure", "interrupted"),
        ])
    );
    assert!(v.get("verdict").is_none(), "an interrupted run was judged");
    assert!(u64_at(&v, "/measured_ms") > 0);
    assert!(!array_at(&v, "/exchange/databases").is_empty());
}

#[test]
fn sigint_during_exchange_thread_tuning() {
    let dir = scratch();
    let results = dir.path().join("x.json");
    let ndjson = dir.path().join("x.ndjson");
    // A 60 s test: each tuning trial lasts 10 s.
    let args = exchange_args(
        dir.path(),
        "32MiB",
        &results,
        &["--threads", "auto", "--duration", "60s", "--ramp", "1s"],
    );
    let mut run = Running::start(dir.path(), &strs(&args));
    run.wait_until("the first trial's measurement", || {
        has_record(&ndjson, |r| r["phase"] == "measure")
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(
        &run,
        status,
        &results,
        "SIGINT",
        &["thread tuning", "measure"],
    );
    assert_eq!(
        phases(&v),
        expect(&[
            ("initialise", "completed"),
            ("threads", "interrupted"),
            ("ramp", "not_started"),
            ("measure", "not_started"),
        ])
    );
    assert!(v.get("verdict").is_none(), "an interrupted run was judged");
    let trials = array_at(&v, "/exchange/thread_trials");
    assert_eq!(trials.len(), 1, "{trials:?}");
}
