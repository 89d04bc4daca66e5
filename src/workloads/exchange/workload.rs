//! The Exchange validation as a workload: the jobs each test type runs first and its
//! description, made from the same configuration and the same job builders as the runs, so
//! the dry run, the results and every report say what ran.

use super::{
    BACKUP_QUEUE_DEPTH, ExchangeConfig, ExchangeFile, Headroom, Load, RECOVERY_READS_PER_LOG,
    RECOVERY_WRITES_PER_LOG, TestType, validation,
};
use crate::job::Job;
use crate::results::description::{self, Description, Line};
use crate::results::{JobSource, RunResult};
use crate::run::{Execute, RunOptions, Workload};
use crate::units::{format_ms, format_number, format_pct, format_seconds, format_size};
use crate::workloads::{JobText, Keys, Overrides};
use anyhow::Result;

/// An Exchange validation ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    /// Its configuration, resolved.
    pub cfg: ExchangeConfig,
}

impl Workload for Exchange {
    fn kind(&self) -> &'static str {
        "exchange"
    }

    fn describe(&self) -> Description {
        describe(&self.cfg)
    }

    fn jobs(&self) -> Vec<Job> {
        vec![test_job(&self.cfg)]
    }

    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> Result<RunResult> {
        // The live views judge the target rate as the verdict will, with its own rule.
        if let Some(watch) = super::achieved_iops_watch(&self.cfg) {
            exec.observer().watch(&watch);
        }
        super::compare::run(&self.cfg, opts, exec)
    }
}

/// Loads a job file's `[exchange]` section with the flags of `storlab run` that apply.
pub(crate) fn load(file: &JobText, o: &Overrides) -> Result<Box<dyn Workload>> {
    let parsed: ExchangeFile = crate::job::file::parse_toml(file.path, file.text)?;
    let mut spec = parsed.exchange;
    o.apply(Keys {
        duration: Some(&mut spec.duration),
        ramp: Some(&mut spec.ramp),
        interval: &mut spec.interval,
        engine: &mut spec.engine,
        seed: &mut spec.seed,
        destroy_data: &mut spec.destroy_data,
        verify: &mut spec.verify,
        sample_blocks: &mut spec.sample_blocks,
    });
    let cfg = super::resolve(&spec, &file.path.display().to_string())
        .map_err(|e| o.blame(e, file, "exchange"))?;
    Ok(Box::new(Exchange { cfg }))
}

/// Where an Exchange validation came from, as its results record it.
pub(crate) fn source(path: Option<&std::path::Path>, preset: Option<&str>) -> JobSource {
    JobSource::of(path, preset, |path| JobSource::Exchange { path })
}

/// The job of the test: backup's or recovery's own; for the transactional tests, the test at
/// the target rate (closed loop in throughput mode) with the threads given, or with the first
/// trial's count when they are found by trial.
pub(crate) fn test_job(cfg: &ExchangeConfig) -> Job {
    if cfg.compare_cache {
        // The validation without the cache runs first.
        return test_job(&validation::side(cfg, None));
    }
    let db_bytes = cfg.database_bytes();
    match cfg.test {
        TestType::Backup => super::backup_job(cfg, db_bytes),
        TestType::Recovery => super::recovery_job(cfg, db_bytes),
        TestType::Performance | TestType::Stress => validation::test_job(
            cfg,
            cfg.threads.unwrap_or(cfg.thread_steps()[0]),
            match cfg.throughput_mode {
                Some(_) => Load::Max,
                None => Load::Rate(cfg.target_iops(cfg.mailboxes)),
            },
            db_bytes,
            cfg.duration_ms,
        ),
    }
}

/// The `test` line: the test, its profile at `mailboxes` and, for the transactional tests, the
/// target rate and where its headroom came from.
pub(crate) fn test_line(cfg: &ExchangeConfig, mailboxes: u64) -> String {
    let profile = format!(
        "{} mailbox{} of {}, {} IOPS per mailbox ({})",
        format_number(mailboxes as f64),
        if mailboxes == 1 { "" } else { "es" },
        format_size(cfg.mailbox_size_bytes),
        format_number(cfg.iops_per_mailbox),
        cfg.iops_source
    );
    match cfg.test {
        TestType::Performance | TestType::Stress => format!(
            "Exchange {} {} test of {profile}{}: a target of {} transactional IOPS",
            cfg.version.name(),
            cfg.test.name(),
            match cfg.headroom {
                Headroom::None => " and no headroom (the IOPS per mailbox is the target, as Jetstress takes it; --headroom adds some)".to_string(),
                Headroom::Given => format!(" + {} headroom", format_pct(cfg.headroom_pct)),
                Headroom::Calculator => format!(
                    " + {} headroom (the calculator's, on a rate derived from messages a day; --headroom 0% for none)",
                    format_pct(cfg.headroom_pct)
                ),
            },
            format_number(cfg.target_iops(mailboxes))
        ),
        TestType::Backup => format!(
            "Exchange {} backup test of {profile}: each database read once, sequentially, in {} reads, {} I/Os in flight; the full backup's time is scaled to the databases' real size",
            cfg.version.name(),
            format_size(cfg.backup_block_bytes),
            BACKUP_QUEUE_DEPTH
        ),
        TestType::Recovery => format!(
            "Exchange {} recovery test of {profile}: {} log files of 1 MiB replayed per database, each causing {} reads and {} writes of database pages",
            cfg.version.name(),
            cfg.log_files,
            RECOVERY_READS_PER_LOG,
            RECOVERY_WRITES_PER_LOG
        ),
    }
}

