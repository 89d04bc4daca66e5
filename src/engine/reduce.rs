//! Data that compresses and dedupes like real data (`[data]`), and the measure of what the
//! written data achieved.
//!
//! **Compression.** Every 512-byte sector keeps its first [`Reduction::keep`] bytes (the
//! 48-byte verification header, an 8-byte tag and pseudo-random payload) and is zero after
//! them; the header is masked (`verify::mask_header`), so the kept bytes are all
//! incompressible and the zeros are all that compresses. `keep` is calibrated when the run starts: the smallest count whose synthetic dedupe
//! units deflate (see [`compressed_len`]) to at most the asked ratio's share, so the data
//! compresses as asked whatever the unit size.
//!
//! **Fresh payloads.** Every written sector's payload is made anew
//! ([`super::buf::fresh_payload`]), reduced or not, so data written again never repeats what is
//! already on the device: the data compresses as a stream as it does unit by unit.
//!
//! **Dedupe.** Each dedupe unit a write covers is unique (sealed with its target, offset and
//! version, as without reduction) or a copy of one of [`POOL`] pool entries, with probability
//! 1 − 1/ratio. Which, and which entry, is a pure function of (target identity, unit offset,
//! block version, run) ([`Reduction::choice`]): the write seals it, and a read (or the final
//! read-back of `--verify`) knows what it must find. A copy's sectors carry a header of their
//! own kind naming the pool, the entry and the sector's place in the unit, checksummed like
//! any other, and the same wherever the copy is written (docs/methodology.md, "Data
//! reduction").
//!
//! **Measure.** Each worker keeps a bounded sample of the units it wrote ([`DataSample`]:
//! every unit at first, then every 2nd, 4th, … as the sample fills); after the run each sampled
//! unit is deflated and hashed: achieved compression is bytes / deflated bytes, achieved dedupe
//! is units / distinct units.

use super::buf::{fill_random, splitmix};
use super::verify::{MAGIC, SECTOR};
use crate::job::data::DataReduction;
use crate::job::data::{CALIBRATION_UNIT, compressed_len};

/// Entries in the pool of duplicate contents.
pub(crate) const POOL: u64 = 8;
/// Sector kind of a copy of a pool entry, checksummed (a verifying run).
pub(crate) const KIND_COPY: u32 = 3;
/// Sector kind of a copy of a pool entry without checksum (a run without verification).
pub(crate) const KIND_COPY_UNCHECKED: u32 = 4;
/// Bytes of header and tag at the start of every sector, kept whatever the ratio.
const HEAD: usize = 56;
/// Bytes of the sample deflated in each of [`MEASURED_UNITS`] and as a stream.
const BY_UNIT_BYTES: usize = 2 << 20;
/// Bytes of sampled units each worker keeps at most.
const SAMPLE_BYTES: usize = 8 << 20;

/// How a run builds reduced data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reduction {
    /// What the job asked.
    pub asked: DataReduction,
    /// Bytes at the start of every sector kept; the rest is zeroed ([`SECTOR`]: nothing is).
    pub keep: usize,
    /// A unit is a copy when its choice hash is below this (0: never).
    dup_below: u64,
    /// The pool's identity (from the run id): in every copy's header.
    pub pool: u64,
}

impl Reduction {
    /// The reduction for `asked` in run `run`, its sectors `checked` (with a checksum) or
    /// not; `None` when the data is not reduced (the default path stays as it is).
    pub(crate) fn new(asked: DataReduction, run: u64, checked: bool) -> Option<Reduction> {
        if !asked.active() {
            return None;
        }
        let share = 1.0 - 1.0 / asked.dedupe;
        let dup_below = if asked.dedupe > 1.0 {
            (share * 18_446_744_073_709_551_616.0) as u64
        } else {
            0
        };
        let mut r = Reduction {
            asked,
            keep: SECTOR,
            dup_below,
            pool: splitmix(run ^ 0x706F_6F6C_2D69_6473),
        };
        if asked.compress > 1.0 {
            r.keep = calibrate(asked.compress, CALIBRATION_UNIT, checked);
        }
        Some(r)
    }

