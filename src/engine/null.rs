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

    // Everything queued completes at the next reap; a worker with nothing in flight sleeps
    // on its own (`crate::bell`), so there is never anything to wait for.
    #[inline]
    fn submit(&mut self, _wait: bool, _timeout_ns: u64) -> std::io::Result<()> {
        Ok(())
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<(Slot<'a>, i32)>) {
        out.append(&mut self.queued);
    }
}
