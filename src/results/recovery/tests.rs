//! Rebuilding results from a time series, and what `storlab report` makes of a series with
//! or without the results file beside it.

use super::*;
use crate::stats::timeseries::{IntervalClass, IntervalDir, IntervalPhase, IntervalRecord};

fn record(
    index: u64,
    phase: IntervalPhase,
    ops: u64,
    mean: f64,
    p99: u64,
    max: u64,
) -> IntervalRecord {
    let dir = IntervalDir {
        ops,
        bytes: ops * 4096,
        errors: 0,
        iops: ops as f64,
        bytes_per_s: (ops * 4096) as f64,
        latency_mean_ns: mean,
        latency_p99_ns: p99,
        latency_max_ns: max,
    };
    let class = IntervalClass {
        read: dir,
        ..Default::default()
    };
    IntervalRecord {
        index,
        phase,
        t_end_ms: (index + 1) * 1000,
        interval_ms: 1000,
        classes: [("c".to_string(), class)].into_iter().collect(),
        total: class,
        ..Default::default()
    }
}

#[test]
fn totals_sum_the_measured_intervals() {
    let series = Facts::of(
        &[
            record(0, IntervalPhase::Ramp, 1000, 50.0, 60, 70),
            record(1, IntervalPhase::Measure, 100, 100.0, 150, 400),
            record(2, IntervalPhase::Measure, 300, 200.0, 900, 1000),
        ],
        false,
    );
    let r = recover(&series, "x.ndjson", None, "why".into(), false);
    assert_eq!(r.interrupted, Interrupted::Yes("why".into()));
    assert_eq!(r.measured_ms, 2000);
    let read = &r.totals.read;
    assert_eq!(read.ops, 400);
    assert_eq!(read.bytes, 400 * 4096);
    assert_eq!(read.iops, 200.0);
    assert_eq!(
        read.latency_ns.mean,
        (100.0 * 100.0 + 300.0 * 200.0) / 400.0
    );
    assert_eq!(read.latency_ns.max, 1000);
    assert_eq!(read.latency_ns.p99, 900);
    assert_eq!(r.classes["c"].read.ops, 400);
    // Its series is the file's, read again by whoever needs it.
    assert_eq!(r.timeseries, Series::of_file("x.ndjson".into()));
    let phases: Vec<(Phase, PhaseState)> = r.phases.iter().map(|p| (p.name, p.state)).collect();
    assert_eq!(
        phases,
        [
            (Phase::Ramp, PhaseState::Completed),
            (Phase::Measure, PhaseState::Interrupted)
        ]
    );
    assert!(r.steps.is_none());
}

#[test]
fn steps_are_rebuilt_from_their_intervals() {
    let tag = |mut r: IntervalRecord, step: usize, rep: u32| {
        r.step = Some(step);
        r.label = Some(SequenceRun::Rep(rep));
        r
    };
    let series = Facts::of(
        &[
            record(0, IntervalPhase::Measure, 5, 1.0, 1, 1),
            tag(record(0, IntervalPhase::Measure, 10, 1.0, 1, 1), 0, 1),
            tag(record(0, IntervalPhase::Measure, 20, 1.0, 1, 1), 0, 2),
            tag(record(0, IntervalPhase::Measure, 30, 1.0, 1, 1), 1, 1),
        ],
        true,
    );
    let r = recover(&series, "s.ndjson", None, "why".into(), false);
    let steps = r.steps.as_ref().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].totals.read.ops, 30);
    assert!(!steps[0].interrupted);
    assert_eq!(steps[0].label, "step 0 (rep 1, rep 2)");
    assert!(steps[1].interrupted);
    // Preconditioning (no step) is not measured.
    assert_eq!(r.totals.read.ops, 60);
    assert_eq!(r.phases[0].name, Phase::Precondition);
    assert_eq!(r.phases[2].state, PhaseState::Interrupted);
}

/// A 30 s run's first `n` measured intervals of 1 s (100 reads each).
fn measured(n: u64) -> Vec<IntervalRecord> {
    (0..n)
        .map(|i| record(i, IntervalPhase::Measure, 100, 1000.0, 2000, 3000))
        .collect()
}

