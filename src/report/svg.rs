//! Charts as inline SVG, drawn by hand (no script, no font, nothing external): line charts
//! (linear or log axes, several series) and grouped bar charts (with optional error bars).
//! Colours come from CSS classes `s0`…`s7` so the page's light or dark style applies.

use std::fmt::Write as _;

/// One line of a line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// (x, y) points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// An axis: its label and whether it is logarithmic.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Label, with its unit.
    pub label: String,
    /// Log scale (base 10).
    pub log: bool,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: &str) -> Axis {
        Axis {
            label: label.into(),
            log: false,
        }
    }
    /// A logarithmic axis.
    pub fn log(label: &str) -> Axis {
        Axis {
            label: label.into(),
            log: true,
        }
    }
}

/// One group member of a bar chart: a value per category, with optional (low, high) error bars.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    /// Legend name.
    pub name: String,
    /// One value per category.
    pub values: Vec<f64>,
    /// Error bar per category (low, high), when known.
    pub errors: Vec<Option<(f64, f64)>>,
}

const W: f64 = 760.0;
const H: f64 = 260.0;
const L: f64 = 64.0;
const R: f64 = 16.0;
const T: f64 = 28.0;
const B: f64 = 44.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.3}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.3}M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.3}k", v / 1e3)
    } else if a >= 1.0 || a == 0.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.3e}")
    }
    .replace(".000", "")
}

struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
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
        if log {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf(hi.log10().ceil().max(lo.log10() + 1.0));
        } else {
            lo = lo.min(0.0);
            if hi <= lo {
                hi = lo + 1.0;
            }
        }
        Scale { lo, hi, log }
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
            let (a, b) = (self.lo.log10() as i32, self.hi.log10() as i32);
            (a..=b).map(|e| 10f64.powi(e)).collect()
        } else {
            (0..=4)
                .map(|i| self.lo + (self.hi - self.lo) * i as f64 / 4.0)
                .collect()
        }
    }
}

fn frame(out: &mut String, title: &str, x: &Axis, y: &Axis, ys: &Scale) {
    let _ = write!(
        out,
        "<figure class=\"chart\"><svg viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{t}\" xmlns=\"http://www.w3.org/2000/svg\"><text class=\"title\" x=\"{L}\" y=\"16\">{t}</text>",
        t = esc(title)
    );
    for v in ys.ticks() {
        let py = H - B - ys.pos(v) * (H - T - B);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{L}\" y1=\"{py:.1}\" x2=\"{x2}\" y2=\"{py:.1}\"/><text class=\"tick\" x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\">{}</text>",
            short(v),
            x2 = W - R,
            tx = L - 6.0,
            ty = py + 4.0
        );
    }
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{L}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/><line class=\"axis\" x1=\"{L}\" y1=\"{T}\" x2=\"{L}\" y2=\"{b}\"/><text class=\"label\" x=\"{cx}\" y=\"{ly}\" text-anchor=\"middle\">{xl}</text><text class=\"label\" transform=\"translate(12 {cy}) rotate(-90)\" text-anchor=\"middle\">{yl}</text>",
        b = H - B,
        r = W - R,
        cx = (L + W - R) / 2.0,
        ly = H - 6.0,
        cy = (T + H - B) / 2.0,
        xl = esc(&x.label),
        yl = esc(&y.label)
    );
}

fn legend(out: &mut String, names: &[&str]) {
    let mut x = L + 8.0;
    for (i, n) in names.iter().enumerate() {
        let _ = write!(
            out,
            "<rect class=\"s{c} fill\" x=\"{x:.1}\" y=\"{y}\" width=\"10\" height=\"10\"/><text class=\"tick\" x=\"{tx:.1}\" y=\"{ty}\">{}</text>",
            esc(n),
            c = i % 8,
            y = T - 2.0,
            tx = x + 14.0,
            ty = T + 7.0
        );
        x += 24.0 + 7.0 * n.chars().count() as f64;
    }
}

