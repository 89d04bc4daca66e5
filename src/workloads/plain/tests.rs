//! Step sequences with fake runs: repetitions, steady-state rounds, rate curves and
//! interruptions between and during runs.

use crate::job::Job;
use crate::job::steps::SteadyMetric;
use crate::results::steps::StepKind;
use crate::results::{Phase, PhaseState, RunResult, StepRun};
use crate::run::fake::{Fake, Made};
use crate::run::{RunOptions, Signals};
use crate::stats::timeseries::SequenceRun;
use std::path::Path;

/// A job with one closed-loop worker (1,000 IOPS in a fake run) and `sequence` (TOML keys).
fn job(sequence: &str) -> Job {
    let text = format!(
        "duration = \"10s\"\nramp = \"0s\"\n{sequence}\n[[target]]\npath = \"/nonexistent/t.dat\"\nsize = \"16MiB\"\n[[worker]]\n[[worker.access]]\nblock_size = \"4k\"\nread = 70\nrandom = 100\n"
    );
    let spec = crate::job::file::parse(Path::new("t.toml"), &text).expect("parses");
    crate::job::resolve(&spec, Some((Path::new("t.toml"), &text))).expect("resolves")
}

fn run(job: &Job, exec: &mut dyn crate::run::Execute) -> (RunResult, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let opts = RunOptions::new(dir.path().join("s.json"), vec!["storlab".into()]);
    let r = crate::workloads::plain::steps::run(job, &opts, exec).expect("the sequence runs");
    (r, dir)
}

fn phases(r: &RunResult) -> Vec<(String, PhaseState)> {
    r.phases
        .iter()
        .map(|p| (p.name.to_string(), p.state))
        .collect()
}

#[test]
fn each_step_runs_repeat_times_and_reports_the_spread() {
    let j = job("repeat = 3\n[cycle]\nblock_size = [\"4k\", \"8k\"]");
    // The second repetition of every step is 10% faster.
    let mut n = 0;
    let mut fake = Fake::new(|_: &Job, _: &Signals| {
        n += 1;
        Made {
            achieved: if n % 3 == 2 { 1.1 } else { 1.0 },
            ..Made::default()
        }
    });
    let (r, _dir) = run(&j, &mut fake);
    assert_eq!(fake.jobs.len(), 6);
    let labels: Vec<Option<SequenceRun>> = fake.jobs.iter().map(|(_, o)| o.label).collect();
    assert_eq!(labels[..3], [1, 2, 3].map(|k| Some(SequenceRun::Rep(k))));
    let steps = r.steps.as_ref().unwrap();
    assert_eq!(steps.len(), 2);
    for s in steps {
        let reps = s.repetitions.as_ref().expect("repetitions");
        assert_eq!(reps.runs.len(), 3);
        assert!(reps.iops.cv_pct > 4.0, "{}", reps.iops.cv_pct);
        assert_eq!(s.kind, StepKind::Step);
    }
    assert_eq!(steps[1].parameters["block_size"], 8192.0);
    let expected_phases: Vec<String> = (0..2)
        .flat_map(|i| (1..=3).map(move |k| Phase::step(i, StepRun::Rep(k)).to_string()))
        .collect();
    let names: Vec<String> = phases(&r).into_iter().skip(1).map(|(n, _)| n).collect();
    assert_eq!(names, expected_phases);
    assert!(!r.interrupted.stopped_early());
}

