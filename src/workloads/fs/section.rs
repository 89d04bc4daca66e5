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
    pub fn io500_score(&self) -> Option<f64> {
        let k: Vec<f64> = self.io500_results.iter().map(|l| l.kiops).collect();
        if k.is_empty() || k.iter().any(|&v| v <= 0.0) {
            return None;
        }
        Some((k.iter().map(|v| v.ln()).sum::<f64>() / k.len() as f64).exp())
    }
}
