//! Stopping a run in every phase: SIGINT or SIGTERM during prepare, ramp and measure, a
//! second signal during the clean-up, and a pipe planted where the clean-up once waited
//! (`one_run`); during a step of a `[cycle]` sequence, a repetition, the pause between
//! repetitions and a rate-curve level (`sequences`); during the initialisation of Exchange
//! databases, Exchange thread tuning and the Exchange test (`exchange`); a panic in each kind
//! of thread, a stuck worker, and jobs that would have hung refused up front (`failures`). The
//! real binary stops within [`STOP_LIMIT`], with exit code 1 and a valid results file that
//! says why and where it stopped and the state of every phase and step; a second signal during
//! the clean-up exits at once (130). After `kill -9` the NDJSON time series is readable and
//! `storlab report` builds reports from it (`time_series`); a file whose preparation was cut
//! short (by a signal or by `kill -9`) is prepared again, never reused.

mod exchange;
mod failures;
mod one_run;
mod sequences;
mod time_series;

use crate::harness::{JobFile, RunArgs, array_at, load_json, run_in, storlab, str_at};
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a run may take to exit after SIGINT or SIGTERM. The requirement is that the work
/// stops within a second; on a quiet machine the whole exit takes a few hundred milliseconds
/// (printed by every test). But the exit ends with the clean-up (the results file written and
/// synced, the time series flushed), and a disk busy with other tests' writes can hold a sync
/// up for seconds: on a loaded machine the exit time is the disk's. So the bound here is one
/// no load reaches, which still tells a run the signal stopped from one that went on: every
/// run interrupted here has a phase of 30 s or more ahead of it, or (the short cycles,
/// repetitions and curve levels, and preparation) phase states that show where it stopped.
/// The one second itself is checked on storlab's own clock, where the disk does not enter:
/// see `sigint_during_measure_writes_interrupted_results`.
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// How long to wait for a run to reach the phase a test interrupts.
const REACH_LIMIT: Duration = Duration::from_secs(60);

/// A running storlab, killed (by its pid) if the test ends while it still runs.
struct Running {
    child: Child,
    dir: PathBuf,
}

