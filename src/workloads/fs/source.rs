//! File-system operations as a request source: what a thread of a workload does next, one
//! operation at a time, each a request the worker loop times. A thread picks an operation of
//! its mix (by weight), claims a file or directory it may act on (see [`super::state`]), and
//! issues the operation's steps: a read or write opens the file, moves its transfers (from
//! its start to its end, or as many as it holds at random offsets) and closes it; a create
//! makes the file, writes it whole and closes it; the others are one step. In open loop every
//! step waits for its intended time and its latency counts from then. A step that fails ends
//! its operation (a file left open is closed), and the tree's state follows what the file
//! system did.
//!
//! The same machine makes the tree (the format: directories first, each after its parent,
//! then every file missing or cut short) and runs mdtest's phases (each thread its own range
//! of files, each once).

use super::backend::Backends;
use super::config::{FileIo, Rank, Select, WorkloadConfig};
use super::op::FsOp;
use crate::engine::pacing::Pacer;
use crate::engine::source::{Next, Request, RequestSource};
use crate::engine::{IoOp, OpKind};
use crate::job::Rate;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU64, Ordering};

/// Random picks of a file before a thread looks through the files in order.
const RANDOM_TRIES: u32 = 32;
/// Files a thread looks through in order for one it may act on.
const SCAN_TRIES: u64 = 1024;
/// How long a thread that found nothing to act on waits before it looks again, ns.
const IDLE_NS: u64 = 1_000_000;
/// How long a thread of the format waits for a directory another thread is making, ns.
const PARENT_WAIT_NS: u64 = 20_000;
/// A thread whose operations have found nothing to act on for this long, while nothing in the
/// tree changed, is done (vdbench ends such threads: once every file is deleted, a delete
/// has nothing left to do), ns.
const NOTHING_LEFT_NS: u64 = 1_000_000_000;

/// What the threads of one run share: the backends' part, each workload's cursor (the next
/// file in order), how often an operation found nothing to act on, and this rank's share of
/// a tree shared by ranks.
pub(crate) struct RunState<'t> {
    /// The tree, the classes, the failures.
    pub backends: Backends<'t>,
    /// Per workload (the format: directories, then files).
    pub cursors: Vec<AtomicU64>,
    /// Per class: its operation was chosen and no file or directory could take it.
    pub unavailable: Vec<AtomicU64>,
    /// This rank's files: those whose number modulo `ranks` is `rank`.
    pub slice: Rank,
    /// Per class: bytes its copies moved, those that completed in the measured time (the
    /// worker counts a request's length, and a copy's is 0).
    pub copied: Vec<AtomicU64>,
    /// The measured time: from the end of the ramp to the end of the run, ns.
    pub window: (u64, u64),
    /// Operations that made or removed a file or directory so far.
    pub changes: AtomicU64,
}

impl<'t> RunState<'t> {
    /// For `backends`, with `workloads` cursors, measuring over `window` (ns).
    pub(crate) fn new(
        backends: Backends<'t>,
        workloads: usize,
        slice: Rank,
        window: (u64, u64),
    ) -> RunState<'t> {
        let classes = backends.classes.ops.len();
        RunState {
            backends,
            cursors: (0..workloads.max(2)).map(|_| AtomicU64::new(0)).collect(),
            unavailable: (0..classes).map(|_| AtomicU64::new(0)).collect(),
            slice,
            copied: (0..classes).map(|_| AtomicU64::new(0)).collect(),
            window,
            changes: AtomicU64::new(0),
        }
    }

    pub(super) fn state(&self) -> &super::state::TreeState {
        &self.backends.tree.state
    }
}

/// The class of each operation of one workload (`u16::MAX`: it has none).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ids([u16; FsOp::ALL.len()]);

impl Ids {
    /// Workload `w`'s, from the run's classes.
    pub(crate) fn of(run: &RunState<'_>, w: usize) -> Ids {
        let mut ids = [u16::MAX; FsOp::ALL.len()];
        for op in FsOp::ALL {
            if let Some(c) = run.backends.classes.of(w, op) {
                ids[op.index()] = c;
            }
        }
        Ids(ids)
    }

