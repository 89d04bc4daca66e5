//! A real cache tier: a request source in front of another that turns each of the
//! application's I/Os of a cached target into real I/O of the cache device (hits, write-back
//! writes, fills) or of the backing target (misses, write-backs of dirty lines), with a
//! replacement policy from [`super`] (LRU, ARC, S3-FIFO) choosing what stays.
//!
//! The cache holds whole *lines* (by default the largest I/O of the target's worker); line `k`
//! of the target lives in one slot of the cache device, at `slot × line`. The rules:
//!
//! - **Reads.** A resident line serves the read from the cache device (a hit, with the optional
//!   synthetic delay). Otherwise the read goes to the backing target (a miss) and, unless the
//!   read is part of a sequential stream longer than `sequential_bypass`, the line is admitted:
//!   its data is written to its slot after the read (a read of the whole line first, when the
//!   application read only part of it). Until then, reads of it go to the backing target.
//! - **Writes**, write-back: to the cache device when the line is resident or the write covers
//!   it whole (the line becomes dirty), else to the backing target. Write-through: to the
//!   backing target, then the cached copy refreshed. Write-around: to the backing target, the
//!   cached copy dropped. A write to a line being filled, written back or dropped waits.
//! - **Write-back (destage).** Dirty lines are copied to the backing target oldest first when
//!   more than `dirty` of the lines are dirty, and before an evicted dirty line's slot is
//!   reused; a line written again while its copy is in flight stays dirty. What is dirty when
//!   the run ends is copied by [`Tier::drain`] before the verification pass.
//! - **I/O that spans lines** goes to the backing target, after its cached lines are written
//!   back (if dirty) and dropped.
//!
//! Fills and write-backs are the tier's own I/O ([`Home::background`]): they count for the
//! cache device and the backing target, not for the application's classes, and they use at
//! most a quarter of the worker's queue depth. Every cache-device I/O carries the backing
//! block it holds as its [`Home`], so verification seals and checks the data as the backing
//! target's, and a fill or write-back carries the version it copies. A tier's state lives in
//! its worker's thread: nothing is shared, nothing locks, and after the first pass nothing is
//! allocated per I/O.

mod drain;
mod route;
#[cfg(test)]
mod tests;

use super::{KeyHash, KeyMap, Policy};
use crate::engine::source::{Home, Next, Request, RequestSource};
use crate::engine::{IoOp, OpKind};
use crate::job::cache::{CachePolicy, WriteMode};
use crate::stats::Histogram;
use crate::stats::downsample::{Downsampled, SERIES_POINTS};
use crate::stats::tier::{TierCounts, TierInterval, TierIo, TierLatency, TierPoint};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

/// What a tier is, in engine terms.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TierPlan {
    /// The cached target's index in the backend's file table.
    pub(crate) backing: u32,
    /// Its size, bytes.
    pub(crate) backing_bytes: u64,
    /// The cache device's index.
    pub(crate) device: u32,
    /// Lines the cache holds.
    pub(crate) lines: u32,
    /// Bytes per line.
    pub(crate) line_bytes: u64,
    /// Replacement policy.
    pub(crate) policy: CachePolicy,
    /// What writes do.
    pub(crate) write: WriteMode,
    /// Sequential streams longer than this bypass the cache.
    pub(crate) bypass_bytes: Option<u64>,
    /// Synthetic delay before every hit, ns.
    pub(crate) hit_delay_ns: u64,
    /// Write-back starts above this share of dirty lines, percent.
    pub(crate) dirty_pct: f64,
    /// The worker's queue depth (the application's I/Os in flight at most).
    pub(crate) queue_depth: u32,
    /// Measurement starts (ns from the start of the run).
    pub(crate) ramp_ns: u64,
    /// Measurement ends.
    pub(crate) end_ns: u64,
    /// Interval of the time series, ns.
    pub(crate) interval_ns: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    /// Admitted; its data is on its way to the slot.
    Filling,
    Clean,
    Dirty,
}

#[derive(Debug, Clone, Copy)]
struct Line {
    /// Line number in the backing target.
    key: u64,
    state: State,
    /// Cache-device I/Os in flight on its slot.
    busy: u32,
    /// The policy dropped it: its slot is freed once it is clean and idle.
    evicting: bool,
    /// A write-back of it is queued or in flight.
    destaging: bool,
    /// Written while its write-back was in flight: still dirty after it.
    redirtied: bool,
}

const FREE: Line = Line {
    key: 0,
    state: State::Free,
    busy: 0,
    evicting: false,
    destaging: false,
    redirtied: false,
};

