//! A user population as a request source: tasks are dispatched at LoadGen's pace (or as fast
//! as they complete, in stress mode), each user runs its tasks one at a time (later ones wait
//! in the user's queue), each task runs its recipe's steps against the store, and every I/O
//! the store causes goes to the engine. The engine times the I/Os; this source times the
//! tasks, from when each was due and from when it started, and keeps the population's time
//! series. The overload rule stops the run: the source says [`Next::Done`].
//!
//! Targets and classes: database `d`'s file is target `2d` and its log `2d + 1`; its classes
//! are `3d` (page reads), `3d + 1` (page writes) and `3d + 2` (log writes).

use super::dispatch::{Dispatch, Dispatcher};
use super::recipe::{Mailbox, Mailboxes, Recipe, Step};
use super::store::{Io, IoKind, Store, StoreCounts};
use crate::engine::source::{Next, Request, RequestSource};
use crate::engine::{IoOp, OpKind};
use crate::stats::downsample::{Downsampled, SERIES_POINTS};
use crate::stats::histogram::Histogram;
use crate::workloads::users::profile::Task;
use crate::workloads::users::section::{Overload, UsersInterval, UsersPoint};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// No entry (queues and free lists).
const NONE: u32 = u32::MAX;
/// Tag bits that say what an I/O is for; the low 32 bits hold the task slot of a page read.
const TAG_KIND: u32 = 62;
/// Tag bits that hold the database.
const TAG_DB: u32 = 32;
/// Dispatches started in one call at most (in stress mode, tasks that complete without I/O
/// would otherwise keep one call going).
const DISPATCH_BATCH: usize = 1024;

/// How the population is paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pace {
    /// Real nanoseconds during which tasks are dispatched.
    pub dispatch_ns: u64,
    /// Stress mode: a user's next task as soon as its last completed.
    pub stress: bool,
    /// Interval of the time series, ns.
    pub interval_ns: u64,
}

/// What the console shows while a population runs, updated every interval.
#[derive(Debug, Default)]
pub(crate) struct Live {
    /// Tasks completed.
    pub completed: AtomicU64,
    /// Unfinished tasks.
    pub unfinished: AtomicU64,
    /// Send Mail p95 so far, ns.
    pub send_mail_p95_ns: AtomicU64,
}

/// One task type's counts and latencies.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    /// Dispatched.
    pub dispatched: u64,
    /// Completed.
    pub completed: u64,
    /// Completed with a failed I/O.
    pub failed: u64,
    /// From the time it was due.
    pub latency: Histogram,
    /// From the time it started.
    pub service: Histogram,
}

/// A task that started: its recipe, the step it is in, and its times.
#[derive(Debug)]
struct Running {
    recipe: Recipe,
    step: Option<Step>,
    reads: u32,
    failed: bool,
    due_ns: u64,
    started_ns: u64,
}

/// A user's tasks waiting for its running one, as a list through [`Waiting`].
#[derive(Debug, Clone, Copy)]
struct UserQueue {
    busy: bool,
    head: u32,
    tail: u32,
}

#[derive(Debug, Clone, Copy)]
struct Waiting {
    due_ns: u64,
    task: Task,
    next: u32,
}

/// The interval being gathered.
#[derive(Debug, Default, Clone, Copy)]
struct Gathering {
    end_ns: u64,
    completed: u64,
    counts: StoreCounts,
    reads: u64,
    writes: u64,
    logs: u64,
    cpu_ns: u64,
}

/// A population of users on a store, as a request source.
#[derive(Debug)]
pub(crate) struct Population {
    dispatcher: Dispatcher,
    pending: Option<Dispatch>,
    pace: Pace,
    users: u64,
    mailboxes: Mailboxes,
    store: Store,
    queues: Vec<UserQueue>,
    waiting: Vec<Waiting>,
    free_waiting: Vec<u32>,
    running: Vec<Option<Running>>,
    free_running: Vec<u32>,
    released: Vec<u64>,
    seed: u64,
    started: u64,
    unfinished: u64,
    /// Per task type, in [`Task::ALL`] order.
    tallies: Vec<Tally>,
    overloaded: Option<Overload>,
    gathering: Gathering,
    /// At most [`SERIES_POINTS`] points, consecutive intervals merged in a long run.
    series: Downsampled<UsersPoint>,
    cpu_start_ns: u64,
    cpu_stopped_ns: Option<u64>,
    live: Arc<Live>,
    issued: (u64, u64, u64),
}

