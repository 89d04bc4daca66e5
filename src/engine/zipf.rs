//! Zipf-distributed positions at table speed: position `p` of `n` (0-based) is drawn with
//! probability proportional to `(p + 1)^-theta`, exactly (up to 2^-32 quantisation of the
//! table), for any `n` up to 2^63 and any `theta > 0`.
//!
//! The ranks are cut into buckets: one bucket per rank up to 127, then buckets whose last rank is
//! at most 1/64 above their first (about 64 per factor of e, so about 1,100 buckets for 2^28
//! positions). A bucket is chosen from an alias table (Walker) weighted by its exact mass; a rank
//! inside it is drawn uniformly and accepted with probability `(first / rank)^theta`. Because the
//! density varies by at most 2 % across a bucket, a precomputed lower bound (the squeeze) accepts
//! about 98 % of draws without a power, and about 1 % are rejected and redrawn. A draw costs
//! two or three random numbers and two table lookups; a rejection-inversion sampler (what
//! `rand_distr` does) needs a logarithm and two powers per draw.
//!
//! Bucket masses are summed rank by rank for buckets of up to 32 ranks (the first ~2,100 ranks)
//! and by Euler–Maclaurin beyond (an integral, the end-point terms and two derivative terms;
//! for a first rank past 2,000 the remainder is below 1e-15 of the mass).

use rand::RngCore;

/// Buckets wider than this are summed by Euler–Maclaurin rather than rank by rank.
const SUMMED_WIDTH: u64 = 32;

/// A Zipf sampler over `n` positions.
#[derive(Debug, Clone)]
pub(crate) struct Zipf {
    theta: f64,
    /// Per bucket: the share of 2^32 of a draw landing in this slot that keeps it, and the
    /// bucket it goes to otherwise.
    alias: Vec<(u32, u32)>,
    buckets: Vec<Bucket>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// First rank, 1-based.
    first: u64,
    /// Ranks in the bucket.
    width: u64,
    /// `(first / last)^theta` as a share of 2^32: a uniform below it accepts any rank.
    squeeze: u32,
}

impl Zipf {
    /// A sampler over `n` positions with exponent `theta`. Errors when `n` is 0 or past 2^63, or
    /// `theta` is not a finite number above 0.
    pub(crate) fn new(n: u64, theta: f64) -> Result<Self, String> {
        Self::with_buckets(n, theta, 6)
    }

    /// As [`Zipf::new`], with buckets whose last rank is at most `2^-shift` above their first
    /// (tests use coarse buckets so that the in-bucket rejection carries most of the shape).
    fn with_buckets(n: u64, theta: f64, shift: u32) -> Result<Self, String> {
        if n == 0 || n > 1 << 63 {
            return Err(format!(
                "zipf over {n} positions: need between 1 and 2^63 positions"
            ));
        }
        if !(theta > 0.0 && theta.is_finite()) {
            return Err(format!("zipf theta {theta}: must be a number above 0"));
        }
        let mut buckets = Vec::new();
        let mut masses = Vec::new();
        let mut first = 1u64;
        while first <= n {
            let width = (first >> shift).max(1).min(n - first + 1);
            let last = first + width - 1;
            let min_ratio = (first as f64 / last as f64).powf(theta);
            buckets.push(Bucket {
                first,
                width,
                squeeze: (min_ratio * 4_294_967_296.0).floor().min(u32::MAX as f64) as u32,
            });
            masses.push(mass(first, last, theta));
            first = last + 1;
        }
        Ok(Self {
            theta,
            alias: alias_table(&masses),
            buckets,
        })
    }

