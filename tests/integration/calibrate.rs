//! `storlab calibrate` (ORION-class): on a blkio-throttled loop device its maximum small IOPS
//! and maximum large MB/s are the throttle's limits and the IOPS matrix is flat where the
//! device is saturated; its numbers are the same in the console, the JSON, the CSV files and
//! the HTML report; its dry run lists the points and the time, and predicts refusals.

use crate::exchange::devices::{BlkioCgroup, blkio_skip_reason, dev_number, ram_dir};
use crate::harness::{
    LoopDevice, MIB, array_at, f64_at, load_json, run_in, scratch, skip, sparse_image, str_at,
    u64_at, write_job,
};
use serde_json::Value;
use std::path::Path;

/// The throttle: 8 KiB reads are held to this many a second (their bytes, 3.2 MB/s, are far
/// under the byte limit) ...
const READ_IOPS: f64 = 400.0;
/// ... and 1 MiB reads to this many bytes a second (38 a second, under the IOPS limit).
const READ_BYTES: f64 = 40e6;

/// The figure of `f` ("iops", "mbps", "lat") at each point, from the results.
fn figure(p: &Value, f: &str) -> Option<f64> {
    let (small, large) = (u64_at(p, "/small"), u64_at(p, "/large"));
    match f {
        "iops" => (small > 0).then(|| f64_at(p, "/small_iops")),
        "mbps" => (large > 0).then(|| f64_at(p, "/large_mb_per_s")),
        _ => p["small_latency_ms"].as_f64(),
    }
}

