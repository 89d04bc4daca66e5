//! Tests of the HTML report: structure, charts, escaping, what ran (text that is markup in
//! every field a results file holds: `hostile_tests.rs`).

use super::charts::{Timeline, ramp_spans, record_times};
use super::*;
use crate::results::steps::RunFigures;
use crate::results::steps::{Repetitions, SteadyResult, StepResult};
use crate::stats::histogram::Histogram;
use crate::stats::repetition::spread;
use crate::stats::timeseries::IntervalClass;
use crate::stats::timeseries::{IntervalDir, IntervalPhase, IntervalRecord};
use serde_json::json;

#[test]
fn what_ran_is_the_recorded_source_and_flags() {
    use crate::results::Invocation;
    let mut r = result();
    r.invocation = Invocation {
        source: JobSource::File {
            path: "job.toml".into(),
        },
        flags: vec!["--verify".into()],
    };
    // The command line says nothing the header re-parses.
    r.command = vec![
        "storlab".into(),
        "run".into(),
        "--verify".into(),
        "job.toml".into(),
    ];
    assert_eq!(what_ran(&r), "job file job.toml, changed by --verify");
    r.invocation = Invocation {
        source: JobSource::Default {
            file: "examples/quickstart.toml".into(),
        },
        flags: Vec::new(),
    };
    assert_eq!(what_ran(&r), "default job (examples/quickstart.toml)");
    r.invocation.source = JobSource::Preset {
        name: "hba-scaling".into(),
    };
    assert_eq!(what_ran(&r), "preset hba-scaling");
}

fn dir(ops: u64) -> serde_json::Value {
    json!({
        "ops": ops, "bytes": ops * 4096, "errors": 0, "iops": ops as f64 / 2.0,
        "bytes_per_s": ops as f64 * 2048.0,
        "latency_ns": {
            "min": 10, "mean": 500.0, "max": 9000, "stddev": 1.0, "p50": 400, "p90": 600,
            "p95": 700, "p99": 1000, "p99_9": 3000, "p99_99": 8000
        }
    })
}

/// A plain run of two classes: `a` reads and writes, `b` only reads; histograms for all
/// three, two runs' worth of time series.
pub(super) fn result() -> RunResult {
    let class = |r: u64, w: u64| json!({"read": dir(r), "write": dir(w), "flush": dir(0)});
    let cpu = json!({
        "process_user_pct": 1.0, "process_system_pct": 2.0, "system_user_pct": 3.0,
        "system_system_pct": 4.0, "system_iowait_pct": 5.0, "system_idle_pct": 88.0
    });
    let with_durability = |mut c: serde_json::Value| {
        c["write_durability"] = json!("none");
        c
    };
    let mut v = crate::results::sample_json("null", &["a", "b"]);
    v["command"] = json!(["storlab", "run", "--preset", "oltp-<x>", "-q"]);
    v["job"]["description"] = json!("test <job>");
    v["warnings"] = json!(["a <warning>"]);
    v["host_cpu"] = cpu;
    v["totals"] = class(20, 10);
    v["classes"] = json!({"a": with_durability(class(10, 10)), "b": with_durability(class(10, 0))});
    let mut r: RunResult = serde_json::from_value(v).expect("a valid results file");
    let mut h = Histogram::new();
    for ns in [1_000, 2_000, 5_000, 100_000] {
        h.record(ns);
    }
    for c in r.classes.values_mut() {
        for d in [&mut c.read, &mut c.write, &mut c.flush] {
            d.histogram = Some(h.encode());
        }
    }
    let d = IntervalDir {
        ops: 5,
        bytes: 20480,
        iops: 5.0,
        bytes_per_s: 20480.0,
        latency_mean_ns: 800.0,
        latency_p99_ns: 2000,
        ..Default::default()
    };
    let both = IntervalClass {
        read: d,
        write: d,
        flush: IntervalDir::default(),
    };
    for run in 0..2 {
        for k in 1..=3u64 {
            let mut rec = IntervalRecord {
                index: k - 1,
                phase: crate::stats::timeseries::IntervalPhase::Measure,
                step: Some(run),
                t_end_ms: k * 1000,
                interval_ms: 1000,
                total: both,
                ..Default::default()
            };
            rec.classes.insert("a".into(), both);
            rec.devices.insert("sda".into(), Default::default());
            r.timeseries.held.push(rec);
        }
    }
    r
}

