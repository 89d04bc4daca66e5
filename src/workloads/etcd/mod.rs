//! etcd's disk check: the check platform teams run before installing Kubernetes. etcd appends
//! each proposal to its write-ahead log and makes it durable with `fdatasync` before it
//! answers, so the storage under `/var/lib/etcd` is judged on the time of those syncs: small
//! sequential writes to a new, preallocated log file, each followed by `fdatasync` (the widely
//! used fio check: `fio --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300`; 8000
//! bytes for OpenShift's), passing when the 99th percentile of the sync time is under 10 ms
//! (etcd's documentation) and the synced writes keep up a rate of at least 50 a second (500
//! for heavily loaded clusters). Every threshold and its source is in docs/profiles.md.
//!
//! `mod.rs` owns the `[etcd]` section and its resolution into the one job it runs;
//! `workload.rs` the workload (description, run, rules); `section.rs` its part of the results.

pub(crate) mod cli;
pub(crate) mod section;
pub(crate) mod view;
pub(crate) mod workload;

use crate::job::{Access, IoLimit, Job, JobError, SectionErrors, Target, Worker};
use crate::units::{Dur, Size};
use crate::workloads::Room;
use crate::workloads::sync_check::{CheckFile, CheckKeys, CheckPlace};
use serde::Deserialize;
use std::path::PathBuf;

/// `[etcd]` job files.
pub(crate) const ROOM: Room = Room {
    section: "etcd",
    what: "an etcd disk check (its I/O comes from the `[etcd]` section)",
    hint: "storlab etcd FILE --write-size ...",
    flags: &[
        "--duration",
        "--interval",
        "--engine",
        "--seed",
        "--destroy-data",
    ],
    load: workload::load,
    schema: schemars::SchemaGenerator::subschema_for::<EtcdFile>,
    view: &view::EtcdView,
    subcommand: Some(cli::SUBCOMMAND),
    foreign: None,
};

/// The defaults: the fio check's write size and file size, etcd's limits.
pub(crate) mod defaults {
    /// Bytes of each write: the fio check's `--bs=2300` (the size of a typical WAL entry in
    /// the IBM Cloud study that derived the check).
    pub(crate) const WRITE_BYTES: u64 = 2300;
    /// Bytes of the log file written: the fio check's `--size=22m`.
    pub(crate) const FILE_BYTES: u64 = 22 << 20;
    /// The run ends after this long even when the file is not yet written (a slow disk).
    pub(crate) const MAX_DURATION_MS: u64 = 60_000;
    /// etcd's limit on the 99th percentile of its WAL fsync time (`wal_fsync_duration_seconds`).
    pub(crate) const SYNC_P99_NS: u64 = 10_000_000;
    /// Synced writes a second the storage must keep up (etcd's hardware guide, OpenShift).
    pub(crate) const MIN_RATE: f64 = 50.0;
    /// The same for heavily loaded clusters.
    pub(crate) const HEAVY_RATE: f64 = 500.0;
    /// The directory of the log file with no `directory` given.
    pub(crate) const DIRECTORY: &str = "storlab-scratch/etcd";
    /// The log file's name in it.
    pub(crate) const FILE_NAME: &str = "etcd-wal.storlab";
}

/// The log file's place, and the check's words for its refusals.
const PLACE: CheckPlace = CheckPlace {
    directory: defaults::DIRECTORY,
    file_name: defaults::FILE_NAME,
    null_engine: "it has no sync time to judge",
    directory_hint: "give etcd's data directory, e.g. /var/lib/etcd",
};

/// A job file with an `[etcd]` section.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EtcdFile {
    /// The section.
    pub etcd: EtcdSpec,
}

