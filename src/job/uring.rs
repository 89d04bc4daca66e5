//! `[io_uring]`: the kernel's fast paths a job asks for (polled completions, a submission
//! polling thread, how completion work is run) and how many completions a worker waits for and
//! reaps at once. Each path is probed when a worker creates its ring; what the kernel or the
//! device cannot do falls back, and the results say which paths ran and why any did not
//! ([`crate::engine::ring`]).

use super::JobError;
use super::file::Source;
use super::spec::JobSpec;
use crate::units::Dur;
use serde::{Deserialize, Serialize};

/// The longest submission-thread idle time accepted (the kernel's field is milliseconds in a
/// u32; more than a minute only keeps a CPU spinning for nothing).
const MAX_SQPOLL_IDLE_MS: u64 = 60_000;
/// The submission thread's idle time when not given: the kernel's own default.
pub(crate) const DEFAULT_SQPOLL_IDLE_MS: u32 = 1_000;

/// `[io_uring]` as written.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UringSpec {
    /// Polled completions (`IORING_SETUP_IOPOLL`, fio's `hipri`): O_DIRECT on a device with
    /// poll queues.
    pub poll: Option<bool>,
    /// A kernel thread polls the submission queue (`IORING_SETUP_SQPOLL`).
    pub sqpoll: Option<bool>,
    /// The CPU that thread runs on.
    pub sqpoll_cpu: Option<u32>,
    /// How long it spins with nothing to submit before it sleeps (default 1s).
    pub sqpoll_idle: Option<Dur>,
    /// How completion work runs: `auto` (default), `defer`, `coop` or `plain`.
    pub task_run: Option<String>,
    /// Wait for at least this many completions at once (fio's `iodepth_batch_complete_min`;
    /// default 1; 0: never wait, poll the completion queue).
    pub batch_complete_min: Option<u32>,
    /// Reap at most this many completions at once (fio's `iodepth_batch_complete_max`;
    /// default: all there are).
    pub batch_complete_max: Option<u32>,
}

/// How the kernel runs an I/O's completion work (`task_work`) in the worker's thread.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TaskRun {
    /// The fastest the kernel has: `defer` where it has it, else `coop`, else `plain`.
    #[default]
    Auto,
    /// `IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN` (Linux 6.1): completion work
    /// waits until the worker asks for completions, and is then run in a batch.
    Defer,
    /// `IORING_SETUP_COOP_TASKRUN` (Linux 5.19): no interrupt of the worker to run it.
    Coop,
    /// Neither: the kernel interrupts the worker to run completion work.
    Plain,
}

impl TaskRun {
    /// Parses `auto`, `defer`, `coop` or `plain`.
    pub(crate) fn parse(s: &str) -> Result<TaskRun, String> {
        match s {
            "auto" => Ok(TaskRun::Auto),
            "defer" => Ok(TaskRun::Defer),
            "coop" => Ok(TaskRun::Coop),
            "plain" => Ok(TaskRun::Plain),
            other => Err(format!(
                "unknown task_run `{other}`; use auto, defer, coop or plain"
            )),
        }
    }

    /// Its name in job files.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TaskRun::Auto => "auto",
            TaskRun::Defer => "defer",
            TaskRun::Coop => "coop",
            TaskRun::Plain => "plain",
        }
    }
}

/// The submission polling thread asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SqPoll {
    /// The CPU it is pinned to, if any.
    pub cpu: Option<u32>,
    /// Idle time before it sleeps, ms.
    pub idle_ms: u32,
}

/// The io_uring paths and completion batching a job asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UringOptions {
    /// Polled completions asked for.
    pub poll: bool,
    /// A submission polling thread asked for.
    pub sqpoll: Option<SqPoll>,
    /// How completion work runs.
    pub task_run: TaskRun,
    /// Wait for at least this many completions (0: never wait).
    pub batch_complete_min: u32,
    /// Reap at most this many at once (`None`: all there are).
    pub batch_complete_max: Option<u32>,
}

impl Default for UringOptions {
    fn default() -> Self {
        UringOptions {
            poll: false,
            sqpoll: None,
            task_run: TaskRun::Auto,
            batch_complete_min: 1,
            batch_complete_max: None,
        }
    }
}

impl UringOptions {
    /// What differs from the defaults, for dry runs and descriptions (empty when nothing does).
    pub(crate) fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.poll {
            out.push("polled completions (IOPOLL)".to_string());
        }
        if let Some(s) = self.sqpoll {
            let cpu = s.cpu.map(|c| format!(" on CPU {c}")).unwrap_or_default();
            out.push(format!(
                "a submission polling thread{cpu} (idle after {} ms)",
                s.idle_ms
            ));
        }
        if self.task_run != TaskRun::Auto {
            out.push(format!("task_run {}", self.task_run.name()));
        }
        if self.batch_complete_min != 1 {
            out.push(match self.batch_complete_min {
                0 => "completions polled, never waited for".to_string(),
                n => format!("waits for {n} completions at once"),
            });
        }
        if let Some(m) = self.batch_complete_max {
            out.push(format!("reaps at most {m} completions at once"));
        }
        out
    }
}

