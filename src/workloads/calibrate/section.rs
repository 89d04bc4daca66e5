//! A calibration's part of a results file: every point's figures (from its step), the IOPS,
//! MB/s and latency matrices (as ORION's `_iops.csv`, `_mbps.csv`, `_lat.csv`), and the
//! summary: the maximum small IOPS and large MB/s with the loads that gave them, the minimum
//! small latency, and the highest small-I/O load whose mean latency stays under the limit.
//! Figures are rounded once, here, to what every view shows (IOPS to 0.1, MB/s to 0.01,
//! latency to 0.001 ms), so the console, the JSON, the CSV files and the HTML report show the
//! same numbers.

use serde::{Deserialize, Serialize};

/// The small-I/O class.
pub(crate) const SMALL: &str = "small";
/// The large-I/O class.
pub(crate) const LARGE: &str = "large";
/// A fall of small IOPS (or large MB/s) by more than this from a lower load at the same other
/// load is noted (storlab's choice).
pub(crate) const DIP_PCT: f64 = 10.0;
/// The cells a calibration's matrix is drawn with whatever its points: every matrix a
/// calibration makes fits (at most 11 loads on each axis, 0 and ten levels). A matrix of more
/// cells is drawn only when it has at most two for each point; otherwise the points are
/// listed, so that what a view writes grows with the points, never with their square.
pub(crate) const MATRIX_CELLS: usize = 121;

/// Large I/O's pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LargeType {
    /// Random large I/Os; the load is the number outstanding.
    Random,
    /// Sequential streams, one I/O outstanding each; the load is the number of streams.
    Sequential,
}

/// The calibration's part of a results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalibrateResult {
    /// The run level: oltp, dss, simple, normal or advanced.
    pub level: String,
    /// The points' shape: small only, large only, basic, detailed, point, row or col.
    pub matrix: String,
    /// Disks or LUNs the limits were derived from.
    pub disks: u32,
    /// Small I/O size, bytes.
    pub small_size_bytes: u64,
    /// Large I/O size, bytes.
    pub large_size_bytes: u64,
    /// Large I/O: random, or sequential streams.
    pub large_type: LargeType,
    /// Share of writes, percent.
    pub write_pct: f64,
    /// Measured time of each point, ms.
    pub point_ms: u64,
    /// Unmeasured warm-up before each point, ms.
    pub warm_up_ms: u64,
    /// Mean small-I/O latency limit, ms.
    pub latency_limit_ms: f64,
    /// Every point that ran, in order.
    pub points: Vec<PointResult>,
    /// The highest small-I/O IOPS, and its load.
    pub max_small_iops: Option<Best>,
    /// The highest large-I/O MB/s (10^6 bytes/s), and its load.
    pub max_large_mb_per_s: Option<Best>,
    /// The lowest mean small-I/O latency, ms, and its load.
    pub min_small_latency_ms: Option<Best>,
    /// Small I/O alone: the highest load whose mean latency is within the limit.
    pub small_load_within_limit: Option<WithinLimit>,
    /// What the figures show that a reader should know (a fall at a higher load).
    pub notes: Vec<String>,
    /// The matrices' CSV files, written beside the results file: IOPS, MB/s, latency.
    #[serde(default)]
    pub csv_files: Vec<String>,
}

/// One point's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PointResult {
    /// Its step's index.
    pub step: usize,
    /// Outstanding small I/Os.
    pub small: u32,
    /// Outstanding large I/Os (random) or streams (sequential).
    pub large: u32,
    /// Small I/Os per second (0.1).
    pub small_iops: f64,
    /// Small I/O MB/s (10^6 bytes/s; 0.01).
    pub small_mb_per_s: f64,
    /// Mean small-I/O latency, ms (0.001); `None` without small I/O.
    pub small_latency_ms: Option<f64>,
    /// Large I/Os per second (0.1).
    pub large_iops: f64,
    /// Large I/O MB/s (10^6 bytes/s; 0.01).
    pub large_mb_per_s: f64,
    /// Mean large-I/O latency, ms (0.001); `None` without large I/O.
    pub large_latency_ms: Option<f64>,
    /// The point was cut short.
    pub interrupted: bool,
}

/// A best figure and the load that gave it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Best {
    /// The figure (its unit in the field's name).
    pub value: f64,
    /// Outstanding small I/Os.
    pub small: u32,
    /// Outstanding large I/Os or streams.
    pub large: u32,
}

/// The highest small-I/O load (small I/O alone) within the latency limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WithinLimit {
    /// Outstanding small I/Os.
    pub small: u32,
    /// Its small I/Os per second.
    pub iops: f64,
    /// Its mean small-I/O latency, ms.
    pub latency_ms: f64,
}

