//! `storlab fs`, a subcommand of the room's own ([`crate::workloads::Subcommand`]): a
//! file-system workload. Its flags are the `[fs]` section's own keys ([`FsSpec`] is both), each
//! over the job file's value; with no argument at all, a quick run on ./storlab-scratch/fs. It
//! runs over many hosts too (`crate::workloads::OverHosts`).

use super::config::{self, FsConfig};
use super::spec::{FsFile, FsSpec};
use super::workload::{self as fs_workload, Fs};
use crate::job::{self, JobError};
use crate::results::Invocation;
use crate::workloads::{Loaded, Subcommand};
use anyhow::Result;
use clap::{Args, FromArgMatches};
use std::path::{Path, PathBuf};

/// Flags of `storlab fs` (the output's aside).
#[derive(Debug, Args, Default)]
pub(crate) struct FsArgs {
    /// Job file with an `[fs]` section.
    pub job: Option<PathBuf>,
    /// The section's keys.
    #[command(flatten)]
    pub spec: FsSpec,
}

/// `storlab fs`.
pub(crate) const SUBCOMMAND: Subcommand = Subcommand {
    name: "fs",
    about: "Run a file-system workload (vdbench's fsd/fwd, IO500's mdtest): a tree of directories and files under an anchor, made once, and operations on it (read, write, create, delete, getattr…) reported one by one; with no arguments, a 30 s mix on ./storlab-scratch/fs",
    args: <FsArgs as Args>::augment_args,
    load,
};

/// `storlab fs` over many hosts: every rank runs the workload (each its own tree, or one tree
/// shared: mdtest's tasks, or `shared = true`), each run starting on every rank at once.
#[cfg(feature = "mpi")]
pub(crate) const OVER_HOSTS: crate::workloads::OverHosts = crate::workloads::OverHosts {
    section: "fs",
    text: |m| section_text(&FsArgs::from_arg_matches(m)?),
    invocation: |m| Ok(invocation(&FsArgs::from_arg_matches(m)?)),
    for_rank: fs_workload::for_rank,
};

fn load(m: &clap::ArgMatches) -> Result<Loaded> {
    let a = FsArgs::from_arg_matches(m)?;
    let cfg = build(&a)?;
    Ok((Box::new(Fs { cfg }), invocation(&a)))
}

/// Where the workload came from and the flags given, as the results record them.
fn invocation(a: &FsArgs) -> Invocation {
    Invocation {
        source: fs_workload::source(a.job.as_deref()),
        flags: given(a),
    }
}

/// The flags given, as they were written (`--xfersize`).
fn given(a: &FsArgs) -> Vec<String> {
    let mut keys = a.spec.given_flags();
    if let Some(m) = &a.spec.mdtest {
        for (on, name) in [
            (m.items.is_some(), "items"),
            (m.io500.is_some(), "io500"),
            (m.unique_dir.is_some(), "unique-dir"),
            (m.write_bytes.is_some(), "write-bytes"),
            (m.read_bytes.is_some(), "read-bytes"),
            (m.phases.is_some(), "phases"),
            (m.shift.is_some(), "shift"),
            (m.iterations.is_some(), "iterations"),
        ] {
            if on {
                keys.push(format!("--mdtest-{name}"));
            }
        }
    }
    keys
}

/// Points an error at the flag that set its key (`--mdtest-items` for `mdtest.items`), or at
/// the key's line in the job file.
fn blame(e: JobError, a: &FsArgs, file: Option<(&Path, &str)>) -> JobError {
    let key = e.key.strip_prefix("fs.").unwrap_or(&e.key).to_string();
    let by_flag = match key.strip_prefix("mdtest.") {
        Some(k) => {
            let f = format!("--mdtest-{}", k.replace('_', "-"));
            given(a).contains(&f).then_some(f)
        }
        None => (a.spec.given().contains(&key.as_str()))
            .then(|| crate::workloads::flag_of::<FsSpec>(&key))
            .flatten(),
    };
    crate::workloads::blame_key(e, file, "fs", |_| by_flag.clone())
}

