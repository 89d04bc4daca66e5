//! A database validation as configured: the `[database]` section as written (flags override
//! it), validated into a [`DatabaseConfig`] with the profile's rates, sizes, paths and limits.

use super::{CHECKPOINT_INTERVAL_MS, DATA_IOS_PER_TRANSACTION, Engine, LOG_ALIGN_BYTES, Limits};
use crate::job::{EngineKind, JobError, SectionErrors};
use crate::units::{Dur, Size};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

crate::workloads::spec! {
    /// The `[database]` section of a job file, as written, and the flags of `storlab database`
    /// (each overrides the file's key of the same name).
    #[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema, clap::Args)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct DatabaseSpec {
        /// Database engine: oracle, sqlserver, postgresql or mysql.
        #[arg(long, value_name = "ENGINE")]
        engine: Option<String>,
        /// Size of the data files together, e.g. 10GiB.
        #[arg(long, value_name = "SIZE")]
        data_size: Option<Size>,
        /// Transactions per second (each commits once and causes the model's data-file I/Os).
        #[arg(long, value_name = "N", conflicts_with = "iops")]
        tps: Option<f64>,
        /// Data-file IOPS target instead of a transaction rate.
        #[arg(long, value_name = "N")]
        iops: Option<f64>,
        /// Log bytes each commit writes, e.g. 4KiB (default: the engine's).
        #[arg(long, value_name = "SIZE")]
        log_write_size: Option<Size>,
        /// Data page size (default: the engine's).
        #[arg(long, value_name = "SIZE")]
        page_size: Option<Size>,
        /// Number of data files.
        #[arg(long, value_name = "N")]
        data_files: Option<u32>,
        /// Directories for data files; files are spread over them (the flag is repeatable).
        #[arg(long = "data-path", value_name = "DIR")]
        data_paths: Option<Vec<PathBuf>>,
        /// Directory for the log (default: the first data directory).
        #[arg(long, value_name = "DIR")]
        log_path: Option<PathBuf>,
        /// Size of the log file (written round and round), e.g. 1GiB.
        #[arg(long, value_name = "SIZE")]
        log_size: Option<Size>,
        /// Workers per data file.
        #[arg(long, value_name = "N")]
        threads: Option<u32>,
        /// Time between checkpoints, e.g. 30s (0s: none).
        #[arg(long, value_name = "TIME")]
        checkpoint_interval: Option<Dur>,
        /// Read-ahead scans running beside the transactions.
        #[arg(long, value_name = "N")]
        scans: Option<u32>,
        /// Search for the highest transaction rate that passes.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        find_max: Option<bool>,
        /// Limit on average data-file read latency, e.g. 20ms (default: the engine's).
        #[arg(long, value_name = "TIME")]
        data_read_latency: Option<Dur>,
        /// Limit on average data-file write latency.
        #[arg(long, value_name = "TIME")]
        data_write_latency: Option<Dur>,
        /// Limit on average log write latency.
        #[arg(long, value_name = "TIME")]
        log_write_latency: Option<Dur>,
        /// Measured duration.
        #[arg(long, value_name = "TIME")]
        duration: Option<Dur>,
        /// Ramp before measurement.
        #[arg(long, value_name = "TIME")]
        ramp: Option<Dur>,
        /// Time-series interval.
        #[arg(long, value_name = "TIME")]
        interval: Option<Dur>,
        /// I/O engine: io_uring or psync.
        #[arg(long, value_name = "ENGINE")]
        io_engine: Option<String>,
        /// Seed.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Allow overwriting existing files that storlab did not create.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        destroy_data: Option<bool>,
    }
}

/// A job file holding a `[database]` section.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DatabaseFile {
    /// The section.
    pub database: DatabaseSpec,
}

/// Validated database validation inputs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DatabaseConfig {
    /// Engine modelled.
    pub engine: Engine,
    /// Transactions per second.
    pub tps: f64,
    /// Where the rate came from ("given", or "from 400 IOPS").
    pub rate_source: String,
    /// Size of each data file, bytes (a multiple of the page size).
    pub data_file_bytes: u64,
    /// Data files.
    pub data_files: u32,
    /// Data directories.
    pub data_paths: Vec<PathBuf>,
    /// Log directory.
    pub log_path: PathBuf,
    /// Log file size, bytes.
    pub log_bytes: u64,
    /// Log bytes per commit.
    pub log_write_bytes: u64,
    /// Page size, bytes.
    pub page_bytes: u64,
    /// Workers per data file.
    pub threads: u32,
    /// Between checkpoints, ms (0: none).
    pub checkpoint_interval_ms: u64,
    /// Read-ahead scans.
    pub scans: u32,
    /// Search for the highest passing rate.
    pub find_max: bool,
    /// Latency limits.
    pub limits: Limits,
    /// Measured duration, ms.
    pub duration_ms: u64,
    /// Ramp, ms.
    pub ramp_ms: u64,
    /// Interval, ms.
    pub interval_ms: u64,
    /// I/O engine.
    pub io_engine: EngineKind,
    /// Seed.
    pub seed: u64,
    /// Overwrite foreign files.
    pub destroy_data: bool,
}

