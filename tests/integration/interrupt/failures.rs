//! Nothing hangs: a panic in each kind of thread (a worker, the collector, the host sampler,
//! the live view's server; injected with the debug build's fault hook `STORLAB_TEST_PANIC`)
//! ends the run with exit code 1 and results marked failed with the thread and the panic's
//! message; SIGINT and SIGTERM end a run whose worker is stuck (it never looks at the stop
//! flag); a pinned CPU out of range and I/O buffers larger than memory are refused before
//! any I/O (exit 2). Runs over many hosts have no thread of their own outside tests (MPI runs
//! on the calling thread), so there is no cluster thread to make fail.

use super::{Running, interrupted, one_line};
use crate::harness::{JobFile, RunArgs, run_in, scratch, skip, storlab, str_at};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// How long a run whose thread failed may take to exit. The requirement is a second after the
/// failure; the bound is one no load reaches (the exit writes and syncs the results file)
/// while a run that hangs, or goes on to the end of its 60 s, fails it.
const FAIL_LIMIT: Duration = Duration::from_secs(30);

/// Starts `args` in `dir` with the fault hook set to `fault`.
fn start_with_fault(dir: &Path, args: &RunArgs, fault: &str) -> Running {
    let stderr = std::fs::File::create(dir.join("stderr.txt")).unwrap();
    let child = storlab(dir)
        .args(args.args())
        .env("STORLAB_TEST_PANIC", fault)
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr))
        .spawn()
        .expect("start storlab");
    Running {
        child,
        dir: dir.to_path_buf(),
    }
}

#[test]
fn a_panic_in_each_kind_of_thread_ends_the_run_with_failed_results() {
    for (fault, thread) in [
        ("worker", "worker"),
        ("collector", "the collector"),
        ("sampler", "the collector"),
        ("live", "the live view's server"),
    ] {
        let dir = scratch();
        let results = dir.path().join(format!("{fault}.json"));
        let args = one_line(
            &dir.path().join("t.dat"),
            "16MiB",
            &results,
            &["--duration", "60s", "--serve", "0"],
        );
        let mut run = start_with_fault(dir.path(), &args, fault);
        let status = run
            .wait_for(FAIL_LIMIT)
            .unwrap_or_else(|| panic!("a panic in the {fault} thread hangs the run"));
        assert_eq!(
            status.code(),
            Some(1),
            "{fault}: a failed run exits 1: {}",
            run.stderr()
        );
        let v = crate::harness::load_json(&results);
        let reason = str_at(&v, "/interrupted");
        let message = format!("test fault injected into the {fault} thread");
        assert!(
            reason.contains("failed")
                && reason.contains(thread)
                && reason.contains("panicked")
                && reason.contains(&message),
            "{fault}: interrupted = {reason:?}"
        );
        run_in(dir.path(), ["report", results.to_str().unwrap()]).expect_ok();
    }
}

#[test]
fn sigint_and_sigterm_end_a_run_whose_worker_is_stuck() {
    for (signal, by) in [("INT", "SIGINT"), ("TERM", "SIGTERM")] {
        let dir = scratch();
        let results = dir.path().join("stuck.json");
        let args = one_line(
            &dir.path().join("t.dat"),
            "16MiB",
            &results,
            &["--duration", "60s"],
        );
        let mut run = start_with_fault(dir.path(), &args, "worker-stuck");
        // The results file written as the workers start: the worker is stuck from there on.
        run.wait_until("the workers to start", || results.exists());
        std::thread::sleep(Duration::from_millis(300));
        let status = run.stop(signal);
        let v = interrupted(&run, status, &results, by, &[]);
        let reason = str_at(&v, "/interrupted");
        assert!(
            reason.contains("did not end within"),
            "the results do not say a thread did not end: {reason:?}"
        );
    }
}

#[test]
fn a_cpu_out_of_range_is_refused_before_any_io() {
    let dir = scratch();
    let target = dir.path().join("t.dat");
    let job = JobFile::on(&target, "duration = \"60s\"")
        .named()
        .worker_keys("cpus = [100000]")
        .write(dir.path(), "cpus.toml");
    let results = dir.path().join("cpus.json");
    // The dry run predicts the refusal.
    let dry = RunArgs::job(&job).flags(&["--dry-run"]).run(dir.path());
    dry.expect_code(2)
        .stdout_has(&["REFUSED: `cpus`", "CPU 100000", "refused (for its workers)"]);
    let out = RunArgs::job(&job).results(&results).run(dir.path());
    out.expect_code(2)
        .stderr_has(&["`cpus`", "worker `w`", "CPU 100000", "CPUs 0"]);
    assert!(!results.exists(), "a refused run wrote results");
    assert!(!target.exists(), "a refused run created its target");
}

#[test]
fn io_buffers_larger_than_memory_are_refused_before_any_io() {
    // 32,768 I/Os of 64 MiB in flight: 2 TiB of buffers.
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib: u64 = (meminfo.lines())
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    if kib >= 2 << 30 {
        skip(
            "io_buffers_larger_than_memory_are_refused_before_any_io",
            "this host has 2 TiB of memory or more",
        );
        return;
    }
    let dir = scratch();
    let target = dir.path().join("t.dat");
    let text = JobFile::on(&target, "duration = \"60s\"")
        .named()
        .queue_depth(32768)
        .text()
        .replace("16MiB", "64MiB")
        .replace("\"4k\"", "\"64MiB\"");
    let job = crate::harness::write_job(dir.path(), "huge.toml", &text);
    let results = dir.path().join("huge.json");
    let dry = RunArgs::job(&job).flags(&["--dry-run"]).run(dir.path());
    dry.expect_code(2)
        .stdout_has(&["REFUSED: the workers' I/O buffers need 2 TiB"]);
    let out = RunArgs::job(&job).results(&results).run(dir.path());
    out.expect_code(2).stderr_has(&[
        "I/O buffers need 2 TiB",
        "queue_depth 32768 × 64 MiB",
        "of memory",
    ]);
    assert!(!results.exists(), "a refused run wrote results");
}
