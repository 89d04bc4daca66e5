//! Steady-state detection over measurement rounds, in the style of the SNIA Solid State
//! Storage Performance Test: the last `window` rounds are steady when every round is within
//! ± `range_pct` of the window's average and the least-squares fit line's excursion over the
//! window is within ± `slope_pct` of that average.

use serde::{Deserialize, Serialize};

/// The rule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SteadyRule {
    /// Rounds in the window (default 5).
    pub window: usize,
    /// Every round within ± this percent of the window average (default 10).
    pub range_pct: f64,
    /// |fit(last) − fit(first)| within this percent of the window average (default 5).
    pub slope_pct: f64,
}

impl Default for SteadyRule {
    fn default() -> Self {
        SteadyRule {
            window: 5,
            range_pct: 10.0,
            slope_pct: 5.0,
        }
    }
}

/// The check of one window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowCheck {
    /// Average of the window.
    pub average: f64,
    /// Largest |x − average| / average, percent.
    pub max_deviation_pct: f64,
    /// |fit(last) − fit(first)| / average, percent.
    pub fit_excursion_pct: f64,
    /// Slope of the fit line, per round.
    pub slope_per_round: f64,
    /// Whether both limits hold.
    pub steady: bool,
}

/// Checks the last `rule.window` rounds; `None` with fewer rounds (or a window under 2).
///
/// A window whose average is not positive, or that holds a non-finite round, is never steady;
/// its figures are kept finite (so they serialize to JSON): non-finite ones read 0, and so do
/// the percentages when the average is not positive.
pub(crate) fn check(rounds: &[f64], rule: &SteadyRule) -> Option<WindowCheck> {
    let w = rule.window;
    if w < 2 || rounds.len() < w {
        return None;
    }
    let ys = &rounds[rounds.len() - w..];
    let n = w as f64;
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let average = ys.iter().sum::<f64>() / n;
    let xm = (n - 1.0) / 2.0;
    let sxy: f64 = ys
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - xm) * (y - average))
        .sum();
    let sxx: f64 = (0..w).map(|i| (i as f64 - xm).powi(2)).sum();
    let slope = sxy / sxx;
    let ok = ys.iter().all(|y| y.is_finite())
        && average.is_finite()
        && average > 0.0
        && slope.is_finite();
    let (max_dev, excursion) = if ok {
        (
            ys.iter().map(|y| (y - average).abs()).fold(0.0, f64::max) / average * 100.0,
            (slope * (n - 1.0)).abs() / average * 100.0,
        )
    } else {
        (0.0, 0.0)
    };
    let (max_dev, excursion) = (finite(max_dev), finite(excursion));
    Some(WindowCheck {
        average: finite(average),
        max_deviation_pct: max_dev,
        fit_excursion_pct: excursion,
        slope_per_round: finite(slope),
        steady: ok && max_dev <= rule.range_pct && excursion <= rule.slope_pct,
    })
}

/// The first (1-based) round at which the window ending there is steady.
pub(crate) fn first_steady_round(rounds: &[f64], rule: &SteadyRule) -> Option<usize> {
    (rule.window.max(2)..=rounds.len())
        .find(|&r| check(&rounds[..r], rule).is_some_and(|c| c.steady))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_drifting_noisy() {
        let rule = SteadyRule::default();
        assert!(
            check(&[100.0, 101.0, 99.0, 100.0, 100.0], &rule)
                .unwrap()
                .steady
        );
        let drift = check(&[100.0, 104.0, 108.0, 112.0, 116.0], &rule).unwrap();
        assert!(drift.max_deviation_pct <= 10.0);
        assert!((drift.fit_excursion_pct - 16.0 / 108.0 * 100.0).abs() < 1e-9);
        assert!(!drift.steady);
        let noisy = check(&[100.0, 120.0, 80.0, 110.0, 90.0], &rule).unwrap();
        assert!((noisy.max_deviation_pct - 20.0).abs() < 1e-9);
        assert!(!noisy.steady);
        assert!(check(&[100.0, 100.0], &rule).is_none());
        assert!(!check(&[0.0; 5], &rule).unwrap().steady);
        let nan = check(&[100.0, f64::NAN, 100.0, 100.0, 100.0], &rule).unwrap();
        assert!(!nan.steady);
        assert!(nan.average.is_finite() && nan.max_deviation_pct.is_finite());
        assert!(check(&[], &rule).is_none());
        assert!(first_steady_round(&[100.0; 4], &rule).is_none());
        let tiny = SteadyRule { window: 1, ..rule };
        assert!(check(&[100.0; 5], &tiny).is_none());
    }

    #[test]
    fn becomes_steady_after_warm_up() {
        let rounds = [
            200.0, 160.0, 130.0, 110.0, 101.0, 100.0, 99.0, 100.0, 101.0, 100.0,
        ];
        let r = first_steady_round(&rounds, &SteadyRule::default()).unwrap();
        assert!(check(&rounds[..r], &SteadyRule::default()).unwrap().steady);
        assert!(!check(&rounds[..r - 1], &SteadyRule::default()).is_some_and(|c| c.steady));
        assert_eq!(r, 9);
    }
}
