//! The live view of a running run (`--serve ADDR`): an HTTP server on its own thread that
//! serves a page of live charts (`/`, polling `/live.json` each interval), the run so far as
//! JSON (`/live.json`) and Prometheus/OpenMetrics metrics (`/metrics`). It is fed by an
//! [`Observer`] ([`Feed`]) that the collector tells of each interval once it is merged, and of
//! each worker's part of it: the workers' hot path does not know it exists. What it keeps does
//! not grow with the run: the latest intervals one by one, the ones before merged into a
//! bounded number of points (`crate::stats::downsample`), and the verdict's and CPU's figures
//! so far as running sums; each worker's part is counted as it comes. Loopback unless
//! another address is given; the page says so when it is not. The server and its limits
//! (connections, request size, time, methods) are in `server.rs`; the page, a template that
//! escapes every value, with its Content-Security-Policy in `page.rs`.

mod metrics;
mod page;
mod server;

pub(crate) use server::{Server, address};

use crate::job::Job;
use crate::results::Phase;
use crate::results::progress::{Observer, RateWatch};
use crate::results::verdict::{Comparison, Rule};
use crate::stats::StatsSet;
use crate::stats::downsample::{Downsampled, Merge};
use crate::stats::host::CpuPercent;
use crate::stats::timeseries::{IntervalDir, IntervalGrid, IntervalPhase, IntervalRecord};
use crate::units::format_pct;
use bytes::Bytes;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Reads of the class, writes, flushes: the `direction` label.
const DIRECTIONS: [&str; 3] = ["read", "write", "flush"];

/// The run so far, as the server shows it.
#[derive(Debug, Default)]
struct State {
    /// The host's name (the `host` label).
    host: String,
    /// Where the server listens, and whether that is loopback only.
    served_on: String,
    loopback: bool,
    /// Class names, by class id.
    classes: Vec<String>,
    /// Worker names and the names of their targets, by worker index.
    workers: Vec<(String, String)>,
    interval_ms: u64,
    phase: String,
    done: bool,
    /// The page's latest points, one per interval: at most `2 × RECENT_POINTS`, the oldest
    /// `RECENT_POINTS` moved into `history` when there are more.
    points: Vec<Point>,
    /// The points before `points`, consecutive intervals of a run and phase merged into at
    /// most about `HISTORY_POINTS`.
    history: History,
    /// The current run, from 0 (a sequence or an Exchange validation runs several jobs one
    /// after another): points of two runs are never merged.
    run: u32,
    /// Where the current run's time starts on the page's time axis, s: the end of the runs
    /// before it.
    run_offset_s: f64,
    /// What the verdict and the CPU so far are made of, kept as the intervals come (the
    /// points are not all kept).
    so_far: SoFar,
    /// Measured I/Os: (class, direction, worker) → ops, bytes, errors.
    counters: BTreeMap<(usize, usize, usize), [u64; 3]>,
    /// Measured latency: (class, direction, worker) → its buckets.
    latency: BTreeMap<(usize, usize, usize), metrics::Latency>,
    /// The current run's ramp intervals (whose I/O is not counted).
    ramp_intervals: u64,
    /// The last interval's IOPS: (class, direction, IOPS) of each class and direction with
    /// I/O.
    last_iops: Vec<(String, &'static str, f64)>,
    /// A rule on the rate of some classes (an Exchange validation's achieved transactional
    /// IOPS).
    watch: Option<RateWatch>,
    /// The results file's verdict, once the run is over: its result, and for an inconclusive
    /// one, why.
    final_verdict: Option<String>,
    /// The results file's CPU over the measured phase, once the run is over.
    final_cpu: Option<CpuPercent>,
    /// `/live.json` as last rendered, until the state changes ([`edit`]): every client gets
    /// the same buffer, so the memory answers take does not grow with the number of clients.
    json: Option<Bytes>,
}

/// What the page says of the run so far, added up interval by interval.
#[derive(Debug, Clone, Copy, Default)]
struct SoFar {
    /// Failed I/Os of every interval.
    errors: u64,
    /// The current run's measured phase: the watched rate's I/Os (rate × time) and its time.
    watched_ios: f64,
    watched_s: f64,
    /// The measured intervals' CPU, weighted by their length, and their time, s.
    cpu: CpuPercent,
    cpu_s: f64,
}

impl SoFar {
    fn add(&mut self, p: &Point) {
        self.errors += p.errors;
        if !p.ramp {
            self.watched_ios += p.transactional_iops.unwrap_or_default() * p.interval_s;
            self.watched_s += p.interval_s;
            self.cpu = CpuPercent::weighted([(self.cpu, self.cpu_s), (p.cpu, p.interval_s)]);
            self.cpu_s += p.interval_s;
        }
    }
}

/// The page's points before its latest ones, merged.
#[derive(Debug)]
struct History(Downsampled<Point>);

impl Default for History {
    fn default() -> History {
        History(Downsampled::new(HISTORY_POINTS))
    }
}

/// The page shows at least this many latest intervals one by one (at most twice as many).
const RECENT_POINTS: usize = 150;
/// The intervals before them are merged into about this many points (at most twice as many).
const HISTORY_POINTS: usize = 150;

/// One interval on the page, or in its history consecutive intervals of a run and phase merged
/// (I/Os and errors added, rates and CPU over their time, mean latency over their I/Os, p99 and
/// maximum the largest).
#[derive(Debug, Clone, Serialize)]
struct Point {
    /// End of the interval, s of I/O since the first run started (the runs of a sequence one
    /// after another).
    t_s: f64,
    /// Length of the interval, s.
    interval_s: f64,
    ramp: bool,
    iops: f64,
    mb_per_s: f64,
    /// Per class: read and write p99 and mean latency.
    classes: BTreeMap<String, ClassPoint>,
    /// storlab's CPU and the machine's.
    #[serde(serialize_with = "cpu_fields")]
    cpu: CpuPercent,
    /// Per device.
    devices: BTreeMap<String, DevicePoint>,
    /// The watched rate (an Exchange validation's transactional IOPS).
    transactional_iops: Option<f64>,
    errors: u64,
    /// The run it is of (points of two runs are never merged).
    #[serde(skip)]
    run: u32,
    /// How many intervals it merges.
    #[serde(skip)]
    intervals: u64,
}

/// A class's latency in one interval, µs (`None`: no I/O of that direction).
#[derive(Debug, Clone, Default, Serialize)]
struct ClassPoint {
    read_p99_us: Option<f64>,
    write_p99_us: Option<f64>,
    read_mean_us: Option<f64>,
    write_mean_us: Option<f64>,
    /// Reads and writes, which weigh the means when points merge.
    #[serde(skip)]
    ops: [u64; 2],
}

impl Merge for Point {
    fn continues(&self, next: &Point) -> bool {
        self.run == next.run && self.ramp == next.ramp && next.t_s > self.t_s
    }