/// What a physical I/O in flight is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    /// The application's I/O, as it was (another target, a flush, a bypass, a span).
    Pass,
    /// A read served by the cache device.
    Hit,
    /// A read of the backing target; then the data fills slot `fill` (NONE: no fill).
    Miss { fill: u32 },
    /// A write-back write to the cache device.
    Absorb,
    /// A write to the backing target; then the written range is copied to slot `fill`.
    Through { fill: u32 },
    /// A read of a whole line from the backing target, to fill its slot.
    FillRead,
    /// A copy into a slot.
    FillWrite,
    /// A dirty line read from its slot, to be written back.
    DestageRead,
    /// A dirty line written to the backing target.
    DestageWrite,
}

#[derive(Debug, Clone, Copy)]
struct Flight {
    what: What,
    slot: u32,
    /// The application's request (for the I/Os that serve one).
    logical: Request,
    /// What was issued.
    physical: Request,
    issued_ns: u64,
}

/// Background work not yet issued.
#[derive(Debug, Clone, Copy)]
enum Work {
    FillRead(u32),
    FillWrite { slot: u32, within: u64, len: u32 },
    DestageRead(u32),
    DestageWrite(u32),
}

/// What routing an application request came to.
enum Routed {
    Issue(Request),
    /// Queued behind the synthetic hit delay.
    Delayed,
    /// It must wait for a line to be filled, written back or dropped.
    Held,
}

/// A cache tier in front of `S`'s target (see the module's rules).
pub(crate) struct Tier<S> {
    inner: S,
    plan: TierPlan,
    policy: Box<dyn Policy + Send>,
    map: Residents,
    lines: Vec<Line>,
    free_lines: Vec<u32>,
    flights: Vec<Flight>,
    free_flights: Vec<u32>,
    work: VecDeque<Work>,
    /// Slots in the order they became dirty (entries of lines since cleaned are skipped).
    dirty: VecDeque<u32>,
    /// Whether each slot is in `dirty` (so it is there at most once).
    queued: Vec<bool>,
    dirty_count: u32,
    dirty_max: u32,
    background: u32,
    background_max: u32,
    /// The application's I/Os taken from `inner` and not yet completed.
    logical: u32,
    /// The application's requests waiting for a line (in the order they came).
    held: VecDeque<Request>,
    /// Hits waiting out the synthetic delay: (due, flight).
    delayed: VecDeque<(u64, u32)>,
    inner_done: bool,
    /// End of the last I/O and length of its sequential run so far.
    seq: (u64, u64),
    figures: Figures,
}

/// The slot of each resident line: a table indexed by line number while the backing target
/// has at most [`DENSE_PER_LINE`] lines per cache line (or [`DENSE_MIN`]), so that the table
/// is no larger than a hash map of the resident lines would be; a hash map beyond.
enum Residents {
    Dense(Vec<u32>),
    Sparse(KeyMap<u32>),
}

/// Backing lines per cache line up to which [`Residents`] is a table (4 bytes a line).
const DENSE_PER_LINE: u64 = 8;
/// Backing lines up to which it is a table whatever the cache's size (4 MiB).
const DENSE_MIN: u64 = 1 << 20;

impl Residents {
    fn new(backing_lines: u64, cache_lines: u32) -> Residents {
        if backing_lines <= (u64::from(cache_lines) * DENSE_PER_LINE).max(DENSE_MIN) {
            Residents::Dense(vec![NONE; backing_lines as usize])
        } else {
            Residents::Sparse(KeyMap::with_capacity_and_hasher(
                cache_lines as usize,
                KeyHash,
            ))
        }
    }

    #[inline]
    fn get(&self, key: u64) -> Option<u32> {
        match self {
            Residents::Dense(t) => usize::try_from(key)
                .ok()
                .and_then(|k| t.get(k).copied())
                .filter(|&s| s != NONE),
            Residents::Sparse(m) => m.get(&key).copied(),
        }
    }

    fn insert(&mut self, key: u64, slot: u32) {
        match self {
            Residents::Dense(t) => {
                let k = key as usize;
                if k >= t.len() {
                    // Past the target's end (not from a request of it): the table grows.
                    t.resize(k + 1, NONE);
                }
                t[k] = slot;
            }
            Residents::Sparse(m) => {
                m.insert(key, slot);
            }
        }
    }

