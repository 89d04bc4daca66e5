//! Test setups run for real: `[cycle]` expansion (order, doubling ranges, per-step results and
//! the time series tagged by step), `repeat` with its spread, rate curves and their stop rule,
//! steady-state rounds, preconditioning (every byte of the target rewritten) and the built-in
//! presets (`storlab presets`, `presets show`, `run --preset`, `--target` replacing preset
//! paths). The statistics themselves (spread, steady-state detection) are unit-tested in
//! `src/stats`; here only what the binary does with them.
//!
//! Jobs are short (100 ms to 500 ms per run) on 16 MiB files. The null engine is used where
//! only counting matters; it needs an existing target, so those tests prepare one with a short
//! io_uring run first.

use crate::harness::{
    MIB, Outcome, array_at, at, close, f64_at, load_json, run_in, scratch, str_at, u64_at,
};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// Every test of this module holds it shared, except the one that measures open-loop rates
/// on the null engine (CPU-bound: another run beside it would make it miss its rates).
static CPU: RwLock<()> = RwLock::new(());

fn shared() -> RwLockReadGuard<'static, ()> {
    CPU.read().unwrap_or_else(|e| e.into_inner())
}

fn exclusive() -> RwLockWriteGuard<'static, ()> {
    CPU.write().unwrap_or_else(|e| e.into_inner())
}

