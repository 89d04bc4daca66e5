//! One job over the ranks of a cluster: the root's job shared with every rank (same storlab,
//! same bytes), each rank's targets from the path templates (`{rank}`, `{host}`, `{node}`) or
//! its slice of a shared LUN, a preflight against two ranks writing the same data, every rank
//! prepared and ready before any starts, the start scheduled on rank 0's clock (each rank's
//! offset measured), a heartbeat every interval watched by rank 0, each rank's run journaled to
//! its own results file on its own host (`NAME.rankR.json`, its intervals with their
//! histograms), then every rank's results gathered to the root, which merges them exactly and
//! writes one results file with a `hosts` entry per rank. A rank that goes silent or whose
//! results never arrive is named, and the run is marked interrupted and fails, with what
//! arrived. The same for an Exchange validation: one test per host on its own databases.

mod rank_targets;
#[cfg(test)]
mod tests;

use super::{RunOptions, Signals, Workload};
use crate::Usage;
use crate::cluster::{self, Cluster, HostRun};
use crate::job::Job;
use crate::results::hosts::{ClockCheck, HostResult};
use crate::results::progress::Observer;
use crate::results::verdict::{Comparison, Rule, Verdict};
use crate::results::{self, Interrupted, RunResult};
use anyhow::Result;
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the ranks wait for each other while they set up (the job, the hosts, readiness).
const SETUP_WAIT: Duration = Duration::from_secs(60);
/// When a signal stopped its run, the root waits for the other ranks' results an interval (at
/// least this) and this.
const SIGNALLED_WAIT: Duration = Duration::from_secs(1);
/// How long the root waits for the other ranks' results after its own run ended.
const RESULTS_WAIT: Duration = Duration::from_secs(if cfg!(test) { 10 } else { 60 });
/// After the watchdog stopped the run, the others stop within an interval and send their
/// results: rank 0 waits for them the silence limit, and never less than this.
const LATE_RESULTS_WAIT: Duration = Duration::from_secs(10);

/// Runs the job `text` (given on the root: a job file, or an `[exchange]` section whose test
/// each rank runs on its own databases; `label` names it in errors) on every rank of
/// `cluster`; the root returns the merged results (written to `opts.results_path`), the other
/// ranks `None`.
pub(crate) fn run(
    cluster: &dyn Cluster,
    text: Option<&str>,
    label: &Path,
    opts: &RunOptions,
    signals: &Signals,
    obs: &mut dyn Observer,
    decode: Decode,
) -> Result<Option<RunResult>> {
    let text = cluster::share_job(cluster, text, SETUP_WAIT)?;
    let hosts = all_hosts(cluster)?;
    let node = {
        let mut distinct: Vec<&String> = Vec::new();
        for h in &hosts {
            if !distinct.contains(&h) {
                distinct.push(h);
            }
        }
        distinct
            .iter()
            .position(|h| **h == hosts[cluster.rank()])
            .unwrap_or(0)
    };
    let me = cluster.rank();
    let place = Place {
        rank: me,
        ranks: cluster.size(),
        host: hosts[me].clone(),
        node,
    };
    let local = decode(&text, label, &place);
    agree(cluster, local.as_ref().err())?;
    let work = local.map_err(Usage)?;
    let jobs = work.jobs();
    let Some(job) = jobs.first() else {
        return Err(Usage("the job runs nothing".into()).into());
    };
    preflight(cluster, job, &hosts)?;
    let rank_opts = RunOptions {
        results_path: journal_path(&opts.results_path, cluster.rank()),
        interval_histograms: true,
        ..opts.clone()
    };
    // Every rank prepares its targets, then waits in `start` for the others and the
    // scheduled instant; a rank that cannot prepare still takes part (saying why), so that
    // none starts.
    let clocks = RefCell::new(Clocks::new(cluster.size()));
    let started = Cell::new(false);
    let start = || -> Result<()> {
        started.set(true);
        start_together(cluster, None, &clocks)
    };
    // Every interval: a heartbeat to rank 0, which ends the run when a rank goes silent.
    let limit = silence_limit(job);
    // Every 60 intervals, rank 0 measures the clocks again.
    let late: RefCell<Vec<usize>> = RefCell::new(Vec::new());
    let tick = |index: u64| {
        watch(cluster, signals, &hosts, limit, &late);
        if (index + 1) % CLOCK_CHECK_INTERVALS == 0 && late.borrow().is_empty() {
            check_clocks(cluster, index, &clocks);
        }
    };
    let obs = &mut Watchdog {
        inner: obs,
        tick: &tick,
    };
    // Every rank here at once: each says it has nothing against going on.
    let together = || agree(cluster, None);
    let mut exec = super::Runner {
        signals,
        obs,
        start: Some(&start),
        together: Some(&together),
    };
    let mine = work.run(&mut exec, &rank_opts);
    if let (false, Err(e)) = (started.get(), &mine) {
        start_together(cluster, Some(format!("{e:#}")), &clocks)?;
    }
    let mine = mine.map_err(|e| format!("{e:#}"));
    let bytes = match &mine {
        Ok(r) => serde_json::to_vec(r)?,
        Err(e) => format!("error: {e}").into_bytes(),
    };
    // Stopped by a signal (a launcher ending the job sends SIGTERM, then SIGKILL soon after):
    // rank 0 asks the others to stop and send what they have, writes its own results as the
    // merged ones at once (the launcher may kill it any moment), and again with what arrives
    // within an interval and a second.
    let signalled = signals.signalled();
    if signalled && cluster.rank() == 0 {
        cluster.stop_all();
        if let Ok(root) = &mine {
            let alone = vec![None; cluster.size()];
            write_merged(root.clone(), &alone, &hosts, &clocks.borrow(), opts)?;
        }
    }
    let wait = if signalled {
        Duration::from_millis(job.interval_ms).max(SIGNALLED_WAIT) + SIGNALLED_WAIT
    } else if !late.borrow().is_empty() {
        limit.max(LATE_RESULTS_WAIT)
    } else {
        RESULTS_WAIT
    };
    let Some(parts) = cluster.gather(bytes, wait)? else {
        return mine.map(|_| None).map_err(anyhow::Error::msg);
    };
    let root = mine.map_err(anyhow::Error::msg)?;
    write_merged(root, &parts, &hosts, &clocks.borrow(), opts).map(Some)
}

