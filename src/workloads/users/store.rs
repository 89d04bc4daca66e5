//! The mail store: the buffer cache, each database's log and dirty pages, and the I/O they
//! cause. A step of a task [`Store::begin`]s by referencing its pages (misses of pages it reads
//! or changes are read, one page each; a page the cache evicts dirty is written), then
//! [`Store::commit`]s once its reads are back: its changed pages become dirty at the commit's
//! log position and its record is appended to its database's log. Log writes (group commit)
//! and checkpoint writes (the oldest dirty pages with their neighbours, while the checkpoint
//! depth is over target) follow on their own. Every I/O waits in [`Store::queue`] until the
//! request source hands it to the engine; the store learns of completions through
//! [`Store::log_written`] and [`Store::page_written`].

use super::cache::{Cache, Reference, database_of, page_id, page_number};
use super::flusher::Flusher;
use super::log::Log;
use super::recipe::{Step, Touch};
use std::collections::VecDeque;

/// Log file size (Exchange's, since 2007).
pub(crate) const LOG_FILE_BYTES: u64 = 1 << 20;
/// Log files in the ring of slots on a log target.
pub(crate) const LOG_FILES: u64 = 64;
/// Lazy commits gathered before they are written without a durable commit.
pub(crate) const LAZY_LOG_BYTES: u64 = 64 << 10;
/// Largest coalesced checkpoint write.
pub(crate) const MAX_WRITE_BYTES: u64 = 512 << 10;
/// Checkpoint writes in flight at most per database.
pub(crate) const MAX_FLUSHES: u32 = 16;

/// What an I/O of the store is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IoKind {
    /// A page read a task step waits for (the step's token).
    PageRead(u32),
    /// A checkpoint or dirty-eviction write.
    PageWrite,
    /// A log write.
    LogWrite,
}

/// One I/O to issue: on database `db`'s file (page I/O) or its log (log writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Io {
    /// What it is for.
    pub kind: IoKind,
    /// The database.
    pub db: u32,
    /// Byte offset in the database file or the log target.
    pub offset: u64,
    /// Bytes.
    pub len: u64,
}

/// Counts since the start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StoreCounts {
    /// Page references that found the page in the cache.
    pub hits: u64,
    /// Page references that did not.
    pub misses: u64,
    /// Commits (durable and lazy).
    pub commits: u64,
    /// Durable commits.
    pub durable_commits: u64,
    /// Log bytes appended (records, not padding).
    pub log_bytes: u64,
    /// Page writes of dirty pages the cache evicted.
    pub eviction_writes: u64,
}

/// The store of a population's databases.
#[derive(Debug)]
pub(crate) struct Store {
    cache: Cache,
    logs: Vec<Log>,
    dirty: Vec<Flusher>,
    flushes: Vec<u32>,
    page_bytes: u64,
    checkpoint_bytes: u64,
    max_write_pages: u64,
    /// I/Os waiting to be issued, in order.
    pub queue: VecDeque<Io>,
    counts: StoreCounts,
}

impl Store {
    /// `databases` databases of `page_bytes` pages sharing a cache of `cache_pages`, each
    /// flushed to keep its checkpoint depth under `checkpoint_bytes`.
    pub(crate) fn new(
        databases: u32,
        page_bytes: u64,
        cache_pages: u64,
        checkpoint_bytes: u64,
    ) -> Self {
        let n = databases as usize;
        Store {
            cache: Cache::new(cache_pages as usize),
            logs: (0..n)
                .map(|_| Log::new(LOG_FILE_BYTES, LOG_FILES, LAZY_LOG_BYTES))
                .collect(),
            dirty: (0..n).map(|_| Flusher::new()).collect(),
            flushes: vec![0; n],
            page_bytes,
            checkpoint_bytes,
            max_write_pages: (MAX_WRITE_BYTES / page_bytes).max(1),
            queue: VecDeque::new(),
            counts: StoreCounts::default(),
        }
    }