    fn get(&self, op: FsOp) -> u16 {
        self.0[op.index()]
    }
}

/// Where a step of an operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// Its first step (the open, the create, the one system call).
    Start,
    /// Its transfers.
    Transfer,
    /// Its close.
    Close,
}

/// One operation under way.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seq {
    pub(super) op: FsOp,
    /// The file (the directory, for mkdir and rmdir).
    pub(super) file: u64,
    /// A copy's or rename's new file.
    pub(super) to: u64,
    /// The file's size before.
    pub(super) was: Option<u64>,
    /// Where its transfers end: the file's size, or what mdtest reads of it.
    pub(super) end: u64,
    /// Bytes moved (sequential), or transfers made (random).
    pub(super) pos: u64,
    /// Random: the transfers to make.
    pub(super) count: u64,
    /// The bytes the file has so far (a create's, a format's).
    pub(super) written: u64,
    pub(super) stage: Stage,
    /// Nothing failed.
    pub(super) ok: bool,
    /// A create made its file.
    pub(super) made: bool,
}

/// How a thread chooses what to do.
#[derive(Debug)]
pub(crate) enum Plan<'c> {
    /// A workload's mix.
    Mix {
        /// The workload.
        cfg: &'c WorkloadConfig,
        /// Its index.
        workload: usize,
    },
    /// One operation on each of a range of files (directories, for mkdir and rmdir), in
    /// order: mdtest's phases.
    Range {
        /// The operation.
        op: FsOp,
        /// The next.
        next: u64,
        /// The end.
        end: u64,
        /// Bytes of each read (mdtest's `-e`).
        read_bytes: u64,
    },
    /// The format: every directory missing, then every file missing or cut short.
    Format,
    /// Removing the tree: every file, then every directory, deepest first.
    Clean,
    /// Nothing: a rank other than the first, in a run of a tree the ranks share that only the
    /// first makes or removes.
    Idle,
}

/// A thread's source.
pub(crate) struct FileOps<'s> {
    pub(super) run: &'s RunState<'s>,
    pub(super) ids: Ids,
    pub(super) plan: Plan<'s>,
    pub(super) rng: SmallRng,
    /// Open loop: the schedule and the next intended time.
    pub(super) pacer: Option<(Pacer, u64)>,
    pub(super) seq: Option<Seq>,
    pub(super) busy: bool,
    /// Nothing to do before this (ns).
    pub(super) wait_until: u64,
    /// Transfer sizes: (cumulative weight, bytes).
    pub(super) xfer: Vec<(u64, u64)>,
    /// Reads of a read's or write's transfers, of 2^32 (`None`: the operation's own).
    pub(super) rdpct: Option<u64>,
    pub(super) fileio: FileIo,
    pub(super) select: Select,
    /// Random file I/O: transfers before a file is closed.
    pub(super) stopafter: Option<u64>,
    /// The format is at its files.
    pub(super) files_phase: bool,
    pub(super) done: bool,
    /// Since when its mix has found nothing to act on, and the tree's changes then.
    pub(super) idle_since: Option<(u64, u64)>,
}

