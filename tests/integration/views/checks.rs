//! The checks every kind of run goes through (see the module above).

use crate::harness::run_in;
use serde_json::Value;
use std::path::Path;
use storlab::results::RunResult;
use storlab::results::description;
use storlab::testing::DirSummary;
use storlab::units::{format_known_ns, format_number, format_rate};

/// What kind of run, for what its description and its job must show.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    /// One run of a job.
    Plain,
    /// A sequence of steps (fio groups, cycles).
    Steps,
    /// An Exchange validation.
    Exchange,
    /// Simulated users.
    Users,
    /// A database validation.
    Database,
}

/// Runs `args` in `dir` as a dry run and for real (results in `dir/views.json`, the HTML report
/// beside), checks every view against the results file, and returns the results.
pub(crate) fn check_views<S: AsRef<str>>(dir: &Path, args: &[S], kind: Kind) -> RunResult {
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let results = dir.join("views.json");
    let html_path = dir.join("views.html");
    let dry = run_in(dir, [&args[..], &["--dry-run"]].concat());
    assert_eq!(dry.code, Some(0), "dry run\n{}\n{}", dry.stdout, dry.stderr);
    let real = run_in(
        dir,
        [
            &args[..],
            &[
                "-q",
                "-o",
                results.to_str().unwrap(),
                "--html",
                html_path.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    // Validated against the published schema too.
    crate::harness::load_json(&results);
    let r = storlab::results::file::load(&results).expect("the results file loads");
    assert_eq!(
        real.code,
        Some(storlab::exit::of_result(&r)),
        "the exit code is the verdict's\n{}\n{}",
        real.stdout,
        real.stderr
    );
    dry_run_said_what_ran(&dry.stdout, &r, kind);
    // The summary printed at the end of the run is the one the results file gives.
    let report = run_in(dir, ["report", results.to_str().unwrap()]);
    report.expect_ok();
    assert_eq!(
        without_paths(&real.stdout),
        without_paths(&report.stdout),
        "the run's summary and `storlab report`'s differ"
    );
    let html = std::fs::read_to_string(&html_path).expect("the HTML report");
    classes_agree(&report.stdout, &html, &r);
    verdicts_agree(&report.stdout, &html, &r);
    costs_agree(&report.stdout, &html, &r);
    exports_agree(dir, &results, &r);
    r
}

/// The summary without the lines naming where files went.
fn without_paths(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("results: "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every line of the description the results keep is in the dry run, and so are the workers,
/// timing and targets of the job that ran.
fn dry_run_said_what_ran(dry: &str, r: &RunResult, kind: Kind) {
    let d = r
        .description
        .as_ref()
        .expect("the results keep the description");
    assert!(!d.body.is_empty(), "{d:?}");
    for line in d.head.iter().chain(&d.body) {
        assert!(
            dry.contains(&line.text),
            "the dry run did not say `{}`:\n{dry}",
            line.text
        );
    }
    for line in description::workers(&r.job) {
        assert!(
            dry.contains(&line.text),
            "the job that ran has `{}`, the dry run did not say it:\n{dry}",
            line.text
        );
    }
    if kind != Kind::Users {
        let timing = description::timing(&r.job);
        assert!(
            dry.contains(&timing),
            "`{timing}` not in the dry run:\n{dry}"
        );
    }
    for t in &r.targets {
        assert!(
            dry.contains(&t.path),
            "target {} not in the dry run",
            t.path
        );
    }
}

/// A direction's cells as every table shows them: IOPS, MB/s, mean, p50, p95, p99, p99.9,
/// max, errors.
fn cells(d: &DirSummary) -> Vec<String> {
    let l = &d.latency_ns;
    let known = |ns: u64| (ns > 0).then_some(ns as f64);
    vec![
        format_rate(d.iops),
        format_number(d.bytes_per_s / 1e6),
        format_known_ns((l.max > 0).then_some(l.mean)),
        format_known_ns(known(l.p50)),
        format_known_ns(known(l.p95)),
        format_known_ns(known(l.p99)),
        format_known_ns(known(l.p99_9)),
        format_known_ns(known(l.max)),
        d.errors.to_string(),
    ]
}

/// Each class and direction with I/O: the console's row holds its cells in order, the HTML
/// report's row is its cells.
fn classes_agree(console: &str, html: &str, r: &RunResult) {
    let html_rows = html_table(
        html,
        &["<h2>Classes</h2>", "<h2>Classes across the steps</h2>"],
    );
    for (name, c) in &r.classes {
        for (op, d) in [("read", &c.read), ("write", &c.write), ("flush", &c.flush)] {
            if d.ops == 0 {
                continue;
            }
            let expected = cells(d);
            let line = console
                .lines()
                .find(|l| {
                    let mut w = l.split_whitespace();
                    w.next() == Some(name) && w.next() == Some(op)
                })
                .unwrap_or_else(|| panic!("no console row for {name} {op}:\n{console}"));
            let mut rest = line;
            for cell in &expected {
                let at = rest
                    .find(cell.as_str())
                    .unwrap_or_else(|| panic!("{name} {op}: `{cell}` not in `{line}`"));
                rest = &rest[at + cell.len()..];
            }
            let row = html_rows
                .iter()
                .find(|row| row.first() == Some(name) && row.get(1).map(String::as_str) == Some(op))
                .unwrap_or_else(|| panic!("no HTML row for {name} {op}"));
            assert_eq!(&row[2..], &expected[..], "HTML row of {name} {op}");
        }
    }
}

/// The rows of the first table after one of `headings` in `html`, each as its cells' text.
fn html_table(html: &str, headings: &[&str]) -> Vec<Vec<String>> {
    let at = headings
        .iter()
        .find_map(|h| html.find(h))
        .unwrap_or_else(|| panic!("none of {headings:?} in the HTML report"));
    let table = &html[at..];
    let table = &table[..table.find("</table>").expect("a table")];
    table
        .split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let text = &cell[cell.find('>').unwrap() + 1..];
                    let text = &text[..text.find("</td>").unwrap_or(text.len())];
                    unescape(&strip_tags(text))
                })
                .collect()
        })
        .filter(|cells: &Vec<String>| !cells.is_empty())
        .collect()
}

fn strip_tags(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in text.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The verdict's rules: the same pass or fail in the JSON, the console and the HTML, with the
/// same measured value and threshold in both views.
fn verdicts_agree(console: &str, html: &str, r: &RunResult) {
    let Some(v) = &r.verdict else {
        assert!(!console.contains("RESULT:"), "a verdict the results lack");
        return;
    };
    assert!(
        console.contains(&format!("RESULT: {}", v.result)),
        "the console's result is not {}",
        v.result
    );
    let rows = html_table(html, &["<h2>Verdict rules</h2>"]);
    for rule in &v.rules {
        let row = rows
            .iter()
            .find(|row| row[0] == rule.rule)
            .unwrap_or_else(|| panic!("rule `{}` not in the HTML report", rule.rule));
        // threshold (with its comparison), measured, result (an inconclusive rule's with why)
        let outcome = if rule.pass { "pass" } else { rule.outcome() };
        assert!(row[3].starts_with(outcome), "{}: {}", rule.rule, row[3]);
        if let Some(why) = &rule.inconclusive {
            assert!(row[3].contains(why.as_str()), "{}: {}", rule.rule, row[3]);
            assert!(
                console.contains(why.as_str()),
                "the console leaves out why: {why}"
            );
        }
        let line = console
            .lines()
            .find(|l| l.contains(&format!("  {}  ", rule.rule)) || l.ends_with(&rule.rule))
            .unwrap_or_else(|| panic!("rule `{}` not in the console:\n{console}", rule.rule));
        assert!(line.trim_start().starts_with(rule.outcome()), "{line}");
        assert!(
            line.contains(&row[2]),
            "measured `{}` not in `{line}`",
            row[2]
        );
        assert!(
            line.ends_with(&row[1]),
            "threshold `{}` not at the end of `{line}`",
            row[1]
        );
    }
}

/// storlab's own cost: the console's `cost` line and the HTML report's CPU section give the
/// results' figures per I/O.
fn costs_agree(console: &str, html: &str, r: &RunResult) {
    let Some(c) = &r.cost else {
        assert!(!console.contains("\ncost "), "a cost the results lack");
        return;
    };
    let m = &c.measure;
    let line = (console.lines())
        .find(|l| l.starts_with("cost "))
        .unwrap_or_else(|| panic!("no cost line:\n{console}"));
    let html = unescape(&strip_tags(html));
    for part in [
        format!("per I/O: {} system calls", format_number(m.syscalls_per_io)),
        format!("{} context switches", format_number(m.switches_per_io)),
        format!("{} of CPU", format_known_ns(Some(m.cpu_us_per_io * 1e3))),
        format!(
            "waited {} for a CPU per wake",
            format_known_ns(Some(m.run_queue_wait_mean_ns))
        ),
        match m.threads.run_queue_wait_max_ns {
            0 => "I/O threads waited".to_string(),
            ns => format!(
                "{} at most between two readings",
                format_known_ns(Some(ns as f64))
            ),
        },
        match (c.kernel_wait_max_ns, &c.kernel_wait_thread) {
            (Some(ns), Some(name)) => format!(
                "the kernel's I/O threads waited {} at most over two readings ({name})",
                format_known_ns(Some(ns as f64))
            ),
            _ => "I/O threads waited".to_string(),
        },
    ] {
        assert!(line.contains(&part), "`{part}` not in `{line}`");
        assert!(html.contains(&part), "`{part}` not in the HTML report");
    }
}

/// The CSV summary and fio's json+ carry each class's counts exactly and its rates and
/// percentiles unrounded (fio's from submission: in open loop, the service time).
/// How many fio jobs the export has when every step has its workers: a job per worker group
/// (`NAME`, `NAME#i`) and step.
fn groups_and_steps(r: &RunResult) -> usize {
    let groups = |job: &storlab::testing::Job| {
        let mut names: Vec<&str> = job
            .workers
            .iter()
            .map(|w| w.name.split('#').next().unwrap_or(""))
            .collect();
        names.dedup();
        names.len()
    };
    match &r.steps {
        Some(steps) => steps.iter().map(|s| groups(&s.job(&r.job))).sum(),
        None => groups(&r.job),
    }
}

fn exports_agree(dir: &Path, results: &Path, r: &RunResult) {
    let results = results.to_str().unwrap();
    let csv = run_in(dir, ["report", results, "--format", "csv"]);
    csv.expect_ok();
    let mut lines = csv.stdout.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let fio = run_in(dir, ["report", results, "--format", "fio-json"]);
    fio.expect_ok();
    let fio: Value = serde_json::from_str(&fio.stdout).expect("fio json");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-3 * b.abs().max(1.0);
    // fio's jobs are worker groups in each step: together they did every I/O of the run.
    let jobs = fio["jobs"].as_array().unwrap();
    for (op, d) in [("read", &r.totals.read), ("write", &r.totals.write)] {
        let ios: u64 = jobs
            .iter()
            .map(|j| j[op]["total_ios"].as_u64().unwrap())
            .sum();
        if r.hosts.is_empty() && jobs.len() == groups_and_steps(r) {
            assert_eq!(ios, d.ops, "fio {op} total_ios over every job");
        }
    }
    for (name, c) in &r.classes {
        for (op, d) in [("read", &c.read), ("write", &c.write)] {
            if d.ops == 0 {
                continue;
            }
            let row = rows
                .iter()
                .find(|row| row[0] == name && row[1] == op)
                .unwrap_or_else(|| panic!("no CSV row for {name} {op}"));
            let num = |col_name: &str| row[col(col_name)].parse::<f64>().unwrap();
            assert_eq!(row[col("ops")], d.ops.to_string(), "{name} {op}");
            assert!(
                close(num("iops"), d.iops),
                "{name} {op} CSV IOPS {}",
                num("iops")
            );
            let p99_us = d.latency_ns.p99 as f64 / 1e3;
            assert!(close(num("p99_us"), p99_us), "{name} {op} CSV p99");
            // A run of one worker group without steps: its one fio job is the class's own
            // figures when the run has one class.
            if jobs.len() == 1 && r.classes.len() == 1 {
                let f = &jobs[0][op];
                assert_eq!(
                    f["total_ios"].as_u64(),
                    Some(d.ops),
                    "{name} {op} fio total_ios"
                );
                assert!(
                    close(f["iops"].as_f64().unwrap(), d.iops),
                    "{name} {op} fio iops"
                );
                // fio times from submission: in open loop, storlab's service time.
                let p99 = (d.service_latency_ns.as_ref()).map_or(d.latency_ns.p99, |s| s.p99);
                assert_eq!(
                    f["clat_ns"]["percentile"]["99.000000"].as_u64(),
                    Some(p99),
                    "{name} {op} fio p99"
                );
            }
        }
    }
}
