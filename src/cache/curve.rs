//! Hit ratio against cache size from a sampled block stream. The sample keeps every reference
//! to a fixed, hashed subset of the blocks (SHARDS, Waldspurger et al., FAST 2015), so a reuse
//! distance of `d` in the sample stands for `d / rate` in the full stream: LRU's hit ratio at a
//! cache of `C` blocks counts the sampled references whose distance is under `C × rate`, with
//! SHARDS's adjustment (the difference between the references the rate predicts and those
//! sampled is counted at distance 0, which corrects most of the error a few very popular blocks
//! in or out of the sample cause). ARC and S3-FIFO are simulated on the sample as caches of
//! `C × rate` blocks (miniature simulation, Waldspurger et al., ATC 2017).

use super::lru;
use super::model::{self, ModelInputs, Prediction};
use crate::job::cache::CachePolicy;
use crate::stats::blocks::BlockRef;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Cache sizes of a curve, percent of the data set.
pub(crate) const SIZES_PCT: [f64; 20] = [
    1.0, 2.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0, 65.0, 70.0,
    75.0, 80.0, 90.0, 100.0,
];

/// The kernel's page cache against LRU at the same size (a buffered run in a memory cgroup).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct PageCacheCheck {
    /// The cache the page cache had, bytes.
    pub(crate) cache_bytes: u64,
    /// Its share of the data set, percent.
    pub(crate) cache_pct: f64,
    /// The share of the bytes read it served (observed from the devices' reads), 0 to 1.
    pub(crate) observed_hit_ratio: f64,
    /// LRU's hit ratio on the sample at that size, 0 to 1.
    pub(crate) lru_hit_ratio: f64,
}

/// What a curve is computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SampleFacts {
    /// Sampling rate (1: every block).
    pub(crate) rate: f64,
    /// Block references of the whole run, sampled or not.
    pub(crate) references: u64,
    /// Sampled references the run had to leave out (no free buffer): known losses, not
    /// sampling noise, so the adjustment does not count them as hits.
    pub(crate) dropped: u64,
    /// Bytes of a block.
    pub(crate) block_bytes: u64,
    /// Bytes of the data set (the targets together): 100 % of the curve.
    pub(crate) data_set_bytes: u64,
}

impl SampleFacts {
    /// The facts of a run's block sample (`None`: it has none); the data set is its targets.
    pub(crate) fn of(r: &crate::results::RunResult) -> Option<SampleFacts> {
        let s = r.block_sample.as_ref()?;
        Some(SampleFacts {
            rate: s.rate,
            references: s.references,
            dropped: s.dropped,
            block_bytes: s.block_bytes,
            data_set_bytes: r.targets.iter().map(|t| t.size_bytes).sum(),
        })
    }

    /// A stream sampled whole (rate 1, nothing dropped): `references` references to 4 KiB
    /// blocks of a data set of `blocks`.
    #[cfg(test)]
    pub(crate) fn whole(references: usize, blocks: u64) -> SampleFacts {
        SampleFacts {
            rate: 1.0,
            references: references as u64,
            dropped: 0,
            block_bytes: 4096,
            data_set_bytes: blocks * 4096,
        }
    }
}

/// One cache size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CurvePoint {
    /// Cache size, bytes.
    pub(crate) cache_bytes: u64,
    /// Cache size, percent of the data set.
    pub(crate) cache_pct: f64,
    /// Hit ratio (0 to 1) per policy name.
    pub(crate) hit_ratio: BTreeMap<String, f64>,
    /// With a model ([`Curve::model`]): IOPS and mean latency per policy name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) predicted: BTreeMap<String, Prediction>,
}

