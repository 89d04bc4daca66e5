//! One truth, every view, for a file-system workload: the common checks (its dry run, the
//! console against `storlab report`, the class table in the HTML report, the CSV summary and
//! fio's json+, the verdict, the cost), then its own section: each run's figures per
//! operation and per workload, and the tree's, in the console, the HTML report and the CSV
//! table as the results file has them.

use crate::harness::run_in;
use crate::views::checks::{Kind, check_views};
use storlab::results::RunResult;
use storlab::testing::DirSummary;
use storlab::units::{format_count, format_known_ns, format_number, format_rate};

/// An operation's cells as the console and the HTML report show them, after its names.
fn cells(d: &DirSummary, data: bool, unavailable: Option<u64>) -> Vec<String> {
    let l = &d.latency_ns;
    let known = |ns: u64| (ns > 0).then_some(ns as f64);
    vec![
        format_count(d.ops),
        format_rate(d.iops),
        if data {
            format_number(d.bytes_per_s / 1e6)
        } else {
            String::new()
        },
        format_known_ns((l.max > 0).then_some(l.mean)),
        format_known_ns(known(l.p50)),
        format_known_ns(known(l.p95)),
        format_known_ns(known(l.p99)),
        format_known_ns(known(l.p99_9)),
        format_known_ns(known(l.max)),
        format_count(d.errors),
        unavailable.map(format_count).unwrap_or_default(),
    ]
}

/// Every row each run of `r` has: (run, workload, operation, cells).
fn expected(r: &RunResult) -> Vec<(String, String, String, Vec<String>)> {
    let fs = r.fs.as_ref().expect("the section");
    let mut rows = Vec::new();
    for run in &fs.runs {
        for o in &run.operations {
            rows.push((
                run.name.clone(),
                o.workload.clone(),
                o.operation.clone(),
                cells(&o.figures, o.data, Some(o.unavailable)),
            ));
        }
        if run.workloads.len() > 1 {
            for w in &run.workloads {
                rows.push((
                    run.name.clone(),
                    w.workload.clone(),
                    "(all)".into(),
                    cells(&w.figures, true, None),
                ));
            }
        }
        rows.push((
            run.name.clone(),
            "(all)".into(),
            "(all)".into(),
            cells(&run.total, true, None),
        ));
    }
    rows
}

/// The console's table rows of run `run` (the lines after its heading, up to a blank line).
fn console_rows<'c>(console: &'c str, run: &str) -> Vec<&'c str> {
    let start = console
        .lines()
        .position(|l| l.starts_with(&format!("{run} · ")))
        .unwrap_or_else(|| panic!("no heading of run {run}:\n{console}"));
    console
        .lines()
        .skip(start + 2)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