/// Every chart id on the page, in order.
fn charts(html: &str) -> Vec<&str> {
    html.split("data-chart=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect()
}

/// The SVG of chart `id`.
fn chart<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("data-chart=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"));
    let end = start + html[start..].find("</figure>").unwrap();
    &html[start..end]
}

/// The data-series names of a chart, each with its drawn points (polyline) or bar (a line's
/// markers, which carry its name too, are left out).
fn series_of(svg: &str) -> Vec<(String, String)> {
    svg.split("data-series=\"")
        .skip(1)
        .zip(svg.split("data-series=\""))
        .filter(|(_, before)| {
            !before
                .rsplit('<')
                .next()
                .unwrap_or("")
                .starts_with("circle")
        })
        .map(|(s, _)| {
            let name = s.split('"').next().unwrap().to_string();
            // The points, when they are in this element's start tag.
            let points = s
                .split_once("points=\"")
                .filter(|_| s.find("points=\"") < s.find('>'))
                .map(|(_, p)| p.split('"').next().unwrap().to_string())
                .unwrap_or_else(|| "bar".into());
            (name, points)
        })
        .collect()
}

#[test]
fn distribution_has_one_series_per_class_and_direction_with_ops() {
    let html = render(&result());
    let s = series_of(chart(&html, "latency-distribution"));
    let names: Vec<&str> = s.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["a read", "a write", "b read"]);
    for (_, points) in &s {
        // 0, 10, 25, 50, 75 and the maximum (at the last of 4 I/Os: 75%, merged).
        assert!(points.split(' ').count() >= 4, "{points}");
    }
}

