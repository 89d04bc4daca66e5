//! The file-system operations as a backend of the worker loop: each a system call of its own
//! (or, for a copy, the reads and writes it takes), made when the worker submits it, so that
//! the worker's clock times exactly the call (the directory's descriptor is looked up when the
//! operation is queued, before the clock starts). Every name is opened, made or removed
//! through its directory's descriptor, with `O_NOFOLLOW` where a name is opened.
//!
//! An operation is an [`IoOp`] whose class says which operation of which workload it is
//! ([`Classes`]); its `target` is the file's number (a directory's, for `mkdir` and `rmdir`);
//! its `offset` the byte offset of a read or write, or the number of a copy's or rename's new
//! file; its `len` the bytes of a read or write (0 otherwise). A read or write goes to the
//! file the worker has open (its open or create before).
//!
//! Measured against io_uring's own operations (docs/methodology.md, "File-system
//! operations"): at one operation in flight, as vdbench's threads, mdtest's ranks and fio's
//! file engines issue them, io_uring's `statx` and `unlinkat` were slower than the system
//! calls, and each of its operations cost about twice the CPU, since it hands them to kernel
//! worker threads.

use super::anchor::{FILE_MODE, Tree};
use super::config::OpenFlags;
use super::op::{FsOp, OpenMode};
use super::tree::NameBuf;
use crate::engine::IoOp;
use crate::engine::buf::{Slot, SlotArena};
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

/// How many failed operations are kept in detail.
pub(crate) const ERROR_DETAILS: usize = 16;

/// What each class of a job is: which operation of which workload.
#[derive(Debug, Clone, Default)]
pub(crate) struct Classes {
    /// Indexed by class id.
    pub ops: Vec<ClassOp>,
}

/// One class: an operation of a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClassOp {
    /// The workload's index.
    pub workload: usize,
    /// The operation.
    pub op: FsOp,
    /// How its files are opened (an open's).
    pub mode: OpenMode,
}

impl Classes {
    /// The class of `op` of workload `w`.
    pub(crate) fn of(&self, w: usize, op: FsOp) -> Option<u16> {
        self.ops
            .iter()
            .position(|c| c.workload == w && c.op == op)
            .map(|i| i as u16)
    }
}

/// A failed operation, as the results name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// Its class.
    pub class: u16,
    /// The file or directory, from the anchor.
    pub path: String,
    /// What failed.
    pub error: String,
}

/// What the backends of a run share with the workload: the tree, the classes, how files
/// are opened and the first failures.
pub(crate) struct Backends<'t> {
    /// The tree.
    pub tree: &'t Tree,
    /// The classes.
    pub classes: Classes,
    /// How files are opened.
    pub open: OpenFlags,
    /// The first failures.
    pub failures: Mutex<Vec<Failure>>,
}

impl<'t> Backends<'t> {
    /// For `tree`, `classes` and `open`.
    pub(crate) fn new(tree: &'t Tree, classes: Classes, open: OpenFlags) -> Backends<'t> {
        Backends {
            tree,
            classes,
            open,
            failures: Mutex::new(Vec::new()),
        }
    }
}

/// One worker's backend.
pub(crate) struct FsBackend<'s, 'a> {
    arena: SlotArena<'a>,
    shared: &'s Backends<'s>,
    queued: Vec<Queued<'a>>,
    done: Vec<(Slot<'a>, i32)>,
    /// The file the worker has open: its number, descriptor, and whether it was written.
    current: Option<(u64, OwnedFd, bool)>,
    calls: u64,
}

/// An operation queued, with its directories' descriptors.
struct Queued<'a> {
    slot: Slot<'a>,
    op: IoOp,
    dir: Option<Arc<OwnedFd>>,
    to: Option<Arc<OwnedFd>>,
}

impl<'s, 'a> FsBackend<'s, 'a> {
    /// A backend over the slots of `arena`.
    pub(crate) fn new(arena: SlotArena<'a>, shared: &'s Backends<'s>) -> Self {
        let slots = arena.slots();
        FsBackend {
            arena,
            shared,
            queued: Vec::with_capacity(slots),
            done: Vec::with_capacity(slots),
            current: None,
            calls: 0,
        }
    }

    fn class(&self, op: &IoOp) -> ClassOp {
        self.shared.classes.ops[op.class as usize]
    }

    /// The directory an operation acts in, and its new name's (copy, rename).
    fn dirs_of(&self, op: &IoOp) -> (Option<Arc<OwnedFd>>, Option<Arc<OwnedFd>>) {
        let tree = self.shared.tree;
        let shape = &tree.state.shape;
        match self.class(op).op {
            FsOp::Mkdir | FsOp::Rmdir => (tree.dir_fd(shape.parent(op.target.into())), None),
            FsOp::Read | FsOp::Write | FsOp::Close => (None, None),
            FsOp::Copy | FsOp::Rename => (
                tree.dir_fd(shape.file_place(op.target.into()).0),
                tree.dir_fd(shape.file_place(op.offset).0),
            ),
            _ => (tree.dir_fd(shape.file_place(op.target.into()).0), None),
        }
    }

