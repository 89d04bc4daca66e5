//! An Exchange validation: checks the layout (paths, free space), initialises databases and
//! log streams (first run), tunes threads when asked, runs the test (or searches for the
//! largest mailbox count that passes, then confirms it at full duration), and judges the
//! result. Each run is an ordinary [`super::execute`] of a job the profile produced. The
//! results record the validation's own phases (`initialise`, `throughput`, `threads`,
//! `search`, then the test's `ramp` and `measure`), each completed, interrupted or not
//! started; an interrupted validation says in which of them it stopped and gives no verdict.

use crate::Usage;
use crate::results::verdict::{MIN_LATENCY_SAMPLES, Verdict};
use crate::results::{Interrupted, Phase, PhaseRecord, PhaseState, RunResult};
use crate::run::{Execute, FromAccess, RunOptions};
use crate::workloads::exchange::section::{
    DatabaseFigures, ExchangeResult, Initialisation, Trial, TrialPurpose,
};
use crate::workloads::exchange::{self as model, ExchangeConfig, Load, TestType};
use anyhow::Result;
use std::path::Path;

/// Thread counts tried by `--threads auto`, smallest first.
pub(crate) const THREAD_STEPS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Bracketing doubles (or halves) the mailbox count at most this many times.
pub(crate) const MAX_BRACKET_STEPS: u32 = 16;
/// Bisection stops when the bracket is narrower than this fraction of its low end.
pub(crate) const SEARCH_RESOLUTION: f64 = 0.02;
/// A failed confirmation lowers the count by this fraction and confirms again, this many times.
pub(crate) const CONFIRM_BACKOFF: (f64, u32) = (0.05, 3);

/// Trial length: a sixth of the duration, between 5 and 60 seconds.
pub(crate) fn trial_ms(cfg: &ExchangeConfig) -> u64 {
    (cfg.duration_ms / 6)
        .clamp(5_000, 60_000)
        .min(cfg.duration_ms)
}

/// How much more than the rules' least number of samples a run is planned to give each class
/// (its I/Os at the window's edges, a slow start).
const SAMPLE_MARGIN: f64 = 1.5;

/// The measured time, ms, in which a run of `mailboxes` gives every rule of every database
/// enough I/Os to judge (its rarest kind of I/O, log writes or page writes, at least
/// [`SAMPLE_MARGIN`] × [`MIN_LATENCY_SAMPLES`] times).
pub(crate) fn judgeable_ms(cfg: &ExchangeConfig, mailboxes: u64) -> u64 {
    let per_db = cfg.target_iops(mailboxes) / cfg.databases as f64;
    let read = cfg.read_pct() / 100.0;
    let log = cfg.version.model().log_writes_per_db_io;
    let rarest = per_db * read.min(1.0 - read).min(log);
    if rarest <= 0.0 {
        return u64::MAX;
    }
    let seconds = SAMPLE_MARGIN * MIN_LATENCY_SAMPLES as f64 / rarest;
    (seconds * 1e3).ceil().min(u64::MAX as f64 / 2.0) as u64
}

/// The length of a trial of `mailboxes` (thread tuning, the search): [`trial_ms`], lengthened
/// to [`judgeable_ms`] when that is longer; `None` when even the test's full duration is too
/// short to judge it.
pub(crate) fn trial_length(cfg: &ExchangeConfig, mailboxes: u64) -> Option<u64> {
    let need = judgeable_ms(cfg, mailboxes);
    (need <= cfg.duration_ms).then(|| trial_ms(cfg).max(need))
}

