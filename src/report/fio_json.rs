//! A results file in the shape of fio's `--output-format=json+` (fio 3.33), so that tools
//! built for fio's output (fio-plot, fio_jsonplus_clat2csv, dashboards that ingest fio JSON)
//! read storlab runs unchanged. Keys come in fio's order at every level (percentiles and
//! histogram bins in numeric order). One fio job per worker group (a `[[worker]]` and its
//! `count` copies: fio's job and its `numjobs`) and per step (fio's `groupid`, as `stonewall`
//! numbers fio's groups), with that step's `job options` echoed as a fio job file would write
//! them (`4k`, `256M`, `3s`), its runtime and its figures: `read`, `write` and `trim` with
//! fio's fields, `clat_ns` and `lat_ns` with fio's percentiles and every histogram bucket in
//! `bins`, `sync` for flushes, the `latency_ns`/`latency_us`/`latency_ms` distributions, and
//! `disk_util`.
//!
//! What storlab does not measure is given as fio gives what it did not see: `slat_ns` with
//! `N` 0 (storlab's latency runs from submission, so it is fio's `lat`, and `clat_ns` carries
//! the same figures), zero context switches and faults, `iodepth_complete` zero. What storlab
//! knows by construction is given: `iodepth_level` of a closed-loop worker (it keeps its
//! queue depth in flight), `iodepth_submit` of a job that submits each I/O on its own
//! (`batch = 1`). CPU figures are the whole storlab process's, on every job. A top-level
//! `storlab` object says so.

use crate::job::{Access, EngineKind, Job, Worker};
use crate::results::timeseries::Series;
use crate::results::{RunResult, WorkerResult};
use crate::stats::histogram::{Histogram, LatencySummary};
use crate::stats::host::CpuPercent;
use crate::stats::summary::{ClassSummary, DirSummary};
use crate::stats::timeseries::{IntervalClass, IntervalDir, IntervalPhase};
use serde::ser::{SerializeMap, SerializeSeq};
use serde_json::{Value, json};

/// The percentiles fio reports by default, as it names them.
const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// A JSON value whose objects keep their keys in the order they were put in (fio's).
#[derive(Debug, Clone)]
pub(crate) enum J {
    /// A scalar (or any value whose key order does not matter).
    V(Value),
    /// An object, its keys in order.
    O(Vec<(String, J)>),
    /// An array.
    A(Vec<J>),
}

impl serde::Serialize for J {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            J::V(v) => v.serialize(s),
            J::O(fields) => {
                let mut m = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            J::A(items) => {
                let mut a = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    a.serialize_element(v)?;
                }
                a.end()
            }
        }
    }
}

impl J {
    /// The same value, key order aside.
    #[cfg(test)]
    pub(crate) fn value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// An ordered object under construction.
#[derive(Default)]
struct Obj(Vec<(String, J)>);

impl Obj {
    fn v(mut self, k: &str, v: impl Into<Value>) -> Obj {
        self.0.push((k.into(), J::V(v.into())));
        self
    }
    fn j(mut self, k: &str, v: J) -> Obj {
        self.0.push((k.into(), v));
        self
    }
    fn done(self) -> J {
        J::O(self.0)
    }
}

/// One fio job: a worker group in one test (a run, or a step).
struct FioJob<'a> {
    name: String,
    groupid: usize,
    /// The test's job.
    job: &'a Job,
    /// The group's workers (their settings).
    workers: Vec<&'a Worker>,
    /// Their figures, merged.
    figures: ClassSummary,
    /// The classes they issue (for the interval spread).
    classes: Vec<String>,
    runtime_ms: u64,
    cpu: CpuPercent,
    /// The run's time series, and the test's step in it.
    series: &'a Series,
    step: Option<usize>,
}