impl Population {
    /// `mailboxes`' users doing `dispatcher`'s tasks on `store`, paced by `pace`; progress in
    /// `live`.
    pub(crate) fn new(
        dispatcher: Dispatcher,
        mailboxes: Mailboxes,
        store: Store,
        pace: Pace,
        seed: u64,
        live: Arc<Live>,
    ) -> Self {
        let users = mailboxes.users.len() as u64;
        Population {
            dispatcher,
            pending: None,
            pace,
            users,
            mailboxes,
            store,
            queues: vec![
                UserQueue {
                    busy: false,
                    head: NONE,
                    tail: NONE,
                };
                users as usize
            ],
            waiting: Vec::new(),
            free_waiting: Vec::new(),
            running: Vec::new(),
            free_running: Vec::new(),
            released: Vec::new(),
            seed,
            started: 0,
            unfinished: 0,
            tallies: vec![Tally::default(); Task::ALL.len()],
            overloaded: None,
            gathering: Gathering {
                end_ns: pace.interval_ns,
                ..Gathering::default()
            },
            series: Downsampled::new(SERIES_POINTS / 2),
            cpu_start_ns: thread_cpu_ns(),
            cpu_stopped_ns: None,
            live,
            issued: (0, 0, 0),
        }
    }

    /// Every task dispatched and not completed by `now_ns` (running, or waiting behind its
    /// user's running task): its type and how long since it was due.
    pub(crate) fn unfinished_ages(&self, now_ns: u64) -> Vec<(Task, u64)> {
        let mut ages: Vec<(Task, u64)> = self
            .running
            .iter()
            .flatten()
            .map(|r| (r.recipe.task, now_ns.saturating_sub(r.due_ns)))
            .collect();
        for q in &self.queues {
            let mut i = q.head;
            while i != NONE {
                let w = self.waiting[i as usize];
                ages.push((w.task, now_ns.saturating_sub(w.due_ns)));
                i = w.next;
            }
        }
        ages
    }

    /// Bytes of state per user: its mailbox record and its queue.
    pub(crate) fn bytes_per_user() -> u64 {
        (std::mem::size_of::<Mailbox>() + std::mem::size_of::<UserQueue>()) as u64
    }

    /// Per task type, in [`Task::ALL`] order.
    pub(crate) fn tallies(&self) -> &[Tally] {
        &self.tallies
    }

    /// Tasks dispatched and tasks unfinished.
    pub(crate) fn dispatched_unfinished(&self) -> (u64, u64) {
        (
            self.tallies.iter().map(|t| t.dispatched).sum(),
            self.unfinished,
        )
    }

    /// The overload that stopped the run, if one did.
    pub(crate) fn overloaded(&self) -> Option<&Overload> {
        self.overloaded.as_ref()
    }

    /// Tasks due while the population dispatches (stress mode: those dispatched), and the
    /// real ns between two dispatches (0 in stress mode).
    pub(crate) fn planned(&self) -> (u64, f64) {
        let planned = if self.pace.stress {
            self.dispatched_unfinished().0
        } else {
            self.dispatcher.due_before(self.pace.dispatch_ns)
        };
        (planned, self.dispatcher.interval_ns())
    }

    /// Messages put in mailboxes (Sent Items copies and deliveries).
    pub(crate) fn messages(&self) -> u64 {
        self.mailboxes.messages
    }

    /// The store's counts.
    pub(crate) fn store_counts(&self) -> StoreCounts {
        self.store.counts()
    }

