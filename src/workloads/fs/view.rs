//! A file-system workload in the reports: the same rows, formatted the same way, in the
//! terminal summary (`storlab report` too), the HTML report and the CSV and Markdown tables:
//! the tree (its file system and shape, what it held before the runs and after), each run's
//! table of operations (per workload, then each workload's together, then all together),
//! the failures, and mdtest's phases as mdtest's summary and IO500's `[RESULT]` lines show
//! them.

use crate::report::tables::{known_mean, known_ns};
use crate::results::RunResult;
use crate::stats::summary::DirSummary;
use crate::units::{
    format_count, format_known_ns, format_number, format_rate, format_seconds, format_size,
};
use crate::workloads::fs::section::{FsResult, FsRun, MdtestResult, TreeCounts};
use maud::{Markup, html};
use std::fmt::Write as _;

/// The operations table's columns.
pub(crate) const COLUMNS: [&str; 13] = [
    "workload",
    "operation",
    "ops",
    "ops/s",
    "MB/s",
    "mean",
    "p50",
    "p95",
    "p99",
    "p99.9",
    "max",
    "errors",
    "unavailable",
];

/// A row's figures, under [`COLUMNS`] after the two names.
fn cells(d: &DirSummary, data: bool, unavailable: Option<u64>) -> [String; 11] {
    let l = &d.latency_ns;
    [
        format_count(d.ops),
        format_rate(d.iops),
        if data {
            format_number(d.bytes_per_s / 1e6)
        } else {
            String::new()
        },
        format_known_ns(known_mean(l.mean, l.max)),
        format_known_ns(known_ns(l.p50)),
        format_known_ns(known_ns(l.p95)),
        format_known_ns(known_ns(l.p99)),
        format_known_ns(known_ns(l.p99_9)),
        format_known_ns(known_ns(l.max)),
        format_count(d.errors),
        unavailable.map(format_count).unwrap_or_default(),
    ]
}

/// A run's rows: each operation of each workload, each workload's together (with several),
/// then every operation together.
pub(crate) fn rows(run: &FsRun) -> Vec<[String; 13]> {
    let mut out = Vec::new();
    let row = |w: &str, op: &str, c: [String; 11]| {
        let mut r: [String; 13] = Default::default();
        r[0] = w.to_string();
        r[1] = op.to_string();
        for (i, v) in c.into_iter().enumerate() {
            r[i + 2] = v;
        }
        r
    };
    for o in &run.operations {
        out.push(row(
            &o.workload,
            &o.operation,
            cells(&o.figures, o.data, Some(o.unavailable)),
        ));
    }
    if run.workloads.len() > 1 {
        for w in &run.workloads {
            out.push(row(&w.workload, "(all)", cells(&w.figures, true, None)));
        }
    }
    out.push(row("(all)", "(all)", cells(&run.total, true, None)));
    out
}

/// `1,200 files, 21 directories, 4.7 MiB`.
fn counts_text(c: &TreeCounts) -> String {
    format!(
        "{} files, {} directories, {}",
        format_count(c.files),
        format_count(c.dirs),
        format_size(c.bytes)
    )
}

/// The tree as (label, text) lines.
pub(crate) fn tree_lines(f: &FsResult) -> Vec<(&'static str, String)> {
    let s = &f.shape;
    let sizes: Vec<String> = (s.sizes.iter())
        .map(|w| match s.sizes.len() {
            1 => format_size(w.bytes),
            _ => format!("{}:{}", format_size(w.bytes), w.weight),
        })
        .collect();
    let mut lines = vec![
        (
            "tree",
            format!(
                "{} on {}{}{}",
                f.anchor,
                f.filesystem,
                f.mount_point
                    .as_ref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default(),
                f.device
                    .as_ref()
                    .map(|d| format!(", /dev/{d}"))
                    .unwrap_or_default()
            ),
        ),
        (
            "shape",
            format!(
                "depth {}, width {}, {} files a directory ({}), sizes {}: {} directories, {} files, {}",
                s.depth,
                s.width,
                format_count(s.files_per_dir),
                s.distribution,
                sizes.join(","),
                format_count(s.dirs),
                format_count(s.files),
                format_size(s.bytes)
            ),
        ),
        (
            "files",
            format!("open flags {}, format {}", f.openflags, f.format),
        ),
    ];
    if f.removed != TreeCounts::default() {
        lines.push(("removed", counts_text(&f.removed)));
    }
    lines.push(("at start", counts_text(&f.start)));
    lines.push(("at end", counts_text(&f.end)));
    lines
}

/// A run's heading: `r1 · 2 s · 4 threads · closed loop`.
pub(crate) fn run_heading(run: &FsRun) -> String {
    format!(
        "{} · {} · {} thread{} · {}{}",
        run.name,
        format_seconds(run.seconds),
        run.threads,
        if run.threads == 1 { "" } else { "s" },
        match run.rate_ops_per_s {
            Some(r) => format!(
                "{} ops/s asked (open loop: latency from each operation's intended time)",
                format_rate(r)
            ),
            None => "closed loop".into(),
        },
        if run.interrupted {
            " · INTERRUPTED"
        } else {
            ""
        }
    )
}

