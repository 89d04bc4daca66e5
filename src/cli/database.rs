//! `storlab database`: database storage validation with a verdict. Flags override the job
//! file's (or preset's) `[database]` section; with no argument at all, a quick check of about
//! a minute on a scratch directory.

use super::OutputArgs;
use super::flags::{self, Flag};
use crate::job;
use crate::results::Invocation;
use crate::units::{Dur, Size};
use crate::workloads::database::workload::{self, Database};
use crate::workloads::database::{self as model, DatabaseConfig, DatabaseFile, DatabaseSpec};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Flags of `storlab database`; each overrides the job file's `[database]` value.
#[derive(Debug, Args, Default)]
pub struct DatabaseArgs {
    /// Job file with a `[database]` section.
    pub job: Option<PathBuf>,
    /// Run a built-in database preset (see `storlab presets`); flags override its values.
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub preset: Option<String>,
    /// Database engine: oracle, sqlserver, postgresql or mysql.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Size of the data files together, e.g. 10GiB.
    #[arg(long, value_name = "SIZE")]
    pub data_size: Option<Size>,
    /// Transactions per second.
    #[arg(long, value_name = "N", conflicts_with = "iops")]
    pub tps: Option<f64>,
    /// Data-file IOPS target instead of a transaction rate.
    #[arg(long, value_name = "N")]
    pub iops: Option<f64>,
    /// Log bytes each commit writes, e.g. 4KiB (default: the engine's).
    #[arg(long, value_name = "SIZE")]
    pub log_write_size: Option<Size>,
    /// Data page size (default: the engine's).
    #[arg(long, value_name = "SIZE")]
    pub page_size: Option<Size>,
    /// Number of data files.
    #[arg(long, value_name = "N")]
    pub data_files: Option<u32>,
    /// Directory for data files (repeatable: files are spread over them).
    #[arg(long = "data-path", value_name = "DIR")]
    pub data_paths: Vec<PathBuf>,
    /// Directory for the log (default: the first data directory).
    #[arg(long, value_name = "DIR")]
    pub log_path: Option<PathBuf>,
    /// Size of the log file, e.g. 1GiB.
    #[arg(long, value_name = "SIZE")]
    pub log_size: Option<Size>,
    /// Workers per data file.
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
    /// Time between checkpoints, e.g. 30s (0s: none).
    #[arg(long, value_name = "TIME")]
    pub checkpoint_interval: Option<Dur>,
    /// Read-ahead scans beside the transactions.
    #[arg(long, value_name = "N")]
    pub scans: Option<u32>,
    /// Search for the highest transaction rate that passes.
    #[arg(long)]
    pub find_max: bool,
    /// Limit on average data-file read latency, e.g. 20ms (default: the engine's).
    #[arg(long, value_name = "TIME")]
    pub data_read_latency: Option<Dur>,
    /// Limit on average data-file write latency.
    #[arg(long, value_name = "TIME")]
    pub data_write_latency: Option<Dur>,
    /// Limit on average log write latency.
    #[arg(long, value_name = "TIME")]
    pub log_write_latency: Option<Dur>,
    /// Measured duration.
    #[arg(long, value_name = "TIME")]
    pub duration: Option<Dur>,
    /// Ramp before measurement.
    #[arg(long, value_name = "TIME")]
    pub ramp: Option<Dur>,
    /// Time-series interval.
    #[arg(long, value_name = "TIME")]
    pub interval: Option<Dur>,
    /// I/O engine: io_uring or psync.
    #[arg(long, value_name = "ENGINE")]
    pub io_engine: Option<String>,
    /// Seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Allow overwriting existing files storlab did not create.
    #[arg(long)]
    pub destroy_data: bool,
    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,
}

/// A flag of `storlab database`.
type DatabaseFlag = Flag<DatabaseArgs, DatabaseSpec>;

fn set<T: Clone>(field: &mut Option<T>, value: &Option<T>) {
    if value.is_some() {
        field.clone_from(value);
    }
}

/// A flag that sets the `[database]` key of the same name.
macro_rules! key {
    ($flag:literal, $field:ident) => {
        Flag {
            flag: $flag,
            keys: &[stringify!($field)],
            given: |a| a.$field.is_some(),
            apply: |s, a| set(&mut s.$field, &a.$field),
        }
    };
}

