//! A results file in the shape of fio's `--output-format=json+` (fio 3.33), so that tools
//! built for fio's output (fio-plot, fio_jsonplus_clat2csv, dashboards that ingest fio JSON)
//! read storlab runs unchanged: one fio job per class, its `job options` from the class's
//! access (`rw`, `bs`, `iodepth`, `numjobs`...), `read`, `write` and `trim` with fio's fields,
//! `clat_ns` and `lat_ns` with fio's percentiles and every histogram bucket in `bins`, `sync`
//! for flushes, the `latency_ns`/`latency_us`/`latency_ms` distributions, and `disk_util`.
//!
//! What storlab does not measure is given as fio gives what it did not see: `slat_ns` with
//! `N` 0 (storlab's latency runs from submission, so it is fio's `lat`, and `clat_ns` carries
//! the same figures), `iodepth_level`, `iodepth_submit` and `iodepth_complete` with fio's keys
//! and every share 0, zero context switches and faults. CPU figures are the whole storlab process's, on every job.
//! A top-level `storlab` object says so.

use crate::job::{Access, EngineKind, Worker};
use crate::results::{ClassResult, RunResult};
use crate::stats::histogram::Histogram;
use crate::stats::summary::DirSummary;
use crate::stats::timeseries::{IntervalDir, IntervalPhase};
use serde_json::{Map, Value, json};

/// The percentiles fio reports by default, as it names them.
const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// `r` as fio's json+ output.
pub(crate) fn render(r: &RunResult) -> Value {
    let jobs: Vec<Value> = (r.classes.iter())
        .map(|(name, c)| job(r, name, c))
        .collect();
    let timestamp = chrono::DateTime::parse_from_rfc3339(&r.started_at)
        .map(|t| t.timestamp_millis())
        .unwrap_or(0);
    json!({
        "fio version": format!("storlab-{}", r.storlab_version),
        "timestamp": timestamp / 1000,
        "timestamp_ms": timestamp,
        "time": r.started_at,
        "storlab": {
            "results_schema": r.schema_version.to_string(),
            "note": "written by storlab report --format fio-json: one job per class; latency is from submission to completion (fio's lat), given as both clat_ns and lat_ns; slat_ns and the iodepth distributions are not measured (N 0, shares 0); CPU figures are the whole storlab process's, on every job",
        },
        "jobs": jobs,
        "disk_util": disk_util(r),
    })
}

/// Class `name` as a fio job.
fn job(r: &RunResult, name: &str, c: &ClassResult) -> Value {
    let class = r.job.classes.iter().position(|n| n == name);
    let workers: Vec<(&Worker, &Access)> = (r.job.workers.iter())
        .filter_map(|w| {
            let a = w.access.iter().find(|a| Some(a.class) == class)?;
            Some((w, a))
        })
        .collect();
    // A sequence's class ran for the steps it was in (a fio group for its own).
    let runtime_ms = c.measured_ms.unwrap_or(r.measured_ms);
    let cpu = r.host_cpu;
    // The same histograms as `clat_ns` (see `fio_histogram`).
    let mut all = Histogram::new();
    for d in [&c.read, &c.write] {
        if let Some(h) = fio_histogram(d).1 {
            all.add(&h);
        }
    }
    let interval = |dir: fn(&crate::stats::timeseries::IntervalClass) -> &IntervalDir| {
        // Read one record at a time (from the NDJSON file when the results do not hold it);
        // `storlab report` refuses a series it cannot read before rendering.
        let mut samples = Vec::new();
        let _ = r.timeseries.each(|t| {
            if let Some(d) = t
                .classes
                .get(name)
                .filter(|_| t.phase == IntervalPhase::Measure)
            {
                let d = dir(d);
                samples.push((d.iops, d.bytes_per_s));
            }
        });
        samples
    };
    let mut j = Map::new();
    j.insert("jobname".into(), json!(name));
    j.insert("groupid".into(), json!(0));
    j.insert("error".into(), json!(0));
    j.insert("eta".into(), json!(0));
    j.insert("elapsed".into(), json!(runtime_ms.div_ceil(1000)));
    j.insert("job options".into(), options(r, name, &workers));
    j.insert(
        "read".into(),
        direction(&c.read, runtime_ms, &interval(|c| &c.read)),
    );
    j.insert(
        "write".into(),
        direction(&c.write, runtime_ms, &interval(|c| &c.write)),
    );
    j.insert(
        "trim".into(),
        direction(&DirSummary::default(), runtime_ms, &[]),
    );
    j.insert("sync".into(), sync(&c.flush));
    j.insert("job_runtime".into(), json!(runtime_ms));
    j.insert("usr_cpu".into(), json!(cpu.process_user_pct));
    j.insert("sys_cpu".into(), json!(cpu.process_system_pct));
    for key in ["ctx", "majf", "minf"] {
        j.insert(key.into(), json!(0));
    }
    // Not measured: fio's keys, every share 0.
    let depths = |keys: &[&str]| -> Value {
        Value::Object(keys.iter().map(|k| (k.to_string(), json!(0.0))).collect())
    };
    let levels = ["1", "2", "4", "8", "16", "32", ">=64"];
    let counts = ["0", "4", "8", "16", "32", "64", ">=64"];
    j.insert("iodepth_level".into(), depths(&levels));
    j.insert("iodepth_submit".into(), depths(&counts));
    j.insert("iodepth_complete".into(), depths(&counts));
    let (ns, us, ms) = distribution(&all);
    j.insert("latency_ns".into(), ns);
    j.insert("latency_us".into(), us);
    j.insert("latency_ms".into(), ms);
    j.insert(
        "latency_depth".into(),
        json!(workers.first().map_or(1, |(w, _)| w.queue_depth)),
    );
    j.insert("latency_target".into(), json!(0));
    j.insert("latency_percentile".into(), json!(100.0));
    j.insert("latency_window".into(), json!(0));
    Value::Object(j)
}

