//! Cache studies: what a cache of any size would have done for a run's I/O, computed from the
//! run's sampled block stream (`sample_blocks`, [`crate::engine::sample`]). [`lru`] gives LRU's
//! hit ratio at every size at once from stack distances; [`arc`] and [`s3fifo`] are simulated
//! as caches scaled down by the sampling rate at each size; [`curve`] puts them together
//! against cache size, in bytes and as a share of the data set; [`model`] predicts IOPS and
//! latency at each size from two latencies and a load.

use crate::job::cache::CachePolicy;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

pub(crate) mod arc;
pub(crate) mod curve;
pub(crate) mod lists;
pub(crate) mod lru;
pub(crate) mod model;
pub(crate) mod s3fifo;
pub(crate) mod tier;

/// A map keyed by block or line number, hashed with [`KeyHash`].
pub(crate) type KeyMap<V> = HashMap<u64, V, KeyHash>;

/// Hashes integer keys (block and line numbers) with one folded multiplication (both halves of
/// the 128-bit product of the key and an odd constant, XORed) and a shift: the low bits (the
/// table's bucket) and the top bits (its tag) depend on every bit of the key, for sequential
/// and strided keys alike. Keys come from the run's own offsets, not from an adversary, so
/// SipHash's resistance to chosen keys buys nothing here, and it was about a third of a cache
/// tier's own CPU per I/O (docs/performance.md, "Cache tiers").
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct KeyHash;

impl BuildHasher for KeyHash {
    type Hasher = KeyHasher;

    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(0)
    }
}

/// The hasher of [`KeyHash`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyHasher(u64);

/// 2^64 / φ, odd: the multiplier of Fibonacci hashing.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for KeyHasher {
    #[inline]
    fn write_u64(&mut self, key: u64) {
        let p = u128::from(self.0 ^ key) * u128::from(GOLDEN);
        self.0 = (p as u64) ^ ((p >> 64) as u64);
    }

    /// Other keys than `u64`, byte by byte (the maps here hold none).
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

/// A replacement policy simulated block by block.
pub(crate) trait Policy {
    /// References `key`; whether it was in the cache (it is afterwards, unless the policy
    /// chose otherwise).
    fn access(&mut self, key: u64) -> bool;

    /// References `key` without admitting it on a miss (a bypassed sequential stream): a hit
    /// counts and refreshes as in [`Policy::access`], a miss leaves the cache as it was.
    fn lookup(&mut self, key: u64) -> bool;

    /// A cached key the last [`Policy::access`] dropped to make room (a real cache tier frees
    /// that key's line); called until `None`, it gives each such key once.
    fn evicted(&mut self) -> Option<u64>;
}

impl CachePolicy {
    /// A simulated cache of this policy with `capacity` blocks (LRU included, for tests).
    pub(crate) fn simulator(self, capacity: usize) -> Box<dyn Policy + Send> {
        match self {
            CachePolicy::Lru => Box::new(Lru::new(capacity)),
            CachePolicy::Arc => Box::new(arc::Arc::new(capacity)),
            CachePolicy::S3Fifo => Box::new(s3fifo::S3Fifo::new(capacity)),
        }
    }
}

/// A plain LRU cache, simulated (curves use [`lru::stack_distances`]; this checks them).
#[derive(Debug)]
pub(crate) struct Lru {
    capacity: usize,
    lists: lists::Lists<1>,
    evicted: Option<u64>,
}

impl Lru {
    /// An empty cache of `capacity` blocks (at least 1).
    pub(crate) fn new(capacity: usize) -> Self {
        Lru {
            capacity: capacity.max(1),
            lists: lists::Lists::with_capacity(capacity.max(1)),
            evicted: None,
        }
    }
}

impl Policy for Lru {
    fn access(&mut self, key: u64) -> bool {
        let hit = self.lists.push_front(0, key).is_some();
        self.evicted = None;
        if self.lists.len(0) > self.capacity {
            self.evicted = self.lists.pop_back(0);
        }
        hit
    }

    fn lookup(&mut self, key: u64) -> bool {
        self.lists.touch(0, key)
    }

    fn evicted(&mut self) -> Option<u64> {
        self.evicted.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_hashes_spread_sequential_and_strided_keys_over_the_buckets() {
        // The table's bucket is the hash's low bits and its tag the top 7: both must vary
        // with keys that differ only high up (strided blocks) or only low down. 4096 random
        // hashes fall in about 2590 of 4096 buckets.
        for stride in [1u64, 8, 1 << 12, 1 << 20, 1 << 32, 1 << 40] {
            let hashes: Vec<u64> = (0..4096u64).map(|k| KeyHash.hash_one(k * stride)).collect();
            let buckets: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 4095).collect();
            let tags: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
            assert!(
                buckets.len() > 2048,
                "stride {stride}: {} buckets",
                buckets.len()
            );
            assert_eq!(tags.len(), 128, "stride {stride}");
        }
    }
}
