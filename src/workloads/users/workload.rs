//! Simulated users as a workload: the population's description, made from the same
//! configuration and engine job as the run, and the way in from a job file.

use super::config::{self, DRAIN_MS, UsersConfig, UsersFile};
use super::source::Live;
use crate::job::{EngineKind, Job};
use crate::results::description::{self, Description, Line};
use crate::results::{JobSource, RunResult};
use crate::run::{Execute, RunOptions, Workload};
use crate::stats::host::host_info;
use crate::units::{format_count, format_ms, format_seconds, format_size};
use crate::workloads::{JobText, Keys, Overrides};
use anyhow::Result;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A population of simulated users ready to run.
#[derive(Debug)]
pub(crate) struct Users {
    /// Its configuration, resolved.
    pub cfg: UsersConfig,
    /// Where its progress goes while it runs (the live line reads it).
    pub progress: Arc<Live>,
}

impl Workload for Users {
    fn kind(&self) -> &'static str {
        "users"
    }

    fn describe(&self) -> Description {
        describe(&self.cfg)
    }

    fn jobs(&self) -> Vec<Job> {
        vec![self.cfg.job()]
    }

    fn notes(&self) -> Vec<String> {
        let memory = host_info().memory_bytes;
        (self.cfg.memory_warning(memory).into_iter())
            .map(|w| format!("warning: {w}"))
            .collect()
    }

    fn progress(&self) -> Option<Box<dyn Fn() -> String + Send>> {
        let shown = self.progress.clone();
        Some(Box::new(move || {
            let p95 = shown.send_mail_p95_ns.load(Ordering::Relaxed);
            format!(
                " · tasks {} done, {} unfinished · Send Mail p95 {}",
                format_count(shown.completed.load(Ordering::Relaxed)),
                format_count(shown.unfinished.load(Ordering::Relaxed)),
                if p95 > 0 {
                    crate::units::format_ns(p95 as f64)
                } else {
                    "—".into()
                }
            )
        }))
    }

    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> Result<RunResult> {
        super::run::run(&self.cfg, opts, exec, self.progress.clone())
    }
}

/// Loads a job file's `[users]` section with the flags of `storlab run` that apply.
pub(crate) fn load(file: &JobText, o: &Overrides) -> Result<Box<dyn Workload>> {
    let parsed: UsersFile = crate::job::file::parse_toml(file.path, file.text)?;
    let mut spec = parsed.users;
    // A users job's duration is simulated time, and it has no ramp.
    o.apply(Keys {
        duration: None,
        ramp: None,
        interval: &mut spec.interval,
        engine: &mut spec.engine,
        seed: &mut spec.seed,
        destroy_data: &mut spec.destroy_data,
        verify: &mut spec.verify,
        sample_blocks: &mut spec.sample_blocks,
    });
    let cfg = config::resolve(&spec, &file.path.display().to_string())
        .map_err(|e| o.blame(e, file, "users"))?;
    Ok(Box::new(Users {
        cfg,
        progress: Arc::default(),
    }))
}

/// Where a simulated-users run came from, as its results record it.
pub(crate) fn source(path: Option<&std::path::Path>) -> JobSource {
    JobSource::Users {
        path: path.map(|p| p.display().to_string()),
    }
}

/// What the population does: the users and their profile, the store, the simulated day, then
/// the one worker they drive, its targets' use, the timing and the engine.
pub(crate) fn describe(cfg: &UsersConfig) -> Description {
    let layout = cfg.layout();
    let mut d = Description::default();
    d.head.push(Line::new(
        "users",
        format!(
            "{} {} users ({} tasks a day each) on an Exchange {} store",
            format_count(cfg.users),
            cfg.profile.name,
            cfg.profile.tasks_per_day(),
            cfg.version.name()
        ),
    ));
    d.head.push(Line::new(
        "store",
        format!(
            "{} database{} of {} ({} mailboxes of {}), {} pages; a {} buffer cache ({} per mailbox); checkpoint depth {} ({})",
            cfg.databases,
            if cfg.databases == 1 { "" } else { "s" },
            format_size(layout.database_bytes()),
            format_count(cfg.mailboxes_per_database()),
            format_size(cfg.mailbox_bytes),
            format_size(cfg.page_bytes()),
            format_size(cfg.cache_pages() * cfg.page_bytes()),
            format_size(cfg.cache_per_mailbox),
            format_size(cfg.checkpoint_bytes()),
            if cfg.copies == 1 {
                "a stand-alone database"
            } else {
                "the active copy in a DAG"
            },
        ),
    ));
    let pace = if cfg.stress {
        "stress mode: each user's next task as soon as the last completed".to_string()
    } else if cfg.compress != 1.0 {
        format!(
            "{}× faster than real time",
            crate::units::format_number(cfg.compress)
        )
    } else {
        "in real time".to_string()
    };
    d.head.push(Line::new(
        "day",
        format!(
            "{} simulated of a day of {}, {pace}; the cache starts {}",
            format_seconds(cfg.duration_ms as f64 / 1e3),
            format_seconds(cfg.day_ms as f64 / 1e3),
            if cfg.preload {
                "preloaded with the mailboxes' pages"
            } else {
                "empty (cold, as LoadGen's)"
            }
        ),
    ));
    let job = cfg.job();
    d.body = description::workers(&job);
    d.body.push(Line::new(
        "timing",
        format!(
            "{} of tasks dispatched, then up to {} for the last ones to finish, in {} intervals",
            format_ms(cfg.dispatch_ms()),
            format_ms(DRAIN_MS),
            format_ms(job.interval_ms)
        ),
    ));
    d.body.push(Line::new(
        "engine",
        match cfg.engine {
            EngineKind::Null => "null (the model only: no I/O)".to_string(),
            _ => description::engine(&job),
        },
    ));
    d.body.push(Line::new(
        "seed",
        format!(
            "{} (the same seed gives the same users and tasks)",
            job.seed
        ),
    ));
    d
}
