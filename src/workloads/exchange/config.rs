//! An Exchange validation as configured: the `[exchange]` section as written (flags override
//! it), validated into an [`ExchangeConfig`] with the profile's IOPS, sizes, paths and limits.

use super::{
    BACKUP_READ_BYTES, CALCULATOR_HEADROOM_PCT, COPIES_WRITE_REDUCTION, LOG_FILE_BYTES,
    LOG_FILES_PER_STREAM, MAX_COPIES, MAX_LATENCY_PERFORMANCE_MS, MAX_LATENCY_STRESS_MS,
    RECOVERY_LOG_FILES, StorageLimits, TestType, Version, VersionModel, iops_for_messages,
};
use crate::job::{EngineKind, JobError, SectionErrors};
use crate::units::Dur;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use super::spec::{ExchangeSpec, ThreadsSpec};

/// Validated Exchange inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExchangeConfig {
    /// Version.
    pub version: Version,
    /// Test type.
    pub test: TestType,
    /// Mailboxes.
    pub mailboxes: u64,
    /// Mailbox size, bytes.
    pub mailbox_size_bytes: u64,
    /// Transactional IOPS per mailbox.
    pub iops_per_mailbox: f64,
    /// Where the IOPS per mailbox came from.
    pub iops_source: String,
    /// Databases.
    pub databases: u32,
    /// Database directories.
    pub db_paths: Vec<PathBuf>,
    /// Log directories.
    pub log_paths: Vec<PathBuf>,
    /// Threads per database (2007, 2010) or shared by all databases (2013 and later, see
    /// [`ExchangeConfig::global_threads`]); `None`: tune automatically.
    pub threads: Option<u32>,
    /// Copies of each database.
    #[serde(default = "one")]
    pub copies: u32,
    /// Headroom, percent.
    pub headroom_pct: f64,
    /// Where the headroom came from.
    #[serde(default)]
    pub headroom: Headroom,
    /// Background maintenance on.
    pub maintenance: bool,
    /// Measured duration, ms.
    pub duration_ms: u64,
    /// Ramp, ms.
    pub ramp_ms: u64,
    /// Interval, ms.
    pub interval_ms: u64,
    /// Fraction of the real database size that is built (1.0: full size).
    pub capacity_fraction: f64,
    /// Throughput mode: (database share of free space %, throughput %).
    pub throughput_mode: Option<(f64, f64)>,
    /// Search for the maximum mailbox count.
    pub find_max_mailboxes: bool,
    /// Average database read latency limit, ms.
    pub db_read_limit_ms: f64,
    /// Average log write latency limit, ms.
    pub log_write_limit_ms: f64,
    /// Maximum database read latency limit, ms.
    pub max_latency_ms: f64,
    /// Recovery: log files per database.
    pub log_files: u32,
    /// Backup: read size, bytes.
    pub backup_block_bytes: u64,
    /// Database page size, bytes.
    pub page_bytes: u64,
    /// Engine.
    pub engine: EngineKind,
    /// Seed.
    pub seed: u64,
    /// Overwrite foreign files.
    pub destroy_data: bool,
    /// Data verification.
    pub verify: bool,
    /// Record the block sample.
    pub sample_blocks: bool,
    /// A cache tier in front of each database (the transactional tests): each database's
    /// device (in the order of the databases) and the tier's settings.
    #[serde(default)]
    pub cache: Option<(Vec<PathBuf>, crate::job::cache::CacheTier)>,
    /// Run the validation without the cache tier first, then with it (`cache` is set).
    #[serde(default)]
    pub compare_cache: bool,
}

fn one() -> u32 {
    1
}

/// Where the headroom over the IOPS per mailbox came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Headroom {
    /// None: the IOPS per mailbox is the target, as Jetstress takes it.
    #[default]
    None,
    /// Asked for (`headroom`).
    Given,
    /// The calculator's, on a rate derived from messages a day.
    Calculator,
}

/// What `storlab exchange` with no arguments runs: a quick validation on a scratch directory.
pub(crate) mod quick {
    /// Mailboxes.
    pub(crate) const MAILBOXES: u64 = 1000;
    /// Mailbox size.
    pub(crate) const MAILBOX_SIZE: u64 = 2 << 30;
    /// Capacity fraction: 1000 × 2 GiB × 0.1% = 2 GiB of databases.
    pub(crate) const CAPACITY_PCT: f64 = 0.1;
    /// Databases.
    pub(crate) const DATABASES: u32 = 2;
    /// Threads per database.
    pub(crate) const THREADS: u32 = 2;
    /// Duration, ms.
    pub(crate) const DURATION_MS: u64 = 60_000;
    /// Ramp, ms.
    pub(crate) const RAMP_MS: u64 = 5_000;
    /// Scratch directory.
    pub(crate) const DIR: &str = "storlab-scratch/exchange";
}

