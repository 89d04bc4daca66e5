//! `storlab users`: simulated mailbox users (LoadGen-class). Flags override the job file's
//! `[users]` section; with no argument at all, a scaled-down demo on a scratch directory.

use super::OutputArgs;
use crate::job;
use crate::results::Invocation;
use crate::units::{Dur, Size};
use crate::workloads::users::config::{self, UsersConfig, UsersFile, UsersSpec, demo};
use crate::workloads::users::workload;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

/// Flags of `storlab users`: the job file, the `[users]` section's own keys (`UsersSpec` is
/// both), each over the file's value, and the output.
#[derive(Debug, Args, Default)]
pub struct UsersArgs {
    /// Job file with a `[users]` section.
    pub job: Option<PathBuf>,
    /// The section's keys.
    #[command(flatten)]
    pub(crate) spec: UsersSpec,
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
    let given = a.spec.given_flags();
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
    spec.overlay(&a.spec);
    config::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        crate::workloads::blame_spec::<UsersSpec>(e, &a.spec.given(), file, "users").into()
    })
}

/// Runs `storlab users`.
pub(super) fn run_users(a: UsersArgs) -> Result<i32> {
    let cfg = build_users(&a)?;
    let invocation = Invocation {
        source: workload::source(a.job.as_deref()),
        flags: a.spec.given_flags(),
    };
    let users = workload::Users {
        cfg,
        progress: Arc::default(),
    };
    super::run_workload(&users, &a.out, invocation)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{job_flags, key_flags};
    use super::*;
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
    }

    #[test]
    fn a_flag_is_over_the_file_and_a_switch_takes_false() {
        use clap::Parser as _;
        let cli = super::super::Cli::try_parse_from([
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
        let super::super::Command::Users(a) = cli.command else {
            panic!("not users")
        };
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
}
