//! Data verification: the self-describing sector format every block storlab writes carries,
//! the table of what each block should hold, and the checks of what was read.
//!
//! Every 512-byte sector storlab writes, whether preparing a file or during a run, starts with
//! a header:
//!
//! | bytes  | field                                                              |
//! |--------|--------------------------------------------------------------------|
//! | 0..8   | magic `stlbVRFY`                                                   |
//! | 8..12  | checksum: low 32 bits of the xxh3-64 of bytes 12..512              |
//! | 12..16 | kind: 0 prepared, 1 written by a verifying run, 2 written by a run |
//! |        | without verification (no checksum: not checkable)                  |
//! | 16..24 | target identity (the file's data seed from its manifest)           |
//! | 24..32 | the sector's own byte offset in the target                         |
//! | 32..40 | run id (0 when prepared)                                           |
//! | 40..48 | write version of the block (0 when prepared)                       |
//! | 48..56 | tag: pseudo-random (from run, version and offset), the payload's key |
//!
//! The rest of the sector is pseudo-random data, made anew for every sector a run writes
//! ([`super::buf::fresh_payload`]). Runs without verification write the header too, without
//! the checksum (it costs about 0.4 µs per 4 KiB), so a later verifying run still finds every
//! sector where it belongs and counts those blocks as unchecked.
//!
//! A sector of reduced data (zero after some bytes, `[data] compress`) has its bytes 0..48
//! masked with a keystream drawn from its tag (`mask_header`): its header is as
//! incompressible as its payload, so every compressor at every unit finds the same
//! compressible bytes, the zeros. (A plain header repeats from sector to sector, which
//! compressors with entropy coding and large units exploit far more than others.) A read
//! unmasks a sector whose magic is not in the clear.
//!
//! A *block* (the verification unit) is the largest size every I/O of the job is a multiple
//! of and aligned to; the [`VerifyMap`] holds, per block, the version of its last acknowledged
//! write and a lock: a block is never read while it is being written, nor written by two I/Os
//! at once, so what a read must find is always known exactly. A read then tells apart:
//!
//! - **corrupted**: a sector whose checksum or magic is wrong (bit rot, another writer);
//! - **misdirected**: a valid sector that belongs to another offset or another target;
//! - **lost**: valid, but older than the last acknowledged write (a lost or stale write);
//! - **torn**: some sectors of the block from the last write and some from an older one.
//!
//! Reduced data (`[data]`): see [`super::reduce`] for its sectors (copies of pool entries have
//! kinds 3 and 4) and how a read still knows what it must find.

use super::reduce::{CopyState, KIND_COPY, KIND_COPY_UNCHECKED, Reduction};
use crate::stats::verification::{ERROR_DETAILS, VerifyCounts, VerifyError, VerifyErrorKind};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes per self-describing sector.
pub(crate) const SECTOR: usize = 512;
/// Bytes of header at the start of every sector.
#[cfg(test)]
pub(crate) const HEADER_BYTES: usize = 48;
/// The magic at the start of every sector storlab writes.
pub(crate) const MAGIC: [u8; 8] = *b"stlbVRFY";

const KIND_PREPARED: u32 = 0;
pub(super) const KIND_RUN: u32 = 1;
pub(super) const KIND_UNCHECKED: u32 = 2;
/// Bytes of header a reduced sector masks: everything before the tag.
const MASKED: usize = 48;

/// Seals every sector of `chunk`, which starts at byte `offset` of a target with identity
/// `target_id`, as prepared data (run 0, version 0). `chunk` already holds random data.
pub(crate) fn seal_prepared(chunk: &mut [u8], target_id: u64, offset: u64) {
    for (i, sector) in chunk.chunks_exact_mut(SECTOR).enumerate() {
        seal_sector(
            sector,
            KIND_PREPARED,
            target_id,
            offset + (i * SECTOR) as u64,
            0,
            0,
            SECTOR,
        );
    }
}