/// What `storlab database` with no arguments runs: a quick check on a scratch directory.
pub(crate) mod quick {
    /// Engine.
    pub(crate) const ENGINE: super::Engine = super::Engine::Sqlserver;
    /// Data size.
    pub(crate) const DATA_BYTES: u64 = 1 << 30;
    /// Transactions per second.
    pub(crate) const TPS: f64 = 100.0;
    /// Data files.
    pub(crate) const DATA_FILES: u32 = 1;
    /// Workers per data file.
    pub(crate) const THREADS: u32 = 4;
    /// Log size.
    pub(crate) const LOG_BYTES: u64 = 64 << 20;
    /// Duration, ms.
    pub(crate) const DURATION_MS: u64 = 60_000;
    /// Ramp, ms.
    pub(crate) const RAMP_MS: u64 = 5_000;
    /// Scratch directory.
    pub(crate) const DIR: &str = "storlab-scratch/database";
}

/// The most transactions per second a profile may ask (a bound on the log writer's schedule).
const MAX_TPS: f64 = 10_000_000.0;

/// Validates a database spec. `location` names where it came from for errors.
pub(crate) fn resolve(spec: &DatabaseSpec, location: &str) -> Result<DatabaseConfig, JobError> {
    let errors = SectionErrors {
        location,
        section: "database",
    };
    let engine = match &spec.engine {
        Some(e) => Engine::parse(e).map_err(|m| errors.error("engine", m))?,
        None => quick::ENGINE,
    };
    let model = engine.model();
    let (tps, rate_source) = rate(spec, &errors)?;
    let page_bytes = spec.page_size.map_or(model.page_bytes, |s| s.0);
    if !(512..=1 << 20).contains(&page_bytes) || !page_bytes.is_power_of_two() {
        return Err(errors.error(
            "page_size",
            format!("page size {page_bytes} bytes: use a power of two from 512 B to 1 MiB"),
        ));
    }
    let data_files = spec.data_files.unwrap_or(quick::DATA_FILES);
    if !(1..=64).contains(&data_files) {
        return Err(errors.error(
            "data_files",
            format!("{data_files} data files: use 1 to 64"),
        ));
    }
    let data_bytes = spec.data_size.map_or(quick::DATA_BYTES, |s| s.0);
    if data_bytes > 1 << 60 {
        return Err(errors.error(
            "data_size",
            format!("{data_bytes} bytes is more than any storage holds; use e.g. 100GiB"),
        ));
    }
    let data_file_bytes = data_bytes / data_files as u64 / page_bytes * page_bytes;
    if data_file_bytes < page_bytes * 16 {
        return Err(errors.error(
            "data_size",
            format!(
                "each data file would hold fewer than 16 pages of {page_bytes} bytes; give a larger data size"
            ),
        ));
    }
    let log_write_bytes = spec.log_write_size.map_or(model.log_write_bytes, |s| s.0);
    if !(512..=model.log_max_write_bytes).contains(&log_write_bytes) {
        return Err(errors.error(
            "log_write_size",
            format!(
                "a commit's log write of {log_write_bytes} bytes: use 512 B to {} B, the largest log write {} makes",
                model.log_max_write_bytes,
                engine.title()
            ),
        ));
    }
    let log_bytes = spec.log_size.map_or(quick::LOG_BYTES, |s| s.0);
    if !(1 << 20..=1 << 40).contains(&log_bytes) {
        return Err(errors.error(
            "log_size",
            "the log size must be from 1 MiB to 1 TiB".into(),
        ));
    }
    let data_paths = spec
        .data_paths
        .clone()
        .unwrap_or_else(|| vec![PathBuf::from(quick::DIR)]);
    let Some(first) = data_paths.first() else {
        return Err(errors.error("data_paths", "give at least one data directory".into()));
    };
    let log_path = spec.log_path.clone().unwrap_or_else(|| first.clone());
    let threads = spec.threads.unwrap_or(quick::THREADS);
    if !(1..=256).contains(&threads) {
        return Err(errors.error(
            "threads",
            format!("{threads} workers per data file: use 1 to 256"),
        ));
    }
    let checkpoint_interval_ms = spec
        .checkpoint_interval
        .map_or(CHECKPOINT_INTERVAL_MS, |d| d.0.as_millis() as u64);
    if checkpoint_interval_ms > 0 && checkpoint_interval_ms < 100 {
        return Err(errors.error(
            "checkpoint_interval",
            "the checkpoint interval must be at least 100 ms, or 0s for no checkpoints".into(),
        ));
    }
    let scans = spec.scans.unwrap_or(0);
    if scans > 64 {
        return Err(errors.error("scans", format!("{scans} scans: use 0 to 64")));
    }
    let limits = limits(spec, &model.limits, &errors)?;
    let ms = |d: Option<Dur>, default: u64| d.map_or(default, |d| d.0.as_millis() as u64);
    let duration_ms = ms(spec.duration, quick::DURATION_MS);
    if duration_ms < 1000 {
        return Err(errors.error("duration", "the duration must be at least 1s".into()));
    }
    let interval_ms = ms(spec.interval, 1000);
    if interval_ms < 10 {
        return Err(errors.error("interval", "the interval must be at least 10ms".into()));
    }
    let io_engine = match &spec.io_engine {
        Some(e) => EngineKind::parse(e).map_err(|m| errors.error("io_engine", m))?,
        None => EngineKind::IoUring,
    };
    Ok(DatabaseConfig {
        engine,
        tps,
        rate_source,
        data_file_bytes,
        data_files,
        data_paths,
        log_path,
        log_bytes: log_bytes / LOG_ALIGN_BYTES * LOG_ALIGN_BYTES,
        log_write_bytes,
        page_bytes,
        threads,
        checkpoint_interval_ms,
        scans,
        find_max: spec.find_max.unwrap_or(false),
        limits,
        duration_ms,
        ramp_ms: ms(spec.ramp, quick::RAMP_MS.min(duration_ms / 4)),
        interval_ms,
        io_engine,
        seed: spec.seed.unwrap_or(crate::job::defaults::SEED),
        destroy_data: spec.destroy_data.unwrap_or(false),
    })
}

