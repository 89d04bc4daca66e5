//! A simulated-users run: the population is built (and its cache preloaded, if asked), the
//! engine job runs with the population driving its worker, and the results gain the users
//! part and the verdict: every task type's 95th percentile under its limit (Send Mail: 1 s),
//! every planned task completed, not overloaded, and the Exchange validation's storage rules.

use crate::engine::source::{Next, Request, RequestSource};
use crate::engine::worker::WorkerReport;
use crate::results::verdict::{Comparison, Measure, Rule, Verdict};
use crate::results::{self, RunResult};
use crate::run::{Driver, Execute, FromAccess, RunOptions, Sources, WorkerInput};
use crate::stats::steady::{SteadyRule, first_steady_round};
use crate::workloads::exchange;
use crate::workloads::users::config::UsersConfig;
use crate::workloads::users::profile::Task;
use crate::workloads::users::section::{
    SimulatorCost, StoreResult, TaskResult, UsersInterval, UsersResult, UsersSetup,
};
use crate::workloads::users::source::{Live, Population};
use anyhow::{Result, anyhow};
use std::sync::{Arc, Mutex, MutexGuard};

/// The rule on overload (LoadGen's: unfinished tasks over 1.5 × users), judged on the most
/// tasks unfinished at once.
pub(crate) const OVERLOAD_RULE: &str =
    "not overloaded (the most tasks unfinished at once ≤ 1.5 × users)";

/// The population drives the first worker (the users' job has one); it is taken back, with its
/// per-task figures, when the run ends.
struct PopulationSources {
    population: Mutex<Option<Population>>,
}

impl Sources for PopulationSources {
    fn drive(&self, input: WorkerInput<'_>, driver: Driver<'_, '_, '_>) -> WorkerReport {
        let mut held = self.population.lock().unwrap_or_else(|e| e.into_inner());
        match (input.index, held.as_mut()) {
            (0, Some(p)) => {
                p.restart_clock();
                driver.run(&mut Driving(held))
            }
            _ => {
                drop(held);
                FromAccess.drive(input, driver)
            }
        }
    }
}

/// The population, held by the worker it drives for as long as that worker runs.
struct Driving<'s>(MutexGuard<'s, Option<Population>>);

impl Driving<'_> {
    fn population(&mut self) -> &mut Population {
        self.0.as_mut().expect("held only while there")
    }
}

impl RequestSource for Driving<'_> {
    fn next(&mut self, now_ns: u64) -> Next {
        self.population().next(now_ns)
    }

    fn completed(&mut self, request: &Request, result: i32, now_ns: u64) {
        self.population().completed(request, result, now_ns)
    }

    fn unissued(&self, until_ns: u64) -> u64 {
        self.0.as_ref().map_or(0, |p| p.unissued(until_ns))
    }
}

impl Drop for Driving<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.0.as_mut() {
            p.stop_clock();
        }
    }
}

/// Runs `cfg` through `exec` (its population's progress shown through `live`) and writes its
/// results file.
pub(crate) fn run(
    cfg: &UsersConfig,
    opts: &RunOptions,
    exec: &mut dyn Execute,
    live: Arc<Live>,
) -> Result<RunResult> {
    let job = cfg.job();
    let sources = PopulationSources {
        population: Mutex::new(Some(
            cfg.population(live).map_err(|e| anyhow!(crate::Usage(e)))?,
        )),
    };
    let mut result = exec.execute(&job, opts, &sources)?;
    let mut population = sources
        .population
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .ok_or_else(|| anyhow!("the population was lost"))?;
    let mut users = users_result(cfg, &mut population, result.measured_ms);
    let mut rules = task_rules(cfg, &users);
    let paths: Vec<_> = (0..cfg.databases)
        .map(|db| (cfg.database_path(db), cfg.log_path(db)))
        .collect();
    let dbs = exchange::database_figures_at(&paths, cfg.layout().database_bytes(), &result.classes);
    // Without a durable commit there is no log write to judge.
    rules.extend(exchange::storage_rules(&dbs, &cfg.storage_limits, false));
    users.databases = dbs;
    // The integrity rules (errors, verification) the run judged already.
    rules.extend(result.verdict.take().into_iter().flat_map(|v| v.rules));
    if !rules.iter().any(|r| r.rule == results::verdict::IO_ERRORS) {
        let errors: u64 = result
            .classes
            .values()
            .map(|c| c.read.errors + c.write.errors)
            .sum();
        rules.push(Rule::judge(
            results::verdict::IO_ERRORS,
            errors as f64,
            Comparison::AtMost,
            0.0,
            "errors",
        ));
    }
    if let Some(w) = cfg.memory_warning(result.host.memory_bytes) {
        result.warnings.push(w);
    }
    if let Some(o) = &users.overloaded {
        result.warnings.push(format!(
            "overloaded at {:.1} s: {} unfinished tasks, over the limit of {} (1.5 × {} users); the run stopped, as LoadGen's does",
            o.at_s, o.unfinished, o.limit, cfg.users
        ));
    }
    result.verdict = Some(Verdict::weighed(rules, result.cost.as_ref()));
    result.users = Some(users);
    exec.save(&opts.results_path, &result)?;
    Ok(result)
}