    fn absorb(&mut self, next: &Point) {
        let (a, b) = (self.interval_s, next.interval_s);
        let by_time = |x: f64, y: f64| (x * a + y * b) / (a + b).max(f64::MIN_POSITIVE);
        self.iops = by_time(self.iops, next.iops);
        self.mb_per_s = by_time(self.mb_per_s, next.mb_per_s);
        self.transactional_iops = match (self.transactional_iops, next.transactional_iops) {
            (None, None) => None,
            (x, y) => Some(by_time(x.unwrap_or_default(), y.unwrap_or_default())),
        };
        for (name, c) in &next.classes {
            let mine = self.classes.entry(name.clone()).or_default();
            let larger = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) => Some(x.max(y)),
                (x, y) => x.or(y),
            };
            let by_ops = |x: Option<f64>, nx: u64, y: Option<f64>, ny: u64| match (x, y) {
                (Some(x), Some(y)) => {
                    Some((x * nx as f64 + y * ny as f64) / (nx + ny).max(1) as f64)
                }
                (x, y) => x.or(y),
            };
            mine.read_p99_us = larger(mine.read_p99_us, c.read_p99_us);
            mine.write_p99_us = larger(mine.write_p99_us, c.write_p99_us);
            mine.read_mean_us = by_ops(mine.read_mean_us, mine.ops[0], c.read_mean_us, c.ops[0]);
            mine.write_mean_us = by_ops(mine.write_mean_us, mine.ops[1], c.write_mean_us, c.ops[1]);
            mine.ops = [mine.ops[0] + c.ops[0], mine.ops[1] + c.ops[1]];
        }
        self.cpu = CpuPercent::weighted([(self.cpu, a), (next.cpu, b)]);
        for (name, d) in &next.devices {
            let util = match self.devices.get(name) {
                Some(mine) => by_time(mine.util_pct, d.util_pct),
                None => d.util_pct,
            };
            self.devices
                .insert(name.clone(), DevicePoint { util_pct: util });
        }
        self.errors += next.errors;
        self.t_s = next.t_s;
        self.interval_s += b;
        self.intervals += next.intervals;
    }
}