/// What the validation does: its profile and sizing, the layout, how threads and mailbox
/// counts are found, its limits, then the first job's workers and timing.
pub(crate) fn describe(cfg: &ExchangeConfig) -> Description {
    let mut d = Description::default();
    let real = |bytes: u64| (bytes as f64 / cfg.capacity_fraction) as u64;
    let db_bytes = cfg.database_bytes();
    let built = if cfg.capacity_fraction < 1.0 {
        format!(
            ", built at {} of their real size ({} each)",
            format_pct(cfg.capacity_fraction * 100.0),
            format_size(real(db_bytes))
        )
    } else {
        String::new()
    };
    let test = test_line(cfg, cfg.mailboxes);
    d.head.push(Line::new("test", test));
    let databases = match cfg.throughput_mode {
        Some((share, _)) => format!(
            "{}, filling {} of the free space of their paths, {} pages",
            cfg.databases,
            format_pct(share),
            format_size(cfg.page_bytes)
        ),
        None => format!(
            "{} of {}{built}, {} pages; logs of {} each",
            cfg.databases,
            format_size(db_bytes),
            format_size(cfg.page_bytes),
            format_size(cfg.log_stream_bytes())
        ),
    };
    d.head.push(Line::new("databases", databases));
    let paths = |p: &[std::path::PathBuf]| {
        p.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    d.head.push(Line::new("db paths", paths(&cfg.db_paths)));
    d.head.push(Line::new("log paths", paths(&cfg.log_paths)));
    if matches!(cfg.test, TestType::Performance | TestType::Stress) {
        transactional_lines(cfg, &mut d.head);
    }
    let job = test_job(cfg);
    d.body = description::job_body(&job);
    d
}

/// The transactional tests' threads, copies, timing, searches and limits.
fn transactional_lines(cfg: &ExchangeConfig, head: &mut Vec<Line>) {
    let trial = format_ms(validation::trial_ms(cfg));
    let scope = if cfg.global_threads() {
        "shared by all databases, as Jetstress 2013 and later count them"
    } else {
        "per database"
    };
    let threads = match cfg.threads {
        Some(t) if cfg.global_threads() => {
            let split = cfg.threads_of_databases(t);
            let (lo, hi) = (split.iter().min(), split.iter().max());
            let each = match (lo, hi) {
                (Some(lo), Some(hi)) if lo == hi => format!("{lo} each"),
                (Some(lo), Some(hi)) => format!("{lo} to {hi} each"),
                _ => String::new(),
            };
            format!("{t} {scope} ({each})")
        }
        Some(t) => format!("{t} {scope}"),
        None => format!(
            "found by trial: {} {scope} in turn, {trial} each (longer when a count needs it to give every rule enough I/Os), the first that passes (the workers below are the first trial's count)",
            cfg.thread_steps()
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let copies = match cfg.copies {
        1 => String::new(),
        n => format!(
            " · {n} copies of each database: its deeper checkpoint writes {} fewer pages, {} of its I/O reads",
            format_pct(super::COPIES_WRITE_REDUCTION * 100.0),
            format_pct(cfg.read_pct())
        ),
    };
    let ramp = cfg.ramp_ms.min(cfg.duration_ms / 4);
    if ramp < cfg.ramp_ms {
        head.push(Line::new(
            "ramp",
            format!(
                "{} before each run, not the {} asked: a ramp is at most a quarter of its run's measured time ({} here){}",
                format_ms(ramp),
                format_ms(cfg.ramp_ms),
                format_ms(cfg.duration_ms),
                if cfg.find_max_mailboxes || cfg.threads.is_none() {
                    ", and a trial's of its own"
                } else {
                    ""
                }
            ),
        ));
    }
    let judgeable = validation::judgeable_ms(cfg, cfg.mailboxes);
    if cfg.throughput_mode.is_none() && judgeable > cfg.duration_ms && !cfg.find_max_mailboxes {
        head.push(Line::new(
            "too short",
            format!(
                "at {} transactional IOPS a test of {} gives some rule fewer than {} I/Os to judge: it will be NOT MEASURED; run it for at least {}",
                format_number(cfg.target_iops(cfg.mailboxes)),
                format_ms(cfg.duration_ms),
                crate::results::verdict::MIN_LATENCY_SAMPLES,
                format_ms(judgeable.div_ceil(1000) * 1000)
            ),
        ));
    }
    let maintenance = if cfg.maintenance && cfg.cache.is_none() {
        "on"
    } else {
        "off"
    };
    head.push(Line::new(
        "threads",
        format!("{threads} · background maintenance {maintenance}{copies}"),
    ));
    if let Some((_, pct)) = cfg.throughput_mode {
        head.push(Line::new(
            "throughput",
            format!(
                "the closed-loop maximum found first ({trial}), then the test at {} of it",
                format_pct(pct)
            ),
        ));
    } else if cfg.find_max_mailboxes {
        head.push(Line::new(
            "search",
            format!(
                "the largest mailbox count that passes: doubling or halving from {}, then bisection to {}, with trials of {trial}; the count found is confirmed at full length",
                cfg.mailboxes,
                format_pct(validation::SEARCH_RESOLUTION * 100.0)
            ),
        ));
    }
    if let Some((devices, tier)) = &cfg.cache {
        head.push(Line::new(
            "cache",
            format!(
                "a tier of {} ({}, write-{}) in front of each database, on {}{}",
                match tier.size {
                    crate::job::cache::CacheSize::Bytes(b) => format_size(b),
                    crate::job::cache::CacheSize::Pct(p) => format!("{} of it", format_pct(p)),
                },
                tier.policy.name(),
                tier.write.name(),
                devices
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                if cfg.compare_cache {
                    "; the validation runs first without it, then with it"
                } else {
                    ""
                }
            ),
        ));
    }
    head.push(Line::new(
        "limits",
        format!(
            "average database read ≤ {}, average log write ≤ {}, every database read ≤ {} ({} test), no I/O errors{}",
            format_seconds(cfg.db_read_limit_ms / 1e3),
            format_seconds(cfg.log_write_limit_ms / 1e3),
            format_seconds(cfg.max_latency_ms / 1e3),
            cfg.test.name(),
            if cfg.throughput_mode.is_none() {
                ", the target rate achieved"
            } else {
                ""
            }
        ),
    ));
}

/// A rank's validation in a run over many hosts: the shared `[exchange]` section with its
/// paths' templates filled in for `place`. Over many hosts each host runs one performance or
/// stress test on its own databases.
#[cfg(any(feature = "mpi", test))]
pub(crate) fn for_rank(
    text: &str,
    label: &std::path::Path,
    place: &crate::run::cluster::Place,
) -> Result<Box<dyn Workload>, String> {
    let file: ExchangeFile =
        crate::job::file::parse_toml(label, text).map_err(|e| e.to_string())?;
    let mut spec = file.exchange;
    for paths in [
        &mut spec.db_paths,
        &mut spec.log_paths,
        &mut spec.cache_devices,
    ]
    .into_iter()
    .flatten()
    {
        for path in paths.iter_mut() {
            *path = place.expand(path)?;
        }
    }
    let cfg = super::resolve(&spec, &label.display().to_string()).map_err(|e| e.to_string())?;
    let one_run = matches!(cfg.test, TestType::Performance | TestType::Stress)
        && cfg.threads.is_some()
        && !cfg.find_max_mailboxes
        && !cfg.compare_cache
        && cfg.throughput_mode.is_none();
    if !one_run {
        return Err(
            "over many hosts, the Exchange validation runs one performance or stress test per host: give --threads (not auto), and leave out --find-max-mailboxes, --compare-cache and throughput mode".into(),
        );
    }
    Ok(Box::new(Exchange { cfg }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::cluster::Place;

    #[test]
    fn over_many_hosts_an_exchange_validation_is_one_test_per_host_on_its_own_paths() {
        let place = Place {
            rank: 1,
            ranks: 2,
            host: "h1".into(),
            node: 1,
        };
        let section = "[exchange]\nmailboxes = 50\nmailbox_size = \"32MiB\"\ncapacity = \"1%\"\ndatabases = 1\nthreads = 2\ndb_paths = [\"/data/{rank}\"]\nlog_paths = [\"/logs/{host}\"]\n";
        let label = std::path::Path::new("job.toml");
        let w = for_rank(section, label, &place).expect("one test per host");
        let job = &w.jobs()[0];
        assert!(
            job.targets[0].path.starts_with("/data/1"),
            "{:?}",
            job.targets[0].path
        );
        assert!(
            job.targets[1].path.starts_with("/logs/h1"),
            "{:?}",
            job.targets[1].path
        );
        let search = format!("{section}find_max_mailboxes = true\n");
        let e = for_rank(&search, label, &place).err().expect("refused");
        assert!(
            e.contains("runs one performance or stress test per host")
                && e.contains("--find-max-mailboxes"),
            "{e}"
        );
    }
}