/// The flags of `storlab database` that change the `[database]` section.
pub(super) const DATABASE_FLAGS: &[DatabaseFlag] = &[
    key!("--engine", engine),
    key!("--data-size", data_size),
    Flag {
        flag: "--tps",
        keys: &["tps"],
        given: |a| a.tps.is_some(),
        apply: |s, a| {
            s.iops = None;
            set(&mut s.tps, &a.tps);
        },
    },
    Flag {
        flag: "--iops",
        keys: &["iops"],
        given: |a| a.iops.is_some(),
        apply: |s, a| {
            s.tps = None;
            set(&mut s.iops, &a.iops);
        },
    },
    key!("--log-write-size", log_write_size),
    key!("--page-size", page_size),
    key!("--data-files", data_files),
    Flag {
        flag: "--data-path",
        keys: &["data_paths"],
        given: |a| !a.data_paths.is_empty(),
        apply: |s, a| s.data_paths = Some(a.data_paths.clone()),
    },
    key!("--log-path", log_path),
    key!("--log-size", log_size),
    key!("--threads", threads),
    key!("--checkpoint-interval", checkpoint_interval),
    key!("--scans", scans),
    Flag {
        flag: "--find-max",
        keys: &["find_max"],
        given: |a| a.find_max,
        apply: |s, _| s.find_max = Some(true),
    },
    key!("--data-read-latency", data_read_latency),
    key!("--data-write-latency", data_write_latency),
    key!("--log-write-latency", log_write_latency),
    key!("--duration", duration),
    key!("--ramp", ramp),
    key!("--interval", interval),
    key!("--io-engine", io_engine),
    key!("--seed", seed),
    Flag {
        flag: "--destroy-data",
        keys: &["destroy_data"],
        given: |a| a.destroy_data,
        apply: |s, _| s.destroy_data = Some(true),
    },
];

/// Whether a job file's text holds a `[database]` section.
/// Builds the configuration from the job file's (or preset's) `[database]` section and the
/// flags.
pub fn build_database(a: &DatabaseArgs) -> Result<DatabaseConfig> {
    let file = super::section_file(
        a.job.as_deref(),
        a.preset.as_deref(),
        "database",
        "database",
    )?;
    let (mut spec, location) = match &file {
        Some((path, text)) => {
            let parsed: DatabaseFile = job::file::parse_toml(path, text)?;
            (parsed.database, path.display().to_string())
        }
        None => (DatabaseSpec::default(), "command line".to_string()),
    };
    flags::apply(DATABASE_FLAGS, &mut spec, a);
    model::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        flags::blame_section(e, DATABASE_FLAGS, a, file, "database").into()
    })
}

/// Runs `storlab database`.
pub(super) fn run_database(a: DatabaseArgs) -> Result<i32> {
    let cfg = build_database(&a)?;
    let invocation = Invocation {
        source: workload::source(a.job.as_deref(), a.preset.as_deref()),
        flags: flags::given(DATABASE_FLAGS, &a),
    };
    super::run_workload(&Database { cfg }, &a.out, invocation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_flag_that_changes_the_section_is_in_the_table() {
        let cli = super::super::Cli::command();
        let sub = cli.find_subcommand("database").expect("subcommand");
        let output = [
            "--dry-run",
            "--output",
            "--json",
            "--html",
            "--quiet",
            "--serve",
            "--serve-linger",
            "--preset",
        ];
        let mut clap: Vec<String> = sub
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .filter(|f| !output.contains(&f.as_str()))
            .collect();
        clap.sort();
        let mut table: Vec<String> = DATABASE_FLAGS.iter().map(|f| f.flag.to_string()).collect();
        table.sort();
        assert_eq!(table, clap);
        // The run flags a `[database]` job file takes are flags of `storlab database` too
        // (`--engine` of `storlab run` is the I/O engine: `--io-engine` here).
        for f in model::ROOM.flags {
            let own = if *f == "--engine" { "--io-engine" } else { f };
            assert!(table.iter().any(|t| t == own), "{f}");
        }
    }

    #[test]
    fn a_flag_is_blamed_for_the_bad_value_it_set() {
        let a = DatabaseArgs {
            tps: Some(-3.0),
            ..Default::default()
        };
        let e = build_database(&a).unwrap_err().to_string();
        assert!(e.contains("--tps") && e.contains("-3"), "{e}");
        let a = DatabaseArgs {
            engine: Some("db2".into()),
            ..Default::default()
        };
        let e = build_database(&a).unwrap_err().to_string();
        assert!(e.contains("--engine") && e.contains("db2"), "{e}");
        let a = DatabaseArgs {
            preset: Some("oltp-8k".into()),
            ..Default::default()
        };
        let e = build_database(&a).unwrap_err().to_string();
        assert!(e.contains("database-sqlserver-oltp"), "{e}");
    }
}
