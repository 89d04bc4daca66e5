//! I/O buffers: one page-aligned region per worker, cut into one slot per outstanding I/O,
//! filled with incompressible data (before each write, [`super::verify`] seals every sector
//! with its header and a payload made anew by [`fresh_payload`], so no two written sectors are
//! alike, nor any part of one like another's). A region whose slots span more than
//! a page is mapped on huge-page boundaries and asks for transparent huge pages, so that each
//! I/O's buffer is physically contiguous where the kernel grants them: one scatter-gather
//! segment a request instead of one a page (docs/methodology.md, "I/O buffers"). One of the two
//! files allowed `unsafe`.
//!
//! A worker's slots are reached only through [`Slot`] tokens: one per slot, created here with
//! its [`SlotArena`], neither `Copy` nor `Clone`. Whoever holds a slot's token may use its
//! buffer; a backend takes the token when the slot's I/O is queued and hands it back with the
//! completion, so no safe code can reach a buffer the kernel may be reading or writing. Tokens
//! are branded with their arena (the lifetime `'a`, fresh for every [`SlotArena::with`]), so a
//! token of one arena cannot be used with another. All of it is checked at compile time: a
//! token is a `u32`.

#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::ptr::NonNull;

/// Alignment of every slot: a page, enough for O_DIRECT on any device.
pub(crate) const ALIGN: usize = 4096;

/// Size and alignment of a transparent huge page (the PMD size of x86-64 and arm64 with 4 KiB
/// pages).
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// A page-aligned region of `slots` slots of `slot_bytes` bytes each, in an anonymous mapping
/// of its own.
pub(crate) struct BufArena {
    ptr: NonNull<u8>,
    /// The mapping: its start and length (the region lies inside it).
    map: (*mut libc::c_void, usize),
    slot_bytes: usize,
    slots: usize,
}

// SAFETY: the arena owns its allocation exclusively; moving it to another thread moves that
// ownership, and nothing else aliases the memory.
unsafe impl Send for BufArena {}

impl BufArena {
    /// Allocates `slots` slots of at least `slot_bytes` bytes (rounded up to [`ALIGN`]) and fills
    /// them with pseudo-random bytes from `seed`.
    pub(crate) fn new(slots: usize, slot_bytes: usize, seed: u64) -> Self {
        let slot_bytes = slot_bytes.max(1).div_ceil(ALIGN) * ALIGN;
        let total = slot_bytes
            .checked_mul(slots.max(1))
            .expect("buffer arena size overflows");
        // Slots of one page gain nothing from huge pages (an I/O's buffer is one page anyway).
        let huge = slot_bytes > ALIGN;
        let (len, slack) = if huge {
            (total.div_ceil(HUGE_PAGE) * HUGE_PAGE, HUGE_PAGE)
        } else {
            (total, 0)
        };
        let map_len = len + slack;
        // SAFETY: a fresh private anonymous mapping: no file, no address hint, no memory of
        // anyone else's; the kernel zeroes it.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            panic!("cannot map {map_len} bytes of I/O buffers: {e}");
        }
        let start = (map as usize).next_multiple_of(if huge { HUGE_PAGE } else { ALIGN });
        let ptr = NonNull::new(start as *mut u8).expect("mmap returns a non-null address");
        if huge {
            // SAFETY: `start..start + len` lies inside the mapping (its `slack` covers the
            // rounding up to a huge-page boundary); advice changes no data. Without
            // transparent huge pages (`never`, or none free) the advice fails or is not
            // followed, and the region is made of pages as any other: nothing to handle.
            unsafe {
                libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
        let mut arena = Self {
            ptr,
            map: (map, map_len),
            slot_bytes,
            slots: slots.max(1),
        };
        fill_random(arena.whole_mut(), seed);
        arena
    }

    /// Bytes per slot.
    #[cfg(test)]
    pub(crate) fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// The whole region.
    pub(crate) fn whole_mut(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` points to `size()` initialised (zeroed by the kernel) bytes of the
        // mapping `self` owns; the `&mut self` borrow makes this the only live reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.size()) }
    }

    /// Bytes of the slots.
    fn size(&self) -> usize {
        self.slot_bytes * self.slots
    }

    /// Start address and length of the region (for io_uring buffer registration).
    pub(crate) fn region(&self) -> (*mut u8, usize) {
        (self.ptr.as_ptr(), self.size())
    }

    /// Pointer to the start of slot `i`.
    #[inline]
    pub(crate) fn slot_ptr(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.slots);
        // SAFETY: i < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.as_ptr().add(i * self.slot_bytes) }
    }

    /// Slot `i`, mutable.
    #[inline]
    pub(crate) fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        assert!(i < self.slots, "slot {i} out of {}", self.slots);
        // SAFETY: the slot lies inside the allocation (checked above) and `&mut self` makes this
        // the only reference to it.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(i), self.slot_bytes) }
    }
}

impl Drop for BufArena {
    fn drop(&mut self) {
        // SAFETY: `map` is the mapping made in `new`, unmapped once, here; nothing refers to
        // it after the arena (a backend keeps its arena until its last I/O has completed).
        unsafe {
            libc::munmap(self.map.0, self.map.1);
        }
    }
}

/// Ties a [`Slot`] to its [`SlotArena`]: invariant in `'a`, so the compiler can neither
/// shrink nor grow one arena's brand into another's.
type Brand<'a> = PhantomData<fn(&'a ()) -> &'a ()>;

/// The right to one slot's buffer. Only this module creates one (each slot's, once, in
/// [`SlotArena::with`]), and it is neither `Copy` nor `Clone`: at any time at most one token of
/// a slot exists, and none while the slot's I/O is in flight (the backend consumed it).
#[derive(Debug, PartialEq, Eq)]
pub struct Slot<'a> {
    index: u32,
    _brand: Brand<'a>,
}

impl<'a> Slot<'a> {
    /// The slot's index (0 to slots − 1): for the holder's own bookkeeping; it gives no access
    /// to the buffer.
    #[inline]
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// Gives the token up for an I/O handed to the kernel; the index travels with the I/O (as
    /// its user data) and [`Slot::from_raw`] turns it back into the token on completion.
    #[inline]
    pub(super) fn into_raw(self) -> u32 {
        self.index
    }