    /// Which pool entry the unit at `unit_offset` of the target `target_id` holds at block
    /// version `version` of run `run` (`None`: it is unique).
    #[inline]
    pub(crate) fn choice(&self, target_id: u64, unit_offset: u64, version: u64) -> Option<u64> {
        if self.dup_below == 0 {
            return None;
        }
        let h = splitmix(splitmix(splitmix(target_id ^ self.pool) ^ unit_offset) ^ version);
        (h < self.dup_below).then(|| splitmix(h) % POOL)
    }

    /// The offset of the unit holding byte `offset`.
    #[inline]
    pub(crate) fn unit_of(&self, offset: u64) -> u64 {
        offset - offset % self.asked.unit_bytes
    }

    /// Seals `sector` as sector `index` of pool entry `entry`: the same bytes wherever it is
    /// written. `checked`: with a checksum (a verifying run).
    pub(crate) fn seal_copy(
        &self,
        sector: &mut [u8],
        entry: u64,
        run: u64,
        index: u64,
        checked: bool,
    ) {
        let kind = if checked {
            KIND_COPY
        } else {
            KIND_COPY_UNCHECKED
        };
        sector[0..8].copy_from_slice(&MAGIC);
        sector[12..16].copy_from_slice(&kind.to_le_bytes());
        sector[16..24].copy_from_slice(&self.pool.to_le_bytes());
        sector[24..32].copy_from_slice(&entry.to_le_bytes());
        sector[32..40].copy_from_slice(&run.to_le_bytes());
        sector[40..48].copy_from_slice(&index.to_le_bytes());
        let tag = splitmix(self.pool ^ entry.rotate_left(32) ^ index);
        sector[48..HEAD].copy_from_slice(&tag.to_le_bytes());
        fill_random(&mut sector[HEAD..self.keep], tag);
        sector[self.keep..].fill(0);
        let crc = if checked {
            super::verify::sector_crc(sector)
        } else {
            0
        };
        sector[8..12].copy_from_slice(&crc.to_le_bytes());
        if self.keep < SECTOR {
            super::verify::mask_header(sector);
        }
    }
}

/// What a valid copy of a pool entry found in a read is.
pub(crate) enum CopyState {
    /// What the last write put there.
    Current,
    /// What an older write put there.
    Older,
    /// Never written there.
    Elsewhere,
}

impl Reduction {
    /// What a valid copy `found` (pool, entry, place) at `offset` is, where the last write
    /// (version `expected`) put `copy` (entry, place; `None`: unique data): the current data,
    /// an older version's (a copy of this run the unit held in one of the 64 versions before,
    /// or any of an earlier run), or data that was never written here (misdirected).
    pub(crate) fn copy_state(
        this: Option<&Reduction>,
        target_id: u64,
        offset: u64,
        expected: u64,
        found: (u64, u64, u64),
        copy: Option<(u64, u64)>,
    ) -> CopyState {
        let (pool, entry, index) = found;
        let Some(r) = this.filter(|r| r.pool == pool) else {
            return CopyState::Older;
        };
        if copy == Some((entry, index)) {
            return CopyState::Current;
        }
        let unit = r.unit_of(offset);
        let place = (offset - unit) / SECTOR as u64;
        let held = (expected.saturating_sub(64).max(1)..expected)
            .any(|v| r.choice(target_id, unit, v) == Some(entry));
        if held && place == index {
            CopyState::Older
        } else {
            CopyState::Elsewhere
        }
    }

    /// Whose pool a copy found in the block at `base` (of target `target_id`, last written
    /// at version `expected`) is from, and what the last write put there.
    pub(crate) fn copy_text(
        this: Option<&Reduction>,
        pool: u64,
        target_id: u64,
        base: u64,
        expected: u64,
    ) -> String {
        let whose = if this.is_some_and(|r| r.pool == pool) {
            "this run's pool"
        } else {
            "an earlier run's pool"
        };
        match this.filter(|_| expected > 0) {
            Some(r) => match r.choice(target_id, r.unit_of(base), expected) {
                Some(e) => format!("{whose}; the last write put duplicate {e} here"),
                None => format!("{whose}; the last write put unique data here"),
            },
            None => whose.into(),
        }
    }
}