/// Hit ratio against cache size for some policies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Curve {
    /// Bytes of the data set.
    pub(crate) data_set_bytes: u64,
    /// Bytes of a block.
    pub(crate) block_bytes: u64,
    /// Sampling rate.
    pub(crate) rate: f64,
    /// Block references of the run.
    pub(crate) references: u64,
    /// Sampled references the curve was computed from.
    pub(crate) sampled: u64,
    /// Distinct blocks referenced, estimated from the sample (sampled ones ÷ rate).
    pub(crate) distinct_blocks: u64,
    /// Sequential references were not admitted to the caches (`--bypass-sequential`).
    pub(crate) bypass_sequential: bool,
    /// Share of the sampled references whose I/O continued the previous one (0 to 1).
    pub(crate) sequential_share: f64,
    /// Share of the references that are the first to their block (0 to 1; estimated like the
    /// hit ratios, with SHARDS's adjustment): cold misses, which no cache of any size hits, so
    /// no policy's hit ratio exceeds `1 − first_reference_share` (the curves' ceiling).
    #[serde(default)]
    pub(crate) first_reference_share: f64,
    /// The what-if model's inputs, when predictions were asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<ModelInputs>,
    /// With a model: the prediction with no cache (every I/O to the backing target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) no_cache: Option<Prediction>,
    /// A buffered run: the kernel's page cache's observed hit ratio beside LRU's at its size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) page_cache: Option<PageCacheCheck>,
    /// The points, smallest cache first.
    pub(crate) points: Vec<CurvePoint>,
}

/// What to draw.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CurveOptions {
    /// The policies.
    pub(crate) policies: Vec<CachePolicy>,
    /// Cache sizes, percent of the data set.
    pub(crate) sizes_pct: Vec<f64>,
    /// Do not admit references of sequential I/O on a miss (a hit still counts): what a
    /// cache that lets sequential streams bypass it would hit. LRU is then simulated, not
    /// computed from reuse distances (bypass breaks LRU's stack property).
    pub(crate) bypass_sequential: bool,
}

/// A reference's key: its target in the high 16 bits, its block below; the sequential flag
/// in bit 63 when it is to bypass.
const BYPASS: u64 = 1 << 63;

