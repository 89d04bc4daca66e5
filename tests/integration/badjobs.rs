//! Every kind of mistake in a job file or on the command line: exit code 2, a message that
//! names the file and line (or the flag) and the key, and nothing touched on disk.

use crate::harness::{Outcome, RunArgs, run_in, scratch, write_job};
use std::path::Path;

/// A good job; the line numbers below refer to it.
const GOOD: &str = r#"description = "bad job fixture"
duration = "1s"

[[target]]
name = "data"
path = "TARGET"
size = "16MiB"

[[worker]]
name = "w"
queue_depth = 4

[[worker.access]]
class = "db"
block_size = "8k"
read = "70%"
random = "100%"
"#;

/// A change to [`GOOD`] (lines are 1-based).
enum Edit {
    /// Replace line N.
    Replace(usize, &'static str),
    /// Insert a line after line N.
    InsertAfter(usize, &'static str),
    /// Delete lines N..=M.
    Delete(usize, usize),
}

/// Writes `name.toml` (GOOD with `edit`) into `dir` and runs it (for real, not a dry run: a
/// bad job must be refused before anything is touched).
fn run_job(dir: &Path, name: &str, edit: Edit) -> Outcome {
    let target = dir.join(format!("{name}.dat"));
    let good = GOOD.replace("TARGET", target.to_str().unwrap());
    let mut lines: Vec<&str> = good.lines().collect();
    match edit {
        Edit::Replace(n, text) => lines[n - 1] = text,
        Edit::InsertAfter(n, text) => lines.insert(n, text),
        Edit::Delete(from, to) => {
            lines.drain(from - 1..to);
        }
    }
    let file = write_job(dir, &format!("{name}.toml"), &(lines.join("\n") + "\n"));
    let results = dir.join(format!("{name}.json"));
    let out = RunArgs::job(&file).results(&results).run(dir);
    assert!(!target.exists(), "{name}: the target was created");
    assert!(!results.exists(), "{name}: a results file was written");
    out
}

#[test]
fn the_good_fixture_is_good() {
    let dir = scratch();
    let target = dir.path().join("good.dat");
    let file = dir.path().join("good.toml");
    std::fs::write(&file, GOOD.replace("TARGET", target.to_str().unwrap())).unwrap();
    run_in(dir.path(), ["run", file.to_str().unwrap(), "--dry-run"]).expect_ok();
}

#[test]
fn unknown_key_names_the_key_and_its_line() {
    let dir = scratch();
    run_job(
        dir.path(),
        "unknown_key",
        Edit::InsertAfter(11, "bogus_key = 1"),
    )
    .expect_code(2)
    .stderr_has(&["unknown_key.toml:12:", "bogus_key"]);
}

#[test]
fn bad_size_unit_names_the_value_and_its_line() {
    let dir = scratch();
    run_job(
        dir.path(),
        "bad_unit",
        Edit::Replace(15, r#"block_size = "4q""#),
    )
    .expect_code(2)
    .stderr_has(&["bad_unit.toml:15:", "4q", "unit"]);
}

#[test]
fn bad_percentage_names_the_value_and_its_line() {
    let dir = scratch();
    run_job(dir.path(), "bad_pct", Edit::Replace(16, r#"read = "150%""#))
        .expect_code(2)
        .stderr_has(&["bad_pct.toml:16:", "150", "percentage"]);
}

#[test]
fn queue_depth_zero_names_the_worker_and_key() {
    let dir = scratch();
    run_job(dir.path(), "qd0", Edit::Replace(11, "queue_depth = 0"))
        .expect_code(2)
        .stderr_has(&["qd0.toml:9:", "worker[0].queue_depth", "queue_depth is 0"]);
}

#[test]
fn wrong_value_type_names_its_line() {
    let dir = scratch();
    run_job(
        dir.path(),
        "wrong_type",
        Edit::Replace(11, r#"queue_depth = "four""#),
    )
    .expect_code(2)
    .stderr_has(&["wrong_type.toml:11:", "four"]);
}

#[test]
fn missing_path_names_the_target() {
    let dir = scratch();
    run_job(dir.path(), "missing_path", Edit::Delete(6, 6))
        .expect_code(2)
        .stderr_has(&["missing_path.toml:4:", "target[0].path", "needs a path"]);
}

#[test]
fn unknown_target_reference_names_it_and_the_known_ones() {
    let dir = scratch();
    run_job(
        dir.path(),
        "unknown_ref",
        Edit::InsertAfter(10, r#"targets = ["nope"]"#),
    )
    .expect_code(2)
    .stderr_has(&["unknown_ref.toml:9:", "worker[0].targets", "`nope`", "data"]);
}

#[test]
fn empty_target_list_of_a_worker_is_refused() {
    let dir = scratch();
    run_job(
        dir.path(),
        "empty_refs",
        Edit::InsertAfter(10, "targets = []"),
    )
    .expect_code(2)
    .stderr_has(&["empty_refs.toml:9:", "worker[0].targets", "empty"]);
}

/// The engine key is on line 3; its error must name that line like every other key's.
#[test]
fn unknown_engine_names_the_key_and_its_line() {
    let dir = scratch();
    run_job(
        dir.path(),
        "unknown_engine",
        Edit::InsertAfter(2, r#"engine = "aio""#),
    )
    .expect_code(2)
    .stderr_has(&["unknown_engine.toml:3:", "engine", "`aio`"]);
}

#[test]
fn zoned_distribution_not_adding_up_is_refused() {
    let dir = scratch();
    run_job(
        dir.path(),
        "zoned",
        Edit::InsertAfter(17, r#"distribution = "zoned:80/10:10/90""#),
    )
    .expect_code(2)
    .stderr_has(&["zoned.toml:13:", "worker[0].access[0].distribution", "100%"]);
}

#[test]
fn job_without_workers_is_refused() {
    let dir = scratch();
    run_job(dir.path(), "no_worker", Edit::Delete(9, 17))
        .expect_code(2)
        .stderr_has(&["no_worker.toml", "`worker`", "no worker"]);
}

#[test]
fn worker_without_access_entries_is_refused() {
    let dir = scratch();
    run_job(dir.path(), "no_access", Edit::Delete(13, 17))
        .expect_code(2)
        .stderr_has(&["no_access.toml:9:", "worker[0].access"]);
}

#[test]
fn toml_syntax_error_names_its_line() {
    let dir = scratch();
    run_job(dir.path(), "syntax", Edit::Replace(11, "queue_depth = = 4"))
        .expect_code(2)
        .stderr_has(&["syntax.toml:11:", "queue_depth = = 4"]);
}

#[test]
fn nonexistent_job_file_is_a_usage_error() {
    let dir = scratch();
    let missing = dir.path().join("missing.toml");
    run_in(dir.path(), ["run", missing.to_str().unwrap()])
        .expect_code(2)
        .stderr_has(&[
            missing.to_str().unwrap(),
            "the job file cannot be read: No such file or directory",
        ]);
}

#[test]
fn bad_flags_are_usage_errors_that_name_the_flag() {
    let dir = scratch();
    let target = dir.path().join("flags.dat");
    let cases: [(&[&str], &[&str]); 6] = [
        (&["--bs", "4x"], &["--bs", "4x"]),
        (&["--read", "150"], &["--read", "150"]),
        (&["--size", "12 bananas"], &["--size", "bananas"]),
        (&["--qd", "abc"], &["--qd", "abc"]),
        (&["--qd", "0"], &["queue_depth", "0"]),
        (&["--engine", "aio"], &["engine", "`aio`"]),
    ];
    for (flags, expected) in cases {
        RunArgs::target(&target)
            .flags(&["--duration", "1s"])
            .flags(flags)
            .run(dir.path())
            .expect_code(2)
            .stderr_has(expected);
    }
    run_in(dir.path(), ["run", "--no-such-flag"])
        .expect_code(2)
        .stderr_has(&["--no-such-flag"]);
    // Targets named twice by `--target` (the fuzz test's find: beside a DiskSpd line's own
    // target) are the flag's error, not the converted line's.
    let t = target.display().to_string();
    run_in(
        dir.path(),
        ["run", "--target", &t, "--diskspd", &t, "--target", &t],
    )
    .expect_code(2)
    .stderr_has(&["command line: `--target`", "(`target[1].name`)"]);
    assert!(!target.exists(), "a refused run created its target");
}

/// Issue 44: a job with `zipf:1e31` ran, and `storlab report` then refused its results (a
/// figure beyond any a results file holds). What load refuses, the job is refused for up
/// front, its dry run too; the largest theta load reads runs, and its results are reported.
#[test]
fn a_job_whose_results_report_would_refuse_is_refused_before_it_runs() {
    let dir = scratch();
    run_job(
        dir.path(),
        "zipf",
        Edit::InsertAfter(17, r#"distribution = "zipf:1e31""#),
    )
    .expect_code(2)
    .stderr_has(&[
        "this job cannot run",
        "`workers[0].access[0].distribution.zipf.theta` is 1e31",
        "at most 1e30",
    ]);
    let target = dir.path().join("fine.dat");
    let results = dir.path().join("fine.json");
    RunArgs::target(&target)
        .flags(&[
            "--size",
            "1MiB",
            "--duration",
            "1s",
            "--distribution",
            "zipf:1e30",
        ])
        .results(&results)
        .run(dir.path())
        .expect_ok();
    run_in(dir.path(), ["report", results.to_str().unwrap()]).expect_ok();
}