/// The units the measure deflates the written data in, besides the dedupe unit: what arrays
/// compress in (4 KiB to 128 KiB); and the whole sample as one stream.
pub(crate) const MEASURED_UNITS: [u64; 4] = [4 << 10, 8 << 10, 32 << 10, 128 << 10];

/// The smallest number of kept bytes per sector whose units compress at least `ratio`:1 (the
/// ratio falls as more is kept), between the head and a whole sector.
fn calibrate(ratio: f64, unit: usize, checked: bool) -> usize {
    let unit = unit.max(SECTOR);
    let mut data = vec![0u8; unit];
    let mut out = Vec::new();
    let kind = if checked {
        super::verify::KIND_RUN
    } else {
        super::verify::KIND_UNCHECKED
    };
    let mut ratio_at = |keep: usize| {
        // Unique sectors as a run seals them.
        for (i, s) in data.chunks_exact_mut(SECTOR).enumerate() {
            super::verify::seal_sector(s, kind, 7, (i * SECTOR) as u64, 9, 1, keep);
        }
        unit as f64 / compressed_len(&data, &mut out) as f64
    };
    let (mut lo, mut hi) = (HEAD, SECTOR);
    // Invariant: ratio_at(hi) < ratio or hi == SECTOR; ratio_at(lo) >= ratio or lo == HEAD.
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if ratio_at(mid) >= ratio {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // The nearer of the two.
    if (ratio_at(hi) - ratio).abs() < (ratio_at(lo) - ratio).abs() {
        hi
    } else {
        lo
    }
}

/// A worker's sample of the units it wrote, bounded: every unit at first; when the sample is
/// full, every other one is dropped and only every 2nd (then 4th, …) unit is kept.
#[derive(Debug)]
pub(crate) struct DataSample {
    unit: usize,
    stride: u64,
    seen: u64,
    kept: Vec<u8>,
    cap: usize,
}

/// What a sample of written units measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    /// Units written (sampled or not).
    pub written: u64,
    /// Units sampled.
    pub units: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Their bytes once each is deflated.
    pub compressed: u64,
    /// The xxh3-64 of each.
    pub hashes: Vec<u64>,
    /// The sample, in the order written, deflated in each of [`MEASURED_UNITS`]: (its bytes,
    /// their bytes deflated).
    pub by_unit: Vec<(u64, u64)>,
    /// The sample deflated as one stream: (its bytes, deflated).
    pub stream: (u64, u64),
}

impl DataSample {
    /// A sample of units of `unit` bytes, at most 8 MiB of them.
    pub(crate) fn new(unit: u64) -> DataSample {
        Self::with_cap(unit as usize, SAMPLE_BYTES)
    }

    fn with_cap(unit: usize, cap: usize) -> DataSample {
        let cap = (cap / unit).max(2) * unit;
        DataSample {
            unit,
            stride: 1,
            seen: 0,
            kept: Vec::new(),
            cap,
        }
    }

    /// A write's data, sealed, as it goes to the device.
    #[inline]
    pub(crate) fn record(&mut self, data: &[u8]) {
        for u in data.chunks_exact(self.unit) {
            self.seen += 1;
            if self.seen % self.stride != 0 {
                continue;
            }
            if self.kept.len() >= self.cap {
                // Keep the units at multiples of twice the stride: every second one.
                let n = self.kept.len() / self.unit;
                for k in 0..n / 2 {
                    let from = (2 * k + 1) * self.unit;
                    self.kept.copy_within(from..from + self.unit, k * self.unit);
                }
                self.kept.truncate(n / 2 * self.unit);
                self.stride *= 2;
                if self.seen % self.stride != 0 {
                    continue;
                }
            }
            self.kept.extend_from_slice(u);
        }
    }