/// A line chart of several series.
pub fn line_chart(title: &str, x: &Axis, y: &Axis, series: &[Series]) -> String {
    let xs = Scale::new(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
        x.log,
    );
    let ys = Scale::new(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        y.log,
    );
    let mut out = String::new();
    frame(&mut out, title, x, y, &ys);
    for v in xs.ticks() {
        let px = L + xs.pos(v) * (W - L - R);
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{px:.1}\" y=\"{ty}\" text-anchor=\"middle\">{}</text>",
            short(v),
            ty = H - B + 14.0
        );
    }
    for (i, s) in series.iter().enumerate() {
        let pts: Vec<String> = s
            .points
            .iter()
            .filter(|p| {
                p.0.is_finite() && p.1.is_finite() && (!y.log || p.1 > 0.0) && (!x.log || p.0 > 0.0)
            })
            .map(|&(px, py)| {
                format!(
                    "{:.1},{:.1}",
                    L + xs.pos(px) * (W - L - R),
                    H - B - ys.pos(py) * (H - T - B)
                )
            })
            .collect();
        let _ = write!(
            out,
            "<polyline class=\"s{} line\" data-series=\"{}\" points=\"{}\"/>",
            i % 8,
            esc(&s.name),
            pts.join(" ")
        );
    }
    legend(
        &mut out,
        &series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
    );
    out.push_str("</svg></figure>");
    out
}

/// A grouped bar chart: one group per category, one bar per [`Bars`].
pub fn bar_chart(title: &str, categories: &[String], y: &Axis, bars: &[Bars]) -> String {
    let ys = Scale::new(
        bars.iter().flat_map(|b| {
            b.values
                .iter()
                .copied()
                .chain(b.errors.iter().flatten().map(|e| e.1))
        }),
        y.log,
    );
    let mut out = String::new();
    frame(&mut out, title, &Axis::linear(""), y, &ys);
    let n = categories.len().max(1) as f64;
    let group = (W - L - R) / n;
    let bw = (group * 0.8) / bars.len().max(1) as f64;
    for (ci, c) in categories.iter().enumerate() {
        let gx = L + group * ci as f64 + group * 0.1;
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            gx + group * 0.4,
            H - B + 14.0,
            esc(c)
        );
        for (bi, b) in bars.iter().enumerate() {
            let v = b.values.get(ci).copied().unwrap_or(0.0);
            let top = H - B - ys.pos(v) * (H - T - B);
            let x0 = gx + bw * bi as f64;
            let _ = write!(
                out,
                "<rect class=\"s{} fill\" data-series=\"{}\" x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
                bi % 8,
                esc(&b.name),
                bw * 0.9,
                (H - B - top).max(0.0)
            );
            if let Some(Some((lo, hi))) = b.errors.get(ci) {
                let (y1, y2) = (
                    H - B - ys.pos(*lo) * (H - T - B),
                    H - B - ys.pos(*hi) * (H - T - B),
                );
                let cx = x0 + bw * 0.45;
                let _ = write!(
                    out,
                    "<line class=\"errbar\" x1=\"{cx:.1}\" y1=\"{y1:.1}\" x2=\"{cx:.1}\" y2=\"{y2:.1}\"/>"
                );
            }
        }
    }
    legend(
        &mut out,
        &bars.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(),
    );
    out.push_str("</svg></figure>");
    out
}

/// CSS for the charts (the colours of series `s0`…`s7` in light and dark mode).
pub const STYLE: &str = "
svg text { fill: var(--fg); font-size: 11px; } svg .title { font-weight: 600; font-size: 12px; }
svg .axis { stroke: var(--muted); } svg .grid { stroke: var(--line); stroke-dasharray: 2 3; }
svg .line { fill: none; stroke-width: 1.6; } svg .errbar { stroke: var(--fg); stroke-width: 1.2; }
.s0 { --c: #0969da; } .s1 { --c: #cf222e; } .s2 { --c: #1a7f37; } .s3 { --c: #9a6700; }
.s4 { --c: #8250df; } .s5 { --c: #bf3989; } .s6 { --c: #1b7c83; } .s7 { --c: #57606a; }
@media (prefers-color-scheme: dark) { .s0 { --c: #58a6ff; } .s1 { --c: #ff7b72; } .s2 { --c: #3fb950; } .s3 { --c: #d29922; } .s4 { --c: #bc8cff; } .s5 { --c: #f778ba; } .s6 { --c: #39c5cf; } .s7 { --c: #8b949e; } }
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
        let svg = line_chart("IOPS", &Axis::linear("s"), &Axis::log("IOPS"), &s);
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
        );
        assert_eq!(svg.matches("data-series=\"A\"").count(), 2);
        assert_eq!(svg.matches("errbar").count(), 1);
    }
}
