//! Access generators: turn a worker's access specification into a stream of I/Os (class,
//! direction, target, offset, size), reproducibly from a seed. Nothing here allocates after
//! construction.

use super::zipf::Zipf;
use super::{IoOp, OpKind};
use crate::job::{Access, Distribution, TargetChoice, Worker};
use rand::{Rng, RngCore, SeedableRng, rngs::SmallRng};

/// One target as the generator sees it.
#[derive(Debug, Clone, Copy)]
pub struct TargetGeometry {
    /// Usable size, bytes.
    pub size_bytes: u64,
    /// fdatasync after every N writes to it (0: never).
    pub fsync_every: u32,
}

/// Offsets of one access entry on one target.
#[derive(Debug, Clone)]
struct Span {
    start: u64,
    /// End of the span (exclusive).
    end: u64,
    /// Number of aligned positions for random I/O.
    positions: u64,
    align: u64,
    seq_next: u64,
    zipf: Option<Zipf>,
    /// Zoned: (cumulative I/O threshold of 2^32, first position, number of positions).
    zones: Vec<(u64, u64, u64)>,
    /// Shuffle: a full-period LCG over the next power of two (state, multiplier, increment,
    /// mask); values past `positions` are skipped, so each position comes once per period.
    shuffle: Option<(u64, u64, u64, u64)>,
    /// Scattered hot set: position k is used as (a × k + b) mod `positions`, a coprime to it.
    scatter: Option<(u64, u64)>,
    /// Strided zones: `positions` and the distribution are then a zone's.
    zone: Option<Zone>,
}

/// Where a span's strided zones are.
#[derive(Debug, Clone)]
struct Zone {
    size: u64,
    transfer: u64,
    /// From one zone's start to the next's: its size and the skip.
    step: u64,
    /// The current zone's start.
    start: u64,
    /// Bytes transferred in the current zone.
    done: u64,
}

impl Span {
    /// Where the next I/O (of at most `block` bytes) may be: the span, or its current zone,
    /// moving to the next zone once this one has had its share (as fio's strided zones:
    /// checked as each I/O is made, a sequential stream going round the zone).
    #[inline]
    fn bounds(&mut self, block: u64) -> (u64, u64) {
        let Some(z) = &mut self.zone else {
            return (self.start, self.end);
        };
        if z.done >= z.transfer {
            z.done = 0;
            z.start = z.start.saturating_add(z.step);
            if z.start.saturating_add(block) > self.end {
                z.start = self.start;
            }
            self.seq_next = z.start;
        }
        let end = z.start.saturating_add(z.size).min(self.end);
        if self.seq_next >= end {
            self.seq_next = z.start;
        }
        (z.start, end)
    }
}

/// One access entry, ready to generate.
#[derive(Debug, Clone)]
struct Entry {
    class: u16,
    block: u32,
    /// Variable sizes: (bytes, cumulative weight); empty for a fixed size.
    sizes: Vec<(u32, u64)>,
    roll_every: u64,
    /// Bytes skipped after each sequential I/O (negative: back).
    gap: i64,
    read_threshold: u64,
    random_threshold: u64,
    dsync: bool,
    atomic: bool,
    fsync_every: u32,
    writes_since_fsync: u32,
    spans: Vec<Span>,
}

/// The generator of one worker.
#[derive(Debug)]
pub struct AccessGen {
    rng: SmallRng,
    entries: Vec<Entry>,
    cumulative_weights: Vec<u64>,
    total_weight: u64,
    targets: Vec<u32>,
    target_geometry: Vec<TargetGeometry>,
    target_writes: Vec<u32>,
    choice: TargetChoice,
    /// With a weighted random choice, the running sums of the targets' weights.
    target_sums: Vec<u64>,
    next_target: usize,
    pending_flush: Option<IoOp>,
}

fn threshold(pct: f64) -> u64 {
    ((pct / 100.0) * (1u64 << 32) as f64).round() as u64
}

