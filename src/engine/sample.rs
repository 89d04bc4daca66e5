//! The sampled block stream of a run (SHARDS: spatially hashed sampling): every block an I/O
//! touches is hashed by (target, block number) and kept when the hash falls under a threshold,
//! so a block is either always sampled or never, and the sample's reuse distances are the full
//! stream's scaled by the rate. The rate is chosen from the targets' size so that about
//! [`SAMPLE_BLOCKS`] distinct blocks are kept (every block of small targets). Each worker fills
//! buffers of fixed capacity from a small pool it was given before the run: a full buffer (and
//! the current one at every interval boundary) goes to the collector, which writes it out and
//! hands it back. A reference that finds no free buffer (the collector fell behind) is counted
//! as dropped: nothing is allocated on the I/O path.

use super::worker::WorkerMsg;
use super::{IoOp, OpKind};
use crate::stats::blocks::{BlockRef, SEQUENTIAL, WRITE};
use std::sync::mpsc::{Receiver, Sender};

/// Distinct blocks the sample aims to keep.
pub(crate) const SAMPLE_BLOCKS: u64 = 64 << 10;
/// The hash space the threshold is taken in: 2^24.
pub(crate) const MODULUS: u64 = 1 << 24;
/// References one buffer holds.
pub(crate) const BUFFER_REFS: usize = 64 << 10;
/// Buffers of a worker's pool (one filling, the others on their way to the collector and back).
pub(crate) const BUFFERS: usize = 4;
/// Bytes of a block: the page-cache granularity, whatever the I/O sizes.
pub(crate) const BLOCK_BYTES: u64 = 4096;
/// Distinct blocks the reuse summary of a run without `sample_blocks` keeps (about): a
/// sixteenth of a recorded sample's, in pools of [`REUSE_BUFFERS`] × [`REUSE_BUFFER_REFS`].
pub(crate) const REUSE_BLOCKS: u64 = 4 << 10;
/// Buffers of a worker's pool for the reuse summary alone.
pub(crate) const REUSE_BUFFERS: usize = 2;
/// References per buffer of that pool.
pub(crate) const REUSE_BUFFER_REFS: usize = 4 << 10;

/// What to sample: the block size and the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleSpec {
    /// Bytes of a block (a power of two).
    pub block_bytes: u64,
    /// A block is sampled when its hash modulo [`MODULUS`] is under this.
    pub threshold: u64,
}

impl SampleSpec {
    /// The spec for targets of `total_bytes` together, in blocks of `block_bytes` (a power of
    /// two): a rate that keeps about [`SAMPLE_BLOCKS`] of them (all when there are fewer).
    pub(crate) fn for_size(total_bytes: u64, block_bytes: u64) -> Self {
        Self::keeping(total_bytes, block_bytes, SAMPLE_BLOCKS)
    }

    /// As [`SampleSpec::for_size`], keeping about `keep` blocks.
    pub(crate) fn keeping(total_bytes: u64, block_bytes: u64, keep: u64) -> Self {
        debug_assert!(block_bytes.is_power_of_two());
        let blocks = total_bytes.div_ceil(block_bytes.max(1)).max(1);
        let threshold = if blocks <= keep {
            MODULUS
        } else {
            (u128::from(keep) * u128::from(MODULUS) / u128::from(blocks)).max(1) as u64
        };
        SampleSpec {
            block_bytes,
            threshold,
        }
    }

    /// The sampling rate.
    pub(crate) fn rate(&self) -> f64 {
        self.threshold as f64 / MODULUS as f64
    }

    /// Whether block `block` of target `target` is in the sample.
    pub(crate) fn sampled(&self, target: u32, block: u64) -> bool {
        self.threshold >= MODULUS || block_hash(target, block) % MODULUS < self.threshold
    }
}

/// The hash a block is sampled by.
pub(crate) fn block_hash(target: u32, block: u64) -> u64 {
    super::buf::splitmix(block ^ (u64::from(target) << 48))
}

/// The buffers of one worker's pool: where the collector returns them, and where the worker
/// finds them. [`pool`] fills it.
pub(crate) type Spares = (Sender<Vec<BlockRef>>, Receiver<Vec<BlockRef>>);

