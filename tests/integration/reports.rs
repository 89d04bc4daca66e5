//! The report renderers on fixed results files (`tests/fixtures/*.json`, produced by real runs
//! of this binary and committed): the HTML report, the comparison, and the CSV and Markdown
//! tables. The tests snapshot their STRUCTURE, never their numbers: the `<h2>` headings in
//! order, the charts (`<figure class="chart" data-chart="ID">`) in order, the series each chart
//! draws (`data-series="NAME"`), the table headers and how many rows each table has. Every
//! drawn series must have real geometry (a polyline with points, a path, a bar with a size) and
//! no NaN or infinity in it; no page may load anything from anywhere.
//!
//! A real browser then loads every page: headless Chromium prints each to PNG and PDF and dumps
//! its DOM, in which the charts must be there again. Without Chromium those tests skip
//! (`harness::skip`), except under CI (`CI=true`), where `.ci/run` installs it and its absence
//! is a failure.
//!
//! The fixtures: `plain.json` (a one-line 70 % read run, queue depth 1) and `plain-b.json` (the
//! same at queue depth 8), `steps.json` (a `[cycle]` over two block sizes, `repeat = 3`),
//! `curve.json` (a rate curve at 25 % and 50 % on the null engine) and `exchange.json` (an
//! Exchange validation with two databases and a PASS verdict) and `steady.json` (a run until
//! steady state, in rounds). They ran on a virtual disk
//! `vda`, which is why the device charts and columns are named so.
//!
//! Regenerating them (when the results schema changes: the loader is strict), all in one
//! directory `$W` on a real disk, then copying the five `.json` files here (not the `.ndjson`:
//! the report needs only the results file):
//!
//! ```text
//! storlab run --target $W/plain.dat --size 16MiB --duration 3s --interval 500ms --read 70 -o $W/plain.json
//! storlab run --target $W/plain.dat --size 16MiB --duration 3s --interval 500ms --read 70 --qd 8 -o $W/plain-b.json
//! storlab run $W/steps.toml -o $W/steps.json
//! storlab run $W/curve.toml -o $W/curve.json
//! storlab exchange --mailboxes 100 --mailbox-size 32MiB --capacity 1% --databases 2 --duration 3s \
//!     --ramp 0s --db-path $W/db --db-read-latency 500ms --log-write-latency 500ms --max-latency 5s -o $W/exchange.json
//! ```
//!
//! `steps.toml`: `duration = "1s"`, `interval = "500ms"`, `ramp = "0s"`, `repeat = 3`,
//! `pause = "0s"`, `[cycle] block_size = ["4k", "16k"]`, one 16 MiB target `$W/steps.dat`, one
//! worker at queue depth 4 doing 4k 70 % read, 100 % random. `curve.toml`: `engine = "null"`,
//! `duration = "1s"`, `interval = "500ms"`, `ramp = "0s"`, `curve = [25, 50]`, target
//! `$W/plain.dat` (16 MiB, prepared by the plain runs), one worker at queue depth 16 with one
//! access of class `db`, 4k 100 % random read. `steady.toml`: `interval = "500ms"`,
//! `ramp = "0s"`, `until_steady = true`, `round = "500ms"`, `steady_rounds = 3`,
//! `steady_range = "50%"`, `steady_slope = "50%"`, `max_rounds = 6`, target `$W/plain.dat`,
//! one worker at queue depth 4 doing 4k 70 % read, 100 % random.

use super::harness::{Outcome, run_in, scratch, skip};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

// ---- The fixtures ----------------------------------------------------------------------

/// Every fixture, by file stem.
const FIXTURES: [&str; 6] = ["plain", "plain-b", "steps", "curve", "exchange", "steady"];

/// `tests/fixtures/NAME.json`.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.json"))
}

#[test]
fn fixtures_are_small_and_load() {
    let dir = scratch();
    for name in FIXTURES {
        let path = fixture(name);
        let size = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
            .len();
        assert!(size < 300 * 1024, "fixture {name} is {size} bytes");
        let out = run_in(dir.path(), [Path::new("report"), &path]);
        out.expect_ok();
        assert!(
            !out.stdout.trim().is_empty(),
            "`storlab report {name}.json` printed nothing"
        );
    }
}

// ---- A small HTML scanner ----------------------------------------------------------------

/// One start or end tag.
#[derive(Debug)]
struct Tag {
    /// Lower-case element name.
    name: String,
    /// An end tag (`</name>`).
    end: bool,
    /// Attributes in order (names lower-case, values as written).
    attrs: Vec<(String, String)>,
    /// Byte offsets of `<` and just past `>`.
    span: (usize, usize),
}