/// Writes `body` to `dir/name` and returns its path.
fn write_job(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// `storlab run JOB -o RESULTS`, with how long it took.
fn run_job(dir: &Path, job: &Path, results: &Path) -> (Outcome, Duration) {
    let start = Instant::now();
    let out = run_in(
        dir,
        [
            "run",
            job.to_str().unwrap(),
            "-o",
            results.to_str().unwrap(),
        ],
    );
    (out, start.elapsed())
}

/// A 16 MiB file storlab prepared (full of random data), made by a short read-only io_uring
/// run, for the null engine (which needs an existing target).
fn prepared_target(dir: &Path) -> PathBuf {
    let target = dir.join("t.dat");
    let results = dir.join("prepare.json");
    run_in(
        dir,
        [
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "16MiB",
            "--read",
            "100",
            "--duration",
            "100ms",
            "--interval",
            "100ms",
            "--ramp",
            "0s",
            "-q",
            "-o",
            results.to_str().unwrap(),
        ],
    )
    .expect_ok();
    assert_eq!(
        std::fs::metadata(&target).unwrap().len(),
        16 * MIB,
        "the prepared target"
    );
    target
}

/// Reads and writes of the class summary at `pointer` (`/totals`, `/steps/0/totals`).
fn ops(v: &Value, pointer: &str) -> u64 {
    u64_at(v, &format!("{pointer}/read/ops")) + u64_at(v, &format!("{pointer}/write/ops"))
}

/// Reads and writes per second of the class summary at `pointer`.
fn iops(v: &Value, pointer: &str) -> f64 {
    f64_at(v, &format!("{pointer}/read/iops")) + f64_at(v, &format!("{pointer}/write/iops"))
}

/// The results' steps.
fn steps(v: &Value) -> &Vec<Value> {
    array_at(v, "/steps")
}

/// The results' warnings, joined by newlines.
fn warnings(v: &Value) -> String {
    array_at(v, "/warnings")
        .iter()
        .map(|w| w.as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `step` of every record in the NDJSON time series written beside `results`.
fn ndjson_steps(results: &Path) -> Vec<Option<u64>> {
    let path = results.with_extension("ndjson");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .lines()
        .map(|line| {
            let rec: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}: a line is not JSON: {e}", path.display()));
            rec.get("step").and_then(Value::as_u64)
        })
        .collect()
}

/// Checks a step's CPU fields: `host_cpu` (every figure a percentage), `cpu_busy_pct` and
/// `ios_per_cpu_pct` (IOPS per percent of CPU busy).
#[track_caller]
fn check_step_cpu(step: &Value) {
    let host = at(step, "/host_cpu")
        .as_object()
        .expect("host_cpu is an object");
    for key in [
        "process_user_pct",
        "process_system_pct",
        "system_user_pct",
        "system_system_pct",
        "system_iowait_pct",
        "system_idle_pct",
    ] {
        let v = host
            .get(key)
            .and_then(Value::as_f64)
            .unwrap_or_else(|| panic!("host_cpu has no number {key}: {host:?}"));
        assert!(v >= 0.0, "host_cpu.{key} = {v}");
    }
    let busy = f64_at(step, "/cpu_busy_pct");
    assert!((0.0..=100.5).contains(&busy), "cpu_busy_pct {busy}");
    let per_cpu = f64_at(step, "/ios_per_cpu_pct");
    assert!(per_cpu >= 0.0, "ios_per_cpu_pct {per_cpu}");
    if busy > 0.0 {
        let expected = iops(step, "/totals") / busy;
        assert!(
            close(per_cpu, expected, 0.01),
            "ios_per_cpu_pct {per_cpu}, but IOPS / CPU busy is {expected}"
        );
    }
}

/// Checks the bytes of the step's reads and writes are their ops times `block`.
#[track_caller]
fn check_step_block_size(step: &Value, block: u64) {
    for dir in ["read", "write"] {
        let ops = u64_at(step, &format!("/totals/{dir}/ops"));
        let bytes = u64_at(step, &format!("/totals/{dir}/bytes"));
        assert_eq!(
            bytes,
            ops * block,
            "step {}: {ops} {dir}s of {block} bytes",
            at(step, "/index")
        );
        assert_eq!(u64_at(step, &format!("/totals/{dir}/errors")), 0);
    }
}

// ---- Cycles -------------------------------------------------------------------------------

#[test]
fn cycle_runs_every_combination_outer_parameter_first() {
    let _cpu = shared();
    let started = Instant::now();
    let dir = scratch();
    let target = dir.path().join("t.dat");
    let job = write_job(
        dir.path(),
        "cycle.toml",
        &format!(
            r#"duration = "300ms"
interval = "100ms"
ramp = "0s"

[cycle]
order = ["workers", "block_size"]
workers = [1, 2]
block_size = {{ from = "4k", to = "16k" }}

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
            target.display()
        ),
    );
    let results = dir.path().join("cycle.json");
    let (out, _) = run_job(dir.path(), &job, &results);
    out.expect_ok();
    let v = load_json(&results);
    assert_eq!(at(&v, "/interrupted"), &Value::Bool(false));

    // Workers outermost: (1, 4k) (1, 8k) (1, 16k) (2, 4k) (2, 8k) (2, 16k).
    let expected = [(1, 4), (1, 8), (1, 16), (2, 4), (2, 8), (2, 16)];
    let steps = steps(&v);
    assert_eq!(steps.len(), expected.len(), "steps: {steps:#?}");
    for (i, (step, &(workers, kib))) in steps.iter().zip(&expected).enumerate() {
        let block = kib * 1024;
        assert_eq!(u64_at(step, "/index"), i as u64);
        assert_eq!(str_at(step, "/kind"), "step");
        let params = at(step, "/parameters").as_object().unwrap();
        assert_eq!(
            params.len(),
            2,
            "step {i}: parameters are the cycled ones: {params:?}"
        );
        assert_eq!(
            f64_at(step, "/parameters/workers"),
            workers as f64,
            "step {i}"
        );
        assert_eq!(
            f64_at(step, "/parameters/block_size"),
            block as f64,
            "step {i}"
        );
        let label = str_at(step, "/label");
        let (w_at, b_at) = (
            label.find(&format!("workers={workers}")),
            label.find(&format!("block_size={kib}KiB")),
        );
        assert!(
            matches!((w_at, b_at), (Some(w), Some(b)) if w < b),
            "step {i}: label {label:?}: workers then block size"
        );
        // The block size was applied: every I/O of the step had it. Both directions ran.
        check_step_block_size(step, block);
        assert!(u64_at(step, "/totals/read/ops") > 0, "step {i}: no reads");
        assert!(u64_at(step, "/totals/write/ops") > 0, "step {i}: no writes");
        let ms = u64_at(step, "/measured_ms");
        assert!(
            (250..=450).contains(&ms),
            "step {i}: measured {ms} ms of 300"
        );
        check_step_cpu(step);
        assert_eq!(at(step, "/interrupted"), &Value::Bool(false));
    }

    // The top-level totals are every step's together.
    for dir in ["read", "write"] {
        let sum: u64 = steps
            .iter()
            .map(|s| u64_at(s, &format!("/totals/{dir}/ops")))
            .sum();
        assert_eq!(
            u64_at(&v, &format!("/totals/{dir}/ops")),
            sum,
            "top-level {dir} ops are the steps' sum"
        );
    }
    let measured: u64 = steps.iter().map(|s| u64_at(s, "/measured_ms")).sum();
    assert_eq!(u64_at(&v, "/measured_ms"), measured);

    // The time series (streamed and inlined) is tagged with the step of every record.
    let want: BTreeSet<u64> = (0..6).collect();
    let streamed = ndjson_steps(&results);
    assert!(
        streamed.iter().all(|s| s.is_some_and(|s| s < 6)),
        "NDJSON records' steps: {streamed:?}"
    );
    let streamed: BTreeSet<u64> = streamed.into_iter().flatten().collect();
    assert_eq!(streamed, want, "every step has records in the NDJSON file");
    let inline: BTreeSet<u64> = array_at(&v, "/timeseries")
        .iter()
        .map(|r| u64_at(r, "/step"))
        .collect();
    assert_eq!(
        inline, want,
        "every step has records in the inlined time series"
    );
    eprintln!("cycle_runs_every_combination: {:.1?}", started.elapsed());
}

#[test]
fn doubling_block_size_512_to_1mib_gives_12_steps() {
    let _cpu = shared();
    let started = Instant::now();
    let dir = scratch();
    let target = prepared_target(dir.path());
    let job = write_job(
        dir.path(),
        "doubling.toml",
        &format!(
            r#"engine = "null"
duration = "100ms"
interval = "100ms"
ramp = "0s"

[cycle]
block_size = {{ from = "512", to = "1MiB" }}

[[target]]
path = "{}"
size = "16MiB"

[[worker]]
queue_depth = 4
[[worker.access]]
block_size = "4k"
read = "100%"
random = "100%"
"#,
            target.display()
        ),
    );
    let results = dir.path().join("doubling.json");
    run_job(dir.path(), &job, &results).0.expect_ok();
    let v = load_json(&results);
    let steps = steps(&v);
    let blocks: Vec<f64> = steps
        .iter()
        .map(|s| f64_at(s, "/parameters/block_size"))
        .collect();
    let want: Vec<f64> = (0..12).map(|i| (512u64 << i) as f64).collect();
    assert_eq!(blocks, want, "512 B doubling to 1 MiB, both ends included");
    assert!(str_at(&steps[0], "/label").contains("block_size=512B"));
    assert!(str_at(&steps[11], "/label").contains("block_size=1MiB"));
    for (step, block) in steps.iter().zip(&want) {
        assert!(u64_at(step, "/totals/read/ops") > 0, "{step}");
        check_step_block_size(step, *block as u64);
    }
    eprintln!("doubling_block_size: {:.1?}", started.elapsed());
}

// ---- Repetitions --------------------------------------------------------------------------

#[test]
fn repeat_runs_every_step_three_times_and_reports_the_spread() {
    let _cpu = shared();
    let started = Instant::now();
    let dir = scratch();
    let target = prepared_target(dir.path());
    let job = write_job(
        dir.path(),
        "repeat.toml",
        &format!(
            r#"engine = "null"
duration = "200ms"
interval = "100ms"
ramp = "0s"
repeat = 3
pause = "100ms"

[cycle]
block_size = ["4k", "8k"]

[[target]]
path = "{}"
size = "16MiB"

[[worker]]
queue_depth = 4
[[worker.access]]
block_size = "4k"
read = "100%"
random = "100%"
"#,
            target.display()
        ),
    );
    let results = dir.path().join("repeat.json");
    let (out, took) = run_job(dir.path(), &job, &results);
    out.expect_ok();
    // 6 runs of 200 ms with a 100 ms pause between runs.
    assert!(
        took >= Duration::from_millis(6 * 200 + 5 * 100),
        "6 runs of 200 ms and 5 pauses of 100 ms took only {took:?}"
    );
    let v = load_json(&results);
    let steps = steps(&v);
    assert_eq!(steps.len(), 2);
    for step in steps {
        let i = u64_at(step, "/index");
        let runs = array_at(step, "/repetitions/runs");
        assert_eq!(runs.len(), 3, "step {i}: runs");
        let run_iops: Vec<f64> = runs.iter().map(|r| f64_at(r, "/iops")).collect();
        for r in runs {
            assert!(f64_at(r, "/iops") > 0.0, "step {i}: {r}");
            let s = f64_at(r, "/seconds");
            assert!((0.15..=0.3).contains(&s), "step {i}: a run of {s} s");
        }
        let spread = at(step, "/repetitions/iops");
        assert_eq!(u64_at(spread, "/n"), 3, "step {i}: {spread}");
        let (mean, stddev) = (f64_at(spread, "/mean"), f64_at(spread, "/stddev"));
        let (low, high) = (f64_at(spread, "/ci95_low"), f64_at(spread, "/ci95_high"));
        let (min, max) = (f64_at(spread, "/min"), f64_at(spread, "/max"));
        assert!(
            low <= mean && mean <= high && stddev >= 0.0 && min <= mean && mean <= max,
            "step {i}: IOPS spread {spread}"
        );
        let avg = run_iops.iter().sum::<f64>() / 3.0;
        assert!(
            close(mean, avg, 1e-9),
            "step {i}: mean {mean} of {run_iops:?}"
        );
        for key in [
            "mb_per_s",
            "latency_mean_ns",
            "latency_p50_ns",
            "latency_p99_ns",
        ] {
            assert_eq!(u64_at(step, &format!("/repetitions/{key}/n")), 3, "{key}");
        }
        // The step's figures are the three runs together.
        let ms = u64_at(step, "/measured_ms");
        assert!(
            (450..=900).contains(&ms),
            "step {i}: measured {ms} ms of 3 × 200"
        );
        let high_variation = at(step, "/repetitions/high_variation").as_bool().unwrap();
        assert_eq!(high_variation, f64_at(spread, "/cv_pct") > 5.0, "{spread}");
        if high_variation {
            assert!(warnings(&v).contains("varied"), "{}", warnings(&v));
        }
    }
    // The console shows the runs of each step.
    assert!(
        out.stdout.matches("3 runs").count() >= 2,
        "stdout has no `3 runs` note per step:\n{}",
        out.stdout
    );
    eprintln!("repeat: {:.1?}", started.elapsed());
}

// ---- Rate curves --------------------------------------------------------------------------

/// A curve job on `target`.
fn curve_job(dir: &Path, name: &str, target: &Path, engine: &str, extra: &str) -> PathBuf {
    write_job(
        dir,
        name,
        &format!(
            r#"engine = "{engine}"
duration = "{duration}"
interval = "100ms"
ramp = "0s"
curve = [20, 50]
{extra}

[[target]]
path = "{target}"
size = "16MiB"

[[worker]]
queue_depth = 16
[[worker.access]]
class = "db"
block_size = "4k"
read = "100%"
random = "100%"
"#,
            duration = if engine == "null" { "500ms" } else { "300ms" },
            target = target.display()
        ),
    )
}

#[test]
fn curve_levels_run_open_loop_at_their_share_of_the_maximum() {
    let dir = scratch();
    let target = {
        let _cpu = shared();
        prepared_target(dir.path())
    };
    let _cpu = exclusive();
    let started = Instant::now();
    // A stop rule that never holds: every level runs.
    let job = curve_job(
        dir.path(),
        "curve.toml",
        &target,
        "null",
        r#"stop_when = "p99 > 10s""#,
    );
    let results = dir.path().join("curve.json");
    run_job(dir.path(), &job, &results).0.expect_ok();
    let v = load_json(&results);
    let rows = steps(&v);
    let kinds: Vec<&str> = rows.iter().map(|r| str_at(r, "/kind")).collect();
    assert_eq!(kinds, ["curve-max", "curve-level", "curve-level"]);
    let max = iops(&rows[0], "/totals");
    assert!(max > 0.0, "closed-loop maximum {max}");
    for (row, level) in rows[1..].iter().zip([20.0, 50.0]) {
        assert_eq!(f64_at(row, "/curve_level_pct"), level);
        assert_eq!(f64_at(row, "/parameters/curve_level_pct"), level);
        let target_iops = f64_at(row, "/target_iops");
        assert!(
            close(target_iops, max * level / 100.0, 1e-6),
            "level {level}%: target {target_iops} IOPS, maximum {max}"
        );
        let achieved = iops(row, "/totals");
        assert!(
            close(achieved, target_iops, 0.10),
            "level {level}%: {achieved} IOPS achieved, {target_iops} intended (maximum {max})"
        );
    }
    let indexes: Vec<u64> = rows.iter().map(|r| u64_at(r, "/index")).collect();
    assert_eq!(indexes, [0, 1, 2]);
    assert!(!warnings(&v).contains("curve stopped"), "{}", warnings(&v));
    eprintln!("curve_levels: {:.1?}", started.elapsed());
}

#[test]
fn curve_stop_rule_ends_the_curve_at_the_first_level_where_it_holds() {
    let _cpu = shared();
    let started = Instant::now();
    let dir = scratch();
    let target = dir.path().join("t.dat");
    // Every class together, then one class by name: any I/O takes more than 1 ns.
    for (name, rule) in [("all", "max > 1ns"), ("db", "db:max > 1ns")] {
        let job = curve_job(
            dir.path(),
            &format!("{name}.toml"),
            &target,
            "io_uring",
            &format!(r#"stop_when = "{rule}""#),
        );
        let results = dir.path().join(format!("{name}.json"));
        run_job(dir.path(), &job, &results).0.expect_ok();
        let v = load_json(&results);
        let kinds: Vec<&str> = steps(&v).iter().map(|r| str_at(r, "/kind")).collect();
        assert_eq!(
            kinds,
            ["curve-max", "curve-level"],
            "`{rule}`: the curve stops after its first level"
        );
        assert_eq!(f64_at(&steps(&v)[1], "/curve_level_pct"), 20.0);
        let w = warnings(&v);
        assert!(
            w.contains("curve stopped at 20%"),
            "`{rule}`: no warning that the curve stopped:\n{w}"
        );
    }
    eprintln!("curve_stop_rule: {:.1?}", started.elapsed());
}

#[test]
fn stop_when_without_a_curve_is_a_usage_error() {
    let _cpu = shared();
    let dir = scratch();
    let target = dir.path().join("t.dat");
    let job = write_job(
        dir.path(),
        "stop.toml",
        &format!(
            r#"duration = "300ms"
stop_when = "p99 > 20ms"

[[target]]
path = "{}"
size = "16MiB"

[[worker]]
[[worker.access]]
block_size = "4k"
"#,
            target.display()
        ),
    );
    let results = dir.path().join("stop.json");
    let (out, _) = run_job(dir.path(), &job, &results);
    out.expect_code(2).stderr_has(&["stop_when", "curve"]);
    assert!(!target.exists(), "nothing is touched on a usage error");
}

/// BUG (reported): a stop rule naming a class the job does not have resolves, and then never
/// holds, so a typo silently disables it; it should be rejected like any unknown name.
#[test]
fn stop_when_with_an_unknown_class_is_a_usage_error() {
    let _cpu = shared();
    let dir = scratch();
    let target = dir.path().join("t.dat");
    let job = curve_job(
        dir.path(),
        "typo.toml",
        &target,
        "io_uring",
        r#"stop_when = "dbb:p99 > 20ms""#,
    );
    let out = run_in(dir.path(), ["run", job.to_str().unwrap(), "--dry-run"]);
    out.expect_code(2).stderr_has(&["stop_when", "dbb"]);
}

// ---- Steady state -------------------------------------------------------------------------

/// A steady-state job on the null engine.
fn steady_job(dir: &Path, name: &str, target: &Path, range: &str, max_rounds: u32) -> PathBuf {
    write_job(
        dir,
        name,
        &format!(
            r#"engine = "null"
interval = "100ms"
ramp = "0s"
until_steady = true
round = "300ms"
steady_rounds = 3
steady_range = "{range}"
steady_slope = "50%"
max_rounds = {max_rounds}

[[target]]
path = "{}"
size = "16MiB"

[[worker]]
queue_depth = 4
[[worker.access]]
block_size = "4k"
read = "100%"
random = "100%"
"#,
            target.display()
        ),
    )
}

#[test]
fn until_steady_stops_at_the_first_steady_window() {
    let _cpu = shared();
    let started = Instant::now();
    let dir = scratch();
    let target = prepared_target(dir.path());
    let job = steady_job(dir.path(), "steady.toml", &target, "50%", 6);
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
    let _cpu = shared();
    let started = Instant::now();
    let dir = scratch();
    let target = prepared_target(dir.path());
    let job = steady_job(dir.path(), "never.toml", &target, "0.0001%", 4);
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

// ---- Preconditioning ----------------------------------------------------------------------

const BLOCK: usize = 64 << 10;

/// Runs a read-only job on a 16 MiB file (prepared by a first run), with `precondition`, and
/// checks every 64 KiB block of the file changed while the same job without preconditioning
/// changes none. Returns the results.
fn precondition_rewrites_every_block(precondition: &str) -> Value {
    let dir = scratch();
    let target = dir.path().join("p.dat");
    let body = |pre: &str| {
        format!(
            r#"duration = "200ms"
interval = "100ms"
ramp = "0s"
{pre}

[[target]]
path = "{}"
size = "16MiB"

[[worker]]
queue_depth = 4
[[worker.access]]
block_size = "4k"
read = "100%"
random = "100%"
"#,
            target.display()
        )
    };
    let plain = write_job(dir.path(), "plain.toml", &body(""));
    let pre = write_job(
        dir.path(),
        "pre.toml",
        &body(&format!("precondition = {precondition}")),
    );
    // Prepare (random data), then a control: the same read-only job leaves the file as it is.
    run_job(dir.path(), &plain, &dir.path().join("prepare.json"))
        .0
        .expect_ok();
    let before = std::fs::read(&target).unwrap();
    assert_eq!(before.len() as u64, 16 * MIB);
    run_job(dir.path(), &plain, &dir.path().join("control.json"))
        .0
        .expect_ok();
    assert!(
        std::fs::read(&target).unwrap() == before,
        "a read-only run without preconditioning changed the target"
    );

    let results = dir.path().join("pre.json");
    run_job(dir.path(), &pre, &results).0.expect_ok();
    let after = std::fs::read(&target).unwrap();
    assert_eq!(after.len(), before.len(), "the target keeps its size");
    let unchanged: Vec<usize> = before
        .chunks(BLOCK)
        .zip(after.chunks(BLOCK))
        .enumerate()
        .filter(|(_, (a, b))| a == b)
        .map(|(i, _)| i)
        .collect();
    assert!(
        unchanged.is_empty(),
        "{precondition}: {} of {} 64 KiB blocks were not rewritten, e.g. block {:?}",
        unchanged.len(),
        before.len() / BLOCK,
        &unchanged[..unchanged.len().min(8)]
    );

    let v = load_json(&results);
    assert_eq!(at(&v, "/precondition/complete"), &Value::Bool(true));
    assert!(f64_at(&v, "/precondition/seconds") > 0.0);
    assert!(f64_at(&v, "/precondition/mb_per_s") > 0.0);
    let phase = array_at(&v, "/phases")
        .iter()
        .find(|p| str_at(p, "/name") == "precondition")
        .unwrap_or_else(|| panic!("no precondition phase: {}", at(&v, "/phases")));
    assert_eq!(str_at(phase, "/state"), "completed");
    // Its writes are not part of the measurement, which is read only.
    assert_eq!(
        u64_at(&v, "/totals/write/ops"),
        0,
        "precondition writes in the totals"
    );
    assert!(u64_at(&v, "/totals/read/ops") > 0);
    assert_eq!(steps(&v).len(), 1);
    v
}

#[test]
fn precondition_random_pass_writes_every_byte() {
    let _cpu = shared();
    let started = Instant::now();
    let v = precondition_rewrites_every_block(
        r#"{ passes = 1, pattern = "random", block_size = "64k" }"#,
    );
    assert_eq!(u64_at(&v, "/precondition/bytes_written"), 16 * MIB);
    assert_eq!(u64_at(&v, "/precondition/passes"), 1);
    assert_eq!(str_at(&v, "/precondition/pattern"), "random");
    assert_eq!(u64_at(&v, "/precondition/block_size_bytes"), 64 << 10);
    eprintln!("precondition_random: {:.1?}", started.elapsed());
}

#[test]
fn precondition_two_sequential_passes_write_every_byte_twice() {
    let _cpu = shared();
    let started = Instant::now();
    // The block size defaults to 128 KiB.
    let v = precondition_rewrites_every_block(r#"{ passes = 2, pattern = "sequential" }"#);
    assert_eq!(u64_at(&v, "/precondition/bytes_written"), 32 * MIB);
    assert_eq!(u64_at(&v, "/precondition/passes"), 2);
    assert_eq!(str_at(&v, "/precondition/pattern"), "sequential");
    assert_eq!(u64_at(&v, "/precondition/block_size_bytes"), 128 << 10);
    eprintln!("precondition_sequential: {:.1?}", started.elapsed());
}

// ---- Presets ------------------------------------------------------------------------------

const PRESETS: [&str; 9] = [
    "exchange-2007-iometer",
    "cna-database-mix",
    "hba-scaling",
    "exchange-heavy-20",
    "oltp-8k",
    "db-log",
    "data-warehouse",
    "backup",
    "file-server",
];

#[test]
fn presets_lists_every_preset_with_its_source() {
    let dir = scratch();
    let out = run_in(dir.path(), ["presets"]);
    out.expect_ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    for name in PRESETS {
        let i = lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("`storlab presets` does not list {name}:\n{}", out.stdout));
        let source = lines
            .get(i + 1)
            .and_then(|l| l.trim().strip_prefix("source:"))
            .unwrap_or_else(|| panic!("{name} has no source line:\n{}", out.stdout));
        assert!(!source.trim().is_empty(), "{name}: empty source");
    }
}

#[test]
fn presets_show_prints_a_job_file_that_resolves() {
    let dir = scratch();
    let out = run_in(dir.path(), ["presets", "show", "oltp-8k"]);
    out.expect_ok();
    assert!(out.stdout.contains("# Source"), "{}", out.stdout);
    let job = write_job(dir.path(), "oltp.toml", &out.stdout);
    let dry = run_in(dir.path(), ["run", job.to_str().unwrap(), "--dry-run"]);
    dry.expect_ok();
    assert!(
        dry.stdout.contains("storlab-scratch/presets/oltp.dat"),
        "{}",
        dry.stdout
    );
    assert!(
        !dir.path().join("storlab-scratch").exists(),
        "--dry-run created the scratch directory"
    );
}

#[test]
fn presets_show_unknown_name_is_a_usage_error() {
    let dir = scratch();
    let out = run_in(dir.path(), ["presets", "show", "nope"]);
    out.expect_code(2).stderr_has(&["nope", "oltp-8k"]);
    let out = run_in(dir.path(), ["run", "--preset", "nope", "--dry-run"]);
    out.expect_code(2).stderr_has(&["nope"]);
}

#[test]
fn preset_targets_are_replaced_in_order_when_the_count_matches() {
    let dir = scratch();
    let paths: Vec<PathBuf> = (1..=8)
        .map(|i| dir.path().join(format!("lun{i}.dat")))
        .collect();
    let mut args = vec!["run", "--preset", "exchange-2007-iometer", "--dry-run"];
    for p in &paths {
        args.extend(["--target", p.to_str().unwrap()]);
    }
    let out = run_in(dir.path(), &args);
    out.expect_ok();
    let names = ["db1", "db2", "db3", "db4", "log1", "log2", "log3", "log4"];
    for (name, path) in names.iter().zip(&paths) {
        let line = format!("{name} = {}", path.display());
        assert!(
            out.stdout.contains(&line),
            "{name} keeps its name and gets {}:\n{}",
            path.display(),
            out.stdout
        );
    }
    assert!(!out.stdout.contains("storlab-scratch"), "{}", out.stdout);
    // Worker assignments stay: one database target per database worker.
    for i in 0..4 {
        assert!(
            out.stdout.contains(&format!("targets db{} ", i + 1)),
            "db#{i} on db{}:\n{}",
            i + 1,
            out.stdout
        );
    }
}

/// Runs a preset for about a second on 16 MiB files in a fresh working directory (the
/// presets use relative paths under storlab-scratch/) and returns its results.
fn run_preset(name: &str, extra: &[&str]) -> Value {
    let _cpu = shared();
    let started = Instant::now();
    let dir = scratch();
    let results = dir.path().join(format!("{name}.json"));
    let mut args = vec![
        "run",
        "--preset",
        name,
        "--size",
        "16MiB",
        "--duration",
        "300ms",
        "--interval",
        "100ms",
        "--ramp",
        "0s",
        "-o",
        results.to_str().unwrap(),
    ];
    args.extend(extra);
    run_in(dir.path(), &args).expect_ok();
    let v = load_json(&results);
    assert_eq!(at(&v, "/interrupted"), &Value::Bool(false), "{name}");
    assert!(ops(&v, "/totals") > 0, "{name}: no I/O");
    assert_eq!(u64_at(&v, "/totals/read/errors"), 0, "{name}");
    assert_eq!(u64_at(&v, "/totals/write/errors"), 0, "{name}");
    for t in array_at(&v, "/targets") {
        let path = Path::new(str_at(t, "/path"));
        let full = dir.path().join(path);
        assert!(
            path.starts_with("storlab-scratch/presets") && full.is_file(),
            "{name}: target {} is not under the working directory's storlab-scratch/presets",
            path.display()
        );
        assert_eq!(u64_at(t, "/size_bytes"), 16 * MIB, "{name}: --size");
        assert_eq!(std::fs::metadata(&full).unwrap().len(), 16 * MIB, "{name}");
    }
    eprintln!("preset {name}: {:.1?}", started.elapsed());
    v
}

#[test]
fn preset_exchange_2007_iometer_runs() {
    let v = run_preset("exchange-2007-iometer", &[]);
    assert_eq!(steps(&v).len(), 1);
    assert_eq!(array_at(&steps(&v)[0], "/repetitions/runs").len(), 3);
    assert!(ops(&v, "/classes/database") > 0 && ops(&v, "/classes/log") > 0);
}

#[test]
fn preset_cna_database_mix_runs() {
    let v = run_preset("cna-database-mix", &[]);
    let blocks: Vec<f64> = steps(&v)
        .iter()
        .map(|s| f64_at(s, "/parameters/block_size"))
        .collect();
    let want: Vec<f64> = (0..6).map(|i| (4096u64 << i) as f64).collect();
    assert_eq!(blocks, want);
    assert_eq!(array_at(&v, "/targets").len(), 12);
}

#[test]
fn preset_hba_scaling_runs() {
    let v = run_preset("hba-scaling", &[]);
    let steps = steps(&v);
    assert_eq!(steps.len(), 48);
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(
            f64_at(step, "/parameters/workers"),
            [1.0, 2.0, 4.0, 8.0][i / 12]
        );
        assert_eq!(
            f64_at(step, "/parameters/block_size"),
            (512u64 << (i % 12)) as f64
        );
        assert!(ops(step, "/totals") > 0, "step {i}: no I/O");
    }
}

#[test]
fn preset_exchange_heavy_20_runs() {
    let v = run_preset("exchange-heavy-20", &[]);
    assert_eq!(array_at(&v, "/targets").len(), 20);
    assert_eq!(array_at(&v, "/workers").len(), 20);
}

#[test]
fn preset_oltp_8k_runs() {
    let v = run_preset("oltp-8k", &[]);
    assert!(u64_at(&v, "/totals/read/ops") > 0 && u64_at(&v, "/totals/write/ops") > 0);
}

#[test]
fn preset_db_log_runs() {
    let v = run_preset("db-log", &[]);
    assert_eq!(u64_at(&v, "/totals/read/ops"), 0);
    assert!(u64_at(&v, "/totals/write/ops") > 0);
}

#[test]
fn preset_data_warehouse_runs() {
    let v = run_preset("data-warehouse", &[]);
    let blocks: Vec<f64> = steps(&v)
        .iter()
        .map(|s| f64_at(s, "/parameters/block_size"))
        .collect();
    let want: Vec<f64> = (0..5).map(|i| ((64u64 << 10) << i) as f64).collect();
    assert_eq!(blocks, want, "64 KiB doubling to 1 MiB");
}

#[test]
fn preset_backup_runs() {
    let v = run_preset("backup", &[]);
    assert!(u64_at(&v, "/totals/read/ops") > 0);
    assert_eq!(u64_at(&v, "/totals/write/ops"), 0);
}

#[test]
fn preset_file_server_runs() {
    // 512-byte O_DIRECT I/O: runs as is where the filesystem's logical block size is 512.
    let v = run_preset("file-server", &[]);
    assert!(u64_at(&v, "/totals/read/ops") > 0 && u64_at(&v, "/totals/write/ops") > 0);
}
