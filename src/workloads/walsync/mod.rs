//! PostgreSQL's WAL sync methods compared: `pg_test_fsync`'s question answered on the user's
//! storage. PostgreSQL makes its write-ahead log durable by one of `wal_sync_method`'s
//! methods: `open_datasync` (the file opened with O_DSYNC), `fdatasync` and `fsync` (a call
//! after the writes) or `open_sync` (opened with O_SYNC), each with or without O_DIRECT. Each
//! method is measured for a short fixed time at the WAL block size (8 KiB) with one write per
//! sync and with several (a commit that wrote more than a block), the writes at the start of
//! a 16 MiB file as pg_test_fsync writes them, and the results give each method's operations
//! (syncs) per second and latency and name the fastest.
//!
//! `mod.rs` owns the `[wal_sync]` section and its resolution into the points it measures;
//! `workload.rs` the workload (description, the runs, the results section); `source.rs` the
//! request source that issues one method's writes and syncs and times each operation;
//! `section.rs` its part of the results.

pub(crate) mod cli;
pub(crate) mod section;
pub(crate) mod source;
pub(crate) mod view;
pub(crate) mod workload;

use crate::job::{Access, Job, JobError, SectionErrors, Target, Worker};
use crate::units::{Dur, Size};
use crate::workloads::Room;
use crate::workloads::sync_check::{CheckFile, CheckKeys, CheckPlace};
use serde::Deserialize;
use std::path::PathBuf;

/// `[wal_sync]` job files.
pub(crate) const ROOM: Room = Room {
    section: "wal_sync",
    what: "a comparison of WAL sync methods (its I/O comes from the `[wal_sync]` section)",
    hint: "storlab wal-sync FILE --methods ...",
    flags: &["--interval", "--engine", "--seed", "--destroy-data"],
    load: workload::load,
    schema: schemars::SchemaGenerator::subschema_for::<WalSyncFile>,
    view: &view::WalSyncView,
    subcommand: Some(cli::SUBCOMMAND),
    foreign: None,
};

/// The defaults.
pub(crate) mod defaults {
    /// PostgreSQL's WAL block size (`XLOG_BLCKSZ`).
    pub(crate) const BLOCK_BYTES: u64 = 8192;
    /// The file written: a WAL segment's default size, as pg_test_fsync's file.
    pub(crate) const FILE_BYTES: u64 = 16 << 20;
    /// Each method measured this long (pg_test_fsync's default is 5 s; 2 s keeps the whole
    /// comparison about a minute).
    pub(crate) const SECONDS_MS: u64 = 2_000;
    /// Writes per sync compared: one, and two as pg_test_fsync's second table.
    pub(crate) const WRITES_PER_SYNC: [u32; 2] = [1, 2];
    /// The directory of the file with no `directory` given.
    pub(crate) const DIRECTORY: &str = "storlab-scratch/wal-sync";
    /// The file's name in it.
    pub(crate) const FILE_NAME: &str = "pg-wal-sync.storlab";
}

/// The file's place, and the comparison's words for its refusals.
const PLACE: CheckPlace = CheckPlace {
    directory: defaults::DIRECTORY,
    file_name: defaults::FILE_NAME,
    null_engine: "no method can be timed",
    directory_hint: "give the WAL's directory",
};

/// A way of making WAL writes durable (`wal_sync_method`), or none (the baseline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Method {
    /// Opened with O_DSYNC: each write durable when it returns.
    OpenDatasync,
    /// `fdatasync` after the writes.
    Fdatasync,
    /// `fsync` after the writes.
    Fsync,
    /// Opened with O_SYNC: each write durable with the file's metadata when it returns.
    OpenSync,
    /// Writes that are never synced: what the storage does without durability.
    NoSync,
}

impl Method {
    /// The four sync methods, in `wal_sync_method`'s order of preference.
    pub(crate) const SYNCS: [Method; 4] = [
        Method::OpenDatasync,
        Method::Fdatasync,
        Method::Fsync,
        Method::OpenSync,
    ];

    /// Its name, as `wal_sync_method` spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Method::OpenDatasync => "open_datasync",
            Method::Fdatasync => "fdatasync",
            Method::Fsync => "fsync",
            Method::OpenSync => "open_sync",
            Method::NoSync => "write only",
        }
    }

    /// Parses a `wal_sync_method` name.
    pub(crate) fn parse(s: &str) -> Result<Method, String> {
        Method::SYNCS
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown method `{s}`; use open_datasync, fdatasync, fsync or open_sync (fsync_writethrough is Windows' and macOS's)"
                )
            })
    }
}

/// One measured configuration: a method, with or without O_DIRECT, and its writes per sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Point {
    /// The method.
    pub method: Method,
    /// The file opened with O_DIRECT.
    pub direct: bool,
    /// Writes of a block per sync (per operation).
    pub writes_per_sync: u32,
}

impl Point {
    /// `fdatasync, O_DIRECT, 2 writes per sync`-style name, unique per point; the class name
    /// of its I/O.
    pub(crate) fn label(&self) -> String {
        format!(
            "{}{} ×{}",
            self.method.name(),
            if self.direct { " +O_DIRECT" } else { "" },
            self.writes_per_sync
        )
    }
}

