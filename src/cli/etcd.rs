//! `storlab etcd` and `storlab wal-sync`: etcd's disk check and PostgreSQL's WAL sync methods.
//! Flags override the job file's (or preset's) `[etcd]` / `[wal_sync]` section; with no
//! argument at all, a quick check on a scratch directory under the current directory.

use super::OutputArgs;
use super::flags;
use crate::job;
use crate::results::Invocation;
use crate::workloads::etcd::workload::{self as etcd_workload, Etcd};
use crate::workloads::etcd::{self, EtcdConfig, EtcdFile, EtcdSpec};
use crate::workloads::walsync::workload::{self as walsync_workload, WalSync};
use crate::workloads::walsync::{self, WalSyncConfig, WalSyncFile, WalSyncSpec};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Flags of `storlab etcd`: the job file or preset, the `[etcd]` section's own keys
/// (`EtcdSpec` is both), each over the file's value, and the output.
#[derive(Debug, Args, Default)]
pub struct EtcdArgs {
    /// Job file with an `[etcd]` section.
    pub job: Option<PathBuf>,
    /// Run a built-in etcd preset: etcd (2300-byte writes, the fio check) or etcd-openshift
    /// (8000-byte writes); flags override its values.
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub preset: Option<String>,
    /// The section's keys.
    #[command(flatten)]
    pub(crate) spec: EtcdSpec,
    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Flags of `storlab wal-sync`: the job file, the `[wal_sync]` section's own keys
/// (`WalSyncSpec` is both), each over the file's value, and the output.
#[derive(Debug, Args, Default)]
pub struct WalSyncArgs {
    /// Job file with a `[wal_sync]` section.
    pub job: Option<PathBuf>,
    /// The section's keys.
    #[command(flatten)]
    pub(crate) spec: WalSyncSpec,
    /// Leave out the never-synced writes (`--no-sync=false`).
    #[arg(long, conflicts_with = "no_sync")]
    pub no_baseline: bool,
    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,
}

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
    // --heavy asks for the heavily loaded clusters' rate over the file's (--min-rate, when
    // given too, sets it).
    if a.spec.heavy == Some(true) {
        spec.min_rate = None;
    }
    spec.overlay(&a.spec);
    etcd::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        flags::blame_spec::<EtcdSpec>(e, &a.spec.given(), file, "etcd").into()
    })
}

/// Runs `storlab etcd`.
pub(super) fn run_etcd(a: EtcdArgs) -> Result<i32> {
    let cfg = build_etcd(&a)?;
    let invocation = Invocation {
        source: etcd_workload::source(a.job.as_deref(), a.preset.as_deref()),
        flags: a.spec.given_flags(),
    };
    super::run_workload(&Etcd { cfg }, &a.out, invocation)
}

/// The `[wal_sync]` keys the flags give (`--no-baseline` is `no_sync = false`).
fn wal_sync_flags(a: &WalSyncArgs) -> WalSyncSpec {
    let mut given = a.spec.clone();
    if a.no_baseline {
        given.no_sync = Some(false);
    }
    given
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
    let given = wal_sync_flags(a);
    spec.overlay(&given);
    walsync::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        flags::blame_spec::<WalSyncSpec>(e, &given.given(), file, "wal_sync").into()
    })
}

/// Runs `storlab wal-sync`.
pub(super) fn run_wal_sync(a: WalSyncArgs) -> Result<i32> {
    let cfg = build_wal_sync(&a)?;
    let mut flags = a.spec.given_flags();
    if a.no_baseline {
        flags.push("--no-baseline".into());
    }
    let invocation = Invocation {
        source: walsync_workload::source(a.job.as_deref(), None),
        flags,
    };
    super::run_workload(&WalSync { cfg }, &a.out, invocation)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{job_flags, key_flags};
    use super::*;

    /// The long flags of subcommand `name` that change its job (not where output goes).
    fn clap_flags(name: &str) -> Vec<String> {
        job_flags(name, &["--preset"])
    }

    #[test]
    fn every_key_of_a_check_is_a_flag_and_every_flag_a_key() {
        assert_eq!(key_flags::<EtcdSpec>(EtcdSpec::KEYS), clap_flags("etcd"));
        let mut wal = key_flags::<WalSyncSpec>(WalSyncSpec::KEYS);
        wal.push("--no-baseline".into());
        wal.sort();
        assert_eq!(wal, clap_flags("wal-sync"));
        for f in etcd::ROOM.flags.iter().chain(walsync::ROOM.flags) {
            assert!(crate::workloads::OVERRIDE_FLAGS.contains(f), "{f}");
        }
    }

    #[test]
    fn flags_override_the_preset_and_are_blamed_for_their_errors() {
        let a = EtcdArgs {
            preset: Some("etcd-openshift".into()),
            spec: EtcdSpec {
                heavy: Some(true),
                ..Default::default()
            },
            ..EtcdArgs::default()
        };
        let c = build_etcd(&a).unwrap();
        assert_eq!((c.write_bytes, c.min_rate), (8000, 500.0));
        let a = EtcdArgs {
            spec: EtcdSpec {
                write_size: Some(crate::units::Size(0)),
                ..Default::default()
            },
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
            spec: WalSyncSpec {
                methods: Some(vec!["fsync".into(), "nosuch".into()]),
                ..Default::default()
            },
            ..WalSyncArgs::default()
        };
        let e = build_wal_sync(&a).unwrap_err().to_string();
        assert!(e.starts_with("command line: `--methods`"), "{e}");
        // --no-baseline is `no_sync = false`, over the file's.
        let a = WalSyncArgs {
            no_baseline: true,
            ..WalSyncArgs::default()
        };
        let points = build_wal_sync(&a).unwrap().points;
        assert!(!points.is_empty());
        assert!(!points.iter().any(|p| p.method == walsync::Method::NoSync));
        let all = build_wal_sync(&WalSyncArgs::default()).unwrap().points;
        assert!(all.iter().any(|p| p.method == walsync::Method::NoSync));
    }
}
