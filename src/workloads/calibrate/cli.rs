//! `storlab calibrate`, a subcommand of the room's own ([`crate::workloads::Subcommand`]): the ORION-class database storage calibration. Flags override the job
//! file's (or preset's) `[calibrate]` section; with no argument at all, a quick `simple`-level
//! calibration on a scratch file under ./storlab-scratch/calibrate.

use super::workload::{self, Calibrate};
use super::{CalibrateConfig, CalibrateFile, CalibrateSpec};
use crate::results::Invocation;
use crate::workloads::calibrate;
use crate::workloads::{Loaded, Subcommand};
use anyhow::Result;
use clap::{Args, FromArgMatches};
use std::path::PathBuf;

/// Flags of `storlab calibrate`: the job file or preset, the `[calibrate]` section's own keys
/// (`CalibrateSpec` is both), each over the file's value (the output's aside).
#[derive(Debug, Args, Default)]
pub(crate) struct CalibrateArgs {
    /// Job file with a `[calibrate]` section.
    pub job: Option<PathBuf>,
    /// Run a built-in calibration preset (orion-oltp, orion-dss, orion-simple,
    /// orion-normal); flags override its values.
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub preset: Option<String>,
    /// The section's keys.
    #[command(flatten)]
    pub spec: CalibrateSpec,
}

/// Builds the calibration from the job file's (or preset's) `[calibrate]` section and the
/// flags.
pub(crate) fn build_calibrate(a: &CalibrateArgs) -> Result<CalibrateConfig> {
    let file = crate::workloads::section_file(
        a.job.as_deref(),
        a.preset.as_deref(),
        "calibrate",
        "calibration",
    )?;
    let (mut spec, location) = match &file {
        Some((path, text)) => {
            let parsed: CalibrateFile = crate::job::file::parse_toml(path, text)?;
            (parsed.calibrate, path.display().to_string())
        }
        None if a.spec.given().is_empty() => (calibrate::quick_spec(), "command line".to_string()),
        None => (CalibrateSpec::default(), "command line".to_string()),
    };
    spec.overlay(&a.spec);
    calibrate::resolve(&spec, &location).map_err(|e| {
        let file = file.as_ref().map(|(p, t)| (p.as_path(), t.as_str()));
        crate::workloads::blame_spec::<CalibrateSpec>(e, &a.spec.given(), file, "calibrate").into()
    })
}

/// `storlab calibrate`.
pub(crate) const SUBCOMMAND: Subcommand = Subcommand {
    name: "calibrate",
    about: "Calibrate storage for a database (ORION-class): small random I/O and large I/O at a matrix of loads, with the maximum IOPS, MB/s and the lowest latency; with no arguments, a quick run (about a minute) on ./storlab-scratch/calibrate",
    args: <CalibrateArgs as Args>::augment_args,
    load,
};

fn load(m: &clap::ArgMatches) -> Result<Loaded> {
    let a = CalibrateArgs::from_arg_matches(m)?;
    let cfg = build_calibrate(&a)?;
    let invocation = Invocation {
        source: workload::source(a.job.as_deref(), a.preset.as_deref()),
        flags: a.spec.given_flags(),
    };
    Ok((Box::new(Calibrate { cfg }), invocation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::job_flags;
    use crate::job::JobError;

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
        let m = crate::cli::command().get_matches_from(argv);
        CalibrateArgs::from_arg_matches(m.subcommand_matches("calibrate").unwrap()).unwrap()
    }

    #[test]
    fn every_flag_is_given_and_applied_over_the_file() {
        // Every clap flag that changes the calibration is in `given` (so in the results'
        // invocation and in the blame of an error).
        let clap = job_flags("calibrate", &["--preset"]);
        let a = args(EVERY);
        let mut given = a.spec.given_flags();
        given.sort();
        assert_eq!(given, clap);
        // And each sets its key: the section resolves to what the flags say.
        let mut spec = CalibrateSpec::default();
        spec.overlay(&a.spec);
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
