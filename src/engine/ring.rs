//! The io_uring backend: one ring per worker, the worker's target files registered (fixed
//! files) and its buffer region registered (fixed buffers) when the kernel and the memlock
//! limit allow, falling back to plain descriptors and buffers otherwise. One of the two files
//! allowed `unsafe`.
//!
//! The kernel reads and writes a slot's buffer from the moment its operation is submitted until
//! its completion is posted. Two things keep that sound. While an operation is in flight its
//! slot's token ([`Slot`]) is not anywhere safe code can reach: [`Backend::push`] consumes it
//! into the operation's user data and [`Backend::reap`] recreates it from the completion. And
//! the buffers are never freed under the kernel: dropping the backend cancels every operation
//! still in flight and waits for all of their completions first (an O_DIRECT read the device
//! already has, or a FUSE request being served, cannot always be cancelled: then it is waited
//! for), and if the ring cannot even wait, the buffers are leaked rather than freed.

#![allow(unsafe_code)]

use super::buf::{Slot, SlotArena};
use super::{Backend, IoOp, OpKind};
use io_uring::{IoUring, opcode, squeue, types};
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

/// User data of the cancellation requests; a slot's operation carries its slot index.
const CANCEL: u64 = u64::MAX;
/// How long one wait of `UringBackend::cancel_and_wait` lasts before it waits again.
const DRAIN_WAIT_NS: u64 = 100_000_000;

/// An io_uring ring with its buffers. Both are dropped by hand ([`Drop`]): the ring once every
/// operation has completed, then the buffers.
pub struct UringBackend<'fd, 'a> {
    ring: ManuallyDrop<IoUring>,
    arena: ManuallyDrop<SlotArena<'a>>,
    /// Operations pushed whose completion has not been reaped: while it is not 0, the kernel
    /// may use some slot's buffer.
    outstanding: u32,
    fds: Vec<RawFd>,
    _borrowed: Vec<BorrowedFd<'fd>>,
    fixed_files: bool,
    fixed_buffers: bool,
    /// The I/O priority of its reads and writes (0: the thread's).
    prio: u16,
    /// A share of them at another priority: (priority, share in thousandths of a percent,
    /// running sum): an I/O gets it each time the sum passes 100 %, so the share is exact and
    /// evenly spread.
    mix: Option<(u16, u32, u32)>,
    /// Notes for the results: what could not be registered and why.
    pub notes: Vec<String>,
}

