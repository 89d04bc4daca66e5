//! `storlab calibrate`: the ORION-class database storage calibration. Flags override the job
//! file's (or preset's) `[calibrate]` section; with no argument at all, a quick `simple`-level
//! calibration on a scratch file under ./storlab-scratch/calibrate.

use super::OutputArgs;
use crate::job::{self, JobError};
use crate::results::Invocation;
use crate::units::{Dur, Percent, Size};
use crate::workloads::calibrate::workload::{self, Calibrate};
use crate::workloads::calibrate::{self, CalibrateConfig, CalibrateFile, CalibrateSpec};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Flags of `storlab calibrate`; each overrides the job file's `[calibrate]` value of the
/// same name (`--small-limit` sets `small_limit`).
#[derive(Debug, Args, Default)]
pub struct CalibrateArgs {
    /// Job file with a `[calibrate]` section.
    pub job: Option<PathBuf>,
    /// Run a built-in calibration preset (orion-oltp, orion-dss, orion-simple,
    /// orion-normal); flags override its values.
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub preset: Option<String>,
    /// Run level, by ORION's names: oltp (small I/O alone, rising), dss (large I/O alone,
    /// rising), simple (each alone), normal (every combination), advanced (set by hand).
    #[arg(long, value_name = "LEVEL")]
    pub level: Option<String>,
    /// A file or block device to calibrate (repeatable; default: a scratch file).
    #[arg(long = "target", value_name = "PATH")]
    pub targets: Vec<PathBuf>,
    /// Size of each file target, e.g. 4GiB (default for the scratch file: 1 GiB).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<Size>,
    /// Disks or LUNs behind the targets: the loads go up to 5 small and 2 large per disk
    /// (default: one per target).
    #[arg(long, value_name = "N")]
    pub disks: Option<u32>,
    /// Small I/O size, the database block size (advanced; default 8 KiB).
    #[arg(long, value_name = "SIZE")]
    pub small_size: Option<Size>,
    /// Large I/O size (advanced; default 1 MiB).
    #[arg(long, value_name = "SIZE")]
    pub large_size: Option<Size>,
    /// Large I/O: random, or sequential streams (advanced; default random).
    #[arg(long, value_name = "TYPE")]
    pub large_type: Option<String>,
    /// Points (advanced): basic, detailed, point, row or col.
    #[arg(long, value_name = "SHAPE")]
    pub matrix: Option<String>,
    /// Outstanding small I/Os at most (advanced).
    #[arg(long, value_name = "N")]
    pub small_limit: Option<u32>,
    /// Outstanding large I/Os, or streams, at most (advanced).
    #[arg(long, value_name = "N")]
    pub large_limit: Option<u32>,
    /// Share of writes, e.g. 30% (advanced; refused on targets that may hold data unless
    /// --destroy-data).
    #[arg(long, value_name = "PCT")]
    pub write: Option<Percent>,
    /// Measured time of each point, e.g. 60s (ORION's; no arguments: 5 s).
    #[arg(long, value_name = "TIME")]
    pub duration: Option<Dur>,
    /// Unmeasured time at each point's load before it is measured, e.g. 1s.
    #[arg(long, value_name = "TIME")]
    pub warm_up: Option<Dur>,
    /// Mean small-I/O latency limit, e.g. 20ms (CALIBRATE_IO's default).
    #[arg(long, value_name = "TIME")]
    pub latency_limit: Option<Dur>,
    /// Engine: io_uring, psync or null.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Time-series interval.
    #[arg(long, value_name = "TIME")]
    pub interval: Option<Dur>,
    /// Allow writing to targets that may hold data.
    #[arg(long)]
    pub destroy_data: bool,
    /// Verify data written and read.
    #[arg(long)]
    pub verify: bool,
    /// Record a sample of the blocks touched, for `storlab cache-curve`.
    #[arg(long)]
    pub sample_blocks: bool,
    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,
}