impl<'s> FileOps<'s> {
    /// A thread of `plan` with ids `ids`, seeded with `seed`, at `rate` operations a second
    /// (`None`: closed loop).
    pub(crate) fn new(
        run: &'s RunState<'s>,
        ids: Ids,
        plan: Plan<'s>,
        seed: u64,
        rate: Option<Rate>,
        xfer: &[(u64, u32)],
    ) -> FileOps<'s> {
        let mut acc = 0;
        let xfer = xfer
            .iter()
            .map(|&(b, w)| {
                acc += u64::from(w);
                (acc, b.max(1))
            })
            .collect();
        let (rdpct, fileio, select, stopafter) = match &plan {
            Plan::Mix { cfg, .. } => (
                cfg.rdpct.map(|p| (p / 100.0 * f64::from(u32::MAX)) as u64),
                cfg.fileio,
                cfg.select,
                cfg.stopafter,
            ),
            _ => (None, FileIo::Sequential, Select::Sequential, None),
        };
        let pacer = rate.map(|r| {
            let mut p = Pacer::new(r, seed ^ 0x6673_7061);
            let first = p.next_ns();
            (p, first)
        });
        FileOps {
            run,
            ids,
            plan,
            rng: SmallRng::seed_from_u64(seed),
            pacer,
            seq: None,
            busy: false,
            wait_until: 0,
            xfer,
            rdpct,
            fileio,
            select,
            stopafter,
            files_phase: false,
            done: false,
            idle_since: None,
        }
    }

    /// A transfer size.
    fn xfer(&mut self) -> u64 {
        match self.xfer.as_slice() {
            [(_, b)] => *b,
            all => {
                let total = all.last().map_or(1, |x| x.0);
                let r = self.rng.random_range(0..total);
                all.iter().find(|x| r < x.0).map_or(4096, |x| x.1)
            }
        }
    }

    /// Files (or directories) this thread may pick from, as (count of candidates, the
    /// candidate's number).
    fn candidate(&self, k: u64, dirs: bool) -> u64 {
        let Rank { rank, ranks } = self.run.slice;
        if dirs { 1 + k } else { rank + k * ranks }
    }

    fn candidates(&self, dirs: bool) -> u64 {
        let state = self.run.state();
        let Rank { rank, ranks } = self.run.slice;
        if dirs {
            state.dirs() - 1
        } else {
            state.files().saturating_sub(rank).div_ceil(ranks)
        }
    }

    /// Finds and claims what `op` acts on: `claim` tries one number.
    fn pick(&mut self, workload: usize, dirs: bool, claim: &dyn Fn(u64) -> bool) -> Option<u64> {
        let n = self.candidates(dirs);
        if n == 0 {
            return None;
        }
        match self.select {
            Select::Sequential => {
                let cursor = &self.run.cursors[workload];
                for _ in 0..SCAN_TRIES.min(n) {
                    let k = cursor.fetch_add(1, Ordering::Relaxed) % n;
                    let x = self.candidate(k, dirs);
                    if claim(x) {
                        return Some(x);
                    }
                }
                None
            }
            Select::Random => {
                for _ in 0..RANDOM_TRIES {
                    let k = self.rng.random_range(0..n);
                    let x = self.candidate(k, dirs);
                    if claim(x) {
                        return Some(x);
                    }
                }
                let start = self.rng.random_range(0..n);
                (0..SCAN_TRIES.min(n))
                    .map(|i| self.candidate((start + i) % n, dirs))
                    .find(|&x| claim(x))
            }
        }
    }

    /// Starts an operation of the mix, trying each of its operations by weight at most
    /// twice; `None` when none can act.
    fn start_mix(&mut self, cfg: &WorkloadConfig, workload: usize) -> Option<Seq> {
        let total: u64 = cfg.mix.iter().map(|&(_, w)| u64::from(w)).sum();
        for _ in 0..cfg.mix.len() * 2 {
            let mut r = self.rng.random_range(0..total.max(1));
            let op = cfg
                .mix
                .iter()
                .find(|&&(_, w)| {
                    if r < u64::from(w) {
                        true
                    } else {
                        r -= u64::from(w);
                        false
                    }
                })
                .map_or(cfg.mix[0].0, |&(op, _)| op);
            if let Some(seq) = self.claim(op, workload) {
                return Some(seq);
            }
            let class = self.ids.get(op);
            if let Some(u) = self.run.unavailable.get(class as usize) {
                u.fetch_add(1, Ordering::Relaxed);
            }
        }
        None
    }

    /// Claims what `op` acts on and makes its operation.
    fn claim(&mut self, op: FsOp, workload: usize) -> Option<Seq> {
        // A close alone is an open and its close.
        let op = if op == FsOp::Close { FsOp::Open } else { op };
        let run = self.run;
        let state = run.state();
        let shared = matches!(self.fileio, FileIo::Random { shared: true })
            && matches!(op, FsOp::Read | FsOp::Write);
        let shape = &state.shape;
        let existing = |f: u64| state.claim_existing(f, shared).is_some();
        let seq = |op, file, to, was: Option<u64>, end| Seq {
            op,
            file,
            to,
            was,
            end,
            pos: 0,
            count: 0,
            written: was.unwrap_or(0),
            stage: Stage::Start,
            ok: true,
            made: false,
        };
        match op {
            FsOp::Create => {
                let f = self.pick(workload, false, &|f| state.claim_missing(f))?;
                Some(seq(op, f, 0, None, shape.file_size(f)))
            }
            FsOp::Mkdir => {
                let d = self.pick(workload, true, &|d| state.claim_missing_dir(d))?;
                Some(seq(op, d, 0, None, 0))
            }
            FsOp::Rmdir => {
                let d = self.pick(workload, true, &|d| state.claim_empty_dir(d))?;
                Some(seq(op, d, 0, Some(0), 0))
            }
            FsOp::Copy | FsOp::Rename => {
                let f = self.pick(workload, false, &existing)?;
                let size = state.file(f).unwrap_or(0);
                match self.pick(workload, false, &|g| state.claim_missing(g)) {
                    Some(g) => Some(seq(op, f, g, Some(size), size)),
                    None => {
                        state.release(f, Some(size));
                        None
                    }
                }
            }
            _ => {
                let f = self.pick(workload, false, &existing)?;
                let size = state.file(f).unwrap_or(0);
                let mut s = seq(op, f, 0, Some(size), size);
                if let FileIo::Random { .. } = self.fileio {
                    // vdbench's stopafter: by default, the file's size in transfers.
                    let x = self.xfer.iter().map(|x| x.1).max().unwrap_or(4096);
                    s.count = self.stopafter.unwrap_or_else(|| size.div_ceil(x));
                    if size == 0 {
                        s.count = 0;
                    }
                }
                Some(s)
            }
        }
    }

    /// The step `seq` is at, as a request's operation.
    fn step(&mut self, seq: &mut Seq) -> IoOp {
        let io = |ids: &Ids, op: FsOp, target: u64, offset: u64, len: u32| IoOp {
            kind: if op.modifies() {
                OpKind::Write
            } else {
                OpKind::Read
            },
            target: target as u32,
            offset,
            len,
            dsync: false,
            atomic: false,
            class: ids.get(op),
        };
        let ids = self.ids;
        match (seq.op, seq.stage) {
            (FsOp::Read | FsOp::Write | FsOp::Open, Stage::Start) => {
                io(&ids, FsOp::Open, seq.file, 0, 0)
            }
            (_, Stage::Close) => io(&ids, FsOp::Close, seq.file, 0, 0),
            (FsOp::Read | FsOp::Write | FsOp::Create, Stage::Transfer) => {
                let x = self.xfer();
                let (offset, len) = match self.fileio {
                    FileIo::Random { .. } if seq.op != FsOp::Create => {
                        let blocks = seq.end.div_ceil(x).max(1);
                        let off = self.rng.random_range(0..blocks) * x;
                        (off, x.min(seq.end - off))
                    }
                    _ => (seq.pos, x.min(seq.end - seq.pos)),
                };
                let read = match (seq.op, self.rdpct) {
                    (FsOp::Create, _) => false,
                    (_, Some(t)) => self.rng.random_range(0..u64::from(u32::MAX)) < t,
                    (op, None) => op == FsOp::Read,
                };
                let op = if read { FsOp::Read } else { FsOp::Write };
                io(&ids, op, seq.file, offset, len as u32)
            }
            (op @ (FsOp::Copy | FsOp::Rename), _) => io(&ids, op, seq.file, seq.to, 0),
            (op, _) => io(&ids, op, seq.file, 0, 0),
        }
    }

    /// Whether `seq` has transfers left.
    fn transfers_left(&self, seq: &Seq) -> bool {
        match (self.fileio, seq.op) {
            (FileIo::Random { .. }, FsOp::Read | FsOp::Write) => seq.pos < seq.count,
            _ => seq.pos < seq.end,
        }
    }

    /// Whether this thread's mix has found nothing to act on for [`NOTHING_LEFT_NS`] while
    /// nothing in the tree changed (it then has nothing left to do).
    fn nothing_left(&mut self, now_ns: u64) -> bool {
        let changes = self.run.changes.load(Ordering::Relaxed);
        match self.idle_since {
            Some((seen, since)) if seen == changes => {
                now_ns.saturating_sub(since) >= NOTHING_LEFT_NS
            }
            _ => {
                self.idle_since = Some((changes, now_ns));
                false
            }
        }
    }

    /// An operation ended: the tree's state follows what happened.
    fn finish(&self, seq: &Seq) {
        let state = self.run.state();
        let ok = seq.ok;
        let changes = matches!(
            seq.op,
            FsOp::Create | FsOp::Delete | FsOp::Mkdir | FsOp::Rmdir | FsOp::Copy | FsOp::Rename
        );
        if ok && changes {
            self.run.changes.fetch_add(1, Ordering::Relaxed);
        }
        if let Plan::Range { .. } = self.plan {
            // Nothing was claimed: what the file system did is set.
            match seq.op {
                FsOp::Create => state.set_file(seq.file, seq.made.then_some(seq.written)),
                FsOp::Delete if ok => state.set_file(seq.file, None),
                FsOp::Mkdir if ok => state.set_dir(seq.file, true),
                FsOp::Rmdir if ok => state.set_dir(seq.file, false),
                _ => {}
            }
            return;
        }
        match seq.op {
            FsOp::Create => state.release(seq.file, seq.made.then_some(seq.written)),
            FsOp::Write if seq.was.is_some() => {
                state.release(seq.file, Some(seq.written.max(seq.was.unwrap_or(0))))
            }
            FsOp::Delete => state.release(seq.file, if ok { None } else { seq.was }),
            FsOp::Mkdir => state.release_dir(seq.file, ok),
            FsOp::Rmdir => state.release_dir(seq.file, !ok),
            FsOp::Copy => {
                state.release(seq.file, seq.was);
                state.release(seq.to, ok.then_some(seq.end));
            }
            FsOp::Rename => {
                state.release(seq.file, if ok { None } else { seq.was });
                state.release(seq.to, ok.then_some(seq.end));
            }
            _ => {
                let shared = matches!(self.fileio, FileIo::Random { shared: true })
                    && matches!(seq.op, FsOp::Read | FsOp::Write);
                if !shared {
                    state.release(seq.file, seq.was);
                }
            }
        }
    }
}

