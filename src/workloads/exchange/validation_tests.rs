//! The Exchange validation's search and thread tuning with fake runs: storage that carries a
//! chosen transactional rate within the latency limits and fails above it.

use crate::job::Job;
use crate::results::{Phase, PhaseState, RunResult};
use crate::run::fake::{Fake, Made, class_rates};
use crate::run::{RunOptions, Signals};
use crate::units::{Dur, Percent};
use crate::workloads::exchange::section::TrialPurpose;
use crate::workloads::exchange::{self as model, ExchangeConfig, ExchangeSpec, ThreadsSpec};
use std::time::Duration;

/// A validation of 1,000 Exchange 2010 mailboxes (0.12 IOPS each with the headroom) in
/// `dir`, two databases, one thread each, for `minutes`.
fn config(dir: &std::path::Path, find_max: bool, threads: Option<u32>) -> ExchangeConfig {
    let spec = ExchangeSpec {
        mailboxes: Some(1000),
        db_paths: Some(vec![dir.to_path_buf()]),
        log_paths: Some(vec![dir.to_path_buf()]),
        capacity: Some(Percent(0.01)),
        threads: Some(match threads {
            Some(n) => ThreadsSpec::Count(n),
            None => ThreadsSpec::Word("auto".into()),
        }),
        duration: Some(Dur(Duration::from_secs(120))),
        ramp: Some(Dur(Duration::ZERO)),
        find_max_mailboxes: Some(find_max),
        ..ExchangeSpec::default()
    };
    model::resolve(&spec, "test").expect("a valid configuration")
}

/// Transactional I/Os per second a job asks for (database reads and writes, not logs or
/// maintenance).
fn transactional(job: &Job) -> f64 {
    job.classes
        .iter()
        .zip(class_rates(job))
        .filter(|(name, _)| name.ends_with("/read") || name.ends_with("/write"))
        .map(|(_, [r, w])| r + w)
        .sum()
}

/// Storage that serves `capacity` transactional IOPS with 2 ms reads; above it reads take
/// 40 ms (the limit is 20 ms).
fn storage(capacity: f64) -> impl FnMut(&Job, &Signals) -> Made {
    move |job, _| Made {
        read_ns: if transactional(job) <= capacity {
            2_000_000
        } else {
            40_000_000
        },
        ..Made::default()
    }
}

fn run(
    cfg: &ExchangeConfig,
    exec: &mut dyn crate::run::Execute,
    dir: &std::path::Path,
) -> RunResult {
    let mut opts = RunOptions::new(dir.join("x.json"), vec!["storlab".into()]);
    opts.description = Some(super::workload::describe(cfg));
    super::compare::run(cfg, &opts, exec).expect("the validation runs")
}

fn purposes(r: &RunResult) -> Vec<TrialPurpose> {
    r.trials.iter().flatten().map(|t| t.purpose).collect()
}

#[test]
fn the_search_brackets_bisects_and_confirms_the_largest_count_that_passes() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), true, Some(1));
    let per_mailbox = cfg.target_iops(1000) / 1000.0;
    // The storage carries 5,000 mailboxes' worth.
    let mut fake = Fake::new(storage(5000.0 * per_mailbox));
    let r = run(&cfg, &mut fake, dir.path());
    let max = r.max_mailboxes.expect("a maximum");
    assert!((4900..=5000).contains(&max), "maximum {max}");
    let p = purposes(&r);
    // 1000 passes, 2000 and 4000 pass, 8000 fails: then bisection, then one confirmation.
    assert_eq!(p[..4], [TrialPurpose::Bracket; 4]);
    let mailboxes: Vec<u64> = r.trials.iter().flatten().map(|t| t.mailboxes).collect();
    assert_eq!(mailboxes[..4], [1000, 2000, 4000, 8000]);
    assert!(
        p[4..p.len() - 1].iter().all(|&x| x == TrialPurpose::Bisect),
        "{p:?}"
    );
    assert_eq!(p.last(), Some(&TrialPurpose::Confirm));
    assert_eq!(mailboxes.last(), Some(&max));
    assert!(r.verdict.as_ref().unwrap().passed());
    // Trials are short; the confirmation runs the full duration.
    let durations: Vec<u64> = fake.jobs.iter().map(|(j, _)| j.duration_ms).collect();
    assert_eq!(*durations.last().unwrap(), cfg.duration_ms);
    assert!(
        durations[..durations.len() - 1]
            .iter()
            .all(|&d| d < cfg.duration_ms)
    );
    assert_eq!(r.exchange.as_ref().unwrap().mailboxes, max);
}

