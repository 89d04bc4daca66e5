//! Simulated users in the summary: the per-task table (planned, completed, failed, latency from
//! the time each task was due) and the store's figures.

use crate::report::console::labelled;
use crate::units::{format_count, format_ns, format_pct, format_seconds, format_size};
use crate::workloads::users::section::UsersResult;
use std::fmt::Write as _;

/// The tasks table and the store's figures.
pub(super) fn section(out: &mut String, u: &UsersResult) {
    let [a, b, c, d, e, f, g, h, i] = super::tables::TASK_COLUMNS;
    let _ = writeln!(
        out,
        "\ntasks (latency from the time each was due)\n{a:<28}{b:>9}{c:>10}{d:>8}{e:>10}{f:>10}{g:>10}{h:>10}{i:>10}"
    );
    for t in &u.tasks {
        let [a, b, c, d, e, f, g, h, i] = super::tables::task_cells(t);
        let _ = writeln!(
            out,
            "{a:<28}{b:>9}{c:>10}{d:>8}{e:>10}{f:>10}{g:>10}{h:>10}{i:>10}"
        );
    }
    let _ = writeln!(
        out,
        "{:<28}{:>9}{:>10}{:>8}  unfinished at the end: {}, at most {} at once",
        "(all)",
        format_count(u.planned),
        format_count(u.completed),
        format_count(u.failed),
        format_count(u.unfinished),
        format_count(u.peak_unfinished.max(u.unfinished))
    );
    let st = &u.store;
    labelled(
        out,
        "store",
        &format!(
            "cache hits {} of {} page references · {} commits ({} durable) · {} of log, {} a message · deepest checkpoint {}",
            format_pct(st.cache_hit_pct),
            format_count(st.cache_hits.saturating_add(st.cache_misses)),
            format_count(st.commits),
            format_count(st.durable_commits),
            format_size(st.log_bytes),
            format_size(st.log_bytes_per_message as u64),
            format_size(st.max_checkpoint_depth_bytes)
        ),
    );
    labelled(
        out,
        "simulator",
        &format!(
            "{} of one core, {} CPU per task, {} of state per user{}",
            format_pct(u.cost.cpu_pct_of_core),
            format_ns(u.cost.cpu_per_task_us * 1e3),
            format_size(u.cost.bytes_per_user),
            match u.steady_at_s {
                Some(t) => format!(" · store IOPS steady from {}", format_seconds(t)),
                None => String::new(),
            }
        ),
    );
}
