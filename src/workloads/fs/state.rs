//! What the tree holds while it runs: for every file whether it exists, its size, and
//! whether a thread is using it; for every directory whether it exists, how many entries it
//! holds and whether a thread is removing it. One word of atomics each, shared by every
//! thread: a thread claims a file before it acts on it (vdbench uses a file from one thread
//! at a time unless told `shared`), and the claim says what it may do: read an existing file,
//! create a missing one in a directory that exists (which then cannot be removed under it),
//! remove an empty directory.

use super::tree::Shape;
use std::sync::atomic::{AtomicU64, Ordering};

const EXISTS: u64 = 1 << 63;
const BUSY: u64 = 1 << 62;
/// A file's size, or a directory's entries.
const LOW: u64 = (1 << 62) - 1;

/// The state of every file and directory of a tree.
pub(crate) struct TreeState {
    /// The shape it is the state of.
    pub shape: Shape,
    files: Box<[AtomicU64]>,
    dirs: Box<[AtomicU64]>,
}

/// What a file's claim found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Claimed {
    /// Its size, bytes (0 for a missing file).
    pub size: u64,
}

impl TreeState {
    /// A tree of `shape` with nothing in it but the anchor.
    pub(crate) fn new(shape: Shape) -> TreeState {
        let files = (0..shape.file_count()).map(|_| AtomicU64::new(0)).collect();
        let dirs: Box<[AtomicU64]> = (0..shape.dirs()).map(|_| AtomicU64::new(0)).collect();
        dirs[0].store(EXISTS, Ordering::Relaxed);
        TreeState { shape, files, dirs }
    }

    /// Files.
    pub(crate) fn files(&self) -> u64 {
        self.files.len() as u64
    }

    /// Directories, the anchor included.
    pub(crate) fn dirs(&self) -> u64 {
        self.dirs.len() as u64
    }

    /// Whether file `f` exists, and its size.
    pub(crate) fn file(&self, f: u64) -> Option<u64> {
        let s = self.files[f as usize].load(Ordering::Acquire);
        (s & EXISTS != 0).then_some(s & LOW)
    }

    /// Whether directory `d` exists.
    pub(crate) fn dir_exists(&self, d: u64) -> bool {
        self.dirs[d as usize].load(Ordering::Acquire) & EXISTS != 0
    }

    /// Entries of directory `d` that exist.
    pub(crate) fn dir_entries(&self, d: u64) -> u64 {
        self.dirs[d as usize].load(Ordering::Acquire) & LOW
    }

    /// Sets what a scan found or a format made (no thread runs): file `f` exists with `size`
    /// bytes, or not. Directories' entries are counted again by [`TreeState::recount`].
    pub(crate) fn set_file(&self, f: u64, size: Option<u64>) {
        let v = size.map_or(0, |s| EXISTS | s.min(LOW));
        self.files[f as usize].store(v, Ordering::Release);
    }

    /// Sets whether directory `d` exists (no thread runs).
    pub(crate) fn set_dir(&self, d: u64, exists: bool) {
        let v = if exists || d == 0 { EXISTS } else { 0 };
        self.dirs[d as usize].store(v, Ordering::Release);
    }

    /// Forgets what exists: nothing but the anchor (no thread runs).
    pub(crate) fn clear(&self) {
        for f in self.files.iter() {
            f.store(0, Ordering::Release);
        }
        for (d, w) in self.dirs.iter().enumerate() {
            w.store(if d == 0 { EXISTS } else { 0 }, Ordering::Release);
        }
    }

    /// Counts every directory's entries again from what exists (no thread runs).
    pub(crate) fn recount(&self) {
        let mut counts = vec![0u64; self.dirs.len()];
        for d in 1..self.dirs() {
            if self.dir_exists(d) {
                counts[self.shape.parent(d) as usize] += 1;
            }
        }
        for f in 0..self.files() {
            if self.file(f).is_some() {
                counts[self.shape.file_place(f).0 as usize] += 1;
            }
        }
        for (d, n) in counts.into_iter().enumerate() {
            let flags = self.dirs[d].load(Ordering::Relaxed) & EXISTS;
            self.dirs[d].store(flags | n, Ordering::Release);
        }
    }

    /// Claims existing file `f` (not in use); `shared`: without excluding others.
    pub(crate) fn claim_existing(&self, f: u64, shared: bool) -> Option<Claimed> {
        let word = &self.files[f as usize];
        let s = word.load(Ordering::Acquire);
        if s & EXISTS == 0 || (s & BUSY != 0 && !shared) {
            return None;
        }
        if shared {
            return Some(Claimed { size: s & LOW });
        }
        word.compare_exchange(s, s | BUSY, Ordering::AcqRel, Ordering::Relaxed)
            .ok()
            .map(|_| Claimed { size: s & LOW })
    }

