//! Open-loop schedules: the intended issue time of each I/O at a fixed rate, evenly spaced or
//! as a Poisson process. Times are nanoseconds from the start of the run.

use crate::job::{Arrivals, Rate};
use rand::{SeedableRng, rngs::SmallRng};
use rand_distr::{Distribution, Exp};

/// Produces intended issue times.
#[derive(Debug)]
pub(crate) struct Pacer {
    period_ns: f64,
    issued: u64,
    poisson: Option<(Exp<f64>, SmallRng, f64)>,
}

impl Pacer {
    /// A schedule at `rate`; `seed` drives Poisson gaps.
    pub(crate) fn new(rate: Rate, seed: u64) -> Self {
        let period_ns = 1e9 / rate.iops;
        let poisson = (rate.arrivals == Arrivals::Poisson).then(|| {
            (
                Exp::new(1.0 / period_ns).expect("a positive rate"),
                SmallRng::seed_from_u64(seed),
                0.0,
            )
        });
        Self {
            period_ns,
            issued: 0,
            poisson,
        }
    }

    /// The intended time of the next I/O, ns. Uniform times are computed from the count (no
    /// drift); Poisson times add exponential gaps.
    #[inline]
    pub(crate) fn next_ns(&mut self) -> u64 {
        let k = self.issued;
        self.issued += 1;
        match &mut self.poisson {
            None => (k as f64 * self.period_ns) as u64,
            Some((exp, rng, t)) => {
                let now = *t;
                *t += exp.sample(rng);
                now as u64
            }
        }
    }

    /// Expected number of I/Os intended in `[from_ns, to_ns)`.
    pub(crate) fn expected_between(&self, from_ns: u64, to_ns: u64) -> u64 {
        (to_ns.saturating_sub(from_ns) as f64 / self.period_ns).ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_schedule_is_exact() {
        let mut p = Pacer::new(
            Rate {
                iops: 1000.0,
                arrivals: Arrivals::Uniform,
            },
            1,
        );
        let times: Vec<u64> = (0..5).map(|_| p.next_ns()).collect();
        assert_eq!(times, vec![0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
        for _ in 5..1_000_000 {
            p.next_ns();
        }
        assert_eq!(p.next_ns(), 1_000_000_000_000, "no drift after a million");
    }

    #[test]
    fn poisson_has_the_right_mean_and_spread() {
        let mut p = Pacer::new(
            Rate {
                iops: 10_000.0,
                arrivals: Arrivals::Poisson,
            },
            7,
        );
        let n = 200_000;
        let mut prev = p.next_ns();
        let mut gaps = Vec::with_capacity(n);
        for _ in 0..n {
            let t = p.next_ns();
            assert!(t >= prev);
            gaps.push((t - prev) as f64);
            prev = t;
        }
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 100_000.0).abs() / 100_000.0 < 0.01, "{mean}");
        // Exponential gaps: standard deviation equals the mean.
        assert!((var.sqrt() - mean).abs() / mean < 0.02, "{}", var.sqrt());
    }
}
