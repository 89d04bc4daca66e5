//! The job of a database validation run at a transaction rate, and the sources that drive its
//! workers: the data-file workers from their access entries (open loop), the log writer with
//! group commit and the checkpoints from their own sources ([`super::log`]).

use super::log::{Checkpoint, Counters, GroupCommit, LogSettings};
use super::{
    CHECKPOINT_PAGES_PER_TRANSACTION, CHECKPOINT_QUEUE_DEPTH, DATA_READ_PCT, DatabaseConfig,
    Durability, LOG_ALIGN_BYTES, WORKER_QUEUE_DEPTH,
};
use crate::engine::worker::WorkerReport;
use crate::job::{Access, Arrivals, Job, Rate, Target, Worker};
use crate::run::{Driver, FromAccess, Sources, WorkerInput};

/// The log writer's name.
pub(crate) const LOG_WORKER: &str = "log-writer";
/// The log's class.
pub(crate) const LOG_CLASS: &str = "log/write";
/// What ends a checkpoint worker's name.
const CHECKPOINT_SUFFIX: &str = "-checkpoint";

/// How a run is loaded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Load {
    /// Transactions per second.
    Tps(f64),
}

/// Class `what` of data file `n` (0-based; 1-based in names): `data1/read`.
pub(crate) fn data_class(n: u32, what: &str) -> String {
    format!("data{}/{what}", n + 1)
}

/// The job of a run of `duration_ms` (after `ramp_ms`) at `load`.
pub(crate) fn job(cfg: &DatabaseConfig, load: Load, duration_ms: u64, ramp_ms: u64) -> Job {
    let Load::Tps(tps) = load;
    let model = cfg.engine.model();
    let mut job = Job {
        description: Some(format!(
            "{} database validation at {} transactions/s",
            cfg.engine.title(),
            crate::units::format_number(tps)
        )),
        engine: cfg.io_engine,
        duration_ms,
        ramp_ms,
        interval_ms: cfg.interval_ms,
        seed: cfg.seed,
        buffered: false,
        destroy_data: cfg.destroy_data,
        batch: 1,
        ..Job::default()
    };
    for n in 0..cfg.data_files {
        job.targets.push(target(
            format!("data{}", n + 1),
            cfg.data_path(n),
            cfg.data_file_bytes,
        ));
    }
    let log_target = job.targets.len();
    job.targets
        .push(target("log".into(), cfg.log_file(), cfg.log_bytes));
    let per_worker = cfg.data_iops(tps) / cfg.data_files as f64 / cfg.threads as f64;
    for n in 0..cfg.data_files {
        let read = job.class(&data_class(n, "read"));
        let write = job.class(&data_class(n, "write"));
        for t in 0..cfg.threads {
            let access = vec![
                weighted(read, cfg.page_bytes, DATA_READ_PCT, 100.0),
                weighted(write, cfg.page_bytes, 100.0 - DATA_READ_PCT, 0.0),
            ];
            job.workers.push(Worker {
                rate: Some(Rate {
                    iops: per_worker,
                    arrivals: Arrivals::Uniform,
                }),
                ..Worker::closed_loop(
                    format!("data{}-worker{}", n + 1, t + 1),
                    vec![n as usize],
                    WORKER_QUEUE_DEPTH,
                    access,
                )
            });
        }
    }
    let log = job.class(LOG_CLASS);
    let largest = group_largest(cfg);
    let log_access = Access {
        align_bytes: LOG_ALIGN_BYTES,
        sync: model.durability == Durability::Dsync,
        fsync_every: u32::from(model.durability == Durability::Fdatasync),
        ..Access::new(log, largest, 0.0, 0.0)
    };
    job.workers.push(Worker {
        driven_by: Some(format!(
            "group commit: {} commits/s of {} each, the waiting commits in one write (at most {}), made durable by {}",
            crate::units::format_number(tps),
            crate::units::format_size(cfg.log_write_bytes),
            crate::units::format_size(largest),
            model.durability.name()
        )),
        ..Worker::closed_loop(LOG_WORKER.to_string(), vec![log_target], 1, vec![log_access])
    });
    if cfg.checkpoint_interval_ms > 0 {
        let pages = checkpoint_pages(cfg, tps);
        for n in 0..cfg.data_files {
            let c = job.class(&data_class(n, "checkpoint"));
            job.workers.push(Worker {
                driven_by: Some(format!(
                    "checkpoint bursts: {pages} page writes every {}",
                    crate::units::format_ms(cfg.checkpoint_interval_ms)
                )),
                ..Worker::closed_loop(
                    format!("data{}{CHECKPOINT_SUFFIX}", n + 1),
                    vec![n as usize],
                    CHECKPOINT_QUEUE_DEPTH,
                    vec![Access::new(c, cfg.page_bytes, 0.0, 100.0)],
                )
            });
        }
    }
    let scan_bytes = scan_read_bytes(cfg);
    for s in 0..cfg.scans {
        let n = s % cfg.data_files;
        let c = job.class(&data_class(n, "scan"));
        job.workers.push(Worker::closed_loop(
            format!("scan{}", s + 1),
            vec![n as usize],
            1,
            vec![Access::new(c, scan_bytes, 100.0, 0.0)],
        ));
    }
    job
}