    /// Bytes of one database's log target.
    pub(crate) fn log_target_bytes() -> u64 {
        LOG_FILE_BYTES * LOG_FILES
    }

    /// References the pages of `step`; queues the reads of missing pages it reads or changes
    /// (tagged with `token`) and the writes of dirty pages evicted. Returns the reads queued.
    pub(crate) fn begin(&mut self, step: &Step, token: u32) -> u32 {
        let mut reads = 0;
        for run in step.runs() {
            for page in run.page_numbers() {
                let id = page_id(step.db, page);
                match self.cache.touch(id) {
                    Reference::Hit => self.counts.hits += 1,
                    Reference::Miss { evicted } => {
                        self.counts.misses += 1;
                        if let Some(victim) = evicted {
                            self.evict(victim);
                        }
                        if run.touch != Touch::Fresh {
                            reads += 1;
                            self.queue.push_back(Io {
                                kind: IoKind::PageRead(token),
                                db: step.db,
                                offset: page * self.page_bytes,
                                len: self.page_bytes,
                            });
                        }
                    }
                }
            }
        }
        reads
    }

    /// Writes `victim` if it leaves the cache dirty.
    fn evict(&mut self, victim: u64) {
        let db = database_of(victim) as usize;
        if self.dirty[db].take(victim) {
            self.counts.eviction_writes += 1;
            self.flushes[db] += 1;
            self.queue.push_back(Io {
                kind: IoKind::PageWrite,
                db: db as u32,
                offset: page_number(victim) * self.page_bytes,
                len: self.page_bytes,
            });
        }
    }

    /// Commits `step` (its reads are back): dirties the pages it changes and appends its log
    /// record. Returns true when the commit is durable and waits: `token` then comes back from
    /// [`Store::log_written`].
    pub(crate) fn commit(&mut self, step: &Step, token: u32) -> bool {
        if step.log_bytes == 0 {
            return false;
        }
        let db = step.db as usize;
        let durable = step.durable.then_some(u64::from(token));
        let lsn = self.logs[db].append(step.log_bytes, durable);
        self.counts.commits += 1;
        self.counts.durable_commits += u64::from(step.durable);
        self.counts.log_bytes += step.log_bytes;
        for run in step.runs().iter().filter(|r| r.touch != Touch::Read) {
            for page in run.page_numbers() {
                self.dirty[db].dirty(page_id(step.db, page), lsn);
            }
        }
        self.kick(db);
        step.durable
    }

    /// The log write of database `db` completed: appends the tokens of the durable commits it
    /// released to `released`.
    pub(crate) fn log_written(&mut self, db: u32, released: &mut Vec<u64>) {
        self.logs[db as usize].completed(released);
        self.kick(db as usize);
    }

    /// A page write of database `db` completed.
    pub(crate) fn page_written(&mut self, db: u32) {
        let db = db as usize;
        self.flushes[db] = self.flushes[db].saturating_sub(1);
        self.kick(db);
    }

    /// Queues database `db`'s next log write and the checkpoint writes its depth calls for.
    fn kick(&mut self, db: usize) {
        if let Some(w) = self.logs[db].next_write() {
            self.queue.push_back(Io {
                kind: IoKind::LogWrite,
                db: db as u32,
                offset: w.offset,
                len: w.len,
            });
        }
        let end = self.logs[db].appended();
        while self.flushes[db] < MAX_FLUSHES {
            let Some(w) =
                self.dirty[db].next_write(end, self.checkpoint_bytes, self.max_write_pages)
            else {
                break;
            };
            self.flushes[db] += 1;
            self.queue.push_back(Io {
                kind: IoKind::PageWrite,
                db: db as u32,
                offset: page_number(w.first) * self.page_bytes,
                len: w.pages * self.page_bytes,
            });
        }
    }

    /// Counts since the start.
    pub(crate) fn counts(&self) -> StoreCounts {
        self.counts
    }

