//! Every rank's results as one: class and total figures from the ranks' histograms added
//! (exact: the merged percentiles are read from the sum, never averaged), and one entry per
//! host with its own figures and verdict. The run passes only if every rank was there to the
//! end and passed.

use crate::results::{ClassResult, RunResult};
use crate::stats::OpStats;
use crate::stats::histogram::{EncodedHistogram, Histogram};
use crate::stats::host::CpuPercent;
use crate::stats::summary::{ClassSummary, DirSummary};
use crate::stats::timeseries::{IntervalClass, IntervalDir, IntervalRecord};
use std::collections::{BTreeMap, BTreeSet};

/// One rank's results, as gathered by the root.
#[derive(Debug, Clone)]
pub(crate) struct HostRun {
    /// Its rank.
    pub(crate) rank: usize,
    /// Its host.
    pub(crate) host: String,
    /// What it measured.
    pub(crate) result: RunResult,
}

/// One host's part of a merged run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HostSummary {
    /// Its rank.
    pub(crate) rank: usize,
    /// Its host.
    pub(crate) host: String,
    /// Its own totals.
    pub(crate) totals: ClassSummary,
    /// Its verdict: `None` when its run judged nothing.
    pub(crate) pass: Option<bool>,
    /// Whether its run stopped before the end.
    pub(crate) stopped_early: bool,
}

/// The ranks' results merged.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Merged {
    /// Every class over every host.
    pub(crate) classes: BTreeMap<String, ClassResult>,
    /// Everything over every host.
    pub(crate) totals: ClassSummary,
    /// Per host, in rank order.
    pub(crate) hosts: Vec<HostSummary>,
    /// Ranks whose results never arrived.
    pub(crate) missing: Vec<usize>,
    /// Whether the run passes: every rank present and to the end, none failed (`None`: no rank
    /// judged anything and none was missing or stopped early).
    pub(crate) pass: Option<bool>,
}

/// Merges the results of `runs` of a run of `ranks` ranks over the measured window (the
/// longest of the ranks', which measured the same scheduled window).
pub(crate) fn merge(runs: &[HostRun], ranks: usize) -> Merged {
    let seconds = runs.iter().map(|r| r.result.measured_ms).max().unwrap_or(0) as f64 / 1000.0;
    let names: BTreeSet<&String> = runs.iter().flat_map(|r| r.result.classes.keys()).collect();
    let classes = names
        .into_iter()
        .map(|name| {
            let parts: Vec<&ClassResult> = runs
                .iter()
                .filter_map(|r| r.result.classes.get(name))
                .collect();
            let pick = |f: fn(&ClassResult) -> &DirSummary| {
                DirSummary::merge(&parts.iter().map(|p| f(p)).collect::<Vec<_>>(), seconds)
            };
            let durability: BTreeSet<&str> =
                parts.iter().map(|p| p.write_durability.as_str()).collect();
            let merged = ClassResult {
                read: pick(|c| &c.read),
                write: pick(|c| &c.write),
                flush: pick(|c| &c.flush),
                write_durability: durability.into_iter().collect::<Vec<_>>().join("+"),
                measured_ms: None,
                steps: None,
            };
            (name.clone(), merged)
        })
        .collect();
    let totals = ClassSummary::merge(
        &runs.iter().map(|r| &r.result.totals).collect::<Vec<_>>(),
        seconds,
    );
    let hosts: Vec<HostSummary> = runs
        .iter()
        .map(|r| HostSummary {
            rank: r.rank,
            host: r.host.clone(),
            totals: r.result.totals.clone(),
            pass: r.result.verdict.as_ref().map(|v| v.passed()),
            stopped_early: r.result.interrupted.stopped_early(),
        })
        .collect();
    let missing: Vec<usize> = (0..ranks)
        .filter(|rank| !runs.iter().any(|r| r.rank == *rank))
        .collect();
    let absent = !missing.is_empty() || hosts.iter().any(|h| h.stopped_early);
    let judged = hosts.iter().any(|h| h.pass.is_some());
    let pass = if absent || hosts.iter().any(|h| h.pass == Some(false)) {
        Some(false)
    } else {
        judged.then_some(true)
    };
    Merged {
        classes,
        totals,
        hosts,
        missing,
        pass,
    }
}

/// One host's record of an interval.
type HostInterval<'a> = (&'a str, &'a IntervalRecord);

/// Every rank's time series as one: interval `i` of the merge is interval `i` of every rank
/// that has it (the ranks started together), its counts added and its latency figures read from
/// the ranks' interval histograms added (`IntervalRecord::histograms`, which the ranks keep);
/// the CPU figures are the hosts' means, the devices are named `HOST/DEVICE`. The merged records
/// do not keep the histograms.
pub(crate) fn merge_intervals(hosts: &[(&str, &[IntervalRecord])]) -> Vec<IntervalRecord> {
    let mut by_index: BTreeMap<(Option<usize>, u64), Vec<HostInterval>> = BTreeMap::new();
    for (host, series) in hosts {
        for rec in series.iter() {
            by_index
                .entry((rec.step, rec.index))
                .or_default()
                .push((host, rec));
        }
    }
    by_index
        .into_values()
        .map(|parts| {
            let (_, first) = parts[0];
            let seconds =
                parts.iter().map(|(_, r)| r.interval_ms).max().unwrap_or(1) as f64 / 1000.0;
            let names: BTreeSet<&String> =
                parts.iter().flat_map(|(_, r)| r.classes.keys()).collect();
            let classes = names
                .into_iter()
                .map(|name| {
                    let merged = merge_class(&parts, seconds, |r| {
                        let h = r.histograms.as_ref().and_then(|h| h.classes.get(name));
                        (r.classes.get(name), h)
                    });
                    (name.clone(), merged)
                })
                .collect();
            let total = merge_class(&parts, seconds, |r| {
                (Some(&r.total), r.histograms.as_ref().map(|h| &h.total))
            });
            let cpu = CpuPercent::weighted(parts.iter().map(|(_, r)| (r.cpu, 1.0)));
            let devices = parts
                .iter()
                .flat_map(|(host, r)| {
                    r.devices
                        .iter()
                        .map(move |(d, delta)| (format!("{host}/{d}"), *delta))
                })
                .collect();
            IntervalRecord {
                classes,
                total,
                cpu,
                devices,
                histograms: None,
                interval_ms: (seconds * 1000.0) as u64,
                ..first.clone()
            }
        })
        .collect()
}

