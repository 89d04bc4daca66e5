//! Process resource limits a run needs: open files for every target and every io_uring ring,
//! the CPUs workers are pinned to (`cpus`) and memory for their I/O buffers, each checked
//! before the first I/O so that a run that cannot have them is refused (exit 2), not failed
//! halfway.
//! A run of 1,000 targets and 256 workers needs well over the usual soft limit of 1,024 open
//! files; the soft limit is raised to what the run needs (never above the hard limit, which
//! only an administrator may raise), and when even the hard limit is too low the run stops
//! before preparing anything, with the numbers and how to raise it: not an obscure EMFILE
//! halfway through opening targets or creating rings.

use crate::Usage;
use crate::job::{EngineKind, Job};
use crate::units::format_size;
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use rustix::thread::CpuSet;

/// Descriptors kept free beyond the targets, the rings and what is open when the run starts:
/// the NDJSON time series, the results file being written, /proc and /sys reads of the host
/// sampler, a target's preparation marker, the terminal.
pub(crate) const HEADROOM_FILES: u64 = 32;

/// What a run needs in open files, by cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpenFilesNeed {
    /// Targets: two descriptors each (the one I/O goes through, and the one that holds the
    /// run's lock on it from before it was opened for I/O).
    pub targets: u64,
    /// One descriptor per io_uring ring (one per worker; none for psync and null).
    pub rings: u64,
    /// Descriptors open when the run starts (standard streams and the like).
    pub open: u64,
}

impl OpenFilesNeed {
    /// What `job` run with `engine` needs, with `open` descriptors already open.
    pub(crate) fn of(job: &Job, engine: EngineKind, open: u64) -> Self {
        OpenFilesNeed {
            targets: job.targets.len() as u64,
            rings: if engine == EngineKind::IoUring {
                job.workers.len() as u64
            } else {
                0
            },
            open,
        }
    }

    /// The total, headroom included. io_uring also refuses to register more files in one ring
    /// than the soft limit, which this total always exceeds.
    pub(crate) fn total(&self) -> u64 {
        2 * self.targets + self.rings + self.open + HEADROOM_FILES
    }
}

/// What to do about the open-file limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// The soft limit is enough.
    Enough,
    /// Raise the soft limit to this.
    Raise(u64),
    /// Even the hard limit (`hard`) is below `need`.
    TooLow {
        /// Files needed.
        need: u64,
        /// The soft limit.
        soft: u64,
        /// The hard limit.
        hard: u64,
    },
}

/// Decides from the limits (`None`: unlimited) and the need. Pure, for tests.
pub(crate) fn decide(need: u64, limit: Rlimit) -> Decision {
    let soft = limit.current.unwrap_or(u64::MAX);
    let hard = limit.maximum.unwrap_or(u64::MAX);
    if soft >= need {
        Decision::Enough
    } else if hard >= need {
        Decision::Raise(need)
    } else {
        Decision::TooLow { need, soft, hard }
    }
}

/// Makes sure the process may open every file `job` needs with `engine`: raises the soft
/// RLIMIT_NOFILE when needed (up to the hard limit), or returns a usage error naming the
/// numbers and `ulimit -n` when the hard limit is too low. Call it before opening targets.
pub(crate) fn ensure_open_files(job: &Job, engine: EngineKind) -> Result<(), Usage> {
    let need = OpenFilesNeed::of(job, engine, open_descriptors());
    let limit = getrlimit(Resource::Nofile);
    match decide(need.total(), limit) {
        Decision::Enough => Ok(()),
        Decision::Raise(to) => {
            let raised = Rlimit {
                current: Some(to),
                maximum: limit.maximum,
            };
            setrlimit(Resource::Nofile, raised).map_err(|e| {
                Usage(format!(
                    "cannot raise the open-file limit from {} to {to} for {}: {e}; raise it before running storlab (`ulimit -n {to}`)",
                    show(limit.current),
                    causes(&need)
                ))
            })
        }
        Decision::TooLow {
            need: n,
            soft,
            hard,
        } => Err(Usage(format!(
            "this run needs about {n} open files ({}) but the open-file limit is {soft} and its hard limit {hard}, which only an administrator can raise: run `ulimit -Hn {n}; ulimit -n {n}` as root (or set `nofile` in /etc/security/limits.conf, or LimitNOFILE={n} for a systemd service) before running storlab, or use fewer targets or workers",
            causes(&need)
        ))),
    }
}