    /// The time series so far, with the interval in progress closed at `now_ns` (at most
    /// [`SERIES_POINTS`] points).
    pub(crate) fn finish_series(&mut self, now_ns: u64) -> Vec<UsersInterval> {
        if now_ns > self.gathering.end_ns.saturating_sub(self.pace.interval_ns) {
            let end = self.gathering.end_ns;
            self.gathering.end_ns = now_ns;
            self.close_interval(end - self.pace.interval_ns);
        }
        let series = std::mem::replace(&mut self.series, Downsampled::new(SERIES_POINTS / 2));
        series
            .into_points()
            .into_iter()
            .map(|p| p.interval)
            .collect()
    }

    /// Starts counting CPU time (on the thread that will drive the population).
    pub(crate) fn restart_clock(&mut self) {
        self.cpu_start_ns = thread_cpu_ns();
        self.cpu_stopped_ns = None;
        self.gathering.cpu_ns = 0;
    }

    /// Stops counting CPU time (on the thread that drove the population): [`Self::cpu_ns`]
    /// then gives the total on any thread.
    pub(crate) fn stop_clock(&mut self) {
        self.cpu_stopped_ns = Some(self.cpu_ns());
    }

    /// CPU nanoseconds of the driving thread since the clock started (until it stopped). A
    /// thread's CPU clock is its own: before [`Self::stop_clock`] this is only right on the
    /// thread that called [`Self::restart_clock`].
    pub(crate) fn cpu_ns(&self) -> u64 {
        self.cpu_stopped_ns
            .unwrap_or_else(|| thread_cpu_ns().saturating_sub(self.cpu_start_ns))
    }

