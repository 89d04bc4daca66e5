//! Steady state: rounds until a window of them is steady, or a warning after `max_rounds`.

use super::{prepared_target, run_job, steps, warnings};
use crate::harness::{JobFile, array_at, at, load_json, scratch, u64_at};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A steady-state job on the null engine; `worker` adds keys to its worker.
fn steady_job(
    dir: &Path,
    name: &str,
    target: &Path,
    (range, max_rounds): (&str, u32),
    worker: &str,
) -> PathBuf {
    JobFile::on(
        target,
        &format!(
            r#"engine = "null"
interval = "100ms"
ramp = "0s"
until_steady = true
round = "300ms"
steady_rounds = 3
steady_range = "{range}"
steady_slope = "50%"
max_rounds = {max_rounds}"#
        ),
    )
    .worker_keys(worker)
    .write(dir, name)
}

#[test]
fn until_steady_stops_at_the_first_steady_window() {
    let started = Instant::now();
    let dir = scratch();
    let target = prepared_target(dir.path());
    // Open loop at 1,000 IOPS: each round's IOPS is its schedule's, less only the I/Os a stall
    // at the very end of the round leaves unissued (the pacer catches up with any stall
    // before it). A closed-loop round on the null engine runs as fast as the CPU share the
    // machine gives it, which a loaded machine changes by more than ±50% from one 300 ms round
    // to the next; then the step might never settle. Here a round misses the ±50% window only
    // when a stall of about 100 ms lands on its end, and the check below allows even that.
    let job = steady_job(
        dir.path(),
        "steady.toml",
        &target,
        ("50%", 6),
        "rate_iops = 1000",
    );
    let results = dir.path().join("steady.json");
    let (out, _) = run_job(dir.path(), &job, &results);
    out.expect_ok();
    let v = load_json(&results);
    let steady = at(&steps(&v)[0], "/steady");
    let at_round = at(steady, "/steady_at_round")
        .as_u64()
        .unwrap_or_else(|| panic!("never steady within ±50%: {steady}"));
    // The window is 3 rounds: round 3 is the first that can be steady. On a loaded machine it
    // can take more, so check instead that every earlier window was not steady by the same
    // rule (each round within ±50% of the window's average, the fit's excursion within 50%).
    assert!(
        (3..=6).contains(&at_round),
        "steady at round {at_round}: {steady}"
    );
    let rounds: Vec<f64> = array_at(steady, "/rounds_iops")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    // No round runs ahead of its schedule: 300 I/Os in 300 ms, one more for rounding.
    assert!(
        rounds.iter().all(|&r| r > 0.0 && r <= 301.0 / 0.3),
        "rounds at 1,000 IOPS: {rounds:?}"
    );
    for end in 3..at_round as usize {
        let w = &rounds[end - 3..end];
        let avg = w.iter().sum::<f64>() / 3.0;
        let dev = w.iter().map(|x| (x - avg).abs()).fold(0.0, f64::max) / avg * 100.0;
        let excursion = (w[2] - w[0]).abs() / avg * 100.0;
        assert!(
            dev > 50.0 || excursion > 50.0,
            "the window ending at round {end} was already steady: {rounds:?}"
        );
    }
    assert_eq!(
        array_at(steady, "/rounds_iops").len() as u64,
        at_round,
        "rounds stop once steady: {steady}"
    );
    assert_eq!(u64_at(steady, "/window_rounds"), 3);
    assert_eq!(at(steady, "/window/steady"), &Value::Bool(true), "{steady}");
    // The step's figures are the last window's 3 rounds.
    let ms = u64_at(&steps(&v)[0], "/measured_ms");
    assert!((800..=1100).contains(&ms), "measured {ms} ms of 3 × 300");
    assert!(
        !warnings(&v).contains("did not reach steady state"),
        "{}",
        warnings(&v)
    );
    assert!(
        out.stdout.contains(&format!("steady at round {at_round}")),
        "{}",
        out.stdout
    );
    eprintln!("until_steady: {:.1?}", started.elapsed());
}

