//! What a cache tier did during a run: its setup, its counts (hits, misses, fills, write-backs),
//! the latency of each tier's own I/O, per interval and over the measured time, and the dirty
//! data written back after the run. Filled by `cache::tier`, carried by the results file.

use super::histogram::{Histogram, LatencySummary};
use serde::{Deserialize, Serialize};

/// Counts of one interval, or of the measured time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TierCounts {
    /// The application's reads of the cached target.
    pub reads: u64,
    /// Of them, served from the cache device.
    pub read_hits: u64,
    /// The application's writes of the cached target.
    pub writes: u64,
    /// Of them, written to the cache device (write-back: a hit or an allocation).
    pub write_hits: u64,
    /// Reads and writes a sequential stream longer than `sequential_bypass` sent to the backing
    /// target without admitting them.
    pub bypassed: u64,
    /// I/Os that span cache lines (served by the backing target, their lines first written back
    /// and dropped).
    pub spanning: u64,
    /// I/Os that waited for a line being filled, written back or dropped.
    pub held: u64,
    /// Bytes written to the cache device by fills (after a miss, or a write-through).
    pub fill_bytes: u64,
    /// Bytes of dirty lines written back (destaged) to the backing target.
    pub destage_bytes: u64,
    /// Lines the policy evicted.
    pub evictions: u64,
}

impl TierCounts {
    /// Adds `other`'s counts.
    pub(crate) fn add(&mut self, other: &TierCounts) {
        self.reads += other.reads;
        self.read_hits += other.read_hits;
        self.writes += other.writes;
        self.write_hits += other.write_hits;
        self.bypassed += other.bypassed;
        self.spanning += other.spanning;
        self.held += other.held;
        self.fill_bytes += other.fill_bytes;
        self.destage_bytes += other.destage_bytes;
        self.evictions += other.evictions;
    }

    /// Read hits as a percentage of reads (0 without reads).
    pub(crate) fn read_hit_pct(&self) -> f64 {
        if self.reads == 0 {
            0.0
        } else {
            self.read_hits as f64 * 100.0 / self.reads as f64
        }
    }
}

/// Which tier and direction a physical I/O went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TierIo {
    /// A read of the cache device (a hit, or a write-back's read).
    CacheRead = 0,
    /// A write to the cache device (a write hit, a fill).
    CacheWrite = 1,
    /// A read of the backing target (a miss, a fill's read).
    BackingRead = 2,
    /// A write to the backing target (a write-back, a write-through or write-around).
    BackingWrite = 3,
}

/// Latency of each tier's physical I/O (application and background alike), from the tier's
/// offering of the I/O to its completion.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TierLatency {
    /// Reads of the cache device.
    pub cache_read: Option<LatencySummary>,
    /// Writes to the cache device.
    pub cache_write: Option<LatencySummary>,
    /// Reads of the backing target.
    pub backing_read: Option<LatencySummary>,
    /// Writes to the backing target.
    pub backing_write: Option<LatencySummary>,
}

impl TierLatency {
    /// The summaries of four histograms indexed by [`TierIo`] (`None` where empty).
    pub(crate) fn of(h: &[Histogram; 4]) -> TierLatency {
        let s = |i: usize| (h[i].count() > 0).then(|| h[i].summary());
        TierLatency {
            cache_read: s(0),
            cache_write: s(1),
            backing_read: s(2),
            backing_write: s(3),
        }
    }
}

/// One interval of a cache tier's time series, or in a long run (more intervals than
/// [`super::downsample::SERIES_POINTS`]) consecutive ones merged ([`TierPoint`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TierInterval {
    /// Start of the interval, seconds from the start of the run (ramp included).
    pub t_s: f64,
    /// What happened in it.
    pub counts: TierCounts,
    /// Read hits as a percentage of reads.
    pub read_hit_pct: f64,
    /// Mean latency of the cache device's reads in it, µs (`None`: none).
    pub cache_read_mean_us: Option<f64>,
    /// Mean latency of the backing target's reads in it, µs.
    pub backing_read_mean_us: Option<f64>,
    /// Lines resident at its end.
    pub resident_lines: u64,
    /// Dirty lines at its end.
    pub dirty_lines: u64,
    /// How long it covers, seconds: the interval, the part of the last one the run reached, or
    /// the intervals merged into it (added in 1.19; absent in older files: one interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<f64>,
}