/// Seals one sector; its bytes from `keep` on are zeroed (`SECTOR`: none are, and the header
/// stays in the clear; otherwise it is masked, [`mask_header`]).
pub(super) fn seal_sector(
    sector: &mut [u8],
    kind: u32,
    target_id: u64,
    offset: u64,
    run: u64,
    version: u64,
    keep: usize,
) {
    sector[0..8].copy_from_slice(&MAGIC);
    sector[12..16].copy_from_slice(&kind.to_le_bytes());
    sector[16..24].copy_from_slice(&target_id.to_le_bytes());
    sector[24..32].copy_from_slice(&offset.to_le_bytes());
    sector[32..40].copy_from_slice(&run.to_le_bytes());
    sector[40..48].copy_from_slice(&version.to_le_bytes());
    // The tag, and the payload of a sector a run writes made anew from it (prepared data is
    // already unique): no part of it like another sector's, so the data a run writes does not
    // compress as a stream, whatever the I/O buffer held before (a read, an earlier write).
    let tag = crate::engine::buf::splitmix(run ^ version.rotate_left(32) ^ offset);
    sector[48..56].copy_from_slice(&tag.to_le_bytes());
    if kind != KIND_PREPARED {
        crate::engine::buf::fresh_payload(&mut sector[56..keep.max(56)], tag);
    }
    if keep < SECTOR {
        sector[keep..].fill(0);
    }
    let crc = (kind != KIND_UNCHECKED).then(|| sector_crc(sector));
    sector[8..12].copy_from_slice(&crc.unwrap_or(0).to_le_bytes());
    if keep < SECTOR {
        mask_header(sector);
    }
}

/// Masks (or unmasks: the same operation) bytes 0..48 of a sector with a keystream drawn from
/// its tag (bytes 48..56), as a payload is ([`crate::engine::buf::fresh_payload`]), so that a
/// header looks like random data to a compressor and no two sectors' headers share a run of
/// bytes.
pub(super) fn mask_header(sector: &mut [u8]) {
    let mut key = [0u8; MASKED];
    crate::engine::buf::fresh_payload(&mut key, u64_at(sector, MASKED) ^ 0x6D61_736B_2D68_6472);
    for (b, k) in sector[..MASKED].iter_mut().zip(key) {
        *b ^= k;
    }
}

pub(super) fn sector_crc(sector: &[u8]) -> u32 {
    // xxh3 of the sector after the checksum field, seeded with the magic and the field's
    // place: the magic is compared separately.
    xxhash_rust::xxh3::xxh3_64(&sector[12..]) as u32
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

/// What one sector turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sector {
    /// Bad magic or checksum.
    Bad,
    /// A valid sector of another offset or target: (its target id, its offset).
    Elsewhere(u64, u64),
    /// A valid sector of this place: (run id, version).
    Here(u64, u64),
    /// A sector of this place written without a checksum (a run without verification), or
    /// a copy of a pool entry without one.
    Unchecked,
    /// A valid copy of a pool entry: (pool, entry, the sector's place in the unit).
    Copy(u64, u64, u64),
}

fn read_sector(sector: &[u8], target_id: u64, offset: u64) -> Sector {
    if sector[0..8] != MAGIC && sector.len() == SECTOR {
        // A sector of reduced data, its header masked (or not storlab's at all).
        let mut clear = [0u8; SECTOR];
        clear.copy_from_slice(sector);
        mask_header(&mut clear);
        return read_clear(&clear, target_id, offset);
    }
    read_clear(sector, target_id, offset)
}

/// [`read_sector`] of a sector whose header is in the clear.
fn read_clear(sector: &[u8], target_id: u64, offset: u64) -> Sector {
    let kind = u32_at(sector, 12);
    let checked = kind == KIND_PREPARED || kind == KIND_RUN || kind == KIND_COPY;
    if sector[0..8] != MAGIC
        || !(checked || kind == KIND_UNCHECKED || kind == KIND_COPY_UNCHECKED)
        || (checked && u32_at(sector, 8) != sector_crc(sector))
    {
        return Sector::Bad;
    }
    match kind {
        KIND_COPY => {
            return Sector::Copy(u64_at(sector, 16), u64_at(sector, 24), u64_at(sector, 40));
        }
        KIND_COPY_UNCHECKED => return Sector::Unchecked,
        _ => {}
    }
    let (id, off) = (u64_at(sector, 16), u64_at(sector, 24));
    if id != target_id || off != offset {
        return Sector::Elsewhere(id, off);
    }
    if !checked {
        return Sector::Unchecked;
    }
    Sector::Here(u64_at(sector, 32), u64_at(sector, 40))
}

