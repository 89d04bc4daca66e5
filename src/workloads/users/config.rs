//! A simulated-users run as configured: the `[users]` section as written (flags of
//! `storlab users` override it), validated into a [`UsersConfig`], and the engine job it runs
//! as: per database a page file and a log target, three classes each, and one worker whose
//! requests come from the population.

use super::dispatch::Dispatcher;
use super::layout::Layout;
use super::log::SEGMENT_BYTES;
use super::recipe::{Knobs, Mailboxes};
use super::source::{Live, Pace, Population};
use super::store::{LOG_FILE_BYTES, MAX_WRITE_BYTES, Store};
use crate::job::{Access, EngineKind, Job, JobError, SectionErrors, Target, Worker};
use crate::units::{Dur, Size};
use crate::workloads::exchange::{self, StorageLimits, ThreadsSpec, Version, class_name};
use crate::workloads::users::profile::{Profile, Task};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Room to grow in each mailbox extent, percent of its initial items (storlab's choice).
pub(crate) const GROWTH_PCT: u64 = 20;
/// Real time after the last dispatch for unfinished tasks to complete.
pub(crate) const DRAIN_MS: u64 = 30_000;
/// The Send Mail 95th-percentile limit (LoadGen: over 1,000 ms is a degraded experience).
pub(crate) const SEND_MAIL_P95_LIMIT_MS: f64 = 1000.0;
/// Default buffer cache per mailbox (the example; Microsoft's 2010 table gives 6 MB
/// for 100 messages a day).
pub(crate) const DEFAULT_CACHE_PER_MAILBOX: u64 = 6_000_000;
/// Default mailbox size.
pub(crate) const DEFAULT_MAILBOX_BYTES: u64 = 250_000_000;
/// Default I/Os in flight (the worker's queue depth).
pub(crate) const DEFAULT_QUEUE_DEPTH: u32 = 64;
/// Copies of each database by default: the active copy in a DAG, whose checkpoint depth the
/// 2010 calibration was fitted with (docs/profiles.md).
pub(crate) const DEFAULT_COPIES: u32 = 2;

/// The calibration knobs of each version (docs/profiles.md, "Calibration").
pub(crate) fn knobs(version: Version) -> Knobs {
    match version {
        Version::V2007 => Knobs {
            log_per_body_byte: 2.6,
            secondary_indexes: 32,
            index_entry_bytes: 128,
        },
        _ => Knobs {
            log_per_body_byte: 2.6,
            secondary_indexes: 10,
            index_entry_bytes: 1024,
        },
    }
}

/// What `storlab users` with no arguments runs: a scaled-down demo of a few minutes.
pub(crate) mod demo {
    /// Users.
    pub(crate) const USERS: u64 = 100;
    /// Databases.
    pub(crate) const DATABASES: u32 = 2;
    /// Mailbox size.
    pub(crate) const MAILBOX_BYTES: u64 = 16 << 20;
    /// Cache per mailbox.
    pub(crate) const CACHE_PER_MAILBOX: u64 = 1 << 20;
    /// Simulated duration, ms (two hours of the day).
    pub(crate) const DURATION_MS: u64 = 2 * 3_600_000;
    /// Compression: two hours in two minutes.
    pub(crate) const COMPRESS: f64 = 60.0;
    /// Scratch directory.
    pub(crate) const DIR: &str = "storlab-scratch/users";
}

crate::workloads::spec! {
    /// The `[users]` section of a job file, as written, and the flags of `storlab users` (each
    /// overrides the file's key of the same name).
    #[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema, clap::Args)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct UsersSpec {
        /// Users (one mailbox each).
        #[arg(long, value_name = "N")]
        users: Option<u64>,
        /// Profile: light, average, heavy, very-heavy, double-heavy, or a TOML file with a
        /// `[tasks]` table.
        #[arg(long, value_name = "NAME|FILE")]
        profile: Option<String>,
        /// Exchange version whose store is modelled: 2007, 2010, 2013, 2016 or 2019 (page size
        /// and checkpoint), a number or a string.
        #[arg(long, value_name = "YEAR", value_parser = ThreadsSpec::word)]
        version: Option<ThreadsSpec>,
        /// Databases.
        #[arg(long, value_name = "N")]
        databases: Option<u32>,
        /// Copies of each database: 1 for a stand-alone database, 2 or more for the active
        /// copy in a DAG (default 2); since 2010 it sets the checkpoint depth (20 MB or 100 MB).
        #[arg(long, value_name = "N")]
        copies: Option<u32>,
        /// Directories for database files; databases are spread over them (the flag is
        /// repeatable).
        #[arg(long = "db-path", value_name = "DIR")]
        db_paths: Option<Vec<PathBuf>>,
        /// Directories for logs (the flag is repeatable; default: the database directories).
        #[arg(long = "log-path", value_name = "DIR")]
        log_paths: Option<Vec<PathBuf>>,
        /// Mailbox size at initialisation, e.g. 250MB.
        #[arg(long, value_name = "SIZE")]
        mailbox_size: Option<Size>,
        /// Database buffer cache per mailbox, e.g. 6MB.
        #[arg(long, value_name = "SIZE")]
        cache_per_mailbox: Option<Size>,
        /// Simulated day, e.g. 8h.
        #[arg(long, value_name = "TIME")]
        day: Option<Dur>,
        /// Simulated duration, e.g. 8h30m (default: the day).
        #[arg(long, value_name = "TIME")]
        duration: Option<Dur>,
        /// Run the simulated day N times faster than real time (N times the I/O rate).
        #[arg(long, value_name = "N")]
        compress: Option<f64>,
        /// Stress mode: each user's next task as soon as its last completes, no pacing.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        stress: Option<bool>,
        /// Warm-up: cold (empty cache, as LoadGen) or preloaded.
        #[arg(long, value_name = "MODE")]
        warm_up: Option<String>,
        /// Engine: io_uring, psync, or null (model only: no I/O).
        #[arg(long, value_name = "ENGINE")]
        engine: Option<String>,
        /// I/Os in flight at most.
        #[arg(long, value_name = "N")]
        queue_depth: Option<u32>,
        /// Limit on Send Mail's 95th-percentile latency, e.g. 1s.
        #[arg(long, value_name = "TIME")]
        send_mail_p95: Option<Dur>,
        /// Limit on average database read latency, e.g. 20ms (Jetstress's, as `storlab
        /// exchange`).
        #[arg(long, value_name = "TIME")]
        db_read_latency: Option<Dur>,
        /// Limit on average log write latency, e.g. 10ms.
        #[arg(long, value_name = "TIME")]
        log_write_latency: Option<Dur>,
        /// Limit on maximum database read latency, e.g. 100ms.
        #[arg(long, value_name = "TIME")]
        max_latency: Option<Dur>,
        /// Time-series interval.
        #[arg(long, value_name = "TIME")]
        interval: Option<Dur>,
        /// Seed.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Allow overwriting existing files storlab did not create.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        destroy_data: Option<bool>,
        /// Verify data written and read.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        verify: Option<bool>,
        /// Record a sample of the blocks the store touches, for `storlab cache-curve`.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        sample_blocks: Option<bool>,
        ;
        /// Tasks per user per day by LoadGen's name, replacing the profile's (`"Send Mail" =
        /// 6`): the job file's only.
        #[arg(skip)]
        tasks: Option<BTreeMap<String, f64>>,
        /// 95th-percentile limits of other task types, by LoadGen's name: the job file's only.
        #[arg(skip)]
        task_p95: Option<BTreeMap<String, Dur>>,
    }
}