/// `r` as fio's json+ output; `step`: only that step's jobs.
pub(crate) fn render(r: &RunResult, step: Option<usize>) -> J {
    let tests = tests(r, step);
    let jobs: Vec<J> = fio_jobs(r, &tests).iter().map(job).collect();
    let end = chrono::DateTime::parse_from_rfc3339(&r.ended_at).ok();
    let timestamp = end.map_or(0, |t| t.timestamp_millis());
    let time = end.map_or_else(String::new, |t| {
        t.with_timezone(&chrono::Local)
            .format("%a %b %e %H:%M:%S %Y")
            .to_string()
    });
    Obj::default()
        .v("fio version", format!("storlab-{}", r.storlab_version))
        .v("timestamp", timestamp / 1000)
        .v("timestamp_ms", timestamp)
        .v("time", time)
        .j("jobs", J::A(jobs))
        .j("disk_util", disk_util(r))
        .v(
            "storlab",
            json!({
                "results_schema": r.schema_version.to_string(),
                "note": "written by storlab report --format fio-json: one job per worker group and step (groupid: the step); latency is from submission to completion (fio's lat), given as both clat_ns and lat_ns; slat_ns, context switches, faults and iodepth_complete are not measured (N 0, shares 0); iodepth_level is a closed-loop worker's queue depth and iodepth_submit one I/O per submission when batch is 1, by construction; CPU figures are the whole storlab process's, on every job",
            }),
        )
        .done()
}

/// The worker groups of `job`: workers named `NAME` or `NAME#i` (one `[[worker]]` and its
/// copies), in order.
fn groups(job: &Job) -> Vec<(String, Vec<&Worker>)> {
    let mut out: Vec<(String, Vec<&Worker>)> = Vec::new();
    for w in &job.workers {
        let name = w.name.split('#').next().unwrap_or(&w.name).to_string();
        match out.iter_mut().find(|g| g.0 == name) {
            Some(g) => g.1.push(w),
            None => out.push((name, vec![w])),
        }
    }
    out
}

/// A test: a run, or a step of a sequence.
struct Test<'a> {
    groupid: usize,
    job: std::borrow::Cow<'a, Job>,
    workers: &'a [WorkerResult],
    totals: &'a ClassSummary,
    ms: u64,
    cpu: CpuPercent,
    step: Option<usize>,
}

/// The tests of `r` (step `only`, when given).
fn tests(r: &RunResult, only: Option<usize>) -> Vec<Test<'_>> {
    match &r.steps {
        Some(steps) => (steps.iter().enumerate())
            .filter(|(_, s)| only.is_none_or(|i| i == s.index))
            .map(|(n, s)| Test {
                groupid: n,
                job: std::borrow::Cow::Owned(s.job(&r.job)),
                workers: &s.workers,
                totals: &s.totals,
                ms: s.measured_ms,
                cpu: s.host_cpu,
                step: Some(s.index),
            })
            .collect(),
        None => vec![Test {
            groupid: 0,
            job: std::borrow::Cow::Borrowed(&r.job),
            workers: &r.workers,
            totals: &r.totals,
            ms: r.measured_ms,
            cpu: r.host_cpu,
            step: None,
        }],
    }
}

/// Every fio job of `tests` (of `r`).
fn fio_jobs<'a>(r: &'a RunResult, tests: &'a [Test<'a>]) -> Vec<FioJob<'a>> {
    let mut out = Vec::new();
    for t in tests {
        let job: &Job = &t.job;
        let groups = groups(job);
        let single = groups.len() == 1;
        for (name, workers) in groups {
            let results: Vec<&ClassSummary> = (t.workers.iter())
                .filter(|w| workers.iter().any(|j| j.name == w.name))
                .map(|w| &w.totals)
                .collect();
            // A results file before 1.19 has no step's own workers: a step of one group is
            // the step's totals; of several, each group's figures are not known.
            let figures = if let [one] = results.as_slice() {
                (*one).clone()
            } else if !results.is_empty() {
                ClassSummary::merge(&results, t.ms as f64 / 1e3)
            } else if single || t.step.is_none() {
                t.totals.clone()
            } else {
                continue;
            };
            let mut classes: Vec<String> = Vec::new();
            for a in workers.iter().flat_map(|w| &w.access) {
                if let Some(c) = job.classes.get(a.class).filter(|c| !classes.contains(c)) {
                    classes.push(c.clone());
                }
            }
            out.push(FioJob {
                name,
                groupid: t.groupid,
                job,
                workers,
                figures,
                classes,
                runtime_ms: t.ms,
                cpu: t.cpu,
                series: &r.timeseries,
                step: t.step,
            });
        }
    }
    out
}

