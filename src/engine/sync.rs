//! The psync backend: blocking pread/pwrite (pwritev2 with RWF_DSYNC for durable writes) and
//! fdatasync, one operation at a time. The fallback when io_uring cannot be used. Operations
//! are queued by `push` and performed by `submit`, so the worker's submission timestamp is
//! taken before the I/O, as with io_uring.

use super::buf::BufArena;
use super::{Backend, IoOp, OpKind};
use rustix::io::{Errno, ReadWriteFlags};
use std::os::fd::BorrowedFd;

/// Performs each operation as it is pushed.
pub struct SyncBackend<'fd> {
    fds: Vec<BorrowedFd<'fd>>,
    arena: BufArena,
    queued: Vec<(u32, IoOp)>,
    done: Vec<(u32, i32)>,
}

impl<'fd> SyncBackend<'fd> {
    /// A backend over `fds` (indexed like the job's targets).
    pub fn new(fds: Vec<BorrowedFd<'fd>>, slots: usize, slot_bytes: usize, seed: u64) -> Self {
        Self {
            fds,
            arena: BufArena::new(slots, slot_bytes, seed),
            queued: Vec::with_capacity(slots),
            done: Vec::with_capacity(slots),
        }
    }
}

fn result(r: Result<usize, Errno>) -> i32 {
    match r {
        Ok(n) => n.min(i32::MAX as usize) as i32,
        Err(e) => -e.raw_os_error(),
    }
}

impl Backend for SyncBackend<'_> {
    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        self.arena.slot_mut(slot as usize)
    }

    fn push(&mut self, slot: u32, op: &IoOp) {
        self.queued.push((slot, *op));
    }

    fn submit(&mut self, _wait: bool, timeout_ns: u64) -> std::io::Result<()> {
        if self.queued.is_empty() && self.done.is_empty() && timeout_ns > 0 {
            std::thread::sleep(std::time::Duration::from_nanos(timeout_ns));
        }
        for i in 0..self.queued.len() {
            let (slot, op) = self.queued[i];
            let res = self.perform(slot, &op);
            self.done.push((slot, res));
        }
        self.queued.clear();
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<(u32, i32)>) {
        out.append(&mut self.done);
    }
}

impl SyncBackend<'_> {
    fn perform(&mut self, slot: u32, op: &IoOp) -> i32 {
        let fd = self.fds[op.target as usize];
        let len = op.len as usize;
        match op.kind {
            OpKind::Read => {
                let buf = &mut self.arena.slot_mut(slot as usize)[..len];
                result(rustix::io::pread(fd, buf, op.offset))
            }
            OpKind::Write if op.dsync => {
                let buf = &self.arena.slot_mut(slot as usize)[..len];
                result(rustix::io::pwritev2(
                    fd,
                    &[std::io::IoSlice::new(buf)],
                    op.offset,
                    ReadWriteFlags::DSYNC,
                ))
            }
            OpKind::Write => {
                let buf = &self.arena.slot_mut(slot as usize)[..len];
                result(rustix::io::pwrite(fd, buf, op.offset))
            }
            OpKind::Flush => result(rustix::fs::fdatasync(fd).map(|()| 0)),
        }
    }
}