/// The failures as lines.
pub(crate) fn failure_lines(f: &FsResult) -> Vec<String> {
    f.failures
        .iter()
        .map(|x| {
            format!(
                "{} {}/{} {}: {}",
                x.run, x.workload, x.operation, x.path, x.error
            )
        })
        .collect()
}

/// mdtest's `SUMMARY rate` lines, as mdtest prints them.
pub(crate) fn mdtest_summary(m: &MdtestResult) -> Vec<String> {
    let iterations = m.phases.iter().map(|p| p.iteration).max().unwrap_or(0);
    let mut out = vec![
        format!("SUMMARY rate (in ops/sec): (of {iterations} iterations)"),
        format!(
            "   {:<22}{:>15}{:>15}{:>15}{:>15}",
            "Operation", "Max", "Min", "Mean", "Std Dev"
        ),
        format!(
            "   {:<22}{:>15}{:>15}{:>15}{:>15}",
            "---------", "---", "---", "----", "-------"
        ),
    ];
    for r in &m.summary {
        out.push(format!(
            "   {:<22}{:>15.3}{:>15.3}{:>15.3}{:>15.3}",
            r.operation, r.max, r.min, r.mean, r.stddev
        ));
    }
    out
}

/// IO500's `[RESULT]` lines of the phases, and the geometric mean of their kIOPS.
pub(crate) fn io500_lines(m: &MdtestResult) -> Vec<String> {
    let mut out: Vec<String> = (m.io500_results.iter())
        .map(|l| {
            format!(
                "[RESULT] {:>20} {:>15.6} kIOPS : time {:.3} seconds",
                l.name, l.kiops, l.seconds
            )
        })
        .collect();
    if let Some(score) = m.io500_score() {
        out.push(format!(
            "[SCORE ] IOPS {score:.6} kiops (the geometric mean of these phases; IO500's IOPS score also takes find)"
        ));
    }
    out
}

/// The file-system workload's view.
pub(crate) struct FsView;

impl crate::report::view::View for FsView {
    fn console(&self, r: &RunResult, out: &mut String) {
        console(out, r);
    }

    fn html(&self, r: &RunResult) -> Markup {
        html_section(r)
    }
}

/// The terminal summary's part.
fn console(out: &mut String, r: &RunResult) {
    let Some(f) = &r.fs else { return };
    let _ = writeln!(out, "\nfile-system workload");
    for (label, text) in tree_lines(f) {
        let _ = writeln!(out, "{label:<11}{text}");
    }
    const WIDTHS: [usize; 13] = [12, 10, 10, 9, 8, 9, 9, 9, 9, 9, 9, 7, 11];
    let line = |cells: &[String]| {
        cells
            .iter()
            .zip(WIDTHS)
            .enumerate()
            .map(|(i, (c, w))| {
                if i < 2 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
            .trim_end()
            .to_string()
    };
    for run in &f.runs {
        let _ = writeln!(out, "\n{}", run_heading(run));
        let head: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(out, "{}", line(&head));
        for row in rows(run) {
            let _ = writeln!(out, "{}", line(&row));
        }
    }
    let failures = failure_lines(f);
    if !failures.is_empty() {
        let _ = writeln!(out, "\nfailed operations (the first {}):", failures.len());
        for l in failures {
            let _ = writeln!(out, "  {l}");
        }
    }
    if let Some(m) = &f.mdtest {
        let _ = writeln!(out);
        for l in mdtest_summary(m) {
            let _ = writeln!(out, "{l}");
        }
        let io500 = io500_lines(m);
        if !io500.is_empty() {
            let _ = writeln!(out);
            for l in io500 {
                let _ = writeln!(out, "{l}");
            }
        }
    }
}

/// The HTML report's section.
fn html_section(r: &RunResult) -> Markup {
    let Some(f) = &r.fs else {
        return html! {};
    };
    html! {
        section id="fs" {
            h2 { "File-system workload" }
            dl.about {
                @for (label, text) in tree_lines(f) { dt { (label) } dd { (text) } }
            }
            @for run in &f.runs {
                h3 { (run_heading(run)) }
                div.table { table {
                    tr { @for c in COLUMNS { th { (c) } } }
                    @for row in rows(run) {
                        tr { @for c in &row { td { (c) } } }
                    }
                } }
            }
            @let failures = failure_lines(f);
            @if !failures.is_empty() {
                h3 { "Failed operations" }
                ul { @for l in &failures { li { (l) } } }
            }
            @if let Some(m) = &f.mdtest {
                h3 { "mdtest" }
                pre { @for l in mdtest_summary(m) { (l) "\n" } }
                @let io500 = io500_lines(m);
                @if !io500.is_empty() {
                    h3 { "IO500" }
                    pre { @for l in &io500 { (l) "\n" } }
                }
            }
        }
    }
}