/// A device in one interval.
#[derive(Debug, Clone, Serialize)]
struct DevicePoint {
    /// Busy time, % of the interval.
    util_pct: f64,
}

/// CPU figures with their units in their names, from [`CpuPercent`]'s own shares (those the
/// terminal's summary and the HTML report give).
#[derive(Debug, Clone, Serialize)]
struct CpuFields {
    /// storlab's user and kernel time, % of one CPU (above 100 with more than one busy).
    storlab_pct_of_one_cpu: f64,
    /// The machine's user and kernel time, % of all CPUs.
    machine_busy_pct: f64,
    /// The machine's idle time, iowait included, % of all CPUs.
    machine_idle_pct: f64,
    /// The part of the idle time with I/O pending, % of all CPUs.
    machine_iowait_pct: f64,
}

impl CpuFields {
    fn of(c: &CpuPercent) -> CpuFields {
        CpuFields {
            storlab_pct_of_one_cpu: c.process_pct(),
            machine_busy_pct: c.machine_busy_pct(),
            machine_idle_pct: c.machine_idle_pct(),
            machine_iowait_pct: c.system_iowait_pct,
        }
    }
}

fn cpu_fields<S: Serializer>(c: &CpuPercent, s: S) -> Result<S::Ok, S::Error> {
    CpuFields::of(c).serialize(s)
}

/// CPU over the measured phase: so far while the run goes (its measured intervals, each
/// weighted by its length), the results file's once it is over.
#[derive(Debug, Serialize)]
struct CpuSummary {
    /// `the measured phase so far` or `the measured phase (the results file)`.
    over: &'static str,
    #[serde(flatten)]
    figures: CpuFields,
    /// The machine's busy share as the page shows it (as the terminal's summary writes it).
    machine_busy: String,
    /// The sentence the page shows.
    text: String,
}

/// What `/live.json` serves.
#[derive(Serialize)]
struct LiveJson<'a> {
    host: &'a str,
    served_on: &'a str,
    loopback: bool,
    interval_ms: u64,
    phase: &'a str,
    done: bool,
    verdict: String,
    cpu: Option<CpuSummary>,
    /// The intervals before `points`, merged (empty while the run is short).
    history: Vec<&'a Point>,
    /// What `history` merged, as the page says it (`None`: nothing).
    history_note: Option<String>,
    points: &'a [Point],
}

impl State {
    fn verdict(&self) -> String {
        if let Some(v) = &self.final_verdict {
            return v.clone();
        }
        let errors = self.so_far.errors;
        let mut parts = Vec::new();
        parts.push(match errors {
            0 => "no I/O errors so far".to_string(),
            n => format!("FAIL so far: {n} I/O errors"),
        });
        // The rule judges the current run's measured phase: its I/Os over its time.
        let (ios, secs) = (self.so_far.watched_ios, self.so_far.watched_s);
        if let (Some(w), true) = (&self.watch, secs > 0.0) {
            let got = ios / secs;
            let pass = Rule::judge(&w.rule, got, Comparison::AtLeast, w.pass_at_iops, "IOPS").pass;
            // A rate just under the threshold gets the decimals that show it is under.
            let d = (0..3)
                .find(|&d| pass || format!("{got:.d$}") != format!("{:.d$}", w.pass_at_iops))
                .unwrap_or(3);
            parts.push(format!(
                "{} so far {got:.d$} for a target of {:.0}, the rule passing from {:.d$} ({})",
                w.rule,
                w.target_iops,
                w.pass_at_iops,
                if pass { "on target" } else { "below" }
            ));
        }
        parts.push("latency limits are judged at the end".into());
        parts.join("; ")
    }