#[test]
fn an_interruption_marks_the_run_interrupted_and_later_runs_not_started() {
    let j = job("repeat = 2\n[cycle]\nblock_size = [\"4k\", \"8k\", \"16k\"]");
    let mut n = 0;
    // Ctrl-C during step 1's first repetition.
    let mut fake = Fake::new(|_: &Job, s: &Signals| {
        n += 1;
        let stop = n == 3;
        if stop {
            s.interrupt();
        }
        Made {
            interrupted: stop,
            ..Made::default()
        }
    });
    let (r, _dir) = run(&j, &mut fake);
    assert_eq!(fake.jobs.len(), 3);
    let p = phases(&r);
    assert_eq!(
        p[1..3],
        [
            ("step 0 rep 1".into(), PhaseState::Completed),
            ("step 0 rep 2".into(), PhaseState::Completed)
        ]
    );
    assert_eq!(p[3], ("step 1 rep 1".into(), PhaseState::Interrupted));
    assert_eq!(p[4], ("step 1 rep 2".into(), PhaseState::NotStarted));
    assert_eq!(p[5], ("step 2".into(), PhaseState::NotStarted));
    let why = r.interrupted.reason().unwrap();
    assert!(why.contains("step 1 rep 1"), "{why}");
    let steps = r.steps.as_ref().unwrap();
    assert_eq!(steps.len(), 2);
    assert!(steps[1].interrupted);
}

#[test]
fn until_steady_stops_at_the_first_steady_window() {
    let j = job("until_steady = true\nround = \"10s\"\nsteady_rounds = 3\nmax_rounds = 10");
    // A warm-up: 50%, 70%, 90% of the rate, then flat.
    let mut n = 0;
    let mut fake = Fake::new(|_: &Job, _: &Signals| {
        n += 1;
        Made {
            achieved: [0.5, 0.7, 0.9].get(n - 1).copied().unwrap_or(1.0),
            ..Made::default()
        }
    });
    let (r, _dir) = run(&j, &mut fake);
    let steady = r.steps.as_ref().unwrap()[0].steady.clone().unwrap();
    // Rounds 3 to 5 (0.9, 1.0, 1.0) are within ±10% of their mean, but their linear fit
    // climbs 10% over the window (the limit is 5%): steady at round 6 (1.0, 1.0, 1.0).
    assert_eq!(steady.steady_at_round, Some(6));
    assert_eq!(steady.rounds_iops.len(), 6);
    assert_eq!(fake.jobs.len(), 6);
    let last = phases(&r).last().unwrap().0.clone();
    assert_eq!(last, "step 0 round 6");
}

#[test]
fn until_steady_on_latency_waits_for_the_latency_to_settle() {
    let j = job(
        "until_steady = true\nround = \"10s\"\nsteady_rounds = 3\nmax_rounds = 10\nsteady_metric = \"latency\"",
    );
    assert_eq!(j.sequence.steady.unwrap().metric, SteadyMetric::Latency);
    // IOPS steady from the first round; the latency falls from 4 ms to 1 ms by round 4.
    let mut n = 0;
    let mut fake = Fake::new(|_: &Job, _: &Signals| {
        n += 1;
        let ns = [4_000_000, 3_000_000, 2_000_000]
            .get(n - 1)
            .copied()
            .unwrap_or(1_000_000);
        Made {
            read_ns: ns,
            write_ns: ns,
            ..Made::default()
        }
    });
    let (r, _dir) = run(&j, &mut fake);
    let steady = r.steps.as_ref().unwrap()[0].steady.clone().unwrap();
    assert_eq!(steady.metric, SteadyMetric::Latency);
    // Rounds 4 to 6 (1, 1, 1 ms) are the first steady window of latency; IOPS was steady
    // from round 3 and is not what is judged.
    assert_eq!(steady.steady_at_round, Some(6));
    assert_eq!(steady.rounds_latency_mean_ns.len(), 6);
    assert_eq!(steady.rounds_iops.len(), 6);
    assert!(
        (steady.rounds_latency_mean_ns[0] - 4e6).abs() < 4e4,
        "{steady:?}"
    );
    let w = steady.window.unwrap();
    assert!((w.average - 1e6).abs() < 1e4, "{w:?}");
    assert_eq!(steady.judged(), steady.rounds_latency_mean_ns.as_slice());
    // A metric storlab does not have is refused, naming the key.
    let spec = "until_steady = true\nsteady_metric = \"clat\"";
    let text = format!(
        "{spec}\n[[target]]\npath = \"/tmp/x\"\nsize = \"1m\"\n[[worker]]\n[[worker.access]]\nblock_size = \"4k\"\n"
    );
    let parsed = crate::job::file::parse(std::path::Path::new("job.toml"), &text).unwrap();
    let e =
        crate::job::resolve(&parsed, Some((std::path::Path::new("job.toml"), &text))).unwrap_err();
    assert_eq!(e.key, "steady_metric", "{e}");
}

