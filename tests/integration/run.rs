//! One-line runs (`storlab run --target ...`): the io_uring engine on a prepared file and the
//! results file it writes, its fast paths (`[io_uring]`) and what every view says of them, the
//! psync and null engines, `--json`, `--dry-run` and open loop.

use crate::harness::{
    MIB, RunArgs, array_at, at, check_dir_summary, check_open_loop_accounting, close, f64_at,
    load_json, report_html, run_in, scratch, share_tolerance, str_at, u64_at,
};
use serde_json::Value;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

/// Read share of a run, from the totals.
fn read_share(v: &Value, pointer: &str) -> f64 {
    let reads = u64_at(v, &format!("{pointer}/read/ops")) as f64;
    let writes = u64_at(v, &format!("{pointer}/write/ops")) as f64;
    reads / (reads + writes)
}

/// The first 4 KiB at `offset` of `path`.
fn block_at(path: &Path, offset: u64) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap();
    let mut buf = vec![0u8; 4096];
    file.read_exact_at(&mut buf, offset).unwrap();
    buf
}

#[test]
fn io_uring_run_writes_complete_results_and_reuses_the_prepared_file() {
    let dir = scratch();
    let target = dir.path().join("data.dat");
    let results = dir.path().join("r1.json");
    let size = 64 * MIB;
    let v = RunArgs::target(&target)
        .size("64MiB")
        .flags(&["--bs", "4k", "--read", "70", "--random", "100"])
        .flags(&["--qd", "8", "--workers", "2"])
        .flags(&["--ramp", "1s", "--duration", "2s", "--interval", "500ms"])
        .results(&results)
        .run_ok(dir.path());

    // Identity of the file and the run.
    let schema = storlab::results::schema::SCHEMA_VERSION.to_string();
    assert_eq!(str_at(&v, "/schema_version"), schema);
    assert!(!str_at(&v, "/storlab_version").is_empty());
    assert!(at(&v, "/job").is_object());
    assert!(at(&v, "/host").is_object());
    assert_eq!(at(&v, "/interrupted"), &Value::Bool(false));
    assert!(
        array_at(&v, "/warnings").iter().all(Value::is_string),
        "warnings must be a list of strings"
    );
    assert_eq!(str_at(&v, "/engine/name"), "io_uring");
    let phases: Vec<(&str, &str)> = array_at(&v, "/phases")
        .iter()
        .map(|p| (str_at(p, "/name"), str_at(p, "/state")))
        .collect();
    assert_eq!(
        phases,
        [
            ("prepare", "completed"),
            ("ramp", "completed"),
            ("measure", "completed")
        ]
    );
    let measured_ms = u64_at(&v, "/measured_ms");
    assert!(
        (1900..=2300).contains(&measured_ms),
        "measured_ms {measured_ms} for --duration 2s"
    );

    // Totals: every field, a 70% read share, 4 KiB blocks, no closed-loop service time.
    for dir in ["read", "write"] {
        let p = format!("/totals/{dir}");
        check_dir_summary(&v, &p);
        let ops = u64_at(&v, &format!("{p}/ops"));
        assert!(ops > 0, "{p}: no ops");
        assert_eq!(
            u64_at(&v, &format!("{p}/bytes")),
            ops * 4096,
            "{p}: 4 KiB blocks"
        );
        assert!(
            at(&v, &p).get("service_latency_ns").is_none(),
            "closed loop has no separate service time"
        );
    }
    // Each I/O is a read with probability 70%: within 5 points, or more when the machine made
    // too few I/Os for that (see `share_tolerance`).
    let share = read_share(&v, "/totals");
    let n = u64_at(&v, "/totals/read/ops") + u64_at(&v, "/totals/write/ops");
    let within = share_tolerance(0.7, n, 0.05);
    assert!(
        (share - 0.7).abs() <= within,
        "read share {share} of {n} I/Os, expected 0.7 ± {within}"
    );

    // Classes, workers, devices, CPU.
    assert!(
        at(&v, "/classes")
            .as_object()
            .unwrap()
            .contains_key("worker")
    );
    check_dir_summary(&v, "/classes/worker/read");
    assert_eq!(
        u64_at(&v, "/classes/worker/read/ops"),
        u64_at(&v, "/totals/read/ops")
    );
    let workers = array_at(&v, "/workers");
    assert_eq!(workers.len(), 2, "--workers 2");
    let worker_reads: u64 = workers.iter().map(|w| u64_at(w, "/totals/read/ops")).sum();
    assert_eq!(worker_reads, u64_at(&v, "/totals/read/ops"));
    let devices = array_at(&v, "/devices");
    if let Some(device) = at(&v, "/targets/0/device").as_str() {
        assert!(
            devices.iter().any(|d| str_at(d, "/name") == device),
            "the target's device {device} is missing from devices: {devices:?}"
        );
    }
    for key in ["process_user_pct", "process_system_pct", "system_idle_pct"] {
        f64_at(&v, &format!("/host_cpu/{key}"));
    }

    check_prepared_target(&v, &target, size);
    check_time_series(&v, dir.path());

    // The results file reads back through the schema (deny_unknown_fields).
    run_in(dir.path(), ["report", results.to_str().unwrap()]).expect_ok();

    // A second run reuses the prepared file as it is.
    let v2 = RunArgs::target(&target)
        .size("64MiB")
        .flags(&["--read", "70", "--duration", "1s"])
        .results(&dir.path().join("r2.json"))
        .run_ok(dir.path());
    assert_eq!(at(&v2, "/targets/0/prepare/reused"), &Value::Bool(true));
    assert_eq!(u64_at(&v2, "/targets/0/prepare/written_bytes"), 0);
    assert_eq!(
        at(&v2, "/targets/0/prepare/data_seed"),
        at(&v, "/targets/0/prepare/data_seed")
    );
}