    /// Performs one operation: bytes moved, 0, or −errno.
    fn perform(&mut self, q: &Queued<'a>) -> i32 {
        let ClassOp { op, mode, .. } = self.class(&q.op);
        let io = q.op;
        let f = u64::from(io.target);
        let shape = &self.shared.tree.state.shape;
        let mut name = NameBuf::default();
        let mut other = NameBuf::default();
        let dir = q.dir.as_deref();
        let flags = self.open_flags();
        let result: Result<i32, Errno> = match op {
            FsOp::Read | FsOp::Write => match &mut self.current {
                Some((cur, fd, wrote)) if *cur == f => {
                    let len = io.len as usize;
                    let buf = self.arena.buf(&q.slot);
                    let n = if op == FsOp::Read {
                        rustix::io::pread(&*fd, &mut buf[..len], io.offset)
                    } else {
                        *wrote = true;
                        rustix::io::pwrite(&*fd, &buf[..len], io.offset)
                    };
                    n.map(|n| n.min(i32::MAX as usize) as i32)
                }
                _ => Err(Errno::BADF),
            },
            FsOp::Close => match self.current.take() {
                Some((cur, fd, wrote)) if cur == f => {
                    let synced = if wrote && self.shared.open.fsync {
                        self.calls += 1;
                        rfs::fsync(&fd)
                    } else {
                        Ok(())
                    };
                    drop(fd);
                    synced.map(|()| 0)
                }
                other => {
                    self.current = other;
                    Err(Errno::BADF)
                }
            },
            FsOp::Create | FsOp::Open => {
                let Some(dir) = dir else {
                    return self.failed(q, Errno::NOENT);
                };
                let (place, index) = shape.file_place(f);
                let _ = place;
                let access = match (op, mode) {
                    (FsOp::Create, _) => OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
                    (_, OpenMode::Read) => OFlags::RDONLY,
                    (_, OpenMode::Write) => OFlags::WRONLY,
                    (_, OpenMode::Both) => OFlags::RDWR,
                };
                // A file left open (it should not be) is closed first.
                self.current = None;
                rfs::openat(
                    dir,
                    shape.file_cname(index, &mut name),
                    access | flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::from_raw_mode(FILE_MODE),
                )
                .map(|fd| {
                    self.current = Some((f, fd, false));
                    0
                })
            }
            FsOp::Mkdir | FsOp::Rmdir => {
                let Some(dir) = dir else {
                    return self.failed(q, Errno::NOENT);
                };
                let n = shape.dir_cname(f, &mut name);
                if op == FsOp::Mkdir {
                    rfs::mkdirat(dir, n, Mode::from_raw_mode(super::anchor::DIR_MODE))
                } else {
                    let r = rfs::unlinkat(dir, n, AtFlags::REMOVEDIR);
                    if r.is_ok() {
                        self.shared.tree.forget_dir(f);
                    }
                    r
                }
                .map(|()| 0)
            }
            FsOp::Copy => return self.copy(q),
            FsOp::Rename => {
                let (Some(dir), Some(to)) = (dir, q.to.as_deref()) else {
                    return self.failed(q, Errno::NOENT);
                };
                let from = shape.file_cname(shape.file_place(f).1, &mut name);
                let new = shape.file_cname(shape.file_place(io.offset).1, &mut other);
                rfs::renameat_with(dir, from, to, new, rfs::RenameFlags::NOREPLACE).map(|()| 0)
            }
            FsOp::Delete | FsOp::Getattr | FsOp::Setattr | FsOp::Access => {
                let Some(dir) = dir else {
                    return self.failed(q, Errno::NOENT);
                };
                let n = shape.file_cname(shape.file_place(f).1, &mut name);
                match op {
                    FsOp::Delete => rfs::unlinkat(dir, n, AtFlags::empty()),
                    FsOp::Getattr => rfs::statx(
                        dir,
                        n,
                        AtFlags::SYMLINK_NOFOLLOW,
                        rfs::StatxFlags::BASIC_STATS,
                    )
                    .map(|_| ()),
                    FsOp::Setattr => {
                        let now = rustix::fs::Timespec {
                            tv_sec: 0,
                            tv_nsec: rfs::UTIME_NOW,
                        };
                        let times = rfs::Timestamps {
                            last_access: now,
                            last_modification: now,
                        };
                        rfs::utimensat(dir, n, &times, AtFlags::SYMLINK_NOFOLLOW)
                    }
                    _ => rfs::accessat(dir, n, rfs::Access::READ_OK, AtFlags::SYMLINK_NOFOLLOW),
                }
                .map(|()| 0)
            }
        };
        self.calls += 1;
        match result {
            Ok(n) => n,
            Err(e) => self.failed(q, e),
        }
    }