/// Page writes of each checkpoint burst, per data file, at `tps`.
pub(crate) fn checkpoint_pages(cfg: &DatabaseConfig, tps: f64) -> u64 {
    let per_burst = tps * CHECKPOINT_PAGES_PER_TRANSACTION * cfg.checkpoint_interval_ms as f64
        / 1e3
        / cfg.data_files as f64;
    (per_burst.ceil() as u64).clamp(1, cfg.data_file_bytes / cfg.page_bytes)
}

/// The largest log write: the engine's, rounded up to whole 4 KiB blocks.
pub(crate) fn group_largest(cfg: &DatabaseConfig) -> u64 {
    let max = cfg.engine.model().log_max_write_bytes;
    super::log::group_write_bytes(u64::MAX, cfg.log_write_bytes, max).1
}

/// The size of each scan read: the engine's, at most the data file.
pub(crate) fn scan_read_bytes(cfg: &DatabaseConfig) -> u64 {
    let file = cfg.data_file_bytes;
    let mut bytes = cfg.engine.model().scan_read_bytes;
    while bytes > file && bytes > cfg.page_bytes {
        bytes /= 2;
    }
    bytes
}

fn target(name: String, path: std::path::PathBuf, size: u64) -> Target {
    Target::file(name, path, Some(size))
}

fn weighted(class: usize, page: u64, weight_pct: f64, read_pct: f64) -> Access {
    Access {
        weight: (weight_pct.round() as u32).max(1),
        ..Access::new(class, page, read_pct, 100.0)
    }
}

/// The sources of a run at `tps`: the log writer's group commit and the checkpoints' bursts
/// count into `counters`; the data workers and scans run from their access entries.
pub(crate) struct DatabaseSources<'c> {
    /// The log writer's settings.
    pub(crate) log: LogSettings,
    /// Checkpoint interval, ns.
    pub(crate) checkpoint_ns: u64,
    /// Pages per burst per data file.
    pub(crate) checkpoint_pages: u64,
    /// What the sources counted.
    pub(crate) counters: &'c Counters,
}

impl<'c> DatabaseSources<'c> {
    /// The sources of `job` (made by [`job`] for `cfg` at `tps`).
    pub(crate) fn of(cfg: &DatabaseConfig, job: &Job, tps: f64, counters: &'c Counters) -> Self {
        let log_target = job.targets.len() - 1;
        let class = job.classes.iter().position(|c| c == LOG_CLASS).unwrap_or(0);
        DatabaseSources {
            log: LogSettings {
                target: log_target as u32,
                class: class as u16,
                per_commit: cfg.log_write_bytes,
                max_write: cfg.engine.model().log_max_write_bytes,
                log_bytes: cfg.log_bytes,
                tps,
                durability: cfg.engine.model().durability,
                ramp_ns: job.ramp_ms * 1_000_000,
            },
            checkpoint_ns: cfg.checkpoint_interval_ms * 1_000_000,
            checkpoint_pages: checkpoint_pages(cfg, tps),
            counters,
        }
    }
}

impl Sources for DatabaseSources<'_> {
    fn drive(&self, input: WorkerInput<'_>, driver: Driver<'_, '_, '_>) -> WorkerReport {
        let name = input.spec.name.as_str();
        if name == LOG_WORKER {
            driver.run(&mut GroupCommit::new(self.log, self.counters))
        } else if name.ends_with(CHECKPOINT_SUFFIX) {
            driver.run(&mut Checkpoint::new(
                input.access,
                self.counters,
                self.checkpoint_ns,
                self.checkpoint_pages,
                self.log.ramp_ns,
            ))
        } else {
            FromAccess.drive(input, driver)
        }
    }
}