/// Sets the calling thread's I/O priority (`ioprio_set(IOPRIO_WHO_PROCESS, 0, value)`; the
/// value as [`crate::job::priority::IoPriority::value`] makes it): its reads and writes, on
/// any engine, carry it.
pub fn set_thread_io_priority(value: u16) -> io::Result<()> {
    // SAFETY: ioprio_set takes three integers and reads or writes no memory of the process.
    let r = unsafe { libc::syscall(libc::SYS_ioprio_set, 1, 0, libc::c_int::from(value)) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl<'fd, 'a> UringBackend<'fd, 'a> {
    /// A ring for the slots of `arena` over `fds` (indexed like the job's targets).
    pub fn new(fds: Vec<BorrowedFd<'fd>>, arena: SlotArena<'a>) -> io::Result<Self> {
        let entries = (arena.slots() as u32).next_power_of_two().max(2);
        let ring = IoUring::builder()
            .setup_cqsize(entries * 2)
            .build(entries)?;
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
        // SAFETY: the iovec covers exactly the arena's allocation, which the backend owns and
        // frees only after every operation has completed and the ring is closed (`Drop`), so
        // the kernel never sees a freed buffer.
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
            ring: ManuallyDrop::new(ring),
            arena: ManuallyDrop::new(arena),
            outstanding: 0,
            fds: raw,
            _borrowed: fds,
            fixed_files,
            fixed_buffers,
            prio: 0,
            mix: None,
            notes,
        })
    }

    /// Gives its reads and writes the priority `prio` (0: the thread's), and `share_pct` % of
    /// them `other` instead.
    pub fn set_priority(&mut self, prio: u16, mix: Option<(u16, f64)>) {
        self.prio = prio;
        self.mix =
            mix.map(|(p, share)| (p, (share * 1000.0).round().clamp(0.0, 100_000.0) as u32, 0));
    }

    /// The priority of the next read or write.
    #[inline]
    fn next_prio(&mut self) -> u16 {
        match &mut self.mix {
            None => self.prio,
            Some((other, share, sum)) => {
                *sum += *share;
                if *sum >= 100_000 {
                    *sum -= 100_000;
                    *other
                } else {
                    self.prio
                }
            }
        }
    }

    /// Operations pushed and not yet reaped.
    #[cfg(test)]
    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// The entry of `op` into the buffer of `slot`, without its user data.
    fn entry(&mut self, slot: &Slot<'a>, op: &IoOp) -> squeue::Entry {
        let ptr = self.arena.ptr(slot);
        let t = op.target as usize;
        let flags = if op.dsync { libc::RWF_DSYNC } else { 0 };
        let prio = if op.kind.is_sync() {
            0
        } else {
            self.next_prio()
        };
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
        match (op.kind, self.fixed_buffers) {
            (OpKind::Read, true) => with_fd!(fd => opcode::ReadFixed::new(fd, ptr, op.len, 0)
                .offset(op.offset)
                .ioprio(prio)
                .build()),
            (OpKind::Read, false) => with_fd!(fd => opcode::Read::new(fd, ptr, op.len)
                .offset(op.offset)
                .ioprio(prio)
                .build()),
            (OpKind::Write, true) => with_fd!(fd => opcode::WriteFixed::new(fd, ptr, op.len, 0)
                .offset(op.offset)
                .rw_flags(flags)
                .ioprio(prio)
                .build()),
            (OpKind::Write, false) => with_fd!(fd => opcode::Write::new(fd, ptr, op.len)
                .offset(op.offset)
                .rw_flags(flags)
                .ioprio(prio)
                .build()),
            // IO_DRAIN: the flush starts only when every earlier operation has completed,
            // so it covers the writes it follows.
            (OpKind::Flush, _) => with_fd!(fd => opcode::Fsync::new(fd)
                .flags(types::FsyncFlags::DATASYNC)
                .build()
                .flags(squeue::Flags::IO_DRAIN)),
            (OpKind::Fsync, _) => with_fd!(fd => opcode::Fsync::new(fd)
                .build()
                .flags(squeue::Flags::IO_DRAIN)),
        }
    }

    /// Cancels every operation in flight (`IORING_OP_ASYNC_CANCEL`) and waits until each has
    /// completed, appending the completions to `out` like [`Backend::reap`]. An operation that
    /// cannot be cancelled (O_DIRECT I/O the device already has, a FUSE request being served)
    /// is waited for, however long it takes: until its completion the kernel may still write
    /// into its buffer. Errors only when the ring cannot wait; operations may then still be in
    /// flight. Called only by [`Drop`] (and tests): it is the one place cancellations are
    /// issued, and it consumes their completions, so [`Backend::reap`] never sees one.
    fn cancel_and_wait(&mut self, out: &mut Vec<(Slot<'a>, i32)>) -> io::Result<()> {
        self.reap(out);
        if self.outstanding == 0 {
            return Ok(());
        }
        // Operations still queued are submitted with the cancellations and cancelled too.
        let mut cancels = 0u32;
        for index in 0..self.arena.slots() as u64 {
            let e = opcode::AsyncCancel::new(index).build().user_data(CANCEL);
            // SAFETY: a cancellation refers to no memory of ours, only to the user data of the
            // operation it cancels.
            let mut pushed = unsafe { self.ring.submission().push(&e) }.is_ok();
            if !pushed && quiet(self.ring.submit()).is_ok() {
                // The queue was full; submitting made room.
                // SAFETY: as above, a cancellation refers to no memory of ours.
                pushed = unsafe { self.ring.submission().push(&e) }.is_ok();
            }
            if !pushed {
                // What is not cancelled is still waited for.
                break;
            }
            cancels += 1;
        }
        while self.outstanding > 0 || cancels > 0 {
            self.submit(true, DRAIN_WAIT_NS)?;
            for cqe in self.ring.completion() {
                match cqe.user_data() {
                    CANCEL => cancels -= 1,
                    index => {
                        self.outstanding -= 1;
                        // SAFETY: as in `reap`, a completion that is not a cancellation's is
                        // the one completion of an operation queued by `push`: this recreates
                        // its token once, and the kernel is done with the slot's buffer.
                        out.push((unsafe { Slot::from_raw(index as u32) }, cqe.result()));
                    }
                }
            }
        }
        Ok(())
    }
}

/// `r` with a timeout (ETIME), a signal (EINTR) and a full completion queue (EBUSY) taken as
/// success: the caller reaps what there is and comes back.
#[inline(always)]
fn quiet(r: io::Result<usize>) -> io::Result<()> {
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

impl<'a> Backend<'a> for UringBackend<'_, 'a> {
    #[inline]
    fn slot_buf(&mut self, slot: &Slot<'a>) -> &mut [u8] {
        self.arena.buf(slot)
    }

    #[inline]
    fn push(&mut self, slot: Slot<'a>, op: &IoOp) {
        let e = self.entry(&slot, op);
        // The token becomes the operation's user data until its completion is reaped.
        let e = e.user_data(slot.into_raw() as u64);
        // SAFETY: the entry points into the buffer of a slot whose token was just consumed, so
        // nothing else can reach that buffer until `reap` hands the token back with the
        // operation's completion: no two operations share a buffer and safe code does not touch
        // one in flight. The buffer outlives the operation: `Drop` waits for every completion
        // before freeing the arena (or leaks it). The submission queue has room: it holds at
        // least one entry per slot and at most one operation per slot is queued or in flight.
        unsafe {
            self.ring
                .submission()
                .push(&e)
                .expect("submission queue sized for every slot");
        }
        self.outstanding += 1;
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
        quiet(r)
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<(Slot<'a>, i32)>) {
        let before = out.len();
        for cqe in self.ring.completion() {
            let index = cqe.user_data();
            debug_assert_ne!(index, CANCEL, "cancellations are reaped by cancel_and_wait");
            // SAFETY: every completion reaped here is that of one operation queued by `push`
            // (cancellations are issued only by `cancel_and_wait`, from `Drop`, which reaps
            // their completions itself), whose user data is the index its slot's token gave up
            // (`into_raw`), in this ring, so of this arena; the kernel posts one completion per
            // operation (none is multishot), so this recreates that token once, and the kernel
            // is done with the slot's buffer.
            out.push((unsafe { Slot::from_raw(index as u32) }, cqe.result()));
        }
        self.outstanding -= (out.len() - before) as u32;
    }
}

impl Drop for UringBackend<'_, '_> {
    fn drop(&mut self) {
        let mut done = Vec::new();
        let drained = self.cancel_and_wait(&mut done).is_ok();
        // SAFETY: the ring is dropped once, here, and not used after.
        unsafe { ManuallyDrop::drop(&mut self.ring) };
        if drained {
            // SAFETY: every operation has completed and the ring is closed, so the kernel
            // will not touch the buffers again; dropped once, here.
            unsafe { ManuallyDrop::drop(&mut self.arena) };
        }
        // Otherwise the ring could not wait and an operation may still be in flight: its
        // buffers are leaked, not freed under the kernel.
    }
}

#[cfg(test)]
#[allow(clippy::print_stderr)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;

    /// A connected pair of sockets: a read from one stays in flight until something is
    /// written to the other.
    fn pipe() -> (UnixStream, UnixStream) {
        UnixStream::pair().expect("a socket pair")
    }

    fn read(len: u32) -> IoOp {
        IoOp {
            kind: OpKind::Read,
            target: 0,
            offset: 0,
            len,
            dsync: false,
            class: 0,
        }
    }

    #[test]
    fn reads_complete_into_the_slot_and_give_the_token_back() {
        let (r, w) = pipe();
        SlotArena::with(2, 4096, 1, |arena, mut slots| {
            let mut ring = match UringBackend::new(vec![r.as_fd()], arena) {
                Ok(ring) => ring,
                Err(e) => return eprintln!("skipped: no io_uring ({e})"),
            };
            let slot = slots.pop().expect("a slot");
            let index = slot.index();
            ring.push(slot, &read(4096));
            ring.submit(false, 0).unwrap();
            assert_eq!(ring.outstanding(), 1);
            (&w).write_all(b"hello").unwrap();
            let mut done = Vec::new();
            while done.is_empty() {
                ring.submit(true, 1_000_000_000).unwrap();
                ring.reap(&mut done);
            }
            let (slot, res) = done.pop().unwrap();
            assert_eq!((slot.index(), res), (index, 5));
            assert_eq!(&ring.slot_buf(&slot)[..5], b"hello");
            assert_eq!(ring.outstanding(), 0);
        });
    }

    #[test]
    fn dropping_a_ring_cancels_and_waits_for_what_is_in_flight() {
        let (r, w) = pipe();
        SlotArena::with(4, 4096, 1, |arena, mut slots| {
            let mut ring = match UringBackend::new(vec![r.as_fd()], arena) {
                Ok(ring) => ring,
                Err(e) => return eprintln!("skipped: no io_uring ({e})"),
            };
            // Two reads in flight on the empty pipe, and one queued, never submitted.
            ring.push(slots.pop().unwrap(), &read(4096));
            ring.push(slots.pop().unwrap(), &read(4096));
            ring.submit(false, 0).unwrap();
            ring.push(slots.pop().unwrap(), &read(4096));
            assert_eq!(ring.outstanding(), 3);
            let mut done = Vec::new();
            ring.cancel_and_wait(&mut done).unwrap();
            assert_eq!(ring.outstanding(), 0);
            let mut got: Vec<(u32, i32)> = done.iter().map(|(s, r)| (s.index(), *r)).collect();
            got.sort();
            assert_eq!(
                got,
                [
                    (1, -libc::ECANCELED),
                    (2, -libc::ECANCELED),
                    (3, -libc::ECANCELED)
                ],
                "every operation completed, cancelled"
            );
            // Nothing is left to take the pipe's data: the cancelled reads are gone.
            (&w).write_all(b"after").unwrap();
            let mut buf = [0u8; 8];
            assert_eq!((&r).read(&mut buf).unwrap(), 5);
            // The tokens came back: the ring takes them again.
            for (slot, _) in done {
                ring.push(slot, &read(4096));
            }
            ring.submit(false, 0).unwrap();
            assert_eq!(ring.outstanding(), 3);
            // Dropped with three reads in flight: `Drop` cancels and waits for them.
        });
    }
}
