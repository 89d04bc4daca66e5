//! Stopping a run in every phase: SIGINT or SIGTERM during prepare, ramp, measure, a step of a
//! `[cycle]` sequence, a repetition, the pause between repetitions, a rate-curve level, the
//! initialisation of Exchange databases, Exchange thread tuning and the Exchange test stops
//! the real binary within [`STOP_LIMIT`], with exit code 1 and a valid results file that says
//! why and where it stopped and the state of every phase and step. A second signal during the
//! clean-up exits at once (130). After `kill -9` the NDJSON time series is readable and
//! `storlab report` builds reports from it; a file whose preparation was cut short (by a
//! signal or by `kill -9`) is prepared again, never reused.

use crate::harness::{MIB, array_at, at, load_json, run_in, scratch, storlab, str_at, u64_at};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a run may take to exit after SIGINT or SIGTERM. The requirement is one second;
/// half a second more is allowed because this machine (2 cores) is shared with other test
/// binaries and builds, which can delay any process by that much.
const STOP_LIMIT: Duration = Duration::from_millis(1500);

/// How long to wait for a run to reach the phase a test interrupts.
const REACH_LIMIT: Duration = Duration::from_secs(60);

/// A running storlab, killed (by its pid) if the test ends while it still runs.
struct Running {
    child: Child,
    dir: PathBuf,
}

