//! Collection while the workers run: interval statistics merged across workers as soon as every
//! worker has reported an interval, host samples (CPU, block-device counters) at each interval's
//! end, each interval written to the NDJSON time series (and flushed) and shown to the
//! observer, and the measured phase's CPU and device deltas.

use super::RunOptions;
use crate::engine::worker::{WorkerMsg, WorkerReport};
use crate::job::Job;
use crate::results::Phase;
use crate::results::progress::Observer;
use crate::stats::StatsSet;
use crate::stats::blocks::BlockRef;
use crate::stats::host::kthreads::KernelThreads;
use crate::stats::host::{self, CpuPercent, CpuTimes, DiskCounters, DiskDelta};
use crate::stats::reuse::ReuseCounts;
use crate::stats::timeseries::{IntervalGrid, IntervalHistograms, IntervalPhase, IntervalRecord};
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// The run's NDJSON time series, opened for writing (appended to by later runs of a sequence).
pub(super) fn open_series(path: &Path, append: bool) -> Result<std::io::BufWriter<std::fs::File>> {
    let file = crate::results::file::open_beside(path, append, "time-series")?;
    Ok(std::io::BufWriter::new(file))
}

/// What the collector needs besides the workers' messages.
pub(super) struct Collector<'a> {
    /// Phases and intervals.
    pub grid: IntervalGrid,
    /// Block devices under the targets (kernel names).
    pub devices: &'a [String],
    /// The job (class names, interval stamps).
    pub job: &'a Job,
    /// Step index and label stamped on records.
    pub opts: &'a RunOptions,
    /// The time series.
    pub ndjson: &'a mut dyn Write,
    /// The block-sample file, when the run records one.
    pub blocks: Option<&'a mut dyn Write>,
    /// Progress.
    pub obs: &'a mut dyn Observer,
}

pub(super) struct Collected {
    pub reports: Vec<WorkerReport>,
    /// Sampled block references written to the block-sample file.
    pub sampled: u64,
    /// Every sampled reference, counted by block: the run's locality.
    pub reuse: ReuseCounts,
    pub cpu_measure: CpuPercent,
    /// Host CPU over the cool-down (after the measured time), if it had one.
    pub cpu_cooldown: CpuPercent,
    /// Each CPU over the measured phase.
    pub cpus_measure: Option<host::cpus::PerCpu>,
    pub disk_measure: BTreeMap<String, DiskDelta>,
    pub elapsed_ns: u64,
    /// The ramp's intervals merged, the process's CPU over it, and its length (s): `None`
    /// without a ramp.
    pub ramp: Option<(StatsSet, CpuPercent, f64)>,
    /// How late the collector's own timed wake-ups at the measured intervals' ends were, at
    /// worst, ns: a sample of the host's delays even when no I/O thread sleeps on a timer.
    pub probe_lateness_max_ns: u64,
    /// The most one of the kernel's threads on the targets' I/O path waited for a CPU in the
    /// measured time (within two adjacent readings), ns, and its name.
    pub kernel_wait: Option<(u64, String)>,
}

#[derive(Clone)]
struct Sample {
    t_ns: u64,
    cpu: CpuTimes,
    cpus: Option<host::cpus::CpuTicks>,
    disks: BTreeMap<String, DiskCounters>,
}

fn sample(start: Instant, devices: &[String]) -> Sample {
    crate::fault::inject(crate::fault::Kind::Sampler);
    Sample {
        t_ns: start.elapsed().as_nanos() as u64,
        cpu: host::cpu_times(),
        cpus: host::cpus::cpu_ticks(),
        disks: devices
            .iter()
            .filter_map(|d| host::disk_counters(d).map(|c| (d.clone(), c)))
            .collect(),
    }
}

fn deltas(a: &Sample, b: &Sample) -> (CpuPercent, BTreeMap<String, DiskDelta>) {
    let wall = b.t_ns.saturating_sub(a.t_ns);
    let disks = b
        .disks
        .iter()
        .filter_map(|(n, after)| {
            a.disks
                .get(n)
                .map(|before| (n.clone(), DiskDelta::between(before, after, wall)))
        })
        .collect();
    (CpuPercent::between(&a.cpu, &b.cpu, wall), disks)
}

