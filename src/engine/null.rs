//! The null backend: every operation completes at once without I/O, so a run measures
//! storlab's own per-I/O cost with every statistic still recorded.

use super::buf::BufArena;
use super::{Backend, IoOp, OpKind};

/// Completes operations immediately.
pub struct NullBackend {
    arena: BufArena,
    queued: Vec<(u32, i32)>,
}

impl NullBackend {
    /// A backend with `slots` buffers of `slot_bytes`.
    pub fn new(slots: usize, slot_bytes: usize, seed: u64) -> Self {
        Self {
            arena: BufArena::new(slots, slot_bytes, seed),
            queued: Vec::with_capacity(slots),
        }
    }
}

impl Backend for NullBackend {
    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        self.arena.slot_mut(slot as usize)
    }

    #[inline]
    fn push(&mut self, slot: u32, op: &IoOp) {
        let res = if op.kind == OpKind::Flush {
            0
        } else {
            op.len as i32
        };
        self.queued.push((slot, res));
    }

    #[inline]
    fn submit(&mut self, _wait: bool, timeout_ns: u64) -> std::io::Result<()> {
        if self.queued.is_empty() && timeout_ns > 0 {
            std::thread::sleep(std::time::Duration::from_nanos(timeout_ns));
        }
        Ok(())
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<(u32, i32)>) {
        out.append(&mut self.queued);
    }
}