/// Validates an Exchange spec. `location` names where it came from for errors.
pub(crate) fn resolve(spec: &ExchangeSpec, location: &str) -> Result<ExchangeConfig, JobError> {
    let errors = SectionErrors {
        location,
        section: "exchange",
    };
    let profile = Profile::resolve(spec, &errors)?;
    let model = profile.version.model();
    let layout = Layout::resolve(spec, &model, &errors)?;
    let run = RunSettings::resolve(spec, &model, &errors)?;
    check_database_size(&profile, &layout, &run, &errors)?;
    let max_read_default_ms = match profile.test {
        TestType::Stress => MAX_LATENCY_STRESS_MS,
        _ => MAX_LATENCY_PERFORMANCE_MS,
    };
    let limits = StorageLimits::of(
        spec.db_read_latency,
        spec.log_write_latency,
        spec.max_latency,
        max_read_default_ms,
    );
    let cfg = ExchangeConfig {
        version: profile.version,
        test: profile.test,
        mailboxes: profile.mailboxes,
        mailbox_size_bytes: profile.mailbox_size_bytes,
        iops_per_mailbox: profile.iops_per_mailbox,
        iops_source: profile.iops_source,
        databases: layout.databases,
        db_paths: layout.db_paths,
        log_paths: layout.log_paths,
        threads: layout.threads,
        copies: layout.copies,
        headroom_pct: profile.headroom_pct,
        headroom: profile.headroom,
        maintenance: layout.maintenance,
        duration_ms: run.duration_ms,
        ramp_ms: run.ramp_ms,
        interval_ms: run.interval_ms,
        capacity_fraction: run.capacity_fraction,
        throughput_mode: profile.throughput_mode,
        find_max_mailboxes: spec.find_max_mailboxes.unwrap_or(false),
        db_read_limit_ms: limits.db_read_ms,
        log_write_limit_ms: limits.log_write_ms,
        max_latency_ms: limits.max_read_ms,
        log_files: run.log_files,
        backup_block_bytes: run.backup_block_bytes,
        page_bytes: run.page_bytes,
        engine: run.engine,
        seed: spec.seed.unwrap_or(crate::job::defaults::SEED),
        destroy_data: spec.destroy_data.unwrap_or(false),
        verify: spec.verify.unwrap_or(false),
        sample_blocks: spec.sample_blocks.unwrap_or(false),
        cache: cache(spec, layout.databases, &errors)?,
        compare_cache: spec.compare_cache.unwrap_or(false),
    };
    if cfg.compare_cache {
        if cfg.cache.is_none() {
            return Err(errors.error(
                "compare_cache",
                "comparing the validation without and with a cache needs the cache: give cache_devices (--cache-device), one per database".into(),
            ));
        }
        if !matches!(cfg.test, TestType::Performance | TestType::Stress) {
            return Err(errors.error(
                "compare_cache",
                format!(
                    "the cache tier is for the transactional tests, not the {} test: use test = \"performance\" or \"stress\"",
                    cfg.test.name()
                ),
            ));
        }
    }
    if cfg.throughput_mode.is_none() && cfg.database_bytes() < cfg.page_bytes * 16 {
        return Err(errors.error(
            "capacity",
            format!(
                "each database would be {} bytes; raise the mailbox size, mailboxes or capacity",
                cfg.database_bytes()
            ),
        ));
    }
    Ok(cfg)
}

/// The profile and its IOPS: version, test type, throughput mode, mailboxes, their size and
/// transactional IOPS, headroom.
struct Profile {
    version: Version,
    test: TestType,
    throughput_mode: Option<(f64, f64)>,
    mailboxes: u64,
    mailbox_size_bytes: u64,
    iops_per_mailbox: f64,
    iops_source: String,
    headroom_pct: f64,
    headroom: Headroom,
}

