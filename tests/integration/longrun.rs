//! Long and wide runs: a three-minute run with 10 ms intervals keeps its memory flat (the time
//! series goes to disk, the results file does not inline it), and a run of 1,000 targets and
//! 256 workers starts with the usual soft limit of 1,024 open files (storlab raises it), runs,
//! writes its results and reports; with a hard limit too low it stops with a clear error.

use crate::harness::{
    RunArgs, STORLAB, array_at, at, load_json, report_html, scratch, skip, str_at, u64_at,
    write_job,
};
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `storlab ARGS` started in `dir` through `sh -c`, after `limits` (shell `ulimit` commands).
fn storlab_under(dir: &Path, limits: &str, args: &[impl AsRef<OsStr>]) -> Command {
    let mut command = Command::new("sh");
    command
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("-c")
        .arg(format!("{limits} && exec \"$0\" \"$@\""))
        .arg(STORLAB)
        .args(args);
    command
}

/// One reading of /proc/PID/status.
#[derive(Debug, Clone, Copy)]
struct Memory {
    /// Seconds since the process started.
    t_s: f64,
    /// Resident set, KiB.
    rss_kib: u64,
    /// Peak resident set so far, KiB.
    hwm_kib: u64,
}

fn memory(pid: u32, t_s: f64) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    Some(Memory {
        t_s,
        rss_kib: kib("VmRSS:")?,
        hwm_kib: kib("VmHWM:")?,
    })
}

/// Waits for `child`, reading its memory every `every`; returns the exit code and the readings.
fn watch(mut child: Child, every: Duration) -> (Option<i32>, Vec<Memory>) {
    let start = Instant::now();
    let mut readings = Vec::new();
    loop {
        if let Some(status) = child.try_wait().expect("wait for storlab") {
            return (status.code(), readings);
        }
        if let Some(m) = memory(child.id(), start.elapsed().as_secs_f64()) {
            readings.push(m);
        }
        std::thread::sleep(every);
    }
}

fn hard_open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let hard = line.split_whitespace().nth(4)?;
    if hard == "unlimited" {
        Some(u64::MAX)
    } else {
        hard.parse().ok()
    }
}

const MEASURE_S: u64 = 180;

