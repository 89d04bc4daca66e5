//! The worker loop on fake backends and toy sources: dependent sources, open loop, failed
//! submissions, batching.

use super::*;
use crate::engine::access::{AccessGen, TargetGeometry};
use crate::engine::buf::SlotArena;
use crate::engine::null::NullBackend;
use crate::engine::source::OpenLoop;
use crate::engine::verify::MapTarget;
use crate::job::{Access, Arrivals, IoLimit, Rate};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::mpsc::Receiver;

/// What a worker plan borrows: one 1 MiB target, 4 KiB I/O, a minute to run.
struct Fixture {
    spec: Worker,
    stop: AtomicBool,
    halt: AtomicBool,
    blocks: VerifyMap,
    failures: AtomicU64,
}

const TARGET_BYTES: u64 = 1 << 20;
const MINUTE_NS: u64 = 60_000_000_000;

impl Fixture {
    fn new(queue_depth: u32) -> Fixture {
        Fixture {
            spec: Worker::closed_loop(
                "w",
                vec![0],
                queue_depth,
                vec![Access::new(0, 4096, 100.0, 100.0)],
            ),
            stop: AtomicBool::new(false),
            halt: AtomicBool::new(false),
            blocks: VerifyMap::new(
                &[MapTarget {
                    size_bytes: TARGET_BYTES,
                    prepared_id: None,
                }],
                4096,
                1,
                false,
            ),
            failures: AtomicU64::new(0),
        }
    }

    fn plan(&self) -> (WorkerPlan<'_>, Receiver<WorkerMsg>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let plan = WorkerPlan {
            index: 0,
            spec: &self.spec,
            classes: 1,
            start: Instant::now(),
            grid: IntervalGrid {
                ramp_ns: 0,
                measure_ns: MINUTE_NS,
                interval_ns: 1_000_000_000,
                cooldown_ns: 0,
            },
            stop: &self.stop,
            halt: &self.halt,
            tx,
            batch: 1,
            targets: 1,
            blocks: &self.blocks,
            failures: &self.failures,
            max_failures: u64::MAX,
            sample: None,
        };
        (plan, rx)
    }

    /// Runs `source` through the real loop on the null backend, a slot per I/O in flight.
    fn run_null(&self, source: &mut impl RequestSource) -> WorkerReport {
        let (plan, _rx) = self.plan();
        let qd = self.spec.queue_depth as usize;
        SlotArena::with(qd, 4096, 1, |arena, slots| {
            run(plan, NullBackend::new(arena), slots, source, Vec::new())
        })
    }

    fn access(&self) -> AccessGen {
        let geometry = TargetGeometry {
            size_bytes: TARGET_BYTES,
            fsync_every: 0,
        };
        AccessGen::new(&self.spec, &[geometry], 3).unwrap()
    }
}

fn io(kind: OpKind, offset: u64) -> IoOp {
    IoOp {
        kind,
        target: 0,
        offset,
        len: 4096,
        dsync: false,
        atomic: false,
        class: 0,
    }
}

fn dir(stats: &StatsSet, dir: Dir) -> &crate::stats::OpStats {
    &stats.classes[0].dirs[dir as usize]
}

/// What the toy source saw, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Offered(u64, OpKind),
    Waiting,
    Completed(u64, OpKind, i32),
    Done,
}

/// A dependent source, like one user of a mailbox population: a read, and only once it has
/// completed, a write of what was read (a log commit).
struct ReadThenWrite {
    read_completed: bool,
    write_offered: bool,
    write_completed: bool,
    events: Vec<Event>,
}

const READ_TAG: u64 = 0xAAAA;
const WRITE_TAG: u64 = 0xBBBB;

impl RequestSource for ReadThenWrite {
    fn next(&mut self, _now_ns: u64) -> Next {
        let (event, next) = if self.events.is_empty() {
            let r = Request {
                op: io(OpKind::Read, 8192),
                intended_ns: None,
                tag: READ_TAG,
                home: None,
            };
            (Event::Offered(READ_TAG, OpKind::Read), Next::Issue(r))
        } else if self.read_completed && !self.write_offered {
            self.write_offered = true;
            let w = Request {
                op: io(OpKind::Write, 8192),
                intended_ns: None,
                tag: WRITE_TAG,
                home: None,
            };
            (Event::Offered(WRITE_TAG, OpKind::Write), Next::Issue(w))
        } else if self.write_completed {
            (Event::Done, Next::Done)
        } else {
            (Event::Waiting, Next::AwaitCompletion)
        };
        self.events.push(event);
        next
    }

