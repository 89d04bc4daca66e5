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

use super::svg::{self};
use crate::results::description::Description;
use crate::results::steps::{StepKind, StepResult};
use crate::results::verdict::Verdict;
use crate::results::{Interrupted, JobSource, PhaseState, RunResult};
use crate::stats::summary::DirSummary;
use crate::units::{
    format_count, format_known_ns, format_ns, format_number, format_pct, format_rate,
    format_seconds, format_size,
};
use crate::workloads::exchange::section::{DatabaseFigures, ExchangeResult};
use std::collections::BTreeSet;
use std::fmt::Write as _;

mod charts;
mod hosts;
mod tier;
mod users;

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
.muted { color: var(--muted); } .pass { color: var(--pass); font-weight: 700; } .fail { color: var(--fail); font-weight: 700; }
.verdict { font-size: 1.8em; font-weight: 800; } .warn { color: var(--fail); }
svg { max-width: 100%; height: auto; } code { overflow-wrap: anywhere; } dl.about { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.1em 1em; margin: 0.6em 0; } dl.about dt { color: var(--muted); } dl.about dd { margin: 0; }
@media print { :root { color-scheme: light; --fg: #000000; --bg: #ffffff; --muted: #444c56; --line: #c0c7ce; } body { margin: 0; max-width: none; background: #fff; } h2 { break-after: avoid; page-break-after: avoid; } table, figure, dl { break-inside: avoid; page-break-inside: avoid; } div.table { overflow: visible; } th, td { white-space: normal; } }
";

/// Failed I/Os: counts per target and operation, and the first ones in detail.
fn errors_section(o: &mut String, r: &RunResult) {
    let failing: Vec<_> = r
        .targets
        .iter()
        .filter(|t| t.errors.read + t.errors.write + t.errors.flush > 0)
        .collect();
    if failing.is_empty() && r.errors.is_empty() {
        return;
    }
    o.push_str("<h2 id=\"errors\">I/O errors</h2><div class=\"table\"><table><tr><th>target</th><th>read errors</th><th>write errors</th><th>flush errors</th></tr>");
    for t in failing {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&t.name),
            format_count(t.errors.read),
            format_count(t.errors.write),
            format_count(t.errors.flush)
        );
    }
    o.push_str("</table></div>");
    if !r.errors.is_empty() {
        o.push_str("<div class=\"table\"><table><tr><th>when</th><th>target</th><th>op</th><th>offset (bytes)</th><th>size</th><th>error</th></tr>");
        for e in &r.errors {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td></tr>",
                format_seconds(e.t_ms as f64 / 1e3),
                escape(r.targets.get(e.target).map_or("?", |t| t.name.as_str())),
                escape(&e.op),
                e.offset,
                format_size(u64::from(e.len)),
                escape(&e.error)
            );
        }
        o.push_str("</table></div>");
    }
}

/// Data verification: blocks checked, each kind of error, the read-back pass, first errors.
fn verify_section(o: &mut String, r: &RunResult) {
    let Some(v) = &r.verify else { return };
    let _ = write!(
        o,
        "<h2 id=\"verify\">Data verification</h2><div class=\"table\"><table><tr><th>block</th><th>checked</th><th>unchecked</th><th>corrupted</th><th>misdirected</th><th>lost</th><th>torn</th><th>read-back</th></tr><tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td class=\"{}\">{}</td><td class=\"{}\">{}</td><td class=\"{}\">{}</td><td>{}</td></tr></table></div>",
        format_size(v.block_bytes),
        format_count(v.blocks_checked),
        format_count(v.blocks_unchecked),
        if v.corrupted > 0 { "fail" } else { "pass" },
        format_count(v.corrupted),
        if v.misdirected > 0 { "fail" } else { "pass" },
        format_count(v.misdirected),
        if v.lost > 0 { "fail" } else { "pass" },
        format_count(v.lost),
        if v.torn > 0 { "fail" } else { "pass" },
        format_count(v.torn),
        v.read_back.as_ref().map_or_else(
            || "not run".to_string(),
            |b| format!(
                "{}: {} blocks in {}",
                escape(&b.state.to_string()),
                format_count(b.blocks_checked),
                format_seconds(b.seconds)
            )
        ),
    );
    if !v.first_errors.is_empty() {
        o.push_str("<div class=\"table\"><table><tr><th>kind</th><th>target</th><th>offset (bytes)</th><th>expected</th><th>found</th><th>when</th></tr>");
        for e in &v.first_errors {
            let _ = write!(
                o,
                "<tr><td class=\"fail\">{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td>{} at {}</td></tr>",
                e.kind.name(),
                escape(r.targets.get(e.target).map_or("?", |t| t.name.as_str())),
                e.offset,
                escape(&e.expected),
                escape(&e.found),
                escape(&e.phase),
                format_seconds(e.t_ms as f64 / 1e3)
            );
        }
        o.push_str("</table></div>");
    }
}