/// A job file with a `[users]` section.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UsersFile {
    /// The section.
    pub users: UsersSpec,
}

/// A profile file: `name` and a `[tasks]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    name: Option<String>,
    tasks: BTreeMap<String, f64>,
}

/// Validated users inputs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UsersConfig {
    /// Users.
    pub users: u64,
    /// Their profile.
    pub profile: Profile,
    /// The version modelled.
    pub version: Version,
    /// Databases.
    pub databases: u32,
    /// Copies of each database (the one simulated is the active copy).
    pub copies: u32,
    /// Database directories.
    pub db_paths: Vec<PathBuf>,
    /// Log directories.
    pub log_paths: Vec<PathBuf>,
    /// Mailbox size, bytes.
    pub mailbox_bytes: u64,
    /// Cache per mailbox, bytes.
    pub cache_per_mailbox: u64,
    /// Simulated day, ms.
    pub day_ms: u64,
    /// Simulated duration, ms.
    pub duration_ms: u64,
    /// Compression.
    pub compress: f64,
    /// Stress mode.
    pub stress: bool,
    /// Cache preloaded before the run.
    pub preload: bool,
    /// Engine.
    pub engine: EngineKind,
    /// I/Os in flight at most.
    pub queue_depth: u32,
    /// 95th-percentile limits per task type, ms.
    pub p95_limits_ms: Vec<(Task, f64)>,
    /// The storage rules' latency limits (Jetstress's unless the job sets them).
    pub storage_limits: StorageLimits,
    /// Time-series interval, ms.
    pub interval_ms: u64,
    /// Seed.
    pub seed: u64,
    /// Allow overwriting files storlab did not create.
    pub destroy_data: bool,
    /// Verify data.
    pub verify: bool,
    /// Record the block sample.
    pub sample_blocks: bool,
}

