//! What a job may ask for, bounded: workers (each `count` clone a thread), targets, access
//! entries, and what its workers hold together. Each limit is far above any real job and keeps
//! resolving a job (or converting a fio file) linear in its size, in time and in memory.

use super::JobError;
use super::file::Source;
use super::spec::WorkerSpec;
use toml::Spanned;

/// Workers a job makes in all (each `count` clone is one, each a thread of its own): far above
/// what any device needs, and what keeps a job file (or a fio file's `numjobs`) from asking
/// for millions of threads.
pub(crate) const MAX_WORKERS: usize = 4096;
/// Targets a job has in all.
pub(crate) const MAX_TARGETS: usize = 4096;

/// What the `[[worker]]`s so far make, counted before any is made: workers, access entries as
/// written, and the entries every worker holds (its access entries and targets, copied for
/// each clone). Each is bounded, so a job file cannot make resolving it take time or memory out
/// of proportion to its size.
#[derive(Default)]
pub(super) struct Sizes {
    workers: usize,
    written: usize,
    held: usize,
}

impl Sizes {
    /// Access entries a job's `[[worker]]`s may write together.
    const MAX_WRITTEN: usize = 4096;
    /// Access entries and targets its workers may hold together.
    const MAX_HELD: usize = 1 << 20;

    pub(super) fn add(
        &mut self,
        wi: usize,
        w: &Spanned<WorkerSpec>,
        targets: usize,
        src: &Source,
    ) -> Result<(), JobError> {
        let spec = w.get_ref();
        let err = |key: &str, message: String| JobError {
            location: src.at(w.span()),
            key: format!("worker[{wi}]{key}"),
            message,
        };
        // A count over 4096 is refused by resolve_worker, with its own message.
        let count = spec.count.unwrap_or(1).min(4096) as usize;
        let targets = match (spec.one_target_each, &spec.targets) {
            (Some(true), _) => 1,
            (_, Some(list)) => list.len(),
            (_, None) => targets,
        };
        self.workers += count;
        self.written += spec.access.len();
        self.held += count * (spec.access.len().max(1) + targets);
        if self.workers > MAX_WORKERS {
            return Err(err(
                ".count",
                format!(
                    "the workers up to worker[{wi}] make {} workers (each `count` clone is one); a job makes at most {} in all: lower `count`, or split the job",
                    self.workers, MAX_WORKERS
                ),
            ));
        }
        if self.written > Self::MAX_WRITTEN {
            return Err(err(
                ".access",
                format!(
                    "the workers up to worker[{wi}] have {} access entries; a job has at most {} in all: merge entries, or split the job",
                    self.written,
                    Self::MAX_WRITTEN
                ),
            ));
        }
        if self.held > Self::MAX_HELD {
            return Err(err(
                "",
                format!(
                    "the workers up to worker[{wi}] hold {} access entries and targets, each clone its own; a job's workers hold at most {} in all: fewer entries or targets per worker, or a lower `count`",
                    self.held,
                    Self::MAX_HELD
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::file::parse;
    use super::super::resolve::resolve;
    use std::path::Path;

    /// The error of resolving `workers` after one target, or `None`.
    fn refusal(workers: &str) -> Option<String> {
        let text = format!("[[target]]\npath = \"/tmp/x.dat\"\nsize = \"1GiB\"\n{workers}");
        let p = Path::new("job.toml");
        let spec = parse(p, &text).unwrap();
        resolve(&spec, Some((p, &text)))
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn workers_entries_and_what_clones_hold_are_bounded_before_they_are_made() {
        let worker = |count: u32, entries: usize| {
            format!(
                "[[worker]]\ncount = {count}\n{}",
                "[[worker.access]]\n".repeat(entries)
            )
        };
        assert_eq!(refusal(&worker(4096, 1)), None);
        let e = refusal(&(worker(4096, 1) + &worker(1, 1))).unwrap();
        assert!(
            e.contains("worker[1].count")
                && e.contains("make 4097 workers")
                && e.contains("at most 4096 in all"),
            "{e}"
        );
        let e = refusal(&(worker(1, 4000) + &worker(1, 97))).unwrap();
        assert!(
            e.contains("worker[1].access") && e.contains("have 4097 access entries"),
            "{e}"
        );
        // 4096 clones of 300 entries and a target each: 1,232,896 held.
        let e = refusal(&worker(4096, 300)).unwrap();
        assert!(
            e.contains("hold 1232896 access entries and targets") && e.contains("at most 1048576"),
            "{e}"
        );
    }
}
