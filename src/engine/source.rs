//! Request sources: what a worker issues next, and what it learns when an I/O completes. The
//! worker loop ([`super::worker::run`]) owns the slots, the ring, the clock, the statistics and
//! the stop conditions; a source owns the workload: it offers I/Os (each with the time it was
//! meant to start, in open loop), is told of every completion, and says when it has nothing to
//! offer (until a time, until a completion, or ever again). The closed-loop access generator
//! (thinking between I/Os or not) and open-loop pacing are the first; a user population, a
//! trace replayer or a cache tier are sources too, with no change to the loop.
//!
//! The contract, as the worker keeps it:
//!
//! - [`RequestSource::next`] is called only when the worker has a free slot and is issuing:
//!   what it returns as [`Next::Issue`] is issued (or, when verification finds its blocks busy,
//!   held and retried by the worker before it asks again), so a source never sees a request
//!   dropped while the run goes on.
//! - [`RequestSource::completed`] is called once for every issued request, with the request as
//!   it was offered (its `tag` included), the result (bytes, or −errno) and the time the worker
//!   reaped it, also for I/Os drained after the run stopped issuing (only a backend that can
//!   no longer wait leaves some untold). The next call to `next` comes after it: a request that
//!   depends on a completion can be offered then. Completions reaped together are told in the
//!   order reaped, with the same time.
//! - [`Next::At`] makes the worker sleep until that time or the next completion, whichever is
//!   first; [`Next::AwaitCompletion`] until the next completion; [`Next::Done`] ends the worker
//!   once the I/Os in flight have completed (its measured time then ends at the last
//!   completion). A worker also stops at the end of its run, on a stop request or on errors,
//!   whatever its source says.
//!
//! Both calls are on the per-I/O path: they must not allocate, lock, print or make system
//! calls. The worker is generic over its source, so they are inlined.

use super::IoOp;
use super::access::AccessGen;
use super::pacing::Pacer;
use crate::job::{IoLimit, Rate};

/// One I/O a source wants issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// What to do.
    pub op: IoOp,
    /// Open loop: when the I/O was meant to start, ns from the start of the run; its latency
    /// is counted from then (response time) and its service time from submission. `None`
    /// (closed loop): latency is counted from submission.
    pub intended_ns: Option<u64>,
    /// The source's own identifier, handed back with the completion.
    pub tag: u64,
    /// A cache tier's request: where its data belongs, when `op` puts it elsewhere (a block of
    /// the backing target held on the cache device), and whether the application asked for it.
    /// `None`: the data belongs where `op` puts it, and the I/O counts.
    pub(crate) home: Option<Home>,
}

impl Request {
    /// No request: what a slot that never held one holds, and the base of a request built
    /// field by field (`Request { op, ..Request::NONE }`).
    pub(crate) const NONE: Request = Request {
        op: IoOp {
            kind: super::OpKind::Read,
            target: 0,
            offset: 0,
            len: 0,
            dsync: false,
            atomic: false,
            class: 0,
        },
        intended_ns: None,
        tag: 0,
        home: None,
    };
}

/// Where a request's data belongs (see [`Request::home`]): verification seals and checks it,
/// and the block sample records it, as this block of this target; the backend puts it where
/// the request's `op` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Home {
    /// The target the data belongs to.
    pub target: u32,
    /// Its byte offset there.
    pub offset: u64,
    /// A copy of data already acknowledged (a cache fill or a write-back): a write is sealed
    /// with its blocks' current versions instead of new ones, and holds them shared, as a read.
    pub copy: bool,
    /// Not the application's I/O (fills, write-backs): its latency and bytes count for its
    /// target, not for its class.
    pub background: bool,
}

/// What a source has to offer now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Issue this.
    Issue(Request),
    /// Nothing before this time (ns from the start of the run); ask again then, or after the
    /// next completion.
    At(u64),
    /// Nothing until an I/O in flight completes.
    AwaitCompletion,
    /// Nothing, ever again.
    Done,
}

