//! Cache curves ([`crate::cache::curve::Curve`]): the console table and a self-contained HTML
//! page with the hit-ratio chart, both saying how much of the I/O no cache can hit (first
//! references) and where the curves reach that ceiling. The page has the run report's
//! stylesheet; each policy keeps its colour and line style on every chart (LRU solid, ARC a
//! broad translucent line, S3-FIFO dashed), so a policy drawn under another stays visible.
//! The page is built with maud's templates: every figure and name is inserted as text.

use crate::cache::curve::Curve;
use crate::cache::model::{Load, Prediction};
use crate::job::cache::CachePolicy;
use crate::report::svg::{self, Axis, LineOptions, Series};
use crate::units::{format_ns, format_number, format_pct, format_size};
use maud::{Markup, html};
use std::fmt::Write as _;

/// The policies a curve has, in its points' order.
fn policies(c: &Curve) -> Vec<&str> {
    c.points
        .first()
        .map(|p| {
            let mut names: Vec<&str> = p.hit_ratio.keys().map(String::as_str).collect();
            names.sort_by_key(|n| CachePolicy::parse(n).ok());
            names
        })
        .unwrap_or_default()
}

/// What the curve was computed from, in one line.
fn basis(c: &Curve) -> String {
    format!(
        "data set {} in blocks of {} · {} distinct blocks referenced (estimated) · {} references, {} sampled (rate {})",
        format_size(c.data_set_bytes),
        format_size(c.block_bytes),
        format_number(c.distinct_blocks as f64),
        format_number(c.references as f64),
        format_number(c.sampled as f64),
        if c.rate >= 1.0 {
            "1: every block".to_string()
        } else {
            format!("1/{}", format_number((1.0 / c.rate).round()))
        }
    ) + &if c.bypass_sequential {
        format!(
            " · sequential references ({}) bypass the caches",
            format_pct(100.0 * c.sequential_share)
        )
    } else {
        String::new()
    }
}

/// How far below the ceiling a curve may be and still count as at it (1 point).
const AT_CEILING: f64 = 0.01;

/// The ceiling as shown, percent to a tenth: 100 less the first references' share to a tenth,
/// so that the two figures written add up to 100.
fn ceiling_pct(c: &Curve) -> f64 {
    let first_tenths = (1000.0 * c.first_reference_share)
        .round()
        .clamp(0.0, 1000.0);
    (1000.0 - first_tenths) / 10.0
}

/// What no cache can hit, in one line: the share of first references, the ceiling it puts on
/// every curve, and the smallest cache from which every curve stays at it (within 1 point).
/// The two percentages add up to 100 as written. `None` for a curve of no references.
pub(crate) fn ceiling(c: &Curve) -> Option<String> {
    if c.sampled == 0 {
        return None;
    }
    let first = 100.0 - ceiling_pct(c);
    let names = policies(c);
    let at_ceiling = |p: &crate::cache::curve::CurvePoint| {
        names.iter().all(|n| {
            p.hit_ratio
                .get(*n)
                .is_some_and(|h| c.ceiling() - h <= AT_CEILING)
        })
    };
    let from = (0..c.points.len())
        .find(|&i| c.points[i..].iter().all(at_ceiling))
        .map(|i| c.points[i].cache_pct);
    Some(format!(
        "{:.1}% of references are first references to a block{}: no cache of any size can hit them, so no curve goes above {:.1}%{}",
        first,
        if c.rate < 1.0 {
            " (estimated from the sample)"
        } else {
            ""
        },
        ceiling_pct(c),
        from.map_or(String::new(), |pct| format!(
            "; {} within 1 point of that from {}% of the data set on",
            if names.len() == 1 {
                "the curve is"
            } else {
                "every curve is"
            },
            format_number(pct)
        ))
    ))
}

