//! The live view of a running run (`--serve ADDR`): an HTTP server on its own thread that
//! serves a page of live charts (`/`, polling `/live.json` each interval), the run so far as
//! JSON (`/live.json`) and Prometheus/OpenMetrics metrics (`/metrics`). It is fed by an
//! [`Observer`] ([`Feed`]) that the collector tells of each interval once it is merged, and of
//! each worker's part of it: the workers' hot path does not know it exists. Loopback unless
//! another address is given; the page says so when it is not.

mod metrics;
mod page;

use crate::job::Job;
use crate::results::Phase;
use crate::results::progress::Observer;
use crate::stats::StatsSet;
use crate::stats::timeseries::{IntervalGrid, IntervalPhase, IntervalRecord};
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

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
    /// Measured I/Os: (class, direction, worker) → ops, bytes, errors.
    counters: BTreeMap<(usize, usize, usize), [u64; 3]>,
    /// Measured latency: (class, direction, worker) → its buckets.
    latency: BTreeMap<(usize, usize, usize), metrics::Latency>,
    /// Each worker's part of the intervals not merged yet.
    pending: BTreeMap<u64, Vec<(usize, StatsSet)>>,
    /// An Exchange validation's target IOPS and transactional classes.
    target: Option<(f64, Vec<String>)>,
}

/// One interval on the page.
#[derive(Debug, Clone, Serialize)]
struct Point {
    /// End of the interval, s since the I/O started.
    t: f64,
    ramp: bool,
    iops: f64,
    mb_per_s: f64,
    /// Per class: read and write p99 and mean, µs.
    classes: BTreeMap<String, [f64; 4]>,
    /// storlab's CPU, % of one CPU; the machine's busy share, %.
    cpu: [f64; 2],
    /// Per device: utilisation, %.
    devices: BTreeMap<String, f64>,
    /// An Exchange validation's transactional IOPS.
    transactional: Option<f64>,
    errors: u64,
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
    points: &'a [Point],
}

impl State {
    fn verdict(&self) -> String {
        let errors: u64 = self.points.iter().map(|p| p.errors).sum();
        let measured: Vec<&Point> = self.points.iter().filter(|p| !p.ramp).collect();
        let mut parts = Vec::new();
        parts.push(match errors {
            0 => "no I/O errors so far".to_string(),
            n => format!("FAIL so far: {n} I/O errors"),
        });
        if let (Some((target, _)), false) = (&self.target, measured.is_empty()) {
            let got = measured.iter().filter_map(|p| p.transactional).sum::<f64>()
                / measured.len() as f64;
            let ok = got >= target * 0.95;
            parts.push(format!(
                "transactional IOPS so far {got:.0} of a target of {target:.0} ({})",
                if ok { "on target" } else { "below" }
            ));
        }
        parts.push("latency limits are judged at the end".into());
        parts.join("; ")
    }

    fn json(&self) -> String {
        serde_json::to_string(&LiveJson {
            host: &self.host,
            served_on: &self.served_on,
            loopback: self.loopback,
            interval_ms: self.interval_ms,
            phase: &self.phase,
            done: self.done,
            verdict: self.verdict(),
            points: &self.points,
        })
        .unwrap_or_else(|_| "{}".into())
    }
}

/// Locks the state, whatever a panicking holder left (it holds figures only).
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The observer that feeds the server.
pub struct Feed {
    state: Arc<Mutex<State>>,
}

impl Observer for Feed {
    fn job(&mut self, job: &Job) {
        let mut s = lock(&self.state);
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
        lock(&self.state).phase = phase.to_string();
    }

    fn worker_interval(&mut self, worker: usize, index: u64, stats: &StatsSet) {
        let mut s = lock(&self.state);
        s.pending
            .entry(index)
            .or_default()
            .push((worker, stats.clone()));
    }

    fn interval(&mut self, r: &IntervalRecord, _grid: &IntervalGrid) {
        let mut s = lock(&self.state);
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
        let t = &r.total;
        let us = |ns: f64| ns / 1e3;
        let point = Point {
            t: r.t_end_ms as f64 / 1e3,
            ramp: r.phase == IntervalPhase::Ramp,
            iops: t.read.iops + t.write.iops,
            mb_per_s: (t.read.bytes_per_s + t.write.bytes_per_s) / 1e6,
            classes: (r.classes.iter())
                .map(|(n, c)| {
                    let v = [
                        us(c.read.latency_p99_ns as f64),
                        us(c.write.latency_p99_ns as f64),
                        us(c.read.latency_mean_ns),
                        us(c.write.latency_mean_ns),
                    ];
                    (n.clone(), v)
                })
                .collect(),
            cpu: [
                r.cpu.process_user_pct + r.cpu.process_system_pct,
                100.0 - r.cpu.system_idle_pct,
            ],
            devices: (r.devices.iter())
                .map(|(n, d)| (n.clone(), d.util_pct))
                .collect(),
            transactional: s.target.as_ref().map(|(_, classes)| {
                (classes.iter())
                    .filter_map(|c| r.classes.get(c))
                    .map(|c| c.read.iops + c.write.iops)
                    .sum()
            }),
            errors: t.read.errors + t.write.errors + t.flush.errors,
        };
        s.points.push(point);
    }

