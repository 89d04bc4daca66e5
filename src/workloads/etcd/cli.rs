//! `storlab etcd`, a subcommand of the room's own ([`crate::workloads::Subcommand`]): the job
//! file or preset, the `[etcd]` section's keys as flags (`EtcdSpec` is both), each over the
//! file's value; with no argument at all, a quick check on a scratch directory under the
//! current directory. The command line adds the output flags and runs it as any workload.

use super::workload::{self as etcd_workload, Etcd};
use super::{EtcdConfig, EtcdFile, EtcdSpec};
use crate::results::Invocation;
use crate::workloads::{Loaded, Subcommand};
use anyhow::Result;
use clap::{Args, FromArgMatches};
use std::path::PathBuf;

/// Flags of `storlab etcd` (the output's aside).
#[derive(Debug, Args, Default)]
pub(crate) struct EtcdArgs {
    /// Job file with an `[etcd]` section.
    pub job: Option<PathBuf>,
    /// Run a built-in etcd preset: etcd (2300-byte writes, the fio check) or etcd-openshift
    /// (8000-byte writes); flags override its values.
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub preset: Option<String>,
    /// The section's keys.
    #[command(flatten)]
    pub spec: EtcdSpec,
}

/// `storlab etcd`.
pub(crate) const SUBCOMMAND: Subcommand = Subcommand {
    name: "etcd",
    about: "Check storage for etcd: log writes each followed by fdatasync, judged on the sync's p99 and rate; with no arguments, at most a minute on ./storlab-scratch/etcd",
    args: <EtcdArgs as Args>::augment_args,
    load,
};

fn load(m: &clap::ArgMatches) -> Result<Loaded> {
    let a = EtcdArgs::from_arg_matches(m)?;
    let cfg = build(&a)?;
    let invocation = Invocation {
        source: etcd_workload::source(a.job.as_deref(), a.preset.as_deref()),
        flags: a.spec.given_flags(),
    };
    Ok((Box::new(Etcd { cfg }), invocation))
}

/// Builds the etcd check from the job file (or preset) and the flags.
pub(crate) fn build(a: &EtcdArgs) -> Result<EtcdConfig> {
    let file =
        crate::workloads::section_file(a.job.as_deref(), a.preset.as_deref(), "etcd", "etcd")?;
    let (mut spec, location) = match &file {
        Some((path, text)) => {
            let parsed: EtcdFile = crate::job::file::parse_toml(path, text)?;
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
    super::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        crate::workloads::blame_spec::<EtcdSpec>(e, &a.spec.given(), file, "etcd").into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::{job_flags, key_flags};

    #[test]
    fn every_key_of_the_check_is_a_flag_and_every_flag_a_key() {
        assert_eq!(
            key_flags::<EtcdSpec>(EtcdSpec::KEYS),
            job_flags("etcd", &["--preset"])
        );
        for f in super::super::ROOM.flags {
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
        let c = build(&a).unwrap();
        assert_eq!((c.write_bytes, c.min_rate), (8000, 500.0));
        let a = EtcdArgs {
            spec: EtcdSpec {
                write_size: Some(crate::units::Size(0)),
                ..Default::default()
            },
            ..EtcdArgs::default()
        };
        let e = build(&a).unwrap_err().to_string();
        assert!(e.starts_with("command line: `--write-size`"), "{e}");
        let a = EtcdArgs {
            preset: Some("oltp-8k".into()),
            ..EtcdArgs::default()
        };
        let e = build(&a).unwrap_err().to_string();
        assert!(e.contains("etcd presets: etcd, etcd-openshift"), "{e}");
    }
}
