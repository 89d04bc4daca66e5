//! Ctrl-C: SIGINT during measurement and during preparation stops the run within a second or
//! two and still leaves a valid results file marked as interrupted; a half-prepared file is
//! never reused.

use crate::harness::{MIB, array_at, at, load_json, run_in, scratch, storlab, str_at, u64_at};
use serde_json::Value;
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A running storlab, killed (by its pid) if the test ends while it still runs.
struct Running(Child);

impl Running {
    fn start(dir: &Path, args: &[&str]) -> Running {
        let stderr = std::fs::File::create(dir.join("stderr.txt")).unwrap();
        let child = storlab(dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("start storlab");
        Running(child)
    }

    fn sigint(&self) {
        let status = std::process::Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -INT failed");
    }

    fn exited(&mut self) -> Option<ExitStatus> {
        self.0.try_wait().expect("wait for storlab")
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
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Polls `ready` every 5 ms for up to `limit`; panics (with storlab's stderr) on timeout or if
/// storlab exits first.
fn wait_until(
    run: &mut Running,
    dir: &Path,
    limit: Duration,
    what: &str,
    ready: impl Fn() -> bool,
) {
    let deadline = Instant::now() + limit;
    while !ready() {
        if let Some(status) = run.exited() {
            panic!(
                "storlab exited ({status}) before {what}: {}",
                std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default()
            );
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

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

#[test]
fn sigint_during_measure_writes_interrupted_results() {
    let dir = scratch();
    let target = dir.path().join("i.dat");
    let results = dir.path().join("i.json");
    let ndjson = dir.path().join("i.ndjson");
    let mut run = Running::start(
        dir.path(),
        &[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "32MiB",
            "--read",
            "70",
            "--qd",
            "4",
            "--duration",
            "30s",
            "-q",
            "-o",
            results.to_str().unwrap(),
        ],
    );
    // Measurement has run for at least one interval (1 s) once the first NDJSON line is there.
    wait_until(
        &mut run,
        dir.path(),
        Duration::from_secs(30),
        "the first interval",
        || std::fs::read_to_string(&ndjson).is_ok_and(|t| t.contains('\n')),
    );
    std::thread::sleep(Duration::from_millis(500));
    run.sigint();
    let signalled = Instant::now();
    let status = run
        .wait_for(Duration::from_secs(5))
        .expect("storlab still runs 5 s after SIGINT");
    let took = signalled.elapsed();
    assert!(
        took <= Duration::from_secs(2),
        "exit took {took:?} after SIGINT"
    );
    assert!(!status.success(), "an interrupted run exited with success");

    let v = load_json(&results);
    let reason = str_at(&v, "/interrupted");
    assert!(reason.contains("SIGINT"), "interrupted: {reason:?}");
    assert!(reason.contains("measure"), "interrupted: {reason:?}");
    assert_eq!(
        phases(&v),
        [
            ("prepare".to_owned(), "completed".to_owned()),
            ("measure".to_owned(), "interrupted".to_owned())
        ]
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
    let lines = std::fs::read_to_string(&ndjson).unwrap().lines().count();
    assert_eq!(lines, ts.len(), "NDJSON lines vs inline time series");
    // The results file still reads back through the schema.
    run_in(dir.path(), ["report", results.to_str().unwrap()]).expect_ok();
}

fn manifest(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

#[test]
fn sigint_during_prepare_leaves_the_file_marked_incomplete() {
    let dir = scratch();
    let target = dir.path().join("big.dat");
    let manifest_path = dir.path().join("big.dat.storlab.json");
    let size = 256 * MIB;
    let args = |results: &Path| {
        vec![
            "run".to_owned(),
            "--target".to_owned(),
            target.to_str().unwrap().to_owned(),
            "--size".to_owned(),
            "256MiB".to_owned(),
            "--bs".to_owned(),
            "4k".to_owned(),
            "--duration".to_owned(),
            "1s".to_owned(),
            "-q".to_owned(),
            "-o".to_owned(),
            results.to_str().unwrap().to_owned(),
        ]
    };
    let results = dir.path().join("p1.json");
    let a = args(&results);
    let mut run = Running::start(
        dir.path(),
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    // Preparation has begun once the manifest (complete = false) is there.
    wait_until(
        &mut run,
        dir.path(),
        Duration::from_secs(30),
        "preparation to start",
        || manifest(&manifest_path).is_some(),
    );
    std::thread::sleep(Duration::from_millis(100));
    run.sigint();
    let signalled = Instant::now();
    let status = run
        .wait_for(Duration::from_secs(5))
        .expect("storlab still runs 5 s after SIGINT during prepare");
    let took = signalled.elapsed();
    assert!(
        took <= Duration::from_secs(2),
        "exit took {took:?} after SIGINT"
    );
    assert!(!status.success(), "an interrupted run exited with success");

    let v = load_json(&results);
    let reason = str_at(&v, "/interrupted");
    assert!(
        reason.contains("SIGINT") && reason.contains("prepare"),
        "interrupted: {reason:?}"
    );
    assert_eq!(
        phases(&v),
        [("prepare".to_owned(), "interrupted".to_owned())]
    );
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