/// The HTML rows of every table of the file-system section.
fn html_rows(html: &str) -> Vec<Vec<String>> {
    let at = html
        .find("<section id=\"fs\">")
        .expect("the file-system section");
    let section = &html[at..at + html[at..].find("</section>").unwrap()];
    section
        .split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td>")
                .skip(1)
                .map(|c| c[..c.find("</td>").unwrap()].replace("&amp;", "&"))
                .collect::<Vec<String>>()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// Checks every view of the file-system workload `args` (run in `dir`), and returns its
/// results.
pub(crate) fn check_fs_views(dir: &std::path::Path, args: &[&str]) -> RunResult {
    let r = check_views(dir, args, Kind::Plain);
    let results = dir.join("views.json");
    let console = run_in(dir, ["report", results.to_str().unwrap()]);
    console.expect_ok();
    let html = std::fs::read_to_string(dir.join("views.html")).unwrap();
    let html = html_rows(&html);
    let csv = run_in(
        dir,
        [
            "report",
            results.to_str().unwrap(),
            "--format",
            "csv",
            "--table",
            "fs",
        ],
    );
    csv.expect_ok();
    let mut lines = csv.stdout.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| {
        head.iter()
            .position(|h| *h == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    let csv_rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let rows = expected(&r);
    assert_eq!(
        csv_rows.len(),
        rows.len(),
        "one CSV row per operation and total"
    );
    let fs = r.fs.as_ref().unwrap();
    for (run, workload, operation, cells) in &rows {
        let line = console_rows(&console.stdout, run)
            .into_iter()
            .find(|l| {
                let mut w = l.split_whitespace();
                w.next() == Some(workload.as_str()) && w.next() == Some(operation.as_str())
            })
            .unwrap_or_else(|| panic!("no console row {run} {workload} {operation}"));
        let mut rest = line;
        for c in cells.iter().filter(|c| !c.is_empty()) {
            let at = rest
                .find(c.as_str())
                .unwrap_or_else(|| panic!("{run} {operation}: `{c}` not in `{line}`"));
            rest = &rest[at + c.len()..];
        }
        assert!(
            html.iter()
                .any(|h| h[0] == *workload && h[1] == *operation && h[2..] == cells[..]),
            "no HTML row {run} {workload} {operation} with {cells:?}"
        );
        let csv_row = csv_rows
            .iter()
            .find(|c| c[0] == run && c[1] == workload && c[2] == operation)
            .unwrap_or_else(|| panic!("no CSV row {run} {workload} {operation}"));
        let figures = fs
            .runs
            .iter()
            .find(|x| &x.name == run)
            .and_then(|x| {
                x.operations
                    .iter()
                    .find(|o| &o.operation == operation && &o.workload == workload)
                    .map(|o| o.figures.clone())
                    .or_else(|| {
                        (operation == "(all)" && workload == "(all)").then(|| x.total.clone())
                    })
                    .or_else(|| {
                        x.workloads
                            .iter()
                            .find(|w| &w.workload == workload)
                            .map(|w| w.figures.clone())
                    })
            })
            .unwrap();
        assert_eq!(csv_row[col("ops")], figures.ops.to_string());
        assert_eq!(csv_row[col("bytes")], figures.bytes.to_string());
        assert_eq!(csv_row[col("errors")], figures.errors.to_string());
        let num = |n: &str| csv_row[col(n)].parse::<f64>().unwrap();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-3 * b.abs().max(1.0);
        assert!(
            close(num("ops_per_s"), figures.iops),
            "{run} {operation} ops/s"
        );
        if figures.ops > 0 {
            assert!(
                close(num("p99_us"), figures.latency_ns.p99 as f64 / 1e3),
                "{run} {operation} p99"
            );
        } else {
            assert_eq!(
                csv_row[col("p99_us")],
                "",
                "an operation never done has no latency"
            );
        }
    }
    for label in ["at start", "at end"] {
        let c = if label == "at start" {
            &fs.start
        } else {
            &fs.end
        };
        let text = format!(
            "{} files, {} directories",
            format_count(c.files),
            format_count(c.dirs)
        );
        assert!(
            console
                .stdout
                .lines()
                .any(|l| l.starts_with(label) && l.contains(&text)),
            "{label}: {text}"
        );
    }
    r
}

#[test]
fn a_file_system_workload_says_the_same_in_every_view() {
    let dir = crate::harness::scratch();
    let anchor = dir.path().join("tree");
    let job = crate::harness::write_job(
        dir.path(),
        "fs.toml",
        &format!(
            "[fs]\nanchor = \"{}\"\ndepth = 1\nwidth = 3\nfiles = 10\nsizes = \"4k:3,16k:1\"\nduration = \"1s\"\ninterval = \"250ms\"\np99 = \"*=10s\"\n\
             [[fs.workload]]\nname = \"meta\"\nmix = \"create:2,getattr:5,delete:2,read:1\"\nxfersize = \"4k\"\nthreads = 2\n\
             [[fs.workload]]\nname = \"data\"\nmix = \"read:3,write:1\"\nxfersize = \"8k\"\nfileio = \"random\"\n",
            anchor.display()
        ),
    );
    let r = check_fs_views(dir.path(), &["run", job.to_str().unwrap()]);
    let fs = r.fs.unwrap();
    let run = fs.run("r1").unwrap();
    assert_eq!(run.workloads.len(), 2);
    assert!(
        run.operations
            .iter()
            .any(|o| o.workload == "data" && o.operation == "write")
    );
    // A class per operation of each workload, their sum the run's.
    let ops: u64 = run.operations.iter().map(|o| o.figures.ops).sum();
    assert_eq!(run.total.ops, ops);
    assert_eq!(r.totals.read.ops + r.totals.write.ops, ops);
}

#[test]
fn storlab_fs_says_the_same_in_every_view() {
    let dir = crate::harness::scratch();
    let anchor = dir.path().join("tree");
    check_fs_views(
        dir.path(),
        &[
            "fs",
            "--anchor",
            anchor.to_str().unwrap(),
            "--depth",
            "2",
            "--width",
            "2",
            "--files",
            "5",
            "--mix",
            "create,delete,getattr:3,read:2,copy,rename,mkdir,rmdir",
            "--xfersize",
            "4k",
            "--duration",
            "1s",
            "--interval",
            "250ms",
            "--threads",
            "2",
        ],
    );
}
