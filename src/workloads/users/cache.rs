//! The database buffer cache model: which pages are in memory, by ESE's replacement policy,
//! LRU-K with K = 2. A page's *backward 2-distance* is the time since its second-most-recent
//! reference; the victim is the page with the largest, and pages referenced only once (infinite
//! distance) go first, least recently used among them first. Evicted pages keep their newest
//! reference time in a history of as many pages as the cache holds (LRU-K's "retained
//! information period", here a count, oldest evictions forgotten first): a page read again while
//! remembered comes back with two references. Without it, pages referenced twice long ago would
//! never leave while new pages kept arriving. Every reference counts (LRU-K's "correlated
//! reference period" is zero: our simplification).
//!
//! Time is a reference counter, so every key is unique. Pages referenced once sit in a FIFO
//! (their one reference is their newest, so they arrive in order); the others in a min-heap
//! keyed by their second-most-recent reference. The FIFO is lazy: a stale entry (the page was
//! referenced again or evicted since) is skipped when it reaches the front, and the stale ones
//! are dropped when they outnumber the pages. The heap holds one entry per page whose key may
//! lag behind the page's (a reference does not touch the heap): keys only grow, so when the
//! smallest entry's page has a newer key the entry goes back with it, and an entry whose key
//! is its page's is the true minimum. No rebuild, so no pause of a pass over the cache.
//! Cached and remembered pages share one hash map (a page evicted or read back changes its
//! slot in place), sized at the start: at a million users the map holds over a hundred million
//! pages, and each lookup is a trip to memory (docs/performance.md, "Simulated users at
//! scale").

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// A page: database index in the high 24 bits, page number in the low [`PAGE_BITS`].
pub(crate) type PageId = u64;

/// Bits of a [`PageId`] that hold the page number.
pub(crate) const PAGE_BITS: u32 = 40;

/// The page id of `page` in database `db`.
pub(crate) fn page_id(db: u32, page: u64) -> PageId {
    (u64::from(db) << PAGE_BITS) | page_number(page)
}

/// The database of a page id.
pub(crate) fn database_of(page: PageId) -> u64 {
    page >> PAGE_BITS
}

/// The page number (within its database) of a page id.
pub(crate) fn page_number(page: PageId) -> u64 {
    page & ((1 << PAGE_BITS) - 1)
}

/// Hashes the page ids of the cache's maps. Page ids are ours, not an adversary's, so the
/// keyed SipHash of std's default (a tenth of a model-only run's CPU at a million users) is
/// not needed: MurmurHash3's 64-bit finaliser spreads every bit of the id (the database in
/// the high bits too) over the low bits the table indexes by.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PageHasher(u64);

impl Hasher for PageHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        let mut h = x ^ self.0.rotate_left(29);
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by page id.
pub(crate) type PageMap<V> = HashMap<PageId, V, BuildHasherDefault<PageHasher>>;

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Time of the newest reference.
    last: u64,
    /// Time of the one before (0: none), or [`REMEMBERED`].
    second: u64,
}

/// [`Entry::second`] of a page evicted and remembered in the history: not in the cache.
const REMEMBERED: u64 = u64::MAX;

impl Entry {
    fn cached(self) -> bool {
        self.second != REMEMBERED
    }
}

/// Memory the model takes per page of the cache's capacity once the cache and its history are
/// full: the page, a remembered page, their slots and queue entries. Measured: 10.3 GiB at a
/// million users with 512 KB of cache each, 62.5 million pages, 177 bytes a page, rounded up
/// (docs/performance.md, "Simulated users at scale").
pub(crate) const MODEL_BYTES_PER_CACHED_PAGE: u64 = 180;

/// Entries the page map is sized for at the start, at most: 2^27 (a table of 2^28 slots, 6.7 GB
/// of address space: its 256 MiB of control bytes written at once, its slots' memory as pages
/// hash into it, which at tens of millions of pages is all of it within minutes). Growing a
/// table of tens of millions of pages rehashes all of them at once, a stall of seconds that a
/// model-only run would report as its users' latency.
const PRESIZED_PAGES: usize = 1 << 27;

/// An LRU-2 cache of `capacity` pages.
#[derive(Debug)]
pub(crate) struct Cache {
    capacity: usize,
    now: u64,
    /// The pages in the cache and those remembered (one map, so that a page moving between
    /// them is one slot changed in place: on a large cache every lookup is a trip to memory).
    pages: PageMap<Entry>,
    /// Pages in the cache.
    cached: usize,
    /// Pages remembered.
    remembered: usize,
    /// Pages referenced once: (time of that reference, page).
    once: VecDeque<(u64, PageId)>,
    /// Pages referenced twice or more: (time of the second-newest reference, page).
    twice: BinaryHeap<Reverse<(u64, PageId)>>,
    /// Evictions in order: (the page's newest reference, page); lazy like the queues (a
    /// page evicted again was referenced since, so its record differs).
    evictions: VecDeque<(u64, PageId)>,
    hits: u64,
    misses: u64,
}