/// A workload, as the worker loop drives it (see the module's contract).
pub trait RequestSource {
    /// The next request, or why there is none; `now_ns` is the worker's clock.
    fn next(&mut self, now_ns: u64) -> Next;
    /// `request` completed with `result` (bytes transferred, or −errno), reaped at `now_ns`.
    fn completed(&mut self, request: &Request, result: i32, now_ns: u64);
    /// Open loop: how many I/Os were due before `until_ns` but never offered (the backlog when
    /// the worker stopped). 0 by default.
    fn unissued(&self, _until_ns: u64) -> u64 {
        0
    }
}

/// A source borrowed is a source (a cache tier in front of the worker's own).
impl<S: RequestSource + ?Sized> RequestSource for &mut S {
    #[inline]
    fn next(&mut self, now_ns: u64) -> Next {
        (**self).next(now_ns)
    }

    #[inline]
    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        (**self).completed(request, result, now_ns)
    }

    fn unissued(&self, until_ns: u64) -> u64 {
        (**self).unissued(until_ns)
    }
}

/// How many I/Os a worker with `limit` issues (`u64::MAX`: no limit).
fn io_count(access: &AccessGen, limit: Option<IoLimit>) -> u64 {
    match limit {
        None => u64::MAX,
        Some(IoLimit::Ios(n)) => n,
        Some(IoLimit::Passes(p)) => access.ops_per_pass().saturating_mul(p as u64),
    }
}

/// Closed loop: the next I/O of the access generator whenever a slot is free, up to the
/// worker's I/O limit.
#[derive(Debug)]
pub struct ClosedLoop {
    access: AccessGen,
    issued: u64,
    limit: u64,
}

impl ClosedLoop {
    /// Offers the I/Os of `access`, then `Done` after `io_limit`.
    pub fn new(access: AccessGen, io_limit: Option<IoLimit>) -> Self {
        let limit = io_count(&access, io_limit);
        Self {
            access,
            issued: 0,
            limit,
        }
    }
}

impl RequestSource for ClosedLoop {
    #[inline]
    fn next(&mut self, _now_ns: u64) -> Next {
        if self.issued >= self.limit {
            return Next::Done;
        }
        let tag = self.issued;
        self.issued += 1;
        Next::Issue(Request {
            op: self.access.next_op().0,
            intended_ns: None,
            tag,
            home: None,
        })
    }

    #[inline]
    fn completed(&mut self, _request: &Request, _result: i32, _now_ns: u64) {}
}

/// A closed loop that thinks (fio's `thinktime`): one I/O at a time, each issued `think_ns`
/// after the previous one completed. Its own source, so that the plain closed loop pays
/// nothing for it.
#[derive(Debug)]
pub(crate) struct Thinking<S> {
    inner: S,
    think_ns: u64,
    /// An I/O is in flight.
    busy: bool,
    /// When the next I/O may be issued.
    ready_ns: u64,
}

impl<S: RequestSource> Thinking<S> {
    /// `inner`'s I/Os, one at a time, `think_ns` after each completion.
    pub(crate) fn new(inner: S, think_ns: u64) -> Self {
        Self {
            inner,
            think_ns,
            busy: false,
            ready_ns: 0,
        }
    }
}

impl<S: RequestSource> RequestSource for Thinking<S> {
    fn next(&mut self, now_ns: u64) -> Next {
        if self.busy {
            return Next::AwaitCompletion;
        }
        if self.ready_ns > now_ns {
            return Next::At(self.ready_ns);
        }
        let next = self.inner.next(now_ns);
        self.busy = matches!(next, Next::Issue(_));
        next
    }

    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        self.inner.completed(request, result, now_ns);
        self.busy = false;
        self.ready_ns = now_ns + self.think_ns;
    }
}

/// A worker that starts late (its `start_delay`): nothing before `from_ns`, then `inner`'s I/Os.
#[derive(Debug)]
pub(crate) struct Delayed<S> {
    inner: S,
    from_ns: u64,
}

