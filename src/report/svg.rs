//! Charts as inline SVG, drawn by hand (no script, no font, nothing external): line charts
//! (linear or log axes, several series, optional dashes, markers, error bars, custom x tick
//! labels, a fixed x range and shaded bands such as ramps) and grouped bar charts (with
//! optional error bars). Tick numbers are written by [`crate::units`]; a label under the x
//! axis that would be cut at the SVG's edge ends (or starts) at its tick instead. Colours come from CSS
//! classes `s0`…`s7` so the page's light or dark style applies. Every series element carries
//! `data-series="NAME"`; [`figure`] puts a chart in `<figure class="chart" data-chart="ID">`.
//!
//! The SVG is built with maud's templates, so every name and label (a class, a device, a
//! step's label, all from a results file) is escaped as it is written; coordinates are written
//! to a tenth of a pixel ([`Px`]).

use crate::units::{format_number, format_rate};
use maud::{Markup, html};
use std::fmt;

/// One line of a line chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    /// Legend name.
    pub name: String,
    /// (x, y) points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// An axis: its label and whether it is logarithmic.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    /// Label, with its unit.
    pub label: String,
    /// Log scale (base 10).
    pub log: bool,
}

impl Axis {
    /// A linear axis.
    pub(crate) fn linear(label: &str) -> Axis {
        Axis {
            label: label.into(),
            log: false,
        }
    }
    /// A logarithmic axis.
    pub(crate) fn log(label: &str) -> Axis {
        Axis {
            label: label.into(),
            log: true,
        }
    }
}

/// One group member of a bar chart: a value per category, with optional (low, high) error bars.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bars {
    /// Legend name.
    pub name: String,
    /// One value per category.
    pub values: Vec<f64>,
    /// Error bar per category (low, high), when known.
    pub errors: Vec<Option<(f64, f64)>>,
}

/// A stretch of the x axis shaded under the series (a run's ramp), labelled at its top.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Band {
    /// Where it starts and ends, in x axis units.
    pub from: f64,
    /// Where it ends.
    pub to: f64,
    /// Its label (`ramp`), also its `data-band` attribute.
    pub label: String,
}

/// Drawing options of [`line_chart_with`]; per-series vectors are indexed like the series
/// (missing entries take the default).
#[derive(Debug, Clone, Default)]
pub(crate) struct LineOptions {
    /// Tick labels of the x axis at these positions instead of evenly spaced numbers (the
    /// axis then spans them too).
    pub x_ticks: Option<Vec<(f64, String)>>,
    /// The x axis spans exactly this range (a linear axis: ticks at round values inside it)
    /// instead of the data rounded out to round values.
    pub x_range: Option<(f64, f64)>,
    /// Shaded stretches of the x axis, drawn under the series.
    pub bands: Vec<Band>,
    /// Formats the y tick values (default: [`number`], `1500`, `15.2k`).
    pub y_format: Option<fn(f64) -> String>,
    /// Colour slot of each series (default: its index).
    pub colours: Vec<usize>,
    /// Dashed line.
    pub dashed: Vec<bool>,
    /// Thick line (to highlight part of another series).
    pub thick: Vec<bool>,
    /// Error bars (low, high) aligned with each series' points.
    pub errors: Vec<Vec<Option<(f64, f64)>>>,
    /// Dots on every point (always drawn for series of 30 points or fewer).
    pub markers: bool,
}

const W: f64 = 760.0;
const L: f64 = 64.0;
const R: f64 = 16.0;
const T: f64 = 28.0;
/// Height of the plot area.
const PH: f64 = 190.0;
/// Bottom of the plot area.
const PB: f64 = T + PH;
/// Space under the plot for tick labels and the axis label.
const B: f64 = 40.0;
/// Height of one legend row.
const LEGEND_ROW: f64 = 16.0;
/// Width of one character of tick text (11 px), estimated high: wide glyphs (`%`, `µ`) are
/// about 0.95 em, digits 0.64 em, and the widest common fonts' averages stay under 0.68 em.
pub(crate) const TICK_CHAR_WIDTH: f64 = 7.5;
/// Space kept between text and the SVG's edges.
const EDGE: f64 = 2.0;

/// A coordinate in the SVG, written to a tenth of a pixel (`217.4`).
struct Px(f64);

impl fmt::Display for Px {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.1}", self.0)
    }
}

