//! The part of a results file a WAL sync comparison adds: per method (with or without
//! O_DIRECT, at each number of writes per sync) its operations per second and latency, or why
//! it could not be measured; and per number of writes per sync, the fastest method.

use crate::stats::histogram::LatencySummary;
use serde::{Deserialize, Serialize};

/// A WAL sync comparison's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WalSyncResult {
    /// Bytes of each write (the WAL block size).
    pub block_bytes: u64,
    /// Bytes of the file written.
    pub file_bytes: u64,
    /// How long each method was to be measured, seconds.
    pub seconds_per_method: f64,
    /// Every method measured, in the order they ran.
    pub methods: Vec<MethodResult>,
    /// Per number of writes per sync: the sync method with the most operations per second.
    pub fastest: Vec<Fastest>,
}

/// One method, measured or not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MethodResult {
    /// `open_datasync`, `fdatasync`, `fsync`, `open_sync`, or `write only` (never synced).
    pub method: String,
    /// The file opened with O_DIRECT.
    pub direct: bool,
    /// Writes of a block per operation (per sync).
    pub writes_per_sync: u32,
    /// Why it was not measured (the filesystem refuses O_DIRECT...); `None` when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Operations completed (each: its writes and its sync).
    pub ops: u64,
    /// Operations with a failed I/O (not timed).
    pub failed_ops: u64,
    /// Measured seconds.
    pub seconds: f64,
    /// Operations per second (pg_test_fsync's ops/sec).
    pub ops_per_s: f64,
    /// Time of each operation, ns: from the issue of its first write to the completion of its
    /// last I/O (pg_test_fsync's usecs/op is the mean).
    pub latency_ns: LatencySummary,
}

impl MethodResult {
    /// `fdatasync +O_DIRECT`.
    pub fn name(&self) -> String {
        format!(
            "{}{}",
            self.method,
            if self.direct { " +O_DIRECT" } else { "" }
        )
    }
}

/// The fastest sync method at one number of writes per sync.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fastest {
    /// Writes per sync.
    pub writes_per_sync: u32,
    /// The method, e.g. `fdatasync +O_DIRECT`.
    pub method: String,
    /// Its operations per second.
    pub ops_per_s: f64,
}

/// The fastest sync method (never-synced writes left out) at each number of writes per sync,
/// in the order the numbers first appear.
pub(crate) fn fastest(methods: &[MethodResult]) -> Vec<Fastest> {
    let mut out: Vec<Fastest> = Vec::new();
    for m in methods
        .iter()
        .filter(|m| m.unavailable.is_none() && m.ops > 0 && m.method != "write only")
    {
        match out
            .iter_mut()
            .find(|f| f.writes_per_sync == m.writes_per_sync)
        {
            Some(f) if f.ops_per_s >= m.ops_per_s => {}
            Some(f) => {
                f.method = m.name();
                f.ops_per_s = m.ops_per_s;
            }
            None => out.push(Fastest {
                writes_per_sync: m.writes_per_sync,
                method: m.name(),
                ops_per_s: m.ops_per_s,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(method: &str, direct: bool, writes: u32, ops_per_s: f64) -> MethodResult {
        MethodResult {
            method: method.into(),
            direct,
            writes_per_sync: writes,
            unavailable: None,
            ops: 10,
            failed_ops: 0,
            seconds: 1.0,
            ops_per_s,
            latency_ns: LatencySummary::default(),
        }
    }

    #[test]
    fn the_fastest_sync_method_per_writes_per_sync() {
        let mut refused = m("open_sync", true, 1, 1e9);
        refused.unavailable = Some("no O_DIRECT".into());
        let all = [
            m("fdatasync", false, 1, 900.0),
            m("open_datasync", true, 1, 950.0),
            refused,
            m("write only", false, 1, 90_000.0),
            m("fdatasync", false, 2, 800.0),
            m("fsync", false, 2, 300.0),
        ];
        let f = fastest(&all);
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].writes_per_sync, f[0].method.as_str()),
            (1, "open_datasync +O_DIRECT")
        );
        assert_eq!(
            (f[1].writes_per_sync, f[1].method.as_str()),
            (2, "fdatasync")
        );
        assert_eq!(f[1].ops_per_s, 800.0);
    }
}
