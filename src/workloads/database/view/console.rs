//! The database validation in the summary: the rates achieved against the target, the
//! per-file table with percentiles, group commit and checkpoints, and the capacity search's
//! trials and finding.

use crate::report::console::labelled;
use crate::units::{format_ns, format_number, format_rate, format_size};
use crate::workloads::database::section::{DatabaseResult, FileFigures, Search};
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
        labelled(out, "checkpoint", &super::tables::checkpoint_text(c));
    }
    file_table(out, &d.files);
    if let Some(s) = &d.search {
        search(out, s);
    }
}

/// The per-file table ([`super::tables::database_file_rows`]), then the log's average
/// write and time to durable, and each data file's scans.
fn file_table(out: &mut String, files: &[FileFigures]) {
    use super::tables::{DATABASE_FILE_COLUMNS, database_file_rows};
    let line = |c: &[String]| {
        format!(
            "{:<6} {:<11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
        )
    };
    let _ = writeln!(out, "\n{}", line(&DATABASE_FILE_COLUMNS.map(String::from)));
    for row in database_file_rows(files) {
        let _ = writeln!(out, "{}", line(&row));
    }
    for f in files {
        if f.role == "log" {
            let _ = writeln!(
                out,
                "{}: {} a write on average, {} until durable on average",
                f.name,
                format_size(f.write_bytes_avg as u64),
                format_ns(f.log_durable_mean_ns)
            );
        } else if f.scan_mb_per_s > 0.0 {
            let _ = writeln!(
                out,
                "{} scans: {} MB/s, reads of {} on average",
                f.name,
                format_number(f.scan_mb_per_s),
                format_ns(f.scan_latency_ns.mean)
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