/// A tier's interval as its series keeps it while the run goes: with what weighs it when
/// consecutive intervals merge (at most [`super::downsample::SERIES_POINTS`] points).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TierPoint {
    /// The interval, or the intervals merged into it.
    pub interval: TierInterval,
    /// The cache device's and the backing target's reads its mean latencies are of.
    pub reads: [u64; 2],
    /// Whether it is of the ramp (a point never spans the ramp's end).
    pub ramp: bool,
}

impl super::downsample::Merge for TierPoint {
    fn continues(&self, next: &TierPoint) -> bool {
        self.ramp == next.ramp && next.interval.t_s > self.interval.t_s
    }

    /// Counts added, the hit share of the sums, the mean latencies weighted by their reads,
    /// the lines at the later one's end, the lengths added.
    fn absorb(&mut self, next: &TierPoint) {
        let by_reads = |a: Option<f64>, na: u64, b: Option<f64>, nb: u64| match (a, b) {
            (Some(a), Some(b)) => Some((a * na as f64 + b * nb as f64) / (na + nb).max(1) as f64),
            (a, b) => a.or(b),
        };
        let (a, b) = (&mut self.interval, &next.interval);
        let [ca, ba] = self.reads;
        let [cb, bb] = next.reads;
        a.cache_read_mean_us = by_reads(a.cache_read_mean_us, ca, b.cache_read_mean_us, cb);
        a.backing_read_mean_us = by_reads(a.backing_read_mean_us, ba, b.backing_read_mean_us, bb);
        self.reads = [ca + cb, ba + bb];
        a.counts.add(&b.counts);
        a.read_hit_pct = a.counts.read_hit_pct();
        a.resident_lines = b.resident_lines;
        a.dirty_lines = b.dirty_lines;
        a.interval_s = match (a.interval_s, b.interval_s) {
            (Some(x), Some(y)) => Some(x + y),
            (x, y) => x.or(y),
        };
    }
}

/// The dirty data still in the cache when the run ended, copied to the backing target (byte
/// for byte, not timed as the run) before the verification pass and before the results say done.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TierDrain {
    /// Dirty lines copied.
    pub lines: u64,
    /// Bytes copied.
    pub bytes: u64,
    /// How long the copy took, seconds.
    pub seconds: f64,
    /// Why the copy did not finish (the lines left are lost to the backing target), if it did not.
    pub error: Option<String>,
}

/// A cache tier of a run, as the results file holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TierResult {
    /// The cached (backing) target's name.
    pub target: String,
    /// The cache device's path.
    pub device: String,
    /// Cache size, bytes (lines × line size).
    pub cache_bytes: u64,
    /// Cache line (the unit of allocation and write-back), bytes.
    pub line_bytes: u64,
    /// Replacement policy: `lru`, `arc` or `s3fifo`.
    pub policy: String,
    /// Write policy: `back`, `through` or `around`.
    pub write: String,
    /// Sequential streams longer than this many bytes bypass the cache (`None`: never).
    pub sequential_bypass_bytes: Option<u64>,
    /// A delay added to every hit, µs, to mimic a slower cache device: **synthetic**, not
    /// measured (`None`: no delay; hits are what the device did).
    pub synthetic_hit_delay_us: Option<f64>,
    /// Write-back starts when more than this share of the lines is dirty, percent.
    pub dirty_target_pct: f64,
    /// Counts over the measured time.
    pub totals: TierCounts,
    /// Read hits as a percentage of reads over the measured time.
    pub read_hit_pct: f64,
    /// Each tier's latency over the measured time.
    pub latency: TierLatency,
    /// The time series, one record per interval (ramp included); a run of more than
    /// [`super::downsample::SERIES_POINTS`] intervals has consecutive ones merged, into at
    /// most that many.
    pub series: Vec<TierInterval>,
    /// The write-back after the run.
    pub drain: TierDrain,
}