    /// Draws a position in `0..n`.
    #[inline]
    pub(crate) fn sample<R: RngCore>(&self, rng: &mut R) -> u64 {
        let r = rng.next_u64();
        let slot = (((r >> 32) * self.alias.len() as u64) >> 32) as usize;
        let (keep, alias) = self.alias[slot];
        let bucket = if (r as u32) < keep {
            self.buckets[slot]
        } else {
            self.buckets[alias as usize]
        };
        if bucket.width == 1 {
            return bucket.first - 1;
        }
        loop {
            let within = ((u128::from(rng.next_u64()) * u128::from(bucket.width)) >> 64) as u64;
            let u = rng.next_u32();
            if u < bucket.squeeze || self.accepts(u, bucket.first, bucket.first + within) {
                return bucket.first - 1 + within;
            }
        }
    }

    /// Whether a uniform `u` (of 2^32) accepts `rank` in a bucket starting at `first`.
    #[cold]
    fn accepts(&self, u: u32, first: u64, rank: u64) -> bool {
        (f64::from(u) + 0.5) / 4_294_967_296.0 < (first as f64 / rank as f64).powf(self.theta)
    }
}

/// `sum_{k=first}^{last} k^-theta`.
fn mass(first: u64, last: u64, theta: f64) -> f64 {
    if last - first < SUMMED_WIDTH {
        return (first..=last).map(|k| (k as f64).powf(-theta)).sum();
    }
    let (a, b) = (first as f64, last as f64);
    let f = |x: f64| x.powf(-theta);
    let f1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let f3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    integral(a, b, theta) + (f(a) + f(b)) / 2.0 + (f1(b) - f1(a)) / 12.0 - (f3(b) - f3(a)) / 720.0
}

/// `∫_a^b x^-theta dx`, accurate near `theta = 1`.
fn integral(a: f64, b: f64, theta: f64) -> f64 {
    let e = 1.0 - theta;
    let l = (b / a).ln();
    if e == 0.0 {
        l
    } else {
        a.powf(e) * (e * l).exp_m1() / e
    }
}