impl RequestSource for FileOps<'_> {
    fn next(&mut self, now_ns: u64) -> Next {
        if self.busy {
            return Next::AwaitCompletion;
        }
        if self.done {
            return Next::Done;
        }
        if now_ns < self.wait_until {
            return Next::At(self.wait_until);
        }
        let intended = match &self.pacer {
            Some((_, due)) if *due > now_ns => return Next::At(*due),
            Some((_, due)) => Some(*due),
            None => None,
        };
        let mut seq = match self.seq.take() {
            Some(s) => s,
            None => {
                let started = match &self.plan {
                    Plan::Mix { cfg, workload } => {
                        let (cfg, workload) = (*cfg, *workload);
                        self.start_mix(cfg, workload).ok_or(IDLE_NS)
                    }
                    Plan::Clean => match self.start_clean() {
                        Ok(Some(s)) => Ok(s),
                        Ok(None) => {
                            self.done = true;
                            return Next::Done;
                        }
                        Err(()) => Err(PARENT_WAIT_NS),
                    },
                    Plan::Format => match self.start_format() {
                        Ok(Some(s)) => Ok(s),
                        Ok(None) => {
                            self.done = true;
                            return Next::Done;
                        }
                        Err(()) => Err(PARENT_WAIT_NS),
                    },
                    Plan::Idle => {
                        self.done = true;
                        return Next::Done;
                    }
                    Plan::Range { .. } => match self.start_range() {
                        Some(Some(s)) => Ok(s),
                        _ => {
                            self.done = true;
                            return Next::Done;
                        }
                    },
                };
                match started {
                    Ok(s) => {
                        self.idle_since = None;
                        s
                    }
                    Err(wait)
                        if matches!(self.plan, Plan::Mix { .. }) && self.nothing_left(now_ns) =>
                    {
                        let _ = wait;
                        self.done = true;
                        return Next::Done;
                    }
                    Err(wait) => {
                        // Nothing to act on now; an open loop's due operation is dropped
                        // (counted as unavailable), a closed loop looks again soon.
                        if let Some((p, due)) = &mut self.pacer {
                            *due = p.next_ns();
                        }
                        self.wait_until = now_ns + wait;
                        return Next::At(self.wait_until);
                    }
                }
            }
        };
        let op = self.step(&mut seq);
        self.seq = Some(seq);
        self.busy = true;
        if let Some((p, due)) = &mut self.pacer {
            *due = p.next_ns();
        }
        Next::Issue(Request {
            op,
            intended_ns: intended,
            tag: 0,
            home: None,
        })
    }

    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        self.busy = false;
        let Some(mut seq) = self.seq.take() else {
            return;
        };
        let op = request.op;
        let ok = result >= 0 && (op.len == 0 || result as u32 == op.len);
        let (from, to) = self.run.window;
        if ok && seq.op == FsOp::Copy && (from..=to).contains(&now_ns) {
            if let Some(c) = self.run.copied.get(op.class as usize) {
                c.fetch_add(seq.end, Ordering::Relaxed);
            }
        }
        let class = self.run.backends.classes.ops[op.class as usize].op;
        match seq.stage {
            Stage::Start => match seq.op {
                FsOp::Read | FsOp::Write | FsOp::Open | FsOp::Create if ok => {
                    seq.made = seq.op == FsOp::Create;
                    seq.stage = if seq.op == FsOp::Open || !self.transfers_left(&seq) {
                        Stage::Close
                    } else {
                        Stage::Transfer
                    };
                }
                _ => {
                    seq.ok = ok;
                    self.finish(&seq);
                    return;
                }
            },
            Stage::Transfer => {
                if ok {
                    match (self.fileio, seq.op) {
                        (FileIo::Random { .. }, FsOp::Read | FsOp::Write) => seq.pos += 1,
                        _ => seq.pos += u64::from(op.len),
                    }
                    if class == FsOp::Write && seq.op != FsOp::Read {
                        seq.written = seq.written.max(op.offset + u64::from(op.len));
                    }
                    if !self.transfers_left(&seq) {
                        seq.stage = Stage::Close;
                    }
                } else {
                    seq.ok = false;
                    seq.stage = Stage::Close;
                }
            }
            Stage::Close => {
                seq.ok &= ok;
                self.finish(&seq);
                return;
            }
        }
        self.seq = Some(seq);
    }

    fn unissued(&self, until_ns: u64) -> u64 {
        match &self.pacer {
            Some((p, due)) if *due < until_ns => p.expected_between(*due, until_ns),
            _ => 0,
        }
    }
}

impl Drop for FileOps<'_> {
    /// An operation the run's end cut short still leaves the tree's state as the file system
    /// has it: its file was made (and written so far), or not.
    fn drop(&mut self) {
        if let Some(mut seq) = self.seq.take() {
            if seq.stage == Stage::Start {
                // Its first step never completed: as it was.
                seq.ok = false;
                seq.written = seq.was.unwrap_or(0);
            }
            self.finish(&seq);
        }
    }
}
