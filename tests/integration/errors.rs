//! Real I/O errors through the storlab CLI: reads and writes that fail with EIO or ENOSPC, or
//! come back short, on a [`FaultFs`] FUSE mount (the kernel hands storlab the errno, nothing is
//! mocked); how they are counted (per class, per target), detailed, judged (`I/O errors` rule,
//! exit code 3), rendered in the HTML report, and how `on_error`/`max_errors` end the run; a run
//! stopped while a slow read is in flight ends within two seconds all the same (results written,
//! a thread said not to have ended). And a target that does
//! not fit on a small ext4 filesystem on a loop device.

use crate::faultfs::FaultFs;
use crate::harness::{
    LoopDevice, MIB, Outcome, RunArgs, array_at, at, f64_at, load_json, loop_skip_reason, scratch,
    skip, sparse_image, storlab, str_at, u64_at, write_job,
};
use crate::placement::Mounted;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The FUSE mount, or `None` after [`skip`] said why the test cannot run.
fn mount_or_skip(test: &str) -> Option<FaultFs> {
    match FaultFs::mount() {
        Ok(fs) => Some(fs),
        Err(reason) => {
            skip(test, &reason);
            None
        }
    }
}

/// One target of a job file.
struct Target<'a> {
    name: &'a str,
    path: PathBuf,
    size: &'a str,
}

/// How long a job runs.
#[derive(Clone, Copy)]
enum Length {
    /// This many I/Os (`io_limit`), whatever time they take: the same seeded offsets, and so
    /// the same faults hit, on a quiet machine and on a loaded one. A time-limited run does
    /// as many I/Os as the machine manages, which on a loaded one can be too few to reach the
    /// few failing blocks. (Capped at two minutes, which no test comes near.)
    Ios(u64),
    /// Until the run stops itself (`on_error`, `max_errors`): a minute, which a run stopped
    /// by its errors never reaches, so its stop is the errors' doing on any machine.
    UntilStopped,
}

/// [`job_text`] on one 4 MiB target `t.dat` on `fs`.
fn fuse_job(fs: &FaultFs, length: Length, read_pct: u32, qd: u32, extra: &str) -> String {
    let target = Target {
        name: "fuse",
        path: fs.dir().join("t.dat"),
        size: "4MiB",
    };
    job_text(&[target], length, read_pct, qd, extra)
}

