//! What a new user reads: snapshots of the console summary (a plain run, a sequence, an
//! Exchange validation with its verdict), the dry run and the error messages of plausible
//! mistakes, made from fixed results files and job files and reviewed by reading them
//! (`tests/snapshots/ux/`). Each snapshot is also checked mechanically: every number has its
//! unit and at most 4 significant digits ([`numbers`]).

mod numbers;

use crate::harness::{RunArgs, run_in, scratch};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Snapshots `text` as `name` (paths of the scratch directory and where the scratch directory
/// is mounted replaced, so the snapshot is the same on any machine), after checking its
/// numbers.
fn snapshot(name: &str, text: &str, scratch: Option<&Path>) {
    let problems = numbers::problems(text);
    assert!(
        problems.is_empty(),
        "{name}: numbers without units or with too many digits:\n{}\n--- text\n{text}",
        problems.join("\n")
    );
    let mut filters: Vec<(String, &str)> = vec![
        (r" on /\S* \([^)]*\)".into(), " on [MOUNT]"),
        (
            r"storlab-results/[a-z]+-\d{8}-\d{6}".into(),
            "storlab-results/[RUN]",
        ),
        (r"seed       \d+".into(), "seed       [SEED]"),
    ];
    if let Some(dir) = scratch {
        filters.push((regex_escape(&dir.display().to_string()), "[SCRATCH]"));
    }
    let filters: Vec<(&str, &str)> = filters.iter().map(|(a, b)| (a.as_str(), *b)).collect();
    insta::with_settings!({
        snapshot_path => "../../snapshots/ux",
        prepend_module_to_snapshot => false,
        filters => filters,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '/' || c == '_' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

/// Snapshots as `name` the console summary `storlab report` prints of the fixed results file
/// `results` (in tests/fixtures/), which must succeed.
fn snapshot_summary(name: &str, results: &str) {
    let dir = scratch();
    let out = run_in(dir.path(), [Path::new("report"), &fixture(results)]);
    out.expect_ok();
    snapshot(name, &out.stdout, None);
}

#[test]
fn summary_of_a_plain_run() {
    snapshot_summary("summary-plain", "plain.json");
}

#[test]
fn summary_of_a_sequence() {
    snapshot_summary("summary-steps", "steps.json");
}

#[test]
fn summary_and_verdict_of_an_exchange_validation() {
    snapshot_summary("summary-exchange", "exchange.json");
}

#[test]
fn summary_of_fio_stonewall_groups() {
    snapshot_summary("summary-groups", "groups.json");
}

#[test]
fn summary_and_verdict_of_an_exchange_backup_test() {
    snapshot_summary("summary-backup", "backup.json");
}

#[test]
fn summary_and_verdict_of_simulated_users() {
    snapshot_summary("summary-users", "users.json");
}

#[test]
fn dry_runs_of_the_exchange_backup_and_recovery_tests_and_of_simulated_users() {
    let dir = scratch();
    for (name, args) in [
        (
            "dry-run-exchange-backup",
            vec!["exchange", "--test", "backup", "--dry-run"],
        ),
        (
            "dry-run-exchange-recovery",
            vec!["exchange", "--test", "recovery", "--dry-run"],
        ),
        ("dry-run-users", vec!["users", "--dry-run"]),
    ] {
        let out = run_in(dir.path(), args);
        out.expect_ok();
        snapshot(name, &out.stdout, Some(dir.path()));
    }
    // fio's stonewall groups: a step per group, each with its own workers.
    let fio = dir.path().join("groups.fio");
    std::fs::write(
        &fio,
        format!(
            "[global]\nioengine=io_uring\ndirect=1\nfilename={}\nsize=16m\nruntime=1\ntime_based\n\
             [reads]\nrw=randread\nbs=4k\niodepth=4\nstonewall\n[writes]\nrw=randwrite\nbs=4k\niodepth=4\nstonewall\n",
            dir.path().join("groups.dat").display()
        ),
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        ["run", "--fio", fio.to_str().unwrap(), "--dry-run"],
    );
    out.expect_ok();
    snapshot("dry-run-fio-groups", &out.stdout, Some(dir.path()));
}

#[test]
fn dry_run_of_the_default_job_and_of_a_one_line_job() {
    let dir = scratch();
    let out = run_in(dir.path(), ["run", "--dry-run"]);
    out.expect_ok();
    snapshot("dry-run-default", &out.stdout, Some(dir.path()));
    let out = RunArgs::target(&dir.path().join("data.dat"))
        .size("64MiB")
        .flags(&["--bs", "4k", "--read", "100", "--qd", "32"])
        .flags(&["--rate", "19.073486328125", "--dry-run"])
        .run(dir.path());
    out.expect_ok();
    snapshot("dry-run-one-line", &out.stdout, Some(dir.path()));
}

#[test]
fn dry_run_of_a_refused_target_says_why_and_exits_2() {
    let dir = scratch();
    let out = RunArgs::target(&dir.path().join("not-a-mount/data.dat"))
        .size("64MiB")
        .flags(&["--dry-run"])
        .run(dir.path());
    out.expect_code(2);
    snapshot("dry-run-refused", &out.stdout, Some(dir.path()));
}

#[test]
fn dry_run_of_the_exchange_quick_check() {
    let dir = scratch();
    let out = run_in(dir.path(), ["exchange", "--dry-run"]);
    out.expect_ok();
    snapshot("dry-run-exchange", &out.stdout, Some(dir.path()));
}

#[test]
fn errors_of_plausible_mistakes() {
    let dir = scratch();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let targets = write("targets.toml", "[[targets]]\npath = \"x.dat\"\n");
    let blocksize = write(
        "blocksize.toml",
        "[[target]]\npath = \"x.dat\"\nsize = \"16MiB\"\n\n[[worker]]\n[[worker.access]]\nblocksize = \"4k\"\n",
    );
    let cases: [(&str, Vec<&str>); 5] = [
        ("error-targets-key", vec!["run", targets.to_str().unwrap()]),
        (
            "error-blocksize-key",
            vec!["run", blocksize.to_str().unwrap()],
        ),
        ("error-flag-typo", vec!["run", "--durration", "10s"]),
        ("error-report-missing-file", vec!["report", "nothere.json"]),
        (
            "error-bad-size",
            vec!["run", "--target", "x.dat", "--size", "16 parsecs"],
        ),
    ];
    let mut all = String::new();
    for (name, args) in cases {
        let out = run_in(dir.path(), args.iter().copied());
        out.expect_code(2);
        all.push_str(&format!("--- {name}\n{}\n", out.stderr.trim_end()));
    }
    snapshot("errors", &all, Some(dir.path()));
}