    /// Deflates and hashes every sampled unit.
    pub(crate) fn finish(&self) -> Measured {
        let mut out = Vec::new();
        let mut m = Measured {
            written: self.seen,
            ..Measured::default()
        };
        for u in self.kept.chunks_exact(self.unit) {
            m.units += 1;
            m.bytes += u.len() as u64;
            m.compressed += compressed_len(u, &mut out) as u64;
            m.hashes.push(xxhash_rust::xxh3::xxh3_64(u));
        }
        // The units and the stream are measured on the sample's first 2 MiB (spread over the
        // run like the rest): enough for a ratio, and a bounded cost at the run's end.
        let whole = &self.kept[..(m.units as usize * self.unit).min(BY_UNIT_BYTES)];
        m.by_unit = (MEASURED_UNITS.iter())
            .map(|&u| {
                let c: usize = (whole.chunks_exact(u as usize))
                    .map(|c| compressed_len(c, &mut out))
                    .sum();
                let bytes = whole.len() as u64 / u * u;
                (bytes, c as u64)
            })
            .collect();
        m.stream = (whole.len() as u64, compressed_len(whole, &mut out) as u64);
        m
    }
}

/// The compression every worker's sample achieved deflated in each of [`MEASURED_UNITS`]
/// (a unit larger than a worker's sample is left out) and as one stream per worker:
/// ([(unit, ratio)], stream ratio).
pub(crate) fn achieved_by_unit(samples: &[Measured]) -> (Vec<(u64, f64)>, Option<f64>) {
    let units = (MEASURED_UNITS.iter().enumerate())
        .filter_map(|(i, &u)| {
            let (b, c) = (samples.iter().filter_map(|m| m.by_unit.get(i)))
                .fold((0, 0), |(b, c), &(x, y)| (b + x, c + y));
            (b > 0 && c > 0).then(|| (u, b as f64 / c as f64))
        })
        .collect();
    let (b, c) = (samples.iter()).fold((0, 0), |(b, c), m| (b + m.stream.0, c + m.stream.1));
    (units, (b > 0 && c > 0).then(|| b as f64 / c as f64))
}

