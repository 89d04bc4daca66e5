//! The live view of a running run (`--serve ADDR`): an HTTP server on its own thread that
//! serves a page of live charts (`/`, polling `/live.json` each interval), the run so far as
//! JSON (`/live.json`) and Prometheus/OpenMetrics metrics (`/metrics`). It is fed by an
//! [`Observer`] ([`Feed`]) that the collector tells of each interval once it is merged, and of
//! each worker's part of it: the workers' hot path does not know it exists. Loopback unless
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
    /// The page's points, one per interval.
    points: Vec<Point>,
    /// Where the current run's points start in `points` (a sequence or an Exchange validation
    /// runs several jobs one after another).
    run_start: usize,
    /// Where the current run's time starts on the page's time axis, s: the end of the runs
    /// before it.
    run_offset_s: f64,
    /// Measured I/Os: (class, direction, worker) → ops, bytes, errors.
    counters: BTreeMap<(usize, usize, usize), [u64; 3]>,
    /// Measured latency: (class, direction, worker) → its buckets.
    latency: BTreeMap<(usize, usize, usize), metrics::Latency>,
    /// The last interval's IOPS: (class, direction, IOPS) of each class and direction with
    /// I/O.
    last_iops: Vec<(String, &'static str, f64)>,
    /// Each worker's part of the intervals not merged yet.
    pending: BTreeMap<u64, Vec<(usize, StatsSet)>>,
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

/// One interval on the page.
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
}

/// A class's latency in one interval, µs (`None`: no I/O of that direction).
#[derive(Debug, Clone, Serialize)]
struct ClassPoint {
    read_p99_us: Option<f64>,
    write_p99_us: Option<f64>,
    read_mean_us: Option<f64>,
    write_mean_us: Option<f64>,
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
    points: &'a [Point],
}

impl State {
    fn verdict(&self) -> String {
        if let Some(v) = &self.final_verdict {
            return v.clone();
        }
        let errors: u64 = self.points.iter().map(|p| p.errors).sum();
        let mut parts = Vec::new();
        parts.push(match errors {
            0 => "no I/O errors so far".to_string(),
            n => format!("FAIL so far: {n} I/O errors"),
        });
        // The rule judges the current run's measured phase: its I/Os over its time.
        let run =
            (self.points.get(self.run_start..).unwrap_or_default().iter()).filter(|p| !p.ramp);
        let (ios, secs) = run.fold((0.0, 0.0), |(n, s), p| {
            let rate = p.transactional_iops.unwrap_or_default();
            (n + rate * p.interval_s, s + p.interval_s)
        });
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
            None => {
                let measured = self.points.iter().filter(|p| !p.ramp);
                let mut measured = measured.map(|p| (p.cpu, p.interval_s)).peekable();
                measured.peek()?;
                ("the measured phase so far", CpuPercent::weighted(measured))
            }
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
        s.run_start = s.points.len();
        s.run_offset_s = s.points.last().map_or(0.0, |p| p.t_s);
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

    fn worker_interval(&mut self, worker: usize, index: u64, stats: &StatsSet) {
        let mut s = edit(&self.state);
        s.pending
            .entry(index)
            .or_default()
            .push((worker, stats.clone()));
    }

    fn interval(&mut self, r: &IntervalRecord, _grid: &IntervalGrid) {
        let mut s = edit(&self.state);
        let parts = s.pending.remove(&r.index).unwrap_or_default();
        // Older intervals never merged (a worker that stopped) are dropped.
        s.pending.retain(|&i, _| i > r.index);
        if r.phase == IntervalPhase::Measure {
            for (worker, stats) in &parts {
                for (class, c) in stats.classes.iter().enumerate() {
                    for (dir, d) in c.dirs.iter().enumerate() {
                        if d.ops == 0 && d.errors == 0 {
                            continue;
                        }
                        let slot = s.counters.entry((class, dir, *worker)).or_default();
                        slot[0] += d.ops;
                        slot[1] += d.bytes;
                        slot[2] += d.errors;
                        s.latency
                            .entry((class, dir, *worker))
                            .or_default()
                            .add(&d.latency);
                    }
                }
            }
        }
        s.last_iops = (r.classes.iter())
            .flat_map(|(n, c)| {
                let dirs = [&c.read, &c.write, &c.flush];
                (dirs.into_iter().zip(DIRECTIONS))
                    .filter(|(d, _)| d.ops > 0)
                    .map(|(d, dir)| (n.clone(), dir, d.iops))
            })
            .collect();
        let point = point(r, s.run_offset_s, s.watch.as_ref());
        s.points.push(point);
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
    }
}

#[cfg(test)]
mod tests {
    use super::{CpuPercent, IntervalRecord, Point, RateWatch, State, edit, lock, page, point};
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
        s.points = vec![measured(0, 990.0), measured(2, 990.0)];
        let v = s.verdict();
        assert!(v.starts_with("FAIL so far: 2 I/O errors"), "{v}");
        assert!(
            v.contains("achieved transactional IOPS so far 990 for a target of 1000, the rule passing from 990 (on target)"),
            "{v}"
        );
        // Just under the threshold is below, though 95 % of the target.
        s.points = vec![measured(0, 990.0), measured(0, 989.98)];
        let v = s.verdict();
        assert!(
            v.contains("so far 989.99 for a target of 1000, the rule passing from 990.00 (below)"),
            "{v}"
        );
        // The rate is I/Os over time: a short interval counts for its length.
        let mut short = measured(0, 1000.0);
        short.interval_s = 0.25;
        s.points = vec![measured(0, 980.0), short];
        assert!(s.verdict().contains("so far 984 ") && s.verdict().contains("(below)"));
        // Ramp intervals and the runs before the current one do not count.
        let mut ramp = measured(0, 0.0);
        ramp.ramp = true;
        s.points = vec![measured(0, 0.0), ramp, measured(0, 995.0)];
        s.run_start = 1;
        let v = s.verdict();
        assert!(
            v.contains("so far 995 ") && v.contains("(on target)"),
            "{v}"
        );
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
        s.points = vec![ramp, p, half];
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
