//! The HTML report: one self-contained file (inline CSS and SVG, no script, font or image
//! loaded from anywhere), rendered from a results file alone, legible in light and dark mode
//! and when printed.
//!
//! Every chart is a `<figure class="chart" data-chart="ID">` whose series elements carry
//! `data-series="NAME"`. Chart ids (and series names): iops-over-time and mbps-over-time
//! (`total`, plus each class when there are several), latency-over-time (`CLASS DIR mean`,
//! `CLASS DIR p99`), latency-distribution (`CLASS DIR`, one per class and direction with I/Os),
//! cpu-over-time (`storlab user+sys`, `machine busy`, `machine iowait`), device-util-over-time
//! (one per device), steps-iops and steps-mbps (`total`, plus each class when there are
//! several; sequences of two or more steps or with repetitions), curve-latency (`mean`, `p99`;
//! rate curves), steady-rounds (`rounds`, `window`, prefixed by the step label when several
//! steps ran until steady).

use super::svg::{self};
use crate::results::steps::StepKind;
use crate::results::{Interrupted, JobSource, PhaseState, RunResult};
use crate::stats::summary::DirSummary;
use crate::units::{format_ns, format_rate};
use crate::units::{format_size, format_size_approx};
use std::collections::BTreeSet;
use std::fmt::Write as _;

mod charts;

use charts::{distribution_chart, step_charts, step_latency, time_charts};

const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #5a6370; --line: #d0d7de; --pass: #1a7f37; --fail: #cf222e; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9da7b3; --line: #30363d; --pass: #3fb950; --fail: #f85149; --accent: #58a6ff; } }
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg); background: var(--bg); margin: 2em auto; max-width: 72em; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid var(--line); }
table { border-collapse: collapse; margin: 0.6em 0; } th, td { padding: 0.25em 0.7em; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { font-weight: 600; } td:first-child, th:first-child { text-align: left; }
.muted { color: var(--muted); } .pass { color: var(--pass); font-weight: 700; } .fail { color: var(--fail); font-weight: 700; }
.verdict { font-size: 1.8em; font-weight: 800; } .warn { color: var(--fail); }
svg { max-width: 100%; height: auto; } code { overflow-wrap: anywhere; } dl.about { display: grid; grid-template-columns: max-content 1fr; gap: 0.1em 1em; margin: 0.6em 0; } dl.about dt { color: var(--muted); } dl.about dd { margin: 0; }
@media print { :root { color-scheme: light; --fg: #000000; --bg: #ffffff; --muted: #444c56; --line: #c0c7ce; } body { margin: 0; max-width: none; background: #fff; } h2 { break-after: avoid; page-break-after: avoid; } table, figure, dl { break-inside: avoid; page-break-inside: avoid; } }
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
    o.push_str("<h2 id=\"errors\">I/O errors</h2><table><tr><th>target</th><th>read errors</th><th>write errors</th><th>flush errors</th></tr>");
    for t in failing {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&t.name),
            t.errors.read,
            t.errors.write,
            t.errors.flush
        );
    }
    o.push_str("</table>");
    if !r.errors.is_empty() {
        o.push_str("<table><tr><th>t (ms)</th><th>target</th><th>op</th><th>offset</th><th>bytes</th><th>error</th></tr>");
        for e in &r.errors {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                e.t_ms,
                escape(r.targets.get(e.target).map_or("?", |t| t.name.as_str())),
                escape(&e.op),
                e.offset,
                e.len,
                escape(&e.error)
            );
        }
        o.push_str("</table>");
    }
}

