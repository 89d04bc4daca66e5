//! `storlab exchange` stopped during database initialisation, thread tuning and the test:
//! no verdict for a validation that did not run to its end.

use super::{Running, assert_phases, has_record, interrupted, manifest};
use crate::harness::{ExchangeArgs, array_at, at, scratch, u64_at};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `storlab exchange` with one database of `mailbox_size` × 100 mailboxes × 1% in `dir`,
/// lenient latency limits and `extra` flags, started in `dir` with its results in `x.json`.
/// Returns the run, the results file and the time series beside it.
fn start_exchange(dir: &Path, mailbox_size: &str, extra: &[&str]) -> (Running, PathBuf, PathBuf) {
    let results = dir.join("x.json");
    let command = ExchangeArgs::sized(100, mailbox_size, "1%", 1)
        .db_path(dir)
        .lenient()
        .results(&results)
        .flags(extra);
    let run = Running::start(dir, command.args());
    (run, results.clone(), results.with_extension("ndjson"))
}

#[test]
fn sigint_during_exchange_database_initialisation() {
    let dir = scratch();
    // One database of 512 MiB: several seconds to initialise.
    let (mut run, results, _) = start_exchange(dir.path(), "512MiB", &["--duration", "30s"]);
    let manifest_path = dir.path().join("storlab-db1.edb.storlab.json");
    let status = run.stop_after(
        "initialisation to start",
        || manifest(&manifest_path).is_some(),
        Duration::from_millis(300),
        "INT",
    );
    let v = interrupted(
        &run,
        status,
        &results,
        "SIGINT",
        &["database initialisation"],
    );
    assert_phases(
        &v,
        &[
            ("initialise", "interrupted"),
            ("ramp", "not_started"),
            ("measure", "not_started"),
        ],
    );
    assert!(v.get("verdict").is_none(), "an interrupted run was judged");
    let m = manifest(&manifest_path).unwrap();
    assert_eq!(at(&m, "/complete"), &Value::Bool(false));
}

#[test]
fn sigint_during_the_exchange_test() {
    let dir = scratch();
    let (mut run, results, ndjson) = start_exchange(
        dir.path(),
        "32MiB",
        &["--threads", "1", "--duration", "30s", "--ramp", "1s"],
    );
    let status = run.stop_after(
        "measurement",
        || has_record(&ndjson, |r| r["phase"] == "measure"),
        Duration::from_millis(300),
        "INT",
    );
    let v = interrupted(&run, status, &results, "SIGINT", &["the test", "measure"]);
    assert_phases(
        &v,
        &[
            ("initialise", "completed"),
            ("ramp", "completed"),
            ("measure", "interrupted"),
        ],
    );
    assert!(v.get("verdict").is_none(), "an interrupted run was judged");
    assert!(u64_at(&v, "/measured_ms") > 0);
    assert!(!array_at(&v, "/exchange/databases").is_empty());
}

#[test]
fn sigint_during_exchange_thread_tuning() {
    let dir = scratch();
    // A 60 s test: each tuning trial lasts 10 s.
    let (mut run, results, ndjson) = start_exchange(
        dir.path(),
        "32MiB",
        &["--threads", "auto", "--duration", "60s", "--ramp", "1s"],
    );
    let status = run.stop_after(
        "the first trial's measurement",
        || has_record(&ndjson, |r| r["phase"] == "measure"),
        Duration::from_millis(300),
        "INT",
    );
    let v = interrupted(
        &run,
        status,
        &results,
        "SIGINT",
        &["thread tuning", "measure"],
    );
    assert_phases(
        &v,
        &[
            ("initialise", "completed"),
            ("threads", "interrupted"),
            ("ramp", "not_started"),
            ("measure", "not_started"),
        ],
    );
    assert!(v.get("verdict").is_none(), "an interrupted run was judged");
    let trials = array_at(&v, "/exchange/thread_trials");
    assert_eq!(trials.len(), 1, "{trials:?}");
}