#[test]
fn a_failed_confirmation_backs_off_and_a_later_pass_is_the_maximum() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), true, Some(1));
    let per_mailbox = cfg.target_iops(1000) / 1000.0;
    let full = cfg.duration_ms;
    // Short trials see 5,000 mailboxes' worth; the full-length test only 4,300 (the
    // storage's cache fills): the confirmations at ~5,000, 4,750 and 4,512 fail, the third
    // back-off (~4,287) passes, and it is the maximum.
    let mut short = storage(5000.0 * per_mailbox);
    let mut long = storage(4300.0 * per_mailbox);
    let mut fake = Fake::new(move |job: &Job, s: &Signals| {
        if job.duration_ms == full {
            long(job, s)
        } else {
            short(job, s)
        }
    });
    let r = run(&cfg, &mut fake, dir.path());
    let confirms: Vec<(u64, bool)> = r
        .trials
        .iter()
        .flatten()
        .filter(|t| t.purpose == TrialPurpose::Confirm)
        .map(|t| (t.mailboxes, t.pass))
        .collect();
    assert_eq!(confirms.len(), 4, "{confirms:?}");
    assert!(confirms[..3].iter().all(|&(_, pass)| !pass), "{confirms:?}");
    let (last, pass) = confirms[3];
    assert!(pass, "{confirms:?}");
    assert_eq!(r.max_mailboxes, Some(last));
    assert!((4250..=4300).contains(&last), "{last}");
    assert!(r.verdict.as_ref().unwrap().passed());
}

#[test]
fn when_every_confirmation_fails_there_is_no_maximum() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), true, Some(1));
    let per_mailbox = cfg.target_iops(1000) / 1000.0;
    let full = cfg.duration_ms;
    let mut short = storage(5000.0 * per_mailbox);
    let mut long = storage(3000.0 * per_mailbox);
    let mut fake = Fake::new(move |job: &Job, s: &Signals| {
        if job.duration_ms == full {
            long(job, s)
        } else {
            short(job, s)
        }
    });
    let r = run(&cfg, &mut fake, dir.path());
    let confirms = purposes(&r)
        .iter()
        .filter(|&&p| p == TrialPurpose::Confirm)
        .count();
    assert_eq!(
        confirms,
        1 + crate::workloads::exchange::validation::CONFIRM_BACKOFF.1 as usize
    );
    assert_eq!(r.max_mailboxes, Some(0));
    assert!(!r.verdict.as_ref().unwrap().passed());
}

#[test]
fn when_even_the_first_count_fails_the_bracket_halves_down() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), true, Some(1));
    let per_mailbox = cfg.target_iops(1000) / 1000.0;
    let mut fake = Fake::new(storage(300.0 * per_mailbox));
    let r = run(&cfg, &mut fake, dir.path());
    let mailboxes: Vec<u64> = r.trials.iter().flatten().map(|t| t.mailboxes).collect();
    assert_eq!(mailboxes[..3], [1000, 500, 250]);
    let max = r.max_mailboxes.unwrap();
    assert!((294..=300).contains(&max), "{max}");
}

#[test]
fn an_interrupted_trial_ends_the_search_without_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), true, Some(1));
    let per_mailbox = cfg.target_iops(1000) / 1000.0;
    let mut serve = storage(5000.0 * per_mailbox);
    let mut runs = 0;
    // Ctrl-C during the third trial.
    let mut fake = Fake::new(move |job: &Job, s: &Signals| {
        runs += 1;
        let mut made = serve(job, s);
        if runs == 3 {
            s.interrupt();
            made.interrupted = true;
        }
        made
    });
    let r = run(&cfg, &mut fake, dir.path());
    assert_eq!(fake.jobs.len(), 3, "no trial after the interruption");
    assert!(r.verdict.is_none());
    let why = r.interrupted.reason().expect("interrupted");
    assert!(
        why.contains("the search for the largest mailbox count"),
        "{why}"
    );
    assert_eq!(r.max_mailboxes, Some(2000), "the last count that passed");
    let search = r.phases.iter().find(|p| p.name == Phase::Search).unwrap();
    assert_eq!(search.state, PhaseState::Interrupted);
}