/// Refuses a job that pins a worker (`cpus`) to a CPU this process may not run on: the message
/// names the key, the worker and the CPUs it may use.
/// Refuses a job that pins a worker (`cpus`) or its submission polling thread
/// (`sqpoll_cpu`) to a CPU this process may not run on: the message names the key, the
/// worker and the CPUs it may use.
pub(crate) fn ensure_cpus(job: &Job) -> Result<(), Usage> {
    let allowed = rustix::thread::sched_getaffinity(None).ok();
    let may =
        |cpu: usize| cpu < CpuSet::MAX_CPU && allowed.as_ref().is_none_or(|set| set.is_set(cpu));
    let range = || match &allowed {
        Some(set) => cpu_list((0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c))),
        None => format!("0-{}", CpuSet::MAX_CPU - 1),
    };
    let sqpoll = job.io_uring.sqpoll.and_then(|s| s.cpu);
    if let Some(cpu) = sqpoll.filter(|&c| !may(c as usize)) {
        return Err(Usage(format!(
            "`sqpoll_cpu` pins the submission polling thread to CPU {cpu}, but this process may run only on CPUs {}; use a CPU in that range, or leave sqpoll_cpu out",
            range()
        )));
    }
    let Some((w, cpu)) =
        (job.workers.iter()).find_map(|w| w.cpu.filter(|&c| !may(c)).map(|c| (w, c)))
    else {
        return Ok(());
    };
    Err(Usage(format!(
        "`cpus` pins worker `{}` to CPU {cpu}, but this process may run only on CPUs {}; use CPUs in that range",
        w.name,
        range()
    )))
}

/// CPUs as people write them: `0-3,6,8-9`.
fn cpu_list(cpus: impl Iterator<Item = usize>) -> String {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for c in cpus {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == c => *end = c,
            _ => ranges.push((c, c)),
        }
    }
    let parts: Vec<String> = (ranges.iter())
        .map(|&(a, b)| match a == b {
            true => a.to_string(),
            false => format!("{a}-{b}"),
        })
        .collect();
    parts.join(",")
}

/// Bytes of I/O buffers a worker maps: a slot of its largest block (rounded up to a page) per
/// I/O in flight; `None` when that overflows.
fn buffer_bytes(queue_depth: u32, slot_bytes: u64) -> Option<u64> {
    slot_bytes
        .max(1)
        .div_ceil(4096)
        .checked_mul(4096)?
        .checked_mul(u64::from(queue_depth))
}

/// Refuses a job whose workers' I/O buffers (queue depth × block size each, filled with data
/// before the start) need more than the host's memory (`memory_bytes`): such buffers cannot
/// be mapped, or would push the host into swapping and measure that instead.
pub(crate) fn ensure_buffers(job: &Job, memory_bytes: u64) -> Result<(), Usage> {
    let need = |w: &&crate::job::Worker| {
        buffer_bytes(w.queue_depth, job.slot_bytes(w)).unwrap_or(u64::MAX)
    };
    let total = job
        .workers
        .iter()
        .map(|w| need(&w))
        .fold(0, u64::saturating_add);
    let Some(w) = job.workers.iter().max_by_key(need) else {
        return Ok(());
    };
    if memory_bytes == 0 || total <= memory_bytes {
        return Ok(());
    }
    let total = match total {
        u64::MAX => "more than 16 EiB".to_string(),
        t => format_size(t),
    };
    Err(Usage(format!(
        "the workers' I/O buffers need {total} (worker `{}` alone: queue_depth {} × {} blocks), more than this host's {} of memory; lower queue_depth or the block size",
        w.name,
        w.queue_depth,
        format_size(job.slot_bytes(w)),
        format_size(memory_bytes)
    )))
}