impl Profile {
    fn resolve(spec: &ExchangeSpec, errors: &SectionErrors) -> Result<Profile, JobError> {
        let version = match &spec.version {
            Some(ThreadsSpec::Count(n)) => {
                Version::parse(&n.to_string()).map_err(|m| errors.error("version", m))?
            }
            Some(ThreadsSpec::Word(v)) => {
                Version::parse(v).map_err(|m| errors.error("version", m))?
            }
            None => Version::V2010,
        };
        let test = match &spec.test {
            Some(t) => TestType::parse(t).map_err(|m| errors.error("test", m))?,
            None => TestType::Performance,
        };
        let throughput_mode = throughput_mode(spec, errors)?;
        let mailboxes = spec.mailboxes.unwrap_or(quick::MAILBOXES);
        if mailboxes == 0 && throughput_mode.is_none() {
            return Err(errors.error(
                "mailboxes",
                "the number of mailboxes must be at least 1".into(),
            ));
        }
        let mailbox_size_bytes = spec
            .mailbox_size
            .map(|s| s.0)
            .unwrap_or(quick::MAILBOX_SIZE);
        if mailbox_size_bytes == 0 {
            return Err(errors.error(
                "mailbox_size",
                "the mailbox size must be more than 0".into(),
            ));
        }
        let (iops_per_mailbox, iops_source) = iops_per_mailbox(spec, version, errors)?;
        let (headroom_pct, headroom) = match (spec.headroom, spec.messages_per_day) {
            (Some(p), _) if !(0.0..=1000.0).contains(&p.0) => {
                return Err(errors.error(
                    "headroom",
                    format!("a headroom of {}% is out of range; use 0% to 1000%", p.0),
                ));
            }
            (Some(p), _) => (p.0, Headroom::Given),
            (None, Some(_)) => (CALCULATOR_HEADROOM_PCT, Headroom::Calculator),
            (None, None) => (0.0, Headroom::None),
        };
        Ok(Profile {
            version,
            test,
            throughput_mode,
            mailboxes,
            mailbox_size_bytes,
            iops_per_mailbox,
            iops_source,
            headroom_pct,
            headroom,
        })
    }
}

/// Throughput mode: (database share of free space %, throughput %), both given or neither.
fn throughput_mode(
    spec: &ExchangeSpec,
    errors: &SectionErrors,
) -> Result<Option<(f64, f64)>, JobError> {
    // An error names the key that was given (or that is out of range), so that its line or
    // its flag is blamed.
    match (spec.db_capacity, spec.throughput) {
        (None, None) => Ok(None),
        (Some(c), Some(t)) => match (c.0 <= 0.0, t.0 <= 0.0) {
            (false, false) => Ok(Some((c.0, t.0))),
            (low, _) => Err(errors.error(
                if low { "db_capacity" } else { "throughput" },
                "db_capacity and throughput must both be above 0%".into(),
            )),
        },
        (c, _) => Err(errors.error(
            if c.is_some() { "db_capacity" } else { "throughput" },
            "throughput mode needs both a database capacity (--db-capacity) and a throughput percentage (--throughput)".into(),
        )),
    }
}

/// Transactional IOPS per mailbox and where they came from: given, converted from messages per
/// day with `version`'s table, or the version's default.
fn iops_per_mailbox(
    spec: &ExchangeSpec,
    version: Version,
    errors: &SectionErrors,
) -> Result<(f64, String), JobError> {
    let model = version.model();
    match (spec.iops_per_mailbox, spec.messages_per_day) {
        (Some(_), Some(_)) => Err(errors.error(
            "iops_per_mailbox",
            "give either IOPS per mailbox or messages per day, not both".into(),
        )),
        (Some(i), None) => {
            if !(i > 0.0 && i.is_finite() && i <= 100.0) {
                return Err(errors.error(
                    "iops_per_mailbox",
                    format!("{i} is not a usable IOPS per mailbox; use e.g. 0.12"),
                ));
            }
            Ok((i, "given".to_string()))
        }
        (None, Some(m)) => {
            if m == 0 || m > 5000 {
                return Err(errors.error(
                    "messages_per_day",
                    format!("{m} messages per day is out of range (1 to 5000)"),
                ));
            }
            let i = iops_for_messages(model.messages_table, m);
            Ok((
                i,
                format!(
                    "{m} messages/day → {i:.3} IOPS (Exchange {} table{})",
                    version.name(),
                    if model.messages_table.iter().any(|(n, _)| *n == m) {
                        ""
                    } else {
                        ", interpolated"
                    }
                ),
            ))
        }
        (None, None) => Ok((
            model.default_iops_per_mailbox,
            format!("Exchange {} default", version.name()),
        )),
    }
}

