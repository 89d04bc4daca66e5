//! `storlab exchange`, a subcommand of the room's own ([`crate::workloads::Subcommand`]): the
//! job file (or Jetstress's own JetstressConfig.xml) or preset, the `[exchange]` section's keys
//! as flags (`ExchangeSpec` is both), each over the file's value; with no argument at all, a
//! quick validation on a scratch directory under the current directory. It runs over many hosts
//! too (`crate::workloads::OverHosts`).

use super::workload::{self, Exchange};
use super::{ExchangeConfig, ExchangeFile, ExchangeSpec, jetstress};
use crate::report::console;
use crate::results::Invocation;
use crate::workloads::{Loaded, Subcommand};
use anyhow::Result;
use clap::{Args, FromArgMatches};
use std::path::PathBuf;

/// Flags of `storlab exchange` (the output's aside).
#[derive(Debug, Args, Default)]
pub(crate) struct ExchangeArgs {
    /// Job file with an `[exchange]` section, or Jetstress's own JetstressConfig.xml.
    pub job: Option<PathBuf>,
    /// Run a built-in Exchange preset (see `storlab presets`); flags override its values.
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub preset: Option<String>,
    /// The section's keys.
    #[command(flatten)]
    pub spec: ExchangeSpec,
}

/// `storlab exchange`.
pub(crate) const SUBCOMMAND: Subcommand = Subcommand {
    name: "exchange",
    about: "Validate storage for Exchange mailboxes (Jetstress-class): with no arguments, a quick validation (about 70 s, plus writing 2 GiB the first time) on ./storlab-scratch/exchange",
    args: <ExchangeArgs as Args>::augment_args,
    load,
};

/// `storlab exchange` over many hosts: each rank validates its own databases.
#[cfg(feature = "mpi")]
pub(crate) const OVER_HOSTS: crate::workloads::OverHosts = crate::workloads::OverHosts {
    section: "exchange",
    text: |m| section_text(&ExchangeArgs::from_arg_matches(m)?),
    invocation: |m| Ok(invocation(&ExchangeArgs::from_arg_matches(m)?)),
    for_rank: workload::for_rank,
};

fn load(m: &clap::ArgMatches) -> Result<Loaded> {
    let a = ExchangeArgs::from_arg_matches(m)?;
    let cfg = build(&a)?;
    Ok((Box::new(Exchange { cfg }), invocation(&a)))
}

/// Where the validation came from and the flags given, as the results record them.
fn invocation(a: &ExchangeArgs) -> Invocation {
    Invocation {
        source: workload::source(a.job.as_deref(), a.preset.as_deref()),
        flags: a.spec.given_flags(),
    }
}

/// The `[exchange]` section as the flags leave it, checked as a run checks it first (for a
/// clear error on the host that reads the file): the job file every rank reads.
#[cfg(feature = "mpi")]
fn section_text(a: &ExchangeArgs) -> Result<String> {
    build(a)?;
    let (spec, _, _) = spec_of(a)?;
    let mut table = toml::Table::new();
    table.insert("exchange".into(), toml::Value::try_from(&spec)?);
    Ok(toml::to_string(&table)?)
}

/// Builds the Exchange configuration from the job file's `[exchange]` section and the flags.
pub(crate) fn build(a: &ExchangeArgs) -> Result<ExchangeConfig> {
    let (spec, location, file) = spec_of(a)?;
    super::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        let given = a.spec.given();
        let blame =
            |file| crate::workloads::blame_spec::<ExchangeSpec>(e, &given, file, "exchange");
        match file.filter(|(_, t)| jetstress::is_config(t)) {
            // A Jetstress file's value: the error names its element and line.
            Some((path, text)) => jetstress::blame(blame(None), path, text).into(),
            None => blame(file).into(),
        }
    })
}

/// The job file's (or preset's) `[exchange]` section with the flags applied, where it came
/// from, and the file and its text.
type SpecFrom = (ExchangeSpec, String, Option<(PathBuf, String)>);

