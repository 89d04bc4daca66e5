//! Results files on disk: loading one (its schema version checked; a series it does not inline
//! read from the time series beside it); writing one atomically and
//! without following a link (a randomly named temporary file beside it, synced, then renamed:
//! `crate::files`); the files streamed beside it (time series, block sample); the lock that
//! keeps two runs from writing one results file; and the name of the time series beside it.

use super::schema::{SCHEMA_VERSION, SchemaVersion};
use super::{Interrupted, RunResult};
use crate::files::lock::{LockError, LockFile};
use crate::files::{self, Durability, NewFile, Reopen};
use anyhow::{Context, Result, bail};
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Loads a results file: read within the cap of results files (`crate::input`), its
/// numbers scanned and its schema version checked before it is read as results, then checked
/// (`super::validate`). A file that cannot be read, is not a results file this storlab
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
    let mut r: RunResult = serde_json::from_str(&text)
        .with_context(|| format!("{} does not match the results schema", path.display()))?;
    super::validate::check(&r).map_err(refused)?;
    // A run too long to inline its series: the views read it from the time series beside the
    // file (not from where the run wrote it: the two may have been moved together).
    if r.timeseries.held.is_empty() && r.timeseries_path.is_some() {
        r.timeseries.file = Some(timeseries_path(path));
    }
    Ok(r)
}

/// The results as pretty JSON (a series read from its file inlined as the results file
/// inlines it).
pub(crate) fn to_string(result: &RunResult) -> Result<String> {
    Ok(serde_json::to_string_pretty(result)?)
}

/// Writes `result` atomically: to a new, randomly named file beside it, synced, then renamed
/// over `path` (a link there is replaced, never written through).
pub(crate) fn save(path: &Path, result: &RunResult) -> Result<()> {
    create_directory(path)?;
    let fail = |e: std::io::Error| files::cannot_write("the results file", path, &e);
    let new = NewFile::create(path).map_err(fail)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, new.file());
    serde_json::to_writer_pretty(&mut w, result).map_err(|e| fail(e.into()))?;
    w.write_all(b"\n").map_err(fail)?;
    w.flush().map_err(fail)?;
    drop(w);
    new.commit(Durability::Synced).map_err(fail)?;
    Ok(())
}

/// Writes `what`, a file made from a run's results (a calibration's matrices as CSV), at
/// `path` beside its results file: atomically, as any output.
pub(crate) fn save_beside(path: &Path, what: &str, text: &str) -> Result<()> {
    create_directory(path)?;
    files::write_output(what, path, text.as_bytes())
}

/// Creates the directory `path` goes in, when missing, as storlab makes its directories
/// (`crate::files::dir`: never through a link, storlab's own `storlab-results` checked to be
/// one only this user may write); the directories it made, deepest first. One another user
/// planted is refused ([`crate::Usage`]).
fn create_directory(path: &Path) -> Result<Vec<PathBuf>> {
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(Vec::new());
    };
    match files::dir::make(dir) {
        Ok((_, created)) => Ok(created),
        Err(files::dir::DirError::Io { path, error, .. }) => Err(anyhow::anyhow!(
            "cannot create the results directory {}: {}",
            path.display(),
            files::error_text(&error)
        )),
        Err(planted) => Err(crate::Usage(planted.to_string()).into()),
    }
}

/// Creates `path` (its directory created) to write `what` into as the run goes; with
/// `append`, opens again the file an earlier run of the same sequence created there, refused
/// unless it is still that very file.
pub(crate) fn open_beside(path: &Path, append: bool, what: &str) -> Result<std::fs::File> {
    create_directory(path)?;
    let opened = if append {
        files::reopen_created(path, Reopen::Append)
    } else {
        files::create_streamed(path)
    };
    opened.map_err(|e| files::cannot_write(&format!("the {what} file"), path, &e))
}

/// Records, over the results file this process wrote at `path` before the run's workers
/// started (marked unfinished), that the final results could not be written and `why`, so
/// that no report made from it later blames a kill. The file's own bytes are rewritten in
/// place (compact JSON, padded with spaces), which needs no new space on a full filesystem.
/// Whether it was recorded.
pub(crate) fn mark_unwritten(path: &Path, why: &str) -> bool {
    let Ok(file) = files::reopen_created(path, Reopen::InPlace) else {
        return false;
    };
    let Ok(metadata) = file.metadata() else {
        return false;
    };
    let mut text = Vec::new();
    if (&file).take(metadata.len()).read_to_end(&mut text).is_err() {
        return false;
    }
    let Ok(mut r) = serde_json::from_slice::<RunResult>(&text) else {
        return false;
    };
    if r.interrupted != Interrupted::Unfinished {
        return false;
    }
    r.interrupted = Interrupted::unwritten(why);
    let Ok(mut json) = serde_json::to_vec(&r) else {
        return false;
    };
    // Within the blocks the file already has: no allocation.
    let room = text
        .len()
        .max(usize::try_from(metadata.blocks() * 512).unwrap_or(0));
    if json.len() > room {
        return false;
    }
    json.resize(json.len().max(text.len()), b' ');
    file.write_all_at(&json, 0).is_ok() && file.sync_data().is_ok()
}

