//! One WAL sync method's I/O as a request source: an operation is `writes_per_sync` writes
//! of a block at the start of the file (offsets 0, 1, 2… blocks, as pg_test_fsync writes
//! them), then the method's sync call (`fdatasync`, `fsync`, or none when the file's open
//! flags make each write synchronous), one I/O at a time. The source times each operation,
//! from the issue of its first write to the completion of its last I/O, into a histogram of
//! its own: the latency pg_test_fsync reports as usecs/op.

use super::{Method, Point};
use crate::engine::source::{Next, Request, RequestSource};
use crate::engine::worker::WorkerReport;
use crate::engine::{IoOp, OpKind};
use crate::run::{Driver, Sources, WorkerInput};
use crate::stats::histogram::Histogram;
use std::sync::Mutex;

/// What the operations of one point came to.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Time of each completed operation, ns.
    pub latency: Histogram,
    /// Operations with a failed I/O (not timed).
    pub failed: u64,
}

/// The sources of one point's run: its one worker issues [`Groups`].
pub(crate) struct PointSources<'t> {
    /// The point.
    pub point: Point,
    /// Bytes of each write.
    pub block_bytes: u64,
    /// Where the worker's tally goes when it ends.
    pub tally: &'t Mutex<Tally>,
}

impl Sources for PointSources<'_> {
    fn drive(&self, input: WorkerInput<'_>, driver: Driver<'_, '_, '_>) -> WorkerReport {
        let class = input.spec.access.first().map_or(0, |a| a.class as u16);
        let mut groups = Groups::new(self.point, self.block_bytes, class);
        let report = driver.run(&mut groups);
        if let Ok(mut t) = self.tally.lock() {
            t.latency.add(&groups.tally.latency);
            t.failed += groups.tally.failed;
        }
        report
    }
}

/// One method's operations, one I/O at a time.
pub(crate) struct Groups {
    writes: u32,
    sync: Option<OpKind>,
    block: u32,
    class: u16,
    /// The next I/O of the operation: writes 0..writes, then the sync.
    step: u32,
    /// When the operation's first write was issued.
    started_ns: u64,
    /// An I/O is in flight.
    busy: bool,
    /// An I/O of this operation failed.
    failed: bool,
    /// What the operations came to.
    pub tally: Tally,
}

impl Groups {
    /// The operations of `point`, writes of `block` bytes, of class `class`.
    pub(crate) fn new(point: Point, block: u64, class: u16) -> Groups {
        Groups {
            writes: point.writes_per_sync,
            sync: match point.method {
                Method::Fdatasync => Some(OpKind::Flush),
                Method::Fsync => Some(OpKind::Fsync),
                Method::OpenDatasync | Method::OpenSync | Method::NoSync => None,
            },
            block: u32::try_from(block).unwrap_or(u32::MAX),
            class,
            step: 0,
            started_ns: 0,
            busy: false,
            failed: false,
            tally: Tally::default(),
        }
    }

    fn steps(&self) -> u32 {
        self.writes + u32::from(self.sync.is_some())
    }
}

impl RequestSource for Groups {
    fn next(&mut self, now_ns: u64) -> Next {
        if self.busy {
            return Next::AwaitCompletion;
        }
        if self.step == 0 {
            self.started_ns = now_ns;
            self.failed = false;
        }
        let op = if self.step < self.writes {
            IoOp {
                kind: OpKind::Write,
                target: 0,
                offset: u64::from(self.step) * u64::from(self.block),
                len: self.block,
                dsync: false,
                atomic: false,
                class: self.class,
            }
        } else {
            IoOp {
                kind: self.sync.unwrap_or(OpKind::Flush),
                target: 0,
                offset: 0,
                len: 0,
                dsync: false,
                atomic: false,
                class: self.class,
            }
        };
        self.busy = true;
        Next::Issue(Request {
            op,
            tag: u64::from(self.step),
            ..Request::NONE
        })
    }

    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        self.busy = false;
        let ok = result >= 0 && (request.op.kind.is_sync() || result as u32 == request.op.len);
        self.failed |= !ok;
        self.step += 1;
        if self.step == self.steps() {
            self.step = 0;
            if self.failed {
                self.tally.failed += 1;
            } else {
                self.tally
                    .latency
                    .record(now_ns.saturating_sub(self.started_ns));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `g` for `ops` operations, each I/O taking 10 ns, the sync 100 ns.
    fn drive(g: &mut Groups, ops: u32) -> Vec<IoOp> {
        let mut issued = Vec::new();
        let mut now = 1_000;
        while g.tally.latency.count() + g.tally.failed < u64::from(ops) {
            let Next::Issue(r) = g.next(now) else {
                panic!("one I/O at a time, always ready")
            };
            assert_eq!(g.next(now), Next::AwaitCompletion);
            now += if r.op.kind.is_sync() { 100 } else { 10 };
            let result = if r.op.kind.is_sync() {
                0
            } else {
                r.op.len as i32
            };
            g.completed(&r, result, now);
            issued.push(r.op);
        }
        issued
    }

    #[test]
    fn fdatasync_with_two_writes_writes_the_first_two_blocks_then_syncs() {
        let p = Point {
            method: Method::Fdatasync,
            direct: false,
            writes_per_sync: 2,
        };
        let mut g = Groups::new(p, 8192, 3);
        let ops = drive(&mut g, 3);
        let kinds: Vec<(OpKind, u64)> = ops.iter().map(|o| (o.kind, o.offset)).collect();
        let one = [
            (OpKind::Write, 0),
            (OpKind::Write, 8192),
            (OpKind::Flush, 0),
        ];
        assert_eq!(kinds, [one, one, one].concat());
        assert!(ops.iter().all(|o| o.class == 3));
        // Each operation: two writes of 10 ns and a sync of 100 ns.
        assert_eq!(g.tally.latency.count(), 3);
        let s = g.tally.latency.summary();
        assert_eq!((s.min, s.max), (120, 120));
    }

    #[test]
    fn fsync_issues_fsync_and_open_methods_no_sync_call() {
        let mut fsync = Groups::new(
            Point {
                method: Method::Fsync,
                direct: true,
                writes_per_sync: 1,
            },
            4096,
            0,
        );
        let ops = drive(&mut fsync, 2);
        assert_eq!(ops[1].kind, OpKind::Fsync);
        for method in [Method::OpenDatasync, Method::OpenSync, Method::NoSync] {
            let p = Point {
                method,
                direct: false,
                writes_per_sync: 4,
            };
            let mut g = Groups::new(p, 4096, 0);
            let ops = drive(&mut g, 2);
            assert_eq!(ops.len(), 8, "{method:?}");
            assert!(ops.iter().all(|o| o.kind == OpKind::Write));
            assert_eq!(ops[3].offset, 3 * 4096);
            assert_eq!(g.tally.latency.max(), 40);
        }
    }

    #[test]
    fn an_operation_with_a_failed_io_is_counted_not_timed() {
        let p = Point {
            method: Method::Fdatasync,
            direct: false,
            writes_per_sync: 1,
        };
        let mut g = Groups::new(p, 8192, 0);
        let Next::Issue(w) = g.next(0) else { panic!() };
        g.completed(&w, -5, 10);
        let Next::Issue(s) = g.next(10) else { panic!() };
        g.completed(&s, 0, 20);
        assert_eq!((g.tally.failed, g.tally.latency.count()), (1, 0));
    }
}
