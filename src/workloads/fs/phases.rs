//! The order in which the format, the removal of a tree and mdtest's phases act on the tree:
//! the format makes every missing directory (each once its parent exists, threads taking
//! them in turn) and then every file missing or cut short; the removal deletes every file,
//! then every directory deepest first (each once it is empty); an mdtest phase acts on each
//! of its thread's files once, whatever this rank knows of them.

use super::op::FsOp;
use super::source::{FileOps, Plan, Seq, Stage};
use std::sync::atomic::Ordering;

impl FileOps<'_> {
    /// The format's next operation: a missing directory whose parent exists, then a file
    /// missing or cut short; `Err(wait)` when a directory needed is still being made.
    pub(super) fn start_format(&mut self) -> Result<Option<Seq>, ()> {
        let run = self.run;
        let state = run.state();
        let shape = &state.shape;
        if !self.files_phase {
            loop {
                let d = run.cursors[0].load(Ordering::Acquire) + 1;
                if d >= state.dirs() {
                    self.files_phase = true;
                    break;
                }
                if state.dir_exists(d) {
                    let _ = run.cursors[0].compare_exchange(
                        d - 1,
                        d,
                        Ordering::AcqRel,
                        Ordering::Relaxed,
                    );
                    continue;
                }
                if !state.dir_exists(shape.parent(d)) {
                    return Err(());
                }
                if run.cursors[0]
                    .compare_exchange(d - 1, d, Ordering::AcqRel, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
                if state.claim_missing_dir(d) {
                    return Ok(Some(Seq {
                        op: FsOp::Mkdir,
                        file: d,
                        to: 0,
                        was: None,
                        end: 0,
                        pos: 0,
                        count: 0,
                        written: 0,
                        stage: Stage::Start,
                        ok: true,
                        made: false,
                    }));
                }
            }
        }
        loop {
            let f = run.cursors[1].load(Ordering::Acquire);
            if f >= state.files() {
                return Ok(None);
            }
            let size = shape.file_size(f);
            let dir = shape.file_place(f).0;
            let now = state.file(f);
            if now.is_none() && !state.dir_exists(dir) {
                // Its directory is being made by another thread.
                return Err(());
            }
            if run.cursors[1]
                .compare_exchange(f, f + 1, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            let (op, was) = match now {
                Some(s) if s >= size => continue,
                Some(s) if state.claim_existing(f, false).is_some() => (FsOp::Write, Some(s)),
                None if state.claim_missing(f) => (FsOp::Create, None),
                _ => continue,
            };
            return Ok(Some(Seq {
                op,
                file: f,
                to: 0,
                was,
                end: size,
                pos: was.unwrap_or(0),
                count: 0,
                written: was.unwrap_or(0),
                stage: Stage::Start,
                ok: true,
                made: false,
            }));
        }
    }

    /// The removal's next operation: a file that exists, then an empty directory, deepest
    /// first; `Err(wait)` when a directory's entries are still being removed.
    pub(super) fn start_clean(&mut self) -> Result<Option<Seq>, ()> {
        let run = self.run;
        let state = run.state();
        let one = |op, file, was| Seq {
            op,
            file,
            to: 0,
            was,
            end: 0,
            pos: 0,
            count: 0,
            written: 0,
            stage: Stage::Start,
            ok: true,
            made: false,
        };
        loop {
            let f = run.cursors[1].fetch_add(1, Ordering::AcqRel);
            if f >= state.files() {
                run.cursors[1].store(state.files(), Ordering::Release);
                break;
            }
            if let Some(c) = state.claim_existing(f, false) {
                return Ok(Some(one(FsOp::Delete, f, Some(c.size))));
            }
        }
        loop {
            let k = run.cursors[0].load(Ordering::Acquire);
            if k + 1 >= state.dirs() {
                return Ok(None);
            }
            let d = state.dirs() - 1 - k;
            if state.dir_exists(d) && state.dir_entries(d) > 0 {
                // Another thread is still removing what it holds.
                return Err(());
            }
            if run.cursors[0]
                .compare_exchange(k, k + 1, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            if state.claim_empty_dir(d) {
                return Ok(Some(one(FsOp::Rmdir, d, Some(0))));
            }
        }
    }

    /// mdtest's next file of the range: each once, whatever this rank's state says of it
    /// (another rank made it, or removes it), as mdtest does: an operation that finds no file
    /// fails and is counted so.
    pub(super) fn start_range(&mut self) -> Option<Option<Seq>> {
        let Plan::Range {
            op,
            next,
            end,
            read_bytes,
        } = &mut self.plan
        else {
            return None;
        };
        let state = self.run.state();
        if *next >= *end {
            return Some(None);
        }
        let x = *next;
        *next += 1;
        let (was, size) = match *op {
            FsOp::Create => (None, state.shape.file_size(x)),
            FsOp::Mkdir => (None, 0),
            FsOp::Rmdir => (Some(0), 0),
            // mdtest reads what it wrote, at most its read size.
            FsOp::Read => (Some(*read_bytes), *read_bytes),
            _ => (Some(state.file(x).unwrap_or(0)), 0),
        };
        Some(Some(Seq {
            op: *op,
            file: x,
            to: 0,
            was,
            end: size,
            pos: 0,
            count: 0,
            written: 0,
            stage: Stage::Start,
            ok: true,
            made: false,
        }))
    }
}