/// A number of a tick label, as [`crate::units`] writes numbers: at most 4 significant digits,
/// `k`, `M` and `G` from 10 000 (`0.50`, `2.50`, `1500`, `15.2k`).
pub(crate) fn number(v: f64) -> String {
    if v.abs() >= 1e4 {
        format_rate(v)
    } else {
        format_number(v)
    }
}

/// The estimated width of tick text ([`TICK_CHAR_WIDTH`] a character).
pub(crate) fn text_width(text: &str) -> f64 {
    TICK_CHAR_WIDTH * text.chars().count() as f64
}

/// Where a label under the x axis goes for a tick at `x`: centred on it, unless that would
/// cut it at an edge of the SVG; then it ends (or starts) at the tick.
fn x_label_at(x: f64, label: &str) -> &'static str {
    let half = text_width(label) / 2.0;
    if x + half > W - EDGE {
        "end"
    } else if x - half < EDGE {
        "start"
    } else {
        "middle"
    }
}

/// `99.900000000` → `99.9`, `2.00` → `2`.
fn trim_zeros(s: &str) -> String {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    if !num.contains('.') || unit.starts_with('e') {
        return s.to_string();
    }
    let num = num.trim_end_matches('0').trim_end_matches('.');
    format!("{num}{unit}")
}

/// "Nines" of a percentile, the x of a percentile plot: `-log10(1 - p/100)`, so that 90, 99
/// and 99.9 are evenly spaced (1, 2, 3). Infinite for 100.
pub(crate) fn nines(percentile: f64) -> f64 {
    -(1.0 - percentile / 100.0).log10()
}

/// Tick labels of a percentile axis in nines up to `max_nines`: 0%, 50%, 90%, 99%, 99.9%…
pub(crate) fn nines_ticks(max_nines: f64) -> Vec<(f64, String)> {
    let top = max_nines.ceil().clamp(1.0, 9.0) as i32;
    let mut out = vec![(0.0, "0%".to_string()), (nines(50.0), "50%".to_string())];
    for k in 1..=top {
        let p = 100.0 - 100.0 * 10f64.powi(-k);
        out.push((k as f64, format!("{}%", trim_zeros(&format!("{p:.9}")))));
    }
    out
}

/// A chart over time (seconds) in its figure `id`: one named line per `(name, points)`.
pub(crate) fn time_chart(
    id: &str,
    title: &str,
    y: &str,
    series: Vec<(&str, Vec<(f64, f64)>)>,
    options: &LineOptions,
) -> Markup {
    let series: Vec<Series> = series
        .into_iter()
        .map(|(name, points)| Series {
            name: name.into(),
            points,
        })
        .collect();
    let time = Axis::linear("time (s)");
    figure(
        id,
        line_chart_with(title, &time, &Axis::linear(y), &series, options),
    )
}

/// A chart in its `<figure class="chart" data-chart="ID">`, so tests and readers can find it.
pub(crate) fn figure(id: &str, chart: Markup) -> Markup {
    html! {
        figure class="chart" data-chart=(id) { (chart) }
    }
}

struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    step: f64,
}

/// A round step near `span / 4`: 1, 2, 2.5 or 5 times a power of ten.
fn nice_step(span: f64) -> f64 {
    let raw = span / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    let k = if n <= 1.0 {
        1.0
    } else if n <= 2.0 {
        2.0
    } else if n <= 2.5 {
        2.5
    } else if n <= 5.0 {
        5.0
    } else {
        10.0
    };
    k * mag
}

impl Scale {
    fn new(values: impl Iterator<Item = f64>, log: bool) -> Scale {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (if log { 1.0 } else { 0.0 }, 1.0);
        }
        let mut step = 0.0;
        if log {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf(hi.log10().ceil().max(lo.log10() + 1.0));
        } else {
            lo = lo.min(0.0);
            if hi <= lo {
                hi = lo + 1.0;
            }
            step = nice_step(hi - lo);
            lo = (lo / step).floor() * step;
            hi = (hi / step - 1e-9).ceil() * step;
        }
        Scale { lo, hi, log, step }
    }
    /// A linear scale from `lo` to `hi` exactly (ticks at round values inside).
    fn spanning(lo: f64, hi: f64) -> Scale {
        let hi = if hi > lo { hi } else { lo + 1.0 };
        Scale {
            lo,
            hi,
            log: false,
            step: nice_step(hi - lo),
        }
    }
    /// 0..=1 position of `v`.
    fn pos(&self, v: f64) -> f64 {
        if self.log {
            let v = v.max(self.lo);
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (
                self.lo.log10().round() as i32,
                self.hi.log10().round() as i32,
            );
            let mut out = Vec::new();
            for e in a..=b {
                let d = 10f64.powi(e);
                out.push(d);
                if b - a <= 2 && e < b {
                    out.push(2.0 * d);
                    out.push(5.0 * d);
                }
            }
            out
        } else {
            let first = (self.lo / self.step - 1e-9).ceil() as i64;
            let last = (self.hi / self.step + 1e-9).floor() as i64;
            (first..=last).map(|k| self.step * k as f64).collect()
        }
    }
}