// Block state bits: version (low 40 bits), readers (16 bits), unknown, writer.
const VERSION_MASK: u64 = (1 << 40) - 1;
const READER_ONE: u64 = 1 << 40;
const READERS_MASK: u64 = 0xFFFF << 40;
const UNKNOWN: u64 = 1 << 62;
const WRITER: u64 = 1 << 63;

/// What one target's blocks should hold.
pub struct TargetMap {
    /// Identity written into every sector (the file's data seed).
    pub id: u64,
    states: Box<[AtomicU64]>,
}

/// What every block of every target should hold, shared by the workers of a run. Without
/// verification it only knows the targets' identities, to seal what the run writes.
pub struct VerifyMap {
    /// Bytes per block.
    pub block: u64,
    /// This run's id (in every sector it writes).
    pub run: u64,
    /// Per target.
    pub targets: Vec<TargetMap>,
    /// Whether every block is tracked and checked (verification), or writes are only sealed.
    pub track: bool,
    /// Reduced data (`[data]`): how writes are built.
    pub reduce: Option<Reduction>,
    /// Without tracking, reduced writes number themselves (in place of a version), so that
    /// rewriting an offset does not write the same unique unit again.
    writes: AtomicU64,
}

/// A target as the map needs it.
pub struct MapTarget {
    /// Usable size in bytes.
    pub size_bytes: u64,
    /// Identity of prepared data (the manifest's data seed): every sector carries a header
    /// from preparation. `None` (a block device, a file storlab did not prepare): blocks are
    /// unknown until the run writes them.
    pub prepared_id: Option<u64>,
}

impl VerifyMap {
    /// Bytes of memory a map of these targets at `block` bytes per block takes.
    pub(crate) fn memory_bytes(targets: &[MapTarget], block: u64) -> u64 {
        targets
            .iter()
            .map(|t| t.size_bytes / block * 8)
            .sum::<u64>()
    }

