//! The calibration as a workload: its description (the points and the total time, as the dry
//! run prints them), its job, the run (the plain step sequence, then the section that
//! summarises its steps, and the matrices' CSV files beside the results file), and the way in
//! from a job file.

use super::section::Figure;
use super::section::LargeType;
use super::{CalibrateConfig, CalibrateFile, points::Matrix};
use crate::job::Job;
use crate::results::description::{self, Description, Line};
use crate::results::{JobSource, RunResult};
use crate::run::{Execute, RunOptions, Workload};
use crate::units::{format_ms, format_pct, format_seconds, format_size};
use crate::workloads::{JobText, Keys, Overrides};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// A calibration ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Calibrate {
    /// Its configuration, resolved.
    pub cfg: CalibrateConfig,
}

impl Workload for Calibrate {
    fn kind(&self) -> &'static str {
        "calibrate"
    }

    fn describe(&self) -> Description {
        describe(&self.cfg)
    }

    fn jobs(&self) -> Vec<Job> {
        vec![self.cfg.job()]
    }

    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> Result<RunResult> {
        let job = self.cfg.job();
        let mut r = crate::workloads::plain::steps::run(&job, opts, exec)?;
        let points = self.cfg.points();
        // Each step's parameters say its load, beside the worker group that carries it.
        for s in r.steps.iter_mut().flatten() {
            if let Some(p) = (s.parameters.get("group")).and_then(|g| points.get(*g as usize)) {
                s.parameters
                    .insert("small_outstanding".into(), f64::from(p.small));
                s.parameters
                    .insert("large_outstanding".into(), f64::from(p.large));
            }
        }
        let mut section = self.cfg.section(r.steps.as_deref().unwrap_or(&[]));
        section.csv_files = Figure::ALL
            .iter()
            .map(|f| csv_path(&opts.results_path, *f).display().to_string())
            .collect();
        for (f, path) in Figure::ALL.iter().zip(&section.csv_files) {
            let what = format!("the {} matrix", f.title());
            crate::results::file::save_beside(Path::new(path), &what, &section.csv(*f))?;
        }
        r.calibrate = Some(section);
        exec.save(&opts.results_path, &r)?;
        Ok(r)
    }
}

/// The CSV file of `f` beside the results file: `RUN_iops.csv` for `RUN.json`.
pub(crate) fn csv_path(results: &Path, f: Figure) -> PathBuf {
    let stem = results
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "calibrate".into());
    results.with_file_name(format!("{stem}_{}.csv", f.suffix()))
}

/// Loads a job file's `[calibrate]` section with the flags of `storlab run` that apply.
pub(crate) fn load(file: &JobText, o: &Overrides) -> Result<Box<dyn Workload>> {
    let parsed: CalibrateFile = crate::job::file::parse_toml(file.path, file.text)?;
    let mut spec = parsed.calibrate;
    // `--duration` is each point's; the warm-up is the section's own `warm_up`.
    o.apply(Keys {
        duration: Some(&mut spec.duration),
        ramp: None,
        interval: &mut spec.interval,
        engine: &mut spec.engine,
        seed: &mut spec.seed,
        destroy_data: &mut spec.destroy_data,
        verify: &mut spec.verify,
        sample_blocks: &mut spec.sample_blocks,
    });
    let cfg = super::resolve(&spec, &file.path.display().to_string())
        .map_err(|e| o.blame(e, file, "calibrate"))?;
    Ok(Box::new(Calibrate { cfg }))
}

/// Where a calibration came from, as its results record it.
pub(crate) fn source(path: Option<&Path>, preset: Option<&str>) -> JobSource {
    JobSource::of(path, preset, |path| JobSource::Calibrate { path })
}

/// `1–5` or `3`.
fn range(v: &[u32]) -> String {
    match (v.first(), v.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}–{b}"),
        (Some(a), _) => a.to_string(),
        _ => "none".into(),
    }
}

/// What the calibration does: the level and its I/O, the limits and where they come from,
/// every point, the time it takes, the targets.
pub(crate) fn describe(cfg: &CalibrateConfig) -> Description {
    let mut d = Description::default();
    let points = cfg.points();
    let rw = if cfg.write_pct > 0.0 {
        format!("{} writes", format_pct(cfg.write_pct))
    } else {
        "reads".into()
    };
    let large = match cfg.large_type {
        LargeType::Random => format!("{} random {rw}", format_size(cfg.large_bytes)),
        LargeType::Sequential => format!(
            "{} sequential {rw} in streams (one I/O outstanding each)",
            format_size(cfg.large_bytes)
        ),
    };
    d.head.push(Line::new(
        "calibrate",
        format!(
            "ORION-class {} level ({} points): small I/O {} random {rw}; large I/O {large}",
            cfg.level.name(),
            cfg.matrix.name(),
            format_size(cfg.small_bytes)
        ),
    ));
    let disks = format!(
        "{} disk{}{}",
        cfg.disks,
        if cfg.disks == 1 { "" } else { "s" },
        if cfg.disks_given {
            ""
        } else {
            ", one per target"
        }
    );
    let derived = cfg.small_limit == super::SMALL_PER_DISK * cfg.disks
        && cfg.large_limit == super::LARGE_PER_DISK * cfg.disks;
    d.head.push(Line::new(
        "loads",
        format!(
            "outstanding small I/Os up to {}, large up to {}: {}",
            cfg.small_limit,
            cfg.large_limit,
            if derived {
                format!("5 and 2 per disk (ORION's), {disks}")
            } else {
                format!("as set ({disks})")
            }
        ),
    ));
    let mut smalls: Vec<u32> = points.iter().map(|p| p.small).filter(|&s| s > 0).collect();
    smalls.sort_unstable();
    smalls.dedup();
    let mut larges: Vec<u32> = points.iter().map(|p| p.large).filter(|&l| l > 0).collect();
    larges.sort_unstable();
    larges.dedup();
    let list = points
        .iter()
        .map(|p| format!("{}×{}", p.small, p.large))
        .collect::<Vec<_>>()
        .join(", ");
    let mut axes = Vec::new();
    if !smalls.is_empty() {
        axes.push(format!("small {}", range(&smalls)));
    }
    if !larges.is_empty() {
        axes.push(format!("large {}", range(&larges)));
    }
    if cfg.matrix == Matrix::Detailed {
        axes.push("every combination, each axis also at 0".into());
    }
    d.head.push(Line::new(
        "points",
        format!(
            "{} (small × large): {}: {list}",
            points.len(),
            axes.join(", ")
        ),
    ));
    let each = cfg.duration_ms + cfg.warm_up_ms;
    d.head.push(Line::new(
        "time",
        format!(
            "{} a point ({} warm-up, unmeasured, then {} measured): {} in all, plus preparing the targets",
            format_seconds(each as f64 / 1e3),
            format_ms(cfg.warm_up_ms),
            format_ms(cfg.duration_ms),
            format_seconds((each * points.len() as u64) as f64 / 1e3)
        ),
    ));
    d.head.push(Line::new(
        "limit",
        format!(
            "{} mean small-I/O latency (the highest small load within it is reported)",
            crate::units::format_ns(cfg.latency_limit_ms * 1e6)
        ),
    ));
    let job = cfg.job();
    // The points line above says every point's workers (one worker group a point; the
    // listing of the whole job's workers would merge like workers of different points).
    d.body.push(Line::new("timing", description::timing(&job)));
    d.body.push(Line::new("engine", description::engine(&job)));
    d.body.push(Line::new(
        "seed",
        format!("{} (the same seed gives the same offsets)", job.seed),
    ));
    d
}
