//! Reduced data in the reports: the compression and dedupe ratios a run asked of its written
//! data and those it achieved ([`DataResult`]), in the terminal summary and the HTML report,
//! a line (or row) per step of a sequence. Both views format the same values the same way
//! ([`DataResult::show`], two decimals).

use crate::results::RunResult;
use crate::results::data::DataResult;
use crate::units::format_size;
use maud::{Markup, html};
use std::fmt::Write;

/// Every (label, figures) to show: each step's, or the run's.
fn rows(r: &RunResult) -> Vec<(String, &DataResult)> {
    let steps: Vec<(String, &DataResult)> = (r.steps.iter().flatten())
        .filter_map(|s| {
            s.data
                .as_ref()
                .map(|d| (format!("step {}: {}", s.index + 1, s.label), d))
        })
        .collect();
    if !steps.is_empty() {
        return steps;
    }
    r.data.iter().map(|d| ("run".to_string(), d)).collect()
}

fn sampled(d: &DataResult) -> String {
    format!(
        "{} of {} units of {} sampled",
        d.units_sampled,
        d.units_written,
        format_size(d.unit_bytes)
    )
}

/// The compression achieved at each unit and as a stream: `4 KiB 2.98:1, … stream 3.02:1`
/// (empty for results before 1.19).
fn by_unit(d: &DataResult) -> String {
    let mut parts: Vec<String> = (d.compress_by_unit.iter())
        .map(|u| format!("{} {:.2}:1", format_size(u.unit_bytes), u.compress_achieved))
        .collect();
    parts.extend(
        d.compress_stream_achieved
            .map(|s| format!("stream {s:.2}:1")),
    );
    parts.join(", ")
}

/// The terminal summary's lines.
pub(crate) fn console(out: &mut String, r: &RunResult) {
    for (label, d) in rows(r) {
        let _ = writeln!(
            out,
            "{:<11}{label} · compression {} · dedupe {} · {}",
            "data",
            DataResult::show(d.compress_asked, d.compress_achieved),
            DataResult::show(d.dedupe_asked, d.dedupe_achieved),
            sampled(d)
        );
        let units = by_unit(d);
        if !units.is_empty() {
            let _ = writeln!(out, "{:<11}  compression by unit: {units}", "");
        }
    }
}

/// The HTML report's section.
pub(crate) fn html_section(r: &RunResult) -> Markup {
    let rows = rows(r);
    if rows.is_empty() {
        return html! {};
    }
    let ratio = |v: Option<f64>| v.map_or("not measured".to_string(), |v| format!("{v:.2}:1"));
    html! {
        h2 id="data" { "Data reduction" }
        p class="muted" {
            "Compression: sampled units deflated one by one (flate2, zlib's default level), and the sample deflated in units of 4, 8, 32 and 128 KiB and as one stream. Dedupe: sampled units over distinct sampled units. See docs/methodology.md, \"Data reduction\"."
        }
        div.table { table {
            tr { th.text { "step" } th { "compression asked" } th { "compression achieved" } th { "dedupe asked" } th { "dedupe achieved" } th.text { "by unit" } th.text { "sample" } }
            @for (label, d) in &rows {
                tr {
                    td.text { (label) }
                    td { (format!("{:.2}:1", d.compress_asked)) }
                    td { (ratio(d.compress_achieved)) }
                    td { (format!("{:.2}:1", d.dedupe_asked)) }
                    td { (ratio(d.dedupe_achieved)) }
                    td.text { (by_unit(d)) }
                    td.text { (sampled(d)) }
                }
            }
        } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::steps::StepResult;

    fn figures(c: f64, d: f64) -> DataResult {
        DataResult {
            compress_asked: c,
            compress_achieved: Some(c * 0.987_654),
            dedupe_asked: d,
            dedupe_achieved: Some(d * 1.012_345),
            unit_bytes: 4096,
            units_written: 123_456,
            units_sampled: 2048,
            compress_by_unit: Vec::new(),
            compress_stream_achieved: None,
        }
    }

    /// The numbers `text` shows after each `key`, as written.
    fn numbers(text: &str) -> Vec<f64> {
        text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter_map(|w| w.parse::<f64>().ok())
            .collect()
    }

    #[test]
    fn both_views_show_the_results_files_ratios() {
        let mut r = RunResult {
            data: Some(figures(3.0, 2.0)),
            ..RunResult::default()
        };
        let mut out = String::new();
        console(&mut out, &r);
        let html = html_section(&r).into_string();
        // Read back from the file as written, to two decimals: what each view shows.
        let d = r.data.clone().unwrap();
        let want = [
            d.compress_asked,
            d.compress_achieved.unwrap(),
            d.dedupe_asked,
            d.dedupe_achieved.unwrap(),
        ]
        .map(|v| format!("{v:.2}:1"));
        let c_nums = numbers(&out);
        for w in &want {
            assert!(out.contains(w.as_str()), "{w} in {out}");
            assert!(html.contains(&format!("<td>{w}</td>")), "{w} in {html}");
            let n: f64 = w.trim_end_matches(":1").parse().unwrap();
            assert!(c_nums.contains(&n), "{n} in {out}");
        }
        assert!(
            out.contains("2048 of 123456 units of 4 KiB sampled"),
            "{out}"
        );
        // A sequence: a line and a row per step, each with its own figures.
        r.steps = Some(
            [(1.0, 1.0), (3.0, 1.0)]
                .iter()
                .enumerate()
                .map(|(index, &(c, d))| StepResult {
                    index,
                    label: format!("compress={c}:1"),
                    data: Some(figures(c, d)),
                    ..StepResult::default()
                })
                .collect(),
        );
        let mut out = String::new();
        console(&mut out, &r);
        let html = html_section(&r).into_string();
        assert_eq!(out.lines().count(), 2, "{out}");
        for s in r.steps.iter().flatten() {
            let d = s.data.as_ref().unwrap();
            let line = out.lines().nth(s.index).unwrap();
            assert!(
                line.contains(&DataResult::show(d.compress_asked, d.compress_achieved)),
                "{line}"
            );
            let achieved = format!("<td>{:.2}:1</td>", d.compress_achieved.unwrap());
            assert!(html.contains(&achieved), "{achieved} in {html}");
        }
        // Nothing without reduced data.
        let mut out = String::new();
        console(&mut out, &RunResult::default());
        assert!(out.is_empty());
        assert!(html_section(&RunResult::default()).into_string().is_empty());
    }
}
