//! The database validation's rows, shared by its console lines and its HTML section: each
//! file's figures, and the checkpoints'.

use crate::report::tables::{known_mean, known_ns};
use crate::units::{format_known_ns, format_rate, format_seconds};

/// Column headings of a database validation's per-file table.
pub(super) const DATABASE_FILE_COLUMNS: [&str; 8] = [
    "file", "I/O", "rate /s", "mean", "p95", "p99", "p99.9", "max",
];

/// The rows of a database validation's per-file table: each kind of I/O on each file (data
/// reads, steady writes, checkpoint writes; the log's writes and their fdatasync), its rate
/// and latency percentiles; the file's name only on its first row.
pub(super) fn database_file_rows(
    files: &[crate::workloads::database::section::FileFigures],
) -> Vec<[String; 8]> {
    use crate::stats::databases::LatencyBrief;
    let mut rows = Vec::new();
    for f in files {
        let mut kinds: Vec<(&str, f64, &LatencyBrief)> = Vec::new();
        if f.role == "log" {
            kinds.push(("write", f.writes_per_s, &f.write_latency_ns));
            if f.flush_latency_ns.max > 0 {
                kinds.push(("fdatasync", f.writes_per_s, &f.flush_latency_ns));
            }
        } else {
            kinds.push(("read", f.reads_per_s, &f.read_latency_ns));
            kinds.push(("write", f.writes_per_s, &f.write_latency_ns));
            if f.checkpoint_writes_per_s > 0.0 {
                kinds.push((
                    "checkpoint",
                    f.checkpoint_writes_per_s,
                    &f.checkpoint_latency_ns,
                ));
            }
        }
        for (i, (what, rate, l)) in kinds.into_iter().enumerate() {
            let ns = |v: u64| format_known_ns(known_ns(v));
            rows.push([
                if i == 0 {
                    f.name.clone()
                } else {
                    String::new()
                },
                what.to_string(),
                format_rate(rate),
                format_known_ns(known_mean(l.mean, l.max)),
                ns(l.p95),
                ns(l.p99),
                ns(l.p99_9),
                ns(l.max),
            ]);
        }
    }
    rows
}

/// A database run's checkpoints, as the console and the HTML report say them: how many
/// bursts finished and how long they took, or, when none did, that none was measured and why.
pub(super) fn checkpoint_text(c: &crate::workloads::database::section::Checkpoints) -> String {
    if c.bursts == 0 {
        return format!(
            "none finished in the measured time (one every {}, of {} page writes per data file): the data-file write rules are not measured without one; run for longer than {}",
            crate::units::format_ms(c.interval_ms),
            c.pages_per_burst,
            crate::units::format_ms(c.interval_ms)
        );
    }
    format!(
        "{} burst{} of {} page writes per data file, {} on average, the longest {}",
        c.bursts,
        if c.bursts == 1 { "" } else { "s" },
        c.pages_per_burst,
        format_seconds(c.average_seconds),
        format_seconds(c.longest_seconds)
    )
}
