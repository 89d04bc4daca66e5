//! The transaction log model: commits append records to a log buffer; the buffer is written to
//! the log target in whole 4 KiB segments, one write at a time, each covering everything
//! appended since the last (group commit: commits that arrive while a write is in flight share
//! the next one). A write that ends inside a segment pads it, and the next write starts at that
//! segment again (the partial segment is rewritten with more records in it). The log is a
//! sequence of 1 MiB files, kept in a ring of `files` slots on the log target; a record that does
//! not fit in what is left of a file starts the next one, and no write crosses a file.
//!
//! Durable commits wait until a write covering their record completes; lazy commits do not wait,
//! and are written with the next durable commit or when `lazy_bytes` have gathered.
//! Positions in the log (LSNs) are byte counts from its start, padding included.

use std::collections::VecDeque;

/// Log segment: every write is a whole number of these, aligned to them.
pub(crate) const SEGMENT_BYTES: u64 = 4096;

/// A log write to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LogWrite {
    /// Byte offset on the log target.
    pub offset: u64,
    /// Bytes (a multiple of the segment).
    pub len: u64,
    /// The log is durable up to this LSN when the write completes.
    pub durable_to: u64,
}

/// One log stream.
#[derive(Debug)]
pub(crate) struct Log {
    file_bytes: u64,
    files: u64,
    lazy_bytes: u64,
    /// End of the last record appended.
    appended: u64,
    /// Everything before this is on the log target.
    durable: u64,
    /// The write in flight, if any.
    in_flight: Option<LogWrite>,
    /// Durable commits waiting: (LSN their record ends at, token), in LSN order.
    waiting: VecDeque<(u64, u64)>,
    /// Ends of files left empty because the next record did not fit: (from, to), in order.
    padding: VecDeque<(u64, u64)>,
}

impl Log {
    /// A log of `file_bytes` files (a multiple of the segment) in a ring of `files` slots on its
    /// target; lazy commits are written once `lazy_bytes` of them have gathered.
    pub(crate) fn new(file_bytes: u64, files: u64, lazy_bytes: u64) -> Self {
        assert!(file_bytes % SEGMENT_BYTES == 0 && file_bytes > 0 && files > 0);
        Self {
            file_bytes,
            files,
            lazy_bytes,
            appended: 0,
            durable: 0,
            in_flight: None,
            waiting: VecDeque::new(),
            padding: VecDeque::new(),
        }
    }

    /// Appends a record of `bytes` (at most a file). With `durable: Some(token)` the commit waits
    /// for it: `token` comes back from [`Log::completed`] once the record is on the log target.
    /// Returns the LSN the record ends at.
    pub(crate) fn append(&mut self, bytes: u64, durable: Option<u64>) -> u64 {
        let bytes = bytes.clamp(1, self.file_bytes);
        let room = self.file_bytes - self.appended % self.file_bytes;
        if bytes > room {
            // The rest of this file stays empty; the record starts the next file.
            self.padding
                .push_back((self.appended, self.appended + room));
            self.appended += room;
        }
        self.appended += bytes;
        if let Some(token) = durable {
            self.waiting.push_back((self.appended, token));
        }
        self.appended
    }

    /// The next write to issue, if one should go now: none is in flight, and a durable commit
    /// waits or `lazy_bytes` have gathered. The caller issues it and reports it to
    /// [`Log::completed`].
    pub(crate) fn next_write(&mut self) -> Option<LogWrite> {
        while let Some(&(from, to)) = self.padding.front() {
            if from > self.durable {
                break;
            }
            // Nothing to write there: the log is durable past an empty file end.
            self.durable = self.durable.max(to);
            self.padding.pop_front();
        }
        if self.in_flight.is_some() || self.appended <= self.durable {
            return None;
        }
        if self.waiting.is_empty() && self.appended - self.durable < self.lazy_bytes {
            return None;
        }
        let start = self.durable - self.durable % SEGMENT_BYTES;
        let file_end = (start / self.file_bytes + 1) * self.file_bytes;
        let data_end = self.padding.front().map_or(self.appended, |p| p.0);
        let end = data_end.min(file_end);
        let len = end.div_ceil(SEGMENT_BYTES) * SEGMENT_BYTES - start;
        let slot = (start / self.file_bytes) % self.files;
        let write = LogWrite {
            offset: slot * self.file_bytes + start % self.file_bytes,
            len,
            durable_to: end,
        };
        self.in_flight = Some(write);
        Some(write)
    }

    /// The write in flight completed: the log is durable up to its end. Appends the tokens of
    /// the durable commits it released to `released`, in commit order.
    pub(crate) fn completed(&mut self, released: &mut Vec<u64>) {
        let Some(write) = self.in_flight.take() else {
            return;
        };
        self.durable = write.durable_to;
        while let Some(&(lsn, token)) = self.waiting.front() {
            if lsn > self.durable {
                break;
            }
            released.push(token);
            self.waiting.pop_front();
        }
    }

    /// The LSN after the last record.
    pub(crate) fn appended(&self) -> u64 {
        self.appended
    }