/// A pool of [`BUFFERS`] empty buffers.
pub(crate) fn pool() -> Spares {
    pool_of(BUFFERS, BUFFER_REFS)
}

/// A pool of `buffers` empty buffers of `refs` references each.
pub(crate) fn pool_of(buffers: usize, refs: usize) -> Spares {
    let (tx, rx) = std::sync::mpsc::channel();
    for _ in 0..buffers {
        let _ = tx.send(Vec::with_capacity(refs));
    }
    (tx, rx)
}

/// One worker's sampler.
#[derive(Debug)]
pub(crate) struct BlockSampler {
    spec: SampleSpec,
    worker: usize,
    /// The buffer being filled (empty with no capacity when the pool ran dry).
    refs: Vec<BlockRef>,
    spares: Receiver<Vec<BlockRef>>,
    out: Sender<WorkerMsg>,
    /// Where the previous I/O on each target ended (sequential detection).
    ends: Vec<u64>,
    /// Block references seen, sampled or not.
    pub references: u64,
    /// Sampled references that did not fit in the buffer.
    pub dropped: u64,
}

impl BlockSampler {
    /// The sampler of worker `worker` with `targets` targets: buffers from `spares`, full ones
    /// to `out`.
    pub(crate) fn new(
        spec: SampleSpec,
        targets: usize,
        worker: usize,
        spares: Receiver<Vec<BlockRef>>,
        out: Sender<WorkerMsg>,
    ) -> Self {
        let refs = spares.try_recv().unwrap_or_default();
        BlockSampler {
            spec,
            worker,
            refs,
            spares,
            out,
            ends: vec![u64::MAX; targets],
            references: 0,
            dropped: 0,
        }
    }

    /// Records the blocks of `op`, issued at `t_ns`.
    #[inline]
    pub(crate) fn record(&mut self, op: &IoOp, t_ns: u64) {
        if op.kind.is_sync() || op.len == 0 {
            return;
        }
        // A power of two: a shift, not a division (which would cost more than the rest).
        let shift = self.spec.block_bytes.trailing_zeros();
        let first = op.offset >> shift;
        let last = (op.offset + u64::from(op.len) - 1) >> shift;
        self.references += last - first + 1;
        let mut flags = if op.kind == OpKind::Write { WRITE } else { 0 };
        if let Some(end) = self.ends.get_mut(op.target as usize) {
            if *end == op.offset {
                flags |= SEQUENTIAL;
            }
            *end = op.offset + u64::from(op.len);
        }
        for block in first..=last {
            if !self.spec.sampled(op.target, block) {
                continue;
            }
            if self.refs.len() == self.refs.capacity() && !self.flush() {
                self.dropped += 1;
                continue;
            }
            self.refs.push(BlockRef {
                t_ns,
                block,
                target: op.target as u16,
                class: op.class,
                flags,
            });
        }
    }

    /// Sends the references buffered so far to the collector and goes on in a free buffer;
    /// whether there was one (if not, the references stay and wait).
    pub(crate) fn flush(&mut self) -> bool {
        match self.spares.try_recv() {
            Ok(next) => {
                let full = std::mem::replace(&mut self.refs, next);
                if !full.is_empty() {
                    let _ = self.out.send(WorkerMsg::Blocks {
                        worker: self.worker,
                        refs: full,
                    });
                }
                true
            }
            Err(_) => false,
        }
    }

