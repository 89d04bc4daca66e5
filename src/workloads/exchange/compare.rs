//! An Exchange validation with `--compare-cache`: the whole validation (the search too, if
//! asked) without the cache tier, then with it, and the two sides compared in the second's
//! results (the first keeps its own file beside them).

use super::section::{CacheComparison, CacheSide, DatabaseFigures};
use super::validation::{side, validate};
use crate::results::RunResult;
use crate::run::{Execute, RunOptions};
use crate::workloads::exchange::ExchangeConfig;
use anyhow::Result;

/// Runs the validation described by `cfg`; with `compare_cache`, twice: without the cache
/// tier (its results beside, `NAME.uncached.json`), then with it, the comparison in the
/// second's results.
pub(crate) fn run(
    cfg: &ExchangeConfig,
    opts: &RunOptions,
    exec: &mut dyn Execute,
) -> Result<RunResult> {
    if !cfg.compare_cache {
        return validate(cfg, opts, exec);
    }
    let once = |cache| side(cfg, cache);
    let uncached_opts = RunOptions {
        results_path: opts.results_path.with_extension("uncached.json"),
        ..opts.clone()
    };
    let off = validate(&once(None), &uncached_opts, exec)?;
    let uncached_results = uncached_opts.results_path.display().to_string();
    if off.interrupted.stopped_early() {
        // The validation with the cache never ran: this file says so and holds the first.
        let mut r = off;
        r.warnings.push(format!(
            "the validation without the cache stopped early ({uncached_results}); the one with the cache did not run"
        ));
        exec.save(&opts.results_path, &r)?;
        return Ok(r);
    }
    let mut on = validate(&once(cfg.cache.clone()), opts, exec)?;
    if cfg.maintenance {
        on.warnings.push(
            "background database maintenance was left out of both validations: it does not run with a cache tier, and the two compare the same I/O".into(),
        );
    }
    let comparison = CacheComparison {
        uncached_results,
        uncached: cache_side(&off),
        cached: cache_side(&on),
    };
    if let Some(ex) = on.exchange.as_mut() {
        ex.cache_comparison = Some(comparison);
    }
    exec.save(&opts.results_path, &on)?;
    Ok(on)
}

/// What the validation of `r` found, for the comparison of a search without and with the cache.
fn cache_side(r: &RunResult) -> CacheSide {
    let ex = r.exchange.clone().unwrap_or_default();
    let worst =
        |f: fn(&DatabaseFigures) -> f64| ex.databases.iter().map(f).fold(0.0, f64::max) / 1e6;
    let (reads, hits) = r.cache_tiers.iter().fold((0, 0), |(n, h), t| {
        (n + t.totals.reads, h + t.totals.read_hits)
    });
    CacheSide {
        pass: r.verdict.as_ref().map(|v| v.passed()),
        max_mailboxes: r.max_mailboxes,
        mailboxes: ex.mailboxes,
        threads_per_database: ex.threads_per_database,
        achieved_iops: ex.achieved_iops,
        db_read_latency_ms: worst(|d| d.db_read_latency_ns.mean),
        log_write_latency_ms: worst(|d| d.log_write_latency_ns.mean),
        read_hit_pct: (!r.cache_tiers.is_empty()).then(|| {
            if reads == 0 {
                0.0
            } else {
                hits as f64 * 100.0 / reads as f64
            }
        }),
        runs: ex.thread_trials.len() + r.trials.as_ref().map_or(0, Vec::len).max(1),
    }
}