    /// A map for `targets` with `block` bytes per block (a multiple of [`SECTOR`]); `track`:
    /// verify (track every block), or only seal writes (kind 2, no checksum).
    pub fn new(targets: &[MapTarget], block: u64, run: u64, track: bool) -> VerifyMap {
        let targets = targets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let initial = if t.prepared_id.is_some() { 0 } else { UNKNOWN };
                TargetMap {
                    id: t
                        .prepared_id
                        .unwrap_or_else(|| crate::engine::buf::splitmix(run ^ i as u64)),
                    states: (0..if track { t.size_bytes / block } else { 0 })
                        .map(|_| AtomicU64::new(initial))
                        .collect(),
                }
            })
            .collect();
        VerifyMap {
            block,
            run,
            targets,
            track,
            reduce: None,
            writes: AtomicU64::new(0),
        }
    }

    /// The map writing data reduced as `asked` (nothing changes when it asks no reduction).
    pub(crate) fn with_reduction(mut self, asked: crate::job::data::DataReduction) -> VerifyMap {
        self.reduce = Reduction::new(asked, self.run, self.track);
        self
    }

    fn blocks(&self, offset: u64, len: u32) -> std::ops::Range<usize> {
        let first = (offset / self.block) as usize;
        first..first + (len as u64).div_ceil(self.block) as usize
    }

    /// Whether an I/O at `offset` of `len` bytes covers whole blocks, as every I/O of a
    /// verifying run must (its blocks are sealed and checked whole).
    pub(crate) fn aligned(&self, offset: u64, len: u32) -> bool {
        offset % self.block == 0 && u64::from(len) % self.block == 0
    }

    /// Locks the blocks of an I/O: shared for a read, exclusive for a write. All or nothing:
    /// false (and nothing held) when one is busy; the caller retries later.
    pub fn lock(&self, target: u32, offset: u64, len: u32, write: bool) -> bool {
        let states = &self.targets[target as usize].states;
        let range = self.blocks(offset, len);
        for b in range.clone() {
            let Some(s) = states.get(b) else {
                // Beyond the map (a tail shorter than a block): nothing to lock.
                continue;
            };
            if !try_lock(s, write) {
                for held in range.start..b {
                    unlock(&states[held], write, None);
                }
                return false;
            }
        }
        true
    }

    /// The identity written into the sectors of `target` and its blocks' states. A target
    /// beyond the map (a file of a file-system workload's tree, which a workload's own backend
    /// writes: the job has no such target) has no states, and an identity of its own from the
    /// run and its number, as a target the run did not prepare.
    fn identity(&self, target: u32) -> (u64, &[AtomicU64]) {
        match self.targets.get(target as usize) {
            Some(t) => (t.id, &t.states),
            None => (
                crate::engine::buf::splitmix(self.run ^ u64::from(target)),
                &[],
            ),
        }
    }

    /// Seals the sectors of a write into `buf` (its blocks locked for writing): each carries
    /// the version its block will have when the write is acknowledged. A `copy` (a cache
    /// tier moving acknowledged data, its blocks held shared) carries their current versions.
    pub fn seal(&self, buf: &mut [u8], target: u32, offset: u64, len: u32, copy: bool) {
        if let Some(r) = &self.reduce {
            self.seal_reduced(r, buf, target, offset, len, copy);
            return;
        }
        let (id, states) = self.identity(target);
        for (i, sector) in buf[..len as usize].chunks_exact_mut(SECTOR).enumerate() {
            let off = offset + (i * SECTOR) as u64;
            let b = (off / self.block) as usize;
            let version = states.get(b).map_or(0, |s| {
                (s.load(Ordering::Relaxed) & VERSION_MASK) + u64::from(!copy)
            });
            let kind = if self.track { KIND_RUN } else { KIND_UNCHECKED };
            seal_sector(sector, kind, id, off, self.run, version, SECTOR);
        }
    }

    /// [`VerifyMap::seal`] with reduced data: each dedupe unit unique or a copy of the pool
    /// entry its (target, offset, version) chooses, each sector zero after `keep` bytes.
    fn seal_reduced(
        &self,
        r: &Reduction,
        buf: &mut [u8],
        target: u32,
        offset: u64,
        len: u32,
        copy: bool,
    ) {
        let (id, states) = self.identity(target);
        let nonce = if self.track {
            0
        } else {
            self.writes.fetch_add(1, Ordering::Relaxed) + 1
        };
        let kind = if self.track { KIND_RUN } else { KIND_UNCHECKED };
        // (unit offset, version, its choice) of the sector before.
        let mut last: Option<(u64, u64, Option<u64>)> = None;
        for (i, sector) in buf[..len as usize].chunks_exact_mut(SECTOR).enumerate() {
            let off = offset + (i * SECTOR) as u64;
            let version = if self.track {
                let b = (off / self.block) as usize;
                states.get(b).map_or(0, |s| {
                    (s.load(Ordering::Relaxed) & VERSION_MASK) + u64::from(!copy)
                })
            } else {
                nonce
            };
            let unit = r.unit_of(off);
            let choice = match last {
                Some((u, v, c)) if u == unit && v == version => c,
                _ => r.choice(id, unit, version),
            };
            last = Some((unit, version, choice));
            match choice {
                Some(entry) => {
                    let index = (off - unit) / SECTOR as u64;
                    r.seal_copy(sector, entry, self.run, index, self.track);
                }
                None => seal_sector(sector, kind, id, off, self.run, version, r.keep),
            }
        }
    }

    /// A write completed (`ok`) or failed: its blocks get their new version (or become
    /// unknown), and are unlocked.
    pub fn written(&self, target: u32, offset: u64, len: u32, ok: bool) {
        let states = &self.targets[target as usize].states;
        for b in self.blocks(offset, len) {
            if let Some(s) = states.get(b) {
                unlock(s, true, Some(ok));
            }
        }
    }

    /// A copy's write completed (see [`VerifyMap::seal`]): its blocks are released, their
    /// versions unchanged.
    pub(crate) fn release(&self, target: u32, offset: u64, len: u32) {
        let states = &self.targets[target as usize].states;
        for b in self.blocks(offset, len) {
            if let Some(s) = states.get(b) {
                unlock(s, false, None);
            }
        }
    }

    /// A read completed: checks every block of `buf` (when `ok`), counts into `counts`, and
    /// unlocks the blocks.
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &self,
        buf: &[u8],
        target: u32,
        offset: u64,
        len: u32,
        ok: bool,
        phase: &str,
        t_ms: u64,
        counts: &mut VerifyCounts,
    ) {
        let states = &self.targets[target as usize].states;
        for b in self.blocks(offset, len) {
            let Some(s) = states.get(b) else { continue };
            if ok {
                let state = s.load(Ordering::Relaxed);
                let start = (b as u64 * self.block - offset) as usize;
                let data = &buf[start..start + self.block as usize];
                self.check(data, target as usize, b, state, phase, t_ms, counts);
            }
            unlock(s, false, None);
        }
    }

    /// Checks one block's `data` against its `state`.
    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        data: &[u8],
        target: usize,
        block: usize,
        state: u64,
        phase: &str,
        t_ms: u64,
        counts: &mut VerifyCounts,
    ) {
        if state & UNKNOWN != 0 {
            counts.blocks_unchecked += 1;
            return;
        }
        counts.blocks_checked += 1;
        let t = &self.targets[target];
        let base = block as u64 * self.block;
        let expected = state & VERSION_MASK;
        let mut current = 0usize;
        let mut older = 0usize;
        let mut unchecked = 0usize;
        let mut first_odd: Option<(usize, Sector)> = None;
        let mut kind = None;
        for (i, sector) in data.chunks_exact(SECTOR).enumerate() {
            let off = base + (i * SECTOR) as u64;
            let s = read_sector(sector, t.id, off);
            // With reduced data: the pool entry the last write put here, and this sector's
            // place in it (`None`: unique data).
            let copy = self.reduce.as_ref().filter(|_| expected > 0).and_then(|r| {
                let unit = r.unit_of(off);
                r.choice(t.id, unit, expected)
                    .map(|e| (e, (off - unit) / SECTOR as u64))
            });
            match s {
                Sector::Bad => {
                    kind = Some(VerifyErrorKind::Corrupted);
                    first_odd.get_or_insert((i, s));
                    break;
                }
                Sector::Elsewhere(..) => {
                    kind.get_or_insert(VerifyErrorKind::Misdirected);
                    first_odd.get_or_insert((i, s));
                }
                Sector::Unchecked => {
                    unchecked += 1;
                    older += 1;
                    if expected > 0 {
                        first_odd.get_or_insert((i, s));
                    }
                }
                Sector::Copy(pool, entry, index) => {
                    let found = (pool, entry, index);
                    let r = self.reduce.as_ref();
                    match Reduction::copy_state(r, t.id, off, expected, found, copy) {
                        CopyState::Current => current += 1,
                        CopyState::Older => {
                            older += 1;
                            if expected > 0 {
                                first_odd.get_or_insert((i, s));
                            }
                        }
                        CopyState::Elsewhere => {
                            kind.get_or_insert(VerifyErrorKind::Misdirected);
                            first_odd.get_or_insert((i, s));
                        }
                    }
                }
                Sector::Here(run, version) => {
                    let this_run = run == self.run && version > 0;
                    if this_run && version == expected && copy.is_some() {
                        // The last write put a copy here, not unique data.
                        kind.get_or_insert(VerifyErrorKind::Corrupted);
                        first_odd.get_or_insert((i, s));
                    } else if this_run && version == expected {
                        current += 1;
                    } else if this_run && version > expected {
                        // Newer than any acknowledged write: not what storlab wrote there.
                        kind.get_or_insert(VerifyErrorKind::Corrupted);
                        first_odd.get_or_insert((i, s));
                    } else {
                        older += 1;
                        if expected > 0 {
                            first_odd.get_or_insert((i, s));
                        }
                    }
                }
            }
        }
        let kind = kind.or(match (expected, current, older) {
            (0, _, _) => None,
            (_, _, 0) => None,
            (_, 0, _) => Some(VerifyErrorKind::Lost),
            _ => Some(VerifyErrorKind::Torn),
        });
        let Some(kind) = kind else {
            if unchecked > 0 {
                // Written by a run without verification: in place, but not checkable.
                counts.blocks_checked -= 1;
                counts.blocks_unchecked += 1;
            }
            return;
        };
        if counts.first_errors.len() >= ERROR_DETAILS {
            // Counted only: the details of the first errors are already kept.
            counts.count(kind);
            return;
        }
        let expected_text = if expected == 0 {
            "prepared data or data from an earlier run".to_string()
        } else {
            format!("version {expected} of this run")
        };
        let found = match first_odd {
            Some((i, Sector::Bad)) => format!(
                "sector {i} (offset {}) fails its checksum",
                base + (i * SECTOR) as u64
            ),
            Some((i, Sector::Elsewhere(id, off))) => {
                let which = self.targets.iter().position(|o| o.id == id).map_or_else(
                    || format!("an unknown target ({id:#x})"),
                    |j| format!("target {j}"),
                );
                format!("sector {i} holds the data of offset {off} of {which}")
            }
            Some((i, Sector::Unchecked)) => {
                format!("sector {i} holds data of a run without verification")
            }
            Some((i, Sector::Copy(pool, entry, index))) => format!(
                "sector {i} holds sector {index} of duplicate {entry} of {} ({current} of {} sectors current)",
                Reduction::copy_text(self.reduce.as_ref(), pool, t.id, base, expected),
                data.len() / SECTOR
            ),
            Some((i, Sector::Here(run, version))) => {
                let whose = if run == self.run && version > 0 {
                    format!("version {version} of this run")
                } else if run == 0 {
                    "prepared data".into()
                } else {
                    format!("data from an earlier run (version {version})")
                };
                format!(
                    "sector {i} holds {whose} ({current} of {} sectors current)",
                    data.len() / SECTOR
                )
            }
            None => String::new(),
        };
        counts.add(VerifyError {
            kind,
            target,
            offset: base,
            len: self.block as u32,
            expected: expected_text,
            found,
            phase: phase.into(),
            t_ms,
        });
    }

    /// The blocks written during the run (known version > 0) of `target`, as byte ranges of
    /// runs of consecutive blocks, each at most `max_len` bytes: what the final pass reads.
    pub(crate) fn written_ranges(&self, target: usize, max_len: u64) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        let per = (max_len / self.block).max(1) as usize;
        let mut run_start: Option<usize> = None;
        let states = &self.targets[target].states;
        let flush = |out: &mut Vec<(u64, u32)>, from: usize, to: usize| {
            let mut b = from;
            while b < to {
                let n = (to - b).min(per);
                out.push((b as u64 * self.block, (n as u64 * self.block) as u32));
                b += n;
            }
        };
        for (b, s) in states.iter().enumerate() {
            let v = s.load(Ordering::Relaxed);
            let written = v & UNKNOWN == 0 && v & VERSION_MASK > 0;
            match (written, run_start) {
                (true, None) => run_start = Some(b),
                (false, Some(from)) => {
                    flush(&mut out, from, b);
                    run_start = None;
                }
                _ => {}
            }
        }
        if let Some(from) = run_start {
            flush(&mut out, from, states.len());
        }
        out
    }
}