fn px(xs: &Scale, v: f64) -> f64 {
    L + xs.pos(v) * (W - L - R)
}

fn py(ys: &Scale, v: f64) -> f64 {
    PB - ys.pos(v) * PH
}

/// Legend entries laid out in rows under the plot: (x, row) of each, and the row count.
fn legend_layout(names: &[&str]) -> (Vec<(f64, usize)>, usize) {
    let (mut x, mut row) = (L, 0);
    let mut out = Vec::new();
    for n in names {
        let w = 24.0 + 6.5 * n.chars().count() as f64;
        if x + w > W - R && x > L {
            x = L;
            row += 1;
        }
        out.push((x, row));
        x += w;
    }
    (out, if names.is_empty() { 0 } else { row + 1 })
}

fn height(names: &[&str]) -> f64 {
    PB + B + legend_layout(names).1 as f64 * LEGEND_ROW + 6.0
}

/// The SVG of a chart `h` high: its title, the y axis' grid lines and tick labels (written by
/// `yf`), both axes with their labels, then `plot`, what the chart draws.
fn frame(
    title: &str,
    x: &Axis,
    y: &Axis,
    ys: &Scale,
    h: f64,
    yf: fn(f64) -> String,
    plot: Markup,
) -> Markup {
    html! {
        svg viewBox={ "0 0 " (W) " " (h) } role="img" aria-label=(title) xmlns="http://www.w3.org/2000/svg" {
            text class="title" x=(L) y="16" { (title) }
            @for v in ys.ticks() {
                @let at = py(ys, v);
                line class="grid" x1=(L) y1=(Px(at)) x2=(W - R) y2=(Px(at)) {}
                text class="tick" x=(L - 6.0) y=(Px(at + 4.0)) text-anchor="end" { (yf(v)) }
            }
            line class="axis" x1=(L) y1=(PB) x2=(W - R) y2=(PB) {}
            line class="axis" x1=(L) y1=(T) x2=(L) y2=(PB) {}
            text class="label" x=((L + W - R) / 2.0) y=(PB + 32.0) text-anchor="middle" { (x.label) }
            text class="label" transform={ "translate(12 " (T + PH / 2.0) ") rotate(-90)" } text-anchor="middle" { (y.label) }
            (plot)
        }
    }
}

fn legend(names: &[&str], colours: &[usize], dashed: &[bool]) -> Markup {
    let (pos, _) = legend_layout(names);
    html! {
        @for (i, (n, (x, row))) in names.iter().zip(pos).enumerate() {
            @let c = colours.get(i).copied().unwrap_or(i) % 8;
            @let y = PB + B + row as f64 * LEGEND_ROW;
            @if self::dashed(dashed, i) {
                line class={ "s" (c) " line dash" } x1=(Px(x)) y1=(Px(y + 5.0)) x2=(Px(x + 12.0)) y2=(Px(y + 5.0)) {}
            } @else {
                rect class={ "s" (c) " fill" } x=(Px(x)) y=(Px(y)) width="10" height="10" {}
            }
            text class="tick" x=(Px(x + 15.0)) y=(Px(y + 9.0)) { (n) }
        }
    }
}

/// The x axis' grid lines and tick labels, no label cut at the SVG's edges.
fn x_ticks(xs: &Scale, ticks: Vec<(f64, String)>) -> Markup {
    html! {
        @for (v, label) in ticks {
            @let x0 = px(xs, v);
            line class="grid" x1=(Px(x0)) y1=(T) x2=(Px(x0)) y2=(PB) {}
            text class="tick" x=(Px(x0)) y=(PB + 14.0) text-anchor=(x_label_at(x0, &label)) { (label) }
        }
    }
}