/// The fewest mailboxes whose run of the full duration gives every rule enough I/Os.
pub(crate) fn fewest_judgeable(cfg: &ExchangeConfig) -> u64 {
    let (mut lo, mut hi) = (1u64, 1u64);
    while judgeable_ms(cfg, hi) > cfg.duration_ms && hi < 1 << 40 {
        lo = hi;
        hi *= 2;
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if judgeable_ms(cfg, mid) <= cfg.duration_ms {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    hi
}

/// The job of a transactional run (the test or a trial) of `duration_ms`: `threads` per
/// database at `load`, on databases of `db_bytes`, after a ramp of at most a quarter of it.
pub(crate) fn test_job(
    cfg: &ExchangeConfig,
    threads: u32,
    load: Load,
    db_bytes: u64,
    duration_ms: u64,
) -> crate::job::Job {
    let ramp = cfg.ramp_ms.min(duration_ms / 4);
    model::transactional_job(cfg, threads, load, db_bytes, duration_ms, ramp)
}

/// One side of a comparison with and without the cache tier: `cfg` with `cache` or without.
/// Background maintenance does not run with a cache tier: it is left out of both sides so that
/// they run the same I/O.
pub(crate) fn side(cfg: &ExchangeConfig, cache: Option<CacheSpec>) -> ExchangeConfig {
    ExchangeConfig {
        cache,
        compare_cache: false,
        maintenance: false,
        ..cfg.clone()
    }
}

/// A cache tier's devices and settings, as an [`ExchangeConfig`] holds them.
type CacheSpec = (Vec<std::path::PathBuf>, crate::job::cache::CacheTier);

/// Runs one validation: the test (or the search), backup or recovery.
pub(super) fn validate(
    cfg: &ExchangeConfig,
    opts: &RunOptions,
    exec: &mut dyn Execute,
) -> Result<RunResult> {
    let db_bytes = check_layout(cfg)?;
    let mut ctx = Context {
        cfg,
        opts,
        exec,
        db_bytes,
        init: None,
        phases: Phases::planned(cfg),
    };
    match cfg.test {
        TestType::Backup => ctx.backup(),
        TestType::Recovery => ctx.recovery(),
        TestType::Performance | TestType::Stress => ctx.transactional(),
    }
}

/// Checks that the paths exist (the default scratch directory is created) and that the
/// databases and logs fit in the free space; returns the size of each database.
fn check_layout(cfg: &ExchangeConfig) -> Result<u64> {
    for p in cfg.db_paths.iter().chain(&cfg.log_paths) {
        if p == Path::new(model::quick::DIR) {
            // storlab's own scratch directory: made as storlab makes its directories, and
            // refused when another user planted it.
            crate::engine::target::scratch_directory(p).map_err(Usage)?;
        }
        if !p.is_dir() {
            return Err(Usage(format!(
                "the path {} does not exist or is not a directory; create it (or mount the LUN there) first",
                p.display()
            ))
            .into());
        }
    }
    let db_bytes = match cfg.throughput_mode {
        None => cfg.database_bytes(),
        Some((capacity_pct, _)) => {
            let free: u64 = cfg.db_paths.iter().map(|p| available(p)).min().unwrap_or(0)
                * cfg.db_paths.len() as u64;
            let per_db = (free as f64 * capacity_pct / 100.0 / cfg.databases as f64) as u64;
            per_db / cfg.page_bytes * cfg.page_bytes
        }
    };
    if db_bytes < cfg.page_bytes * 16 {
        return Err(
            Usage("the databases would be too small to test; give them more space".into()).into(),
        );
    }
    // Space needed per filesystem, less what reusable files already occupy.
    let mut need: Vec<(u64, u64, String)> = Vec::new();
    for db in 0..cfg.databases {
        for (path, size) in [
            (cfg.database_path(db), db_bytes),
            (cfg.log_path(db), cfg.log_stream_bytes()),
        ] {
            let existing = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
            let dev = std::fs::metadata(&dir)
                .map(|m| std::os::unix::fs::MetadataExt::dev(&m))
                .unwrap_or(0);
            let extra = size.saturating_sub(existing);
            match need.iter_mut().find(|n| n.0 == dev) {
                Some(n) => n.1 += extra,
                None => need.push((dev, extra, dir.display().to_string())),
            }
        }
    }
    for (_, bytes, dir) in need {
        let free = available(Path::new(&dir));
        if bytes > free {
            return Err(Usage(format!(
                "the databases and logs need {} more bytes on the filesystem of {dir} but only {free} are free; use fewer or smaller mailboxes, a smaller --capacity, or more paths",
                bytes
            ))
            .into());
        }
    }
    Ok(db_bytes)
}

fn available(p: &Path) -> u64 {
    rustix::fs::statvfs(p)
        .map(|s| s.f_bavail.saturating_mul(s.f_frsize))
        .unwrap_or(0)
}

pub(super) struct Context<'a> {
    pub(super) cfg: &'a ExchangeConfig,
    pub(super) opts: &'a RunOptions,
    pub(super) exec: &'a mut dyn Execute,
    pub(super) db_bytes: u64,
    pub(super) init: Option<Initialisation>,
    phases: Phases,
}

/// A stage of the validation: the runs before the test, or the test itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// Finding the closed-loop maximum (`--throughput`).
    Throughput,
    /// `--threads auto`.
    Threads,
    /// `--find-max-mailboxes`: bracketing and bisection.
    Search,
    /// The test whose figures are reported (and judged).
    Test,
}