/// One class's interval merged: counts added, latency from the histograms added.
fn merge_class<'a>(
    parts: &[(&str, &'a IntervalRecord)],
    seconds: f64,
    pick: impl Fn(
        &'a IntervalRecord,
    ) -> (
        Option<&'a IntervalClass>,
        Option<&'a [Option<EncodedHistogram>; 3]>,
    ),
) -> IntervalClass {
    let mut dirs: [OpStats; 3] = Default::default();
    for (_, rec) in parts {
        let (class, histograms) = pick(rec);
        let Some(class) = class else { continue };
        for (d, (stats, figures)) in dirs
            .iter_mut()
            .zip([&class.read, &class.write, &class.flush])
            .enumerate()
        {
            stats.ops += figures.ops;
            stats.bytes += figures.bytes;
            stats.errors += figures.errors;
            if let Some(h) = histograms
                .and_then(|h| h[d].as_ref())
                .and_then(|e| Histogram::decode(e).ok())
            {
                stats.latency.add(&h);
            }
        }
    }
    let [read, write, flush] = dirs.each_ref().map(|s| IntervalDir::of(s, seconds));
    IntervalClass { read, write, flush }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::verdict::{Comparison, Rule, Verdict};
    use crate::stats::OpStats;

    /// A host's result with class `db`: reads of latencies `values`, over 10 s.
    fn host(rank: usize, values: &[u64], pass: Option<bool>) -> HostRun {
        let mut s = OpStats::default();
        for &v in values {
            s.ops += 1;
            s.bytes += 4096;
            s.latency.record(v);
        }
        let read = DirSummary::of(&s, 10.0, true);
        let class = ClassResult {
            read: read.clone(),
            write: DirSummary::default(),
            flush: DirSummary::default(),
            write_durability: "none".into(),
            measured_ms: None,
            steps: None,
        };
        let result = RunResult {
            measured_ms: 10_000,
            classes: BTreeMap::from([("db".to_string(), class.clone())]),
            totals: class.summary(),
            verdict: pass.map(|p| {
                let latency = if p { 1.0 } else { 30.0 };
                Verdict::of(vec![Rule::judge(
                    "read latency",
                    latency,
                    Comparison::AtMost,
                    20.0,
                    "ms",
                )])
            }),
            ..RunResult::default()
        };
        HostRun {
            rank,
            host: format!("host{rank}"),
            result,
        }
    }

    #[test]
    fn the_merge_equals_one_histogram_of_every_sample() {
        // Three hosts with different latency shapes; the merge must be what one histogram of
        // all their samples says, percentiles included.
        let shapes: [Vec<u64>; 3] = [
            (1..=3000).map(|i| 50_000 + i * 11).collect(),
            (1..=500).map(|i| 2_000_000 + i * 997).collect(),
            (1..=1200).map(|i| (i * i) % 900_000 + 1).collect(),
        ];
        let runs: Vec<HostRun> = shapes
            .iter()
            .enumerate()
            .map(|(r, v)| host(r, v, None))
            .collect();
        let m = merge(&runs, 3);
        let mut all = OpStats::default();
        for &v in shapes.iter().flatten() {
            all.ops += 1;
            all.bytes += 4096;
            all.latency.record(v);
        }
        let want = DirSummary::of(&all, 10.0, true);
        assert_eq!(m.classes["db"].read, want);
        assert_eq!(m.totals.read, want);
        assert_eq!(m.classes["db"].read.latency_ns.p99, want.latency_ns.p99);
        // An average of the hosts' p99 would be far from it.
        let averaged = runs
            .iter()
            .map(|r| r.result.totals.read.latency_ns.p99 as f64)
            .sum::<f64>()
            / 3.0;
        assert!((averaged - want.latency_ns.p99 as f64).abs() > 100_000.0);
        assert_eq!(m.hosts.len(), 3);
        assert_eq!(m.hosts[1].totals.read.ops, 500);
        assert_eq!(m.pass, None, "nothing judged");
    }

    #[test]
    fn the_run_passes_only_if_every_host_passes_and_was_there() {
        let ok = |r| host(r, &[1000, 2000], Some(true));
        let m = merge(&[ok(0), ok(1), ok(2)], 3);
        assert_eq!(m.pass, Some(true));
        let m = merge(&[ok(0), host(1, &[1000], Some(false)), ok(2)], 3);
        assert_eq!(m.pass, Some(false));
        assert_eq!(m.hosts[1].pass, Some(false));
        // Rank 1 never sent its results: the others' figures are kept, the run fails.
        let m = merge(&[ok(0), ok(2)], 3);
        assert_eq!(m.missing, [1]);
        assert_eq!(m.pass, Some(false));
        assert_eq!(m.totals.read.ops, 4);
        let mut stopped = ok(2);
        stopped.result.interrupted = crate::results::Interrupted::Yes("SIGTERM".into());
        assert_eq!(merge(&[ok(0), ok(1), stopped], 3).pass, Some(false));
    }
}
