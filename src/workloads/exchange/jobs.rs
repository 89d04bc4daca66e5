//! The jobs of an Exchange validation: per database, transactional page I/O, a log writer and
//! background maintenance (the performance and stress tests), or the backup and recovery
//! tests' reads and replays.

use super::{
    BACKUP_QUEUE_DEPTH, ExchangeConfig, LOG_FILE_BYTES, MAINTENANCE_READ_BYTES,
    RECOVERY_READS_PER_LOG, RECOVERY_WRITES_PER_LOG, THREAD_QUEUE_DEPTH,
};
use crate::job::cache::{CacheTier, attach};
use crate::job::{Access, Arrivals, IoLimit, Job, Rate, Target, Worker};
use std::path::PathBuf;

/// Class names of database `db` (1-based in names).
pub(crate) fn class_name(db: u32, what: &str) -> String {
    format!("db{}/{what}", db + 1)
}

/// How a job is loaded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Load {
    /// Open loop at this total transactional IOPS.
    Rate(f64),
    /// Closed loop: every thread keeps its I/O outstanding (throughput mode, calibration).
    Max,
}

/// The job for a performance or stress test (or a trial of one): `threads` as the version
/// counts them (per database, or shared by all from 2013) at `load`, on databases of
/// `db_bytes` each.
pub(crate) fn transactional_job(
    cfg: &ExchangeConfig,
    threads: u32,
    load: Load,
    db_bytes: u64,
    duration_ms: u64,
    ramp_ms: u64,
) -> Job {
    let model = cfg.version.model();
    let mut job = base_job(cfg, db_bytes, duration_ms, ramp_ms);
    let per_db = match load {
        Load::Rate(total) => Some(total / cfg.databases as f64),
        Load::Max => None,
    };
    let split = cfg.threads_of_databases(threads);
    if cfg.global_threads() && threads < cfg.databases {
        job.warnings.push(format!(
            "{threads} thread{} shared by {} databases: storlab's threads each serve one database, so each database has one ({} in all)",
            if threads == 1 { "" } else { "s" },
            cfg.databases,
            cfg.databases
        ));
    }
    let read_pct = cfg.read_pct();
    for db in 0..cfg.databases {
        let (t_db, t_log) = (db as usize * 2, db as usize * 2 + 1);
        let read = job.class(&class_name(db, "read"));
        let write = job.class(&class_name(db, "write"));
        let log = job.class(&class_name(db, "log-write"));
        let db_threads = split[db as usize];
        for t in 0..db_threads {
            // Weights in tenths of a percent, so that a share such as 71.4 % stays exact.
            let access = vec![
                page_access(
                    read,
                    cfg.page_bytes,
                    (read_pct * 10.0).round() as u32,
                    100.0,
                ),
                page_access(
                    write,
                    cfg.page_bytes,
                    ((100.0 - read_pct) * 10.0).round() as u32,
                    0.0,
                ),
            ];
            let name = format!("db{}-thread{}", db + 1, t + 1);
            let rate = per_db.map(|r| r / db_threads as f64);
            job.workers
                .push(worker(name, t_db, THREAD_QUEUE_DEPTH, rate, access, None));
        }
        // The log writer: its rate follows the database rate (in closed loop, an estimate from
        // the first second is not possible, so it runs at the profile's target ratio of the
        // configured mailboxes).
        let db_rate =
            per_db.unwrap_or_else(|| cfg.target_iops(cfg.mailboxes) / cfg.databases as f64);
        let log_iops = db_rate * model.log_writes_per_db_io;
        if log_iops > 0.0 {
            let largest = model.log_sizes.last().map(|s| s.0).unwrap_or(4096);
            let access = Access {
                block_sizes: model.log_sizes.to_vec(),
                roll_every_bytes: LOG_FILE_BYTES,
                align_bytes: 4096,
                ..sequential(log, largest, 0.0)
            };
            let name = format!("db{}-log", db + 1);
            job.workers
                .push(worker(name, t_log, 1, Some(log_iops), vec![access], None));
        }
        if cfg.maintenance && cfg.cache.is_none() {
            let m = job.class(&class_name(db, "maintenance"));
            let rate = model.maintenance_bytes_per_s as f64 / MAINTENANCE_READ_BYTES as f64;
            let access = vec![sequential(m, MAINTENANCE_READ_BYTES, 100.0)];
            let name = format!("db{}-maintenance", db + 1);
            job.workers
                .push(worker(name, t_db, 1, Some(rate), access, None));
        }
    }
    if let Some((devices, tier)) = &cfg.cache {
        cache_databases(&mut job, cfg, devices, tier);
    }
    job
}

