//! A database validation in the report: the profile and what it achieved, group commit and
//! checkpoints, the per-file table with percentiles, and the capacity search's trials.

use crate::units::{format_ns, format_number, format_rate, format_size};
use crate::workloads::database::section::{DatabaseResult, FileFigures};
use maud::{Markup, html};

/// The database section.
pub(super) fn database_section(d: &DatabaseResult) -> Markup {
    let g = &d.group_commit;
    let mut rows = vec![
        ("engine", d.engine.clone()),
        (
            "transactions/s",
            format!(
                "{} achieved for a target of {} ({})",
                format_number(d.achieved_tps),
                format_number(d.target_tps),
                d.rate_source
            ),
        ),
        (
            "data-file IOPS",
            format!(
                "{} achieved for a target of {}",
                format_rate(d.achieved_iops),
                format_rate(d.target_iops)
            ),
        ),
        (
            "data files",
            format!(
                "{} of {}, {} pages, {} workers each",
                d.data_files,
                format_size(d.data_file_bytes),
                format_size(d.page_size_bytes),
                d.threads_per_file
            ),
        ),
        (
            "group commit",
            format!(
                "{} commits in {} log writes: {} per write on average, at most {} (each commit {}, made durable by {})",
                g.commits,
                g.log_writes,
                format_number(g.commits_per_write),
                g.max_commits_per_write,
                format_size(d.log_write_bytes),
                d.log_durability
            ),
        ),
        ("limits from", d.limits_source.clone()),
    ];
    if let Some(c) = &d.checkpoints {
        rows.push(("checkpoints", super::tables::checkpoint_text(c)));
    }
    if let Some(m) = d.search.as_ref().map(|s| s.max_tps) {
        rows.push((
            "highest rate that passes",
            m.map_or("none of the rates tried".into(), |m| {
                format!("{} transactions/s", format_number(m))
            }),
        ));
    }
    html! {
        h2 { "Database validation" }
        div class="table" { table { (crate::report::html::labelled_rows(rows)) } }
        (files_table(&d.files))
        @if let Some(s) = &d.search {
            h3 { "Capacity search" }
            div class="table" { table {
                tr { th { "trial" } th { "target /s" } th { "achieved /s" } th { "read avg" } th { "write avg" } th { "log avg" } th { "result" } }
                @for t in &s.trials {
                    tr {
                        td { (t.purpose) }
                        td { (format_number(t.tps)) }
                        td { (format_number(t.achieved_tps)) }
                        td { (format_ns(t.data_read_latency_ms * 1e6)) }
                        td { (format_ns(t.data_write_latency_ms * 1e6)) }
                        td { (format_ns(t.log_write_latency_ms * 1e6)) }
                        td { @if t.pass { "pass" } @else { "FAIL (" (t.failed_rules.join("; ")) ")" } }
                    }
                }
            } }
        }
    }
}

/// Each kind of I/O on each file: rate and latency percentiles
/// ([`super::tables::database_file_rows`]).
fn files_table(files: &[FileFigures]) -> Markup {
    use super::tables::{DATABASE_FILE_COLUMNS, database_file_rows};
    html! {
        div class="table" { table {
            tr { @for c in DATABASE_FILE_COLUMNS { th { (c) } } }
            @for row in database_file_rows(files) {
                tr { @for cell in row { td { (cell) } } }
            }
        } }
    }
}
