//! The part of a results file an etcd check adds: what was written, the fdatasync time's
//! distribution (its percentiles and a histogram), the rate of synced writes, and the limits
//! they were judged against. Every view (console, HTML, JSON) shows these same numbers.

use crate::stats::histogram::{Histogram, LatencySummary};
use crate::stats::summary::DirSummary;
use serde::{Deserialize, Serialize};

/// An etcd check's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EtcdResult {
    /// Bytes of each write.
    pub write_bytes: u64,
    /// Bytes of the log file.
    pub file_bytes: u64,
    /// Writes that fill the log file once (file ÷ write size).
    pub planned_writes: u64,
    /// Writes completed.
    pub writes: u64,
    /// fdatasync calls completed (one after each write).
    pub syncs: u64,
    /// Measured seconds.
    pub seconds: f64,
    /// Synced writes a second: fdatasync calls completed ÷ measured seconds.
    pub syncs_per_s: f64,
    /// Time of each fdatasync call, ns (from its submission to its completion).
    pub sync_latency_ns: LatencySummary,
    /// Time of each write, ns (into the page cache).
    pub write_latency_ns: LatencySummary,
    /// The limit on the 99th percentile of the fdatasync time, ns.
    pub sync_p99_limit_ns: u64,
    /// The synced writes a second required.
    pub min_syncs_per_s: f64,
    /// The fdatasync times as a histogram: consecutive bins, each counting the syncs that
    /// took more than the bin before's bound and at most its own.
    pub sync_histogram: Vec<LatencyBin>,
}

/// One bin of a latency histogram.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatencyBin {
    /// The bin's upper bound, ns (the last bin's is the largest time measured).
    pub up_to_ns: u64,
    /// Syncs in it.
    pub count: u64,
}

/// Bounds of the histogram's bins, ns: powers of two from 64 µs, and etcd's 10 ms.
fn bounds() -> Vec<u64> {
    let mut b: Vec<u64> = (0..16).map(|i| 65_536u64 << i).collect();
    b.push(10_000_000);
    b.sort_unstable();
    b
}

/// The histogram of `h` in bins bounded by powers of two from 65,536 ns and by 10 ms, from
/// the first bin with a count to the last (the last bin's bound raised to the largest time
/// when a time is beyond every bound).
pub(crate) fn histogram_bins(h: &Histogram) -> Vec<LatencyBin> {
    if h.count() == 0 {
        return Vec::new();
    }
    let mut bins: Vec<LatencyBin> = bounds()
        .into_iter()
        .map(|up_to_ns| LatencyBin { up_to_ns, count: 0 })
        .collect();
    bins.push(LatencyBin {
        up_to_ns: h.max().max(bins.last().map_or(0, |b| b.up_to_ns + 1)),
        count: 0,
    });
    for (value, count) in h.buckets() {
        let value = value.min(h.max());
        if let Some(bin) = bins.iter_mut().find(|b| value <= b.up_to_ns) {
            bin.count += count;
        }
    }
    let first = bins.iter().position(|b| b.count > 0).unwrap_or(0);
    let last = bins.iter().rposition(|b| b.count > 0).unwrap_or(0);
    bins[first..=last].to_vec()
}

/// The histogram of a direction's stored histogram (empty without one).
pub(crate) fn bins_of(d: &DirSummary) -> Vec<LatencyBin> {
    d.histogram
        .as_ref()
        .and_then(|e| Histogram::decode(e).ok())
        .map(|h| histogram_bins(&h))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_count_every_sync_once_between_the_first_and_last_used_bin() {
        let mut h = Histogram::new();
        for ns in [
            100_000,
            120_000,
            900_000,
            9_000_000,
            11_000_000,
            5_000_000_000,
        ] {
            h.record(ns);
        }
        let bins = histogram_bins(&h);
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 6);
        // 100 µs and 120 µs are in (65.5 µs, 131 µs]; 9 ms in (8.4 ms, 10 ms]; 11 ms in
        // (10 ms, 16.8 ms]; 5 s beyond every bound, in the last bin, bounded by the maximum.
        assert_eq!(
            bins[0],
            LatencyBin {
                up_to_ns: 131_072,
                count: 2
            }
        );
        assert!(
            bins.iter()
                .any(|b| b.up_to_ns == 10_000_000 && b.count == 1)
        );
        assert!(
            bins.iter()
                .any(|b| b.up_to_ns == 16_777_216 && b.count == 1)
        );
        let last = bins.last().unwrap();
        assert_eq!((last.up_to_ns, last.count), (h.max(), 1));
        assert!(bins.windows(2).all(|w| w[0].up_to_ns < w[1].up_to_ns));
        assert!(histogram_bins(&Histogram::new()).is_empty());
    }
}
