//! Database storage validation (the database half of the Jetstress question): from a database
//! profile (engine, data size, transaction rate or IOPS target, log write size) to the data
//! files, log and workers of a [`crate::job::Job`], and the verdict rules that judge a run of it.
//!
//! Per run the job has:
//! - data-file I/O: `threads` workers per data file, issuing random reads and writes of the
//!   engine's page size open loop at the file's share of the target rate (latency is response
//!   time);
//! - one log writer with group commit (`log::GroupCommit`): transactions commit at the target
//!   rate; when the log writer is free it writes every commit waiting in one sequential write,
//!   made durable as the engine makes it (RWF_DSYNC, or a write then fdatasync), so the write
//!   size grows with the commits that waited;
//! - checkpoint bursts (`log::Checkpoint`): every checkpoint interval, the pages dirtied since
//!   the last are written to the data files as fast as the storage takes them;
//! - optional read-ahead scans: large sequential reads, one in flight per scan.
//!
//! The room's parts: its configuration (`config`), its jobs (`jobs`), the sources of the log
//! writer and the checkpoints (`log`), its rules (`judge`), the validation that runs them and
//! the capacity search (`validation`), its section of the results file (`section`) and its
//! description (`workload`). Every constant is documented with its source in docs/profiles.md.

pub(crate) mod cli;
mod config;
mod jobs;
mod judge;
mod log;
pub(crate) mod section;
mod validation;
pub(crate) mod view;
pub(crate) mod workload;

pub(crate) use config::{DatabaseConfig, DatabaseFile, DatabaseSpec, quick, resolve};
pub(crate) use judge::Limits;

/// `[database]` job files.
pub(crate) const ROOM: crate::workloads::Room = crate::workloads::Room {
    section: "database",
    what: "a database validation (its I/O comes from the database profile)",
    hint: "storlab database FILE --tps ...",
    flags: &[
        "--duration",
        "--ramp",
        "--interval",
        "--engine",
        "--seed",
        "--destroy-data",
    ],
    load: workload::load,
    schema: schemars::SchemaGenerator::subschema_for::<config::DatabaseFile>,
    view: &view::DatabaseView,
    subcommand: Some(cli::SUBCOMMAND),
    foreign: None,
};

/// The database engines storlab models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Engine {
    /// Oracle Database.
    Oracle,
    /// Microsoft SQL Server.
    Sqlserver,
    /// PostgreSQL.
    Postgresql,
    /// MySQL with InnoDB.
    Mysql,
}

/// How an engine makes a log write durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// Each log write is a write-through write (RWF_DSYNC): Oracle's and SQL Server's O_DSYNC /
    /// FUA log writes.
    Dsync,
    /// A write, then fdatasync of the log file: PostgreSQL's default `wal_sync_method` on
    /// Linux, and InnoDB's redo flush.
    Fdatasync,
}

impl Durability {
    /// As the results file and the description name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Durability::Dsync => "rwf_dsync",
            Durability::Fdatasync => "fdatasync",
        }
    }
}

/// An engine's I/O constants (docs/profiles.md gives each one's source).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct EngineModel {
    /// Data page size, bytes.
    pub page_bytes: u64,
    /// Log bytes one transaction's commit writes when it commits alone (the default log write
    /// size).
    pub log_write_bytes: u64,
    /// The largest single log write, bytes: a group commit writes at most this much at once.
    pub log_max_write_bytes: u64,
    /// How a log write is made durable.
    pub durability: Durability,
    /// Size of each read-ahead scan read, bytes.
    pub scan_read_bytes: u64,
    /// Limits: average data-file read, average data-file write, average log write, ms.
    pub limits: Limits,
    /// Which limits are published (and where), for the description; the others are storlab's
    /// choice.
    pub limits_source: &'static str,
}

/// Data-file I/Os per transaction (reads and writes together): storlab's choice, the same
/// for every engine.
pub(crate) const DATA_IOS_PER_TRANSACTION: f64 = 4.0;
/// Share of the steady data-file I/Os that are reads, percent: the usual 70/30 OLTP mix
/// (storlab's choice).
pub(crate) const DATA_READ_PCT: f64 = 70.0;
/// Pages each transaction dirties that are left for the checkpoint to write (the steady
/// writes of the mix are the background writer's): storlab's choice.
pub(crate) const CHECKPOINT_PAGES_PER_TRANSACTION: f64 = 0.5;
/// Checkpoint writes in flight per data file (a burst as fast as the storage takes it).
pub(crate) const CHECKPOINT_QUEUE_DEPTH: u32 = 8;
/// Default interval between checkpoints (storlab's choice; the engines' defaults range from
/// about a minute, SQL Server's automatic checkpoints, to five minutes, PostgreSQL's
/// `checkpoint_timeout`; a shorter one puts several bursts in a short validation).
pub(crate) const CHECKPOINT_INTERVAL_MS: u64 = 10_000;
/// Log writes are whole multiples of this many bytes, at offsets aligned to it: the 4 KiB
/// sector of current drives (Oracle and SQL Server write the log in 4 KiB blocks on them), and
/// what O_DIRECT needs.
pub(crate) const LOG_ALIGN_BYTES: u64 = 4096;
/// Data-file I/Os in flight at most per worker (an open loop's backlog beyond it waits).
pub(crate) const WORKER_QUEUE_DEPTH: u32 = 8;
/// Achieved rates (data-file IOPS, commits per second) must reach this share of the target.
pub(crate) const ACHIEVED_SHARE: f64 = 0.95;