impl Tag {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The tags of `html` in order (comments, doctypes and the contents of `<style>` skipped).
/// Enough for the generated documents, not for HTML at large.
fn tags(html: &str) -> Vec<Tag> {
    let b = html.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        let start = i + off;
        i = start + 1;
        if html[start..].starts_with("<!--") {
            i = html[start..].find("-->").map_or(b.len(), |e| start + e + 3);
            continue;
        }
        if html[start..].starts_with("<!") || html[start..].starts_with("<?") {
            i = html[start..].find('>').map_or(b.len(), |e| start + e + 1);
            continue;
        }
        let end = b.get(i) == Some(&b'/');
        if end {
            i += 1;
        }
        let name_start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-' || b[i] == b':') {
            i += 1;
        }
        if i == name_start {
            continue; // a stray `<` in text
        }
        let name = html[name_start..i].to_ascii_lowercase();
        let mut attrs = Vec::new();
        loop {
            while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
                i += 1;
            }
            if i >= b.len() || b[i] == b'>' {
                i = (i + 1).min(b.len());
                break;
            }
            let an = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && !b"=>/".contains(&b[i]) {
                i += 1;
            }
            let attr_name = html[an..i].to_ascii_lowercase();
            let mut value = String::new();
            if b.get(i) == Some(&b'=') {
                i += 1;
                match b.get(i) {
                    Some(&q) if q == b'"' || q == b'\'' => {
                        let close = html[i + 1..].find(q as char).map_or(b.len(), |e| i + 1 + e);
                        value = html[i + 1..close].to_string();
                        i = (close + 1).min(b.len());
                    }
                    _ => {
                        let vs = i;
                        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' {
                            i += 1;
                        }
                        value = html[vs..i].to_string();
                    }
                }
            }
            attrs.push((attr_name, value));
        }
        let span = (start, i);
        let is_style = name == "style" && !end;
        out.push(Tag {
            name,
            end,
            attrs,
            span,
        });
        if is_style {
            if let Some(e) = html[i..].find("</style") {
                i += e;
            }
        }
    }
    out
}

/// The text of `html[from..to]` without its tags, whitespace collapsed, the usual entities
/// decoded.
fn text(html: &str, from: usize, to: usize) -> String {
    let mut s = String::new();
    let mut in_tag = false;
    for c in html[from..to].chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => s.push(c),
            _ => {}
        }
    }
    let s = s
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text of every `<h2>`, in order.
fn h2_headings(html: &str) -> Vec<String> {
    let tags = tags(html);
    let mut out = Vec::new();
    for (k, t) in tags.iter().enumerate() {
        if t.name == "h2" && !t.end {
            let close = tags[k..]
                .iter()
                .find(|c| c.name == "h2" && c.end)
                .unwrap_or_else(|| panic!("an <h2> is never closed"));
            out.push(text(html, t.span.1, close.span.0));
        }
    }
    out
}

/// One `<figure class="chart" data-chart="ID">`.
#[derive(Debug)]
struct Chart {
    id: String,
    /// The series names, each once, sorted.
    series: BTreeSet<String>,
    /// The series that have at least one element with real geometry.
    drawn: BTreeSet<String>,
    /// Geometry attributes that hold NaN or infinity, or do not parse.
    bad_geometry: Vec<String>,
}

/// The numbers in a `points` or path `d` attribute (path commands are separators); `Err` with
/// the first that does not parse or is not finite (`NaN`, `inf`).
fn numbers(s: &str) -> Result<Vec<f64>, String> {
    s.split(|c: char| c.is_ascii_whitespace() || c == ',' || "MmLlHhVvCcSsQqTtAaZz".contains(c))
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| t.to_string())
        })
        .collect()
}

/// Whether one series element has geometry; pushes what is wrong with it to `bad`.
fn drawn(tag: &Tag, bad: &mut Vec<String>) -> bool {
    let series = tag.attr("data-series").unwrap_or_default();
    let mut check = |attr: &str| match tag.attr(attr).map(numbers) {
        Some(Ok(v)) => Some(v),
        Some(Err(t)) => {
            bad.push(format!(
                "<{} data-series={series:?}> {attr}: {t:?}",
                tag.name
            ));
            None
        }
        None => None,
    };
    match tag.name.as_str() {
        "polyline" | "polygon" => check("points").is_some_and(|v| v.len() >= 4),
        "path" => check("d").is_some_and(|v| v.len() >= 4),
        "rect" => {
            let w = check("width").and_then(|v| v.first().copied());
            let h = check("height").and_then(|v| v.first().copied());
            check("x");
            check("y");
            w.is_some_and(|w| w > 0.0) && h.is_some_and(|h| h > 0.0)
        }
        "line" => {
            let c: Vec<Option<f64>> = ["x1", "y1", "x2", "y2"]
                .iter()
                .map(|a| check(a).and_then(|v| v.first().copied()))
                .collect();
            c.iter().all(Option::is_some) && (c[0] != c[2] || c[1] != c[3])
        }
        "circle" => check("r")
            .and_then(|v| v.first().copied())
            .is_some_and(|r| r > 0.0),
        // A group: drawn when one of its children is (checked by the caller).
        _ => false,
    }
}