/// Merges the root's results `root` with the other ranks' `parts` (see [`merged_result`]),
/// notes each rank's clock, and writes the merged results and time series.
fn write_merged(
    root: RunResult,
    parts: &[Option<Vec<u8>>],
    hosts: &[String],
    clocks: &Clocks,
    opts: &RunOptions,
) -> Result<RunResult> {
    let interval_ns = root.job.interval_ms * 1_000_000;
    let mut merged = merged_result(root, parts, hosts, &opts.results_path);
    for h in &mut merged.hosts {
        if let Some(c) = clocks.at_start.get(h.rank) {
            h.clock_offset_ns = c.offset_ns;
            h.clock_uncertainty_ns = c.uncertainty_ns;
        }
        h.clock_checks = clocks.checks.get(h.rank).cloned().unwrap_or_default();
        let drift = h.clock_drift_ns();
        if drift > interval_ns / 100 {
            merged.warnings.push(format!(
                "rank {} on {}: its clock moved at least {} against rank 0's during the run (beyond the measurements' uncertainty), so its intervals line up with the others' only within that ({:.1} % of an interval); a host whose clock is steered hard (NTP stepping, a VM paused) shows this",
                h.rank,
                h.host,
                crate::units::format_ns(drift as f64),
                drift as f64 * 100.0 / interval_ns as f64
            ));
        }
    }
    // The merged time series, as a run's own: one record a line beside the results.
    let ndjson = results::file::timeseries_path(&opts.results_path);
    let mut lines = String::new();
    for rec in &merged.timeseries.held {
        lines.push_str(&serde_json::to_string(rec)?);
        lines.push('\n');
    }
    crate::files::write_atomic(&ndjson, lines.as_bytes(), crate::files::Durability::Synced)
        .map_err(|e| crate::files::cannot_write("the time series", &ndjson, &e))?;
    merged.timeseries_path = Some(ndjson.display().to_string());
    results::file::save(&opts.results_path, &merged)?;
    Ok(merged)
}