/// The `job options` fio would have been given for the class's first access: `rw` (with
/// `rwmixread`), `bs`, `iodepth`, `numjobs` (the workers running it), `ioengine`, `direct`,
/// `filename`, `size`, `runtime`, `ramp_time`.
fn options(r: &RunResult, name: &str, workers: &[(&Worker, &Access)]) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), json!(name));
    if let Some((w, a)) = workers.first() {
        let random = a.random_pct >= 50.0;
        let rw = match (a.read_pct, random) {
            (p, true) if p >= 100.0 => "randread",
            (p, false) if p >= 100.0 => "read",
            (p, true) if p <= 0.0 => "randwrite",
            (p, false) if p <= 0.0 => "write",
            (_, true) => "randrw",
            (_, false) => "rw",
        };
        o.insert("rw".into(), json!(rw));
        if rw.ends_with("rw") {
            o.insert("rwmixread".into(), json!(format!("{}", a.read_pct.round())));
        }
        o.insert("bs".into(), json!(a.block_size_bytes.to_string()));
        o.insert("iodepth".into(), json!(w.queue_depth.to_string()));
        let files: Vec<String> = (w.targets.iter())
            .filter_map(|&t| r.job.targets.get(t))
            .map(|t| t.path.display().to_string())
            .collect();
        o.insert("filename".into(), json!(files.join(":")));
        if let Some(size) = w
            .targets
            .first()
            .and_then(|&t| r.job.targets.get(t)?.size_bytes)
        {
            o.insert("size".into(), json!(size.to_string()));
        }
    }
    o.insert("numjobs".into(), json!(workers.len().max(1).to_string()));
    let engine = match r.job.engine {
        EngineKind::IoUring => "io_uring",
        EngineKind::Psync => "psync",
        EngineKind::Null => "null",
    };
    o.insert("ioengine".into(), json!(engine));
    o.insert(
        "direct".into(),
        json!(if r.job.buffered { "0" } else { "1" }),
    );
    o.insert("runtime".into(), json!(format!("{}ms", r.job.duration_ms)));
    o.insert("ramp_time".into(), json!(format!("{}ms", r.job.ramp_ms)));
    o.insert("time_based".into(), json!("1"));
    Value::Object(o)
}

