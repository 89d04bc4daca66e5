//! The null backend: every operation completes at once without I/O, so a run measures
//! storlab's own per-I/O cost with every statistic still recorded.

use super::buf::{Slot, SlotArena};
use super::{Backend, IoOp};

/// Completes operations immediately.
pub struct NullBackend<'a> {
    arena: SlotArena<'a>,
    queued: Vec<(Slot<'a>, i32)>,
}

impl<'a> NullBackend<'a> {
    /// A backend over the slots of `arena`.
    pub fn new(arena: SlotArena<'a>) -> Self {
        let slots = arena.slots();
        Self {
            arena,
            queued: Vec::with_capacity(slots),
        }
    }
}

impl<'a> Backend<'a> for NullBackend<'a> {
    #[inline]
    fn slot_buf(&mut self, slot: &Slot<'a>) -> &mut [u8] {
        self.arena.buf(slot)
    }

    #[inline]
    fn push(&mut self, slot: Slot<'a>, op: &IoOp) {
        let res = if op.kind.is_sync() { 0 } else { op.len as i32 };
        self.queued.push((slot, res));
    }

    #[inline]
    fn submit(&mut self, wait: bool, timeout_ns: u64) -> std::io::Result<()> {
        // Nothing will complete: a wait lasts its whole timeout (and no wait, none of it).
        if wait && self.queued.is_empty() && timeout_ns > 0 {
            std::thread::sleep(std::time::Duration::from_nanos(timeout_ns));
        }
        Ok(())
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<(Slot<'a>, i32)>) {
        out.append(&mut self.queued);
    }
}