    fn transactional(&mut self, target: f64, classes: &[String]) {
        lock(&self.state).target = Some((target, classes.to_vec()));
    }
}

/// The server of one run's live view.
pub struct Server {
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).finish()
    }
}

/// `PORT` (loopback) or `ADDR:PORT`, as a socket address.
pub fn address(spec: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    spec.parse::<SocketAddr>().map_err(|_| {
        format!("`{spec}` is not a port or an address with a port (8080, 127.0.0.1:8080, [::1]:8080, 0.0.0.0:8080)")
    })
}

impl Server {
    /// Listens on `addr` and serves from a thread of its own; `host` names this host in the
    /// metrics.
    pub fn start(addr: SocketAddr, host: &str) -> Result<(Server, Feed)> {
        let http = tiny_http::Server::http(addr)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("cannot serve the live view on {addr}"))?;
        let addr = http
            .server_addr()
            .to_ip()
            .context("the live view's server has no IP address")?;
        let state = Arc::new(Mutex::new(State {
            host: host.to_string(),
            served_on: addr.to_string(),
            loopback: addr.ip().is_loopback(),
            phase: "starting".into(),
            ..State::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (state, stop) = (Arc::clone(&state), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("storlab-serve".into())
                .spawn(move || serve(&http, &state, &stop))
                .context("cannot start the live view's thread")?
        };
        let feed = Feed {
            state: Arc::clone(&state),
        };
        Ok((
            Server {
                state,
                stop,
                thread: Some(thread),
                addr,
            },
            feed,
        ))
    }

    /// The run is over: the page says so, the server keeps serving the final figures for
    /// `linger`, then stops.
    pub fn finish(mut self, linger: Duration) {
        lock(&self.state).done = true;
        std::thread::sleep(linger);
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answers requests until `stop`.
fn serve(http: &tiny_http::Server, state: &Mutex<State>, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(Some(request)) = http.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        let path = request.url().split('?').next().unwrap_or("/").to_string();
        let (body, kind, status) = match (request.method(), path.as_str()) {
            (tiny_http::Method::Get, "/") => {
                (page::html(&lock(state)), "text/html; charset=utf-8", 200)
            }
            (tiny_http::Method::Get, "/live.json") => (lock(state).json(), "application/json", 200),
            (tiny_http::Method::Get, "/metrics") => (
                metrics::encode(&lock(state)),
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                200,
            ),
            _ => (
                "not found: / (the page), /live.json, /metrics\n".to_string(),
                "text/plain",
                404,
            ),
        };
        let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], kind.as_bytes())
            .expect("a valid header");
        let response = tiny_http::Response::from_string(body)
            .with_header(header)
            .with_status_code(status);
        let _ = request.respond(response);
    }
}

#[cfg(test)]
mod tests {
    use super::{State, address, page};

    #[test]
    fn a_port_alone_is_loopback_and_another_address_must_be_given_whole() {
        assert_eq!(address("9100").unwrap().to_string(), "127.0.0.1:9100");
        assert_eq!(address("0.0.0.0:9100").unwrap().to_string(), "0.0.0.0:9100");
        assert_eq!(address("[::1]:80").unwrap().to_string(), "[::1]:80");
        let e = address("localhost").unwrap_err();
        assert!(e.contains("`localhost` is not a port or an address"), "{e}");
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

    #[test]
    fn the_verdict_so_far_counts_errors_and_an_exchange_target() {
        let mut s = State::default();
        assert!(s.verdict().starts_with("no I/O errors so far"));
        let point = |errors, transactional| super::Point {
            t: 1.0,
            ramp: false,
            iops: 100.0,
            mb_per_s: 1.0,
            classes: Default::default(),
            cpu: [0.0, 0.0],
            devices: Default::default(),
            transactional,
            errors,
        };
        s.target = Some((1000.0, vec!["db1~1read".into()]));
        s.points = vec![point(0, Some(990.0)), point(2, Some(970.0))];
        let v = s.verdict();
        assert!(v.starts_with("FAIL so far: 2 I/O errors"), "{v}");
        assert!(
            v.contains("transactional IOPS so far 980 of a target of 1000 (on target)"),
            "{v}"
        );
    }
}