#[test]
fn memory_stays_flat_over_three_minutes_of_10ms_intervals() {
    let dir = scratch();
    let d = dir.path();
    let out = std::fs::File::create(d.join("stdout.txt")).unwrap();
    let err = std::fs::File::create(d.join("stderr.txt")).unwrap();
    let duration = format!("{MEASURE_S}s");
    let child = Command::new(STORLAB)
        .current_dir(d)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .args(
            RunArgs::target(Path::new("f.dat"))
                .size("16MiB")
                .flags(&["--bs", "4k", "--read", "70", "--random", "100"])
                .flags(&["--qd", "4", "--workers", "2"])
                .flags(&["--interval", "10ms", "--duration", &duration])
                .results(Path::new("r.json"))
                .args(),
        )
        .spawn()
        .expect("start storlab");
    let (code, readings) = watch(child, Duration::from_secs(1));
    let stderr = std::fs::read_to_string(d.join("stderr.txt")).unwrap_or_default();
    assert_eq!(code, Some(0), "storlab failed:\n{stderr}");

    // Measurement runs from about 1 s (after preparing 16 MiB) to about MEASURE_S + 1 s; the
    // summary and results are built after that. Compare the resident set during measurement
    // after the first 30 s with its level at 30 s.
    let during = |from: f64, to: f64| -> Vec<Memory> {
        readings
            .iter()
            .copied()
            .filter(|m| m.t_s >= from && m.t_s < to)
            .collect()
    };
    let settled = during(25.0, 35.0);
    let later = during(35.0, MEASURE_S as f64 - 5.0);
    assert!(
        !settled.is_empty() && later.len() as u64 > MEASURE_S - 60,
        "too few memory readings: {readings:?}"
    );
    let level = settled.iter().map(|m| m.rss_kib).max().unwrap();
    let peak = later.iter().map(|m| m.rss_kib).max().unwrap();
    let hwm = readings.last().map(|m| m.hwm_kib).unwrap_or(0);
    // The margin: 4 MiB or 25% of the level, whichever is larger. Measured on a 2-CPU machine
    // (debug build): the resident set is about 13 MiB and after 30 s moves by less than
    // 0.5 MiB on a quiet machine, and by 2.4 MiB when the machine is swamped (load average 27:
    // 256 worker threads of another run) and the collector falls seconds behind: the compact
    // interval statistics waiting for it (a few KiB per worker and interval) stay with the
    // allocator. What this guards against grows by far more: an interval record kept in
    // memory is about 1.4 KiB, so a time series held in memory adds 4 MiB every 30 s, 20 MiB
    // from 35 s to the end; whole statistics sets sent every interval (220 KiB per worker)
    // left 30 MiB resident after one such stall.
    let margin = (4 * 1024).max(level / 4);
    eprintln!(
        "longrun: resident {level} KiB at 25-35 s, at most {peak} KiB from 35 s to {} s, peak {hwm} KiB ({} readings)",
        MEASURE_S - 5,
        readings.len()
    );
    assert!(
        peak <= level + margin,
        "the resident set grew from {level} KiB (25-35 s) to {peak} KiB later (margin {margin} KiB): {:?}",
        later
            .iter()
            .map(|m| (m.t_s as u64, m.rss_kib))
            .collect::<Vec<_>>()
    );

    // Every interval is on disk, in order.
    let ndjson = std::fs::read_to_string(d.join("r.ndjson")).unwrap();
    let lines: Vec<&str> = ndjson.lines().collect();
    let expected = MEASURE_S * 1000 / 10;
    assert_eq!(lines.len() as u64, expected, "interval lines in r.ndjson");
    for (i, line) in lines.iter().enumerate().step_by(997) {
        let rec: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(u64_at(&rec, "/index"), i as u64);
        assert_eq!(str_at(&rec, "/phase"), "measure");
    }

    // The results name the time series instead of inlining 18,000 intervals.
    let results = d.join("r.json");
    let size = std::fs::metadata(&results).unwrap().len();
    let v = load_json(&results);
    assert_eq!(at(&v, "/interrupted"), &serde_json::Value::Bool(false));
    assert!(
        (expected as usize) > storlab::results::INLINE_INTERVALS,
        "the run must be longer than what is inlined"
    );
    let inlined = v
        .get("timeseries")
        .and_then(|t| t.as_array())
        .map_or(0, Vec::len);
    assert!(
        inlined <= storlab::results::INLINE_INTERVALS,
        "{inlined} intervals inlined"
    );
    assert!(
        str_at(&v, "/timeseries_path").ends_with("r.ndjson"),
        "timeseries_path: {}",
        at(&v, "/timeseries_path")
    );
    assert!(
        size < 1 << 20,
        "results file is {size} bytes: the time series is inlined"
    );
    assert!(u64_at(&v, "/measured_ms") >= (MEASURE_S - 1) * 1000);
}

/// A job file of `targets` 64 KiB file targets under `dir`/t and `workers` workers.
fn wide_job(dir: &Path, targets: usize, workers: usize, one_target_each: bool) -> String {
    let mut job = String::from("duration = \"3s\"\ninterval = \"1s\"\n\n");
    for i in 0..targets {
        job += &format!(
            "[[target]]\nname = \"t{i}\"\npath = \"{}\"\nsize = \"64KiB\"\n\n",
            dir.join("t").join(format!("f{i}.dat")).display()
        );
    }
    job += &format!(
        "[[worker]]\nname = \"w\"\ncount = {workers}\none_target_each = {one_target_each}\nqueue_depth = 1\n\n[[worker.access]]\nclass = \"mix\"\nblock_size = \"4k\"\nread = \"70%\"\nrandom = \"100%\"\n"
    );
    job
}

