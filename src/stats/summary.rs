//! Summaries of measured statistics over a known duration: the figures results files hold.

use super::histogram::{EncodedHistogram, LatencySummary};
use super::{ClassStats, Dir, OpStats};
use serde::{Deserialize, Serialize};

/// One direction (read, write or flush) of a class, a worker or the total.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirSummary {
    /// Completed operations, errors included.
    pub ops: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Failed operations.
    pub errors: u64,
    /// Operations per second over the measured duration.
    pub iops: f64,
    /// Bytes per second over the measured duration.
    pub bytes_per_s: f64,
    /// Latency, ns: response time (from the intended issue time) in open loop, service time
    /// (from submission) in closed loop.
    pub latency_ns: LatencySummary,
    /// Service time (from submission), ns, in open loop; absent in closed loop, where it is
    /// `latency_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_latency_ns: Option<LatencySummary>,
    /// The latency histogram, mergeable with other results files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<EncodedHistogram>,
    /// The service-time histogram (open loop only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_histogram: Option<EncodedHistogram>,
}

impl DirSummary {
    /// Summarises `s` over `seconds`; `with_histograms` stores the encoded histograms.
    pub(crate) fn of(s: &OpStats, seconds: f64, with_histograms: bool) -> DirSummary {
        let per_s = |v: u64| super::per_second(v, seconds);
        let open = s.service.count() > 0;
        DirSummary {
            ops: s.ops,
            bytes: s.bytes,
            errors: s.errors,
            iops: per_s(s.ops),
            bytes_per_s: per_s(s.bytes),
            latency_ns: s.latency.summary(),
            service_latency_ns: open.then(|| s.service.summary()),
            histogram: (with_histograms && s.latency.count() > 0).then(|| s.latency.encode()),
            service_histogram: (with_histograms && open).then(|| s.service.encode()),
        }
    }
}

/// Reads, writes and flushes of one class (or of everything).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassSummary {
    /// Reads.
    pub read: DirSummary,
    /// Writes.
    pub write: DirSummary,
    /// Flushes (fdatasync); bytes are 0.
    pub flush: DirSummary,
}

impl ClassSummary {
    /// Summarises a class over `seconds`.
    pub(crate) fn of(c: &ClassStats, seconds: f64, with_histograms: bool) -> ClassSummary {
        ClassSummary {
            read: DirSummary::of(&c.dirs[0], seconds, with_histograms),
            write: DirSummary::of(&c.dirs[1], seconds, with_histograms),
            flush: DirSummary::of(&c.dirs[2], seconds, with_histograms),
        }
    }

    /// Direction `dir`.
    pub(crate) fn dir(&self, dir: Dir) -> &DirSummary {
        match dir {
            Dir::Read => &self.read,
            Dir::Write => &self.write,
            Dir::Flush => &self.flush,
        }
    }

    /// Every direction with its figures, in [`Dir::ALL`] order.
    pub(crate) fn dirs(&self) -> [(Dir, &DirSummary); 3] {
        Dir::ALL.map(|d| (d, self.dir(d)))
    }

    /// Reads and writes together: operations per second.
    pub(crate) fn iops(&self) -> f64 {
        self.read.iops + self.write.iops
    }

    /// Reads and writes together: bytes per second.
    pub(crate) fn bytes_per_s(&self) -> f64 {
        self.read.bytes_per_s + self.write.bytes_per_s
    }

    /// Latency of reads and writes together, the one figure of a step or a run: the merged
    /// histograms when both directions have them; a direction alone when the other did
    /// nothing; without histograms (results rebuilt from a time series) the mean weighted by
    /// operations, the larger maximum and, as the 99th percentile, the larger of the two (an
    /// upper bound), the other percentiles unknown (0).
    pub(crate) fn reads_and_writes(&self) -> LatencySummary {
        let (r, w) = (&self.read, &self.write);
        match (r.ops > 0, w.ops > 0) {
            (false, false) => LatencySummary::default(),
            (true, false) => r.latency_ns,
            (false, true) => w.latency_ns,
            (true, true) if r.histogram.is_some() && w.histogram.is_some() => {
                DirSummary::merge(&[r, w], 1.0).latency_ns
            }
            (true, true) => LatencySummary {
                mean: (r.latency_ns.mean * r.ops as f64 + w.latency_ns.mean * w.ops as f64)
                    / (r.ops as f64 + w.ops as f64),
                max: r.latency_ns.max.max(w.latency_ns.max),
                p99: r.latency_ns.p99.max(w.latency_ns.p99),
                ..LatencySummary::default()
            },
        }
    }

    /// Errors of every direction.
    pub(crate) fn errors(&self) -> u64 {
        self.read.errors + self.write.errors + self.flush.errors
    }
}

impl DirSummary {
    /// Merges summaries of runs that together lasted `seconds`: counts add, histograms merge
    /// (never averaged percentiles). Parts without a stored histogram add counts only.
    pub(crate) fn merge(parts: &[&DirSummary], seconds: f64) -> DirSummary {
        use super::histogram::Histogram;
        let mut s = super::OpStats::default();
        for p in parts {
            // Counts read from files are any u64: they saturate rather than overflow.
            s.ops = s.ops.saturating_add(p.ops);
            s.bytes = s.bytes.saturating_add(p.bytes);
            s.errors = s.errors.saturating_add(p.errors);
            if let Some(h) = p.histogram.as_ref().and_then(|h| Histogram::decode(h).ok()) {
                s.latency.add(&h);
            }
            if let Some(h) = p
                .service_histogram
                .as_ref()
                .and_then(|h| Histogram::decode(h).ok())
            {
                s.service.add(&h);
            }
        }
        DirSummary::of(&s, seconds, true)
    }
}

impl ClassSummary {
    /// Merges class summaries of runs that together lasted `seconds`.
    pub(crate) fn merge(parts: &[&ClassSummary], seconds: f64) -> ClassSummary {
        let pick = |f: fn(&ClassSummary) -> &DirSummary| {
            DirSummary::merge(&parts.iter().map(|p| f(p)).collect::<Vec<_>>(), seconds)
        };
        ClassSummary {
            read: pick(|c| &c.read),
            write: pick(|c| &c.write),
            flush: pick(|c| &c.flush),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::OpStats;

    #[test]
    fn merging_summaries_equals_summarising_everything() {
        let mut a = OpStats::default();
        let mut b = OpStats::default();
        let mut all = OpStats::default();
        for i in 1..=1000u64 {
            let (s, v) = if i % 3 == 0 {
                (&mut a, i * 100)
            } else {
                (&mut b, i * 7)
            };
            s.ops += 1;
            s.bytes += 4096;
            s.latency.record(v);
            all.ops += 1;
            all.bytes += 4096;
            all.latency.record(v);
        }
        let merged = DirSummary::merge(
            &[
                &DirSummary::of(&a, 1.0, true),
                &DirSummary::of(&b, 1.0, true),
            ],
            2.0,
        );
        let direct = DirSummary::of(&all, 2.0, true);
        assert_eq!(merged.latency_ns, direct.latency_ns);
        assert_eq!(merged.ops, 1000);
        assert_eq!(merged.iops, 500.0);
    }
}