/// A task by LoadGen's name (`Send Mail`), any case, spaces or dashes.
pub(crate) fn task_named(name: &str) -> Option<Task> {
    let norm = |s: &str| s.to_lowercase().replace(['-', '_', ' '], "");
    Task::ALL.into_iter().find(|t| norm(t.name()) == norm(name))
}

fn tasks_from(
    table: &BTreeMap<String, f64>,
    key: &str,
    errors: &SectionErrors,
) -> Result<Vec<(Task, f64)>, JobError> {
    let mut tasks = Vec::new();
    for (name, &n) in table {
        let task = task_named(name).ok_or_else(|| {
            let names: Vec<_> = Task::ALL
                .iter()
                .map(|t| format!("\"{}\"", t.name()))
                .collect();
            errors.error(
                &format!("{key}.{name}"),
                format!("unknown task `{name}`; use one of {}", names.join(", ")),
            )
        })?;
        if !(n.is_finite() && n >= 0.0) {
            return Err(errors.error(
                &format!("{key}.{name}"),
                format!("{n} tasks a day is not a count; use a number ≥ 0"),
            ));
        }
        tasks.push((task, n));
    }
    tasks.sort_by_key(|t| t.0);
    Ok(tasks)
}

fn resolve_profile(spec: &UsersSpec, errors: &SectionErrors) -> Result<Profile, JobError> {
    let name = spec.profile.clone().unwrap_or_else(|| "heavy".into());
    let mut profile = match Profile::builtin(&name) {
        Some(p) => p,
        None if Path::new(&name).is_file() => {
            let text = crate::input::read_text(Path::new(&name), crate::input::Kind::Profile)
                .map_err(|e| errors.error("profile", e.to_string()))?;
            let file: ProfileFile = toml::from_str(&text).map_err(|e| {
                errors.error("profile", format!("{name}: {}", e.message().trim_end()))
            })?;
            let file_errors = SectionErrors {
                location: &name,
                section: "users",
            };
            Profile {
                name: file.name.unwrap_or_else(|| name.clone()),
                tasks_per_day: tasks_from(&file.tasks, "tasks", &file_errors)?,
            }
        }
        None => {
            let names: Vec<_> = Profile::builtin_names().collect();
            return Err(errors.error(
                "profile",
                format!(
                    "unknown profile `{name}`; use {} or the path of a TOML file with a [tasks] table",
                    names.join(", ")
                ),
            ));
        }
    };
    if let Some(tasks) = &spec.tasks {
        profile.tasks_per_day = tasks_from(tasks, "tasks", errors)?;
        profile.name = format!("{} (tasks from the job)", profile.name);
    }
    if profile.tasks_per_day() <= 0.0 {
        return Err(errors.error(
            "tasks",
            "the profile has no task; give at least one task a day".into(),
        ));
    }
    Ok(profile)
}

