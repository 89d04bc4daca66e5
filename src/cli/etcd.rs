//! `storlab etcd` and `storlab wal-sync`: etcd's disk check and PostgreSQL's WAL sync methods.
//! Flags override the job file's (or preset's) `[etcd]` / `[wal_sync]` section; with no
//! argument at all, a quick check on a scratch directory under the current directory.

use super::OutputArgs;
use super::flags::{self, Flag};
use crate::job;
use crate::results::Invocation;
use crate::units::{Dur, Size};
use crate::workloads::etcd::workload::{self as etcd_workload, Etcd};
use crate::workloads::etcd::{self, EtcdConfig, EtcdFile, EtcdSpec};
use crate::workloads::walsync::workload::{self as walsync_workload, WalSync};
use crate::workloads::walsync::{self, WalSyncConfig, WalSyncFile, WalSyncSpec};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Flags of `storlab etcd`; each overrides the job file's `[etcd]` value.
#[derive(Debug, Args, Default)]
pub struct EtcdArgs {
    /// Job file with an `[etcd]` section.
    pub job: Option<PathBuf>,
    /// Run a built-in etcd preset: etcd (2300-byte writes, the fio check) or etcd-openshift
    /// (8000-byte writes); flags override its values.
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub preset: Option<String>,
    /// Directory of the log file: etcd's data directory, e.g. /var/lib/etcd (default
    /// ./storlab-scratch/etcd).
    #[arg(long, value_name = "DIR")]
    pub directory: Option<PathBuf>,
    /// Bytes of each write, e.g. 2300 (the fio check) or 8000 (OpenShift's).
    #[arg(long, value_name = "SIZE")]
    pub write_size: Option<Size>,
    /// Bytes of the log file, written once (default 22MiB, as the fio check).
    #[arg(long, value_name = "SIZE")]
    pub file_size: Option<Size>,
    /// The longest the check may take (default 60s); it ends when the file is written.
    #[arg(long, value_name = "TIME")]
    pub duration: Option<Dur>,
    /// Limit on the 99th percentile of the fdatasync time (default 10ms, etcd's).
    #[arg(long, value_name = "TIME")]
    pub sync_p99: Option<Dur>,
    /// Synced writes a second the storage must keep up (default 50; 500 with --heavy).
    #[arg(long, value_name = "N")]
    pub min_rate: Option<f64>,
    /// A heavily loaded cluster: at least 500 synced writes a second.
    #[arg(long)]
    pub heavy: bool,
    /// Engine: psync (default, as the fio check's ioengine=sync) or io_uring.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Time-series interval.
    #[arg(long, value_name = "TIME")]
    pub interval: Option<Dur>,
    /// Seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Allow overwriting an existing file storlab did not create.
    #[arg(long)]
    pub destroy_data: bool,
    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Flags of `storlab wal-sync`; each overrides the job file's `[wal_sync]` value.
#[derive(Debug, Args, Default)]
pub struct WalSyncArgs {
    /// Job file with a `[wal_sync]` section.
    pub job: Option<PathBuf>,
    /// Directory of the file: the WAL's, e.g. /var/lib/postgresql/16/main/pg_wal (default
    /// ./storlab-scratch/wal-sync).
    #[arg(long, value_name = "DIR")]
    pub directory: Option<PathBuf>,
    /// Bytes of each write: the WAL block size (default 8KiB).
    #[arg(long, value_name = "SIZE")]
    pub block_size: Option<Size>,
    /// Bytes of the file (default 16MiB, a WAL segment).
    #[arg(long, value_name = "SIZE")]
    pub file_size: Option<Size>,
    /// How long each method is measured (default 2s; pg_test_fsync's is 5s).
    #[arg(long, value_name = "TIME")]
    pub seconds_per_method: Option<Dur>,
    /// Writes per sync to compare, e.g. 1,2,4,8,16 (default 1,2).
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    pub writes_per_sync: Option<Vec<u32>>,
    /// Methods to compare, e.g. fdatasync,open_datasync (default all four).
    #[arg(long, value_name = "METHOD,...", value_delimiter = ',')]
    pub methods: Option<Vec<String>>,
    /// O_DIRECT: both (default), on or off.
    #[arg(long, value_name = "both|on|off")]
    pub direct: Option<String>,
    /// Leave out the never-synced writes.
    #[arg(long)]
    pub no_baseline: bool,
    /// Engine: psync (default) or io_uring.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Time-series interval.
    #[arg(long, value_name = "TIME")]
    pub interval: Option<Dur>,
    /// Seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Allow overwriting an existing file storlab did not create.
    #[arg(long)]
    pub destroy_data: bool,
    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,
}

/// A flag of `storlab etcd`.
type EtcdFlag = Flag<EtcdArgs, EtcdSpec>;
/// A flag of `storlab wal-sync`.
type WalSyncFlag = Flag<WalSyncArgs, WalSyncSpec>;

/// A flag that sets the key of the same name as the argument's field.
macro_rules! key {
    ($flag:literal, $field:ident) => {
        Flag {
            flag: $flag,
            keys: &[stringify!($field)],
            given: |a| a.$field.is_some(),
            apply: |s, a| s.$field.clone_from(&a.$field),
        }
    };
}

/// A switch that sets a boolean key to true.
macro_rules! switch {
    ($flag:literal, $field:ident) => {
        Flag {
            flag: $flag,
            keys: &[stringify!($field)],
            given: |a| a.$field,
            apply: |s, _| s.$field = Some(true),
        }
    };
}

/// The flags of `storlab etcd` that change the `[etcd]` section.
const ETCD_FLAGS: &[EtcdFlag] = &[
    key!("--directory", directory),
    key!("--write-size", write_size),
    key!("--file-size", file_size),
    key!("--duration", duration),
    key!("--sync-p99", sync_p99),
    // Before --min-rate: --heavy asks for the heavily loaded clusters' rate over the file's,
    // and --min-rate, when given too, sets it.
    Flag {
        flag: "--heavy",
        keys: &["heavy"],
        given: |a| a.heavy,
        apply: |s, _| {
            s.heavy = Some(true);
            s.min_rate = None;
        },
    },
    key!("--min-rate", min_rate),
    key!("--engine", engine),
    key!("--interval", interval),
    key!("--seed", seed),
    switch!("--destroy-data", destroy_data),
];

/// The flags of `storlab wal-sync` that change the `[wal_sync]` section.
const WAL_SYNC_FLAGS: &[WalSyncFlag] = &[
    key!("--directory", directory),
    key!("--block-size", block_size),
    key!("--file-size", file_size),
    key!("--seconds-per-method", seconds_per_method),
    key!("--writes-per-sync", writes_per_sync),
    key!("--methods", methods),
    key!("--direct", direct),
    Flag {
        flag: "--no-baseline",
        keys: &["no_sync"],
        given: |a| a.no_baseline,
        apply: |s, _| s.no_sync = Some(false),
    },
    key!("--engine", engine),
    key!("--interval", interval),
    key!("--seed", seed),
    switch!("--destroy-data", destroy_data),
];

/// The names of the etcd presets.
/// Builds the etcd check from the job file (or preset) and the flags.
pub fn build_etcd(a: &EtcdArgs) -> Result<EtcdConfig> {
    let file = super::section_file(a.job.as_deref(), a.preset.as_deref(), "etcd", "etcd")?;
    let (mut spec, location) = match &file {
        Some((path, text)) => {
            let parsed: EtcdFile = job::file::parse_toml(path, text)?;
            (parsed.etcd, path.display().to_string())
        }
        None => (EtcdSpec::default(), "command line".to_string()),
    };
    flags::apply(ETCD_FLAGS, &mut spec, a);
    etcd::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        flags::blame_section(e, ETCD_FLAGS, a, file, "etcd").into()
    })
}