    fn completed(&mut self, request: &Request, result: i32, _now_ns: u64) {
        self.events
            .push(Event::Completed(request.tag, request.op.kind, result));
        match request.tag {
            READ_TAG => self.read_completed = true,
            WRITE_TAG => self.write_completed = true,
            other => panic!("a tag the source never gave: {other}"),
        }
    }
}

#[test]
fn a_dependent_source_drives_the_real_loop_one_step_per_completion() {
    let fixture = Fixture::new(2);
    let mut source = ReadThenWrite {
        read_completed: false,
        write_offered: false,
        write_completed: false,
        events: Vec::new(),
    };
    let report = fixture.run_null(&mut source);
    use Event::*;
    assert_eq!(
        source.events,
        [
            Offered(READ_TAG, OpKind::Read),
            // The second slot is free, but the write waits for the read.
            Waiting,
            Completed(READ_TAG, OpKind::Read, 4096),
            Offered(WRITE_TAG, OpKind::Write),
            Waiting,
            Completed(WRITE_TAG, OpKind::Write, 4096),
            Done,
        ]
    );
    // Ended by the source, not by the minute of its grid: at its last completion.
    assert!(report.measured_ns < MINUTE_NS, "{}", report.measured_ns);
    assert!(report.fatal.is_none());
    let (read, write) = (
        dir(&report.totals, Dir::Read),
        dir(&report.totals, Dir::Write),
    );
    assert_eq!((read.ops, read.bytes, read.errors), (1, 4096, 0));
    assert_eq!((write.ops, write.bytes, write.errors), (1, 4096, 0));
    assert_eq!(read.service.count(), 0, "closed loop: latency only");
    assert_eq!(report.targets[0].ops, [1, 1, 0]);
    assert_eq!(report.unissued, 0);
}

#[test]
fn open_loop_through_the_loop_counts_service_time_and_stops_at_its_limit() {
    let mut fixture = Fixture::new(4);
    fixture.spec.rate = Some(Rate {
        iops: 1e12,
        arrivals: Arrivals::Uniform,
    });
    let mut source = OpenLoop::new(
        fixture.access(),
        fixture.spec.rate.unwrap(),
        5,
        Some(IoLimit::Ios(100)),
    );
    let report = fixture.run_null(&mut source);
    let read = dir(&report.totals, Dir::Read);
    assert_eq!(read.ops, 100);
    assert_eq!(read.service.count(), 100, "service time of every I/O");
    assert!(read.latency.max() >= read.service.max());
    assert!(report.measured_ns < MINUTE_NS, "{}", report.measured_ns);
    assert_eq!(report.unissued, 0, "nothing owed past the limit");
}

/// A backend whose I/Os complete a few reaps after they were submitted, and whose
/// submissions fail from the `fail_from`-th on; it records how many I/Os were still in
/// flight when it was dropped.
struct Flaky<'a> {
    arena: SlotArena<'a>,
    queued: Vec<(Slot<'a>, i32)>,
    /// Submitted: (slot, result, reaps left before it completes).
    in_flight: Vec<(Slot<'a>, i32, u32)>,
    submits: u32,
    fail_from: u32,
    /// Reaps an I/O takes to complete (`u32::MAX`: never).
    slowness: u32,
    left_at_drop: Rc<RefCell<Option<usize>>>,
}

impl<'a> Backend<'a> for Flaky<'a> {
    fn slot_buf(&mut self, slot: &Slot<'a>) -> &mut [u8] {
        self.arena.buf(slot)
    }

    fn push(&mut self, slot: Slot<'a>, op: &IoOp) {
        self.queued.push((slot, op.len as i32));
    }

    fn submit(&mut self, _wait: bool, _timeout_ns: u64) -> std::io::Result<()> {
        self.submits += 1;
        if self.submits >= self.fail_from {
            return Err(std::io::Error::from_raw_os_error(libc::EBADR));
        }
        let slowness = self.slowness;
        self.in_flight
            .extend(self.queued.drain(..).map(|(s, r)| (s, r, slowness)));
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<(Slot<'a>, i32)>) {
        let mut i = 0;
        while i < self.in_flight.len() {
            let left = &mut self.in_flight[i].2;
            *left = left.saturating_sub(1);
            if *left == 0 {
                let (slot, res, _) = self.in_flight.swap_remove(i);
                out.push((slot, res));
            } else {
                i += 1;
            }
        }
    }
}

impl Drop for Flaky<'_> {
    fn drop(&mut self) {
        *self.left_at_drop.borrow_mut() = Some(self.in_flight.len() + self.queued.len());
    }
}

/// Counts what a source offered and what it was told completed.
struct Counting<S> {
    inner: S,
    offered: u64,
    completed: u64,
}