/// One direction as fio's `read`, `write` or `trim`, its IOPS and bandwidth spread from the
/// measured intervals (`intervals`: IOPS and bytes/s of each).
fn direction(d: &DirSummary, runtime_ms: u64, intervals: &[(f64, f64)]) -> Value {
    let (summary, h) = fio_histogram(d);
    let lat = latency(d.ops, summary, h.as_ref());
    let (iops, bw): (Vec<f64>, Vec<f64>) = intervals.iter().copied().unzip();
    let kib: Vec<f64> = bw.iter().map(|b| b / 1024.0).collect();
    let (iops_min, iops_max, iops_mean, iops_dev) = spread(&iops);
    let (bw_min, bw_max, bw_mean, bw_dev) = spread(&kib);
    json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": d.bytes_per_s.round() as u64,
        "bw": (d.bytes_per_s / 1024.0).round() as u64,
        "iops": d.iops,
        "runtime": if d.ops > 0 { runtime_ms } else { 0 },
        "total_ios": d.ops,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "clat_ns": lat,
        "lat_ns": lat,
        "bw_min": bw_min.round() as u64,
        "bw_max": bw_max.round() as u64,
        "bw_agg": if d.ops > 0 { 100.0 } else { 0.0 },
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": kib.len(),
        "iops_min": iops_min.round() as u64,
        "iops_max": iops_max.round() as u64,
        "iops_mean": iops_mean,
        "iops_stddev": iops_dev,
        "iops_samples": iops.len(),
    })
}

/// What fio measures of `d`: its latency from submission (in open loop the service time, not
/// the response time) and its histogram.
fn fio_histogram(d: &DirSummary) -> (&crate::stats::histogram::LatencySummary, Option<Histogram>) {
    let (summary, histogram) = match &d.service_latency_ns {
        Some(s) => (s, d.service_histogram.as_ref()),
        None => (&d.latency_ns, d.histogram.as_ref()),
    };
    (summary, histogram.and_then(|e| Histogram::decode(e).ok()))
}

/// Flushes as fio's `sync`.
fn sync(d: &DirSummary) -> Value {
    let h = d.histogram.as_ref().and_then(|e| Histogram::decode(e).ok());
    json!({
        "total_ios": d.ops,
        "lat_ns": latency(d.ops, &d.latency_ns, h.as_ref()),
    })
}

/// fio's latency object: `min`, `max`, `mean`, `stddev`, `N`, and with I/Os the percentiles
/// and, from the histogram, `bins` (each non-empty bucket's highest value, ns: its count).
fn latency(ops: u64, s: &crate::stats::histogram::LatencySummary, h: Option<&Histogram>) -> Value {
    let mut o = Map::new();
    o.insert("min".into(), json!(s.min));
    o.insert("max".into(), json!(s.max));
    o.insert("mean".into(), json!(s.mean));
    o.insert("stddev".into(), json!(s.stddev));
    o.insert("N".into(), json!(ops));
    if ops == 0 {
        return Value::Object(o);
    }
    if let Some(h) = h {
        let percentiles: Map<String, Value> = PERCENTILES
            .iter()
            .map(|&p| (format!("{p:.6}"), json!(h.quantile(p / 100.0))))
            .collect();
        o.insert("percentile".into(), Value::Object(percentiles));
        let bins: Map<String, Value> = (h.buckets().into_iter())
            .map(|(v, n)| (v.to_string(), json!(n)))
            .collect();
        o.insert("bins".into(), Value::Object(bins));
    }
    Value::Object(o)
}

/// Smallest, largest, mean and standard deviation (fio's sample deviation) of `v`.
fn spread(v: &[f64]) -> (f64, f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max, mean, var.sqrt())
}

/// fio's latency distribution: the percentage of I/Os at or under each bound and over the
/// one before, in ns (`latency_ns`: 2 ns to 1,000 ns), µs (`latency_us`: 2 µs to 1,000 µs) and
/// ms (`latency_ms`: 2 ms to 2,000 ms, then `>=2000`).
fn distribution(h: &Histogram) -> (Value, Value, Value) {
    const BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let total = h.count().max(1) as f64;
    let buckets = h.buckets();
    let share = |lo: u64, hi: u64| -> f64 {
        let n: u64 = (buckets.iter())
            .filter(|&&(v, _)| v > lo && v <= hi)
            .map(|&(_, n)| n)
            .sum();
        n as f64 * 100.0 / total
    };
    // Each unit's first bucket starts where the last one of the unit below ends (1,000 ns,
    // 1,000 µs).
    let scale = |unit: u64, bounds: &[u64]| -> Map<String, Value> {
        let mut m = Map::new();
        let mut prev = if unit == 1 { 0 } else { unit };
        for &b in bounds {
            let hi = b * unit;
            m.insert(b.to_string(), json!(share(prev, hi)));
            prev = hi;
        }
        m
    };
    let ns = scale(1, &BOUNDS);
    let us = scale(1_000, &BOUNDS);
    let mut ms = scale(
        1_000_000,
        &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000],
    );
    ms.insert(">=2000".into(), json!(share(2_000_000_000, u64::MAX)));
    (Value::Object(ns), Value::Object(us), Value::Object(ms))
}