    fn remove(&mut self, key: u64) {
        match self {
            Residents::Dense(t) => {
                if let Some(s) = usize::try_from(key).ok().and_then(|k| t.get_mut(k)) {
                    *s = NONE;
                }
            }
            Residents::Sparse(m) => {
                m.remove(&key);
            }
        }
    }
}

/// What a tier counts.
struct Figures {
    interval_end: u64,
    interval: TierCounts,
    /// Cache-device and backing reads in the interval: (sum of ns, count).
    read_means: [(u64, u64); 2],
    totals: TierCounts,
    latency: [Histogram; 4],
    /// Kept at a bounded number of points, consecutive intervals merged in a long run.
    series: Downsampled<TierPoint>,
}

/// What a tier leaves when its worker is done.
#[derive(Debug)]
pub(crate) struct TierOutcome {
    /// Counts over the measured time.
    pub(crate) totals: TierCounts,
    /// Each tier's latency over the measured time.
    pub(crate) latency: TierLatency,
    /// The time series, at most [`SERIES_POINTS`] points.
    pub(crate) series: Vec<TierInterval>,
}

impl<S: RequestSource> Tier<S> {
    /// A cold tier of `plan` in front of `inner`.
    pub(crate) fn new(inner: S, plan: TierPlan) -> Tier<S> {
        let lines = plan.lines.max(1);
        let qd = plan.queue_depth.max(1);
        let background_max = background_slots(qd);
        // Every slot of the worker, and a hit waiting out its delay per application I/O.
        let flights = (2 * qd + background_max + 2) as usize;
        Tier {
            inner,
            plan: TierPlan { lines, ..plan },
            policy: plan.policy.simulator(lines as usize),
            map: Residents::new(plan.backing_bytes.div_ceil(plan.line_bytes.max(1)), lines),
            lines: vec![FREE; lines as usize],
            free_lines: (0..lines).rev().collect(),
            flights: vec![
                Flight {
                    what: What::Pass,
                    slot: NONE,
                    logical: Request::NONE,
                    physical: Request::NONE,
                    issued_ns: 0,
                };
                flights
            ],
            free_flights: (0..flights as u32).rev().collect(),
            work: VecDeque::with_capacity(lines as usize + flights),
            dirty: VecDeque::with_capacity(lines as usize),
            queued: vec![false; lines as usize],
            dirty_count: 0,
            dirty_max: (f64::from(lines) * plan.dirty_pct / 100.0) as u32,
            background: 0,
            background_max,
            logical: 0,
            held: VecDeque::with_capacity(qd as usize + 1),
            delayed: VecDeque::with_capacity(flights),
            inner_done: false,
            seq: (u64::MAX, 0),
            figures: Figures {
                interval_end: plan.interval_ns.max(1),
                interval: TierCounts::default(),
                read_means: [(0, 0); 2],
                totals: TierCounts::default(),
                latency: Default::default(),
                series: Downsampled::new(SERIES_POINTS / 2),
            },
        }
    }

    /// Its figures, the interval in progress closed at `now_ns`.
    pub(crate) fn outcome(&mut self, now_ns: u64) -> TierOutcome {
        self.tick(now_ns);
        let f = &mut self.figures;
        if f.interval != TierCounts::default() {
            let start = f.interval_end - self.plan.interval_ns.max(1);
            let record = interval_record(f, (start, now_ns.max(start)), &self.plan, &self.lines);
            f.series.push(record);
        }
        let series = std::mem::replace(&mut f.series, Downsampled::new(SERIES_POINTS / 2));
        TierOutcome {
            totals: f.totals,
            latency: TierLatency::of(&f.latency),
            series: series
                .into_points()
                .into_iter()
                .map(|p| p.interval)
                .collect(),
        }
    }

    /// Closes the intervals that ended by `now`.
    fn tick(&mut self, now: u64) {
        let step = self.plan.interval_ns.max(1);
        while now >= self.figures.interval_end {
            let span = (self.figures.interval_end - step, self.figures.interval_end);
            let record = interval_record(&mut self.figures, span, &self.plan, &self.lines);
            self.figures.series.push(record);
            self.figures.interval_end += step;
        }
    }

    /// Counts into the interval, and into the totals when `now` is measured.
    fn count(&mut self, now: u64, add: impl Fn(&mut TierCounts)) {
        add(&mut self.figures.interval);
        if now >= self.plan.ramp_ns && now <= self.plan.end_ns {
            add(&mut self.figures.totals);
        }
    }