#[test]
fn a_curve_runs_the_maximum_then_each_level_at_its_share() {
    let j = job("curve = [50, 20]");
    let mut fake = Fake::new(|_: &Job, _: &Signals| Made::default());
    let (r, _dir) = run(&j, &mut fake);
    let steps = r.steps.as_ref().unwrap();
    let kinds: Vec<StepKind> = steps.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            StepKind::CurveMax,
            StepKind::CurveLevel,
            StepKind::CurveLevel
        ]
    );
    // The maximum is the closed-loop rate; each level asks for its share of it, open loop.
    let max = steps[0].totals.iops();
    assert!((max - 1000.0).abs() < 1.0, "{max}");
    for (s, pct) in steps[1..].iter().zip([50.0, 20.0]) {
        assert_eq!(s.curve_level_pct, Some(pct));
        assert!((s.target_iops.unwrap() - max * pct / 100.0).abs() < 1e-6);
        assert!((s.totals.iops() - max * pct / 100.0).abs() < 1.0);
    }
    let rates: Vec<Option<f64>> = fake
        .jobs
        .iter()
        .map(|(j, _)| j.workers[0].rate.map(|r| r.iops))
        .collect();
    assert_eq!(rates[0], None);
    assert!((rates[1].unwrap() - 500.0).abs() < 1.0);
}

#[test]
fn the_stop_rule_ends_the_curve_at_the_first_level_where_it_holds() {
    let j = job("curve = [50, 80, 90]\nstop_when = \"mean > 5ms\"");
    // Latency rises with the rate: 2 ms up to 600 IOPS, 8 ms above.
    let mut fake = Fake::new(|job: &Job, _: &Signals| {
        let rate = job.workers[0].rate.map_or(1000.0, |r| r.iops);
        let ns = if rate <= 600.0 { 2_000_000 } else { 8_000_000 };
        Made {
            read_ns: ns,
            write_ns: ns,
            ..Made::default()
        }
    });
    let (r, _dir) = run(&j, &mut fake);
    let levels: Vec<Option<f64>> = r
        .steps
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| s.curve_level_pct)
        .collect();
    assert_eq!(levels, [Some(100.0), Some(50.0), Some(80.0)]);
    assert!(
        r.warnings.iter().any(|w| w.contains("the stop rule held")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn the_stop_rule_ends_a_cycle_at_the_first_step_where_it_holds() {
    // fio's latency_target as storlab converts it: depths 1, 2, 4, 8, 16, stopping over 5 ms.
    let j = job("stop_when = \"p99 > 5ms\"\n[cycle]\nqueue_depth = { from = 1, to = 16 }");
    // Latency rises with the depth: 2 ms up to depth 2, 8 ms beyond.
    let mut fake = Fake::new(|job: &Job, _: &Signals| {
        let ns = if job.workers[0].queue_depth <= 2 {
            2_000_000
        } else {
            8_000_000
        };
        Made {
            read_ns: ns,
            write_ns: ns,
            ..Made::default()
        }
    });
    let (r, _dir) = run(&j, &mut fake);
    let depths: Vec<f64> = (r.steps.as_ref().unwrap().iter())
        .map(|s| s.parameters["queue_depth"])
        .collect();
    assert_eq!(
        depths,
        [1.0, 2.0, 4.0],
        "depth 4 is over the target: 8 and 16 never run"
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("the stop rule held; 2 later steps not run")),
        "{:?}",
        r.warnings
    );
}
