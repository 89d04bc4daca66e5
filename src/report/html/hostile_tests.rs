//! Tests of the HTML report on a results file whose every text is markup: it shows as text,
//! never as elements or attributes.

use super::tests::result;
use super::*;
use crate::results::steps::StepResult;
use serde_json::json;
use std::collections::BTreeSet;

/// Text that would be markup, or leave an attribute, if a page inserted it as it is.
const HOSTILE: &str =
    "<img src=x onerror=document.title='pwned'>\"><script>document.title='pwned'</script>&amp;";

/// [`HOSTILE`] as text in HTML, escaped.
const HOSTILE_TEXT: &str = "&lt;img src=x onerror=document.title='pwned'&gt;&quot;&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;&amp;amp;";

/// The elements a report is made of.
const ELEMENTS: [&str; 32] = [
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "ul", "li", "dl",
    "dt", "dd", "div", "table", "thead", "tbody", "tr", "th", "td", "code", "strong", "sup", "br",
    "figure", "svg", "text", "line", "rect", "circle",
];

/// The names of the elements of every start and end tag in `html`, lower case.
fn element_names(html: &str) -> BTreeSet<String> {
    html.split('<')
        .skip(1)
        .filter_map(|tag| {
            let tag = tag.strip_prefix('/').unwrap_or(tag);
            let name: String = tag
                .chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect();
            (!name.is_empty()).then(|| name.to_ascii_lowercase())
        })
        .collect()
}

/// A run whose every text a results file holds and the report shows is [`HOSTILE`]: the
/// description, a class, a target (its name, path, filesystem, mount point, device and model),
/// a warning, why it stopped, the engine's fallback, the host, the command, failed I/Os and
/// verification errors, the verdict and its rule, a device, a step and a cache tier.
fn hostile() -> RunResult {
    use crate::results::verdict::Rule;
    use crate::stats::errors::ErrorDetail;
    use crate::stats::verification::{VerifyCounts, VerifyError, VerifyErrorKind};
    let h = || HOSTILE.to_string();
    let mut v = serde_json::to_value(result()).unwrap();
    v["targets"] = json!([{
        "name": HOSTILE, "path": HOSTILE, "kind": "file", "size_bytes": 1 << 30,
        "logical_block_size_bytes": 512, "direct": true, "dsync": false,
        "filesystem": HOSTILE, "mount_point": HOSTILE, "mount_options": HOSTILE,
        "device": HOSTILE, "device_model": HOSTILE,
        "prepare": {"reused": false, "written_bytes": 0, "seconds": 0.0, "mb_per_s": 0.0,
                    "data_seed": null},
        "ops": {"read": 20, "write": 10, "flush": 0},
        "bytes": {"read": 20 * 4096, "write": 10 * 4096, "flush": 0},
        "errors": {"read": 1, "write": 0, "flush": 0}
    }]);
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/fixtures/tier.json")).unwrap();
    let mut tier = fixture["cache_tiers"][0].clone();
    for key in ["target", "device", "policy", "write"] {
        tier[key] = json!(HOSTILE);
    }
    tier["drain"]["error"] = json!(HOSTILE);
    v["cache_tiers"] = json!([tier]);
    let mut r: RunResult = serde_json::from_value(v).expect("a valid results file");
    r.job.description = Some(h());
    let class = r.classes["a"].clone();
    r.classes.insert(h(), class);
    r.warnings.push(h());
    r.interrupted = Interrupted::Yes(h());
    r.engine.fallback_reason = Some(h());
    (r.host.hostname, r.host.cpu_model, r.host.kernel) = (h(), h(), h());
    r.command.push(h());
    (r.started_at, r.storlab_version) = (h(), h());
    r.errors = vec![ErrorDetail {
        target: 0,
        op: h(),
        offset: 0,
        len: 4096,
        error: h(),
        t_ms: 1,
    }];
    r.verify = Some(VerifyCounts {
        block_bytes: 4096,
        first_errors: vec![VerifyError {
            kind: VerifyErrorKind::Torn,
            target: 0,
            offset: 0,
            len: 4096,
            expected: h(),
            found: h(),
            phase: h(),
            t_ms: 1,
        }],
        ..Default::default()
    });
    r.verdict = Some(Verdict {
        result: h(),
        rules: vec![
            Rule {
                rule: h(),
                threshold: 1.0,
                measured: 2.0,
                unit: h(),
                comparison: crate::results::verdict::Comparison::AtMost,
                pass: false,
                measures: None,
                inconclusive: Some(h()),
                not_measured: None,
            },
            Rule {
                rule: h(),
                threshold: 1.0,
                measured: 0.0,
                unit: h(),
                comparison: crate::results::verdict::Comparison::AtMost,
                pass: false,
                measures: None,
                inconclusive: None,
                not_measured: Some(h()),
            },
        ],
    });
    // A device that did more than storlab: a note under the devices table names it.
    r.devices = vec![crate::results::DeviceResult {
        name: h(),
        model: Some(h()),
        delta: crate::stats::host::DiskDelta {
            reads: 50_000,
            read_bytes: 50_000 * 4096,
            ..Default::default()
        },
    }];
    r.timeseries.held[0].devices.insert(h(), Default::default());
    let step = |index| StepResult {
        index,
        label: h(),
        kind: StepKind::Step,
        ..Default::default()
    };
    r.steps = Some(vec![step(0), step(1)]);
    r
}