    /// Fills the cache as if every user had logged on and looked at the calendar (warm-up
    /// mode `preloaded`), without I/O; the counts start again from zero.
    pub(crate) fn preload(&mut self) {
        'users: for user in 0..self.users {
            for task in [Task::Logon, Task::BrowseCalendar] {
                let mut recipe = Recipe::new(task, user, 0);
                while let Some(step) = recipe.next_step(&mut self.mailboxes) {
                    self.store.begin(&step, 0);
                    self.store.queue.clear();
                    if self.store.cached_pages() >= self.store.capacity() {
                        break 'users;
                    }
                }
            }
        }
        self.store.reset_counts();
    }

    /// Starts the dispatches that are due by `now_ns` (at most [`DISPATCH_BATCH`]); false
    /// when the run is overloaded.
    fn dispatch_due(&mut self, now_ns: u64) -> bool {
        for _ in 0..DISPATCH_BATCH {
            if self.pace.stress && self.unfinished >= self.users {
                return true;
            }
            let d = match self.pending {
                Some(d) => d,
                None => {
                    let d = self.dispatcher.dispatch();
                    self.pending = Some(d);
                    d
                }
            };
            let due = if self.pace.stress { now_ns } else { d.at_ns };
            if due > now_ns || due >= self.pace.dispatch_ns {
                return true;
            }
            self.pending = None;
            self.tallies[d.task as usize].dispatched += 1;
            self.unfinished += 1;
            self.enqueue(d.user, d.task, due, now_ns);
            if self.dispatcher.overloaded(self.unfinished) {
                self.overloaded = Some(Overload {
                    at_s: now_ns as f64 / 1e9,
                    unfinished: self.unfinished,
                    limit: (super::dispatch::OVERLOAD_FACTOR * self.users as f64) as u64,
                });
                return false;
            }
        }
        true
    }

    /// Starts `task` for `user`, or queues it behind the user's running task.
    fn enqueue(&mut self, user: u64, task: Task, due_ns: u64, now_ns: u64) {
        let q = self.queues[user as usize];
        if !q.busy {
            self.queues[user as usize].busy = true;
            self.start(user, task, due_ns, now_ns);
            return;
        }
        let w = Waiting {
            due_ns,
            task,
            next: NONE,
        };
        let i = match self.free_waiting.pop() {
            Some(i) => {
                self.waiting[i as usize] = w;
                i
            }
            None => {
                self.waiting.push(w);
                (self.waiting.len() - 1) as u32
            }
        };
        let q = &mut self.queues[user as usize];
        if q.tail == NONE {
            q.head = i;
        } else {
            self.waiting[q.tail as usize].next = i;
        }
        q.tail = i;
    }

    fn start(&mut self, user: u64, task: Task, due_ns: u64, now_ns: u64) {
        let seed = self.seed ^ self.started.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.started += 1;
        let r = Running {
            recipe: Recipe::new(task, user, seed),
            step: None,
            reads: 0,
            failed: false,
            due_ns,
            started_ns: now_ns,
        };
        let slot = match self.free_running.pop() {
            Some(i) => {
                self.running[i as usize] = Some(r);
                i
            }
            None => {
                self.running.push(Some(r));
                (self.running.len() - 1) as u32
            }
        };
        self.advance(slot, now_ns);
    }

    /// Runs task `slot` on from the end of its step until it waits (reads or a durable
    /// commit) or is done.
    fn advance(&mut self, slot: u32, now_ns: u64) {
        loop {
            let Some(r) = self.running[slot as usize].as_mut() else {
                return;
            };
            if let Some(step) = r.step.take() {
                if self.store.commit(&step, slot) {
                    return;
                }
                continue;
            }
            match r.recipe.next_step(&mut self.mailboxes) {
                Some(step) => {
                    let reads = self.store.begin(&step, slot);
                    r.step = Some(step);
                    r.reads = reads;
                    if reads > 0 {
                        return;
                    }
                }
                None => return self.finish(slot, now_ns),
            }
        }
    }

    fn finish(&mut self, slot: u32, now_ns: u64) {
        let Some(r) = self.running[slot as usize].take() else {
            return;
        };
        self.free_running.push(slot);
        self.unfinished -= 1;
        self.gathering.completed += 1;
        let t = &mut self.tallies[r.recipe.task as usize];
        t.completed += 1;
        t.failed += u64::from(r.failed);
        t.latency.record(now_ns.saturating_sub(r.due_ns));
        t.service.record(now_ns.saturating_sub(r.started_ns));
        let user = r.recipe.user as usize;
        let q = self.queues[user];
        if q.head == NONE {
            self.queues[user].busy = false;
            return;
        }
        let w = self.waiting[q.head as usize];
        self.free_waiting.push(q.head);
        let q = &mut self.queues[user];
        q.head = w.next;
        if q.head == NONE {
            q.tail = NONE;
        }
        self.start(user as u64, w.task, w.due_ns, now_ns);
    }

    /// Closes the intervals that ended by `now_ns`.
    fn tick(&mut self, now_ns: u64) {
        while now_ns >= self.gathering.end_ns {
            let start = self.gathering.end_ns - self.pace.interval_ns;
            self.close_interval(start);
            self.gathering.end_ns += self.pace.interval_ns;
        }
    }

    /// Records the interval from `start_ns` to the gathering's end.
    fn close_interval(&mut self, start_ns: u64) {
        let g = self.gathering;
        let secs = (g.end_ns.saturating_sub(start_ns)).max(1) as f64 / 1e9;
        let now = self.store.counts();
        let refs = (now.hits + now.misses) - (g.counts.hits + g.counts.misses);
        let hits = now.hits - g.counts.hits;
        let cpu = self.cpu_ns();
        let (reads, writes, logs) = self.issued;
        let send = &self.tallies[Task::SendMail as usize].latency;
        let p95 = if send.count() > 0 {
            send.quantile(0.95)
        } else {
            0
        };
        let interval = UsersInterval {
            t_s: g.end_ns as f64 / 1e9,
            tasks_per_s: g.completed as f64 / secs,
            unfinished: self.unfinished,
            cache_hit_pct: if refs > 0 {
                hits as f64 * 100.0 / refs as f64
            } else {
                0.0
            },
            log_waits: self.store.log_waits(),
            checkpoint_depth_bytes: self.store.checkpoint_depth(),
            db_reads_per_s: (reads - g.reads) as f64 / secs,
            db_writes_per_s: (writes - g.writes) as f64 / secs,
            log_writes_per_s: (logs - g.logs) as f64 / secs,
            cpu_pct: cpu.saturating_sub(g.cpu_ns) as f64 / 1e9 / secs * 100.0,
            send_mail_p95_ns: p95,
        };
        self.series.push(UsersPoint {
            interval,
            secs,
            refs,
        });
        let completed: u64 = self.tallies.iter().map(|t| t.completed).sum();
        self.live.completed.store(completed, Ordering::Relaxed);
        self.live
            .unfinished
            .store(self.unfinished, Ordering::Relaxed);
        self.live.send_mail_p95_ns.store(p95, Ordering::Relaxed);
        self.gathering = Gathering {
            end_ns: g.end_ns,
            completed: 0,
            counts: now,
            reads,
            writes,
            logs,
            cpu_ns: cpu,
        };
    }

    /// The request for a store I/O.
    fn request(&mut self, io: Io) -> Request {
        let (kind, class, target, op, token, dsync) = match io.kind {
            IoKind::PageRead(token) => (0, 0, 0, OpKind::Read, token, false),
            IoKind::PageWrite => (1, 1, 0, OpKind::Write, 0, false),
            // Exchange writes its log through to stable storage.
            IoKind::LogWrite => (2, 2, 1, OpKind::Write, 0, true),
        };
        match kind {
            0 => self.issued.0 += 1,
            1 => self.issued.1 += 1,
            _ => self.issued.2 += 1,
        }
        Request {
            op: IoOp {
                kind: op,
                target: io.db * 2 + target,
                offset: io.offset,
                len: io.len as u32,
                dsync,
                atomic: false,
                class: (io.db * 3 + class) as u16,
            },
            intended_ns: None,
            tag: (kind << TAG_KIND) | (u64::from(io.db) << TAG_DB) | u64::from(token),
            home: None,
        }
    }
}