impl Running {
    fn start(dir: &Path, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Running {
        let stderr = std::fs::File::create(dir.join("stderr.txt")).unwrap();
        let child = storlab(dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("start storlab");
        Running {
            child,
            dir: dir.to_path_buf(),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (`INT`, `TERM`, `KILL`) with kill(1).
    fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} failed");
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default()
    }

    fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("wait for storlab")
    }

    /// Waits up to `limit` for the process to exit.
    fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Polls `ready` every 5 ms for up to [`REACH_LIMIT`]; panics (with storlab's stderr) on
    /// timeout or if storlab exits first.
    fn wait_until(&mut self, what: &str, ready: impl Fn() -> bool) {
        let deadline = Instant::now() + REACH_LIMIT;
        while !ready() {
            if let Some(status) = self.exited() {
                panic!("storlab exited ({status}) before {what}: {}", self.stderr());
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Sends `signal` and waits for the exit, which must come within [`STOP_LIMIT`].
    #[track_caller]
    fn stop(&mut self, signal: &str) -> ExitStatus {
        self.signal(signal);
        let sent = Instant::now();
        let status = self
            .wait_for(STOP_LIMIT + Duration::from_secs(5))
            .unwrap_or_else(|| panic!("storlab still runs 15 s after SIG{signal}"));
        let took = sent.elapsed();
        eprintln!("exit {took:?} after SIG{signal}");
        assert!(
            took <= STOP_LIMIT,
            "exit took {took:?} after SIG{signal} (limit {STOP_LIMIT:?}): {}",
            self.stderr()
        );
        status
    }

    /// Waits until `ready` (as [`Running::wait_until`] does), lets the run go on for
    /// `settle` so that it is well inside what `what` names, then sends `signal` and waits
    /// for the exit (as [`Running::stop`] does).
    #[track_caller]
    fn stop_after(
        &mut self,
        what: &str,
        ready: impl Fn() -> bool,
        settle: Duration,
        signal: &str,
    ) -> ExitStatus {
        self.wait_until(what, ready);
        std::thread::sleep(settle);
        self.stop(signal)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `(name, state)` of every phase.
fn phases(v: &Value) -> Vec<(String, String)> {
    array_at(v, "/phases")
        .iter()
        .map(|p| {
            (
                str_at(p, "/name").to_owned(),
                str_at(p, "/state").to_owned(),
            )
        })
        .collect()
}

/// Panics unless the phases of the results `v` are `list`, in order, as `(name, state)`.
#[track_caller]
fn assert_phases(v: &Value, list: &[(&str, &str)]) {
    let expected: Vec<(String, String)> = list
        .iter()
        .map(|(n, s)| (n.to_string(), s.to_string()))
        .collect();
    assert_eq!(phases(v), expected);
}

/// The checks every interrupted run passes: exit code 1; a results file that reads back
/// through `storlab report`; `interrupted` names the signal and contains every part of
/// `during`; every phase is completed, interrupted or not started. Returns the results.
#[track_caller]
fn interrupted(
    run: &Running,
    status: ExitStatus,
    results: &Path,
    by: &str,
    during: &[&str],
) -> Value {
    assert_eq!(
        status.code(),
        Some(1),
        "an interrupted run exits with 1: {status}; {}",
        run.stderr()
    );
    let v = load_json(results);
    let reason = str_at(&v, "/interrupted");
    assert!(
        reason.contains(by) && during.iter().all(|d| reason.contains(d)),
        "interrupted: {reason:?}, expected {by} and {during:?}"
    );
    for (name, state) in phases(&v) {
        assert!(
            ["completed", "interrupted", "not_started"].contains(&state.as_str()),
            "phase {name}: state {state}"
        );
    }
    run_in(&run.dir, ["report", s(results)]).expect_ok();
    v
}

/// The complete lines of an NDJSON time series, parsed (a last line without its newline is
/// left out: the writer may be in the middle of it).
fn records(path: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let complete = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => "",
    };
    complete
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {l:?}: {e}", path.display()))
        })
        .collect()
}

/// Whether the time series has a complete record matching `f`.
fn has_record(path: &Path, f: impl Fn(&Value) -> bool) -> bool {
    records(path).iter().any(f)
}

/// A record's label, or "".
fn label(r: &Value) -> &str {
    r.get("label").and_then(Value::as_str).unwrap_or("")
}

/// A record's step index.
fn step(r: &Value) -> Option<u64> {
    r.get("step").and_then(Value::as_u64)
}

/// The manifest storlab keeps beside a prepared file.
fn manifest(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Starts `storlab run` of a job with the run keys `head` (a [`JobFile`] on a 16 MiB file
/// `t.dat` in `dir`: 4 KiB random I/O, 70% reads) in `dir`, its results in `NAME.json`.
/// Returns the run, the results file and the time series beside it.
fn start_job(dir: &Path, head: &str, name: &str) -> (Running, PathBuf, PathBuf) {
    let job = JobFile::on(&dir.join("t.dat"), head)
        .named()
        .read("70%")
        .write(dir, "job.toml");
    let results = dir.join(format!("{name}.json"));
    let run = Running::start(dir, RunArgs::job(&job).results(&results).args());
    (run, results.clone(), results.with_extension("ndjson"))
}

/// A one-line run on `target` of `size` (4 KiB blocks, 70% reads, queue depth 4) with `extra`
/// flags, results to `results`.
fn one_line(target: &Path, size: &str, results: &Path, extra: &[&str]) -> RunArgs {
    RunArgs::target(target)
        .size(size)
        .flags(&["--bs", "4k", "--read", "70", "--qd", "4"])
        .results(results)
        .flags(extra)
}