fn try_lock(s: &AtomicU64, write: bool) -> bool {
    let mut cur = s.load(Ordering::Acquire);
    loop {
        let busy = if write {
            cur & (WRITER | READERS_MASK) != 0
        } else {
            cur & WRITER != 0 || cur & READERS_MASK == READERS_MASK
        };
        if busy {
            return false;
        }
        let next = if write {
            cur | WRITER
        } else {
            cur + READER_ONE
        };
        match s.compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(now) => cur = now,
        }
    }
}

/// Releases a lock; a finished write (`Some(ok)`) also sets the new version or marks the
/// block unknown.
fn unlock(s: &AtomicU64, write: bool, wrote: Option<bool>) {
    if !write {
        s.fetch_sub(READER_ONE, Ordering::AcqRel);
        return;
    }
    let cur = s.load(Ordering::Acquire);
    let version = cur & VERSION_MASK;
    let next = match wrote {
        Some(true) => (version + 1) & VERSION_MASK,
        Some(false) => version | UNKNOWN,
        None => cur & !WRITER,
    };
    // Holding the writer bit, nobody else changes the state.
    s.store(next, Ordering::Release);
}

/// The verification block size for I/Os of these sizes and alignments: their greatest common
/// divisor, which must be a multiple of [`SECTOR`].
pub(crate) fn block_size(sizes_and_alignments: impl IntoIterator<Item = u64>) -> Option<u64> {
    let g = sizes_and_alignments
        .into_iter()
        .filter(|&v| v > 0)
        .fold(0u64, gcd);
    (g > 0 && g % SECTOR as u64 == 0).then_some(g)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests;
