//! The command line end to end, in-process: a workload registered by one line (the test-only
//! `[tiny]`) runs through `storlab run`, its dry run, results, reports and exit code as any
//! other's.

use crate::workloads::tiny::tests::job_file;
use std::ffi::OsString;

fn run(args: &[&str]) -> anyhow::Result<i32> {
    super::run(args.iter().map(OsString::from))
}

/// The long flags of `cmd`, as clap declares them.
fn longs(cmd: &clap::Command) -> impl Iterator<Item = String> + '_ {
    (cmd.get_arguments()).filter_map(|a| a.get_long().map(|l| format!("--{l}")))
}

/// The long flags clap defines for subcommand `name` that change its job, sorted: all but the
/// output's (`OutputArgs`) and those in `other` (where the job comes from: `--preset`...).
pub(crate) fn job_flags(name: &str, other: &[&str]) -> Vec<String> {
    use clap::Args as _;
    let output: Vec<String> =
        longs(&super::OutputArgs::augment_args(clap::Command::new("out"))).collect();
    let cli = super::command();
    let sub = cli.find_subcommand(name).expect("subcommand");
    let mut flags: Vec<String> = longs(sub)
        .filter(|f| !output.contains(f) && !other.contains(&f.as_str()))
        .collect();
    flags.sort();
    flags
}

/// The flags of spec `S`'s keys `keys`, as clap declares them, sorted.
pub(crate) fn key_flags<S: clap::Args>(keys: &[&str]) -> Vec<String> {
    let mut flags: Vec<String> = (keys.iter())
        .map(|k| crate::workloads::flag_of::<S>(k).unwrap_or_else(|| panic!("{k}: no flag")))
        .collect();
    flags.sort();
    flags
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

/// A flag that changes a job leaves its file's description standing only with the flags named
/// after it: the HTML title and the Iometer CSV's test description, written from the job's
/// description, say so too.
#[test]
fn a_description_names_the_flags_that_changed_the_job() {
    let args = super::RunArgs {
        preset: Some("oltp-8k".into()),
        bs: Some(crate::units::Size(16 << 10)),
        ..Default::default()
    };
    let job = super::build_job(&args).unwrap();
    let d = job.description.clone().unwrap();
    assert_eq!(
        d,
        "oltp-8k: 8 KiB random 70/30 (as its job file says it; changed by --bs)"
    );
    let mut r: crate::results::RunResult =
        serde_json::from_value(crate::results::sample_json("io_uring", &[])).unwrap();
    r.job = job;
    let html = crate::report::html::render(&r);
    assert!(html.contains(&format!("<h1>{d}</h1>")), "title");
    let csv = crate::report::iometer_csv::render(&r, Default::default());
    assert!(csv.contains("changed by --bs"), "{csv}");
    // The default job with --duration and --ramp: its "30 s" is named as the file's.
    let args = super::RunArgs {
        duration: Some(crate::units::Dur(std::time::Duration::from_secs(5))),
        ramp: Some(crate::units::Dur(std::time::Duration::from_secs(1))),
        ..Default::default()
    };
    let d = super::build_job(&args).unwrap().description.unwrap();
    assert!(
        d.starts_with("default: 30 s mixed") && d.ends_with("changed by --duration, --ramp)"),
        "{d}"
    );
    // No flag: the file's own words.
    let d = super::build_job(&super::RunArgs::default())
        .unwrap()
        .description
        .unwrap();
    assert!(!d.contains("changed by"), "{d}");
}

/// clap's tips for an unknown argument, where they mislead, are replaced.
#[test]
fn misleading_clap_tips_are_replaced() {
    use clap::Parser as _;
    let tip = |args: &[&str]| {
        let e = super::Cli::try_parse_from(args).unwrap_err();
        super::terminal::better_tip(&e).unwrap_or_else(|| e.render().to_string())
    };
    let t = tip(&["storlab", "report", "a.json", "--html", "x.html"]);
    assert!(
        t.contains("-o FILE.html") && !t.contains("-- --html"),
        "{t}"
    );
    let t = tip(&["storlab", "run", "--size", "-5G"]);
    assert!(
        t.contains("never negative") || t.contains("is negative"),
        "{t}"
    );
    assert!(!t.contains("'-- -5"), "{t}");
    // A preset's near name is suggested.
    let e = run(&["storlab", "run", "--preset", "oltp", "--dry-run"]).unwrap_err();
    assert!(e.to_string().contains("did you mean oltp-8k?"), "{e}");
}
