//! The Exchange validation in the summary: what was validated (profile, databases, paths), the
//! per-database table, initialisation, backup and recovery figures, the trials of thread
//! tuning and of the maximum-mailboxes search, and the note that explains the target rule.

use crate::report::console::labelled;
use crate::results::verdict::Comparison;
use crate::results::{JobSource, RunResult};
use crate::units::{format_number, format_pct, format_rate, format_seconds, format_size};
use crate::workloads::exchange::section::{ExchangeResult, Trial};
use std::fmt::Write as _;

/// The validation's own figures, after the class table.
pub(super) fn section(out: &mut String, r: &RunResult, x: &ExchangeResult) {
    let init = &x.initialisation;
    labelled(
        out,
        "initialise",
        &if init.reused {
            format!(
                "databases and logs reused from an earlier run ({})",
                format_seconds(init.seconds)
            )
        } else {
            format!(
                "{} written in {}",
                format_size(init.written_bytes),
                format_seconds(init.seconds)
            )
        },
    );
    if x.target_iops > 0.0 {
        labelled(
            out,
            "achieved",
            &format!(
                "{} transactional IOPS (database reads and writes) for a target of {} IOPS; the table above adds log and maintenance I/O",
                format_rate(x.achieved_iops),
                format_rate(x.target_iops)
            ),
        );
    }
    database_table(out, x);
    for (i, (_, text)) in super::tables::test_rows(x).iter().enumerate() {
        labelled(out, if i == 0 { &x.test } else { "" }, text);
    }
    trials(out, "thread tuning", &x.thread_trials);
    if let Some(t) = &r.trials {
        trials(out, "maximum-mailboxes search", t);
    }
    if let Some(m) = r.max_mailboxes {
        let _ = writeln!(
            out,
            "\nmaximum mailboxes that pass: {}",
            super::tables::max_mailboxes_text(m, r.trials.as_deref().unwrap_or_default())
        );
    }
    if let Some(c) = &x.cache_comparison {
        let _ = writeln!(out, "\ncache off and on:");
        let _ = writeln!(
            out,
            "  {:<30} {:>14} {:>14}",
            "", "without cache", "with cache"
        );
        for [name, off, on] in super::tables::cache_comparison_rows(c) {
            let _ = writeln!(out, "  {name:<30} {off:>14} {on:>14}");
        }
        let _ = writeln!(out, "  {}", super::tables::cache_comparison_sentence(c));
    }
}

/// The per-database table, each column as wide as its widest cell.
fn database_table(out: &mut String, x: &ExchangeResult) {
    if x.databases.is_empty() {
        return;
    }
    let (headings, rows) = crate::report::validation_tables::database_table(&x.databases);
    let widths: Vec<usize> = (0..headings.len())
        .map(|i| {
            (rows.iter().map(|r| r[i].chars().count()))
                .chain([headings[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, &w))| {
                if i == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let _ = writeln!(out, "\n{}", line(headings.clone()));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r.iter().map(String::as_str).collect()));
    }
}

fn trials(out: &mut String, title: &str, trials: &[Trial]) {
    if trials.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title}:");
    let _ = writeln!(
        out,
        "  {:<8} {:>9} {:>7} {:>11} {:>13} {:>9} {:>9} {:>9} {:>7}  result",
        "trial",
        "mailboxes",
        "threads",
        "target IOPS",
        "achieved IOPS",
        "read avg",
        "log avg",
        "read max",
        "length",
    );
    for t in trials {
        let [target, achieved, read, log, max, seconds, result] = super::tables::trial_cells(t);
        let _ = writeln!(
            out,
            "  {:<8} {:>9} {:>7} {target:>11} {achieved:>13} {read:>9} {log:>9} {max:>9} {seconds:>7}  {result}",
            t.purpose.to_string(),
            t.mailboxes,
            t.threads,
        );
    }
}

/// How the target rule's limit comes about, under the verdict.
pub(super) fn target_note(r: &RunResult, x: &ExchangeResult) -> Option<String> {
    if x.target_iops <= 0.0 {
        return None;
    }
    // What the rule itself allows, as the verdict carries it.
    let allows = (r.verdict.iter().flat_map(|v| &v.rules))
        .find(|rule| rule.unit == "IOPS" && rule.comparison == Comparison::AtLeast)
        .filter(|rule| rule.threshold < x.target_iops)
        .map_or(String::new(), |rule| {
            let less = ((1.0 - rule.threshold / x.target_iops) * 1e6).round() / 1e4;
            format!(
                "; the rule passes from {} ({} less, for the measured window's edges)",
                crate::report::tables::quantity(rule.threshold, &rule.unit),
                format_pct(less)
            )
        });
    let headroom = if x.headroom_pct > 0.0 {
        format!(" + {} headroom", format_pct(x.headroom_pct))
    } else {
        String::new()
    };
    Some(format!(
        "the target is {} transactional IOPS ({} mailbox{} × {} IOPS{headroom}){allows}; log and maintenance I/O do not count",
        format_number(x.target_iops),
        x.mailboxes,
        if x.mailboxes == 1 { "" } else { "es" },
        format_number(x.iops_per_mailbox),
    ))
}

/// Whether this was the quick check on storlab's scratch directory (no paths given).
pub(super) fn is_quick_check(r: &RunResult) -> bool {
    matches!(r.invocation.source, JobSource::Exchange { path: None })
        && !r.invocation.flags.iter().any(|f| f == "--db-path")
}

/// What to do after the quick check.
pub(super) fn quick_check_next_step() -> String {
    "this was the quick check on a scratch directory of this machine; to validate your storage, give the directories on it with --db-path and --log-path (one per LUN, repeatable), size the test with --mailboxes, --mailbox-size, --messages-per-day and --version, and run it for longer (--duration 2h); docs/profiles.md explains each".into()
}