    /// The token given up by [`Slot::into_raw`].
    ///
    /// # Safety
    ///
    /// `index` must be what `into_raw` returned for a token of this same arena (brand `'a`),
    /// at most once per `into_raw`, and the I/O that took it must have completed: then no
    /// other token of the slot exists and the kernel no longer uses its buffer.
    #[inline]
    pub(super) unsafe fn from_raw(index: u32) -> Slot<'a> {
        Slot {
            index,
            _brand: PhantomData,
        }
    }
}

/// A `BufArena` whose slots are reached only with their [`Slot`] tokens.
pub struct SlotArena<'a> {
    arena: BufArena,
    _brand: Brand<'a>,
}

impl SlotArena<'_> {
    /// Allocates `slots` slots of at least `slot_bytes` bytes (see [`BufArena::new`]) and calls
    /// `f` with the arena and the token of every slot, in slot order. The brand `'a` is new to
    /// this call (`f` must accept any lifetime), so these tokens fit this arena only, and
    /// neither can leave `f`.
    ///
    /// ```
    /// use storlab::testing::SlotArena;
    /// SlotArena::with(2, 4096, 0, |mut arena, slots| arena.buf(&slots[1])[0] = 1);
    /// ```
    ///
    /// A token of another arena does not fit:
    ///
    /// ```compile_fail,E0521
    /// use storlab::testing::SlotArena;
    /// SlotArena::with(2, 4096, 0, |mut arena, _| {
    ///     SlotArena::with(2, 4096, 0, |_, other| arena.buf(&other[1])[0] = 1);
    /// });
    /// ```
    ///
    /// and tokens do not outlive their arena:
    ///
    /// ```compile_fail
    /// use storlab::testing::SlotArena;
    /// let slots = SlotArena::with(2, 4096, 0, |_, slots| slots);
    /// ```
    pub fn with<R>(
        slots: usize,
        slot_bytes: usize,
        seed: u64,
        f: impl for<'a> FnOnce(SlotArena<'a>, Vec<Slot<'a>>) -> R,
    ) -> R {
        let arena = BufArena::new(slots, slot_bytes, seed);
        let tokens = (0..arena.slots as u32)
            .map(|index| Slot {
                index,
                _brand: PhantomData,
            })
            .collect();
        f(
            SlotArena {
                arena,
                _brand: PhantomData,
            },
            tokens,
        )
    }
}

