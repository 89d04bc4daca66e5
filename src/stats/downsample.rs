//! A series shown at a bounded number of points however long the run, in one pass and in
//! constant memory: consecutive intervals of the same run and phase are merged into one point
//! ([`Merge`]), and the number of intervals a point may cover doubles whenever the points
//! would pass twice the bound. A merged point's counts are the sum of its intervals', its
//! rates their mean weighted by time, its mean latency their mean weighted by operations, and
//! its p99 and maximum the largest of theirs: the p99 of a merged point is an upper bound of
//! its span's (no interval had more than 1 % of its I/Os above it, so neither had the span).

/// The most points a workload's own series keeps in the results file (a cache tier's, the
/// simulated users'): a longer run's consecutive intervals are merged, into between half that
/// and that many, so that its memory does not grow with the run.
pub(crate) const SERIES_POINTS: usize = 3600;

/// A point of a series that consecutive points of the same run and phase merge into.
pub(crate) trait Merge {
    /// Whether `next`, the point after this one, belongs to the same run and phase (so the two
    /// may be merged).
    fn continues(&self, next: &Self) -> bool;
    /// Merges `next` (the point after this one) into this one.
    fn absorb(&mut self, next: &Self);
}

/// A series of points kept at most twice `limit` long (more only when it has more runs and
/// phases than that: a point never spans two), each a merge of consecutive points pushed.
#[derive(Debug, Clone)]
pub(crate) struct Downsampled<T> {
    limit: usize,
    /// The most points pushed that one point may merge.
    span: u64,
    /// The points, each with how many were pushed into it.
    points: Vec<(T, u64)>,
    pushed: u64,
}

impl<T: Merge> Downsampled<T> {
    /// An empty series of about `limit` points at most (at least 1).
    pub(crate) fn new(limit: usize) -> Downsampled<T> {
        Downsampled {
            limit: limit.max(1),
            span: 1,
            points: Vec::new(),
            pushed: 0,
        }
    }

    /// Adds `point`, the one after the last pushed.
    pub(crate) fn push(&mut self, point: T) {
        self.pushed += 1;
        if let Some((last, n)) = self.points.last_mut() {
            if *n < self.span && last.continues(&point) {
                last.absorb(&point);
                *n += 1;
                return;
            }
        }
        self.points.push((point, 1));
        if self.points.len() > 2 * self.limit {
            self.coarsen();
        }
    }

    /// Doubles the span of a point until the points are within twice the limit, or until no
    /// two neighbours can merge (each is of a run or phase of its own).
    fn coarsen(&mut self) {
        while self.points.len() > 2 * self.limit {
            self.span = self.span.saturating_mul(2);
            let before = self.points.len();
            let mut merged: Vec<(T, u64)> = Vec::with_capacity(before / 2 + 1);
            for (p, n) in std::mem::take(&mut self.points) {
                if let Some((last, m)) = merged.last_mut() {
                    if *m + n <= self.span && last.continues(&p) {
                        last.absorb(&p);
                        *m += n;
                        continue;
                    }
                }
                merged.push((p, n));
            }
            self.points = merged;
            if self.points.len() == before {
                return;
            }
        }
    }

    /// The points, in order.
    pub(crate) fn points(&self) -> impl Iterator<Item = &T> {
        self.points.iter().map(|(p, _)| p)
    }

    /// The points, in order, without the counts.
    pub(crate) fn into_points(self) -> Vec<T> {
        self.points.into_iter().map(|(p, _)| p).collect()
    }

    /// How many points were pushed.
    pub(crate) fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The most pushed points one point merges (1: none merged).
    pub(crate) fn widest(&self) -> u64 {
        self.points.iter().map(|&(_, n)| n).max().unwrap_or(0)
    }

    /// How many points it holds.
    pub(crate) fn len(&self) -> usize {
        self.points.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's interval: (run, count of intervals merged, sum of values, largest value).
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct P {
        run: u32,
        first: u64,
        last: u64,
        sum: u64,
        max: u64,
    }

    impl Merge for P {
        fn continues(&self, next: &P) -> bool {
            self.run == next.run && next.first == self.last + 1
        }
        fn absorb(&mut self, next: &P) {
            self.last = next.last;
            self.sum += next.sum;
            self.max = self.max.max(next.max);
        }
    }

    fn p(run: u32, i: u64) -> P {
        P {
            run,
            first: i,
            last: i,
            sum: i,
            max: i,
        }
    }

    #[test]
    fn a_long_series_stays_within_twice_the_limit_and_loses_no_count() {
        let mut d = Downsampled::new(100);
        for i in 0..100_000 {
            d.push(p(0, i));
            assert!(d.len() <= 200, "{} points after {i}", d.len());
        }
        assert!(d.len() > 100, "{}", d.len());
        assert_eq!(d.pushed(), 100_000);
        // Every point covers consecutive intervals, at most `widest` of them, in order.
        let widest = d.widest();
        assert!(widest.is_power_of_two() && widest >= 500, "{widest}");
        let points = d.into_points();
        assert_eq!(points[0].first, 0);
        for w in points.windows(2) {
            assert_eq!(w[1].first, w[0].last + 1);
            assert!(w[0].last - w[0].first < widest);
        }
        assert_eq!(points.last().unwrap().last, 99_999);
        let sum: u64 = points.iter().map(|p| p.sum).sum();
        assert_eq!(sum, 99_999 * 100_000 / 2);
        assert_eq!(points.iter().map(|p| p.max).max(), Some(99_999));
    }

    #[test]
    fn a_short_series_is_kept_as_it_is_and_runs_never_merge() {
        let mut d = Downsampled::new(10);
        for i in 0..20 {
            d.push(p(0, i));
        }
        assert_eq!(d.widest(), 1);
        assert_eq!(d.len(), 20);
        // More runs than the limit allows: each keeps a point of its own, and pushing stops
        // trying to merge what cannot be.
        let mut d = Downsampled::new(2);
        for run in 0..50 {
            for i in 0..3 {
                d.push(p(run, i));
            }
        }
        let points = d.into_points();
        assert_eq!(points.len(), 50);
        assert!(points.iter().all(|p| p.first == 0 && p.last == 2));
    }
}