/// The table's header and rows: cache size, % of the data set, hit % per policy.
fn table(c: &Curve) -> (Vec<String>, Vec<Vec<String>>) {
    let names = policies(c);
    let mut header = vec!["cache".to_string(), "% data".to_string()];
    header.extend(names.iter().map(|n| format!("{n} hit%")));
    let rows =
        c.points
            .iter()
            .map(|p| {
                let mut row = vec![
                    format_size(p.cache_bytes),
                    format!("{}%", format_number(p.cache_pct)),
                ];
                row.extend(names.iter().map(|n| {
                    format!("{:.1}", 100.0 * p.hit_ratio.get(*n).copied().unwrap_or(0.0))
                }));
                row
            })
            .collect();
    (header, rows)
}

/// The predictions' header, what they assume, and rows: cache size, % of the data set, then
/// IOPS and mean latency per policy (the first row: no cache).
fn predictions(c: &Curve) -> Option<(String, Vec<String>, Vec<Vec<String>>)> {
    let (m, none) = (c.model.as_ref()?, c.no_cache.as_ref()?);
    let names = policies(c);
    let load = match m.load {
        Load::Closed { concurrency } => {
            format!("closed loop, {} I/Os in flight", format_number(concurrency))
        }
        Load::Open { iops } => format!("open loop at {} IOPS", format_number(iops)),
    };
    let misses = match (m.backing_curve.first(), m.backing_curve.last()) {
        (Some(lo), Some(hi)) => format!(
            "at the target's measured latency for their load ({} points, {} at {} IOPS to {} at {} IOPS)",
            m.backing_curve.len(),
            format_ns(lo.1),
            format_number(lo.0),
            format_ns(hi.1),
            format_number(hi.0)
        ),
        _ => format!("at {} (constant)", format_ns(m.backing_latency_ns)),
    };
    let rule = m.mailboxes.map_or(String::new(), |r| {
        format!(
            "; mailboxes: the most whose rate ({} IOPS each, headroom included) keeps the mean latency within {}",
            format_number(r.iops_per_mailbox),
            format_ns(r.limit_ns)
        )
    });
    let assumes = format!(
        "predicted: hits at {}, misses {misses}, {load}{rule}",
        format_ns(m.cache_latency_ns)
    );
    let mut header = vec!["cache".to_string(), "% data".to_string()];
    for n in &names {
        header.push(format!("{n} IOPS"));
        header.push(format!("{n} lat"));
        if m.mailboxes.is_some() {
            header.push(format!("{n} mbx"));
        }
    }
    let with_mailboxes = m.mailboxes.is_some();
    let cells = |p: &Prediction| {
        let flag = if p.beyond_measured { "*" } else { "" };
        let mut cells = vec![
            format!("{}{flag}", format_number(p.iops.round())),
            format_ns(p.latency_ns),
        ];
        if with_mailboxes {
            cells.push(p.mailboxes.map_or("-".into(), |n| n.to_string()));
        }
        cells
    };
    let mut rows = vec![{
        let mut row = vec!["no cache".to_string(), "0%".to_string()];
        for _ in &names {
            row.extend(cells(none));
        }
        row
    }];
    for p in &c.points {
        let mut row = vec![
            format_size(p.cache_bytes),
            format!("{}%", format_number(p.cache_pct)),
        ];
        for n in &names {
            if let Some(pred) = p.predicted.get(*n) {
                row.extend(cells(pred));
            }
        }
        rows.push(row);
    }
    Some((assumes, header, rows))
}

/// `rows` under `header`, right-aligned (the first column 12 wide, the others `width`).
fn aligned(o: &mut String, header: &[String], rows: &[Vec<String>], width: usize) {
    for row in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        for (i, cell) in row.iter().enumerate() {
            let w = if i == 0 { 12 } else { width };
            let _ = write!(o, "{}{cell:>w$}", if i == 0 { "" } else { " " });
        }
        o.push('\n');
    }
}

