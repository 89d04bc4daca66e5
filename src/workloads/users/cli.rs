//! `storlab users`, a subcommand of the room's own ([`crate::workloads::Subcommand`]): simulated mailbox users (LoadGen-class). Flags override the job file's
//! `[users]` section; with no argument at all, a scaled-down demo on a scratch directory.

use super::config::{self, UsersConfig, UsersFile, UsersSpec, demo};
use super::workload;
use crate::results::Invocation;
use crate::units::{Dur, Size};
use crate::workloads::{Loaded, Subcommand};
use anyhow::Result;
use clap::{Args, FromArgMatches};
use std::path::PathBuf;
use std::sync::Arc;

/// Flags of `storlab users`: the job file, the `[users]` section's own keys (`UsersSpec` is
/// both), each over the file's value (the output's aside).
#[derive(Debug, Args, Default)]
pub(crate) struct UsersArgs {
    /// Job file with a `[users]` section.
    pub job: Option<PathBuf>,
    /// The section's keys.
    #[command(flatten)]
    pub spec: UsersSpec,
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
pub(crate) fn build_users(a: &UsersArgs) -> Result<UsersConfig> {
    let given = a.spec.given_flags();
    let (mut spec, location, file) = match &a.job {
        Some(path) => {
            let text = crate::job::file::read_text(path)?;
            let file: UsersFile = crate::job::file::parse_toml(path, &text)?;
            (file.users, path.display().to_string(), Some((path, text)))
        }
        // Flags that say how to run, not whom to simulate, keep the demo (shortened,
        // lengthened, on another engine…).
        None if given.iter().all(|f| KEEP_DEMO.contains(&f.as_str())) => {
            (demo_spec(), "demo".to_string(), None)
        }
        None => (UsersSpec::default(), "command line".to_string(), None),
    };
    spec.overlay(&a.spec);
    config::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        crate::workloads::blame_spec::<UsersSpec>(e, &a.spec.given(), file, "users").into()
    })
}

/// `storlab users`.
pub(crate) const SUBCOMMAND: Subcommand = Subcommand {
    name: "users",
    about: "Simulate mailbox users (LoadGen-class): users doing tasks on a mail store whose I/O goes to real storage, judged by per-task latency; with no arguments, a demo of about two minutes on ./storlab-scratch/users",
    args: <UsersArgs as Args>::augment_args,
    load,
};

fn load(m: &clap::ArgMatches) -> Result<Loaded> {
    let a = UsersArgs::from_arg_matches(m)?;
    let cfg = build_users(&a)?;
    let invocation = Invocation {
        source: workload::source(a.job.as_deref()),
        flags: a.spec.given_flags(),
    };
    let users = workload::Users {
        cfg,
        progress: Arc::default(),
    };
    Ok((Box::new(users), invocation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::{job_flags, key_flags};
    use crate::workloads::flag_of;

    #[test]
    fn every_key_of_the_section_is_a_flag_and_every_flag_a_key() {
        assert_eq!(
            key_flags::<UsersSpec>(UsersSpec::KEYS),
            job_flags("users", &[])
        );
        assert_eq!(
            flag_of::<UsersSpec>("db_paths").as_deref(),
            Some("--db-path")
        );
        // Every key of a `[users]` file (its schema's properties) is one of them, but the
        // tables of tasks and of their limits, which only a file gives.
        let schema = schemars::schema_for!(UsersSpec).to_value();
        let mut props: Vec<&str> = (schema["properties"].as_object().unwrap().keys())
            .map(String::as_str)
            .collect();
        props.sort();
        let mut all: Vec<&str> = [UsersSpec::KEYS, &["tasks", "task_p95"]].concat();
        all.sort();
        assert_eq!(props, all);
        for file_only in ["tasks", "task_p95"] {
            assert_eq!(flag_of::<UsersSpec>(file_only), None);
        }
        // The run flags a `[users]` job file takes are flags of `storlab users` too; the
        // timing is the simulated day's, not `storlab run`'s.
        let users = job_flags("users", &[]);
        for f in super::super::ROOM.flags {
            assert!(users.iter().any(|u| u == f), "{f}");
        }
        assert!(!super::super::ROOM.flags.contains(&"--duration"));
        assert!(!super::super::ROOM.flags.contains(&"--ramp"));
    }

    #[test]
    fn a_flag_is_over_the_file_and_a_switch_takes_false() {
        let m = crate::cli::command()
            .try_get_matches_from([
                "storlab",
                "users",
                "--users",
                "7",
                "--version",
                "2010",
                "--stress",
                "--verify=false",
            ])
            .expect("flags");
        let a = UsersArgs::from_arg_matches(m.subcommand_matches("users").unwrap()).unwrap();
        assert_eq!(a.spec.users, Some(7));
        assert_eq!(format!("{:?}", a.spec.version), r#"Some(Word("2010"))"#);
        assert_eq!((a.spec.stress, a.spec.verify), (Some(true), Some(false)));
        assert_eq!(
            a.spec.given_flags(),
            ["--users", "--version", "--stress", "--verify"]
        );
        let mut file: UsersSpec =
            toml::from_str("users = 3\nday = \"4h\"\ntasks = { \"Send Mail\" = 6.0 }")
                .expect("section");
        file.overlay(&a.spec);
        assert_eq!(file.users, Some(7));
        assert_eq!(file.day.map(|d| d.0.as_secs()), Some(4 * 3600));
        assert!(file.tasks.is_some());
    }

    /// `storlab users --duration 10m` runs the demo for ten simulated minutes, not a population
    /// of the defaults at real time; a flag that describes the population replaces the demo.
    #[test]
    fn a_timing_flag_keeps_the_users_demo() {
        let demo = build_users(&Default::default()).unwrap();
        let shorter = build_users(&UsersArgs {
            spec: crate::workloads::users::config::UsersSpec {
                duration: Some(crate::units::Dur(std::time::Duration::from_secs(600))),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            format!("{:?}", shorter.layout()),
            format!("{:?}", demo.layout())
        );
        let text = |c: &crate::workloads::users::config::UsersConfig| {
            let w = crate::workloads::users::workload::Users {
                cfg: c.clone(),
                progress: Default::default(),
            };
            crate::cli::describe_workload(&w).text
        };
        let (demo_text, shorter_text) = (text(&demo), text(&shorter));
        // The same population and compression, a shorter day.
        let first = |t: &str| t.lines().next().unwrap_or_default().to_string();
        assert_eq!(first(&demo_text), first(&shorter_text));
        assert_ne!(demo_text, shorter_text);
        let own = build_users(&UsersArgs {
            spec: crate::workloads::users::config::UsersSpec {
                users: Some(5000),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        assert_ne!(
            format!("{:?}", own.layout()),
            format!("{:?}", demo.layout())
        );
    }
}