/// Validates a `[users]` spec; `location` names where it came from for errors.
pub(crate) fn resolve(spec: &UsersSpec, location: &str) -> Result<UsersConfig, JobError> {
    let errors = SectionErrors {
        location,
        section: "users",
    };
    let profile = resolve_profile(spec, &errors)?;
    let version = match &spec.version {
        None => Ok(Version::V2010),
        Some(ThreadsSpec::Count(n)) => Version::parse(&n.to_string()),
        Some(ThreadsSpec::Word(w)) => Version::parse(w),
    }
    .map_err(|e| errors.error("version", e))?;
    let users = spec.users.unwrap_or(demo::USERS);
    if users == 0 || users > u64::from(u32::MAX) {
        return Err(errors.error("users", format!("{users} users: use 1 to {}", u32::MAX)));
    }
    let databases = spec.databases.unwrap_or(1);
    if databases == 0 || u64::from(databases) > users || databases > 1 << 20 {
        return Err(errors.error(
            "databases",
            format!("{databases} databases for {users} users: use 1 to the number of users"),
        ));
    }
    let copies = spec.copies.unwrap_or(DEFAULT_COPIES);
    if !(1..=16).contains(&copies) {
        return Err(errors.error(
            "copies",
            format!("{copies} copies: use 1 (a stand-alone database) to 16 (a DAG's most)"),
        ));
    }
    let scratch = || vec![PathBuf::from(demo::DIR)];
    let db_paths = spec.db_paths.clone().unwrap_or_else(scratch);
    let log_paths = spec.log_paths.clone().unwrap_or_else(|| db_paths.clone());
    if db_paths.is_empty() || log_paths.is_empty() {
        return Err(errors.error("db_paths", "no directory given; give at least one".into()));
    }
    let mailbox_bytes = spec.mailbox_size.map_or(DEFAULT_MAILBOX_BYTES, |s| s.0);
    let page = version.model().page_bytes;
    if mailbox_bytes < 16 * page {
        return Err(errors.error(
            "mailbox_size",
            format!(
                "{mailbox_bytes} bytes is too small a mailbox; use at least {} (16 pages)",
                16 * page
            ),
        ));
    }
    let cache_per_mailbox = spec
        .cache_per_mailbox
        .map_or(DEFAULT_CACHE_PER_MAILBOX, |s| s.0);
    let ms = |d: Dur| d.0.as_millis() as u64;
    let day_ms = spec.day.map_or(8 * 3_600_000, ms);
    let duration_ms = spec.duration.map_or(day_ms, ms);
    if day_ms == 0 || duration_ms == 0 {
        return Err(errors.error(
            if day_ms == 0 { "day" } else { "duration" },
            "must be longer than 0; e.g. 8h".into(),
        ));
    }
    let compress = spec.compress.unwrap_or(1.0);
    if !(compress.is_finite() && (0.001..=1_000_000.0).contains(&compress)) {
        return Err(errors.error(
            "compress",
            format!("{compress}: use a factor from 0.001 to 1000000, e.g. 48"),
        ));
    }
    let preload = match spec.warm_up.as_deref().unwrap_or("cold") {
        "cold" => false,
        "preloaded" => true,
        o => {
            return Err(errors.error(
                "warm_up",
                format!("unknown warm-up `{o}`; use cold or preloaded"),
            ));
        }
    };
    let engine = EngineKind::parse(spec.engine.as_deref().unwrap_or("io_uring"))
        .map_err(|e| errors.error("engine", format!("{e} (null: the model only, no I/O)")))?;
    let queue_depth = spec.queue_depth.unwrap_or(DEFAULT_QUEUE_DEPTH);
    if !(1..=4096).contains(&queue_depth) {
        return Err(errors.error("queue_depth", format!("{queue_depth}: use 1 to 4096")));
    }
    let mut p95_limits_ms = vec![(
        Task::SendMail,
        spec.send_mail_p95
            .map_or(SEND_MAIL_P95_LIMIT_MS, |d| d.0.as_secs_f64() * 1e3),
    )];
    for (name, d) in spec.task_p95.iter().flatten() {
        let task = task_named(name).ok_or_else(|| {
            errors.error(
                &format!("task_p95.{name}"),
                format!("unknown task `{name}`"),
            )
        })?;
        p95_limits_ms.retain(|l| l.0 != task);
        p95_limits_ms.push((task, d.0.as_secs_f64() * 1e3));
    }
    let storage_limits = StorageLimits::of(
        spec.db_read_latency,
        spec.log_write_latency,
        spec.max_latency,
        exchange::MAX_LATENCY_PERFORMANCE_MS,
    );
    let interval_ms = spec.interval.map_or(1000, ms);
    if interval_ms == 0 {
        return Err(errors.error("interval", "must be at least 1ms".into()));
    }
    Ok(UsersConfig {
        users,
        profile,
        version,
        databases,
        copies,
        db_paths,
        log_paths,
        mailbox_bytes,
        cache_per_mailbox,
        day_ms,
        duration_ms,
        compress,
        stress: spec.stress.unwrap_or(false),
        preload,
        engine,
        queue_depth,
        p95_limits_ms,
        storage_limits,
        interval_ms,
        seed: spec.seed.unwrap_or(crate::job::defaults::SEED),
        destroy_data: spec.destroy_data.unwrap_or(false),
        verify: spec.verify.unwrap_or(false),
        sample_blocks: spec.sample_blocks.unwrap_or(false),
    })
}