/// The transaction rate and where it came from: `tps`, or `iops` over the model's data-file
/// I/Os per transaction, or the quick check's.
fn rate(spec: &DatabaseSpec, errors: &SectionErrors) -> Result<(f64, String), JobError> {
    let usable = |v: f64| v.is_finite() && v > 0.0 && v <= MAX_TPS;
    match (spec.tps, spec.iops) {
        (Some(_), Some(_)) => Err(errors.error(
            "tps",
            "give either a transaction rate (tps) or a data-file IOPS target (iops), not both"
                .into(),
        )),
        (Some(t), None) if !usable(t) => Err(errors.error(
            "tps",
            format!("{t} is not a usable transaction rate; use e.g. 500"),
        )),
        (Some(t), None) => Ok((t, "given".into())),
        (None, Some(i)) if !usable(i / DATA_IOS_PER_TRANSACTION) => Err(errors.error(
            "iops",
            format!("{i} is not a usable IOPS target; use e.g. 2000"),
        )),
        (None, Some(i)) => Ok((
            i / DATA_IOS_PER_TRANSACTION,
            format!(
                "from {} data-file IOPS at {DATA_IOS_PER_TRANSACTION} I/Os per transaction",
                crate::units::format_number(i)
            ),
        )),
        (None, None) => Ok((quick::TPS, "the quick check's".into())),
    }
}

/// The latency limits: those given, the engine's otherwise.
fn limits(
    spec: &DatabaseSpec,
    engine: &Limits,
    errors: &SectionErrors,
) -> Result<Limits, JobError> {
    let mut out = *engine;
    for (key, given, slot) in [
        (
            "data_read_latency",
            spec.data_read_latency,
            &mut out.data_read_ms,
        ),
        (
            "data_write_latency",
            spec.data_write_latency,
            &mut out.data_write_ms,
        ),
        (
            "log_write_latency",
            spec.log_write_latency,
            &mut out.log_write_ms,
        ),
    ] {
        if let Some(d) = given {
            if d.0.is_zero() {
                return Err(errors.error(key, "a latency limit must be above 0, e.g. 20ms".into()));
            }
            *slot = d.0.as_secs_f64() * 1e3;
        }
    }
    Ok(out)
}

impl DatabaseConfig {
    /// Data-file IOPS (reads and writes) at `tps` transactions per second.
    pub(crate) fn data_iops(&self, tps: f64) -> f64 {
        tps * DATA_IOS_PER_TRANSACTION
    }

    /// Data file `n`'s path, spread round-robin over the data paths.
    pub(crate) fn data_path(&self, n: u32) -> PathBuf {
        let dir = &self.data_paths[n as usize % self.data_paths.len()];
        dir.join(format!("storlab-{}-data{}.dbf", self.engine.name(), n + 1))
    }

    /// The log file's path.
    pub(crate) fn log_file(&self) -> PathBuf {
        self.log_path
            .join(format!("storlab-{}-log.dbf", self.engine.name()))
    }
}
