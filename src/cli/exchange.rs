//! `storlab exchange`: its flags, and the Exchange configuration they and the job file's
//! `[exchange]` section (or Jetstress's own JetstressConfig.xml) give.

use super::{OutputArgs, flags, run_workload};
use crate::job;
use crate::report::console;
use crate::results::Invocation;
use crate::units::{Dur, Percent, Size};
use crate::workloads::exchange::workload::Exchange;
use crate::workloads::exchange::{self, ExchangeConfig, ExchangeFile, ExchangeSpec};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Flags of `storlab exchange`; each overrides the job file's `[exchange]` value.
#[derive(Debug, Args, Default)]
pub struct ExchangeArgs {
    /// Job file with an `[exchange]` section, or Jetstress's own JetstressConfig.xml.
    pub job: Option<PathBuf>,
    /// Run a built-in Exchange preset (see `storlab presets`); flags override its values.
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub preset: Option<String>,
    /// Number of mailboxes.
    #[arg(long, value_name = "N")]
    pub mailboxes: Option<u64>,
    /// Mailbox size, e.g. 2GiB.
    #[arg(long, value_name = "SIZE")]
    pub mailbox_size: Option<Size>,
    /// Transactional IOPS per mailbox, e.g. 0.12.
    #[arg(long, value_name = "IOPS", conflicts_with = "messages_per_day")]
    pub iops_per_mailbox: Option<f64>,
    /// Messages sent and received per mailbox per day (converted with the version's table).
    #[arg(long, value_name = "N")]
    pub messages_per_day: Option<u32>,
    /// Exchange version: 2007, 2010, 2013, 2016 or 2019.
    #[arg(long, value_name = "YEAR")]
    pub version: Option<String>,
    /// Number of databases.
    #[arg(long, value_name = "N")]
    pub databases: Option<u32>,
    /// Directory for databases (repeatable: databases are spread over them).
    #[arg(long = "db-path", value_name = "DIR")]
    pub db_paths: Vec<PathBuf>,
    /// Directory for logs (repeatable).
    #[arg(long = "log-path", value_name = "DIR")]
    pub log_paths: Vec<PathBuf>,
    /// Threads per database (2007, 2010), or shared by all databases (2013 and later, as
    /// Jetstress 2013 counts them), or `auto`.
    #[arg(long, value_name = "N|auto")]
    pub threads: Option<String>,
    /// Copies of each database (Jetstress's copies per database; default 1).
    #[arg(long, value_name = "N")]
    pub copies: Option<u32>,
    /// Headroom over the profile's IOPS, e.g. 20% (default: none, the IOPS per mailbox is the
    /// target; 20% on a rate from --messages-per-day).
    #[arg(long, value_name = "PCT")]
    pub headroom: Option<Percent>,
    /// Background database maintenance: on or off.
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    pub maintenance: Option<bool>,
    /// Test type: performance, stress, backup or recovery.
    #[arg(long, value_name = "TYPE")]
    pub test: Option<String>,
    /// Measured duration, e.g. 2h.
    #[arg(long, value_name = "TIME")]
    pub duration: Option<Dur>,
    /// Ramp before measurement.
    #[arg(long, value_name = "TIME")]
    pub ramp: Option<Dur>,
    /// Build databases at this fraction of their real size, e.g. 2%.
    #[arg(long, value_name = "PCT")]
    pub capacity: Option<Percent>,
    /// Throughput mode: databases fill this share of the free space.
    #[arg(long, value_name = "PCT")]
    pub db_capacity: Option<Percent>,
    /// Throughput mode: run at this share of the maximum throughput.
    #[arg(long, value_name = "PCT")]
    pub throughput: Option<Percent>,
    /// Search for the largest mailbox count that passes.
    #[arg(long)]
    pub find_max_mailboxes: bool,
    /// Database page size override, e.g. 32k.
    #[arg(long, value_name = "SIZE")]
    pub page_size: Option<Size>,
    /// Recovery test: log files replayed per database.
    #[arg(long, value_name = "N")]
    pub log_files: Option<u32>,
    /// Limit on average database read latency, e.g. 20ms.
    #[arg(long, value_name = "TIME")]
    pub db_read_latency: Option<Dur>,
    /// Limit on average log write latency, e.g. 10ms.
    #[arg(long, value_name = "TIME")]
    pub log_write_latency: Option<Dur>,
    /// Limit on maximum database read latency, e.g. 100ms.
    #[arg(long, value_name = "TIME")]
    pub max_latency: Option<Dur>,
    /// Engine: io_uring or psync.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Time-series interval.
    #[arg(long, value_name = "TIME")]
    pub interval: Option<Dur>,
    /// Allow overwriting existing files storlab did not create.
    #[arg(long)]
    pub destroy_data: bool,
    /// Verify data: headers and checksums on every page and log write, checked on every read
    /// and in a final read-back pass.
    #[arg(long)]
    pub verify: bool,
    /// Record a sample of the blocks the test touches, for `storlab cache-curve`.
    #[arg(long)]
    pub sample_blocks: bool,
    /// Put a cache tier in front of each database, on this device or file (repeatable: one
    /// per database, in order).
    #[arg(long = "cache-device", value_name = "PATH")]
    pub cache_devices: Vec<PathBuf>,
    /// Size of each database's cache: bytes or a share of the database (default 100%).
    #[arg(long, value_name = "SIZE|PCT")]
    pub cache_size: Option<String>,
    /// The caches' replacement policy: lru, arc or s3fifo.
    #[arg(long, value_name = "POLICY")]
    pub cache_policy: Option<String>,
    /// The caches' write policy: back, through or around.
    #[arg(long, value_name = "MODE")]
    pub cache_write: Option<String>,
    /// Run the validation (or the maximum-mailboxes search) without the cache, then with it,
    /// and compare what each carried.
    #[arg(long)]
    pub compare_cache: bool,
    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Parses `on` or `off` (also `true`/`false`, `yes`/`no`).
fn on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err("use on or off".into()),
    }
}

