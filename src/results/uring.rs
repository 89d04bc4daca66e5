//! `engine.io_uring` in the results: which of io_uring's paths the workers' rings used, and
//! why any asked for (or tried by default) was not.

use serde::{Deserialize, Serialize};

/// The paths of every worker's ring, merged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UringPaths {
    /// The paths every worker's ring used: `fixed_files`, `fixed_buffers`, `registered_ring`,
    /// `single_issuer`, `defer_taskrun`, `coop_taskrun`, `sqpoll`, `iopoll`.
    pub used: Vec<String>,
    /// The paths some worker asked for or tried and did not use, with why.
    pub not_used: Vec<PathNotUsed>,
    /// CPU time of the submission polling threads, seconds (with `sqpoll`).
    pub sqpoll_cpu_s: Option<f64>,
    /// Workers merged.
    pub workers: usize,
}

/// A path not used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathNotUsed {
    /// The path.
    pub path: String,
    /// Why (the first worker's reason).
    pub why: String,
    /// How many workers' rings went without it.
    pub workers: usize,
}

impl UringPaths {
    /// Adds one worker's ring: the paths it `used`, those it did not with why, and its polling
    /// thread's CPU time (ns).
    pub(crate) fn merge(
        &mut self,
        used: &[&str],
        not_used: &[(&str, String)],
        sqpoll_cpu_ns: Option<u64>,
    ) {
        if self.workers == 0 {
            self.used = used.iter().map(|p| p.to_string()).collect();
        } else {
            self.used.retain(|p| used.contains(&p.as_str()));
        }
        self.workers += 1;
        for (path, why) in not_used {
            match self.not_used.iter_mut().find(|n| n.path == *path) {
                Some(n) => n.workers += 1,
                None => self.not_used.push(PathNotUsed {
                    path: path.to_string(),
                    why: why.clone(),
                    workers: 1,
                }),
            }
        }
        if let Some(ns) = sqpoll_cpu_ns {
            *self.sqpoll_cpu_s.get_or_insert(0.0) += ns as f64 / 1e9;
        }
    }

    /// One line for terminals and reports: "defer_taskrun, single_issuer, ...; not used: iopoll
    /// (why)".
    pub(crate) fn line(&self) -> String {
        let mut s = self.used.join(", ");
        for n in &self.not_used {
            s.push_str(&format!("; not {}: {}", n.path, n.why));
        }
        if let Some(cpu) = self.sqpoll_cpu_s {
            s.push_str(&format!(
                "; submission polling threads used {cpu:.2} s of CPU"
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_what_every_worker_used_and_counts_what_was_not() {
        let mut p = UringPaths::default();
        p.merge(
            &["fixed_files", "defer_taskrun"],
            &[("iopoll", "no poll queues".into())],
            None,
        );
        p.merge(
            &["fixed_files"],
            &[
                ("iopoll", "no poll queues".into()),
                ("defer_taskrun", "refused".into()),
            ],
            Some(500_000_000),
        );
        assert_eq!(p.used, ["fixed_files"]);
        assert_eq!(p.workers, 2);
        assert_eq!(p.not_used[0].workers, 2);
        assert_eq!(p.not_used[1].path, "defer_taskrun");
        assert_eq!(p.sqpoll_cpu_s, Some(0.5));
        assert!(
            p.line().contains("not iopoll: no poll queues"),
            "{}",
            p.line()
        );
    }
}
