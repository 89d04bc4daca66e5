//! The results file schema: [`RunResult`] is the contract every output is rendered from.
//! Units are in field names; `schema_version` changes when a field changes meaning or goes
//! away (adding a field does not change it; readers ignore nothing: see docs/results-format.md).

use crate::engine::target::{PrepareReport, TargetKind};
use crate::engine::worker::ErrorDetail;
use crate::job::Job;
use crate::stats::host::{CpuPercent, DiskDelta, HostInfo};
use crate::stats::summary::ClassSummary;
use crate::stats::timeseries::IntervalRecord;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// Version of this schema.
pub const SCHEMA_VERSION: u32 = 1;

/// Whether a run was cut short: `false`, or the reason (JSON: `false` or a string).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Interrupted {
    /// It ran to the end.
    #[default]
    No,
    /// Why it stopped early (signal, fatal error).
    Yes(String),
}

impl Serialize for Interrupted {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Interrupted::No => s.serialize_bool(false),
            Interrupted::Yes(r) => s.serialize_str(r),
        }
    }
}

impl<'de> Deserialize<'de> for Interrupted {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Reason(String),
        }
        Ok(match Raw::deserialize(d)? {
            Raw::Flag(false) => Interrupted::No,
            Raw::Flag(true) => Interrupted::Yes("interrupted".into()),
            Raw::Reason(r) => Interrupted::Yes(r),
        })
    }
}

/// One run's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunResult {
    /// Schema version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// storlab version that wrote the file.
    pub storlab_version: String,
    /// The command line that started the run.
    pub command: Vec<String>,
    /// The resolved job.
    pub job: Job,
    /// The machine.
    pub host: HostInfo,
    /// Start of the run (prepare included), RFC 3339 UTC.
    pub started_at: String,
    /// End of the run, RFC 3339 UTC.
    pub ended_at: String,
    /// `false`, or why the run stopped early.
    pub interrupted: Interrupted,
    /// State of each phase, in order.
    pub phases: Vec<PhaseRecord>,
    /// The engine that did the I/O.
    pub engine: EngineInfo,
    /// Things a reader must know to trust the numbers (tmpfs, buffered I/O, small data set...).
    pub warnings: Vec<String>,
    /// Measured time, ms (the rates below are over this).
    pub measured_ms: u64,
    /// Every target.
    pub targets: Vec<TargetResult>,
    /// Every class together.
    pub totals: ClassSummary,
    /// Per class name.
    pub classes: BTreeMap<String, ClassResult>,
    /// Per worker.
    pub workers: Vec<WorkerResult>,
    /// Block devices under the targets: their own counters over the measured phase.
    pub devices: Vec<DeviceResult>,
    /// CPU use over the measured phase.
    pub host_cpu: CpuPercent,
    /// The first I/O errors, across workers.
    pub errors: Vec<ErrorDetail>,
    /// Path of the NDJSON time-series file (one [`IntervalRecord`] per line).
    pub timeseries_path: Option<String>,
    /// The time series, one record per interval (ramp intervals included, marked).
    pub timeseries: Vec<IntervalRecord>,
}

/// A phase of the run and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseRecord {
    /// `prepare`, `ramp` or `measure`.
    pub name: String,
    /// `completed`, `interrupted`, `failed` or `not_started`.
    pub state: String,
    /// Wall time spent in it, seconds.
    pub seconds: f64,
}

/// Which engine ran and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineInfo {
    /// `io_uring`, `psync` or `null`.
    pub name: String,
    /// Why the requested engine was replaced, when it was.
    pub fallback_reason: Option<String>,
    /// Notes (registration fallbacks...).
    pub notes: Vec<String>,
}

/// One target as it was used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetResult {
    /// Name from the job.
    pub name: String,
    /// Path.
    pub path: String,
    /// File or block device.
    pub kind: TargetKind,
    /// Size used, bytes.
    pub size_bytes: u64,
    /// Logical block size (O_DIRECT granularity), bytes.
    pub logical_block_size_bytes: u32,
    /// Opened with O_DIRECT.
    pub direct: bool,
    /// Opened with O_DSYNC.
    pub dsync: bool,
    /// Filesystem type, or `block device`.
    pub filesystem: String,
    /// Mount point of that filesystem.
    pub mount_point: Option<String>,
    /// Its mount options.
    pub mount_options: String,
    /// Kernel name of the block device underneath.
    pub device: Option<String>,
    /// Model of that device.
    pub device_model: Option<String>,
    /// How the target was prepared.
    pub prepare: PrepareReport,
    /// Measured reads, writes and flushes on this target.
    pub ops: DirCounts,
    /// Measured bytes read and written.
    pub bytes: DirCounts,
    /// Errors.
    pub errors: DirCounts,
}

/// A count per direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirCounts {
    /// Reads.
    pub read: u64,
    /// Writes.
    pub write: u64,
    /// Flushes.
    pub flush: u64,
}

/// One class's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassResult {
    /// Reads.
    pub read: crate::stats::summary::DirSummary,
    /// Writes.
    pub write: crate::stats::summary::DirSummary,
    /// Flushes.
    pub flush: crate::stats::summary::DirSummary,
    /// How this class's writes were made durable: `none`, `o_dsync` (target opened with
    /// O_DSYNC), `rwf_dsync` (per write), `fsync_every_N`, or several joined by `+`.
    pub write_durability: String,
}

impl ClassResult {
    /// The figures without the durability note.
    pub fn summary(&self) -> ClassSummary {
        ClassSummary {
            read: self.read.clone(),
            write: self.write.clone(),
            flush: self.flush.clone(),
        }
    }
}

/// One worker's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerResult {
    /// Name.
    pub name: String,
    /// Every class of the worker together.
    pub totals: ClassSummary,
    /// Per class name (classes the worker did not use are left out).
    pub classes: BTreeMap<String, ClassSummary>,
    /// Open loop: I/Os whose time came but were never issued because every slot was busy.
    pub unissued: u64,
    /// A fatal problem that ended the worker early.
    pub fatal: Option<String>,
}

/// A block device's own view of the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceResult {
    /// Kernel name (`sda`, `nvme0n1`, `loop3`).
    pub name: String,
    /// Model, when known.
    pub model: Option<String>,
    /// Counter deltas over the measured phase.
    pub delta: DiskDelta,
}