/// How long rank 0 waits for a rank's heartbeat (sent every interval) before it names the
/// rank and ends the run: five intervals, at least 10 s (2 s in tests).
fn silence_limit(job: &Job) -> Duration {
    let floor = if cfg!(test) { 2_000 } else { 10_000 };
    Duration::from_millis((job.interval_ms * 5).max(floor))
}

/// One interval's watch: a heartbeat to rank 0; on rank 0, the ranks silent for `limit` named
/// in the stop of the run (once) and every rank asked to stop; elsewhere, rank 0's request
/// obeyed.
fn watch(
    cluster: &dyn Cluster,
    signals: &Signals,
    hosts: &[String],
    limit: Duration,
    late: &RefCell<Vec<usize>>,
) {
    cluster.heartbeat();
    if cluster.rank() != 0 {
        if cluster.stop_asked() {
            signals.stop_because(
                "rank 0 ended the run: another rank stopped sending its heartbeat".into(),
            );
        }
        return;
    }
    let silent = cluster.silent(limit);
    if silent.is_empty() || !late.borrow().is_empty() {
        return;
    }
    let names: Vec<String> = (silent.iter())
        .map(|&r| format!("rank {r} on {}", hosts.get(r).map_or("?", String::as_str)))
        .collect();
    signals.stop_because(format!(
        "{} sent no heartbeat for {} s (hung, or its host or network failed)",
        names.join(", "),
        limit.as_secs()
    ));
    cluster.stop_all();
    *late.borrow_mut() = silent;
}

/// An observer that also runs the cluster's watch at every interval.
struct Watchdog<'a, 'o> {
    inner: &'o mut dyn Observer,
    tick: &'a dyn Fn(u64),
}

impl Observer for Watchdog<'_, '_> {
    fn phase(&mut self, phase: crate::results::Phase) {
        self.inner.phase(phase);
    }

    fn prepare(&mut self, target: &str, done: u64, total: u64) {
        self.inner.prepare(target, done, total);
    }

    fn interval(
        &mut self,
        record: &crate::stats::timeseries::IntervalRecord,
        grid: &crate::stats::timeseries::IntervalGrid,
    ) {
        self.inner.interval(record, grid);
        (self.tick)(record.index);
    }

    fn step(&mut self, step: &crate::results::steps::StepResult) {
        self.inner.step(step);
    }

    fn finish(&mut self) {
        self.inner.finish();
    }

    fn job(&mut self, job: &Job) {
        self.inner.job(job);
    }

    fn worker_interval(&mut self, worker: usize, index: u64, stats: &crate::stats::StatsSet) {
        self.inner.worker_interval(worker, index, stats);
    }
}

/// Rounds of clock readings; the one with the shortest round trip counts for each rank.
const CLOCK_ROUNDS: usize = 8;
/// The scheduled start is at least this far ahead of when it is sent.
const START_MARGIN_NS: u64 = 50_000_000;

/// A rank's monotonic clock against rank 0's.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Clock {
    /// Its clock minus rank 0's, ns.
    offset_ns: i64,
    /// The offset is within this of the truth, ns (half the round trip it was measured in).
    uncertainty_ns: u64,
}

impl Clock {
    /// A rank's clock that read `theirs` between rank 0's readings `before` and `after`.
    fn between(before: u64, theirs: u64, after: u64) -> Clock {
        Clock {
            offset_ns: (i128::from(theirs) - (i128::from(before) + i128::from(after)) / 2) as i64,
            uncertainty_ns: after.saturating_sub(before).div_ceil(2),
        }
    }

    /// Keeps in `best` whichever of the two was measured in the shorter round trip.
    fn keep_best(self, best: &mut Option<Clock>) {
        if best.is_none_or(|b| self.uncertainty_ns < b.uncertainty_ns) {
            *best = Some(self);
        }
    }
}

/// Every rank's clock against rank 0's, as rank 0 knows them (empty on the other ranks).
#[derive(Debug, Default)]
struct Clocks {
    /// Measured before the start, by rank.
    at_start: Vec<Clock>,
    /// Measured during the run, by rank.
    checks: Vec<Vec<ClockCheck>>,
}