#[test]
fn time_charts_cover_every_series_continuously() {
    let r = result();
    let html = render(&r);
    assert_eq!(
        charts(&html),
        [
            "iops-over-time",
            "mbps-over-time",
            "latency-over-time",
            "cpu-over-time",
            "device-util-over-time",
            "latency-distribution"
        ]
    );
    let names = |id| {
        series_of(chart(&html, id))
            .into_iter()
            .map(|s| s.0)
            .collect::<Vec<_>>()
    };
    assert_eq!(names("iops-over-time"), ["total", "a", "b"]);
    assert_eq!(
        names("latency-over-time"),
        ["a read mean", "a read p99", "a write mean", "a write p99",],
        "b has no interval figures: no empty series"
    );
    assert_eq!(
        names("cpu-over-time"),
        ["storlab user+sys", "machine busy", "machine iowait (idle)"]
    );
    assert_eq!(names("device-util-over-time"), ["sda"]);
    for (name, points) in series_of(chart(&html, "iops-over-time")) {
        assert_eq!(points.split(' ').count(), 6, "{name}");
    }
    assert_eq!(
        record_times(&r.timeseries.held),
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
    for id in charts(&html) {
        for (name, points) in series_of(chart(&html, id)) {
            assert!(!points.is_empty(), "{id}: {name}");
        }
    }
}

#[test]
fn step_charts_only_for_sequences() {
    let plain = render(&result());
    for id in ["steps-iops", "steps-mbps", "curve-latency", "steady-rounds"] {
        assert!(!plain.contains(&format!("data-chart=\"{id}\"")), "{id}");
    }

    let mut r = result();
    let step = |i: usize, bs: f64, iops: f64| {
        let mut s = StepResult {
            index: i,
            label: format!("block_size={bs}"),
            kind: StepKind::Step,
            ..Default::default()
        };
        s.parameters.insert("block_size".into(), bs);
        s.parameters.insert("workers".into(), 1.0);
        s.totals.read.iops = iops;
        s.totals.read.bytes_per_s = iops * bs;
        let runs = [iops * 0.9, iops * 1.1];
        s.repetitions = Some(Repetitions {
            runs: runs
                .iter()
                .map(|&v| RunFigures {
                    iops: v,
                    ..Default::default()
                })
                .collect(),
            iops: spread(&runs),
            mb_per_s: spread(&runs.map(|v| v * bs / 1e6)),
            ..Default::default()
        });
        s
    };
    r.steps = Some(vec![step(0, 4096.0, 1000.0), step(1, 65536.0, 300.0)]);
    let html = render(&r);
    let iops = chart(&html, "steps-iops");
    assert_eq!(series_of(iops)[0].0, "total");
    assert!(iops.contains(">64 KiB<"), "block sizes label the x axis");
    assert_eq!(iops.matches("class=\"errbar\"").count(), 6);
    assert!(html.contains("data-chart=\"steps-mbps\""));
    assert!(!html.contains("data-chart=\"curve-latency\""));

    // Two cycled parameters: bars per step label.
    let mut r2 = r.clone();
    for (s, w) in r2.steps.as_mut().unwrap().iter_mut().zip([1.0, 2.0]) {
        s.parameters.insert("workers".into(), w);
    }
    let html = render(&r2);
    assert!(chart(&html, "steps-iops").contains("<rect class=\"s0 fill\" data-series=\"total\""));

    // A rate curve and a steady-state step.
    let mut curve = Vec::new();
    for (i, pct) in [(1, 50.0), (2, 90.0)] {
        let mut s = StepResult {
            index: i,
            kind: StepKind::CurveLevel,
            curve_level_pct: Some(pct),
            target_iops: Some(pct * 10.0),
            ..Default::default()
        };
        s.totals.read = serde_json::from_value(dir(pct as u64)).unwrap();
        s.totals.read.latency_ns.p99 = 1000 * i as u64;
        curve.push(s);
    }
    curve.push(StepResult {
        index: 3,
        kind: StepKind::Step,
        steady: Some(SteadyResult {
            rounds_iops: vec![10.0, 20.0, 19.0, 20.0, 21.0],
            steady_at_round: Some(4),
            window: None,
            window_rounds: 3,
            ..Default::default()
        }),
        ..Default::default()
    });
    r.steps = Some(curve);
    let html = render(&r);
    let c = series_of(chart(&html, "curve-latency"));
    assert_eq!(
        c.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(),
        ["mean", "p99"]
    );
    assert!(c.iter().all(|s| s.1.split(' ').count() == 2));
    let st = series_of(chart(&html, "steady-rounds"));
    assert_eq!(st[0].0, "rounds");
    assert_eq!(st[0].1.split(' ').count(), 5);
    assert_eq!(st[1].0, "window");
    assert_eq!(st[1].1.split(' ').count(), 3, "rounds 2 to 4");
    assert!(
        !html.contains("data-chart=\"steps-iops\""),
        "one step: no per-step chart"
    );
    // Judged on latency, the chart is of each round's mean latency, in ms, and the step's
    // note says what was steady.
    let last = r.steps.as_mut().unwrap().last_mut().unwrap();
    let st = last.steady.as_mut().unwrap();
    st.metric = crate::job::steps::SteadyMetric::Latency;
    st.rounds_latency_mean_ns = vec![4e6, 2e6, 1.5e6, 1e6, 1e6];
    let html = render(&r);
    assert!(html.contains("mean latency per round"));
    assert!(html.contains("steady (mean latency) at round 4"));
    let st = series_of(chart(&html, "steady-rounds"));
    assert_eq!(st[0].0, "rounds");
    assert_eq!(st[0].1.split(' ').count(), 5);
    assert!(chart(&html, "steady-rounds").contains("mean latency, ms"));
}

#[test]
fn self_contained_and_escaped() {
    let html = render(&result());
    for bad in [
        "<script", "src=", "href=", "url(", "@import", "<img", "<link",
    ] {
        assert!(!html.contains(bad), "{bad}");
    }
    assert_eq!(
        html.matches("http").count(),
        html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    assert!(html.contains("test &lt;job&gt;"));
    assert!(html.contains("preset oltp-&lt;x&gt;"));
    assert!(!html.contains("<warning>"));
    assert!(html.contains(svg::STYLE));
}

/// A run of `ramp` seconds of ramp, then `measured` seconds, a record a second (the default
/// job is 2 s + 30 s).
fn ramped(ramp: u64, measured: u64) -> RunResult {
    let mut r = result();
    let template = r.timeseries.held[0].clone();
    r.timeseries.held = (0..ramp + measured)
        .map(|k| IntervalRecord {
            index: k,
            phase: if k < ramp {
                IntervalPhase::Ramp
            } else {
                IntervalPhase::Measure
            },
            step: None,
            t_end_ms: (k + 1) * 1000,
            ..template.clone()
        })
        .collect();
    r
}

/// The value of attribute `name` in the first tag of `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    tag.split_once(&format!(" {name}=\""))
        .and_then(|(_, v)| v.split_once('"'))
        .map(|(v, _)| v)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
}

fn num(tag: &str, name: &str) -> f64 {
    attr(tag, name).parse().unwrap()
}

/// Every `<NAME ...>` element of `svg`, from `<` to the end of its text (for `<text>`).
fn elements<'a>(svg: &'a str, name: &str) -> Vec<&'a str> {
    svg.split(&format!("<{name} "))
        .skip(1)
        .map(|s| s.split("</").next().unwrap())
        .collect()
}