/// Each CPU's use between two samples.
fn per_cpu(a: &Sample, b: &Sample) -> Option<host::cpus::PerCpu> {
    let wall = b.t_ns.saturating_sub(a.t_ns);
    Some(host::cpus::PerCpu::between(
        a.cpus.as_ref()?,
        b.cpus.as_ref()?,
        wall,
    ))
}

impl Collector<'_> {
    /// Collects from `rx` until the `n_workers` workers started at `start` are done.
    pub(super) fn collect(
        self,
        rx: std::sync::mpsc::Receiver<WorkerMsg>,
        n_workers: usize,
        start: Instant,
        sample_buffers: Vec<std::sync::mpsc::Sender<Vec<BlockRef>>>,
    ) -> Result<Collected> {
        let Collector {
            grid,
            devices,
            job,
            opts,
            ndjson,
            mut blocks,
            obs,
        } = self;
        let mut sampled = 0u64;
        let mut reuse = ReuseCounts::default();
        let first = sample(start, devices);
        obs.phase(if grid.ramp_ns > 0 {
            Phase::Ramp
        } else {
            Phase::Measure
        });
        // Host samples: `first` at time 0, then one at the end of each interval.
        let mut ends: BTreeMap<u64, Sample> = BTreeMap::new();
        let mut edges = Edges::default();
        let mut next_sample = 0u64;
        let mut waiting = Waiting::new(n_workers, job.classes.len());
        let mut reports = Vec::new();
        let mut announced_measure = grid.ramp_ns == 0;
        let mut announced_cooldown = grid.cooldown_ns == 0;
        let mut ramp = StatsSet::new(job.classes.len());
        let mut probe = Probe::default();
        let mut kernel = KernelWatch::start(&grid, devices);
        if grid.ramp_ns == 0 {
            edges.measure_start = Some(first.clone());
        }
        let mut done = 0;
        loop {
            let now = start.elapsed().as_nanos() as u64;
            edges.sample_due(&grid, now, (start, devices), &mut ends, &mut next_sample);
            kernel.tick(&grid, now);
            if !announced_measure && now >= grid.ramp_ns {
                announced_measure = true;
                obs.phase(Phase::Measure);
            }
            if !announced_cooldown && now >= grid.end_ns() {
                announced_cooldown = true;
                obs.phase(Phase::Cooldown);
            }
            // Emit every interval that every running worker has reported.
            while let Some((index, stats)) = waiting.next_complete() {
                if index < grid.ramp_intervals() {
                    ramp.add(stats);
                }
                crate::fault::inject(crate::fault::Kind::Collector);
                let before = index.checked_sub(1).map_or(Some(&first), |i| ends.get(&i));
                let host = before.zip(ends.get(&index)).map(|(a, b)| deltas(a, b));
                let now = start.elapsed().as_nanos() as u64;
                let mut rec = interval_record(index, &grid, now, stats, &job.classes, host);
                rec.step = opts.step;
                rec.label = opts.label;
                if opts.interval_histograms {
                    rec.histograms = Some(IntervalHistograms::of(stats, &job.classes));
                }
                write_record(&mut *ndjson, &rec, &opts.results_path)?;
                obs.interval(&rec, &grid);
                if index > 0 {
                    ends.retain(|&k, _| k + 1 >= index);
                }
            }
            if done == n_workers {
                break;
            }
            let wait_until = if next_sample < grid.intervals() {
                grid.bounds(next_sample).1
            } else {
                now + 100_000_000
            };
            let timeout =
                Duration::from_nanos(wait_until.saturating_sub(now).clamp(1_000_000, 100_000_000));
            match rx.recv_timeout(timeout) {
                Ok(WorkerMsg::Interval {
                    worker,
                    index,
                    stats,
                }) => {
                    obs.worker_interval(worker, index, &stats);
                    waiting.add(worker, index, *stats);
                }
                Ok(WorkerMsg::Blocks { worker, mut refs }) => {
                    reuse.add(&refs);
                    if let Some(w) = blocks.as_deref_mut() {
                        crate::results::blocks::append(w, &refs).map_err(|e| {
                            let path = crate::results::blocks::blocks_path(&opts.results_path);
                            crate::files::cannot_write("the block sample", &path, &e)
                        })?;
                        sampled += refs.len() as u64;
                    }
                    // The buffer goes back to its worker's pool.
                    refs.clear();
                    if let Some(back) = sample_buffers.get(worker) {
                        let _ = back.send(refs);
                    }
                }
                Ok(WorkerMsg::Done(r)) => {
                    waiting.finished[r.worker] = true;
                    done += 1;
                    reports.push(*r);
                    if done == n_workers && next_sample < grid.intervals() {
                        // The run ended before this interval's planned end: sample now.
                        ends.insert(next_sample, sample(start, devices));
                    }
                }
                Err(RecvTimeoutError::Timeout) => probe.woke(&grid, wait_until, start),
                Err(RecvTimeoutError::Disconnected) => {
                    waiting.finished.iter_mut().for_each(|f| *f = true);
                    done = n_workers;
                }
            }
        }
        let elapsed_ns = start.elapsed().as_nanos() as u64;
        kernel.last(&grid, elapsed_ns);
        let (cpu_measure, cpus_measure, disk_measure, ramp_cpu, cpu_cooldown) =
            edges.deltas(&first, start, devices);
        reports.sort_by_key(|r| r.worker);
        let ramp = (grid.ramp_ns > 0).then(|| (ramp, ramp_cpu, grid.ramp_ns as f64 / 1e9));
        Ok(Collected {
            reports,
            sampled,
            reuse,
            cpu_measure,
            cpu_cooldown,
            cpus_measure,
            disk_measure,
            elapsed_ns,
            ramp,
            probe_lateness_max_ns: probe.0,
            kernel_wait: kernel.threads.longest(),
        })
    }
}

