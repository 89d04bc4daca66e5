//! A job over in-process ranks (threads, each a real run on its own file): one results file
//! whose figures are every rank's merged exactly, a `hosts` entry per rank, and a rank that
//! never sends its results named in a run that fails with what arrived.

use crate::cluster::{Cluster, Threads};
use crate::job::Job;
use crate::results::RunResult;
use crate::results::description::Description;
use crate::results::progress::Quiet;
use crate::run::{Execute, FromAccess, RunOptions, Signals, Workload};
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

/// A plain job file's rank: its one job, run once.
struct OneJob(Job);

impl Workload for OneJob {
    fn kind(&self) -> &'static str {
        "run"
    }

    fn describe(&self) -> Description {
        Description::of_job(&self.0)
    }

    fn jobs(&self) -> Vec<Job> {
        vec![self.0.clone()]
    }

    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> anyhow::Result<RunResult> {
        exec.execute(&self.0, opts, &FromAccess)
    }
}

/// Reads the shared text as a plain job file (the root's decoder, in tests).
fn plain(text: &str, label: &Path, place: &super::Place) -> Result<Box<dyn Workload>, String> {
    super::rank_job(text, label, place).map(|job| Box::new(OneJob(job)) as Box<dyn Workload>)
}

/// A rank that, if `gone`, takes part in everything but never sends its results (the one
/// message that is a JSON object; the others are empty, names or 8-byte clock readings): it
/// died at the end of its run.
struct Vanishing<C> {
    rank: C,
    gone: bool,
    /// Heartbeats it sends before it goes silent (`usize::MAX`: never silent).
    beats: std::cell::Cell<usize>,
    /// It answers the clock measurement before the start, never rank 0's checks during the
    /// run.
    deaf: bool,
    /// Its messages on the side channel so far.
    posted: std::cell::Cell<usize>,
}

impl<C: Cluster> Cluster for Vanishing<C> {
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
        self.rank.broadcast(bytes, wait)
    }
    fn gather(
        &self,
        bytes: Vec<u8>,
        wait: std::time::Duration,
    ) -> Result<Option<crate::cluster::Gathered>, crate::cluster::ClusterError> {
        if self.gone && bytes.len() > 64 && bytes.starts_with(b"{\"") {
            return Ok(None);
        }
        self.rank.gather(bytes, wait)
    }
    fn heartbeat(&self) {
        let left = self.beats.get();
        if left > 0 {
            self.beats.set(left.saturating_sub(1));
            self.rank.heartbeat();
        }
    }
    fn silent(&self, silence: std::time::Duration) -> Vec<usize> {
        self.rank.silent(silence)
    }
    fn stop_all(&self) {
        self.rank.stop_all();
    }
    fn stop_asked(&self) -> bool {
        self.rank.stop_asked()
    }
    fn post(&self, to: usize, bytes: Vec<u8>) {
        // The first 8: its answers before the start.
        self.posted.set(self.posted.get() + 1);
        if !self.deaf || self.posted.get() <= 8 {
            self.rank.post(to, bytes);
        }
    }
    fn take(&self, from: usize, wait: std::time::Duration) -> Option<Vec<u8>> {
        self.rank.take(from, wait)
    }
}

/// Runs `text` on `n` ranks (rank `r` on host `h{r % 2}`), results in `DIR/merged.json`;
/// the `gone` ranks set up and run, then never send their results.
fn run_text(
    dir: &Path,
    text: &str,
    n: usize,
    gone: &[usize],
) -> Vec<anyhow::Result<Option<RunResult>>> {
    run_deaf(dir, text, n, gone, &[])
}

