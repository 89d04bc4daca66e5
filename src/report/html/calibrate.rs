//! A calibration in the HTML report: its best figures, and a heat map of each matrix (small
//! I/Os per second, large MB/s, mean small-I/O latency; outstanding small I/Os across,
//! outstanding large I/Os down), each cell written with the figure every view shows.

use crate::workloads::calibrate::section::{CalibrateResult, Figure, LargeType};
use maud::{Markup, html};

/// Cell size and margins of a heat map, px.
const CELL_W: f64 = 72.0;
const CELL_H: f64 = 30.0;
const LEFT: f64 = 96.0;
const TOP: f64 = 48.0;

/// The section.
pub(super) fn calibrate_section(c: &CalibrateResult) -> Markup {
    let setup = [
        ("run level", format!("{} ({} points)", c.level, c.matrix)),
        ("disks", c.disks.to_string()),
        (
            "small I/O",
            crate::units::format_size(c.small_size_bytes) + " random",
        ),
        (
            "large I/O",
            format!(
                "{} {}",
                crate::units::format_size(c.large_size_bytes),
                match c.large_type {
                    LargeType::Random => "random",
                    LargeType::Sequential => "sequential streams",
                }
            ),
        ),
        ("writes", crate::units::format_pct(c.write_pct)),
        (
            "each point",
            format!(
                "{} warm-up, then {} measured",
                crate::units::format_ms(c.warm_up_ms),
                crate::units::format_ms(c.point_ms)
            ),
        ),
    ];
    html! {
        h2 id="calibration" { "Calibration" }
        div class="table" {
            table data-table="calibrate-summary" {
                @for (k, v) in c.summary_rows() { tr { th { (k) } td { (v) } } }
                @for (k, v) in setup { tr { th { (k) } td { (v) } } }
            }
        }
        @for n in &c.notes { p class="warn" { "Note: " (n) } }
        @if c.grid(Figure::Iops).is_some() {
            @for f in Figure::ALL { (heat_map(c, f)) }
        } @else {
            (points_table(c))
        }
    }
}

/// The points, one a row, when they do not fill a matrix.
fn points_table(c: &CalibrateResult) -> Markup {
    html! {
        p { (c.points.len()) " points, which fill no matrix:" }
        div class="table" {
            table data-table="calibrate-points" {
                tr {
                    th { "small" } th { "large" }
                    @for f in Figure::ALL { th { (f.title()) } }
                }
                @for (small, large, figures) in c.rows() {
                    tr {
                        td { (small) } td { (large) }
                        @for (f, v) in Figure::ALL.iter().zip(figures) {
                            td { (v.map_or_else(|| "—".to_string(), |v| f.text(v))) }
                        }
                    }
                }
            }
        }
    }
}

/// One matrix as a heat map: darker is more (for latency, more is worse).
fn heat_map(c: &CalibrateResult, f: Figure) -> Markup {
    let Some((smalls, larges, cells)) = c.grid(f) else {
        return html! {};
    };
    let values: Vec<f64> = cells.iter().flatten().flatten().copied().collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let hue = if f == Figure::LatencyMs { 12 } else { 212 };
    let shade = |v: f64| {
        let t = if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
        88.0 - 50.0 * t
    };
    let width = LEFT + CELL_W * smalls.len() as f64 + 8.0;
    let height = TOP + CELL_H * larges.len() as f64 + 8.0;
    let id = format!("calibrate-{}", f.suffix());
    let chart = html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox={ "0 0 " (width) " " (height) }
            width=(width) height=(height) role="img" aria-label=(f.title()) {
            text x="4" y="16" class="title" { (f.title()) }
            text x=(LEFT) y="34" font-size="11" { "outstanding small I/Os →" }
            text x="4" y="34" font-size="11" { "large ↓" }
            @for (i, s) in smalls.iter().enumerate() {
                text x=(LEFT + CELL_W * i as f64 + CELL_W / 2.0) y=(TOP - 2.0)
                    text-anchor="middle" font-size="11" { (s) }
            }
            @for (j, (l, row)) in larges.iter().zip(&cells).enumerate() {
                text x=(LEFT - 8.0) y=(TOP + CELL_H * j as f64 + CELL_H / 2.0 + 4.0)
                    text-anchor="end" font-size="11" { (l) }
                @for (i, v) in row.iter().enumerate() {
                    @let x = LEFT + CELL_W * i as f64;
                    @let y = TOP + CELL_H * j as f64;
                    @if let Some(v) = v {
                        @let light = shade(*v);
                        rect x=(x) y=(y) width=(CELL_W - 2.0) height=(CELL_H - 2.0)
                            fill={ "hsl(" (hue) ", 70%, " (format!("{light:.0}")) "%)" } {}
                        text x=(x + CELL_W / 2.0 - 1.0) y=(y + CELL_H / 2.0 + 3.0)
                            text-anchor="middle" font-size="11"
                            fill=(if light < 58.0 { "#ffffff" } else { "#000000" })
                            data-small=(smalls[i]) data-large=(l) { (f.text(*v)) }
                    }
                }
            }
        }
    };
    crate::report::svg::figure(&id, chart)
}
