//! I/O buffers: one page-aligned region per worker, cut into one slot per outstanding I/O,
//! filled with incompressible data (before each write, [`super::verify`] seals every sector
//! with its header, so no two written sectors are alike). One of the two files allowed
//! `unsafe`.

#![allow(unsafe_code)]

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// Alignment of every slot: a page, enough for O_DIRECT on any device.
pub const ALIGN: usize = 4096;

/// A page-aligned region of `slots` slots of `slot_bytes` bytes each.
pub struct BufArena {
    ptr: NonNull<u8>,
    layout: Layout,
    slot_bytes: usize,
    slots: usize,
}

// SAFETY: the arena owns its allocation exclusively; moving it to another thread moves that
// ownership, and nothing else aliases the memory.
unsafe impl Send for BufArena {}

impl BufArena {
    /// Allocates `slots` slots of at least `slot_bytes` bytes (rounded up to [`ALIGN`]) and fills
    /// them with pseudo-random bytes from `seed`.
    pub fn new(slots: usize, slot_bytes: usize, seed: u64) -> Self {
        let slot_bytes = slot_bytes.max(1).div_ceil(ALIGN) * ALIGN;
        let total = slot_bytes
            .checked_mul(slots.max(1))
            .expect("buffer arena size overflows");
        let layout = Layout::from_size_align(total, ALIGN).expect("valid buffer layout");
        // SAFETY: `layout` has a non-zero size (slot_bytes >= ALIGN and slots >= 1).
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        let mut arena = Self {
            ptr,
            layout,
            slot_bytes,
            slots: slots.max(1),
        };
        fill_random(arena.whole_mut(), seed);
        arena
    }

    /// Bytes per slot.
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// The whole region.
    pub fn whole_mut(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` points to `layout.size()` initialised (zeroed) bytes owned by `self`;
        // the `&mut self` borrow makes this the only live reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }

    /// Start address and length of the region (for io_uring buffer registration).
    pub fn region(&self) -> (*mut u8, usize) {
        (self.ptr.as_ptr(), self.layout.size())
    }

    /// Pointer to the start of slot `i`.
    #[inline]
    pub fn slot_ptr(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.slots);
        // SAFETY: i < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.as_ptr().add(i * self.slot_bytes) }
    }

    /// Slot `i`, mutable.
    #[inline]
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        assert!(i < self.slots, "slot {i} out of {}", self.slots);
        // SAFETY: the slot lies inside the allocation (checked above) and `&mut self` makes this
        // the only reference to it.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(i), self.slot_bytes) }
    }
}

impl Drop for BufArena {
    fn drop(&mut self) {
        // SAFETY: `ptr` was allocated with exactly `layout` and is freed once, here.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Fills `buf` with fast pseudo-random bytes (xorshift-multiply stream seeded by `seed`).
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    for chunk in buf.chunks_mut(8) {
        state = splitmix(state);
        chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
    }
}

/// SplitMix64 step: a well-mixed 64-bit value from a counter.
#[inline]
pub fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_distinct() {
        let mut a = BufArena::new(4, 5000, 1);
        assert_eq!(a.slot_bytes(), 8192);
        for i in 0..4 {
            assert_eq!(a.slot_ptr(i) as usize % ALIGN, 0);
        }
        let first = a.slot_mut(0)[..64].to_vec();
        assert_ne!(first, a.slot_mut(1)[..64].to_vec());
        assert!(first.iter().any(|&b| b != 0));
    }
}
