//! The file-system workload end to end in-process: small trees in the tests' own directory,
//! made, run and judged through the common path.

use crate::results::RunResult;
use crate::results::progress::Quiet;
use crate::run::{RunOptions, Runner, Signals};
use crate::workloads::{JobText, Overrides};
use std::path::Path;

/// Runs the `[fs]` job `text` (in `dir`), its results in `dir/NAME.json`.
pub(crate) fn run(dir: &Path, name: &str, text: &str) -> anyhow::Result<RunResult> {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let room = crate::workloads::room_of(text).expect("registered");
    assert_eq!(room.section, "fs");
    let w = (room.load)(&JobText { path: &path, text }, &Overrides::default())?;
    let mut opts = RunOptions::new(dir.join(format!("{name}.json")), vec!["storlab".into()]);
    opts.description = Some(w.describe());
    let signals = Signals::none();
    w.run(&mut Runner::new(&signals, &mut Quiet), &opts)
}

/// An `[fs]` section on `anchor` with `rest`.
pub(crate) fn job(anchor: &Path, rest: &str) -> String {
    format!("[fs]\nanchor = \"{}\"\n{rest}", anchor.display())
}

fn op<'r>(r: &'r crate::workloads::fs::section::FsRun, name: &str) -> &'r crate::stats::summary::DirSummary {
    &r.operations
        .iter()
        .find(|o| o.operation == name)
        .unwrap_or_else(|| panic!("{name} in {r:?}"))
        .figures
}

#[test]
fn a_tree_is_made_then_a_metadata_mix_runs_with_every_operation_counted() {
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("tree");
    let text = job(
        &anchor,
        "depth = 1\nwidth = 2\nfiles = 10\nsizes = \"8k\"\nthreads = 2\nmix = \"create:1,delete:1,getattr:2,read:1\"\nxfersize = \"4k\"\nduration = \"1s\"\n",
    );
    let r = run(dir.path(), "mix", &text).unwrap();
    let fs = r.fs.as_ref().expect("the section");
    let format = fs.run("format").expect("the format ran");
    assert_eq!(op(format, "mkdir").ops, 2);
    assert_eq!(op(format, "create").ops, 20);
    assert_eq!(op(format, "write").ops, 40);
    assert_eq!(op(format, "write").bytes, 20 * 8192);
    assert_eq!(op(format, "close").ops, 20);
    assert_eq!(fs.start.files, 20);
    assert_eq!(fs.start.bytes, 20 * 8192);
    let mix = fs.run("r1").expect("the run");
    for name in ["create", "delete", "getattr", "open", "read", "close"] {
        let o = op(mix, name);
        assert!(o.ops > 0, "{name}: {o:?}");
        assert_eq!(o.errors, 0, "{name}: {:?}", fs.failures);
    }
    // Each read of a file is its open, two 4 KiB reads and its close.
    let (opens, reads) = (op(mix, "open").ops, op(mix, "read").ops);
    assert!(reads <= 2 * opens && reads + 2 >= 2 * opens, "{opens} opens, {reads} reads");
    // The tree at the end is what its operations left: creates add files, deletes remove.
    let created = op(mix, "create").ops as i64;
    let deleted = op(mix, "delete").ops as i64;
    assert!((fs.end.files as i64 - (20 + created - deleted)).abs() <= 2, "{:?}", fs.end);
    assert!(r.verdict.as_ref().unwrap().passed(), "{:?}", r.verdict);
    // The marker says the tree is storlab's and whole; a second run reuses it.
    let again = run(dir.path(), "again", &text).unwrap();
    let fs2 = again.fs.unwrap();
    assert_eq!(fs2.start.files, fs.end.files + op(fs2.run("format").unwrap(), "create").ops);
}