impl Stage {
    fn phase(self) -> Phase {
        match self {
            Stage::Throughput => Phase::Throughput,
            Stage::Threads => Phase::Threads,
            Stage::Search => Phase::Search,
            Stage::Test => Phase::Measure,
        }
    }
}

/// The validation's phases: initialisation of the databases and logs (the first run's
/// preparation), the stages before the test, and the test's ramp and measurement.
struct Phases {
    initialise: PhaseRecord,
    stages: Vec<PhaseRecord>,
    /// The test's own phases once it ran; before that, its ramp and measurement not started.
    test: Vec<PhaseRecord>,
}

impl Phases {
    fn planned(cfg: &ExchangeConfig) -> Phases {
        let not_started = PhaseRecord::not_started;
        let transactional = matches!(cfg.test, TestType::Performance | TestType::Stress);
        let mut stages = Vec::new();
        if transactional && cfg.throughput_mode.is_some() {
            stages.push(not_started(Phase::Throughput));
        }
        if transactional && cfg.threads.is_none() {
            stages.push(not_started(Phase::Threads));
        }
        if transactional && cfg.find_max_mailboxes && cfg.throughput_mode.is_none() {
            stages.push(not_started(Phase::Search));
        }
        let mut test = Vec::new();
        if transactional && cfg.ramp_ms.min(cfg.duration_ms / 4) > 0 {
            test.push(not_started(Phase::Ramp));
        }
        test.push(not_started(Phase::Measure));
        Phases {
            initialise: not_started(Phase::Initialise),
            stages,
            test,
        }
    }

    /// Records run `r` of `stage`; `first`: it initialised the databases and logs.
    fn record(&mut self, stage: Stage, r: &RunResult, first: bool) {
        let prepare = r.phases.iter().find(|p| p.name == Phase::Prepare);
        if first {
            if let Some(p) = prepare {
                self.initialise.state = p.state;
                self.initialise.seconds = p.seconds;
            }
        }
        if prepare.is_some_and(|p| p.state == PhaseState::Interrupted) && first {
            return;
        }
        if stage == Stage::Test {
            self.test = r
                .phases
                .iter()
                .filter(|p| p.name != Phase::Prepare)
                .cloned()
                .collect();
            return;
        }
        if let Some(s) = self.stages.iter_mut().find(|s| s.name == stage.phase()) {
            s.seconds += r
                .phases
                .iter()
                .filter(|p| !first || p.name != Phase::Prepare)
                .map(|p| p.seconds)
                .sum::<f64>();
            s.state = PhaseState::of(!r.interrupted.stopped_early());
        }
    }

    fn list(&self) -> Vec<PhaseRecord> {
        std::iter::once(&self.initialise)
            .chain(&self.stages)
            .chain(&self.test)
            .cloned()
            .collect()
    }
}

/// What one transactional run showed.
struct Outcome {
    result: RunResult,
    dbs: Vec<DatabaseFigures>,
    verdict: Verdict,
    achieved: f64,
}