impl Clocks {
    fn new(ranks: usize) -> Clocks {
        Clocks {
            at_start: Vec::new(),
            checks: vec![Vec::new(); ranks],
        }
    }
}

/// The clocks are measured again every this many intervals (a minute of the default 1 s
/// intervals): each host's monotonic clock is steered on its own (NTP slews it), and the ranks'
/// intervals line up only as well as their clocks agree.
const CLOCK_CHECK_INTERVALS: u64 = 60;
/// During the run, how long rank 0 waits for a rank's reading (a rank that does not answer in
/// time is left out of that check), and a rank, twice this, for rank 0's next request (their
/// intervals end at about the same instant).
const CLOCK_CHECK_WAIT: Duration = Duration::from_millis(500);

/// At the end of interval `index`: rank 0 measures every rank's clock again (kept in
/// `clocks`); the other ranks answer. A rank late to a check misses it, nothing more.
fn check_clocks(cluster: &dyn Cluster, index: u64, clocks: &RefCell<Clocks>) {
    let Some(best) = measure_clocks(cluster, index, CLOCK_CHECK_WAIT) else {
        return;
    };
    let mut clocks = clocks.borrow_mut();
    for (rank, clock) in best.into_iter().enumerate().skip(1) {
        if let (Some(c), Some(list)) = (clock, clocks.checks.get_mut(rank)) {
            list.push(ClockCheck {
                interval: index,
                offset_ns: c.offset_ns,
                uncertainty_ns: c.uncertainty_ns,
            });
        }
    }
}

/// The clock measurement before the start: a `check` number no interval has.
const START_CHECK: u64 = u64::MAX / CLOCK_ROUNDS as u64;

/// Every rank's clock against rank 0's, on rank 0 (`None` elsewhere; a rank that did not
/// answer within `wait` has `None`): in [`CLOCK_ROUNDS`] rounds, rank 0 notes its clock, sends
/// every rank that answers so far a request and notes its clock as each answer arrives; the
/// rank's reading then lies between the two, so its offset is known within half that round
/// trip, and each rank's shortest round counts. On the side channel, not in collectives; the
/// other ranks answer the requests of measurement `check` (twice `wait` for each), and pass
/// over those of an earlier one they were late for.
fn measure_clocks(cluster: &dyn Cluster, check: u64, wait: Duration) -> Option<Vec<Option<Clock>>> {
    let rounds = CLOCK_ROUNDS as u64;
    if cluster.rank() != 0 {
        let mut answered = 0;
        while answered < rounds {
            let mut bytes = cluster.take(0, 2 * wait)?;
            let Ok(id) = <[u8; 8]>::try_from(bytes.as_slice()).map(u64::from_le_bytes) else {
                continue;
            };
            if id / rounds == check {
                bytes.extend(now_ns().to_le_bytes());
                cluster.post(0, bytes);
                answered += 1;
            }
        }
        return None;
    }
    let mut best: Vec<Option<Clock>> = vec![None; cluster.size()];
    best[0] = Some(Clock::default());
    let mut asked: Vec<usize> = (1..cluster.size()).collect();
    for round in 0..rounds {
        let id = (check * rounds + round).to_le_bytes();
        let before = now_ns();
        for &r in &asked {
            cluster.post(r, id.to_vec());
        }
        let deadline = std::time::Instant::now() + wait;
        asked.retain(|&r| match clock_reading(cluster, r, id, deadline) {
            Some(theirs) => {
                Clock::between(before, theirs, now_ns()).keep_best(&mut best[r]);
                true
            }
            None => false,
        });
    }
    Some(best)
}

/// Rank `from`'s answer to the clock check request `id`, until `deadline` (`None`: none came).
fn clock_reading(
    cluster: &dyn Cluster,
    from: usize,
    id: [u8; 8],
    deadline: std::time::Instant,
) -> Option<u64> {
    loop {
        let wait = deadline.saturating_duration_since(std::time::Instant::now());
        let bytes = cluster.take(from, wait)?;
        // An answer to an earlier request (the rank was late) is passed over.
        if let Some(reading) = bytes.strip_prefix(&id) {
            return reading.try_into().ok().map(u64::from_le_bytes);
        }
    }
}

