//! The HTML report: one self-contained file (inline CSS and SVG, no script, font or image
//! loaded from anywhere), rendered from a results file alone, legible in light and dark mode
//! and when printed.

use super::run_result::{Interrupted, RunResult};
use crate::job::units::{format_size, format_size_approx};
use crate::report::console::{format_ns, format_rate};
use crate::stats::summary::DirSummary;
use std::fmt::Write as _;

const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #5a6370; --line: #d0d7de; --pass: #1a7f37; --fail: #cf222e; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9da7b3; --line: #30363d; --pass: #3fb950; --fail: #f85149; --accent: #58a6ff; } }
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg); background: var(--bg); margin: 2em auto; max-width: 72em; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid var(--line); }
table { border-collapse: collapse; margin: 0.6em 0; } th, td { padding: 0.25em 0.7em; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { font-weight: 600; } td:first-child, th:first-child { text-align: left; }
.muted { color: var(--muted); } .pass { color: var(--pass); font-weight: 700; } .fail { color: var(--fail); font-weight: 700; }
.verdict { font-size: 1.8em; font-weight: 800; } .warn { color: var(--fail); }
svg { max-width: 100%; height: auto; } svg text { fill: var(--fg); font-size: 11px; } svg .axis { stroke: var(--line); } svg .series { fill: none; stroke: var(--accent); stroke-width: 1.5; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } table { break-inside: avoid; } }
";

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

/// A line chart of `points` (x seconds, y value) as inline SVG.
fn chart(title: &str, unit: &str, points: &[(f64, f64)]) -> String {
    let (w, h, pad) = (720.0, 220.0, 48.0);
    let max_x = points.iter().map(|p| p.0).fold(0.0, f64::max).max(1e-9);
    let max_y = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-9);
    let x = |v: f64| pad + v / max_x * (w - 2.0 * pad);
    let y = |v: f64| h - pad + -(v / max_y) * (h - 2.0 * pad);
    let path: Vec<String> = points
        .iter()
        .map(|&(px, py)| format!("{:.1},{:.1}", x(px), y(py)))
        .collect();
    format!(
        "<figure><svg viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{t}\" xmlns=\"http://www.w3.org/2000/svg\">\
<line class=\"axis\" x1=\"{pad}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/><line class=\"axis\" x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{b}\"/>\
<text x=\"{pad}\" y=\"{ty}\">{t} ({u})</text><text x=\"4\" y=\"{top}\">{my}</text><text x=\"4\" y=\"{b}\">0</text>\
<text x=\"{r}\" y=\"{xl}\" text-anchor=\"end\">{mx:.0} s</text>\
<polyline class=\"series\" points=\"{p}\"/></svg></figure>",
        t = escape(title),
        u = escape(unit),
        b = h - pad,
        r = w - pad,
        ty = pad - 16.0,
        top = pad + 4.0,
        my = format_rate(max_y),
        mx = max_x,
        xl = h - pad + 16.0,
        p = path.join(" ")
    )
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
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>",
        escape(&title)
    );
    let _ = write!(o, "<h1>{}</h1>", escape(&title));
    let _ = write!(
        o,
        "<p class=\"muted\">storlab {} · engine {} · {} · {} ({} CPUs, {}) · kernel {} · {} → {} · measured {:.1} s</p>",
        escape(&r.storlab_version),
        escape(&r.engine.name),
        escape(&r.host.hostname),
        escape(&r.host.cpu_model),
        r.host.cpus,
        format_size_approx(r.host.memory_bytes),
        escape(&r.host.kernel),
        escape(&r.started_at),
        escape(&r.ended_at),
        r.measured_ms as f64 / 1e3
    );
    let _ = write!(
        o,
        "<p class=\"muted\">command: <code>{}</code></p>",
        escape(&r.command.join(" "))
    );
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
        for c in super::run_result::DatabaseFigures::COLUMNS {
            let _ = write!(o, "<th>{c}</th>");
        }
        o.push_str("</tr>");
        for d in &x.databases {
            o.push_str("<tr>");
            for c in d.cells() {
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
                escape(&t.purpose),
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
                crate::verdict::Comparison::AtMost => "≤",
                crate::verdict::Comparison::AtLeast => "≥",
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
    o.push_str("<h2>Classes</h2><table><tr><th>class</th><th>op</th><th>IOPS</th><th>MB/s</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th><th>errors</th></tr>");
    for (name, c) in &r.classes {
        for (op, d) in [("read", &c.read), ("write", &c.write), ("flush", &c.flush)] {
            if d.ops > 0 {
                dir_row(&mut o, name, op, d);
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
            let lat = DirSummary::merge(&[&s.totals.read, &s.totals.write], 1.0).latency_ns;
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
            if let Some(l) = s.curve_level_pct.filter(|_| s.kind == "curve-level") {
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
                format_ns(lat.mean),
                format_ns(lat.p99 as f64),
                s.cpu_busy_pct,
                s.ios_per_cpu_pct,
                escape(&notes.join("; "))
            );
        }
        o.push_str("</table>");
    }
    if !r.timeseries.is_empty() {
        let mut t0 = 0.0;
        let mut last = 0.0;
        let points: Vec<(f64, f64, f64)> = r
            .timeseries
            .iter()
            .map(|rec| {
                let t = rec.t_end_ms as f64 / 1e3;
                if t < last {
                    t0 += last;
                }
                last = t;
                let iops = rec.total.read.iops + rec.total.write.iops;
                let p99 = rec
                    .total
                    .read
                    .latency_p99_ns
                    .max(rec.total.write.latency_p99_ns) as f64
                    / 1e6;
                (t0 + t, iops, p99)
            })
            .collect();
        o.push_str("<h2>Over time</h2>");
        o.push_str(&chart(
            "IOPS",
            "I/Os per second",
            &points.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
        ));
        o.push_str(&chart(
            "p99 latency",
            "ms",
            &points.iter().map(|p| (p.0, p.2)).collect::<Vec<_>>(),
        ));
    }
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
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn chart_draws_every_point() {
        let svg = chart(
            "IOPS",
            "I/Os per second",
            &[(1.0, 10.0), (2.0, 20.0), (3.0, 15.0)],
        );
        assert!(svg.contains("<polyline"));
        assert_eq!(svg.matches(',').count(), 3);
        assert!(!svg.contains("http://") || svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    }
}
