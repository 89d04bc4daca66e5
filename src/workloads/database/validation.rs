//! A database validation: checks the paths and free space, runs the profile at its rate (or
//! searches for the highest transaction rate that passes, then confirms it at full duration),
//! and judges the result. Each run is an ordinary execution of a job the profile produced,
//! driven by [`super::jobs::DatabaseSources`].

use super::jobs::{self, DatabaseSources, Load};
use super::log::Counters;
use super::section::{Checkpoints, DatabaseResult, FileFigures, GroupCommit, Search, Trial};
use super::{DATA_IOS_PER_TRANSACTION, DATA_READ_PCT, DatabaseConfig, judge};
use crate::Usage;
use crate::results::RunResult;
use crate::results::verdict::Verdict;
use crate::run::{Execute, RunOptions};
use anyhow::Result;
use std::path::Path;
use std::sync::atomic::Ordering;

/// Bracketing doubles (or halves) the rate at most this many times.
pub(crate) const MAX_BRACKET_STEPS: u32 = 16;
/// Bisection stops when the bracket is narrower than this fraction of its low end.
pub(crate) const SEARCH_RESOLUTION: f64 = 0.05;
/// A failed confirmation lowers the rate by this fraction and confirms again, this many times.
pub(crate) const CONFIRM_BACKOFF: (f64, u32) = (0.05, 3);

/// Trial length of the search: a sixth of the duration, between 2 and 60 seconds, and with
/// checkpoints long enough for one to finish in it (the interval and 2 s more), never longer
/// than the duration.
pub(crate) fn trial_ms(cfg: &DatabaseConfig) -> u64 {
    let checkpoint = match cfg.checkpoint_interval_ms {
        0 => 0,
        ms => ms + CHECKPOINT_MARGIN_MS,
    };
    (cfg.duration_ms / 6)
        .clamp(2_000, 60_000)
        .max(checkpoint)
        .min(cfg.duration_ms)
}

/// Time a run needs past a checkpoint interval for the burst to finish in it.
pub(crate) const CHECKPOINT_MARGIN_MS: u64 = 2_000;

/// Whether a run of `duration_ms` gives a checkpoint the time to finish in it.
pub(crate) fn checkpoint_fits(cfg: &DatabaseConfig, duration_ms: u64) -> bool {
    cfg.checkpoint_interval_ms == 0
        || duration_ms >= cfg.checkpoint_interval_ms + CHECKPOINT_MARGIN_MS
}

/// Runs the validation `cfg` describes.
pub(crate) fn run(
    cfg: &DatabaseConfig,
    opts: &RunOptions,
    exec: &mut dyn Execute,
) -> Result<RunResult> {
    check_layout(cfg)?;
    let mut ctx = Context { cfg, opts, exec };
    if cfg.find_max {
        return ctx.search();
    }
    let o = ctx.run_at(cfg.tps, cfg.duration_ms)?;
    ctx.finish(o, None)
}

/// Checks that the paths exist (the default scratch directory is created) and that the files
/// fit in the free space.
fn check_layout(cfg: &DatabaseConfig) -> Result<()> {
    for p in cfg.data_paths.iter().chain(std::iter::once(&cfg.log_path)) {
        if p == Path::new(super::quick::DIR) {
            // storlab's own scratch directory: made as storlab makes its directories, and
            // refused when another user planted it.
            crate::engine::target::scratch_directory(p).map_err(Usage)?;
        }
        if !p.is_dir() {
            return Err(Usage(format!(
                "the path {} does not exist or is not a directory; create it (or mount the storage there) first",
                p.display()
            ))
            .into());
        }
    }
    let files = (0..cfg.data_files)
        .map(|n| (cfg.data_path(n), cfg.data_file_bytes))
        .chain(std::iter::once((cfg.log_file(), cfg.log_bytes)));
    let mut need: Vec<(u64, u64, std::path::PathBuf)> = Vec::new();
    for (path, size) in files {
        let existing = std::fs::metadata(&path).map_or(0, |m| m.len());
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let dev = std::fs::metadata(&dir).map_or(0, |m| std::os::unix::fs::MetadataExt::dev(&m));
        let extra = size.saturating_sub(existing);
        match need.iter_mut().find(|n| n.0 == dev) {
            Some(n) => n.1 += extra,
            None => need.push((dev, extra, dir)),
        }
    }
    for (_, bytes, dir) in need {
        let free = rustix::fs::statvfs(&dir).map_or(0, |s| s.f_bavail.saturating_mul(s.f_frsize));
        if bytes > free {
            return Err(Usage(format!(
                "the data files and log need {} more on the filesystem of {} but only {} is free; give a smaller --data-size or --log-size, or more room",
                crate::units::format_size(bytes),
                dir.display(),
                crate::units::format_size(free)
            ))
            .into());
        }
    }
    Ok(())
}

