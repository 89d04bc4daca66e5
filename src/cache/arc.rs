//! ARC, the adaptive replacement cache (Megiddo and Modha, FAST 2003): two LRU lists of cached
//! blocks, T1 (seen once recently) and T2 (seen at least twice), and two ghost lists of blocks
//! recently evicted from each, B1 and B2. A hit in a ghost list moves the target size of T1,
//! `p`, towards the list that would have hit, so the cache adapts between recency and
//! frequency and resists scans.

use super::Policy;
use super::lists::Lists;

const T1: usize = 0;
const T2: usize = 1;
const B1: usize = 2;
const B2: usize = 3;

/// An ARC cache of `c` blocks.
#[derive(Debug)]
pub(crate) struct Arc {
    c: usize,
    /// Target size of T1.
    p: usize,
    lists: Lists<4>,
    /// The cached key the last access dropped.
    evicted: Option<u64>,
}

impl Arc {
    /// An empty cache of `capacity` blocks (at least 1).
    pub(crate) fn new(capacity: usize) -> Self {
        let c = capacity.max(1);
        Arc {
            c,
            p: 0,
            lists: Lists::with_capacity(c.saturating_mul(2)),
            evicted: None,
        }
    }

    /// Makes room in T1 ∪ T2: T1's least recent block goes to B1, or T2's to B2.
    fn replace(&mut self, in_b2: bool) {
        let t1 = self.lists.len(T1);
        if t1 >= 1 && (t1 > self.p || (in_b2 && t1 == self.p)) {
            if let Some(k) = self.lists.pop_back(T1) {
                self.lists.push_front(B1, k);
                self.evicted = Some(k);
            }
        } else if let Some(k) = self.lists.pop_back(T2) {
            self.lists.push_front(B2, k);
            self.evicted = Some(k);
        }
    }
}

impl Policy for Arc {
    fn lookup(&mut self, key: u64) -> bool {
        let hit = matches!(self.lists.list_of(key), Some(T1 | T2));
        if hit {
            self.lists.push_front(T2, key);
        }
        hit
    }

    fn evicted(&mut self) -> Option<u64> {
        self.evicted.take()
    }

    fn access(&mut self, key: u64) -> bool {
        self.evicted = None;
        let len = |s: &Self, l| s.lists.len(l);
        match self.lists.list_of(key) {
            Some(T1 | T2) => {
                self.lists.push_front(T2, key);
                true
            }
            Some(B1) => {
                let delta = (len(self, B2) / len(self, B1).max(1)).max(1);
                self.p = (self.p + delta).min(self.c);
                self.replace(false);
                self.lists.push_front(T2, key);
                false
            }
            Some(_) => {
                let delta = (len(self, B1) / len(self, B2).max(1)).max(1);
                self.p = self.p.saturating_sub(delta);
                self.replace(true);
                self.lists.push_front(T2, key);
                false
            }
            None => {
                let l1 = len(self, T1) + len(self, B1);
                let total = l1 + len(self, T2) + len(self, B2);
                if l1 == self.c {
                    if len(self, T1) < self.c {
                        self.lists.pop_back(B1);
                        self.replace(false);
                    } else {
                        self.evicted = self.lists.pop_back(T1);
                    }
                } else if total >= self.c {
                    if total == 2 * self.c {
                        self.lists.pop_back(B2);
                    }
                    self.replace(false);
                }
                self.lists.push_front(T1, key);
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_holds_at_most_its_capacity_and_remembers_at_most_twice_that() {
        let mut a = Arc::new(4);
        for k in 0..100u64 {
            a.access(k % 13);
            a.access(k % 3);
            assert!(a.lists.len(T1) + a.lists.len(T2) <= 4);
            assert!(a.lists.len(T1) + a.lists.len(T2) + a.lists.len(B1) + a.lists.len(B2) <= 8);
        }
    }

    #[test]
    fn a_scan_does_not_flush_a_reused_set() {
        // Blocks 0..4 used twice (into T2), then scans of 20 new blocks with the set used
        // again between them: ARC keeps the set, where an LRU cache of 8 (reuse distance 24)
        // would hit only in the first round.
        let mut a = Arc::new(8);
        let mut lru = crate::cache::Lru::new(8);
        for k in (0..4).chain(0..4) {
            a.access(k);
            lru.access(k);
        }
        let (mut hits, mut lru_hits) = (0, 0);
        for round in 0..50u64 {
            for k in 0..4 {
                hits += u64::from(a.access(k));
                lru_hits += u64::from(lru.access(k));
            }
            for s in 0..20 {
                a.access(1000 + round * 20 + s);
                lru.access(1000 + round * 20 + s);
            }
        }
        assert_eq!(lru_hits, 4, "LRU hits only the first round");
        assert!(hits >= 196, "{hits} hits of 200");
    }
}