/// Walker's alias table (Vose's construction) for `weights`: slot `i` keeps a draw with
/// probability `keep / 2^32` and sends it to `alias` otherwise.
fn alias_table(weights: &[f64]) -> Vec<(u32, u32)> {
    let n = weights.len();
    let total: f64 = weights.iter().sum();
    let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
    let mut table: Vec<(u32, u32)> = (0..n as u32).map(|i| (u32::MAX, i)).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| scaled[i] < 1.0);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        table[s] = (
            (scaled[s] * 4_294_967_296.0).round().min(u32::MAX as f64) as u32,
            l as u32,
        );
        scaled[l] -= 1.0 - scaled[s];
        if scaled[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // Whatever is left is 1 up to rounding: it keeps every draw (its alias is itself).
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{SeedableRng, rngs::SmallRng};

    fn exact(n: u64, theta: f64) -> Vec<f64> {
        let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-theta)).collect();
        let total: f64 = w.iter().sum();
        w.into_iter().map(|x| x / total).collect()
    }

    #[test]
    fn buckets_tile_the_ranks_and_their_masses_are_exact() {
        for theta in [0.3, 0.99, 1.0, 1.2, 2.5] {
            let n = 300_000;
            let z = Zipf::new(n, theta).unwrap();
            let mut next = 1;
            for b in &z.buckets {
                assert_eq!(b.first, next);
                let last = b.first + b.width - 1;
                assert!(last == n || (last - b.first) as f64 <= b.first as f64 / 64.0);
                let direct: f64 = (b.first..=last).map(|k| (k as f64).powf(-theta)).sum();
                let m = mass(b.first, last, theta);
                assert!(
                    ((m - direct) / direct).abs() < 1e-12,
                    "theta {theta}, ranks {}..={last}: {m} against {direct}",
                    b.first
                );
                next = last + 1;
            }
            assert_eq!(next, n + 1);
        }
    }

    #[test]
    fn the_alias_table_gives_each_bucket_its_mass() {
        let weights = [5.0, 1.0, 0.25, 3.0, 0.0, 0.75];
        let table = alias_table(&weights);
        let n = weights.len() as f64;
        let mut p = [0.0; 6];
        for (i, &(keep, alias)) in table.iter().enumerate() {
            let kept = f64::from(keep) / 4_294_967_296.0;
            p[i] += kept / n;
            p[alias as usize] += (1.0 - kept) / n;
        }
        let total: f64 = weights.iter().sum();
        for (i, w) in weights.iter().enumerate() {
            assert!(
                (p[i] - w / total).abs() < 1e-9,
                "bucket {i}: {} against {}",
                p[i],
                w / total
            );
        }
    }

    /// Pearson's chi-square of `draws` positions against `expected` probabilities, over cells of
    /// consecutive positions holding at least 100 expected draws each; returns (statistic,
    /// degrees of freedom).
    fn chi_square(counts: &[u64], expected: &[f64], draws: u64) -> (f64, usize) {
        let (mut stat, mut cells) = (0.0, 0usize);
        let (mut seen, mut want) = (0.0, 0.0);
        for (c, p) in counts.iter().zip(expected) {
            seen += *c as f64;
            want += p * draws as f64;
            if want >= 100.0 {
                stat += (seen - want).powi(2) / want;
                cells += 1;
                (seen, want) = (0.0, 0.0);
            }
        }
        if want > 0.0 {
            stat += (seen - want).powi(2) / want;
            cells += 1;
        }
        (stat, cells - 1)
    }

    /// The chi-square value a correct sampler exceeds with probability about 1e-6
    /// (Wilson–Hilferty).
    fn critical(df: usize) -> f64 {
        let d = df as f64;
        let v = 2.0 / (9.0 * d);
        d * (1.0 - v + 4.75 * v.sqrt()).powi(3)
    }

    fn counts(z: &Zipf, n: u64, draws: u64, seed: u64) -> Vec<u64> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            let p = z.sample(&mut rng);
            assert!(p < n);
            counts[p as usize] += 1;
        }
        counts
    }

    #[test]
    fn draws_follow_the_exact_probabilities() {
        // Fine buckets (the real sampler) and coarse ones (shift 0: each bucket spans a factor
        // of two, so the in-bucket rejection carries most of the shape), both against the exact
        // probabilities of every position.
        let (n, draws) = (5_000, 1_000_000);
        for (theta, shift) in [(1.2, 6), (0.8, 6), (1.0, 0), (1.2, 0), (2.0, 1)] {
            let z = Zipf::with_buckets(n, theta, shift).unwrap();
            let (stat, df) = chi_square(&counts(&z, n, draws, 11), &exact(n, theta), draws);
            assert!(
                stat < critical(df),
                "theta {theta}, shift {shift}: chi-square {stat:.1} on {df} degrees of freedom"
            );
        }
    }

    #[test]
    fn the_check_tells_a_different_exponent_apart() {
        // The same test rejects a sampler 2 % off in theta, so it can fail.
        let (n, draws) = (5_000, 1_000_000);
        let z = Zipf::new(n, 1.2 * 1.02).unwrap();
        let (stat, df) = chi_square(&counts(&z, n, draws, 11), &exact(n, 1.2), draws);
        assert!(
            stat > critical(df),
            "chi-square {stat:.1} on {df} degrees of freedom"
        );
    }

    #[test]
    fn huge_spans_build_fast_and_reach_their_end() {
        let n = 1u64 << 40;
        let z = Zipf::new(n, 0.5).unwrap();
        assert!(z.buckets.len() < 2_000, "{}", z.buckets.len());
        let mut rng = SmallRng::seed_from_u64(3);
        let max = (0..100_000).map(|_| z.sample(&mut rng)).max().unwrap();
        assert!(max < n && max > n / 2, "{max}");
        assert_eq!(Zipf::new(1, 1.2).unwrap().sample(&mut rng), 0);
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(Zipf::new(0, 1.2).is_err());
        assert!(Zipf::new(10, 0.0).is_err());
        assert!(Zipf::new(10, f64::NAN).is_err());
        assert!(Zipf::new(10, f64::INFINITY).is_err());
    }
}
