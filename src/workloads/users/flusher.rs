//! Dirty database pages and the checkpoint: a page becomes dirty at the log position (LSN) of
//! the first change not yet written; the checkpoint depth is how much log lies between the
//! oldest such change and the end of the log. When the depth passes its target, the flusher
//! writes the oldest dirty pages, each write coalesced with the dirty neighbours of the same
//! database (contiguous pages, up to `max_write_bytes`), until the depth is back under target.
//! Pages are also written when the cache evicts them dirty ([`Flusher::take`]).

use super::cache::{PageId, PageMap, database_of, page_number};
use std::collections::VecDeque;

/// One database write: `pages` contiguous pages from `first`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageWrite {
    /// First page (database and page number).
    pub first: PageId,
    /// Pages written.
    pub pages: u64,
}

/// The dirty pages of one database (LSNs are positions in its log).
///
/// The pages in LSN order are a queue, not a tree: a page becomes dirty at the end of the log,
/// so nearly every new entry goes at the back (one out of order is put in its place), and the
/// oldest leaves from the front. A page written from the middle (evicted, or a neighbour
/// coalesced into a write) leaves its entry behind, stale, and stale entries are dropped when
/// they reach the front or outnumber the dirty pages. The front entry is always a dirty page's.
/// At the debug build's speed the trees this replaced were a third of a simulated day's CPU.
#[derive(Debug, Default)]
pub(crate) struct Flusher {
    /// Dirty page → LSN of its oldest unwritten change.
    dirty: PageMap<u64>,
    /// (LSN, page) in that order, ties by page; an entry is live while `dirty` maps its page to
    /// its LSN.
    by_lsn: VecDeque<(u64, PageId)>,
}

impl Flusher {
    /// No dirty pages.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// `page` changed by a log record ending at `lsn`. A page already dirty keeps its older LSN.
    pub(crate) fn dirty(&mut self, page: PageId, lsn: u64) {
        if let std::collections::hash_map::Entry::Vacant(v) = self.dirty.entry(page) {
            v.insert(lsn);
            let key = (lsn, page);
            if self.by_lsn.back().is_none_or(|&last| last <= key) {
                self.by_lsn.push_back(key);
            } else {
                let at = self.by_lsn.partition_point(|&e| e < key);
                self.by_lsn.insert(at, key);
            }
        }
    }

    /// Dirty pages.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.dirty.len()
    }

    /// Whether no page is dirty.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.dirty.is_empty()
    }

    /// Checkpoint depth at log end `log_end`: bytes of log since the oldest unwritten change.
    pub(crate) fn depth(&self, log_end: u64) -> u64 {
        self.by_lsn
            .front()
            .map_or(0, |&(lsn, _)| log_end.saturating_sub(lsn))
    }

    /// Marks `page` clean (it is being written because the cache evicts it); true when it was
    /// dirty.
    pub(crate) fn take(&mut self, page: PageId) -> bool {
        if self.dirty.remove(&page).is_none() {
            return false;
        }
        let dirty = &self.dirty;
        let live = |&(lsn, page): &(u64, PageId)| dirty.get(&page) == Some(&lsn);
        while self.by_lsn.front().is_some_and(|e| !live(e)) {
            self.by_lsn.pop_front();
        }
        if self.by_lsn.len() > 2 * self.dirty.len() + 64 {
            self.by_lsn.retain(live);
        }
        true
    }

    /// The next write that brings the depth toward `target` at log end `log_end`, if the depth
    /// is over it: the oldest dirty page with its dirty neighbours, at most `max_pages` pages.
    /// The pages it covers are clean from now on (a later change dirties them again).
    pub(crate) fn next_write(
        &mut self,
        log_end: u64,
        target: u64,
        max_pages: u64,
    ) -> Option<PageWrite> {
        if self.depth(log_end) <= target {
            return None;
        }
        let &(_, oldest) = self.by_lsn.front()?;
        let db = database_of(oldest);
        let mut first = oldest;
        let mut pages = 1;
        // Extend down (not below the database's page 0), then up, over dirty pages of the
        // same database.
        while pages < max_pages && page_number(first) > 0 && self.dirty.contains_key(&(first - 1)) {
            first -= 1;
            pages += 1;
        }
        while pages < max_pages
            && database_of(first + pages) == db
            && self.dirty.contains_key(&(first + pages))
        {
            pages += 1;
        }
        for p in first..first + pages {
            self.take(p);
        }
        Some(PageWrite { first, pages })
    }
}

#[cfg(test)]
mod tests {
    use super::super::cache::page_id;
    use super::*;

    #[test]
    fn writes_only_while_the_depth_is_over_target() {
        let mut f = Flusher::new();
        for (i, page) in [10u64, 50, 30].into_iter().enumerate() {
            f.dirty(page_id(0, page), 1000 * (i as u64 + 1));
        }
        assert_eq!(f.depth(5000), 4000);
        assert_eq!(
            f.next_write(5000, 4000, 64),
            None,
            "at target: nothing to write"
        );
        // Oldest first: page 10 (LSN 1000), then 50 (2000); page 30 (3000) is within target.
        assert_eq!(f.next_write(5000, 2500, 64).unwrap().first, page_id(0, 10));
        assert_eq!(f.next_write(5000, 2500, 64).unwrap().first, page_id(0, 50));
        assert_eq!(f.next_write(5000, 2500, 64), None);
        assert_eq!(f.depth(5000), 2000);
        assert_eq!(f.len(), 1);
    }

    #[test]
    fn neighbours_coalesce_up_to_the_limit_within_one_database() {
        let mut f = Flusher::new();
        // Pages 100..200 of database 1 dirty, oldest in the middle; page 100 of database 2 too.
        f.dirty(page_id(1, 150), 1);
        for p in 100..200 {
            f.dirty(page_id(1, p), 10 + p);
        }
        f.dirty(page_id(2, 100), 5);
        f.dirty(page_id(1, 150), 999); // already dirty: keeps LSN 1
        let w = f.next_write(10_000, 0, 16).unwrap();
        // 16 pages: down from 150 as far as the limit allows (the oldest is always in it).
        assert_eq!(
            w,
            PageWrite {
                first: page_id(1, 135),
                pages: 16
            }
        );
        let w = f.next_write(10_000, 0, 64).unwrap();
        assert_eq!(
            w,
            PageWrite {
                first: page_id(2, 100),
                pages: 1
            },
            "database 2 alone"
        );
        let w = f.next_write(10_000, 0, 64).unwrap();
        assert_eq!(
            w,
            PageWrite {
                first: page_id(1, 100),
                pages: 35
            },
            "100..135"
        );
        let w = f.next_write(10_000, 0, 64).unwrap();
        assert_eq!(
            w,
            PageWrite {
                first: page_id(1, 151),
                pages: 49
            },
            "151..200"
        );
        assert!(f.is_empty());
        assert_eq!(f.depth(10_000), 0);
    }

    #[test]
    fn a_page_evicted_dirty_is_written_once() {
        let mut f = Flusher::new();
        f.dirty(page_id(0, 1), 10);
        assert!(f.take(page_id(0, 1)));
        assert!(!f.take(page_id(0, 1)));
        assert_eq!(f.next_write(100, 0, 64), None);
        // Dirtied again later: its new LSN counts.
        f.dirty(page_id(0, 1), 90);
        assert_eq!(f.depth(100), 10);
    }
}
