//! The request sources of a database's log writer and checkpoints.
//!
//! [`GroupCommit`]: transactions commit at the target rate, evenly spaced; the log writer has
//! one write in flight, as a database's log writer does; when it is free it writes every commit
//! that waited in one sequential write ([`group_write_bytes`]: their log bytes, rounded up to
//! whole 4 KiB blocks, at most the engine's largest log write) and makes it durable as the
//! engine does (RWF_DSYNC, or a write then fdatasync). Slow storage makes fewer, larger writes,
//! as group commit does; a commit is durable when the write (and flush) carrying it completes.
//!
//! [`Checkpoint`]: every checkpoint interval, the pages dirtied since the last checkpoint are
//! written at random page offsets, as fast as the storage takes them (the worker's queue depth
//! in flight); a burst not finished when the next is due runs on into it.

use super::{Durability, LOG_ALIGN_BYTES};
use crate::engine::access::AccessGen;
use crate::engine::source::{Next, Request, RequestSource};
use crate::engine::{IoOp, OpKind};
use std::sync::atomic::{AtomicU64, Ordering};

/// The commits one log write carries and its size, bytes, when `waiting` commits of
/// `per_commit` log bytes each wait: as many as fit in `max_write` (at least one), their bytes
/// rounded up to whole [`LOG_ALIGN_BYTES`] blocks.
pub(crate) fn group_write_bytes(waiting: u64, per_commit: u64, max_write: u64) -> (u64, u64) {
    let per_commit = per_commit.max(1);
    let fit = (max_write / per_commit).max(1);
    let commits = waiting.min(fit).max(1);
    let bytes = (commits * per_commit)
        .div_ceil(LOG_ALIGN_BYTES)
        .saturating_mul(LOG_ALIGN_BYTES);
    (commits, bytes)
}

/// What the log writer and the checkpoints did in the measured window (completions from the
/// end of the ramp), shared by their sources and read by the validation after the run.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Commits made durable.
    pub(crate) commits: AtomicU64,
    /// Log writes made durable.
    pub(crate) log_writes: AtomicU64,
    /// Most commits one log write carried.
    pub(crate) max_commits_per_write: AtomicU64,
    /// Checkpoint bursts that finished.
    pub(crate) bursts: AtomicU64,
    /// Longest checkpoint burst, ns (first write issued to last completed).
    pub(crate) longest_burst_ns: AtomicU64,
    /// All checkpoint bursts together, ns.
    pub(crate) burst_ns: AtomicU64,
}

/// The log writer's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogSettings {
    /// The log target's index in the job.
    pub(crate) target: u32,
    /// The log write class.
    pub(crate) class: u16,
    /// Log bytes per commit.
    pub(crate) per_commit: u64,
    /// Largest write.
    pub(crate) max_write: u64,
    /// Log file size (written round and round).
    pub(crate) log_bytes: u64,
    /// Commits per second.
    pub(crate) tps: f64,
    /// How writes are made durable.
    pub(crate) durability: Durability,
    /// Completions before this (the ramp) are not counted.
    pub(crate) ramp_ns: u64,
}

/// Where the log writer is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Nothing in flight.
    Idle,
    /// A write carrying this many commits is in flight.
    Writing(u64),
    /// That write completed; its fdatasync is to be issued.
    Written(u64),
    /// Its fdatasync is in flight.
    Flushing(u64),
}

/// The log writer with group commit.
pub(crate) struct GroupCommit<'c> {
    s: LogSettings,
    counters: &'c Counters,
    /// ns between commits.
    gap_ns: f64,
    /// Commits that have arrived (since the start of the run).
    arrived: u64,
    /// Commits written (or being written).
    taken: u64,
    offset: u64,
    state: State,
    tag: u64,
}

impl<'c> GroupCommit<'c> {
    /// A log writer for `s`, counting into `counters`.
    pub(crate) fn new(s: LogSettings, counters: &'c Counters) -> Self {
        GroupCommit {
            gap_ns: 1e9 / s.tps,
            s,
            counters,
            arrived: 0,
            taken: 0,
            offset: 0,
            state: State::Idle,
            tag: 0,
        }
    }

