//! Test setups run for real: `[cycle]` expansion (order, doubling ranges, per-step results and
//! the time series tagged by step) and `repeat` with its spread (`cycles`), rate curves and
//! their stop rule (`curves`), steady-state rounds (`steady`), preconditioning, every byte of
//! the target rewritten (`precondition`), and the built-in presets (`presets`: `storlab
//! presets`, `presets show`, `run --preset`, `--target` replacing preset paths). The
//! statistics themselves (spread, steady-state detection) are unit-tested in `src/stats`; here
//! only what the binary does with them.
//!
//! Jobs are short (100 ms to 500 ms per run) on 16 MiB files. The null engine is used where
//! only counting matters; it needs an existing target, so those tests prepare one with a short
//! io_uring run first.

mod curves;
mod cycles;
mod precondition;
mod presets;
mod steady;

use crate::harness::{MIB, Outcome, RunArgs, array_at, at, close, f64_at, u64_at};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `storlab run JOB -o RESULTS`, with how long it took.
fn run_job(dir: &Path, job: &Path, results: &Path) -> (Outcome, Duration) {
    let start = Instant::now();
    let out = RunArgs::job(job).output(results).run(dir);
    (out, start.elapsed())
}

/// A 16 MiB file storlab prepared (full of random data), made by a short read-only io_uring
/// run, for the null engine (which needs an existing target).
fn prepared_target(dir: &Path) -> PathBuf {
    let target = dir.join("t.dat");
    RunArgs::target(&target)
        .size("16MiB")
        .flags(&["--read", "100", "--duration", "100ms"])
        .flags(&["--interval", "100ms", "--ramp", "0s"])
        .results(&dir.join("prepare.json"))
        .run(dir)
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

/// The block size of every step, from its parameters (a `[cycle]` of block sizes).
fn step_block_sizes(v: &Value) -> Vec<f64> {
    steps(v)
        .iter()
        .map(|s| f64_at(s, "/parameters/block_size"))
        .collect()
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
