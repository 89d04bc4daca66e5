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
    /// Read hits as a percentage of reads (0 without reads).
    pub fn read_hit_pct(&self) -> f64 {
        if self.reads == 0 {
            0.0
        } else {
            self.read_hits as f64 * 100.0 / self.reads as f64
        }
    }
}

/// Which tier and direction a physical I/O went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TierIo {
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
    pub fn of(h: &[Histogram; 4]) -> TierLatency {
        let s = |i: usize| (h[i].count() > 0).then(|| h[i].summary());
        TierLatency {
            cache_read: s(0),
            cache_write: s(1),
            backing_read: s(2),
            backing_write: s(3),
        }
    }
}

/// One interval of a cache tier's time series.
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
    /// The time series, one record per interval (ramp included).
    pub series: Vec<TierInterval>,
    /// The write-back after the run.
    pub drain: TierDrain,
}
