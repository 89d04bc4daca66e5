//! `storlab exchange` end to end, on real files and (as root) real loop devices: the I/O a run
//! produces matches the Exchange model of its version (`profile`: sizes, mixes, ratios, rates,
//! where each stream lands on the devices), the verdict and exit codes (`verdict`: a passing
//! run, an impossible limit, a storage that cannot carry the load on a blkio-throttled loop
//! device, `--json`), initialisation reuse and the profiles refused before it
//! (`initialisation`), the search for the largest mailbox count on a device whose capacity is
//! known and `--threads auto` (`search`), and the backup and recovery tests (`backup`).
//! `devices` holds the loop devices, filesystems, blkio cgroups and block traces they use.
//!
//! Tests that judge mechanics rather than this disk's latency pass lenient latency limits
//! ([`ExchangeArgs::lenient`]): the scratch disk is shared with whatever else the machine
//! runs, and a 200 ms hiccup from a neighbour must not decide them.

mod backup;
pub(crate) mod devices;
mod initialisation;
mod profile;
mod search;
mod verdict;

use crate::harness::{
    ExchangeArgs, Outcome, array_at, at, check_open_loop_accounting, close, f64_at, load_json,
    str_at, u64_at,
};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// Runs `command` in `dir` and returns what it printed and the results file it wrote, after
/// checking the exit code agrees with the verdict in it ([`code_matches_verdict`]): what every
/// Exchange run that reaches its verdict must do.
#[track_caller]
fn judged(dir: &Path, command: &ExchangeArgs) -> (Outcome, Value) {
    let out = command.run(dir);
    let v = load_json(command.results_path());
    code_matches_verdict(&out, &v);
    (out, v)
}

/// The JSON pointer of class `name` (class names hold `/`, which pointers escape as `~1`).
fn class_ptr(name: &str) -> String {
    format!("/classes/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// `ops` and `bytes` of one direction of class `name`.
fn class_counts(v: &Value, name: &str, dir: &str) -> (u64, u64) {
    let p = format!("{}/{dir}", class_ptr(name));
    (
        u64_at(v, &format!("{p}/ops")),
        u64_at(v, &format!("{p}/bytes")),
    )
}

/// `/exchange/databases`.
fn databases(v: &Value) -> &Vec<Value> {
    array_at(v, "/exchange/databases")
}

/// Every verdict rule as (name, pass); checks each has its threshold, measured value and unit
/// and that `pass` agrees with them.
#[track_caller]
fn rules(v: &Value) -> Vec<(String, bool)> {
    array_at(v, "/verdict/rules")
        .iter()
        .map(|r| {
            let name = str_at(r, "/rule").to_string();
            let threshold = f64_at(r, "/threshold");
            let measured = f64_at(r, "/measured");
            str_at(r, "/unit");
            let pass = at(r, "/pass")
                .as_bool()
                .unwrap_or_else(|| panic!("rule {name}: pass is not a boolean"));
            let expected = match str_at(r, "/comparison") {
                "at_most" => measured <= threshold,
                "at_least" => measured >= threshold,
                o => panic!("rule {name}: unknown comparison {o}"),
            };
            assert_eq!(
                pass, expected,
                "rule {name}: measured {measured} vs threshold {threshold} but pass is {pass}"
            );
            (name, pass)
        })
        .collect()
}

/// Names of the failing rules.
fn failing(v: &Value) -> BTreeSet<String> {
    rules(v)
        .into_iter()
        .filter(|(_, pass)| !pass)
        .map(|(n, _)| n)
        .collect()
}

/// Checks the exit code against the verdict: 0 with PASS, 3 with FAIL.
#[track_caller]
fn code_matches_verdict(out: &Outcome, v: &Value) {
    let expected = match str_at(v, "/verdict/result") {
        "PASS" => 0,
        "FAIL" => 3,
        "INCONCLUSIVE" => 4,
        o => panic!("verdict.result is {o}"),
    };
    out.expect_code(expected);
}

/// The open-loop rate of worker `name` (`db1-thread1`, `db1-log`, `db1-maintenance`) in the
/// job the run ran, IOPS: what the model scheduled, exactly.
#[track_caller]
fn worker_rate(v: &Value, name: &str) -> f64 {
    array_at(v, "/job/workers")
        .iter()
        .find(|w| str_at(w, "/name") == name)
        .and_then(|w| w.pointer("/rate/iops"))
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no open-loop worker {name} in the job"))
}

/// Database reads and database writes counted, every database together.
fn db_ops(v: &Value) -> (u64, u64) {
    databases(v).iter().fold((0, 0), |(reads, writes), d| {
        let name = str_at(d, "/name");
        (
            reads + class_counts(v, &format!("{name}/read"), "read").0,
            writes + class_counts(v, &format!("{name}/write"), "write").0,
        )
    })
}

/// The checks of an Exchange run's rates that hold on any machine, however loaded. Every
/// stream (database threads, log writers, maintenance readers) is an open-loop worker: each
/// accounted for every I/O of its schedule ([`check_open_loop_accounting`]); and the achieved
/// transactional IOPS are the database reads and writes counted, never more than the target
/// (plus one I/O per database thread for rounding). Whether a loaded machine keeps the target
/// is its own business, and the verdict's.
#[track_caller]
fn check_rates(v: &Value) {
    check_open_loop_accounting(v);
    let seconds = u64_at(v, "/measured_ms") as f64 / 1000.0;
    let (reads, writes) = db_ops(v);
    let achieved = f64_at(v, "/exchange/achieved_iops");
    assert!(
        close(achieved, (reads + writes) as f64 / seconds, 1e-6),
        "achieved {achieved} IOPS, but {reads} reads and {writes} writes in {seconds} s"
    );
    let target = f64_at(v, "/exchange/target_iops");
    let threads = array_at(v, "/job/workers")
        .iter()
        .filter(|w| str_at(w, "/name").contains("-thread"))
        .count();
    assert!(
        achieved <= target + threads as f64 / seconds,
        "achieved {achieved} IOPS above the target {target}: open loop never runs ahead"
    );
}

/// The common checks of a finished transactional run: not interrupted, no I/O errors.
#[track_caller]
fn check_clean(v: &Value) {
    assert_eq!(at(v, "/interrupted"), &Value::Bool(false), "interrupted");
    assert_eq!(u64_at(v, "/totals/read/errors"), 0, "read errors");
    assert_eq!(u64_at(v, "/totals/write/errors"), 0, "write errors");
    for d in databases(v) {
        assert_eq!(u64_at(d, "/errors"), 0, "errors on {}", str_at(d, "/name"));
    }
}