/// The `[io_uring]` table of `spec`, checked against the job's other settings (`buffered`):
/// the defaults without one.
pub(super) fn resolve(spec: &JobSpec, src: &Source) -> Result<UringOptions, JobError> {
    let Some(u) = &spec.io_uring else {
        return Ok(UringOptions::default());
    };
    let err = |key: &str, message: String| src.table_error("io_uring", key, message);
    let poll = u.poll.unwrap_or(false);
    if poll && spec.buffered == Some(true) {
        return Err(err(
            "poll",
            "polled completions need O_DIRECT, and the job is buffered; remove `buffered = true` or `poll = true`".into(),
        ));
    }
    let sqpoll = u.sqpoll.unwrap_or(false);
    if !sqpoll && (u.sqpoll_cpu.is_some() || u.sqpoll_idle.is_some()) {
        let key = if u.sqpoll_cpu.is_some() {
            "sqpoll_cpu"
        } else {
            "sqpoll_idle"
        };
        return Err(err(
            key,
            format!(
                "{key} sets up the submission polling thread; add `sqpoll = true` or remove it"
            ),
        ));
    }
    let idle_ms = match u.sqpoll_idle {
        None => u64::from(DEFAULT_SQPOLL_IDLE_MS),
        Some(d) => d.0.as_millis() as u64,
    };
    if idle_ms > MAX_SQPOLL_IDLE_MS {
        return Err(err(
            "sqpoll_idle",
            format!(
                "the submission thread's idle time is {idle_ms} ms; at most {MAX_SQPOLL_IDLE_MS} ms (a minute), e.g. sqpoll_idle = \"1s\""
            ),
        ));
    }
    let task_run = match &u.task_run {
        None => TaskRun::Auto,
        Some(s) => TaskRun::parse(s).map_err(|m| err("task_run", m))?,
    };
    if sqpoll && matches!(task_run, TaskRun::Defer | TaskRun::Coop) {
        return Err(err(
            "task_run",
            format!(
                "task_run = \"{}\" cannot be used with sqpoll: the submission polling thread runs the completion work itself; remove one of them",
                task_run.name()
            ),
        ));
    }
    let batch_complete_min = u.batch_complete_min.unwrap_or(1);
    if let Some(max) = u.batch_complete_max {
        if max == 0 || max < batch_complete_min {
            return Err(err(
                "batch_complete_max",
                format!(
                    "batch_complete_max is {max}; it must be at least 1 and at least batch_complete_min ({batch_complete_min})"
                ),
            ));
        }
    }
    Ok(UringOptions {
        poll,
        sqpoll: sqpoll.then_some(SqPoll {
            cpu: u.sqpoll_cpu,
            idle_ms: idle_ms as u32,
        }),
        task_run,
        batch_complete_min,
        batch_complete_max: u.batch_complete_max,
    })
}

/// Polled completions cannot flush (a polled ring takes only reads and writes): refuses a job
/// that asks for both.
pub(super) fn check_syncs(job: &super::Job, src: &Source) -> Result<(), JobError> {
    let flushing = (job.workers.iter()).find(|w| w.access.iter().any(|a| a.fsync_every > 0));
    match flushing {
        Some(w) if job.io_uring.poll => Err(src.table_error(
            "io_uring",
            "poll",
            format!(
                "polled completions cannot flush, and worker `{}` does (fsync_every); remove `poll = true` or the flushes",
                w.name.split('#').next().unwrap_or(&w.name)
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str) -> Result<UringOptions, JobError> {
        let spec: JobSpec = toml::from_str(text).expect("toml");
        let src = Source {
            name: "job.toml".into(),
            text: Some(text),
        };
        resolve(&spec, &src)
    }

    #[test]
    fn defaults_without_the_table() {
        assert_eq!(job("").unwrap(), UringOptions::default());
        assert!(UringOptions::default().describe().is_empty());
    }

    #[test]
    fn every_key_resolves() {
        let o = job("[io_uring]\npoll = true\nsqpoll = true\nsqpoll_cpu = 1\nsqpoll_idle = \"20ms\"\ntask_run = \"plain\"\nbatch_complete_min = 4\nbatch_complete_max = 16\n").unwrap();
        assert!(o.poll);
        assert_eq!(
            o.sqpoll,
            Some(SqPoll {
                cpu: Some(1),
                idle_ms: 20
            })
        );
        assert_eq!(o.task_run, TaskRun::Plain);
        assert_eq!((o.batch_complete_min, o.batch_complete_max), (4, Some(16)));
        assert_eq!(o.describe().len(), 5, "{:?}", o.describe());
    }

    #[test]
    fn bad_values_name_the_key_and_line() {
        let cases = [
            (
                "buffered = true\n[io_uring]\npoll = true\n",
                "io_uring.poll",
                3,
                "O_DIRECT",
            ),
            (
                "[io_uring]\nsqpoll_cpu = 1\n",
                "io_uring.sqpoll_cpu",
                2,
                "sqpoll = true",
            ),
            (
                "[io_uring]\nsqpoll = true\nsqpoll_idle = \"2m\"\n",
                "io_uring.sqpoll_idle",
                3,
                "at most",
            ),
            (
                "[io_uring]\ntask_run = \"fast\"\n",
                "io_uring.task_run",
                2,
                "defer, coop",
            ),
            (
                "[io_uring]\nbatch_complete_min = 8\nbatch_complete_max = 4\n",
                "io_uring.batch_complete_max",
                3,
                "at least",
            ),
            (
                "[io_uring]\nbatch_complete_max = 0\n",
                "io_uring.batch_complete_max",
                2,
                "at least 1",
            ),
            (
                "[io_uring]\nsqpoll = true\ntask_run = \"defer\"\n",
                "io_uring.task_run",
                3,
                "polling thread",
            ),
        ];
        for (text, key, line, says) in cases {
            let e = job(text).expect_err(text);
            assert_eq!(e.key, key, "{text}");
            assert_eq!(e.location, format!("job.toml:{line}"), "{text}");
            assert!(e.message.contains(says), "{}", e.message);
        }
    }

    #[test]
    fn min_zero_means_never_wait() {
        let o = job("[io_uring]\nbatch_complete_min = 0\n").unwrap();
        assert_eq!(o.batch_complete_min, 0);
        assert!(o.describe()[0].contains("never waited"));
    }
}
