//! The part of a results file a file-system workload adds: the tree (its anchor, file system,
//! shape, and what it held before the runs and after them), the format's figures, every run's
//! figures per operation and per workload (count, rate, latency percentiles, errors, and bytes
//! for the operations that move data), the operations that failed, and mdtest's phases as
//! mdtest and IO500 report them. Every view (console, `storlab report`, HTML, CSV, JSON)
//! shows these numbers as they are here.

use crate::stats::histogram::LatencySummary;
use crate::stats::summary::DirSummary;
use serde::{Deserialize, Serialize};

/// A file-system workload's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FsResult {
    /// The anchor, as given.
    pub anchor: String,
    /// The file system it is on (`ext4`, `tmpfs`, `fuse.faultfs`…).
    pub filesystem: String,
    /// Its mount point, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_point: Option<String>,
    /// The block device under it, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The tree's shape.
    pub shape: ShapeFigures,
    /// How files were opened: `none`, or `o_direct`, `o_dsync`, `o_sync`, `fsync` joined by
    /// commas.
    pub openflags: String,
    /// What was asked of the tree first: `restart`, `yes`, `no`, `only` or `clean`.
    pub format: String,
    /// What was removed before the format (a tree found and removed).
    pub removed: TreeCounts,
    /// What the tree held when the runs started (after the format).
    pub start: TreeCounts,
    /// What it held at the end, as the file system showed it to a walk of the tree.
    pub end: TreeCounts,
    /// Every run: the format's (when it made anything) first, then each pass of each run, or
    /// each mdtest phase.
    pub runs: Vec<FsRun>,
    /// The first operations that failed, each with its file and why.
    pub failures: Vec<FsFailure>,
    /// mdtest's phases, as mdtest and IO500 report them (a job with `[fs.mdtest]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mdtest: Option<MdtestResult>,
}

/// The tree's shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShapeFigures {
    /// Levels of directories under the anchor.
    pub depth: u32,
    /// Directories in each directory above the deepest level.
    pub width: u32,
    /// Files in each directory that holds files.
    pub files_per_dir: u64,
    /// `bottom` (the deepest directories hold the files) or `all`.
    pub distribution: String,
    /// File sizes and their weights.
    pub sizes: Vec<SizeWeight>,
    /// Directories under the anchor.
    pub dirs: u64,
    /// Files.
    pub files: u64,
    /// Bytes of every file together.
    pub bytes: u64,
}

/// A file size and its weight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SizeWeight {
    /// Bytes.
    pub bytes: u64,
    /// Weight (the share of files of this size is its weight over all the weights).
    pub weight: u32,
}

/// What a tree holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeCounts {
    /// Files.
    pub files: u64,
    /// Directories under the anchor.
    pub dirs: u64,
    /// Bytes of the files.
    pub bytes: u64,
}

/// One run: a pass of a run (its cycle's values in its name), the format, or an mdtest
/// phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FsRun {
    /// `format`, `r1`, `r1 threads=4 xfersize=8 KiB`, `mdtest create 1`…
    pub name: String,
    /// Measured seconds (its rates are over these).
    pub seconds: f64,
    /// Threads.
    pub threads: u32,
    /// Operations a second asked of all its threads together (open loop); absent: closed
    /// loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_ops_per_s: Option<f64>,
    /// Whether it was cut short (a signal, too many errors, a thread that failed).
    pub interrupted: bool,
    /// Each operation of each workload that it did.
    pub operations: Vec<FsOpFigures>,
    /// Each workload's operations together.
    pub workloads: Vec<FsWorkloadFigures>,
    /// Every operation together.
    pub total: DirSummary,
}

/// One operation of one workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FsOpFigures {
    /// The workload (its class in the results' `classes` is `WORKLOAD/OPERATION`, or the
    /// operation alone when the run has one workload).
    pub workload: String,
    /// `read`, `write`, `create`, `delete`, `open`, `close`, `getattr`, `setattr`, `access`,
    /// `mkdir`, `rmdir`, `copy` or `rename`.
    pub operation: String,
    /// Whether its bytes are data moved (read, write, copy).
    pub data: bool,
    /// Operations (failed ones included), bytes, errors, rates and latency; latency from
    /// each operation's system call to its return (closed loop) or from its intended time
    /// (open loop: response time; `service_latency_ns` from the call). A copy's bytes are
    /// the bytes it copied.
    pub figures: DirSummary,
    /// Times the operation was chosen and no file or directory could take it (every file
    /// already there for a create, none for a delete…): not issued, not counted above.
    pub unavailable: u64,
}

/// One workload's operations together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FsWorkloadFigures {
    /// The workload.
    pub workload: String,
    /// Its threads.
    pub threads: u32,
    /// Every operation of it together (latency merged from each operation's histogram).
    pub figures: DirSummary,
}