    /// Sends what is left, at the end of the run.
    pub(crate) fn finish(&mut self) {
        if !self.refs.is_empty() {
            let _ = self.out.send(WorkerMsg::Blocks {
                worker: self.worker,
                refs: std::mem::take(&mut self.refs),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(kind: OpKind, offset: u64, len: u32) -> IoOp {
        IoOp {
            kind,
            target: 1,
            offset,
            len,
            dsync: false,
            atomic: false,
            class: 3,
        }
    }

    #[test]
    fn small_targets_are_sampled_whole_and_large_ones_at_a_rate() {
        let all = SampleSpec::for_size(100 << 20, 4096);
        assert_eq!(all.rate(), 1.0);
        assert!((0..1000).all(|b| all.sampled(0, b)));
        // 64 GiB of 4 KiB blocks: 16 Mi blocks, about 64 Ki of them kept.
        let some = SampleSpec::for_size(64 << 30, 4096);
        assert!((some.rate() - 1.0 / 256.0).abs() < 1e-9, "{}", some.rate());
        let kept = (0..1u64 << 24).filter(|&b| some.sampled(0, b)).count() as f64;
        assert!((kept / 65536.0 - 1.0).abs() < 0.02, "{kept}");
        // The same blocks every time, different ones on another target.
        let a: Vec<u64> = (0..100_000).filter(|&b| some.sampled(0, b)).collect();
        let b: Vec<u64> = (0..100_000).filter(|&b| some.sampled(1, b)).collect();
        assert_eq!(
            a,
            (0..100_000)
                .filter(|&b| some.sampled(0, b))
                .collect::<Vec<_>>()
        );
        assert_ne!(a, b);
    }

    /// A sampler of worker 0 with its pool, and what it sends.
    fn sampler(spec: SampleSpec) -> (BlockSampler, Sender<Vec<BlockRef>>, Receiver<WorkerMsg>) {
        let (back, spares) = pool();
        let (tx, rx) = std::sync::mpsc::channel();
        (BlockSampler::new(spec, 2, 0, spares, tx), back, rx)
    }

    /// The references sent so far.
    fn sent(rx: &Receiver<WorkerMsg>) -> Vec<Vec<BlockRef>> {
        rx.try_iter()
            .map(|m| match m {
                WorkerMsg::Blocks { worker: 0, refs } => refs,
                _ => panic!("not a block message"),
            })
            .collect()
    }

    #[test]
    fn every_block_of_an_io_is_referenced_with_its_direction_and_sequence() {
        let spec = SampleSpec::for_size(1 << 20, 4096);
        let (mut s, _back, rx) = sampler(spec);
        s.record(&op(OpKind::Read, 8192, 8192), 10);
        s.record(&op(OpKind::Write, 16384, 4096), 20);
        s.record(&op(OpKind::Read, 0, 512), 30);
        s.record(&op(OpKind::Flush, 0, 0), 40);
        assert!(sent(&rx).is_empty(), "nothing before a flush");
        assert!(s.flush());
        let refs = sent(&rx).concat();
        let got: Vec<(u64, u64, u8)> = refs.iter().map(|r| (r.t_ns, r.block, r.flags)).collect();
        assert_eq!(
            got,
            [
                (10, 2, 0),
                (10, 3, 0),
                (20, 4, WRITE | SEQUENTIAL),
                (30, 0, 0)
            ]
        );
        assert!(refs.iter().all(|r| r.target == 1 && r.class == 3));
        assert_eq!(s.references, 4);
        s.finish();
        assert!(sent(&rx).is_empty(), "nothing left");
    }

    #[test]
    fn full_buffers_go_out_and_with_none_left_references_are_dropped() {
        let spec = SampleSpec {
            block_bytes: 4096,
            threshold: MODULUS,
        };
        let (mut s, back, rx) = sampler(spec);
        // The pool's buffers, all filled, and 10 more references: the collector gave none
        // back, so those 10 are dropped.
        let all = (BUFFERS * BUFFER_REFS) as u64;
        for i in 0..all + 10 {
            s.record(&op(OpKind::Read, i * 8192, 4096), i);
        }
        assert_eq!(s.dropped, 10);
        let out = sent(&rx);
        assert_eq!(out.len(), BUFFERS - 1);
        assert!(out.iter().all(|b| b.len() == BUFFER_REFS));
        // One given back: the waiting buffer goes out and sampling goes on.
        let mut b = out.into_iter().next().unwrap();
        b.clear();
        back.send(b).unwrap();
        s.record(&op(OpKind::Read, 0, 4096), 0);
        assert_eq!(s.dropped, 10);
        let out = sent(&rx);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].last().unwrap().t_ns, all - 1);
        s.finish();
        assert_eq!(sent(&rx).concat().len(), 1);
    }
}
