//! A small HTML scanner for the report pages: their tags, `<h2>` headings and charts (the
//! series each draws with real geometry), checked against the structure a page must have,
//! and nothing loaded from anywhere.

use std::collections::BTreeSet;

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
pub(super) fn h2_headings(html: &str) -> Vec<String> {
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
pub(super) struct Chart {
    pub(super) id: String,
    /// The series names, each once, sorted.
    pub(super) series: BTreeSet<String>,
    /// The series that have at least one element with real geometry.
    pub(super) drawn: BTreeSet<String>,
    /// Geometry attributes that hold NaN or infinity, or do not parse.
    pub(super) bad_geometry: Vec<String>,
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
pub(super) fn charts(html: &str) -> Vec<Chart> {
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
pub(super) struct Expected<'a> {
    /// The `<h2>` headings in order.
    pub(super) headings: &'a [&'a str],
    /// The charts in order, each with its series names.
    pub(super) charts: &'a [(&'a str, &'a [&'a str])],
}

/// Checks `html` (named `what`) against `expected`: headings, charts, series, geometry, and
/// that it is self-contained.
#[track_caller]
pub(super) fn check_page(what: &str, html: &str, expected: &Expected) {
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