    /// CPU over the measured phase: the results file's once the run is over, else the
    /// measured intervals' so far.
    fn cpu(&self) -> Option<CpuSummary> {
        let (over, c) = match self.final_cpu {
            Some(c) => ("the measured phase (the results file)", c),
            None if self.so_far.cpu_s > 0.0 => ("the measured phase so far", self.so_far.cpu),
            None => return None,
        };
        let iowait = c.iowait_note();
        let machine_busy = format_pct(c.machine_busy_pct());
        Some(CpuSummary {
            over,
            figures: CpuFields::of(&c),
            text: format!(
                "CPU over {over}: storlab used {} of one CPU · the machine was {machine_busy} busy, {} idle{iowait}",
                format_pct(c.process_pct()),
                format_pct(c.machine_idle_pct()),
            ),
            machine_busy,
        })
    }

    /// What the history merged, when it did: how many intervals into how many points.
    fn history_note(&self) -> Option<String> {
        let widest = self.history.0.widest();
        (widest > 1).then(|| {
            let merged: u64 = self.history.0.points().map(|p| p.intervals).sum();
            format!(
                "The latest {} intervals are shown one by one; the {merged} before them as {} points, each merging up to {widest} consecutive intervals of a run and phase: a merged point's p99 is the largest of its intervals' (an upper bound), its mean latency over their I/Os, its rates over their time.",
                self.points.len(),
                self.history.0.len()
            )
        })
    }

    /// A new run starts (of a sequence, of an Exchange validation): its points follow the
    /// others' on the time axis, and the watched rate is judged over its own.
    fn next_run(&mut self) {
        if let Some(last) = self.points.last() {
            self.run_offset_s = last.t_s;
            self.run += 1;
        }
        (self.so_far.watched_ios, self.so_far.watched_s) = (0.0, 0.0);
    }

    /// Adds the point of the interval just merged: to the latest points, the oldest of which
    /// move into the history when there are more than twice [`RECENT_POINTS`].
    fn add(&mut self, point: Point) {
        self.so_far.add(&point);
        self.points.push(point);
        if self.points.len() > 2 * RECENT_POINTS {
            for p in self.points.drain(..RECENT_POINTS) {
                self.history.0.push(p);
            }
        }
    }

    /// `/live.json`, rendered once per change of the state.
    fn json(&mut self) -> Bytes {
        if self.json.is_none() {
            self.json = Some(Bytes::from(self.render_json()));
        }
        self.json.clone().unwrap_or_default()
    }

    fn render_json(&self) -> String {
        serde_json::to_string(&LiveJson {
            host: &self.host,
            served_on: &self.served_on,
            loopback: self.loopback,
            interval_ms: self.interval_ms,
            phase: &self.phase,
            done: self.done,
            verdict: self.verdict(),
            cpu: self.cpu(),
            history: self.history.0.points().collect(),
            history_note: self.history_note(),
            points: &self.points,
        })
        .unwrap_or_else(|_| "{}".into())
    }
}

/// Locks the state, whatever a panicking holder left (it holds figures only).
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Locks the state to change it: what was rendered from it is dropped.
fn edit(state: &Mutex<State>) -> MutexGuard<'_, State> {
    let mut s = lock(state);
    s.json = None;
    s
}

/// The observer that feeds the server.
pub(crate) struct Feed {
    state: Arc<Mutex<State>>,
}

impl Observer for Feed {
    fn job(&mut self, job: &Job) {
        let mut s = edit(&self.state);
        s.next_run();
        s.ramp_intervals =
            IntervalGrid::of(job.ramp_ms, job.duration_ms, job.interval_ms).ramp_intervals();
        s.classes = job.classes.clone();
        s.interval_ms = job.interval_ms;
        s.workers = (job.workers.iter())
            .map(|w| {
                let targets: Vec<&str> = (w.targets.iter())
                    .filter_map(|&t| job.targets.get(t).map(|t| t.name.as_str()))
                    .collect();
                (w.name.clone(), targets.join("+"))
            })
            .collect();
    }

    fn phase(&mut self, phase: Phase) {
        edit(&self.state).phase = phase.to_string();
    }