/// Every chart of `html`, in order.
fn charts(html: &str) -> Vec<Chart> {
    let tags = tags(html);
    let mut out = Vec::new();
    for (k, t) in tags.iter().enumerate() {
        if t.name != "figure" || t.end {
            continue;
        }
        let Some(id) = t.attr("data-chart") else {
            continue;
        };
        assert!(
            t.attr("class")
                .is_some_and(|c| c.split_whitespace().any(|c| c == "chart")),
            "figure {id:?} is not class=\"chart\""
        );
        let mut chart = Chart {
            id: id.to_string(),
            series: BTreeSet::new(),
            drawn: BTreeSet::new(),
            bad_geometry: Vec::new(),
        };
        let mut group: Vec<(String, String)> = Vec::new(); // (element, series) of open groups
        for inner in &tags[k + 1..] {
            if inner.name == "figure" {
                break;
            }
            if inner.end {
                if group.last().is_some_and(|(n, _)| *n == inner.name) {
                    group.pop();
                }
                continue;
            }
            let own = inner.attr("data-series").map(str::to_string);
            if let Some(s) = &own {
                chart.series.insert(s.clone());
            }
            let series = own.clone().or_else(|| group.last().map(|(_, s)| s.clone()));
            if let Some(s) = series {
                if drawn(inner, &mut chart.bad_geometry) {
                    chart.drawn.insert(s);
                }
            }
            if own.is_some() && inner.name == "g" {
                group.push(("g".into(), own.unwrap_or_default()));
            }
        }
        out.push(chart);
    }
    out
}

#[test]
fn the_scanner_sees_missing_empty_and_broken_series() {
    let html = r#"<figure class="chart" data-chart="c"><svg>
<polyline class="s0 line" data-series="ok" points="1,2 3,4"/>
<polyline data-series="empty" points=""/>
<path data-series="nan" d="M 1 2 L NaN 4"/>
<g data-series="bars"><rect x="1" y="2" width="3" height="4"/></g>
<rect data-series="flat" x="1" y="2" width="3" height="0"/>
</svg></figure><figure><svg><polyline data-series="outside" points="1,2 3,4"/></svg></figure>"#;
    let charts = charts(html);
    assert_eq!(charts.len(), 1);
    let c = &charts[0];
    assert_eq!(c.id, "c");
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(c.series, set(&["bars", "empty", "flat", "nan", "ok"]));
    assert_eq!(c.drawn, set(&["bars", "ok"]));
    assert_eq!(c.bad_geometry.len(), 1, "{:?}", c.bad_geometry);
    assert_eq!(
        h2_headings("<h2 id=\"x\">A &amp; <em>B</em>\n</h2><p>x</p><h2>C</h2>"),
        ["A & B", "C"]
    );
}

/// What a page must look like.
struct Expected<'a> {
    /// The `<h2>` headings in order.
    headings: &'a [&'a str],
    /// The charts in order, each with its series names.
    charts: &'a [(&'a str, &'a [&'a str])],
}

/// Checks `html` (named `what`) against `expected`: headings, charts, series, geometry, and
/// that it is self-contained.
#[track_caller]
fn check_page(what: &str, html: &str, expected: &Expected) {
    assert_self_contained(what, html);
    assert_eq!(
        h2_headings(html),
        expected.headings,
        "{what}: the <h2> headings"
    );
    let charts = charts(html);
    let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
    let want: Vec<&str> = expected.charts.iter().map(|c| c.0).collect();
    assert_eq!(ids, want, "{what}: the charts (data-chart ids) in order");
    for (chart, (id, series)) in charts.iter().zip(expected.charts) {
        let want: BTreeSet<String> = series.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            chart.series, want,
            "{what}: chart {id}: its data-series names"
        );
        assert_eq!(
            chart.drawn, want,
            "{what}: chart {id}: the series drawn with real geometry (points, d, a bar)"
        );
        assert!(
            chart.bad_geometry.is_empty(),
            "{what}: chart {id}: geometry that is not a finite number: {:?}",
            chart.bad_geometry
        );
    }
}