impl<S: RequestSource> RequestSource for Counting<S> {
    fn next(&mut self, now_ns: u64) -> Next {
        let next = self.inner.next(now_ns);
        if let Next::Issue(_) = next {
            self.offered += 1;
        }
        next
    }

    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        self.completed += 1;
        self.inner.completed(request, result, now_ns);
    }
}

/// Runs a closed-loop worker at queue depth 4 on a [`Flaky`] backend; returns the report,
/// the source and how many I/Os the backend still had when it was dropped.
fn run_flaky(slowness: u32) -> (WorkerReport, Counting<ClosedLoopOf>, usize, bool) {
    let fixture = Fixture::new(4);
    let (mut plan, _rx) = fixture.plan();
    // One submission per queue depth: the first carries all 4 I/Os.
    plan.batch = 4;
    let mut source = Counting {
        inner: ClosedLoopOf::new(fixture.access(), None),
        offered: 0,
        completed: 0,
    };
    let left = Rc::new(RefCell::new(None));
    let report = SlotArena::with(4, 4096, 1, |arena, slots| {
        let backend = Flaky {
            arena,
            queued: Vec::new(),
            in_flight: Vec::new(),
            submits: 0,
            // The first submission works: 4 I/Os in flight; every later one fails.
            fail_from: 2,
            slowness,
            left_at_drop: Rc::clone(&left),
        };
        run(plan, backend, slots, &mut source, Vec::new())
    });
    let left = left.borrow().expect("the backend was dropped");
    let halted = fixture.halt.load(Ordering::Relaxed);
    (report, source, left, halted)
}

type ClosedLoopOf = crate::engine::source::ClosedLoop;

#[test]
fn a_failed_submission_ends_the_worker_after_draining_what_is_in_flight() {
    // The I/Os complete 5 reaps after submission, while every submission fails.
    let (report, source, left, halted) = run_flaky(5);
    let fatal = report.fatal.as_deref().expect("a fatal error");
    assert!(fatal.contains("submitting I/O failed"), "{fatal}");
    assert!(halted, "the run is told to stop");
    assert_eq!(source.offered, 4, "one queue depth, then no more");
    assert_eq!(
        source.completed, 4,
        "every I/O in flight was reaped before the worker returned"
    );
    assert_eq!(left, 0, "nothing in flight when the backend was dropped");
}

#[test]
fn a_backend_that_can_neither_submit_nor_complete_is_left_to_its_drop() {
    let (report, source, left, _) = run_flaky(u32::MAX);
    assert!(report.fatal.is_some());
    assert_eq!((source.offered, source.completed), (4, 0));
    // The worker gave up after FAILED_SUBMITS tries; the backend's drop (io_uring: cancel
    // and wait, or leak) has the last word.
    assert_eq!(left, 4);
}

/// When a [`Recording`] backend's I/Os complete.
#[derive(Clone, Copy, PartialEq)]
enum Completes {
    /// Like a device: once the worker waits.
    OnWait,
    /// Like a page-cache hit: within the call that submits it.
    Inline,
    /// Like a busy device: once the worker waits, and one older I/O at every submission that
    /// does not wait.
    Trickle,
}

/// A submission as a [`Recording`] backend saw it.
#[derive(Debug, Clone, Copy)]
struct Submitted {
    /// I/Os it carried.
    ios: usize,
    wait: bool,
    /// I/Os the worker held, reaped but not yet issued again, when it was made.
    held: usize,
    /// Pushes before it, counting from the start.
    pushes: usize,
}

/// A backend recording what each submission carried, at queue depth `slots`.
struct Recording<'a> {
    arena: SlotArena<'a>,
    completes: Completes,
    slots: usize,
    pushes: usize,
    queued: Vec<Slot<'a>>,
    flying: Vec<Slot<'a>>,
    done: Vec<(Slot<'a>, i32)>,
    submits: Rc<RefCell<Vec<Submitted>>>,
}

impl<'a> Backend<'a> for Recording<'a> {
    fn slot_buf(&mut self, slot: &Slot<'a>) -> &mut [u8] {
        self.arena.buf(slot)
    }

    fn push(&mut self, slot: Slot<'a>, _op: &IoOp) {
        self.pushes += 1;
        self.queued.push(slot);
    }

    fn submit(&mut self, wait: bool, _timeout_ns: u64) -> std::io::Result<()> {
        self.submits.borrow_mut().push(Submitted {
            ios: self.queued.len(),
            wait,
            held: self.slots - self.queued.len() - self.flying.len() - self.done.len(),
            pushes: self.pushes,
        });
        let older = self.flying.len();
        self.flying.append(&mut self.queued);
        if wait || self.completes == Completes::Inline {
            self.done.extend(self.flying.drain(..).map(|s| (s, 4096)));
        } else if self.completes == Completes::Trickle && older > 0 {
            let s = self.flying.remove(0);
            self.done.push((s, 4096));
        }
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<(Slot<'a>, i32)>) {
        out.append(&mut self.done);
    }
}