/// The achieved ratios of every worker's sample together: (compression, dedupe), N:1; `None`
/// without a sampled unit.
pub(crate) fn achieved(samples: &[Measured]) -> Option<(f64, f64)> {
    let units: u64 = samples.iter().map(|m| m.units).sum();
    if units == 0 {
        return None;
    }
    let bytes: u64 = samples.iter().map(|m| m.bytes).sum();
    let compressed: u64 = samples.iter().map(|m| m.compressed).sum();
    let mut hashes: Vec<u64> = samples
        .iter()
        .flat_map(|m| m.hashes.iter().copied())
        .collect();
    hashes.sort_unstable();
    hashes.dedup();
    Some((
        bytes as f64 / compressed.max(1) as f64,
        units as f64 / hashes.len() as f64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::verify::{MapTarget, VerifyMap};

    fn asked(compress: f64, dedupe: f64, unit: u64) -> DataReduction {
        DataReduction {
            compress,
            dedupe,
            unit_bytes: unit,
        }
    }

    /// Writes of `len` bytes over a target, sealed as a run writes them (verifying or not), all
    /// sampled; returns what the sample measured.
    fn measure(a: DataReduction, track: bool, writes: u64, len: u32) -> (f64, f64) {
        let size = 256 << 20;
        let map = VerifyMap::new(
            &[MapTarget {
                size_bytes: size,
                prepared_id: Some(5),
            }],
            4096,
            31,
            track,
        )
        .with_reduction(a);
        let mut sample = DataSample::with_cap(a.unit_bytes as usize, 32 << 20);
        let mut buf = vec![0u8; len as usize];
        crate::engine::buf::fill_random(&mut buf, 3);
        let mut rng = 12345u64;
        for _ in 0..writes {
            rng = splitmix(rng);
            let off = rng % (size / u64::from(len)) * u64::from(len);
            if track {
                assert!(map.lock(0, off, len, true));
            }
            map.seal(&mut buf, 0, off, len, false);
            if track {
                map.written(0, off, len, true);
            }
            sample.record(&buf);
        }
        achieved(&[sample.finish()]).unwrap()
    }

    /// Within 15 %: the kept bytes are calibrated on 32 KiB units, the middle of the units
    /// arrays use; a 4 KiB unit deflated on its own is the low end (docs/methodology.md).
    fn near(got: f64, asked: f64) -> bool {
        (got / asked - 1.0).abs() <= 0.15
    }

    // Verifying (versions choose) and not (writes number themselves), two unit sizes:
    // (unit, write size, verifying).
    const WAYS: [(u64, u32, bool); 2] = [(4096, 16384, true), (8192, 8192, false)];
    const RATIOS: [f64; 6] = [1.0, 1.5, 2.0, 3.0, 5.0, 8.0];

    #[test]
    fn measured_compression_is_within_15_percent_of_the_asked_one() {
        for r in RATIOS {
            for (unit, len, track) in WAYS {
                // 400 units.
                let (c, d) = measure(asked(r, 1.0, unit), track, 400 * unit / u64::from(len), len);
                assert!(near(c, r), "compress {r} unit {unit}: got {c}");
                assert!(near(d, 1.0), "dedupe 1: got {d}");
                if r > 1.0 {
                    // Reduced data is never rewritten alike.
                    assert_eq!(d, 1.0, "compress {r} unit {unit}");
                }
            }
        }
    }

    #[test]
    fn measured_dedupe_is_within_15_percent_of_the_asked_one() {
        for r in RATIOS {
            for (unit, len, track) in WAYS {
                // 5000 units: at 8:1, the pool's entries are 1.3 % of the distinct units, and
                // the count of unique ones varies by 3.7 % (one standard deviation).
                let (c, d) = measure(
                    asked(1.0, r, unit),
                    track,
                    5000 * unit / u64::from(len),
                    len,
                );
                assert!(near(d, r), "dedupe {r} unit {unit}: got {d}");
                assert!(near(c, 1.0), "compress 1: got {c}");
            }
            let (c, d) = measure(asked(r, r, 4096), true, 1250, 16384);
            assert!(
                near(c, r) && near(d, r),
                "both {r}: compress {c}, dedupe {d}"
            );
        }
    }

    #[test]
    fn copies_are_identical_wherever_they_are_written() {
        let r = Reduction::new(asked(2.0, 4.0, 4096), 1, true).unwrap();
        let (mut a, mut b) = (vec![1u8; 512], vec![2u8; 512]);
        r.seal_copy(&mut a, 3, 1, 2, true);
        r.seal_copy(&mut b, 3, 1, 2, true);
        assert_eq!(a, b);
        assert!(a[r.keep..].iter().all(|&x| x == 0));
        r.seal_copy(&mut b, 4, 1, 2, true);
        assert_ne!(a, b);
        // The choice is a pure function, about 3 in 4 units copies here.
        let copies = (0..4000u64)
            .filter(|&u| r.choice(9, u * 4096, 1).is_some())
            .count();
        assert!((2800..3200).contains(&copies), "{copies}");
        assert_eq!(r.choice(9, 4096, 1), r.choice(9, 4096, 1));
        assert!(Reduction::new(asked(1.0, 1.0, 4096), 1, true).is_none());
    }

    #[test]
    fn the_sample_stays_bounded_and_spread() {
        let mut s = DataSample::with_cap(512, 8 * 512);
        let mut unit = vec![0u8; 512];
        for i in 0..100u64 {
            unit[..8].copy_from_slice(&i.to_le_bytes());
            s.record(&unit);
        }
        let m = s.finish();
        assert_eq!(m.written, 100);
        assert!(m.units <= 8 && m.units >= 4, "{m:?}");
        // Spread over the whole run: the last kept is late, no two alike.
        let mut h = m.hashes.clone();
        h.dedup();
        assert_eq!(h.len() as u64, m.units);
    }
}