    fn flight(
        &mut self,
        what: What,
        slot: u32,
        logical: Request,
        mut physical: Request,
        now: u64,
    ) -> Request {
        let f = self
            .free_flights
            .pop()
            .expect("a tier has a flight for every I/O its worker can have in flight");
        physical.tag = u64::from(f);
        self.flights[f as usize] = Flight {
            what,
            slot,
            logical,
            physical,
            issued_ns: now,
        };
        physical
    }

    /// A request for `len` bytes at `within` of line `key`'s slot on the cache device: the
    /// application's, or the tier's own (`background`: a fill's write, a copy of acknowledged
    /// data, or a write-back's read).
    fn on_cache(
        &self,
        kind: OpKind,
        slot: u32,
        key: u64,
        within: u64,
        len: u32,
        background: bool,
    ) -> Request {
        let l = self.plan.line_bytes;
        let op = IoOp {
            kind,
            target: self.plan.device,
            offset: u64::from(slot) * l + within,
            len,
            ..Request::NONE.op
        };
        let home = Home {
            target: self.plan.backing,
            offset: key * l + within,
            copy: background && kind == OpKind::Write,
            background,
        };
        Request {
            op,
            home: Some(home),
            ..Request::NONE
        }
    }

    /// A background request for line `key` of the backing target, whole.
    fn on_backing(&self, kind: OpKind, key: u64) -> Request {
        let offset = key * self.plan.line_bytes;
        let op = IoOp {
            kind,
            target: self.plan.backing,
            offset,
            len: self.line_len(key),
            ..Request::NONE.op
        };
        let home = Home {
            target: self.plan.backing,
            offset,
            copy: kind == OpKind::Write,
            background: true,
        };
        Request {
            op,
            home: Some(home),
            ..Request::NONE
        }
    }

    /// Bytes of line `key` (the target's last line may be short).
    fn line_len(&self, key: u64) -> u32 {
        let start = key * self.plan.line_bytes;
        self.plan
            .line_bytes
            .min(self.plan.backing_bytes.saturating_sub(start)) as u32
    }

    /// Frees slot `s`.
    fn free(&mut self, s: u32) {
        self.map.remove(self.lines[s as usize].key);
        if self.lines[s as usize].state == State::Dirty {
            self.dirty_count -= 1;
        }
        self.lines[s as usize] = FREE;
        self.free_lines.push(s);
    }

    /// Frees slot `s` if it was evicted and is now clean and idle.
    fn settle(&mut self, s: u32) {
        let l = self.lines[s as usize];
        if l.evicting && l.busy == 0 && !l.destaging && l.state == State::Clean {
            self.free(s);
        }
    }

    /// Queues the write-back of slot `s` (dirty, not already on its way).
    fn destage(&mut self, s: u32) {
        let l = &mut self.lines[s as usize];
        if l.state == State::Dirty && !l.destaging {
            l.destaging = true;
            self.work.push_back(Work::DestageRead(s));
        }
    }

    /// Handles what the policy's last access dropped.
    fn evictions(&mut self, now: u64) {
        while let Some(key) = self.policy.evicted() {
            self.count(now, |c| c.evictions += 1);
            let Some(s) = self.map.get(key) else {
                continue;
            };
            self.lines[s as usize].evicting = true;
            self.destage(s);
            self.settle(s);
        }
    }

    /// Admits line `key` in `state`: the policy takes it (dropping another) and it gets a free
    /// slot, if one is free now.
    fn admit(&mut self, key: u64, state: State, now: u64) -> Option<u32> {
        self.policy.access(key);
        self.evictions(now);
        let s = self.free_lines.pop()?;
        self.map.insert(key, s);
        self.lines[s as usize] = Line { key, state, ..FREE };
        if state == State::Dirty {
            self.dirty_count += 1;
            self.queue_dirty(s);
        }
        Some(s)
    }

    /// Puts slot `s` in the write-back queue, unless it is there.
    fn queue_dirty(&mut self, s: u32) {
        if !std::mem::replace(&mut self.queued[s as usize], true) {
            self.dirty.push_back(s);
        }
    }

    /// Marks slot `s` dirty (a write-back write to it is issued).
    fn dirty(&mut self, s: u32) {
        let l = &mut self.lines[s as usize];
        if l.destaging {
            l.redirtied = true;
        }
        if l.state != State::Dirty {
            l.state = State::Dirty;
            self.dirty_count += 1;
            self.queue_dirty(s);
        }
    }

