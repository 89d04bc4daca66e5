//! `kill -9` during measurement: the NDJSON time series is what is left, and `storlab report`
//! builds every report from it.

use super::{Running, assert_phases, one_line, records, s};
use crate::harness::{array_at, at, load_json, report_html, run_in, scratch, str_at, u64_at};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

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
    let mut run = Running::start(dir.path(), args.args());
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
    assert_phases(
        &v,
        &[
            ("prepare", "completed"),
            ("ramp", "completed"),
            ("measure", "interrupted"),
        ],
    );
    // The time series beside that file makes the same report, and says how far the run got.
    let out = run_in(dir.path(), ["report", s(&ndjson), "--json"]);
    out.expect_ok();
    let beside: Value = serde_json::from_str(&out.stdout).expect("--json prints JSON");
    assert_eq!(u64_at(&beside, "/totals/read/ops"), read_ops);
    assert_eq!(str_at(&beside, "/targets/0/path"), s(&target));
    let why = str_at(&beside, "/interrupted");
    assert!(
        why.starts_with("the run did not finish: the time series ends at ")
            && why.contains(" of 30.3 s planned; storlab stopped without writing its results"),
        "{why}"
    );

    // Without the results file, it says where to turn.
    std::fs::remove_file(&results).unwrap();
    run_in(dir.path(), ["report", s(&results)])
        .expect_code(2)
        .stderr_has(&[
            "the run did not finish",
            &format!("storlab report {}", ndjson.display()),
        ]);

    // A report from the time series alone: nothing says whether the run finished.
    let out = run_in(dir.path(), ["report", s(&ndjson), "--json"]);
    out.expect_ok();
    let v: Value = serde_json::from_str(&out.stdout).expect("--json prints JSON");
    let why = str_at(&v, "/interrupted");
    assert!(
        why.starts_with("whether the run finished is not known: there is no results file")
            && why.contains("recovered from its time series"),
        "{why}"
    );
    assert_eq!(array_at(&v, "/timeseries").len(), complete.len());
    assert_eq!(u64_at(&v, "/totals/read/ops"), read_ops);
    assert_eq!(u64_at(&v, "/totals/read/latency_ns/max"), max_ns);
    assert!(u64_at(&v, "/measured_ms") >= 500);
    assert_phases(&v, &[("ramp", "completed"), ("measure", "interrupted")]);
    let classes = at(&v, "/classes").as_object().expect("classes");
    assert!(!classes.is_empty(), "no classes recovered");
    let class_ops: u64 = classes
        .values()
        .map(|c| c["read"]["ops"].as_u64().unwrap())
        .sum();
    assert_eq!(class_ops, read_ops);

    let page = report_html(dir.path(), &ndjson, &dir.path().join("report.html"));
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
    damaged_series(dir.path(), &ndjson, &lines);
}

/// Reports of the killed run's time series `ndjson` (its `lines`, the last complete) cut off,
/// renamed and broken, in `dir`.
fn damaged_series(dir: &Path, ndjson: &Path, lines: &[&str]) {
    let complete: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.ends_with('\n'))
        .collect();
    // A last line cut in the middle (as a kill during its write leaves it) is left out.
    let cut = dir.join("cut.ndjson");
    let last = lines[complete.len() - 1];
    let head = lines[..complete.len() - 1].concat();
    std::fs::write(&cut, format!("{head}{}", &last[..last.len() / 2])).unwrap();
    let out = run_in(dir, ["report", s(&cut), "--json"]);
    out.expect_ok();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(array_at(&v, "/timeseries").len(), complete.len() - 1);
    let why = str_at(&v, "/interrupted");
    assert!(
        why.starts_with("the run did not finish") && why.contains("cut off"),
        "{why}"
    );
    // Content, not the name, decides: the same series under another name.
    let renamed = dir.join("series.txt");
    std::fs::copy(ndjson, &renamed).unwrap();
    run_in(dir, ["report", s(&renamed), "--json"]).expect_ok();
    // A broken line in the middle is an error that names the line.
    let broken = dir.join("broken.ndjson");
    std::fs::write(&broken, format!("{}{{oops\n{}", lines[0], lines[1])).unwrap();
    run_in(dir, ["report", s(&broken)])
        .expect_code(2)
        .stderr_has(&["line 2"]);
}

/// The time series of a run that finished is reported as the run's results file says (with a
/// note that it is), never as an interrupted run; the same series with the results file of
/// another run beside it is one that did not finish.
#[test]
fn the_time_series_of_a_finished_run_reports_its_results() {
    let scratch = scratch();
    let dir = scratch.path();
    let target = dir.join("f.dat");
    let results = dir.join("done.json");
    let ndjson = dir.join("done.ndjson");
    let args = one_line(
        &target,
        "8MiB",
        &results,
        &["--duration", "1s", "--ramp", "0s", "--interval", "250ms"],
    );
    let v = args.run_ok(dir);
    assert_eq!(at(&v, "/interrupted"), &Value::Bool(false));
    let text = run_in(dir, ["report", s(&ndjson)]);
    text.expect_ok().stderr_has(&[
        "is the time series of a run that ended and wrote its results",
        s(&results),
    ]);
    assert!(!text.stdout.contains("INTERRUPTED"), "{}", text.stdout);
    assert_eq!(
        text.stdout,
        run_in(dir, ["report", s(&results)]).stdout,
        "the report of the results file"
    );
    let json = |path: &Path| run_in(dir, ["report", s(path), "--json"]);
    let (from_series, from_results) = (json(&ndjson), json(&results));
    from_series.expect_ok();
    assert_eq!(
        from_series.stdout, from_results.stdout,
        "the results file, whole"
    );

    // A later run's results under that name: this series' run never wrote its own.
    let later = one_line(
        &target,
        "8MiB",
        &results,
        &["--duration", "500ms", "--ramp", "0s", "--interval", "250ms"],
    );
    let kept = dir.join("kept.ndjson");
    std::fs::copy(&ndjson, &kept).unwrap();
    later.run_ok(dir);
    std::fs::rename(&kept, &ndjson).unwrap();
    let out = run_in(dir, ["report", s(&ndjson), "--json"]);
    out.expect_ok();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let why = str_at(&v, "/interrupted");
    assert!(
        why.starts_with("the run did not finish")
            && why.contains("beside it is another run's: its intervals are not these"),
        "{why}"
    );
}