/// The curve as a console table: cache size (bytes and % of the data set), hit % per policy;
/// with a model, the predicted IOPS and latency after it ("*": the backing target would carry
/// more than in the run).
pub(crate) fn console(c: &Curve) -> String {
    let (header, rows) = table(c);
    let mut o = format!("cache curve · {}\n\n", basis(c));
    aligned(&mut o, &header, &rows, 9);
    if let Some(line) = ceiling(c) {
        let _ = write!(o, "\n{line}\n");
    }
    if let Some((assumes, header, rows)) = predictions(c) {
        let _ = write!(o, "\n{assumes}\n\n");
        aligned(&mut o, &header, &rows, 11);
        if rows.iter().flatten().any(|cell| cell.ends_with('*')) {
            o.push_str("* the backing target would carry more I/O than in the run: its latency would be higher than assumed\n");
        }
    }
    if let Some(p) = page_cache(c) {
        let _ = writeln!(o, "\npage cache: {p}");
    }
    o
}

/// A buffered run's page cache beside LRU at its size, in one line.
fn page_cache(c: &Curve) -> Option<String> {
    let p = c.page_cache.as_ref()?;
    Some(format!(
        "the run's page cache ({}, {} of the data set) served {} of the bytes read; LRU on the sample hits {} at that size",
        format_size(p.cache_bytes),
        format_pct(p.cache_pct),
        format_pct(p.observed_hit_ratio * 100.0),
        format_pct(p.lru_hit_ratio * 100.0)
    ))
}

/// The colour slot of the ceiling's line (grey).
const CEILING_COLOUR: usize = 7;

/// Policy `name`'s look, the same on every chart: its colour slot, dashed, broad, and the
/// word for it. LRU solid, ARC a broad translucent line, S3-FIFO dashed, so that where curves
/// coincide (ARC and S3-FIFO often do) the one drawn first still shows around and through the
/// one drawn over it. `i`: the slot of a policy without a look of its own.
fn look(name: &str, i: usize) -> (usize, bool, bool, &'static str) {
    match CachePolicy::parse(name) {
        Ok(CachePolicy::Lru) => (0, false, false, "solid"),
        Ok(CachePolicy::Arc) => (1, false, true, "broad"),
        Ok(CachePolicy::S3Fifo) => (2, true, false, "dashed"),
        Err(_) => (i, false, false, "solid"),
    }
}

/// The chart options that give each policy of `names` its [`look`].
fn line_styles(names: &[&str]) -> LineOptions {
    let mut o = LineOptions::default();
    for (i, n) in names.iter().enumerate() {
        let (colour, dashed, thick, _) = look(n, i);
        o.colours.push(colour);
        o.dashed.push(dashed);
        o.thick.push(thick);
    }
    o
}

/// What the line styles mean, under a chart.
fn styles_note(names: &[&str]) -> Markup {
    let looks: Vec<String> = (names.iter().enumerate())
        .map(|(i, n)| format!("{n} {}", look(n, i).3))
        .collect();
    html! {
        p class="muted" {
            "Lines: " (looks.join(", ")) "; where curves coincide, the broad line shows around the others."
        }
    }
}

/// The hit-ratio chart: a line per policy, and the ceiling first references put on them.
fn hit_ratio_chart(c: &Curve, names: &[&str]) -> Markup {
    let mut series: Vec<Series> = names
        .iter()
        .map(|n| Series {
            name: n.to_string(),
            points: c
                .points
                .iter()
                .map(|p| {
                    (
                        p.cache_pct,
                        100.0 * p.hit_ratio.get(*n).copied().unwrap_or(0.0),
                    )
                })
                .collect(),
        })
        .collect();
    let mut options = line_styles(names);
    if ceiling(c).is_some() {
        let top = ceiling_pct(c);
        series.push(Series {
            name: format!("ceiling {top:.1}%: first references miss in any cache"),
            points: vec![(0.0, top), (100.0, top)],
        });
        options.colours.push(CEILING_COLOUR);
        options.dashed.push(true);
        options.thick.push(false);
    }
    svg::line_chart_with(
        "Hit ratio against cache size",
        &Axis::linear("cache, % of the data set"),
        &Axis::linear("hit ratio, %"),
        &series,
        &options,
    )
}