/// Shaded stretches of the plot (ramps), each labelled at its top, under the series.
fn bands(xs: &Scale, bands: &[Band]) -> Markup {
    html! {
        @for b in bands {
            @let (x0, x1) = (px(xs, b.from.max(xs.lo)), px(xs, b.to.min(xs.hi)));
            @if x1 - x0 >= 0.5 {
                rect class="band" data-band=(b.label) x=(Px(x0)) y=(T) width=(Px(x1 - x0)) height=(PH) {}
                text class="band-label" x=(Px((x0 + x1) / 2.0)) y=(T + 11.0) text-anchor="middle" { (b.label) }
            }
        }
    }
}

/// An error bar at `cx` from `y1` to `y2`, with a cap 8 px wide at each end.
fn error_bar(cx: f64, y1: f64, y2: f64) -> Markup {
    let (a, b) = (cx - 4.0, cx + 4.0);
    html! {
        line class="errbar" x1=(Px(cx)) y1=(Px(y1)) x2=(Px(cx)) y2=(Px(y2)) {}
        line class="errbar" x1=(Px(a)) y1=(Px(y1)) x2=(Px(b)) y2=(Px(y1)) {}
        line class="errbar" x1=(Px(a)) y1=(Px(y2)) x2=(Px(b)) y2=(Px(y2)) {}
    }
}

/// Whether series `i` is dashed: as asked, else when its colour is a repeat (past the 8th).
fn dashed(asked: &[bool], i: usize) -> bool {
    asked.get(i).copied().unwrap_or((i / 8) % 2 == 1)
}

/// The classes of series `i`'s line: its colour slot `c`, dashed and thick as `opts` say.
fn line_class(opts: &LineOptions, i: usize, c: usize) -> String {
    let mut class = format!("s{c} line");
    if dashed(&opts.dashed, i) {
        class.push_str(" dash");
    }
    if opts.thick.get(i).copied().unwrap_or(false) {
        class.push_str(" thick");
    }
    class
}

/// A line chart of several series.
pub(crate) fn line_chart(title: &str, x: &Axis, y: &Axis, series: &[Series]) -> Markup {
    line_chart_with(title, x, y, series, &LineOptions::default())
}

/// A line chart of several series, drawn as `opts` says.
pub(crate) fn line_chart_with(
    title: &str,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    opts: &LineOptions,
) -> Markup {
    let tick_xs: Vec<f64> = opts.x_ticks.iter().flatten().map(|t| t.0).collect();
    let xs = match opts.x_range {
        Some((lo, hi)) if !x.log => Scale::spanning(lo, hi),
        _ => Scale::new(
            series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .chain(tick_xs.iter().copied()),
            x.log,
        ),
    };
    let ys = Scale::new(
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(
                opts.errors
                    .iter()
                    .flatten()
                    .flatten()
                    .flat_map(|e| [e.0, e.1]),
            ),
        y.log,
    );
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    let ticks: Vec<(f64, String)> = match &opts.x_ticks {
        Some(t) => t.clone(),
        None => xs.ticks().into_iter().map(|v| (v, number(v))).collect(),
    };
    let ok = |p: &(f64, f64)| {
        p.0.is_finite() && p.1.is_finite() && (!y.log || p.1 > 0.0) && (!x.log || p.0 > 0.0)
    };
    let plot = html! {
        (x_ticks(&xs, ticks))
        (bands(&xs, &opts.bands))
        @for (i, s) in series.iter().enumerate() {
            @let c = opts.colours.get(i).copied().unwrap_or(i) % 8;
            @let pts: Vec<(f64, f64)> = (s.points.iter())
                .filter(|p| ok(p))
                .map(|&(a, b)| (px(&xs, a), py(&ys, b)))
                .collect();
            @let text: Vec<String> = pts.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect();
            polyline class=(line_class(opts, i, c)) data-series=(s.name) points=(text.join(" ")) {}
            // Markers carry the series too: a series of one point is drawn by its marker.
            @if opts.markers || pts.len() <= 30 {
                @for (a, b) in &pts {
                    circle class={ "s" (c) " fill marker" } data-series=(s.name) cx=(Px(*a)) cy=(Px(*b)) r="2.5" {}
                }
            }
            @if let Some(errs) = opts.errors.get(i) {
                @for (p, e) in s.points.iter().zip(errs) {
                    @if let (true, Some((lo, hi))) = (ok(p), e) {
                        (error_bar(px(&xs, p.0), py(&ys, *lo), py(&ys, *hi)))
                    }
                }
            }
        }
        (legend(&names, &opts.colours, &opts.dashed))
    };
    let yf = opts.y_format.unwrap_or(number);
    frame(title, x, y, &ys, height(&names), yf, plot)
}