/// Target: prepared now, at full size, not sparse, with distinct non-zero data.
fn check_prepared_target(v: &Value, target: &Path, size: u64) {
    assert_eq!(str_at(v, "/targets/0/kind"), "file");
    assert_eq!(u64_at(v, "/targets/0/size_bytes"), size);
    assert_eq!(at(v, "/targets/0/prepare/reused"), &Value::Bool(false));
    assert_eq!(u64_at(v, "/targets/0/prepare/written_bytes"), size);
    let meta = std::fs::metadata(target).unwrap();
    assert_eq!(meta.len(), size);
    assert!(
        meta.blocks() * 512 >= size,
        "the prepared file is sparse: {} bytes allocated of {size}",
        meta.blocks() * 512
    );
    let blocks = [0, MIB, size / 2, size - 4096].map(|o| block_at(target, o));
    for (i, b) in blocks.iter().enumerate() {
        assert!(b.iter().any(|&x| x != 0), "block {i} of the file is zeros");
        for other in &blocks[i + 1..] {
            assert_ne!(b, other, "the file repeats a block");
        }
    }
}

/// Time series: 2 ramp + 4 measure intervals, inline and in the NDJSON file beside it.
fn check_time_series(v: &Value, dir: &Path) {
    let ts = array_at(v, "/timeseries");
    assert_eq!(ts.len(), 6, "1s ramp + 2s measure at 500ms intervals");
    let phases: Vec<&str> = ts.iter().map(|r| str_at(r, "/phase")).collect();
    assert_eq!(
        phases,
        ["ramp", "ramp", "measure", "measure", "measure", "measure"]
    );
    let ends: Vec<u64> = ts.iter().map(|r| u64_at(r, "/t_end_ms")).collect();
    assert_eq!(ends, [500, 1000, 1500, 2000, 2500, 3000]);
    let interval_reads: u64 = ts
        .iter()
        .filter(|r| str_at(r, "/phase") == "measure")
        .map(|r| u64_at(r, "/total/read/ops"))
        .sum();
    assert!(
        close(
            interval_reads as f64,
            u64_at(v, "/totals/read/ops") as f64,
            0.01
        ),
        "measure intervals add up to {interval_reads} reads, totals say {}",
        u64_at(v, "/totals/read/ops")
    );
    let ndjson_path = dir.join("r1.ndjson");
    assert_eq!(
        Path::new(str_at(v, "/timeseries_path")),
        ndjson_path.as_path()
    );
    let ndjson = std::fs::read_to_string(&ndjson_path).unwrap();
    let lines: Vec<Value> = ndjson
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad NDJSON line {l}: {e}")))
        .collect();
    assert_eq!(lines.len(), ts.len(), "one NDJSON line per interval");
    assert_eq!(
        &lines, ts,
        "the NDJSON file and the inline time series differ"
    );
}