/// The users part of the results.
fn users_result(cfg: &UsersConfig, p: &mut Population, measured_ms: u64) -> UsersResult {
    let now_ns = measured_ms * 1_000_000;
    let series = p.finish_series(now_ns);
    let counts = p.store_counts();
    let ages = p.unfinished_ages(now_ns);
    let tasks: Vec<TaskResult> = Task::ALL
        .iter()
        .zip(p.tallies())
        .filter(|(_, t)| t.dispatched > 0)
        .map(|(&task, t)| {
            let mut with_unfinished = t.latency.clone();
            let mut unfinished = 0;
            for &(_, age) in ages.iter().filter(|a| a.0 == task) {
                with_unfinished.record(age);
                unfinished += 1;
            }
            TaskResult {
                task: task.name().into(),
                planned: t.dispatched,
                completed: t.completed,
                failed: t.failed,
                latency: t.latency.summary(),
                service: t.service.summary(),
                unfinished,
                p95_with_unfinished_ns: with_unfinished.quantile(0.95),
            }
        })
        .collect();
    let (dispatched, unfinished) = p.dispatched_unfinished();
    let completed: u64 = tasks.iter().map(|t| t.completed).sum();
    let (planned, interval_ns) = p.planned();
    let cpu_ns = p.cpu_ns();
    let refs = counts.hits + counts.misses;
    let messages = p.messages();
    UsersResult {
        setup: UsersSetup {
            users: cfg.users,
            profile: cfg.profile.name.clone(),
            tasks_per_user_per_day: cfg.profile.tasks_per_day(),
            version: cfg.version.name().into(),
            databases: cfg.databases,
            page_bytes: cfg.page_bytes(),
            mailbox_bytes: cfg.mailbox_bytes,
            cache_per_mailbox_bytes: cfg.cache_per_mailbox,
            checkpoint_bytes: cfg.checkpoint_bytes(),
            day_s: cfg.day_ms as f64 / 1e3,
            duration_s: cfg.duration_ms as f64 / 1e3,
            compress: cfg.compress,
            stress: cfg.stress,
            dispatch_interval_s: interval_ns / 1e9,
            warm_up: if cfg.preload { "preloaded" } else { "cold" }.into(),
            log_per_body_byte: cfg.knobs().log_per_body_byte,
            secondary_indexes: cfg.knobs().secondary_indexes,
            index_entry_bytes: cfg.knobs().index_entry_bytes,
        },
        planned,
        dispatched,
        completed,
        failed: tasks.iter().map(|t| t.failed).sum(),
        unfinished,
        peak_unfinished: (series.iter().map(|s| s.unfinished))
            .chain(p.overloaded().map(|o| o.unfinished))
            .chain([unfinished])
            .max()
            .unwrap_or(0),
        overloaded: p.overloaded().cloned(),
        tasks,
        store: StoreResult {
            cache_hits: counts.hits,
            cache_misses: counts.misses,
            cache_hit_pct: if refs > 0 {
                counts.hits as f64 * 100.0 / refs as f64
            } else {
                0.0
            },
            cache_pages: cfg.cache_pages(),
            commits: counts.commits,
            durable_commits: counts.durable_commits,
            log_bytes: counts.log_bytes,
            messages,
            log_bytes_per_message: if messages > 0 {
                counts.log_bytes as f64 / messages as f64
            } else {
                0.0
            },
            eviction_writes: counts.eviction_writes,
            max_checkpoint_depth_bytes: series
                .iter()
                .map(|s| s.checkpoint_depth_bytes)
                .max()
                .unwrap_or(0),
        },
        cost: SimulatorCost {
            cpu_s: cpu_ns as f64 / 1e9,
            cpu_pct_of_core: if measured_ms > 0 {
                cpu_ns as f64 / 1e6 / measured_ms as f64 * 100.0
            } else {
                0.0
            },
            cpu_per_task_us: if completed > 0 {
                cpu_ns as f64 / 1e3 / completed as f64
            } else {
                0.0
            },
            bytes_per_user: Population::bytes_per_user(),
        },
        steady_at_s: steady_at(&series),
        series,
        databases: Vec::new(),
    }
}