impl Engine {
    /// Every engine.
    pub(crate) const ALL: [Engine; 4] = [
        Engine::Oracle,
        Engine::Sqlserver,
        Engine::Postgresql,
        Engine::Mysql,
    ];

    /// The name users write and results carry.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Engine::Oracle => "oracle",
            Engine::Sqlserver => "sqlserver",
            Engine::Postgresql => "postgresql",
            Engine::Mysql => "mysql",
        }
    }

    /// The engine as people write it.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Engine::Oracle => "Oracle",
            Engine::Sqlserver => "SQL Server",
            Engine::Postgresql => "PostgreSQL",
            Engine::Mysql => "MySQL (InnoDB)",
        }
    }

    /// Parses `oracle`, `sqlserver`, `postgresql` or `mysql`.
    pub(crate) fn parse(s: &str) -> Result<Engine, String> {
        Engine::ALL
            .into_iter()
            .find(|e| e.name() == s.trim())
            .ok_or_else(|| {
                format!("unknown database engine `{s}`; use oracle, sqlserver, postgresql or mysql")
            })
    }

    /// The engine's constants.
    pub(crate) fn model(self) -> EngineModel {
        match self {
            // 8 KiB blocks (db_block_size default); redo writes of 2 to 64 KiB (the seed's
            // Oracle profile), written O_DSYNC by LGWR; multiblock reads of 1 MiB
            // (db_file_multiblock_read_count × 8 KiB). Limits: single-block reads 10 ms and
            // log writes 10 ms (Oracle's guidance); data writes 20 ms (storlab's choice).
            Engine::Oracle => EngineModel {
                page_bytes: 8 << 10,
                log_write_bytes: 2 << 10,
                log_max_write_bytes: 64 << 10,
                durability: Durability::Dsync,
                scan_read_bytes: 1 << 20,
                limits: Limits {
                    data_read_ms: 10.0,
                    data_write_ms: 20.0,
                    log_write_ms: 10.0,
                },
                limits_source: "Oracle: single-block reads under 10 ms (Oracle's guidance), log writes under 10 ms (the community figure); data-file writes under 20 ms is storlab's choice",
            },
            // 8 KiB pages; log blocks of 512 B to 60 KiB, written through (FUA / O_DSYNC);
            // read-ahead of up to 512 KiB. Limits: Microsoft's I/O guidance for data files,
            // the community's 5 ms for the log.
            Engine::Sqlserver => EngineModel {
                page_bytes: 8 << 10,
                log_write_bytes: 4 << 10,
                log_max_write_bytes: 60 << 10,
                durability: Durability::Dsync,
                scan_read_bytes: 512 << 10,
                limits: Limits {
                    data_read_ms: 20.0,
                    data_write_ms: 20.0,
                    log_write_ms: 5.0,
                },
                limits_source: "Microsoft's SQL Server I/O guidance for data-file reads and writes (under 20 ms); log writes under 5 ms, the community figure for transaction-log storage",
            },
            // 8 KiB pages and WAL pages (BLCKSZ, XLOG_BLCKSZ); WAL written then fdatasync
            // (the default wal_sync_method on Linux). Limits: storlab's choice.
            Engine::Postgresql => EngineModel {
                page_bytes: 8 << 10,
                log_write_bytes: 8 << 10,
                log_max_write_bytes: 128 << 10,
                durability: Durability::Fdatasync,
                scan_read_bytes: 128 << 10,
                limits: Limits {
                    data_read_ms: 20.0,
                    data_write_ms: 20.0,
                    log_write_ms: 10.0,
                },
                limits_source: "storlab's choice (no published figure): data-file reads and writes under 20 ms, WAL writes under 10 ms",
            },
            // 16 KiB InnoDB pages; redo in 512 B blocks, flushed at each commit
            // (innodb_flush_log_at_trx_commit = 1); linear read-ahead of a 1 MiB extent.
            // Limits: storlab's choice.
            Engine::Mysql => EngineModel {
                page_bytes: 16 << 10,
                log_write_bytes: 2 << 10,
                log_max_write_bytes: 64 << 10,
                durability: Durability::Fdatasync,
                scan_read_bytes: 1 << 20,
                limits: Limits {
                    data_read_ms: 20.0,
                    data_write_ms: 20.0,
                    log_write_ms: 10.0,
                },
                limits_source: "storlab's choice (no published figure): data-file reads and writes under 20 ms, redo writes under 10 ms",
            },
        }
    }
}

#[cfg(test)]
mod tests;
