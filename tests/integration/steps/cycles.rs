//! `[cycle]`: every combination in order, outer parameter first, doubling ranges, per-step
//! results and the time series tagged by step; `repeat` with the spread of its runs.

use super::{
    check_step_block_size, check_step_cpu, ndjson_steps, prepared_target, run_job,
    step_block_sizes, steps, warnings,
};
use crate::harness::{JobFile, array_at, at, close, f64_at, load_json, scratch, str_at, u64_at};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

#[test]
fn cycle_runs_every_combination_outer_parameter_first() {
    let started = Instant::now();
    let dir = scratch();
    let job = JobFile::on(
        &dir.path().join("t.dat"),
        r#"duration = "300ms"
interval = "100ms"
ramp = "0s"

[cycle]
order = ["workers", "block_size"]
workers = [1, 2]
block_size = { from = "4k", to = "16k" }"#,
    )
    .named()
    .read("70%")
    .write(dir.path(), "cycle.toml");
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
            label.find(&format!("block_size={kib} KiB")),
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
    let started = Instant::now();
    let dir = scratch();
    let target = prepared_target(dir.path());
    let job = JobFile::on(
        &target,
        r#"engine = "null"
duration = "100ms"
interval = "100ms"
ramp = "0s"

[cycle]
block_size = { from = "512", to = "1MiB" }"#,
    )
    .write(dir.path(), "doubling.toml");
    let results = dir.path().join("doubling.json");
    run_job(dir.path(), &job, &results).0.expect_ok();
    let v = load_json(&results);
    let steps = steps(&v);
    let blocks = step_block_sizes(&v);
    let want: Vec<f64> = (0..12).map(|i| (512u64 << i) as f64).collect();
    assert_eq!(blocks, want, "512 B doubling to 1 MiB, both ends included");
    assert!(str_at(&steps[0], "/label").contains("block_size=512 B"));
    assert!(str_at(&steps[11], "/label").contains("block_size=1 MiB"));
    for (step, block) in steps.iter().zip(&want) {
        assert!(u64_at(step, "/totals/read/ops") > 0, "{step}");
        check_step_block_size(step, *block as u64);
    }
    eprintln!("doubling_block_size: {:.1?}", started.elapsed());
}

// ---- Repetitions ------------------------------------------------------------------------

#[test]
fn repeat_runs_every_step_three_times_and_reports_the_spread() {
    let started = Instant::now();
    let dir = scratch();
    let target = prepared_target(dir.path());
    let job = JobFile::on(
        &target,
        r#"engine = "null"
duration = "200ms"
interval = "100ms"
ramp = "0s"
repeat = 3
pause = "100ms"

[cycle]
block_size = ["4k", "8k"]"#,
    )
    .write(dir.path(), "repeat.toml");
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
        // A null engine does hundreds of thousands of I/Os a second; beside CPU hogs a run of
        // 200 ms may still find its worker without a CPU the whole time (seen once: 0 I/Os),
        // and reports that as it was.
        assert!(run_iops.iter().any(|&x| x > 0.0), "step {i}: {run_iops:?}");
        for r in runs {
            assert!(f64_at(r, "/iops") >= 0.0, "step {i}: {r}");
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

/// Two groups a step each: group 1 a worker that stops after 200 reads with `on_done` and
/// one that would run the step's 20 s, group 2 one worker of 300 ms of reads.
fn on_done_job(dir: &std::path::Path, on_done: &str) -> std::path::PathBuf {
    let text = format!(
        "duration = \"20s\"\ninterval = \"100ms\"\nramp = \"0s\"\n[cycle]\ngroup = [1, 2]\n\
         [[target]]\npath = \"{}\"\nsize = \"8MiB\"\n\
         [[worker]]\nname = \"done\"\ngroup = 1\nqueue_depth = 1\nio_limit = 200\non_done = \"{on_done}\"\n\
         [[worker.access]]\nblock_size = \"4k\"\nread = 100\n\
         [[worker]]\nname = \"long\"\ngroup = 1\nqueue_depth = 2\n[[worker.access]]\nblock_size = \"4k\"\nread = 100\n\
         [[worker]]\nname = \"next\"\ngroup = 2\nqueue_depth = 1\nio_limit = 50\n[[worker.access]]\nblock_size = \"4k\"\nread = 100\n",
        dir.join("t.dat").display()
    );
    let job = dir.join(format!("{on_done}.toml"));
    std::fs::write(&job, text).unwrap();
    job
}

#[test]
fn a_worker_done_with_its_ios_ends_the_step_or_the_run_as_its_on_done_says() {
    let dir = scratch();
    for on_done in ["end-step", "end-run"] {
        let job = on_done_job(dir.path(), on_done);
        let results = dir.path().join(format!("{on_done}.json"));
        let (out, _) = run_job(dir.path(), &job, &results);
        out.expect_ok();
        let v = load_json(&results);
        let steps = steps(&v);
        // The first step ends when `done` has done its 200 reads, not after 20 s: `long`
        // stopped with it.
        let first = &steps[0];
        assert!(u64_at(first, "/measured_ms") < 20_000, "{first}");
        let workers = array_at(first, "/workers");
        let done = workers.iter().find(|w| w["name"] == "done").unwrap();
        assert_eq!(u64_at(done, "/totals/read/ops"), 200, "{done}");
        assert_eq!(at(done, "/ended_run"), &Value::Bool(true), "{done}");
        let long = workers.iter().find(|w| w["name"] == "long").unwrap();
        assert!(u64_at(long, "/totals/read/ops") > 0 && long.get("ended_run").is_none());
        let w = array_at(&v, "/warnings")
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            w.contains(
                "worker `done` had done its I/Os and ended the measured time for every worker"
            ),
            "{w}"
        );
        assert!(
            out.stdout.contains("then every worker stops"),
            "{}",
            out.stdout
        );
        if on_done == "end-step" {
            // The next step runs as planned.
            assert_eq!(steps.len(), 2, "{on_done}");
            assert_eq!(at(&v, "/interrupted"), &Value::Bool(false));
        } else {
            // The run ends: the second step is not run, and the results say why.
            assert_eq!(steps.len(), 1, "{on_done}");
            assert!(
                w.contains("ended the run (on_done = \"end-run\"): 1 later step not run"),
                "{w}"
            );
            assert!(
                out.stdout.contains("1 later step not run"),
                "{}",
                out.stdout
            );
        }
    }
}