/// One fio job.
fn job(j: &FioJob) -> J {
    // The test's measured intervals, read one record at a time (from the NDJSON file when
    // the results do not hold it; `storlab report` refuses a series it cannot read before
    // rendering): IOPS and bytes/s of the job's classes in each, reads and writes.
    let mut samples: [Vec<(f64, f64)>; 2] = Default::default();
    let _ = j.series.each(|t| {
        if t.phase != IntervalPhase::Measure || t.step != j.step {
            return;
        }
        for (out, dir) in samples
            .iter_mut()
            .zip([(|c| &c.read) as fn(&IntervalClass) -> &IntervalDir, |c| {
                &c.write
            }])
        {
            let (mut iops, mut bw) = (0.0, 0.0);
            for c in j.classes.iter().filter_map(|c| t.classes.get(c)) {
                iops += dir(c).iops;
                bw += dir(c).bytes_per_s;
            }
            out.push((iops, bw));
        }
    });
    let f = &j.figures;
    let mut all = Histogram::new();
    for d in [&f.read, &f.write] {
        if let Some(h) = fio_histogram(d).1 {
            all.add(&h);
        }
    }
    let share = |keys: &[&str], at: Option<&str>| -> J {
        let mut o = Obj::default();
        for k in keys {
            o = o.v(k, if Some(*k) == at { 100.0 } else { 0.0 });
        }
        o.done()
    };
    // What storlab keeps by construction: a closed-loop worker's queue depth in flight, one
    // I/O per submission with batch 1.
    let closed: Vec<u32> = (j.workers.iter())
        .filter(|w| w.rate.is_none() && w.think_ns.is_none() && w.driven_by.is_none())
        .map(|w| w.queue_depth)
        .collect();
    let level = match closed.as_slice() {
        [d, rest @ ..] if closed.len() == j.workers.len() && rest.iter().all(|x| x == d) => {
            Some(depth_bucket(*d))
        }
        _ => None,
    };
    let submit = (j.job.batch == 1).then_some("4");
    let (ns, us, ms) = distribution(&all);
    Obj::default()
        .v("jobname", j.name.clone())
        .v("groupid", j.groupid)
        .v("error", 0)
        .v("eta", 0)
        .v("elapsed", j.runtime_ms.div_ceil(1000))
        .j("job options", options(j))
        .j("read", direction(&f.read, j.runtime_ms, &samples[0]))
        .j("write", direction(&f.write, j.runtime_ms, &samples[1]))
        .j("trim", direction(&DirSummary::default(), j.runtime_ms, &[]))
        .j("sync", sync(&f.flush))
        .v("job_runtime", j.runtime_ms)
        .v("usr_cpu", j.cpu.process_user_pct)
        .v("sys_cpu", j.cpu.process_system_pct)
        .v("ctx", 0)
        .v("majf", 0)
        .v("minf", 0)
        .j(
            "iodepth_level",
            share(&["1", "2", "4", "8", "16", "32", ">=64"], level),
        )
        .j(
            "iodepth_submit",
            share(&["0", "4", "8", "16", "32", "64", ">=64"], submit),
        )
        .j(
            "iodepth_complete",
            share(&["0", "4", "8", "16", "32", "64", ">=64"], None),
        )
        .j("latency_ns", ns)
        .j("latency_us", us)
        .j("latency_ms", ms)
        .v(
            "latency_depth",
            j.workers.first().map_or(1, |w| w.queue_depth),
        )
        .v("latency_target", 0)
        .v("latency_percentile", 100.0)
        .v("latency_window", 0)
        .done()
}

/// fio's `iodepth_level` key of a depth: the largest of 1, 2, 4 … 32 at most it, or `>=64`.
fn depth_bucket(d: u32) -> &'static str {
    match d {
        0 | 1 => "1",
        2..=3 => "2",
        4..=7 => "4",
        8..=15 => "8",
        16..=31 => "16",
        32..=63 => "32",
        _ => ">=64",
    }
}