impl<'a> SlotArena<'a> {
    /// Bytes per slot.
    #[cfg(test)]
    pub(crate) fn slot_bytes(&self) -> usize {
        self.arena.slot_bytes
    }

    /// Number of slots.
    pub(crate) fn slots(&self) -> usize {
        self.arena.slots
    }

    /// Start address and length of the region (for io_uring buffer registration).
    pub(crate) fn region(&self) -> (*mut u8, usize) {
        self.arena.region()
    }

    /// Where the buffer of `slot` starts (to hand to the kernel with the slot's I/O).
    #[inline]
    pub(crate) fn ptr(&self, slot: &Slot<'a>) -> *mut u8 {
        self.arena.slot_ptr(slot.index as usize)
    }

    /// The buffer of `slot`, to whoever holds its token.
    #[inline]
    pub fn buf(&mut self, slot: &Slot<'a>) -> &mut [u8] {
        // SAFETY: a token's index is below `slots` (tokens are made only in `with`, for 0 to
        // slots − 1, and `from_raw` takes back only such an index), so the slot lies inside
        // the allocation. `&mut self` excludes every other reference made through this arena,
        // and holding the token means the slot's I/O is not in flight, so the kernel does not
        // touch these bytes either.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(slot), self.arena.slot_bytes) }
    }
}

/// Fills `buf` with fast pseudo-random bytes (xorshift-multiply stream seeded by `seed`).
pub(crate) fn fill_random(buf: &mut [u8], seed: u64) {
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    for chunk in buf.chunks_mut(8) {
        state = splitmix(state);
        chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
    }
}

/// Bytes of the span written payloads start in (16 KiB: the table stays in the L1 cache).
const PAYLOAD_SPAN: usize = 16 << 10;

/// The table written payloads are drawn from: pseudo-random bytes, the same in every run, a
/// sector longer than [`PAYLOAD_SPAN`] (a payload may start anywhere in the span).
fn payload_table() -> &'static [u8] {
    static TABLE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = vec![0u8; PAYLOAD_SPAN + 512];
        fill_random(&mut t, 0x7061_796C_6F61_6421);
        t
    })
}

/// Fills `payload` (at most 512 bytes, a sector's after its header) with pseudo-random bytes
/// no other written sector has, whatever it held: a stretch of the table at a place `key` (the
/// sector's tag, unique to its target, offset, version and run) chooses, each 8 bytes XORed
/// with a word drawn from `key`. Two payloads match in a run of bytes only where their words
/// agree byte for byte (about once in 2^32 for 4 bytes), so no compressor, whatever its
/// window, finds one sector's payload in another's. A load, an XOR and a store per 32 bytes
/// with AVX2 (per 16 without): about 70 instructions a sector in release builds
/// (docs/performance.md, "Fresh payloads").
#[inline]
pub(crate) fn fresh_payload(payload: &mut [u8], key: u64) {
    let mix = splitmix(key);
    let start = (mix as usize) & (PAYLOAD_SPAN - 8);
    let source = &payload_table()[start..start + payload.len()];
    let whole = payload.len() / 8 * 8;
    let (words, tail) = payload.split_at_mut(whole);
    let (from, from_tail) = source.split_at(whole);
    xor_words(words, from, mix);
    for (b, (s, k)) in tail.iter_mut().zip(from_tail.iter().zip(mix.to_ne_bytes())) {
        *b = s ^ k;
    }
}

/// Each 8 bytes of `to` the 8 of `from` XORed with `mix`: in AVX2's 32-byte registers where the CPU has them (a third of the
/// instructions SSE2's 16-byte ones take), else as the target allows.
fn xor_words(to: &mut [u8], from: &[u8], mix: u64) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `xor_words_avx2` needs nothing but AVX2, which this CPU has (just checked).
        unsafe { xor_words_avx2(to, from, mix) };
        return;
    }
    xor_words_as_built(to, from, mix);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn xor_words_avx2(to: &mut [u8], from: &[u8], mix: u64) {
    xor_words_as_built(to, from, mix);
}

