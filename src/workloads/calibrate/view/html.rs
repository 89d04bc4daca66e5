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

/// Shades of the scale under a heat map.
const SCALE_STEPS: usize = 6;

/// One matrix as a heat map: darker is more (for latency, more is worse), in proportion to
/// the value from 0 to the largest (so that a spread of 0.098 to 0.138 ms reads as the few
/// shades it is, not as the whole range), with the scale under it; each cell's figure white
/// on the darker shades.
fn heat_map(c: &CalibrateResult, f: Figure) -> Markup {
    let Some((smalls, larges, cells)) = c.grid(f) else {
        return html! {};
    };
    let values: Vec<f64> = cells.iter().flatten().flatten().copied().collect();
    let hi = values.iter().copied().fold(0.0, f64::max);
    let hue = if f == Figure::LatencyMs { 12 } else { 212 };
    let shade = |v: f64| {
        let t = if hi > 0.0 {
            (v / hi).clamp(0.0, 1.0)
        } else {
            0.0
        };
        88.0 - 50.0 * t
    };
    let fill = |light: f64| format!("hsl({hue}, 70%, {light:.0}%)");
    let ink = |light: f64| if light < 60.0 { "on-dark" } else { "on-light" };
    let map_w = CELL_W * smalls.len() as f64;
    let width = LEFT + map_w.max(CELL_W * SCALE_STEPS as f64 / 2.0) + 8.0;
    let scale_y = TOP + CELL_H * larges.len() as f64 + 14.0;
    let height = scale_y + 34.0;
    let step_w = map_w.max(CELL_W * 3.0) / SCALE_STEPS as f64;
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
                            fill=(fill(light)) {}
                        text x=(x + CELL_W / 2.0 - 1.0) y=(y + CELL_H / 2.0 + 3.0)
                            text-anchor="middle" font-size="11" class=(ink(light))
                            data-small=(smalls[i]) data-large=(l) { (f.text(*v)) }
                    }
                }
            }
            // The scale: from 0 to the largest figure, in the shades the cells use.
            text x="4" y=(scale_y + 12.0) font-size="11" { "scale" }
            @for k in 0..SCALE_STEPS {
                @let v = hi * k as f64 / (SCALE_STEPS - 1) as f64;
                @let light = shade(v);
                @let x = LEFT + step_w * k as f64;
                rect class="scale" x=(x) y=(scale_y) width=(step_w - 2.0) height="16"
                    fill=(fill(light)) data-value=(f.text(v)) {}
                text x=(x + step_w / 2.0 - 1.0) y=(scale_y + 12.0) text-anchor="middle"
                    font-size="10" class=(ink(light)) { (f.text(v)) }
            }
        }
    };
    crate::report::svg::figure(&id, chart)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::calibrate::section::PointResult;

    /// The issue's latencies: 0.098 to 0.138 ms. In proportion to 0, they are a few shades,
    /// not the whole range; the figures on dark cells are white by a class the stylesheet
    /// honours (a `fill` attribute loses to `svg text { fill }`), and a scale reads the shades.
    #[test]
    fn a_heat_map_shades_in_proportion_with_a_scale_and_legible_figures() {
        let point = |small, large, ms| PointResult {
            small,
            large,
            small_iops: 1000.0,
            small_latency_ms: Some(ms),
            ..Default::default()
        };
        let c = CalibrateResult {
            level: "simple".into(),
            matrix: "basic".into(),
            disks: 1,
            small_size_bytes: 8192,
            large_size_bytes: 1 << 20,
            large_type: LargeType::Random,
            write_pct: 0.0,
            point_ms: 1000,
            warm_up_ms: 0,
            latency_limit_ms: 20.0,
            points: vec![
                point(1, 0, 0.098),
                point(2, 0, 0.110),
                point(1, 1, 0.120),
                point(2, 1, 0.138),
            ],
            max_small_iops: None,
            max_large_mb_per_s: None,
            min_small_latency_ms: None,
            small_load_within_limit: None,
            notes: Vec::new(),
            csv_files: Vec::new(),
        };
        let svg = heat_map(&c, Figure::LatencyMs).into_string();
        let lights: Vec<f64> = svg
            .match_indices("hsl(12, 70%, ")
            .map(|(i, m)| {
                let rest = &svg[i + m.len()..];
                rest[..rest.find('%').unwrap()].parse().unwrap()
            })
            .collect();
        // 4 cells, then the scale's 6 shades from 0 (88%) to the largest (38%).
        assert_eq!(lights.len(), 4 + SCALE_STEPS, "{svg}");
        let cells = &lights[..4];
        let spread = cells.iter().copied().fold(f64::MIN, f64::max)
            - cells.iter().copied().fold(f64::MAX, f64::min);
        assert!(spread < 16.0, "{cells:?}");
        assert_eq!(lights[4], 88.0);
        assert_eq!(lights[lights.len() - 1], 38.0);
        assert!(svg.contains(r#"class="on-dark""#) && svg.contains(r#"class="on-light""#));
        assert!(svg.contains(">scale<"));
        assert!(crate::report::svg::STYLE.contains("svg text.on-dark { fill: #ffffff; }"));
    }
}
