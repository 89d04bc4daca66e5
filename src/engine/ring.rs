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
use super::paths::{RingPaths, Setup, sqpoll_thread, thread_cpu_ns};
use super::{Backend, IoOp, OpKind};
use crate::job::uring::UringOptions;
use io_uring::{IoUring, opcode, squeue, types};
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

/// User data of the cancellation requests; a slot's operation carries its slot index.
const CANCEL: u64 = u64::MAX;
/// User data of the polled-I/O probe read ([`UringBackend::new`]).
const PROBE: u64 = u64::MAX - 1;
/// How long one wait of `UringBackend::cancel_and_wait` lasts before it waits again.
const DRAIN_WAIT_NS: u64 = 100_000_000;
/// After a submission that did not complete within its own call, how many waits go straight
/// to the kernel before the ring tries submitting alone first again ([`Backend::submit`]).
const INLINE_RETRY: u32 = 16;
// io_uring_enter(2) flags and io_uring_register(2) opcodes the crate does not export.
const ENTER_GETEVENTS: u32 = 1 << 0;
const ENTER_SQ_WAKEUP: u32 = 1 << 1;
const ENTER_EXT_ARG: u32 = 1 << 3;
const ENTER_REGISTERED_RING: u32 = 1 << 4;
const REGISTER_RING_FDS: u32 = 20;
const UNREGISTER_RING_FDS: u32 = 21;

/// `struct io_uring_getevents_arg` of io_uring_enter(2) with `IORING_ENTER_EXT_ARG`.
#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    min_wait_usec: u32,
    ts: u64,
}

/// `struct __kernel_timespec`.
#[repr(C)]
struct KernelTimespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// `struct io_uring_rsrc_update` of io_uring_register(2).
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// An io_uring ring with its buffers. Both are dropped by hand ([`Drop`]): the ring once every
/// operation has completed, then the buffers.
pub(crate) struct UringBackend<'fd, 'a> {
    ring: ManuallyDrop<IoUring>,
    arena: ManuallyDrop<SlotArena<'a>>,
    /// Operations pushed whose completion has not been reaped: while it is not 0, the kernel
    /// may use some slot's buffer.
    outstanding: u32,
    /// Operations pushed and not yet submitted.
    unsubmitted: u32,
    fds: Vec<RawFd>,
    _borrowed: Vec<BorrowedFd<'fd>>,
    fixed_files: bool,
    fixed_buffers: bool,
    /// The ring's index among the thread's registered rings, when registered.
    ring_index: Option<u32>,
    setup: Setup,
    /// Wait for at least this many completions (0: never wait).
    complete_min: u32,
    /// Reap at most this many at once.
    complete_max: usize,
    /// Waits left before a wait tries submitting alone first (0: it does).
    inline_retry: u32,
    /// The I/O priority of its reads and writes (0: the thread's).
    prio: u16,
    /// A share of them at another priority: (priority, share in thousandths of a percent,
    /// running sum): an I/O gets it each time the sum passes 100 %, so the share is exact and
    /// evenly spread.
    mix: Option<(u16, u32, u32)>,
    /// Notes for the results: what could not be registered and why.
    pub notes: Vec<String>,
    paths: RingPaths,
    /// io_uring_enter calls made.
    entries: u64,
}