/// A failed operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FsFailure {
    /// The run it failed in.
    pub run: String,
    /// The workload.
    pub workload: String,
    /// The operation.
    pub operation: String,
    /// The file or directory, from the anchor.
    pub path: String,
    /// What failed.
    pub error: String,
}

/// mdtest's phases.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MdtestResult {
    /// The IO500 preset: `easy` or `hard` (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io500: Option<String>,
    /// Tasks: threads of every rank.
    pub tasks: u64,
    /// Files of each task.
    pub items: u64,
    /// Each task in a directory of its own.
    pub unique_dir: bool,
    /// Bytes written to each file as it was created.
    pub write_bytes: u64,
    /// Bytes read from each file.
    pub read_bytes: u64,
    /// Every phase of every iteration, in order.
    pub phases: Vec<MdPhaseFigures>,
    /// mdtest's `SUMMARY rate`: each operation's rate over the iterations.
    pub summary: Vec<MdSummaryRow>,
    /// IO500's `[RESULT]` lines of the phases (with a preset).
    pub io500_results: Vec<Io500Line>,
}

/// One phase of one iteration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MdPhaseFigures {
    /// `create`, `stat`, `read`, `remove`, `tree create`, `tree remove`.
    pub phase: String,
    /// The iteration, from 1.
    pub iteration: u32,
    /// Items done (files, or directories of the tree phases), failed ones left out.
    pub items: u64,
    /// Items that failed.
    pub errors: u64,
    /// Seconds from the start of every task to the end of the last.
    pub seconds: f64,
    /// Items a second.
    pub items_per_s: f64,
    /// Latency of the phase's own operation (the create, the stat, the read, the unlink).
    pub latency_ns: LatencySummary,
}

/// A row of mdtest's `SUMMARY rate` table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MdSummaryRow {
    /// As mdtest names it: `File creation`, `File stat`, `File read`, `File removal`,
    /// `Tree creation`, `Tree removal`.
    pub operation: String,
    /// Items a second: the highest of the iterations.
    pub max: f64,
    /// The lowest.
    pub min: f64,
    /// The mean.
    pub mean: f64,
    /// The standard deviation (of the population, as mdtest).
    pub stddev: f64,
}

/// An IO500 `[RESULT]` line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Io500Line {
    /// `mdtest-easy-write`…
    pub name: String,
    /// Thousands of items a second (the first iteration's).
    pub kiops: f64,
    /// Its seconds.
    pub seconds: f64,
}

impl FsResult {
    /// The run named `name`.
    pub fn run(&self, name: &str) -> Option<&FsRun> {
        self.runs.iter().find(|r| r.name == name)
    }
}

impl MdtestResult {
    /// IO500's score of these phases: the geometric mean of their kIOPS (IO500's IOPS score
    /// also takes `find`, which this is not).
    pub(crate) fn io500_score(&self) -> Option<f64> {
        let k: Vec<f64> = self.io500_results.iter().map(|l| l.kiops).collect();
        if k.is_empty() || k.iter().any(|&v| v <= 0.0) {
            return None;
        }
        Some((k.iter().map(|v| v.ln()).sum::<f64>() / k.len() as f64).exp())
    }
}

impl MdtestResult {
    /// Its phases, summary and IO500 lines from `runs` (those named `mdtest PHASE
    /// ITERATION` and `mdtest tree PHASE ITERATION`): each phase's items (its own operation's
    /// count, failed ones left out) over its seconds.
    pub(crate) fn fill(&mut self, runs: &[FsRun]) {
        let read_bytes = self.read_bytes;
        let item_op = |phase: &str| match phase {
            "create" => "create",
            "stat" => "getattr",
            "read" if read_bytes > 0 => "read",
            "read" => "open",
            "remove" => "delete",
            "tree create" => "mkdir",
            _ => "rmdir",
        };
        self.phases.clear();
        for r in runs {
            let Some(rest) = r.name.strip_prefix("mdtest ") else {
                continue;
            };
            let Some((phase, it)) = rest.rsplit_once(' ') else {
                continue;
            };
            let Ok(iteration) = it.parse::<u32>() else {
                continue;
            };
            let op = item_op(phase);
            let (ops, errors, latency) = r
                .operations
                .iter()
                .find(|o| o.operation == op)
                .map_or((0, 0, LatencySummary::default()), |o| {
                    (o.figures.ops, o.figures.errors, o.figures.latency_ns)
                });
            let items = ops.saturating_sub(errors);
            self.phases.push(MdPhaseFigures {
                phase: phase.to_string(),
                iteration,
                items,
                errors,
                seconds: r.seconds,
                items_per_s: crate::stats::per_second(items, r.seconds),
                latency_ns: latency,
            });
        }
        self.summary.clear();
        for (phase, name) in [
            ("create", "File creation"),
            ("stat", "File stat"),
            ("read", "File read"),
            ("remove", "File removal"),
            ("tree create", "Tree creation"),
            ("tree remove", "Tree removal"),
        ] {
            let rates: Vec<f64> = (self.phases.iter())
                .filter(|p| p.phase == phase)
                .map(|p| p.items_per_s)
                .collect();
            if rates.is_empty() {
                continue;
            }
            let n = rates.len() as f64;
            let mean = rates.iter().sum::<f64>() / n;
            let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
            self.summary.push(MdSummaryRow {
                operation: name.into(),
                max: rates.iter().copied().fold(f64::MIN, f64::max),
                min: rates.iter().copied().fold(f64::MAX, f64::min),
                mean,
                stddev: var.sqrt(),
            });
        }
        self.io500_results = match &self.io500 {
            Some(preset) => (self.phases.iter())
                .filter(|p| p.iteration == 1 && !p.phase.starts_with("tree"))
                .map(|p| {
                    let what = match p.phase.as_str() {
                        "create" => "write",
                        "remove" => "delete",
                        other => other,
                    };
                    Io500Line {
                        name: format!("mdtest-{preset}-{what}"),
                        kiops: p.items_per_s / 1e3,
                        seconds: p.seconds,
                    }
                })
                .collect(),
            None => Vec::new(),
        };
    }
}