    /// Background work to issue now, if any may be.
    fn background_next(&mut self, now: u64) -> Option<Request> {
        if self.background >= self.background_max {
            return None;
        }
        if self.work.is_empty() && self.dirty_count > self.dirty_max {
            // The oldest dirty line still dirty and not on its way.
            while let Some(s) = self.dirty.pop_front() {
                self.queued[s as usize] = false;
                let l = self.lines[s as usize];
                if l.state == State::Dirty && !l.destaging {
                    self.destage(s);
                    break;
                }
            }
        }
        let w = self.work.pop_front()?;
        self.background += 1;
        let (what, slot, p) = match w {
            Work::FillRead(s) => {
                let key = self.lines[s as usize].key;
                (What::FillRead, s, self.on_backing(OpKind::Read, key))
            }
            Work::FillWrite { slot, within, len } => {
                let key = self.lines[slot as usize].key;
                self.lines[slot as usize].busy += 1;
                let p = self.on_cache(OpKind::Write, slot, key, within, len, true);
                (What::FillWrite, slot, p)
            }
            Work::DestageRead(s) => {
                let key = self.lines[s as usize].key;
                self.lines[s as usize].busy += 1;
                let len = self.line_len(key);
                (
                    What::DestageRead,
                    s,
                    self.on_cache(OpKind::Read, s, key, 0, len, true),
                )
            }
            Work::DestageWrite(s) => {
                let key = self.lines[s as usize].key;
                (What::DestageWrite, s, self.on_backing(OpKind::Write, key))
            }
        };
        Some(self.flight(what, slot, Request::NONE, p, now))
    }

    /// Nothing to issue now: when to ask again.
    fn wait(&self) -> Next {
        match self.delayed.front() {
            Some(&(due, _)) => Next::At(due),
            None => Next::AwaitCompletion,
        }
    }

    /// Whether nothing of the tier's is queued or in flight.
    fn quiet(&self) -> bool {
        self.held.is_empty()
            && self.delayed.is_empty()
            && self.free_flights.len() == self.flights.len()
    }

    /// A physical I/O completed: the tier's state moves on.
    fn settle_flight(&mut self, f: Flight, ok: bool, now: u64) {
        let s = f.slot;
        if s != NONE
            && matches!(
                f.what,
                What::Hit | What::Absorb | What::FillWrite | What::DestageRead
            )
        {
            self.lines[s as usize].busy -= 1;
        }
        match f.what {
            What::Pass | What::Hit | What::Absorb => {}
            What::Miss { fill } | What::Through { fill } if fill != NONE => {
                if ok {
                    let within = f.logical.op.offset % self.plan.line_bytes;
                    self.work.push_back(Work::FillWrite {
                        slot: fill,
                        within,
                        len: f.logical.op.len,
                    });
                } else {
                    self.free(fill);
                }
            }
            What::Miss { .. } | What::Through { .. } => {}
            What::FillRead => {
                self.background -= 1;
                if ok {
                    let len = f.physical.op.len;
                    self.work.push_back(Work::FillWrite {
                        slot: s,
                        within: 0,
                        len,
                    });
                } else {
                    self.free(s);
                }
            }
            What::FillWrite => {
                self.background -= 1;
                if ok {
                    let bytes = u64::from(f.physical.op.len);
                    self.count(now, |c| c.fill_bytes += bytes);
                    self.lines[s as usize].state = State::Clean;
                } else {
                    self.free(s);
                }
            }
            What::DestageRead => {
                self.background -= 1;
                if ok {
                    self.work.push_front(Work::DestageWrite(s));
                } else {
                    self.lines[s as usize].destaging = false;
                    self.queue_dirty(s);
                }
            }
            What::DestageWrite => {
                self.background -= 1;
                let l = &mut self.lines[s as usize];
                l.destaging = false;
                if ok && !l.redirtied {
                    l.state = State::Clean;
                    self.dirty_count -= 1;
                } else {
                    l.redirtied = false;
                    self.queue_dirty(s);
                }
                if ok {
                    let bytes = u64::from(f.physical.op.len);
                    self.count(now, |c| c.destage_bytes += bytes);
                }
                if self.lines[s as usize].evicting {
                    self.destage(s);
                }
            }
        }
        if s != NONE && self.lines[s as usize].state != State::Free {
            self.settle(s);
        }
    }
}

/// The tier's own I/Os in flight at most, for a worker of queue depth `qd`: half as many
/// again, at least 2. The worker gets that many slots more than its queue depth
/// ([`Tier::slots`]), so fills and write-backs do not take the application's.
fn background_slots(qd: u32) -> u32 {
    (qd / 2).max(2)
}

