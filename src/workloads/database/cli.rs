//! `storlab database`, a subcommand of the room's own ([`crate::workloads::Subcommand`]): database storage validation with a verdict. Flags override the job
//! file's (or preset's) `[database]` section; with no argument at all, a quick check of about
//! a minute on a scratch directory.

use super::workload::{self, Database};
use super::{self as model, DatabaseConfig, DatabaseFile, DatabaseSpec};
use crate::results::Invocation;
use crate::workloads::{Loaded, Subcommand};
use anyhow::Result;
use clap::{Args, FromArgMatches};
use std::path::PathBuf;

/// Flags of `storlab database`: the job file or preset, the `[database]` section's own keys
/// (`DatabaseSpec` is both), each over the file's value (the output's aside).
#[derive(Debug, Args, Default)]
pub(crate) struct DatabaseArgs {
    /// Job file with a `[database]` section.
    pub job: Option<PathBuf>,
    /// Run a built-in database preset (see `storlab presets`); flags override its values.
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub preset: Option<String>,
    /// The section's keys.
    #[command(flatten)]
    pub spec: DatabaseSpec,
}

/// Builds the configuration from the job file's (or preset's) `[database]` section and the
/// flags.
pub(crate) fn build_database(a: &DatabaseArgs) -> Result<DatabaseConfig> {
    let file = crate::workloads::section_file(
        a.job.as_deref(),
        a.preset.as_deref(),
        "database",
        "database",
    )?;
    let (mut spec, location) = match &file {
        Some((path, text)) => {
            let parsed: DatabaseFile = crate::job::file::parse_toml(path, text)?;
            (parsed.database, path.display().to_string())
        }
        None => (DatabaseSpec::default(), "command line".to_string()),
    };
    // A rate given on the command line replaces the file's, of either kind.
    if a.spec.tps.is_some() || a.spec.iops.is_some() {
        (spec.tps, spec.iops) = (None, None);
    }
    spec.overlay(&a.spec);
    model::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        crate::workloads::blame_spec::<DatabaseSpec>(e, &a.spec.given(), file, "database").into()
    })
}

/// `storlab database`.
pub(crate) const SUBCOMMAND: Subcommand = Subcommand {
    name: "database",
    about: "Validate storage for a database (Oracle, SQL Server, PostgreSQL, MySQL): data-file I/O at a transaction rate, a durable log with group commit and checkpoints, judged on the engine's latency limits; with no arguments, a quick check (about a minute, plus writing 1 GiB the first time) on ./storlab-scratch/database",
    args: <DatabaseArgs as Args>::augment_args,
    load,
};

fn load(m: &clap::ArgMatches) -> Result<Loaded> {
    let a = DatabaseArgs::from_arg_matches(m)?;
    let cfg = build_database(&a)?;
    let invocation = Invocation {
        source: workload::source(a.job.as_deref(), a.preset.as_deref()),
        flags: a.spec.given_flags(),
    };
    Ok((Box::new(Database { cfg }), invocation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::{job_flags, key_flags};
    use crate::workloads;

    #[test]
    fn every_key_of_the_section_is_a_flag_and_every_flag_a_key() {
        let keys = key_flags::<DatabaseSpec>(DatabaseSpec::KEYS);
        assert_eq!(keys, job_flags("database", &["--preset"]));
        assert_eq!(
            workloads::flag_of::<DatabaseSpec>("data_paths").as_deref(),
            Some("--data-path")
        );
        // Every key of a `[database]` file (its schema's properties) is one of them.
        let schema = schemars::schema_for!(DatabaseSpec).to_value();
        let mut props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        props.sort();
        let mut all: Vec<&&str> = DatabaseSpec::KEYS.iter().collect();
        all.sort();
        assert_eq!(props.len(), all.len());
        assert!(props.iter().zip(&all).all(|(p, k)| p == *k));
        // The run flags a `[database]` job file takes are flags of `storlab database` too
        // (`--engine` of `storlab run` is the I/O engine: `--io-engine` here).
        for f in model::ROOM.flags {
            let own = if *f == "--engine" { "--io-engine" } else { f };
            assert!(keys.iter().any(|t| t == own), "{f}");
        }
    }

    #[test]
    fn flags_parse_into_the_section_and_a_rate_replaces_the_files() {
        let m = crate::cli::command()
            .try_get_matches_from([
                "storlab",
                "database",
                "--tps",
                "50",
                "--data-path",
                "/a",
                "--data-path",
                "/b",
                "--find-max",
                "--destroy-data=false",
            ])
            .unwrap();
        let a = DatabaseArgs::from_arg_matches(m.subcommand_matches("database").unwrap()).unwrap();
        assert_eq!(a.spec.tps, Some(50.0));
        assert_eq!(
            a.spec.data_paths,
            Some(vec![PathBuf::from("/a"), PathBuf::from("/b")])
        );
        assert_eq!(
            (a.spec.find_max, a.spec.destroy_data),
            (Some(true), Some(false))
        );
        assert_eq!(
            a.spec.given_flags(),
            ["--tps", "--data-path", "--find-max", "--destroy-data"]
        );
    }

    #[test]
    fn a_flag_is_blamed_for_the_bad_value_it_set() {
        let a = DatabaseArgs {
            spec: DatabaseSpec {
                tps: Some(-3.0),
                ..Default::default()
            },
            ..Default::default()
        };
        let e = build_database(&a).unwrap_err().to_string();
        assert!(e.contains("--tps") && e.contains("-3"), "{e}");
        let a = DatabaseArgs {
            spec: DatabaseSpec {
                engine: Some("db2".into()),
                ..Default::default()
            },
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