/// A grouped bar chart: one group per category, one bar per [`Bars`].
pub(crate) fn bar_chart(title: &str, categories: &[String], y: &Axis, bars: &[Bars]) -> Markup {
    let ys = Scale::new(
        bars.iter().flat_map(|b| {
            b.values
                .iter()
                .copied()
                .chain(b.errors.iter().flatten().map(|e| e.1))
        }),
        y.log,
    );
    let names: Vec<&str> = bars.iter().map(|b| b.name.as_str()).collect();
    let n = categories.len().max(1) as f64;
    let group = (W - L - R) / n;
    let bw = (group * 0.8) / bars.len().max(1) as f64;
    // Long labels in narrow groups: smaller text, or every other one on a second line.
    let longest = categories
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let stagger = longest * 6.0 > group;
    let plot = html! {
        @for (ci, c) in categories.iter().enumerate() {
            @let gx = L + group * ci as f64 + group * 0.1;
            @let second_line = if stagger && ci % 2 == 1 { 11.0 } else { 0.0 };
            @let cx = gx + group * 0.4;
            text class="tick" x=(Px(cx)) y=(PB + 14.0 + second_line) text-anchor=(x_label_at(cx, c)) { (c) }
            @for (bi, b) in bars.iter().enumerate() {
                @let top = py(&ys, b.values.get(ci).copied().unwrap_or(0.0));
                @let x0 = gx + bw * bi as f64;
                rect class={ "s" (bi % 8) " fill" } data-series=(b.name) x=(Px(x0)) y=(Px(top)) width=(Px(bw * 0.9)) height=(Px((PB - top).max(0.0))) {}
                @if let Some(Some((lo, hi))) = b.errors.get(ci) {
                    (error_bar(x0 + bw * 0.45, py(&ys, *lo), py(&ys, *hi)))
                }
            }
        }
        (legend(&names, &[], &[]))
    };
    let x = Axis::linear("");
    frame(title, &x, y, &ys, height(&names), number, plot)
}

