//! `storlab report --format csv|markdown --table summary|steps|timeseries`: headers and row
//! counts of every table of every fixture.

use super::{FIXTURES, fixture};
use crate::harness::{run_in, scratch};
use std::path::Path;

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

/// The time-series table's header, in long form: the same on every host (a device is a row's
/// `device`, not a column).
const TIMESERIES_HEADER: &[&str] = &[
    "index",
    "step",
    "label",
    "run",
    "phase",
    "t_end_ms",
    "run_t_end_ms",
    "interval_ms",
    "class",
    "op",
    "device",
    "ops",
    "iops",
    "mb_per_s",
    "mean_us",
    "p99_us",
    "max_us",
    "process_user_pct",
    "process_system_pct",
    "system_busy_pct",
    "util_pct",
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
    let v = crate::harness::load_json(&fixture(name));
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
    // A row per class and direction with I/O in each interval, the interval's totals (a fio
    // group's class only in its own step's intervals) and a row per device.
    let timeseries = v["timeseries"].as_array().map_or(0, |records| {
        records
            .iter()
            .map(|r| {
                let classes = r["classes"]
                    .as_object()
                    .map_or(0, |c| c.values().map(active).sum());
                let devices = r["devices"].as_object().map_or(0, |d| d.len());
                classes + active(&r["total"]) + devices
            })
            .sum()
    });
    (summary, steps, timeseries)
}

#[test]
fn csv_and_markdown_tables() {
    let dir = scratch();
    for name in FIXTURES {
        let (summary, steps, timeseries) = row_counts(name);
        let params: &[&str] = match name {
            "steps" => &["block_size"],
            "curve" => &["param_curve_level_pct"],
            "groups" => &["group"],
            _ => &[],
        };
        assert!(
            [
                "plain", "plain-b", "exchange", "tier", "compare", "hosts", "backup", "users"
            ]
            .contains(&name)
                || steps > 0,
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
        // The same header on every host, whatever its devices.
        let header = TIMESERIES_HEADER.to_vec();
        check_table(dir.path(), name, "timeseries", &header, Some(timeseries));
    }
}

/// Issue 44: a class, worker, target and host named with terminal control sequences (the
/// window's title set, the screen cleared, a C1 CSI, a right-to-left override): every text
/// view shows them as text (`\x1b]0;…`), none writes a control character a terminal would
/// act on, and JSON stays the same JSON.
#[test]
fn names_with_terminal_control_sequences_are_shown_as_text_in_every_text_view() {
    let dir = scratch();
    let crafted = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}6n\u{202e}gnp";
    let shown = r"\x1b]0;pwned\x07\x1b[2J\u{9b}6n\u{202e}gnp";
    let quoted = serde_json::to_string(crafted).unwrap();
    let text = std::fs::read_to_string(fixture("plain")).unwrap();
    let text = text
        .replace("\"worker\"", &quoted)
        .replace("\"vm\"", &quoted)
        .replace("\"/var/tmp/storlab-fx/plain.dat\"", &quoted);
    let results = dir.path().join("hostile.json");
    std::fs::write(&results, text).unwrap();
    let r = results.display().to_string();
    let views: [&[&str]; 7] = [
        &["report", &r],
        &["report", &r, "--format", "csv"],
        &["report", &r, "--format", "markdown"],
        &["report", &r, "--format", "csv", "--table", "timeseries"],
        &["report", &r, "--format", "iometer-csv"],
        &["report", &r, "--format", "fio-json"],
        &["report", &r, "--json"],
    ];
    let acted_on = |c: char| c.is_control() && c != '\n' || ('\u{202a}'..='\u{202e}').contains(&c);
    for args in views {
        let out = run_in(dir.path(), args);
        out.expect_ok();
        for (stream, said) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let raw: Vec<char> = said.chars().filter(|&c| acted_on(c)).collect();
            assert!(
                raw.is_empty(),
                "{args:?} wrote {raw:?} to {stream}:\n{said}"
            );
        }
        if args.contains(&"--json") || args.contains(&"fio-json") {
            // JSON's own escapes: the same names when read back.
            let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
            assert!(out.stdout.contains(r"\u001b]0;pwned\u0007"), "{args:?}");
            assert!(v.to_string().contains("pwned"));
        } else {
            assert!(out.stdout.contains(shown), "{args:?}:\n{}", out.stdout);
        }
    }
}
