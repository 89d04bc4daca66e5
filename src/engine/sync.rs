//! The psync backend: blocking pread/pwrite (pwritev2 with RWF_DSYNC for durable writes) and
//! fdatasync or fsync, one operation at a time. The fallback when io_uring cannot be used. Operations
//! are queued by `push` and performed by `submit`, so the worker's submission timestamp is
//! taken before the I/O, as with io_uring.

use super::buf::{Slot, SlotArena};
use super::{Backend, IoOp, OpKind};
use rustix::io::{Errno, ReadWriteFlags};
use std::os::fd::BorrowedFd;

/// Performs each operation as it is submitted.
pub(crate) struct SyncBackend<'fd, 'a> {
    fds: Vec<BorrowedFd<'fd>>,
    arena: SlotArena<'a>,
    queued: Vec<(Slot<'a>, IoOp)>,
    done: Vec<(Slot<'a>, i32)>,
    /// Reads, writes and syncs made.
    calls: u64,
}

impl<'fd, 'a> SyncBackend<'fd, 'a> {
    /// A backend over `fds` (indexed like the job's targets) and the slots of `arena`.
    pub(crate) fn new(fds: Vec<BorrowedFd<'fd>>, arena: SlotArena<'a>) -> Self {
        let slots = arena.slots();
        Self {
            fds,
            arena,
            queued: Vec::with_capacity(slots),
            done: Vec::with_capacity(slots),
            calls: 0,
        }
    }
}

fn result(r: Result<usize, Errno>) -> i32 {
    match r {
        Ok(n) => n.min(i32::MAX as usize) as i32,
        Err(e) => -e.raw_os_error(),
    }
}

impl<'a> Backend<'a> for SyncBackend<'_, 'a> {
    fn slot_buf(&mut self, slot: &Slot<'a>) -> &mut [u8] {
        self.arena.buf(slot)
    }

    fn push(&mut self, slot: Slot<'a>, op: &IoOp) {
        self.queued.push((slot, *op));
    }

    // A worker with nothing in flight sleeps on its own (`crate::bell`): a submit always
    // has something to do.
    fn submit(&mut self, _wait: bool, _timeout_ns: u64) -> std::io::Result<()> {
        self.calls += self.queued.len() as u64;
        for (slot, op) in self.queued.drain(..) {
            let res = perform(&self.fds, &mut self.arena, &slot, &op);
            self.done.push((slot, res));
        }
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<(Slot<'a>, i32)>) {
        out.append(&mut self.done);
    }

    fn syscalls(&self) -> u64 {
        self.calls
    }
}

/// Performs `op` with the buffer of `slot` (the backend holds its token while it is queued).
fn perform<'a>(
    fds: &[BorrowedFd<'_>],
    arena: &mut SlotArena<'a>,
    slot: &Slot<'a>,
    op: &IoOp,
) -> i32 {
    let fd = fds[op.target as usize];
    let len = op.len as usize;
    match op.kind {
        OpKind::Read => {
            let buf = &mut arena.buf(slot)[..len];
            result(rustix::io::pread(fd, buf, op.offset))
        }
        OpKind::Write if op.dsync || op.atomic => {
            let buf = &arena.buf(slot)[..len];
            let mut flags = ReadWriteFlags::empty();
            flags.set(ReadWriteFlags::DSYNC, op.dsync);
            // RWF_ATOMIC (Linux 6.11), which rustix does not name.
            flags.set(ReadWriteFlags::from_bits_retain(0x40), op.atomic);
            result(rustix::io::pwritev2(
                fd,
                &[std::io::IoSlice::new(buf)],
                op.offset,
                flags,
            ))
        }
        OpKind::Write => {
            let buf = &arena.buf(slot)[..len];
            result(rustix::io::pwrite(fd, buf, op.offset))
        }
        OpKind::Flush => result(rustix::fs::fdatasync(fd).map(|()| 0)),
        OpKind::Fsync => result(rustix::fs::fsync(fd).map(|()| 0)),
    }
}