impl<S: RequestSource> Delayed<S> {
    /// `inner`'s I/Os from `from_ns` on.
    pub(crate) fn new(inner: S, from_ns: u64) -> Self {
        Self { inner, from_ns }
    }
}

impl<S: RequestSource> RequestSource for Delayed<S> {
    #[inline]
    fn next(&mut self, now_ns: u64) -> Next {
        if now_ns < self.from_ns {
            return Next::At(self.from_ns);
        }
        self.inner.next(now_ns)
    }

    #[inline]
    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        self.inner.completed(request, result, now_ns)
    }

    fn unissued(&self, until_ns: u64) -> u64 {
        self.inner.unissued(until_ns)
    }
}

/// Open loop: the I/Os of the access generator at the times of a [`Pacer`], each offered once
/// its time has come, up to the worker's I/O limit.
#[derive(Debug)]
pub(crate) struct OpenLoop {
    access: AccessGen,
    pacer: Pacer,
    /// Intended time of the next I/O.
    next_ns: u64,
    issued: u64,
    limit: u64,
    /// Added to the pacer's times: the schedule starts this late (a worker's start delay).
    offset_ns: u64,
}

impl OpenLoop {
    /// The same schedule, `offset_ns` later (a worker that starts late owes nothing for the
    /// time before it starts).
    pub(crate) fn starting_at(mut self, offset_ns: u64) -> Self {
        self.next_ns += offset_ns - self.offset_ns;
        self.offset_ns = offset_ns;
        self
    }

    /// Offers the I/Os of `access` at `rate`, then `Done` after `io_limit`. `seed` is the
    /// worker's; Poisson gaps are drawn from it mixed with a constant, so they do not follow
    /// the offsets or the buffer data.
    pub(crate) fn new(access: AccessGen, rate: Rate, seed: u64, io_limit: Option<IoLimit>) -> Self {
        let limit = io_count(&access, io_limit);
        let mut pacer = Pacer::new(rate, seed ^ 0x7061_6365);
        let next_ns = pacer.next_ns();
        Self {
            access,
            pacer,
            next_ns,
            issued: 0,
            limit,
            offset_ns: 0,
        }
    }
}

impl RequestSource for OpenLoop {
    #[inline]
    fn next(&mut self, now_ns: u64) -> Next {
        if self.issued >= self.limit {
            return Next::Done;
        }
        if self.next_ns > now_ns {
            return Next::At(self.next_ns);
        }
        let intended = self.next_ns;
        let tag = self.issued;
        self.issued += 1;
        self.next_ns = self.pacer.next_ns() + self.offset_ns;
        Next::Issue(Request {
            op: self.access.next_op().0,
            intended_ns: Some(intended),
            tag,
            home: None,
        })
    }

    #[inline]
    fn completed(&mut self, _request: &Request, _result: i32, _now_ns: u64) {}