/// Data verification: blocks checked, each kind of error, the read-back pass, first errors.
fn verify_section(o: &mut String, r: &RunResult) {
    let Some(v) = &r.verify else { return };
    let _ = write!(
        o,
        "<h2 id=\"verify\">Data verification</h2><table><tr><th>block</th><th>checked</th><th>unchecked</th><th>corrupted</th><th>misdirected</th><th>lost</th><th>torn</th><th>read-back</th></tr><tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td class=\"{}\">{}</td><td class=\"{}\">{}</td><td class=\"{}\">{}</td><td>{}</td></tr></table>",
        crate::units::format_size(v.block_bytes),
        v.blocks_checked,
        v.blocks_unchecked,
        if v.corrupted > 0 { "fail" } else { "pass" },
        v.corrupted,
        if v.misdirected > 0 { "fail" } else { "pass" },
        v.misdirected,
        if v.lost > 0 { "fail" } else { "pass" },
        v.lost,
        if v.torn > 0 { "fail" } else { "pass" },
        v.torn,
        v.read_back.as_ref().map_or_else(
            || "not run".to_string(),
            |b| format!(
                "{}: {} blocks in {:.1} s",
                escape(&b.state.to_string()),
                b.blocks_checked,
                b.seconds
            )
        ),
    );
    if !v.first_errors.is_empty() {
        o.push_str("<table><tr><th>kind</th><th>target</th><th>offset</th><th>expected</th><th>found</th><th>when</th></tr>");
        for e in &v.first_errors {
            let _ = write!(
                o,
                "<tr><td class=\"fail\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} at {} ms</td></tr>",
                e.kind.name(),
                escape(r.targets.get(e.target).map_or("?", |t| t.name.as_str())),
                e.offset,
                escape(&e.expected),
                escape(&e.found),
                escape(&e.phase),
                e.t_ms
            );
        }
        o.push_str("</table>");
    }
}