/// The plot's horizontal extent (the x axis line: x1, x2) and its bottom.
fn plot(svg: &str) -> (f64, f64, f64) {
    let axis = elements(svg, "line")
        .into_iter()
        .find(|l| l.contains("class=\"axis\""))
        .unwrap();
    (num(axis, "x1"), num(axis, "x2"), num(axis, "y1"))
}

/// The labels under the x axis: (x, text-anchor, text).
fn x_labels(svg: &str) -> Vec<(f64, String, String)> {
    let (_, _, bottom) = plot(svg);
    elements(svg, "text")
        .into_iter()
        .filter(|t| t.contains("class=\"tick\""))
        // Under the plot, not the y axis' lowest label (4 px below it) nor the legend.
        .filter(|t| (bottom + 8.0..bottom + 30.0).contains(&num(t, "y")))
        .map(|t| {
            let text = t.split_once('>').unwrap().1;
            (num(t, "x"), attr(t, "text-anchor").to_string(), text.into())
        })
        .collect()
}

/// The SVG's width, from its viewBox.
fn svg_width(svg: &str) -> f64 {
    attr(svg, "viewBox")
        .split(' ')
        .nth(2)
        .unwrap()
        .parse()
        .unwrap()
}

const TIME_CHARTS: [&str; 5] = [
    "iops-over-time",
    "mbps-over-time",
    "latency-over-time",
    "cpu-over-time",
    "device-util-over-time",
];

#[test]
fn the_time_axis_runs_from_the_start_to_the_end_of_the_run() {
    let r = ramped(2, 30);
    assert_eq!(Timeline::of(&r.timeseries.held).range(), (0.0, 32.0));
    let html = render(&r);
    for id in TIME_CHARTS {
        let svg = chart(&html, id);
        let (left, right, _) = plot(svg);
        let labels = x_labels(svg);
        assert_eq!(labels[0].0, left, "{id}: the axis starts at 0 s");
        assert_eq!(labels[0].2, "0", "{id}");
        let values: Vec<f64> = labels.iter().map(|l| l.2.parse().unwrap()).collect();
        assert_eq!(values, [0.0, 10.0, 20.0, 30.0], "{id}: nothing past 32 s");
        // The last interval ends at the right end of the axis.
        let line = elements(svg, "polyline")[0];
        let last = attr(line, "points").split(' ').next_back().unwrap();
        let x: f64 = last.split(',').next().unwrap().parse().unwrap();
        assert_eq!(x, right, "{id}: the run ends at the axis' end");
    }
    // A run without ramp ends where its last interval does too.
    let plain = result();
    assert_eq!(Timeline::of(&plain.timeseries.held).range(), (0.0, 6.0));
}

