//! `storlab cache-curve RUN.json`: hit ratio against cache size from a run's block sample.

use crate::cache::PolicyKind;
use crate::cache::curve::{self, SampleFacts};
use crate::report::{console, curve as render};
use crate::results::blocks;
use crate::results::file as results_file;
use crate::{Usage, exit};
use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};

/// Flags of `storlab cache-curve`.
#[derive(Debug, Args)]
pub struct CacheCurveArgs {
    /// A results file of a run made with --sample-blocks (or `sample_blocks = true`).
    pub results: PathBuf,
    /// Policies to show, comma-separated: lru (exact, from reuse distances), arc, s3fifo
    /// (simulated on the sample).
    #[arg(long, value_name = "LIST", default_value = "lru,arc,s3fifo")]
    pub policy: String,
    /// Do not admit sequential I/O to the caches (a hit still counts): the curve of a cache
    /// that lets sequential streams bypass it.
    #[arg(long)]
    pub bypass_sequential: bool,
    /// Print only the curve as JSON (a `hit_ratio` per policy at each point).
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML page with the chart to FILE.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs `storlab cache-curve`.
pub(super) fn run_cache_curve(a: CacheCurveArgs) -> Result<i32> {
    let policies = a
        .policy
        .split(',')
        .map(PolicyKind::parse)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Usage(format!("--policy: {e}")))?;
    let r = results_file::load(&a.results)?;
    let Some(sample) = r.block_sample.as_ref() else {
        return Err(Usage(format!(
            "{} has no block sample: run with --sample-blocks (or sample_blocks = true in the job file) to record one",
            a.results.display()
        ))
        .into());
    };
    let path = sample_file(&a.results, Path::new(&sample.path)).ok_or_else(|| {
        Usage(format!(
            "the block sample of {} is not at {} nor beside the results ({}); copy the .blocks file with the results",
            a.results.display(),
            sample.path,
            blocks::blocks_path(&a.results).display()
        ))
    })?;
    let refs = blocks::read(&path)?;
    let facts = SampleFacts {
        rate: sample.rate,
        references: sample.references,
        block_bytes: sample.block_bytes,
        data_set_bytes: r.targets.iter().map(|t| t.size_bytes).sum(),
    };
    let options = curve::CurveOptions {
        policies,
        sizes_pct: curve::SIZES_PCT.to_vec(),
        bypass_sequential: a.bypass_sequential,
    };
    let c = curve::curve(&refs, facts, &options);
    if a.json {
        console::print_text(&serde_json::to_string_pretty(&c)?);
    } else {
        console::print_text(render::console(&c).trim_end());
        if sample.dropped > 0 {
            console::note(&format!(
                "warning: {} sampled references were dropped during the run (a worker's buffer was full): the curve is from an incomplete sample",
                sample.dropped
            ));
        }
    }
    if let Some(out) = &a.output {
        let title = format!("storlab cache-curve: {}", a.results.display());
        std::fs::write(out, render::html(&c, &title))
            .with_context(|| format!("cannot write {}", out.display()))?;
        console::note(&format!("HTML cache curve: {}", out.display()));
    }
    Ok(exit::OK)
}

/// The sample file: where the results say, or beside the results file.
fn sample_file(results: &Path, recorded: &Path) -> Option<PathBuf> {
    [recorded.to_path_buf(), blocks::blocks_path(results)]
        .into_iter()
        .find(|p| p.is_file())
}
