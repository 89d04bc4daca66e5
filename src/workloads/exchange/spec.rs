//! The `[exchange]` section as written, and the flags of `storlab exchange`: one declaration
//! of each key ([`crate::workloads::spec!`]).

use crate::units::{Dur, Percent, Size};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A number or a word: `threads = 4` or `threads = "auto"`, `version = 2010` or `"2010"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum ThreadsSpec {
    /// A fixed count per database.
    Count(u32),
    /// `auto`.
    Word(String),
}

impl ThreadsSpec {
    /// A flag's value, as written (`--version 2010`, `--threads auto`): read as the job
    /// file's string would be.
    pub(crate) fn word(s: &str) -> Result<ThreadsSpec, std::convert::Infallible> {
        Ok(ThreadsSpec::Word(s.to_string()))
    }
}

crate::workloads::spec! {
    /// The `[exchange]` section of a job file, as written, and the flags of `storlab exchange`
    /// (each overrides the file's key of the same name).
    #[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema, clap::Args)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct ExchangeSpec {
        /// Number of mailboxes.
        #[arg(long, value_name = "N")]
        mailboxes: Option<u64>,
        /// Mailbox size, e.g. 2GiB.
        #[arg(long, value_name = "SIZE")]
        mailbox_size: Option<Size>,
        /// Transactional IOPS per mailbox (excludes log I/O), e.g. 0.12.
        #[arg(long, value_name = "IOPS", conflicts_with = "messages_per_day")]
        iops_per_mailbox: Option<f64>,
        /// Messages sent and received per mailbox per day (converted with the version's table).
        #[arg(long, value_name = "N")]
        messages_per_day: Option<u32>,
        /// Exchange version: 2007, 2010, 2013, 2016 or 2019 (a number or a string).
        #[arg(long, value_name = "YEAR", value_parser = ThreadsSpec::word)]
        version: Option<ThreadsSpec>,
        /// Number of databases.
        #[arg(long, value_name = "N")]
        databases: Option<u32>,
        /// Directories (or LUN mount points) for databases; databases are spread over them (the
        /// flag is repeatable).
        #[arg(long = "db-path", value_name = "DIR")]
        db_paths: Option<Vec<PathBuf>>,
        /// Directories for log streams, spread like databases (the flag is repeatable).
        #[arg(long = "log-path", value_name = "DIR")]
        log_paths: Option<Vec<PathBuf>>,
        /// Threads per database (2007, 2010), or shared by all databases (2013 and later, as
        /// Jetstress 2013 counts them), or `auto`.
        #[arg(long, value_name = "N|auto", value_parser = ThreadsSpec::word)]
        threads: Option<ThreadsSpec>,
        /// Copies of each database (a database availability group's active and passive copies,
        /// Jetstress's "copies per database"; default 1).
        #[arg(long, value_name = "N")]
        copies: Option<u32>,
        /// Headroom over the profile's IOPS, e.g. 20% (default: none for an IOPS per mailbox
        /// given or the version's default, the calculator's 20 % for one from messages a day).
        #[arg(long, value_name = "PCT")]
        headroom: Option<Percent>,
        /// Background database maintenance: on or off (true or false in a job file).
        #[arg(long, value_name = "on|off", value_parser = on_off)]
        maintenance: Option<bool>,
        /// Test type: performance, stress, backup or recovery.
        #[arg(long, value_name = "TYPE")]
        test: Option<String>,
        /// Measured duration, e.g. 2h.
        #[arg(long, value_name = "TIME")]
        duration: Option<Dur>,
        /// Ramp before measurement.
        #[arg(long, value_name = "TIME")]
        ramp: Option<Dur>,
        /// Build databases at this fraction of their real size, e.g. 2%.
        #[arg(long, value_name = "PCT")]
        capacity: Option<Percent>,
        /// Throughput mode: databases fill this share of the free space on the database paths.
        #[arg(long, value_name = "PCT")]
        db_capacity: Option<Percent>,
        /// Throughput mode: run at this share of the storage's maximum (closed-loop) throughput.
        #[arg(long, value_name = "PCT")]
        throughput: Option<Percent>,
        /// Search for the largest mailbox count that passes.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        find_max_mailboxes: Option<bool>,
        /// Limit on average database read latency, e.g. 20ms.
        #[arg(long, value_name = "TIME")]
        db_read_latency: Option<Dur>,
        /// Limit on average log write latency, e.g. 10ms.
        #[arg(long, value_name = "TIME")]
        log_write_latency: Option<Dur>,
        /// Limit on maximum database read latency, e.g. 100ms.
        #[arg(long, value_name = "TIME")]
        max_latency: Option<Dur>,
        /// Recovery test: log files replayed per database.
        #[arg(long, value_name = "N")]
        log_files: Option<u32>,
        /// Database page size override, e.g. 32k (default: the version's).
        #[arg(long, value_name = "SIZE")]
        page_size: Option<Size>,
        /// Engine: io_uring or psync.
        #[arg(long, value_name = "ENGINE")]
        engine: Option<String>,
        /// Seed.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Time-series interval.
        #[arg(long, value_name = "TIME")]
        interval: Option<Dur>,
        /// Allow overwriting existing files that storlab did not create.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        destroy_data: Option<bool>,
        /// Verify data: headers and checksums on every page and log write, checked on every
        /// read and in a final read-back pass.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        verify: Option<bool>,
        /// Record a sample of the blocks the test touches, for `storlab cache-curve`.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        sample_blocks: Option<bool>,
        /// A cache tier in front of each database, on this device or file: one per database, in
        /// order (the flag is repeatable).
        #[arg(long = "cache-device", value_name = "PATH")]
        cache_devices: Option<Vec<PathBuf>>,
        /// Size of each database's cache: bytes or a share of the database (default 100%).
        #[arg(long, value_name = "SIZE|PCT", value_parser = crate::job::spec::CacheSizeSpec::text)]
        cache_size: Option<crate::job::spec::CacheSizeSpec>,
        /// The caches' replacement policy: lru (default), arc or s3fifo.
        #[arg(long, value_name = "POLICY")]
        cache_policy: Option<String>,
        /// The caches' write policy: back (default), through or around.
        #[arg(long, value_name = "MODE")]
        cache_write: Option<String>,
        /// Run the validation (or the maximum-mailboxes search) without the cache tier, then
        /// with it, and compare what each carried.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        compare_cache: Option<bool>,
        ;
        /// Backup test: read size (the job file's only).
        #[arg(skip)]
        backup_block_size: Option<Size>,
    }
}

/// Parses `on` or `off` (also `true`/`false`, `yes`/`no`).
fn on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err("use on or off".into()),
    }
}

/// A job file holding an `[exchange]` section.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExchangeFile {
    /// The section.
    pub exchange: ExchangeSpec,
}
