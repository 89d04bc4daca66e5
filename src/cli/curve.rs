//! `storlab cache-curve RUN.json`: hit ratio against cache size from a run's block sample.

use crate::cache::curve::{self, PageCacheCheck, SampleFacts};
use crate::cache::model::{Load, MailboxRule, ModelInputs};
use crate::job::cache::CachePolicy;
use crate::report::{console, curve as render};
use crate::results::RunResult;
use crate::results::blocks;
use crate::results::file as results_file;
use crate::stats::blocks::BlockRef;
use crate::stats::summary::ClassSummary;
use crate::units::Dur;
use crate::{Usage, exit};
use anyhow::Result;
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
    /// Predict IOPS and mean latency at each cache size, for a cache device of this mean
    /// latency: a time (e.g. `100us`, a vendor's figure) or the results file of a short run on
    /// the device (its mean latency over reads and writes).
    #[arg(long, value_name = "TIME|RUN.json")]
    pub cache_latency: Option<String>,
    /// With --cache-latency: the backing target's mean latency (default: the run's mean
    /// latency over its reads and writes).
    #[arg(long, value_name = "TIME")]
    pub backing_latency: Option<Dur>,
    /// With --cache-latency: I/Os in flight, closed loop (default: the run's, its IOPS × its
    /// mean latency by Little's law).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<f64>,
    /// With --cache-latency: predict for this rate, open loop, instead of a fixed concurrency.
    #[arg(long, value_name = "IOPS", conflicts_with = "concurrency")]
    pub rate: Option<f64>,
    /// Print only the curve as JSON (a `hit_ratio` per policy at each point).
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML page with the chart to FILE.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs `storlab cache-curve`.
pub(super) fn run_cache_curve(a: CacheCurveArgs) -> Result<i32> {
    if let Some(out) = &a.output {
        super::output::check("the HTML cache curve", out)?;
    }
    let policies = a
        .policy
        .split(',')
        .map(CachePolicy::parse)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Usage(format!("--policy: {e}")))?;
    let r = results_file::load(&a.results)?;
    let (Some(sample), Some(facts)) = (r.block_sample.as_ref(), SampleFacts::of(&r)) else {
        return Err(Usage(format!(
            "{} has no block sample: run with --sample-blocks (or sample_blocks = true in the job file) to record one",
            a.results.display()
        ))
        .into());
    };
    let path = sample_file(&a.results, Path::new(&sample.path))?;
    let refs = blocks::read(&path)?;
    let options = curve::CurveOptions {
        policies,
        sizes_pct: curve::SIZES_PCT.to_vec(),
        bypass_sequential: a.bypass_sequential,
    };
    let mut c = curve::curve(&refs, facts, &options);
    c.page_cache = page_cache_check(&r, &refs, facts);
    if let Some(inputs) = model_inputs(&a, &r)? {
        c.predict(inputs);
    }
    if a.json {
        console::print_json(&serde_json::to_string_pretty(&c)?);
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
        super::output::emit("the HTML cache curve", out, &render::html(&c, &title))?;
        if !super::output::is_stdout(out) {
            console::note(&format!("HTML cache curve: {}", out.display()));
        }
    }
    Ok(exit::OK)
}

/// The what-if model's inputs from the flags and the run, when --cache-latency asks for it.
fn model_inputs(a: &CacheCurveArgs, r: &RunResult) -> Result<Option<ModelInputs>, Usage> {
    let Some(cache) = a.cache_latency.as_deref() else {
        if a.backing_latency.is_some() || a.concurrency.is_some() || a.rate.is_some() {
            return Err(Usage(
                "--backing-latency, --concurrency and --rate are for predictions: give the cache device's latency with --cache-latency too".into(),
            ));
        }
        return Ok(None);
    };
    let cache_ns = match crate::units::parse_duration(cache) {
        Ok(d) => d.as_nanos() as f64,
        Err(_) => {
            let run = results_file::load(Path::new(cache)).map_err(|e| {
                Usage(format!(
                    "--cache-latency {cache}: neither a time (e.g. 100us) nor a results file of a run on the cache device ({e:#})"
                ))
            })?;
            let (_, ns) = mean_latency(&run.totals);
            if ns <= 0.0 {
                return Err(Usage(format!(
                    "--cache-latency {cache}: that run measured no I/O latency"
                )));
            }
            ns
        }
    };
    let (iops, mean_ns) = mean_latency(&r.totals);
    let backing_ns = a.backing_latency.map_or(mean_ns, |d| d.0.as_nanos() as f64);
    if backing_ns <= 0.0 {
        return Err(Usage(
            "the run has no I/O latency to take as the backing target's: give --backing-latency"
                .into(),
        ));
    }
    // Up to 1e9 (as a job's rate_iops): a larger or non-finite figure predicts nothing.
    let usable = |v: f64| v > 0.0 && v <= 1e9;
    let shown = |v: f64| match v.abs() < 1e15 {
        true => v.to_string(),
        false => format!("{v:e}"),
    };
    let load = match (a.rate, a.concurrency) {
        (Some(iops), _) if usable(iops) => Load::Open { iops },
        (Some(v), _) => {
            return Err(Usage(format!(
                "--rate {} is not a rate to predict for; give more than 0 and at most 1e9 I/Os per second",
                shown(v)
            )));
        }
        (None, Some(n)) if usable(n) => Load::Closed { concurrency: n },
        (None, Some(v)) => {
            return Err(Usage(format!(
                "--concurrency {} is not a number of I/Os in flight; give more than 0 and at most 1e9",
                shown(v)
            )));
        }
        (None, None) => Load::Closed {
            concurrency: iops * mean_ns / 1e9,
        },
    };
    // Without --backing-latency: the target's latency against load, when the run measured
    // it at several loads (an Exchange search's trials, a rate curve's levels).
    let backing_curve = match a.backing_latency {
        Some(_) => Vec::new(),
        None => backing_curve(r),
    };
    let mailboxes = r.exchange.as_ref().map(|x| MailboxRule {
        limit_ns: x.db_read_latency_limit_ms * 1e6,
        iops_per_mailbox: x.iops_per_mailbox * (1.0 + x.headroom_pct / 100.0),
    });
    Ok(Some(ModelInputs {
        cache_latency_ns: cache_ns,
        backing_latency_ns: backing_ns,
        load,
        backing_iops: (a.backing_latency.is_none() && iops > 0.0).then_some(iops),
        backing_curve,
        mailboxes,
    }))
}