/// The databases and their paths: how many, where databases and logs go, threads per
/// database, background maintenance.
struct Layout {
    databases: u32,
    db_paths: Vec<PathBuf>,
    log_paths: Vec<PathBuf>,
    threads: Option<u32>,
    copies: u32,
    maintenance: bool,
}

impl Layout {
    fn resolve(
        spec: &ExchangeSpec,
        model: &VersionModel,
        errors: &SectionErrors,
    ) -> Result<Layout, JobError> {
        let databases = spec.databases.unwrap_or(quick::DATABASES);
        if databases == 0 || databases > 1000 {
            return Err(errors.error("databases", format!("{databases} databases: use 1 to 1000")));
        }
        let db_paths = spec
            .db_paths
            .clone()
            .unwrap_or_else(|| vec![PathBuf::from(quick::DIR)]);
        let log_paths = spec.log_paths.clone().unwrap_or_else(|| db_paths.clone());
        if db_paths.is_empty() || log_paths.is_empty() {
            return Err(errors.error(
                "db_paths",
                "give at least one database path and one log path".into(),
            ));
        }
        let threads = threads(spec, model, databases, errors)?;
        let copies = spec.copies.unwrap_or(1);
        if copies == 0 || copies > MAX_COPIES {
            return Err(errors.error(
                "copies",
                format!(
                    "{copies} copies per database: use 1 (a stand-alone database) to {MAX_COPIES}"
                ),
            ));
        }
        if copies > 1 && model.maintenance_bytes_per_s == 0 {
            return Err(errors.error(
                "copies",
                "copies per database are modelled for Exchange 2010 and later (its deeper checkpoint for a database with copies); use copies = 1 with 2007".into(),
            ));
        }
        let maintenance = spec
            .maintenance
            .unwrap_or(model.maintenance_bytes_per_s > 0);
        if maintenance && model.maintenance_bytes_per_s == 0 {
            return Err(errors.error(
                "maintenance",
                "background database maintenance is modelled for Exchange 2010 and later; use --maintenance off with 2007".into(),
            ));
        }
        Ok(Layout {
            databases,
            db_paths,
            log_paths,
            threads,
            copies,
            maintenance,
        })
    }
}

/// The cache tier of `[exchange]`'s `cache_*` keys: a device per database, and the settings
/// (size 100 % of each database unless given; the line is the page).
#[allow(clippy::type_complexity)]
fn cache(
    spec: &ExchangeSpec,
    databases: u32,
    errors: &SectionErrors,
) -> Result<Option<(Vec<PathBuf>, crate::job::cache::CacheTier)>, JobError> {
    let Some(devices) = &spec.cache_devices else {
        let given = [
            ("cache_size", spec.cache_size.is_some()),
            ("cache_policy", spec.cache_policy.is_some()),
            ("cache_write", spec.cache_write.is_some()),
        ];
        if let Some((key, _)) = given.iter().find(|g| g.1) {
            return Err(errors.error(
                key,
                "a cache needs its devices: give cache_devices (--cache-device), one per database"
                    .into(),
            ));
        }
        return Ok(None);
    };
    if devices.len() != databases as usize {
        return Err(errors.error(
            "cache_devices",
            format!(
                "{} cache devices for {databases} databases: give one per database",
                devices.len()
            ),
        ));
    }
    let table = crate::job::spec::CacheSpec {
        device: devices.first().cloned(),
        size: Some(
            spec.cache_size
                .clone()
                .unwrap_or(crate::job::spec::CacheSizeSpec::Text("100%".into())),
        ),
        policy: spec.cache_policy.clone(),
        write: spec.cache_write.clone(),
        ..Default::default()
    };
    let (_, tier) = crate::job::cache::settings(&table).map_err(|(key, m)| match key {
        "device" => errors.error("cache_devices", m),
        _ => errors.error(&format!("cache_{key}"), m),
    })?;
    let mut seen = std::collections::BTreeSet::new();
    if let Some(d) = devices.iter().find(|d| !seen.insert(*d)) {
        return Err(errors.error(
            "cache_devices",
            format!(
                "{} is given twice: each database needs its own",
                d.display()
            ),
        ));
    }
    Ok(Some((devices.clone(), tier)))
}

