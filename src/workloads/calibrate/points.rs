//! The load points of a calibration: ORION's run levels (`oltp`, `dss`, `simple`, `normal`,
//! `advanced`), its matrix shapes (`basic`, `detailed`, `point`, `row`, `col`) and the load
//! levels on each axis, stepped from 1 to the limit. Pure.

pub(crate) use super::section::LoadPoint;
use super::section::{LARGE, PointResult, SMALL, round};
use crate::results::steps::StepResult;
use crate::stats::summary::ClassSummary;
use serde::{Deserialize, Serialize};

/// ORION's default measured time of a point, ms (`-duration`, 60 s).
pub(crate) const ORION_POINT_MS: u64 = 60_000;
/// Load levels on an axis at most: up to this many, every load from 1 to the limit; above it,
/// this many spread evenly from 1 to the limit (storlab's choice, to bound a run's length).
pub(crate) const MAX_LEVELS: u32 = 10;

/// A run level, by ORION's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Level {
    /// Small random I/O alone, at rising loads (the maximum IOPS).
    Oltp,
    /// Large I/O alone, at rising loads (the maximum MB/s).
    Dss,
    /// Small alone at rising loads, then large alone.
    Simple,
    /// Every combination of small and large loads.
    Normal,
    /// Every parameter set by hand.
    Advanced,
}

impl Level {
    /// Parses a level's name.
    pub(crate) fn parse(s: &str) -> Result<Level, String> {
        Ok(match s {
            "oltp" => Level::Oltp,
            "dss" => Level::Dss,
            "simple" => Level::Simple,
            "normal" => Level::Normal,
            "advanced" => Level::Advanced,
            o => {
                return Err(format!(
                    "unknown level `{o}`; use oltp, dss, simple, normal or advanced"
                ));
            }
        })
    }

    /// Its name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Level::Oltp => "oltp",
            Level::Dss => "dss",
            Level::Simple => "simple",
            Level::Normal => "normal",
            Level::Advanced => "advanced",
        }
    }

    /// The points it runs (`advanced`: `basic` unless a matrix is given).
    pub(crate) fn matrix(self) -> Matrix {
        match self {
            Level::Oltp => Matrix::SmallOnly,
            Level::Dss => Matrix::LargeOnly,
            Level::Simple | Level::Advanced => Matrix::Basic,
            Level::Normal => Matrix::Detailed,
        }
    }
}

/// The shape of the points (ORION's `-matrix`, and the named levels' own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Matrix {
    /// Small loads alone (the `oltp` level: the matrix's first row).
    SmallOnly,
    /// Large loads alone (the `dss` level: the matrix's first column).
    LargeOnly,
    /// Small loads alone, then large loads alone.
    Basic,
    /// Every combination, no-load axes included.
    Detailed,
    /// One point: the small limit with the large limit.
    Point,
    /// Small loads (0 and rising) with the large limit.
    Row,
    /// Large loads (0 and rising) with the small limit.
    Col,
}

impl Matrix {
    /// Parses a shape given by hand.
    pub(crate) fn parse(s: &str) -> Result<Matrix, String> {
        Ok(match s {
            "basic" => Matrix::Basic,
            "detailed" => Matrix::Detailed,
            "point" => Matrix::Point,
            "row" => Matrix::Row,
            "col" => Matrix::Col,
            o => {
                return Err(format!(
                    "unknown matrix `{o}`; use basic, detailed, point, row or col"
                ));
            }
        })
    }

    /// Its name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Matrix::SmallOnly => "small only",
            Matrix::LargeOnly => "large only",
            Matrix::Basic => "basic",
            Matrix::Detailed => "detailed",
            Matrix::Point => "point",
            Matrix::Row => "row",
            Matrix::Col => "col",
        }
    }
}

/// A class's reads and writes together: IOPS, MB/s, mean latency in ms (`None`: no I/O).
fn figures(c: Option<&ClassSummary>) -> (f64, f64, Option<f64>) {
    let Some(c) = c else {
        return (0.0, 0.0, None);
    };
    let ops = c.read.ops + c.write.ops;
    let latency = (ops > 0).then(|| {
        (c.read.latency_ns.mean * c.read.ops as f64 + c.write.latency_ns.mean * c.write.ops as f64)
            / ops as f64
            / 1e6
    });
    (
        round(c.iops(), 1),
        round(c.bytes_per_s() / 1e6, 2),
        latency.map(|l| round(l, 3)),
    )
}

/// The point of each step (steps hold the worker group's index as `group`).
pub(crate) fn point_of(step: &StepResult, points: &[LoadPoint]) -> Option<PointResult> {
    let g = *step.parameters.get("group")?;
    let load = points.get(g as usize)?;
    let (small_iops, small_mb_per_s, small_latency_ms) = figures(step.classes.get(SMALL));
    let (large_iops, large_mb_per_s, large_latency_ms) = figures(step.classes.get(LARGE));
    Some(PointResult {
        step: step.index,
        small: load.small,
        large: load.large,
        small_iops,
        small_mb_per_s,
        small_latency_ms: small_latency_ms.filter(|_| load.small > 0),
        large_iops,
        large_mb_per_s,
        large_latency_ms: large_latency_ms.filter(|_| load.large > 0),
        interrupted: step.interrupted,
    })
}