#[test]
fn every_text_from_the_results_file_is_text_in_the_report() {
    let html = render(&hostile());
    let unexpected: Vec<String> = element_names(&html)
        .into_iter()
        .filter(|n| !ELEMENTS.contains(&n.as_str()) && n != "polyline" && n != "doctype")
        .collect();
    assert!(unexpected.is_empty(), "elements {unexpected:?} in:\n{html}");
    assert!(!html.contains("<img") && !html.contains("<script"));
    // Every piece of the hostile text is in the escaped whole, in text and in attributes
    // alike (where an unescaped quote would end the attribute).
    for part in ["onerror", "pwned"] {
        assert_eq!(
            html.matches(part).count(),
            html.matches(HOSTILE_TEXT).count() * HOSTILE.matches(part).count(),
            "{part}: somewhere other than in the escaped text"
        );
    }
    for (what, part) in [
        ("the title", format!("<title>{HOSTILE_TEXT}</title>")),
        ("the heading", format!("<h1>{HOSTILE_TEXT}</h1>")),
        (
            "a warning",
            format!("<li class=\"warn\">{HOSTILE_TEXT}</li>"),
        ),
        ("why it stopped", format!("INTERRUPTED: {HOSTILE_TEXT}</p>")),
        (
            "the verdict",
            format!("<p class=\"verdict fail\">{HOSTILE_TEXT}</p>"),
        ),
        ("a rule", format!("<td>{HOSTILE_TEXT}</td><td>≤ 1")),
        ("a class", format!("<td>{HOSTILE_TEXT}</td><td>read</td>")),
        ("a series", format!("data-series=\"{HOSTILE_TEXT}\"")),
        (
            "a class's series",
            format!("data-series=\"{HOSTILE_TEXT} read\""),
        ),
        ("a device", format!("data-device-note=\"{HOSTILE_TEXT}\"")),
        ("a target", format!("<code>{HOSTILE_TEXT}</code>")),
        ("a step", format!("<td class=\"text\">{HOSTILE_TEXT}</td>")),
        ("a verification error", format!("<td>{HOSTILE_TEXT} at ")),
        (
            "a cache tier",
            format!("<h2>Cache tier: {HOSTILE_TEXT}</h2>"),
        ),
        (
            "its write-back",
            format!("FAILED</strong>: {HOSTILE_TEXT}</td>"),
        ),
    ] {
        assert!(html.contains(&part), "{what}: no {part}");
    }
}