/// Threads as the version counts them (per database, or shared by all databases from 2013):
/// 1 to 256 per database, or `None` for "auto". None given: [`quick::THREADS`] per database.
fn threads(
    spec: &ExchangeSpec,
    model: &VersionModel,
    databases: u32,
    errors: &SectionErrors,
) -> Result<Option<u32>, JobError> {
    let (most, what) = if model.global_threads {
        (256 * databases, "threads shared by all databases")
    } else {
        (256, "threads per database")
    };
    let count = |n: u32| {
        if n == 0 {
            Err(errors.error("threads", "threads must be at least 1, or \"auto\"".into()))
        } else if n > most {
            Err(errors.error(
                "threads",
                format!("{n} {what}: use 1 to {most} or \"auto\""),
            ))
        } else {
            Ok(Some(n))
        }
    };
    match &spec.threads {
        None if model.global_threads => Ok(Some(quick::THREADS * databases)),
        None => Ok(Some(quick::THREADS)),
        Some(ThreadsSpec::Count(n)) => count(*n),
        Some(ThreadsSpec::Word(w)) if w == "auto" => Ok(None),
        Some(ThreadsSpec::Word(w)) => match w.parse::<u32>() {
            Ok(n) => count(n),
            _ => Err(errors.error(
                "threads",
                format!("`{w}`: use a number of threads or \"auto\""),
            )),
        },
    }
}

/// How the validation runs: its times, the share of the real size that is built, the recovery
/// and backup test sizes, the engine and the database page size.
struct RunSettings {
    duration_ms: u64,
    ramp_ms: u64,
    interval_ms: u64,
    capacity_fraction: f64,
    log_files: u32,
    backup_block_bytes: u64,
    engine: EngineKind,
    page_bytes: u64,
}

impl RunSettings {
    fn resolve(
        spec: &ExchangeSpec,
        model: &VersionModel,
        errors: &SectionErrors,
    ) -> Result<RunSettings, JobError> {
        let ms =
            |d: Option<Dur>, default: u64| d.map(|d| d.0.as_millis() as u64).unwrap_or(default);
        let duration_ms = ms(spec.duration, quick::DURATION_MS);
        if duration_ms < 1000 {
            return Err(errors.error("duration", "the duration must be at least 1s".into()));
        }
        let interval_ms = ms(spec.interval, 1000);
        if interval_ms < 10 {
            return Err(errors.error("interval", "the interval must be at least 10ms".into()));
        }
        let capacity_fraction = capacity_fraction(spec, errors)?;
        let log_files = spec.log_files.unwrap_or(RECOVERY_LOG_FILES);
        if log_files == 0 || log_files as u64 > LOG_FILES_PER_STREAM * 16 {
            return Err(errors.error(
                "log_files",
                format!(
                    "log_files is {log_files}; use 1 to {}",
                    LOG_FILES_PER_STREAM * 16
                ),
            ));
        }
        let backup_block_bytes = spec
            .backup_block_size
            .map(|s| s.0)
            .unwrap_or(BACKUP_READ_BYTES);
        if backup_block_bytes == 0 || backup_block_bytes > 64 << 20 {
            return Err(errors.error("backup_block_size", "use 4 KiB to 64 MiB".into()));
        }
        let engine = match &spec.engine {
            Some(e) => EngineKind::parse(e).map_err(|m| errors.error("engine", m))?,
            None => EngineKind::IoUring,
        };
        let page_bytes = spec.page_size.map(|s| s.0).unwrap_or(model.page_bytes);
        if !(512..=1 << 20).contains(&page_bytes) || !page_bytes.is_power_of_two() {
            return Err(errors.error(
                "page_size",
                format!("page size {page_bytes} bytes: use a power of two from 512 B to 1 MiB"),
            ));
        }
        Ok(RunSettings {
            duration_ms,
            ramp_ms: ms(spec.ramp, quick::RAMP_MS.min(duration_ms / 4)),
            interval_ms,
            capacity_fraction,
            log_files,
            backup_block_bytes,
            engine,
            page_bytes,
        })
    }
}