/// `records` written as the NDJSON time series `run.ndjson` in `dir`, its path.
fn write_series(dir: &Path, records: &[IntervalRecord]) -> PathBuf {
    let path = dir.join("run.ndjson");
    let text: String = (records.iter())
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// A results file of a plain 30 s run (no ramp) with `records` inline, marked `interrupted`.
fn results(records: &[IntervalRecord], interrupted: Interrupted) -> RunResult {
    let mut v = super::super::sample_json("io_uring", &["c"]);
    v["job"]["duration_ms"] = serde_json::json!(30_000);
    let mut r: RunResult = serde_json::from_value(v).unwrap();
    r.interrupted = interrupted;
    r.timeseries = crate::results::timeseries::Series::held(records.to_vec());
    r.totals.read.ops = 4242;
    r
}

fn reason(r: &RunResult) -> &str {
    r.interrupted.reason().unwrap_or("not interrupted")
}

#[test]
fn the_series_of_a_finished_run_reports_its_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let records = measured(30);
    let path = write_series(dir.path(), &records);
    let finished = results(&records, Interrupted::No);
    super::super::file::save(&dir.path().join("run.json"), &finished).unwrap();
    let (r, note) = load(&path).unwrap();
    assert_eq!(r, finished, "the results file, as the run wrote it");
    let note = note.expect("a note on where the report comes from");
    assert!(
        note.contains("a run that ended and wrote its results") && note.contains("run.json"),
        "{note}"
    );
}

#[test]
fn a_killed_run_is_said_to_end_where_its_series_ends_of_its_plan() {
    let dir = tempfile::tempdir().unwrap();
    let records = measured(12);
    let path = write_series(dir.path(), &records);
    let unfinished = results(&[], Interrupted::Unfinished);
    super::super::file::save(&dir.path().join("run.json"), &unfinished).unwrap();
    let (r, note) = load(&path).unwrap();
    assert_eq!(note, None);
    assert!(
        reason(&r).starts_with("the run did not finish: the time series ends at 12 s of 30 s planned; storlab stopped without writing its results"),
        "{}",
        reason(&r)
    );
    assert_eq!(r.totals.read.ops, 1200, "the measurements are the series'");
    assert_eq!(r.job.duration_ms, 30_000, "the job is the file's");
    let measure = r.phases.iter().find(|p| p.name == Phase::Measure).unwrap();
    assert_eq!(measure.state, PhaseState::Interrupted);

    // Measured to the end, killed before the results were written.
    let path = write_series(dir.path(), &measured(30));
    let (r, _) = load(&path).unwrap();
    assert!(
        reason(&r).contains("it measured to its planned end (30 s), then storlab stopped without writing its results"),
        "{}",
        reason(&r)
    );
    let measure = r.phases.iter().find(|p| p.name == Phase::Measure).unwrap();
    assert_eq!(measure.state, PhaseState::Completed);
}

#[test]
fn a_series_alone_says_what_is_known() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_series(dir.path(), &measured(12));
    let (r, _) = load(&path).unwrap();
    assert!(
        reason(&r).starts_with("whether the run finished is not known: there is no results file")
            && reason(&r).ends_with("which ends at 12 s into measure"),
        "{}",
        reason(&r)
    );
    // A last line cut off in its write: storlab was stopped then.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"index\": 12, \"pha");
    std::fs::write(&path, text).unwrap();
    let (r, _) = load(&path).unwrap();
    assert!(
        reason(&r).starts_with("the run did not finish: the time series ends at 12 s into measure; storlab stopped while writing its last line"),
        "{}",
        reason(&r)
    );
}

#[test]
fn a_results_file_of_another_run_means_this_one_did_not_finish() {
    let records = measured(12);
    let series = Facts::of(&records, false);
    let now = SystemTime::now();
    let earlier = now - std::time::Duration::from_secs(5);
    // Its own: the same intervals inline, or written after the series' last one.
    assert_eq!(
        not_its_results(&results(&records, Interrupted::No), &series, None, None),
        None
    );
    let long = results(&[], Interrupted::No);
    assert_eq!(
        not_its_results(&long, &series, Some(now), Some(earlier)),
        None
    );
    // Another run's: other intervals, or written before the series' last interval.
    let other = results(&measured(30), Interrupted::No);
    assert!(not_its_results(&other, &series, None, None).is_some());
    assert!(not_its_results(&long, &series, Some(earlier), Some(now)).is_some());
    // A sequence's series beside one of its runs' results (the sequence writes its own at
    // its end, with its steps).
    let mut tagged = records.clone();
    tagged[11].step = Some(1);
    let tagged = Facts::of(&tagged, false);
    let why = not_its_results(&long, &tagged, Some(now), Some(earlier));
    assert!(
        why.is_some_and(|w| w.contains("one run of the sequence")),
        "{why:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = write_series(dir.path(), &records);
    super::super::file::save(&dir.path().join("run.json"), &other).unwrap();
    let (r, note) = load(&path).unwrap();
    assert_eq!(note, None);
    assert!(
        reason(&r).starts_with("the run did not finish: the time series ends at 12 s into measure; storlab stopped without writing its results (")
            && reason(&r).contains("run.json beside it is another run's: its intervals are not these)"),
        "{}",
        reason(&r)
    );
    assert_eq!(r.totals.read.ops, 1200);
}