/// The devices' counters as fio's `disk_util` (ticks: the mean wait times the count, ms).
fn disk_util(r: &RunResult) -> Value {
    let devices = r
        .devices
        .iter()
        .chain(r.hosts.iter().flat_map(|h| &h.devices));
    Value::Array(
        devices
            .map(|d| {
                let t = &d.delta;
                json!({
                    "name": d.name,
                    "read_ios": t.reads,
                    "write_ios": t.writes,
                    "read_merges": 0,
                    "write_merges": 0,
                    "read_ticks": (t.read_await_ms * t.reads as f64).round() as u64,
                    "write_ticks": (t.write_await_ms * t.writes as f64).round() as u64,
                    "in_queue": t.busy_ms,
                    "util": t.util_pct,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::render;
    use crate::results::RunResult;

    fn fixture(name: &str) -> RunResult {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(format!("{name}.json"));
        crate::results::file::load(&path).unwrap()
    }

    #[test]
    fn each_class_is_a_job_with_fios_figures_from_the_same_histograms() {
        let r = fixture("exchange");
        let out = render(&r);
        let jobs = out["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), r.classes.len());
        for (job, (name, c)) in jobs.iter().zip(&r.classes) {
            assert_eq!(job["jobname"], name.as_str());
            for (dir, d) in [("read", &c.read), ("write", &c.write)] {
                let j = &job[dir];
                assert_eq!(j["total_ios"], d.ops, "{name} {dir}");
                assert_eq!(j["io_bytes"], d.bytes);
                if d.ops == 0 {
                    assert!(j["clat_ns"].get("bins").is_none());
                    continue;
                }
                // Open loop (Exchange): fio's figures are the service times, from submission.
                let s = d.service_latency_ns.as_ref().unwrap_or(&d.latency_ns);
                let clat = &j["clat_ns"];
                assert_eq!(clat["N"], d.ops);
                assert_eq!(clat["max"], s.max);
                assert_eq!(clat["percentile"]["99.000000"], s.p99, "{name} {dir}");
                assert_eq!(clat["percentile"]["50.000000"], s.p50);
                let bins: u64 = (clat["bins"].as_object().unwrap().values())
                    .map(|v| v.as_u64().unwrap())
                    .sum();
                assert_eq!(bins, d.ops, "every I/O is in a bin");
                assert_eq!(j["lat_ns"], *clat);
                assert_eq!(j["slat_ns"]["N"], 0);
            }
            assert_eq!(job["sync"]["total_ios"], c.flush.ops);
            // The distribution over ns, µs and ms accounts for every read and write.
            let shares: f64 = ["latency_ns", "latency_us", "latency_ms"]
                .iter()
                .flat_map(|k| job[*k].as_object().unwrap().values())
                .map(|v| v.as_f64().unwrap())
                .sum();
            if c.read.ops + c.write.ops > 0 {
                assert!((shares - 100.0).abs() < 1e-6, "{name}: {shares}");
            }
        }
    }

    #[test]
    fn the_job_options_say_what_fio_would_have_been_given() {
        let r = fixture("plain");
        let out = render(&r);
        let o = &out["jobs"][0]["job options"];
        assert_eq!(o["rw"], "randrw");
        assert_eq!(o["rwmixread"], "70");
        assert_eq!(o["bs"], "4096");
        assert_eq!(o["iodepth"], "1");
        assert_eq!(o["numjobs"], "1");
        assert_eq!(o["ioengine"], "io_uring");
        assert_eq!(o["direct"], "1");
        assert!(out["fio version"].as_str().unwrap().starts_with("storlab-"));
    }
}