/// Every rank's section of a run over many hosts merged: each run's operations' counts
/// added and their latencies merged from their histograms, over the slowest rank's seconds
/// (the ranks start each run together, so a run lasts until its last rank ends, as mdtest
/// times a phase); what the tree held is the first rank's when the ranks shared one tree,
/// else every rank's added; mdtest's figures from the merged runs.
#[cfg(any(feature = "mpi", test))]
pub(crate) fn merged(parts: &[&FsResult]) -> Option<FsResult> {
    let first = *parts.first()?;
    let mut out = first.clone();
    let one_tree = parts.iter().all(|p| p.anchor == first.anchor);
    if !one_tree {
        for (c, pick) in [
            (
                &mut out.removed,
                (|p: &FsResult| p.removed) as fn(&FsResult) -> TreeCounts,
            ),
            (&mut out.start, |p| p.start),
            (&mut out.end, |p| p.end),
        ] {
            *c = parts
                .iter()
                .map(|p| pick(p))
                .fold(TreeCounts::default(), |a, b| TreeCounts {
                    files: a.files + b.files,
                    dirs: a.dirs + b.dirs,
                    bytes: a.bytes.saturating_add(b.bytes),
                });
        }
    }
    for run in &mut out.runs {
        let same: Vec<&FsRun> = (parts.iter())
            .filter_map(|p| p.runs.iter().find(|r| r.name == run.name))
            .collect();
        let seconds = same.iter().map(|r| r.seconds).fold(0.0, f64::max);
        run.seconds = seconds;
        run.threads = same.iter().map(|r| r.threads).sum();
        run.interrupted = same.iter().any(|r| r.interrupted);
        run.rate_ops_per_s = (same.iter())
            .map(|r| r.rate_ops_per_s)
            .try_fold(0.0, |a, r| r.map(|r| a + r));
        for o in &mut run.operations {
            let each: Vec<&FsOpFigures> = (same.iter())
                .filter_map(|r| {
                    (r.operations.iter())
                        .find(|x| x.workload == o.workload && x.operation == o.operation)
                })
                .collect();
            let figures: Vec<&DirSummary> = each.iter().map(|x| &x.figures).collect();
            let bytes: u64 = each.iter().map(|x| x.figures.bytes).sum();
            o.figures = DirSummary::merge(&figures, seconds);
            // A copy's bytes are its own count, not its requests' lengths.
            o.figures.bytes = bytes;
            o.figures.bytes_per_s = crate::stats::per_second(bytes, seconds);
            o.unavailable = each.iter().map(|x| x.unavailable).sum();
        }
        let strip = |mut d: DirSummary| {
            d.histogram = None;
            d.service_histogram = None;
            d
        };
        for w in &mut run.workloads {
            let figures: Vec<&DirSummary> = (run.operations.iter())
                .filter(|o| o.workload == w.workload)
                .map(|o| &o.figures)
                .collect();
            w.figures = strip(DirSummary::merge(&figures, seconds));
            w.threads = (same.iter())
                .filter_map(|r| r.workloads.iter().find(|x| x.workload == w.workload))
                .map(|x| x.threads)
                .sum();
        }
        let all: Vec<&DirSummary> = run.operations.iter().map(|o| &o.figures).collect();
        run.total = strip(DirSummary::merge(&all, seconds));
    }
    out.failures = parts
        .iter()
        .flat_map(|p| p.failures.clone())
        .take(64)
        .collect();
    if let Some(m) = &mut out.mdtest {
        m.fill(&out.runs);
    }
    Some(out)
}