/// A matrix of the calibration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Figure {
    /// Small I/Os per second.
    Iops,
    /// Large MB/s.
    MbPerS,
    /// Mean small-I/O latency, ms.
    LatencyMs,
}

impl Figure {
    /// All three, in the order files and reports show them.
    pub(crate) const ALL: [Figure; 3] = [Figure::Iops, Figure::MbPerS, Figure::LatencyMs];

    /// The suffix of its CSV file (ORION's): `iops`, `mbps`, `lat`.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Figure::Iops => "iops",
            Figure::MbPerS => "mbps",
            Figure::LatencyMs => "lat",
        }
    }

    /// What its cells are.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Figure::Iops => "small I/Os per second",
            Figure::MbPerS => "large I/O MB/s",
            Figure::LatencyMs => "mean small-I/O latency, ms",
        }
    }

    /// A point's cell (`None`: the point has none of that I/O).
    pub(crate) fn of(self, p: &PointResult) -> Option<f64> {
        match self {
            Figure::Iops => (p.small > 0).then_some(p.small_iops),
            Figure::MbPerS => (p.large > 0).then_some(p.large_mb_per_s),
            Figure::LatencyMs => p.small_latency_ms,
        }
    }

    /// A value as every view writes it.
    pub(crate) fn text(self, v: f64) -> String {
        match self {
            Figure::Iops => format!("{v:.1}"),
            Figure::MbPerS => format!("{v:.2}"),
            Figure::LatencyMs => format!("{v:.3}"),
        }
    }
}

/// `v` rounded to `places` decimal places: how every figure of a point is shown.
pub(crate) fn round(v: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (v * f).round() / f
}

/// One point: outstanding small I/Os and outstanding large I/Os (or streams).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct LoadPoint {
    /// Outstanding small I/Os.
    pub small: u32,
    /// Outstanding large I/Os (random) or streams (sequential).
    pub large: u32,
}

/// The point with the highest (`max`) or lowest value of `f` among those that have one.
pub(crate) fn best(points: &[PointResult], f: Figure, max: bool) -> Option<Best> {
    let mut found: Option<Best> = None;
    for p in points {
        let Some(v) = f.of(p) else { continue };
        let better = match found {
            None => true,
            Some(b) if max => v > b.value,
            Some(b) => v < b.value,
        };
        if better {
            found = Some(Best {
                value: v,
                small: p.small,
                large: p.large,
            });
        }
    }
    found
}

/// Small I/O alone: the highest load whose mean latency is at most `limit_ms`, below every
/// load that exceeds it (a load past the first one over the limit does not count).
pub(crate) fn within_limit(points: &[PointResult], limit_ms: f64) -> Option<WithinLimit> {
    let mut alone: Vec<&PointResult> = points
        .iter()
        .filter(|p| p.large == 0 && p.small > 0 && p.small_latency_ms.is_some())
        .collect();
    alone.sort_by_key(|p| p.small);
    let mut found = None;
    for p in alone {
        let latency = p.small_latency_ms?;
        if latency > limit_ms {
            break;
        }
        found = Some(WithinLimit {
            small: p.small,
            iops: p.small_iops,
            latency_ms: latency,
        });
    }
    found
}

/// The loads at which `values` (load, figure; in rising load) fell by more than `pct`
/// percent below the best figure at a lower load.
pub(crate) fn dips(values: &[(u32, f64)], pct: f64) -> Vec<u32> {
    let mut best = f64::NEG_INFINITY;
    let mut out = Vec::new();
    for &(load, v) in values {
        if v < best * (1.0 - pct / 100.0) {
            out.push(load);
        }
        best = best.max(v);
    }
    out
}

