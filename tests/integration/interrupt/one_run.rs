//! One run stopped in each of its phases: prepare (the file is marked incomplete and prepared
//! again), ramp, measure, and a second signal during the clean-up.

use super::{Running, assert_phases, has_record, interrupted, manifest, one_line, records};
use crate::harness::{MIB, RunArgs, array_at, at, scratch, u64_at};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// Starts a one-line run of 1 s on a new 256 MiB file `big.dat` in `dir`, results to
/// `results`, and waits until its preparation has begun (the manifest, marked incomplete, is
/// there). Returns the run and its command line.
fn start_preparing(dir: &Path, results: &Path) -> (Running, RunArgs) {
    let args = one_line(
        &dir.join("big.dat"),
        "256MiB",
        results,
        &["--duration", "1s"],
    );
    let mut run = Running::start(dir, args.args());
    let manifest_path = dir.join("big.dat.storlab.json");
    run.wait_until("preparation to start", || {
        manifest(&manifest_path).is_some()
    });
    (run, args)
}

#[test]
fn sigint_during_prepare_leaves_the_file_marked_incomplete() {
    let dir = scratch();
    let target = dir.path().join("big.dat");
    let manifest_path = dir.path().join("big.dat.storlab.json");
    let size = 256 * MIB;
    let results = dir.path().join("p1.json");
    let (mut run, _) = start_preparing(dir.path(), &results);
    std::thread::sleep(Duration::from_millis(300));
    let status = run.stop("INT");
    let v = interrupted(&run, status, &results, "SIGINT", &["prepare"]);
    assert_phases(&v, &[("prepare", "interrupted")]);
    let m = manifest(&manifest_path).expect("the manifest is still there");
    assert_eq!(
        at(&m, "/complete"),
        &Value::Bool(false),
        "an interrupted preparation is marked complete: {m}"
    );
    let half_seed = at(&m, "/data_seed").clone();

    // The next run prepares the file again instead of reusing the half-written one.
    let v = one_line(
        &target,
        "256MiB",
        &dir.path().join("p2.json"),
        &["--duration", "1s"],
    )
    .run_ok(dir.path());
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
    let (mut run, args) = start_preparing(dir.path(), &results);
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
    let v = args.run_ok(dir.path());
    assert_eq!(at(&v, "/targets/0/prepare/reused"), &Value::Bool(false));
    assert_eq!(u64_at(&v, "/targets/0/prepare/written_bytes"), size);
    let m = manifest(&manifest_path).unwrap();
    assert_eq!(at(&m, "/complete"), &Value::Bool(true));
    assert_ne!(at(&m, "/data_seed"), &half_seed, "the data seed was reused");
    // And a third run reuses the now complete file.
    let v = args.run_ok(dir.path());
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
    let mut run = Running::start(dir.path(), args.args());
    let status = run.stop_after(
        "the first ramp interval",
        || has_record(&ndjson, |r| r["phase"] == "ramp"),
        Duration::from_millis(300),
        "TERM",
    );
    let v = interrupted(&run, status, &results, "SIGTERM", &["ramp"]);
    assert_phases(
        &v,
        &[
            ("prepare", "completed"),
            ("ramp", "interrupted"),
            ("measure", "not_started"),
        ],
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
    let mut run = Running::start(dir.path(), args.args());
    // Measurement has run for at least one interval (1 s) once the first NDJSON line is there.
    run.wait_until("the first interval", || !records(&ndjson).is_empty());
    let seen = Instant::now();
    let first_end_ms = u64_at(&records(&ndjson)[0], "/t_end_ms");
    std::thread::sleep(Duration::from_millis(500));
    let signalled = Instant::now();
    let status = run.stop("INT");
    let v = interrupted(&run, status, &results, "SIGINT", &["measure"]);
    assert_phases(&v, &[("prepare", "completed"), ("measure", "interrupted")]);
    let measured_ms = u64_at(&v, "/measured_ms");
    assert!(
        (1000..30_000).contains(&measured_ms),
        "measured_ms {measured_ms}: at least the first interval, less than the 30 s planned"
    );
    // The one-second requirement, on storlab's own clock: the first interval ended (at
    // `first_end_ms` of the run, no ramp) no later than this test saw it, so the measurement,
    // which stopped at `measured_ms`, stopped at most `measured_ms - first_end_ms` after that
    // sighting, less the time between the sighting and the signal. What a loaded machine adds
    // to the bound is the few milliseconds between the interval's end and this test seeing
    // it; the clean-up after the stop (writing and syncing the results file, which a busy
    // disk can hold up for seconds) is not in it.
    let waited_ms = signalled.duration_since(seen).as_millis() as i64;
    let reaction_ms = (measured_ms - first_end_ms) as i64 - waited_ms;
    eprintln!("measurement stopped at most {reaction_ms} ms after SIGINT");
    assert!(
        reaction_ms <= 1000,
        "the measurement went on for up to {reaction_ms} ms after SIGINT"
    );
    assert!(u64_at(&v, "/totals/read/ops") > 0);
    assert!(u64_at(&v, "/totals/write/ops") > 0);
    let ts = array_at(&v, "/timeseries");
    assert!(!ts.is_empty());
    assert_eq!(records(&ndjson).len(), ts.len(), "NDJSON lines vs inline");
}

/// A stop in the cool-down: the measurement ran to its end and stays whole (its 1 s, its
/// intervals, its totals), the cool-down is interrupted, and so is the run.
#[test]
fn sigint_during_the_cooldown_leaves_the_measurement_whole() {
    let dir = scratch();
    let target = dir.path().join("c.dat");
    let results = dir.path().join("c.json");
    let ndjson = dir.path().join("c.ndjson");
    let args = one_line(
        &target,
        "16MiB",
        &results,
        &[
            "--duration",
            "1s",
            "--cooldown",
            "30s",
            "--interval",
            "500ms",
        ],
    );
    let mut run = Running::start(dir.path(), args.args());
    let status = run.stop_after(
        "the last measured interval",
        || has_record(&ndjson, |r| r["t_end_ms"] == 1000),
        Duration::from_millis(300),
        "INT",
    );
    let v = interrupted(&run, status, &results, "SIGINT", &["cooldown"]);
    assert_phases(
        &v,
        &[
            ("prepare", "completed"),
            ("measure", "completed"),
            ("cooldown", "interrupted"),
        ],
    );
    assert_eq!(u64_at(&v, "/measured_ms"), 1000);
    let ts = array_at(&v, "/timeseries");
    assert_eq!(ts.len(), 2, "{ts:?}");
    let in_series: u64 = ts.iter().map(|r| u64_at(r, "/total/read/ops")).sum();
    assert_eq!(in_series, u64_at(&v, "/totals/read/ops"));
}

/// A named pipe planted at the results' old temporary name (`r.json.tmp`) once made the
/// clean-up after a signal wait for a reader forever (the second signal, exit 130, was the only
/// way out). The results are now written under a random temporary name: the pipe is never
/// opened, the first signal ends the run with its results, and the pipe is left as it was.
#[test]
fn a_pipe_at_the_old_temporary_results_name_never_blocks_the_clean_up() {
    let dir = scratch();
    let manifest_path = dir.path().join("big.dat.storlab.json");
    let results = dir.path().join("r.json");
    let pipe = dir.path().join("r.json.tmp");
    let made = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo failed");
    let (mut run, _) = start_preparing(dir.path(), &results);
    std::thread::sleep(Duration::from_millis(200));
    let status = run.stop("INT");
    interrupted(&run, status, &results, "SIGINT", &["prepare"]);
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&pipe)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    let m = manifest(&manifest_path).unwrap();
    assert_eq!(at(&m, "/complete"), &Value::Bool(false));
}
