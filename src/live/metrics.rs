//! `/metrics`: the run so far in Prometheus's text format 0.0.4 or in OpenMetrics 1.0.0, as the
//! scraper's `Accept` header asks ([`Format::negotiate`]), both written from one list of
//! families ([`families`]): counters of measured I/Os, bytes and errors and a latency
//! histogram, each labelled `class`, `direction`, `worker`, `target` and `host`; gauges of the
//! last interval's IOPS (`class`, `direction`, `host`), CPU (storlab's, the machine's busy and
//! iowait shares, as the page gives them), device use (`device`, `host`) and whether the run
//! measures (`host`).
//!
//! The latency histogram's buckets are storlab's own (hdrhistogram, two significant digits:
//! each at most 1/128 of its value wide): for every bucket any series has used, its upper bound
//! and the upper bound of the bucket below it, the same bounds in every series (so that sums
//! over workers or classes add like buckets). Prometheus's `histogram_quantile` interpolates
//! within one such bucket, so its quantiles are within 0.8 % of the results file's
//! percentiles (docs/guide.md, "Watch a long run live").

use super::{DIRECTIONS, State};
use crate::stats::histogram::Histogram;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// A latency histogram of one series, added up interval by interval from storlab's own.
#[derive(Debug, Clone, Default)]
pub(super) struct Latency(Histogram);

impl Latency {
    /// Adds `h`'s values.
    pub(super) fn add(&mut self, h: &Histogram) {
        self.0.add(h);
    }
}

/// The exposition formats `/metrics` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// Prometheus's text format, version 0.0.4.
    Text,
    /// OpenMetrics 1.0.0.
    OpenMetrics,
}