/// Escapes text for HTML.
pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn dir_row(out: &mut String, name: &str, op: &str, d: &DirSummary) {
    let _ = write!(out, "<tr><td>{}</td><td>{op}</td>", escape(name));
    for cell in super::tables::dir_cells(d) {
        let _ = write!(out, "<td>{cell}</td>");
    }
    out.push_str("</tr>\n");
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
        (JobSource::Flags, None) => "job from the command line".into(),
        (JobSource::Exchange { .. }, None) => "Exchange validation".into(),
        (JobSource::Users { path: Some(p) }, None) => format!("simulated users, job file {p}"),
        (JobSource::Users { path: None }, None) => "simulated users".into(),
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

/// The header: what ran, where, when, for how long, with which storlab.
fn header(o: &mut String, r: &RunResult) {
    // The run's description, as its dry run said it and the console summary shows it: the
    // head, then the body (the targets, as used, follow below).
    let described = r
        .description
        .clone()
        .unwrap_or_else(|| Description::of_job(&r.job));
    let mut rows: Vec<(&str, String)> = vec![("what", escape(&what_ran(r)))];
    for line in described.head.iter().chain(&described.body) {
        match rows.last_mut() {
            Some(last) if line.label.is_empty() => {
                let _ = write!(last.1, "<br>{}", escape(line.text.trim_start()));
            }
            _ => rows.push((line.label.as_str(), escape(&line.text))),
        }
    }
    if let Some(seq) = r.steps.as_ref().filter(|s| !s.is_empty()) {
        let kinds: BTreeSet<String> = seq.iter().map(|s| s.kind.to_string()).collect();
        rows.push((
            "sequence",
            format!(
                "{} steps ({})",
                seq.len(),
                escape(&kinds.into_iter().collect::<Vec<_>>().join(", "))
            ),
        ));
    }
    rows.push((
        "command",
        format!("<code>{}</code>", escape(&r.command.join(" "))),
    ));
    rows.push((
        "host",
        format!(
            "{} · {} ({} CPUs, {} memory) · kernel {}",
            escape(&r.host.hostname),
            escape(&r.host.cpu_model),
            r.host.cpus,
            format_size(r.host.memory_bytes),
            escape(&r.host.kernel)
        ),
    ));
    for t in &r.targets {
        let mut place = escape(&t.filesystem);
        if let Some(m) = &t.mount_point {
            let _ = write!(place, " on {}", escape(m));
        }
        if let Some(d) = &t.device {
            let _ = write!(place, " · device {}", escape(d));
            if let Some(m) = &t.device_model {
                let _ = write!(place, " ({})", escape(m));
            }
        }
        rows.push((
            "target",
            format!(
                "{}<code>{}</code> · {} · {} · {}{}",
                if t.name == t.path {
                    String::new()
                } else {
                    format!("{} ", escape(&t.name))
                },
                escape(&t.path),
                format_size(t.size_bytes),
                place,
                if t.direct { "O_DIRECT" } else { "page cache" },
                if t.dsync { " · O_DSYNC" } else { "" }
            ),
        ));
    }
    rows.push((
        "when",
        format!("{} → {}", escape(&r.started_at), escape(&r.ended_at)),
    ));
    let phases: Vec<String> = r
        .phases
        .iter()
        .map(|p| {
            let mut s = format!(
                "{} {}",
                escape(&p.name.to_string()),
                format_seconds(p.seconds)
            );
            if p.state != PhaseState::Completed {
                let _ = write!(s, " ({})", escape(&p.state.to_string()));
            }
            s
        })
        .collect();
    rows.push((
        "how long",
        format!(
            "measured {}{}",
            format_seconds(r.measured_ms as f64 / 1e3),
            if phases.is_empty() {
                String::new()
            } else {
                format!(" · {}", phases.join(", "))
            }
        ),
    ));
    let mut engine = escape(&r.engine.name);
    if let Some(why) = &r.engine.fallback_reason {
        let _ = write!(engine, " (fallback: {})", escape(why));
    }
    rows.push(("engine", engine));
    rows.push(("storlab", escape(&r.storlab_version)));
    o.push_str("<dl class=\"about\">");
    for (k, v) in rows {
        let _ = write!(o, "<dt>{}</dt><dd>{v}</dd>", escape(k));
    }
    o.push_str("</dl>");
}

/// The report as one HTML document.
pub(crate) fn render(r: &RunResult) -> String {
    let mut o = String::new();
    let title = r
        .job
        .description
        .clone()
        .unwrap_or_else(|| "storlab run".to_string());
    let _ = write!(
        o,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}{}</style></head><body>",
        escape(&title),
        svg::STYLE
    );
    let _ = write!(o, "<h1>{}</h1>", escape(&title));
    header(&mut o, r);
    outcome(&mut o, r);
    warnings_section(&mut o, r);
    if let Some(x) = &r.exchange {
        exchange_section(&mut o, r, x);
    }
    if let Some(u) = &r.users {
        users::users_section(&mut o, u);
    }
    tier::tiers_section(&mut o, &r.cache_tiers);
    hosts::hosts_section(&mut o, r);
    if let Some(v) = &r.verdict {
        verdict_rules_section(&mut o, v);
    }
    errors_section(&mut o, r);
    verify_section(&mut o, r);
    // A sequence's steps first: each step's own figures, then what spans them.
    if let Some(steps) = &r.steps {
        steps_section(&mut o, steps);
    }
    classes_section(&mut o, r);
    charts_section(&mut o, r);
    targets_section(&mut o, r);
    devices_section(&mut o, r);
    cpu_section(&mut o, r);
    o.push_str("</body></html>\n");
    o
}