impl<S> Tier<S> {
    /// The slots a worker of queue depth `qd` needs with a tier: its own, and the tier's.
    pub(crate) fn slots(qd: u32) -> u32 {
        qd.max(1) + background_slots(qd.max(1))
    }
}

/// The record of the interval from `start` to `end` ns, its counts taken.
fn interval_record(
    f: &mut Figures,
    (start, end): (u64, u64),
    plan: &TierPlan,
    lines: &[Line],
) -> TierPoint {
    let counts = std::mem::take(&mut f.interval);
    let mean = |(sum, n): (u64, u64)| (n > 0).then(|| sum as f64 / n as f64 / 1000.0);
    let means = std::mem::take(&mut f.read_means);
    TierPoint {
        interval: TierInterval {
            t_s: start as f64 / 1e9,
            read_hit_pct: counts.read_hit_pct(),
            counts,
            cache_read_mean_us: mean(means[0]),
            backing_read_mean_us: mean(means[1]),
            resident_lines: lines.iter().filter(|l| l.state != State::Free).count() as u64,
            dirty_lines: lines.iter().filter(|l| l.state == State::Dirty).count() as u64,
            interval_s: Some(end.saturating_sub(start) as f64 / 1e9),
        },
        reads: [means[0].1, means[1].1],
        ramp: start < plan.ramp_ns,
    }
}

impl<S: RequestSource> RequestSource for Tier<S> {
    fn next(&mut self, now_ns: u64) -> Next {
        let now = now_ns;
        self.tick(now);
        if let Some(p) = self.background_next(now) {
            return Next::Issue(p);
        }
        if let Some(&(due, f)) = self.delayed.front() {
            if due <= now {
                self.delayed.pop_front();
                self.flights[f as usize].issued_ns = now;
                return Next::Issue(self.flights[f as usize].physical);
            }
        }
        // Waiting requests whose line is free now, in the order they came; the others wait on
        // while new ones are taken.
        let mut i = 0;
        while i < self.held.len() {
            let r = self.held[i];
            match self.route(r, false, now) {
                Routed::Issue(p) => {
                    self.held.remove(i);
                    return Next::Issue(p);
                }
                Routed::Delayed => {
                    self.held.remove(i);
                }
                Routed::Held => i += 1,
            }
        }
        if self.inner_done {
            return if self.quiet() {
                Next::Done
            } else {
                self.wait()
            };
        }
        if self.logical >= self.plan.queue_depth {
            return self.wait();
        }
        match self.inner.next(now) {
            Next::Issue(r) => {
                self.logical += 1;
                self.take(r, now)
            }
            Next::At(t) => match self.wait() {
                Next::At(d) => Next::At(d.min(t)),
                _ => Next::At(t),
            },
            Next::AwaitCompletion => self.wait(),
            Next::Done => {
                self.inner_done = true;
                if self.quiet() {
                    Next::Done
                } else {
                    self.wait()
                }
            }
        }
    }

    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        let now = now_ns;
        self.tick(now);
        let f = self.flights[request.tag as usize];
        self.free_flights.push(request.tag as u32);
        let op = f.physical.op;
        let ok = result >= 0 && result as u32 == op.len;
        if !op.kind.is_sync() && (op.target == self.plan.device || op.target == self.plan.backing) {
            let which = match (op.target == self.plan.device, op.kind == OpKind::Read) {
                (true, true) => TierIo::CacheRead,
                (true, false) => TierIo::CacheWrite,
                (false, true) => TierIo::BackingRead,
                (false, false) => TierIo::BackingWrite,
            };
            let ns = now.saturating_sub(f.issued_ns);
            if now >= self.plan.ramp_ns && now <= self.plan.end_ns {
                self.figures.latency[which as usize].record(ns);
            }
            if let TierIo::CacheRead | TierIo::BackingRead = which {
                let m = &mut self.figures.read_means[which as usize / 2];
                m.0 += ns;
                m.1 += 1;
            }
        }
        self.settle_flight(f, ok, now);
        match f.what {
            What::FillRead | What::FillWrite | What::DestageRead | What::DestageWrite => {}
            _ => {
                self.logical -= 1;
                self.inner.completed(&f.logical, result, now);
            }
        }
    }

    fn unissued(&self, until_ns: u64) -> u64 {
        let held = (self.held.iter())
            .filter(|r| r.intended_ns.is_some_and(|t| t < until_ns))
            .count();
        self.inner.unissued(until_ns) + held as u64
    }
}
