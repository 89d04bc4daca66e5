//! What the two sync checks, etcd's disk check and the WAL sync comparison, have alike: one
//! file written by one worker at a time, its place and its run resolved from the same keys
//! (`directory`, `engine`, `interval`, `seed`, `destroy_data`), and the job that writes it.

use crate::job::{EngineKind, Job, JobError, SectionErrors, Target};
use crate::units::Dur;
use std::path::{Path, PathBuf};

/// A sync check's file and the keys of its run, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CheckFile {
    /// The file.
    pub path: PathBuf,
    /// The engine.
    pub engine: EngineKind,
    /// Time-series interval, ms.
    pub interval_ms: u64,
    /// Seed.
    pub seed: u64,
    /// Overwriting a foreign file is allowed.
    pub destroy_data: bool,
}

/// A sync check's keys of its file and its run, as written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheckKeys<'a> {
    /// `directory`.
    pub directory: Option<&'a Path>,
    /// `engine`.
    pub engine: Option<&'a str>,
    /// `interval`.
    pub interval: Option<Dur>,
    /// `seed`.
    pub seed: Option<u64>,
    /// `destroy_data`.
    pub destroy_data: Option<bool>,
}

/// What a sync check says of its file: where it goes without a `directory`, and the words of
/// the refusals that are its own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheckPlace {
    /// The directory with no `directory` given.
    pub directory: &'static str,
    /// The file's name in it.
    pub file_name: &'static str,
    /// Why the null engine cannot serve (`it has no sync time to judge`).
    pub null_engine: &'static str,
    /// What to give for an empty `directory` (`give etcd's data directory, e.g. ...`).
    pub directory_hint: &'static str,
}

impl CheckPlace {
    /// Validates `keys` (in the section `e` names) without syscalls: psync unless an engine is
    /// given (never the null engine, which does no I/O to time), an interval of at least
    /// 100 ms, a directory that is not empty.
    pub(crate) fn resolve(
        &self,
        e: &SectionErrors,
        keys: CheckKeys,
    ) -> Result<CheckFile, JobError> {
        let engine = match keys.engine {
            None => EngineKind::Psync,
            Some(s) => match EngineKind::parse(s) {
                Ok(EngineKind::Null) => {
                    return Err(e.error(
                        "engine",
                        format!(
                            "the null engine does no I/O, so {}; use psync or io_uring",
                            self.null_engine
                        ),
                    ));
                }
                Ok(k) => k,
                Err(m) => return Err(e.error("engine", m)),
            },
        };
        let interval_ms = keys
            .interval
            .map_or(crate::job::defaults::INTERVAL_MS, |d| {
                d.0.as_millis() as u64
            });
        if interval_ms < 100 {
            return Err(e.error("interval", "give an interval of at least 100 ms".into()));
        }
        let directory = keys.directory.unwrap_or(Path::new(self.directory));
        if directory.as_os_str().is_empty() {
            return Err(e.error(
                "directory",
                format!("the path is empty; {}", self.directory_hint),
            ));
        }
        Ok(CheckFile {
            path: directory.join(self.file_name),
            engine,
            interval_ms,
            seed: keys.seed.unwrap_or(crate::job::defaults::SEED),
            destroy_data: keys.destroy_data.unwrap_or(false),
        })
    }
}

impl CheckFile {
    /// The check's file as a target: `name`, of `size_bytes`, opened plainly.
    pub(crate) fn target(&self, name: &str, size_bytes: u64) -> Target {
        Target::file(name.into(), self.path.clone(), Some(size_bytes))
    }

    /// A job of the one `target` with no workers yet, `description`, lasting at most
    /// `duration_ms` with no ramp, through the page cache when `buffered`, each I/O submitted
    /// as soon as it is ready.
    pub(crate) fn job(
        &self,
        description: String,
        duration_ms: u64,
        buffered: bool,
        target: Target,
    ) -> Job {
        Job {
            description: Some(description),
            engine: self.engine,
            duration_ms,
            ramp_ms: 0,
            interval_ms: self.interval_ms,
            seed: self.seed,
            buffered,
            destroy_data: self.destroy_data,
            batch: 1,
            targets: vec![target],
            ..Job::default()
        }
    }
}