impl AccessGen {
    /// Builds the generator of `worker` over `geometry` (indexed like the job's targets).
    /// Errors when an entry does not fit in a target.
    pub fn new(worker: &Worker, geometry: &[TargetGeometry], seed: u64) -> Result<Self, String> {
        let mut entries = Vec::with_capacity(worker.access.len());
        for (ai, a) in worker.access.iter().enumerate() {
            let spans = worker
                .targets
                .iter()
                .map(|&t| span(a, geometry[t].size_bytes, seed ^ t as u64))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("worker `{}` access[{ai}]: {e}", worker.name))?;
            let mut acc = 0;
            let sizes = a
                .block_sizes
                .iter()
                .map(|&(b, w)| {
                    acc += w as u64;
                    (b as u32, acc)
                })
                .collect();
            entries.push(Entry {
                class: a.class as u16,
                block: a.block_size_bytes as u32,
                sizes,
                roll_every: a.roll_every_bytes,
                gap: a.gap_bytes,
                read_threshold: threshold(a.read_pct),
                random_threshold: threshold(a.random_pct),
                dsync: a.sync,
                atomic: a.atomic,
                fsync_every: a.fsync_every,
                writes_since_fsync: 0,
                spans,
            });
        }
        let mut acc = 0;
        let cumulative_weights = worker
            .access
            .iter()
            .map(|a| {
                acc += a.weight as u64;
                acc
            })
            .collect();
        Ok(Self {
            rng: SmallRng::seed_from_u64(seed),
            entries,
            cumulative_weights,
            total_weight: acc,
            targets: worker.targets.iter().map(|&t| t as u32).collect(),
            target_geometry: geometry.to_vec(),
            target_writes: vec![0; geometry.len()],
            choice: worker.target_choice,
            target_sums: (worker.target_weights.iter())
                .scan(0u64, |acc, &w| {
                    *acc += u64::from(w);
                    Some(*acc)
                })
                .collect(),
            next_target: 0,
            pending_flush: None,
        })
    }

    /// I/Os in one full pass over the span: the number of blocks of a worker with one access
    /// entry on one target (its span divided by the block size); 0 when not applicable.
    pub(crate) fn ops_per_pass(&self) -> u64 {
        match (self.entries.as_slice(), self.targets.len()) {
            ([e], 1) => {
                let s = &e.spans[0];
                if s.shuffle.is_some() {
                    s.positions
                } else {
                    (s.end - s.start) / e.block as u64
                }
            }
            _ => 0,
        }
    }

    /// The next I/O and its class.
    #[inline]
    pub fn next_op(&mut self) -> (IoOp, u16) {
        if let Some(flush) = self.pending_flush.take() {
            return (flush, flush.class);
        }
        let e = if self.entries.len() == 1 {
            0
        } else {
            let r = self.rng.random_range(0..self.total_weight);
            self.cumulative_weights
                .iter()
                .position(|&c| r < c)
                .unwrap_or(0)
        };
        let ti = match self.choice {
            _ if self.targets.len() == 1 => 0,
            TargetChoice::RoundRobin => {
                let t = self.next_target;
                self.next_target = if t + 1 == self.targets.len() {
                    0
                } else {
                    t + 1
                };
                t
            }
            TargetChoice::Random => match self.target_sums.last() {
                None => self.rng.random_range(0..self.targets.len()),
                Some(&total) => {
                    let r = self.rng.random_range(0..total);
                    self.target_sums.partition_point(|&c| c <= r)
                }
            },
        };
        let target = self.targets[ti];
        let entry = &mut self.entries[e];
        let read = (self.rng.next_u32() as u64) < entry.read_threshold;
        let random = (self.rng.next_u32() as u64) < entry.random_threshold;
        let len = match entry.sizes.last() {
            None => entry.block,
            Some(&(_, total)) => {
                let r = self.rng.random_range(0..total);
                entry
                    .sizes
                    .iter()
                    .find(|s| r < s.1)
                    .map_or(entry.block, |s| s.0)
            }
        };
        let block = len as u64;
        let span = &mut entry.spans[ti];
        let (base, limit) = span.bounds(u64::from(entry.block));
        let offset = if random {
            let mut k = pick(&mut self.rng, span);
            if span.zone.is_some() {
                // A last zone the span's end cuts short: its positions wrap into what is there.
                let room = (limit - base).saturating_sub(block) / span.align + 1;
                if k >= room {
                    k %= room;
                }
            }
            base + k * span.align
        } else {
            let mut o = span.seq_next;
            if entry.roll_every > 0 {
                let into = (o - span.start) % entry.roll_every;
                if into + block > entry.roll_every {
                    o += entry.roll_every - into;
                }
            }
            if o + block > limit {
                o = base;
            }
            span.seq_next = match entry.gap {
                0 => o + block,
                gap => {
                    let next = i128::from(o) + i128::from(block) + i128::from(gap);
                    if next < i128::from(base) {
                        // Back past the start: on to the last whole block of the span (zone).
                        base + (limit - base - block) / block * block
                    } else {
                        u64::try_from(next).unwrap_or(base)
                    }
                }
            };
            o
        };
        if let Some(z) = &mut span.zone {
            z.done += block;
        }
        let class = entry.class;
        let op = IoOp {
            kind: if read { OpKind::Read } else { OpKind::Write },
            target,
            offset,
            len,
            dsync: entry.dsync,
            atomic: entry.atomic && !read,
            class,
        };
        if !read {
            let flush = IoOp {
                kind: OpKind::Flush,
                target,
                offset: 0,
                len: 0,
                dsync: false,
                atomic: false,
                class,
            };
            if entry.fsync_every > 0 {
                entry.writes_since_fsync += 1;
                if entry.writes_since_fsync >= entry.fsync_every {
                    entry.writes_since_fsync = 0;
                    self.pending_flush = Some(flush);
                }
            }
            let every = self.target_geometry[target as usize].fsync_every;
            if every > 0 {
                let w = &mut self.target_writes[target as usize];
                *w += 1;
                if *w >= every {
                    *w = 0;
                    self.pending_flush = Some(flush);
                }
            }
        }
        (op, class)
    }
}