/// The `[exchange]` section as the job file (or preset) and the flags give it.
fn spec_of(a: &ExchangeArgs) -> Result<SpecFrom> {
    let file = crate::workloads::section_file(
        a.job.as_deref(),
        a.preset.as_deref(),
        "exchange",
        "Exchange",
    )?;
    let (mut spec, location) = match &file {
        Some((path, text)) if jetstress::is_config(text) => {
            // Jetstress's own file: its Windows paths go to the scratch directory unless
            // --db-path and --log-path place them.
            let c = jetstress::read(path, text, &[])?;
            let placed = a.spec.db_paths.is_some() && a.spec.log_paths.is_some();
            for n in c.notes.iter().filter(|n| !placed || !n.contains("--map")) {
                console::note(n);
            }
            (c.spec, path.display().to_string())
        }
        Some((path, text)) => {
            let parsed: ExchangeFile = crate::job::file::parse_toml(path, text)?;
            (parsed.exchange, path.display().to_string())
        }
        None => (ExchangeSpec::default(), "command line".to_string()),
    };
    // The IOPS per mailbox given, or the messages a day it comes from: one flag replaces the
    // file's other.
    if a.spec.iops_per_mailbox.is_some() {
        spec.messages_per_day = None;
    }
    if a.spec.messages_per_day.is_some() {
        spec.iops_per_mailbox = None;
    }
    spec.overlay(&a.spec);
    Ok((spec, location, file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::{job_flags, key_flags};

    #[test]
    fn every_key_of_the_validation_is_a_flag_and_every_flag_a_key() {
        assert_eq!(
            key_flags::<ExchangeSpec>(ExchangeSpec::KEYS),
            job_flags("exchange", &["--preset"])
        );
        for f in super::super::ROOM.flags {
            assert!(crate::workloads::OVERRIDE_FLAGS.contains(f), "{f}");
            assert!(
                ExchangeSpec::KEYS.contains(&&f[2..].replace('-', "_")[..]),
                "{f}"
            );
        }
    }

    #[test]
    fn flags_override_the_file_and_are_blamed_for_their_errors() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("x.toml");
        std::fs::write(
            &job,
            "[exchange]\nmailboxes = 100\nmessages_per_day = 150\nthroughput = \"50%\"\n",
        )
        .unwrap();
        let spec = |s: ExchangeSpec| ExchangeArgs {
            job: Some(job.clone()),
            spec: s,
            ..ExchangeArgs::default()
        };
        // --iops-per-mailbox replaces the file's messages a day.
        let (s, _, _) = spec_of(&spec(ExchangeSpec {
            iops_per_mailbox: Some(0.5),
            ..Default::default()
        }))
        .unwrap();
        assert_eq!((s.iops_per_mailbox, s.messages_per_day), (Some(0.5), None));
        // The file's throughput without a database capacity: its line is blamed.
        let e = build(&spec(ExchangeSpec::default()))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("{}:4", job.display())), "{e}");
        // A flag's bad value: the flag is.
        let e = build(&spec(ExchangeSpec {
            throughput: None,
            db_capacity: Some(crate::units::Percent(0.0)),
            ..Default::default()
        }))
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("command line: `--db-capacity`"), "{e}");
        let e = build(&ExchangeArgs {
            preset: Some("oltp-8k".into()),
            ..ExchangeArgs::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("Exchange presets: "), "{e}");
    }

    #[test]
    fn the_cache_mailboxes_preset_is_tr_3867s_setup() {
        let cfg = build(&ExchangeArgs {
            preset: Some("exchange-cache-mailboxes".into()),
            ..ExchangeArgs::default()
        })
        .unwrap();
        assert!(cfg.find_max_mailboxes && cfg.compare_cache);
        assert_eq!(cfg.mailbox_size_bytes, 2_000_000_000, "TR-3867: 2,000 MB");
        assert_eq!(cfg.iops_per_mailbox, 0.12, "TR-3867: without the cache");
        assert_eq!(cfg.threads, Some(6), "TR-3867: with the cache");
        assert!(!cfg.maintenance, "off: the cache tier cannot carry it");
        let (devices, tier) = cfg.cache.unwrap();
        assert_eq!(devices.len(), cfg.databases as usize);
        assert_eq!(tier.size, crate::job::cache::CacheSize::Pct(50.0));
    }
}