/// A one-line run with `extra` flags on a 16 MiB `NAME.dat` in `dir`, which must succeed;
/// returns its results (`NAME.json`).
fn one_line(dir: &Path, name: &str, extra: &[&str]) -> Value {
    RunArgs::target(&dir.join(format!("{name}.dat")))
        .size("16MiB")
        .flags(extra)
        .results(&dir.join(format!("{name}.json")))
        .run_ok(dir)
}

#[test]
fn psync_engine_runs_and_records_that_it_ran_at_queue_depth_1() {
    let dir = scratch();
    let v = one_line(
        dir.path(),
        "psync",
        &[
            "--engine",
            "psync",
            "--qd",
            "8",
            "--read",
            "70",
            "--duration",
            "1s",
        ],
    );
    assert_eq!(str_at(&v, "/engine/name"), "psync");
    assert_eq!(at(&v, "/interrupted"), &Value::Bool(false));
    check_dir_summary(&v, "/totals/read");
    check_dir_summary(&v, "/totals/write");
    assert!(u64_at(&v, "/totals/read/ops") > 0 && u64_at(&v, "/totals/write/ops") > 0);
    assert_eq!(u64_at(&v, "/job/workers/0/queue_depth"), 1);
    let warnings = array_at(&v, "/warnings");
    assert!(
        warnings.iter().any(|w| {
            let w = w.as_str().unwrap_or_default();
            w.contains("psync") && w.contains("queue_depth 8") && w.contains("run as 1")
        }),
        "no queue-depth warning in {warnings:?}"
    );
}

/// At queue depth 1 a closed-loop worker spends nearly all its time waiting for its one I/O,
/// so IOPS × mean latency is close to 1 (Little's law). A latency that leaves out the I/O
/// itself gives a product near 0.
///
/// Load cannot push a correct latency below the bound: the time a busy machine takes to give
/// the worker a CPU once its I/O completes falls inside the latency (the completion time is
/// read when the worker runs again), and a slow disk lengthens the I/O, which is inside it
/// too. Only the worker's own few microseconds of bookkeeping between one completion and the
/// next submission fall outside, and they run without sleeping.
#[test]
fn psync_latency_includes_the_io() {
    let dir = scratch();
    for (engine, name) in [("psync", "psync-lat"), ("io_uring", "uring-lat")] {
        let extra = [
            "--engine",
            engine,
            "--qd",
            "1",
            "--read",
            "100",
            "--duration",
            "1s",
        ];
        let v = &one_line(dir.path(), name, &extra);
        let iops = f64_at(v, "/totals/read/iops");
        let mean_s = f64_at(v, "/totals/read/latency_ns/mean") / 1e9;
        let busy = iops * mean_s;
        assert!(
            busy > 0.5,
            "{engine}: {iops:.0} IOPS at queue depth 1 with a mean latency of {:.2} µs: \
             IOPS × latency = {busy:.3}, so the latency does not cover the I/O",
            mean_s * 1e6
        );
    }
}

#[test]
fn null_engine_counts_ops_and_says_no_io_was_done() {
    let dir = scratch();
    // The null engine needs an existing target: prepare it with a short real run.
    one_line(dir.path(), "null", &["--duration", "200ms"]);
    let v = one_line(
        dir.path(),
        "null",
        &["--engine", "null", "--qd", "4", "--duration", "1s"],
    );
    assert_eq!(str_at(&v, "/engine/name"), "null");
    assert_eq!(at(&v, "/interrupted"), &Value::Bool(false));
    assert!(u64_at(&v, "/totals/read/ops") > 0);
    check_dir_summary(&v, "/totals/read");
    let warnings = array_at(&v, "/warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap_or_default().contains("null engine")),
        "no null-engine warning in {warnings:?}"
    );
}

