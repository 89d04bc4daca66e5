//! Every job file under `examples/` resolves (`storlab run FILE --dry-run` prints its plan,
//! whichever workload its section selects) and a dry run touches none of its targets.

use crate::harness::{run_in, scratch};
use std::ffi::OsStr;
use std::path::PathBuf;

#[test]
fn every_example_job_resolves() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&examples)
        .expect("read examples/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no examples/*.toml");
    for file in &files {
        // Run from an empty directory: relative target paths must not be created there.
        let dir = scratch();
        let out = run_in(
            dir.path(),
            [OsStr::new("run"), file.as_os_str(), OsStr::new("--dry-run")],
        );
        // It resolves: the dry run prints the plan. Exit 2 is only for a target this machine
        // does not have or the guard refuses (a block device, a mount point), and says so.
        let refused = out.code == Some(2) && out.stdout.contains("the run would be refused");
        assert!(
            out.code == Some(0) || refused,
            "{} does not resolve:\n{}",
            file.display(),
            out.stderr
        );
        // The plan: what a plain job's workers do, or what the workload's section asks
        // (the tree of `[fs]`, the methods of `[wal_sync]`).
        let plan = ["\nworkers ", "\ntree ", "\nmethods "];
        assert!(
            out.stdout.starts_with("dry run of ")
                && plan.iter().any(|p| out.stdout.contains(p))
                && out.stdout.contains("\nthe run would "),
            "{}: dry run printed {}",
            file.display(),
            out.stdout
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(
            left.is_empty(),
            "{}: --dry-run created {left:?}",
            file.display()
        );
    }
}
