//! The Exchange validation in the HTML report: its configuration, the databases, the trials
//! and the maximum mailboxes found, the cache comparison.

use crate::report::html::{databases_table, heading_row, labelled_rows};
use crate::report::svg;
use crate::results::RunResult;
use crate::units::{
    format_count, format_number, format_pct, format_rate, format_seconds, format_size,
};
use crate::workloads::exchange::section::{CacheComparison, CacheSide, ExchangeResult};
use maud::{Markup, html};

/// An Exchange validation: its configuration, the databases, the trials and the maximum
/// mailboxes found.
pub(super) fn exchange_section(r: &RunResult, x: &ExchangeResult) -> Markup {
    let transactional = x.backup.is_none() && x.recovery.is_none();
    let mut rows = vec![
        ("mailboxes", format_count(x.mailboxes)),
        ("mailbox size", format_size(x.mailbox_size_bytes)),
        (
            "IOPS per mailbox",
            format!(
                "{} IOPS ({})",
                format_number(x.iops_per_mailbox),
                x.iops_source
            ),
        ),
        (
            "databases",
            format!(
                "{} × {}{}",
                x.database_count,
                format_size(x.database_size_bytes),
                if x.capacity_fraction < 1.0 {
                    format!(
                        " (built at {} of real size)",
                        format_pct(x.capacity_fraction * 100.0)
                    )
                } else {
                    String::new()
                }
            ),
        ),
        ("page size", format_size(x.page_size_bytes)),
        (
            "initialisation",
            format!(
                "{}{}",
                format_seconds(x.initialisation.seconds),
                if x.initialisation.reused {
                    ", reused"
                } else {
                    ""
                }
            ),
        ),
    ];
    if transactional {
        rows.extend([
            ("headroom", format_pct(x.headroom_pct)),
            (
                "target transactional IOPS",
                format!("{} IOPS", format_rate(x.target_iops)),
            ),
            (
                "achieved transactional IOPS",
                format!("{} IOPS", format_rate(x.achieved_iops)),
            ),
            ("threads per database", x.threads_per_database.to_string()),
            (
                "background maintenance",
                (if x.maintenance { "on" } else { "off" }).to_string(),
            ),
        ]);
    }
    rows.extend(super::tables::test_rows(x));
    html! {
        h2 { "Exchange " (x.version) " " (x.test) " test" }
        div class="table" { table { (labelled_rows(rows)) } }
        @if !x.databases.is_empty() { (databases_table(&x.databases)) }
        (trials_table(r, x))
        @if let Some(m) = r.max_mailboxes {
            p class="verdict" { "Maximum mailboxes that pass: " (super::tables::max_mailboxes_text(m, r.trials.as_deref().unwrap_or_default())) }
        }
        @if let Some(c) = &x.cache_comparison { (cache_comparison(c)) }
    }
}

/// Cache off and on: the table, a sentence and a chart of what each carried.
fn cache_comparison(c: &CacheComparison) -> Markup {
    let sides = [("without cache", &c.uncached), ("with cache", &c.cached)];
    let chart = |id: &str, title: &str, unit: &str, f: &dyn Fn(&CacheSide) -> f64| {
        let chart = svg::bar_chart(
            title,
            &sides.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>(),
            &svg::Axis::linear(unit),
            &[svg::Bars {
                name: title.into(),
                values: sides.iter().map(|(_, s)| f(s)).collect(),
                errors: vec![None; 2],
            }],
        );
        svg::figure(id, chart)
    };
    html! {
        h2 { "Cache off and on" }
        div class="table" {
            table {
                tr { th {} th { "without cache" } th { "with cache" } }
                @for [name, off, on] in super::tables::cache_comparison_rows(c) {
                    tr { th { (name) } td { (off) } td { (on) } }
                }
            }
        }
        p { (super::tables::cache_comparison_sentence(c)) }
        @if c.uncached.max_mailboxes.is_some() {
            (chart("cache-mailboxes", "maximum mailboxes that pass", "mailboxes", &|s| {
                s.max_mailboxes.unwrap_or(0) as f64
            }))
        }
        (chart("cache-iops", "achieved transactional IOPS", "IOPS", &|s| s.achieved_iops))
    }
}

/// The trials of an Exchange validation: thread tuning, then the mailbox search.
fn trials_table(r: &RunResult, x: &ExchangeResult) -> Markup {
    let trials: Vec<_> = (x.thread_trials.iter().map(|t| ("threads", t)))
        .chain(r.trials.iter().flatten().map(|t| ("search", t)))
        .collect();
    if trials.is_empty() {
        return html! {};
    }
    let columns = [
        "kind",
        "purpose",
        "mailboxes",
        "threads",
        "target IOPS",
        "achieved IOPS",
        "read avg",
        "log avg",
        "read max",
        "length",
        "result",
    ];
    html! {
        h2 { "Trials" }
        div class="table" {
            table {
                (heading_row(&columns))
                @for (kind, t) in trials {
                    @let cells = super::tables::trial_cells(t);
                    tr {
                        td { (kind) }
                        td { (t.purpose) }
                        td { (format_count(t.mailboxes)) }
                        td { (t.threads) }
                        @for c in &cells[..6] { td { (c) } }
                        td class=(if t.pass { "pass" } else if t.result == crate::results::verdict::NOT_MEASURED || t.result == crate::results::verdict::INCONCLUSIVE { "inconclusive text" } else { "fail text" }) {
                            (cells[6])
                        }
                    }
                }
            }
        }
    }
}