#[test]
fn the_ramp_is_shaded_under_the_series_of_every_time_chart() {
    let html = render(&ramped(2, 30));
    for id in TIME_CHARTS {
        let svg = chart(&html, id);
        let bands = elements(svg, "rect")
            .into_iter()
            .filter(|r| r.contains("data-band=\"ramp\""))
            .collect::<Vec<_>>();
        assert_eq!(bands.len(), 1, "{id}: one ramp");
        let (left, right, _) = plot(svg);
        let (x, w) = (num(bands[0], "x"), num(bands[0], "width"));
        assert_eq!(x, left, "{id}: the ramp starts with the run");
        let end = left + (right - left) * 2.0 / 32.0;
        assert!((x + w - end).abs() < 0.2, "{id}: the ramp ends at 2 s");
        assert!(svg.contains(">ramp</text>"), "{id}: labelled");
        assert!(
            svg.find("data-band").unwrap() < svg.find("<polyline").unwrap(),
            "{id}: under the series"
        );
    }

    let plain = render(&result());
    assert!(!plain.contains("data-band"), "no ramp, no band");

    // A sequence: each run that ramped has its own band.
    let mut r = result();
    for rec in r.timeseries.held.iter_mut().filter(|rec| rec.index == 0) {
        rec.phase = IntervalPhase::Ramp;
    }
    let times = record_times(&r.timeseries.held);
    assert_eq!(
        ramp_spans(&r.timeseries.held, &times),
        [(0.0, 1.0), (3.0, 4.0)]
    );
    let html = render(&r);
    for id in TIME_CHARTS {
        assert_eq!(
            chart(&html, id).matches("data-band=\"ramp\"").count(),
            2,
            "{id}"
        );
    }
}

/// A run whose percentile plot reaches 99.9999% (more than 10⁵ I/Os).
fn million_ios() -> RunResult {
    let mut r = result();
    let mut h = Histogram::new();
    for k in 0..1_000_000u64 {
        h.record(1_000 + k % 5_000);
    }
    for c in r.classes.values_mut() {
        for d in [&mut c.read, &mut c.write] {
            d.histogram = Some(h.encode());
        }
    }
    r
}

#[test]
fn no_x_axis_label_is_cut_at_the_edges() {
    // Text width estimated high: 0.7 em a character of 11 px tick text ('%' is ~0.95 em,
    // digits ~0.64 em, '.' ~0.32 em).
    let width = |text: &str| 0.7 * 11.0 * text.chars().count() as f64;
    let mut pages = vec![render(&million_ios()), render(&ramped(2, 30))];
    let mut steps = result();
    let step = |i: usize, bs: f64| {
        let mut s = StepResult {
            index: i,
            label: format!("block_size={bs}"),
            kind: StepKind::Step,
            ..Default::default()
        };
        s.parameters.insert("block_size".into(), bs);
        s.totals.read.iops = 1e5 / bs;
        s
    };
    steps.steps = Some(
        (0..6)
            .map(|i| step(i, 512.0 * 4f64.powi(i as i32)))
            .collect(),
    );
    pages.push(render(&steps));
    let distribution = chart(&pages[0], "latency-distribution");
    let last = x_labels(distribution).pop().unwrap();
    assert_eq!(last.2, "99.9999%");
    for html in &pages {
        for id in charts(html) {
            let svg = chart(html, id);
            let w = svg_width(svg);
            for (x, anchor, text) in x_labels(svg) {
                let (from, to) = match anchor.as_str() {
                    "end" => (x - width(&text), x),
                    "start" => (x, x + width(&text)),
                    _ => (x - width(&text) / 2.0, x + width(&text) / 2.0),
                };
                assert!(
                    from >= 0.0 && to <= w,
                    "{id}: {text:?} at {x} ({anchor}) spans {from:.1}..{to:.1} of {w}"
                );
            }
        }
    }
}