#[test]
fn thread_tuning_keeps_the_first_count_that_passes() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), false, None);
    // One thread per database is too few: latency is fine only with 4 threads or more.
    let mut fake = Fake::new(|job: &Job, _: &Signals| {
        let threads = job
            .workers
            .iter()
            .filter(|w| w.name.starts_with("db1-thread"))
            .count();
        Made {
            read_ns: if threads >= 4 { 2_000_000 } else { 30_000_000 },
            ..Made::default()
        }
    });
    let r = run(&cfg, &mut fake, dir.path());
    let x = r.exchange.as_ref().unwrap();
    let tried: Vec<u32> = x.thread_trials.iter().map(|t| t.threads).collect();
    assert_eq!(tried, [1, 2, 4]);
    assert_eq!(x.threads_per_database, 4);
    assert!(r.verdict.as_ref().unwrap().passed());
    let threads = r.phases.iter().find(|p| p.name == Phase::Threads).unwrap();
    assert_eq!(threads.state, PhaseState::Completed);
}

/// `config` with a cache tier on each database (files in `dir`), compared with none.
fn compared(dir: &std::path::Path) -> ExchangeConfig {
    let mut cfg = config(dir, true, Some(1));
    let spec = ExchangeSpec {
        cache_devices: Some(vec![dir.join("c1"), dir.join("c2")]),
        cache_size: Some(crate::job::spec::CacheSizeSpec::Text("50%".into())),
        compare_cache: Some(true),
        mailboxes: Some(1000),
        db_paths: Some(vec![dir.to_path_buf()]),
        log_paths: Some(vec![dir.to_path_buf()]),
        capacity: Some(Percent(0.01)),
        ..ExchangeSpec::default()
    };
    let with = model::resolve(&spec, "test").expect("a valid configuration");
    cfg.cache = with.cache;
    cfg.compare_cache = with.compare_cache;
    cfg
}

fn cached(job: &Job) -> bool {
    job.targets.iter().any(|t| t.cache.is_some())
}

#[test]
fn compare_cache_searches_without_the_cache_then_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = compared(dir.path());
    cfg.maintenance = true;
    let per_mailbox = cfg.target_iops(1000) / 1000.0;
    // The disks carry 3,000 mailboxes' worth; with the cache, 6,000.
    let mut alone = storage(3000.0 * per_mailbox);
    let mut with = storage(6000.0 * per_mailbox);
    let mut fake = Fake::new(move |job: &Job, s: &Signals| {
        if cached(job) {
            with(job, s)
        } else {
            alone(job, s)
        }
    });
    let r = run(&cfg, &mut fake, dir.path());
    // Every run without the cache came first, then every run with it; neither side ran
    // maintenance (the tier cannot carry it), so both ran the same I/O.
    let sides: Vec<bool> = fake.jobs.iter().map(|(j, _)| cached(j)).collect();
    let first_cached = sides.iter().position(|&c| c).expect("runs with the cache");
    assert!(
        first_cached > 0 && sides[first_cached..].iter().all(|&c| c),
        "{sides:?}"
    );
    assert!(
        (fake.jobs.iter()).all(|(j, _)| j.workers.iter().all(|w| !w.name.contains("maintenance")))
    );
    let uncached_path = dir.path().join("x.uncached.json");
    assert!(
        fake.jobs[..first_cached]
            .iter()
            .all(|(_, o)| o.results_path == uncached_path)
    );
    assert!(
        fake.jobs[first_cached..]
            .iter()
            .all(|(_, o)| o.results_path == dir.path().join("x.json"))
    );
    let c = r
        .exchange
        .as_ref()
        .unwrap()
        .cache_comparison
        .clone()
        .expect("a comparison");
    let off = c.uncached.max_mailboxes.unwrap();
    let on = c.cached.max_mailboxes.unwrap();
    assert!((2940..=3000).contains(&off), "{off}");
    assert!((5880..=6000).contains(&on), "{on}");
    assert_eq!(
        r.max_mailboxes,
        Some(on),
        "the reported search is the cached one"
    );
    assert_eq!(c.uncached.pass, Some(true));
    assert_eq!(c.uncached.runs + c.cached.runs, fake.jobs.len());
    assert_eq!(c.uncached_results, uncached_path.display().to_string());
    // The search without the cache keeps its own results file, whole.
    let kept = crate::results::file::load(&uncached_path).expect("the uncached results");
    assert_eq!(kept.max_mailboxes, Some(off));
    assert!(kept.exchange.unwrap().cache_comparison.is_none());
    // Saved with the comparison.
    let saved = crate::results::file::load(&dir.path().join("x.json")).unwrap();
    assert_eq!(saved.exchange.unwrap().cache_comparison, Some(c));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("maintenance was left out of both"))
    );
}

