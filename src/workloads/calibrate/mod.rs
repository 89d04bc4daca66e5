//! The ORION-class database storage calibration (`storlab calibrate`, `[calibrate]`): small
//! random I/O (the database block size) and large I/O (random, or sequential streams) at a
//! matrix of load levels, outstanding small I/Os × outstanding large I/Os, each point one step
//! of an ordinary step sequence (`[cycle] group`: every point's workers are a worker group).
//! Its results section summarises the steps: the IOPS, MB/s and latency matrices, the maximum
//! small IOPS and large MB/s with the loads that gave them, the minimum small latency, and the
//! highest small-I/O load whose mean latency stays under a limit. A calibration, not a
//! verdict. Sources of every default are in docs/profiles.md.

pub(crate) mod cli;
pub(crate) mod points;
pub(crate) mod section;
pub(crate) mod view;
pub(crate) mod workload;

use crate::job::steps::{Cycle, Param, Sequence};
use crate::job::{Access, EngineKind, Job, JobError, SectionErrors, Target, TargetChoice, Worker};
use crate::results::steps::StepResult;
use crate::units::{Dur, Percent, Size};
use crate::workloads::Room;
use points::{Level, LoadPoint, Matrix};
use section::CalibrateResult;
pub(crate) use section::LargeType;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[calibrate]` job files.
pub(crate) const ROOM: Room = Room {
    section: "calibrate",
    what: "a calibration (its I/O comes from the run level and the load matrix)",
    hint: "storlab calibrate FILE (its own flags: --warm-up, --level, --target ...)",
    flags: &[
        "--duration",
        "--interval",
        "--engine",
        "--seed",
        "--destroy-data",
        "--verify",
        "--sample-blocks",
    ],
    load: workload::load,
    schema: schemars::SchemaGenerator::subschema_for::<CalibrateFile>,
    view: &view::CalibrateView,
    subcommand: Some(cli::SUBCOMMAND),
    foreign: None,
};

/// The database block size: small I/O (ORION's `size_small`, 8 KB).
pub(crate) const SMALL_BYTES: u64 = 8 << 10;
/// Large I/O (ORION's `size_large`, 1024 KB).
pub(crate) const LARGE_BYTES: u64 = 1 << 20;
/// Outstanding small I/Os at most, per disk (ORION: small loads up to 5 × `num_disks`).
pub(crate) const SMALL_PER_DISK: u32 = 5;
/// Outstanding large I/Os (or streams) at most, per disk (ORION: up to 2 × `num_disks`).
pub(crate) const LARGE_PER_DISK: u32 = 2;
/// Mean small-I/O latency limit, ms (Oracle's `DBMS_RESOURCE_MANAGER.CALIBRATE_IO`
/// `max_latency`, 20 ms by default).
pub(crate) const LATENCY_LIMIT_MS: f64 = 20.0;
/// Measured time of each point with no arguments (storlab's choice: a quick check; ORION's
/// own default is 60 s, which the `orion-*` presets use).
pub(crate) const QUICK_POINT_MS: u64 = 5_000;
/// Warm-up before each point, unmeasured (storlab's choice).
pub(crate) const WARM_UP_MS: u64 = 1_000;
/// Size of each scratch file (storlab's choice).
pub(crate) const SCRATCH_BYTES: u64 = 1 << 30;
/// Where the scratch files go.
pub(crate) const SCRATCH_DIR: &str = "storlab-scratch/calibrate";
/// Sequential streams sharing a target of unknown size start this far apart (storlab's
/// choice; with a size, they divide the target evenly).
pub(crate) const STREAM_SPACING_BYTES: u64 = 1 << 30;
/// Disks at most (a bound on the matrix).
pub(crate) const MAX_DISKS: u32 = 256;
/// Outstanding I/Os at most on either axis.
pub(crate) const MAX_LOAD: u32 = 1024;

/// A job file holding a `[calibrate]` section.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CalibrateFile {
    /// The section.
    pub calibrate: CalibrateSpec,
}

crate::workloads::spec! {
    /// The `[calibrate]` section as written, and the flags of `storlab calibrate` (each over
    /// the file's key of the same name: `--small-limit` sets `small_limit`).
    #[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema, clap::Args)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct CalibrateSpec {
        /// Run level, by ORION's names (`-run`): oltp (small I/O alone, rising), dss (large
        /// I/O alone, rising), simple (each alone), normal (every combination), advanced (set
        /// by hand).
        #[arg(long, value_name = "LEVEL")]
        level: Option<String>,
        /// Files or block devices to calibrate, ORION's LUNs (the flag is repeatable; none: a
        /// scratch file).
        #[arg(long = "target", value_name = "PATH")]
        targets: Option<Vec<PathBuf>>,
        /// Size of each file target, e.g. 4GiB (default for the scratch file: 1 GiB).
        #[arg(long, value_name = "SIZE")]
        size: Option<Size>,
        /// Disks or LUNs behind the targets (ORION's `num_disks`): the loads go up to 5 small
        /// and 2 large per disk (default: one per target).
        #[arg(long, value_name = "N")]
        disks: Option<u32>,
        /// Small I/O size, the database block size (advanced; default 8 KiB).
        #[arg(long, value_name = "SIZE")]
        small_size: Option<Size>,
        /// Large I/O size (advanced; default 1 MiB).
        #[arg(long, value_name = "SIZE")]
        large_size: Option<Size>,
        /// Large I/O: random, or sequential streams (advanced; ORION's `-type rand|seq`;
        /// default random).
        #[arg(long, value_name = "TYPE")]
        large_type: Option<String>,
        /// Points (advanced; ORION's `-matrix`): basic, detailed, point, row or col.
        #[arg(long, value_name = "SHAPE")]
        matrix: Option<String>,
        /// Outstanding small I/Os at most (advanced; ORION's `num_small`).
        #[arg(long, value_name = "N")]
        small_limit: Option<u32>,
        /// Outstanding large I/Os, or streams, at most (advanced; ORION's `num_large`).
        #[arg(long, value_name = "N")]
        large_limit: Option<u32>,
        /// Share of writes, e.g. 30% (advanced; ORION's `-write`; refused on targets that may
        /// hold data unless destroy_data).
        #[arg(long, value_name = "PCT")]
        write: Option<Percent>,
        /// Measured time of each point, e.g. 60s (ORION's; no arguments: 5 s).
        #[arg(long, value_name = "TIME")]
        duration: Option<Dur>,
        /// Unmeasured time at each point's load before it is measured, e.g. 1s.
        #[arg(long, value_name = "TIME")]
        warm_up: Option<Dur>,
        /// Mean small-I/O latency limit, e.g. 20ms (CALIBRATE_IO's default).
        #[arg(long, value_name = "TIME")]
        latency_limit: Option<Dur>,
        /// Engine: io_uring, psync or null.
        #[arg(long, value_name = "ENGINE")]
        engine: Option<String>,
        /// Seed.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Time-series interval.
        #[arg(long, value_name = "TIME")]
        interval: Option<Dur>,
        /// Allow writing to targets that may hold data.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        destroy_data: Option<bool>,
        /// Verify data written and read.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        verify: Option<bool>,
        /// Record a sample of the blocks touched, for `storlab cache-curve`.
        #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        sample_blocks: Option<bool>,
    }
}

/// A calibration, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CalibrateConfig {
    /// The run level.
    pub level: Level,
    /// The points' shape.
    pub matrix: Matrix,
    /// The targets.
    pub targets: Vec<PathBuf>,
    /// Whether the targets are storlab's scratch files.
    pub scratch: bool,
    /// Size of each file target, bytes (None: the device's or the file's).
    pub size_bytes: Option<u64>,
    /// Disks or LUNs.
    pub disks: u32,
    /// Whether `disks` was given (else: the number of targets).
    pub disks_given: bool,
    /// Small I/O, bytes.
    pub small_bytes: u64,
    /// Large I/O, bytes.
    pub large_bytes: u64,
    /// Large I/O's pattern.
    pub large_type: LargeType,
    /// Outstanding small I/Os at most.
    pub small_limit: u32,
    /// Outstanding large I/Os or streams at most.
    pub large_limit: u32,
    /// Share of writes, percent.
    pub write_pct: f64,
    /// Measured time per point, ms.
    pub duration_ms: u64,
    /// Warm-up per point, ms.
    pub warm_up_ms: u64,
    /// Mean small-I/O latency limit, ms.
    pub latency_limit_ms: f64,
    /// Engine.
    pub engine: EngineKind,
    /// Seed.
    pub seed: u64,
    /// Time-series interval, ms.
    pub interval_ms: u64,
    /// `destroy_data`.
    pub destroy_data: bool,
    /// `verify`.
    pub verify: bool,
    /// `sample_blocks`.
    pub sample_blocks: bool,
}

/// What `storlab calibrate` with no arguments runs: the `simple` level with short points.
pub(crate) fn quick_spec() -> CalibrateSpec {
    CalibrateSpec {
        duration: Some(Dur(std::time::Duration::from_millis(QUICK_POINT_MS))),
        ..CalibrateSpec::default()
    }
}

fn ms(d: Option<Dur>, default: u64) -> u64 {
    d.map_or(default, |d| d.0.as_millis() as u64)
}

/// Validates `spec` (no syscalls) into a calibration; errors name `location` and the key.
pub(crate) fn resolve(spec: &CalibrateSpec, location: &str) -> Result<CalibrateConfig, JobError> {
    let err = SectionErrors {
        location,
        section: "calibrate",
    };
    let level = match &spec.level {
        Some(l) => Level::parse(l).map_err(|m| err.error("level", m))?,
        None => Level::Simple,
    };
    let advanced = level == Level::Advanced;
    // Parameters only `advanced` takes (ORION's rule: the named levels fix them).
    for (key, given) in [
        ("matrix", spec.matrix.is_some()),
        ("small_limit", spec.small_limit.is_some()),
        ("large_limit", spec.large_limit.is_some()),
        ("write", spec.write.is_some()),
        ("large_type", spec.large_type.is_some()),
        ("small_size", spec.small_size.is_some()),
        ("large_size", spec.large_size.is_some()),
    ] {
        if given && !advanced {
            return Err(err.error(
                key,
                format!(
                    "{key} is set by the run level `{}`; use level = \"advanced\" (--level advanced) to set it by hand",
                    level.name()
                ),
            ));
        }
    }
    let (targets, scratch) = match &spec.targets {
        Some(t) if !t.is_empty() => (t.clone(), false),
        _ => (vec![PathBuf::from(SCRATCH_DIR).join("lun-0.dat")], true),
    };
    if targets.len() > MAX_DISKS as usize {
        return Err(err.error(
            "targets",
            format!("{} targets; give at most {MAX_DISKS}", targets.len()),
        ));
    }
    let disks = spec.disks.unwrap_or(targets.len() as u32);
    if disks == 0 || disks > MAX_DISKS {
        return Err(err.error("disks", format!("disks is {disks}; use 1 to {MAX_DISKS}")));
    }
    let size = |key: &str, v: Option<Size>, default: u64| -> Result<u64, JobError> {
        let b = v.map_or(default, |s| s.0);
        if b < 512 || b % 512 != 0 || b > 64 << 20 {
            return Err(err.error(
                key,
                format!("{key} is {b} bytes; use a multiple of 512 bytes up to 64 MiB"),
            ));
        }
        Ok(b)
    };
    let small_bytes = size("small_size", spec.small_size, SMALL_BYTES)?;
    let large_bytes = size("large_size", spec.large_size, LARGE_BYTES)?;
    let large_type = match spec.large_type.as_deref() {
        None | Some("random") | Some("rand") => LargeType::Random,
        Some("sequential") | Some("seq") => LargeType::Sequential,
        Some(o) => {
            return Err(err.error(
                "large_type",
                format!("unknown large_type `{o}`; use random or sequential"),
            ));
        }
    };
    let matrix = match &spec.matrix {
        Some(m) => Matrix::parse(m).map_err(|e| err.error("matrix", e))?,
        None => level.matrix(),
    };
    let limit = |key: &str, v: Option<u32>, per_disk: u32| -> Result<u32, JobError> {
        let l = v.unwrap_or(per_disk.saturating_mul(disks));
        if l == 0 || l > MAX_LOAD {
            return Err(err.error(key, format!("{key} is {l}; use 1 to {MAX_LOAD}")));
        }
        Ok(l)
    };
    let small_limit = limit("small_limit", spec.small_limit, SMALL_PER_DISK)?;
    let large_limit = limit("large_limit", spec.large_limit, LARGE_PER_DISK)?;
    let write_pct = spec.write.map_or(0.0, |p| p.0);
    if !(0.0..=100.0).contains(&write_pct) {
        return Err(err.error("write", format!("write is {write_pct}%; use 0 to 100%")));
    }
    let duration_ms = ms(spec.duration, points::ORION_POINT_MS);
    if !(100..=86_400_000).contains(&duration_ms) {
        return Err(err.error(
            "duration",
            "the duration of a point is under 0.1 s or over a day; use e.g. 5s or 60s".into(),
        ));
    }
    let warm_up_ms = ms(spec.warm_up, WARM_UP_MS);
    if warm_up_ms > 3_600_000 {
        return Err(err.error("warm_up", "warm_up is over an hour; use e.g. 1s".into()));
    }
    let latency_limit_ms = spec
        .latency_limit
        .map_or(LATENCY_LIMIT_MS, |d| d.0.as_secs_f64() * 1e3);
    if latency_limit_ms <= 0.0 {
        return Err(err.error(
            "latency_limit",
            "latency_limit is zero; use e.g. 20ms".into(),
        ));
    }
    let engine = match &spec.engine {
        Some(e) => EngineKind::parse(e).map_err(|m| err.error("engine", m))?,
        None => EngineKind::default(),
    };
    let interval_ms = ms(spec.interval, crate::job::defaults::INTERVAL_MS);
    if interval_ms < 100 {
        return Err(err.error("interval", "interval is under 0.1 s; use e.g. 1s".into()));
    }
    let cfg = CalibrateConfig {
        level,
        matrix,
        size_bytes: match spec.size {
            Some(s) => Some(s.0),
            None => scratch.then_some(SCRATCH_BYTES),
        },
        targets,
        scratch,
        disks,
        disks_given: spec.disks.is_some(),
        small_bytes,
        large_bytes,
        large_type,
        small_limit,
        large_limit,
        write_pct,
        duration_ms,
        warm_up_ms,
        latency_limit_ms,
        engine,
        seed: spec.seed.unwrap_or(crate::job::defaults::SEED),
        interval_ms,
        destroy_data: spec.destroy_data.unwrap_or(false),
        verify: spec.verify.unwrap_or(false),
        sample_blocks: spec.sample_blocks.unwrap_or(false),
    };
    let n = cfg.points().len() * (1 + cfg.large_limit as usize);
    if n > crate::job::MAX_WORKERS {
        return Err(err.error(
            "matrix",
            format!(
                "{} points need {n} workers; lower small_limit or large_limit",
                cfg.points().len()
            ),
        ));
    }
    Ok(cfg)
}

impl CalibrateConfig {
    /// The points, in the order they run.
    pub(crate) fn points(&self) -> Vec<LoadPoint> {
        points::points(self.matrix, self.small_limit, self.large_limit)
    }

    /// The section of a calibration whose steps are `steps`: what this calibration asked,
    /// and each point's figures.
    pub(crate) fn section(&self, steps: &[StepResult]) -> CalibrateResult {
        let asked = CalibrateResult {
            level: self.level.name().into(),
            matrix: self.matrix.name().into(),
            disks: self.disks,
            small_size_bytes: self.small_bytes,
            large_size_bytes: self.large_bytes,
            large_type: self.large_type,
            write_pct: self.write_pct,
            point_ms: self.duration_ms,
            warm_up_ms: self.warm_up_ms,
            latency_limit_ms: self.latency_limit_ms,
            points: Vec::new(),
            max_small_iops: None,
            max_large_mb_per_s: None,
            min_small_latency_ms: None,
            small_load_within_limit: None,
            notes: Vec::new(),
            csv_files: Vec::new(),
        };
        let loads = self.points();
        asked.with_points(
            steps
                .iter()
                .filter_map(|s| points::point_of(s, &loads))
                .collect(),
        )
    }

    /// The job: a worker group per point, cycled one group a step.
    pub(crate) fn job(&self) -> Job {
        let mut job = Job {
            description: Some(format!(
                "calibrate: ORION-class {} level, {} small and {} large I/O",
                self.level.name(),
                crate::units::format_size(self.small_bytes),
                crate::units::format_size(self.large_bytes)
            )),
            engine: self.engine,
            duration_ms: self.duration_ms,
            ramp_ms: self.warm_up_ms,
            interval_ms: self.interval_ms,
            seed: self.seed,
            destroy_data: self.destroy_data,
            verify: self.verify,
            sample_blocks: self.sample_blocks,
            targets: self
                .targets
                .iter()
                .enumerate()
                .map(|(i, p)| Target::file(format!("lun-{i}"), p.clone(), self.size_bytes))
                .collect(),
            ..Job::default()
        };
        let small = job.class(section::SMALL);
        let large = job.class(section::LARGE);
        let all: Vec<usize> = (0..self.targets.len()).collect();
        let read_pct = 100.0 - self.write_pct;
        let points = self.points();
        for (g, p) in points.iter().enumerate() {
            let group = Some(g as u32);
            if p.small > 0 {
                job.workers.push(Worker {
                    group,
                    target_choice: TargetChoice::Random,
                    ..Worker::closed_loop(
                        "small",
                        all.clone(),
                        p.small,
                        vec![Access::new(small, self.small_bytes, read_pct, 100.0)],
                    )
                });
            }
            if p.large == 0 {
                continue;
            }
            match self.large_type {
                LargeType::Random => job.workers.push(Worker {
                    group,
                    target_choice: TargetChoice::Random,
                    ..Worker::closed_loop(
                        "large",
                        all.clone(),
                        p.large,
                        vec![Access::new(large, self.large_bytes, read_pct, 100.0)],
                    )
                }),
                LargeType::Sequential => {
                    let n = self.targets.len() as u32;
                    for s in 0..p.large {
                        let (target, nth) = ((s % n) as usize, u64::from(s / n));
                        let sharing = u64::from(p.large.div_ceil(n));
                        let spacing = match self.size_bytes {
                            Some(size) => size / sharing / self.large_bytes * self.large_bytes,
                            None => STREAM_SPACING_BYTES,
                        };
                        let mut a = Access::new(large, self.large_bytes, read_pct, 0.0);
                        a.offset_bytes = nth * spacing;
                        job.workers.push(Worker {
                            group,
                            ..Worker::closed_loop(format!("stream-{s}"), vec![target], 1, vec![a])
                        });
                    }
                }
            }
        }
        job.sequence = Sequence {
            cycles: vec![Cycle {
                parameter: Param::Group,
                values: (0..points.len()).map(|g| g as f64).collect(),
            }],
            step_labels: points
                .iter()
                .map(|p| format!("small {} × large {}", p.small, p.large))
                .collect(),
            ..Sequence::default()
        };
        job
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml: &str) -> CalibrateSpec {
        toml::from_str::<CalibrateFile>(&format!("[calibrate]\n{toml}"))
            .unwrap()
            .calibrate
    }

    fn refused(toml: &str) -> JobError {
        resolve(&spec(toml), "t.toml").unwrap_err()
    }

    #[test]
    fn the_limits_come_from_the_disks_or_are_set_by_hand() {
        let cfg = resolve(&spec(""), "t").unwrap();
        assert_eq!(
            (cfg.level, cfg.disks, cfg.small_limit, cfg.large_limit),
            (Level::Simple, 1, 5, 2)
        );
        assert_eq!(cfg.duration_ms, points::ORION_POINT_MS);
        assert_eq!(cfg.latency_limit_ms, 20.0);
        assert!(cfg.scratch && cfg.size_bytes == Some(SCRATCH_BYTES));
        // Three targets are three disks unless the disks are given.
        let three = resolve(&spec("targets = [\"a\", \"b\", \"c\"]"), "t").unwrap();
        assert_eq!(
            (three.disks, three.small_limit, three.large_limit),
            (3, 15, 6)
        );
        let given = resolve(&spec("targets = [\"a\"]\ndisks = 4"), "t").unwrap();
        assert_eq!((given.small_limit, given.large_limit), (20, 8));
        let hand = resolve(
            &spec("level = \"advanced\"\nsmall_limit = 3\nlarge_limit = 7\nmatrix = \"col\""),
            "t",
        )
        .unwrap();
        assert_eq!(hand.points().len(), 8);
        assert!(hand.points().iter().all(|p| p.small == 3));
    }

    #[test]
    fn the_named_levels_refuse_what_only_advanced_sets() {
        for key in [
            "write = \"10%\"",
            "small_limit = 3",
            "matrix = \"row\"",
            "large_type = \"sequential\"",
        ] {
            let e = refused(key);
            assert!(e.message.contains("advanced"), "{key}: {e}");
            assert!(e.key.starts_with("calibrate."), "{key}: {e}");
        }
        assert!(refused("level = \"max\"").message.contains("oltp, dss"));
        assert!(refused("disks = 0").message.contains("1 to"));
        assert!(
            refused("level = \"advanced\"\nsmall_size = \"1000\"")
                .message
                .contains("multiple of 512")
        );
    }

    #[test]
    fn each_point_is_a_worker_group_cycled_a_step_at_a_time() {
        let cfg = resolve(&spec("targets = [\"a\", \"b\"]\nlevel = \"normal\""), "t").unwrap();
        let job = cfg.job();
        let points = cfg.points();
        assert_eq!(points.len(), 11 * 5 - 1);
        let steps = crate::job::steps::expand(&job);
        assert_eq!(steps.len(), points.len());
        for (step, p) in steps.iter().zip(&points) {
            let w = &step.job.workers;
            let small: u32 = (w.iter().filter(|w| w.name == "small"))
                .map(|w| w.queue_depth)
                .sum();
            let large: u32 = (w.iter().filter(|w| w.name == "large"))
                .map(|w| w.queue_depth)
                .sum();
            assert_eq!((small, large), (p.small, p.large), "{}", step.index);
            // Spread over every target, as ORION spreads I/O over its LUNs.
            assert!(w.iter().all(|w| w.targets == [0, 1]));
        }
        assert_eq!(job.sequence.step_labels[12], "small 2 × large 1");
        assert_eq!(job.ramp_ms, WARM_UP_MS);
    }

    #[test]
    fn sequential_streams_each_have_their_own_place() {
        let cfg = resolve(
            &spec("level = \"advanced\"\nlarge_type = \"sequential\"\nmatrix = \"point\"\nsmall_limit = 1\nlarge_limit = 4\ntargets = [\"a\", \"b\"]\nsize = \"1GiB\""),
            "t",
        )
        .unwrap();
        let job = cfg.job();
        let streams: Vec<_> = job
            .workers
            .iter()
            .filter(|w| w.name.starts_with("stream"))
            .collect();
        assert_eq!(streams.len(), 4);
        // Two a target, each at its own half, one I/O outstanding, sequential.
        let places: Vec<(usize, u64)> = streams
            .iter()
            .map(|w| (w.targets[0], w.access[0].offset_bytes))
            .collect();
        assert_eq!(places, [(0, 0), (1, 0), (0, 512 << 20), (1, 512 << 20)]);
        assert!(
            streams
                .iter()
                .all(|w| w.queue_depth == 1 && w.access[0].random_pct == 0.0)
        );
    }
}