/// Puts a cache tier on each database (its threads then run as one worker). Background
/// maintenance is left out: a cached database's I/O all goes through its one worker.
fn cache_databases(job: &mut Job, cfg: &ExchangeConfig, devices: &[PathBuf], tier: &CacheTier) {
    if cfg.maintenance {
        job.warnings.push(
            "background database maintenance does not run with a cache tier (a cached database's I/O all goes through its one worker)".into(),
        );
    }
    for (db, device) in devices.iter().enumerate().take(cfg.databases as usize) {
        let Job {
            targets,
            workers,
            warnings,
            ..
        } = job;
        if let Err((key, why)) = attach(
            targets,
            workers,
            warnings,
            db * 2,
            device.clone(),
            tier.clone(),
        ) {
            warnings.push(format!(
                "database {} runs without its cache ({key}): {why}",
                db + 1
            ));
        }
    }
}

/// The backup test's job: every database read sequentially once, as fast as possible.
pub(crate) fn backup_job(cfg: &ExchangeConfig, db_bytes: u64) -> Job {
    let mut job = base_job(cfg, db_bytes, cfg.duration_ms, 0);
    for db in 0..cfg.databases {
        let c = job.class(&class_name(db, "backup-read"));
        let access = vec![sequential(c, cfg.backup_block_bytes, 100.0)];
        let limit = IoLimit::Ios(db_bytes.div_ceil(cfg.backup_block_bytes));
        let name = format!("db{}-backup", db + 1);
        let target = db as usize * 2;
        job.workers.push(worker(
            name,
            target,
            BACKUP_QUEUE_DEPTH,
            None,
            access,
            Some(limit),
        ));
    }
    job
}

/// The recovery test's job: per database, `log_files` log files read sequentially (1 MiB
/// each) and the database page reads and writes their replay causes.
pub(crate) fn recovery_job(cfg: &ExchangeConfig, db_bytes: u64) -> Job {
    let mut job = base_job(cfg, db_bytes, cfg.duration_ms, 0);
    let n = cfg.log_files as u64;
    for db in 0..cfg.databases {
        let log = job.class(&class_name(db, "log-read"));
        let read = job.class(&class_name(db, "read"));
        let write = job.class(&class_name(db, "write"));
        let (t_db, t_log) = (db as usize * 2, db as usize * 2 + 1);
        let replay = vec![sequential(log, LOG_FILE_BYTES, 100.0)];
        let name = format!("db{}-replay-log", db + 1);
        job.workers
            .push(worker(name, t_log, 1, None, replay, Some(IoLimit::Ios(n))));
        let pages = vec![
            page_access(read, cfg.page_bytes, RECOVERY_READS_PER_LOG as u32, 100.0),
            page_access(write, cfg.page_bytes, RECOVERY_WRITES_PER_LOG as u32, 0.0),
        ];
        let limit = IoLimit::Ios(n * (RECOVERY_READS_PER_LOG + RECOVERY_WRITES_PER_LOG));
        let name = format!("db{}-replay-pages", db + 1);
        job.workers
            .push(worker(name, t_db, 4, None, pages, Some(limit)));
    }
    job
}

fn base_job(cfg: &ExchangeConfig, db_bytes: u64, duration_ms: u64, ramp_ms: u64) -> Job {
    let mut targets = Vec::new();
    for db in 0..cfg.databases {
        targets.push(Target::file(
            format!("db{}", db + 1),
            cfg.database_path(db),
            Some(db_bytes),
        ));
        targets.push(Target {
            // Exchange writes its log through to stable storage.
            sync: true,
            ..Target::file(
                format!("db{}-logs", db + 1),
                cfg.log_path(db),
                Some(cfg.log_stream_bytes()),
            )
        });
    }
    Job {
        description: Some(format!(
            "Exchange {} {} test: {} databases",
            cfg.version.name(),
            cfg.test.name(),
            cfg.databases
        )),
        engine: cfg.engine,
        duration_ms,
        ramp_ms,
        cooldown_ms: 0,
        interval_ms: cfg.interval_ms,
        seed: cfg.seed,
        buffered: false,
        destroy_data: cfg.destroy_data,
        batch: 1,
        verify: cfg.verify,
        on_error: Default::default(),
        sample_blocks: cfg.sample_blocks,
        targets,
        workers: Vec::new(),
        classes: Vec::new(),
        warnings: Vec::new(),
        sequence: Default::default(),
        data: Default::default(),
        io_uring: Default::default(),
    }
}

/// A worker on one target, closed loop or at `rate` I/Os per second (evenly spaced).
fn worker(
    name: String,
    target: usize,
    queue_depth: u32,
    rate: Option<f64>,
    access: Vec<Access>,
    io_limit: Option<IoLimit>,
) -> Worker {
    Worker {
        rate: rate.map(|iops| Rate {
            iops,
            arrivals: Arrivals::Uniform,
        }),
        io_limit,
        ..Worker::closed_loop(name, vec![target], queue_depth, access)
    }
}

fn page_access(class: usize, page: u64, weight: u32, read_pct: f64) -> Access {
    Access {
        weight: weight.max(1),
        ..Access::new(class, page, read_pct, 100.0)
    }
}

fn sequential(class: usize, block: u64, read_pct: f64) -> Access {
    Access::new(class, block, read_pct, 0.0)
}