#[test]
fn an_interrupted_search_without_the_cache_runs_nothing_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = compared(dir.path());
    let mut serve = storage(3000.0 * cfg.target_iops(1000) / 1000.0);
    let mut runs = 0;
    let mut fake = Fake::new(move |job: &Job, s: &Signals| {
        runs += 1;
        let mut made = serve(job, s);
        if runs == 2 {
            s.interrupt();
            made.interrupted = true;
        }
        made
    });
    let r = run(&cfg, &mut fake, dir.path());
    assert_eq!(fake.jobs.len(), 2);
    assert!(!fake.jobs.iter().any(|(j, _)| cached(j)));
    assert!(r.interrupted.stopped_early() && r.verdict.is_none());
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("the one with the cache did not run"))
    );
    assert!(
        dir.path().join("x.json").exists(),
        "the results are on disk"
    );
}

/// `config` of `duration` seconds with no ramp.
fn short(dir: &std::path::Path, seconds: u64) -> ExchangeConfig {
    let mut cfg = config(dir, true, Some(1));
    cfg.duration_ms = seconds * 1000;
    cfg
}

/// The search: trials of 3 s, storage that fails every count. It halves no lower than
/// the fewest mailboxes whose 3 s test gives every rule enough I/Os, never reports a trial with
/// no I/O as passed, and says none passed rather than "0 mailboxes".
#[test]
fn a_short_trial_search_never_goes_below_what_it_can_judge_nor_reports_zero() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = short(dir.path(), 3);
    let floor = super::validation::fewest_judgeable(&cfg);
    assert!(floor > 1 && floor < 1000, "{floor}");
    let mut fake = Fake::new(storage(0.0));
    let r = run(&cfg, &mut fake, dir.path());
    let trials = r.trials.as_ref().expect("trials");
    assert!(trials.iter().all(|t| t.mailboxes >= floor), "{trials:?}");
    assert_eq!(trials.last().map(|t| t.mailboxes), Some(floor));
    // Every run gave every rule enough I/Os: no rule of any trial was left unmeasured.
    for (job, _) in &fake.jobs {
        let rates = class_rates(job);
        for (name, [r, w]) in job.classes.iter().zip(rates) {
            let due = (r + w) * job.duration_ms as f64 / 1e3;
            assert!(due >= 20.0, "{name}: {due} I/Os in {} ms", job.duration_ms);
        }
    }
    assert!(
        trials.iter().all(|t| !t.pass && t.result == "FAIL"),
        "{trials:?}"
    );
    assert_eq!(r.max_mailboxes, Some(0));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains(&format!("no mailbox count passed, down to {floor}"))),
        "{:?}",
        r.warnings
    );
    crate::workloads::install_views();
    let text = crate::report::console::summary(&r, 0);
    assert!(!text.contains(": 0 mailboxes"), "{text}");
    assert!(text.contains("maximum mailboxes that pass: none"), "{text}");
}

/// A trial too short for its count is lengthened (up to the test's duration) until every rule
/// has enough I/Os, and the results say so.
#[test]
fn a_trial_too_short_for_its_count_is_lengthened() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = short(dir.path(), 120);
    let per_mailbox = cfg.target_iops(1000) / 1000.0;
    // Storage that carries 40 mailboxes' worth: the search halves to 31, where a trial of 20 s
    // gives a database too few log writes.
    let mut fake = Fake::new(storage(40.0 * per_mailbox));
    let r = run(&cfg, &mut fake, dir.path());
    let max = r.max_mailboxes.expect("a maximum");
    assert!((39..=40).contains(&max), "{max}");
    let short = super::validation::trial_ms(&cfg);
    let lengthened: Vec<u64> = (fake.jobs.iter())
        .map(|(j, _)| j.duration_ms)
        .filter(|&d| d > short && d < cfg.duration_ms)
        .collect();
    assert!(!lengthened.is_empty(), "{:?}", fake.jobs.len());
    assert!(
        r.warnings.iter().any(|w| w.contains("ran longer than")),
        "{:?}",
        r.warnings
    );
    // The header describes the reported test: the count found, not the count it started at.
    let d = r.description.as_ref().expect("a description");
    let test = d.head.iter().find(|l| l.label == "test").unwrap();
    assert!(
        test.text.contains(&format!("{max} mailboxes")),
        "{}",
        test.text
    );
}
