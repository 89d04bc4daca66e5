//! A simulated-users run in the report: the population and store as run, every task type's
//! latency, the store's and the simulator's figures, the databases' I/O, and the population's
//! time series with the steady-state point marked (`<rect class="band" data-band="steady">`).
//!
//! Chart ids (and series names): users-tasks (`tasks/s`, `unfinished`), users-store-iops
//! (`database reads/s`, `database writes/s`, `log writes/s`), users-cache (`cache hit %`,
//! `simulator CPU %`), users-checkpoint (`checkpoint depth`), users-log-waits (`log waits`),
//! users-send-mail (`Send Mail p95`).

use crate::report::svg::{self, Band, LineOptions};
use crate::units::{format_count, format_ns, format_number, format_pct, format_rate, format_size};
use crate::workloads::users::section::{TaskResult, UsersInterval, UsersResult};
use maud::{Markup, html};

/// The users section.
pub(super) fn users_section(u: &UsersResult) -> Markup {
    let s = &u.setup;
    let hours = |secs: f64| format!("{:.2} h", secs / 3600.0);
    let rows = [
        ("users", format_count(s.users)),
        (
            "profile",
            format!(
                "{} ({} tasks a day each)",
                s.profile,
                format_number(s.tasks_per_user_per_day)
            ),
        ),
        ("Exchange version", s.version.clone()),
        ("databases", s.databases.to_string()),
        ("page size", format_size(s.page_bytes)),
        ("mailbox size", format_size(s.mailbox_bytes)),
        ("cache per mailbox", format_size(s.cache_per_mailbox_bytes)),
        ("checkpoint depth target", format_size(s.checkpoint_bytes)),
        (
            "simulated",
            format!("{} of a day of {}", hours(s.duration_s), hours(s.day_s)),
        ),
        (
            "pace",
            if s.stress {
                "stress mode".into()
            } else {
                format!("{}× real time", format_number(s.compress))
            },
        ),
        ("warm-up", s.warm_up.clone()),
        ("planned", format_count(u.planned)),
        ("completed", format_count(u.completed)),
        ("failed", format_count(u.failed)),
        ("unfinished at the end", format_count(u.unfinished)),
        (
            "most unfinished at once",
            format_count(u.peak_unfinished.max(u.unfinished)),
        ),
        (
            "overloaded",
            u.overloaded.as_ref().map_or("no".into(), |o| {
                format!(
                    "at {} s ({} unfinished, limit {})",
                    format_number(o.at_s),
                    format_count(o.unfinished),
                    format_count(o.limit)
                )
            }),
        ),
        (
            "cache hits",
            format!(
                "{} of {} page references",
                format_pct(u.store.cache_hit_pct),
                format_count(u.store.cache_hits.saturating_add(u.store.cache_misses))
            ),
        ),
        (
            "commits",
            format!(
                "{} ({} durable)",
                format_count(u.store.commits),
                format_count(u.store.durable_commits)
            ),
        ),
        (
            "log",
            format!(
                "{}, {} a message",
                format_size(u.store.log_bytes),
                format_size(u.store.log_bytes_per_message as u64)
            ),
        ),
        (
            "deepest checkpoint",
            format_size(u.store.max_checkpoint_depth_bytes),
        ),
        (
            "simulator",
            format!(
                "{} of one core, {} a task",
                format_pct(u.cost.cpu_pct_of_core),
                format_ns(u.cost.cpu_per_task_us * 1e3)
            ),
        ),
        ("state per user", format!("{} B", u.cost.bytes_per_user)),
        (
            "steady from",
            u.steady_at_s
                .map_or("not reached".into(), |t| format!("{} s", format_number(t))),
        ),
        (
            "calibration knobs",
            format!(
                "{} log bytes a body byte, {} indexes a folder of {} B entries",
                format_number(s.log_per_body_byte),
                s.secondary_indexes,
                s.index_entry_bytes
            ),
        ),
    ];
    html! {
        h2 { "Simulated users" }
        div class="table" { table { (crate::report::html::labelled_rows(rows)) } }
        (tasks_table(u))
        @if !u.databases.is_empty() { (crate::report::html::databases_table(&u.databases)) }
        @for chart in charts(u) { (chart) }
    }
}

/// Every task type: counts and latency from the time it was due, and its service p95.
fn tasks_table(u: &UsersResult) -> Markup {
    let service_p95 = |t: &TaskResult| {
        crate::units::format_known_ns(crate::report::tables::known_ns(t.service.p95))
    };
    html! {
        h2 { "Tasks" }
        p { "Latency from the time each task was due; service from its start." }
        div class="table" {
            table data-table="users-tasks" {
                tr {
                    @for c in super::tables::TASK_COLUMNS { th { (c) } }
                    th { "service p95" }
                }
                @for t in &u.tasks {
                    tr {
                        @for c in super::tables::task_cells(t) { td { (c) } }
                        td { (service_p95(t)) }
                    }
                }
            }
        }
    }
}

/// The population's series over time, the steady part shaded.
fn charts(u: &UsersResult) -> Vec<Markup> {
    if u.series.is_empty() {
        return Vec::new();
    }
    let end = u.series.last().map_or(0.0, |i| i.t_s);
    let options = LineOptions {
        x_range: Some((0.0, end)),
        bands: u
            .steady_at_s
            .map(|from| Band {
                from,
                to: end,
                label: "steady".into(),
            })
            .into_iter()
            .collect(),
        ..Default::default()
    };
    let line = |f: fn(&UsersInterval) -> f64| -> Vec<(f64, f64)> {
        u.series.iter().map(|i| (i.t_s, f(i))).collect()
    };
    let chart = |id: &str,
                 title: &str,
                 y: &str,
                 series: Vec<(&str, Vec<(f64, f64)>)>,
                 format: Option<fn(f64) -> String>| {
        let opts = LineOptions {
            y_format: format,
            ..options.clone()
        };
        svg::time_chart(id, title, y, series, &opts)
    };
    vec![
        chart(
            "users-tasks",
            "Tasks completed per second, and unfinished tasks",
            "tasks",
            vec![
                ("tasks/s", line(|i| i.tasks_per_s)),
                ("unfinished", line(|i| i.unfinished as f64)),
            ],
            None,
        ),
        chart(
            "users-store-iops",
            "The store's I/O per second, by kind",
            "IOPS",
            vec![
                ("database reads/s", line(|i| i.db_reads_per_s)),
                ("database writes/s", line(|i| i.db_writes_per_s)),
                ("log writes/s", line(|i| i.log_writes_per_s)),
            ],
            Some(format_rate),
        ),
        chart(
            "users-cache",
            "Cache hits, and the simulator's CPU (% of one core)",
            "%",
            vec![
                ("cache hit %", line(|i| i.cache_hit_pct)),
                ("simulator CPU %", line(|i| i.cpu_pct)),
            ],
            Some(format_pct),
        ),
        chart(
            "users-checkpoint",
            "Checkpoint depth (the deepest database's log bytes not yet checkpointed)",
            "bytes",
            vec![(
                "checkpoint depth",
                line(|i| i.checkpoint_depth_bytes as f64),
            )],
            Some(|v| format_size(v as u64)),
        ),
        chart(
            "users-log-waits",
            "Durable commits waiting for a log write at each interval's end",
            "commits",
            vec![("log waits", line(|i| i.log_waits as f64))],
            None,
        ),
        chart(
            "users-send-mail",
            "Send Mail 95th percentile latency so far (from the time each was due)",
            "latency",
            vec![("Send Mail p95", line(|i| i.send_mail_p95_ns as f64))],
            Some(format_ns),
        ),
    ]
}
