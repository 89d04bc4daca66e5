//! The io_uring backend: one ring per worker, the worker's target files registered (fixed
//! files) and its buffer region registered (fixed buffers) when the kernel and the memlock
//! limit allow, falling back to plain descriptors and buffers otherwise. One of the two files
//! allowed `unsafe`.

#![allow(unsafe_code)]

use super::buf::BufArena;
use super::{Backend, IoOp, OpKind};
use io_uring::{IoUring, opcode, squeue, types};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

/// An io_uring ring with its buffers. Field order matters: the ring is dropped (and its
/// requests torn down) before the buffers it may still reference.
pub struct UringBackend<'fd> {
    ring: IoUring,
    arena: BufArena,
    fds: Vec<RawFd>,
    _borrowed: Vec<BorrowedFd<'fd>>,
    fixed_files: bool,
    fixed_buffers: bool,
    /// Notes for the results: what could not be registered and why.
    pub notes: Vec<String>,
}

impl<'fd> UringBackend<'fd> {
    /// A ring for `slots` in-flight operations over `fds` (indexed like the job's targets).
    pub fn new(
        fds: Vec<BorrowedFd<'fd>>,
        slots: usize,
        slot_bytes: usize,
        seed: u64,
    ) -> io::Result<Self> {
        let entries = (slots as u32).next_power_of_two().max(2);
        let ring = IoUring::builder()
            .setup_cqsize(entries * 2)
            .build(entries)?;
        let arena = BufArena::new(slots, slot_bytes, seed);
        let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
        let mut notes = Vec::new();
        let fixed_files = match ring.submitter().register_files(&raw) {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!(
                    "io_uring fixed files unavailable ({e}); using plain descriptors"
                ));
                false
            }
        };
        let (base, len) = arena.region();
        let iov = libc::iovec {
            iov_base: base.cast(),
            iov_len: len,
        };
        // SAFETY: the iovec covers exactly the arena's allocation, which lives as long as
        // `self` and is dropped after the ring (field order), so the kernel never sees a freed
        // buffer.
        let fixed_buffers = match unsafe { ring.submitter().register_buffers(&[iov]) } {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!(
                    "io_uring fixed buffers unavailable ({e}; raise `ulimit -l` to register {len} bytes); using plain buffers"
                ));
                false
            }
        };
        Ok(Self {
            ring,
            arena,
            fds: raw,
            _borrowed: fds,
            fixed_files,
            fixed_buffers,
            notes,
        })
    }

    fn entry(&self, slot: u32, op: &IoOp) -> squeue::Entry {
        let ptr = self.arena.slot_ptr(slot as usize);
        let t = op.target as usize;
        let flags = if op.dsync { libc::RWF_DSYNC } else { 0 };
        macro_rules! with_fd {
            ($fd:ident => $body:expr) => {
                if self.fixed_files {
                    let $fd = types::Fixed(t as u32);
                    $body
                } else {
                    let $fd = types::Fd(self.fds[t]);
                    $body
                }
            };
        }
        let e = match (op.kind, self.fixed_buffers) {
            (OpKind::Read, true) => with_fd!(fd => opcode::ReadFixed::new(fd, ptr, op.len, 0)
                .offset(op.offset)
                .build()),
            (OpKind::Read, false) => with_fd!(fd => opcode::Read::new(fd, ptr, op.len)
                .offset(op.offset)
                .build()),
            (OpKind::Write, true) => with_fd!(fd => opcode::WriteFixed::new(fd, ptr, op.len, 0)
                .offset(op.offset)
                .rw_flags(flags)
                .build()),
            (OpKind::Write, false) => with_fd!(fd => opcode::Write::new(fd, ptr, op.len)
                .offset(op.offset)
                .rw_flags(flags)
                .build()),
            // IO_DRAIN: the flush starts only when every earlier operation has completed,
            // so it covers the writes it follows.
            (OpKind::Flush, _) => with_fd!(fd => opcode::Fsync::new(fd)
                .flags(types::FsyncFlags::DATASYNC)
                .build()
                .flags(squeue::Flags::IO_DRAIN)),
        };
        e.user_data(slot as u64)
    }
}

impl Backend for UringBackend<'_> {
    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        self.arena.slot_mut(slot as usize)
    }

    #[inline]
    fn push(&mut self, slot: u32, op: &IoOp) {
        let e = self.entry(slot, op);
        // SAFETY: the entry points into slot `slot` of the arena, which outlives the ring; the
        // worker never reuses a slot (buffer) until its completion has been reaped, so no two
        // in-flight operations share a buffer and the buffer is not touched while in flight.
        // The submission queue has room: it holds at least `slots` entries and at most `slots`
        // operations are queued or in flight.
        unsafe {
            self.ring
                .submission()
                .push(&e)
                .expect("submission queue sized for every slot");
        }
    }

    #[inline]
    fn submit(&mut self, wait: bool, timeout_ns: u64) -> io::Result<()> {
        let r = if wait {
            let ts = types::Timespec::new()
                .sec(timeout_ns / 1_000_000_000)
                .nsec((timeout_ns % 1_000_000_000) as u32);
            let args = types::SubmitArgs::new().timespec(&ts);
            self.ring.submitter().submit_with_args(1, &args)
        } else {
            self.ring.submit()
        };
        match r {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<(u32, i32)>) {
        for cqe in self.ring.completion() {
            out.push((cqe.user_data() as u32, cqe.result()));
        }
    }
}