/// Bytes as a fio job file writes them: the largest of `k`, `M`, `G`, `T` (powers of 1024, fio's
/// default `kb_base`) that divides them, else bytes.
fn size(bytes: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("k", 10)] {
        if bytes > 0 && bytes % (1u64 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Milliseconds as a fio job file writes a time: `3s`, `500ms`.
fn time(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// The `job options` a fio job file would give for the group: `name`, `filename`, `size`,
/// `rw` (with `rwmixread`), `bs` (or `bssplit`), `ioengine`, `iodepth`, `numjobs`, `direct`,
/// `runtime`, `ramp_time`, `time_based`, `fsync`, `rate_iops`, `thinktime`, as written.
fn options(j: &FioJob) -> J {
    let mut o = Obj::default().v("name", j.name.clone());
    let job = j.job;
    if let Some(w) = j.workers.first() {
        let files: Vec<String> = (w.targets.iter())
            .filter_map(|&t| job.targets.get(t))
            .map(|t| t.path.display().to_string())
            .collect();
        o = o.v("filename", files.join(":"));
        if let Some(bytes) = (w.targets.first()).and_then(|&t| job.targets.get(t)?.size_bytes) {
            o = o.v("size", size(bytes));
        }
        if let Some(a) = w.access.first() {
            o = o.v("rw", rw(a));
            if rw(a).ends_with("rw") {
                o = o.v("rwmixread", format!("{}", a.read_pct.round()));
            }
            if a.block_sizes.is_empty() {
                o = o.v("bs", size(a.block_size_bytes));
            } else {
                let total: u32 = a.block_sizes.iter().map(|s| s.1).sum::<u32>().max(1);
                let split: Vec<String> = (a.block_sizes.iter())
                    .map(|&(b, wt)| format!("{}/{}", size(b), wt * 100 / total))
                    .collect();
                o = o.v("bssplit", split.join(":"));
            }
        }
    }
    let engine = match job.engine {
        EngineKind::IoUring => "io_uring",
        EngineKind::Psync => "psync",
        EngineKind::Null => "null",
    };
    o = o.v("ioengine", engine);
    if let Some(w) = j.workers.first() {
        o = o.v("iodepth", w.queue_depth.to_string());
    }
    o = o
        .v("numjobs", j.workers.len().max(1).to_string())
        .v("direct", if job.buffered { "0" } else { "1" })
        .v("runtime", time(job.duration_ms))
        .v("ramp_time", time(job.ramp_ms))
        .v("time_based", "1");
    if let Some(w) = j.workers.first() {
        let fsync = (w.access.iter().map(|a| a.fsync_every))
            .chain(
                w.targets
                    .iter()
                    .filter_map(|&t| Some(job.targets.get(t)?.fsync_every)),
            )
            .find(|&n| n > 0);
        if let Some(n) = fsync {
            o = o.v("fsync", n.to_string());
        }
        if let Some(rate) = w.rate {
            o = o.v("rate_iops", format!("{}", rate.iops.round()));
        }
        if let Some(ns) = w.think_ns {
            o = o.v("thinktime", format!("{}us", ns / 1000));
        }
    }
    o.done()
}

/// An access entry's fio `rw`.
fn rw(a: &Access) -> &'static str {
    let random = a.random_pct >= 50.0;
    match (a.read_pct, random) {
        (p, true) if p >= 100.0 => "randread",
        (p, false) if p >= 100.0 => "read",
        (p, true) if p <= 0.0 => "randwrite",
        (p, false) if p <= 0.0 => "write",
        (_, true) => "randrw",
        (_, false) => "rw",
    }
}

/// One direction as fio's `read`, `write` or `trim`, its IOPS and bandwidth spread from the
/// measured intervals (`intervals`: IOPS and bytes/s of each).
fn direction(d: &DirSummary, runtime_ms: u64, intervals: &[(f64, f64)]) -> J {
    let (summary, h) = fio_histogram(d);
    let lat = latency(d.ops, summary, h.as_ref());
    let (iops, bw): (Vec<f64>, Vec<f64>) = intervals.iter().copied().unzip();
    let kib: Vec<f64> = bw.iter().map(|b| b / 1024.0).collect();
    let (iops_min, iops_max, iops_mean, iops_dev) = spread(&iops);
    let (bw_min, bw_max, bw_mean, bw_dev) = spread(&kib);
    let none = Obj::default()
        .v("min", 0)
        .v("max", 0)
        .v("mean", 0.0)
        .v("stddev", 0.0)
        .v("N", 0)
        .done();
    Obj::default()
        .v("io_bytes", d.bytes)
        .v("io_kbytes", d.bytes / 1024)
        .v("bw_bytes", d.bytes_per_s.round() as u64)
        .v("bw", (d.bytes_per_s / 1024.0).round() as u64)
        .v("iops", d.iops)
        .v("runtime", if d.ops > 0 { runtime_ms } else { 0 })
        .v("total_ios", d.ops)
        .v("short_ios", 0)
        .v("drop_ios", 0)
        .j("slat_ns", none)
        .j("clat_ns", lat.clone())
        .j("lat_ns", lat)
        .v("bw_min", bw_min.round() as u64)
        .v("bw_max", bw_max.round() as u64)
        .v("bw_agg", if d.ops > 0 { 100.0 } else { 0.0 })
        .v("bw_mean", bw_mean)
        .v("bw_dev", bw_dev)
        .v("bw_samples", kib.len())
        .v("iops_min", iops_min.round() as u64)
        .v("iops_max", iops_max.round() as u64)
        .v("iops_mean", iops_mean)
        .v("iops_stddev", iops_dev)
        .v("iops_samples", iops.len())
        .done()
}

/// What fio measures of `d`: its latency from submission (in open loop the service time, not
/// the response time) and its histogram.
fn fio_histogram(d: &DirSummary) -> (&LatencySummary, Option<Histogram>) {
    let (summary, histogram) = match &d.service_latency_ns {
        Some(s) => (s, d.service_histogram.as_ref()),
        None => (&d.latency_ns, d.histogram.as_ref()),
    };
    (summary, histogram.and_then(|e| Histogram::decode(e).ok()))
}

/// Flushes as fio's `sync`.
fn sync(d: &DirSummary) -> J {
    let h = d.histogram.as_ref().and_then(|e| Histogram::decode(e).ok());
    Obj::default()
        .v("total_ios", d.ops)
        .j("lat_ns", latency(d.ops, &d.latency_ns, h.as_ref()))
        .done()
}

/// fio's latency object: `min`, `max`, `mean`, `stddev`, `N`, and with I/Os the percentiles
/// and, from the histogram, `bins` (each non-empty bucket's highest value, ns: its count), both
/// in numeric order.
fn latency(ops: u64, s: &LatencySummary, h: Option<&Histogram>) -> J {
    let mut o = Obj::default()
        .v("min", s.min)
        .v("max", s.max)
        .v("mean", s.mean)
        .v("stddev", s.stddev)
        .v("N", ops);
    if ops == 0 {
        return o.done();
    }
    if let Some(h) = h {
        let mut p = Obj::default();
        for q in PERCENTILES {
            p = p.v(&format!("{q:.6}"), h.quantile(q / 100.0));
        }
        let mut bins = Obj::default();
        for (v, n) in h.buckets() {
            bins = bins.v(&v.to_string(), n);
        }
        o = o.j("percentile", p.done()).j("bins", bins.done());
    }
    o.done()
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
fn distribution(h: &Histogram) -> (J, J, J) {
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
    let scale = |unit: u64, bounds: &[u64]| -> Obj {
        let mut m = Obj::default();
        let mut prev = if unit == 1 { 0 } else { unit };
        for &b in bounds {
            let hi = b * unit;
            m = m.v(&b.to_string(), share(prev, hi));
            prev = hi;
        }
        m
    };
    let ms = scale(
        1_000_000,
        &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000],
    )
    .v(">=2000", share(2_000_000_000, u64::MAX));
    (
        scale(1, &BOUNDS).done(),
        scale(1_000, &BOUNDS).done(),
        ms.done(),
    )
}

/// The devices' counters as fio's `disk_util` (ticks: the mean wait times the count, ms).
fn disk_util(r: &RunResult) -> J {
    let devices = r
        .devices
        .iter()
        .chain(r.hosts.iter().flat_map(|h| &h.devices));
    J::A(
        devices
            .map(|d| {
                let t = &d.delta;
                Obj::default()
                    .v("name", d.name.clone())
                    .v("read_ios", t.reads)
                    .v("write_ios", t.writes)
                    .v("read_merges", 0)
                    .v("write_merges", 0)
                    .v(
                        "read_ticks",
                        (t.read_await_ms * t.reads as f64).round() as u64,
                    )
                    .v(
                        "write_ticks",
                        (t.write_await_ms * t.writes as f64).round() as u64,
                    )
                    .v("in_queue", t.busy_ms)
                    .v("util", t.util_pct)
                    .done()
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
    fn each_worker_group_is_a_job_with_fios_figures_from_the_same_histograms() {
        let r = fixture("exchange");
        let out = render(&r, None).value();
        let jobs = out["jobs"].as_array().unwrap();
        let groups = super::groups(&r.job);
        assert_eq!(jobs.len(), groups.len());
        for (job, (name, workers)) in jobs.iter().zip(&groups) {
            assert_eq!(job["jobname"], name.as_str());
            assert_eq!(job["job options"]["numjobs"], workers.len().to_string());
            let results: Vec<_> = (r.workers.iter())
                .filter(|w| workers.iter().any(|j| j.name == w.name))
                .map(|w| &w.totals)
                .collect();
            for (dir, ops) in [
                ("read", results.iter().map(|t| t.read.ops).sum::<u64>()),
                ("write", results.iter().map(|t| t.write.ops).sum()),
            ] {
                let j = &job[dir];
                assert_eq!(j["total_ios"], ops, "{name} {dir}");
                if ops == 0 {
                    assert!(j["clat_ns"].get("bins").is_none());
                    continue;
                }
                let bins: u64 = (j["clat_ns"]["bins"].as_object().unwrap().values())
                    .map(|v| v.as_u64().unwrap())
                    .sum();
                assert_eq!(bins, ops, "every I/O is in a bin");
                assert_eq!(j["lat_ns"], j["clat_ns"]);
                assert_eq!(j["slat_ns"]["N"], 0);
            }
            let shares: f64 = ["latency_ns", "latency_us", "latency_ms"]
                .iter()
                .flat_map(|k| job[*k].as_object().unwrap().values())
                .map(|v| v.as_f64().unwrap())
                .sum();
            assert!(
                (shares - 100.0).abs() < 1e-6 || shares == 0.0,
                "{name}: {shares}"
            );
        }
    }

    #[test]
    fn keys_come_in_fios_order_and_numbers_in_numeric_order() {
        let r = fixture("plain");
        let text = serde_json::to_string(&render(&r, None)).unwrap();
        let at = |k: &str| text.find(k).unwrap_or_else(|| panic!("{k}"));
        assert!(at("\"fio version\"") < at("\"timestamp\"") && at("\"time\"") < at("\"jobs\""));
        assert!(at("\"jobname\"") < at("\"groupid\"") && at("\"job options\"") < at("\"read\""));
        assert!(
            at("\"5.000000\"") < at("\"10.000000\"") && at("\"10.000000\"") < at("\"50.000000\"")
        );
        let out = render(&r, None).value();
        // Bins ascend as numbers in the text.
        let bins = text
            .split("\"bins\":{")
            .nth(1)
            .unwrap()
            .split('}')
            .next()
            .unwrap();
        let values: Vec<u64> = (bins.split(','))
            .map(|kv| {
                kv.split(':')
                    .next()
                    .unwrap()
                    .trim_matches('"')
                    .parse()
                    .unwrap()
            })
            .collect();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
        let time = out["time"].as_str().unwrap();
        assert_eq!(
            time.split_whitespace().count(),
            5,
            "fio's ctime-like time: {time}"
        );
    }

    #[test]
    fn the_job_options_are_echoed_as_a_fio_job_file_writes_them() {
        let r = fixture("plain");
        let out = render(&r, None).value();
        let o = &out["jobs"][0]["job options"];
        assert_eq!(o["rw"], "randrw");
        assert_eq!(o["rwmixread"], "70");
        assert_eq!(o["bs"], "4k");
        assert_eq!(o["size"], "16M");
        assert_eq!(o["runtime"], "3s");
        assert_eq!(o["iodepth"], "1");
        assert_eq!(o["numjobs"], "1");
        assert_eq!(o["ioengine"], "io_uring");
        assert_eq!(o["direct"], "1");
        assert_eq!(out["jobs"][0]["iodepth_level"]["1"], 100.0);
        assert_eq!(out["jobs"][0]["iodepth_submit"]["4"], 100.0);
        assert!(out["fio version"].as_str().unwrap().starts_with("storlab-"));
        assert_eq!(
            (super::size(1536), super::size(268_435_456)),
            ("1536".into(), "256M".into())
        );
        assert_eq!(
            (super::time(500), super::time(3000)),
            ("500ms".into(), "3s".into())
        );
    }

    #[test]
    fn a_sequence_is_a_job_per_step_with_its_groupid_and_options() {
        let r = fixture("steps");
        let out = render(&r, None).value();
        let steps = r.steps.as_ref().unwrap();
        let jobs = out["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), steps.len());
        for (n, (j, s)) in jobs.iter().zip(steps).enumerate() {
            assert_eq!(j["groupid"], n);
            assert_eq!(j["job_runtime"], s.measured_ms);
            let bs = super::size(s.parameters["block_size"] as u64);
            assert_eq!(j["job options"]["bs"], bs.as_str());
            assert_eq!(j["read"]["total_ios"], s.totals.read.ops);
        }
        let one = render(&r, Some(1)).value();
        assert_eq!(one["jobs"].as_array().unwrap().len(), 1);
        assert_eq!(one["jobs"][0]["groupid"], 1);
    }
}