    fn unissued(&self, until_ns: u64) -> u64 {
        if self.next_ns < until_ns && self.issued < self.limit {
            self.pacer.expected_between(self.next_ns, until_ns)
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::OpKind;
    use crate::engine::access::TargetGeometry;
    use crate::job::{Access, Arrivals, Worker};

    fn access() -> AccessGen {
        let worker = Worker::closed_loop("w", vec![0], 4, vec![Access::new(0, 4096, 100.0, 0.0)]);
        let geometry = TargetGeometry {
            size_bytes: 16 * 4096,
            fsync_every: 0,
        };
        AccessGen::new(&worker, &[geometry], 1).unwrap()
    }

    fn issue(next: Next) -> Request {
        match next {
            Next::Issue(r) => r,
            other => panic!("expected a request, got {other:?}"),
        }
    }

    #[test]
    fn a_think_time_issues_one_io_at_a_time_that_long_after_the_last_completion() {
        let mut source = Thinking::new(ClosedLoop::new(access(), None), 2_000);
        let first = issue(source.next(0));
        // One in flight: nothing more until it completes.
        assert_eq!(source.next(10), Next::AwaitCompletion);
        source.completed(&first, 4096, 500);
        assert_eq!(source.next(600), Next::At(2_500));
        let second = issue(source.next(2_500));
        assert_eq!(second.tag, 1);
        assert_eq!(
            second.intended_ns, None,
            "closed loop: latency from submission"
        );
    }

    #[test]
    fn closed_loop_offers_the_generator_s_ios_up_to_its_limit() {
        let mut generator = access();
        let mut source = ClosedLoop::new(access(), Some(IoLimit::Ios(3)));
        for tag in 0..3 {
            let r = issue(source.next(0));
            assert_eq!(r.op, generator.next_op().0, "the access generator's I/O");
            assert_eq!(r.op.kind, OpKind::Read);
            assert_eq!((r.intended_ns, r.tag), (None, tag));
            source.completed(&r, 4096, 10);
        }
        assert_eq!(source.next(0), Next::Done);
        assert_eq!(source.next(u64::MAX), Next::Done, "done stays done");
        assert_eq!(source.unissued(u64::MAX), 0);
    }

    #[test]
    fn closed_loop_passes_are_whole_passes_over_the_span() {
        let mut source = ClosedLoop::new(access(), Some(IoLimit::Passes(2)));
        let offsets: Vec<u64> = (0..32).map(|_| issue(source.next(0)).op.offset).collect();
        assert_eq!(source.next(0), Next::Done, "2 passes of 16 blocks");
        assert_eq!(offsets[..16], offsets[16..]);
        let mut unlimited = ClosedLoop::new(access(), None);
        for _ in 0..1000 {
            issue(unlimited.next(0));
        }
    }

    #[test]
    fn open_loop_offers_each_io_at_its_time() {
        let rate = Rate {
            iops: 1000.0,
            arrivals: Arrivals::Uniform,
        };
        let mut source = OpenLoop::new(access(), rate, 7, Some(IoLimit::Ios(4)));
        // I/O k is due at k ms.
        let first = issue(source.next(0));
        assert_eq!((first.intended_ns, first.tag), (Some(0), 0));
        assert_eq!(
            source.next(999_999),
            Next::At(1_000_000),
            "not before its time"
        );
        assert_eq!(source.next(500_000), Next::At(1_000_000));
        // Late: both due I/Os come at once, with their own intended times.
        let second = issue(source.next(2_500_000));
        let third = issue(source.next(2_500_000));
        assert_eq!(second.intended_ns, Some(1_000_000));
        assert_eq!(third.intended_ns, Some(2_000_000));
        assert_eq!(third.tag, 2);
        assert_eq!(source.next(2_500_000), Next::At(3_000_000));
        // Stopped at 5.5 ms: I/Os 3, 4 and 5 (due at 3, 4 and 5 ms) were never offered.
        assert_eq!(source.unissued(5_500_000), 3);
        assert_eq!(source.unissued(3_000_000), 0, "none due yet");
        issue(source.next(3_000_000));
        assert_eq!(source.next(9_000_000), Next::Done, "its limit of 4");
        assert_eq!(source.unissued(9_000_000), 0, "nothing owed past the limit");
    }

    #[test]
    fn open_loop_poisson_times_come_from_the_seed() {
        let rate = Rate {
            iops: 10_000.0,
            arrivals: Arrivals::Poisson,
        };
        let times = |seed| {
            let mut source = OpenLoop::new(access(), rate, seed, None);
            (0..100)
                .map(|_| issue(source.next(u64::MAX)).intended_ns.unwrap())
                .collect::<Vec<_>>()
        };
        let a = times(1);
        assert_eq!(a, times(1));
        assert_ne!(a, times(2));
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        let mut pacer = Pacer::new(rate, 1 ^ 0x7061_6365);
        let expected: Vec<u64> = (0..100).map(|_| pacer.next_ns()).collect();
        assert_eq!(a, expected, "the pacing seed of earlier versions");
    }
}