/// This host's monotonic clock, ns.
fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Every rank says whether it is ready (`error`: why not); then rank 0 measures every rank's
/// clock (kept in `clocks` on rank 0) and schedules the start on its own clock, and each rank
/// waits until that instant on its own clock. Unless every rank is ready, every rank returns
/// the same error and none starts.
fn start_together(
    cluster: &dyn Cluster,
    error: Option<String>,
    clocks: &RefCell<Clocks>,
) -> Result<()> {
    agree(cluster, error.as_ref())?;
    let measured = match measure_clocks(cluster, START_CHECK, SETUP_WAIT) {
        Some(best) => {
            let late: Vec<usize> = (best.iter().enumerate())
                .filter(|(_, c)| c.is_none())
                .map(|(r, _)| r)
                .collect();
            if !late.is_empty() {
                // The others stop when no start time comes.
                return Err(cluster::ClusterError::Late {
                    ranks: late,
                    waited: SETUP_WAIT,
                }
                .into());
            }
            Some(best.into_iter().flatten().collect::<Vec<Clock>>())
        }
        None => None,
    };
    let plan = measured.as_ref().map(|c| {
        let widest = c.iter().map(|c| c.uncertainty_ns).max().unwrap_or(0);
        let start = now_ns() + START_MARGIN_NS.max(widest * 4);
        c.iter()
            .flat_map(|c| (start as i64 + c.offset_ns).max(0).to_le_bytes())
            .collect::<Vec<u8>>()
    });
    clocks.borrow_mut().at_start = measured.unwrap_or_default();
    let plan = cluster.broadcast(plan, SETUP_WAIT)?;
    let at = plan
        .chunks_exact(8)
        .nth(cluster.rank())
        .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")) as u64)
        .ok_or_else(|| anyhow::anyhow!("rank 0 sent no start time for this rank"))?;
    let wait = at.saturating_sub(now_ns());
    std::thread::sleep(std::time::Duration::from_nanos(wait.min(10_000_000_000)));
    Ok(())
}

/// Every rank's host name, on every rank.
fn all_hosts(cluster: &dyn Cluster) -> Result<Vec<String>> {
    let gathered = cluster.gather(cluster.host().as_bytes().to_vec(), SETUP_WAIT)?;
    let joined = match gathered {
        Some(parts) => Some(
            cluster::complete(parts, SETUP_WAIT)?
                .into_iter()
                .map(|h| String::from_utf8_lossy(&h).into_owned())
                .collect::<Vec<_>>()
                .join("\n")
                .into_bytes(),
        ),
        None => None,
    };
    let bytes = cluster.broadcast(joined, SETUP_WAIT)?;
    Ok(String::from_utf8_lossy(&bytes)
        .split('\n')
        .map(str::to_string)
        .collect())
}

/// Every rank says whether it is ready (`error`: why not); unless all are, every rank stops
/// with the same error, naming the ranks and their reasons.
fn agree(cluster: &dyn Cluster, error: Option<&String>) -> Result<()> {
    let mine = error.cloned().unwrap_or_default().into_bytes();
    decide(cluster, mine, |all| {
        (all.iter().enumerate())
            .filter(|(_, e)| !e.is_empty())
            .map(|(r, e)| format!("rank {r}: {}", String::from_utf8_lossy(e)))
            .collect::<Vec<_>>()
            .join("; ")
    })
    .map_err(|why| {
        Usage(format!(
            "not every rank can run the job, so none started: {why}"
        ))
        .into()
    })
}

/// No two ranks write the same data unless they share it by slices (see
/// [`rank_targets::collisions`]); otherwise every rank stops with the same error.
fn preflight(cluster: &dyn Cluster, job: &Job, hosts: &[String]) -> Result<()> {
    let mine = rank_targets::describe(job, cluster.host()).into_bytes();
    decide(cluster, mine, |all| {
        let described: Vec<(usize, String, String)> = (all.iter().enumerate())
            .map(|(r, d)| {
                let host = hosts.get(r).cloned().unwrap_or_default();
                (r, host, String::from_utf8_lossy(d).into_owned())
            })
            .collect();
        rank_targets::collisions(&described).unwrap_or_default()
    })
    .map_err(|why| Usage(format!("no rank started: {why}")).into())
}

