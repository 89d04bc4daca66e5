//! Cache curves ([`crate::cache::curve::Curve`]): the console table and a self-contained HTML
//! page with the hit-ratio chart.

use crate::cache::curve::Curve;
use crate::cache::model::{Load, Prediction};
use crate::report::html::escape;
use crate::report::svg::{self, Axis, Series};
use crate::units::{format_ns, format_number, format_pct, format_size};
use std::fmt::Write as _;

/// The policies a curve has, in its points' order.
fn policies(c: &Curve) -> Vec<&str> {
    c.points
        .first()
        .map(|p| {
            let mut names: Vec<&str> = p.hit_ratio.keys().map(String::as_str).collect();
            names.sort_by_key(|n| crate::job::cache::CachePolicy::parse(n).ok());
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
    if let Some((assumes, header, rows)) = predictions(c) {
        let _ = write!(o, "\n{assumes}\n\n");
        aligned(&mut o, &header, &rows, 11);
        if rows.iter().flatten().any(|cell| cell.ends_with('*')) {
            o.push_str("* the backing target would carry more I/O than in the run: its latency would be higher than assumed\n");
        }
    }
    if let Some(p) = &c.page_cache {
        let _ = writeln!(
            o,
            "\npage cache: the run's page cache ({}, {} of the data set) served {} of the bytes read; LRU on the sample hits {} at that size",
            format_size(p.cache_bytes),
            format_pct(p.cache_pct),
            format_pct(p.observed_hit_ratio * 100.0),
            format_pct(p.lru_hit_ratio * 100.0)
        );
    }
    o
}

/// The curve as a self-contained HTML page titled `title`.
pub(crate) fn html(c: &Curve, title: &str) -> String {
    let series: Vec<Series> = policies(c)
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
    let chart = svg::line_chart(
        "Hit ratio against cache size",
        &Axis::linear("cache, % of the data set"),
        &Axis::linear("hit ratio, %"),
        &series,
    );
    let t = escape(title);
    let mut o = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{}
table{{border-collapse:collapse}}td,th{{padding:2px 8px;text-align:right}}</style></head><body>\n<h1>{t}</h1>\n<p>{}</p>\n{}\n",
        svg::STYLE,
        escape(&basis(c)),
        svg::tag(&chart, "cache-curve"),
    );
    let (header, rows) = table(c);
    html_table(&mut o, "cache-curve", &header, &rows);
    if let Some((assumes, header, rows)) = predictions(c) {
        let series =
            |what: fn(&Prediction) -> f64| -> Vec<Series> {
                policies(c)
                    .iter()
                    .map(|n| Series {
                        name: n.to_string(),
                        points: (c.no_cache.iter().map(|p| (0.0, what(p))))
                            .chain(c.points.iter().filter_map(|p| {
                                p.predicted.get(*n).map(|pr| (p.cache_pct, what(pr)))
                            }))
                            .collect(),
                    })
                    .collect()
            };
        let x = Axis::linear("cache, % of the data set");
        let iops = svg::line_chart(
            "Predicted IOPS against cache size",
            &x,
            &Axis::linear("IOPS"),
            &series(|p| p.iops),
        );
        let latency = svg::line_chart(
            "Predicted mean latency against cache size",
            &x,
            &Axis::linear("latency, ms"),
            &series(|p| p.latency_ns / 1e6),
        );
        let _ = write!(
            o,
            "<h2>What-if</h2>\n<p>{}</p>\n{}\n{}\n",
            escape(&assumes),
            svg::tag(&iops, "cache-iops"),
            svg::tag(&latency, "cache-latency"),
        );
        html_table(&mut o, "cache-prediction", &header, &rows);
    }
    o.push_str("</body></html>\n");
    o
}

/// `rows` under `header` as an HTML table named `id` (`data-table`).
fn html_table(o: &mut String, id: &str, header: &[String], rows: &[Vec<String>]) {
    let _ = write!(o, "<table data-table=\"{id}\"><tr>");
    for h in header {
        let _ = write!(o, "<th>{}</th>", escape(h));
    }
    o.push_str("</tr>");
    for row in rows {
        o.push_str("<tr>");
        for cell in row {
            let _ = write!(o, "<td>{}</td>", escape(cell));
        }
        o.push_str("</tr>");
    }
    o.push_str("</table>\n");
}