    /// Claims missing file `f` to create it: its directory must exist and not be in use;
    /// it then counts the file as one of its entries until [`TreeState::release`] says
    /// otherwise.
    pub(crate) fn claim_missing(&self, f: u64) -> bool {
        let word = &self.files[f as usize];
        let s = word.load(Ordering::Acquire);
        if s & (EXISTS | BUSY) != 0
            || word
                .compare_exchange(s, BUSY, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        let dir = self.shape.file_place(f).0;
        if self.enter(dir) {
            true
        } else {
            word.store(0, Ordering::Release);
            false
        }
    }

    /// Counts one more entry in directory `d`, if it exists and is not being removed.
    fn enter(&self, d: u64) -> bool {
        let dw = &self.dirs[d as usize];
        let mut s = dw.load(Ordering::Acquire);
        loop {
            if s & EXISTS == 0 || s & BUSY != 0 {
                return false;
            }
            match dw.compare_exchange_weak(s, s + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// One entry fewer in directory `d`.
    fn leave(&self, d: u64) {
        let dw = &self.dirs[d as usize];
        let _ = dw.fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| {
            Some(if s & LOW > 0 { s - 1 } else { s })
        });
    }

    /// A claimed file's use ended: it exists with `size` bytes (`None`: it does not), and its
    /// directory counts it or not (a missing file's claim counted it already).
    pub(crate) fn release(&self, f: u64, size: Option<u64>) {
        let v = size.map_or(0, |s| EXISTS | s.min(LOW));
        self.files[f as usize].store(v, Ordering::Release);
        if size.is_none() {
            self.leave(self.shape.file_place(f).0);
        }
    }

    /// Claims missing directory `d` to make it: its parent must exist and not be in use.
    pub(crate) fn claim_missing_dir(&self, d: u64) -> bool {
        if d == 0 {
            return false;
        }
        let word = &self.dirs[d as usize];
        let s = word.load(Ordering::Acquire);
        if s & (EXISTS | BUSY) != 0
            || word
                .compare_exchange(s, BUSY, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        if self.enter(self.shape.parent(d)) {
            true
        } else {
            word.store(0, Ordering::Release);
            false
        }
    }

    /// Claims empty directory `d` to remove it.
    pub(crate) fn claim_empty_dir(&self, d: u64) -> bool {
        if d == 0 {
            return false;
        }
        let word = &self.dirs[d as usize];
        word.compare_exchange(EXISTS, EXISTS | BUSY, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    /// A claimed directory's operation ended: it exists (empty) or not (and its parent counts
    /// it or not).
    pub(crate) fn release_dir(&self, d: u64, exists: bool) {
        self.dirs[d as usize].store(if exists { EXISTS } else { 0 }, Ordering::Release);
        if !exists {
            self.leave(self.shape.parent(d));
        }
    }

    /// What exists: (files, directories under the anchor, bytes of the files).
    pub(crate) fn totals(&self) -> (u64, u64, u64) {
        let (mut files, mut bytes) = (0, 0u64);
        for f in 0..self.files() {
            if let Some(s) = self.file(f) {
                files += 1;
                bytes = bytes.saturating_add(s);
            }
        }
        let dirs = (1..self.dirs()).filter(|&d| self.dir_exists(d)).count() as u64;
        (files, dirs, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::fs::tree::Spread;

    fn state() -> TreeState {
        TreeState::new(Shape {
            depth: 1,
            width: 2,
            files: 2,
            sizes: vec![(100, 1)],
            spread: Spread::Bottom,
            seed: 1,
        })
    }

    #[test]
    fn a_file_is_created_only_in_a_directory_that_exists_and_keeps_it() {
        let s = state();
        assert!(!s.claim_missing(0), "its directory does not exist");
        assert!(s.claim_missing_dir(1));
        s.release_dir(1, true);
        assert_eq!(s.dir_entries(0), 1);
        assert!(s.claim_missing(0));
        assert!(!s.claim_missing(0), "claimed already");
        assert!(!s.claim_empty_dir(1), "a file is being made in it");
        s.release(0, Some(100));
        assert_eq!(s.file(0), Some(100));
        assert_eq!(s.dir_entries(1), 1);
        assert_eq!(s.claim_existing(0, false), Some(Claimed { size: 100 }));
        assert_eq!(s.claim_existing(0, false), None);
        assert_eq!(s.claim_existing(0, true), Some(Claimed { size: 100 }));
        s.release(0, None);
        assert_eq!((s.file(0), s.dir_entries(1)), (None, 0));
        assert!(s.claim_empty_dir(1));
        s.release_dir(1, false);
        assert_eq!((s.dir_exists(1), s.dir_entries(0)), (false, 0));
        assert_eq!(s.totals(), (0, 0, 0));
    }

    #[test]
    fn a_failed_create_leaves_its_directory_as_it_was() {
        let s = state();
        s.set_dir(2, true);
        s.recount();
        assert!(s.claim_missing(2));
        assert_eq!(s.dir_entries(2), 1);
        s.release(2, None);
        assert_eq!(s.dir_entries(2), 0);
        s.set_file(3, Some(7));
        s.recount();
        assert_eq!((s.dir_entries(2), s.dir_entries(0)), (1, 1));
        assert_eq!(s.totals(), (1, 1, 7));
    }
}