fn set<T: Clone>(key: &mut Option<T>, flag: &Option<T>) {
    if flag.is_some() {
        key.clone_from(flag);
    }
}

/// The flags given (as written), for the results' invocation.
fn given(a: &CalibrateArgs) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |flag: &str, on: bool| {
        if on {
            out.push(flag.to_string());
        }
    };
    add("--level", a.level.is_some());
    add("--target", !a.targets.is_empty());
    add("--size", a.size.is_some());
    add("--disks", a.disks.is_some());
    add("--small-size", a.small_size.is_some());
    add("--large-size", a.large_size.is_some());
    add("--large-type", a.large_type.is_some());
    add("--matrix", a.matrix.is_some());
    add("--small-limit", a.small_limit.is_some());
    add("--large-limit", a.large_limit.is_some());
    add("--write", a.write.is_some());
    add("--duration", a.duration.is_some());
    add("--warm-up", a.warm_up.is_some());
    add("--latency-limit", a.latency_limit.is_some());
    add("--engine", a.engine.is_some());
    add("--seed", a.seed.is_some());
    add("--interval", a.interval.is_some());
    add("--destroy-data", a.destroy_data);
    add("--verify", a.verify);
    add("--sample-blocks", a.sample_blocks);
    out
}

/// Sets the section's keys from the flags given.
fn apply(s: &mut CalibrateSpec, a: &CalibrateArgs) {
    set(&mut s.level, &a.level);
    if !a.targets.is_empty() {
        s.targets = Some(a.targets.clone());
    }
    set(&mut s.size, &a.size);
    set(&mut s.disks, &a.disks);
    set(&mut s.small_size, &a.small_size);
    set(&mut s.large_size, &a.large_size);
    set(&mut s.large_type, &a.large_type);
    set(&mut s.matrix, &a.matrix);
    set(&mut s.small_limit, &a.small_limit);
    set(&mut s.large_limit, &a.large_limit);
    set(&mut s.write, &a.write);
    set(&mut s.duration, &a.duration);
    set(&mut s.warm_up, &a.warm_up);
    set(&mut s.latency_limit, &a.latency_limit);
    set(&mut s.engine, &a.engine);
    set(&mut s.seed, &a.seed);
    set(&mut s.interval, &a.interval);
    for (key, on) in [
        (&mut s.destroy_data, a.destroy_data),
        (&mut s.verify, a.verify),
        (&mut s.sample_blocks, a.sample_blocks),
    ] {
        if on {
            *key = Some(true);
        }
    }
}

/// The flag that sets `key` (`calibrate.small_limit` → `--small-limit`), when it was given.
fn flag_of(e: &JobError, a: &CalibrateArgs) -> Option<String> {
    let key = e.key.strip_prefix("calibrate.")?;
    let flag = format!("--{}", key.replace('_', "-"));
    given(a).contains(&flag).then_some(flag)
}

/// Builds the calibration from the job file's (or preset's) `[calibrate]` section and the
/// flags.
pub fn build_calibrate(a: &CalibrateArgs) -> Result<CalibrateConfig> {
    let file = super::section_file(
        a.job.as_deref(),
        a.preset.as_deref(),
        "calibrate",
        "calibration",
    )?;
    let (mut spec, location) = match &file {
        Some((path, text)) => {
            let parsed: CalibrateFile = job::file::parse_toml(path, text)?;
            (parsed.calibrate, path.display().to_string())
        }
        None if given(a).is_empty() => (calibrate::quick_spec(), "command line".to_string()),
        None => (CalibrateSpec::default(), "command line".to_string()),
    };
    apply(&mut spec, a);
    calibrate::resolve(&spec, &location).map_err(|mut e| {
        match flag_of(&e, a) {
            Some(flag) => {
                e.location = "command line".into();
                e.key = flag;
            }
            None => {
                if let Some((path, text)) = &file {
                    let key = e.key.trim_start_matches("calibrate.").to_string();
                    e.location = job::file::locate(path, text, Some("calibrate"), &key);
                }
            }
        }
        e.into()
    })
}