    /// The deepest checkpoint of the databases now, bytes of log.
    pub(crate) fn checkpoint_depth(&self) -> u64 {
        self.dirty
            .iter()
            .zip(&self.logs)
            .map(|(d, l)| d.depth(l.appended()))
            .max()
            .unwrap_or(0)
    }

    /// Durable commits waiting for a log write, all databases.
    pub(crate) fn log_waits(&self) -> u64 {
        self.logs.iter().map(|l| l.waiting() as u64).sum()
    }

    /// Pages in the cache now.
    pub(crate) fn cached_pages(&self) -> u64 {
        self.cache.len() as u64
    }

    /// Pages the cache holds at most.
    pub(crate) fn capacity(&self) -> u64 {
        self.cache.capacity() as u64
    }

    /// Starts the counts again from zero (after a preload).
    pub(crate) fn reset_counts(&mut self) {
        self.counts = StoreCounts::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step changing `pages` pages from `first` of database 0, logging `log` bytes.
    fn change(first: u64, pages: u64, log: u64) -> Step {
        let mut s = Step::new(0);
        s.add(Touch::Modify, (first, pages));
        s.log_bytes = log;
        s
    }

    #[test]
    fn misses_are_read_page_by_page_and_fresh_pages_are_not() {
        let mut store = Store::new(1, 8192, 100, 1 << 30);
        let mut s = Step::new(0);
        s.add(Touch::Read, (10, 3));
        s.add(Touch::Fresh, (50, 4));
        assert_eq!(store.begin(&s, 7), 3);
        let reads: Vec<_> = store.queue.drain(..).collect();
        assert_eq!(reads.len(), 3);
        for (i, io) in reads.iter().enumerate() {
            assert_eq!(io.kind, IoKind::PageRead(7));
            assert_eq!((io.offset, io.len), ((10 + i as u64) * 8192, 8192));
        }
        // Now cached: no read.
        assert_eq!(store.begin(&s, 8), 0);
        assert_eq!(store.counts().hits, 7);
    }

    #[test]
    fn checkpoint_writes_coalesce_up_to_512_kib_and_keep_the_depth() {
        // 8 KiB pages: 64 pages a write at most. A 1 MiB target.
        let mut store = Store::new(1, 8192, 10_000, 1 << 20);
        store.begin(&change(0, 200, 0), 1);
        store.queue.clear();
        // 200 contiguous changed pages, then enough log to pass the target.
        store.commit(&change(0, 200, 4096), 1);
        store.commit(&change(5000, 1, 2 << 20), 1);
        let writes: Vec<_> = store
            .queue
            .iter()
            .filter(|io| io.kind == IoKind::PageWrite)
            .copied()
            .collect();
        assert_eq!(writes.len(), 4, "{writes:?}");
        assert!(writes.iter().all(|w| w.len <= MAX_WRITE_BYTES));
        assert_eq!(writes.iter().map(|w| w.len).sum::<u64>(), 200 * 8192);
        assert_eq!(writes[0].len, MAX_WRITE_BYTES);
        // The oldest change is now the last step's: the depth is under target.
        assert!(store.checkpoint_depth() <= (1 << 20) + 4096);
    }

    #[test]
    fn a_dirty_page_evicted_is_written() {
        let mut store = Store::new(1, 8192, 2, 1 << 30);
        store.begin(&change(1, 1, 0), 1);
        store.commit(&change(1, 1, 100), 1);
        store.queue.clear();
        // Two other pages push page 1 out.
        let mut s = Step::new(0);
        s.add(Touch::Read, (2, 2));
        store.begin(&s, 2);
        let writes: Vec<_> = store
            .queue
            .iter()
            .filter(|io| io.kind == IoKind::PageWrite)
            .collect();
        assert_eq!(writes.len(), 1);
        assert_eq!(writes[0].offset, 8192);
        assert_eq!(store.counts().eviction_writes, 1);
    }
}
