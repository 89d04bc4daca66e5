//! The HTML report: one self-contained file (inline CSS and SVG, no script, font or image
//! loaded from anywhere), rendered from a results file alone, legible in light and dark mode
//! and when printed.
//!
//! Every number is written by [`crate::units`], with its unit in its cell or its column's
//! heading, as the console writes it. Every table sits in its own `<div class="table">`,
//! which scrolls sideways when the table is wider than the page's column (on a narrow
//! screen), so nothing widens the page; headings wrap before that happens.
//!
//! Every chart is a `<figure class="chart" data-chart="ID">` whose series elements carry
//! `data-series="NAME"`. The charts over time run from the start of the run (0 s) to the end
//! of its last interval, continuous across the runs of a sequence, with each run's ramp
//! shaded under the series (`<rect class="band" data-band="ramp">`).
//!
//! Chart ids (and series names): iops-over-time and mbps-over-time (`total`, plus each class
//! when there are several), latency-over-time (`CLASS DIR mean`, `CLASS DIR p99`),
//! latency-distribution (`CLASS DIR`, one per class and direction with I/Os),
//! cpu-over-time (`storlab user+sys`, `machine busy`, `machine iowait (idle)`), device-util-over-time
//! (one per device), steps-iops and steps-mbps (`total`, plus each class when there are
//! several; sequences of two or more steps or with repetitions), curve-latency (`mean`, `p99`;
//! rate curves), steady-rounds (`rounds`, `window`, prefixed by the step label when several
//! steps ran until steady). A simulated-users run adds its own (`users`: users-tasks and
//! others, with the steady part shaded as `data-band="steady"`), a run over many hosts
//! hosts-iops and hosts-p99 (`rank R on HOST`).
//!
//! The page is built with maud's templates: every value is inserted as text, escaped as it is
//! written, so nothing a results file holds (a class, target or host name, a warning, a
//! description) can become markup. The stylesheets, constants of this program, are the only
//! text inserted as it is.

use super::svg;
use crate::results::description::Description;
use crate::results::steps::{StepKind, StepResult};
use crate::results::verdict::{Comparison, Verdict};
use crate::results::{DeviceResult, Interrupted, JobSource, PhaseState, RunResult, TargetResult};
use crate::stats::databases::DatabaseFigures;
use crate::stats::summary::DirSummary;
use crate::units::{
    format_count, format_known_ns, format_number, format_pct, format_rate, format_seconds,
    format_size,
};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use std::collections::BTreeSet;

mod charts;
mod hosts;
mod tier;

use charts::{distribution_chart, step_charts, time_charts};