    #[cfg(test)]
    /// The LSN up to which the log is on the target.
    pub(crate) fn durable(&self) -> u64 {
        self.durable
    }

    /// Durable commits waiting for a write.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.len()
    }

    #[cfg(test)]
    /// Log files started so far (1 for a new log).
    pub(crate) fn files_started(&self) -> u64 {
        self.appended.saturating_sub(1) / self.file_bytes + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// The tokens the write in flight releases.
    fn done(log: &mut Log) -> Vec<u64> {
        let mut released = Vec::new();
        log.completed(&mut released);
        released
    }

    #[test]
    fn commits_during_a_write_share_the_next_one() {
        let mut log = Log::new(MIB, 4, 64 << 10);
        log.append(300, Some(1));
        let w1 = log.next_write().unwrap();
        assert_eq!((w1.offset, w1.len, w1.durable_to), (0, 4096, 300));
        // Three more durable commits while it is in flight: no second write yet.
        for t in 2..5 {
            log.append(1000, Some(t));
            assert_eq!(log.next_write(), None);
        }
        assert_eq!(done(&mut log), vec![1]);
        // One write for all three: it rewrites the partial first segment, and is 4 KiB aligned.
        let w2 = log.next_write().unwrap();
        assert_eq!((w2.offset, w2.len, w2.durable_to), (0, 4096, 3300));
        assert_eq!(done(&mut log), vec![2, 3, 4]);
        assert_eq!(log.next_write(), None);
    }

    #[test]
    fn writes_are_whole_aligned_segments_and_rewrite_the_partial_one() {
        let mut log = Log::new(MIB, 4, 64 << 10);
        let mut durable = 0;
        for (i, bytes) in [5000u64, 100, 9000, 4096, 1, 30_000]
            .into_iter()
            .enumerate()
        {
            log.append(bytes, Some(i as u64));
            let w = log.next_write().unwrap();
            assert_eq!(w.offset % SEGMENT_BYTES, 0);
            assert_eq!(w.len % SEGMENT_BYTES, 0);
            // It starts at the segment holding the first byte not yet durable.
            assert_eq!(w.offset, durable - durable % SEGMENT_BYTES);
            assert!(w.offset + w.len >= log.appended());
            assert_eq!(done(&mut log), vec![i as u64]);
            durable = log.durable();
            assert_eq!(durable, log.appended());
        }
    }

    #[test]
    fn lazy_commits_wait_for_the_threshold_or_a_durable_commit() {
        let mut log = Log::new(MIB, 4, 16 << 10);
        log.append(6000, None);
        log.append(6000, None);
        assert_eq!(log.next_write(), None, "12 KB lazy: below the threshold");
        log.append(6000, None);
        let w = log.next_write().unwrap();
        assert_eq!((w.len, w.durable_to), (20_480, 18_000));
        assert!(done(&mut log).is_empty());
        log.append(100, None);
        assert_eq!(log.next_write(), None);
        log.append(100, Some(9));
        let w = log.next_write().unwrap();
        assert_eq!((w.offset, w.durable_to), (16_384, 18_200));
        assert_eq!(done(&mut log), vec![9]);
    }

    #[test]
    fn records_do_not_cross_files_and_the_files_ring() {
        let file = 64 << 10;
        let mut log = Log::new(file, 2, 1 << 30);
        log.append(60_000, Some(1));
        let w = log.next_write().unwrap();
        assert_eq!((w.offset, w.len), (0, 61_440));
        assert_eq!(done(&mut log), vec![1]);
        // 10 000 bytes do not fit in the 5 536 left: the record starts file 2 at its start.
        let end = log.append(10_000, Some(2));
        assert_eq!(end, file + 10_000);
        assert_eq!(log.files_started(), 2);
        // The empty end of file 1 is not written: the write is the record, in file 2.
        let w = log.next_write().unwrap();
        assert_eq!((w.offset, w.len), (file, 12_288));
        assert_eq!(done(&mut log), vec![2]);
        // File 3 goes to slot 0 again.
        log.append(file, Some(3));
        log.append(100, Some(4));
        assert_eq!(log.files_started(), 4);
        let w = log.next_write().unwrap();
        assert_eq!((w.offset, w.len), (0, file), "file 3, in slot 0");
        assert_eq!(done(&mut log), vec![3]);
        let w = log.next_write().unwrap();
        assert_eq!((w.offset, w.len), (file, 4096), "file 4, in slot 1");
        assert_eq!(done(&mut log), vec![4]);
    }

    #[test]
    fn fewer_writes_than_durable_commits_under_concurrency() {
        // 100 users commit while writes take the time of 10 commits each.
        let mut log = Log::new(MIB, 8, 1 << 30);
        let (mut writes, mut commits, mut in_flight_for) = (0, 0, 0);
        for t in 0..1000u64 {
            log.append(2000, Some(t));
            commits += 1;
            in_flight_for += 1;
            if in_flight_for >= 10 {
                done(&mut log);
                in_flight_for = 0;
            }
            if log.next_write().is_some() {
                writes += 1;
                in_flight_for = 0;
            }
        }
        assert!(
            writes * 5 < commits,
            "{writes} writes for {commits} commits"
        );
    }
}