/// Builds the Exchange configuration from the job file's `[exchange]` section and the flags.
/// What `storlab exchange` with `a` would run, as its dry run and results describe it (the
/// validation's configuration resolved as a run resolves it, errors and all).
pub fn describe_exchange(a: &ExchangeArgs) -> Result<crate::results::description::Description> {
    build_exchange(a).map(|cfg| crate::workloads::exchange::workload::describe(&cfg))
}

pub(crate) fn build_exchange(a: &ExchangeArgs) -> Result<ExchangeConfig> {
    let (spec, location, file) = exchange_spec(a)?;
    exchange::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        match file.filter(|(_, t)| exchange::jetstress::is_config(t)) {
            // A Jetstress file's value: the error names its element and line.
            Some((path, text)) => {
                let e = flags::blame_exchange(e, a, None);
                exchange::jetstress::blame(e, path, text).into()
            }
            None => flags::blame_exchange(e, a, file).into(),
        }
    })
}

/// The job file's (or preset's) `[exchange]` section with the flags applied, where it came
/// from, and the file and its text.
pub(super) type SpecFrom = (ExchangeSpec, String, Option<(PathBuf, String)>);

/// The `[exchange]` section as the job file (or preset) and the flags give it.
pub(super) fn exchange_spec(a: &ExchangeArgs) -> Result<SpecFrom> {
    let file = crate::workloads::section_file(
        a.job.as_deref(),
        a.preset.as_deref(),
        "exchange",
        "Exchange",
    )?;
    let (mut spec, location) = match &file {
        Some((path, text)) if exchange::jetstress::is_config(text) => {
            // Jetstress's own file: its Windows paths go to the scratch directory unless
            // --db-path and --log-path place them.
            let c = exchange::jetstress::read(path, text, &[])?;
            let placed = !a.db_paths.is_empty() && !a.log_paths.is_empty();
            for n in c.notes.iter().filter(|n| !placed || !n.contains("--map")) {
                console::note(n);
            }
            (c.spec, path.display().to_string())
        }
        Some((path, text)) => {
            let parsed: ExchangeFile = job::file::parse_toml(path, text)?;
            (parsed.exchange, path.display().to_string())
        }
        None => (ExchangeSpec::default(), "command line".to_string()),
    };
    flags::apply_exchange(&mut spec, a);
    Ok((spec, location, file))
}

pub(super) fn run_exchange(a: ExchangeArgs) -> Result<i32> {
    let cfg = build_exchange(&a)?;
    let invocation = Invocation {
        source: crate::workloads::exchange::workload::source(a.job.as_deref(), a.preset.as_deref()),
        flags: flags::given(flags::EXCHANGE_FLAGS, &a),
    };
    run_workload(&Exchange { cfg }, &a.out, invocation)
}
