//! `storlab wal-sync`, a subcommand of the room's own ([`crate::workloads::Subcommand`]): the
//! job file, the `[wal_sync]` section's keys as flags (`WalSyncSpec` is both), each over the
//! file's value; with no argument at all, about 40 s on a scratch directory under the current
//! directory. The command line adds the output flags and runs it as any workload.

use super::workload::{self as walsync_workload, WalSync};
use super::{WalSyncConfig, WalSyncFile, WalSyncSpec};
use crate::results::Invocation;
use crate::workloads::{Loaded, Subcommand};
use anyhow::Result;
use clap::{Args, FromArgMatches};
use std::path::PathBuf;

/// Flags of `storlab wal-sync` (the output's aside).
#[derive(Debug, Args, Default)]
pub(crate) struct WalSyncArgs {
    /// Job file with a `[wal_sync]` section.
    pub job: Option<PathBuf>,
    /// The section's keys.
    #[command(flatten)]
    pub spec: WalSyncSpec,
    /// Leave out the never-synced writes (`--no-sync=false`).
    #[arg(long, conflicts_with = "no_sync")]
    pub no_baseline: bool,
}

/// `storlab wal-sync`.
pub(crate) const SUBCOMMAND: Subcommand = Subcommand {
    name: "wal-sync",
    about: "Compare PostgreSQL's WAL sync methods (pg_test_fsync's question); with no arguments, about 40 s on ./storlab-scratch/wal-sync",
    args: <WalSyncArgs as Args>::augment_args,
    load,
};

fn load(m: &clap::ArgMatches) -> Result<Loaded> {
    let a = WalSyncArgs::from_arg_matches(m)?;
    let cfg = build(&a)?;
    let mut flags = a.spec.given_flags();
    if a.no_baseline {
        flags.push("--no-baseline".into());
    }
    let invocation = Invocation {
        source: walsync_workload::source(a.job.as_deref(), None),
        flags,
    };
    Ok((Box::new(WalSync { cfg }), invocation))
}

/// The `[wal_sync]` keys the flags give (`--no-baseline` is `no_sync = false`).
fn given(a: &WalSyncArgs) -> WalSyncSpec {
    let mut given = a.spec.clone();
    if a.no_baseline {
        given.no_sync = Some(false);
    }
    given
}

/// Builds the WAL sync comparison from the job file and the flags.
pub(crate) fn build(a: &WalSyncArgs) -> Result<WalSyncConfig> {
    let file = crate::workloads::section_file(a.job.as_deref(), None, "wal_sync", "WAL sync")?;
    let (mut spec, location) = match &file {
        Some((path, text)) => {
            let parsed: WalSyncFile = crate::job::file::parse_toml(path, text)?;
            (parsed.wal_sync, path.display().to_string())
        }
        None => (WalSyncSpec::default(), "command line".to_string()),
    };
    let given = given(a);
    spec.overlay(&given);
    super::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        crate::workloads::blame_spec::<WalSyncSpec>(e, &given.given(), file, "wal_sync").into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::{job_flags, key_flags};

    #[test]
    fn every_key_is_a_flag_and_every_flag_a_key() {
        let mut wal = key_flags::<WalSyncSpec>(WalSyncSpec::KEYS);
        wal.push("--no-baseline".into());
        wal.sort();
        assert_eq!(wal, job_flags("wal-sync", &["--preset"]));
        for f in super::super::ROOM.flags {
            assert!(crate::workloads::OVERRIDE_FLAGS.contains(f), "{f}");
        }
    }

    #[test]
    fn flags_are_blamed_for_their_errors_and_no_baseline_leaves_out_the_unsynced() {
        let a = WalSyncArgs {
            spec: WalSyncSpec {
                methods: Some(vec!["fsync".into(), "nosuch".into()]),
                ..Default::default()
            },
            ..WalSyncArgs::default()
        };
        let e = build(&a).unwrap_err().to_string();
        assert!(e.starts_with("command line: `--methods`"), "{e}");
        // --no-baseline is `no_sync = false`, over the file's.
        let a = WalSyncArgs {
            no_baseline: true,
            ..WalSyncArgs::default()
        };
        let points = build(&a).unwrap().points;
        assert!(!points.is_empty());
        assert!(
            !points
                .iter()
                .any(|p| p.method == super::super::Method::NoSync)
        );
        let all = build(&WalSyncArgs::default()).unwrap().points;
        assert!(all.iter().any(|p| p.method == super::super::Method::NoSync));
    }
}