/// What each submission of 200 closed-loop I/Os at queue depth 8 carried, with `batch`.
fn submissions(batch: usize, completes: Completes) -> Vec<Submitted> {
    let fixture = Fixture::new(8);
    let (mut plan, _rx) = fixture.plan();
    plan.batch = batch;
    let mut source = ClosedLoopOf::new(fixture.access(), Some(IoLimit::Ios(200)));
    let submits = Rc::new(RefCell::new(Vec::new()));
    let report = SlotArena::with(8, 4096, 1, |arena, slots| {
        let backend = Recording {
            arena,
            completes,
            slots: 8,
            pushes: 0,
            queued: Vec::new(),
            flying: Vec::new(),
            done: Vec::new(),
            submits: Rc::clone(&submits),
        };
        run(plan, backend, slots, &mut source, Vec::new())
    });
    assert_eq!(dir(&report.totals, Dir::Read).ops, 200);
    submits.take()
}

/// The submissions that did not wait and carried I/Os.
fn early(submits: &[Submitted]) -> usize {
    submits.iter().filter(|s| s.ios > 0 && !s.wait).count()
}

/// How many I/Os the submissions carried.
fn carried(submits: &[Submitted]) -> usize {
    submits.iter().map(|s| s.ios).sum()
}

#[test]
fn each_batch_is_submitted_as_soon_as_the_next_io_is_ready() {
    // batch 1 on a device: every I/O is submitted on its own, before the next is prepared, so
    // the device starts on it at once (all at the end in one call held a whole queue depth
    // back and made the device work in lock-step with the worker).
    let one = submissions(1, Completes::OnWait);
    assert!(one.iter().all(|s| s.ios <= 1), "{one:?}");
    // Each refill of the 8 slots: 7 submissions that do not wait, then one that does.
    assert!(early(&one) >= 7 * (200 / 8 - 1), "{one:?}");
    // batch 4: submitted 4 at a time, refilled only when 4 slots are free.
    let four = submissions(4, Completes::OnWait);
    assert!(four.iter().all(|s| s.ios == 0 || s.ios == 4), "{four:?}");
    assert_eq!(carried(&four), 200);
    assert!(early(&four) > 0, "{four:?}");
}

#[test]
fn io_that_completes_within_its_submission_is_not_submitted_early() {
    // A page-cache hit completes inside the call that submits it: there is no device to
    // start early, so after the first such I/O the rest of each refill goes in one call.
    let inline = submissions(1, Completes::Inline);
    assert_eq!(carried(&inline), 200);
    assert!(
        inline.len() <= 2 * (200 / 8) + 2,
        "at most two submissions per refill of 8: {inline:?}"
    );
    assert!(inline.iter().any(|s| s.ios >= 6), "{inline:?}");
}

#[test]
fn completions_reaped_while_refilling_are_not_held_back_by_a_wait() {
    // Older I/Os complete while the worker refills: it reaps them with its early
    // submissions, and must not then wait for yet another completion before recording them
    // (their latency would grow by that wait).
    let trickle = submissions(1, Completes::Trickle);
    assert_eq!(carried(&trickle), 200);
    // Until the source runs out, every free slot is refilled, so a slot the worker holds is
    // a completion reaped and not yet recorded.
    let refilling: Vec<&Submitted> = trickle.iter().filter(|s| s.pushes < 190).collect();
    assert!(
        refilling.iter().any(|s| s.held > 0),
        "no completion arrived while refilling: {trickle:?}"
    );
    assert!(
        refilling.iter().all(|s| !(s.wait && s.held > 0)),
        "waited while holding completions: {trickle:?}"
    );
}

/// A device whose submissions take `pause` each, completing the oldest I/O at every submission
/// that does not wait (and all of them when the worker waits); it notes when it handed each
/// completion to the worker, on the worker's clock.
struct SlowSubmit<'a> {
    arena: SlotArena<'a>,
    start: Instant,
    pause: std::time::Duration,
    queued: Vec<Slot<'a>>,
    flying: Vec<Slot<'a>>,
    done: Vec<(Slot<'a>, i32)>,
    handed_out: Rc<RefCell<Vec<u64>>>,
}