/// The what-if part: what the predictions assume, their charts (IOPS and mean latency against
/// cache size) and their table.
fn what_if(c: &Curve, names: &[&str]) -> Markup {
    let Some((assumes, header, rows)) = predictions(c) else {
        return html! {};
    };
    let series = |what: fn(&Prediction) -> f64| -> Vec<Series> {
        names
            .iter()
            .map(|n| Series {
                name: n.to_string(),
                points: (c.no_cache.iter().map(|p| (0.0, what(p))))
                    .chain(
                        c.points
                            .iter()
                            .filter_map(|p| p.predicted.get(*n).map(|pr| (p.cache_pct, what(pr)))),
                    )
                    .collect(),
            })
            .collect()
    };
    let x = Axis::linear("cache, % of the data set");
    let styles = line_styles(names);
    let iops = svg::line_chart_with(
        "Predicted IOPS against cache size",
        &x,
        &Axis::linear("IOPS"),
        &series(|p| p.iops),
        &styles,
    );
    let latency = svg::line_chart_with(
        "Predicted mean latency against cache size",
        &x,
        &Axis::linear("latency, ms"),
        &series(|p| p.latency_ns / 1e6),
        &styles,
    );
    html! {
        h2 { "What-if" }
        p { (assumes) }
        (svg::figure("cache-iops", iops))
        (svg::figure("cache-latency", latency))
        (html_table("cache-prediction", &header, &rows))
    }
}

/// The curve as a self-contained HTML page titled `title`.
pub(crate) fn html(c: &Curve, title: &str) -> String {
    let names = policies(c);
    let (header, rows) = table(c);
    let body = html! {
        h1 { (title) }
        p class="muted" { (basis(c)) }
        @if let Some(line) = ceiling(c) { p data-ceiling { (line) } }
        (svg::figure("cache-curve", hit_ratio_chart(c, &names)))
        (styles_note(&names))
        (html_table("cache-curve", &header, &rows))
        (what_if(c, &names))
        @if let Some(p) = page_cache(c) { p { (p) } }
    };
    super::html::page(title, super::html::STYLE, body)
}