/// Runs `storlab calibrate`.
pub(super) fn run_calibrate(a: CalibrateArgs) -> Result<i32> {
    let cfg = build_calibrate(&a)?;
    let invocation = Invocation {
        source: workload::source(a.job.as_deref(), a.preset.as_deref()),
        flags: given(&a),
    };
    super::run_workload(&Calibrate { cfg }, &a.out, invocation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    /// Every flag of `storlab calibrate` but the output's and `--preset`, with a value.
    const EVERY: &[&str] = &[
        "--level=advanced",
        "--target=a.dat",
        "--size=16MiB",
        "--disks=2",
        "--small-size=4k",
        "--large-size=512k",
        "--large-type=sequential",
        "--matrix=row",
        "--small-limit=3",
        "--large-limit=2",
        "--write=10%",
        "--duration=2s",
        "--warm-up=0s",
        "--latency-limit=5ms",
        "--engine=null",
        "--seed=7",
        "--interval=500ms",
        "--destroy-data",
        "--verify",
        "--sample-blocks",
    ];

    fn args(extra: &[&str]) -> CalibrateArgs {
        let argv = ["storlab", "calibrate"].iter().chain(extra);
        match super::super::Cli::parse_from(argv).command {
            super::super::Command::Calibrate(a) => *a,
            _ => unreachable!("calibrate"),
        }
    }

    #[test]
    fn every_flag_is_given_and_applied_over_the_file() {
        // Every clap flag that changes the calibration is in `given` (so in the results'
        // invocation and in the blame of an error).
        let cli = super::super::Cli::command();
        let sub = cli.find_subcommand("calibrate").unwrap();
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
        let mut clap: Vec<String> = (sub.get_arguments())
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .filter(|f| !output.contains(&f.as_str()))
            .collect();
        clap.sort();
        let a = args(EVERY);
        let mut given = given(&a);
        given.sort();
        assert_eq!(given, clap);
        // And each sets its key: the section resolves to what the flags say.
        let mut spec = CalibrateSpec::default();
        apply(&mut spec, &a);
        let cfg = calibrate::resolve(&spec, "command line").unwrap();
        assert_eq!((cfg.small_bytes, cfg.large_bytes), (4096, 512 << 10));
        assert_eq!((cfg.small_limit, cfg.large_limit, cfg.disks), (3, 2, 2));
        assert_eq!(
            (cfg.write_pct, cfg.duration_ms, cfg.warm_up_ms),
            (10.0, 2000, 0)
        );
        assert_eq!(
            (cfg.latency_limit_ms, cfg.seed, cfg.interval_ms),
            (5.0, 7, 500)
        );
        assert!(cfg.destroy_data && cfg.verify && cfg.sample_blocks);
        assert_eq!(cfg.size_bytes, Some(16 << 20));
    }

    #[test]
    fn no_argument_is_the_quick_check_and_an_error_blames_its_flag() {
        let quick = build_calibrate(&args(&[])).unwrap();
        assert_eq!(quick.duration_ms, calibrate::QUICK_POINT_MS);
        assert!(quick.scratch);
        // A flag given: ORION's 60 s a point.
        let given = build_calibrate(&args(&["--level=oltp"])).unwrap();
        assert_eq!(given.duration_ms, 60_000);
        let e = build_calibrate(&args(&["--disks=0"])).unwrap_err();
        let e = e.downcast_ref::<JobError>().unwrap();
        assert_eq!(
            (e.location.as_str(), e.key.as_str()),
            ("command line", "--disks")
        );
        let e = build_calibrate(&args(&["--preset=oltp-8k"])).unwrap_err();
        assert!(e.to_string().contains("orion-oltp"), "{e}");
    }
}