#[cfg(test)]
mod tests {
    use super::super::downsample::{Downsampled, SERIES_POINTS};
    use super::*;

    /// Interval `i` of 0.1 s: `i` reads of the cache device at `i` µs, one hit in two, and
    /// one backing read at 100 µs in every third.
    fn point(i: u64, ramp: bool) -> TierPoint {
        let backing = u64::from(i % 3 == 0);
        let counts = TierCounts {
            reads: i + backing,
            read_hits: i / 2,
            fill_bytes: 4096 * backing,
            evictions: 1,
            ..TierCounts::default()
        };
        TierPoint {
            interval: TierInterval {
                t_s: i as f64 / 10.0,
                counts,
                read_hit_pct: counts.read_hit_pct(),
                cache_read_mean_us: (i > 0).then_some(i as f64),
                backing_read_mean_us: (backing > 0).then_some(100.0),
                resident_lines: i,
                dirty_lines: i % 7,
                interval_s: Some(0.1),
            },
            reads: [i, backing],
            ramp,
        }
    }

    #[test]
    fn a_long_series_is_merged_into_bounded_points_its_counts_added_and_means_weighted_by_reads() {
        let n = 100_000u64;
        let ramp = 1000;
        let mut series = Downsampled::new(SERIES_POINTS / 2);
        for i in 0..n {
            series.push(point(i, i < ramp));
            assert!(
                series.len() <= SERIES_POINTS,
                "{} points at {i}",
                series.len()
            );
        }
        let points = series.into_points();
        assert!(points.len() > SERIES_POINTS / 2, "{}", points.len());
        // Nothing lost: the counts add up to every interval's, the lengths to the run's.
        let sum = |f: fn(&TierCounts) -> u64| -> u64 {
            points.iter().map(|p| f(&p.interval.counts)).sum()
        };
        let thirds = n.div_ceil(3);
        assert_eq!(sum(|c| c.reads), n * (n - 1) / 2 + thirds);
        assert_eq!(sum(|c| c.evictions), n);
        assert_eq!(sum(|c| c.fill_bytes), 4096 * thirds);
        let seconds: f64 = points.iter().map(|p| p.interval.interval_s.unwrap()).sum();
        assert!((seconds - n as f64 / 10.0).abs() < 1e-6, "{seconds}");
        // The ramp's end is a point's end.
        assert!(points.iter().any(|p| p.interval.t_s == ramp as f64 / 10.0));
        assert!(
            points
                .iter()
                .all(|p| p.ramp == (p.interval.t_s < ramp as f64 / 10.0))
        );
        for (k, p) in points.iter().enumerate() {
            let i = &p.interval;
            // Intervals first..=last: their cache reads (k at k µs) weigh the mean.
            let first = (i.t_s * 10.0).round() as u64;
            let last = first + (i.interval_s.unwrap() * 10.0).round() as u64 - 1;
            let reads: u64 = (first..=last).sum();
            let squares: u64 = (first..=last).map(|k| k * k).sum();
            assert_eq!(p.reads[0], reads, "point {k}");
            if reads > 0 {
                let mean = squares as f64 / reads as f64;
                let got = i.cache_read_mean_us.unwrap();
                assert!(
                    (got - mean).abs() < 1e-6 * mean,
                    "point {k}: {got} against {mean}"
                );
            }
            if p.reads[1] > 0 {
                assert!((i.backing_read_mean_us.unwrap() - 100.0).abs() < 1e-9);
            }
            assert_eq!(i.read_hit_pct, i.counts.read_hit_pct());
            assert_eq!((i.resident_lines, i.dirty_lines), (last, last % 7));
            if let Some(next) = points.get(k + 1) {
                assert_eq!(next.interval.t_s, (last + 1) as f64 / 10.0, "point {k}");
            }
        }
    }

    #[test]
    fn a_short_series_keeps_every_interval_as_it_was() {
        let mut series = Downsampled::new(SERIES_POINTS / 2);
        let each: Vec<TierPoint> = (0..SERIES_POINTS as u64).map(|i| point(i, false)).collect();
        for p in &each {
            series.push(p.clone());
        }
        assert_eq!(series.into_points(), each);
    }
}