/// When the population's store IOPS settled: the series is averaged over 50 equal spans, and
/// the steady point is the start of the first window of 5 spans that the steady-state rule
/// (every span within 10 % of the window's mean, fit excursion within 5 %) calls steady.
fn steady_at(series: &[UsersInterval]) -> Option<f64> {
    const SPANS: usize = 50;
    let rule = SteadyRule::default();
    if series.len() < rule.window * 2 {
        return None;
    }
    let per = series.len().div_ceil(SPANS);
    // Each record weighs by its length (a long run's merged records may differ in length).
    let ends: Vec<f64> = series.iter().map(|s| s.t_s).collect();
    let spans: Vec<(f64, f64)> = series
        .chunks(per)
        .zip(ends.chunks(per))
        .enumerate()
        .map(|(k, (c, e))| {
            let mut start = if k == 0 { 0.0 } else { ends[k * per - 1] };
            let (mut ios, mut secs) = (0.0, 0.0);
            for (s, &end) in c.iter().zip(e) {
                let t = (end - start).max(0.0);
                ios += (s.db_reads_per_s + s.db_writes_per_s + s.log_writes_per_s) * t;
                secs += t;
                start = end;
            }
            (c[0].t_s, if secs > 0.0 { ios / secs } else { 0.0 })
        })
        .collect();
    let iops: Vec<f64> = spans.iter().map(|s| s.1).collect();
    let end = first_steady_round(&iops, &rule)?;
    // The interval before the window's first span ends where the window starts.
    let first = end - rule.window;
    Some(if first == 0 {
        0.0
    } else {
        spans[first - 1].0.max(0.0) + (spans[first].0 - spans[first - 1].0)
    })
}

/// Per task type with a limit, its 95th percentile; all planned tasks completed; not
/// overloaded.
fn task_rules(cfg: &UsersConfig, users: &UsersResult) -> Vec<Rule> {
    let mut rules = Vec::new();
    for &(task, limit_ms) in &cfg.p95_limits_ms {
        // A limit on a task type the profile never dispatched has nothing to judge.
        let Some(measured) = users
            .tasks
            .iter()
            .find(|t| t.task == task.name())
            .map(|t| t.p95_with_unfinished_ns as f64 / 1e6)
        else {
            continue;
        };
        rules.push(
            Rule::judge(
                format!("{} 95th percentile latency", task.name()),
                measured,
                Comparison::AtMost,
                limit_ms,
                "ms",
            )
            .measuring(Measure::PercentileLatency(95.0)),
        );
    }
    rules.push(
        Rule::judge(
            "tasks completed of those planned",
            users.completed as f64,
            Comparison::AtLeast,
            users.planned as f64,
            "tasks",
        )
        .measuring(Measure::Rate),
    );
    rules.push(
        Rule::judge(
            OVERLOAD_RULE,
            users.peak_unfinished as f64,
            Comparison::AtMost,
            (crate::workloads::users::dispatch::OVERLOAD_FACTOR * cfg.users as f64).floor(),
            "tasks",
        )
        .measuring(Measure::Backlog),
    );
    rules
}
