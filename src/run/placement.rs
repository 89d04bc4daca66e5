//! Warnings about where the targets live: on memory (tmpfs), on a copy-on-write or
//! compressing filesystem, behind another layer (FUSE, NFS, overlay), or a data set smaller
//! than memory; each makes the figures say less about the storage under test.

use crate::job::units::format_size_approx;
use crate::job::{EngineKind, Job};
use crate::report::run_result::TargetResult;

/// The warnings for `job` on `targets` (as opened), `data_bytes` in all, on a host with
/// `memory` bytes.
pub(super) fn warnings(
    job: &Job,
    targets: &[TargetResult],
    data_bytes: u64,
    memory: u64,
) -> Vec<String> {
    let mut w = Vec::new();
    if job.buffered {
        w.push("buffered I/O: reads may be served from the page cache and writes acknowledged before they reach the device".into());
    }
    if job.engine == EngineKind::Null {
        w.push("null engine: no I/O was done; the figures are storlab's own per-I/O cost".into());
    }
    for t in targets {
        match t.filesystem.as_str() {
            "tmpfs" | "ramfs" => w.push(format!(
                "target `{}` is on {}: it lives in memory, not on a storage device",
                t.name, t.filesystem
            )),
            "btrfs" | "zfs" | "bcachefs" => w.push(format!(
                "target `{}` is on {}, a copy-on-write filesystem: writes relocate data and may be compressed or deduplicated",
                t.name, t.filesystem
            )),
            "overlay" | "fuse" | "nfs" | "nfs4" | "cifs" => w.push(format!(
                "target `{}` is on {}: results include that layer's behaviour",
                t.name, t.filesystem
            )),
            _ => {}
        }
        if t.mount_options.contains("compress") {
            w.push(format!(
                "target `{}` is on a filesystem mounted with compression ({}): written data may be compressed",
                t.name, t.mount_options
            ));
        }
    }
    if data_bytes > 0 && memory > 0 && data_bytes < memory && job.engine != EngineKind::Null {
        w.push(format!(
            "the data set ({}) is smaller than memory ({}): any cache in the path (page cache, array cache) can hold all of it",
            format_size_approx(data_bytes),
            format_size_approx(memory)
        ));
    }
    w.dedup();
    w
}