    /// A worker's part of a measured interval is counted as it comes (every part is merged
    /// into an interval of the time series: a collector that falls behind holds them, not
    /// this), so that nothing waits here.
    fn worker_interval(&mut self, worker: usize, index: u64, stats: &StatsSet) {
        let mut s = edit(&self.state);
        if index < s.ramp_intervals {
            return;
        }
        for (class, c) in stats.classes.iter().enumerate() {
            for (dir, d) in c.dirs.iter().enumerate() {
                if d.ops == 0 && d.errors == 0 {
                    continue;
                }
                let slot = s.counters.entry((class, dir, worker)).or_default();
                slot[0] += d.ops;
                slot[1] += d.bytes;
                slot[2] += d.errors;
                (s.latency.entry((class, dir, worker)).or_default()).add(&d.latency);
            }
        }
    }

    fn interval(&mut self, r: &IntervalRecord, _grid: &IntervalGrid) {
        let mut s = edit(&self.state);
        s.last_iops = (r.classes.iter())
            .flat_map(|(n, c)| {
                let dirs = [&c.read, &c.write, &c.flush];
                (dirs.into_iter().zip(DIRECTIONS))
                    .filter(|(d, _)| d.ops > 0)
                    .map(|(d, dir)| (n.clone(), dir, d.iops))
            })
            .collect();
        let mut point = point(r, s.run_offset_s, s.watch.as_ref());
        point.run = s.run;
        s.add(point);
    }

    fn watch(&mut self, watch: &RateWatch) {
        edit(&self.state).watch = Some(watch.clone());
    }
}

