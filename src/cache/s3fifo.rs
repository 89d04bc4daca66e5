//! S3-FIFO (Yang et al., SOSP 2023): three FIFO queues. New blocks enter a small queue S (10 %
//! of the cache); a block leaving S goes to the main queue M if it was referenced while in S,
//! otherwise to a ghost queue G that remembers only its key. A block found in G goes straight
//! to M. M evicts from its tail, giving blocks referenced since their last pass another round
//! (each reference is worth one, up to 3). One-hit wonders leave quickly; reused blocks stay.

use super::{KeyHash, KeyMap, Policy};
use std::collections::VecDeque;

/// Share of the cache the small queue holds, percent.
pub(crate) const SMALL_PCT: usize = 10;
/// Highest reference count a block keeps.
const MAX_FREQ: u8 = 3;

/// An S3-FIFO cache of `capacity` blocks.
#[derive(Debug)]
pub(crate) struct S3Fifo {
    small_cap: usize,
    main_cap: usize,
    small: VecDeque<u64>,
    main: VecDeque<u64>,
    /// Cached blocks (in S or M): their reference count since entering their queue or
    /// their last pass of M.
    cached: KeyMap<u8>,
    /// Ghost keys, oldest first, with the insertion number each was added under.
    ghost: VecDeque<(u64, u64)>,
    ghosts: KeyMap<u64>,
    inserted: u64,
    /// The cached keys the last access dropped (moving a block from S to M can push one out
    /// of M before one leaves S).
    evicted: Vec<u64>,
}

impl S3Fifo {
    /// An empty cache of `capacity` blocks (at least 2: one small, one main).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(2);
        let small_cap = (capacity * SMALL_PCT / 100).max(1);
        S3Fifo {
            small_cap,
            main_cap: capacity - small_cap,
            small: VecDeque::new(),
            main: VecDeque::new(),
            cached: KeyMap::with_capacity_and_hasher(capacity.min(1 << 16), KeyHash),
            ghost: VecDeque::new(),
            ghosts: KeyMap::default(),
            inserted: 0,
            evicted: Vec::with_capacity(4),
        }
    }

    fn remember(&mut self, key: u64) {
        self.inserted += 1;
        self.ghost.push_back((key, self.inserted));
        self.ghosts.insert(key, self.inserted);
        while self.ghosts.len() > self.main_cap {
            let Some((k, n)) = self.ghost.pop_front() else {
                break;
            };
            if self.ghosts.get(&k) == Some(&n) {
                self.ghosts.remove(&k);
            }
        }
    }

    /// Evicts from M's tail: blocks referenced since their last pass go round again.
    fn evict_main(&mut self) {
        while let Some(k) = self.main.pop_front() {
            let Some(e) = self.cached.get_mut(&k) else {
                continue;
            };
            if *e > 0 {
                *e -= 1;
                self.main.push_back(k);
            } else {
                self.cached.remove(&k);
                self.evicted.push(k);
                return;
            }
        }
    }

    /// Moves S's oldest block on: to M if it was referenced in S, else out (into G).
    fn evict_small(&mut self) {
        while let Some(k) = self.small.pop_front() {
            let Some(e) = self.cached.get_mut(&k) else {
                continue;
            };
            if *e > 0 {
                *e = 0;
                self.main.push_back(k);
                if self.main.len() > self.main_cap {
                    self.evict_main();
                }
            } else {
                self.cached.remove(&k);
                self.remember(k);
                self.evicted.push(k);
                return;
            }
        }
    }

    fn make_room(&mut self) {
        while self.small.len() + self.main.len() >= self.small_cap + self.main_cap {
            if self.small.len() >= self.small_cap || self.main.is_empty() {
                self.evict_small();
            } else {
                self.evict_main();
            }
        }
    }
}

impl Policy for S3Fifo {
    fn lookup(&mut self, key: u64) -> bool {
        match self.cached.get_mut(&key) {
            Some(e) => {
                *e = (*e + 1).min(MAX_FREQ);
                true
            }
            None => false,
        }
    }

    fn evicted(&mut self) -> Option<u64> {
        self.evicted.pop()
    }

    fn access(&mut self, key: u64) -> bool {
        self.evicted.clear();
        if let Some(e) = self.cached.get_mut(&key) {
            *e = (*e + 1).min(MAX_FREQ);
            return true;
        }
        self.make_room();
        if self.ghosts.remove(&key).is_some() {
            self.cached.insert(key, 0);
            self.main.push_back(key);
        } else {
            self.cached.insert(key, 0);
            self.small.push_back(key);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_holds_at_most_its_capacity() {
        let mut s = S3Fifo::new(10);
        for k in 0..1000u64 {
            s.access(k * 7 % 31);
            assert!(s.cached.len() <= 10, "{}", s.cached.len());
            assert_eq!(s.cached.len(), s.small.len() + s.main.len());
            assert!(s.ghosts.len() <= 9);
        }
    }

    #[test]
    fn one_hit_wonders_do_not_flush_the_reused_set() {
        // Ten blocks used twice (so they reach M), then rounds of the ten and 30 blocks used
        // once: the one-hit wonders pass through S and out, the ten stay.
        let mut s = S3Fifo::new(20);
        for k in (0..10).chain(0..10) {
            s.access(k);
        }
        let mut hits = 0;
        for round in 0..50u64 {
            for k in 0..10 {
                hits += u64::from(s.access(k));
            }
            for w in 0..30 {
                s.access(1000 + round * 30 + w);
            }
        }
        assert!(hits >= 490, "{hits} hits of 500");
    }

    #[test]
    fn a_block_seen_again_soon_after_leaving_goes_to_main() {
        // Block 1 leaves S unreferenced (into G); found in G, it enters M and survives a
        // stream of new blocks that a plain FIFO of 10 would have flushed it with.
        let mut s = S3Fifo::new(10);
        s.access(1);
        for k in 100..110 {
            s.access(k);
        }
        assert!(s.ghosts.contains_key(&1));
        assert!(!s.access(1));
        for k in 200..206 {
            s.access(k);
        }
        assert!(s.access(1));
    }
}