crate::workloads::spec! {
    /// The `[etcd]` section as written, and the flags of `storlab etcd` (each over the file's
    /// key of the same name); every key optional.
    #[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, clap::Args)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct EtcdSpec {
        /// Free text.
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// Directory of the log file: etcd's data directory, e.g. /var/lib/etcd (default
        /// ./storlab-scratch/etcd).
        #[arg(long, value_name = "DIR")]
        directory: Option<PathBuf>,
        /// Bytes of each write, e.g. 2300 (the fio check) or 8000 (OpenShift's).
        #[arg(long, value_name = "SIZE")]
        write_size: Option<Size>,
        /// Bytes of the log file, written once (default 22MiB, as the fio check).
        #[arg(long, value_name = "SIZE")]
        file_size: Option<Size>,
        /// The longest the check may take (default 60s); it ends when the file is written.
        #[arg(long, value_name = "TIME")]
        duration: Option<Dur>,
        /// Limit on the 99th percentile of the fdatasync time (default 10ms, etcd's).
        #[arg(long, value_name = "TIME")]
        sync_p99: Option<Dur>,
        /// Synced writes a second the storage must keep up (default 50; 500 with --heavy).
        #[arg(long, value_name = "N")]
        min_rate: Option<f64>,
        /// A heavily loaded cluster: at least 500 synced writes a second unless `min_rate`
        /// says otherwise.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        heavy: Option<bool>,
        /// Engine: psync (default, as the fio check's ioengine=sync) or io_uring.
        #[arg(long, value_name = "ENGINE")]
        engine: Option<String>,
        /// Time-series interval.
        #[arg(long, value_name = "TIME")]
        interval: Option<Dur>,
        /// Seed (the data written).
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Allow overwriting an existing file storlab did not create.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        destroy_data: Option<bool>,
    }
}

/// The check, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EtcdConfig {
    /// Free text.
    pub description: Option<String>,
    /// The log file, the engine, the interval, the seed, overwriting allowed.
    pub file: CheckFile,
    /// Bytes of each write.
    pub write_bytes: u64,
    /// Bytes of the log file.
    pub file_bytes: u64,
    /// The longest the run may take, ms.
    pub max_duration_ms: u64,
    /// Limit on the 99th percentile of the fdatasync time, ns.
    pub sync_p99_ns: u64,
    /// Synced writes a second required.
    pub min_rate: f64,
    /// Whether the rate is the heavily loaded clusters' one.
    pub heavy: bool,
}

/// Largest write size: far above any WAL entry etcd batches.
const MAX_WRITE_BYTES: u64 = 16 << 20;
/// Largest log file.
const MAX_FILE_BYTES: u64 = 64 << 30;

/// Validates `spec` (from `location`: a file path or `command line`) without syscalls.
pub(crate) fn resolve(spec: &EtcdSpec, location: &str) -> Result<EtcdConfig, JobError> {
    let e = SectionErrors {
        location,
        section: "etcd",
    };
    let write_bytes = spec.write_size.map_or(defaults::WRITE_BYTES, |s| s.0);
    if write_bytes == 0 || write_bytes > MAX_WRITE_BYTES {
        return Err(e.error(
            "write_size",
            format!("{write_bytes} bytes is out of range; give 1 byte to 16 MiB (2300 as the fio check, 8000 as OpenShift's)"),
        ));
    }
    let file_bytes = spec.file_size.map_or(defaults::FILE_BYTES, |s| s.0);
    if file_bytes < write_bytes || file_bytes > MAX_FILE_BYTES {
        return Err(e.error(
            "file_size",
            format!(
                "{file_bytes} bytes is out of range; give at least the write size ({write_bytes} bytes) and at most 64 GiB (22 MiB as the fio check)"
            ),
        ));
    }
    let max_duration_ms = spec
        .duration
        .map_or(defaults::MAX_DURATION_MS, |d| d.0.as_millis() as u64);
    if !(100..=86_400_000).contains(&max_duration_ms) {
        return Err(e.error(
            "duration",
            "give a duration from 100 ms to 24 h, e.g. 60s".into(),
        ));
    }
    let sync_p99_ns = spec
        .sync_p99
        .map_or(defaults::SYNC_P99_NS, |d| d.0.as_nanos() as u64);
    if sync_p99_ns == 0 {
        return Err(e.error("sync_p99", "give a limit above 0, e.g. 10ms".into()));
    }
    let heavy = spec.heavy.unwrap_or(false);
    let min_rate = spec.min_rate.unwrap_or(if heavy {
        defaults::HEAVY_RATE
    } else {
        defaults::MIN_RATE
    });
    if !(min_rate.is_finite() && min_rate >= 0.0) {
        return Err(e.error(
            "min_rate",
            "give synced writes a second, 0 or more, e.g. 50".into(),
        ));
    }
    let file = PLACE.resolve(&e, spec.check_keys())?;
    Ok(EtcdConfig {
        description: spec.description.clone(),
        file,
        write_bytes,
        file_bytes,
        max_duration_ms,
        sync_p99_ns,
        min_rate,
        heavy,
    })
}