/// A job of one worker group doing 4 KiB I/O on every target, `read_pct` percent reads, all random;
/// `extra` lines go at the top (on_error, max_errors...).
fn job_text(targets: &[Target<'_>], length: Length, read_pct: u32, qd: u32, extra: &str) -> String {
    let (duration, io_limit) = match length {
        Length::Ios(n) => ("120s", format!("io_limit = {n}\n")),
        Length::UntilStopped => ("60s", String::new()),
    };
    let mut text =
        format!("duration = \"{duration}\"\nramp = \"0s\"\ninterval = \"500ms\"\n{extra}\n");
    for t in targets {
        text.push_str(&format!(
            "[[target]]\nname = \"{}\"\npath = \"{}\"\nsize = \"{}\"\n\n",
            t.name,
            t.path.display(),
            t.size
        ));
    }
    let names: Vec<String> = targets.iter().map(|t| format!("\"{}\"", t.name)).collect();
    text.push_str(&format!(
        "[[worker]]\nname = \"w\"\ntargets = [{}]\nqueue_depth = {qd}\n{io_limit}\n\
         [[worker.access]]\nclass = \"io\"\nblock_size = \"4k\"\nread = \"{read_pct}%\"\nrandom = \"100%\"\n",
        names.join(", ")
    ));
    text
}

/// Writes `text` as `NAME.toml` in `dir` and runs it with `args`, results in `NAME.json`.
fn run_job(dir: &Path, name: &str, text: &str, args: &[&str]) -> (Outcome, PathBuf) {
    let job = write_job(dir, &format!("{name}.toml"), text);
    let results = dir.join(format!("{name}.json"));
    let out = RunArgs::job(&job).results(&results).flags(args).run(dir);
    (out, results)
}

/// Runs the job once for 1 ms with no faults, so its files are created and prepared (storlab
/// writes every byte of a new file: a write fault would hit the preparation instead).
fn prepare(dir: &Path, text: &str) {
    let (out, _) = run_job(dir, "prepare", text, &["--duration", "1ms"]);
    out.expect_ok();
}

/// A target's failed I/Os in direction `op` (`read` or `write`).
fn target_errors(v: &Value, target: usize, op: &str) -> u64 {
    u64_at(v, &format!("/targets/{target}/errors/{op}"))
}

/// Failed I/Os of every class and direction, from the totals.
fn total_errors(v: &Value) -> u64 {
    ["read", "write", "flush"]
        .iter()
        .map(|op| u64_at(v, &format!("/totals/{op}/errors")))
        .sum()
}

/// Checks the verdict every run with an I/O error gets: FAIL, with an `I/O errors` rule that
/// measured `errors` against a threshold of 0.
#[track_caller]
fn check_io_error_verdict(v: &Value, errors: u64) {
    assert_eq!(total_errors(v), errors, "errors of every direction");
    assert_eq!(
        str_at(v, "/verdict/result"),
        "FAIL",
        "verdict {}",
        at(v, "/verdict")
    );
    let rule = array_at(v, "/verdict/rules")
        .iter()
        .find(|r| str_at(r, "/rule") == "I/O errors")
        .unwrap_or_else(|| panic!("no `I/O errors` rule in {}", at(v, "/verdict")));
    // The rule counts every failed I/O of the run: also those of the ramp and those that
    // completed after the measured window closed, which the measured counts leave out (at
    // most a queue's worth per worker here: no ramp, 4 workers at queue depth 4 at most).
    let measured = f64_at(rule, "/measured");
    assert!(
        measured >= errors as f64 && measured <= (errors + 16) as f64,
        "rule {rule} against {errors} measured errors"
    );
    assert_eq!(f64_at(rule, "/threshold"), 0.0, "rule {rule}");
    assert_eq!(str_at(rule, "/unit"), "errors", "rule {rule}");
    assert_eq!(at(rule, "/pass"), &Value::Bool(false), "rule {rule}");
}

/// Checks every entry of `errors`: on target `target`, op `op`, a 4 KiB I/O overlapping
/// `range`, with an error text containing `text`, at a time within the measured run.
#[track_caller]
fn check_details(v: &Value, target: u64, op: &str, range: std::ops::Range<u64>, text: &str) {
    let details = array_at(v, "/errors");
    assert!(!details.is_empty(), "no error details");
    assert!(details.len() <= 32, "{} error details", details.len());
    let measured_ms = u64_at(v, "/measured_ms");
    for d in details {
        assert_eq!(u64_at(d, "/target"), target, "{d}");
        assert_eq!(str_at(d, "/op"), op, "{d}");
        let offset = u64_at(d, "/offset");
        assert_eq!(u64_at(d, "/len"), 4096, "{d}");
        assert!(
            offset < range.end && range.start < offset + 4096,
            "offset {offset} is outside the failing range {range:?}: {d}"
        );
        let error = str_at(d, "/error");
        assert!(
            error.contains(text),
            "the error text {error:?} does not contain {text:?}: {d}"
        );
        assert!(u64_at(d, "/t_ms") <= measured_ms + 1000, "{d}");
    }
}

/// `interrupted` as a reason; panics when the run was not cut short.
#[track_caller]
fn interrupted_reason(v: &Value) -> &str {
    at(v, "/interrupted")
        .as_str()
        .unwrap_or_else(|| panic!("interrupted is {}", at(v, "/interrupted")))
}

const FAIL_START: u64 = MIB;
/// Four 4 KiB blocks of the 1024 of a 4 MiB target: a few errors a second, far below the
/// default `max_errors`.
const FAIL_END: u64 = MIB + 16 * 1024;

#[test]
fn read_eio_is_counted_on_its_target_and_class_and_fails_the_verdict() {
    let Some(fs) =
        mount_or_skip("read_eio_is_counted_on_its_target_and_class_and_fails_the_verdict")
    else {
        return;
    };
    let dir = scratch();
    let text = job_text(
        &[
            Target {
                name: "fuse",
                path: fs.dir().join("t.dat"),
                size: "4MiB",
            },
            Target {
                name: "disk",
                path: dir.path().join("d.dat"),
                size: "4MiB",
            },
        ],
        Length::Ios(4000),
        100,
        4,
        "",
    );
    fs.set(|f| f.fail_reads = vec![(FAIL_START..FAIL_END, libc::EIO)]);
    let (out, results) = run_job(dir.path(), "eio", &text, &[]);
    out.expect_code(3);
    let v = load_json(&results);
    assert_eq!(
        at(&v, "/interrupted"),
        &Value::Bool(false),
        "continue is the default"
    );
    assert!(
        at(&v, "/targets/0/direct").as_bool().unwrap(),
        "O_DIRECT on FUSE"
    );

    let errors = u64_at(&v, "/totals/read/errors");
    assert!(errors > 0, "no read errors");
    assert_eq!(u64_at(&v, "/totals/write/errors"), 0);
    assert_eq!(u64_at(&v, "/classes/io/read/errors"), errors);
    assert_eq!(
        target_errors(&v, 0, "read"),
        errors,
        "all on the FUSE target"
    );
    assert_eq!(target_errors(&v, 1, "read"), 0, "none on the disk target");
    assert!(
        u64_at(&v, "/targets/1/ops/read") > 1000,
        "the disk target was read"
    );
    // Every read storlab counted on the FUSE target reached the filesystem.
    let counted = u64_at(&v, "/targets/0/ops/read");
    let (served, _) = fs.counts();
    assert!(
        served >= counted && served - counted <= 16,
        "storlab counted {counted} reads, the filesystem served {served}"
    );
    assert!(errors < counted / 20, "{errors} errors in {counted} reads");
    check_details(&v, 0, "read", FAIL_START..FAIL_END, "EIO");
    check_io_error_verdict(&v, errors);
}

#[test]
fn write_eio_is_counted_and_detailed() {
    let Some(fs) = mount_or_skip("write_eio_is_counted_and_detailed") else {
        return;
    };
    let dir = scratch();
    let text = fuse_job(&fs, Length::Ios(2000), 0, 4, "");
    prepare(dir.path(), &text);
    fs.set(|f| f.fail_writes = vec![(FAIL_START..FAIL_END, libc::EIO)]);
    let (out, results) = run_job(dir.path(), "weio", &text, &[]);
    out.expect_code(3);
    let v = load_json(&results);
    assert_eq!(at(&v, "/interrupted"), &Value::Bool(false));
    let errors = u64_at(&v, "/totals/write/errors");
    assert!(errors > 0, "no write errors");
    assert_eq!(u64_at(&v, "/totals/read/errors"), 0);
    assert_eq!(u64_at(&v, "/classes/io/write/errors"), errors);
    assert_eq!(target_errors(&v, 0, "write"), errors);
    check_details(&v, 0, "write", FAIL_START..FAIL_END, "EIO");
    check_io_error_verdict(&v, errors);
}

#[test]
fn on_error_stop_ends_the_run_at_the_first_failure() {
    let Some(fs) = mount_or_skip("on_error_stop_ends_the_run_at_the_first_failure") else {
        return;
    };
    let dir = scratch();
    let text = fuse_job(&fs, Length::UntilStopped, 100, 4, "on_error = \"stop\"");
    fs.set(|f| f.fail_reads = vec![(FAIL_START..FAIL_END, libc::EIO)]);
    let (out, results) = run_job(dir.path(), "stop", &text, &[]);
    out.expect_code(3);
    let v = load_json(&results);
    let reason = interrupted_reason(&v);
    assert!(reason.contains("failed I/O"), "interrupted: {reason}");
    let measure = array_at(&v, "/phases")
        .iter()
        .find(|p| str_at(p, "/name") == "measure")
        .expect("a measure phase");
    assert_eq!(str_at(measure, "/state"), "interrupted", "{measure}");
    let errors = u64_at(&v, "/totals/read/errors");
    // The first failure, and at most the other I/Os in flight with it.
    assert!((1..=4).contains(&errors), "{errors} errors");
    // The run ended at the failure (storlab's own clock: how long a loaded machine took to
    // reach the failing blocks does not matter), long before its planned minute.
    let measured_ms = u64_at(&v, "/measured_ms");
    let first_ms = array_at(&v, "/errors")
        .iter()
        .map(|d| u64_at(d, "/t_ms"))
        .min()
        .expect("error details");
    assert!(
        measured_ms < 60_000 && measured_ms <= first_ms + 1_000,
        "planned 60 s, measured {measured_ms} ms, first error at {first_ms} ms"
    );
    check_details(&v, 0, "read", FAIL_START..FAIL_END, "EIO");
    check_io_error_verdict(&v, errors);
}

#[test]
fn max_errors_ends_the_run_after_that_many_failures() {
    let Some(fs) = mount_or_skip("max_errors_ends_the_run_after_that_many_failures") else {
        return;
    };
    let dir = scratch();
    let text = fuse_job(&fs, Length::UntilStopped, 100, 4, "");
    // Half of all reads fail.
    let range = 2 * MIB..4 * MIB;
    fs.set(|f| f.fail_reads = vec![(range.clone(), libc::EIO)]);
    let (out, results) = run_job(dir.path(), "max", &text, &["--max-errors", "50"]);
    out.expect_code(3);
    let v = load_json(&results);
    let reason = interrupted_reason(&v);
    assert!(reason.contains("50"), "interrupted: {reason}");
    let errors = u64_at(&v, "/totals/read/errors");
    assert!(
        (50..=54).contains(&errors),
        "{errors} errors with --max-errors 50"
    );
    let measured_ms = u64_at(&v, "/measured_ms");
    assert!(
        measured_ms < 60_000,
        "planned 60 s, measured {measured_ms} ms"
    );
    check_details(&v, 0, "read", range, "EIO");
    check_io_error_verdict(&v, errors);
}

#[test]
fn enospc_after_a_number_of_writes() {
    let Some(fs) = mount_or_skip("enospc_after_a_number_of_writes") else {
        return;
    };
    let dir = scratch();
    // Queue depth 1: the writes reach the filesystem one after the other.
    let text = fuse_job(&fs, Length::UntilStopped, 0, 1, "max_errors = 100");
    prepare(dir.path(), &text);
    let (reads_before, before) = fs.counts();
    fs.set(|f| f.fail_after = Some((300, libc::ENOSPC)));
    let (out, results) = run_job(dir.path(), "enospc", &text, &[]);
    out.expect_code(3);
    let v = load_json(&results);
    let (reads, after) = fs.counts();
    let ops = u64_at(&v, "/totals/write/ops");
    let errors = u64_at(&v, "/totals/write/errors");
    assert_eq!(
        after - before,
        ops,
        "every write storlab counted reached the filesystem"
    );
    // The job only writes; the reads are of the target's first sector, where a filesystem
    // without extended attributes or birth times (this one) keeps the file's identity, read
    // before the run to tell it is still the file storlab prepared.
    let checks = reads - reads_before;
    assert!(checks <= 4, "{checks} reads before a run that only writes");
    assert_eq!(ops - errors + checks, 300, "{ops} writes, {errors} failed");
    assert_eq!(errors, 100, "stopped at max_errors = 100");
    interrupted_reason(&v);
    check_details(&v, 0, "write", 0..4 * MIB, "ENOSPC");
    check_io_error_verdict(&v, errors);
}

/// Issue 44: a filesystem that fills while a target is prepared (past the check of its free
/// space made before anything is written) ends the run before its first I/O: exit 2, as
/// every failure before the first I/O (docs/results-format.md), no results file and no time
/// series, the message naming the file and the error; the file made for the run is removed.
#[test]
fn a_filesystem_that_fills_during_preparation_exits_2_without_results() {
    let Some(fs) =
        mount_or_skip("a_filesystem_that_fills_during_preparation_exits_2_without_results")
    else {
        return;
    };
    let dir = scratch();
    let text = fuse_job(&fs, Length::Ios(100), 50, 1, "");
    fs.set(|f| f.fail_writes.push((2 * MIB..4 * MIB, libc::ENOSPC)));
    let (out, results) = run_job(dir.path(), "full", &text, &[]);
    out.expect_code(2).stderr_has(&[
        "the run did not start",
        "t.dat: cannot write data at offset 2097152: No space left on device",
    ]);
    assert!(
        !results.exists(),
        "a run that never started writes no results"
    );
    assert!(!results.with_extension("ndjson").exists());
    assert!(
        !fs.dir().join("t.dat").exists(),
        "the file made for the run is left"
    );
}

#[test]
fn a_short_read_is_an_error() {
    let Some(fs) = mount_or_skip("a_short_read_is_an_error") else {
        return;
    };
    let dir = scratch();
    let text = fuse_job(&fs, Length::Ios(2000), 100, 4, "");
    fs.set(|f| f.short_reads.push(FAIL_START..FAIL_END));
    // psync sees the half the filesystem returned. io_uring retries the rest of a short read
    // of a regular file itself, and each retry comes back half short again, down to nothing:
    // 2048 + 1024 + ... + 1 = 4095 bytes. Either way, fewer bytes than asked is an error.
    for (engine, transferred) in [("psync", Some(2048)), ("io_uring", None)] {
        let (out, results) = run_job(
            dir.path(),
            &format!("short-{engine}"),
            &text,
            &["--engine", engine],
        );
        out.expect_code(3);
        let v = load_json(&results);
        assert_eq!(str_at(&v, "/engine/name"), engine);
        let errors = u64_at(&v, "/totals/read/errors");
        assert!(errors > 0, "{engine}: no read errors");
        assert_eq!(target_errors(&v, 0, "read"), errors);
        check_details(&v, 0, "read", FAIL_START..FAIL_END, "short transfer: ");
        for d in array_at(&v, "/errors") {
            let text = str_at(d, "/error");
            let n: u64 = text
                .strip_prefix("short transfer: ")
                .and_then(|rest| rest.strip_suffix(" of 4096 bytes"))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{engine}: {text:?}"));
            match transferred {
                Some(expected) => assert_eq!(n, expected, "{engine}: {text:?}"),
                None => assert!(n < 4096, "{engine}: {text:?}"),
            }
        }
        check_io_error_verdict(&v, errors);
    }
}

/// Kills the child (by its pid) if the test ends while it still runs.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn a_run_stopped_with_a_read_that_never_returns_ends_with_its_results() {
    let Some(fs) =
        mount_or_skip("a_run_stopped_with_a_read_that_never_returns_ends_with_its_results")
    else {
        return;
    };
    let dir = scratch();
    let text = fuse_job(&fs, Length::UntilStopped, 100, 4, "");
    prepare(dir.path(), &text);
    // Reads of these 4 blocks are not answered until the test says so.
    fs.set(|f| f.hold_reads.push(FAIL_START..FAIL_END));
    // Whatever happens below, the held reads are answered in the end: a process cannot finish
    // exiting while the filesystem holds one of its reads.
    struct Answer<'a>(&'a FaultFs);
    impl Drop for Answer<'_> {
        fn drop(&mut self) {
            self.0.release();
        }
    }
    let _answer = Answer(&fs);
    let job = write_job(dir.path(), "slow.toml", &text);
    let results = dir.path().join("slow.json");
    let stderr = dir.path().join("stderr.txt");
    let mut child = Child(
        storlab(dir.path())
            .args(
                RunArgs::job(&job)
                    .flags(&["--engine", "io_uring"])
                    .results(&results)
                    .args(),
            )
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("start storlab"),
    );
    let stderr = || std::fs::read_to_string(&stderr).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(60);
    while fs.held() == 0 {
        if let Some(status) = child.0.try_wait().unwrap() {
            panic!(
                "storlab exited ({status}) before reading the slow blocks: {}",
                stderr()
            );
        }
        assert!(
            Instant::now() < deadline,
            "no read of the slow blocks in 60 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // A read of a slow block is in flight in storlab's ring (the filesystem has it and has not
    // answered, and never will on its own). Ctrl-C: the worker stops issuing and cannot get
    // that read back, so the watchdog keeps the promise that the first Ctrl-C ends a run
    // within two seconds: it writes the results the time series allows, says a thread did not
    // end, and ends the process (whose exit the kernel completes once the read is answered).
    let status = Command::new("kill")
        .args(["-INT", &child.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let v = loop {
        let written = std::fs::read_to_string(&results)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .filter(|v| {
                v["interrupted"]
                    .as_str()
                    .is_some_and(|r| r.contains("did not end"))
            });
        if let Some(v) = written {
            break v;
        }
        assert!(
            Instant::now() < deadline,
            "no results 30 s after Ctrl-C with a read in flight: {}",
            stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        fs.held() >= 1,
        "the read was answered before the results were written"
    );
    let reason = interrupted_reason(&v);
    assert!(reason.contains("SIGINT"), "interrupted: {reason}");
    // The filesystem answers; the process's exit completes.
    let answered = fs.release();
    assert!(answered >= 1);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "storlab still runs 30 s after its slow read was answered: {}",
            stderr()
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(status.code(), Some(1), "interrupted: {}", stderr());
    // Nothing wrote over the watchdog's results as the process ended; no I/O failed.
    assert_eq!(load_json(&results), v);
    assert_eq!(total_errors(&v), 0, "the held reads were not failed");
}

#[test]
fn html_report_shows_the_errors() {
    let Some(fs) = mount_or_skip("html_report_shows_the_errors") else {
        return;
    };
    let dir = scratch();
    let text = fuse_job(&fs, Length::Ios(2000), 100, 4, "");
    fs.set(|f| f.fail_reads = vec![(FAIL_START..FAIL_END, libc::EIO)]);
    let html = dir.path().join("report.html");
    let (out, results) = run_job(
        dir.path(),
        "html",
        &text,
        &["--html", html.to_str().unwrap()],
    );
    out.expect_code(3);
    let v = load_json(&results);
    let page = std::fs::read_to_string(&html).expect("the HTML report");
    assert!(page.contains("FAIL"), "the verdict is shown");
    assert!(page.contains("I/O errors"), "the verdict rule is shown");
    let heading = page
        .match_indices("<h2")
        .map(|(i, _)| &page[i..page[i..].find("</h2>").map_or(page.len(), |e| i + e)])
        .find(|h| h.to_lowercase().contains("error"))
        .unwrap_or_else(|| panic!("no <h2> heading about errors"));
    let section = &page[page.find(heading).unwrap()..];
    let first = &array_at(&v, "/errors")[0];
    assert!(
        section.contains("EIO"),
        "the errno is shown under {heading:?}"
    );
    assert!(
        section.contains(&u64_at(first, "/offset").to_string()),
        "the offset of the first failed I/O is shown under {heading:?}"
    );
}

/// A run that a read-only filesystem or an immutable file would stop at its first write: the
/// dry run refuses it (exit 2, the reason on the target's line, no `--destroy-data` advice),
/// and the run refuses it the same way before any I/O: exit 2, no results file, the reason
/// without `(os error N)`.
#[test]
fn failures_before_the_first_io_exit_2_without_results_and_the_dry_run_predicts_them() {
    const TEST: &str =
        "failures_before_the_first_io_exit_2_without_results_and_the_dry_run_predicts_them";
    if !rustix::process::geteuid().is_root() {
        return skip(TEST, "mounting a read-only tmpfs needs root");
    }
    let dir = scratch();
    // A read-only filesystem holding a file storlab did not create.
    let point = dir.path().join("ro");
    let mounted = match Mounted::new("tmpfs", Path::new("tmpfs"), &point, "size=16m") {
        Ok(m) => m,
        Err(e) => return skip(TEST, &e),
    };
    std::fs::write(point.join("data.dat"), vec![7u8; 4 << 20]).unwrap();
    let remount = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&point)
        .status()
        .unwrap();
    assert!(remount.success());
    // An immutable file (EPERM on any write, even as root) on the scratch disk.
    let immutable = dir.path().join("immutable.dat");
    std::fs::write(&immutable, vec![7u8; 4 << 20]).unwrap();
    let chattr = Command::new("chattr").arg("+i").arg(&immutable).status();
    if !chattr.is_ok_and(|s| s.success()) {
        return skip(
            TEST,
            "chattr +i does not work here (e2fsprogs, a filesystem with flags)",
        );
    }
    let cases = [
        (point.join("data.dat"), "read-only filesystem"),
        (point.join("new.dat"), "read-only filesystem"),
        (immutable.clone(), "operation not permitted"),
    ];
    for (target, why) in &cases {
        let flags = [
            "--read",
            "50",
            "--destroy-data",
            "--size",
            "4MiB",
            "--duration",
            "1s",
        ];
        let dry = RunArgs::target(target)
            .flags(&flags)
            .flags(&["--dry-run"])
            .run(dir.path());
        dry.expect_code(2);
        assert!(
            dry.stdout.contains("REFUSED") && dry.stdout.contains(why),
            "{}: {}",
            target.display(),
            dry.stdout
        );
        assert!(
            !dry.stdout.contains("pass --destroy-data"),
            "{}",
            dry.stdout
        );
        let results = dir.path().join("never.json");
        let out = RunArgs::target(target)
            .flags(&flags)
            .results(&results)
            .run(dir.path());
        out.expect_code(2);
        assert!(
            out.stderr.contains(why),
            "{}: {}",
            target.display(),
            out.stderr
        );
        assert!(!out.stderr.contains("os error"), "{}", out.stderr);
        assert!(
            !results.exists(),
            "a run that never started writes no results"
        );
    }
    let _ = Command::new("chattr").arg("-i").arg(&immutable).status();
    drop(mounted);
}

#[test]
fn target_larger_than_the_free_space_fails_preparation_cleanly() {
    const TEST: &str = "target_larger_than_the_free_space_fails_preparation_cleanly";
    if let Some(reason) = loop_skip_reason(&["mkfs.ext4", "e2fsck"]) {
        return skip(TEST, &reason);
    }
    let dir = scratch();
    let image = dir.path().join("small.img");
    sparse_image(&image, 32 * MIB);
    let device = match LoopDevice::attach(&image, false) {
        Ok(d) => d,
        Err(e) => return skip(TEST, &e),
    };
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&device.path)
        .output()
        .unwrap();
    assert!(mkfs.status.success(), "mkfs.ext4: {mkfs:?}");
    let mountpoint = dir.path().join("mnt");
    let mounted = match Mounted::new("ext4", &device.path, &mountpoint, "") {
        Ok(m) => m,
        Err(e) => return skip(TEST, &e),
    };
    // Something else on the filesystem that must survive.
    let keep = mountpoint.join("keep.dat");
    let kept: Vec<u8> = (0..MIB as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(&keep, &kept).unwrap();

    let target = mountpoint.join("big.dat");
    let results = dir.path().join("big.json");
    let out = RunArgs::target(&target)
        .size("64MiB")
        .flags(&["--bs", "4k", "--duration", "1s"])
        .results(&results)
        .run(dir.path());
    // Refused before anything is written: a failure before the first I/O exits 2 and
    // leaves no results file; the dry run said so first.
    out.expect_code(2);
    assert!(
        !results.exists(),
        "no results file for a run that never started"
    );
    let dry = RunArgs::target(&target)
        .size("64MiB")
        .flags(&["--dry-run"])
        .run(dir.path());
    dry.expect_code(2);
    assert!(
        dry.stdout.contains("REFUSED") && dry.stdout.contains("free"),
        "{}",
        dry.stdout
    );
    assert!(!out.stderr.contains("panicked"), "{out:?}");
    assert!(
        out.stderr.contains("space"),
        "the message names the missing space: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("big.dat"),
        "the message names the target: {}",
        out.stderr
    );
    assert_eq!(
        std::fs::read(&keep).unwrap(),
        kept,
        "another file was damaged"
    );
    assert!(
        out.stderr.contains("free") && out.stderr.matches("os error 28").count() <= 1,
        "the message gives the free space once: {}",
        out.stderr
    );
    assert!(
        !target.exists() && !mountpoint.join("big.dat.storlab.json").exists(),
        "the failed preparation gives its space back"
    );
    eprintln!(
        "{TEST}: exit {:?}, stderr: {}; left on the filesystem: {:?}; results file: {}",
        out.code,
        out.stderr.trim(),
        std::fs::read_dir(&mountpoint)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name(), e.metadata().unwrap().len())
            })
            .collect::<Vec<_>>(),
        results.exists()
    );
    drop(mounted);
    let fsck = Command::new("e2fsck")
        .args(["-f", "-n"])
        .arg(&device.path)
        .output()
        .unwrap();
    assert!(
        fsck.status.success(),
        "the filesystem is damaged: {}",
        String::from_utf8_lossy(&fsck.stdout)
    );
}