/// What a reference did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reference {
    /// The page was in the cache.
    Hit,
    /// The page was read in; `evicted` left to make room.
    Miss {
        /// The page evicted to make room, if the cache was full.
        evicted: Option<PageId>,
    },
}

impl Cache {
    /// An empty cache holding at most `capacity` pages (at least 1); its map is sized for
    /// them and as many remembered (up to 2^27 pages).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            now: 0,
            pages: PageMap::with_capacity_and_hasher(
                capacity.saturating_mul(2).min(PRESIZED_PAGES),
                BuildHasherDefault::default(),
            ),
            cached: 0,
            remembered: 0,
            once: VecDeque::new(),
            twice: BinaryHeap::new(),
            evictions: VecDeque::new(),
            hits: 0,
            misses: 0,
        }
    }

    /// Pages the cache holds at most.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Pages in the cache now.
    pub(crate) fn len(&self) -> usize {
        self.cached
    }

    #[cfg(test)]
    /// Whether `page` is in the cache (not a reference: nothing changes).
    pub(crate) fn contains(&self, page: PageId) -> bool {
        self.pages.get(&page).is_some_and(|e| e.cached())
    }

    #[cfg(test)]
    /// (hits, misses) so far.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// References `page`: a hit, or a miss that brings it in (evicting a victim when full).
    pub(crate) fn touch(&mut self, page: PageId) -> Reference {
        self.now += 1;
        let now = self.now;
        if let Some(e) = self.pages.get_mut(&page).filter(|e| e.cached()) {
            // A page referenced twice before keeps its heap entry, its key now below the
            // page's: the victim search puts it back with the new one when it comes up.
            let first_repeat = e.second == 0;
            e.second = e.last;
            e.last = now;
            if first_repeat {
                self.twice.push(Reverse((e.second, page)));
            }
            self.hits += 1;
            self.compact();
            return Reference::Hit;
        }
        self.misses += 1;
        // The victim first: making room may forget the oldest remembered page, this one too.
        let evicted = (self.cached >= self.capacity).then(|| self.evict());
        self.cached += 1;
        let e = self
            .pages
            .entry(page)
            .or_insert(Entry { last: 0, second: 0 });
        let second = if e.cached() { 0 } else { e.last };
        *e = Entry { last: now, second };
        if second == 0 {
            self.once.push_back((now, page));
        } else {
            self.remembered -= 1;
            self.twice.push(Reverse((second, page)));
        }
        Reference::Miss { evicted }
    }

    /// Moves the victim to the history, forgetting the oldest remembered pages beyond the
    /// cache's size, and returns it. The cache is not empty.
    fn evict(&mut self) -> PageId {
        let page = self.victim();
        let mut last = 0;
        if let Some(e) = self.pages.get_mut(&page) {
            last = e.last;
            e.second = REMEMBERED;
        }
        self.cached -= 1;
        self.remembered += 1;
        self.evictions.push_back((last, page));
        while self.remembered > self.capacity {
            let Some((last, old)) = self.evictions.pop_front() else {
                break;
            };
            if self.is_remembered(old, last) {
                self.pages.remove(&old);
                self.remembered -= 1;
            }
        }
        if self.evictions.len() > 2 * self.capacity + 64 {
            let mut evictions = std::mem::take(&mut self.evictions);
            evictions.retain(|&(last, p)| self.is_remembered(p, last));
            self.evictions = evictions;
        }
        page
    }

    /// Whether `page` is remembered with `last` as its newest reference.
    fn is_remembered(&self, page: PageId, last: u64) -> bool {
        self.pages
            .get(&page)
            .is_some_and(|e| !e.cached() && e.last == last)
    }

    /// The page to evict (still in the cache). The cache is not empty.
    fn victim(&mut self) -> PageId {
        while let Some((t, page)) = self.once.pop_front() {
            if self
                .pages
                .get(&page)
                .is_some_and(|e| e.second == 0 && e.last == t)
            {
                return page;
            }
        }
        while let Some(Reverse((t, page))) = self.twice.pop() {
            let Some(second) = self.pages.get(&page).map(|e| e.second) else {
                continue;
            };
            if second == t {
                return page;
            }
            // Referenced since its entry was made: every other entry's key is at most its
            // page's, so this one's place is decided by its page's key, not the entry's.
            self.twice.push(Reverse((second, page)));
        }
        unreachable!("a full cache has a live entry in one of its queues")
    }

    /// Drops the FIFO's stale entries when they outnumber the pages.
    fn compact(&mut self) {
        if self.once.len() > 2 * self.cached + 64 {
            let pages = &self.pages;
            self.once
                .retain(|&(t, p)| pages.get(&p).is_some_and(|e| e.second == 0 && e.last == t));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// LRU-2 by definition: scan every page for the largest backward 2-distance; evicted
    /// pages remembered (newest reference) in eviction order, as many as the cache holds.
    struct Reference2 {
        capacity: usize,
        now: u64,
        pages: Vec<(PageId, u64, u64)>,
        history: Vec<(PageId, u64)>,
    }

    impl Reference2 {
        fn touch(&mut self, page: PageId) -> Reference {
            self.now += 1;
            if let Some(e) = self.pages.iter_mut().find(|e| e.0 == page) {
                e.2 = e.1;
                e.1 = self.now;
                return Reference::Hit;
            }
            let mut evicted = None;
            if self.pages.len() >= self.capacity {
                // Once-referenced pages first (second = 0), oldest reference first; else the
                // oldest second-newest reference.
                let i = (0..self.pages.len())
                    .min_by_key(|&i| {
                        let (_, last, second) = self.pages[i];
                        if second == 0 { (0, last) } else { (1, second) }
                    })
                    .unwrap();
                let (victim, last, _) = self.pages.swap_remove(i);
                self.history.push((victim, last));
                if self.history.len() > self.capacity {
                    self.history.remove(0);
                }
                evicted = Some(victim);
            }
            let second = match self.history.iter().position(|h| h.0 == page) {
                Some(i) => self.history.remove(i).1,
                None => 0,
            };
            self.pages.push((page, self.now, second));
            Reference::Miss { evicted }
        }
    }

    proptest! {
        #[test]
        fn matches_the_definition(
            capacity in 1usize..12,
            refs in prop::collection::vec(0u64..24, 0..600),
        ) {
            let mut cache = Cache::new(capacity);
            let mut reference = Reference2 {
                capacity,
                now: 0,
                pages: Vec::new(),
                history: Vec::new(),
            };
            for page in refs {
                prop_assert_eq!(cache.touch(page), reference.touch(page), "page {}", page);
                prop_assert!(cache.len() <= capacity);
            }
        }
    }

    #[test]
    fn a_scan_does_not_flush_the_hot_pages() {
        // Pages 0..8 are referenced twice; a long scan of single references then only evicts
        // scan pages: LRU-2's point, where plain LRU would lose the hot set.
        let mut cache = Cache::new(16);
        for round in 0..2 {
            for p in 0..8 {
                let r = cache.touch(p);
                assert_eq!(r == Reference::Hit, round == 1);
            }
        }
        for p in 100..10_000 {
            cache.touch(p);
        }
        assert!((0..8).all(|p| cache.contains(p)));
        assert_eq!(cache.len(), 16);
        assert_eq!(cache.counts(), (8, 8 + 9_900));
    }

    #[test]
    fn stale_entries_stay_bounded() {
        let mut cache = Cache::new(4);
        for i in 0..100_000u64 {
            cache.touch(i % 3);
        }
        // One heap entry for each page referenced twice, no stale ones.
        let twice = cache.pages.values().filter(|e| e.cached() && e.second != 0);
        assert_eq!(cache.twice.len(), twice.count());
        assert!(cache.once.len() <= 2 * cache.len() + 65);
        for i in 0..100_000u64 {
            cache.touch(i % 9);
        }
        assert!(cache.remembered <= 4);
        assert_eq!(cache.pages.len(), cache.cached + cache.remembered);
        assert!(cache.evictions.len() <= 2 * 4 + 65);
    }

    #[test]
    fn a_page_read_again_soon_after_eviction_is_remembered() {
        // Page 0 is evicted by 1 and 2, then read again: it comes back with two references,
        // so the next victims are the pages referenced once.
        let mut cache = Cache::new(2);
        for p in [0, 1, 2] {
            cache.touch(p);
        }
        assert!(!cache.contains(0));
        assert_eq!(cache.touch(0), Reference::Miss { evicted: Some(1) });
        assert_eq!(cache.touch(3), Reference::Miss { evicted: Some(2) });
        assert_eq!(cache.touch(4), Reference::Miss { evicted: Some(3) });
        assert!(cache.contains(0));
    }

    #[test]
    fn page_ids_keep_database_and_page_apart() {
        assert_ne!(page_id(1, 5), page_id(2, 5));
        assert_eq!(database_of(page_id(3, 7)), 3);
        assert_eq!(page_number(page_id(3, 7)), 7);
    }
}
