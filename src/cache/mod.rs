//! Cache studies: what a cache of any size would have done for a run's I/O, computed from the
//! run's sampled block stream (`sample_blocks`, [`crate::engine::sample`]). [`lru`] gives LRU's
//! hit ratio at every size at once from stack distances; [`arc`] and [`s3fifo`] are simulated
//! as caches scaled down by the sampling rate at each size; [`curve`] puts them together
//! against cache size, in bytes and as a share of the data set; [`model`] predicts IOPS and
//! latency at each size from two latencies and a load.

use crate::job::cache::CachePolicy;

pub(crate) mod arc;
pub(crate) mod curve;
pub(crate) mod lists;
pub(crate) mod lru;
pub(crate) mod model;
pub(crate) mod s3fifo;
pub(crate) mod tier;

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
        let hit = self.lists.list_of(key).is_some();
        self.lists.push_front(0, key);
        self.evicted = None;
        if self.lists.len(0) > self.capacity {
            self.evicted = self.lists.pop_back(0);
        }
        hit
    }

    fn lookup(&mut self, key: u64) -> bool {
        let hit = self.lists.list_of(key).is_some();
        if hit {
            self.lists.push_front(0, key);
        }
        hit
    }

    fn evicted(&mut self) -> Option<u64> {
        self.evicted.take()
    }
}