#[inline]
fn pick(rng: &mut SmallRng, span: &mut Span) -> u64 {
    let k = draw(rng, span);
    match span.scatter {
        None => k,
        Some((a, b)) => {
            ((u128::from(a) * u128::from(k) + u128::from(b)) % u128::from(span.positions)) as u64
        }
    }
}

/// A position of the span's distribution (counted from its start).
#[inline]
fn draw(rng: &mut SmallRng, span: &mut Span) -> u64 {
    if let Some((state, a, c, mask)) = &mut span.shuffle {
        loop {
            *state = (state.wrapping_mul(*a).wrapping_add(*c)) & *mask;
            if *state < span.positions {
                return *state;
            }
        }
    }
    if let Some(z) = &span.zipf {
        return z.sample(rng);
    }
    if !span.zones.is_empty() {
        let r = rng.next_u32() as u64;
        let &(_, first, count) = span
            .zones
            .iter()
            .find(|z| r < z.0)
            .unwrap_or(&span.zones[span.zones.len() - 1]);
        return first + rng.random_range(0..count);
    }
    rng.random_range(0..span.positions)
}

fn span(a: &Access, target_size: u64, seed: u64) -> Result<Span, String> {
    let block = a.block_size_bytes;
    let start = a.offset_bytes;
    let end = match a.length_bytes {
        Some(l) => start.saturating_add(l),
        None => target_size,
    };
    if end > target_size || start.saturating_add(block) > end {
        return Err(format!(
            "the span {start}..{end} with {block}-byte blocks does not fit in the target ({target_size} bytes)"
        ));
    }
    let last = end - block;
    // With zones, the distribution's positions are a zone's (a zone holds a block).
    let positions = match &a.zones {
        Some(z) => (z.size_bytes.min(end - start) - block) / a.align_bytes + 1,
        None => (last - start) / a.align_bytes + 1,
    };
    let zipf = match a.distribution {
        Distribution::Zipf { theta } => Some(Zipf::new(positions, theta)?),
        _ => None,
    };
    let mut zones = Vec::new();
    if let Distribution::Zoned { bands } = &a.distribution {
        let mut io_acc = 0.0;
        let mut span_acc = 0.0;
        for b in bands {
            let first = ((span_acc / 100.0) * positions as f64) as u64;
            span_acc += b.span_pct;
            let stop = (((span_acc / 100.0) * positions as f64) as u64).min(positions);
            io_acc += b.io_pct;
            if b.io_pct > 0.0 {
                zones.push((threshold(io_acc), first, (stop - first).max(1)));
            }
        }
        if let Some(z) = zones.last_mut() {
            z.0 = u64::MAX;
        }
    }
    let shuffle = (a.distribution == Distribution::Shuffle).then(|| {
        let mask = positions.next_power_of_two() - 1;
        // Hull–Dobell: c odd and a ≡ 1 (mod 4) give the full period 2^k.
        let seed = crate::engine::buf::splitmix(seed ^ start);
        (
            seed & mask,
            (seed >> 20 << 2) | 1 | 4,
            (seed >> 7) | 1,
            mask,
        )
    });
    let scatter = a.scatter.then(|| {
        let seed = crate::engine::buf::splitmix(seed ^ start ^ 0x5ca7);
        // A stride near the golden section of the span spreads neighbours far apart; the
        // first coprime one at or after it makes the map a bijection.
        let n = positions.max(1);
        let mut stride = ((n as f64 * 0.618_033_988_7) as u64).max(1) | 1;
        while gcd(stride, n) != 1 {
            stride += 1;
        }
        (stride % n.max(2), seed % n)
    });
    Ok(Span {
        start,
        end,
        shuffle,
        scatter,
        positions,
        align: a.align_bytes,
        // Past the end, the first I/O wraps to the start.
        seq_next: start.saturating_add(a.start_bytes),
        zipf,
        zones,
        zone: a.zones.map(|z| Zone {
            size: z.size_bytes,
            transfer: z.transfer_bytes,
            step: z.size_bytes.saturating_add(z.skip_bytes),
            start,
            done: 0,
        }),
    })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Band, Worker};

    fn worker(access: Vec<Access>, targets: usize) -> Worker {
        Worker::closed_loop("w", (0..targets).collect(), 1, access)
    }

    fn access(block: u64, read: f64, random: f64) -> Access {
        Access::new(0, block, read, random)
    }

    fn geo(size: u64) -> TargetGeometry {
        TargetGeometry {
            size_bytes: size,
            fsync_every: 0,
        }
    }

    #[test]
    fn read_ratio_weights_and_alignment() {
        let mut a = access(4096, 70.0, 100.0);
        let mut b = access(65536, 0.0, 0.0);
        b.class = 1;
        a.weight = 9;
        let w = worker(vec![a, b], 1);
        let mut g = AccessGen::new(&w, &[geo(1 << 30)], 1).unwrap();
        let (mut reads, mut class0, n) = (0, 0, 100_000);
        let mut last_seq = None;
        for _ in 0..n {
            let (op, class) = g.next_op();
            assert!(op.offset + op.len as u64 <= 1 << 30);
            if class == 0 {
                class0 += 1;
                assert_eq!(op.offset % 4096, 0);
                if op.kind == OpKind::Read {
                    reads += 1;
                }
            } else {
                assert_eq!(op.kind, OpKind::Write);
                if let Some(prev) = last_seq {
                    assert_eq!(op.offset, prev + 65536, "sequential entry continues");
                }
                last_seq = Some(op.offset);
            }
        }
        let share = class0 as f64 / n as f64;
        assert!((share - 0.9).abs() < 0.01, "{share}");
        let read_share = reads as f64 / class0 as f64;
        assert!((read_share - 0.7).abs() < 0.01, "{read_share}");
    }

    #[test]
    fn weighted_targets_get_their_share_and_unweighted_ones_an_equal_one() {
        let shares = |weights: Vec<u32>| {
            let mut w = worker(vec![access(4096, 100.0, 100.0)], 3);
            w.target_choice = TargetChoice::Random;
            w.target_weights = weights;
            let mut g = AccessGen::new(&w, &[geo(1 << 20); 3], 5).unwrap();
            let mut n = [0u32; 3];
            for _ in 0..80_000 {
                n[g.next_op().0.target as usize] += 1;
            }
            n.map(|c| f64::from(c) / 80_000.0)
        };
        let close =
            |got: [f64; 3], want: [f64; 3]| got.iter().zip(want).all(|(g, w)| (g - w).abs() < 0.01);
        let s = shares(vec![3, 1, 4]);
        assert!(close(s, [0.375, 0.125, 0.5]), "{s:?}");
        let s = shares(Vec::new());
        assert!(close(s, [1.0 / 3.0; 3]), "{s:?}");
        // A weight of one beside large ones still gets its share, and the last target too.
        let s = shares(vec![1_000_000, 1, 1_000_000]);
        assert!(close(s, [0.5, 0.0, 0.5]), "{s:?}");
    }

    #[test]
    fn a_gap_skips_after_each_sequential_io_and_a_negative_one_goes_back() {
        let offsets = |gap: i64, n: usize| {
            let mut a = access(4096, 100.0, 0.0);
            a.gap_bytes = gap;
            let w = worker(vec![a], 1);
            let mut g = AccessGen::new(&w, &[geo(16 * 4096)], 1).unwrap();
            (0..n)
                .map(|_| g.next_op().0.offset / 4096)
                .collect::<Vec<_>>()
        };
        // fio's rw=read:4k with 4 KiB blocks: every other block, wrapping to the start.
        assert_eq!(offsets(4096, 10), [0, 2, 4, 6, 8, 10, 12, 14, 0, 2]);
        // rw=read:-8k: backwards, from the end once the start is passed.
        assert_eq!(offsets(-8192, 5), [0, 15, 14, 13, 12]);
        assert_eq!(offsets(-4096, 3), [0, 0, 0], "fio repeats the offset too");
    }

    #[test]
    fn uniform_covers_the_span_evenly() {
        let mut a = access(4096, 100.0, 100.0);
        a.offset_bytes = 1 << 20;
        a.length_bytes = Some(1 << 20);
        let w = worker(vec![a], 1);
        let mut g = AccessGen::new(&w, &[geo(8 << 20)], 3).unwrap();
        let mut buckets = [0u32; 4];
        for _ in 0..40_000 {
            let (op, _) = g.next_op();
            assert!(op.offset >= 1 << 20 && op.offset + 4096 <= 2 << 20);
            buckets[((op.offset - (1 << 20)) / (256 << 10)) as usize] += 1;
        }
        for b in buckets {
            assert!((b as f64 - 10_000.0).abs() < 500.0, "{buckets:?}");
        }
    }

    #[test]
    fn a_scattered_hot_set_lies_where_the_seed_puts_it() {
        // zoned:90/10:10/90 over 1000 positions, scattered: the 100 hottest positions get 90 %
        // of the I/O, as counted from the start, but lie all over the span.
        let hot = |seed: u64| {
            let mut a = access(4096, 100.0, 100.0);
            a.distribution = Distribution::Zoned {
                bands: vec![
                    Band {
                        io_pct: 90.0,
                        span_pct: 10.0,
                    },
                    Band {
                        io_pct: 10.0,
                        span_pct: 90.0,
                    },
                ],
            };
            a.scatter = true;
            let w = worker(vec![a], 1);
            let mut g = AccessGen::new(&w, &[geo(1000 * 4096)], seed).unwrap();
            let mut counts = vec![0u32; 1000];
            for _ in 0..100_000 {
                counts[(g.next_op().0.offset / 4096) as usize] += 1;
            }
            let mut order: Vec<usize> = (0..1000).collect();
            order.sort_by_key(|&p| std::cmp::Reverse(counts[p]));
            let top: u32 = order[..100].iter().map(|&p| counts[p]).sum();
            assert!((top as f64 / 100_000.0 - 0.9).abs() < 0.01, "{top}");
            let mut set: Vec<usize> = order[..100].to_vec();
            set.sort_unstable();
            set
        };
        let a = hot(7);
        assert_eq!(a, hot(7), "the same seed, the same hot set");
        assert_ne!(a, hot(8), "another seed, another place");
        // Spread: every tenth of the span holds some of it (from the start, all of it would
        // be in the first).
        for tenth in 0..10 {
            assert!(
                a.iter().any(|&p| p / 100 == tenth),
                "no hot position in tenth {tenth}: {a:?}"
            );
        }
    }

    #[test]
    fn zoned_bands_get_their_share() {
        let mut a = access(4096, 100.0, 100.0);
        a.distribution = Distribution::Zoned {
            bands: vec![
                Band {
                    io_pct: 80.0,
                    span_pct: 10.0,
                },
                Band {
                    io_pct: 20.0,
                    span_pct: 90.0,
                },
            ],
        };
        let size = 100 * 4096 * 10;
        let w = worker(vec![a], 1);
        let mut g = AccessGen::new(&w, &[geo(size)], 5).unwrap();
        let mut hot = 0;
        for _ in 0..50_000 {
            if g.next_op().0.offset < size / 10 {
                hot += 1;
            }
        }
        let share = hot as f64 / 50_000.0;
        assert!((share - 0.8).abs() < 0.01, "{share}");
    }

    #[test]
    fn zipf_is_skewed_to_the_start() {
        let mut a = access(4096, 100.0, 100.0);
        a.distribution = Distribution::Zipf { theta: 1.2 };
        let w = worker(vec![a], 1);
        let size = 4096 * 10_000;
        let mut g = AccessGen::new(&w, &[geo(size)], 5).unwrap();
        let mut first = 0;
        for _ in 0..20_000 {
            let op = g.next_op().0;
            assert!(op.offset + 4096 <= size);
            if op.offset < size / 100 {
                first += 1;
            }
        }
        assert!(first > 20_000 / 2, "{first}");
    }

    #[test]
    fn same_seed_same_sequence_and_round_robin() {
        let w = worker(vec![access(4096, 50.0, 100.0)], 3);
        let geos = [geo(1 << 20), geo(1 << 20), geo(1 << 20)];
        let mut g1 = AccessGen::new(&w, &geos, 9).unwrap();
        let mut g2 = AccessGen::new(&w, &geos, 9).unwrap();
        for i in 0..1000 {
            let (a, _) = g1.next_op();
            assert_eq!(a.target as usize, i % 3);
            assert_eq!(a, g2.next_op().0);
        }
    }

    #[test]
    fn fsync_every_inserts_flushes() {
        let mut a = access(4096, 0.0, 0.0);
        a.fsync_every = 4;
        let w = worker(vec![a], 1);
        let mut g = AccessGen::new(&w, &[geo(1 << 20)], 1).unwrap();
        let kinds: Vec<OpKind> = (0..10).map(|_| g.next_op().0.kind).collect();
        assert_eq!(kinds[4], OpKind::Flush);
        assert_eq!(kinds[9], OpKind::Flush);
        assert_eq!(kinds.iter().filter(|k| **k == OpKind::Flush).count(), 2);
    }

    #[test]
    fn variable_sizes_and_roll_over() {
        let mut a = access(32768, 0.0, 0.0);
        a.block_sizes = vec![(4096, 1), (8192, 1), (32768, 1)];
        a.roll_every_bytes = 1 << 20;
        let w = worker(vec![a], 1);
        let mut g = AccessGen::new(&w, &[geo(4 << 20)], 1).unwrap();
        let mut sizes = std::collections::BTreeMap::new();
        let mut expected = 0u64;
        let mut rolls = 0;
        for _ in 0..10_000 {
            let op = g.next_op().0;
            *sizes.entry(op.len).or_insert(0u32) += 1;
            let start_file = op.offset >> 20;
            assert_eq!(
                (op.offset + op.len as u64 - 1) >> 20,
                start_file,
                "never crosses a 1 MiB boundary"
            );
            if op.offset != expected {
                assert!(op.offset % (1 << 20) == 0, "a jump lands on a boundary");
                rolls += 1;
            }
            expected = op.offset + op.len as u64;
        }
        assert_eq!(sizes.len(), 3);
        for n in sizes.values() {
            assert!((*n as f64 - 3333.0).abs() < 300.0, "{sizes:?}");
        }
        assert!(rolls > 10);
    }

    #[test]
    fn a_start_begins_the_stream_part_way_and_it_wraps_to_the_span_s_start() {
        let mut a = access(4096, 100.0, 0.0);
        a.offset_bytes = 1024;
        a.start_bytes = 8192;
        a.gap_bytes = 4096;
        let w = worker(vec![a], 1);
        let mut g = AccessGen::new(&w, &[geo(40960)], 1).unwrap();
        let offsets: Vec<u64> = (0..6).map(|_| g.next_op().0.offset).collect();
        // From 1 KiB + 8 KiB every 8 KiB to the end, then from the span's start again.
        assert_eq!(offsets, [9216, 17408, 25600, 33792, 1024, 9216]);
    }

    #[test]
    fn sequential_wraps_at_the_end() {
        let w = worker(vec![access(4096, 100.0, 0.0)], 1);
        let mut g = AccessGen::new(&w, &[geo(3 * 4096)], 1).unwrap();
        let offs: Vec<u64> = (0..5).map(|_| g.next_op().0.offset).collect();
        assert_eq!(offs, vec![0, 4096, 8192, 0, 4096]);
    }

    /// The first 40 offsets, in KiB, of 4 KiB I/Os over a 256 KiB target in zones of `size`,
    /// `transfer` and `skip` KiB.
    fn zoned(random: bool, (size, transfer, skip): (u64, u64, u64), gap: i64) -> Vec<u64> {
        let mut a = access(4096, 100.0, if random { 100.0 } else { 0.0 });
        a.distribution = Distribution::Shuffle;
        a.gap_bytes = gap;
        a.zones = Some(crate::job::Zones {
            size_bytes: size << 10,
            transfer_bytes: transfer << 10,
            skip_bytes: skip << 10,
        });
        let w = worker(vec![a], 1);
        let mut g = AccessGen::new(&w, &[geo(256 << 10)], 1).unwrap();
        (0..40).map(|_| g.next_op().0.offset >> 10).collect()
    }

    /// Offsets fio 3.33 issued (`fio --debug=io`, the `fill:` lines) for a job of
    /// `filename=z.dat` (256 KiB), `ioengine=psync`, `bs=4k`, `number_ios=40`,
    /// `zonemode=strided` and each case's options.
    #[test]
    fn strided_zones_visit_the_offsets_fio_does() {
        // rw=read zonesize=16k zoneskip=32k: zones of 16 KiB (zonerange defaults to it), the
        // one at 240 KiB the last before the end.
        let fio: Vec<u64> = "0 4 8 12 48 52 56 60 96 100 104 108 144 148 152 156 192 196 200 204 240 244 248 252 0 4 8 12 48 52 56 60 96 100 104 108 144 148 152 156"
            .split(' ').map(|v| v.parse().unwrap()).collect();
        assert_eq!(zoned(false, (16, 16, 32), 0), fio);
        // rw=read zonerange=32k zonesize=8k zoneskip=16k: 8 KiB of each 32 KiB zone, and the
        // zone at 240 KiB, which the end cuts short, is used.
        let fio: Vec<u64> = "0 4 48 52 96 100 144 148 192 196 240 244 0 4 48 52 96 100 144 148 192 196 240 244 0 4 48 52 96 100 144 148 192 196 240 244 0 4 48 52"
            .split(' ').map(|v| v.parse().unwrap()).collect();
        assert_eq!(zoned(false, (32, 8, 16), 0), fio);
        // rw=read zonerange=8k zonesize=24k zoneskip=8k: three times round each zone.
        let fio: Vec<u64> = "0 4 0 4 0 4 16 20 16 20 16 20 32 36 32 36 32 36 48 52 48 52 48 52 64 68 64 68 64 68 80 84 80 84 80 84 96 100 96 100"
            .split(' ').map(|v| v.parse().unwrap()).collect();
        assert_eq!(zoned(false, (8, 24, 8), 0), fio);
        // rw=randread zonerange=16k zonesize=16k zoneskip=16k (fio's random map): each zone's
        // four blocks once, in an order of the generator's, zone after zone. fio issued
        // 0 8 12 4 | 36 44 40 32 | 76 64 68 72 | 108 96 100 104 | 132 140 136 128 | ...
        let offsets = zoned(true, (16, 16, 16), 0);
        for (z, four) in offsets.chunks(4).enumerate() {
            let start = (z as u64 % 8) * 32;
            let mut got = four.to_vec();
            got.sort_unstable();
            assert_eq!(
                got,
                [start, start + 4, start + 8, start + 12],
                "zone {z}: {offsets:?}"
            );
        }
        // rw=read:4k zonerange=32k zonesize=32k zoneskip=32k: fio issued 0 8 16 24 32 0 8 16,
        // its hole added after its zone check so that one read is past the zone; storlab's
        // stream stays in the zone.
        let ours = zoned(false, (32, 32, 32), 4096);
        assert_eq!(ours[..10], [0, 8, 16, 24, 0, 8, 16, 24, 64, 72]);
    }
}
