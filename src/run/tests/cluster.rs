//! A job over in-process ranks (threads, each a real run on its own file): one results file
//! whose figures are every rank's merged exactly, a `hosts` entry per rank, and a rank that
//! never sends its results named in a run that fails with what arrived.

use crate::cluster::{Cluster, Threads};
use crate::results::RunResult;
use crate::results::progress::Quiet;
use crate::run::{RunOptions, Signals};
use std::path::Path;

/// A 1 s job of 4 KiB random 70 % reads on `DIR/rank{rank}.dat` (1 MiB).
fn job(dir: &Path) -> String {
    format!(
        "duration = \"1s\"\nramp = \"0s\"\ninterval = \"250ms\"\n\
         [[target]]\nname = \"data\"\npath = \"{}/rank{{rank}}-{{host}}.dat\"\nsize = \"1MiB\"\n\
         [[worker]]\nname = \"w\"\nqueue_depth = 2\n\
         [[worker.access]]\nclass = \"db\"\nblock_size = \"4k\"\nread = \"70%\"\nrandom = \"100%\"\n",
        dir.display()
    )
}

/// A rank that takes part in the first `collectives` collectives, then is gone: what it
/// sends after that never arrives.
struct DiesAfter<C> {
    rank: C,
    collectives: usize,
    done: std::cell::Cell<usize>,
}

impl<C: Cluster> Cluster for DiesAfter<C> {
    fn rank(&self) -> usize {
        self.rank.rank()
    }
    fn size(&self) -> usize {
        self.rank.size()
    }
    fn host(&self) -> &str {
        self.rank.host()
    }
    fn broadcast(
        &self,
        bytes: Option<Vec<u8>>,
        wait: std::time::Duration,
    ) -> Result<Vec<u8>, crate::cluster::ClusterError> {
        self.done.set(self.done.get() + 1);
        self.rank.broadcast(bytes, wait)
    }
    fn gather(
        &self,
        bytes: Vec<u8>,
        wait: std::time::Duration,
    ) -> Result<Option<crate::cluster::Gathered>, crate::cluster::ClusterError> {
        self.done.set(self.done.get() + 1);
        if self.done.get() > self.collectives {
            return Ok(None);
        }
        self.rank.gather(bytes, wait)
    }
}

/// Runs `job` on `n` ranks (rank `r` on host `h{r % 2}`); the `gone` ranks set up and run,
/// then never send their results.
fn run_ranks(dir: &Path, n: usize, gone: &[usize]) -> Vec<Option<RunResult>> {
    let text = job(dir);
    let ranks = Threads::ranks(n, |r| format!("h{}", r % 2));
    let opts = RunOptions::new(dir.join("merged.json"), vec!["storlab".into()]);
    std::thread::scope(|s| {
        let handles: Vec<_> = ranks
            .into_iter()
            .map(|c| {
                let (text, opts) = (text.clone(), opts.clone());
                s.spawn(move || {
                    // The setup is seven collectives (the job: three; the hosts: two; the
                    // readiness: two); the eighth sends the results.
                    let collectives = if gone.contains(&c.rank()) {
                        7
                    } else {
                        usize::MAX
                    };
                    let c = DiesAfter {
                        rank: c,
                        collectives,
                        done: std::cell::Cell::new(0),
                    };
                    let root = (c.rank() == 0).then_some(text.as_str());
                    super::super::cluster::run(
                        &c,
                        root,
                        Path::new("job.toml"),
                        &opts,
                        &Signals::none(),
                        &mut Quiet,
                    )
                    .expect("the rank runs")
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn every_ranks_figures_merge_exactly_into_one_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_ranks(dir.path(), 3, &[]);
    let merged = out[0].clone().expect("the root's merged results");
    assert!(out[1..].iter().all(Option::is_none));
    let journals: Vec<RunResult> = (0..3)
        .map(|r| {
            crate::results::file::load(&dir.path().join(format!("merged.rank{r}.json"))).unwrap()
        })
        .collect();
    // Each rank ran on its own file, named by its templates.
    for (r, j) in journals.iter().enumerate() {
        let path = &j.job.targets[0].path;
        let want = format!("rank{r}-h{}.dat", r % 2);
        assert!(path.ends_with(&want), "{}", path.display());
    }
    let sum = |f: fn(&RunResult) -> u64| journals.iter().map(f).sum::<u64>();
    assert_eq!(merged.totals.read.ops, sum(|j| j.totals.read.ops));
    assert_eq!(merged.totals.write.ops, sum(|j| j.totals.write.ops));
    assert_eq!(
        merged.classes["db"].read.bytes,
        sum(|j| j.classes["db"].read.bytes)
    );
    // Percentiles from the added histograms: the merge of the journals' histograms.
    let parts: Vec<&crate::stats::summary::DirSummary> =
        journals.iter().map(|j| &j.totals.read).collect();
    let want = crate::stats::summary::DirSummary::merge(&parts, merged.measured_ms as f64 / 1e3);
    assert_eq!(merged.totals.read.latency_ns, want.latency_ns);
    // Intervals: counts add, interval by interval; the merged records drop the histograms.
    for rec in &merged.timeseries {
        let ops: u64 = (journals.iter())
            .filter_map(|j| j.timeseries.iter().find(|t| t.index == rec.index))
            .map(|t| t.total.read.ops)
            .sum();
        assert_eq!(rec.total.read.ops, ops, "interval {}", rec.index);
        assert!(rec.histograms.is_none());
    }
    assert!(
        journals
            .iter()
            .all(|j| j.timeseries.iter().all(|t| t.histograms.is_some()))
    );
    assert_eq!(merged.hosts.len(), 3);
    assert!(merged.hosts.iter().all(|h| h.present));
    assert_eq!(merged.hosts[1].host, "h1");
    assert!(merged.verdict.as_ref().unwrap().passed());
    assert!(!merged.interrupted.stopped_early());
    let saved = crate::results::file::load(&dir.path().join("merged.json")).unwrap();
    let who = |r: &RunResult| -> Vec<(usize, String, bool, u64)> {
        (r.hosts.iter())
            .map(|h| (h.rank, h.host.clone(), h.present, h.totals.read.ops))
            .collect()
    };
    assert_eq!(who(&saved), who(&merged));
}

#[test]
fn a_rank_that_never_sends_its_results_is_named_and_the_run_fails() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_ranks(dir.path(), 3, &[2]);
    let merged = out[0]
        .clone()
        .expect("the root's results, with what arrived");
    let why = merged.interrupted.reason().expect("marked").to_string();
    assert!(
        why.contains("rank 2 on h0 did not send its results"),
        "{why}"
    );
    assert!(!merged.verdict.as_ref().unwrap().passed());
    assert!(!merged.hosts[2].present);
    let journals: u64 = (0..2)
        .map(|r| {
            crate::results::file::load(&dir.path().join(format!("merged.rank{r}.json")))
                .unwrap()
                .totals
                .read
                .ops
        })
        .sum();
    assert_eq!(merged.totals.read.ops, journals, "the ranks that did");
}