impl UsersConfig {
    /// The database page size.
    pub(crate) fn page_bytes(&self) -> u64 {
        self.version.model().page_bytes
    }

    /// The checkpoint depth target of each database: 20 MB for 2007 and for a stand-alone
    /// database since 2010, 100 MB for an active copy of two or more since 2010
    /// (docs/profiles.md).
    pub(crate) fn checkpoint_bytes(&self) -> u64 {
        match self.version {
            Version::V2007 => 20 << 20,
            _ if self.copies < 2 => 20 << 20,
            _ => 100 << 20,
        }
    }

    /// Mailboxes per database (the last database may hold fewer users).
    pub(crate) fn mailboxes_per_database(&self) -> u64 {
        self.users.div_ceil(u64::from(self.databases))
    }

    /// The calibration knobs of the version modelled.
    pub(crate) fn knobs(&self) -> Knobs {
        knobs(self.version)
    }

    /// The mailbox layout of every database.
    pub(crate) fn layout(&self) -> Layout {
        Layout::new(
            self.page_bytes(),
            self.mailbox_bytes,
            self.mailboxes_per_database(),
            GROWTH_PCT,
            self.knobs().secondary_indexes,
            self.knobs().index_entry_bytes,
            self.seed,
        )
    }

    /// The population of this run, reporting progress to `live` (its cache preloaded if
    /// asked); an error when there is nothing to dispatch.
    pub(crate) fn population(&self, live: Arc<Live>) -> Result<Population, String> {
        let day_ns = self.day_ms * 1_000_000;
        let dispatcher = Dispatcher::new(
            &self.profile,
            self.users,
            day_ns,
            self.compress,
            self.stress,
            self.seed,
        )?;
        let mailboxes = Mailboxes::new(
            self.layout(),
            self.databases,
            self.users,
            knobs(self.version),
        );
        let store = Store::new(
            self.databases,
            self.page_bytes(),
            self.cache_pages(),
            self.checkpoint_bytes(),
        );
        let pace = Pace {
            dispatch_ns: self.dispatch_ms() * 1_000_000,
            stress: self.stress,
            interval_ns: self.interval_ms * 1_000_000,
        };
        let mut p = Population::new(dispatcher, mailboxes, store, pace, self.seed, live);
        if self.preload {
            p.preload();
        }
        Ok(p)
    }