impl Context<'_> {
    /// Runs `job` as part of `stage`; `what` says which run it is (for the reason of an
    /// interruption).
    pub(super) fn exec(
        &mut self,
        job: &crate::job::Job,
        stage: Stage,
        what: &str,
    ) -> Result<RunResult> {
        let mut r = self.exec.execute(job, self.opts, &FromAccess).map_err(|e| {
            // Exchange always uses O_DIRECT: say which of its own settings to change.
            match e.downcast_ref::<Usage>() {
                Some(Usage(m)) if m.ends_with(crate::run::prepare::BUFFERED_HINT) => anyhow::Error::from(Usage(format!(
                    "{}; with storlab exchange, use a --page-size (or --backup-block-size) that is a multiple of it: Exchange itself uses 8 KiB (2007) or 32 KiB (2010 and later) pages",
                    m.trim_end_matches(crate::run::prepare::BUFFERED_HINT)
                ))),
                _ => e,
            }
        })?;
        let first = self.init.is_none();
        if first {
            let prepare = r.phases.iter().find(|p| p.name == Phase::Prepare);
            self.init = Some(Initialisation {
                seconds: prepare.map(|p| p.seconds).unwrap_or(0.0),
                reused: r.targets.iter().all(|t| t.prepare.reused),
                written_bytes: r.targets.iter().map(|t| t.prepare.written_bytes).sum(),
            });
        }
        self.phases.record(stage, &r, first);
        if r.interrupted.stopped_early() && self.exec.signals().signalled() {
            // Say where in the validation it stopped, not only where in this run.
            let stopped_in = r
                .phases
                .iter()
                .find(|p| p.state == PhaseState::Interrupted)
                .map_or(Phase::Measure, |p| p.name);
            let during = if first && stopped_in == Phase::Prepare {
                "database initialisation".to_string()
            } else {
                format!("{what} ({stopped_in})")
            };
            if let Some(why) = self.exec.signals().reason(&during) {
                r.interrupted = Interrupted::Yes(why);
            }
        }
        r.phases = self.phases.list();
        Ok(r)
    }

    /// Gives `r` its verdict, unless Ctrl-C or SIGTERM stopped the validation: a test that did
    /// not run to the end is not judged.
    pub(super) fn judge(&self, r: &mut RunResult, verdict: Verdict) {
        r.judge_unless_stopped(
            self.exec.signals().signalled(),
            verdict,
            "the validation was interrupted: it gives no verdict (only a test that runs to the end is judged)",
        );
    }

    fn stopped(r: &RunResult) -> bool {
        r.interrupted.stopped_early()
    }

    /// Runs the transactional model at `mailboxes` with `threads` (as the version counts
    /// them).
    fn transactional_run(
        &mut self,
        mailboxes: u64,
        threads: u32,
        duration_ms: u64,
        load: Option<Load>,
        (stage, what): (Stage, &str),
    ) -> Result<Outcome> {
        let cfg = self.cfg;
        let target = cfg.target_iops(mailboxes);
        let load = load.unwrap_or(Load::Rate(target));
        let job = test_job(cfg, threads, load, self.db_bytes, duration_ms);
        let result = self.exec(&job, stage, what)?;
        let dbs = model::database_figures(cfg, self.db_bytes, &result.classes);
        let achieved: f64 = dbs
            .iter()
            .map(|d| d.db_reads_per_s + d.db_writes_per_s)
            .sum();
        let errors = result.totals.errors();
        let target_rule = matches!(load, Load::Rate(_)).then_some(match load {
            Load::Rate(r) => r,
            Load::Max => 0.0,
        });
        let window = model::Window {
            seconds: result.measured_ms as f64 / 1e3,
            workers: cfg.threads_of_databases(threads).iter().sum(),
        };
        let mut rules = model::rules(
            cfg,
            &dbs,
            errors,
            target_rule.filter(|_| cfg.throughput_mode.is_none()),
            achieved,
            window,
        );
        rules.extend(crate::run::verification_rule(&result));
        let verdict = Verdict::weighed(rules, result.cost.as_ref());
        Ok(Outcome {
            result,
            dbs,
            verdict,
            achieved,
        })
    }

    fn trial(
        purpose: TrialPurpose,
        mailboxes: u64,
        threads: u32,
        target: f64,
        o: &Outcome,
    ) -> Trial {
        // The worst database's figure (0 when no database timed that kind of I/O: views
        // show the trial's latencies only when it measured them).
        let worst = |f: &dyn Fn(&DatabaseFigures) -> Option<f64>| {
            (o.dbs.iter().filter_map(f).reduce(f64::max)).map_or(0.0, |ns| ns / 1e6)
        };
        let timed = |l: &crate::workloads::exchange::section::LatencyBrief, v: f64| {
            (l.max > 0).then_some(v)
        };
        Trial {
            purpose,
            mailboxes,
            threads,
            target_iops: target,
            achieved_iops: o.achieved,
            db_read_latency_ms: worst(&|d| timed(&d.db_read_latency_ns, d.db_read_latency_ns.mean)),
            log_write_latency_ms: worst(&|d| {
                timed(&d.log_write_latency_ns, d.log_write_latency_ns.mean)
            }),
            max_read_latency_ms: worst(&|d| {
                timed(&d.db_read_latency_ns, d.db_read_latency_ns.max as f64)
            }),
            seconds: o.result.measured_ms as f64 / 1e3,
            pass: o.verdict.passed(),
            failed_rules: o.verdict.failed_rules(),
            result: o.verdict.result.clone(),
        }
    }

    fn transactional(&mut self) -> Result<RunResult> {
        let cfg = self.cfg;
        let mut thread_trials = Vec::new();
        let mut throughput_max = None;
        let mut load = None;
        if let Some((_, pct)) = cfg.throughput_mode {
            // Find the closed-loop maximum, then run at the asked share of it.
            let threads = cfg.threads.unwrap_or(4);
            let o = self.transactional_run(
                cfg.mailboxes,
                threads,
                trial_ms(cfg),
                Some(Load::Max),
                (Stage::Throughput, "the search for the maximum throughput"),
            )?;
            if Self::stopped(&o.result) {
                return self.finish(o, threads, thread_trials, None, None);
            }
            throughput_max = Some(o.achieved);
            if pct < 100.0 {
                load = Some(Load::Rate(o.achieved * pct / 100.0));
            } else {
                load = Some(Load::Max);
            }
        }
        let threads = match cfg.threads {
            Some(t) => t,
            None => {
                let mut chosen = None;
                let steps = cfg.thread_steps();
                let trial = trial_length(cfg, cfg.mailboxes).unwrap_or(cfg.duration_ms);
                for &t in &steps {
                    let what = format!(
                        "thread tuning, the trial of {t} thread{} {}",
                        if t == 1 { "" } else { "s" },
                        if cfg.global_threads() {
                            "shared by the databases"
                        } else {
                            "per database"
                        }
                    );
                    let o = self.transactional_run(
                        cfg.mailboxes,
                        t,
                        trial,
                        load,
                        (Stage::Threads, &what),
                    )?;
                    thread_trials.push(Self::trial(
                        TrialPurpose::Threads,
                        cfg.mailboxes,
                        t,
                        cfg.target_iops(cfg.mailboxes),
                        &o,
                    ));
                    if Self::stopped(&o.result) {
                        return self.finish(o, t, thread_trials, None, throughput_max);
                    }
                    if o.verdict.passed() {
                        chosen = Some(t);
                        break;
                    }
                }
                match chosen {
                    Some(t) => t,
                    None => {
                        // Say so plainly: run the full test at the largest count so the report
                        // shows why it fails.
                        let t = *steps.last().expect("non-empty");
                        let mut o = self.transactional_run(
                            cfg.mailboxes,
                            t,
                            cfg.duration_ms,
                            load,
                            (Stage::Test, "the test"),
                        )?;
                        o.result.warnings.push(format!(
                            "no thread count from {} to {t} {} reached the target within the thresholds: the storage cannot carry {} mailboxes of this profile",
                            steps[0],
                            if cfg.global_threads() { "in all" } else { "per database" },
                            cfg.mailboxes
                        ));
                        return self.finish(o, t, thread_trials, None, throughput_max);
                    }
                }
            }
        };
        if cfg.find_max_mailboxes && cfg.throughput_mode.is_none() {
            return self.search(threads, thread_trials);
        }
        let o = self.transactional_run(
            cfg.mailboxes,
            threads,
            cfg.duration_ms,
            load,
            (Stage::Test, "the test"),
        )?;
        self.finish(o, threads, thread_trials, None, throughput_max)
    }

    /// Bracketing then bisection with short trials, then a confirming run at full duration.
    /// No count is tried whose run of the full duration would give a rule too few I/Os to
    /// judge, and a trial too short for its count is lengthened until it is not.
    fn search(&mut self, threads: u32, thread_trials: Vec<Trial>) -> Result<RunResult> {
        let cfg = self.cfg;
        let mut trials = Vec::new();
        let floor = fewest_judgeable(cfg);
        let length = |m: u64| trial_length(cfg, m.max(floor)).unwrap_or(cfg.duration_ms);
        let mut probe = |ctx: &mut Self,
                         m: u64,
                         purpose: TrialPurpose,
                         ms: u64|
         -> Result<Outcome> {
            let (stage, what) = if purpose == TrialPurpose::Confirm {
                (Stage::Test, format!("the confirming test of {m} mailboxes"))
            } else {
                (
                    Stage::Search,
                    format!(
                        "the search for the largest mailbox count, the {purpose} trial of {m} mailboxes"
                    ),
                )
            };
            let o = ctx.transactional_run(m, threads, ms, None, (stage, &what))?;
            trials.push(Self::trial(purpose, m, threads, cfg.target_iops(m), &o));
            Ok(o)
        };
        let mut notes = Vec::new();
        let start = cfg.mailboxes.max(floor).max(1);
        if start > cfg.mailboxes {
            notes.push(format!(
                "the search started at {start} mailboxes, not {}: fewer give some rule too few I/Os to judge in a test of {} (at least {} of each kind)",
                cfg.mailboxes,
                crate::units::format_ms(cfg.duration_ms),
                MIN_LATENCY_SAMPLES
            ));
        }
        let mut longest = length(start);
        let first = probe(self, start, TrialPurpose::Bracket, longest)?;
        if Self::stopped(&first.result) {
            return self.finish(first, threads, thread_trials, Some((None, trials)), None);
        }
        let (mut lo, mut hi) = if first.verdict.passed() {
            (start, 0)
        } else {
            (0, start)
        };
        let mut bracket_steps = 0;
        loop {
            // Bracket (double after a pass, halve after a fail, never below the fewest
            // mailboxes that can be judged) until a pass and a fail are known, then bisect
            // down to the resolution.
            let next = if lo == 0 || hi == 0 {
                let m = if hi == 0 { lo * 2 } else { (hi / 2).max(floor) };
                (bracket_steps < MAX_BRACKET_STEPS && m != hi).then_some((m, TrialPurpose::Bracket))
            } else {
                let wide = hi - lo > ((lo as f64 * SEARCH_RESOLUTION) as u64).max(1);
                wide.then_some((lo + (hi - lo) / 2, TrialPurpose::Bisect))
            };
            let Some((m, purpose)) = next else {
                if lo == 0 {
                    // No count passed, down to the fewest that can be judged (or the bracket
                    // ran out): report the last failing count at full length.
                    let mut o = probe(self, hi, TrialPurpose::Confirm, cfg.duration_ms)?;
                    o.result.warnings.extend(notes);
                    o.result.warnings.push(if hi == floor {
                        format!(
                            "no mailbox count passed, down to {hi}: fewer mailboxes give some rule too few I/Os to judge in a test of {}, so the search tried none; give a longer --duration to search lower",
                            crate::units::format_ms(cfg.duration_ms)
                        )
                    } else {
                        format!(
                            "no mailbox count passed, down to {hi}: the storage cannot carry this profile at any load tried"
                        )
                    });
                    return self.finish(o, threads, thread_trials, Some((None, trials)), None);
                }
                if hi == 0 {
                    // The bracket ran out while every count passed.
                    hi = lo * 2;
                    continue;
                }
                break;
            };
            if purpose == TrialPurpose::Bracket {
                bracket_steps += 1;
            }
            longest = longest.max(length(m));
            let o = probe(self, m, purpose, length(m))?;
            if Self::stopped(&o.result) {
                let max = (lo > 0).then_some(lo);
                return self.finish(o, threads, thread_trials, Some((max, trials)), None);
            }
            if o.verdict.passed() {
                lo = m;
            } else {
                hi = m;
            }
        }
        if longest > trial_ms(cfg) {
            notes.push(format!(
                "trials of few mailboxes ran longer than {} (up to {}), so that every rule had at least {} I/Os to judge",
                crate::units::format_ms(trial_ms(cfg)),
                crate::units::format_ms(longest),
                MIN_LATENCY_SAMPLES
            ));
        }
        // Confirm at full length; a failure backs off by a few percent, a few times. The last
        // confirmation run is the reported test, whether it passed or not.
        let mut candidate = lo;
        let mut backoffs = 0;
        loop {
            let mut o = probe(self, candidate, TrialPurpose::Confirm, cfg.duration_ms)?;
            let next = ((candidate as f64) * (1.0 - CONFIRM_BACKOFF.0)) as u64;
            if o.verdict.passed()
                || Self::stopped(&o.result)
                || backoffs == CONFIRM_BACKOFF.1
                || next < floor.max(1)
            {
                let max = o.verdict.passed().then_some(candidate);
                o.result.warnings.extend(notes);
                return self.finish(o, threads, thread_trials, Some((max, trials)), None);
            }
            candidate = next;
            backoffs += 1;
        }
    }

    fn finish(
        &mut self,
        o: Outcome,
        threads: u32,
        thread_trials: Vec<Trial>,
        search: Option<(Option<u64>, Vec<Trial>)>,
        throughput_max: Option<f64>,
    ) -> Result<RunResult> {
        let cfg = self.cfg;
        let mut r = o.result;
        let mailboxes = search
            .as_ref()
            .and_then(|s| s.1.last().map(|t| t.mailboxes))
            .unwrap_or(cfg.mailboxes);
        let target = match (cfg.throughput_mode, &search) {
            (Some(_), _) => 0.0,
            _ => cfg.target_iops(mailboxes),
        };
        r.exchange = Some(self.summary(
            mailboxes,
            target,
            o.achieved,
            threads,
            o.dbs,
            thread_trials,
            throughput_max,
        ));
        self.judge(&mut r, o.verdict);
        if search.is_some() {
            // The header says what the reported test ran: the count found, not the one the
            // search started from.
            if let Some(d) = r.description.as_mut() {
                for line in d.head.iter_mut().filter(|l| l.label == "test") {
                    line.text = super::workload::test_line(cfg, mailboxes);
                }
                d.body = crate::results::description::job_body(&r.job);
            }
        }
        if let Some((max, trials)) = search {
            r.max_mailboxes = Some(max.unwrap_or(0));
            r.trials = Some(trials);
        }
        if cfg.capacity_fraction < 1.0 {
            r.warnings.push(format!(
                "databases were built at {} of their real size ({} each instead of {}): caches hold a larger share of them than they would in production; for a validation, build them at full size (--capacity 100%) on the storage to validate",
                crate::units::format_pct(cfg.capacity_fraction * 100.0),
                crate::units::format_size(self.db_bytes),
                crate::units::format_size((self.db_bytes as f64 / cfg.capacity_fraction) as u64)
            ));
        }
        self.exec.save(&self.opts.results_path, &r)?;
        Ok(r)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn summary(
        &self,
        mailboxes: u64,
        target: f64,
        achieved: f64,
        threads: u32,
        databases: Vec<DatabaseFigures>,
        thread_trials: Vec<Trial>,
        throughput_max: Option<f64>,
    ) -> ExchangeResult {
        let cfg = self.cfg;
        ExchangeResult {
            version: cfg.version.name().into(),
            test: cfg.test.name().into(),
            mailboxes,
            mailbox_size_bytes: cfg.mailbox_size_bytes,
            iops_per_mailbox: cfg.iops_per_mailbox,
            iops_source: cfg.iops_source.clone(),
            headroom_pct: cfg.headroom_pct,
            target_iops: target,
            achieved_iops: achieved,
            database_count: cfg.databases,
            database_size_bytes: self.db_bytes,
            capacity_fraction: cfg.capacity_fraction,
            page_size_bytes: cfg.page_bytes,
            threads_per_database: match threads {
                0 => 0,
                t => cfg.threads_of_databases(t).into_iter().max().unwrap_or(0),
            },
            threads_shared: (cfg.global_threads() && threads > 0).then_some(threads),
            copies: cfg.copies,
            maintenance: cfg.maintenance,
            db_paths: cfg
                .db_paths
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            log_paths: cfg
                .log_paths
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            db_read_latency_limit_ms: cfg.db_read_limit_ms,
            log_write_latency_limit_ms: cfg.log_write_limit_ms,
            max_latency_limit_ms: cfg.max_latency_ms,
            throughput_max_iops: throughput_max,
            initialisation: self.init.clone().unwrap_or_default(),
            databases,
            thread_trials,
            backup: None,
            recovery: None,
            cache_comparison: None,
        }
    }
}
