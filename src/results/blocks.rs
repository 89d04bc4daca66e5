//! The block sample of a run (`sample_blocks`): its summary in the results and its file
//! beside them (`RUN.blocks`, records of [`crate::stats::blocks`]), read back for cache curves.

use crate::stats::blocks::{BlockRef, MAGIC, RECORD_BYTES};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// What a run's block sample holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockSample {
    /// Path of the sample file, as written (relative paths are relative to the directory the
    /// run started in; readers also look beside the results file).
    pub path: String,
    /// Bytes of a block.
    pub block_bytes: u64,
    /// Sampling rate: a block is in the sample when the hash of (target, block) modulo
    /// `modulus` is under `threshold` (SHARDS); `threshold / modulus`.
    pub rate: f64,
    /// See `rate`.
    pub threshold: u64,
    /// See `rate`.
    pub modulus: u64,
    /// Block references the run made, sampled or not (an I/O of n blocks makes n), ramp
    /// included.
    pub references: u64,
    /// Sampled references in the file.
    pub sampled: u64,
    /// Sampled references left out because a worker's buffer was full (the sample is then
    /// incomplete: curves say so).
    pub dropped: u64,
}

/// Where the block sample of the results at `results` goes.
pub(crate) fn blocks_path(results: &Path) -> PathBuf {
    results.with_extension("blocks")
}

/// Creates the block-sample file at `path` and writes its header; with `append`, adds to the
/// file an earlier step of the same sequence wrote.
pub(crate) fn create(path: &Path, append: bool) -> Result<std::io::BufWriter<std::fs::File>> {
    let file = super::file::open_beside(path, append, "block-sample")?;
    let empty = file.metadata().map_or(true, |m| m.len() == 0);
    let mut w = std::io::BufWriter::new(file);
    if empty {
        w.write_all(MAGIC)?;
    }
    Ok(w)
}

/// Appends `refs` to a block-sample file.
pub(crate) fn append(w: &mut (impl Write + ?Sized), refs: &[BlockRef]) -> std::io::Result<()> {
    for r in refs {
        w.write_all(&r.encode())?;
    }
    Ok(())
}

/// Checks what a block sample's summary says of itself: a rate of the sample in (0, 1] that
/// is its threshold over its modulus, a block of at least a byte, and no more references in
/// the file or dropped than the run made. A rate that is not one would give curves of
/// nothing (cache-curve divides by it).
pub(crate) fn check(s: &BlockSample) -> Result<(), String> {
    let bad = |what: String| Err(format!("`block_sample`: {what}"));
    if s.modulus == 0 || s.threshold == 0 || s.threshold > s.modulus {
        return bad(format!(
            "threshold {} over modulus {} is not a sampling rate (0 < threshold ≤ modulus)",
            s.threshold, s.modulus
        ));
    }
    let rate = s.threshold as f64 / s.modulus as f64;
    if !(s.rate > 0.0 && s.rate <= 1.0 && (s.rate - rate).abs() <= 1e-9 * rate) {
        let shown = match s.rate.abs() {
            r if (1e-6..=1e6).contains(&r) => s.rate.to_string(),
            _ => format!("{:e}", s.rate),
        };
        return bad(format!(
            "rate {shown} is not its threshold over its modulus ({rate}), a rate in (0, 1]"
        ));
    }
    if s.block_bytes == 0 {
        return bad("block_bytes is 0; a block has at least a byte".into());
    }
    if s.sampled > s.references || s.dropped > s.references {
        return bad(format!(
            "{} references sampled and {} dropped of {} made: more than the run made",
            s.sampled, s.dropped, s.references
        ));
    }
    Ok(())
}

/// Every reference of the block-sample file at `path`, in time order (a cut-off last record,
/// from a run that was killed, is left out). Read within the cap of block-sample files
/// (`crate::input`), record by record.
pub(crate) fn read(path: &Path) -> Result<Vec<BlockRef>> {
    let mut input = crate::input::open(path, crate::input::Kind::BlockSample)?;
    let mut magic = [0u8; MAGIC.len()];
    let whole = read_full(&mut input, &mut magic).map_err(|e| input.refused(&e))?;
    if whole < MAGIC.len() || magic != *MAGIC {
        // Input of the user's: refused (exit 2), as every file that is not what it should be.
        return Err(crate::Usage(format!(
            "{} is not a storlab block-sample file (it does not start with {:?}); give the .blocks file the run wrote",
            path.display(),
            String::from_utf8_lossy(MAGIC)
        ))
        .into());
    }
    let mut refs = Vec::new();
    let mut reader = std::io::BufReader::with_capacity(1 << 16, input);
    let mut record = [0u8; RECORD_BYTES];
    loop {
        let n = read_full(&mut reader, &mut record).map_err(|e| reader.get_ref().refused(&e))?;
        if n < RECORD_BYTES {
            break;
        }
        refs.push(BlockRef::decode(&record));
    }
    // Workers' records interleave by interval: the run's order is by time (stable, so one
    // I/O's blocks keep theirs).
    refs.sort_by_key(|r| r.t_ns);
    Ok(refs)
}

/// Reads into all of `buf` unless the input ends first: the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_reads_back_in_time_order_and_a_stranger_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = blocks_path(&dir.path().join("run.json"));
        assert_eq!(path.file_name().unwrap(), "run.blocks");
        let r = |t_ns, block| BlockRef {
            t_ns,
            block,
            ..BlockRef::default()
        };
        let mut w = create(&path, false).unwrap();
        append(&mut w, &[r(5, 1), r(9, 2)]).unwrap();
        drop(w);
        // A later step adds to it.
        let mut w = create(&path, true).unwrap();
        append(&mut w, &[r(7, 3)]).unwrap();
        w.write_all(&[1, 2, 3]).unwrap(); // a cut-off record
        drop(w);
        let got: Vec<u64> = read(&path).unwrap().iter().map(|r| r.block).collect();
        assert_eq!(got, [1, 3, 2]);
        std::fs::write(&path, b"{}").unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("not a storlab block-sample file"), "{e}");
    }

    #[test]
    fn a_summary_whose_rate_is_not_a_rate_is_refused() {
        let good = BlockSample {
            path: "run.blocks".into(),
            block_bytes: 4096,
            rate: 0.25,
            threshold: 1 << 22,
            modulus: 1 << 24,
            references: 1000,
            sampled: 250,
            dropped: 0,
        };
        assert_eq!(check(&good), Ok(()));
        let with = |f: fn(&mut BlockSample)| {
            let mut s = good.clone();
            f(&mut s);
            check(&s).unwrap_err()
        };
        assert!(with(|s| s.rate = 1e308).contains("rate 1e308 is not"));
        assert!(with(|s| s.rate = 0.5).contains("rate 0.5 is not"));
        assert!(with(|s| s.modulus = 0).contains("over modulus 0 is not"));
        assert!(with(|s| s.threshold = s.modulus + 1).contains("is not a sampling rate"));
        assert!(with(|s| s.block_bytes = 0).contains("block_bytes is 0"));
        assert!(with(|s| s.sampled = 1001).contains("more than the run made"));
    }
}
