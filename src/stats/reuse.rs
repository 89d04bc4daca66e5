//! The locality a run measured, from its block sample: how many distinct blocks it touched (its
//! footprint), how many of its references went back to a block already touched, and how small a
//! share of the footprint took half, 80 % and 90 % of the references (its hot set). Every run
//! keeps one: the sample is SHARDS's (a hashed subset of the blocks, every reference to them),
//! so the shares are those of the whole run, within sampling noise.

use super::blocks::BlockRef;
use std::collections::HashMap;

/// The shares of the references whose hot sets the summary gives, percent.
pub(crate) const HOT_SHARES: [f64; 3] = [50.0, 80.0, 90.0];

/// References to each sampled block, as the collector counts them.
#[derive(Debug, Default)]
pub(crate) struct ReuseCounts {
    counts: HashMap<u64, u64>,
    sampled: u64,
}

impl ReuseCounts {
    /// Counts `refs`.
    pub(crate) fn add(&mut self, refs: &[BlockRef]) {
        for r in refs {
            *self
                .counts
                .entry((u64::from(r.target) << 48) | r.block)
                .or_default() += 1;
        }
        self.sampled += refs.len() as u64;
    }

    /// The summary, for a sample taken at `rate` of blocks of `block_bytes`, of a run that
    /// made `references` references in all and dropped `dropped` sampled ones.
    pub(crate) fn summary(
        &self,
        rate: f64,
        block_bytes: u64,
        references: u64,
        dropped: u64,
    ) -> Reuse {
        let distinct = self.counts.len() as u64;
        let mut counts: Vec<u64> = self.counts.values().copied().collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let hot_sets = HOT_SHARES
            .iter()
            .map(|&share| {
                let want = share / 100.0 * self.sampled as f64;
                let (mut sum, mut n) = (0u64, 0usize);
                while n < counts.len() && (sum as f64) < want {
                    sum += counts[n];
                    n += 1;
                }
                HotSet {
                    references_pct: share,
                    footprint_pct: if distinct == 0 {
                        0.0
                    } else {
                        n as f64 * 100.0 / distinct as f64
                    },
                }
            })
            .collect();
        let rate = rate.max(f64::MIN_POSITIVE);
        let distinct_est = (distinct as f64 / rate).round() as u64;
        Reuse {
            block_bytes,
            rate,
            references,
            sampled: self.sampled,
            dropped,
            distinct_blocks: distinct_est,
            footprint_bytes: distinct_est * block_bytes,
            rereference_pct: if self.sampled == 0 {
                0.0
            } else {
                (1.0 - distinct as f64 / self.sampled as f64) * 100.0
            },
            hot_sets,
        }
    }
}

/// How small a share of the footprint took a share of the references.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HotSet {
    /// The share of the references, percent.
    pub references_pct: f64,
    /// The smallest share of the footprint (the most referenced blocks) that took them, percent.
    pub footprint_pct: f64,
}

/// A run's locality, from its block sample.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reuse {
    /// Bytes of a block.
    pub block_bytes: u64,
    /// The sample's rate (1: every block).
    pub rate: f64,
    /// Block references of the run, sampled or not, ramp included.
    pub references: u64,
    /// Sampled references counted.
    pub sampled: u64,
    /// Sampled references dropped (a worker had no free buffer): the counts miss them.
    pub dropped: u64,
    /// Distinct blocks touched (estimated: sampled ones ÷ rate).
    pub distinct_blocks: u64,
    /// Their bytes: the run's footprint.
    pub footprint_bytes: u64,
    /// References to a block already referenced, percent (what an unbounded cache would hit).
    pub rereference_pct: f64,
    /// The hot sets of [`HOT_SHARES`] of the references.
    pub hot_sets: Vec<HotSet>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footprint_rereferences_and_hot_sets() {
        // 10 blocks: block 0 referenced 50 times, blocks 1..=9 five times each (95 refs).
        let mut refs = Vec::new();
        for _ in 0..50 {
            refs.push(BlockRef::default());
        }
        for b in 1..=9 {
            for _ in 0..5 {
                refs.push(BlockRef {
                    block: b,
                    ..BlockRef::default()
                });
            }
        }
        let mut c = ReuseCounts::default();
        c.add(&refs);
        let r = c.summary(0.5, 4096, 1000, 0);
        assert_eq!(r.sampled, 95);
        assert_eq!(r.distinct_blocks, 20, "10 sampled at rate 1/2");
        assert_eq!(r.footprint_bytes, 20 * 4096);
        assert!((r.rereference_pct - (1.0 - 10.0 / 95.0) * 100.0).abs() < 1e-9);
        // Half the references (47.5): block 0 alone, a tenth of the footprint; 80 % (76): 0
        // and 6 of the others (80 refs), 70 %; 90 % (85.5): 0 and 8 others, 90 %.
        let shares: Vec<f64> = r.hot_sets.iter().map(|h| h.footprint_pct).collect();
        assert_eq!(shares, [10.0, 70.0, 90.0]);
        assert_eq!(
            ReuseCounts::default().summary(1.0, 4096, 0, 0).hot_sets[0].footprint_pct,
            0.0
        );
    }
}