/// What one run showed.
struct Outcome {
    result: RunResult,
    tps: f64,
    files: Vec<FileFigures>,
    achieved_iops: f64,
    achieved_tps: f64,
    group: GroupCommit,
    checkpoints: Option<Checkpoints>,
    verdict: Verdict,
}

struct Context<'a> {
    cfg: &'a DatabaseConfig,
    opts: &'a RunOptions,
    exec: &'a mut dyn Execute,
}

impl Context<'_> {
    /// Runs the profile at `tps` for `duration_ms` and judges it.
    fn run_at(&mut self, tps: f64, duration_ms: u64) -> Result<Outcome> {
        let cfg = self.cfg;
        let ramp = cfg.ramp_ms.min(duration_ms / 4);
        let job = jobs::job(cfg, Load::Tps(tps), duration_ms, ramp);
        let counters = Counters::default();
        let sources = DatabaseSources::of(cfg, &job, tps, &counters);
        let result = self.exec.execute(&job, self.opts, &sources)?;
        let files = judge::file_figures(cfg, &result.classes);
        let achieved_iops = files
            .iter()
            .filter(|f| f.role == "data")
            .map(|f| f.reads_per_s + f.writes_per_s)
            .sum();
        let seconds = result.measured_ms as f64 / 1e3;
        let per_s = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let commits = load(&counters.commits);
        let writes = load(&counters.log_writes);
        let group = GroupCommit {
            commits,
            log_writes: writes,
            commits_per_write: if writes > 0 {
                commits as f64 / writes as f64
            } else {
                0.0
            },
            max_commits_per_write: load(&counters.max_commits_per_write),
        };
        let checkpoints = (cfg.checkpoint_interval_ms > 0).then(|| {
            let bursts = load(&counters.bursts);
            Checkpoints {
                interval_ms: cfg.checkpoint_interval_ms,
                pages_per_burst: jobs::checkpoint_pages(cfg, tps),
                bursts,
                average_seconds: if bursts > 0 {
                    load(&counters.burst_ns) as f64 / bursts as f64 / 1e9
                } else {
                    0.0
                },
                longest_seconds: load(&counters.longest_burst_ns) as f64 / 1e9,
            }
        });
        let achieved_tps = per_s(commits);
        let evidence = judge::Evidence {
            seconds,
            bursts: checkpoints.as_ref().map(|c| c.bursts),
        };
        let mut rules = judge::rules(
            cfg,
            &files,
            result.totals.errors(),
            tps,
            (achieved_iops, achieved_tps),
            evidence,
        );
        rules.extend(crate::run::verification_rule(&result));
        Ok(Outcome {
            verdict: Verdict::weighed(rules, result.cost.as_ref()),
            result,
            tps,
            files,
            achieved_iops,
            achieved_tps,
            group,
            checkpoints,
        })
    }

    fn stopped(o: &Outcome) -> bool {
        o.result.interrupted.stopped_early()
    }

    fn trial(purpose: &str, o: &Outcome) -> Trial {
        let worst = |f: fn(&FileFigures) -> f64| {
            o.files
                .iter()
                .filter(|x| x.role == "data")
                .map(f)
                .fold(0.0, f64::max)
                / 1e6
        };
        Trial {
            purpose: purpose.into(),
            tps: o.tps,
            achieved_tps: o.achieved_tps,
            data_read_latency_ms: worst(|f| f.read_latency_ns.mean),
            data_write_latency_ms: worst(|f| f.data_write_mean_ns),
            log_write_latency_ms: o
                .files
                .iter()
                .find(|f| f.role == "log")
                .map_or(0.0, |f| f.log_durable_mean_ns / 1e6),
            seconds: o.result.measured_ms as f64 / 1e3,
            pass: o.verdict.passed(),
            failed_rules: o.verdict.failed_rules(),
        }
    }

    /// Bracketing (doubling after a pass, halving after a fail) then bisection with short
    /// trials, then a confirming run at full duration, backing off a few percent if it fails.
    fn search(&mut self) -> Result<RunResult> {
        let cfg = self.cfg;
        let short = trial_ms(cfg);
        let mut trials = Vec::new();
        let mut probe = |ctx: &mut Self, tps: f64, purpose: &str, ms: u64| -> Result<Outcome> {
            let o = ctx.run_at(tps, ms)?;
            trials.push(Self::trial(purpose, &o));
            Ok(o)
        };
        let first = probe(self, cfg.tps, "bracket", short)?;
        if Self::stopped(&first) {
            return self.finish(
                first,
                Some(Search {
                    max_tps: None,
                    trials,
                }),
            );
        }
        let (mut lo, mut hi) = if first.verdict.passed() {
            (cfg.tps, 0.0)
        } else {
            (0.0, cfg.tps)
        };
        let mut steps = 0;
        let floor = cfg.tps / 2f64.powi(MAX_BRACKET_STEPS as i32);
        loop {
            let next = if lo == 0.0 || hi == 0.0 {
                let t = if hi == 0.0 { lo * 2.0 } else { hi / 2.0 };
                (steps < MAX_BRACKET_STEPS && t >= floor).then_some((t, "bracket"))
            } else {
                (hi - lo > lo * SEARCH_RESOLUTION).then_some(((lo + hi) / 2.0, "bisect"))
            };
            let Some((tps, purpose)) = next else { break };
            steps += u32::from(purpose == "bracket");
            let o = probe(self, tps, purpose, short)?;
            if Self::stopped(&o) {
                let max = (lo > 0.0).then_some(lo);
                return self.finish(
                    o,
                    Some(Search {
                        max_tps: max,
                        trials,
                    }),
                );
            }
            if o.verdict.passed() {
                lo = tps;
            } else {
                hi = tps;
            }
        }
        if lo == 0.0 {
            // Not even the lowest rate passed: report a full-length run there.
            let mut o = probe(self, hi, "confirm", cfg.duration_ms)?;
            o.result.warnings.push(
                "no transaction rate passed: the storage cannot carry this profile at any rate tried"
                    .into(),
            );
            return self.finish(
                o,
                Some(Search {
                    max_tps: None,
                    trials,
                }),
            );
        }
        let mut candidate = lo;
        let mut backoffs = 0;
        loop {
            let o = probe(self, candidate, "confirm", cfg.duration_ms)?;
            if o.verdict.passed() || Self::stopped(&o) || backoffs == CONFIRM_BACKOFF.1 {
                let max = o.verdict.passed().then_some(candidate);
                return self.finish(
                    o,
                    Some(Search {
                        max_tps: max,
                        trials,
                    }),
                );
            }
            candidate *= 1.0 - CONFIRM_BACKOFF.0;
            backoffs += 1;
        }
    }

    /// The reported run with its section and verdict, saved.
    fn finish(&mut self, o: Outcome, search: Option<Search>) -> Result<RunResult> {
        let cfg = self.cfg;
        let model = cfg.engine.model();
        let mut r = o.result;
        r.database = Some(DatabaseResult {
            engine: cfg.engine.name().into(),
            target_tps: o.tps,
            rate_source: cfg.rate_source.clone(),
            achieved_tps: o.achieved_tps,
            target_iops: cfg.data_iops(o.tps),
            achieved_iops: o.achieved_iops,
            data_ios_per_transaction: DATA_IOS_PER_TRANSACTION,
            data_read_pct: DATA_READ_PCT,
            data_files: cfg.data_files,
            data_file_bytes: cfg.data_file_bytes,
            page_size_bytes: cfg.page_bytes,
            log_write_bytes: cfg.log_write_bytes,
            log_max_write_bytes: jobs::group_largest(cfg),
            log_durability: model.durability.name().into(),
            log_bytes: cfg.log_bytes,
            threads_per_file: cfg.threads,
            scans: cfg.scans,
            scan_read_bytes: jobs::scan_read_bytes(cfg),
            data_read_limit_ms: cfg.limits.data_read_ms,
            data_write_limit_ms: cfg.limits.data_write_ms,
            log_write_limit_ms: cfg.limits.log_write_ms,
            limits_source: if cfg.limits == model.limits {
                model.limits_source.into()
            } else {
                "given".into()
            },
            files: o.files,
            group_commit: o.group,
            checkpoints: o.checkpoints,
            search,
        });
        r.judge_unless_stopped(
            self.exec.signals().signalled(),
            o.verdict,
            "the validation was interrupted: it gives no verdict (only a run that goes to the end is judged)",
        );
        self.exec.save(&self.opts.results_path, &r)?;
        Ok(r)
    }
}