fn causes(need: &OpenFilesNeed) -> String {
    let mut parts = vec![plural(need.targets, "target")];
    if need.rings > 0 {
        parts.push(plural(need.rings, "io_uring ring"));
    }
    parts.push(format!(
        "{} already open and {HEADROOM_FILES} spare",
        need.open
    ));
    parts.join(", ")
}

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn show(limit: Option<u64>) -> String {
    limit.map_or_else(|| "unlimited".into(), |l| l.to_string())
}

/// Descriptors open now (from /proc/self/fd; the three standard streams when it cannot be
/// read).
fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count().saturating_sub(1) as u64)
        .unwrap_or(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lim(soft: Option<u64>, hard: Option<u64>) -> Rlimit {
        Rlimit {
            current: soft,
            maximum: hard,
        }
    }

    #[test]
    fn a_polling_thread_pinned_to_a_cpu_out_of_reach_is_refused_like_a_worker() {
        let text = "[[target]]\nname = \"t\"\npath = \"/tmp/t\"\nsize = \"1MiB\"\n[[worker]]\nname = \"w\"\n[[worker.access]]\nblock_size = \"4k\"\n[io_uring]\nsqpoll = true\nsqpoll_cpu = 99999\n";
        let path = std::path::Path::new("j.toml");
        let spec = crate::job::file::parse(path, text).unwrap();
        let mut job = crate::job::resolve(&spec, Some((path, text))).unwrap();
        let error = ensure_cpus(&job).unwrap_err().to_string();
        assert!(
            error.starts_with("`sqpoll_cpu` pins the submission polling thread to CPU 99999, but this process may run only on CPUs "),
            "{error}"
        );
        if let Some(sq) = job.io_uring.sqpoll.as_mut() {
            sq.cpu = Some(0);
        }
        ensure_cpus(&job).unwrap();
    }

    #[test]
    fn raises_the_soft_limit_up_to_the_hard_one() {
        assert_eq!(decide(100, lim(Some(1024), Some(4096))), Decision::Enough);
        assert_eq!(decide(1024, lim(Some(1024), Some(4096))), Decision::Enough);
        assert_eq!(
            decide(1300, lim(Some(1024), Some(524_288))),
            Decision::Raise(1300)
        );
        assert_eq!(decide(1300, lim(Some(1024), None)), Decision::Raise(1300));
        assert_eq!(decide(1300, lim(None, None)), Decision::Enough);
        assert_eq!(
            decide(1300, lim(Some(256), Some(256))),
            Decision::TooLow {
                need: 1300,
                soft: 256,
                hard: 256
            }
        );
    }

    #[test]
    fn need_counts_targets_rings_and_open_files() {
        let need = OpenFilesNeed {
            targets: 1000,
            rings: 256,
            open: 4,
        };
        assert_eq!(need.total(), 2 * 1000 + 256 + 4 + HEADROOM_FILES);
        assert_eq!(
            causes(&need),
            format!("1000 targets, 256 io_uring rings, 4 already open and {HEADROOM_FILES} spare")
        );
    }

    #[test]
    fn cpu_lists_are_written_as_ranges() {
        assert_eq!(cpu_list([0, 1, 2, 3, 6, 8, 9].into_iter()), "0-3,6,8-9");
        assert_eq!(cpu_list([5].into_iter()), "5");
        assert_eq!(cpu_list(std::iter::empty()), "");
    }

    #[test]
    fn buffers_are_queue_depth_pages_of_the_largest_block() {
        assert_eq!(buffer_bytes(32, 4096), Some(32 * 4096));
        assert_eq!(buffer_bytes(2, 512), Some(2 * 4096));
        assert_eq!(buffer_bytes(4, 5000), Some(4 * 8192));
        assert_eq!(buffer_bytes(u32::MAX, u64::MAX / 2), None);
    }

    #[test]
    fn counts_this_process_descriptors() {
        // stdin, stdout and stderr at least (the read_dir's own descriptor is not counted).
        assert!(open_descriptors() >= 3);
    }
}