/// Interval statistics waiting for every worker: each worker's as it sent them (compact: only
/// their non-empty buckets), so that a collector that falls behind holds a few KiB per worker
/// and interval, not a set ready to record (220 KiB a class); merged into one set kept for the
/// run when the interval is complete.
struct Waiting {
    parts: BTreeMap<u64, Vec<StatsSet>>,
    merged: StatsSet,
    /// The last interval each worker reported.
    last_reported: Vec<Option<u64>>,
    /// Whether each worker is done (it reports no more).
    finished: Vec<bool>,
}

impl Waiting {
    fn new(workers: usize, classes: usize) -> Waiting {
        Waiting {
            parts: BTreeMap::new(),
            merged: StatsSet::new(classes),
            last_reported: vec![None; workers],
            finished: vec![false; workers],
        }
    }

    /// Worker `worker`'s statistics of interval `index`.
    fn add(&mut self, worker: usize, index: u64, stats: StatsSet) {
        self.parts.entry(index).or_default().push(stats);
        self.last_reported[worker] = Some(index);
    }

    /// The first interval that every running worker has reported, merged; `None` while one
    /// has not.
    fn next_complete(&mut self) -> Option<(u64, &StatsSet)> {
        let (&index, _) = self.parts.first_key_value()?;
        let complete = (self.finished.iter().zip(&self.last_reported))
            .all(|(&done, last)| done || last.is_some_and(|l| l >= index));
        if !complete {
            return None;
        }
        self.merged.reset();
        for part in self.parts.pop_first()?.1 {
            self.merged.add(&part);
        }
        Some((index, &self.merged))
    }
}

/// The host samples at the measured time's edges: its start (the run's start without a ramp)
/// and its end.
#[derive(Default)]
struct Edges {
    measure_start: Option<Sample>,
    measure_end: Option<Sample>,
}

impl Edges {
    /// Samples the host at the end of every interval due by `now` (from `next`), keeping the
    /// measured time's edges.
    fn sample_due(
        &mut self,
        grid: &IntervalGrid,
        now: u64,
        (start, devices): (Instant, &[String]),
        ends: &mut BTreeMap<u64, Sample>,
        next: &mut u64,
    ) {
        while *next < grid.intervals() {
            let (_, end, _) = grid.bounds(*next);
            if now < end {
                break;
            }
            let s = sample(start, devices);
            if end == grid.ramp_ns && self.measure_start.is_none() {
                self.measure_start = Some(s.clone());
            }
            if end == grid.end_ns() {
                self.measure_end = Some(s.clone());
            }
            ends.insert(*next, s);
            *next += 1;
        }
    }