/// The loads of an axis from 1 to `limit`: each of them up to [`MAX_LEVELS`], else
/// [`MAX_LEVELS`] of them spread evenly, 1 and `limit` included.
pub(crate) fn levels(limit: u32) -> Vec<u32> {
    if limit <= MAX_LEVELS {
        return (1..=limit).collect();
    }
    let mut out: Vec<u32> = (0..MAX_LEVELS)
        .map(|i| {
            1 + ((u64::from(limit - 1) * u64::from(i) + u64::from(MAX_LEVELS - 1) / 2)
                / u64::from(MAX_LEVELS - 1)) as u32
        })
        .collect();
    out.dedup();
    out
}

/// The points of `matrix` with these limits, in the order they run: small loads first,
/// then large loads, rising; a detailed matrix row by row (large load outer).
pub(crate) fn points(matrix: Matrix, small_limit: u32, large_limit: u32) -> Vec<LoadPoint> {
    let p = |small, large| LoadPoint { small, large };
    let small = levels(small_limit);
    let large = levels(large_limit);
    let with_zero = |v: &[u32]| {
        std::iter::once(0)
            .chain(v.iter().copied())
            .collect::<Vec<_>>()
    };
    match matrix {
        Matrix::SmallOnly => small.iter().map(|&s| p(s, 0)).collect(),
        Matrix::LargeOnly => large.iter().map(|&l| p(0, l)).collect(),
        Matrix::Basic => (small.iter().map(|&s| p(s, 0)))
            .chain(large.iter().map(|&l| p(0, l)))
            .collect(),
        Matrix::Detailed => with_zero(&large)
            .into_iter()
            .flat_map(|l| with_zero(&small).into_iter().map(move |s| p(s, l)))
            .filter(|x| x.small + x.large > 0)
            .collect(),
        Matrix::Point => vec![p(small_limit, large_limit)],
        Matrix::Row => with_zero(&small)
            .into_iter()
            .map(|s| p(s, large_limit))
            .collect(),
        Matrix::Col => with_zero(&large)
            .into_iter()
            .map(|l| p(small_limit, l))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[LoadPoint]) -> Vec<(u32, u32)> {
        v.iter().map(|p| (p.small, p.large)).collect()
    }

    #[test]
    fn levels_step_by_one_up_to_ten_then_spread_with_both_ends() {
        assert_eq!(levels(1), vec![1]);
        assert_eq!(levels(5), vec![1, 2, 3, 4, 5]);
        assert_eq!(levels(10), (1..=10).collect::<Vec<_>>());
        let l = levels(20);
        assert_eq!(l.len(), 10);
        assert_eq!((l[0], l[9]), (1, 20));
        assert!(l.windows(2).all(|w| w[0] < w[1]), "{l:?}");
        let l = levels(1024);
        assert_eq!((l.len(), l[0], l[9]), (10, 1, 1024));
    }

    #[test]
    fn each_level_has_orions_points() {
        // One disk: small up to 5, large up to 2.
        let oltp = points(Level::Oltp.matrix(), 5, 2);
        assert_eq!(pairs(&oltp), [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0)]);
        let dss = points(Level::Dss.matrix(), 5, 2);
        assert_eq!(pairs(&dss), [(0, 1), (0, 2)]);
        let simple = points(Level::Simple.matrix(), 5, 2);
        assert_eq!(
            pairs(&simple),
            [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (0, 1), (0, 2)]
        );
        // Normal: the whole matrix but the empty point, 6 × 3 − 1.
        let normal = points(Level::Normal.matrix(), 5, 2);
        assert_eq!(normal.len(), 17);
        assert_eq!(
            pairs(&normal)[..6],
            [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (0, 1)]
        );
        assert_eq!(pairs(&normal).last(), Some(&(5, 2)));
        assert!(!normal.contains(&LoadPoint { small: 0, large: 0 }));
    }

    #[test]
    fn advanced_shapes_fix_one_axis_at_its_limit() {
        assert_eq!(pairs(&points(Matrix::Point, 7, 3)), [(7, 3)]);
        assert_eq!(
            pairs(&points(Matrix::Row, 3, 4)),
            [(0, 4), (1, 4), (2, 4), (3, 4)]
        );
        assert_eq!(pairs(&points(Matrix::Col, 3, 2)), [(3, 0), (3, 1), (3, 2)]);
    }

    #[test]
    fn names_parse_back_and_unknown_ones_say_what_is_known() {
        for l in [
            Level::Oltp,
            Level::Dss,
            Level::Simple,
            Level::Normal,
            Level::Advanced,
        ] {
            assert_eq!(Level::parse(l.name()), Ok(l));
        }
        assert!(Level::parse("max").unwrap_err().contains("oltp, dss"));
        assert!(
            Matrix::parse("max")
                .unwrap_err()
                .contains("basic, detailed")
        );
    }
}
