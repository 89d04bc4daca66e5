//! The database validation in the summary: the rates achieved against the target, the
//! per-file table with percentiles, group commit and checkpoints, and the capacity search's
//! trials and finding.

use super::summary::labelled;
use crate::units::{format_number, format_rate, format_seconds, format_size};
use crate::workloads::database::section::{DatabaseResult, FileFigures, Search};
use crate::workloads::exchange::section::LatencyBrief;
use std::fmt::Write as _;

/// The validation's own figures, after the class table.
pub(super) fn section(out: &mut String, d: &DatabaseResult) {
    labelled(
        out,
        "achieved",
        &format!(
            "{} transactions/s for a target of {}; {} data-file IOPS for a target of {} IOPS",
            format_number(d.achieved_tps),
            format_number(d.target_tps),
            format_rate(d.achieved_iops),
            format_rate(d.target_iops)
        ),
    );
    let g = &d.group_commit;
    labelled(
        out,
        "commit",
        &format!(
            "{} commits in {} log writes: {} per write on average, at most {} (each commit {}, made durable by {})",
            g.commits,
            g.log_writes,
            format_number(g.commits_per_write),
            g.max_commits_per_write,
            format_size(d.log_write_bytes),
            d.log_durability
        ),
    );
    if let Some(c) = &d.checkpoints {
        labelled(
            out,
            "checkpoint",
            &format!(
                "{} bursts of {} page writes per data file, {} on average, the longest {}",
                c.bursts,
                c.pages_per_burst,
                format_seconds(c.average_seconds),
                format_seconds(c.longest_seconds)
            ),
        );
    }
    file_table(out, &d.files);
    if let Some(s) = &d.search {
        search(out, s);
    }
}

/// The per-file table: each kind of I/O on each file, its rate and latency percentiles.
fn file_table(out: &mut String, files: &[FileFigures]) {
    let _ = writeln!(
        out,
        "\n{:<6} {:<11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "file", "I/O", "rate /s", "mean", "p95", "p99", "p99.9", "max"
    );
    let row = |out: &mut String, file: &str, what: &str, rate: f64, l: &LatencyBrief| {
        let ms = |ns: f64| format!("{} ms", format_number(ns / 1e6));
        let _ = writeln!(
            out,
            "{file:<6} {what:<11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            format_rate(rate),
            ms(l.mean),
            ms(l.p95 as f64),
            ms(l.p99 as f64),
            ms(l.p99_9 as f64),
            ms(l.max as f64)
        );
    };
    for f in files {
        if f.role == "log" {
            row(out, &f.name, "write", f.writes_per_s, &f.write_latency_ns);
            if f.flush_latency_ns.max > 0 {
                row(out, "", "fdatasync", f.writes_per_s, &f.flush_latency_ns);
            }
            let _ = writeln!(
                out,
                "{:<6} {:<11} {} a write on average; {} ms until durable on average",
                "",
                "",
                format_size(f.write_bytes_avg as u64),
                format_number(f.log_durable_mean_ns / 1e6)
            );
            continue;
        }
        row(out, &f.name, "read", f.reads_per_s, &f.read_latency_ns);
        row(out, "", "write", f.writes_per_s, &f.write_latency_ns);
        if f.checkpoint_writes_per_s > 0.0 {
            row(
                out,
                "",
                "checkpoint",
                f.checkpoint_writes_per_s,
                &f.checkpoint_latency_ns,
            );
        }
        if f.scan_mb_per_s > 0.0 {
            let _ = writeln!(
                out,
                "{:<6} {:<11} {} MB/s, reads of {} ms on average",
                "",
                "scan",
                format_number(f.scan_mb_per_s),
                format_number(f.scan_latency_ns.mean / 1e6)
            );
        }
    }
}

fn search(out: &mut String, s: &Search) {
    let _ = writeln!(out, "\ncapacity search:");
    let _ = writeln!(
        out,
        "  {:<8} {:>10} {:>10} {:>10} {:>10} {:>10}  result",
        "trial", "target /s", "achieved", "read avg", "write avg", "log avg"
    );
    for t in &s.trials {
        let ms = |v: f64| format!("{} ms", format_number(v));
        let _ = writeln!(
            out,
            "  {:<8} {:>10} {:>10} {:>10} {:>10} {:>10}  {}",
            t.purpose,
            format_number(t.tps),
            format_number(t.achieved_tps),
            ms(t.data_read_latency_ms),
            ms(t.data_write_latency_ms),
            ms(t.log_write_latency_ms),
            if t.pass {
                "pass".to_string()
            } else {
                format!("FAIL ({})", t.failed_rules.join("; "))
            }
        );
    }
    let _ = match s.max_tps {
        Some(m) => writeln!(
            out,
            "\nhighest transaction rate that passes: {} transactions/s",
            format_number(m)
        ),
        None => writeln!(out, "\nno transaction rate tried passed"),
    };
}