/// Every rank sends `mine` to the root, which judges them all (`judge`: empty when all is
/// well) and tells every rank: `Ok` everywhere, or the same `Err(why)` everywhere.
fn decide(
    cluster: &dyn Cluster,
    mine: Vec<u8>,
    judge: impl FnOnce(&[Vec<u8>]) -> String,
) -> std::result::Result<(), anyhow::Error> {
    let verdict = match cluster.gather(mine, SETUP_WAIT)? {
        Some(parts) => Some(judge(&cluster::complete(parts, SETUP_WAIT)?).into_bytes()),
        None => None,
    };
    let verdict = cluster.broadcast(verdict, SETUP_WAIT)?;
    if verdict.is_empty() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            String::from_utf8_lossy(&verdict).into_owned()
        ))
    }
}

/// Where a rank is, to fill in its paths' templates (`{rank}`, `{host}`, `{node}`) and slice
/// shared targets.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    /// This rank.
    pub rank: usize,
    /// How many ranks.
    pub ranks: usize,
    /// This rank's host name.
    pub host: String,
    /// Which node this host is, in the order of the ranks' hosts.
    pub node: usize,
}

impl Place {
    /// `path` with this rank's templates filled in.
    pub(crate) fn expand(&self, path: &Path) -> Result<PathBuf, String> {
        cluster::expand(&path.to_string_lossy(), self.rank, &self.host, self.node)
            .map(PathBuf::from)
    }
}

/// How a rank reads the shared text (a job file or an application's section; its label names
/// it in errors) into its own workload, its paths' templates filled in for its place.
pub(crate) type Decode<'a> =
    &'a (dyn Fn(&str, &Path, &Place) -> Result<Box<dyn Workload>, String> + Sync);

/// This rank's job of a plain job file: the shared text with its target paths' templates
/// filled in, and shared targets sliced.
pub(crate) fn rank_job(text: &str, label: &Path, place: &Place) -> Result<Job, String> {
    let mut spec = crate::job::file::parse(label, text).map_err(|e| e.to_string())?;
    for t in &mut spec.target {
        let target = t.get_mut();
        if let Some(path) = &target.path {
            let expanded = place
                .expand(path)
                .map_err(|e| format!("{}: {e}", label.display()))?;
            target.path = Some(expanded);
        }
    }
    let mut job = crate::job::resolve(&spec, Some((label, text))).map_err(|e| e.to_string())?;
    rank_targets::slice(&mut job, place.rank, place.ranks)?;
    if job.sequence.is_sequence() {
        return Err(
            "a run over many hosts runs one step; sequences ([cycle], repeat, curve, until_steady) are not supported over many hosts yet".into(),
        );
    }
    Ok(job)
}