/// CSS for the charts (the colours of series `s0`…`s7` in light and dark mode); it uses the
/// page's `--fg`, `--muted` and `--line` variables.
pub(crate) const STYLE: &str = "
figure.chart { margin: 0.8em 0; break-inside: avoid; page-break-inside: avoid; }
svg text { fill: var(--fg); font-size: 11px; } svg .title { font-weight: 600; font-size: 12px; } svg text.on-dark { fill: #ffffff; } svg text.on-light { fill: #000000; }
svg .axis { stroke: var(--muted); } svg .grid { stroke: var(--line); stroke-dasharray: 2 3; }
svg .line { fill: none; stroke-width: 1.6; } svg .dash { stroke-dasharray: 5 3; } svg .thick { stroke-width: 5; stroke-opacity: 0.45; }
svg .errbar { stroke: var(--fg); stroke-width: 1.2; }
svg .band { fill: var(--muted); fill-opacity: 0.14; } svg .band-label { fill: var(--muted); font-size: 10px; }
.s0 { --c: #0969da; } .s1 { --c: #cf222e; } .s2 { --c: #1a7f37; } .s3 { --c: #9a6700; }
.s4 { --c: #8250df; } .s5 { --c: #bf3989; } .s6 { --c: #1b7c83; } .s7 { --c: #57606a; }
@media (prefers-color-scheme: dark) { .s0 { --c: #58a6ff; } .s1 { --c: #ff7b72; } .s2 { --c: #3fb950; } .s3 { --c: #d29922; } .s4 { --c: #bc8cff; } .s5 { --c: #f778ba; } .s6 { --c: #39c5cf; } .s7 { --c: #8b949e; } }
@media print { .s0 { --c: #0969da; } .s1 { --c: #cf222e; } .s2 { --c: #1a7f37; } .s3 { --c: #9a6700; } .s4 { --c: #8250df; } .s5 { --c: #bf3989; } .s6 { --c: #1b7c83; } .s7 { --c: #57606a; } }
svg .line { stroke: var(--c); } svg .fill { fill: var(--c); }
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_chart_has_every_series_and_point() {
        let s = vec![
            Series {
                name: "read".into(),
                points: vec![(1.0, 10.0), (2.0, 20.0), (3.0, 15.0)],
            },
            Series {
                name: "write".into(),
                points: vec![(1.0, 1.0), (2.0, 2.0)],
            },
        ];
        let svg = line_chart("IOPS", &Axis::linear("s"), &Axis::log("IOPS"), &s).into_string();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("data-series=\"read\""));
        let read = svg
            .split("data-series=\"read\" points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(read.split(' ').count(), 3);
    }

    #[test]
    fn bar_chart_draws_bars_and_error_bars() {
        let svg = bar_chart(
            "IOPS per block size",
            &["4KiB".into(), "8KiB".into()],
            &Axis::linear("IOPS"),
            &[Bars {
                name: "A".into(),
                values: vec![10.0, 5.0],
                errors: vec![Some((9.0, 11.0)), None],
            }],
        )
        .into_string();
        assert_eq!(svg.matches("data-series=\"A\"").count(), 2);
        assert_eq!(svg.matches("class=\"errbar\"").count(), 3);
    }

    #[test]
    fn nines_space_percentiles_evenly() {
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        let t = nines_ticks(2.5);
        let labels: Vec<&str> = t.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0%", "50%", "90%", "99%", "99.9%"]);
    }

    #[test]
    fn options_and_tag() {
        let s = [Series {
            name: "p99".into(),
            points: vec![(0.0, 1e5), (1.0, 1e6)],
        }];
        let svg = line_chart_with(
            "lat",
            &Axis::linear("percentile"),
            &Axis::log("latency"),
            &s,
            &LineOptions {
                x_ticks: Some(nines_ticks(1.0)),
                dashed: vec![true],
                ..Default::default()
            },
        );
        let f = figure("x", svg).into_string();
        assert!(f.contains(">90%<"));
        assert!(f.contains("line dash"));
        assert!(f.starts_with("<figure class=\"chart\" data-chart=\"x\"><svg "));
        assert!(f.ends_with("</svg></figure>"));
    }

    #[test]
    fn tick_numbers_have_at_most_four_significant_digits() {
        assert_eq!(number(1500.0), "1500");
        assert_eq!(number(15_250.0), "15.2k");
        assert_eq!(number(2.0), "2");
        assert_eq!(number(2.5), "2.50");
        assert_eq!(number(0.0), "0");
        assert_eq!(trim_zeros("99.900000000"), "99.9");
    }

    #[test]
    fn a_fixed_range_ends_where_asked_with_its_bands_and_labels_inside() {
        assert_eq!(Scale::spanning(0.0, 32.0).ticks(), [0.0, 10.0, 20.0, 30.0]);
        assert_eq!(Scale::spanning(0.0, 3.0).ticks(), [0.0, 1.0, 2.0, 3.0]);
        let s = [Series {
            name: "total".into(),
            points: vec![(1.0, 1.0), (32.0, 2.0)],
        }];
        let svg = line_chart_with(
            "IOPS",
            &Axis::linear("time (s)"),
            &Axis::linear("IOPS"),
            &s,
            &LineOptions {
                x_range: Some((0.0, 32.0)),
                bands: vec![Band {
                    from: 0.0,
                    to: 2.0,
                    label: "ramp".into(),
                }],
                ..Default::default()
            },
        )
        .into_string();
        assert!(svg.contains(">30</text>") && !svg.contains(">40</text>"));
        // The last point (32 s) sits at the right end of the axis.
        assert!(svg.contains(&format!(" {:.1},", W - R)), "{svg}");
        assert_eq!(svg.matches("data-band=\"ramp\"").count(), 1);
        assert_eq!(x_label_at(W - R, "99.9999%"), "end");
        assert_eq!(x_label_at((L + W) / 2.0, "99.9999%"), "middle");
        assert_eq!(x_label_at(4.0, "a long label"), "start");
    }

    #[test]
    fn long_legends_wrap() {
        let names: Vec<String> = (0..20).map(|i| format!("class number {i}")).collect();
        let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let (_, rows) = legend_layout(&refs);
        assert!(rows > 1);
        assert!(height(&refs) > height(&["a"]));
    }
}