    fn request(&mut self, kind: OpKind, offset: u64, len: u64) -> Next {
        self.tag += 1;
        Next::Issue(Request {
            op: IoOp {
                kind,
                target: self.s.target,
                offset,
                len: len as u32,
                dsync: kind == OpKind::Write && self.s.durability == Durability::Dsync,
                atomic: false,
                class: self.s.class,
            },
            intended_ns: None,
            tag: self.tag,
            home: None,
        })
    }

    fn durable(&mut self, commits: u64, now_ns: u64) {
        self.state = State::Idle;
        if now_ns >= self.s.ramp_ns {
            self.counters.commits.fetch_add(commits, Ordering::Relaxed);
            self.counters.log_writes.fetch_add(1, Ordering::Relaxed);
            self.counters
                .max_commits_per_write
                .fetch_max(commits, Ordering::Relaxed);
        }
    }
}

impl RequestSource for GroupCommit<'_> {
    fn next(&mut self, now_ns: u64) -> Next {
        match self.state {
            State::Writing(_) | State::Flushing(_) => return Next::AwaitCompletion,
            State::Written(commits) => {
                self.state = State::Flushing(commits);
                return self.request(OpKind::Flush, 0, 0);
            }
            State::Idle => {}
        }
        // Commit k arrives at k × gap (the first at 0).
        self.arrived = (now_ns as f64 / self.gap_ns) as u64 + 1;
        let waiting = self.arrived - self.taken;
        if waiting == 0 {
            return Next::At((self.arrived as f64 * self.gap_ns).ceil() as u64);
        }
        let (commits, bytes) = group_write_bytes(waiting, self.s.per_commit, self.s.max_write);
        self.taken += commits;
        if self.offset + bytes > self.s.log_bytes {
            self.offset = 0;
        }
        let offset = self.offset;
        self.offset += bytes;
        self.state = State::Writing(commits);
        self.request(OpKind::Write, offset, bytes)
    }

    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        let ok = result >= 0;
        match (self.state, request.op.kind) {
            (State::Writing(c), OpKind::Write)
                if ok && self.s.durability == Durability::Fdatasync =>
            {
                self.state = State::Written(c);
            }
            (State::Writing(c), OpKind::Write) | (State::Flushing(c), OpKind::Flush) if ok => {
                self.durable(c, now_ns);
            }
            // A failed write or flush: its commits are not durable (the error is counted).
            _ => self.state = State::Idle,
        }
    }
}

/// Checkpoint bursts on one data file.
pub(crate) struct Checkpoint<'c> {
    access: AccessGen,
    counters: &'c Counters,
    interval_ns: u64,
    pages: u64,
    ramp_ns: u64,
    next_burst_ns: u64,
    /// Pages of the current burst not yet issued.
    remaining: u64,
    in_flight: u64,
    burst_start_ns: Option<u64>,
    tag: u64,
}

impl<'c> Checkpoint<'c> {
    /// Bursts of `pages` page writes from `access` every `interval_ns`, the first one interval
    /// into the run.
    pub(crate) fn new(
        access: AccessGen,
        counters: &'c Counters,
        interval_ns: u64,
        pages: u64,
        ramp_ns: u64,
    ) -> Self {
        Checkpoint {
            access,
            counters,
            interval_ns: interval_ns.max(1),
            pages: pages.max(1),
            ramp_ns,
            next_burst_ns: interval_ns.max(1),
            remaining: 0,
            in_flight: 0,
            burst_start_ns: None,
            tag: 0,
        }
    }
}