/// Whether the run was interrupted, and the verdict.
fn outcome(o: &mut String, r: &RunResult) {
    if let Interrupted::Yes(why) = &r.interrupted {
        let _ = write!(o, "<p class=\"fail\">INTERRUPTED: {}</p>", escape(why));
    }
    if let Some(v) = &r.verdict {
        let class = if v.passed() { "pass" } else { "fail" };
        let _ = write!(o, "<p class=\"verdict {class}\">{}</p>", v.result);
    }
}

/// The run's warnings, when there are any.
fn warnings_section(o: &mut String, r: &RunResult) {
    if !r.warnings.is_empty() {
        o.push_str("<h2>Warnings</h2><ul>");
        for w in &r.warnings {
            let _ = write!(o, "<li class=\"warn\">{}</li>", escape(w));
        }
        o.push_str("</ul>");
    }
}

/// An Exchange validation: its configuration, the databases, the trials and the maximum
/// mailboxes found.
fn exchange_section(o: &mut String, r: &RunResult, x: &ExchangeResult) {
    let transactional = x.backup.is_none() && x.recovery.is_none();
    let mut rows = vec![
        ("mailboxes", format_count(x.mailboxes)),
        ("mailbox size", format_size(x.mailbox_size_bytes)),
        (
            "IOPS per mailbox",
            format!(
                "{} IOPS ({})",
                format_number(x.iops_per_mailbox),
                escape(&x.iops_source)
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
    rows.extend(
        (super::tables::test_rows(x).into_iter()).map(|(what, text)| (what, escape(&text))),
    );
    let _ = write!(
        o,
        "<h2>Exchange {} {} test</h2><div class=\"table\"><table>",
        escape(&x.version),
        escape(&x.test)
    );
    for (k, v) in rows {
        let _ = write!(o, "<tr><th>{k}</th><td>{v}</td></tr>");
    }
    o.push_str("</table></div>");
    if !x.databases.is_empty() {
        databases_table(o, &x.databases);
    }
    trials_table(o, r, x);
    if let Some(m) = r.max_mailboxes {
        let _ = write!(
            o,
            "<p class=\"verdict\">Maximum mailboxes that pass: {} mailboxes</p>",
            format_count(m)
        );
    }
    if let Some(c) = &x.cache_comparison {
        cache_comparison(o, c);
    }
}

/// Cache off and on: the table, a sentence and a chart of what each carried.
fn cache_comparison(o: &mut String, c: &crate::workloads::exchange::section::CacheComparison) {
    o.push_str("<h2>Cache off and on</h2><div class=\"table\"><table><tr><th></th><th>without cache</th><th>with cache</th></tr>");
    for [name, off, on] in super::tables::cache_comparison_rows(c) {
        let _ = write!(
            o,
            "<tr><th>{}</th><td>{}</td><td>{}</td></tr>",
            escape(&name),
            escape(&off),
            escape(&on)
        );
    }
    let _ = write!(
        o,
        "</table></div><p>{}</p>",
        escape(&super::tables::cache_comparison_sentence(c))
    );
    let sides = [("without cache", &c.uncached), ("with cache", &c.cached)];
    let chart =
        |title: &str,
         unit: &str,
         f: &dyn Fn(&crate::workloads::exchange::section::CacheSide) -> f64| {
            super::svg::bar_chart(
                title,
                &sides.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>(),
                &super::svg::Axis::linear(unit),
                &[super::svg::Bars {
                    name: title.into(),
                    values: sides.iter().map(|(_, s)| f(s)).collect(),
                    errors: vec![None; 2],
                }],
            )
        };
    if c.uncached.max_mailboxes.is_some() {
        let svg = chart("maximum mailboxes that pass", "mailboxes", &|s| {
            s.max_mailboxes.unwrap_or(0) as f64
        });
        o.push_str(&super::svg::tag(&svg, "cache-mailboxes"));
    }
    let svg = chart("achieved transactional IOPS", "IOPS", &|s| s.achieved_iops);
    o.push_str(&super::svg::tag(&svg, "cache-iops"));
}

/// The per-database table (Exchange validations and simulated users).
fn databases_table(o: &mut String, databases: &[DatabaseFigures]) {
    o.push_str("<h2>Databases</h2><div class=\"table\"><table><tr>");
    for c in super::tables::DATABASE_COLUMNS {
        let _ = write!(o, "<th>{c}</th>");
    }
    o.push_str("</tr>");
    for d in databases {
        o.push_str("<tr>");
        for c in super::tables::database_cells(d) {
            let _ = write!(o, "<td>{}</td>", escape(&c));
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></div>");
}

/// The trials of an Exchange validation: thread tuning, then the mailbox search.
fn trials_table(o: &mut String, r: &RunResult, x: &ExchangeResult) {
    let trials = x
        .thread_trials
        .iter()
        .map(|t| ("threads", t))
        .chain(r.trials.iter().flatten().map(|t| ("search", t)));
    let mut any = false;
    for (kind, t) in trials {
        if !any {
            o.push_str("<h2>Trials</h2><div class=\"table\"><table><tr><th>kind</th><th>purpose</th><th>mailboxes</th><th>threads</th><th>target IOPS</th><th>achieved IOPS</th><th>read avg</th><th>log avg</th><th>read max</th><th>result</th></tr>");
            any = true;
        }
        let _ = write!(
            o,
            "<tr><td>{kind}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>",
            escape(&t.purpose.to_string()),
            format_count(t.mailboxes),
            t.threads,
            format_rate(t.target_iops),
            format_rate(t.achieved_iops),
            format_ns(t.db_read_latency_ms * 1e6),
            format_ns(t.log_write_latency_ms * 1e6),
            format_ns(t.max_read_latency_ms * 1e6),
            if t.pass { "pass" } else { "fail" },
            if t.pass { "pass" } else { "FAIL" }
        );
    }
    if any {
        o.push_str("</table></div>");
    }
}

/// Each verdict rule: its threshold, the measured value and whether it passed.
fn verdict_rules_section(o: &mut String, v: &Verdict) {
    o.push_str("<h2>Verdict rules</h2><div class=\"table\"><table><tr><th>rule</th><th>threshold</th><th>measured</th><th>result</th></tr>");
    for rule in &v.rules {
        let cmp = match rule.comparison {
            crate::results::verdict::Comparison::AtMost => "≤",
            crate::results::verdict::Comparison::AtLeast => "≥",
        };
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{cmp} {}</td><td>{}</td><td class=\"{c}\">{}</td></tr>",
            escape(&rule.rule),
            escape(&super::tables::quantity(rule.threshold, &rule.unit)),
            escape(&super::tables::quantity(rule.measured, &rule.unit)),
            if rule.pass { "pass" } else { "FAIL" },
            c = if rule.pass { "pass" } else { "fail" }
        );
    }
    o.push_str("</table></div>");
}

/// One row per class and direction that did I/O, then the read and write totals.
fn classes_section(o: &mut String, r: &RunResult) {
    let spans = super::tables::class_spans(r);
    o.push_str(match spans {
        Some(_) => "<h2>Classes across the steps</h2>",
        None => "<h2>Classes</h2>",
    });
    o.push_str("<div class=\"table\"><table><tr><th>class</th><th>op</th>");
    for c in super::tables::DIR_COLUMNS {
        let _ = write!(o, "<th>{c}</th>");
    }
    o.push_str("</tr>");
    for (name, c) in &r.classes {
        for (op, d) in c.summary().dirs() {
            if d.ops > 0 {
                dir_row(o, name, op.name(), d);
            }
        }
    }
    for (op, d) in [("read", &r.totals.read), ("write", &r.totals.write)] {
        if d.ops > 0 {
            dir_row(o, "(all)", op, d);
        }
    }
    o.push_str("</table></div><p class=\"muted\">MB/s = 10<sup>6</sup> bytes per second; latencies from submission (closed loop) or from the intended issue time (open loop).</p>");
    if let Some(spans) = spans {
        let _ = write!(
            o,
            "<p class=\"muted\" data-spans>Each class over the steps it ran in: {}.</p>",
            escape(&spans.join(" · "))
        );
    }
}

/// The steps of a sequence, one row each, then their charts.
fn steps_section(o: &mut String, steps: &[StepResult]) {
    o.push_str("<h2>Steps</h2><div class=\"table\"><table><tr><th>step</th><th>parameters</th><th>IOPS</th><th>MB/s</th><th>mean</th><th>p99</th><th>CPU busy</th><th>IOPS per CPU %</th><th>notes</th></tr>");
    for s in steps {
        let latency = s.totals.reads_and_writes();
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
            notes.push(match st.steady_at_round {
                Some(n) => format!("steady at round {n}"),
                None => "never steady".into(),
            });
        }
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td></tr>",
            s.index,
            escape(&s.label),
            format_rate(s.totals.iops()),
            format_number(s.totals.bytes_per_s() / 1e6),
            format_known_ns(super::tables::summary_mean(&latency)),
            format_known_ns(super::tables::known_ns(latency.p99)),
            format_pct(s.cpu_busy_pct),
            format_rate(s.ios_per_cpu_pct),
            escape(&notes.join("; "))
        );
    }
    o.push_str("</table></div>");
    step_charts(o, steps);
}

/// The charts over time and the latency distribution, under one heading when there are any.
fn charts_section(o: &mut String, r: &RunResult) {
    if !r.timeseries.is_empty()
        || r.classes
            .values()
            .any(|c| c.read.histogram.is_some() || c.write.histogram.is_some())
    {
        o.push_str("<h2>Charts</h2>");
    }
    time_charts(o, r);
    distribution_chart(o, r);
}

/// Every target: where it is, how it was opened, how it was prepared.
fn targets_section(o: &mut String, r: &RunResult) {
    o.push_str("<h2>Targets</h2><div class=\"table\"><table><tr><th>name</th><th class=\"text\">path</th><th>size</th><th>filesystem</th><th>device</th><th>O_DIRECT</th><th>O_DSYNC</th><th>prepared</th></tr>");
    for t in &r.targets {
        let _ = write!(
            o,
            "<tr><td class=\"text\">{}</td><td class=\"text\"><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&t.name),
            escape(&t.path),
            format_size(t.size_bytes),
            escape(&t.filesystem),
            escape(&t.device.clone().unwrap_or_default()),
            t.direct,
            t.dsync,
            if t.prepare.reused {
                "reused".to_string()
            } else {
                format_seconds(t.prepare.seconds)
            }
        );
    }
    o.push_str("</table></div>");
}

/// What each block device did while measuring, and where its counters and storlab's differ,
/// what that means.
fn devices_section(o: &mut String, r: &RunResult) {
    if !r.devices.is_empty() {
        o.push_str("<h2>Devices</h2><div class=\"table\"><table><tr><th>device</th><th>model</th><th>reads</th><th>writes</th><th>read</th><th>written</th><th>busy</th></tr>");
        for d in &r.devices {
            let model = d.model.clone().unwrap_or_default();
            device_row(o, &[&d.name, &model], d);
        }
        o.push_str("</table></div>");
        for d in &r.devices {
            for note in super::tables::device_notes(r, d) {
                let _ = write!(
                    o,
                    "<p class=\"{}\" data-device-note=\"{}\">{}</p>",
                    if note.foreign { "warn" } else { "muted" },
                    escape(&d.name),
                    escape(&note.text)
                );
            }
        }
    }
}

/// A row of a devices table: the `lead` cells, then the device's reads, writes, bytes read
/// and written, and busy share.
fn device_row(o: &mut String, lead: &[&str], d: &crate::results::DeviceResult) {
    o.push_str("<tr>");
    for c in lead {
        let _ = write!(o, "<td>{}</td>", escape(c));
    }
    let t = &d.delta;
    for c in [
        format_count(t.reads),
        format_count(t.writes),
        format_size(t.read_bytes),
        format_size(t.write_bytes),
        format_pct(t.util_pct),
    ] {
        let _ = write!(o, "<td>{c}</td>");
    }
    o.push_str("</tr>");
}

/// CPU use of storlab and of the machine.
fn cpu_section(o: &mut String, r: &RunResult) {
    let _ = write!(
        o,
        "<h2>CPU</h2><p>{}</p>",
        escape(&super::tables::cpu_sentence(r))
    );
}

#[cfg(test)]
mod tests;
