//! What a run learned about each target before measuring: what kind of object it is and how it
//! was prepared.

/// What kind of object a target is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A regular file, prepared by storlab.
    File,
    /// A block device, used as it is.
    BlockDevice,
    /// Nothing: the null engine's stand-in for a target that does not exist (it does no I/O).
    Model,
}

/// How a file target was prepared.
#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct PrepareReport {
    /// True when an earlier storlab preparation of the same size was reused as it was.
    pub reused: bool,
    /// Bytes written by this preparation (0 when reused or for a device).
    pub written_bytes: u64,
    /// Wall time the preparation took, in seconds.
    pub seconds: f64,
    /// Achieved preparation rate in MB/s (10^6 bytes per second); 0 when nothing was written.
    pub mb_per_s: f64,
    /// The data seed recorded in the manifest (unique per file), when there is one.
    pub data_seed: Option<u64>,
}