/// Where the lock of the results at `results` is: `RUN.json.lock` for `RUN.json`.
pub(crate) fn lock_path(results: &Path) -> PathBuf {
    results.with_extension("json.lock")
}

/// The lock that keeps two runs from writing one results file (and the time series and block
/// sample beside it): the file [`lock_path`] names, locked for as long as this value lives and
/// removed with it, with the directories made for it when nothing else went in them.
#[derive(Debug)]
pub(crate) struct ResultsLock {
    /// Directories created for the results, deepest first.
    created: Vec<PathBuf>,
    lock: Option<LockFile>,
}

impl ResultsLock {
    /// Locks the results at `results` before anything is written; another run holding them
    /// is a refusal ([`crate::Usage`]) that names its process.
    pub(crate) fn acquire(results: &Path) -> Result<ResultsLock> {
        let created = create_directory(results)?;
        let mut held = ResultsLock {
            created,
            lock: None,
        };
        let path = lock_path(results);
        match LockFile::acquire(&path) {
            Ok(lock) => held.lock = Some(lock),
            Err(LockError::Held(who)) => {
                return Err(crate::Usage(format!(
                    "the results file {} is being written by another run ({who} holds its lock {}); wait for it to end, or give another results path (-o FILE)",
                    results.display(),
                    path.display()
                ))
                .into());
            }
            Err(LockError::Io(e)) => {
                return Err(crate::Usage(format!(
                    "cannot lock the results file {} through {}: {}; remove what is at that path, or give another results path (-o FILE)",
                    results.display(),
                    path.display(),
                    files::error_text(&e)
                ))
                .into());
            }
        }
        Ok(held)
    }
}

impl Drop for ResultsLock {
    fn drop(&mut self) {
        drop(self.lock.take());
        for dir in &self.created {
            // Only an empty directory is removed: the run wrote nothing there.
            if std::fs::remove_dir(dir).is_ok() {
                files::dir::forget(dir);
            }
        }
    }
}

/// The NDJSON time-series path for a results path: `run.json` → `run.ndjson`.
pub(crate) fn timeseries_path(results: &Path) -> PathBuf {
    results.with_extension("ndjson")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RunResult {
        serde_json::from_value(crate::results::sample_json("io_uring", &["c"])).unwrap()
    }

    #[test]
    fn an_unfinished_file_is_marked_in_place_with_why_its_results_are_missing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut unfinished = sample();
        unfinished.interrupted = Interrupted::Unfinished;
        save(&path, &unfinished).unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        assert!(mark_unwritten(
            &path,
            "cannot write the results file r.json: no space left"
        ));
        // The same file, rewritten in place, still valid JSON.
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
        let marked = load(&path).unwrap();
        assert!(marked.interrupted.unfinished());
        assert_eq!(
            marked.interrupted.reason(),
            Some(
                "the run did not finish: storlab could not write its results: cannot write the results file r.json: no space left"
            )
        );
        // A finished file, or one this process did not write, is never touched.
        let finished = dir.path().join("f.json");
        save(&finished, &sample()).unwrap();
        assert!(!mark_unwritten(&finished, "why"));
        assert!(!mark_unwritten(&dir.path().join("other.json"), "why"));
    }

    #[test]
    fn a_second_lock_on_one_results_file_is_refused_and_the_first_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("new/deeper/r.json");
        let first = ResultsLock::acquire(&results).unwrap();
        assert!(lock_path(&results).exists());
        let error = ResultsLock::acquire(&results).unwrap_err();
        assert!(error.downcast_ref::<crate::Usage>().is_some());
        assert!(
            error
                .to_string()
                .contains("is being written by another run"),
            "{error}"
        );
        drop(first);
        // The lock file and the directories made for it are gone: nothing was written there.
        assert!(!dir.path().join("new").exists());
        let again = ResultsLock::acquire(&results).unwrap();
        save(&results, &sample()).unwrap();
        drop(again);
        assert!(results.exists() && !lock_path(&results).exists());
    }
}