/// Nothing is loaded from anywhere: no script, link, image source, CSS url or import.
#[track_caller]
fn assert_self_contained(what: &str, html: &str) {
    let lower = html.to_ascii_lowercase();
    assert!(
        lower.starts_with("<!doctype html>"),
        "{what}: not an HTML document: {:?}",
        &html[..html.len().min(80)]
    );
    assert!(lower.trim_end().ends_with("</html>"), "{what}: no </html>");
    for needle in [
        "<script", "src=", "href=", "url(", "@import", "<link", "<img", "<iframe", "<object",
        "<embed",
    ] {
        if let Some(at) = lower.find(needle) {
            let from = at.saturating_sub(80);
            panic!(
                "{what}: references something external ({needle:?}): …{}…",
                &html[from..(at + 80).min(html.len())]
            );
        }
    }
}

// ---- Rendering ---------------------------------------------------------------------------

/// `storlab report FIXTURE -o DIR/NAME.html`; the HTML.
fn render_report(dir: &Path, name: &str) -> (PathBuf, String) {
    let out = dir.join(format!("{name}.html"));
    run_in(
        dir,
        [Path::new("report"), &fixture(name), Path::new("-o"), &out],
    )
    .expect_ok();
    let html = std::fs::read_to_string(&out)
        .unwrap_or_else(|e| panic!("no HTML report {}: {e}", out.display()));
    (out, html)
}

