//! The last test target of `cargo test` (`harness = false`; cargo runs test targets in name
//! order, and `skipped` sorts after `integration`): prints how many tests of this `cargo test`
//! skipped and why, from the ledger `harness::skip` writes (see `skipped/ledger.rs`), then
//! removes the ledger. A skipped test passes in libtest's count; this line is where it shows.
//!
//! The output ends with one line: `no test was skipped`, or `N tests skipped: ...` with each
//! reason and how many tests gave it, after one line per skipped test.

#![allow(clippy::print_stdout)]

#[path = "skipped/ledger.rs"]
mod ledger;

use std::collections::BTreeMap;

fn main() {
    // `cargo test -- --list` lists tests: this target has none.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let path = ledger::current();
    let skipped = ledger::read(&path);
    let _ = std::fs::remove_file(&path);
    ledger::remove_stale();
    if skipped.is_empty() {
        println!("no test was skipped");
        return;
    }
    // Reasons in the order they first came, with how many tests gave each.
    let mut order = Vec::new();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for (test, reason) in &skipped {
        println!("skipped {test}: {reason}");
        let n = count.entry(reason.as_str()).or_insert(0);
        if *n == 0 {
            order.push(reason.as_str());
        }
        *n += 1;
    }
    let reasons: Vec<String> = order
        .iter()
        .map(|r| format!("{} × {r}", count[r]))
        .collect();
    println!(
        "{} {} skipped (CI=true makes a skip a failure): {}",
        skipped.len(),
        if skipped.len() == 1 { "test" } else { "tests" },
        reasons.join("; ")
    );
}