#[test]
fn thousand_targets_and_256_workers_start_run_and_report() {
    match hard_open_files_limit() {
        // Two descriptors per target (its I/O and its lock), 256 rings, headroom.
        Some(hard) if hard >= 2560 => {}
        hard => {
            return skip(
                "thousand_targets_and_256_workers_start_run_and_report",
                &format!(
                    "the hard open-file limit ({hard:?}) is below 2560; 1,000 targets (two descriptors each) and 256 rings cannot be opened"
                ),
            );
        }
    }
    let dir = scratch();
    let d = dir.path();
    std::fs::create_dir(d.join("t")).unwrap();
    let test_start = Instant::now();
    for (round, one_each) in [(0, true), (1, false)] {
        let job = write_job(
            d,
            &format!("wide{round}.toml"),
            &wide_job(d, 1000, 256, one_each),
        );
        let results = d.join(format!("wide{round}.json"));
        let started = Instant::now();
        let child = storlab_under(
            d,
            // The usual soft limit: 1,000 targets and 256 rings do not fit in it.
            "ulimit -Sn 1024",
            RunArgs::job(&job).results(&results).args(),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sh");
        let (code, readings) = watch(child, Duration::from_millis(100));
        let wall = started.elapsed().as_secs_f64();
        assert_eq!(code, Some(0), "the 1,000 x 256 run failed (round {round})");
        let v = load_json(&results);
        assert_eq!(at(&v, "/interrupted"), &serde_json::Value::Bool(false));
        let targets = array_at(&v, "/targets");
        let workers = array_at(&v, "/workers");
        assert_eq!(targets.len(), 1000);
        assert_eq!(workers.len(), 256);
        for w in workers {
            assert!(w["fatal"].is_null(), "worker failed: {w}");
        }
        let ops = u64_at(&v, "/totals/read/ops") + u64_at(&v, "/totals/write/ops");
        assert!(ops > 0, "no I/O done");
        assert_eq!(
            u64_at(&v, "/totals/read/errors") + u64_at(&v, "/totals/write/errors"),
            0
        );
        if one_each {
            // Copy i uses target i only: each of the first 256 targets was used.
            for t in &targets[..256] {
                let n = u64_at(t, "/ops/read") + u64_at(t, "/ops/write");
                assert!(n > 0, "target {} has no I/O", t["name"]);
            }
        }
        let prepare_s = array_at(&v, "/phases")
            .iter()
            .find(|p| p["name"] == "prepare")
            .and_then(|p| p["seconds"].as_f64())
            .unwrap_or(0.0);
        let peak = readings.iter().map(|m| m.hwm_kib).max().unwrap_or(0);
        eprintln!(
            "longrun: 1000 targets x 256 workers (one_target_each = {one_each}): prepare {prepare_s:.1} s, whole run {wall:.1} s, {ops} I/Os, peak resident {peak} KiB"
        );

        let page = report_html(d, &results, &d.join(format!("wide{round}.html")));
        assert!(page.contains("<html") && page.contains("t999"));
    }
    eprintln!(
        "longrun: 1000 x 256, both rounds and reports: {:.1} s",
        test_start.elapsed().as_secs_f64()
    );
}

#[test]
fn too_low_hard_open_file_limit_is_a_clear_error() {
    let dir = scratch();
    let d = dir.path();
    std::fs::create_dir(d.join("t")).unwrap();
    let job = write_job(d, "wide.toml", &wide_job(d, 1000, 256, true));
    let output = storlab_under(
        d,
        "ulimit -n 256",
        RunArgs::job(&job).results(Path::new("r.json")).args(),
    )
    .output()
    .expect("run sh");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr:\n{stderr}");
    for part in [
        "open files",
        "1000 targets",
        "256 io_uring rings",
        "hard limit 256",
        "ulimit -n",
    ] {
        assert!(stderr.contains(part), "stderr lacks {part:?}:\n{stderr}");
    }
    assert!(!stderr.contains("panicked") && !stderr.contains("os error 24"));
    // Nothing was prepared.
    assert_eq!(std::fs::read_dir(d.join("t")).unwrap().count(), 0);
}
