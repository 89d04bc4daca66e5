//! The database validation as a workload: its first job and its description, made from the
//! same configuration and job builder as the runs, so the dry run, the results and every
//! report say what ran.

use super::jobs::{self, Load};
use super::{
    ACHIEVED_SHARE, DATA_IOS_PER_TRANSACTION, DATA_READ_PCT, DatabaseConfig, DatabaseFile,
    validation,
};
use crate::job::Job;
use crate::results::description::{self, Description, Line};
use crate::results::{JobSource, RunResult};
use crate::run::{Execute, RunOptions, Workload};
use crate::units::{format_ms, format_number, format_pct, format_seconds, format_size};
use crate::workloads::{JobText, Keys, Overrides};
use anyhow::Result;

/// A database validation ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Database {
    /// Its configuration, resolved.
    pub cfg: DatabaseConfig,
}

impl Workload for Database {
    fn kind(&self) -> &'static str {
        "database"
    }

    fn describe(&self) -> Description {
        describe(&self.cfg)
    }

    fn jobs(&self) -> Vec<Job> {
        vec![first_job(&self.cfg)]
    }

    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> Result<RunResult> {
        validation::run(&self.cfg, opts, exec)
    }
}

/// The first run's job: the profile at its rate (the search's first trial, with `find_max`).
fn first_job(cfg: &DatabaseConfig) -> Job {
    let ms = if cfg.find_max {
        validation::trial_ms(cfg)
    } else {
        cfg.duration_ms
    };
    jobs::job(cfg, Load::Tps(cfg.tps), ms, cfg.ramp_ms.min(ms / 4))
}

/// Loads a job file's `[database]` section with the flags of `storlab run` that apply
/// (`--engine` is the I/O engine there, as for every job file).
pub(crate) fn load(file: &JobText, o: &Overrides) -> Result<Box<dyn Workload>> {
    let parsed: DatabaseFile = crate::job::file::parse_toml(file.path, file.text)?;
    let mut spec = parsed.database;
    let (mut verify, mut sample) = (None, None);
    o.apply(Keys {
        duration: Some(&mut spec.duration),
        ramp: Some(&mut spec.ramp),
        interval: &mut spec.interval,
        engine: &mut spec.io_engine,
        seed: &mut spec.seed,
        destroy_data: &mut spec.destroy_data,
        verify: &mut verify,
        sample_blocks: &mut sample,
    });
    let cfg = super::resolve(&spec, &file.path.display().to_string()).map_err(|mut e| {
        if e.key == "database.io_engine" && o.engine.is_some() {
            e.location = "command line".into();
            e.key = "--engine".into();
            e
        } else {
            o.blame(e, file, "database")
        }
    })?;
    Ok(Box::new(Database { cfg }))
}

/// Where a database validation came from, as its results record it.
pub(crate) fn source(path: Option<&std::path::Path>, preset: Option<&str>) -> JobSource {
    JobSource::of(path, preset, |path| JobSource::Database { path })
}

/// What the validation does: the profile and its model, the files, the log and group commit,
/// checkpoints and scans, the search, the limits; then the first job's workers and timing.
pub(crate) fn describe(cfg: &DatabaseConfig) -> Description {
    let model = cfg.engine.model();
    let mut d = Description::default();
    d.head.push(Line::new(
        "test",
        format!(
            "{} database validation at {} transactions/s ({}): {} data-file IOPS ({} I/Os per transaction, {} reads) of {} pages",
            cfg.engine.title(),
            format_number(cfg.tps),
            cfg.rate_source,
            format_number(cfg.data_iops(cfg.tps)),
            format_number(DATA_IOS_PER_TRANSACTION),
            format_pct(DATA_READ_PCT),
            format_size(cfg.page_bytes)
        ),
    ));
    let paths = cfg
        .data_paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    d.head.push(Line::new(
        "data",
        format!(
            "{} file{} of {} on {paths}, {} worker{} each",
            cfg.data_files,
            if cfg.data_files == 1 { "" } else { "s" },
            format_size(cfg.data_file_bytes),
            cfg.threads,
            if cfg.threads == 1 { "" } else { "s" }
        ),
    ));
    d.head.push(Line::new(
        "log",
        format!(
            "{} of {}: each commit writes {}; with group commit a write carries every commit waiting (up to {}), made durable by {}",
            cfg.log_file().display(),
            format_size(cfg.log_bytes),
            format_size(cfg.log_write_bytes),
            format_size(jobs::group_largest(cfg)),
            model.durability.name()
        ),
    ));
    let checkpoints = if cfg.checkpoint_interval_ms == 0 {
        "none".to_string()
    } else {
        format!(
            "every {}, {} page writes per data file as fast as the storage takes them",
            format_ms(cfg.checkpoint_interval_ms),
            jobs::checkpoint_pages(cfg, cfg.tps)
        )
    };
    d.head.push(Line::new("checkpoint", checkpoints));
    if cfg.scans > 0 {
        d.head.push(Line::new(
            "scans",
            format!(
                "{} read-ahead scan{} of {} reads, one in flight each",
                cfg.scans,
                if cfg.scans == 1 { "" } else { "s" },
                format_size(jobs::scan_read_bytes(cfg))
            ),
        ));
    }
    if cfg.find_max {
        d.head.push(Line::new(
            "search",
            format!(
                "the highest transaction rate that passes: doubling or halving from {}, then bisection to {}, with trials of {}; the rate found is confirmed at full length",
                format_number(cfg.tps),
                format_pct(validation::SEARCH_RESOLUTION * 100.0),
                format_ms(validation::trial_ms(cfg))
            ),
        ));
    }
    if !cfg.find_max && !validation::checkpoint_fits(cfg, cfg.duration_ms) {
        d.head.push(Line::new(
            "too short",
            format!(
                "a checkpoint every {} does not finish in {} measured: the data-file write rules will be NOT MEASURED; run for at least {} (--duration) or checkpoint more often (--checkpoint-interval)",
                format_ms(cfg.checkpoint_interval_ms),
                format_ms(cfg.duration_ms),
                format_ms(cfg.checkpoint_interval_ms + validation::CHECKPOINT_MARGIN_MS)
            ),
        ));
    }
    d.head.push(Line::new(
        "limits",
        format!(
            "average data-file read ≤ {}, average data-file write ≤ {}, average log write ≤ {} ({}); no I/O errors; at least {} of the target data-file IOPS and transaction rate",
            format_seconds(cfg.limits.data_read_ms / 1e3),
            format_seconds(cfg.limits.data_write_ms / 1e3),
            format_seconds(cfg.limits.log_write_ms / 1e3),
            if cfg.limits == model.limits {
                model.limits_source
            } else {
                "as given"
            },
            format_pct(ACHIEVED_SHARE * 100.0)
        ),
    ));
    d.body = description::job_body(&first_job(cfg));
    d
}