/// The fraction of the real database size that is built: `capacity`, or the quick
/// validation's when neither the mailboxes nor their size is given.
fn capacity_fraction(spec: &ExchangeSpec, errors: &SectionErrors) -> Result<f64, JobError> {
    match spec.capacity {
        Some(p) if p.0 <= 0.0 => {
            Err(errors.error("capacity", "the capacity must be above 0%, e.g. 2%".into()))
        }
        Some(p) => Ok(p.0 / 100.0),
        None if spec.mailboxes.is_none() && spec.mailbox_size.is_none() => {
            Ok(quick::CAPACITY_PCT / 100.0)
        }
        None => Ok(1.0),
    }
}

/// Each database's size in bytes must fit a file offset with room to spare (1 EiB).
fn check_database_size(
    profile: &Profile,
    layout: &Layout,
    run: &RunSettings,
    errors: &SectionErrors,
) -> Result<(), JobError> {
    let (mailboxes, mailbox_size_bytes) = (profile.mailboxes, profile.mailbox_size_bytes);
    let capacity_fraction = run.capacity_fraction;
    let per_db =
        mailboxes as f64 * mailbox_size_bytes as f64 * capacity_fraction / layout.databases as f64;
    if per_db > (1u64 << 60) as f64 {
        return Err(errors.error(
            "mailboxes",
            format!(
                "{mailboxes} mailboxes of {mailbox_size_bytes} bytes at {}% capacity make databases of {per_db:.3e} bytes each, more than any storage holds; lower mailboxes, mailbox_size or capacity",
                capacity_fraction * 100.0
            ),
        ));
    }
    Ok(())
}

impl ExchangeConfig {
    /// Target transactional IOPS for `mailboxes`: mailboxes × IOPS per mailbox × (1 + headroom).
    pub(crate) fn target_iops(&self, mailboxes: u64) -> f64 {
        mailboxes as f64 * self.iops_per_mailbox * (1.0 + self.headroom_pct / 100.0)
    }

    /// Whether `threads` counts for all databases together (Jetstress 2013 and later).
    pub(crate) fn global_threads(&self) -> bool {
        self.version.model().global_threads
    }

    /// Each database's threads when the job has `threads` as the version counts them: that
    /// many per database, or (2013 and later) `threads` shared out, the first databases
    /// taking one more when they do not divide evenly, and at least one each (storlab's
    /// threads each serve one database).
    pub(crate) fn threads_of_databases(&self, threads: u32) -> Vec<u32> {
        let n = self.databases;
        (0..n)
            .map(|db| {
                if self.global_threads() {
                    (threads / n + u32::from(db < threads % n)).max(1)
                } else {
                    threads
                }
            })
            .collect()
    }

    /// The thread counts `--threads auto` tries, as the version counts them: 1, 2, 4 … 64
    /// per database, or that many times the databases when threads are shared.
    pub(crate) fn thread_steps(&self) -> Vec<u32> {
        let per = if self.global_threads() {
            self.databases
        } else {
            1
        };
        (super::validation::THREAD_STEPS.iter())
            .map(|t| t * per)
            .collect()
    }

    /// Share of transactional database I/O that is reads, percent: the version's, and with
    /// more than one copy the same reads beside [`COPIES_WRITE_REDUCTION`] fewer writes.
    pub(crate) fn read_pct(&self) -> f64 {
        let r = self.version.model().read_pct / 100.0;
        let w = (1.0 - r)
            * if self.copies > 1 {
                1.0 - COPIES_WRITE_REDUCTION
            } else {
                1.0
            };
        100.0 * r / (r + w)
    }

    /// Size of each database as built, bytes (a multiple of the page size).
    pub(crate) fn database_bytes(&self) -> u64 {
        let page = self.page_bytes;
        let per_db =
            self.mailboxes as f64 * self.mailbox_size_bytes as f64 * self.capacity_fraction
                / self.databases as f64;
        ((per_db / page as f64) as u64) * page
    }

    /// Size of each log stream, bytes.
    pub(crate) fn log_stream_bytes(&self) -> u64 {
        LOG_FILE_BYTES * LOG_FILES_PER_STREAM.max(self.log_files as u64)
    }

    /// Database file paths, spread round-robin over the database paths.
    pub(crate) fn database_path(&self, db: u32) -> PathBuf {
        self.db_paths[db as usize % self.db_paths.len()].join(format!("storlab-db{}.edb", db + 1))
    }

    /// Log stream paths.
    pub(crate) fn log_path(&self, db: u32) -> PathBuf {
        self.log_paths[db as usize % self.log_paths.len()]
            .join(format!("storlab-db{}-logs.log", db + 1))
    }
}