impl<'a> Backend<'a> for SlowSubmit<'a> {
    fn slot_buf(&mut self, slot: &Slot<'a>) -> &mut [u8] {
        self.arena.buf(slot)
    }

    fn push(&mut self, slot: Slot<'a>, _op: &IoOp) {
        self.queued.push(slot);
    }

    fn submit(&mut self, wait: bool, _timeout_ns: u64) -> std::io::Result<()> {
        let older = self.flying.len();
        self.flying.append(&mut self.queued);
        if wait {
            self.done.extend(self.flying.drain(..).map(|s| (s, 4096)));
        } else {
            std::thread::sleep(self.pause);
            if older > 0 {
                let s = self.flying.remove(0);
                self.done.push((s, 4096));
            }
        }
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<(Slot<'a>, i32)>) {
        let now = self.start.elapsed().as_nanos() as u64;
        let mut handed_out = self.handed_out.borrow_mut();
        handed_out.extend(self.done.iter().map(|_| now));
        out.append(&mut self.done);
    }
}

/// Notes the time the worker gives each completion.
struct Timing<S> {
    inner: S,
    completed_at: Vec<u64>,
}

impl<S: RequestSource> RequestSource for Timing<S> {
    fn next(&mut self, now_ns: u64) -> Next {
        self.inner.next(now_ns)
    }

    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        self.completed_at.push(now_ns);
        self.inner.completed(request, result, now_ns);
    }
}

#[test]
fn a_completion_reaped_while_refilling_is_timed_when_it_was_reaped() {
    // Each early submission takes 10 ms and brings back one older completion. Timed after
    // the whole refill (as the loop once did), a completion reaped at the first of the 7
    // early submissions of a refill would carry 60 ms more than the device took: the extra
    // p99 latency a 32-deep queue showed against fio.
    let pause = std::time::Duration::from_millis(10);
    let fixture = Fixture::new(8);
    let (plan, _rx) = fixture.plan();
    let mut source = Timing {
        inner: ClosedLoopOf::new(fixture.access(), Some(IoLimit::Ios(40))),
        completed_at: Vec::new(),
    };
    let handed_out = Rc::new(RefCell::new(Vec::new()));
    let report = SlotArena::with(8, 4096, 1, |arena, slots| {
        let backend = SlowSubmit {
            arena,
            start: plan.start,
            pause,
            queued: Vec::new(),
            flying: Vec::new(),
            done: Vec::new(),
            handed_out: Rc::clone(&handed_out),
        };
        run(plan, backend, slots, &mut source, Vec::new())
    });
    assert_eq!(dir(&report.totals, Dir::Read).ops, 40);
    let handed_out = handed_out.take();
    assert_eq!(handed_out.len(), source.completed_at.len());
    // How long after the device handed it out the worker timed each completion: on a loaded
    // machine a few may be late by a preemption, not by a refill.
    let lags: Vec<u64> = handed_out
        .iter()
        .zip(&source.completed_at)
        .map(|(&out, &at)| at.saturating_sub(out))
        .collect();
    let late = lags.iter().filter(|&&lag| lag >= 5_000_000).count();
    assert!(
        late * 10 <= lags.len(),
        "{late} of {} timed late: {lags:?}",
        lags.len()
    );
    // And the case arose: completions came back one at a time, during refills.
    let early = handed_out.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(early >= 20, "{handed_out:?}");
}

/// A source that offers one I/O the verification map's blocks do not fit.
struct Misaligned {
    offered: bool,
}

impl RequestSource for Misaligned {
    fn next(&mut self, _now_ns: u64) -> Next {
        if self.offered {
            return Next::Done;
        }
        self.offered = true;
        Next::Issue(Request {
            op: IoOp {
                offset: 512,
                ..io(OpKind::Read, 0)
            },
            intended_ns: None,
            tag: 1,
            home: None,
        })
    }

    fn completed(&mut self, _request: &Request, _result: i32, _now_ns: u64) {
        panic!("nothing was to be issued");
    }
}

#[test]
fn a_verifying_worker_ends_with_a_reason_on_io_its_blocks_do_not_fit() {
    let mut fixture = Fixture::new(2);
    fixture.blocks = VerifyMap::new(
        &[MapTarget {
            size_bytes: TARGET_BYTES,
            prepared_id: None,
        }],
        4096,
        1,
        true,
    );
    let mut source = Misaligned { offered: false };
    let report = fixture.run_null(&mut source);
    let why = report.fatal.expect("a fatal reason");
    assert!(
        why.contains("at offset 512") && why.contains("4096-byte blocks"),
        "{why}"
    );
    assert!(fixture.halt.load(Ordering::Relaxed));
    assert_eq!(dir(&report.totals, Dir::Read).ops, 0);
}
