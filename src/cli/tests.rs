//! The command line end to end, in-process: a workload registered by one line (the test-only
//! `[tiny]`) runs through `storlab run`, its dry run, results, reports and exit code as any
//! other's.

use crate::workloads::tiny::tests::job_file;
use std::ffi::OsString;

fn run(args: &[&str]) -> anyhow::Result<i32> {
    super::run(args.iter().map(OsString::from))
}

#[test]
fn storlab_run_runs_a_registered_workloads_job_file_and_every_view_says_what_ran() {
    let dir = tempfile::tempdir().unwrap();
    let (path, text) = job_file(dir.path());
    let path = path.to_str().unwrap();
    let results = dir.path().join("cli.json");
    let out = results.to_str().unwrap();
    assert_eq!(
        run(&["storlab", "run", path, "-q", "--json", "-o", out]).unwrap(),
        crate::exit::OK
    );
    let r = crate::results::file::load(&results).unwrap();
    assert!(
        r.verdict.as_ref().is_some_and(|v| v.passed()),
        "{:?}",
        r.verdict
    );
    // The dry run, the results file, the console summary and the HTML report say the same.
    let room = crate::workloads::room_of(&text).unwrap();
    let file = crate::workloads::JobText {
        path: std::path::Path::new(path),
        text: &text,
    };
    let w = (room.load)(&file, &Default::default()).unwrap();
    let dry = super::describe_workload(w.as_ref());
    let described = r.description.as_ref().expect("kept");
    for line in described.head.iter().chain(&described.body) {
        assert!(
            dry.text.contains(&line.text),
            "{} not in the dry run:\n{}",
            line.text,
            dry.text
        );
    }
    let summary = crate::report::console::summary(&r, 0);
    assert!(
        summary.contains("tiny: 8 blocks of 4 KiB, each written then read back"),
        "{summary}"
    );
    assert!(
        summary.contains("driven by write-then-read-back pairs"),
        "{summary}"
    );
    assert!(summary.contains("blocks read back"), "{summary}");
    let html = crate::report::html::render(&r);
    assert!(html.contains("tiny: 8 blocks of 4 KiB, each written then read back"));
    assert!(html.contains("blocks read back"));
    // A run flag that does not apply is refused with the workload's own words, exit 2.
    let e = run(&["storlab", "run", path, "--qd", "4"]).unwrap_err();
    assert!(e.to_string().contains("--qd does not apply to"), "{e}");
    assert!(e.to_string().contains("a tiny test job"), "{e}");
    assert_eq!(crate::exit::of_error(&e), crate::exit::USAGE);
}