/// Notes on falls of small IOPS along each row and of large MB/s along each column, in time
/// linear in the points (and their sort).
fn dip_notes(points: &[PointResult]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut by_row: Vec<(u32, u32, f64)> = (points.iter())
        .filter(|p| p.small > 0)
        .map(|p| (p.large, p.small, p.small_iops))
        .collect();
    by_row.sort_by_key(|x| (x.0, x.1));
    for row in by_row.chunk_by(|a, b| a.0 == b.0) {
        let values: Vec<(u32, f64)> = row.iter().map(|x| (x.1, x.2)).collect();
        for s in dips(&values, DIP_PCT) {
            notes.push(format!(
                "small IOPS fell by more than {DIP_PCT}% from a lower load at {s} outstanding small I/Os with {} large: the storage is past saturation there, or another load disturbed the point",
                row[0].0
            ));
        }
    }
    let mut by_column: Vec<(u32, u32, f64)> = (points.iter())
        .filter(|p| p.large > 0)
        .map(|p| (p.small, p.large, p.large_mb_per_s))
        .collect();
    by_column.sort_by_key(|x| (x.0, x.1));
    for column in by_column.chunk_by(|a, b| a.0 == b.0) {
        let values: Vec<(u32, f64)> = column.iter().map(|x| (x.1, x.2)).collect();
        for l in dips(&values, DIP_PCT) {
            notes.push(format!(
                "large MB/s fell by more than {DIP_PCT}% from a lower load at {l} outstanding large I/Os with {} small: the storage is past saturation there, or another load disturbed the point",
                column[0].0
            ));
        }
    }
    notes
}

impl CalibrateResult {
    /// The section with `points` (a step's each), their summary and notes: `self` holds
    /// what the calibration asked (the room fills it from its configuration).
    pub(crate) fn with_points(self, points: Vec<PointResult>) -> CalibrateResult {
        // A point cut short (the run interrupted in it) has figures of part of a point: it is
        // kept, marked, and left out of the summary.
        let whole: Vec<PointResult> = points.iter().filter(|p| !p.interrupted).copied().collect();
        let mut notes = dip_notes(&whole);
        let cut = points.len() - whole.len();
        if cut > 0 {
            notes.push(format!(
                "{cut} point{} cut short by the interruption {} left out of the best figures",
                if cut == 1 { "" } else { "s" },
                if cut == 1 { "is" } else { "are" }
            ));
        }
        CalibrateResult {
            max_small_iops: best(&whole, Figure::Iops, true),
            max_large_mb_per_s: best(&whole, Figure::MbPerS, true),
            min_small_latency_ms: best(&whole, Figure::LatencyMs, false),
            small_load_within_limit: within_limit(&whole, self.latency_limit_ms),
            notes,
            points,
            ..self
        }
    }