/// Escapes text for HTML.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn dir_row(out: &mut String, name: &str, op: &str, d: &DirSummary) {
    let l = &d.latency_ns;
    let _ = writeln!(
        out,
        "<tr><td>{}</td><td>{op}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        escape(name),
        format_rate(d.iops),
        d.bytes_per_s / 1e6,
        format_ns(l.mean),
        format_ns(l.p50 as f64),
        format_ns(l.p95 as f64),
        format_ns(l.p99 as f64),
        format_ns(l.p99_9 as f64),
        format_ns(l.max as f64),
        d.errors
    );
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
    let mut rows: Vec<(&str, String)> = vec![("what", escape(&what_ran(r)))];
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
            format_size_approx(r.host.memory_bytes),
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
                format_size_approx(t.size_bytes),
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
            let mut s = format!("{} {:.1} s", escape(&p.name.to_string()), p.seconds);
            if p.state != PhaseState::Completed {
                let _ = write!(s, " ({})", escape(&p.state.to_string()));
            }
            s
        })
        .collect();
    rows.push((
        "how long",
        format!(
            "measured {:.1} s{}",
            r.measured_ms as f64 / 1e3,
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
        let _ = write!(o, "<dt>{k}</dt><dd>{v}</dd>");
    }
    o.push_str("</dl>");
}

/// The report as one HTML document.
pub fn render(r: &RunResult) -> String {
    let mut o = String::new();
    let title = r
        .job
        .description
        .clone()
        .unwrap_or_else(|| "storlab run".to_string());
    let _ = write!(
        o,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}{}</style></head><body>",
        escape(&title),
        svg::STYLE
    );
    let _ = write!(o, "<h1>{}</h1>", escape(&title));
    header(&mut o, r);
    if let Interrupted::Yes(why) = &r.interrupted {
        let _ = write!(o, "<p class=\"fail\">INTERRUPTED: {}</p>", escape(why));
    }
    if let Some(v) = &r.verdict {
        let class = if v.passed() { "pass" } else { "fail" };
        let _ = write!(o, "<p class=\"verdict {class}\">{}</p>", v.result);
    }
    if !r.warnings.is_empty() {
        o.push_str("<h2>Warnings</h2><ul>");
        for w in &r.warnings {
            let _ = write!(o, "<li class=\"warn\">{}</li>", escape(w));
        }
        o.push_str("</ul>");
    }
    if let Some(x) = &r.exchange {
        let _ = write!(
            o,
            "<h2>Exchange {} {} test</h2><table><tr><th>mailboxes</th><td>{}</td></tr><tr><th>mailbox size</th><td>{}</td></tr>\
<tr><th>IOPS per mailbox</th><td>{} ({})</td></tr><tr><th>headroom</th><td>{}%</td></tr><tr><th>target transactional IOPS</th><td>{:.1}</td></tr>\
<tr><th>achieved transactional IOPS</th><td>{:.1}</td></tr><tr><th>databases</th><td>{} × {}{}</td></tr><tr><th>page size</th><td>{}</td></tr>\
<tr><th>threads per database</th><td>{}</td></tr><tr><th>background maintenance</th><td>{}</td></tr>\
<tr><th>initialisation</th><td>{:.1} s{}</td></tr></table>",
            escape(&x.version),
            escape(&x.test),
            x.mailboxes,
            format_size_approx(x.mailbox_size_bytes),
            x.iops_per_mailbox,
            escape(&x.iops_source),
            x.headroom_pct,
            x.target_iops,
            x.achieved_iops,
            x.database_count,
            format_size_approx(x.database_size_bytes),
            if x.capacity_fraction < 1.0 {
                format!(" (built at {}% of real size)", x.capacity_fraction * 100.0)
            } else {
                String::new()
            },
            format_size(x.page_size_bytes),
            x.threads_per_database,
            if x.maintenance { "on" } else { "off" },
            x.initialisation.seconds,
            if x.initialisation.reused {
                ", reused"
            } else {
                ""
            }
        );
        o.push_str("<h2>Databases</h2><table><tr>");
        for c in super::tables::DATABASE_COLUMNS {
            let _ = write!(o, "<th>{c}</th>");
        }
        o.push_str("</tr>");
        for d in &x.databases {
            o.push_str("<tr>");
            for c in super::tables::database_cells(d) {
                let _ = write!(o, "<td>{}</td>", escape(&c));
            }
            o.push_str("</tr>");
        }
        o.push_str("</table>");
        let trials = x
            .thread_trials
            .iter()
            .map(|t| ("threads", t))
            .chain(r.trials.iter().flatten().map(|t| ("search", t)));
        let mut any = false;
        for (kind, t) in trials {
            if !any {
                o.push_str("<h2>Trials</h2><table><tr><th>kind</th><th>purpose</th><th>mailboxes</th><th>threads</th><th>target IOPS</th><th>achieved IOPS</th><th>read avg ms</th><th>log avg ms</th><th>read max ms</th><th>result</th></tr>");
                any = true;
            }
            let _ = write!(
                o,
                "<tr><td>{kind}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.2}</td><td>{:.2}</td><td>{:.1}</td><td class=\"{}\">{}</td></tr>",
                escape(&t.purpose.to_string()),
                t.mailboxes,
                t.threads,
                t.target_iops,
                t.achieved_iops,
                t.db_read_latency_ms,
                t.log_write_latency_ms,
                t.max_read_latency_ms,
                if t.pass { "pass" } else { "fail" },
                if t.pass { "pass" } else { "FAIL" }
            );
        }
        if any {
            o.push_str("</table>");
        }
        if let Some(m) = r.max_mailboxes {
            let _ = write!(
                o,
                "<p class=\"verdict\">Maximum mailboxes that pass: {m}</p>"
            );
        }
    }
    if let Some(v) = &r.verdict {
        o.push_str("<h2>Verdict rules</h2><table><tr><th>rule</th><th>threshold</th><th>measured</th><th>result</th></tr>");
        for rule in &v.rules {
            let cmp = match rule.comparison {
                crate::results::verdict::Comparison::AtMost => "≤",
                crate::results::verdict::Comparison::AtLeast => "≥",
            };
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{cmp} {:.3} {u}</td><td>{:.3} {u}</td><td class=\"{c}\">{}</td></tr>",
                escape(&rule.rule),
                rule.threshold,
                rule.measured,
                if rule.pass { "pass" } else { "FAIL" },
                u = escape(&rule.unit),
                c = if rule.pass { "pass" } else { "fail" }
            );
        }
        o.push_str("</table>");
    }
    errors_section(&mut o, r);
    verify_section(&mut o, r);
    o.push_str("<h2>Classes</h2><table><tr><th>class</th><th>op</th><th>IOPS</th><th>MB/s</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th><th>errors</th></tr>");
    for (name, c) in &r.classes {
        for (op, d) in c.summary().dirs() {
            if d.ops > 0 {
                dir_row(&mut o, name, op.name(), d);
            }
        }
    }
    for (op, d) in [("read", &r.totals.read), ("write", &r.totals.write)] {
        if d.ops > 0 {
            dir_row(&mut o, "(all)", op, d);
        }
    }
    o.push_str("</table><p class=\"muted\">MB/s = 10<sup>6</sup> bytes per second; latencies from submission (closed loop) or from the intended issue time (open loop).</p>");
    if let Some(steps) = &r.steps {
        o.push_str("<h2>Steps</h2><table><tr><th>step</th><th>parameters</th><th>IOPS</th><th>MB/s</th><th>mean</th><th>p99</th><th>CPU %</th><th>IO/CPU %</th><th>notes</th></tr>");
        for s in steps {
            let (mean, p99) = step_latency(s);
            let mut notes = Vec::new();
            if let Some(rep) = &s.repetitions {
                notes.push(format!(
                    "{} runs, 95% CI {}–{} IOPS, CV {:.1}%",
                    rep.runs.len(),
                    format_rate(rep.iops.ci95_low),
                    format_rate(rep.iops.ci95_high),
                    rep.iops.cv_pct
                ));
            }
            if let Some(l) = s.curve_level_pct.filter(|_| s.kind == StepKind::CurveLevel) {
                notes.push(format!("curve {l}%"));
            }
            if let Some(st) = &s.steady {
                notes.push(match st.steady_at_round {
                    Some(n) => format!("steady at round {n}"),
                    None => "never steady".into(),
                });
            }
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.0}</td><td>{}</td></tr>",
                s.index,
                escape(&s.label),
                format_rate(s.totals.iops()),
                s.totals.bytes_per_s() / 1e6,
                format_ns(mean),
                format_ns(p99),
                s.cpu_busy_pct,
                s.ios_per_cpu_pct,
                escape(&notes.join("; "))
            );
        }
        o.push_str("</table>");
        step_charts(&mut o, steps);
    }
    if !r.timeseries.is_empty()
        || r.classes
            .values()
            .any(|c| c.read.histogram.is_some() || c.write.histogram.is_some())
    {
        o.push_str("<h2>Charts</h2>");
    }
    time_charts(&mut o, r);
    distribution_chart(&mut o, r);
    o.push_str("<h2>Targets</h2><table><tr><th>name</th><th>path</th><th>size</th><th>filesystem</th><th>device</th><th>O_DIRECT</th><th>O_DSYNC</th><th>prepared</th></tr>");
    for t in &r.targets {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&t.name),
            escape(&t.path),
            format_size_approx(t.size_bytes),
            escape(&t.filesystem),
            escape(&t.device.clone().unwrap_or_default()),
            t.direct,
            t.dsync,
            if t.prepare.reused {
                "reused".to_string()
            } else {
                format!("{:.1} s", t.prepare.seconds)
            }
        );
    }
    o.push_str("</table>");
    if !r.devices.is_empty() {
        o.push_str("<h2>Devices</h2><table><tr><th>device</th><th>model</th><th>reads</th><th>writes</th><th>read bytes</th><th>written bytes</th><th>busy %</th></tr>");
        for d in &r.devices {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td></tr>",
                escape(&d.name),
                escape(&d.model.clone().unwrap_or_default()),
                d.delta.reads,
                d.delta.writes,
                format_size_approx(d.delta.read_bytes),
                format_size_approx(d.delta.write_bytes),
                d.delta.util_pct
            );
        }
        o.push_str("</table>");
    }
    let c = &r.host_cpu;
    let _ = write!(
        o,
        "<h2>CPU</h2><p>storlab {:.1}% user, {:.1}% system (of one CPU) · machine {:.1}% user, {:.1}% system, {:.1}% iowait, {:.1}% idle</p>",
        c.process_user_pct,
        c.process_system_pct,
        c.system_user_pct,
        c.system_system_pct,
        c.system_iowait_pct,
        c.system_idle_pct
    );
    o.push_str("</body></html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::charts::record_times;
    use super::*;
    use crate::results::steps::RunFigures;
    use crate::results::steps::{Repetitions, SteadyResult, StepResult};
    use crate::stats::histogram::Histogram;
    use crate::stats::repetition::spread;
    use crate::stats::timeseries::IntervalClass;
    use crate::stats::timeseries::{IntervalDir, IntervalRecord};
    use serde_json::json;

    #[test]
    fn what_ran_is_the_recorded_source_and_flags() {
        use crate::results::Invocation;
        let mut r = result();
        r.invocation = Invocation {
            source: JobSource::File {
                path: "job.toml".into(),
            },
            flags: vec!["--verify".into()],
        };
        // The command line says nothing the header re-parses.
        r.command = vec![
            "storlab".into(),
            "run".into(),
            "--verify".into(),
            "job.toml".into(),
        ];
        assert_eq!(what_ran(&r), "job file job.toml, changed by --verify");
        r.invocation = Invocation {
            source: JobSource::Default {
                file: "examples/quickstart.toml".into(),
            },
            flags: Vec::new(),
        };
        assert_eq!(what_ran(&r), "default job (examples/quickstart.toml)");
        r.invocation.source = JobSource::Preset {
            name: "hba-scaling".into(),
        };
        assert_eq!(what_ran(&r), "preset hba-scaling");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }

    fn dir(ops: u64) -> serde_json::Value {
        json!({
            "ops": ops, "bytes": ops * 4096, "errors": 0, "iops": ops as f64 / 2.0,
            "bytes_per_s": ops as f64 * 2048.0,
            "latency_ns": {
                "min": 10, "mean": 500.0, "max": 9000, "stddev": 1.0, "p50": 400, "p90": 600,
                "p95": 700, "p99": 1000, "p99_9": 3000, "p99_99": 8000
            }
        })
    }

    /// A plain run of two classes: `a` reads and writes, `b` only reads; histograms for all
    /// three, two runs' worth of time series.
    fn result() -> RunResult {
        let class = |r: u64, w: u64| json!({"read": dir(r), "write": dir(w), "flush": dir(0)});
        let cpu = json!({
            "process_user_pct": 1.0, "process_system_pct": 2.0, "system_user_pct": 3.0,
            "system_system_pct": 4.0, "system_iowait_pct": 5.0, "system_idle_pct": 88.0
        });
        let with_durability = |mut c: serde_json::Value| {
            c["write_durability"] = json!("none");
            c
        };
        let mut v = crate::results::sample_json("null", &["a", "b"]);
        v["command"] = json!(["storlab", "run", "--preset", "oltp-<x>", "-q"]);
        v["job"]["description"] = json!("test <job>");
        v["warnings"] = json!(["a <warning>"]);
        v["host_cpu"] = cpu;
        v["totals"] = class(20, 10);
        v["classes"] =
            json!({"a": with_durability(class(10, 10)), "b": with_durability(class(10, 0))});
        let mut r: RunResult = serde_json::from_value(v).expect("a valid results file");
        let mut h = Histogram::new();
        for ns in [1_000, 2_000, 5_000, 100_000] {
            h.record(ns);
        }
        for c in r.classes.values_mut() {
            for d in [&mut c.read, &mut c.write, &mut c.flush] {
                d.histogram = Some(h.encode());
            }
        }
        let d = IntervalDir {
            ops: 5,
            bytes: 20480,
            iops: 5.0,
            bytes_per_s: 20480.0,
            latency_mean_ns: 800.0,
            latency_p99_ns: 2000,
            ..Default::default()
        };
        let both = IntervalClass {
            read: d,
            write: d,
            flush: IntervalDir::default(),
        };
        for run in 0..2 {
            for k in 1..=3u64 {
                let mut rec = IntervalRecord {
                    index: k - 1,
                    phase: crate::stats::timeseries::IntervalPhase::Measure,
                    step: Some(run),
                    t_end_ms: k * 1000,
                    interval_ms: 1000,
                    total: both,
                    ..Default::default()
                };
                rec.classes.insert("a".into(), both);
                rec.devices.insert("sda".into(), Default::default());
                r.timeseries.push(rec);
            }
        }
        r
    }

    /// Every chart id on the page, in order.
    fn charts(html: &str) -> Vec<&str> {
        html.split("data-chart=\"")
            .skip(1)
            .map(|s| s.split('"').next().unwrap())
            .collect()
    }

    /// The SVG of chart `id`.
    fn chart<'a>(html: &'a str, id: &str) -> &'a str {
        let start = html
            .find(&format!("data-chart=\"{id}\""))
            .unwrap_or_else(|| panic!("no chart {id}"));
        let end = start + html[start..].find("</figure>").unwrap();
        &html[start..end]
    }

    /// The data-series names of a chart, each with its drawn points (polyline) or bar.
    fn series_of(svg: &str) -> Vec<(String, String)> {
        svg.split("data-series=\"")
            .skip(1)
            .map(|s| {
                let name = s.split('"').next().unwrap().to_string();
                let points = s
                    .split_once("points=\"")
                    .filter(|_| s.find("points=\"") < s.find("/>"))
                    .map(|(_, p)| p.split('"').next().unwrap().to_string())
                    .unwrap_or_else(|| "bar".into());
                (name, points)
            })
            .collect()
    }

    #[test]
    fn distribution_has_one_series_per_class_and_direction_with_ops() {
        let html = render(&result());
        let s = series_of(chart(&html, "latency-distribution"));
        let names: Vec<&str> = s.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(names, ["a read", "a write", "b read"]);
        for (_, points) in &s {
            // 0, 10, 25, 50, 75 and the maximum (at the last of 4 I/Os: 75%, merged).
            assert!(points.split(' ').count() >= 4, "{points}");
        }
    }

    #[test]
    fn time_charts_cover_every_series_continuously() {
        let r = result();
        let html = render(&r);
        assert_eq!(
            charts(&html),
            [
                "iops-over-time",
                "mbps-over-time",
                "latency-over-time",
                "cpu-over-time",
                "device-util-over-time",
                "latency-distribution"
            ]
        );
        let names = |id| {
            series_of(chart(&html, id))
                .into_iter()
                .map(|s| s.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(names("iops-over-time"), ["total", "a", "b"]);
        assert_eq!(
            names("latency-over-time"),
            ["a read mean", "a read p99", "a write mean", "a write p99",],
            "b has no interval figures: no empty series"
        );
        assert_eq!(
            names("cpu-over-time"),
            ["storlab user+sys", "machine busy", "machine iowait"]
        );
        assert_eq!(names("device-util-over-time"), ["sda"]);
        for (name, points) in series_of(chart(&html, "iops-over-time")) {
            assert_eq!(points.split(' ').count(), 6, "{name}");
        }
        assert_eq!(record_times(&r.timeseries), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        for id in charts(&html) {
            for (name, points) in series_of(chart(&html, id)) {
                assert!(!points.is_empty(), "{id}: {name}");
            }
        }
    }

    #[test]
    fn step_charts_only_for_sequences() {
        let plain = render(&result());
        for id in ["steps-iops", "steps-mbps", "curve-latency", "steady-rounds"] {
            assert!(!plain.contains(&format!("data-chart=\"{id}\"")), "{id}");
        }

        let mut r = result();
        let step = |i: usize, bs: f64, iops: f64| {
            let mut s = StepResult {
                index: i,
                label: format!("block_size={bs}"),
                kind: StepKind::Step,
                ..Default::default()
            };
            s.parameters.insert("block_size".into(), bs);
            s.parameters.insert("workers".into(), 1.0);
            s.totals.read.iops = iops;
            s.totals.read.bytes_per_s = iops * bs;
            let runs = [iops * 0.9, iops * 1.1];
            s.repetitions = Some(Repetitions {
                runs: runs
                    .iter()
                    .map(|&v| RunFigures {
                        iops: v,
                        ..Default::default()
                    })
                    .collect(),
                iops: spread(&runs),
                mb_per_s: spread(&runs.map(|v| v * bs / 1e6)),
                ..Default::default()
            });
            s
        };
        r.steps = Some(vec![step(0, 4096.0, 1000.0), step(1, 65536.0, 300.0)]);
        let html = render(&r);
        let iops = chart(&html, "steps-iops");
        assert_eq!(series_of(iops)[0].0, "total");
        assert!(iops.contains(">64KiB<"), "block sizes label the x axis");
        assert_eq!(iops.matches("class=\"errbar\"").count(), 6);
        assert!(html.contains("data-chart=\"steps-mbps\""));
        assert!(!html.contains("data-chart=\"curve-latency\""));

        // Two cycled parameters: bars per step label.
        let mut r2 = r.clone();
        for (s, w) in r2.steps.as_mut().unwrap().iter_mut().zip([1.0, 2.0]) {
            s.parameters.insert("workers".into(), w);
        }
        let html = render(&r2);
        assert!(
            chart(&html, "steps-iops").contains("<rect class=\"s0 fill\" data-series=\"total\"")
        );

        // A rate curve and a steady-state step.
        let mut curve = Vec::new();
        for (i, pct) in [(1, 50.0), (2, 90.0)] {
            let mut s = StepResult {
                index: i,
                kind: StepKind::CurveLevel,
                curve_level_pct: Some(pct),
                target_iops: Some(pct * 10.0),
                ..Default::default()
            };
            s.totals.read = serde_json::from_value(dir(pct as u64)).unwrap();
            s.totals.read.latency_ns.p99 = 1000 * i as u64;
            curve.push(s);
        }
        curve.push(StepResult {
            index: 3,
            kind: StepKind::Step,
            steady: Some(SteadyResult {
                rounds_iops: vec![10.0, 20.0, 19.0, 20.0, 21.0],
                steady_at_round: Some(4),
                window: None,
                window_rounds: 3,
            }),
            ..Default::default()
        });
        r.steps = Some(curve);
        let html = render(&r);
        let c = series_of(chart(&html, "curve-latency"));
        assert_eq!(
            c.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(),
            ["mean", "p99"]
        );
        assert!(c.iter().all(|s| s.1.split(' ').count() == 2));
        let st = series_of(chart(&html, "steady-rounds"));
        assert_eq!(st[0].0, "rounds");
        assert_eq!(st[0].1.split(' ').count(), 5);
        assert_eq!(st[1].0, "window");
        assert_eq!(st[1].1.split(' ').count(), 3, "rounds 2 to 4");
        assert!(
            !html.contains("data-chart=\"steps-iops\""),
            "one step: no per-step chart"
        );
    }

    #[test]
    fn self_contained_and_escaped() {
        let html = render(&result());
        for bad in [
            "<script", "src=", "href=", "url(", "@import", "<img", "<link",
        ] {
            assert!(!html.contains(bad), "{bad}");
        }
        assert_eq!(
            html.matches("http").count(),
            html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
        assert!(html.contains("test &lt;job&gt;"));
        assert!(html.contains("preset oltp-&lt;x&gt;"));
        assert!(!html.contains("<warning>"));
        assert!(html.contains(svg::STYLE));
    }
}