/// Interval `r` as the page shows it, at `offset_s` on its time axis.
fn point(r: &IntervalRecord, offset_s: f64, watch: Option<&RateWatch>) -> Point {
    let t = &r.total;
    let us = |d: &IntervalDir, ns: f64| (d.ops > 0).then_some(ns / 1e3);
    Point {
        t_s: offset_s + r.t_end_ms as f64 / 1e3,
        interval_s: r.interval_ms as f64 / 1e3,
        ramp: r.phase == IntervalPhase::Ramp,
        iops: t.read.iops + t.write.iops,
        mb_per_s: (t.read.bytes_per_s + t.write.bytes_per_s) / 1e6,
        classes: (r.classes.iter())
            .map(|(n, c)| {
                let (read, write) = (&c.read, &c.write);
                let p = ClassPoint {
                    read_p99_us: us(read, read.latency_p99_ns as f64),
                    write_p99_us: us(write, write.latency_p99_ns as f64),
                    read_mean_us: us(read, read.latency_mean_ns),
                    write_mean_us: us(write, write.latency_mean_ns),
                    ops: [read.ops, write.ops],
                };
                (n.clone(), p)
            })
            .collect(),
        cpu: r.cpu,
        devices: (r.devices.iter())
            .map(|(n, d)| {
                (
                    n.clone(),
                    DevicePoint {
                        util_pct: d.util_pct,
                    },
                )
            })
            .collect(),
        transactional_iops: watch.map(|w| w.iops_in(r)),
        errors: t.read.errors + t.write.errors + t.flush.errors,
        run: 0,
        intervals: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::{
        CpuPercent, HISTORY_POINTS, IntervalRecord, Point, RECENT_POINTS, RateWatch, State, edit,
        lock, page, point,
    };
    use std::sync::Mutex;

    #[test]
    fn every_client_gets_one_rendering_of_the_state_until_it_changes() {
        let state = Mutex::new(State::default());
        let first = lock(&state).json();
        let again = lock(&state).json();
        assert_eq!(
            first.as_ptr(),
            again.as_ptr(),
            "one buffer shared, not a copy per client"
        );
        edit(&state).phase = "measure".into();
        let changed = lock(&state).json();
        assert_ne!(first, changed);
        assert!(String::from_utf8_lossy(&changed).contains(r#""phase":"measure""#));
    }

    #[test]
    fn the_page_says_when_it_is_served_beyond_loopback() {
        let mut s = State {
            host: "db1".into(),
            served_on: "127.0.0.1:9100".into(),
            loopback: true,
            ..State::default()
        };
        assert!(!page::html(&s).contains("not loopback"));
        s.loopback = false;
        s.served_on = "0.0.0.0:9100".into();
        let html = page::html(&s);
        assert!(
            html.contains("Served on 0.0.0.0:9100 (not loopback)"),
            "{html}"
        );
        assert!(html.contains("<title>storlab live · db1</title>"));
    }

    /// A measured interval of 1 s with `iops` transactional IOPS and `errors` errors.
    fn measured(errors: u64, iops: f64) -> Point {
        Point {
            t_s: 1.0,
            interval_s: 1.0,
            ramp: false,
            iops: 100.0,
            mb_per_s: 1.0,
            classes: Default::default(),
            cpu: CpuPercent::default(),
            devices: Default::default(),
            transactional_iops: Some(iops),
            errors,
            run: 0,
            intervals: 1,
        }
    }

    fn watch() -> RateWatch {
        RateWatch {
            rule: "achieved transactional IOPS".into(),
            target_iops: 1000.0,
            pass_at_iops: 990.0,
            classes: vec!["db1/read".into()],
        }
    }

    #[test]
    fn the_verdict_so_far_counts_errors_and_follows_the_rules_threshold() {
        let mut s = State::default();
        assert!(s.verdict().starts_with("no I/O errors so far"));
        s.watch = Some(watch());
        // Nothing measured yet: nothing said of the rate.
        assert!(!s.verdict().contains("so far 0"), "{}", s.verdict());
        let with = |points: Vec<Point>| {
            let mut s = State {
                watch: Some(watch()),
                ..State::default()
            };
            points.into_iter().for_each(|p| s.add(p));
            s
        };
        let s = with(vec![measured(0, 990.0), measured(2, 990.0)]);
        let v = s.verdict();
        assert!(v.starts_with("FAIL so far: 2 I/O errors"), "{v}");
        assert!(
            v.contains("achieved transactional IOPS so far 990 for a target of 1000, the rule passing from 990 (on target)"),
            "{v}"
        );
        // Just under the threshold is below, though 95 % of the target.
        let s = with(vec![measured(0, 990.0), measured(0, 989.98)]);
        let v = s.verdict();
        assert!(
            v.contains("so far 989.99 for a target of 1000, the rule passing from 990.00 (below)"),
            "{v}"
        );
        // The rate is I/Os over time: a short interval counts for its length.
        let mut short = measured(0, 1000.0);
        short.interval_s = 0.25;
        let s = with(vec![measured(0, 980.0), short]);
        assert!(s.verdict().contains("so far 984 ") && s.verdict().contains("(below)"));
        // Ramp intervals and the runs before the current one do not count.
        let mut ramp = measured(0, 0.0);
        ramp.ramp = true;
        let mut s = with(vec![measured(0, 0.0)]);
        s.next_run();
        s.add(ramp);
        s.add(measured(0, 995.0));
        let v = s.verdict();
        assert!(
            v.contains("so far 995 ") && v.contains("(on target)"),
            "{v}"
        );
    }

    #[test]
    fn a_long_run_keeps_its_latest_intervals_and_a_merged_history_within_bounds() {
        use crate::stats::timeseries::{IntervalClass, IntervalDir};
        let mut s = State::default();
        let mut r = IntervalRecord {
            interval_ms: 10,
            ..Default::default()
        };
        let intervals = 100_000u64;
        for i in 0..intervals {
            let d = IntervalDir {
                ops: 10 + i % 3,
                errors: 1,
                iops: (10 + i % 3) as f64 * 100.0,
                latency_mean_ns: 1000.0 * (1 + i % 3) as f64,
                latency_p99_ns: 1000 * (1 + i % 7),
                ..Default::default()
            };
            r.index = i;
            r.t_end_ms = (i + 1) * 10;
            r.total.read = d;
            let c = IntervalClass {
                read: d,
                ..Default::default()
            };
            r.classes.insert("c".into(), c);
            s.add(point(&r, 0.0, None));
            assert!(s.points.len() <= 2 * RECENT_POINTS);
            assert!(s.history.0.len() <= 2 * HISTORY_POINTS);
        }
        assert!(s.points.len() >= RECENT_POINTS);
        // The latest interval is the last point, at full resolution; nothing is lost.
        let last = s.points.last().unwrap();
        assert_eq!(
            (last.t_s, last.interval_s, last.intervals),
            (1000.0, 0.01, 1)
        );
        let merged: u64 = s.history.0.points().map(|p| p.intervals).sum();
        assert_eq!(merged + s.points.len() as u64, intervals);
        assert!(
            s.verdict().starts_with("FAIL so far: 100000 I/O errors"),
            "{}",
            s.verdict()
        );
        // A merged point (the first, of intervals 0 to n - 1): p99 the largest of its
        // intervals', the mean over their I/Os, the rate over their time, errors added.
        let first = s.history.0.points().next().unwrap();
        let n = first.intervals;
        assert!(n > 7, "{n}");
        let ops: u64 = (0..n).map(|i| 10 + i % 3).sum();
        let lat: f64 = (0..n)
            .map(|i| ((10 + i % 3) * 1000 * (1 + i % 3)) as f64)
            .sum();
        let c = &first.classes["c"];
        assert_eq!(c.read_p99_us, Some(7.0));
        assert!(
            (c.read_mean_us.unwrap() - lat / ops as f64 / 1e3).abs() < 1e-9,
            "{c:?}"
        );
        assert!(
            (first.iops - ops as f64 / (n as f64 * 0.01)).abs() < 1e-6,
            "{}",
            first.iops
        );
        assert_eq!(first.errors, n);
        assert!((first.interval_s - n as f64 * 0.01).abs() < 1e-6);
        assert!((first.t_s - n as f64 * 0.01).abs() < 1e-6);
        // What is served stays small, and says what it merged.
        let json = s.render_json();
        assert!(json.len() < 1 << 20, "{} bytes", json.len());
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let history = v["history"].as_array().unwrap();
        assert_eq!(history.len(), s.history.0.len());
        assert!(history[0].get("intervals").is_none() && history[0].get("run").is_none());
        let note = v["history_note"].as_str().unwrap();
        assert!(
            note.contains(&format!(
                "each merging up to {} consecutive intervals",
                s.history.0.widest()
            )),
            "{note}"
        );
        assert!(note.contains("upper bound"), "{note}");
    }

    #[test]
    fn machine_busy_is_user_and_kernel_time_iowait_apart() {
        let mut r = IntervalRecord {
            t_end_ms: 2000,
            interval_ms: 1000,
            ..Default::default()
        };
        r.cpu = CpuPercent {
            process_user_pct: 80.0,
            process_system_pct: 40.0,
            system_user_pct: 20.0,
            system_system_pct: 10.0,
            system_iowait_pct: 67.0,
            system_idle_pct: 3.0,
            system_cpu_pressure_pct: None,
        };
        let p = point(&r, 5.0, None);
        assert_eq!(p.t_s, 7.0);
        let json: serde_json::Value = serde_json::to_value(&p).unwrap();
        assert_eq!(
            json["cpu"],
            serde_json::json!({
                "storlab_pct_of_one_cpu": 120.0,
                "machine_busy_pct": 30.0,
                "machine_idle_pct": 70.0,
                "machine_iowait_pct": 67.0,
            })
        );
        // The summary: the measured intervals' so far, weighted by their length; the results
        // file's once the run is over.
        let mut s = State::default();
        assert!(s.cpu().is_none());
        let mut half = p.clone();
        half.interval_s = 3.0;
        half.cpu.system_user_pct = 60.0;
        half.cpu.system_iowait_pct = 27.0;
        let mut ramp = p.clone();
        ramp.ramp = true;
        ramp.cpu.system_user_pct = 100.0;
        for point in [ramp, p, half] {
            s.add(point);
        }
        let c = s.cpu().unwrap();
        assert_eq!(c.figures.machine_busy_pct, 60.0);
        assert_eq!(c.machine_busy, "60%");
        assert!(
            c.text.starts_with("CPU over the measured phase so far: storlab used 120% of one CPU · the machine was 60% busy, 40% idle; 37% of it waiting for I/O"),
            "{}",
            c.text
        );
        s.final_cpu = Some(CpuPercent {
            system_user_pct: 25.3,
            system_system_pct: 5.0,
            system_idle_pct: 69.7,
            ..CpuPercent::default()
        });
        let c = s.cpu().unwrap();
        assert_eq!(c.machine_busy, "30.3%");
        assert!(c.text.starts_with("CPU over the measured phase (the results file): storlab used 0% of one CPU · the machine was 30.3% busy, 69.7% idle"), "{}", c.text);
        assert!(!c.text.contains("waiting for I/O"));
    }
}