/// [`run_text`], the `deaf` ranks never answering clock checks.
fn run_deaf(
    dir: &Path,
    text: &str,
    n: usize,
    gone: &[usize],
    deaf: &[usize],
) -> Vec<anyhow::Result<Option<RunResult>>> {
    let ranks = Threads::ranks(n, |r| format!("h{}", r % 2));
    let opts = RunOptions::new(dir.join("merged.json"), vec!["storlab".into()]);
    std::thread::scope(|s| {
        let handles: Vec<_> = ranks
            .into_iter()
            .map(|c| {
                let opts = opts.clone();
                s.spawn(move || {
                    let gone = gone.contains(&c.rank());
                    // A rank that is gone also goes silent after two heartbeats.
                    let beats = std::cell::Cell::new(if gone { 2 } else { usize::MAX });
                    let c = Vanishing {
                        deaf: deaf.contains(&c.rank()),
                        posted: std::cell::Cell::new(0),
                        rank: c,
                        gone,
                        beats,
                    };
                    let root = (c.rank() == 0).then_some(text);
                    super::run(
                        &c,
                        root,
                        Path::new("job.toml"),
                        &opts,
                        &Signals::none(),
                        &mut Quiet,
                        &plain,
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// [`run_text`] of [`job`], every rank expected to run.
fn run_ranks(dir: &Path, n: usize, gone: &[usize]) -> Vec<Option<RunResult>> {
    run_text(dir, &job(dir), n, gone)
        .into_iter()
        .map(|r| r.expect("the rank runs"))
        .collect()
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
    assert!(!merged.timeseries.held.is_empty());
    for rec in &merged.timeseries.held {
        let ops: u64 = (journals.iter())
            .filter_map(|j| j.timeseries.held.iter().find(|t| t.index == rec.index))
            .map(|t| t.total.read.ops)
            .sum();
        assert_eq!(rec.total.read.ops, ops, "interval {}", rec.index);
        assert!(rec.histograms.is_none());
    }
    assert!(
        journals
            .iter()
            .all(|j| j.timeseries.held.iter().all(|t| t.histograms.is_some()))
    );
    assert_eq!(merged.hosts.len(), 3);
    assert!(merged.hosts.iter().all(|h| h.present));
    assert_eq!(merged.hosts[1].host, "h1");
    // One clock for every rank here: each measured offset's interval holds the true one, 0.
    for h in &merged.hosts {
        assert!(
            h.clock_offset_ns.unsigned_abs() <= h.clock_uncertainty_ns,
            "rank {}: offset {} ns, uncertainty {} ns",
            h.rank,
            h.clock_offset_ns,
            h.clock_uncertainty_ns
        );
    }
    assert_eq!(
        merged.hosts[0].clock_uncertainty_ns, 0,
        "rank 0 is the time base"
    );
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

#[test]
fn a_rank_that_cannot_prepare_its_targets_stops_every_rank_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    // Ranks 0 and 2 have their directories; rank 1's does not exist.
    for r in [0, 2] {
        std::fs::create_dir(dir.path().join(format!("r{r}"))).unwrap();
    }
    let text = job(dir.path()).replace("/rank{rank}-{host}.dat", "/r{rank}/data.dat");
    let errors: Vec<String> = run_text(dir.path(), &text, 3, &[])
        .into_iter()
        .map(|r| format!("{:#}", r.expect_err("no rank runs")))
        .collect();
    for (r, e) in errors.iter().enumerate() {
        assert!(e.contains("so none started: rank 1: "), "rank {r}: {e}");
    }
    // No rank measured anything: no results file, no time series.
    assert!(!dir.path().join("merged.json").exists());
    for r in 0..3 {
        assert!(!dir.path().join(format!("merged.rank{r}.ndjson")).exists());
    }
}

#[test]
fn ranks_about_to_write_one_file_by_accident_are_stopped_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    // No {rank} in the path: every rank on this host would write the same file.
    let text = job(dir.path()).replace("/rank{rank}-{host}.dat", "/same.dat");
    let errors: Vec<String> = run_text(dir.path(), &text, 3, &[])
        .into_iter()
        .map(|r| format!("{:#}", r.expect_err("no rank runs")))
        .collect();
    for e in &errors {
        // Ranks 0 and 2 say they are on host h0: one local file. Rank 1 on h1 has its own.
        assert!(
            e.contains(
                "rank 0 on h0 (target data), rank 2 on h0 (target data) would all use file on h0: "
            ),
            "{e}"
        );
        assert!(!e.contains("rank 1"), "{e}");
        assert!(e.contains("shared = \"slice\""), "{e}");
    }
    assert!(!dir.path().join("same.dat").exists(), "nothing was created");
}

#[test]
fn a_shared_file_is_refused_a_lun_is_for_sharing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lun.dat"), vec![0u8; 3 << 20]).unwrap();
    let text = job(dir.path())
        .replace("/rank{rank}-{host}.dat\"", "/lun.dat\"\nshared = \"slice\"")
        .replace("size = \"1MiB\"\n", "");
    for r in run_text(dir.path(), &text, 2, &[]) {
        let e = format!("{:#}", r.expect_err("refused"));
        assert!(
            e.contains("shared = \"slice\" is for a block device every host sees"),
            "{e}"
        );
    }
}

#[test]
fn a_rank_that_goes_silent_mid_run_is_named_and_the_run_ends_early() {
    let dir = tempfile::tempdir().unwrap();
    // 30 s planned; rank 2 sends two heartbeats (half a second) and no more: rank 0 names it
    // after 2 s of silence (the tests' limit) and every rank stops.
    let text = job(dir.path()).replace("duration = \"1s\"", "duration = \"30s\"");
    let out = run_text(dir.path(), &text, 3, &[2]);
    let merged = out[0]
        .as_ref()
        .expect("rank 0 runs")
        .clone()
        .expect("merged");
    let r0 = crate::results::file::load(&dir.path().join("merged.rank0.json")).unwrap();
    let why = r0.interrupted.reason().expect("rank 0 stopped").to_string();
    assert!(
        why.contains("rank 2 on h0") && why.contains("sent no heartbeat for 2 s"),
        "{why}"
    );
    assert!(
        r0.measured_ms < 25_000,
        "stopped early: {} ms",
        r0.measured_ms
    );
    let r1 = crate::results::file::load(&dir.path().join("merged.rank1.json")).unwrap();
    let why1 = r1.interrupted.reason().expect("rank 1 stopped").to_string();
    assert!(why1.contains("rank 0 ended the run"), "{why1}");
    assert!(!merged.hosts[2].present);
    assert!(merged.hosts[1].present);
    assert!(!merged.verdict.as_ref().unwrap().passed());
}

#[test]
fn the_clocks_are_measured_again_every_sixty_intervals_and_a_rank_that_does_not_answer_is_left_out()
{
    let dir = tempfile::tempdir().unwrap();
    // 75 intervals of 20 ms: one check, at the end of interval 59.
    let text = job(dir.path())
        .replace("duration = \"1s\"", "duration = \"1500ms\"")
        .replace("interval = \"250ms\"", "interval = \"20ms\"");
    let out = run_deaf(dir.path(), &text, 3, &[], &[2]);
    let merged = out[0]
        .as_ref()
        .unwrap()
        .clone()
        .expect("the root's results");
    assert!(
        merged.hosts[0].clock_checks.is_empty(),
        "rank 0 is the time base"
    );
    let checks = &merged.hosts[1].clock_checks;
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(checks[0].interval, 59);
    // One clock for every rank here: the measured offset's interval holds the true one, 0.
    assert!(
        checks[0].offset_ns.unsigned_abs() <= checks[0].uncertainty_ns,
        "{checks:?}"
    );
    assert!(
        merged.hosts[2].clock_checks.is_empty(),
        "rank 2 never answered"
    );
    assert!(merged.hosts.iter().all(|h| h.present));
    assert!(merged.verdict.as_ref().unwrap().passed());
    let saved = crate::results::file::load(&dir.path().join("merged.json")).unwrap();
    assert_eq!(saved.hosts[1].clock_checks, *checks);
}
