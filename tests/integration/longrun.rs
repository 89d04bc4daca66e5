//! Long and wide runs: a run of 10,000 intervals peaks within 1.3 x the memory of one of 60 and
//! keeps nothing per interval (the time series goes to disk and is read back one record at a
//! time; the live view and the report's charts are bounded), and a run of 1,000 targets and
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
    /// Resident set, KiB.
    rss_kib: u64,
    /// Peak resident set so far, KiB.
    hwm_kib: u64,
}

fn memory(pid: u32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    Some(Memory {
        rss_kib: kib("VmRSS:")?,
        hwm_kib: kib("VmHWM:")?,
    })
}

/// Waits for `child`, reading its memory every `every`; returns the exit code and the readings.
fn watch(mut child: Child, every: Duration) -> (Option<i32>, Vec<Memory>) {
    let mut readings = Vec::new();
    loop {
        if let Some(status) = child.try_wait().expect("wait for storlab") {
            return (status.code(), readings);
        }
        if let Some(m) = memory(child.id()) {
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

/// The intervals of the long run: 10,000 of 4 ms, 40 s.
const LONG: u64 = 10_000;
/// Its interval, ms: shorter than a job may ask for (10 ms), through the debug build's test
/// hook, so that it has many intervals in little time. A debug build's collector takes about
/// 0.45 ms of CPU an interval (release builds about a twentieth), so 4 ms leaves it room
/// among CPU hogs; with less, it falls behind, and what waits for it is memory of its lag,
/// not of the run.
const LONG_INTERVAL_MS: u64 = 4;
/// The short run's interval, ms: its 60 intervals last as long as the long run's 10,000, and
/// the two run side by side, so that they differ only in their number of intervals (not in
/// how long their memory had to grow, nor in what the machine did meanwhile).
const SHORT_INTERVAL_MS: u64 = 667;

/// What one run of `intervals` intervals used: its peak (VmHWM, read while it lingers after
/// everything is written), its resident set as the run went, and where its outputs are.
struct Used {
    peak_kib: u64,
    readings: Vec<(u64, Memory)>,
    results: std::path::PathBuf,
    html: String,
    live: serde_json::Value,
}

/// Runs `intervals` intervals of one paced worker (200 IOPS at queue depth 1, so that what the
/// intervals cost storlab, not the I/O, is what grows) with the live view (fed every interval)
/// and the HTML report (made from the series at the end), and reads its memory every 20 ms;
/// each reading is paired with the intervals written so far.
fn run_with(d: &Path, intervals: u64, interval_ms: u64) -> Used {
    let results = d.join(format!("r{intervals}.json"));
    let html = d.join(format!("r{intervals}.html"));
    let duration = format!("{}ms", intervals * interval_ms);
    let interval = format!("{interval_ms}ms");
    let target = format!("f{intervals}.dat");
    let mut child = Command::new(STORLAB)
        .current_dir(d)
        .env("STORLAB_TEST_SHORTEST_INTERVAL_MS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .args(
            RunArgs::target(Path::new(&target))
                .size("16MiB")
                .flags(&["--bs", "4k", "--read", "70", "--random", "100"])
                .flags(&["--qd", "1", "--workers", "1", "--rate", "200"])
                .flags(&[
                    "--interval",
                    &interval,
                    "--duration",
                    &duration,
                    "--ramp",
                    "0s",
                ])
                .flags(&["--serve", "0", "--serve-linger", "1s"])
                .flags(&["--html", html.to_str().unwrap()])
                .results(&results)
                .args(),
        )
        .spawn()
        .expect("start storlab");
    let pid = child.id();
    let lines = crate::live::lines(child.stderr.take().unwrap());
    let ndjson = results.with_extension("ndjson");
    let mut readings = Vec::new();
    let (mut peak_kib, mut addr, mut live) = (0, None, serde_json::Value::Null);
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait for storlab") {
            break status.code();
        }
        if let Some(m) = memory(pid) {
            peak_kib = peak_kib.max(m.hwm_kib);
            let written = std::fs::metadata(&ndjson).map_or(0, |m| m.len());
            readings.push((written, m));
        }
        while let Ok(line) = lines.try_recv() {
            if let Some(at) = line.split("live view: http://").nth(1) {
                addr = at.split('/').next().map(str::to_string);
            }
            // Everything is written; the server lingers: what it serves now is the whole run's.
            if line.starts_with("results: ") {
                let a = addr.as_deref().expect("the live view's address");
                let body = crate::live::get(a, "/live.json").expect("/live.json answers");
                live = serde_json::from_str(&body).unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(0), "storlab failed");
    // Bytes of the series written so far into intervals, at its final mean line length.
    let size = std::fs::metadata(&ndjson).map_or(1, |m| m.len()).max(1);
    for (written, _) in &mut readings {
        *written = *written * intervals / size;
    }
    Used {
        peak_kib,
        readings,
        results,
        html: std::fs::read_to_string(&html).unwrap(),
        live,
    }
}

#[test]
fn memory_does_not_depend_on_the_number_of_intervals() {
    let dir = scratch();
    let d = dir.path();
    let (short, long) = std::thread::scope(|s| {
        let short = s.spawn(|| run_with(d, 60, SHORT_INTERVAL_MS));
        let long = run_with(d, LONG, LONG_INTERVAL_MS);
        (short.join().expect("the short run"), long)
    });
    eprintln!(
        "longrun: peak resident {} KiB with 60 intervals, {} KiB with {LONG} ({} readings)",
        short.peak_kib,
        long.peak_kib,
        long.readings.len()
    );
    // The claim, at 10,000 intervals (100,000 of 4 ms would take 400 s).
    let curve = || {
        (long.readings.iter().step_by(25))
            .map(|(n, m)| (*n, m.rss_kib))
            .collect::<Vec<_>>()
    };
    // On a host whose CPUs were contended most of the time (as the run measured it), the
    // collector falls behind the workers and what waits for it is held until it catches up:
    // memory then depends on how long the host starved the collector, not on the number of
    // intervals (beside `stress-ng --cpu 4` and seven other tests it rose from 27 to 39 MiB
    // over the first 2,000 intervals and stayed there). There only the growth per interval is
    // judged, below.
    let pressure = crate::harness::cpu_pressure_pct(&load_json(&long.results));
    let starved = pressure.is_some_and(|p| p > 50.0);
    if starved {
        eprintln!(
            "longrun: the CPUs were contended {pressure:?} % of the time: the peak of {} KiB is not judged, only the growth per interval",
            long.peak_kib
        );
    } else {
        assert!(
            long.peak_kib * 10 <= short.peak_kib * 13,
            "{LONG} intervals peaked at {} KiB, more than 1.3 x the {} KiB of 60: (intervals, KiB) {:?}",
            long.peak_kib,
            short.peak_kib,
            curve()
        );
    }
    // Nothing is kept per interval while the run goes, and so 100,000 intervals stay within
    // the claim too. The growth per interval is the median increase of the resident set from
    // each tenth of the run to the next (from the second on): a collector that falls behind
    // under CPU hogs leaves a one-off step (what waited for it stays with the allocator, 2 MiB
    // after a second late), which the median does not see; memory kept per interval raises
    // every tenth alike (a record held is about 2 KiB an interval, a point of the live page
    // 0.4 KiB), and is projected to 100,000 intervals.
    let max_rss = |from: u64, to: u64| {
        (long.readings.iter())
            .filter(|(n, _)| (from..to).contains(n))
            .map(|(_, m)| m.rss_kib)
            .max()
            .unwrap_or_else(|| panic!("no reading between {from} and {to} intervals"))
    };
    let tenths: Vec<u64> = (1..10)
        .map(|k| max_rss(LONG * k / 10, LONG * (k + 1) / 10))
        .collect();
    let mut steps: Vec<i64> = (tenths.windows(2))
        .map(|w| w[1] as i64 - w[0] as i64)
        .collect();
    steps.sort_unstable();
    let per_interval_kib = steps[steps.len() / 2].max(0) as f64 / (LONG / 10) as f64;
    let growth_kib = per_interval_kib * (100_000 - LONG) as f64;
    // Starved: the growth alone within the allowance the claim gives (0.3 x the short run).
    let base_kib = if starved {
        short.peak_kib
    } else {
        long.peak_kib
    };
    let projected_kib = base_kib as f64 + growth_kib;
    eprintln!(
        "longrun: {:.1} bytes more an interval (the tenths: {tenths:?} KiB): {projected_kib:.0} KiB at 100,000 intervals",
        per_interval_kib * 1024.0
    );
    assert!(
        projected_kib <= short.peak_kib as f64 * 1.3,
        "the resident set grows {:.1} bytes an interval ({tenths:?} KiB at each tenth of the run): {projected_kib:.0} KiB at 100,000 intervals, more than 1.3 x the {} KiB of 60",
        per_interval_kib * 1024.0,
        short.peak_kib
    );

    // Every interval is on disk, in order; the results inline a short series, and name the
    // long one (its results file is a few KiB, not 10,000 records).
    for (used, n) in [(&short, 60), (&long, LONG)] {
        let ndjson = std::fs::read_to_string(used.results.with_extension("ndjson")).unwrap();
        assert_eq!(ndjson.lines().count() as u64, n);
        let last: serde_json::Value = serde_json::from_str(ndjson.lines().last().unwrap()).unwrap();
        assert_eq!(u64_at(&last, "/index"), n - 1);
        let v = load_json(&used.results);
        assert_eq!(at(&v, "/interrupted"), &serde_json::Value::Bool(false));
        let inlined = array_at(&v, "/timeseries").len() as u64;
        assert_eq!(inlined, if n == 60 { 60 } else { 0 }, "{n} intervals");
        assert!(str_at(&v, "/timeseries_path").ends_with(&format!("r{n}.ndjson")));
    }
    assert!(std::fs::metadata(&long.results).unwrap().len() < 1 << 20);

    // The report's charts are read from the NDJSON and merged into a bounded number of
    // points, and say so; the short run's are every interval.
    assert!(!short.html.contains("data-series-note"));
    let note = long
        .html
        .split("data-series-note>")
        .nth(1)
        .and_then(|t| t.split("</p>").next())
        .expect("the long run's charts say what they merged");
    assert!(
        note.contains(&format!(
            "points for {} intervals",
            storlab::units::format_count(LONG)
        )) && note.contains("upper bound"),
        "{note}"
    );
    let iops = long
        .html
        .split("data-chart=\"iops-over-time\"")
        .nth(1)
        .unwrap();
    let points = iops
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let n = points.split(' ').count();
    assert!((300..=600).contains(&n), "{n} points on the IOPS chart");

    // The live view serves its latest intervals one by one and the ones before merged.
    let recent = array_at(&long.live, "/points").len();
    let history = array_at(&long.live, "/history").len();
    assert!(
        (150..=300).contains(&recent) && (1..=300).contains(&history),
        "/live.json: {recent} points, {history} merged"
    );
    assert!(str_at(&long.live, "/history_note").contains("upper bound"));
    assert_eq!(array_at(&short.live, "/points").len(), 60);
    assert!(array_at(&short.live, "/history").is_empty());
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
