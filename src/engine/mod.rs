//! The I/O engines and what they act on: targets, access generators, open-loop pacing, the
//! request sources built from them, and the worker loop, which drives one of three backends
//! (io_uring, psync, null) through the same code so the null engine measures exactly storlab's
//! own per-I/O cost.

pub(crate) mod access;
pub(crate) mod buf;
pub(crate) mod null;
pub(crate) mod pacing;
pub(crate) mod paths;
pub(crate) mod probe;
pub(crate) mod reduce;
pub(crate) mod ring;
pub(crate) mod sample;
pub(crate) mod source;
pub(crate) mod sync;
pub mod target;
pub(crate) mod verify;
pub mod worker;
pub(crate) mod zipf;

use buf::Slot;

/// What an I/O does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// Read `len` bytes at `offset`.
    Read,
    /// Write `len` bytes at `offset`.
    Write,
    /// fdatasync the target.
    Flush,
    /// fsync the target (its metadata too).
    Fsync,
}

impl OpKind {
    /// Whether it syncs the target (fdatasync or fsync) rather than moving data.
    #[inline]
    pub(crate) fn is_sync(self) -> bool {
        matches!(self, OpKind::Flush | OpKind::Fsync)
    }
}

/// One I/O, as a backend receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoOp {
    /// Read, write or flush.
    pub kind: OpKind,
    /// Index into the backend's file table (the job's target index).
    pub target: u32,
    /// Byte offset.
    pub offset: u64,
    /// Bytes.
    pub len: u32,
    /// Write with RWF_DSYNC.
    pub dsync: bool,
    /// Write with RWF_ATOMIC: all of it or none of it, whatever fails.
    pub atomic: bool,
    /// Class id, for reporting.
    pub class: u16,
}

/// A way to perform I/O: queue operations into slots, submit, wait and reap completions. Each
/// slot owns one buffer and holds at most one operation at a time.
///
/// Slots are [`Slot`] tokens of the backend's [`buf::SlotArena`] (brand `'a`): the caller
/// holds the tokens of the free slots, [`Backend::push`] takes one with its operation and
/// [`Backend::reap`] gives it back with the result. So a slot's buffer is reachable
/// ([`Backend::slot_buf`]) only while no operation uses it, which is what lets the io_uring
/// backend hand the buffer to the kernel with no copy and no check.
pub trait Backend<'a> {
    /// The buffer of `slot`, whose token the caller holds (sealed before each write, checked
    /// after each read).
    fn slot_buf(&mut self, slot: &Slot<'a>) -> &mut [u8];
    /// Queues `op` in `slot`; it is not submitted until [`Backend::submit`]. The token comes
    /// back from [`Backend::reap`] with the operation's result.
    fn push(&mut self, slot: Slot<'a>, op: &IoOp);
    /// Submits what is queued; when `wait`, also blocks until at least one completion is
    /// available or `timeout_ns` passes.
    fn submit(&mut self, wait: bool, timeout_ns: u64) -> std::io::Result<()>;
    /// Appends every available completion as (slot, result: bytes, or -errno) to `out`.
    fn reap(&mut self, out: &mut Vec<(Slot<'a>, i32)>);
    /// Which io_uring paths it uses and why any is not (io_uring only).
    fn paths(&self) -> Option<paths::RingPaths> {
        None
    }
    /// The system calls it has made so far (io_uring_enter calls; psync's reads, writes and
    /// syncs): storlab's own count of its cost, per I/O in the results.
    fn syscalls(&self) -> u64 {
        0
    }
}