impl EtcdSpec {
    /// The keys of the log file and the run, as written.
    fn check_keys(&self) -> CheckKeys<'_> {
        CheckKeys {
            directory: self.directory.as_deref(),
            engine: self.engine.as_deref(),
            interval: self.interval,
            seed: self.seed,
            destroy_data: self.destroy_data,
        }
    }
}

/// The class of the log's writes and syncs.
pub(crate) const CLASS: &str = "wal";

impl EtcdConfig {
    /// Writes that fill the log file once (as fio: each whole write that fits).
    pub(crate) fn planned_writes(&self) -> u64 {
        self.file_bytes / self.write_bytes
    }

    /// The one job: a worker writing the new, preallocated log file once from its start,
    /// `write_bytes` at a time through the page cache, each write followed by `fdatasync`.
    pub(crate) fn job(&self) -> Job {
        let mut job = self.file.job(
            format!(
                "etcd WAL check: {}-byte sequential writes, each followed by fdatasync",
                self.write_bytes
            ),
            self.max_duration_ms,
            // etcd writes its log through the page cache and syncs it; so does the fio check.
            true,
            Target {
                // A new segment, as etcd preallocates its WAL files (and fio lays out its).
                fresh: true,
                ..self.file.target(CLASS, self.file_bytes)
            },
        );
        let class = job.class(CLASS);
        let access = Access {
            fsync_every: 1,
            ..Access::new(class, self.write_bytes, 0.0, 0.0)
        };
        job.workers.push(Worker {
            // Each write and its sync: two I/Os.
            io_limit: Some(IoLimit::Ios(self.planned_writes() * 2)),
            ..Worker::closed_loop(CLASS, vec![0], 1, vec![access])
        });
        job
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> EtcdSpec {
        toml::from_str::<EtcdFile>(text).unwrap().etcd
    }

    #[test]
    fn defaults_are_the_fio_check() {
        let c = resolve(&EtcdSpec::default(), "command line").unwrap();
        assert_eq!((c.write_bytes, c.file_bytes), (2300, 22 << 20));
        assert_eq!(c.planned_writes(), (22 << 20) / 2300);
        assert_eq!((c.sync_p99_ns, c.min_rate), (10_000_000, 50.0));
        assert_eq!(c.file.engine, crate::job::EngineKind::Psync);
        assert_eq!(
            c.file.path,
            PathBuf::from("storlab-scratch/etcd/etcd-wal.storlab")
        );
        let job = c.job();
        assert!(job.buffered);
        assert!(job.targets[0].fresh);
        let w = &job.workers[0];
        assert_eq!(w.queue_depth, 1);
        assert_eq!(w.io_limit, Some(IoLimit::Ios(2 * c.planned_writes())));
        let a = &w.access[0];
        assert_eq!((a.read_pct, a.random_pct, a.fsync_every), (0.0, 0.0, 1));
        assert_eq!(a.block_size_bytes, 2300);
    }

    #[test]
    fn heavy_raises_the_rate_unless_given() {
        let c = resolve(&spec("[etcd]\nheavy = true\n"), "f").unwrap();
        assert_eq!(c.min_rate, 500.0);
        let c = resolve(&spec("[etcd]\nheavy = true\nmin_rate = 200\n"), "f").unwrap();
        assert_eq!(c.min_rate, 200.0);
    }

    #[test]
    fn bad_values_name_their_key() {
        for (text, key) in [
            ("write_size = 0", "etcd.write_size"),
            ("write_size = \"1GiB\"", "etcd.write_size"),
            ("file_size = 100", "etcd.file_size"),
            ("duration = \"10ms\"", "etcd.duration"),
            ("sync_p99 = \"0s\"", "etcd.sync_p99"),
            ("min_rate = -1", "etcd.min_rate"),
            ("engine = \"null\"", "etcd.engine"),
            ("engine = \"spdk\"", "etcd.engine"),
            ("interval = \"1ms\"", "etcd.interval"),
            ("directory = \"\"", "etcd.directory"),
        ] {
            let e = resolve(&spec(&format!("[etcd]\n{text}\n")), "job.toml").unwrap_err();
            assert_eq!(e.key, key, "{text}: {e}");
            assert_eq!(e.location, "job.toml");
        }
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<EtcdFile>("[etcd]\nblock_size = 4096\n").is_err());
    }
}