#[test]
fn device_counts_sizes_and_shares_are_formatted_with_units() {
    use crate::results::DeviceResult;
    use crate::stats::host::DiskDelta;
    let mut r = result();
    r.devices = vec![DeviceResult {
        name: "vda".into(),
        model: Some("virtual disk".into()),
        delta: DiskDelta {
            reads: 862_611,
            writes: 12_345,
            read_bytes: 3_533_254_656,
            write_bytes: 50_565_120,
            util_pct: 87.654,
            ..Default::default()
        },
    }];
    let html = render(&r);
    let devices = &html[html.find("<h2>Devices</h2>").unwrap()..];
    let devices = &devices[..devices.find("</table>").unwrap()];
    let cells: Vec<&str> = devices
        .split("<td>")
        .skip(1)
        .map(|c| c.split("</td>").next().unwrap())
        .collect();
    assert_eq!(
        cells,
        [
            "vda",
            "virtual disk",
            "863k",
            "12.3k",
            "3.29 GiB",
            "48.2 MiB",
            "87.7%"
        ]
    );
    assert!(!html.contains("862611") && !html.contains("87.654"));
}

#[test]
fn every_number_in_a_table_cell_has_at_most_four_significant_digits() {
    let mut r = million_ios();
    r.devices = vec![crate::results::DeviceResult {
        name: "vda".into(),
        model: None,
        delta: crate::stats::host::DiskDelta {
            reads: 1_234_567,
            util_pct: 12.345_678,
            ..Default::default()
        },
    }];
    r.host_cpu.system_idle_pct = 87.654_321;
    for c in r.classes.values_mut() {
        c.read.iops = 123_456.789;
        c.read.bytes_per_s = 505_678_901.0;
    }
    let html = render(&r);
    for cell in html.split("<td").skip(1) {
        let text = cell
            .split_once('>')
            .unwrap()
            .1
            .split("</td>")
            .next()
            .unwrap();
        for word in text.split_whitespace() {
            let digits: String = word
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .filter(char::is_ascii_digit)
                .collect();
            let significant = digits.trim_start_matches('0').len();
            assert!(significant <= 4, "{word:?} in <td{cell}");
        }
    }
    let cpu = &html[html.find("<h2>CPU</h2>").unwrap()..];
    assert!(
        cpu.contains("92.7% idle; 5% of it waiting for I/O"),
        "{cpu}"
    );
}

#[test]
fn unknown_latencies_are_shown_as_unknown_never_zero() {
    // As a run rebuilt from its time series has them: p50, p95 and p99.9 unknown.
    let mut r = result();
    for c in r.classes.values_mut() {
        let l = &mut c.read.latency_ns;
        (l.p50, l.p90, l.p95, l.p99_9, l.p99_99) = (0, 0, 0, 0, 0);
    }
    let html = render(&r);
    let classes = &html[html.find("<h2>Classes</h2>").unwrap()..];
    let classes = &classes[..classes.find("</table>").unwrap()];
    let row = classes
        .split("<tr>")
        .find(|row| row.starts_with("<td>a</td><td>read</td>"))
        .expect("a's reads");
    let cells: Vec<&str> = row
        .split("<td>")
        .skip(1)
        .map(|c| c.split("</td>").next().unwrap())
        .collect();
    assert_eq!(
        cells,
        [
            "a", "read", "5", "0.020", "500 ns", "—", "—", "1.00 µs", "—", "9.00 µs", "0"
        ]
    );
    assert!(!html.contains(">0 ns<"), "no unknown value shown as 0");
}