#[test]
fn json_flag_prints_only_the_results_json() {
    let dir = scratch();
    let results = dir.path().join("json.json");
    let out = RunArgs::target(&dir.path().join("json.dat"))
        .size("16MiB")
        .flags(&["--duration", "1s", "--json"])
        .output(&results)
        .run(dir.path());
    out.expect_ok();
    let printed: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document: {e}\n{}", out.stdout));
    assert_eq!(
        str_at(&printed, "/schema_version"),
        storlab::results::schema::SCHEMA_VERSION.to_string()
    );
    assert!(u64_at(&printed, "/totals/read/ops") > 0);
    assert_eq!(
        printed,
        load_json(&results),
        "stdout and the results file differ"
    );
}

#[test]
fn dry_run_prints_the_plan_and_creates_nothing() {
    let dir = scratch();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let target = sub.join("never.dat");
    let out = RunArgs::target(&target)
        .size("64MiB")
        .flags(&["--read", "70", "--qd", "4", "--workers", "2", "--dry-run"])
        .run(dir.path());
    out.expect_ok();
    let text = &out.stdout;
    for part in [
        "\ntargets ",
        "\nworkers ",
        target.to_str().unwrap(),
        "created and fully written",
        "4 outstanding I/Os each",
        "worker (2 workers)",
        "70% reads",
    ] {
        assert!(
            text.contains(part),
            "dry run output lacks {part:?}:\n{text}"
        );
    }
    assert!(!target.exists(), "--dry-run created the target");
    let left: Vec<_> = std::fs::read_dir(&sub).unwrap().collect();
    assert!(left.is_empty(), "--dry-run left files behind: {left:?}");
    let top: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(top.len(), 1, "--dry-run left files behind: {top:?}");
}

/// Open loop follows its schedule: 500 I/Os a second for 2 s are 1,000 intended I/Os, and
/// every one is counted, reported as never issued, or (at most a queue of them) still in
/// flight at the end; none more. The rate a loaded machine achieves is its own; that every
/// scheduled I/O is accounted for is storlab's, on any machine.
#[test]
fn open_loop_follows_its_schedule_and_reports_service_time() {
    let dir = scratch();
    let v = one_line(
        dir.path(),
        "open",
        &["--rate", "500", "--qd", "4", "--duration", "2s"],
    );
    assert_eq!(f64_at(&v, "/job/workers/0/rate/iops"), 500.0);
    assert_eq!(u64_at(&v, "/measured_ms"), 2000);
    check_open_loop_accounting(&v);
    let ops = u64_at(&v, "/totals/read/ops") + u64_at(&v, "/totals/write/ops");
    assert!(ops > 0, "no I/O");
    check_dir_summary(&v, "/totals/read");
    for k in ["min", "mean", "max", "p50", "p99"] {
        f64_at(&v, &format!("/totals/read/service_latency_ns/{k}"));
    }
    // Response time counts from the intended time, so it is never below service time.
    assert!(
        f64_at(&v, "/totals/read/latency_ns/mean")
            >= f64_at(&v, "/totals/read/service_latency_ns/mean")
    );
    assert!(at(&v, "/job/workers/0/rate").is_object());
}

#[test]
fn html_report_is_self_contained_and_rebuilt_from_the_results_file() {
    let dir = scratch();
    let results = dir.path().join("html.json");
    let html = dir.path().join("live.html");
    RunArgs::target(&dir.path().join("html.dat"))
        .size("16MiB")
        .flags(&["--duration", "2s", "--interval", "500ms", "--read", "70"])
        .results(&results)
        .flags(&["--html", html.to_str().unwrap()])
        .run(dir.path())
        .expect_ok();
    let live = std::fs::read_to_string(&html).unwrap();
    let rebuilt = report_html(dir.path(), &results, &dir.path().join("rebuilt.html"));
    assert_eq!(
        live, rebuilt,
        "the report comes from the results file alone"
    );
    for external in ["<script", "src=", "href=", "url(", "@import", "<link"] {
        assert!(!live.contains(external), "the report loads `{external}`");
    }
    assert!(live.starts_with("<!DOCTYPE html>"));
    assert!(live.contains("<h2>Classes</h2>"));
    // The IOPS chart draws its `total` series with one point per interval (4 measured).
    let chart = live
        .split("data-chart=\"iops-over-time\"")
        .nth(1)
        .expect("an IOPS-over-time chart")
        .split("</figure>")
        .next()
        .unwrap();
    let points = chart
        .split("data-series=\"total\"")
        .nth(1)
        .expect("a total series")
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert_eq!(points.split(' ').count(), 4, "{points}");
}