    /// CPU (the machine's and each CPU's) and device deltas over the measured time, the CPU
    /// over the ramp (from `first`, the run's start) and the CPU after the measured time (the
    /// cool-down), once the run is over (an end not sampled yet is sampled now).
    fn deltas(
        self,
        first: &Sample,
        start: Instant,
        devices: &[String],
    ) -> (
        CpuPercent,
        Option<host::cpus::PerCpu>,
        BTreeMap<String, DiskDelta>,
        CpuPercent,
        CpuPercent,
    ) {
        let Some(from) = self.measure_start else {
            return Default::default();
        };
        let now = sample(start, devices);
        let to = self.measure_end.unwrap_or_else(|| now.clone());
        let (cpu, disks) = deltas(&from, &to);
        let after = deltas(&to, &now).0;
        (
            cpu,
            per_cpu(&from, &to),
            disks,
            deltas(first, &from).0,
            after,
        )
    }
}

/// The kernel's threads on the targets' I/O path, read from the measured time's start at
/// every interval's end and at least once a second (the collector wakes every 100 ms at
/// least).
struct KernelWatch {
    threads: KernelThreads,
    /// When they are read next, ns after the start.
    next: u64,
    every: u64,
}

impl KernelWatch {
    fn start(grid: &IntervalGrid, devices: &[String]) -> KernelWatch {
        KernelWatch {
            threads: KernelThreads::find(devices),
            next: grid.ramp_ns,
            every: grid.interval_ns.clamp(1, 1_000_000_000),
        }
    }

    /// At `now`: a reading when one is due, until the measured time has ended.
    fn tick(&mut self, grid: &IntervalGrid, now: u64) {
        let end = grid.end_ns();
        if now < self.next || self.next > end + self.every {
            return;
        }
        // The first reading opens the measured time; each later one ends a window of it.
        self.threads.sample(self.next > grid.ramp_ns);
        while self.next <= now {
            self.next += self.every;
        }
    }

    /// The run ended at `now`: the window open since the last reading ends, if it is in the
    /// measured time.
    fn last(&mut self, grid: &IntervalGrid, now: u64) {
        if self.next > grid.ramp_ns && now <= grid.end_ns() + self.every {
            self.threads.sample(true);
        }
    }
}

/// The collector's own timed wake-ups at the measured intervals' ends: how late the latest was,
/// ns (a sample of the host's delays to a thread ready to run).
#[derive(Default)]
struct Probe(u64);

impl Probe {
    /// The collector woke now from a wait that timed out at `due_ns` (after `start`).
    fn woke(&mut self, grid: &IntervalGrid, due_ns: u64, start: Instant) {
        let woke_ns = start.elapsed().as_nanos() as u64;
        let measured = due_ns > grid.ramp_ns && due_ns <= grid.end_ns();
        if measured && woke_ns >= due_ns {
            self.0 = self.0.max(woke_ns - due_ns);
        }
    }
}

/// The record of interval `index`; an interval cut short (the run stopped at `now_ns`, before
/// its planned end) gets its real length, so its rates are not understated.
fn interval_record(
    index: u64,
    grid: &IntervalGrid,
    now_ns: u64,
    stats: &StatsSet,
    classes: &[String],
    host: Option<(CpuPercent, BTreeMap<String, DiskDelta>)>,
) -> IntervalRecord {
    let (s, e, ramp) = grid.bounds(index);
    let e = e.min(now_ns.max(s + 1));
    let mut rec = IntervalRecord {
        index,
        phase: if ramp {
            IntervalPhase::Ramp
        } else {
            IntervalPhase::Measure
        },
        step: None,
        t_end_ms: e / 1_000_000,
        interval_ms: ((e - s) / 1_000_000).max(1),
        ..Default::default()
    };
    rec.fill(stats, classes);
    if let Some((cpu, devices)) = host {
        rec.cpu = cpu;
        rec.devices = devices;
    }
    rec
}

/// Writes `rec` as a line of the time series beside `results` and flushes it; an error names
/// the file ("cannot write the time series r.ndjson: no space left on device").
fn write_record(
    out: &mut dyn Write,
    rec: &impl serde::Serialize,
    results: &std::path::Path,
) -> Result<()> {
    let series = |e: std::io::Error| {
        let path = crate::results::file::timeseries_path(results);
        crate::files::cannot_write("the time series", &path, &e)
    };
    serde_json::to_writer(&mut *out, rec).map_err(|e| series(e.into()))?;
    out.write_all(b"\n").map_err(series)?;
    out.flush().map_err(series)
}