/// `storlab compare A B --label ... [-o DIR/cmp.html] [extra]`.
fn compare(dir: &Path, files: &[&str], labels: &[&str], html: bool, extra: &[&str]) -> Outcome {
    let mut args: Vec<String> = vec!["compare".into()];
    args.extend(files.iter().map(|f| fixture(f).display().to_string()));
    for l in labels {
        args.extend(["--label".to_string(), l.to_string()]);
    }
    if html {
        args.extend(["-o".into(), dir.join("cmp.html").display().to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    run_in(dir, &args)
}

// ---- Expected structure --------------------------------------------------------------------

/// The CPU chart's series, and the fixtures' one device (they ran on `vda`).
const CPU_SERIES: &[&str] = &["machine busy", "machine iowait", "storlab user+sys"];
const DEVICES: &[&str] = &["vda"];

const PLAIN: Expected = Expected {
    headings: &["Warnings", "Classes", "Charts", "Targets", "Devices", "CPU"],
    charts: &[
        ("iops-over-time", &["total"]),
        ("mbps-over-time", &["total"]),
        (
            "latency-over-time",
            &[
                "worker read mean",
                "worker read p99",
                "worker write mean",
                "worker write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        ("latency-distribution", &["worker read", "worker write"]),
    ],
};

const STEPS: Expected = Expected {
    headings: &[
        "Warnings", "Classes", "Steps", "Charts", "Targets", "Devices", "CPU",
    ],
    charts: &[
        ("steps-iops", &["total"]),
        ("steps-mbps", &["total"]),
        ("iops-over-time", &["total"]),
        ("mbps-over-time", &["total"]),
        (
            "latency-over-time",
            &[
                "worker0 read mean",
                "worker0 read p99",
                "worker0 write mean",
                "worker0 write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        ("latency-distribution", &["worker0 read", "worker0 write"]),
    ],
};

const CURVE: Expected = Expected {
    headings: &[
        "Warnings", "Classes", "Steps", "Charts", "Targets", "Devices", "CPU",
    ],
    charts: &[
        ("curve-latency", &["mean", "p99"]),
        ("iops-over-time", &["total"]),
        ("mbps-over-time", &["total"]),
        ("latency-over-time", &["db read mean", "db read p99"]),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        ("latency-distribution", &["db read"]),
    ],
};

const STEADY: Expected = Expected {
    headings: &[
        "Warnings", "Classes", "Steps", "Charts", "Targets", "Devices", "CPU",
    ],
    charts: &[
        ("steady-rounds", &["rounds", "window"]),
        ("iops-over-time", &["total"]),
        ("mbps-over-time", &["total"]),
        (
            "latency-over-time",
            &[
                "worker0 read mean",
                "worker0 read p99",
                "worker0 write mean",
                "worker0 write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        ("latency-distribution", &["worker0 read", "worker0 write"]),
    ],
};

/// The Exchange classes: per database, its reads, writes, log writes and maintenance.
const EXCHANGE_CLASSES: &[&str] = &[
    "db1/log-write",
    "db1/maintenance",
    "db1/read",
    "db1/write",
    "db2/log-write",
    "db2/maintenance",
    "db2/read",
    "db2/write",
    "total",
];

const EXCHANGE: Expected = Expected {
    headings: &[
        "Warnings",
        "Exchange 2010 performance test",
        "Databases",
        "Verdict rules",
        "Classes",
        "Charts",
        "Targets",
        "Devices",
        "CPU",
    ],
    charts: &[
        ("iops-over-time", EXCHANGE_CLASSES),
        ("mbps-over-time", EXCHANGE_CLASSES),
        (
            "latency-over-time",
            &[
                "db1/log-write write mean",
                "db1/log-write write p99",
                "db1/maintenance read mean",
                "db1/maintenance read p99",
                "db1/read read mean",
                "db1/read read p99",
                "db1/write write mean",
                "db1/write write p99",
                "db2/log-write write mean",
                "db2/log-write write p99",
                "db2/maintenance read mean",
                "db2/maintenance read p99",
                "db2/read read mean",
                "db2/read read p99",
                "db2/write write mean",
                "db2/write write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        (
            "latency-distribution",
            &[
                "db1/log-write write",
                "db1/maintenance read",
                "db1/read read",
                "db1/write write",
                "db2/log-write write",
                "db2/maintenance read",
                "db2/read read",
                "db2/write write",
            ],
        ),
    ],
};

/// Labels of the plain comparison.
const CMP_LABELS: [&str; 2] = ["qd1", "qd8"];

/// plain.json against plain-b.json: no steps, so no step charts.
const COMPARISON: Expected = Expected {
    headings: &["totals read", "totals write", "Charts"],
    charts: &[
        ("cmp-iops-over-time", &CMP_LABELS),
        ("cmp-latency-distribution", &CMP_LABELS),
    ],
};

/// steps.json against itself (labels a and b): a table and a chart per step metric.
const STEPS_COMPARISON: Expected = Expected {
    headings: &[
        "totals read",
        "totals write",
        "steps: IOPS",
        "steps: MB/s",
        "steps: mean",
        "steps: p99",
        "Charts",
    ],
    charts: &[
        ("cmp-steps-iops", &["a", "b"]),
        ("cmp-steps-mbps", &["a", "b"]),
        ("cmp-iops-over-time", &["a", "b"]),
        ("cmp-latency-distribution", &["a", "b"]),
    ],
};

/// What each fixture's report must look like.
fn expected(name: &str) -> &'static Expected<'static> {
    match name {
        "plain" | "plain-b" => &PLAIN,
        "steps" => &STEPS,
        "curve" => &CURVE,
        "exchange" => &EXCHANGE,
        "steady" => &STEADY,
        _ => unreachable!("no fixture {name}"),
    }
}

// ---- HTML report -------------------------------------------------------------------------

#[test]
fn html_report_of_a_plain_run() {
    let dir = scratch();
    for name in ["plain", "plain-b"] {
        let (_, html) = render_report(dir.path(), name);
        check_page(&format!("report of {name}.json"), &html, expected(name));
    }
}

#[test]
fn html_report_of_cycled_steps_with_repetitions() {
    let dir = scratch();
    let (_, html) = render_report(dir.path(), "steps");
    check_page("report of steps.json", &html, &STEPS);
}

#[test]
fn html_report_of_a_rate_curve() {
    let dir = scratch();
    let (_, html) = render_report(dir.path(), "curve");
    check_page("report of curve.json", &html, &CURVE);
}

#[test]
fn html_report_of_an_exchange_validation() {
    let dir = scratch();
    let (_, html) = render_report(dir.path(), "exchange");
    check_page("report of exchange.json", &html, &EXCHANGE);
    assert!(
        html.contains("PASS"),
        "report of exchange.json: no PASS verdict"
    );
}

#[test]
fn html_report_of_a_run_until_steady_state() {
    let dir = scratch();
    let (_, html) = render_report(dir.path(), "steady");
    check_page("report of steady.json", &html, &STEADY);
}

// ---- Comparison ----------------------------------------------------------------------------

#[test]
fn comparison_page_and_console() {
    let dir = scratch();
    let out = compare(dir.path(), &["plain", "plain-b"], &CMP_LABELS, true, &[]);
    out.expect_ok();
    let html = std::fs::read_to_string(dir.path().join("cmp.html"))
        .unwrap_or_else(|e| panic!("no cmp.html: {e}"));
    check_page("comparison plain vs plain-b", &html, &COMPARISON);

    // The console: the same comparison, labelled, one line per metric.
    let out = compare(dir.path(), &["plain", "plain-b"], &CMP_LABELS, false, &[]);
    out.expect_ok();
    for label in CMP_LABELS {
        assert!(
            out.stdout.contains(label),
            "console comparison does not name {label}:\n{}",
            out.stdout
        );
    }
    for metric in ["IOPS", "MB/s", "p99"] {
        assert!(
            out.stdout.contains(metric),
            "console comparison has no {metric}:\n{}",
            out.stdout
        );
    }
    // Without labels the files' names label the runs.
    let out = compare(dir.path(), &["plain", "plain-b"], &[], false, &[]);
    out.expect_ok();
    for name in ["plain", "plain-b"] {
        assert!(
            out.stdout.contains(name),
            "console comparison without --label does not name {name}:\n{}",
            out.stdout
        );
    }
}

#[test]
fn comparison_of_steps_charts_every_step() {
    let dir = scratch();
    let out = compare(dir.path(), &["steps", "steps"], &["a", "b"], true, &[]);
    out.expect_ok();
    let html = std::fs::read_to_string(dir.path().join("cmp.html"))
        .unwrap_or_else(|e| panic!("no cmp.html: {e}"));
    check_page("comparison steps vs steps", &html, &STEPS_COMPARISON);
    for step in ["block_size=4KiB", "block_size=16KiB"] {
        assert!(
            out.stdout.contains(step),
            "console comparison of steps has no row for {step}:\n{}",
            out.stdout
        );
    }
}

#[test]
fn a_run_compared_with_itself_has_no_regression() {
    let dir = scratch();
    let out = compare(
        dir.path(),
        &["plain", "plain"],
        &["one", "two"],
        false,
        &["--fail-on-regression", "1%"],
    );
    out.expect_ok();
}

#[test]
fn a_slower_run_fails_on_regression_naming_each_throughput() {
    let dir = scratch();
    // plain-b (queue depth 8) is the baseline; plain (queue depth 1) has about a third of its
    // throughput, and lower latency (which is no regression).
    let out = compare(
        dir.path(),
        &["plain-b", "plain"],
        &["qd8", "qd1"],
        false,
        &["--fail-on-regression", "10%"],
    );
    out.expect_code(1);
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains(" vs "))
        .map(|l| l.split(':').next().unwrap_or_default())
        .collect();
    assert_eq!(
        lines,
        [
            "totals read IOPS",
            "totals read MB/s",
            "totals write IOPS",
            "totals write MB/s"
        ],
        "the regressions named on stderr:\n{}",
        out.stderr
    );
}

// ---- CSV and Markdown ----------------------------------------------------------------------

/// `storlab report FIXTURE --format FORMAT --table TABLE`: its stdout.
fn table(dir: &Path, name: &str, format: &str, table: &str) -> String {
    let out = run_in(
        dir,
        [
            "report",
            &fixture(name).display().to_string(),
            "--format",
            format,
            "--table",
            table,
        ],
    );
    out.expect_ok();
    out.stdout
}

/// Splits one CSV line (RFC 4180, no embedded newlines) into fields.
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            _ => fields.last_mut().unwrap().push(c),
        }
    }
    assert!(!quoted, "unbalanced quotes in CSV line {line:?}");
    fields
}

/// The cells of one Markdown table row.
fn md_cells(line: &str) -> Vec<String> {
    let t = line.trim();
    assert!(
        t.starts_with('|') && t.ends_with('|'),
        "not a Markdown table row: {line:?}"
    );
    t[1..t.len() - 1]
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

const SUMMARY_HEADER: &[&str] = &[
    "class",
    "op",
    "ops",
    "bytes",
    "errors",
    "iops",
    "mb_per_s",
    "mean_us",
    "p50_us",
    "p90_us",
    "p95_us",
    "p99_us",
    "p99_9_us",
    "p99_99_us",
    "max_us",
    "service_mean_us",
    "service_p99_us",
];

/// The steps table's header, with the cycled parameters (`params`) after `kind`.
fn steps_header(params: &[&'static str]) -> Vec<&'static str> {
    let mut h = vec!["index", "label", "kind"];
    h.extend(params);
    h.extend([
        "curve_level_pct",
        "target_iops",
        "measured_s",
        "iops",
        "mb_per_s",
        "mean_us",
        "p99_us",
        "cpu_busy_pct",
        "ios_per_cpu_pct",
        "runs",
        "iops_mean",
        "iops_stddev",
        "iops_ci95_low",
        "iops_ci95_high",
        "iops_cv_pct",
        "steady_at_round",
    ]);
    h
}

/// The time-series table's header, with one utilisation column per device (`vda` here).
const TIMESERIES_HEADER: &[&str] = &[
    "index",
    "step",
    "label",
    "phase",
    "t_end_ms",
    "interval_ms",
    "class",
    "op",
    "ops",
    "iops",
    "mb_per_s",
    "mean_us",
    "p99_us",
    "max_us",
    "process_user_pct",
    "process_system_pct",
    "system_busy_pct",
    "util_pct_vda",
];

/// Checks the CSV and Markdown forms of one table of one fixture: the header, the Markdown
/// separator row, `rows` data rows in both, every row as wide as the header.
#[track_caller]
fn check_table(dir: &Path, name: &str, which: &str, header: &[&str], rows: Option<usize>) {
    let csv = table(dir, name, "csv", which);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(!lines.is_empty(), "{name} {which} csv: empty");
    assert_eq!(
        csv_fields(lines[0]),
        header,
        "{name}: the header of the {which} table (csv)"
    );
    for line in &lines[1..] {
        assert_eq!(
            csv_fields(line).len(),
            header.len(),
            "{name} {which} csv: a row is not as wide as the header: {line:?}"
        );
    }
    if let Some(rows) = rows {
        assert_eq!(lines.len() - 1, rows, "{name} {which} csv: the data rows");
    }
    let md = table(dir, name, "markdown", which);
    let lines: Vec<&str> = md.lines().filter(|l| !l.trim().is_empty()).collect();
    if rows == Some(0) {
        // An empty table in Markdown is a sentence saying so, not a lone header.
        assert!(
            lines.len() == 1 && !md.contains('|'),
            "{name} {which} markdown: no rows, yet not a one-line note: {md:?}"
        );
        return;
    }
    assert!(lines.len() >= 2, "{name} {which} markdown: {md}");
    assert_eq!(
        md_cells(lines[0]),
        header,
        "{name}: the header of the {which} table (markdown)"
    );
    assert!(
        md_cells(lines[1])
            .iter()
            .all(|c| !c.is_empty() && c.chars().all(|c| c == '-' || c == ':')),
        "{name} {which} markdown: no separator row: {:?}",
        lines[1]
    );
    for line in &lines[2..] {
        assert_eq!(
            md_cells(line).len(),
            header.len(),
            "{name} {which} markdown: a row is not as wide as the header: {line:?}"
        );
    }
    assert_eq!(
        lines.len() - 2,
        csv.lines().count() - 1,
        "{name} {which}: markdown and csv differ in rows"
    );
}

/// The rows each table of a fixture must have, from its JSON: the summary has a row per class
/// and direction that did I/O plus one per direction of the totals (`(all)`); the steps table a
/// row per step; the time series those rows again for every interval.
fn row_counts(name: &str) -> (usize, usize, usize) {
    let v = super::harness::load_json(&fixture(name));
    let active = |c: &serde_json::Value| {
        ["read", "write", "flush"]
            .iter()
            .filter(|d| c[*d]["ops"].as_u64().is_some_and(|o| o > 0))
            .count()
    };
    let classes = v["classes"]
        .as_object()
        .expect("results have classes")
        .values()
        .map(active)
        .sum::<usize>();
    let summary = classes + active(&v["totals"]);
    let steps = v["steps"].as_array().map_or(0, Vec::len);
    let intervals = v["timeseries"].as_array().map_or(0, Vec::len);
    (summary, steps, intervals * summary)
}

#[test]
fn csv_and_markdown_tables() {
    let dir = scratch();
    for name in FIXTURES {
        let (summary, steps, timeseries) = row_counts(name);
        let params: &[&str] = match name {
            "steps" => &["block_size"],
            "curve" => &["param_curve_level_pct"],
            _ => &[],
        };
        assert!(
            name == "plain" || name == "plain-b" || name == "exchange" || steps > 0,
            "{name}.json has no steps"
        );
        check_table(dir.path(), name, "summary", SUMMARY_HEADER, Some(summary));
        check_table(
            dir.path(),
            name,
            "steps",
            &steps_header(params),
            Some(steps),
        );
        check_table(
            dir.path(),
            name,
            "timeseries",
            TIMESERIES_HEADER,
            Some(timeseries),
        );
    }
}

// ---- A real browser ------------------------------------------------------------------------

/// Headless Chromium, or `None` after [`skip`] said why `test` cannot run (under CI its
/// absence is a failure).
fn chromium(test: &str) -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join(name))
                .find(|p| p.is_file())
        })
    });
    if found.is_none() {
        skip(
            test,
            "chromium is not installed (apt-get install chromium; .ci/run installs it)",
        );
    }
    found
}

/// Runs Chromium headless on `url` with `args`, its stdout to `stdout`; kills its process
/// group after 60 s.
fn run_chromium(browser: &Path, scratch: &Path, url: &str, args: &[String], stdout: &Path) {
    let profile = tempfile::Builder::new()
        .prefix("chromium-profile-")
        .tempdir_in(scratch)
        .expect("a Chromium profile directory");
    let stdout_file = std::fs::File::create(stdout).expect("create Chromium's stdout file");
    // To a file, not a pipe: nobody reads a pipe while Chromium runs, and a full one would
    // block it.
    let stderr_path = stdout.with_extension("stderr");
    let stderr_file = std::fs::File::create(&stderr_path).expect("create Chromium's stderr file");
    let mut command = Command::new(browser);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(stdout_file)
        .stderr(stderr_file);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().expect("start chromium");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} {url} did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(
        status.success(),
        "chromium {args:?} {url} failed ({status}):\n{stderr}"
    );
}

/// Loads `page` in Chromium: prints it to PNG and PDF and checks both, and dumps its DOM and
/// checks its structure against `expected`.
fn check_in_browser(browser: &Path, dir: &Path, what: &str, page: &Path, expected: &Expected) {
    let page = page.canonicalize().expect("canonical page path");
    let url = format!("file://{}", page.display());
    let stem = page.file_stem().unwrap().to_string_lossy().into_owned();
    let noise = dir.join(format!("{stem}.stdout"));

    let png = dir.join(format!("{stem}.png"));
    run_chromium(
        browser,
        dir,
        &url,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,4000".into(),
        ],
        &noise,
    );
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{what}: no screenshot: {e}"));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{what}: the screenshot is not a PNG"
    );
    assert!(
        bytes.len() > 10 * 1024,
        "{what}: the screenshot is only {} bytes",
        bytes.len()
    );

    let pdf = dir.join(format!("{stem}.pdf"));
    run_chromium(
        browser,
        dir,
        &url,
        &[
            format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer".into(),
        ],
        &noise,
    );
    let bytes = std::fs::read(&pdf).unwrap_or_else(|e| panic!("{what}: no PDF: {e}"));
    assert!(bytes.starts_with(b"%PDF"), "{what}: the PDF is not a PDF");
    let count = |needle: &[u8]| bytes.windows(needle.len()).filter(|w| *w == needle).count();
    let pages = count(b"/Type /Page").saturating_sub(count(b"/Type /Pages"));
    eprintln!(
        "{what}: PNG {} bytes, PDF {} bytes, {pages} page(s)",
        std::fs::metadata(&png).map_or(0, |m| m.len()),
        bytes.len()
    );
    assert!(
        pages > 1 || bytes.len() > 20 * 1024,
        "{what}: the PDF has {pages} page(s) and only {} bytes",
        bytes.len()
    );

    let dom = dir.join(format!("{stem}.dom.html"));
    run_chromium(browser, dir, &url, &["--dump-dom".into()], &dom);
    let dom = std::fs::read_to_string(&dom).expect("the dumped DOM");
    // The serialised DOM has no doctype; the structure is what matters.
    let charts = charts(&dom);
    let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
    let want: Vec<&str> = expected.charts.iter().map(|c| c.0).collect();
    assert_eq!(ids, want, "{what} in Chromium: the charts in order");
    for (chart, (id, series)) in charts.iter().zip(expected.charts) {
        let want: BTreeSet<String> = series.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            chart.drawn, want,
            "{what} in Chromium: chart {id}: the series drawn with real geometry"
        );
    }
    assert_eq!(
        h2_headings(&dom),
        expected.headings,
        "{what} in Chromium: the <h2> headings"
    );
}

