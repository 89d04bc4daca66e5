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
//! keyed by their second-most-recent reference. Both are lazy: a stale entry (the page was
//! referenced again or evicted since) is skipped when it reaches the front, and the heap is
//! rebuilt when stale entries outnumber live ones, so memory stays proportional to the cache.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// A page: database index in the high 24 bits, page number in the low [`PAGE_BITS`].
pub type PageId = u64;

/// Bits of a [`PageId`] that hold the page number.
pub const PAGE_BITS: u32 = 40;

/// The page id of `page` in database `db`.
pub fn page_id(db: u32, page: u64) -> PageId {
    (u64::from(db) << PAGE_BITS) | page_number(page)
}

/// The database of a page id.
pub fn database_of(page: PageId) -> u64 {
    page >> PAGE_BITS
}

/// The page number (within its database) of a page id.
pub fn page_number(page: PageId) -> u64 {
    page & ((1 << PAGE_BITS) - 1)
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Time of the newest reference.
    last: u64,
    /// Time of the one before (0: none).
    second: u64,
}

/// An LRU-2 cache of `capacity` pages.
#[derive(Debug)]
pub struct Cache {
    capacity: usize,
    now: u64,
    pages: HashMap<PageId, Entry>,
    /// Pages referenced once: (time of that reference, page).
    once: VecDeque<(u64, PageId)>,
    /// Pages referenced twice or more: (time of the second-newest reference, page).
    twice: BinaryHeap<Reverse<(u64, PageId)>>,
    /// Evicted pages remembered: page → (newest reference, eviction number).
    history: HashMap<PageId, (u64, u64)>,
    /// Evictions in order: (eviction number, page); lazy like the queues.
    evictions: VecDeque<(u64, PageId)>,
    evicted: u64,
    hits: u64,
    misses: u64,
}

/// What a reference did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    /// The page was in the cache.
    Hit,
    /// The page was read in; `evicted` left to make room.
    Miss {
        /// The page evicted to make room, if the cache was full.
        evicted: Option<PageId>,
    },
}

impl Cache {
    /// An empty cache holding at most `capacity` pages (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            now: 0,
            pages: HashMap::new(),
            once: VecDeque::new(),
            twice: BinaryHeap::new(),
            history: HashMap::new(),
            evictions: VecDeque::new(),
            evicted: 0,
            hits: 0,
            misses: 0,
        }
    }

    /// Pages the cache holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Pages in the cache now.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether the cache holds no page.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Whether `page` is in the cache (not a reference: nothing changes).
    pub fn contains(&self, page: PageId) -> bool {
        self.pages.contains_key(&page)
    }

    /// (hits, misses) so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// References `page`: a hit, or a miss that brings it in (evicting a victim when full).
    pub fn touch(&mut self, page: PageId) -> Reference {
        self.now += 1;
        let now = self.now;
        if let Some(e) = self.pages.get_mut(&page) {
            e.second = e.last;
            e.last = now;
            self.twice.push(Reverse((e.second, page)));
            self.hits += 1;
            self.compact();
            return Reference::Hit;
        }
        self.misses += 1;
        let evicted = (self.pages.len() >= self.capacity).then(|| self.evict());
        let second = self.history.remove(&page).map_or(0, |(last, _)| last);
        self.pages.insert(page, Entry { last: now, second });
        if second == 0 {
            self.once.push_back((now, page));
        } else {
            self.twice.push(Reverse((second, page)));
        }
        Reference::Miss { evicted }
    }

    /// Removes and returns the victim, remembering it. The cache is not empty.
    fn evict(&mut self) -> PageId {
        let page = self.victim();
        let last = self.pages.remove(&page).map_or(0, |e| e.last);
        self.evicted += 1;
        self.history.insert(page, (last, self.evicted));
        self.evictions.push_back((self.evicted, page));
        while self.history.len() > self.capacity {
            let Some((n, old)) = self.evictions.pop_front() else {
                break;
            };
            if self.history.get(&old).is_some_and(|h| h.1 == n) {
                self.history.remove(&old);
            }
        }
        if self.evictions.len() > 2 * self.capacity + 64 {
            let history = &self.history;
            self.evictions
                .retain(|&(n, p)| history.get(&p).is_some_and(|h| h.1 == n));
        }
        page
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
            if self.pages.get(&page).is_some_and(|e| e.second == t) {
                return page;
            }
        }
        unreachable!("a full cache has a live entry in one of its queues")
    }

    /// Rebuilds the heap when stale entries outnumber the pages.
    fn compact(&mut self) {
        if self.twice.len() > 2 * self.pages.len() + 64 {
            self.twice = self
                .pages
                .iter()
                .filter(|(_, e)| e.second != 0)
                .map(|(&p, e)| Reverse((e.second, p)))
                .collect();
        }
        if self.once.len() > 2 * self.pages.len() + 64 {
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
        assert!(cache.twice.len() <= 2 * cache.len() + 65);
        assert!(cache.once.len() <= 2 * cache.len() + 65);
        for i in 0..100_000u64 {
            cache.touch(i % 9);
        }
        assert!(cache.history.len() <= 4);
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
