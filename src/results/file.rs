//! Results files on disk: loading one (its schema version checked) and writing one atomically
//! (a temporary file beside it, synced, then renamed), and the name of the time series beside it.

use super::RunResult;
use super::schema::{SCHEMA_VERSION, SchemaVersion};
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Loads a results file: read within the cap of results files (`crate::input`), its
/// numbers scanned and its schema version checked before it is read as results, then checked
/// ([`super::validate`]). A file that cannot be read, is not a results file this storlab
/// reads, or holds what no run writes is the user's input error ([`crate::Usage`], exit 2).
pub fn load(path: &Path) -> Result<RunResult> {
    read(path).map_err(|e| crate::Usage(format!("{e:#}")).into())
}

fn read(path: &Path) -> Result<RunResult> {
    let bytes = crate::input::read(path, crate::input::Kind::Results).map_err(|e| match e {
        e if e.missing => anyhow::anyhow!(
            "{e}; give a file a run wrote (storlab-results/run-….json) or its time series (….ndjson)"
        ),
        e => e.into(),
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{} is not JSON (it is not UTF-8 text)", path.display()))?;
    // What load refuses was not written by a run: the file was made or changed by hand.
    let refused = |e: String| {
        anyhow::anyhow!(
            "{} is not a results file storlab reads: {e}; no run writes that: give the results file as the run wrote it",
            path.display()
        )
    };
    let version = super::validate::scan(&text).map_err(refused)?;
    let Some(version) = version else {
        bail!(
            "{} is not a storlab results file (no schema_version)",
            path.display()
        );
    };
    let version: SchemaVersion = serde_json::from_value(version.clone())
        .with_context(|| format!("{}: schema_version {version}", path.display()))?;
    if !SCHEMA_VERSION.reads(version) {
        bail!(
            "{} has schema_version {version}; this storlab ({}) reads versions {}.0 to {SCHEMA_VERSION}{}",
            path.display(),
            env!("CARGO_PKG_VERSION"),
            SCHEMA_VERSION.major,
            if version > SCHEMA_VERSION {
                ": it was written by a newer storlab; upgrade this one"
            } else {
                ""
            }
        );
    }
    let r: RunResult = serde_json::from_str(&text)
        .with_context(|| format!("{} does not match the results schema", path.display()))?;
    super::validate::check(&r).map_err(refused)?;
    Ok(r)
}

/// The results as pretty JSON.
pub fn to_string(result: &RunResult) -> Result<String> {
    Ok(serde_json::to_string_pretty(result)?)
}

/// Writes `result` atomically: to a temporary file beside it, synced, then renamed.
pub fn save(path: &Path, result: &RunResult) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the results directory {}", dir.display()))?;
    }
    let tmp = path.with_extension("json.tmp");
    let f = std::fs::File::create(&tmp)
        .with_context(|| format!("cannot write the results file {}", tmp.display()))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    serde_json::to_writer_pretty(&mut w, result)?;
    w.write_all(b"\n")?;
    let f = w.into_inner().map_err(|e| e.into_error())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
    Ok(())
}

/// Opens `path` (its directory created) to write `what` into: from the start, or after what
/// an earlier step of the same sequence wrote (`append`).
pub fn open_beside(path: &Path, append: bool, what: &str) -> Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the results directory {}", dir.display()))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(path)
        .with_context(|| format!("cannot create the {what} file {}", path.display()))
}

/// The NDJSON time-series path for a results path: `run.json` → `run.ndjson`.
pub fn timeseries_path(results: &Path) -> PathBuf {
    results.with_extension("ndjson")
}