impl RequestSource for Checkpoint<'_> {
    fn next(&mut self, now_ns: u64) -> Next {
        if now_ns >= self.next_burst_ns {
            self.remaining += self.pages;
            self.next_burst_ns += self.interval_ns;
            self.burst_start_ns.get_or_insert(now_ns);
        }
        if self.remaining == 0 {
            return if self.in_flight > 0 {
                Next::AwaitCompletion
            } else {
                Next::At(self.next_burst_ns)
            };
        }
        self.remaining -= 1;
        self.in_flight += 1;
        self.tag += 1;
        Next::Issue(Request {
            op: self.access.next_op().0,
            intended_ns: None,
            tag: self.tag,
            home: None,
        })
    }

    fn completed(&mut self, _request: &Request, _result: i32, now_ns: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.in_flight == 0 && self.remaining == 0 {
            if let Some(start) = self.burst_start_ns.take() {
                if start >= self.ramp_ns {
                    let took = now_ns.saturating_sub(start);
                    self.counters.bursts.fetch_add(1, Ordering::Relaxed);
                    self.counters.burst_ns.fetch_add(took, Ordering::Relaxed);
                    self.counters
                        .longest_burst_ns
                        .fetch_max(took, Ordering::Relaxed);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(durability: Durability) -> LogSettings {
        LogSettings {
            target: 1,
            class: 2,
            per_commit: 2048,
            max_write: 64 << 10,
            log_bytes: 1 << 20,
            tps: 1000.0,
            durability,
            ramp_ns: 0,
        }
    }

    #[test]
    fn group_commit_sizing() {
        // One commit of 2 KiB: one 4 KiB block.
        assert_eq!(group_write_bytes(1, 2048, 64 << 10), (1, 4096));
        // Three commits: 6 KiB, two blocks.
        assert_eq!(group_write_bytes(3, 2048, 64 << 10), (3, 8192));
        // More waiting than fit: the largest write, the rest waits.
        assert_eq!(group_write_bytes(100, 2048, 64 << 10), (32, 64 << 10));
        // SQL Server's 60 KiB: 15 commits of 4 KiB.
        assert_eq!(group_write_bytes(40, 4096, 60 << 10), (15, 60 << 10));
        // A commit larger than the largest write still goes, alone.
        assert_eq!(group_write_bytes(5, 8192, 4096), (1, 8192));
    }

    /// Drives `g` as a worker with one slot would, each I/O taking `service_ns`, until
    /// `until_ns`; returns the writes' sizes.
    fn drive(g: &mut GroupCommit, service_ns: u64, until_ns: u64) -> Vec<(OpKind, u32)> {
        let mut now = 0;
        let mut ops = Vec::new();
        while now < until_ns {
            match g.next(now) {
                Next::Issue(r) => {
                    ops.push((r.op.kind, r.op.len));
                    assert_eq!(r.op.offset % LOG_ALIGN_BYTES, 0);
                    now += service_ns;
                    g.completed(&r, r.op.len as i32, now);
                }
                Next::At(t) => {
                    assert!(t > now, "{t} after {now}");
                    now = t;
                }
                other => panic!("{other:?}"),
            }
        }
        ops
    }

    #[test]
    fn fast_storage_writes_each_commit_alone_and_slow_storage_groups_them() {
        let counters = Counters::default();
        let mut g = GroupCommit::new(settings(Durability::Dsync), &counters);
        // 1000 commits a second, writes of 0.1 ms: one commit a write.
        let ops = drive(&mut g, 100_000, 1_000_000_000);
        assert!(ops.iter().all(|o| *o == (OpKind::Write, 4096)), "{ops:?}");
        let commits = counters.commits.load(Ordering::Relaxed);
        assert!((999..=1001).contains(&commits), "{commits}");
        assert_eq!(counters.max_commits_per_write.load(Ordering::Relaxed), 1);
        // Writes of 10 ms: about ten commits wait for each, 20 KiB writes.
        let slow = Counters::default();
        let mut g = GroupCommit::new(settings(Durability::Dsync), &slow);
        let ops = drive(&mut g, 10_000_000, 1_000_000_000);
        let writes = slow.log_writes.load(Ordering::Relaxed);
        let commits = slow.commits.load(Ordering::Relaxed);
        assert!((95..=101).contains(&writes), "{writes}");
        assert!(commits >= 980, "every commit carried: {commits}");
        assert!(ops[5..].iter().all(|o| o.1 == 20480), "{ops:?}");
    }

    #[test]
    fn fdatasync_engines_flush_after_each_write_and_commit_then() {
        let counters = Counters::default();
        let mut g = GroupCommit::new(settings(Durability::Fdatasync), &counters);
        let ops = drive(&mut g, 100_000, 10_000_000);
        for pair in ops.chunks(2) {
            assert_eq!(pair[0].0, OpKind::Write);
            assert_eq!(pair.get(1).map(|p| p.0), Some(OpKind::Flush));
        }
        assert_eq!(
            counters.log_writes.load(Ordering::Relaxed),
            ops.len() as u64 / 2
        );
    }
}