impl Format {
    /// The format an `Accept` header prefers: OpenMetrics when it is acceptable and weighted
    /// at least as much as plain text, else text 0.0.4 (also without a header).
    pub(super) fn negotiate(accept: Option<&str>) -> Format {
        let (mut open, mut text) = (0.0f64, 0.0f64);
        for range in accept.unwrap_or("").split(',') {
            let mut parts = range.split(';').map(str::trim);
            let kind = parts.next().unwrap_or("").to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.strip_prefix("q="))
                .find_map(|q| q.parse::<f64>().ok())
                .unwrap_or(1.0);
            match kind.as_str() {
                "application/openmetrics-text" => open = open.max(q),
                "text/plain" | "text/*" | "*/*" => text = text.max(q),
                _ => {}
            }
        }
        if open > 0.0 && open >= text {
            Format::OpenMetrics
        } else {
            Format::Text
        }
    }

    /// The answer's content type.
    pub(super) fn content_type(self) -> &'static str {
        match self {
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// What a family is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// One sample: its name's suffix (`_total`, `_bucket`...), its labels, its value.
struct Sample {
    suffix: &'static str,
    labels: Vec<(&'static str, String)>,
    value: f64,
}

/// One metric family.
struct Family {
    /// Its name, without `_total` for a counter.
    name: &'static str,
    kind: Kind,
    /// Its unit (OpenMetrics' `# UNIT`, the last word of the name), if any.
    unit: Option<&'static str>,
    help: &'static str,
    samples: Vec<Sample>,
}

/// The names of every family storlab serves, as samples are named (`storlab_ios_total`,
/// `storlab_latency_seconds_bucket`...).
#[cfg(test)]
pub(super) fn sample_names() -> Vec<String> {
    let mut out = Vec::new();
    for f in families(&State::default()) {
        let suffixes: &[&str] = match f.kind {
            Kind::Counter => &["_total"],
            Kind::Gauge => &[""],
            Kind::Histogram => &["_bucket", "_sum", "_count"],
        };
        out.extend(suffixes.iter().map(|s| format!("{}{s}", f.name)));
    }
    out
}

/// The families of `s`.
fn families(s: &State) -> Vec<Family> {
    let name = |i: usize, list: &[String]| list.get(i).cloned().unwrap_or_else(|| i.to_string());
    let io_labels = |class: usize, dir: usize, worker: usize| {
        let (w, target) =
            (s.workers.get(worker).cloned()).unwrap_or_else(|| (worker.to_string(), String::new()));
        vec![
            ("class", name(class, &s.classes)),
            ("direction", DIRECTIONS[dir].to_string()),
            ("worker", w),
            ("target", target),
            ("host", s.host.clone()),
        ]
    };
    let counter = |name, unit, help, at: usize| Family {
        name,
        kind: Kind::Counter,
        unit,
        help,
        samples: (s.counters.iter())
            .map(|(&(c, d, w), v)| Sample {
                suffix: "_total",
                labels: io_labels(c, d, w),
                value: v[at] as f64,
            })
            .collect(),
    };
    let host = || vec![("host", s.host.clone())];
    let gauge = |name, help, samples: Vec<Sample>| Family {
        name,
        kind: Kind::Gauge,
        unit: None,
        help,
        samples,
    };
    let one = |value: f64| {
        vec![Sample {
            suffix: "",
            labels: host(),
            value,
        }]
    };
    let last = s.points.last();
    let cpu = |f: fn(&crate::stats::host::CpuPercent) -> f64| last.map(|p| f(&p.cpu));
    vec![
        counter(
            "storlab_ios",
            None,
            "I/Os completed in the measured phase",
            0,
        ),
        counter(
            "storlab_io_bytes",
            Some("bytes"),
            "Bytes transferred in the measured phase",
            1,
        ),
        counter(
            "storlab_io_errors",
            None,
            "Failed I/Os in the measured phase",
            2,
        ),
        latency(s, &io_labels),
        gauge(
            "storlab_iops",
            "I/Os a second in the last interval",
            (s.last_iops.iter())
                .map(|(class, dir, v)| Sample {
                    suffix: "",
                    labels: vec![
                        ("class", class.clone()),
                        ("direction", dir.to_string()),
                        ("host", s.host.clone()),
                    ],
                    value: *v,
                })
                .collect(),
        ),
        gauge(
            "storlab_cpu_percent",
            "storlab's CPU in the last interval, % of one CPU",
            cpu(|c| c.process_pct()).map(one).unwrap_or_default(),
        ),
        gauge(
            "storlab_machine_busy_percent",
            "The machine's user and kernel time in the last interval, % of all CPUs (iowait is idle)",
            cpu(|c| c.machine_busy_pct()).map(one).unwrap_or_default(),
        ),
        gauge(
            "storlab_machine_iowait_percent",
            "The machine's idle time with I/O pending in the last interval, % of all CPUs",
            cpu(|c| c.system_iowait_pct).map(one).unwrap_or_default(),
        ),
        gauge(
            "storlab_device_utilisation_percent",
            "Device busy time in the last interval, %",
            (last.iter().flat_map(|p| &p.devices))
                .map(|(device, u)| Sample {
                    suffix: "",
                    labels: vec![("device", device.clone()), ("host", s.host.clone())],
                    value: u.util_pct,
                })
                .collect(),
        ),
        gauge(
            "storlab_measuring",
            "1 while the run measures, 0 before and after",
            one(f64::from(u8::from(s.phase == "measure" && !s.done))),
        ),
    ]
}

/// The latency histogram: every series over the same bounds (see the module's documentation).
fn latency(
    s: &State,
    io_labels: &dyn Fn(usize, usize, usize) -> Vec<(&'static str, String)>,
) -> Family {
    let buckets: Vec<_> = (s.latency.iter())
        .map(|(k, l)| (k, l.0.bucket_ranges(), &l.0))
        .collect();
    let bounds: BTreeSet<u64> = (buckets.iter())
        .flat_map(|(_, b, _)| b.iter().flat_map(|&(low, high, _)| [low - 1, high]))
        .filter(|&b| b > 0)
        .collect();
    let mut samples = Vec::new();
    for (key, ranges, h) in &buckets {
        let &&(c, d, w) = key;
        let labels = io_labels(c, d, w);
        let mut ranges = ranges.iter().peekable();
        let mut below = 0u64;
        for &b in &bounds {
            while let Some(&&(_, high, n)) = ranges.peek().filter(|r| r.1 <= b) {
                debug_assert!(high <= b);
                below += n;
                ranges.next();
            }
            let mut l = labels.clone();
            l.push(("le", seconds(b)));
            samples.push(Sample {
                suffix: "_bucket",
                labels: l,
                value: below as f64,
            });
        }
        let mut l = labels.clone();
        l.push(("le", "+Inf".into()));
        let count = h.count() as f64;
        samples.push(Sample {
            suffix: "_bucket",
            labels: l,
            value: count,
        });
        samples.push(Sample {
            suffix: "_sum",
            labels: labels.clone(),
            value: h.mean() * count / 1e9,
        });
        samples.push(Sample {
            suffix: "_count",
            labels,
            value: count,
        });
    }
    Family {
        name: "storlab_latency_seconds",
        kind: Kind::Histogram,
        unit: Some("seconds"),
        help: "Latency of the measured I/Os (submission to completion; response time in open loop)",
        samples,
    }
}

/// Nanoseconds as seconds, written as the shortest decimal that reads back to the same value.
fn seconds(ns: u64) -> String {
    let v = ns as f64 / 1e9;
    let s = format!("{v}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// A label value with `\`, `"` and line ends escaped.
fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A value as both formats write it.
fn number(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if v.is_nan() {
        "NaN".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The metrics of `s`, in `format`.
pub(super) fn encode(s: &State, format: Format) -> String {
    let mut out = String::new();
    for f in families(s) {
        let kind = match f.kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        };
        // Text 0.0.4 names a counter's family as its samples; OpenMetrics without `_total`.
        let family = match (format, f.kind) {
            (Format::Text, Kind::Counter) => format!("{}_total", f.name),
            _ => f.name.to_string(),
        };
        let help = f.help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(out, "# HELP {family} {help}");
        let _ = writeln!(out, "# TYPE {family} {kind}");
        if let (Format::OpenMetrics, Some(unit)) = (format, f.unit) {
            let _ = writeln!(out, "# UNIT {family} {unit}");
        }
        for sample in &f.samples {
            let labels: Vec<String> = (sample.labels.iter())
                .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                .collect();
            let _ = writeln!(
                out,
                "{}{}{{{}}} {}",
                f.name,
                sample.suffix,
                labels.join(","),
                number(sample.value)
            );
        }
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_is_negotiated_as_prometheus_asks() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
        assert_eq!(
            Format::negotiate(Some("text/plain;version=0.0.4")),
            Format::Text
        );
        assert_eq!(Format::negotiate(None), Format::Text);
        assert_eq!(Format::negotiate(Some("*/*")), Format::Text);
        assert_eq!(
            Format::negotiate(Some("text/plain, application/openmetrics-text;q=0.2")),
            Format::Text
        );
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text;q=0")),
            Format::Text
        );
    }

    /// A state with one worker's reads in two latency ranges and one class's IOPS.
    fn state() -> State {
        let mut s = State {
            host: "db1".into(),
            classes: vec!["db \"x\"".into()],
            workers: vec![("w0".into(), "t".into()), ("w1".into(), "t".into())],
            phase: "measure".into(),
            ..State::default()
        };
        for (worker, values) in [(0, [100_000u64, 150_000]), (1, [2_000_000, 2_000_000])] {
            let mut h = Histogram::new();
            for v in values {
                h.record(v);
            }
            s.latency.entry((0, 0, worker)).or_default().add(&h);
            s.counters.insert((0, 0, worker), [2, 8192, 0]);
        }
        s.last_iops = vec![("db \"x\"".into(), "read", 4.0)];
        s
    }

    #[test]
    fn both_formats_name_families_as_their_specifications_say() {
        let s = state();
        let text = encode(&s, Format::Text);
        assert!(
            text.contains("# TYPE storlab_ios_total counter\n"),
            "{text}"
        );
        assert!(text.contains("# HELP storlab_ios_total "));
        assert!(text.contains("storlab_ios_total{class=\"db \\\"x\\\"\",direction=\"read\",worker=\"w0\",target=\"t\",host=\"db1\"} 2\n"), "{text}");
        assert!(!text.contains("# EOF"));
        let open = encode(&s, Format::OpenMetrics);
        assert!(open.contains("# TYPE storlab_ios counter\n"));
        assert!(open.contains("# UNIT storlab_io_bytes bytes\n"));
        assert!(open.contains("# UNIT storlab_latency_seconds seconds\n"));
        assert!(open.ends_with("# EOF\n"));
        // Every family has the host label on every sample.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            assert!(line.contains("host=\"db1\""), "{line}");
        }
        assert!(
            text.contains("storlab_iops{class=\"db \\\"x\\\"\",direction=\"read\",host=\"db1\"} 4")
        );
    }

    #[test]
    fn every_series_has_the_same_bounds_each_around_a_bucket_used() {
        let s = state();
        let text = encode(&s, Format::Text);
        let bounds = |worker: &str| -> Vec<String> {
            (text.lines())
                .filter(|l| l.starts_with("storlab_latency_seconds_bucket"))
                .filter(|l| l.contains(&format!("worker=\"{worker}\"")))
                .map(|l| {
                    l.split("le=\"")
                        .nth(1)
                        .unwrap()
                        .split('"')
                        .next()
                        .unwrap()
                        .to_string()
                })
                .collect()
        };
        assert_eq!(bounds("w0"), bounds("w1"));
        // Two buckets per value of each worker: its bound and the one below (6 here), +Inf.
        assert_eq!(bounds("w0").len(), 7, "{text}");
        // Cumulative: w0 has both its reads by 2 ms, w1 neither before it.
        let w1: Vec<f64> = (text.lines())
            .filter(|l| l.starts_with("storlab_latency_seconds_bucket") && l.contains("w1"))
            .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(w1, [0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0]);
    }

    /// The Grafana dashboard in packaging/ asks only for metrics storlab serves.
    #[test]
    fn the_grafana_dashboard_uses_only_served_metrics() {
        let text = include_str!("../../packaging/grafana/storlab.json");
        let dashboard: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut exprs = Vec::new();
        fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, v) in m {
                        match (k.as_str(), v.as_str()) {
                            ("expr" | "query", Some(e)) => out.push(e.to_string()),
                            _ => walk(v, out),
                        }
                    }
                }
                serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
                _ => {}
            }
        }
        walk(&dashboard, &mut exprs);
        assert!(exprs.len() >= 6, "{exprs:?}");
        let served = sample_names();
        for e in &exprs {
            let names: Vec<&str> = e
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("storlab_"))
                .collect();
            assert!(!names.is_empty(), "{e}");
            for n in names {
                assert!(
                    served.iter().any(|s| s == n),
                    "`{n}` in `{e}` is not served: {served:?}"
                );
            }
        }
    }
}
