//! Statistics over repeated runs of the same step: mean, sample standard deviation, range,
//! coefficient of variation and a 95% confidence interval of the mean (Student's t).

use serde::{Deserialize, Serialize};

/// Spread of a set of samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spread {
    /// Number of samples.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1).
    pub stddev: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Lower end of the 95% confidence interval of the mean.
    pub ci95_low: f64,
    /// Upper end of the 95% confidence interval of the mean.
    pub ci95_high: f64,
    /// Coefficient of variation, percent (0 when the mean is 0).
    pub cv_pct: f64,
}

/// Two-sided 95% critical values of Student's t for 1..=30 degrees of freedom.
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The two-sided 95% critical value of Student's t with `df` degrees of freedom (exact table
/// to 30, then 40: 2.021, 60: 2.000, 120: 1.980 interpolated linearly, 1.960 beyond).
pub(crate) fn student_t_975(df: usize) -> f64 {
    const TAIL: [(usize, f64); 4] = [(30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980)];
    match df {
        0 => f64::INFINITY,
        1..=30 => T_975[df - 1],
        121.. => 1.960,
        _ => {
            let i = TAIL
                .iter()
                .position(|&(d, _)| d >= df)
                .unwrap_or(TAIL.len() - 1);
            let ((d0, t0), (d1, t1)) = (TAIL[i - 1], TAIL[i]);
            t0 + (t1 - t0) * (df - d0) as f64 / (d1 - d0) as f64
        }
    }
}

/// The spread of `samples` (non-finite samples are ignored).
pub(crate) fn spread(samples: &[f64]) -> Spread {
    let xs: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    let n = xs.len();
    if n == 0 {
        return Spread::default();
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let stddev = if n > 1 {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let half = if n > 1 {
        student_t_975(n - 1) * stddev / (n as f64).sqrt()
    } else {
        0.0
    };
    Spread {
        n,
        mean,
        stddev,
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ci95_low: mean - half,
        ci95_high: mean + half,
        cv_pct: if mean != 0.0 {
            stddev / mean.abs() * 100.0
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_samples() {
        let s = spread(&[10.0, 12.0, 14.0]);
        assert_eq!(s.n, 3);
        assert!((s.mean - 12.0).abs() < 1e-12);
        assert!((s.stddev - 2.0).abs() < 1e-12);
        let half = 4.303 * 2.0 / 3f64.sqrt();
        assert!((s.ci95_low - (12.0 - half)).abs() < 1e-9);
        assert!((s.ci95_high - (12.0 + half)).abs() < 1e-9);
        assert!((s.cv_pct - 16.666_666).abs() < 1e-3);
        assert_eq!((s.min, s.max), (10.0, 14.0));
        let one = spread(&[5.0]);
        assert_eq!((one.ci95_low, one.ci95_high, one.stddev), (5.0, 5.0, 0.0));
        assert_eq!(spread(&[]), Spread::default());
        assert_eq!(spread(&[f64::NAN, 3.0]).n, 1);
    }

    #[test]
    fn t_table() {
        assert_eq!(student_t_975(1), 12.706);
        assert_eq!(student_t_975(30), 2.042);
        assert!((student_t_975(50) - 2.0105).abs() < 1e-9);
        assert_eq!(student_t_975(1000), 1.960);
        assert!(student_t_975(0).is_infinite());
    }
}