/// Runs the shared `text` on `n` ranks in this process (threads, rank `r` on host `h{r}`),
/// each read by `decode`; the root's merged results (written to `opts.results_path`) and
/// every other rank's outcome. For workloads' tests of runs over many hosts.
#[cfg(test)]
pub(crate) fn in_process(
    n: usize,
    text: &str,
    opts: &RunOptions,
    decode: Decode<'_>,
) -> Vec<Result<Option<RunResult>>> {
    use crate::cluster::Threads;
    std::thread::scope(|s| {
        let handles: Vec<_> = Threads::ranks(n, |r| format!("h{r}"))
            .into_iter()
            .map(|c| {
                let opts = opts.clone();
                s.spawn(move || {
                    let root = (c.rank() == 0).then_some(text);
                    run(
                        &c,
                        root,
                        Path::new("job.toml"),
                        &opts,
                        &Signals::none(),
                        &mut crate::results::progress::Quiet,
                        decode,
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a rank panicked")))
            })
            .collect()
    })
}

/// Rank `rank`'s own results file: `NAME.rankR.json` beside `path`.
fn journal_path(path: &Path, rank: usize) -> PathBuf {
    path.with_extension(format!("rank{rank}.json"))
}

/// The root's results with every rank's merged in: classes, totals and time series exact, a
/// `hosts` entry per rank, a verdict that passes only if every rank was there and passed.
fn merged_result(
    root: RunResult,
    parts: &[Option<Vec<u8>>],
    hosts: &[String],
    path: &Path,
) -> RunResult {
    let mut runs = Vec::new();
    let mut entries = Vec::new();
    for (rank, part) in parts.iter().enumerate() {
        let host = hosts.get(rank).cloned().unwrap_or_default();
        let results_path = journal_path(path, rank).display().to_string();
        let result = match (rank, part) {
            (0, _) => Ok(root.clone()),
            (_, Some(bytes)) => match serde_json::from_slice::<RunResult>(bytes) {
                Ok(r) => Ok(r),
                Err(_) => Err(String::from_utf8_lossy(bytes).into_owned()),
            },
            (_, None) => Err(format!(
                "its results never reached the root (it stopped, hung or lost its network); what it measured is in {results_path} on {host}"
            )),
        };
        entries.push(HostResult::of(rank, &host, results_path, &result));
        if let Ok(r) = result {
            runs.push(HostRun {
                rank,
                host,
                result: r,
            });
        }
    }
    let merged = cluster::merge(&runs, parts.len());
    // Each rank's series as its results file inlines it (the root's own read from its file):
    // a run too long to inline one merges none.
    let held: Vec<Vec<crate::stats::timeseries::IntervalRecord>> = (runs.iter())
        .map(|r| r.result.timeseries.within(results::INLINE_INTERVALS))
        .collect();
    let series: Vec<(&str, &[crate::stats::timeseries::IntervalRecord])> = (runs.iter())
        .zip(&held)
        .map(|(r, h)| (r.host.as_str(), h.as_slice()))
        .collect();
    let mut out = root;
    let ranks: Vec<&RunResult> = runs.iter().map(|r| &r.result).collect();
    results::hosts::merge_sections(&mut out, &ranks);
    out.timeseries = results::timeseries::Series::held(cluster::merge_intervals(&series));
    out.classes = merged.classes;
    out.totals = merged.totals;
    out.devices.clear();
    out.workers.clear();
    // Per host, not merged: each rank's own are in its results file.
    out.reuse = None;
    out.block_sample = None;
    out.host_cpu =
        crate::stats::host::CpuPercent::weighted(runs.iter().map(|r| (r.result.host_cpu, 1.0)));
    out.warnings.push(format!(
        "a run over {} ranks: classes, totals and the time series are every rank's, merged; CPU figures are the hosts' means; the job, targets and devices shown are rank 0's{} (each rank's own are in its results file, listed under hosts, with its verdict)",
        parts.len(),
        if out.exchange.is_some() {
            ", and so are the Exchange figures (mailboxes, databases, achieved IOPS)"
        } else {
            ""
        }
    ));
    if !merged.missing.is_empty() || entries.iter().any(|e| !e.present) {
        let absent: Vec<String> = entries
            .iter()
            .filter(|e| !e.present)
            .map(|e| format!("rank {} on {}", e.rank, e.host))
            .collect();
        out.interrupted = Interrupted::Yes(format!(
            "{} did not send its results: the figures are those of the ranks that did",
            absent.join(", ")
        ));
    }
    let mut rules: Vec<Rule> = entries
        .iter()
        .filter(|e| e.present)
        .map(|e| {
            let mut rule = Rule::judge(
                format!("rank {} on {}: rules failed", e.rank, e.host),
                e.failed_rules.len() as f64,
                Comparison::AtMost,
                0.0,
                "rules",
            );
            if e.inconclusive {
                rule.inconclusive = Some(format!(
                    "its verdict was INCONCLUSIVE: every rule it failed, the delays of host {} to storlab's threads may have failed",
                    e.host
                ));
            }
            if e.not_measured {
                // Its only shortfall: rules it had too few samples to judge.
                rule.pass = false;
                rule.not_measured = Some(format!(
                    "its verdict was NOT MEASURED: rules on host {} had too few samples to judge",
                    e.host
                ));
            }
            rule
        })
        .collect();
    rules.push(Rule::judge(
        "ranks missing",
        merged.missing.len() as f64,
        Comparison::AtMost,
        0.0,
        "ranks",
    ));
    // The ranks' own verdicts were weighed on their hosts; none is weighed again here.
    out.verdict = Some(Verdict::weighed(rules, None));
    out.hosts = entries;
    out
}