/// The reports' stylesheet (the run report, the cache curve's page).
pub(crate) const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #5a6370; --line: #d0d7de; --pass: #1a7f37; --fail: #cf222e; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9da7b3; --line: #30363d; --pass: #3fb950; --fail: #f85149; --accent: #58a6ff; } }
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg); background: var(--bg); margin: 2em auto; max-width: 72em; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid var(--line); }
div.table { overflow-x: auto; max-width: 100%; margin: 0.6em 0; } table { border-collapse: collapse; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { font-weight: 600; white-space: normal; vertical-align: bottom; } td:first-child, th:first-child { text-align: left; }
td.text { white-space: normal; overflow-wrap: anywhere; min-width: 8em; } td.text, th.text { text-align: left; }
@media (max-width: 60em) { th, td { padding: 0.25em 0.35em; } }
.muted { color: var(--muted); } .pass { color: var(--pass); font-weight: 700; } .fail { color: var(--fail); font-weight: 700; } .inconclusive { color: var(--warn-fg, #9a6700); font-weight: 700; }
.verdict { font-size: 1.8em; font-weight: 800; } .warn { color: var(--fail); }
svg { max-width: 100%; height: auto; } code { overflow-wrap: anywhere; } dl.about { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.1em 1em; margin: 0.6em 0; } dl.about dt { color: var(--muted); } dl.about dd { margin: 0; }
@media print { :root { color-scheme: light; --fg: #000000; --bg: #ffffff; --muted: #444c56; --line: #c0c7ce; } body { margin: 0; max-width: none; background: #fff; } h2 { break-after: avoid; page-break-after: avoid; } table, figure, dl { break-inside: avoid; page-break-inside: avoid; } div.table { overflow: visible; } th, td { white-space: normal; } }
";

/// The report as one HTML document.
pub(crate) fn render(r: &RunResult) -> String {
    let title = r
        .job
        .description
        .clone()
        .unwrap_or_else(|| "storlab run".to_string());
    let body = html! {
        h1 { (title) }
        (header(r))
        (outcome(r))
        (warnings_section(r))
        @for v in super::view::installed() { (v.html(r)) }
        (tier::tiers_section(&r.cache_tiers))
        (hosts::hosts_section(r))
        @if let Some(v) = &r.verdict { (verdict_rules_section(v)) }
        (errors_section(r))
        (verify_section(r))
        (crate::report::data::html_section(r))
        // A sequence's steps first: each step's own figures, then what spans them.
        @if let Some(steps) = &r.steps { (steps_section(steps)) }
        (classes_section(r))
        (charts_section(r))
        (targets_section(r))
        (devices_section(r))
        (cpu_section(r))
    };
    page(&title, STYLE, body)
}

/// A self-contained page of the reports (the run report, comparisons, cache curves): `title`,
/// the page's stylesheet `style` and the charts', then `body`.
pub(crate) fn page(title: &str, style: &'static str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                // The page's and the charts' stylesheets: constants of this program, nothing
                // from the results files, inserted as they are.
                style { (PreEscaped(style)) (PreEscaped(svg::STYLE)) }
            }
            body { (body) }
        }
        "\n"
    }
    .into_string()
}

/// A table's heading row: one `<th>` a column.
pub(crate) fn heading_row(columns: &[&str]) -> Markup {
    html! {
        tr { @for c in columns { th { (c) } } }
    }
}

/// Rows of a heading and a value each (`<th>` and `<td>`).
pub(crate) fn labelled_rows<V: maud::Render>(
    rows: impl IntoIterator<Item = (&'static str, V)>,
) -> Markup {
    html! {
        @for (k, v) in rows { tr { th { (k) } td { (v) } } }
    }
}

/// The name of target `i` of a run, `?` when the results have no such target.
fn target_name(r: &RunResult, i: usize) -> &str {
    r.targets.get(i).map_or("?", |t| t.name.as_str())
}

/// Failed I/Os: counts per target and operation, and the first ones in detail.
fn errors_section(r: &RunResult) -> Markup {
    let failing: Vec<_> = r
        .targets
        .iter()
        .filter(|t| t.errors.read + t.errors.write + t.errors.flush > 0)
        .collect();
    if failing.is_empty() && r.errors.is_empty() {
        return html! {};
    }
    html! {
        h2 id="errors" { "I/O errors" }
        div class="table" {
            table {
                (heading_row(&["target", "read errors", "write errors", "flush errors"]))
                @for t in failing {
                    tr {
                        td { (t.name) }
                        td { (format_count(t.errors.read)) }
                        td { (format_count(t.errors.write)) }
                        td { (format_count(t.errors.flush)) }
                    }
                }
            }
        }
        @if !r.errors.is_empty() {
            div class="table" {
                table {
                    (heading_row(&["when", "target", "op", "offset (bytes)", "size", "error"]))
                    @for e in &r.errors {
                        tr {
                            td { (format_seconds(e.t_ms as f64 / 1e3)) }
                            td { (target_name(r, e.target)) }
                            td { (e.op) }
                            td { (e.offset) }
                            td { (format_size(u64::from(e.len))) }
                            td class="text" { (e.error) }
                        }
                    }
                }
            }
        }
    }
}

/// Data verification: blocks checked, each kind of error, the read-back pass, first errors.
fn verify_section(r: &RunResult) -> Markup {
    let Some(v) = &r.verify else {
        return html! {};
    };
    let judged = |n: u64| {
        html! {
            td class=(if n > 0 { "fail" } else { "pass" }) { (format_count(n)) }
        }
    };
    let read_back = v.read_back.as_ref().map_or_else(
        || "not run".to_string(),
        |b| {
            format!(
                "{}: {} blocks in {}{}",
                b.state,
                format_count(b.blocks_checked),
                format_seconds(b.seconds),
                crate::report::tables::unread_text(b)
            )
        },
    );
    let columns = [
        "block",
        "checked",
        "unchecked",
        "corrupted",
        "misdirected",
        "lost",
        "torn",
        "read-back",
    ];
    html! {
        h2 id="verify" { "Data verification" }
        div class="table" {
            table {
                (heading_row(&columns))
                tr {
                    td { (format_size(v.block_bytes)) }
                    td { (format_count(v.blocks_checked)) }
                    td { (format_count(v.blocks_unchecked)) }
                    (judged(v.corrupted))
                    (judged(v.misdirected))
                    (judged(v.lost))
                    (judged(v.torn))
                    td { (read_back) }
                }
            }
        }
        @if !v.first_errors.is_empty() {
            div class="table" {
                table {
                    (heading_row(&["kind", "target", "offset (bytes)", "expected", "found", "when"]))
                    @for e in &v.first_errors {
                        tr {
                            td class="fail" { (e.kind.name()) }
                            td { (target_name(r, e.target)) }
                            td { (e.offset) }
                            td class="text" { (e.expected) }
                            td class="text" { (e.found) }
                            td { (e.phase) " at " (format_seconds(e.t_ms as f64 / 1e3)) }
                        }
                    }
                }
            }
        }
    }
}

fn dir_row(name: &str, op: &str, d: &DirSummary) -> Markup {
    html! {
        tr {
            td { (name) }
            td { (op) }
            @for cell in super::tables::dir_cells(d) { td { (cell) } }
        }
    }
}

/// What ran (preset, profile, job file or the default job), as recorded when it started.
fn what_ran(r: &RunResult) -> String {
    let what = match (&r.invocation.source, &r.exchange) {
        (_, Some(x)) => {
            let profile = format!("Exchange {} {} test", x.version, x.test);
            match &r.invocation.source {
                JobSource::Exchange { path: Some(p) } => format!("{profile}, job file {p}"),
                _ => profile,
            }
        }
        (JobSource::Default { file }, None) => format!("default job ({file})"),
        (JobSource::File { path }, None) => format!("job file {path}"),
        (JobSource::Preset { name }, None) => format!("preset {name}"),
        (JobSource::Imported { format, from }, None) => {
            crate::report::console::imported_text(format, from)
        }
        (JobSource::Flags, None) => "job from the command line".into(),
        (JobSource::Exchange { .. }, None) => "Exchange validation".into(),
        (JobSource::Users { path: Some(p) }, None) => format!("simulated users, job file {p}"),
        (JobSource::Users { path: None }, None) => "simulated users".into(),
        (
            JobSource::Database { .. }
            | JobSource::Calibrate { .. }
            | JobSource::Etcd { .. }
            | JobSource::WalSync { .. }
            | JobSource::Fs { .. },
            None,
        ) => crate::report::console::source_text(&r.invocation.source),
        (JobSource::Unknown, None) => r
            .job
            .description
            .clone()
            .unwrap_or_else(|| "not recorded".into()),
    };
    match r.invocation.flags.as_slice() {
        [] => what,
        flags => format!("{what}, changed by {}", flags.join(" ")),
    }
}

/// A target in the header: its name (when not its path), path, size, where it lives and how
/// it was opened.
fn target_about(t: &TargetResult) -> Markup {
    let mut place = t.filesystem.clone();
    if let Some(m) = &t.mount_point {
        place.push_str(&format!(" on {m}"));
    }
    if let Some(d) = &t.device {
        place.push_str(&format!(" · device {d}"));
        if let Some(m) = &t.device_model {
            place.push_str(&format!(" ({m})"));
        }
    }
    html! {
        @if t.name != t.path { (t.name) " " }
        code { (t.path) }
        " · " (format_size(t.size_bytes)) " · " (place) " · "
        (if t.direct { "O_DIRECT" } else { "page cache" })
        @if t.dsync { " · O_DSYNC" }
    }
}

/// The header: what ran, where, when, for how long, with which storlab.
fn header(r: &RunResult) -> Markup {
    // The run's description, as its dry run said it and the console summary shows it: the
    // head, then the body (the targets, as used, follow below). A line without a label
    // continues the row above.
    let described = r
        .description
        .clone()
        .unwrap_or_else(|| Description::of_job(&r.job));
    let mut lines: Vec<(&str, Vec<&str>)> = Vec::new();
    let what = what_ran(r);
    lines.push(("what", vec![what.as_str()]));
    for line in described.head.iter().chain(&described.body) {
        match lines.last_mut() {
            Some(last) if line.label.is_empty() => last.1.push(line.text.trim_start()),
            _ => lines.push((line.label.as_str(), vec![line.text.as_str()])),
        }
    }
    let mut rows: Vec<(&str, Markup)> = (lines.into_iter())
        .map(|(label, lines)| {
            let text = html! {
                @for (i, l) in lines.iter().enumerate() { @if i > 0 { br; } (l) }
            };
            (label, text)
        })
        .collect();
    if let Some(seq) = r.steps.as_ref().filter(|s| !s.is_empty()) {
        let kinds: BTreeSet<String> = seq.iter().map(|s| s.kind.to_string()).collect();
        let kinds = kinds.into_iter().collect::<Vec<_>>().join(", ");
        rows.push(("sequence", html! { (seq.len()) " steps (" (kinds) ")" }));
    }
    rows.push(("command", html! { code { (r.command.join(" ")) } }));
    let h = &r.host;
    rows.push((
        "host",
        html! {
            (h.hostname) " · " (h.cpu_model) " (" (h.cpus) " CPUs, "
            (format_size(h.memory_bytes)) " memory) · kernel " (h.kernel)
        },
    ));
    rows.extend(r.targets.iter().map(|t| ("target", target_about(t))));
    rows.push(("when", html! { (r.started_at) " → " (r.ended_at) }));
    let phases: Vec<String> = (r.phases.iter())
        .map(|p| {
            let mut s = format!("{} {}", p.name, format_seconds(p.seconds));
            if p.state != PhaseState::Completed {
                s.push_str(&format!(" ({})", p.state));
            }
            s
        })
        .collect();
    rows.push((
        "how long",
        html! {
            "measured " (format_seconds(r.measured_ms as f64 / 1e3))
            @if !phases.is_empty() { " · " (phases.join(", ")) }
        },
    ));
    rows.push((
        "engine",
        html! {
            (r.engine.name)
            @if let Some(why) = &r.engine.fallback_reason { " (fallback: " (why) ")" }
            @if let Some(p) = &r.engine.io_uring { br; "io_uring paths: " (p.line()) }
        },
    ));
    rows.push(("storlab", html! { (r.storlab_version) }));
    html! {
        dl class="about" {
            @for (k, v) in rows { dt { (k) } dd { (v) } }
        }
    }
}

/// Whether the run was interrupted, and the verdict.
fn outcome(r: &RunResult) -> Markup {
    html! {
        @if let Interrupted::Yes(why) = &r.interrupted {
            p class="fail" { "INTERRUPTED: " (why) }
        }
        @if let Some(v) = &r.verdict {
            p class={ "verdict " (verdict_class(v)) } { (v.result) }
            @if let Some(note) = v.note() { p { (note) } }
        }
    }
}

/// The run's warnings, when there are any.
fn warnings_section(r: &RunResult) -> Markup {
    html! {
        @if !r.warnings.is_empty() {
            h2 { "Warnings" }
            ul { @for w in &r.warnings { li class="warn" { (w) } } }
        }
    }
}

/// The per-database table (Exchange validations and simulated users).
pub(crate) fn databases_table(databases: &[DatabaseFigures]) -> Markup {
    html! {
        h2 { "Databases" }
        div class="table" {
            table {
                @let (headings, rows) = super::validation_tables::database_table(databases);
                (heading_row(&headings))
                @for r in rows {
                    tr { @for c in r { td { (c) } } }
                }
            }
        }
    }
}

/// Each verdict rule: its threshold, the measured value and whether it passed.
fn verdict_rules_section(v: &Verdict) -> Markup {
    html! {
        h2 { "Verdict rules" }
        div class="table" {
            table {
                (heading_row(&["rule", "threshold", "measured", "result"]))
                @for rule in &v.rules {
                    @let cmp = match rule.comparison {
                        Comparison::AtMost => "≤",
                        Comparison::AtLeast => "≥",
                    };
                    @let (measured, threshold) = super::tables::rule_figures(rule);
                    tr {
                        td { (rule.rule) }
                        td { (cmp) " " (threshold) }
                        td { (measured) }
                        td class=(if rule.pass { "pass" } else if rule.not_measured.is_some() || rule.inconclusive.is_some() { "inconclusive text" } else { "fail" }) {
                            (if rule.pass { "pass" } else { rule.outcome() })
                            @if let Some(why) = &rule.inconclusive { br; "the host: " (why) }
                            @if let Some(why) = &rule.not_measured { br; "too few samples: " (why) }
                        }
                    }
                }
            }
        }
    }
}

/// One row per class and direction that did I/O, then the read and write totals.
fn classes_section(r: &RunResult) -> Markup {
    let spans = super::tables::class_spans(r);
    html! {
        h2 { (if spans.is_some() { "Classes across the steps" } else { "Classes" }) }
        div class="table" {
            table {
                tr {
                    th { "class" }
                    th { "op" }
                    @for c in super::tables::DIR_COLUMNS { th { (c) } }
                }
                @for (name, c) in &r.classes {
                    @for (op, d) in c.summary().dirs() {
                        @if d.ops > 0 { (dir_row(name, op.name(), d)) }
                    }
                }
                @for (op, d) in [("read", &r.totals.read), ("write", &r.totals.write)] {
                    @if d.ops > 0 { (dir_row("(all)", op, d)) }
                }
            }
        }
        p class="muted" {
            "MB/s = 10" sup { "6" } " bytes per second; latencies from submission (closed loop) or from the intended issue time (open loop)."
        }
        @if let Some(spans) = spans {
            p class="muted" data-spans {
                "Each class over the steps it ran in: " (spans.join(" · ")) "."
            }
        }
    }
}

/// The notes of a step: its repetitions' spread, its rate-curve level, whether it got steady.
fn step_notes(s: &StepResult) -> String {
    let mut notes = Vec::new();
    if let Some(rep) = &s.repetitions {
        notes.push(format!(
            "{} runs, 95% CI {}–{} IOPS, CV {}",
            rep.runs.len(),
            format_rate(rep.iops.ci95_low),
            format_rate(rep.iops.ci95_high),
            format_pct(rep.iops.cv_pct)
        ));
    }
    if let Some(l) = s.curve_level_pct.filter(|_| s.kind == StepKind::CurveLevel) {
        notes.push(format!("curve {}", format_pct(l)));
    }
    if let Some(st) = &s.steady {
        let of = st.metric_note();
        notes.push(match st.steady_at_round {
            Some(n) => format!("steady{of} at round {n}"),
            None => format!("never steady{of}"),
        });
    }
    notes.join("; ")
}

/// The steps of a sequence, one row each, then their charts.
fn steps_section(steps: &[StepResult]) -> Markup {
    let columns = [
        "step",
        "parameters",
        "IOPS",
        "MB/s",
        "mean",
        "p99",
        "CPU busy",
        "IOPS per CPU %",
        "notes",
    ];
    html! {
        h2 { "Steps" }
        div class="table" {
            table {
                (heading_row(&columns))
                @for s in steps {
                    @let latency = s.totals.reads_and_writes();
                    tr {
                        td { (s.index) }
                        td class="text" { (s.label) }
                        td { (format_rate(s.totals.iops())) }
                        td { (format_number(s.totals.bytes_per_s() / 1e6)) }
                        td { (format_known_ns(super::tables::summary_mean(&latency))) }
                        td { (format_known_ns(super::tables::known_ns(latency.p99))) }
                        td { (format_pct(s.cpu_busy_pct)) }
                        td { (format_rate(s.ios_per_cpu_pct)) }
                        td class="text" { (step_notes(s)) }
                    }
                }
            }
        }
        (step_charts(steps))
    }
}

/// The charts over time and the latency distribution, under one heading when there are any.
fn charts_section(r: &RunResult) -> Markup {
    let any = !r.timeseries.is_empty()
        || (r.classes.values()).any(|c| c.read.histogram.is_some() || c.write.histogram.is_some());
    html! {
        @if any { h2 { "Charts" } }
        (time_charts(r))
        (distribution_chart(r))
    }
}

/// Every target: where it is, how it was opened, how it was prepared.
fn targets_section(r: &RunResult) -> Markup {
    html! {
        h2 { "Targets" }
        div class="table" {
            table {
                tr {
                    th { "name" }
                    th class="text" { "path" }
                    @for c in ["size", "filesystem", "device", "O_DIRECT", "O_DSYNC", "prepared"] {
                        th { (c) }
                    }
                }
                @for t in &r.targets {
                    tr {
                        td class="text" { (t.name) }
                        td class="text" { code { (t.path) } }
                        td { (format_size(t.size_bytes)) }
                        td { (t.filesystem) }
                        td { (t.device.as_deref().unwrap_or_default()) }
                        td { (t.direct) }
                        td { (t.dsync) }
                        td {
                            @if t.prepare.reused { "reused" } @else { (format_seconds(t.prepare.seconds)) }
                        }
                    }
                }
            }
        }
    }
}

/// What each block device did while measuring, and where its counters and storlab's differ,
/// what that means.
fn devices_section(r: &RunResult) -> Markup {
    if r.devices.is_empty() {
        return html! {};
    }
    let columns = [
        "device", "model", "reads", "writes", "read", "written", "busy",
    ];
    html! {
        h2 { "Devices" }
        div class="table" {
            table {
                (heading_row(&columns))
                @for d in &r.devices {
                    (device_row(&[&d.name, d.model.as_deref().unwrap_or_default()], d))
                }
            }
        }
        @for d in &r.devices {
            @for note in super::tables::device_notes(r, d) {
                p class=(if note.foreign { "warn" } else { "muted" }) data-device-note=(d.name) {
                    (note.text)
                }
            }
        }
    }
}

/// A row of a devices table: the `lead` cells, then the device's reads, writes, bytes read
/// and written, and busy share.
fn device_row(lead: &[&str], d: &DeviceResult) -> Markup {
    let t = &d.delta;
    let figures = [
        format_count(t.reads),
        format_count(t.writes),
        format_size(t.read_bytes),
        format_size(t.write_bytes),
        format_pct(t.util_pct),
    ];
    html! {
        tr {
            @for c in lead { td { (c) } }
            @for c in figures { td { (c) } }
        }
    }
}

/// CPU use of storlab and of the machine, and storlab's own cost per I/O.
fn cpu_section(r: &RunResult) -> Markup {
    html! {
        h2 { "CPU" }
        p { (super::tables::cpu_sentence(r)) }
        @if let Some(c) = &r.cost {
            p { "storlab's own cost " (super::cost::sentence(c)) }
            @if let Some(spin) = super::cost::spinning(c) { p { (spin) } }
        }
    }
}

/// The verdict's class in the stylesheet.
fn verdict_class(v: &Verdict) -> &'static str {
    if v.passed() {
        "pass"
    } else if v.inconclusive() || v.not_measured() {
        "inconclusive"
    } else {
        "fail"
    }
}

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod tests;