#[test]
fn a_device_that_did_more_than_storlab_says_so_under_its_table() {
    use crate::results::DeviceResult;
    use crate::stats::host::DiskDelta;
    let mut r = result();
    let mut v = serde_json::to_value(&r).unwrap();
    v["targets"] = json!([{
        "name": "t", "path": "/dev/vdb", "kind": "block_device", "size_bytes": 1 << 30,
        "logical_block_size_bytes": 512, "direct": true, "dsync": false,
        "filesystem": "block device", "mount_point": null, "mount_options": "",
        "device": "vdb", "device_model": null,
        "prepare": {"reused": false, "written_bytes": 0, "seconds": 0.0, "mb_per_s": 0.0,
                    "data_seed": null},
        "ops": {"read": 20, "write": 10, "flush": 0},
        "bytes": {"read": 20 * 4096, "write": 10 * 4096, "flush": 0},
        "errors": {"read": 0, "write": 0, "flush": 0}
    }]);
    r = serde_json::from_value(v).unwrap();
    let device = |reads: u64| DeviceResult {
        name: "vdb".into(),
        model: None,
        delta: DiskDelta {
            reads,
            read_bytes: reads * 4096,
            writes: 10,
            write_bytes: 10 * 4096,
            ..Default::default()
        },
    };
    r.devices = vec![device(20)];
    assert!(!render(&r).contains("data-device-note"), "they agree");
    r.devices = vec![device(50_000)];
    let html = render(&r);
    let devices = &html[html.find("<h2>Devices</h2>").unwrap()..];
    let note = devices
        .split("<p class=\"warn\" data-device-note=\"vdb\">")
        .nth(1)
        .expect("a note under the devices table")
        .split("</p>")
        .next()
        .unwrap();
    assert_eq!(
        note,
        "vdb did 25k reads/s (102 MB/s), storlab 10/s (0.041 MB/s): another process was reading from the device; the device's figures are not storlab's alone"
    );
}

#[test]
fn a_long_series_is_read_from_its_file_and_merged_and_a_missing_one_is_said() {
    use crate::results::timeseries::Series;
    let dir = tempfile::tempdir().unwrap();
    let mut r = result();
    let template = r.timeseries.held[0].clone();
    let path = dir.path().join("r.ndjson");
    let text: String = (0..10_000u64)
        .map(|k| {
            let rec = IntervalRecord {
                index: k,
                step: None,
                t_end_ms: (k + 1) * 1000,
                ..template.clone()
            };
            serde_json::to_string(&rec).unwrap() + "\n"
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    r.timeseries = Series::of_file(path);
    let html = render(&r);
    for id in TIME_CHARTS {
        for (name, points) in series_of(chart(&html, id)) {
            let n = points.split(' ').count();
            assert!((300..=600).contains(&n), "{id} {name}: {n} points");
            let last = points.split(' ').next_back().unwrap();
            assert!(!last.is_empty(), "{id} {name}");
        }
        let labels = x_labels(chart(&html, id));
        assert_eq!(
            labels.last().unwrap().2,
            "10k",
            "{id}: to the end of the run"
        );
    }
    let note = html.split("data-series-note>").nth(1).unwrap();
    let note = note.split("</p>").next().unwrap();
    assert!(
        note.starts_with("The charts over time show ")
            && note.contains(" points for 10k intervals: each point merges up to "),
        "{note}"
    );
    assert!(
        note.contains("an upper bound of the p99 over its span"),
        "{note}"
    );
    // A results file moved without its time series: no charts over time, and why.
    let gone = dir.path().join("gone.ndjson");
    r.timeseries = Series::of_file(gone.clone());
    let html = render(&r);
    assert!(!html.contains("data-chart=\"iops-over-time\""));
    assert!(
        html.contains("data-chart=\"latency-distribution\""),
        "the rest is there"
    );
    let said = format!(
        "the time series {} is missing: it is not beside this results file (moved without it?), so there are no charts over time",
        gone.display()
    );
    assert!(
        html.contains(&said),
        "{}",
        html.split("<h2>Charts")
            .nth(1)
            .unwrap_or_default()
            .chars()
            .take(600)
            .collect::<String>()
    );
}