    /// Pages of the buffer cache.
    pub(crate) fn cache_pages(&self) -> u64 {
        (self.users * self.cache_per_mailbox / self.page_bytes()).max(1)
    }

    /// Memory the buffer-cache model takes when full, bytes.
    pub(crate) fn cache_model_bytes(&self) -> u64 {
        self.cache_pages()
            .saturating_mul(super::cache::MODEL_BYTES_PER_CACHED_PAGE)
    }

    /// A warning when the buffer-cache model, once full, would take more than `memory` bytes
    /// (the host's): it grows with the pages the users reference, so a run long enough to
    /// fill it runs out of memory.
    pub(crate) fn memory_warning(&self, memory: u64) -> Option<String> {
        let need = self.cache_model_bytes();
        (need > memory).then(|| {
            format!(
                "the buffer-cache model of {} pages ({} users × {} of cache per mailbox) takes about {} once full, more than this host's {} of memory; it grows with the pages the users reference, so a run long enough to fill it runs out of memory: give a smaller --cache-per-mailbox (cache_per_mailbox in [users]) or fewer users for a long run",
                crate::units::format_count(self.cache_pages()),
                crate::units::format_count(self.users),
                crate::units::format_size(self.cache_per_mailbox),
                crate::units::format_size(need),
                crate::units::format_size(memory),
            )
        })
    }

    /// Real milliseconds during which tasks are dispatched.
    pub(crate) fn dispatch_ms(&self) -> u64 {
        ((self.duration_ms as f64 / self.compress).ceil() as u64).max(1)
    }

    /// Database file path.
    pub(crate) fn database_path(&self, db: u32) -> PathBuf {
        self.db_paths[db as usize % self.db_paths.len()]
            .join(format!("storlab-users-db{}.edb", db + 1))
    }

    /// Log target path.
    pub(crate) fn log_path(&self, db: u32) -> PathBuf {
        self.log_paths[db as usize % self.log_paths.len()]
            .join(format!("storlab-users-db{}-logs.log", db + 1))
    }

