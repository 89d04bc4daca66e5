//! The ledger of skipped tests, shared by the integration tests (which write it through
//! `harness::skip`) and the `skipped` test target (which reads it, prints the count and the
//! reasons, and removes it).
//!
//! One `cargo test` runs its test binaries one after the other, each as a child of the cargo
//! process; so the parent pid of a test process names the `cargo test` it belongs to, and
//! every binary of that run finds the same ledger: `CARGO_TARGET_TMPDIR/skipped-tests/PID.txt`,
//! one line per skipped test, `NAME<TAB>REASON`, appended with `O_APPEND` (lines written by
//! parallel tests do not interleave). A ledger whose cargo process has exited (its run
//! stopped before the summary, or ran without it, e.g. `cargo test --test integration`) is
//! stale: the next summary removes it without counting it.
//!
//! A runner that starts each test in a process of its own (cargo-nextest, which `.ci/test`
//! uses) names the ledger instead: `STORLAB_SKIPPED_LEDGER`, a file the runner made, read by
//! the summary it runs afterwards.

// The integration tests only write, the summary only reads.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// The directory of the ledgers (on the build's disk, beside the integration tests' scratch
/// directories).
pub(crate) fn dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests")
}

/// The ledger of the `cargo test` whose process is `cargo_pid`.
pub(crate) fn path(cargo_pid: u32) -> PathBuf {
    dir().join(format!("{cargo_pid}.txt"))
}

/// This run's ledger: `STORLAB_SKIPPED_LEDGER` when the runner names one, else the ledger of
/// the `cargo test` this process belongs to.
pub(crate) fn current() -> PathBuf {
    std::env::var_os("STORLAB_SKIPPED_LEDGER").map_or_else(|| path(cargo_pid()), PathBuf::from)
}

/// The pid of this process's parent: cargo, when `cargo test` started it.
pub(crate) fn cargo_pid() -> u32 {
    rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get() as u32)
}

/// Appends `test` and `reason` to this run's ledger. Panics when the ledger cannot be
/// written: a skip that is not counted is the silent pass this ledger exists to prevent.
pub(crate) fn record(test: &str, reason: &str) {
    let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
    let line = format!("{}\t{}\n", clean(test), clean(reason));
    let path = current();
    std::fs::create_dir_all(dir())
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
        })
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .unwrap_or_else(|e| panic!("cannot record the skip in {}: {e}", path.display()));
}

/// The (test, reason) lines of a ledger, in the order they were written; none when there is
/// no ledger.
pub(crate) fn read(path: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| match l.split_once('\t') {
            Some((test, reason)) => (test.to_string(), reason.to_string()),
            None => (l.to_string(), String::new()),
        })
        .collect()
}

/// Removes the ledgers of `cargo test` runs whose cargo process is gone.
pub(crate) fn remove_stale() {
    let Ok(entries) = std::fs::read_dir(dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".txt"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
