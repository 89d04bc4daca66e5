//! A sampled block reference and its encoding in the block-sample file (`RUN.blocks`, beside
//! the results): the file is [`MAGIC`], then one [`RECORD_BYTES`]-byte little-endian record per
//! reference, in the order each worker issued them (workers' records interleave by interval;
//! sort by time to get the run's order).

/// The first bytes of a block-sample file (format version 1).
pub(crate) const MAGIC: &[u8; 8] = b"STLBLKS1";
/// Bytes of one encoded reference.
pub(crate) const RECORD_BYTES: usize = 24;

/// `flags` bit: the I/O was a write.
pub(crate) const WRITE: u8 = 1;
/// `flags` bit: the I/O began where the previous I/O on its target (from the same worker)
/// ended.
pub(crate) const SEQUENTIAL: u8 = 2;

/// One sampled reference to a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockRef {
    /// When its I/O was issued, ns from the start of the run.
    pub t_ns: u64,
    /// Block number within its target (offset ÷ block size).
    pub block: u64,
    /// Target index.
    pub target: u16,
    /// Class id.
    pub class: u16,
    /// [`WRITE`], [`SEQUENTIAL`].
    pub flags: u8,
}

impl BlockRef {
    /// The record's bytes: t_ns (u64), block (u64), target (u16), class (u16), flags (u8),
    /// three zero bytes.
    pub(crate) fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..8].copy_from_slice(&self.t_ns.to_le_bytes());
        b[8..16].copy_from_slice(&self.block.to_le_bytes());
        b[16..18].copy_from_slice(&self.target.to_le_bytes());
        b[18..20].copy_from_slice(&self.class.to_le_bytes());
        b[20] = self.flags;
        b
    }

    /// The reference a record holds.
    pub(crate) fn decode(b: &[u8; RECORD_BYTES]) -> Self {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        BlockRef {
            t_ns: u64_at(0),
            block: u64_at(8),
            target: u16_at(16),
            class: u16_at(18),
            flags: b[20],
        }
    }

    #[cfg(test)]
    /// Whether its I/O was a write.
    pub(crate) fn is_write(&self) -> bool {
        self.flags & WRITE != 0
    }

    /// Whether its I/O continued the previous one on its target.
    pub(crate) fn is_sequential(&self) -> bool {
        self.flags & SEQUENTIAL != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let r = BlockRef {
            t_ns: 1 << 40 | 7,
            block: (1 << 36) + 3,
            target: 513,
            class: 9,
            flags: WRITE | SEQUENTIAL,
        };
        assert_eq!(BlockRef::decode(&r.encode()), r);
        assert!(r.is_write() && r.is_sequential());
        assert_eq!(r.encode()[21..], [0, 0, 0]);
    }
}