    /// The engine job: targets `2d` (database `d`) and `2d + 1` (its log), classes `3d`
    /// (reads), `3d + 1` (writes), `3d + 2` (log writes), one worker driven by the population.
    pub(crate) fn job(&self) -> Job {
        let db_bytes = self.layout().database_bytes();
        let mut job = Job {
            description: Some(format!(
                "{} {} users on Exchange {}: {} database{}",
                self.users,
                self.profile.name,
                self.version.name(),
                self.databases,
                if self.databases == 1 { "" } else { "s" }
            )),
            engine: self.engine,
            duration_ms: self.dispatch_ms() + DRAIN_MS,
            ramp_ms: 0,
            cooldown_ms: 0,
            interval_ms: self.interval_ms,
            seed: self.seed,
            buffered: false,
            destroy_data: self.destroy_data,
            batch: 1,
            verify: self.verify,
            on_error: Default::default(),
            sample_blocks: self.sample_blocks,
            targets: Vec::new(),
            workers: Vec::new(),
            classes: Vec::new(),
            warnings: Vec::new(),
            sequence: Default::default(),
            data: Default::default(),
            io_uring: Default::default(),
        };
        for db in 0..self.databases {
            job.targets.push(Target::file(
                format!("db{}", db + 1),
                self.database_path(db),
                Some(db_bytes),
            ));
            job.targets.push(Target::file(
                format!("db{}-logs", db + 1),
                self.log_path(db),
                Some(Store::log_target_bytes()),
            ));
            for what in ["read", "write", "log-write"] {
                job.class(&class_name(db, what));
            }
        }
        // The access entry only sizes the worker's buffers for the largest store I/O, says that
        // it reads and writes (targets open read-write) and that every I/O is a multiple of a
        // log segment and aligned to one (what `--verify` tracks): the population issues every
        // request.
        let largest = MAX_WRITE_BYTES.max(LOG_FILE_BYTES);
        let targets = (0..job.targets.len()).collect();
        let mut access = Access::new(0, largest, 50.0, 0.0);
        access.align_bytes = SEGMENT_BYTES;
        let access = vec![access];
        job.workers.push(Worker {
            driven_by: Some(format!(
                "the {} simulated users' tasks",
                crate::units::format_count(self.users)
            )),
            ..Worker::closed_loop("users", targets, self.queue_depth, access)
        });
        job
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn users(n: u64, cache: &str) -> UsersConfig {
        let file: UsersFile = toml::from_str(&format!(
            "[users]\nengine = \"null\"\nusers = {n}\nversion = 2007\ncache_per_mailbox = \"{cache}\"\n"
        ))
        .unwrap();
        resolve(&file.users, "test").unwrap()
    }

    #[test]
    fn a_cache_model_larger_than_memory_is_warned_of_with_the_way_out() {
        let big = users(1_000_000, "5MB");
        // 610 million 8 KiB pages at 180 B each: about 110 GB.
        assert_eq!(big.cache_pages(), 610_351_562);
        let w = big.memory_warning(24 << 30).expect("a warning");
        assert!(w.contains("--cache-per-mailbox"), "{w}");
        assert!(w.contains("610M pages"), "{w}");
        assert_eq!(users(16_000, "256KiB").memory_warning(24 << 30), None);
    }

    #[test]
    fn copies_set_the_checkpoint_depth_since_2010_and_out_of_range_is_refused() {
        let depth = |section: &str| {
            let file: UsersFile = toml::from_str(&format!("[users]\n{section}")).unwrap();
            resolve(&file.users, "job.toml").map(|c| c.checkpoint_bytes())
        };
        // Microsoft's table: a DAG's active copy 100 MB, a stand-alone database 20 MB.
        assert_eq!(depth("version = 2010\n").unwrap(), 100 << 20);
        assert_eq!(depth("version = 2016\ncopies = 3\n").unwrap(), 100 << 20);
        assert_eq!(depth("version = 2010\ncopies = 1\n").unwrap(), 20 << 20);
        // 2007's was 20 MB however many copies.
        assert_eq!(depth("version = 2007\ncopies = 2\n").unwrap(), 20 << 20);
        for bad in ["copies = 0\n", "copies = 17\n"] {
            let e = depth(bad).unwrap_err().to_string();
            assert!(e.contains("copies") && e.contains("job.toml"), "{e}");
            assert!(e.contains("use 1"), "{e}");
        }
    }

    #[test]
    fn the_storage_rules_limits_are_jetstresss_unless_the_job_sets_them() {
        let limits = |section: &str| {
            let file: UsersFile = toml::from_str(&format!("[users]\n{section}")).unwrap();
            resolve(&file.users, "job.toml").unwrap().storage_limits
        };
        let jetstress = StorageLimits {
            db_read_ms: 20.0,
            log_write_ms: 10.0,
            max_read_ms: 100.0,
        };
        assert_eq!(limits(""), jetstress);
        let set = "db_read_latency = \"25ms\"\nlog_write_latency = \"1s\"\nmax_latency = \"2s\"\n";
        assert_eq!(
            limits(set),
            StorageLimits {
                db_read_ms: 25.0,
                log_write_ms: 1000.0,
                max_read_ms: 2000.0,
            }
        );
    }
}