impl RequestSource for Population {
    fn next(&mut self, now_ns: u64) -> Next {
        self.tick(now_ns);
        if self.overloaded.is_some() {
            return Next::Done;
        }
        if !self.dispatch_due(now_ns) {
            return Next::Done;
        }
        if let Some(io) = self.store.queue.pop_front() {
            return Next::Issue(self.request(io));
        }
        let wake = self.gathering.end_ns;
        match self.pending {
            _ if self.pace.stress && now_ns < self.pace.dispatch_ns => {
                if self.unfinished >= self.users {
                    Next::AwaitCompletion
                } else {
                    Next::At(now_ns + 1)
                }
            }
            Some(d) if d.at_ns < self.pace.dispatch_ns => Next::At(d.at_ns.min(wake)),
            _ if self.unfinished == 0 => Next::Done,
            _ => Next::At(wake),
        }
    }

    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        let tag = request.tag;
        let db = ((tag >> TAG_DB) & 0x3fff_ffff) as u32;
        match tag >> TAG_KIND {
            0 => {
                let slot = tag as u32;
                let Some(r) = self.running[slot as usize].as_mut() else {
                    return;
                };
                r.failed |= result < 0;
                r.reads -= 1;
                if r.reads == 0 {
                    self.advance(slot, now_ns);
                }
            }
            1 => self.store.page_written(db),
            _ => {
                let mut released = std::mem::take(&mut self.released);
                self.store.log_written(db, &mut released);
                for &slot in &released {
                    if let Some(r) = self.running[slot as usize].as_mut() {
                        r.failed |= result < 0;
                    }
                    self.advance(slot as u32, now_ns);
                }
                released.clear();
                self.released = released;
            }
        }
        self.tick(now_ns);
        if self.overloaded.is_none() {
            self.dispatch_due(now_ns);
        }
    }
}