    /// The matrix of `f`: small loads across (columns), large loads down (rows), each cell
    /// `None` where no point ran or the point has none of that I/O. `None` when the points do
    /// not fill a matrix ([`MATRIX_CELLS`]), so that no view grows with the square of the
    /// points: the views then list the points ([`CalibrateResult::rows`]). Made in time linear
    /// in the points and the cells.
    #[allow(clippy::type_complexity)]
    pub(crate) fn grid(&self, f: Figure) -> Option<(Vec<u32>, Vec<u32>, Vec<Vec<Option<f64>>>)> {
        let axis = |get: fn(&PointResult) -> u32| {
            let mut v: Vec<u32> = self.points.iter().map(get).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let smalls = axis(|p| p.small);
        let larges = axis(|p| p.large);
        let cells = smalls.len().saturating_mul(larges.len());
        if cells > MATRIX_CELLS.max(2 * self.points.len()) {
            return None;
        }
        // The first point of each pair of loads, as the matrix shows it.
        let mut at: std::collections::HashMap<(u32, u32), &PointResult> =
            std::collections::HashMap::with_capacity(self.points.len());
        for p in &self.points {
            at.entry((p.small, p.large)).or_insert(p);
        }
        let cells = (larges.iter())
            .map(|&l| {
                (smalls.iter())
                    .map(|&s| at.get(&(s, l)).and_then(|p| f.of(p)))
                    .collect()
            })
            .collect();
        Some((smalls, larges, cells))
    }

    /// The points as every view lists them when they do not fill a matrix: by large load,
    /// then small load; each with its three figures ([`Figure::of`]).
    pub(crate) fn rows(&self) -> Vec<(u32, u32, [Option<f64>; 3])> {
        let mut rows: Vec<_> = (self.points.iter())
            .map(|p| (p.small, p.large, Figure::ALL.map(|f| f.of(p))))
            .collect();
        rows.sort_by_key(|r| (r.1, r.0));
        rows
    }

    /// The summary as every view shows it: (label, text), the figures in [`Figure::text`]'s
    /// form.
    pub(crate) fn summary_rows(&self) -> Vec<(&'static str, String)> {
        let at = |b: &Best| format!("at {} small × {} large outstanding", b.small, b.large);
        let mut rows = Vec::new();
        if let Some(b) = &self.max_small_iops {
            rows.push((
                "max small IOPS",
                format!("{} {}", Figure::Iops.text(b.value), at(b)),
            ));
        }
        if let Some(b) = &self.max_large_mb_per_s {
            rows.push((
                "max large MB/s",
                format!("{} {}", Figure::MbPerS.text(b.value), at(b)),
            ));
        }
        if let Some(b) = &self.min_small_latency_ms {
            rows.push((
                "min small latency",
                format!("{} ms {}", Figure::LatencyMs.text(b.value), at(b)),
            ));
        }
        let limit = crate::units::format_ns(self.latency_limit_ms * 1e6);
        if self.points.iter().any(|p| p.small > 0 && p.large == 0) {
            rows.push((
                "within the limit",
                match &self.small_load_within_limit {
                    Some(w) => format!(
                        "{} outstanding small I/Os: {} IOPS at {} ms mean (limit {limit})",
                        w.small,
                        Figure::Iops.text(w.iops),
                        Figure::LatencyMs.text(w.latency_ms)
                    ),
                    None => format!("no small load alone kept its mean latency within {limit}"),
                },
            ));
        }
        rows
    }

    /// The matrix of `f` as ORION's CSV: a heading row of small loads, then a row per large
    /// load; empty cells where there is no figure. Points that do not fill a matrix are a row
    /// each: small load, large load, figure.
    pub(crate) fn csv(&self, f: Figure) -> String {
        let Some((smalls, larges, cells)) = self.grid(f) else {
            let mut out = format!("small,large,{}\n", f.title().replace(',', ";"));
            let at = Figure::ALL.iter().position(|&g| g == f).unwrap_or(0);
            for (small, large, figures) in self.rows() {
                let text = figures[at].map(|v| f.text(v)).unwrap_or_default();
                out.push_str(&format!("{small},{large},{text}\n"));
            }
            return out;
        };
        let mut out = format!("Large/Small ({})", f.title()).replace(',', ";");
        for s in &smalls {
            out.push_str(&format!(",{s}"));
        }
        out.push('\n');
        for (l, row) in larges.iter().zip(cells) {
            out.push_str(&l.to_string());
            for c in row {
                out.push(',');
                if let Some(v) = c {
                    out.push_str(&f.text(v));
                }
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(small: u32, large: u32, iops: f64, mbps: f64, lat: Option<f64>) -> PointResult {
        PointResult {
            small,
            large,
            small_iops: iops,
            large_mb_per_s: mbps,
            small_latency_ms: lat,
            ..PointResult::default()
        }
    }

    fn simple() -> Vec<PointResult> {
        vec![
            p(1, 0, 100.0, 0.0, Some(10.0)),
            p(2, 0, 190.0, 0.0, Some(10.5)),
            p(3, 0, 250.0, 0.0, Some(12.0)),
            p(4, 0, 260.0, 0.0, Some(21.0)),
            p(5, 0, 262.5, 0.0, Some(19.0)),
            p(0, 1, 0.0, 40.25, None),
            p(0, 2, 0.0, 39.5, None),
        ]
    }

    #[test]
    fn the_best_figures_and_their_loads() {
        let pts = simple();
        let m = best(&pts, Figure::Iops, true).unwrap();
        assert_eq!((m.value, m.small, m.large), (262.5, 5, 0));
        let m = best(&pts, Figure::MbPerS, true).unwrap();
        assert_eq!((m.value, m.small, m.large), (40.25, 0, 1));
        let m = best(&pts, Figure::LatencyMs, false).unwrap();
        assert_eq!((m.value, m.small, m.large), (10.0, 1, 0));
        // Ties keep the first (lowest) load.
        let tie = [p(1, 0, 5.0, 0.0, Some(1.0)), p(2, 0, 5.0, 0.0, Some(1.0))];
        assert_eq!(best(&tie, Figure::Iops, true).unwrap().small, 1);
        assert_eq!(best(&[], Figure::Iops, true), None);
    }

    #[test]
    fn the_highest_load_within_the_limit_stops_at_the_first_over_it() {
        let pts = simple();
        // 4 is over 20 ms; 5 is under again, but past the first load over the limit.
        let w = within_limit(&pts, 20.0).unwrap();
        assert_eq!((w.small, w.iops, w.latency_ms), (3, 250.0, 12.0));
        assert_eq!(within_limit(&pts, 30.0).unwrap().small, 5);
        assert_eq!(within_limit(&pts, 5.0), None);
        // Small I/O with large I/O does not count.
        assert_eq!(within_limit(&[p(1, 1, 9.0, 1.0, Some(1.0))], 20.0), None);
    }

    #[test]
    fn a_point_cut_short_is_kept_but_left_out_of_the_summary() {
        use crate::results::steps::StepResult;
        use crate::stats::summary::ClassSummary;
        let cfg = super::super::resolve(&Default::default(), "t").unwrap();
        let step = |index: usize, ops: u64, interrupted: bool| {
            let mut s = StepResult {
                index,
                interrupted,
                ..StepResult::default()
            };
            s.parameters.insert("group".into(), index as f64);
            let mut c = ClassSummary::default();
            c.read.ops = ops;
            c.read.iops = ops as f64;
            c.read.latency_ns.mean = 1e6;
            s.classes.insert(SMALL.into(), c);
            s
        };
        // The second point, interrupted at once, did almost nothing.
        let r = cfg.section(&[step(0, 500, false), step(1, 3, true)]);
        assert_eq!(r.points.len(), 2);
        assert!(r.points[1].interrupted);
        assert_eq!(r.max_small_iops.unwrap().value, 500.0);
        assert_eq!(r.small_load_within_limit.unwrap().small, 1);
        assert_eq!(
            r.notes.len(),
            1,
            "no fall noted, the cut point said: {:?}",
            r.notes
        );
        assert!(r.notes[0].contains("1 point cut short"), "{:?}", r.notes);
    }

    #[test]
    fn dips_are_falls_below_the_best_lower_load_beyond_the_tolerance() {
        assert!(dips(&[(1, 100.0), (2, 200.0), (3, 195.0), (4, 200.0)], 10.0).is_empty());
        assert_eq!(
            dips(&[(1, 100.0), (2, 200.0), (3, 170.0), (4, 150.0)], 10.0),
            [3, 4]
        );
        // Flat is monotone.
        assert!(dips(&[(1, 400.0), (2, 400.0), (3, 399.0)], 10.0).is_empty());
    }

    #[test]
    fn the_csv_is_orions_matrix_with_empty_cells_where_there_is_no_figure() {
        let r = CalibrateResult {
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
            points: simple(),
            max_small_iops: None,
            max_large_mb_per_s: None,
            min_small_latency_ms: None,
            small_load_within_limit: None,
            notes: Vec::new(),
            csv_files: Vec::new(),
        };
        assert_eq!(
            r.csv(Figure::Iops),
            "Large/Small (small I/Os per second),0,1,2,3,4,5\n0,,100.0,190.0,250.0,260.0,262.5\n1,,,,,,\n2,,,,,,\n"
        );
        assert_eq!(
            r.csv(Figure::MbPerS).lines().nth(1),
            Some("0,,,,,,"),
            "no large I/O at large load 0"
        );
        assert_eq!(r.csv(Figure::MbPerS).lines().nth(2), Some("1,40.25,,,,,"));
        assert_eq!(
            r.csv(Figure::LatencyMs).lines().nth(1),
            Some("0,,10.000,10.500,12.000,21.000,19.000")
        );
        assert_eq!(dip_notes(&r.points), Vec::<String>::new());
    }

    #[test]
    fn points_that_fill_no_matrix_are_listed_one_a_row() {
        let mut r = CalibrateResult {
            level: "advanced".into(),
            matrix: "detailed".into(),
            disks: 1,
            small_size_bytes: 8192,
            large_size_bytes: 1 << 20,
            large_type: LargeType::Random,
            write_pct: 0.0,
            point_ms: 1000,
            warm_up_ms: 0,
            latency_limit_ms: 20.0,
            points: simple(),
            max_small_iops: None,
            max_large_mb_per_s: None,
            min_small_latency_ms: None,
            small_load_within_limit: None,
            notes: Vec::new(),
            csv_files: Vec::new(),
        };
        // Every calibration's matrix is drawn, however few its points.
        assert!(r.grid(Figure::Iops).is_some());
        // 200 points on a diagonal would make a matrix of 40,000 cells: listed instead.
        r.points = (0..200).map(|i| p(i, i, f64::from(i), 0.0, None)).collect();
        assert!(r.grid(Figure::Iops).is_none());
        let rows = r.rows();
        assert_eq!(rows.len(), 200);
        assert_eq!(rows[1], (1, 1, [Some(1.0), Some(0.0), None]));
        let csv = r.csv(Figure::Iops);
        assert_eq!(csv.lines().count(), 201);
        assert_eq!(csv.lines().nth(2), Some("1,1,1.0"));
        // A full matrix of as many cells as points is drawn.
        r.points = (0..400)
            .map(|i| p(i % 20, i / 20, 1.0, 1.0, None))
            .collect();
        let (smalls, larges, cells) = r.grid(Figure::Iops).unwrap();
        assert_eq!((smalls.len(), larges.len(), cells.len()), (20, 20, 20));
    }
}