impl Running {
    fn start(dir: &Path, args: &[&str]) -> Running {
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
            .wait_for(Duration::from_secs(10))
            .unwrap_or_else(|| panic!("storlab still runs 10 s after SIG{signal}"));
        let took = sent.elapsed();
        eprintln!("exit {took:?} after SIG{signal}");
        assert!(
            took <= STOP_LIMIT,
            "exit took {took:?} after SIG{signal} (limit {STOP_LIMIT:?}): {}",
            self.stderr()
        );
        status
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

/// `[(name, state)]` as owned strings, to compare with [`phases`].
fn expect(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, s)| (n.to_string(), s.to_string()))
        .collect()
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

/// Writes a job file.
fn write_job(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

/// A job on a 16 MiB file `t.dat` in `dir`: `head` holds the run keys, `access_extra` more
/// keys of the access entry.
fn job(dir: &Path, head: &str) -> PathBuf {
    write_job(
        dir,
        "job.toml",
        &format!(
            r#"{head}

[[target]]
name = "t"
path = "{}"
size = "16MiB"

[[worker]]
name = "w"
queue_depth = 4
[[worker.access]]
class = "c"
block_size = "4k"
read = "70%"
random = "100%"
"#,
            dir.join("t.dat").display()
        ),
    )
}

// ---- One run: prepare, ramp, measure ---------------------------------------------------------

/// The arguments of a one-line run on `target` of `size`, results to `results`.
fn one_line(target: &Path, size: &str, results: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "run",
        "--target",
        s(target),
        "--size",
        size,
        "--bs",
        "4k",
        "--read",
        "70",
        "--qd",
        "4",
        "-q",
        "-o",
        s(results),
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    a.extend(extra.iter().map(|x| x.to_string()));
    a
}

fn strs(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}

#[test]
fn sigint_during_prepare_leaves_the_file_marked_incomplete() {
    let dir = scratch();
    let target = dir.path().join("big.dat");
    let manifest_path = dir.path().join("big.dat.storlab.json");
    let size = 256 * MIB;
    let results = dir.path().join("p1.json");
    let args = |results: &Path| one_line(&target, "256MiB", results, &["--duration", "1s"]);
    let mut run = Running::start(dir.path(), &strs(&args(&results)));
    // Preparation has begun once the manifest (complete = false) is there.
    run.wait_until("preparation to start", || {
        manifest(&manifest_path).is_some()
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(&run, status, &results, "SIGINT", &["prepare"]);
    assert_eq!(phases(&v), expect(&[("prepare", "interrupted")]));
    let m = manifest(&manifest_path).expect("the manifest is still there");
    assert_eq!(
        at(&m, "/complete"),
        &Value::Bool(false),
        "an interrupted preparation is marked complete: {m}"
    );
    let half_seed = at(&m, "/data_seed").clone();

    // The next run prepares the file again instead of reusing the half-written one.
    let results = dir.path().join("p2.json");
    run_in(dir.path(), args(&results)).expect_ok();
    let v = load_json(&results);
    assert_eq!(at(&v, "/targets/0/prepare/reused"), &Value::Bool(false));
    assert_eq!(u64_at(&v, "/targets/0/prepare/written_bytes"), size);
    let m = manifest(&manifest_path).unwrap();
    assert_eq!(at(&m, "/complete"), &Value::Bool(true));
    assert_ne!(at(&m, "/data_seed"), &half_seed, "the data seed was reused");
    assert_eq!(std::fs::metadata(&target).unwrap().len(), size);
}

#[test]
fn kill_9_during_prepare_then_the_same_command_prepares_again() {
    let dir = scratch();
    let target = dir.path().join("big.dat");
    let manifest_path = dir.path().join("big.dat.storlab.json");
    let size = 256 * MIB;
    let results = dir.path().join("k.json");
    let args = one_line(&target, "256MiB", &results, &["--duration", "1s"]);
    let mut run = Running::start(dir.path(), &strs(&args));
    run.wait_until("preparation to start", || {
        manifest(&manifest_path).is_some()
    });
    std::thread::sleep(Duration::from_millis(300));
    run.signal("KILL");
    let status = run.wait_for(Duration::from_secs(10)).expect("kill -9");
    assert_eq!(status.code(), None, "killed by a signal: {status}");
    assert!(
        !results.exists(),
        "a run killed while preparing wrote results"
    );
    let m = manifest(&manifest_path).expect("the manifest is there");
    assert_eq!(at(&m, "/complete"), &Value::Bool(false), "{m}");
    let half_seed = at(&m, "/data_seed").clone();
    assert!(std::fs::metadata(&target).unwrap().len() > 0);

    // The same command again: the half-written file is detected and prepared again.
    run_in(dir.path(), &args).expect_ok();
    let v = load_json(&results);
    assert_eq!(at(&v, "/targets/0/prepare/reused"), &Value::Bool(false));
    assert_eq!(u64_at(&v, "/targets/0/prepare/written_bytes"), size);
    let m = manifest(&manifest_path).unwrap();
    assert_eq!(at(&m, "/complete"), &Value::Bool(true));
    assert_ne!(at(&m, "/data_seed"), &half_seed, "the data seed was reused");
    // And a third run reuses the now complete file.
    run_in(dir.path(), &args).expect_ok();
    let v = load_json(&results);
    assert_eq!(at(&v, "/targets/0/prepare/reused"), &Value::Bool(true));
}

#[test]
fn sigterm_during_ramp_stops_before_measurement() {
    let dir = scratch();
    let target = dir.path().join("r.dat");
    let results = dir.path().join("r.json");
    let ndjson = dir.path().join("r.ndjson");
    let args = one_line(
        &target,
        "16MiB",
        &results,
        &["--ramp", "30s", "--duration", "30s", "--interval", "200ms"],
    );
    let mut run = Running::start(dir.path(), &strs(&args));
    run.wait_until("the first ramp interval", || {
        has_record(&ndjson, |r| r["phase"] == "ramp")
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("TERM");
    let v = interrupted(&run, status, &results, "SIGTERM", &["ramp"]);
    assert_eq!(
        phases(&v),
        expect(&[
            ("prepare", "completed"),
            ("ramp", "interrupted"),
            ("measure", "not_started")
        ])
    );
    assert_eq!(u64_at(&v, "/measured_ms"), 0);
    let ts = array_at(&v, "/timeseries");
    assert!(!ts.is_empty());
    assert!(ts.iter().all(|r| r["phase"] == "ramp"), "{ts:?}");
}

#[test]
fn sigint_during_measure_writes_interrupted_results() {
    let dir = scratch();
    let target = dir.path().join("i.dat");
    let results = dir.path().join("i.json");
    let ndjson = dir.path().join("i.ndjson");
    let args = one_line(&target, "32MiB", &results, &["--duration", "30s"]);
    let mut run = Running::start(dir.path(), &strs(&args));
    // Measurement has run for at least one interval (1 s) once the first NDJSON line is there.
    run.wait_until("the first interval", || !records(&ndjson).is_empty());
    std::thread::sleep(Duration::from_millis(500));
    let status = run.stop("INT");
    let v = interrupted(&run, status, &results, "SIGINT", &["measure"]);
    assert_eq!(
        phases(&v),
        expect(&[("prepare", "completed"), ("measure", "interrupted")])
    );
    let measured_ms = u64_at(&v, "/measured_ms");
    assert!(
        (1000..10_000).contains(&measured_ms),
        "measured_ms {measured_ms} for a run stopped after ~1.5 s"
    );
    assert!(u64_at(&v, "/totals/read/ops") > 0);
    assert!(u64_at(&v, "/totals/write/ops") > 0);
    let ts = array_at(&v, "/timeseries");
    assert!(!ts.is_empty());
    assert_eq!(records(&ndjson).len(), ts.len(), "NDJSON lines vs inline");
}

#[test]
fn second_sigint_during_the_clean_up_exits_at_once_with_130() {
    let dir = scratch();
    let target = dir.path().join("big.dat");
    let manifest_path = dir.path().join("big.dat.storlab.json");
    let results = dir.path().join("r.json");
    // The results are written to r.json.tmp first: a named pipe there makes the clean-up
    // block (opening a pipe for writing waits for a reader), so the second signal surely
    // arrives while the clean-up runs.
    let pipe = dir.path().join("r.json.tmp");
    let made = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo failed");
    let args = one_line(&target, "256MiB", &results, &["--duration", "1s"]);
    let mut run = Running::start(dir.path(), &strs(&args));
    run.wait_until("preparation to start", || {
        manifest(&manifest_path).is_some()
    });
    std::thread::sleep(Duration::from_millis(200));
    run.signal("INT");
    // Preparation stops, and the clean-up waits on the pipe: the process stays.
    assert!(
        run.wait_for(Duration::from_millis(1000)).is_none(),
        "storlab exited although its results file could not be opened: {}",
        run.stderr()
    );
    let wchan = std::fs::read_to_string(format!("/proc/{}/wchan", run.pid())).unwrap_or_default();
    eprintln!("waiting in {wchan:?}");
    let status = run.stop("INT");
    assert_eq!(
        status.code(),
        Some(130),
        "the second SIGINT exits with 130: {status}; {}",
        run.stderr()
    );
    assert!(!results.exists());
    let m = manifest(&manifest_path).unwrap();
    assert_eq!(at(&m, "/complete"), &Value::Bool(false));
}

// ---- Sequences ------------------------------------------------------------------------------

#[test]
fn sigint_in_the_middle_step_of_a_cycle() {
    let dir = scratch();
    let job = job(
        dir.path(),
        r#"duration = "3s"
interval = "200ms"
ramp = "0s"

[cycle]
block_size = ["4k", "8k", "16k"]"#,
    );
    let results = dir.path().join("c.json");
    let ndjson = dir.path().join("c.ndjson");
    let mut run = Running::start(dir.path(), &["run", s(&job), "-q", "-o", s(&results)]);
    run.wait_until("step 1", || has_record(&ndjson, |r| step(r) == Some(1)));
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(&run, status, &results, "SIGINT", &["step 1", "measure"]);
    assert_eq!(
        phases(&v),
        expect(&[
            ("prepare", "completed"),
            ("step 0", "completed"),
            ("step 1", "interrupted"),
            ("step 2", "not_started"),
        ])
    );
    let steps = array_at(&v, "/steps");
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert_eq!(at(&steps[0], "/interrupted"), &Value::Bool(false));
    assert_eq!(at(&steps[1], "/interrupted"), &Value::Bool(true));
    assert!(u64_at(&steps[1], "/measured_ms") > 0);
    assert!(u64_at(&steps[1], "/totals/read/ops") > 0);
    assert_eq!(records(&ndjson).len(), array_at(&v, "/timeseries").len());
}

#[test]
fn sigint_during_a_repetition() {
    let dir = scratch();
    let job = job(
        dir.path(),
        r#"duration = "2s"
interval = "200ms"
ramp = "0s"
repeat = 3

[cycle]
block_size = ["4k", "8k"]"#,
    );
    let results = dir.path().join("rep.json");
    let ndjson = dir.path().join("rep.ndjson");
    let mut run = Running::start(dir.path(), &["run", s(&job), "-q", "-o", s(&results)]);
    run.wait_until("rep 2 of step 0", || {
        has_record(&ndjson, |r| step(r) == Some(0) && label(r) == "rep 2")
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(
        &run,
        status,
        &results,
        "SIGINT",
        &["step 0 rep 2", "measure"],
    );
    assert_eq!(
        phases(&v),
        expect(&[
            ("prepare", "completed"),
            ("step 0 rep 1", "completed"),
            ("step 0 rep 2", "interrupted"),
            ("step 0 rep 3", "not_started"),
            ("step 1", "not_started"),
        ])
    );
    let steps = array_at(&v, "/steps");
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(at(&steps[0], "/interrupted"), &Value::Bool(true));
    assert_eq!(array_at(&steps[0], "/repetitions/runs").len(), 2);
}

#[test]
fn sigint_during_the_pause_between_repetitions() {
    let dir = scratch();
    let job = job(
        dir.path(),
        r#"duration = "1s"
interval = "200ms"
ramp = "0s"
repeat = 2
pause = "30s""#,
    );
    let results = dir.path().join("pause.json");
    let ndjson = dir.path().join("pause.ndjson");
    let mut run = Running::start(dir.path(), &["run", s(&job), "-q", "-o", s(&results)]);
    // Rep 1 has ended once its last interval (ending at 1 s) is written.
    run.wait_until("the end of rep 1", || {
        has_record(&ndjson, |r| {
            label(r) == "rep 1" && r["t_end_ms"].as_u64().unwrap_or(0) >= 1000
        })
    });
    std::thread::sleep(Duration::from_millis(500));
    let status = run.stop("INT");
    let v = interrupted(&run, status, &results, "SIGINT", &["pause", "step 0 rep 2"]);
    assert_eq!(
        phases(&v),
        expect(&[
            ("prepare", "completed"),
            ("step 0 rep 1", "completed"),
            ("step 0 rep 2", "not_started"),
        ])
    );
    let steps = array_at(&v, "/steps");
    assert_eq!(steps.len(), 1);
    assert_eq!(at(&steps[0], "/interrupted"), &Value::Bool(true));
    assert!(u64_at(&steps[0], "/measured_ms") >= 900);
}

#[test]
fn sigint_during_a_rate_curve_level() {
    let dir = scratch();
    let job = job(
        dir.path(),
        r#"duration = "2s"
interval = "200ms"
ramp = "0s"
curve = [25, 50, 75]"#,
    );
    let results = dir.path().join("curve.json");
    let ndjson = dir.path().join("curve.ndjson");
    let mut run = Running::start(dir.path(), &["run", s(&job), "-q", "-o", s(&results)]);
    run.wait_until("the 50% level", || {
        has_record(&ndjson, |r| label(r) == "curve 50%")
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(&run, status, &results, "SIGINT", &["step 2", "measure"]);
    assert_eq!(
        phases(&v),
        expect(&[
            ("prepare", "completed"),
            ("step 0", "completed"),
            ("step 1", "completed"),
            ("step 2", "interrupted"),
            ("step 3", "not_started"),
        ])
    );
    let steps = array_at(&v, "/steps");
    let kinds: Vec<&str> = steps.iter().map(|s| str_at(s, "/kind")).collect();
    assert_eq!(kinds, ["curve-max", "curve-level", "curve-level"]);
    let cut: Vec<bool> = steps
        .iter()
        .map(|s| at(s, "/interrupted").as_bool().unwrap())
        .collect();
    assert_eq!(cut, [false, false, true]);
}

// ---- Exchange -------------------------------------------------------------------------------

/// `storlab exchange` arguments: one database of `mailbox_size` × 100 mailboxes × 1% in `dir`,
/// lenient latency limits, results to `results`.
fn exchange_args(dir: &Path, mailbox_size: &str, results: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "exchange",
        "--mailboxes",
        "100",
        "--mailbox-size",
        mailbox_size,
        "--capacity",
        "1%",
        "--databases",
        "1",
        "--db-path",
        s(dir),
        "--db-read-latency",
        "500ms",
        "--log-write-latency",
        "500ms",
        "--max-latency",
        "5s",
        "-q",
        "-o",
        s(results),
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    a.extend(extra.iter().map(|x| x.to_string()));
    a
}

#[test]
fn sigint_during_exchange_database_initialisation() {
    let dir = scratch();
    let results = dir.path().join("x.json");
    // One database of 512 MiB: several seconds to initialise.
    let args = exchange_args(dir.path(), "512MiB", &results, &["--duration", "30s"]);
    let manifest_path = dir.path().join("storlab-db1.edb.storlab.json");
    let mut run = Running::start(dir.path(), &strs(&args));
    run.wait_until("initialisation to start", || {
        manifest(&manifest_path).is_some()
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(
        &run,
        status,
        &results,
        "SIGINT",
        &["database initialisation"],
    );
    assert_eq!(
        phases(&v),
        expect(&[
            ("initialise", "interrupted"),
            ("ramp", "not_started"),
            ("measure", "not_started"),
        ])
    );
    assert!(v.get("verdict").is_none(), "an interrupted run was judged");
    let m = manifest(&manifest_path).unwrap();
    assert_eq!(at(&m, "/complete"), &Value::Bool(false));
}

#[test]
fn sigint_during_the_exchange_test() {
    let dir = scratch();
    let results = dir.path().join("x.json");
    let ndjson = dir.path().join("x.ndjson");
    let args = exchange_args(
        dir.path(),
        "32MiB",
        &results,
        &["--threads", "1", "--duration", "30s", "--ramp", "1s"],
    );
    let mut run = Running::start(dir.path(), &strs(&args));
    run.wait_until("measurement", || {
        has_record(&ndjson, |r| r["phase"] == "measure")
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(&run, status, &results, "SIGINT", &["the test", "measure"]);
    assert_eq!(
        phases(&v),
        expect(&[
            ("initialise", "completed"),
            ("ramp", "completed"),
            ("measure", "interrupted"),
        ])
    );
    assert!(v.get("verdict").is_none(), "an interrupted run was judged");
    assert!(u64_at(&v, "/measured_ms") > 0);
    assert!(!array_at(&v, "/exchange/databases").is_empty());
}

#[test]
fn sigint_during_exchange_thread_tuning() {
    let dir = scratch();
    let results = dir.path().join("x.json");
    let ndjson = dir.path().join("x.ndjson");
    // A 60 s test: each tuning trial lasts 10 s.
    let args = exchange_args(
        dir.path(),
        "32MiB",
        &results,
        &["--threads", "auto", "--duration", "60s", "--ramp", "1s"],
    );
    let mut run = Running::start(dir.path(), &strs(&args));
    run.wait_until("the first trial's measurement", || {
        has_record(&ndjson, |r| r["phase"] == "measure")
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(
        &run,
        status,
        &results,
        "SIGINT",
        &["thread tuning", "measure"],
    );
    assert_eq!(
        phases(&v),
        expect(&[
            ("initialise", "completed"),
            ("threads", "interrupted"),
            ("ramp", "not_started"),
            ("measure", "not_started"),
        ])
    );
    assert!(v.get("verdict").is_none(), "an interrupted run was judged");
    let trials = array_at(&v, "/exchange/thread_trials");
    assert_eq!(trials.len(), 1, "{trials:?}");
}

// ---- kill -9 and reports from the time series ------------------------------------------------

#[test]
fn kill_9_during_measure_leaves_a_time_series_reports_are_made_from() {
    let dir = scratch();
    let target = dir.path().join("k.dat");
    let results = dir.path().join("run.json");
    let ndjson = dir.path().join("run.ndjson");
    let args = one_line(
        &target,
        "16MiB",
        &results,
        &[
            "--duration",
            "30s",
            "--ramp",
            "300ms",
            "--interval",
            "100ms",
        ],
    );
    let mut run = Running::start(dir.path(), &strs(&args));
    run.wait_until("ten intervals", || records(&ndjson).len() >= 10);
    run.signal("KILL");
    let status = run.wait_for(Duration::from_secs(10)).expect("kill -9");
    assert_eq!(status.code(), None, "killed by a signal: {status}");
    // The results file written before the workers started says the run has not finished.
    let unfinished = load_json(&results);
    assert!(
        str_at(&unfinished, "/interrupted").contains("did not finish"),
        "{}",
        at(&unfinished, "/interrupted")
    );
    assert_eq!(array_at(&unfinished, "/targets").len(), 1);

    // Every complete line is a record (a last line may be cut off by the kill).
    let text = std::fs::read_to_string(&ndjson).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let complete: Vec<Value> = lines
        .iter()
        .filter(|l| l.ends_with('\n'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect();
    assert!(complete.len() >= 10);
    let measured: Vec<&Value> = complete
        .iter()
        .filter(|r| r["phase"] == "measure")
        .collect();
    let read_ops: u64 = measured
        .iter()
        .map(|r| r["total"]["read"]["ops"].as_u64().unwrap())
        .sum();
    let max_ns = measured
        .iter()
        .map(|r| r["total"]["read"]["latency_max_ns"].as_u64().unwrap())
        .max()
        .unwrap();

    // The killed run's results file is completed from its time series: its own job, targets
    // and host, the time series' measurements.
    let out = run_in(dir.path(), ["report", s(&results), "--json"]);
    out.expect_ok();
    let v: Value = serde_json::from_str(&out.stdout).expect("--json prints JSON");
    assert_eq!(u64_at(&v, "/totals/read/ops"), read_ops);
    assert_eq!(str_at(&v, "/targets/0/path"), s(&target));
    assert_eq!(u64_at(&v, "/job/duration_ms"), 30_000);
    assert_eq!(
        phases(&v),
        expect(&[
            ("prepare", "completed"),
            ("ramp", "completed"),
            ("measure", "interrupted")
        ])
    );
    // Without the results file, it says where to turn.
    std::fs::remove_file(&results).unwrap();
    run_in(dir.path(), ["report", s(&results)])
        .expect_code(1)
        .stderr_has(&[
            "the run did not finish",
            &format!("storlab report {}", ndjson.display()),
        ]);

    // A report from the time series alone.
    let out = run_in(dir.path(), ["report", s(&ndjson), "--json"]);
    out.expect_ok();
    let v: Value = serde_json::from_str(&out.stdout).expect("--json prints JSON");
    let why = str_at(&v, "/interrupted");
    assert!(
        why.contains("did not finish") && why.contains("time series"),
        "{why}"
    );
    assert_eq!(array_at(&v, "/timeseries").len(), complete.len());
    assert_eq!(u64_at(&v, "/totals/read/ops"), read_ops);
    assert_eq!(u64_at(&v, "/totals/read/latency_ns/max"), max_ns);
    assert!(u64_at(&v, "/measured_ms") >= 500);
    assert_eq!(
        phases(&v),
        expect(&[("ramp", "completed"), ("measure", "interrupted")])
    );
    let classes = at(&v, "/classes").as_object().expect("classes");
    assert!(!classes.is_empty(), "no classes recovered");
    let class_ops: u64 = classes
        .values()
        .map(|c| c["read"]["ops"].as_u64().unwrap())
        .sum();
    assert_eq!(class_ops, read_ops);

    let html = dir.path().join("report.html");
    run_in(dir.path(), ["report", s(&ndjson), "-o", s(&html)]).expect_ok();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("recovered from"), "the HTML report says so");
    let csv = run_in(
        dir.path(),
        [
            "report",
            s(&ndjson),
            "--format",
            "csv",
            "--table",
            "timeseries",
        ],
    );
    csv.expect_ok();
    assert!(
        csv.stdout.lines().count() > complete.len(),
        "{}",
        csv.stdout
    );
    let md = run_in(
        dir.path(),
        [
            "report",
            s(&ndjson),
            "--format",
            "markdown",
            "--table",
            "timeseries",
        ],
    );
    md.expect_ok();
    assert!(md.stdout.starts_with('|'), "{}", md.stdout);
    let text = run_in(dir.path(), ["report", s(&ndjson)]);
    text.expect_ok();
    assert!(text.stdout.contains("INTERRUPTED"), "{}", text.stdout);

    // A last line cut in the middle (as a kill during its write leaves it) is left out.
    let cut = dir.path().join("cut.ndjson");
    let last = lines[complete.len() - 1];
    let head = lines[..complete.len() - 1].concat();
    std::fs::write(&cut, format!("{head}{}", &last[..last.len() / 2])).unwrap();
    let out = run_in(dir.path(), ["report", s(&cut), "--json"]);
    out.expect_ok();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(array_at(&v, "/timeseries").len(), complete.len() - 1);
    assert!(str_at(&v, "/interrupted").contains("cut off"));
    // Content, not the name, decides: the same series under another name.
    let renamed = dir.path().join("series.txt");
    std::fs::copy(&ndjson, &renamed).unwrap();
    run_in(dir.path(), ["report", s(&renamed), "--json"]).expect_ok();
    // A broken line in the middle is an error that names the line.
    let broken = dir.path().join("broken.ndjson");
    std::fs::write(&broken, format!("{}{{oops\n{}", lines[0], lines[1])).unwrap();
    run_in(dir.path(), ["report", s(&broken)])
        .expect_code(1)
        .stderr_has(&["line 2"]);
}