#[test]
fn until_steady_gives_up_after_max_rounds_and_warns() {
    let started = Instant::now();
    let dir = scratch();
    let target = prepared_target(dir.path());
    // Closed loop: rounds that run as fast as the CPU allows never agree to within 0.0001%
    // (a loaded machine only makes them differ more).
    let job = steady_job(dir.path(), "never.toml", &target, ("0.0001%", 4), "");
    let results = dir.path().join("never.json");
    let (out, _) = run_job(dir.path(), &job, &results);
    out.expect_ok();
    let v = load_json(&results);
    let steady = at(&steps(&v)[0], "/steady");
    assert_eq!(at(steady, "/steady_at_round"), &Value::Null, "{steady}");
    assert_eq!(array_at(steady, "/rounds_iops").len(), 4, "{steady}");
    assert_eq!(
        at(steady, "/window/steady"),
        &Value::Bool(false),
        "{steady}"
    );
    let w = warnings(&v);
    assert!(
        w.contains("did not reach steady state"),
        "no warning that the step never became steady:\n{w}"
    );
    assert!(out.stdout.contains("NOT steady"), "{}", out.stdout);
    eprintln!("until_steady_gives_up: {:.1?}", started.elapsed());
}

#[test]
fn until_steady_on_latency_judges_each_rounds_mean_latency_in_every_view() {
    let dir = scratch();
    let target = prepared_target(dir.path());
    // Rounds on the null engine never agree to within 0.0001% in their mean latency: four
    // rounds, then the warning.
    let job = steady_job(
        dir.path(),
        "latency.toml",
        &target,
        ("0.0001%", 4),
        "rate_iops = 1000",
    );
    let text = std::fs::read_to_string(&job).unwrap();
    std::fs::write(&job, format!("steady_metric = \"latency\"\n{text}")).unwrap();
    let dry = crate::harness::run_in(
        dir.path(),
        ["run".as_ref(), job.as_os_str(), "--dry-run".as_ref()],
    );
    dry.expect_ok();
    assert!(
        dry.stdout
            .contains("until the last 3 rounds' mean latency is within ±0.0001")
            && dry.stdout.contains("300 ms measured per round"),
        "{}",
        dry.stdout
    );
    let results = dir.path().join("latency.json");
    let (out, _) = run_job(dir.path(), &job, &results);
    out.expect_ok();
    let v = load_json(&results);
    let steady = at(&steps(&v)[0], "/steady");
    assert_eq!(at(steady, "/metric"), "latency", "{steady}");
    let lat: Vec<f64> = array_at(steady, "/rounds_latency_mean_ns")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(lat.len(), 4, "{steady}");
    assert_eq!(array_at(steady, "/rounds_iops").len(), 4, "{steady}");
    assert!(lat.iter().all(|&l| l > 0.0), "{lat:?}");
    // The window judged is the last three rounds' latency, not their IOPS.
    let avg = lat[1..].iter().sum::<f64>() / 3.0;
    let window_avg = at(steady, "/window/average").as_f64().unwrap();
    assert!(
        (window_avg - avg).abs() <= avg * 1e-9,
        "{window_avg} against {avg}"
    );
    let dev = lat[1..].iter().map(|x| (x - avg).abs()).fold(0.0, f64::max) / avg * 100.0;
    let said = at(steady, "/window/max_deviation_pct").as_f64().unwrap();
    assert!(
        (said - dev).abs() <= 1e-6 * dev.max(1.0),
        "{said} against {dev}"
    );
    assert!(warnings(&v).contains("did not reach steady state (mean latency)"));
    assert!(
        out.stdout
            .contains("NOT steady (mean latency) after 4 rounds"),
        "{}",
        out.stdout
    );
    let html = crate::harness::report_html(dir.path(), &results, &dir.path().join("l.html"));
    assert!(
        html.contains("mean latency per round") && html.contains("never steady (mean latency)")
    );
}