/// Sets the calling thread's I/O priority (`ioprio_set(IOPRIO_WHO_PROCESS, 0, value)`; the
/// value as [`crate::job::priority::IoPriority::value`] makes it): its reads and writes, on
/// any engine, carry it.
pub(crate) fn set_thread_io_priority(value: u16) -> io::Result<()> {
    // SAFETY: ioprio_set takes three integers and reads or writes no memory of the process.
    let r = unsafe { libc::syscall(libc::SYS_ioprio_set, 1, 0, libc::c_int::from(value)) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl<'fd, 'a> UringBackend<'fd, 'a> {
    /// A ring for the slots of `arena` over `fds` (indexed like the job's targets), with the
    /// paths `options` asks for where the kernel and the targets allow them. With polled
    /// completions, `probe_lens[i]` is the length of one O_DIRECT read of target `i` (0: not
    /// probed): a read of its first bytes tells whether the device can poll.
    pub(crate) fn new(
        fds: Vec<BorrowedFd<'fd>>,
        arena: SlotArena<'a>,
        options: &UringOptions,
        probe_lens: &[u32],
    ) -> io::Result<Self> {
        let entries = (arena.slots() as u32).next_power_of_two().max(2);
        let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
        let mut paths = RingPaths::default();
        let mut setup = Setup::asked(options);
        let (base, len) = arena.region();
        let ring = loop {
            let ring = match setup.build(entries) {
                Ok(ring) => ring,
                Err(e) => match setup.drop_one() {
                    Some((path, needs)) => {
                        paths
                            .not_used
                            .push((path, super::paths::refused_text(&e, needs)));
                        continue;
                    }
                    None => return Err(e),
                },
            };
            if !setup.iopoll {
                break ring;
            }
            let mut ring = ring;
            match probe_poll(&mut ring, &raw, probe_lens, base, len) {
                Ok(None) => break ring,
                Ok(Some(why)) => {
                    drop(ring);
                    setup.iopoll = false;
                    paths.not_used.push(("iopoll", why));
                }
                Err(e) => {
                    // The probe read may still be in flight: its buffer must outlive it.
                    std::mem::forget(ring);
                    std::mem::forget(arena);
                    return Err(e);
                }
            }
        };
        paths.used.extend(setup.used());
        let mut notes = Vec::new();
        let fixed_files = match ring.submitter().register_files(&raw) {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!(
                    "io_uring fixed files unavailable ({e}); using plain descriptors"
                ));
                paths.not_used.push(("fixed_files", e.to_string()));
                false
            }
        };
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
                paths.not_used.push(("fixed_buffers", e.to_string()));
                false
            }
        };
        for (on, name) in [
            (fixed_files, "fixed_files"),
            (fixed_buffers, "fixed_buffers"),
        ] {
            if on {
                paths.used.push(name);
            }
        }
        let ring_index = match register_ring(&ring) {
            Ok(i) => {
                paths.used.push("registered_ring");
                Some(i)
            }
            Err(e) => {
                paths.not_used.push((
                    "registered_ring",
                    format!("the kernel refused it ({e}); it needs Linux 5.18"),
                ));
                None
            }
        };
        Ok(Self {
            ring: ManuallyDrop::new(ring),
            arena: ManuallyDrop::new(arena),
            outstanding: 0,
            unsubmitted: 0,
            fds: raw,
            _borrowed: fds,
            fixed_files,
            fixed_buffers,
            ring_index,
            setup,
            complete_min: options.batch_complete_min,
            complete_max: options
                .batch_complete_max
                .map_or(usize::MAX, |m| m as usize),
            inline_retry: 0,
            prio: 0,
            mix: None,
            notes,
            paths,
            entries: 0,
        })
    }

    /// Which paths it uses and why any is not, with its polling thread's CPU time so far.
    pub(crate) fn paths(&self) -> RingPaths {
        let mut p = self.paths.clone();
        // Looked up now: a ring dropped after a failed probe may have left a thread of the
        // same name, which is gone by the end of the run.
        p.sqpoll_cpu_ns = (self.setup.sqpoll)
            .and_then(|_| sqpoll_thread())
            .and_then(thread_cpu_ns);
        p
    }

    /// io_uring_enter(2): submits what is queued and, with `want` > 0, waits for that many
    /// completions or `timeout_ns`, through the registered ring when there is one, with the
    /// flags the set-up needs (completion work deferred or polled is run only by an enter
    /// asking for events; a sleeping polling thread is woken).
    fn enter(&mut self, want: u32, timeout_ns: u64) -> io::Result<()> {
        let (wakeup, taskrun, overflow) = {
            let sq = self.ring.submission();
            let wakeup = self.setup.sqpoll.is_some() && {
                std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
                sq.need_wakeup()
            };
            (wakeup, sq.taskrun(), sq.cq_overflow())
        };
        let mut flags = 0;
        if want > 0 || self.setup.iopoll || self.setup.defer || taskrun || overflow {
            flags |= ENTER_GETEVENTS;
        }
        if self.setup.sqpoll.is_some() {
            if wakeup {
                flags |= ENTER_SQ_WAKEUP;
            } else if flags & ENTER_GETEVENTS == 0 {
                // The polling thread is awake and takes what is queued.
                self.unsubmitted = 0;
                return Ok(());
            }
        }
        // The deadline, only for a wait: a call that only submits copies nothing in.
        let (ts, arg);
        let (arg_ptr, arg_sz) = if want > 0 {
            flags |= ENTER_EXT_ARG;
            ts = KernelTimespec {
                tv_sec: (timeout_ns / 1_000_000_000) as i64,
                tv_nsec: (timeout_ns % 1_000_000_000) as i64,
            };
            arg = GeteventsArg {
                sigmask: 0,
                sigmask_sz: 0,
                min_wait_usec: 0,
                ts: std::ptr::from_ref(&ts) as u64,
            };
            (
                std::ptr::from_ref(&arg).cast::<libc::c_void>(),
                std::mem::size_of::<GeteventsArg>(),
            )
        } else {
            (std::ptr::null(), 0)
        };
        let fd = match self.ring_index {
            Some(i) => {
                flags |= ENTER_REGISTERED_RING;
                i as libc::c_long
            }
            None => self.ring.as_raw_fd() as libc::c_long,
        };
        // SAFETY: io_uring_enter reads the ring's queues, which the ring maps for its life,
        // and `arg` and `ts`, which live across the call; the entries it submits were pushed
        // by `push`, whose safety comment covers their buffers.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                fd,
                libc::c_long::from(self.unsubmitted),
                libc::c_long::from(want),
                libc::c_long::from(flags),
                arg_ptr,
                arg_sz,
            )
        };
        self.entries += 1;
        if r < 0 {
            return quiet(Err(io::Error::last_os_error()));
        }
        self.unsubmitted = self.unsubmitted.saturating_sub(r as u32);
        Ok(())
    }

    /// Gives its reads and writes the priority `prio` (0: the thread's), and `share_pct` % of
    /// them `other` instead.
    pub(crate) fn set_priority(&mut self, prio: u16, mix: Option<(u16, f64)>) {
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
    pub(crate) fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// The entry of `op` into the buffer of `slot`, without its user data.
    fn entry(&mut self, slot: &Slot<'a>, op: &IoOp) -> squeue::Entry {
        let ptr = self.arena.ptr(slot);
        let t = op.target as usize;
        let flags = (if op.dsync { libc::RWF_DSYNC } else { 0 })
            | (if op.atomic { libc::RWF_ATOMIC } else { 0 });
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
        // An atomic write takes its data from one user buffer (the kernel refuses RWF_ATOMIC
        // on a registered buffer's pages): plain Write.
        match (op.kind, self.fixed_buffers && !op.atomic) {
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
            if !pushed && self.enter(0, 0).is_ok() {
                // The queue was full; submitting made room.
                // SAFETY: as above, a cancellation refers to no memory of ours.
                pushed = unsafe { self.ring.submission().push(&e) }.is_ok();
            }
            if !pushed {
                // What is not cancelled is still waited for.
                break;
            }
            cancels += 1;
            self.unsubmitted += 1;
        }
        while self.outstanding > 0 || cancels > 0 {
            self.enter(1, DRAIN_WAIT_NS)?;
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

/// Reads the first `probe_lens[i]` bytes of each target `i` through `ring` (set up for polled
/// completions) into the buffer at `base`: `Some(why)` when a target cannot be polled. Errors
/// only when the ring cannot wait for the read, which may then still be in flight.
fn probe_poll(
    ring: &mut IoUring,
    fds: &[RawFd],
    probe_lens: &[u32],
    base: *mut u8,
    len: usize,
) -> io::Result<Option<String>> {
    for (i, (&fd, &n)) in fds.iter().zip(probe_lens).enumerate() {
        if n == 0 || n as usize > len {
            continue;
        }
        let e = opcode::Read::new(types::Fd(fd), base, n)
            .offset(0)
            .build()
            .user_data(PROBE);
        // SAFETY: the read goes into the arena's first `n` bytes, which nothing else uses
        // until the backend is built (the slots' buffers are reachable only through it), and
        // it is waited for below before anything else happens; if it cannot be waited for,
        // the caller leaks the arena.
        if unsafe { ring.submission().push(&e) }.is_err() {
            continue;
        }
        let res = loop {
            if let Some(cqe) = ring.completion().next() {
                break cqe.result();
            }
            quiet(ring.submit_and_wait(1))?;
        };
        if res == -libc::EOPNOTSUPP || res == -libc::EINVAL {
            return Ok(Some(format!(
                "target {i} cannot be polled ({}): polled I/O needs O_DIRECT on a device with poll queues (NVMe with the nvme driver's poll_queues set; {})",
                crate::stats::errors::errno_text(-res),
                super::probe::poll_queues(fd)
            )));
        }
    }
    Ok(None)
}

/// Registers `ring`'s descriptor with the calling thread (`IORING_REGISTER_RING_FDS`), so
/// io_uring_enter finds the ring without a descriptor lookup: the index to enter it by.
fn register_ring(ring: &IoUring) -> io::Result<u32> {
    let mut up = RsrcUpdate {
        offset: u32::MAX,
        resv: 0,
        data: ring.as_raw_fd() as u64,
    };
    // SAFETY: io_uring_register reads and writes the one `RsrcUpdate` passed, which lives
    // across the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring.as_raw_fd(),
            REGISTER_RING_FDS,
            std::ptr::from_mut(&mut up),
            1,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(up.offset)
    }
}

/// Undoes [`register_ring`] (the registration holds the ring open until its thread exits).
fn unregister_ring(ring: &IoUring, index: u32) {
    let up = RsrcUpdate {
        offset: index,
        resv: 0,
        data: 0,
    };
    // SAFETY: as in `register_ring`: the kernel reads the one `RsrcUpdate` passed.
    let _ = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring.as_raw_fd(),
            UNREGISTER_RING_FDS,
            std::ptr::from_ref(&up),
            1,
        )
    };
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
        self.unsubmitted += 1;
    }

    #[inline]
    fn submit(&mut self, wait: bool, timeout_ns: u64) -> io::Result<()> {
        let want = if wait {
            self.complete_min.min(self.outstanding)
        } else {
            0
        };
        // A wait hands the kernel its deadline (IORING_ENTER_EXT_ARG), which the kernel copies
        // in and checks: a tenth of the CPU of a page-cache read. When what is submitted
        // completes within the submitting call (the page cache, a device that answers at
        // once), submitting alone (no deadline) finds the completions already there and no
        // wait is needed. Tried while it works; after a miss, the next INLINE_RETRY waits go
        // to the kernel directly, then it is tried again.
        if want > 0 && self.unsubmitted > 0 {
            if self.inline_retry == 0 {
                self.enter(0, 0)?;
                if self.ring.completion().len() >= want as usize {
                    return Ok(());
                }
                self.inline_retry = INLINE_RETRY;
            } else {
                self.inline_retry -= 1;
            }
        }
        self.enter(want, timeout_ns)
    }

    fn paths(&self) -> Option<RingPaths> {
        Some(UringBackend::paths(self))
    }

    fn syscalls(&self) -> u64 {
        self.entries
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<(Slot<'a>, i32)>) {
        let before = out.len();
        for cqe in self.ring.completion().take(self.complete_max) {
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
        if let Some(i) = self.ring_index {
            unregister_ring(&self.ring, i);
        }
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
pub(super) mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileExt;
    use std::os::unix::net::UnixStream;

    /// A connected pair of sockets: a read from one stays in flight until something is
    /// written to the other.
    pub(in crate::engine) fn pipe() -> (UnixStream, UnixStream) {
        UnixStream::pair().expect("a socket pair")
    }

    /// A read of `len` bytes at offset 0 of target 0.
    pub(in crate::engine) fn read(len: u32) -> IoOp {
        IoOp {
            kind: OpKind::Read,
            target: 0,
            offset: 0,
            len,
            dsync: false,
            atomic: false,
            class: 0,
        }
    }

    #[test]
    fn reads_complete_into_the_slot_and_give_the_token_back() {
        let (r, w) = pipe();
        SlotArena::with(2, 4096, 1, |arena, mut slots| {
            let mut ring =
                match UringBackend::new(vec![r.as_fd()], arena, &UringOptions::default(), &[]) {
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
            let mut ring =
                match UringBackend::new(vec![r.as_fd()], arena, &UringOptions::default(), &[]) {
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

    #[test]
    fn a_wait_submits_alone_first_and_still_waits_when_nothing_completed_inline() {
        let (r, w) = pipe();
        // On the build's disk: a file on tmpfs is read by io_uring's worker threads, not inline.
        let file = tempfile::tempfile_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        file.write_all_at(&[5u8; 4096], 0).unwrap();
        SlotArena::with(2, 4096, 1, |arena, mut slots| {
            let fds = vec![r.as_fd(), file.as_fd()];
            let mut ring = UringBackend::new(fds, arena, &UringOptions::default(), &[]).unwrap();
            // A read of the socket: nothing to read, so submitting alone finds no completion
            // and the wait that follows lasts until its deadline.
            ring.push(slots.pop().unwrap(), &read(4096));
            let t = std::time::Instant::now();
            ring.submit(true, 100_000_000).unwrap();
            assert!(
                t.elapsed() >= std::time::Duration::from_millis(80),
                "{:?}",
                t.elapsed()
            );
            let mut done = Vec::new();
            ring.reap(&mut done);
            assert!(done.is_empty());
            (&w).write_all(b"late").unwrap();
            while done.is_empty() {
                ring.submit(true, 1_000_000_000).unwrap();
                ring.reap(&mut done);
            }
            assert_eq!(done[0].1, 4);
            // A read of a file in the page cache completes within its submission; after the
            // miss above, it is found by the wait that follows the retry count, and always
            // by the one call that submits it.
            for _ in 0..INLINE_RETRY + 2 {
                let slot = done.pop().map(|(s, _)| s).or_else(|| slots.pop()).unwrap();
                ring.push(
                    slot,
                    &IoOp {
                        target: 1,
                        ..read(4096)
                    },
                );
                ring.submit(true, 1_000_000_000).unwrap();
                ring.reap(&mut done);
                assert_eq!(done.len(), 1, "one call submits and finds it");
                assert_eq!(done[0].1, 4096);
            }
            assert_eq!(ring.inline_retry, 0, "back to submitting alone first");
        });
    }
}