/// CPU time of the calling thread, ns.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stats::downsample::Merge;
    use crate::workloads::users::layout::Layout;
    use crate::workloads::users::profile::Profile;
    use crate::workloads::users::recipe::Knobs;

    const MS: u64 = 1_000_000;

    /// A small population: `users` Heavy users on 2 databases of 2 MiB mailboxes (8 KiB pages),
    /// a day of 8 simulated hours compressed `compress` times, dispatching for `dispatch_ns`.
    pub(crate) fn population(
        users: u64,
        compress: f64,
        dispatch_ns: u64,
        cache_pages: u64,
    ) -> Population {
        let heavy = Profile::builtin("heavy").unwrap();
        let day = 8 * 3600 * 1000 * MS;
        let dispatcher = Dispatcher::new(&heavy, users, day, compress, false, 7).unwrap();
        let layout = Layout::new(8192, 2 << 20, users.div_ceil(2), 20, 2, 128, 7);
        let knobs = Knobs {
            log_per_body_byte: 2.4,
            secondary_indexes: 2,
            index_entry_bytes: 128,
        };
        let mailboxes = Mailboxes::new(layout, 2, users, knobs);
        let store = Store::new(2, 8192, cache_pages, 1 << 20);
        let pace = Pace {
            dispatch_ns,
            stress: false,
            interval_ns: 100 * MS,
        };
        Population::new(
            dispatcher,
            mailboxes,
            store,
            pace,
            7,
            Arc::new(Live::default()),
        )
    }

    /// Drives `p` on a simulated clock (I/Os of `io_ns`, `depth` in flight); every request
    /// issued, in order.
    pub(crate) fn simulate(
        p: &mut Population,
        io_ns: u64,
        depth: usize,
        until_ns: u64,
    ) -> Vec<Request> {
        let mut issued = Vec::new();
        crate::workloads::users::calibration::drive(p, io_ns, depth, until_ns, |_, r| {
            issued.push(*r)
        });
        issued
    }

    #[test]
    fn tasks_without_storage_latency_take_no_time() {
        let mut p = population(200, 360.0, 5_000 * MS, 2000);
        simulate(&mut p, 0, 64, 60_000 * MS);
        let (dispatched, unfinished) = p.dispatched_unfinished();
        assert!(dispatched > 100, "{dispatched}");
        assert_eq!(unfinished, 0);
        for (task, t) in Task::ALL.iter().zip(p.tallies()) {
            assert_eq!(t.completed, t.dispatched, "{task:?}");
            assert_eq!(t.service.max(), 0, "{task:?}: {:?}", t.service.summary());
            assert_eq!(t.latency.max(), 0, "{task:?}: {:?}", t.latency.summary());
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_tasks_and_ios() {
        let run = || {
            let mut p = population(100, 720.0, 3_000 * MS, 500);
            let ios = simulate(&mut p, 300_000, 16, 60_000 * MS);
            let counts: Vec<u64> = p.tallies().iter().map(|t| t.completed).collect();
            (ios, counts)
        };
        let (a, b) = (run(), run());
        assert!(a.0.len() > 1000, "{} I/Os", a.0.len());
        assert_eq!(a, b);
    }

    #[test]
    fn group_commit_writes_the_log_less_often_than_durable_commits() {
        let mut p = population(400, 2000.0, 3_000 * MS, 5000);
        let ios = simulate(&mut p, 2 * MS, 64, 60_000 * MS);
        let log_writes = ios.iter().filter(|r| r.op.class % 3 == 2).count() as u64;
        let c = p.store_counts();
        assert!(c.durable_commits > 500, "{c:?}");
        assert!(
            log_writes < c.durable_commits,
            "{log_writes} log writes for {c:?}"
        );
        for r in ios.iter().filter(|r| r.op.class % 3 == 2) {
            assert_eq!(r.op.len % 4096, 0);
            assert_eq!(r.op.offset % 4096, 0);
            assert!(r.op.dsync, "log writes are write-through");
        }
    }

    #[test]
    fn a_bigger_cache_reads_less() {
        let reads = |cache_pages| {
            let mut p = population(100, 720.0, 5_000 * MS, cache_pages);
            let ios = simulate(&mut p, 100_000, 16, 60_000 * MS);
            ios.iter().filter(|r| r.op.class % 3 == 0).count()
        };
        let (small, large) = (reads(200), reads(20_000));
        assert!(
            large * 2 < small,
            "{small} reads with 200 pages, {large} with 20,000"
        );
    }

    #[test]
    fn a_run_of_many_intervals_keeps_a_bounded_series_that_adds_up_to_what_it_issued() {
        let mut p = population(100, 720.0, 30_000 * MS, 500);
        // Intervals of 1 ms over a minute: 60,000 of them.
        p.pace.interval_ns = MS;
        p.gathering.end_ns = MS;
        let ios = simulate(&mut p, 300_000, 16, 60_000 * MS);
        let end_ns = 61_000 * MS;
        let series = p.finish_series(end_ns);
        let n = series.len();
        assert!(
            (SERIES_POINTS / 2..=SERIES_POINTS).contains(&n),
            "{n} points"
        );
        assert_eq!(series.last().map(|s| s.t_s), Some(end_ns as f64 / 1e9));
        // Each point's rates over its time add up to the I/Os issued, by kind.
        let mut start = 0.0;
        let mut done = [0.0f64; 3];
        for s in &series {
            assert!(s.t_s > start, "{start} then {s:?}");
            let secs = s.t_s - start;
            done[0] += s.db_reads_per_s * secs;
            done[1] += s.db_writes_per_s * secs;
            done[2] += s.log_writes_per_s * secs;
            start = s.t_s;
        }
        for (kind, got) in done.iter().enumerate() {
            let issued = ios
                .iter()
                .filter(|r| usize::from(r.op.class % 3) == kind)
                .count();
            assert!(issued > 100, "kind {kind}: {issued}");
            let err = (got - issued as f64).abs() / issued as f64;
            assert!(err < 1e-9, "kind {kind}: {got} against {issued} issued");
        }
    }

    #[test]
    fn merged_intervals_weigh_rates_by_time_hits_by_references_and_keep_the_peaks() {
        let interval = |t_s, rate, unfinished, hit_pct, p95| UsersInterval {
            t_s,
            tasks_per_s: rate,
            unfinished,
            cache_hit_pct: hit_pct,
            log_waits: unfinished,
            checkpoint_depth_bytes: 10 * unfinished,
            db_reads_per_s: rate,
            db_writes_per_s: 2.0 * rate,
            log_writes_per_s: 3.0 * rate,
            cpu_pct: rate,
            send_mail_p95_ns: p95,
        };
        let mut a = UsersPoint {
            interval: interval(1.0, 10.0, 7, 50.0, 100),
            secs: 1.0,
            refs: 300,
        };
        let b = UsersPoint {
            interval: interval(4.0, 30.0, 3, 90.0, 80),
            secs: 3.0,
            refs: 100,
        };
        assert!(a.continues(&b) && !b.continues(&a));
        a.absorb(&b);
        let want = UsersPoint {
            interval: UsersInterval {
                cache_hit_pct: 60.0,
                unfinished: 7,
                log_waits: 7,
                checkpoint_depth_bytes: 70,
                ..interval(4.0, 25.0, 0, 0.0, 80)
            },
            secs: 4.0,
            refs: 400,
        };
        assert_eq!(a, want);
    }

    #[test]
    fn storage_that_cannot_keep_up_overloads_the_run() {
        let mut p = population(50, 720.0, 60_000 * MS, 500);
        // One I/O at a time, each taking a second: tasks pile up.
        simulate(&mut p, 1000 * MS, 1, 600_000 * MS);
        let o = p.overloaded().expect("overloaded").clone();
        assert_eq!(o.limit, 75);
        assert!(o.unfinished > 75);
        // Every unfinished task, running or queued behind its user's, has its age.
        let now = o.at_s as u64 * 1_000_000_000;
        let ages = p.unfinished_ages(now);
        assert_eq!(ages.len() as u64, p.dispatched_unfinished().1);
        assert!(ages.iter().filter(|a| a.1 > 0).count() > 70, "{ages:?}");
        assert_eq!(p.next(o.at_s as u64 * 1_000_000_000 + 1), Next::Done);
    }
}