/// A job file with a `[wal_sync]` section.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WalSyncFile {
    /// The section.
    pub wal_sync: WalSyncSpec,
}

crate::workloads::spec! {
    /// The `[wal_sync]` section as written, and the flags of `storlab wal-sync` (each over the
    /// file's key of the same name); every key optional.
    #[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, clap::Args)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct WalSyncSpec {
        /// Free text.
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// Directory of the file: the WAL's, e.g. /var/lib/postgresql/16/main/pg_wal (default
        /// ./storlab-scratch/wal-sync).
        #[arg(long, value_name = "DIR")]
        directory: Option<PathBuf>,
        /// Bytes of each write: the WAL block size (default 8KiB).
        #[arg(long, value_name = "SIZE")]
        block_size: Option<Size>,
        /// Bytes of the file (default 16MiB, a WAL segment).
        #[arg(long, value_name = "SIZE")]
        file_size: Option<Size>,
        /// How long each method is measured (default 2s; pg_test_fsync's is 5s).
        #[arg(long, value_name = "TIME")]
        seconds_per_method: Option<Dur>,
        /// Writes per sync to compare, e.g. 1,2,4,8,16 (default 1,2).
        #[arg(long, value_name = "N,...", value_delimiter = ',')]
        writes_per_sync: Option<Vec<u32>>,
        /// Methods to compare, e.g. fdatasync,open_datasync (default all four).
        #[arg(long, value_name = "METHOD,...", value_delimiter = ',')]
        methods: Option<Vec<String>>,
        /// O_DIRECT: both (default), on or off.
        #[arg(long, value_name = "both|on|off")]
        direct: Option<String>,
        /// Also measure writes that are never synced, the baseline (default true).
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        no_sync: Option<bool>,
        /// Engine: psync (default: one call at a time, as PostgreSQL) or io_uring.
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

/// The comparison, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WalSyncConfig {
    /// Free text.
    pub description: Option<String>,
    /// The file, the engine, the interval, the seed, overwriting allowed.
    pub file: CheckFile,
    /// Bytes of each write.
    pub block_bytes: u64,
    /// Bytes of the file.
    pub file_bytes: u64,
    /// How long each point is measured, ms.
    pub point_ms: u64,
    /// The points, in the order they run.
    pub points: Vec<Point>,
}

/// Most points one comparison may measure.
const MAX_POINTS: usize = 200;

