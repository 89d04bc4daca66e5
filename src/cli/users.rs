//! `storlab users`: simulated mailbox users (LoadGen-class). Flags override the job file's
//! `[users]` section; with no argument at all, a scaled-down demo on a scratch directory.

use super::OutputArgs;
use super::flags;
use crate::job;
use crate::results::Invocation;
use crate::units::{Dur, Size};
use crate::workloads::users::config::{self, UsersConfig, UsersFile, UsersSpec, demo};
use crate::workloads::users::workload;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

/// Flags of `storlab users`; each overrides the job file's `[users]` value.
#[derive(Debug, Args, Default)]
pub struct UsersArgs {
    /// Job file with a `[users]` section.
    pub job: Option<PathBuf>,
    /// Users (one mailbox each).
    #[arg(long, value_name = "N")]
    pub users: Option<u64>,
    /// Profile: light, average, heavy, very-heavy, double-heavy, or a TOML file with a
    /// `[tasks]` table.
    #[arg(long, value_name = "NAME|FILE")]
    pub profile: Option<String>,
    /// Exchange version whose store is modelled: 2007, 2010, 2013, 2016 or 2019.
    #[arg(long, value_name = "YEAR")]
    pub version: Option<String>,
    /// Databases.
    #[arg(long, value_name = "N")]
    pub databases: Option<u32>,
    /// Copies of each database: 1 for a stand-alone database, 2 or more for the active copy
    /// in a DAG (default 2); since 2010 it sets the checkpoint depth (20 MB or 100 MB).
    #[arg(long, value_name = "N")]
    pub copies: Option<u32>,
    /// Directory for database files (repeatable: databases are spread over them).
    #[arg(long = "db-path", value_name = "DIR")]
    pub db_paths: Vec<PathBuf>,
    /// Directory for logs (repeatable; default: the database directories).
    #[arg(long = "log-path", value_name = "DIR")]
    pub log_paths: Vec<PathBuf>,
    /// Mailbox size at initialisation, e.g. 250MB.
    #[arg(long, value_name = "SIZE")]
    pub mailbox_size: Option<Size>,
    /// Database buffer cache per mailbox, e.g. 6MB.
    #[arg(long, value_name = "SIZE")]
    pub cache_per_mailbox: Option<Size>,
    /// Simulated day, e.g. 8h.
    #[arg(long, value_name = "TIME")]
    pub day: Option<Dur>,
    /// Simulated duration, e.g. 8h30m (default: the day).
    #[arg(long, value_name = "TIME")]
    pub duration: Option<Dur>,
    /// Run the simulated day N times faster than real time (N times the I/O rate).
    #[arg(long, value_name = "N")]
    pub compress: Option<f64>,
    /// Stress mode: each user's next task as soon as its last completes, no pacing.
    #[arg(long)]
    pub stress: bool,
    /// Warm-up: cold (empty cache, as LoadGen) or preloaded.
    #[arg(long, value_name = "MODE")]
    pub warm_up: Option<String>,
    /// Engine: io_uring, psync, or null (model only: no I/O).
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// I/Os in flight at most.
    #[arg(long, value_name = "N")]
    pub queue_depth: Option<u32>,
    /// Limit on Send Mail's 95th-percentile latency, e.g. 1s.
    #[arg(long, value_name = "TIME")]
    pub send_mail_p95: Option<Dur>,
    /// Limit on average database read latency, e.g. 20ms (Jetstress's, as `storlab exchange`).
    #[arg(long, value_name = "TIME")]
    pub db_read_latency: Option<Dur>,
    /// Limit on average log write latency, e.g. 10ms.
    #[arg(long, value_name = "TIME")]
    pub log_write_latency: Option<Dur>,
    /// Limit on maximum database read latency, e.g. 100ms.
    #[arg(long, value_name = "TIME")]
    pub max_latency: Option<Dur>,
    /// Time-series interval.
    #[arg(long, value_name = "TIME")]
    pub interval: Option<Dur>,
    /// Seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Allow overwriting existing files storlab did not create.
    #[arg(long)]
    pub destroy_data: bool,
    /// Verify data written and read.
    #[arg(long)]
    pub verify: bool,
    /// Record a sample of the blocks the store touches, for `storlab cache-curve`.
    #[arg(long)]
    pub sample_blocks: bool,
    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,
}

/// The flags that run the demo their way rather than replace it: its timing, its engine and
/// its checks (the others describe a population of one's own).
const KEEP_DEMO: &[&str] = &[
    "--duration",
    "--compress",
    "--warm-up",
    "--stress",
    "--engine",
    "--queue-depth",
    "--db-read-latency",
    "--log-write-latency",
    "--max-latency",
    "--interval",
    "--seed",
    "--destroy-data",
    "--verify",
    "--sample-blocks",
];

/// The demo `storlab users` runs with no argument.
fn demo_spec() -> UsersSpec {
    UsersSpec {
        users: Some(demo::USERS),
        databases: Some(demo::DATABASES),
        mailbox_size: Some(Size(demo::MAILBOX_BYTES)),
        cache_per_mailbox: Some(Size(demo::CACHE_PER_MAILBOX)),
        duration: Some(Dur(std::time::Duration::from_millis(demo::DURATION_MS))),
        compress: Some(demo::COMPRESS),
        ..UsersSpec::default()
    }
}

/// Builds the configuration from the job file's `[users]` section and the flags.
pub fn build_users(a: &UsersArgs) -> Result<UsersConfig> {
    let given = flags::given(flags::USERS_FLAGS, a);
    let (mut spec, location, file) = match &a.job {
        Some(path) => {
            let text = job::file::read_text(path)?;
            let file: UsersFile = job::file::parse_toml(path, &text)?;
            (file.users, path.display().to_string(), Some((path, text)))
        }
        // Flags that say how to run, not whom to simulate, keep the demo (shortened,
        // lengthened, on another engine…).
        None if given.iter().all(|f| KEEP_DEMO.contains(&f.as_str())) => {
            (demo_spec(), "demo".to_string(), None)
        }
        None => (UsersSpec::default(), "command line".to_string(), None),
    };
    flags::apply(flags::USERS_FLAGS, &mut spec, a);
    config::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        flags::blame_section(e, flags::USERS_FLAGS, a, file, "users").into()
    })
}

/// Runs `storlab users`.
pub(super) fn run_users(a: UsersArgs) -> Result<i32> {
    let cfg = build_users(&a)?;
    let invocation = Invocation {
        source: workload::source(a.job.as_deref()),
        flags: flags::given(flags::USERS_FLAGS, &a),
    };
    let users = workload::Users {
        cfg,
        progress: Arc::default(),
    };
    super::run_workload(&users, &a.out, invocation)
}