    /// `O_DIRECT`, `O_DSYNC` and `O_SYNC` as the files are opened.
    fn open_flags(&self) -> OFlags {
        let o = self.shared.open;
        let mut flags = OFlags::empty();
        if o.direct {
            flags |= OFlags::DIRECT;
        }
        if o.dsync {
            flags |= OFlags::DSYNC;
        }
        if o.sync {
            flags |= OFlags::SYNC;
        }
        flags
    }

    /// A copy: the file read and a new one written through the worker's buffer, synced when
    /// files are opened with `fsync`; a copy that fails removes what it made.
    fn copy(&mut self, q: &Queued<'a>) -> i32 {
        let (Some(dir), Some(to)) = (q.dir.as_deref(), q.to.as_deref()) else {
            return self.failed(q, Errno::NOENT);
        };
        let shape = &self.shared.tree.state.shape;
        let (f, g) = (u64::from(q.op.target), q.op.offset);
        let (mut a, mut b) = (NameBuf::default(), NameBuf::default());
        let from = shape.file_cname(shape.file_place(f).1, &mut a);
        let new = shape.file_cname(shape.file_place(g).1, &mut b);
        let flags = self.open_flags() | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        self.calls += 2;
        let src = match rfs::openat(dir, from, OFlags::RDONLY | flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) => return self.failed(q, e),
        };
        let dst = match rfs::openat(
            to,
            new,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | flags,
            Mode::from_raw_mode(FILE_MODE),
        ) {
            Ok(fd) => fd,
            Err(e) => return self.failed(q, e),
        };
        let mut offset = 0u64;
        let outcome = loop {
            let buf = self.arena.buf(&q.slot);
            self.calls += 1;
            let n = match rustix::io::pread(&src, &mut *buf, offset) {
                Ok(0) => break Ok(()),
                Ok(n) => n,
                Err(e) => break Err(e),
            };
            self.calls += 1;
            if let Err(e) = write_all(&dst, &buf[..n], offset) {
                break Err(e);
            }
            offset += n as u64;
        };
        let outcome = outcome.and_then(|()| {
            if self.shared.open.fsync {
                self.calls += 1;
                rfs::fsync(&dst)
            } else {
                Ok(())
            }
        });
        drop((src, dst));
        match outcome {
            Ok(()) => 0,
            Err(e) => {
                let _ = rfs::unlinkat(to, new, AtFlags::empty());
                self.failed(q, e)
            }
        }
    }

    /// Records a failure in detail (the first few) and returns its result.
    fn failed(&self, q: &Queued<'a>, e: Errno) -> i32 {
        if let Ok(mut list) = self.shared.failures.lock() {
            if list.len() < ERROR_DETAILS {
                let shape = &self.shared.tree.state.shape;
                let op = self.class(&q.op).op;
                let path = if op.on_dirs() {
                    shape.dir_path(q.op.target.into())
                } else {
                    shape.file_path(q.op.target.into())
                };
                list.push(Failure {
                    class: q.op.class,
                    path,
                    error: crate::stats::errors::errno_text(e.raw_os_error()),
                });
            }
        }
        -e.raw_os_error()
    }
}

/// Writes all of `buf` at `offset`.
fn write_all(fd: &OwnedFd, mut buf: &[u8], mut offset: u64) -> Result<(), Errno> {
    while !buf.is_empty() {
        let n = rustix::io::pwrite(fd, buf, offset)?;
        if n == 0 {
            return Err(Errno::NOSPC);
        }
        buf = &buf[n..];
        offset += n as u64;
    }
    Ok(())
}

impl<'a> crate::engine::Backend<'a> for FsBackend<'_, 'a> {
    fn slot_buf(&mut self, slot: &Slot<'a>) -> &mut [u8] {
        self.arena.buf(slot)
    }

    fn push(&mut self, slot: Slot<'a>, op: &IoOp) {
        // Looked up before the worker's clock starts: a directory first used opens here.
        let (dir, to) = self.dirs_of(op);
        self.queued.push(Queued {
            slot,
            op: *op,
            dir,
            to,
        });
    }

    // A worker with nothing in flight sleeps on its own: a submit always has something to do.
    fn submit(&mut self, _wait: bool, _timeout_ns: u64) -> std::io::Result<()> {
        let mut queued = std::mem::take(&mut self.queued);
        for q in queued.drain(..) {
            let res = self.perform(&q);
            self.done.push((q.slot, res));
        }
        // Its capacity kept: nothing on the per-operation path allocates.
        self.queued = queued;
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<(Slot<'a>, i32)>) {
        out.append(&mut self.done);
    }

    fn syscalls(&self) -> u64 {
        self.calls
    }
}

/// Makes each worker's [`FsBackend`] on its thread.
pub(crate) struct Maker<'s>(pub &'s Backends<'s>);

impl<'s> crate::run::OwnBackend for Maker<'s> {
    type Backend<'a> = FsBackend<'s, 'a>;

    fn make<'a>(self, arena: SlotArena<'a>) -> FsBackend<'s, 'a> {
        FsBackend::new(arena, self.0)
    }
}