/// The `[fs]` section as the job file and the flags give it (what the ranks of a run over many
/// hosts share, checked first on the host that reads the file), its `[data]` folded in the job
/// file's only.
#[cfg(feature = "mpi")]
fn section_text(a: &FsArgs) -> Result<String> {
    build(a)?;
    let file = crate::workloads::section_file(a.job.as_deref(), None, "fs", "file-system")?;
    let mut spec = match &file {
        Some((path, text)) => {
            let parsed: FsFile = job::file::parse_toml(path, text)?;
            if parsed.data.is_some() {
                return Err(crate::Usage(format!(
                    "{}: [data]: a run over many hosts shares the [fs] section alone; leave [data] out",
                    path.display()
                ))
                .into());
            }
            parsed.fs
        }
        None => FsSpec::default(),
    };
    spec.overlay(&a.spec);
    let mut table = toml::Table::new();
    table.insert("fs".into(), toml::Value::try_from(&spec)?);
    Ok(toml::to_string(&table)?)
}

/// Builds the workload from the job file and the flags.
pub(crate) fn build(a: &FsArgs) -> Result<FsConfig> {
    let file = crate::workloads::section_file(a.job.as_deref(), None, "fs", "file-system")?;
    let (mut spec, data, location) = match &file {
        Some((path, text)) => {
            let parsed: FsFile = job::file::parse_toml(path, text)?;
            let data = job::data::resolve_in(parsed.data.as_ref(), path, Some(text))?;
            (parsed.fs, data, path.display().to_string())
        }
        None => (
            FsSpec::default(),
            Default::default(),
            "command line".to_string(),
        ),
    };
    spec.overlay(&a.spec);
    config::resolve(&spec, &location, data).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        blame(e, a, file).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::{job_flags, key_flags};
    use crate::workloads::fs::spec::MdtestSpec;

    #[test]
    fn every_key_of_the_section_is_a_flag_and_only_those() {
        let mut flags = job_flags("fs", &[]);
        flags.retain(|f| !f.starts_with("--mdtest-"));
        assert_eq!(flags, key_flags::<FsSpec>(FsSpec::KEYS));
        for f in super::super::ROOM.flags {
            assert!(crate::workloads::OVERRIDE_FLAGS.contains(f), "{f}");
        }
    }

    #[test]
    fn flags_override_the_file_and_are_blamed_for_their_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fs.toml");
        std::fs::write(&path, "[fs]\ndepth = 2\nthreads = 2\n").unwrap();
        let a = FsArgs {
            job: Some(path.clone()),
            spec: FsSpec {
                threads: Some(3),
                ..FsSpec::default()
            },
        };
        let c = build(&a).unwrap();
        assert_eq!((c.shape.depth, c.passes[0].workloads[0].threads), (2, 3));
        assert_eq!(given(&a), vec!["--threads"]);
        let a = FsArgs {
            spec: FsSpec {
                xfersize: Some("0".into()),
                ..FsSpec::default()
            },
            ..FsArgs::default()
        };
        let e = build(&a).unwrap_err().to_string();
        assert!(e.starts_with("command line: `--xfersize`"), "{e}");
        std::fs::write(&path, "[fs]\ndepth = 2\n\nfileio = \"sideways\"\n").unwrap();
        let a = FsArgs {
            job: Some(path.clone()),
            ..FsArgs::default()
        };
        let e = build(&a).unwrap_err().to_string();
        assert!(e.contains("fs.toml:4"), "{e}");
        let a = FsArgs {
            spec: FsSpec {
                mdtest: Some(MdtestSpec {
                    items: Some(0),
                    ..MdtestSpec::default()
                }),
                ..FsSpec::default()
            },
            ..FsArgs::default()
        };
        let e = build(&a).unwrap_err().to_string();
        assert!(e.starts_with("command line: `--mdtest-items`"), "{e}");
    }
}