/// IOPS and mean latency (ns) over reads and writes.
fn mean_latency(t: &ClassSummary) -> (f64, f64) {
    let (read, write) = (&t.read, &t.write);
    let ops = (read.ops + write.ops).max(1) as f64;
    let mean =
        (read.latency_ns.mean * read.ops as f64 + write.latency_ns.mean * write.ops as f64) / ops;
    (read.iops + write.iops, mean)
}

/// The run's latency against load, as (I/Os a second, mean latency ns) by load, the latency
/// made non-decreasing (a device does not get faster with more load; noise aside): an
/// Exchange search's trials (transactional IOPS, the worst database's read latency) or a rate
/// curve's levels; empty with fewer than two loads.
fn backing_curve(r: &RunResult) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = match (&r.trials, &r.steps) {
        (Some(trials), _) => (trials.iter())
            .filter(|t| t.achieved_iops > 0.0)
            .map(|t| (t.achieved_iops, t.db_read_latency_ms * 1e6))
            .collect(),
        (None, Some(steps)) => (steps.iter())
            .filter(|s| s.kind == crate::results::steps::StepKind::CurveLevel)
            .map(|s| mean_latency(&s.totals))
            .collect(),
        _ => Vec::new(),
    };
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut worst = 0.0f64;
    for p in &mut points {
        worst = worst.max(p.1);
        p.1 = worst;
    }
    if points.len() < 2 { Vec::new() } else { points }
}

/// The sample file: where the results say, or beside the results file; refused (exit 2)
/// saying what is at each place when neither is a regular file.
fn sample_file(results: &Path, recorded: &Path) -> Result<PathBuf, Usage> {
    let beside = blocks::blocks_path(results);
    let places = [recorded.to_path_buf(), beside.clone()];
    if let Some(found) = places.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    let what = |p: &Path| match std::fs::metadata(p) {
        Ok(m) => format!(
            "{} is {}",
            p.display(),
            crate::files::kind_text(m.file_type())
        ),
        Err(_) => format!("nothing is at {}", p.display()),
    };
    Err(Usage(format!(
        "the block sample of {} is not a file storlab can read: {}, and {}; copy the run's .blocks file beside its results ({})",
        results.display(),
        what(recorded),
        what(&beside),
        beside.display()
    )))
}

/// A buffered run's page cache beside LRU at the size it had.
fn page_cache_check(
    r: &RunResult,
    refs: &[BlockRef],
    facts: SampleFacts,
) -> Option<PageCacheCheck> {
    let p = r.page_cache.as_ref()?;
    let bytes = p.cache_bytes()?;
    let pct = (bytes as f64 * 100.0 / facts.data_set_bytes.max(1) as f64).min(100.0);
    let options = curve::CurveOptions {
        policies: vec![CachePolicy::Lru],
        sizes_pct: vec![pct],
        bypass_sequential: false,
    };
    let lru = curve::curve(refs, facts, &options)
        .points
        .first()
        .and_then(|x| x.hit_ratio.get(CachePolicy::Lru.name()).copied())?;
    Some(PageCacheCheck {
        cache_bytes: bytes,
        cache_pct: pct,
        observed_hit_ratio: p.observed_hit_pct / 100.0,
        lru_hit_ratio: lru,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search's results holding trials at `(IOPS, ms)`.
    fn searched(trials: &[(f64, f64)]) -> RunResult {
        let mut r = RunResult {
            trials: Some(vec![Default::default(); trials.len()]),
            ..RunResult::default()
        };
        for (t, &(iops, ms)) in r.trials.iter_mut().flatten().zip(trials) {
            t.achieved_iops = iops;
            t.db_read_latency_ms = ms;
        }
        r
    }

    #[test]
    fn a_search_s_trials_are_the_target_s_latency_against_load() {
        let r = searched(&[
            (1200.0, 30.0),
            (300.0, 2.0),
            (600.0, 4.0),
            (900.0, 3.5),
            (0.0, 9.0),
        ]);
        // By load; the dip at 900 IOPS (noise) is lifted to the 4 ms before it; a trial that
        // did nothing is left out.
        assert_eq!(
            backing_curve(&r),
            [(300.0, 2e6), (600.0, 4e6), (900.0, 4e6), (1200.0, 30e6)]
        );
        let one = searched(&[(300.0, 2.0)]);
        assert!(backing_curve(&one).is_empty(), "one load is no curve");
        assert!(backing_curve(&RunResult::default()).is_empty());
    }
}
