//! `/metrics`: the run so far in the Prometheus/OpenMetrics text format, encoded by the
//! `prometheus-client` crate from a registry built for each scrape: counters of measured I/Os,
//! bytes and errors and a latency histogram (buckets from storlab's own histograms, within
//! 1 %), each labelled `class`, `direction`, `worker`, `target` and `host`, and gauges of the
//! last interval's IOPS, CPU (storlab's, the machine's busy and iowait shares, as the page
//! gives them) and device use.

use super::{DIRECTIONS, State};
use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;

/// Labels of the I/O counters.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct IoLabels {
    class: String,
    direction: String,
    worker: String,
    target: String,
    host: String,
}

/// Labels of host-wide gauges.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HostLabels {
    host: String,
}

/// Labels of device gauges.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeviceLabels {
    device: String,
    host: String,
}

/// The upper bounds of the latency buckets, seconds.
const BOUNDS: [f64; 20] = [
    25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 20e-3, 50e-3, 100e-3, 250e-3,
    500e-3, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// A latency histogram in the buckets of [`BOUNDS`], added up interval by interval from
/// storlab's own histograms (each value within 1 %): sum (s), count, and per bucket (and +Inf)
/// the count in it, not cumulative.
#[derive(Debug, Clone, Default)]
pub(super) struct Latency {
    sum: f64,
    count: u64,
    counts: Vec<u64>,
}

impl Latency {
    /// Adds `h`'s values.
    pub(super) fn add(&mut self, h: &crate::stats::histogram::Histogram) {
        if self.counts.is_empty() {
            self.counts = vec![0; BOUNDS.len() + 1];
        }
        for (ns, n) in h.buckets() {
            let s = ns as f64 / 1e9;
            let i = BOUNDS.iter().position(|&b| s <= b).unwrap_or(BOUNDS.len());
            self.counts[i] += n;
        }
        self.sum += h.mean() * h.count() as f64 / 1e9;
        self.count += h.count();
    }
}

/// A [`Latency`] as a `prometheus-client` metric (its buckets come whole, not observed one by
/// one).
#[derive(Debug, Default)]
struct Buckets(std::sync::Mutex<Latency>);

impl TypedMetric for Buckets {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Buckets {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let l = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let bounds = BOUNDS.iter().copied().chain([f64::INFINITY]);
        let buckets: Vec<(f64, u64)> = bounds.zip(l.counts.iter().copied()).collect();
        encoder.encode_histogram::<prometheus_client::encoding::NoLabelSet>(
            l.sum, l.count, &buckets, None,
        )
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

/// The metrics of `s`, encoded.
pub(super) fn encode(s: &State) -> String {
    let mut registry = Registry::with_prefix("storlab");
    let name = |i: usize, list: &[String]| list.get(i).cloned().unwrap_or_else(|| i.to_string());
    let [ios, bytes, errors] =
        [(); 3].map(|()| Family::<IoLabels, Counter<u64, AtomicU64>>::default());
    let labels = |class: usize, dir: usize, worker: usize| {
        let (w, target) =
            (s.workers.get(worker).cloned()).unwrap_or_else(|| (worker.to_string(), String::new()));
        IoLabels {
            class: name(class, &s.classes),
            direction: DIRECTIONS[dir].to_string(),
            worker: w,
            target,
            host: s.host.clone(),
        }
    };
    for (&(class, dir, worker), v) in &s.counters {
        let labels = labels(class, dir, worker);
        ios.get_or_create(&labels).inc_by(v[0]);
        bytes.get_or_create(&labels).inc_by(v[1]);
        errors.get_or_create(&labels).inc_by(v[2]);
    }
    registry.register("ios", "I/Os completed in the measured phase", ios);
    registry.register_with_unit(
        "io",
        "Bytes transferred in the measured phase",
        Unit::Bytes,
        bytes,
    );
    registry.register("io_errors", "Failed I/Os in the measured phase", errors);
    let latency = Family::<IoLabels, Buckets>::default();
    for (&(class, dir, worker), l) in &s.latency {
        let metric = latency.get_or_create(&labels(class, dir, worker));
        *metric.0.lock().unwrap_or_else(|e| e.into_inner()) = l.clone();
    }
    registry.register_with_unit(
        "latency",
        "Latency of the measured I/Os (submission to completion; response time in open loop)",
        Unit::Seconds,
        latency,
    );
    let host = HostLabels {
        host: s.host.clone(),
    };
    let last = s.points.last();
    let gauge = |v: f64| {
        let g = Gauge::<f64, AtomicU64>::default();
        g.set(v);
        g
    };
    let [iops, cpu, busy, iowait] =
        [(); 4].map(|()| Family::<HostLabels, Gauge<f64, AtomicU64>>::default());
    if let Some(p) = last {
        iops.get_or_create(&host).set(p.iops);
        cpu.get_or_create(&host).set(p.cpu.process_pct());
        busy.get_or_create(&host).set(p.cpu.machine_busy_pct());
        iowait.get_or_create(&host).set(p.cpu.system_iowait_pct);
    }
    registry.register("iops", "I/Os a second in the last interval", iops);
    registry.register(
        "cpu_percent",
        "storlab's CPU in the last interval, % of one CPU",
        cpu,
    );
    registry.register(
        "machine_busy_percent",
        "The machine's user and kernel time in the last interval, % of all CPUs (iowait is idle)",
        busy,
    );
    registry.register(
        "machine_iowait_percent",
        "The machine's idle time with I/O pending in the last interval, % of all CPUs",
        iowait,
    );
    let util = Family::<DeviceLabels, Gauge<f64, AtomicU64>>::default();
    for (device, u) in last.iter().flat_map(|p| &p.devices) {
        util.get_or_create(&DeviceLabels {
            device: device.clone(),
            host: s.host.clone(),
        })
        .set(u.util_pct);
    }
    registry.register(
        "device_utilisation_percent",
        "Device busy time in the last interval, %",
        util,
    );
    registry.register(
        "measuring",
        "1 while the run measures, 0 before and after",
        gauge(f64::from(u8::from(s.phase == "measure" && !s.done))),
    );
    let mut out = String::new();
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}