/// One Chromium at a time: each is a burst of processes and CPU, and other tests of this
/// binary measure rates and latencies beside them.
static BROWSER: Mutex<()> = Mutex::new(());

/// The report of fixture `name`, in Chromium.
fn browser_report(name: &str) {
    let Some(browser) = chromium(&format!("browser_prints_the_{name}_report")) else {
        return;
    };
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    let (page, _) = render_report(dir.path(), name);
    check_in_browser(
        &browser,
        dir.path(),
        &format!("report of {name}.json"),
        &page,
        expected(name),
    );
}

#[test]
fn browser_prints_the_plain_report() {
    browser_report("plain");
}

#[test]
fn browser_prints_the_steps_report() {
    browser_report("steps");
}

#[test]
fn browser_prints_the_curve_report() {
    browser_report("curve");
}

#[test]
fn browser_prints_the_exchange_report() {
    browser_report("exchange");
}

#[test]
fn browser_prints_the_steady_state_report() {
    browser_report("steady");
}

#[test]
fn browser_prints_the_comparison() {
    let Some(browser) = chromium("browser_prints_the_comparison") else {
        return;
    };
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    compare(dir.path(), &["plain", "plain-b"], &CMP_LABELS, true, &[]).expect_ok();
    check_in_browser(
        &browser,
        dir.path(),
        "comparison plain vs plain-b",
        &dir.path().join("cmp.html"),
        &COMPARISON,
    );
}