/// Whether the machine lacks what a test needs: fails under CI (where it must be there),
/// else says so and lets the test skip.
fn lacks(what: &str, why: &str) -> bool {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true and {what} is not available: {why}"
    );
    eprintln!("skipped: {what} is not available: {why}");
    true
}

/// The io_uring fast paths from the command line: a submission polling thread, polled
/// completions (probed: this machine's disks have no poll queues, so the probe's reason is
/// recorded) and completion batching. The results say which paths each ring used and why any
/// was not, and the summary, the dry run and the HTML report say the same.
#[test]
fn io_uring_fast_paths_are_recorded_and_every_view_says_the_same() {
    let dir = scratch();
    let d = dir.path();
    let flags = [
        "--qd",
        "4",
        "--duration",
        "1s",
        "--sqpoll",
        "--sqpoll-idle",
        "10ms",
        "--hipri",
        "--batch-complete-min",
        "2",
        "--batch-complete-max",
        "4",
    ];
    let plan = RunArgs::target(&d.join("f.dat"))
        .size("16MiB")
        .flags(&flags)
        .flags(&["--dry-run"])
        .run(d);
    plan.expect_ok().stdout_has(&[
        "polled completions (IOPOLL)",
        "a submission polling thread (idle after 10 ms)",
        "waits for 2 completions at once",
        "reaps at most 4 completions at once",
    ]);
    let results = d.join("f.json");
    let args = RunArgs::target(&d.join("f.dat"))
        .size("16MiB")
        .flags(&flags)
        .results(&results);
    let out = args.run(d);
    out.expect_ok();
    let v = load_json(&results);
    assert_eq!(at(&v, "/job/io_uring/poll"), &Value::Bool(true));
    assert_eq!(u64_at(&v, "/job/io_uring/sqpoll/idle_ms"), 10);
    assert_eq!(u64_at(&v, "/job/io_uring/batch_complete_min"), 2);
    assert_eq!(u64_at(&v, "/job/io_uring/batch_complete_max"), 4);
    let used: Vec<&str> = array_at(&v, "/engine/io_uring/used")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let not_used = array_at(&v, "/engine/io_uring/not_used");
    let why = |path: &str| {
        not_used
            .iter()
            .find(|n| n["path"] == path)
            .map(|n| str_at(n, "/why").to_string())
    };
    assert!(
        !used.contains(&"defer_taskrun"),
        "the kernel refuses deferred task work beside a polling thread: {used:?}"
    );
    let sqpoll = used.contains(&"sqpoll") || lacks("SQPOLL", &why("sqpoll").unwrap_or_default());
    if sqpoll && used.contains(&"sqpoll") {
        assert!(f64_at(&v, "/engine/io_uring/sqpoll_cpu_s") > 0.0, "{v:#}");
    }
    match why("iopoll") {
        Some(w) => assert!(
            w.contains("cannot be polled") && w.contains("io_poll"),
            "{w}"
        ),
        None => assert!(
            used.contains(&"iopoll"),
            "iopoll neither used nor explained"
        ),
    }
    // The summary's line, built from the results file.
    let mut line = used.join(", ");
    for n in not_used {
        line.push_str(&format!(
            "; not {}: {}",
            str_at(n, "/path"),
            str_at(n, "/why")
        ));
    }
    if let Some(cpu) = at(&v, "/engine/io_uring/sqpoll_cpu_s").as_f64() {
        line.push_str(&format!(
            "; submission polling threads used {cpu:.2} s of CPU"
        ));
    }
    out.stdout_has(&[&format!("io_uring   {line}")]);
    let html = report_html(d, &results, &d.join("f.html"));
    let unescaped = html
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    assert!(
        unescaped.contains(&format!("io_uring paths: {line}")),
        "the HTML report's io_uring paths differ from the results file's: {line}"
    );
}

