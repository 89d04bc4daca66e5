//! The block sample of a run (`sample_blocks`): its summary in the results and its file
//! beside them (`RUN.blocks`, records of [`crate::stats::blocks`]), read back for cache curves.

use crate::stats::blocks::{BlockRef, MAGIC, RECORD_BYTES};
use anyhow::{Context, Result, bail};
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
pub fn blocks_path(results: &Path) -> PathBuf {
    results.with_extension("blocks")
}

/// Creates the block-sample file at `path` and writes its header; with `append`, adds to the
/// file an earlier step of the same sequence wrote.
pub fn create(path: &Path, append: bool) -> Result<std::io::BufWriter<std::fs::File>> {
    let file = super::file::open_beside(path, append, "block-sample")?;
    let empty = file.metadata().map_or(true, |m| m.len() == 0);
    let mut w = std::io::BufWriter::new(file);
    if empty {
        w.write_all(MAGIC)?;
    }
    Ok(w)
}

/// Appends `refs` to a block-sample file.
pub fn append(w: &mut (impl Write + ?Sized), refs: &[BlockRef]) -> std::io::Result<()> {
    for r in refs {
        w.write_all(&r.encode())?;
    }
    Ok(())
}

/// Every reference of the block-sample file at `path`, in time order (a cut-off last record,
/// from a run that was killed, is left out).
pub fn read(path: &Path) -> Result<Vec<BlockRef>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .with_context(|| format!("cannot read the block-sample file {}", path.display()))?;
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        bail!(
            "{} is not a storlab block-sample file (it does not start with {:?})",
            path.display(),
            String::from_utf8_lossy(MAGIC)
        );
    }
    let mut refs: Vec<BlockRef> = bytes[MAGIC.len()..]
        .chunks_exact(RECORD_BYTES)
        .map(|c| BlockRef::decode(c.try_into().unwrap_or(&[0; RECORD_BYTES])))
        .collect();
    // Workers' records interleave by interval: the run's order is by time (stable, so one
    // I/O's blocks keep theirs).
    refs.sort_by_key(|r| r.t_ns);
    Ok(refs)
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
}