#[inline(always)]
fn xor_words_as_built(to: &mut [u8], from: &[u8], mix: u64) {
    for (w, s) in to.chunks_exact_mut(8).zip(from.chunks_exact(8)) {
        let mut word = [0u8; 8];
        word.copy_from_slice(s);
        w.copy_from_slice(&(u64::from_ne_bytes(word) ^ mix).to_ne_bytes());
    }
}

/// SplitMix64 step: a well-mixed 64-bit value from a counter.
#[inline]
pub(crate) fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_payloads_are_whole_unique_and_do_not_compress_as_a_stream() {
        // Whatever the buffer held (zeros, or the same bytes again), every byte is set and
        // depends on the key only.
        let mut a = [0u8; 456 - 7];
        let mut b = [0xAAu8; 456 - 7];
        fresh_payload(&mut a, 42);
        fresh_payload(&mut b, 42);
        assert_eq!(a, b);
        fresh_payload(&mut b, 43);
        assert_ne!(a[..16], b[..16]);
        assert_ne!(a[440..], b[440..]);
        // 2 MiB of sectors written one after another from one buffer, each with its own
        // key, as a run writes them: deflate as one stream finds nothing to take out.
        let mut stream = Vec::new();
        let mut sector = [0u8; 456];
        for key in 0..4600u64 {
            fresh_payload(&mut sector, splitmix(key));
            stream.extend_from_slice(&sector);
        }
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut z, &stream).unwrap();
        let packed = z.finish().unwrap().len();
        assert!(
            packed >= stream.len(),
            "{} bytes deflate to {packed}",
            stream.len()
        );
    }

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

    #[test]
    #[allow(clippy::print_stderr, reason = "a skipped check says why")]
    fn multi_page_slots_lie_on_huge_page_boundaries_eligible_for_huge_pages() {
        let small = BufArena::new(4, 4096, 1);
        assert_eq!(small.region().0 as usize % ALIGN, 0);
        assert_eq!(small.region().1, 4 * 4096);
        let mut a = BufArena::new(8, 128 << 10, 1);
        let (start, len) = a.region();
        assert_eq!(start as usize % HUGE_PAGE, 0);
        assert_eq!(len, 8 << 17);
        // Filled, like any arena.
        assert!(a.slot_mut(7)[..64].iter().any(|&b| b != 0));
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if thp.is_empty() || thp.contains("[never]") {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
            assert!(
                !ci,
                "transparent huge pages are off here ({thp:?}): cannot check under CI"
            );
            eprintln!("skipped the huge-page eligibility check: transparent huge pages are off");
            return;
        }
        // The mapping holding the arena is eligible for huge pages (advised, and big and
        // aligned enough); whether the kernel finds free ones is its business.
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut holds = false;
        for line in smaps.lines() {
            let range = line.split_once(' ').and_then(|(r, _)| r.split_once('-'));
            if let Some((lo, hi)) = range {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    holds = (lo..hi).contains(&(start as usize));
                    continue;
                }
            }
            if holds && line.starts_with("THPeligible:") {
                assert_eq!(line.split_whitespace().nth(1), Some("1"), "{line}");
                return;
            }
        }
        panic!("no mapping of /proc/self/smaps holds the arena at {start:?}");
    }

    #[test]
    fn every_slot_has_one_token_in_order() {
        SlotArena::with(3, 4096, 1, |mut arena, tokens| {
            assert_eq!(arena.slots(), 3);
            let indexes: Vec<u32> = tokens.iter().map(Slot::index).collect();
            assert_eq!(indexes, [0, 1, 2]);
            let base = arena.region().0 as usize;
            for t in &tokens {
                assert_eq!(arena.ptr(t) as usize, base + t.index() as usize * 4096);
                assert_eq!(arena.buf(t).len(), arena.slot_bytes());
            }
            arena.buf(&tokens[1]).fill(7);
            assert!(arena.buf(&tokens[1]).iter().all(|&b| b == 7));
            assert!(arena.buf(&tokens[0]).iter().any(|&b| b != 7));
        });
    }
}