/// `rows` under `header` as an HTML table named `id` (`data-table`).
fn html_table(id: &str, header: &[String], rows: &[Vec<String>]) -> Markup {
    html! {
        div class="table" {
            table data-table=(id) {
                tr { @for h in header { th { (h) } } }
                @for row in rows {
                    tr { @for cell in row { td { (cell) } } }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::curve::{CurveOptions, SIZES_PCT, SampleFacts, curve};
    use crate::cache::model::ModelInputs;
    use crate::stats::blocks::BlockRef;

    /// 100 references to a data set of 100 blocks whose first references are known: 36
    /// blocks read once, then 8 hot blocks read 8 times each in turn (their first pass is
    /// first references too). 44 first references, so no cache hits more than 56 %; LRU hits
    /// all 56 from a cache of 8 blocks (10 % is the first size with as many).
    fn known(policies: &[CachePolicy]) -> Curve {
        let blocks: Vec<u64> = (8..44).chain((0..64).map(|i| i % 8)).collect();
        assert_eq!(blocks.len(), 100);
        let refs: Vec<BlockRef> = (blocks.iter().enumerate())
            .map(|(i, &block)| BlockRef {
                t_ns: i as u64,
                block,
                ..BlockRef::default()
            })
            .collect();
        let options = CurveOptions {
            policies: policies.to_vec(),
            sizes_pct: SIZES_PCT.to_vec(),
            bypass_sequential: false,
        };
        curve(&refs, SampleFacts::whole(refs.len(), 100), &options)
    }

    #[test]
    fn the_ceiling_of_first_references_is_stated() {
        let lru = known(&[CachePolicy::Lru]);
        assert!((lru.first_reference_share - 0.44).abs() < 1e-12);
        let line = "44.0% of references are first references to a block: no cache of any size can hit them, so no curve goes above 56.0%; the curve is within 1 point of that from 10% of the data set on";
        assert_eq!(ceiling(&lru).as_deref(), Some(line));
        assert!(
            console(&lru).contains(&format!("\n{line}\n")),
            "{}",
            console(&lru)
        );
        // Every policy: the same ceiling, and the page says it too.
        let all = known(&CachePolicy::ALL);
        let text = console(&all);
        assert!(
            text.contains("44.0% of references are first references to a block: no cache of any size can hit them, so no curve goes above 56.0%; every curve is within 1 point of that from "),
            "{text}"
        );
        let page = html(&all, "t");
        assert!(page.contains("<p data-ceiling>44.0% of references are first references"));
        // The chart marks the ceiling: a grey dashed line across the chart, named with it.
        assert!(
            page.contains("<polyline class=\"s7 line dash\" data-series=\"ceiling 56.0%: first references miss in any cache\""),
            "{page}"
        );
        // A curve of no references states none.
        let empty = curve(
            &[],
            SampleFacts::whole(0, 100),
            &CurveOptions {
                policies: vec![CachePolicy::Lru],
                sizes_pct: vec![50.0],
                bypass_sequential: false,
            },
        );
        assert_eq!(ceiling(&empty), None);
        assert!(!html(&empty, "t").contains("ceiling"));
    }

    /// The `class` of the polyline of series `name` in the chart `id` of `page`.
    fn line_class<'a>(page: &'a str, id: &str, name: &str) -> &'a str {
        let chart = page
            .split(&format!("data-chart=\"{id}\""))
            .nth(1)
            .and_then(|rest| rest.split("</figure>").next())
            .unwrap_or_else(|| panic!("no chart {id}"));
        let before = chart
            .split(&format!("\" data-series=\"{name}\" points="))
            .next()
            .filter(|b| b.len() < chart.len())
            .unwrap_or_else(|| panic!("no line {name} in {id}"));
        before.rsplit("<polyline class=\"").next().unwrap()
    }

    #[test]
    fn the_page_has_the_report_stylesheet_and_a_distinct_line_per_policy() {
        let mut c = known(&CachePolicy::ALL);
        c.predict(ModelInputs {
            cache_latency_ns: 100e3,
            backing_latency_ns: 5e6,
            load: Load::Closed { concurrency: 4.0 },
            backing_iops: None,
            backing_curve: Vec::new(),
            mailboxes: None,
        });
        let page = html(&c, "storlab cache-curve: <run>.json");
        // The run report's stylesheet, whole, and the charts' after it.
        let style = |html: &str| {
            let from = html.find("<style>").unwrap() + "<style>".len();
            html[from..html.find("</style>").unwrap()].to_string()
        };
        let report = crate::report::html::render(&crate::results::RunResult::default());
        assert_eq!(style(&page), style(&report));
        assert!(style(&page).ends_with(svg::STYLE));
        assert!(page.contains("<title>storlab cache-curve: &lt;run&gt;.json</title>"));
        assert!(page.contains("<div class=\"table\"><table data-table=\"cache-curve\">"));
        // Each policy its own colour and line style, the same on every chart.
        for id in ["cache-curve", "cache-iops", "cache-latency"] {
            let classes: Vec<&str> = ["lru", "arc", "s3fifo"]
                .iter()
                .map(|n| line_class(&page, id, n))
                .collect();
            assert_eq!(
                classes,
                ["s0 line", "s1 line thick", "s2 line dash"],
                "{id}"
            );
        }
        assert!(page.contains("Lines: lru solid, arc broad, s3fifo dashed"));
        // One policy alone keeps its look.
        let arc = html(&known(&[CachePolicy::Arc]), "t");
        assert_eq!(line_class(&arc, "cache-curve", "arc"), "s1 line thick");
    }
}