/// Runs `storlab etcd`.
pub(super) fn run_etcd(a: EtcdArgs) -> Result<i32> {
    let cfg = build_etcd(&a)?;
    let invocation = Invocation {
        source: etcd_workload::source(a.job.as_deref(), a.preset.as_deref()),
        flags: flags::given(ETCD_FLAGS, &a),
    };
    super::run_workload(&Etcd { cfg }, &a.out, invocation)
}

/// Builds the WAL sync comparison from the job file and the flags.
pub fn build_wal_sync(a: &WalSyncArgs) -> Result<WalSyncConfig> {
    let file = super::section_file(a.job.as_deref(), None, "wal_sync", "WAL sync")?;
    let (mut spec, location) = match &file {
        Some((path, text)) => {
            let parsed: WalSyncFile = job::file::parse_toml(path, text)?;
            (parsed.wal_sync, path.display().to_string())
        }
        None => (WalSyncSpec::default(), "command line".to_string()),
    };
    flags::apply(WAL_SYNC_FLAGS, &mut spec, a);
    walsync::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        flags::blame_section(e, WAL_SYNC_FLAGS, a, file, "wal_sync").into()
    })
}

/// Runs `storlab wal-sync`.
pub(super) fn run_wal_sync(a: WalSyncArgs) -> Result<i32> {
    let cfg = build_wal_sync(&a)?;
    let invocation = Invocation {
        source: walsync_workload::source(a.job.as_deref(), None),
        flags: flags::given(WAL_SYNC_FLAGS, &a),
    };
    super::run_workload(&WalSync { cfg }, &a.out, invocation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The long flags of subcommand `name` that change its job (not where output goes).
    fn clap_flags(name: &str) -> Vec<String> {
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
        let cli = super::super::Cli::command();
        let sub = cli.find_subcommand(name).expect("subcommand");
        let mut flags: Vec<String> = sub
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .filter(|f| !output.contains(&f.as_str()))
            .collect();
        flags.sort();
        flags
    }

    fn table<A, S>(t: &[Flag<A, S>]) -> Vec<String> {
        let mut flags: Vec<String> = t.iter().map(|f| f.flag.to_string()).collect();
        flags.sort();
        flags
    }

    #[test]
    fn every_flag_that_changes_a_check_is_in_its_table() {
        assert_eq!(table(ETCD_FLAGS), clap_flags("etcd"));
        assert_eq!(table(WAL_SYNC_FLAGS), clap_flags("wal-sync"));
        for f in etcd::ROOM.flags.iter().chain(walsync::ROOM.flags) {
            assert!(crate::workloads::OVERRIDE_FLAGS.contains(f), "{f}");
        }
    }

    #[test]
    fn flags_override_the_preset_and_are_blamed_for_their_errors() {
        let a = EtcdArgs {
            preset: Some("etcd-openshift".into()),
            heavy: true,
            ..EtcdArgs::default()
        };
        let c = build_etcd(&a).unwrap();
        assert_eq!((c.write_bytes, c.min_rate), (8000, 500.0));
        let a = EtcdArgs {
            write_size: Some(Size(0)),
            ..EtcdArgs::default()
        };
        let e = build_etcd(&a).unwrap_err().to_string();
        assert!(e.starts_with("command line: `--write-size`"), "{e}");
        let a = EtcdArgs {
            preset: Some("oltp-8k".into()),
            ..EtcdArgs::default()
        };
        let e = build_etcd(&a).unwrap_err().to_string();
        assert!(e.contains("etcd presets: etcd, etcd-openshift"), "{e}");
        let a = WalSyncArgs {
            methods: Some(vec!["fsync".into(), "nosuch".into()]),
            ..WalSyncArgs::default()
        };
        let e = build_wal_sync(&a).unwrap_err().to_string();
        assert!(e.starts_with("command line: `--methods`"), "{e}");
    }
}