/// Validates `spec` (from `location`) without syscalls.
pub(crate) fn resolve(spec: &WalSyncSpec, location: &str) -> Result<WalSyncConfig, JobError> {
    let e = SectionErrors {
        location,
        section: "wal_sync",
    };
    let block_bytes = spec.block_size.map_or(defaults::BLOCK_BYTES, |s| s.0);
    if !(512..=1 << 20).contains(&block_bytes) || block_bytes % 512 != 0 {
        return Err(e.error(
            "block_size",
            format!("{block_bytes} bytes: give a multiple of 512 bytes from 512 bytes to 1 MiB (PostgreSQL's WAL block is 8 KiB)"),
        ));
    }
    let writes = spec
        .writes_per_sync
        .clone()
        .unwrap_or_else(|| defaults::WRITES_PER_SYNC.to_vec());
    if writes.is_empty() || writes.len() > 32 || writes.iter().any(|&n| n == 0 || n > 1024) {
        return Err(e.error(
            "writes_per_sync",
            "give a list of at most 32 numbers of writes per sync, each 1 to 1024, e.g. [1, 2, 4, 8, 16]".into(),
        ));
    }
    let file_bytes = spec.file_size.map_or(defaults::FILE_BYTES, |s| s.0);
    let most = u64::from(*writes.iter().max().unwrap_or(&1)) * block_bytes;
    if file_bytes < most || file_bytes > 64 << 30 || file_bytes % block_bytes != 0 {
        return Err(e.error(
            "file_size",
            format!(
                "{file_bytes} bytes: give a multiple of the block size ({block_bytes} bytes), at least the most writes per sync × the block size ({most} bytes) and at most 64 GiB"
            ),
        ));
    }
    let point_ms = spec
        .seconds_per_method
        .map_or(defaults::SECONDS_MS, |d| d.0.as_millis() as u64);
    if !(100..=3_600_000).contains(&point_ms) {
        return Err(e.error(
            "seconds_per_method",
            "give a time from 100 ms to 1 h, e.g. 2s (pg_test_fsync's default is 5 s)".into(),
        ));
    }
    let methods = match &spec.methods {
        None => Method::SYNCS.to_vec(),
        Some(names) if names.is_empty() || names.len() > 16 => {
            return Err(e.error(
                "methods",
                "give one to four of open_datasync, fdatasync, fsync and open_sync".into(),
            ));
        }
        Some(names) => names
            .iter()
            .map(|n| Method::parse(n.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| e.error("methods", m))?,
    };
    let directs: &[bool] = match spec.direct.as_deref() {
        None | Some("both") => &[false, true],
        Some("on") => &[true],
        Some("off") => &[false],
        Some(other) => {
            return Err(e.error("direct", format!("`{other}`: use both, on or off")));
        }
    };
    let mut points = Vec::new();
    for &writes_per_sync in &writes {
        for &method in &methods {
            for &direct in directs {
                let p = Point {
                    method,
                    direct,
                    writes_per_sync,
                };
                if !points.contains(&p) {
                    points.push(p);
                }
            }
        }
    }
    if spec.no_sync.unwrap_or(true) {
        points.push(Point {
            method: Method::NoSync,
            direct: false,
            writes_per_sync: 1,
        });
    }
    if points.len() > MAX_POINTS {
        return Err(e.error(
            "writes_per_sync",
            format!(
                "{} methods to measure is too many; at most {MAX_POINTS}",
                points.len()
            ),
        ));
    }
    let file = PLACE.resolve(&e, spec.check_keys())?;
    Ok(WalSyncConfig {
        description: spec.description.clone(),
        file,
        block_bytes,
        file_bytes,
        point_ms,
        points,
    })
}

impl WalSyncSpec {
    /// The keys of the file and the runs, as written.
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

impl WalSyncConfig {
    /// The job that measures `point`: one worker at queue depth 1 on the file, opened as the
    /// method opens it, its I/O issued by [`source::Groups`].
    pub(crate) fn job(&self, point: &Point) -> Job {
        let mut job = self.file.job(
            format!("WAL sync method {}", point.label()),
            self.point_ms,
            !point.direct,
            Target {
                sync: point.method == Method::OpenDatasync,
                osync: point.method == Method::OpenSync,
                ..self.file.target("wal", self.file_bytes)
            },
        );
        let class = job.class(&point.label());
        job.workers.push(Worker {
            driven_by: Some(format!(
                "{} writes of {} bytes at the file's start, then {}",
                point.writes_per_sync,
                self.block_bytes,
                match point.method {
                    Method::Fdatasync => "fdatasync",
                    Method::Fsync => "fsync",
                    Method::OpenDatasync | Method::OpenSync =>
                        "nothing (each write is synchronous)",
                    Method::NoSync => "nothing (never synced)",
                }
            )),
            ..Worker::closed_loop(
                "wal",
                vec![0],
                1,
                vec![Access::new(class, self.block_bytes, 0.0, 0.0)],
            )
        });
        job
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> WalSyncSpec {
        toml::from_str::<WalSyncFile>(&format!("[wal_sync]\n{text}\n"))
            .unwrap()
            .wal_sync
    }

    #[test]
    fn defaults_compare_every_method_with_and_without_o_direct_at_one_and_two_writes() {
        let c = resolve(&WalSyncSpec::default(), "command line").unwrap();
        assert_eq!(
            (c.block_bytes, c.file_bytes, c.point_ms),
            (8192, 16 << 20, 2000)
        );
        // 4 methods × 2 × 2 writes per sync, and the never-synced baseline.
        assert_eq!(c.points.len(), 17);
        assert_eq!(c.points[0].label(), "open_datasync ×1");
        assert_eq!(c.points[1].label(), "open_datasync +O_DIRECT ×1");
        assert_eq!(c.points[16].method, Method::NoSync);
        let labels: Vec<String> = c.points.iter().map(Point::label).collect();
        let mut unique = labels.clone();
        unique.dedup();
        assert_eq!(unique.len(), labels.len());
    }

    #[test]
    fn each_method_opens_its_file_as_postgresql_does() {
        let c = resolve(&spec("writes_per_sync = [4]\nno_sync = false"), "f").unwrap();
        for p in &c.points {
            let job = c.job(p);
            let t = &job.targets[0];
            assert_eq!(t.sync, p.method == Method::OpenDatasync, "{p:?}");
            assert_eq!(t.osync, p.method == Method::OpenSync, "{p:?}");
            assert_eq!(job.buffered, !p.direct);
            assert!(!t.fresh);
            assert_eq!(job.duration_ms, 2000);
            assert_eq!(p.writes_per_sync, 4);
        }
    }

    #[test]
    fn bad_values_name_their_key() {
        for (text, key) in [
            ("block_size = 1000", "wal_sync.block_size"),
            ("writes_per_sync = []", "wal_sync.writes_per_sync"),
            ("writes_per_sync = [0]", "wal_sync.writes_per_sync"),
            (
                "writes_per_sync = [\n1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]",
                "wal_sync.writes_per_sync",
            ),
            (
                "file_size = 8192\nwrites_per_sync = [2]",
                "wal_sync.file_size",
            ),
            (
                "seconds_per_method = \"1ms\"",
                "wal_sync.seconds_per_method",
            ),
            ("methods = [\"fsync_writethrough\"]", "wal_sync.methods"),
            ("methods = []", "wal_sync.methods"),
            ("direct = \"maybe\"", "wal_sync.direct"),
            ("engine = \"null\"", "wal_sync.engine"),
        ] {
            let e = resolve(&spec(text), "job.toml").unwrap_err();
            assert_eq!(e.key, key, "{text}: {e}");
        }
    }
}