/// The curve of `refs` (in time order).
pub(crate) fn curve(refs: &[BlockRef], facts: SampleFacts, o: &CurveOptions) -> Curve {
    let (policies, sizes_pct) = (&o.policies[..], &o.sizes_pct[..]);
    let keys: Vec<u64> = refs
        .iter()
        .map(|r| {
            let bypass = if o.bypass_sequential && r.is_sequential() {
                BYPASS
            } else {
                0
            };
            (u64::from(r.target) << 48) | r.block | bypass
        })
        .collect();
    let sequential = refs.iter().filter(|r| r.is_sequential()).count();
    let data_blocks = facts
        .data_set_bytes
        .div_ceil(facts.block_bytes.max(1))
        .max(1);
    let blocks_at = |pct: f64| ((pct / 100.0) * data_blocks as f64).round().max(1.0);
    let mut points: Vec<CurvePoint> = sizes_pct
        .iter()
        .map(|&pct| CurvePoint {
            cache_bytes: blocks_at(pct) as u64 * facts.block_bytes,
            cache_pct: pct,
            hit_ratio: BTreeMap::new(),
            predicted: BTreeMap::new(),
        })
        .collect();
    // SHARDS's adjustment: the references the rate predicts and were not sampled (or were
    // sampled beyond it) count as hits at distance 0 (or take hits away).
    let expected = facts.rate * facts.references as f64 - facts.dropped as f64;
    let adjust = expected - keys.len() as f64;
    let adjusted = |hits: f64| {
        if expected > 0.0 {
            ((hits + adjust) / expected).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    let exact_lru = policies.contains(&CachePolicy::Lru) && !o.bypass_sequential;
    let distances = exact_lru.then(|| lru::stack_distances(&keys));
    let distinct = match &distances {
        Some(d) => d.iter().filter(|&&d| d == lru::COLD).count(),
        None => (keys.iter().map(|k| k & !BYPASS))
            .collect::<std::collections::HashSet<_>>()
            .len(),
    } as u64;
    if let Some(distances) = distances {
        let mut sorted: Vec<u64> = distances.into_iter().filter(|&d| d != lru::COLD).collect();
        sorted.sort_unstable();
        for p in &mut points {
            let scaled = blocks_at(p.cache_pct) * facts.rate;
            // Distances under the scaled size (a distance d hits in a cache of more than d).
            let hits = sorted.partition_point(|&d| (d as f64) < scaled) as f64;
            p.hit_ratio
                .insert(CachePolicy::Lru.name().into(), adjusted(hits));
        }
    }
    let simulated: Vec<CachePolicy> = policies
        .iter()
        .copied()
        .filter(|&p| p != CachePolicy::Lru || !exact_lru)
        .collect();
    let jobs: Vec<(usize, CachePolicy)> = (0..points.len())
        .flat_map(|i| simulated.iter().map(move |&p| (i, p)))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let results: Vec<(usize, CachePolicy, u64)> = std::thread::scope(|s| {
        let chunks: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(threads).max(1))
            .map(|chunk| {
                let keys = &keys;
                let points = &points;
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|&(i, p)| {
                            let size = blocks_at(points[i].cache_pct) * facts.rate;
                            (i, p, hits(p, size.round().max(1.0) as usize, keys))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for (i, p, hits) in results {
        points[i]
            .hit_ratio
            .insert(p.name().into(), adjusted(hits as f64));
    }
    Curve {
        data_set_bytes: facts.data_set_bytes,
        block_bytes: facts.block_bytes,
        rate: facts.rate,
        references: facts.references,
        sampled: keys.len() as u64,
        distinct_blocks: ((distinct as f64 / facts.rate.max(f64::MIN_POSITIVE)).round() as u64)
            .min(facts.references),
        bypass_sequential: o.bypass_sequential,
        sequential_share: sequential as f64 / refs.len().max(1) as f64,
        // Every reference but a block's first hits in a cache that holds every block.
        first_reference_share: if expected > 0.0 {
            1.0 - adjusted((keys.len() as u64 - distinct) as f64)
        } else {
            0.0
        },
        model: None,
        no_cache: None,
        page_cache: None,
        points,
    }
}

impl Curve {
    /// The highest hit ratio any cache can reach (0 to 1): every reference but the first to
    /// each block.
    pub(crate) fn ceiling(&self) -> f64 {
        1.0 - self.first_reference_share
    }

    /// Adds the what-if model's predictions for `inputs` at every point and policy.
    pub(crate) fn predict(&mut self, inputs: ModelInputs) {
        for p in &mut self.points {
            p.predicted = (p.hit_ratio.iter())
                .map(|(name, &hit)| (name.clone(), model::predict(&inputs, hit)))
                .collect();
        }
        self.no_cache = Some(model::predict(&inputs, 0.0));
        self.model = Some(inputs);
    }
}

/// The hits of `policy` with `capacity` blocks over `keys` (a key with its top bit set is looked
/// up, not admitted).
pub(crate) fn hits(policy: CachePolicy, capacity: usize, keys: &[u64]) -> u64 {
    // A cache of ten times the blocks there are never evicts, in any of the policies (S3-FIFO's
    // small queue, a tenth of it, holds them all): any larger cache hits the same, and the
    // simulation never works in proportion to a size written in a results file.
    let capacity = capacity.min(keys.len().saturating_mul(10).saturating_add(10));
    let mut cache = policy.simulator(capacity);
    keys.iter()
        .filter(|&&k| match k & BYPASS {
            0 => cache.access(k),
            _ => cache.lookup(k & !BYPASS),
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sample::SampleSpec;
    use crate::engine::zipf::Zipf;
    use crate::stats::blocks::SEQUENTIAL;
    use rand::{Rng, SeedableRng, rngs::SmallRng};

    /// Blocks of the synthetic data set.
    const BLOCKS: u64 = 1 << 19;
    /// References of each synthetic stream.
    const REFS: usize = 1_500_000;
    /// Distinct blocks the tests' samples aim for (a rate of 1/32 here).
    const KEPT: u64 = 16 << 10;

    /// The synthetic streams: uniform, zipf, hot bands, and a scan mixed with zipf.
    fn streams() -> Vec<(&'static str, Vec<u64>)> {
        let mut rng = SmallRng::seed_from_u64(42);
        let zipf = Zipf::new(BLOCKS, 0.9).unwrap();
        // Zipf ranks scattered over the data set, as a real hot set is.
        let place = |rank: u64| crate::engine::buf::splitmix(rank) % BLOCKS;
        let uniform = (0..REFS).map(|_| rng.random_range(0..BLOCKS)).collect();
        let zipfian = (0..REFS).map(|_| place(zipf.sample(&mut rng))).collect();
        // 80 % of references to two bands holding 10 % of the blocks.
        let bands = (0..REFS)
            .map(|_| {
                if rng.random_range(0..100) < 80 {
                    let b = rng.random_range(0..BLOCKS / 10);
                    if b < BLOCKS / 20 { b } else { BLOCKS / 2 + b }
                } else {
                    rng.random_range(0..BLOCKS)
                }
            })
            .collect();
        let mut scan_at = 0;
        let scan = (0..REFS)
            .map(|_| {
                if rng.random_range(0..100) < 30 {
                    scan_at = (scan_at + 1) % BLOCKS;
                    scan_at
                } else {
                    place(zipf.sample(&mut rng))
                }
            })
            .collect();
        vec![
            ("uniform", uniform),
            ("zipf", zipfian),
            ("hot bands", bands),
            ("scan plus zipf", scan),
        ]
    }

    fn options(policies: &[CachePolicy], sizes: &[f64]) -> CurveOptions {
        CurveOptions {
            policies: policies.to_vec(),
            sizes_pct: sizes.to_vec(),
            bypass_sequential: false,
        }
    }

    fn refs(keys: &[u64]) -> Vec<BlockRef> {
        keys.iter()
            .enumerate()
            .map(|(i, &block)| BlockRef {
                t_ns: i as u64,
                block,
                ..BlockRef::default()
            })
            .collect()
    }

    #[test]
    fn sampled_curves_are_within_2_points_of_the_full_simulation() {
        let sizes = [5.0, 20.0, 50.0];
        let spec = SampleSpec::for_size(BLOCKS * 4096, 4096);
        let spec = SampleSpec {
            threshold: spec.threshold * KEPT / crate::engine::sample::SAMPLE_BLOCKS,
            ..spec
        };
        assert!((spec.rate() - 1.0 / 32.0).abs() < 1e-3, "{}", spec.rate());
        let streams = streams();
        let checks: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = streams
                .iter()
                .map(|(name, keys)| {
                    s.spawn(move || {
                        let all = refs(keys);
                        let facts = SampleFacts::whole(keys.len(), BLOCKS);
                        let exact = curve(&all, facts, &options(&CachePolicy::ALL, &sizes));
                        let sample: Vec<BlockRef> = all
                            .iter()
                            .copied()
                            .filter(|r| spec.sampled(0, r.block))
                            .collect();
                        let sampled = curve(
                            &sample,
                            SampleFacts {
                                rate: spec.rate(),
                                ..facts
                            },
                            &options(&CachePolicy::ALL, &sizes),
                        );
                        let mut out = Vec::new();
                        let (a, b) = (exact.first_reference_share, sampled.first_reference_share);
                        out.push(format!(
                            "{name} first references: exact {a:.4} sampled {b:.4} {}",
                            if (a - b).abs() <= 0.02 { "ok" } else { "OFF" }
                        ));
                        for c in [&exact, &sampled] {
                            for p in &c.points {
                                for (policy, &h) in &p.hit_ratio {
                                    if h > c.ceiling() + 1e-12 {
                                        out.push(format!(
                                            "{name} {policy} {}%: {h:.4} above the ceiling {:.4} OFF",
                                            p.cache_pct,
                                            c.ceiling()
                                        ));
                                    }
                                }
                            }
                        }
                        for (e, s) in exact.points.iter().zip(&sampled.points) {
                            for p in CachePolicy::ALL {
                                let (a, b) = (e.hit_ratio[p.name()], s.hit_ratio[p.name()]);
                                out.push(format!(
                                    "{name} {} {}%: exact {a:.4} sampled {b:.4} {}",
                                    p.name(),
                                    e.cache_pct,
                                    if (a - b).abs() <= 0.02 { "ok" } else { "OFF" }
                                ));
                            }
                        }
                        out
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        let off: Vec<&String> = checks.iter().filter(|c| c.ends_with("OFF")).collect();
        assert!(off.is_empty(), "{}", checks.join("\n"));
    }

    #[test]
    fn lru_from_stack_distances_is_the_simulated_lru() {
        // Exact (rate 1): the curve's LRU is an LRU cache simulated at each size.
        let mut rng = SmallRng::seed_from_u64(7);
        let keys: Vec<u64> = (0..20_000).map(|_| rng.random_range(0..3000)).collect();
        let facts = SampleFacts::whole(keys.len(), 3000);
        let c = curve(
            &refs(&keys),
            facts,
            &options(&[CachePolicy::Lru], &SIZES_PCT),
        );
        for p in &c.points {
            let blocks = (p.cache_bytes / 4096) as usize;
            let want = hits(CachePolicy::Lru, blocks, &keys) as f64 / keys.len() as f64;
            assert!(
                (p.hit_ratio["lru"] - want).abs() < 1e-12,
                "{}%: {} vs {want}",
                p.cache_pct,
                p.hit_ratio["lru"]
            );
        }
        let distinct = keys.iter().collect::<std::collections::HashSet<_>>().len();
        assert_eq!(c.distinct_blocks, distinct as u64);
        // At rate 1 the first references are exactly the distinct blocks, and a cache of the
        // whole data set hits every other reference.
        let first = distinct as f64 / keys.len() as f64;
        assert!((c.first_reference_share - first).abs() < 1e-12);
        let whole = c.points.last().unwrap();
        assert_eq!(whole.cache_pct, 100.0);
        assert!((whole.hit_ratio["lru"] - c.ceiling()).abs() < 1e-12);
        // Uniform over 3000 blocks: a cache of half of them hits about half the time.
        let half = &c.points[11];
        assert_eq!(half.cache_pct, 50.0);
        assert!((half.hit_ratio["lru"] - 0.5).abs() < 0.05);
    }

    #[test]
    fn a_bypassed_scan_leaves_the_hot_set_cached() {
        // A hot set of 100 blocks and a sequential scan of 10,000, interleaved; a cache of
        // 200 blocks. Admitting the scan, LRU keeps flushing the hot set; bypassing it, the
        // hot set stays and every reference to it after the first hits.
        let mut refs = Vec::new();
        let mut t = 0;
        for i in 0..10_000u64 {
            refs.push(BlockRef {
                t_ns: t,
                block: 100_000 + i,
                flags: if i > 0 { SEQUENTIAL } else { 0 },
                ..BlockRef::default()
            });
            t += 1;
            if i % 4 == 0 {
                refs.push(BlockRef {
                    t_ns: t,
                    block: (i / 4) % 100,
                    ..BlockRef::default()
                });
                t += 1;
            }
        }
        let facts = SampleFacts::whole(refs.len(), 1000);
        let mut o = options(&CachePolicy::ALL, &[20.0]);
        let plain = curve(&refs, facts, &o);
        o.bypass_sequential = true;
        let bypassed = curve(&refs, facts, &o);
        assert!(bypassed.bypass_sequential);
        assert!((bypassed.sequential_share - 9999.0 / refs.len() as f64).abs() < 1e-9);
        let hot = 2500.0 - 100.0; // hot references that can hit
        for p in CachePolicy::ALL {
            let (a, b) = (
                plain.points[0].hit_ratio[p.name()],
                bypassed.points[0].hit_ratio[p.name()],
            );
            let want = hot / refs.len() as f64;
            assert!(
                (b - want).abs() < 1e-9,
                "{}: bypassed {b}, want {want}",
                p.name()
            );
            assert!(
                a < b,
                "{}: {a} admitting the scan, {b} bypassing it",
                p.name()
            );
        }
        assert_eq!(plain.points[0].hit_ratio["lru"], 0.0, "LRU admits the scan");
    }

    #[test]
    fn dropped_references_are_not_counted_as_hits() {
        // A run that recorded every reference but had to drop 1,000: the curve is that of
        // what it recorded, not lifted by SHARDS's adjustment.
        let mut rng = SmallRng::seed_from_u64(9);
        let keys: Vec<u64> = (0..5000).map(|_| rng.random_range(0..1000)).collect();
        let facts = SampleFacts::whole(keys.len(), 1000);
        let o = options(&CachePolicy::ALL, &[10.0, 50.0]);
        let whole = curve(&refs(&keys), facts, &o);
        let with_drops = SampleFacts {
            references: keys.len() as u64 + 1000,
            dropped: 1000,
            ..facts
        };
        assert_eq!(curve(&refs(&keys), with_drops, &o).points, whole.points);
    }
}