/// A default run asks for the fastest task-work mode and registers its ring: on this kernel
/// (6.1 or later) deferred task work with a single issuer.
#[test]
fn a_default_run_uses_deferred_task_work_and_a_registered_ring() {
    let dir = scratch();
    let v = one_line(dir.path(), "default", &["--duration", "300ms", "--qd", "2"]);
    let used: Vec<&str> = array_at(&v, "/engine/io_uring/used")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for path in [
        "single_issuer",
        "defer_taskrun",
        "registered_ring",
        "fixed_files",
        "fixed_buffers",
    ] {
        if !used.contains(&path) {
            let why = array_at(&v, "/engine/io_uring/not_used")
                .iter()
                .find(|n| n["path"] == path)
                .map(|n| str_at(n, "/why").to_string());
            let why = why.unwrap_or_else(|| panic!("{path} neither used nor explained: {v:#}"));
            lacks(path, &why);
        }
    }
    assert_eq!(u64_at(&v, "/engine/io_uring/workers"), 1);
}

/// A cool-down (`--cooldown`, DiskSpd's `-C`) keeps the I/O going after the measured time and
/// counts none of it: 200 paced 4 KiB writes a second, sequential from the file's start, for
/// 1 s measured and 1 s of cool-down. The measured time, the totals and the time series hold
/// the first second only; the file shows the second's writes too (each written block's
/// header says a run wrote it); the phases list the cool-down; the plan printed, the results
/// and the HTML report say it alike.
#[test]
fn a_cooldown_keeps_io_going_after_the_measurement_and_counts_none_of_it() {
    let dir = scratch();
    // In memory when the machine has it: a stall of the shared scratch disk is not the run's.
    let ram = crate::exchange::devices::ram_dir();
    let target = ram
        .as_ref()
        .map_or(dir.path(), |r| r.path())
        .join("cool.dat");
    let results = dir.path().join("cool.json");
    let out = RunArgs::target(&target)
        .size("16MiB")
        .flags(&[
            "--rate",
            "200",
            "--qd",
            "1",
            "--read",
            "0",
            "--random",
            "0",
            "--bs",
            "4k",
            "--duration",
            "1s",
            "--ramp",
            "0s",
            "--cooldown",
            "1s",
        ])
        .results(&results)
        .run(dir.path());
    out.expect_ok();
    let said = "1 s measured, then 1 s cool-down (not counted)";
    assert!(out.stdout.contains(said), "{}", out.stdout);
    let v = load_json(&results);
    assert_eq!(u64_at(&v, "/job/cooldown_ms"), 1000);
    assert_eq!(u64_at(&v, "/measured_ms"), 1000);
    let measured = u64_at(&v, "/totals/write/ops");
    // Paced: 200 due in the measured second (fewer on a host that delays the worker).
    assert!(
        (100..=201).contains(&measured),
        "{measured} writes measured"
    );
    let phases = array_at(&v, "/phases");
    let phase = |name: &str| {
        (phases.iter())
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no {name} phase: {phases:?}"))
    };
    assert_eq!(phase("measure")["state"], "completed");
    assert!(phase("measure")["seconds"].as_f64().unwrap() <= 1.0);
    assert_eq!(phase("cooldown")["state"], "completed");
    let cooled = phase("cooldown")["seconds"].as_f64().unwrap();
    assert!(cooled >= 1.0, "the cool-down took {cooled} s");
    // The time series ends with the measured time.
    let series = array_at(&v, "/timeseries");
    let last = series.last().unwrap();
    assert_eq!(u64_at(last, "/t_end_ms"), 1000);
    let in_series: u64 = series.iter().map(|r| u64_at(r, "/total/write/ops")).sum();
    assert_eq!(in_series, measured);
    // The file: blocks a run wrote (sector kind 2: a run without verification) against the
    // prepared ones (kind 0). The cool-down wrote more, at most its 200 due (and the one in
    // flight), none counted; how many of them a loaded host lets it issue is the host's (130
    // measured and 42 more, at eight tests at once on two CPUs).
    let data = std::fs::read(&target).unwrap();
    let written = (data.chunks(4096))
        .filter(|b| u32::from_le_bytes(b[12..16].try_into().unwrap()) == 2)
        .count() as u64;
    assert!(
        written > measured && written <= measured + 202,
        "{written} blocks written, {measured} measured"
    );
    let html = report_html(dir.path(), &results, &dir.path().join("cool.html"));
    assert!(html.contains(said), "the HTML report lacks {said:?}");
}