/// The CSV file `suffix` beside `results`, as (small, large) → text of each cell.
fn csv_cells(results: &Path, suffix: &str) -> Vec<((u64, u64), String)> {
    let stem = results.file_stem().unwrap().to_string_lossy().into_owned();
    let path = results.with_file_name(format!("{stem}_{suffix}.csv"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut lines = text.lines();
    let head: Vec<u64> = (lines.next().unwrap().split(',').skip(1))
        .map(|s| s.parse().unwrap())
        .collect();
    let mut out = Vec::new();
    for line in lines {
        let mut cells = line.split(',');
        let large: u64 = cells.next().unwrap().parse().unwrap();
        for (small, cell) in head.iter().zip(cells) {
            if !cell.is_empty() {
                out.push(((*small, large), cell.to_string()));
            }
        }
    }
    out
}

/// `v` as every view writes figure `f`.
fn text(f: &str, v: f64) -> String {
    match f {
        "iops" => format!("{v:.1}"),
        "mbps" => format!("{v:.2}"),
        _ => format!("{v:.3}"),
    }
}

/// Every point's figures in the JSON are the CSV files' cells, and every cell is a point's.
fn check_csv_against_json(results: &Path, v: &Value) {
    let points = array_at(v, "/calibrate/points");
    for f in ["iops", "mbps", "lat"] {
        let mut want: Vec<((u64, u64), String)> = points
            .iter()
            .filter_map(|p| {
                let load = (u64_at(p, "/small"), u64_at(p, "/large"));
                figure(p, f).map(|x| (load, text(f, x)))
            })
            .collect();
        let mut got = csv_cells(results, f);
        want.sort();
        got.sort();
        assert_eq!(got, want, "{f}: the CSV cells against the JSON points");
    }
}

#[test]
fn a_throttled_device_calibrates_to_its_limits_and_saturates_flat() {
    let test = "a_throttled_device_calibrates_to_its_limits_and_saturates_flat";
    if let Some(reason) = blkio_skip_reason() {
        return skip(test, &reason);
    }
    // The image in memory: the device's speed is the throttle's, never the shared disk's.
    let ram = ram_dir();
    let dir = scratch();
    let image = ram
        .as_ref()
        .map_or(dir.path(), |r| r.path())
        .join("lun.img");
    sparse_image(&image, 256 * MIB);
    let device = LoopDevice::attach(&image, true).expect("loop device");
    let (major, minor) = dev_number(&device);
    let cgroup = BlkioCgroup::create(
        "calibrate",
        &[
            (
                "blkio.throttle.read_iops_device",
                format!("{major}:{minor} {READ_IOPS}"),
            ),
            (
                "blkio.throttle.read_bps_device",
                format!("{major}:{minor} {READ_BYTES}"),
            ),
        ],
    )
    .expect("blkio cgroup");
    // The simple level on one disk: small loads 1 to 5, then large loads 1 and 2. Every point
    // saturates the throttle (a memory-backed device serves one I/O at a time far faster),
    // and 3 s of each after a 1 s warm-up averages the throttle's 0.1 s slices (over 2 s, points
    // came out up to 3% over the limit and 4% under it).
    let results = dir.path().join("cal.json");
    let device_path = device.path.display().to_string();
    let results_arg = results.display().to_string();
    let args = [
        "calibrate",
        "--target",
        &device_path,
        "--duration",
        "3s",
        "--warm-up",
        "1s",
        "-o",
        &results_arg,
    ];
    let out = cgroup.run(dir.path(), &args);
    out.expect_ok();
    let v = load_json(&results);
    let max_iops = f64_at(&v, "/calibrate/max_small_iops/value");
    let max_mbps = f64_at(&v, "/calibrate/max_large_mb_per_s/value");
    eprintln!(
        "{test}: max small IOPS {max_iops} (throttle {READ_IOPS}), max large MB/s {max_mbps} (throttle {})",
        READ_BYTES / 1e6
    );
    let within = |got: f64, limit: f64| (got - limit).abs() <= 0.1 * limit;
    // The throttle is never exceeded. It is reached when the host lets the loop device's
    // worker and storlab's threads run: a memory-backed loop device's I/O is CPU work (its
    // kernel worker waits for a CPU like any thread), so on a host whose CPUs were contended
    // most of the time, as storlab measured it, a point may come in under the limit.
    let contended = crate::harness::cpu_pressure_pct(&v).is_some_and(|p| p > 50.0);
    let reached = |got: f64, limit: f64| within(got, limit) || (contended && got <= 1.1 * limit);
    assert!(reached(max_iops, READ_IOPS), "max small IOPS {max_iops}");
    assert!(
        reached(max_mbps, READ_BYTES / 1e6),
        "max large MB/s {max_mbps}"
    );
    // Saturated: every small load gets the IOPS limit (8 KiB reads take microseconds here,
    // the throttle milliseconds); with 3 or more in flight, a late wake-up of storlab's on a
    // loaded machine is hidden by the queue, so those points are at the limit (with both CPUs
    // busy with other work, 1 and 2 in flight gave 397 and 383, 3 to 5 gave 400). One large
    // I/O at a time waits for the byte budget, then for the copy, so it may come a little
    // under the limit. Nothing falls: no figure more than 10% below a lower load's (no note).
    let points = array_at(&v, "/calibrate/points");
    assert_eq!(points.len(), 7, "{points:?}");
    for p in points {
        eprintln!(
            "{test}: {} small × {} large: {} IOPS, {} MB/s",
            p["small"], p["large"], p["small_iops"], p["large_mb_per_s"]
        );
        if u64_at(p, "/small") >= 3 {
            let iops = f64_at(p, "/small_iops");
            assert!(reached(iops, READ_IOPS), "a saturated point: {p}");
        }
    }
    assert!(
        contended || array_at(&v, "/calibrate/notes").is_empty(),
        "no fall: {}",
        v["calibrate"]["notes"]
    );
    check_csv_against_json(&results, &v);
}

#[test]
fn console_json_csv_and_html_show_the_same_numbers() {
    let dir = scratch();
    let results = dir.path().join("cal.json");
    let html = dir.path().join("cal.html");
    // A job file's `[calibrate]` section, run as `storlab run` runs it, with flags over it.
    let job = write_job(
        dir.path(),
        "calibrate.toml",
        "[calibrate]\nlevel = \"advanced\"\nmatrix = \"detailed\"\nsmall_limit = 2\nlarge_limit = 1\nsize = \"16MiB\"\ntargets = [\"lun.dat\"]\nwarm_up = \"0s\"\n",
    );
    let out = run_in(
        dir.path(),
        [
            "run".as_ref(),
            job.as_os_str(),
            "--duration".as_ref(),
            "300ms".as_ref(),
            "-o".as_ref(),
            results.as_os_str(),
            "--html".as_ref(),
            html.as_os_str(),
        ],
    );
    out.expect_ok();
    let v = load_json(&results);
    assert_eq!(str_at(&v, "/calibrate/level"), "advanced");
    // Detailed, small 0–2 × large 0–1 but the empty point: 5 points, a step each.
    let points = array_at(&v, "/calibrate/points");
    assert_eq!(points.len(), 5);
    assert_eq!(array_at(&v, "/steps").len(), 5);
    assert_eq!(str_at(&v, "/steps/4/label"), "small 2 × large 1");
    check_csv_against_json(&results, &v);
    let page = std::fs::read_to_string(&html).unwrap();
    let c = &v["calibrate"];
    let best = |key: &str, f: &str| {
        let b = &c[key];
        (
            text(f, b["value"].as_f64().unwrap()),
            format!("at {} small × {} large outstanding", b["small"], b["large"]),
        )
    };
    for (key, f, label) in [
        ("max_small_iops", "iops", "max small IOPS"),
        ("max_large_mb_per_s", "mbps", "max large MB/s"),
        ("min_small_latency_ms", "lat", "min small latency"),
    ] {
        let (value, load) = best(key, f);
        let unit = if f == "lat" { " ms" } else { "" };
        let line = format!("{value}{unit} {load}");
        // The console's summary line and the HTML summary's cell.
        assert!(
            out.stdout
                .lines()
                .any(|l| l.starts_with(label) && l.ends_with(&line)),
            "console: {label} {line}\n{}",
            out.stdout
        );
        assert!(page.contains(&line), "HTML: {line}");
    }
    // Every matrix cell in the console and as a heat-map cell of the HTML report.
    for p in points {
        for f in ["iops", "mbps", "lat"] {
            let Some(x) = figure(p, f) else { continue };
            let cell = format!(
                "data-small=\"{}\" data-large=\"{}\">{}<",
                p["small"],
                p["large"],
                text(f, x)
            );
            assert!(page.contains(&cell), "HTML heat map: {cell}");
            assert!(out.stdout.contains(&text(f, x)), "console: {}", text(f, x));
        }
    }
}

#[test]
fn the_dry_run_lists_the_points_and_the_time_and_predicts_refusals() {
    let dir = scratch();
    // No arguments: the quick simple level, 7 points of 5 s after 1 s each.
    let out = run_in(dir.path(), ["calibrate", "--dry-run"]);
    out.expect_ok().stdout_has(&[
        "simple level",
        "7 (small × large)",
        "1×0, 2×0, 3×0, 4×0, 5×0, 0×1, 0×2",
        "42 s in all",
        "storlab-scratch/calibrate/lun-0.dat",
    ]);
    assert!(
        !dir.path().join("storlab-scratch").exists(),
        "a dry run writes nothing"
    );
    // Two disks at the normal level, ORION's 60 s a point: 11 × 5 − 1 points.
    let out = run_in(
        dir.path(),
        [
            "calibrate",
            "--level",
            "normal",
            "--disks",
            "2",
            "--duration",
            "60s",
            "--dry-run",
        ],
    );
    out.expect_ok().stdout_has(&[
        "54 (small × large): small 1–10, large 1–4, every combination",
        "10×4",
        "54 min 54 s in all",
    ]);
    // Writes to a file storlab did not create: refused, as everywhere, unless --destroy-data.
    let data = dir.path().join("data.dat");
    std::fs::write(&data, vec![7u8; 1 << 20]).unwrap();
    let target = data.display().to_string();
    let writes = [
        "calibrate",
        "--level",
        "advanced",
        "--write",
        "30%",
        "--target",
        &target,
    ];
    let out = run_in(dir.path(), [&writes[..], &["--dry-run"]].concat());
    out.expect_code(2).stdout_has(&["--destroy-data"]);
    // A parameter the named levels fix: refused with the way to set it.
    run_in(dir.path(), ["calibrate", "--write", "30%", "--dry-run"])
        .expect_code(2)
        .stderr_has(&["--write", "advanced"]);
}
