//! Targets: what a run asks of a file or block device ([`TargetRequest`]), what will happen to
//! it (`preview`, for `--dry-run`) and the opened, prepared target (`open`).
//!
//! `open` and `preview` share one set of rules, in `plan`: which path may be created, which
//! filesystems are refused, when the destroy-data guard (`guard`) refuses a write, and whether
//! a file is reused, prepared again or read as it is (from its `manifest`). `prepare` creates
//! and fills files; `direct` owns open flags, O_DIRECT alignment and block devices' sizes.

mod direct;
mod found;
mod guard;
#[cfg(test)]
mod hostile_tests;
mod manifest;
mod plan;
mod prepare;
mod preview;

use crate::files::lock::{self, LockError};
use std::fs::File;
use std::path::{Path, PathBuf};

pub use crate::stats::target::{PrepareReport, TargetKind};

pub(crate) use direct::{
    atomic_write_unit, atomic_write_unit_at, direct_refusal, expected_block_size,
};
pub use plan::{PrepareReason, SCRATCH_DIR, TargetAction};
pub(crate) use preview::shortfalls;
pub use preview::{TargetPreview, preview};

/// What the run needs from one target.
#[derive(Debug, Clone)]
pub struct TargetRequest {
    /// Path as the user wrote it (may be a symlink to a device).
    pub path: PathBuf,
    /// Requested size for a file; `None` means: use the existing file's size (it must exist),
    /// or the device's size.
    pub size_bytes: Option<u64>,
    /// Use the page cache (no O_DIRECT).
    pub buffered: bool,
    /// Open with O_DSYNC so every write is durable when it completes.
    pub dsync: bool,
    /// Open with O_SYNC: every write durable with the file's metadata when it completes.
    pub osync: bool,
    /// A file made anew before each run: preallocated (`fallocate`) and not written, as a
    /// database or etcd log segment is, rather than filled with data and reused.
    pub fresh: bool,
    /// Whether the workload writes to this target (decides the safety guard).
    pub writes: bool,
    /// The user said `--destroy-data` / `destroy_data = true`.
    pub destroy_data: bool,
    /// Ranks of one run over many hosts use it at once, each its own slice (`shared =
    /// "slice"`): it is held with a shared lock, which keeps out a run that takes it whole.
    pub shared: bool,
}

/// An opened, prepared target.
#[derive(Debug)]
pub struct OpenTarget {
    /// The open file or device.
    pub file: File,
    /// Path as requested.
    pub path: PathBuf,
    /// Path after resolving symlinks.
    pub canonical_path: PathBuf,
    /// File or block device.
    pub kind: TargetKind,
    /// Usable size in bytes.
    pub size_bytes: u64,
    /// Smallest offset/size granularity for O_DIRECT I/O on this target, in bytes.
    pub logical_block_size: u32,
    /// Whether the target is open with O_DIRECT.
    pub direct: bool,
    /// Whether the target is open with O_DSYNC.
    pub dsync: bool,
    /// What preparation did.
    pub prepare: PrepareReport,
    /// The descriptor that holds this run's advisory lock (`flock`) on the target, from
    /// before anything was decided or written until the target is dropped; `None` for a
    /// stand-in, or when this process holds it through another target of the same job.
    lock: Option<File>,
}

/// Why a target cannot be used. Messages say what was found and how to proceed.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The safety guard found data that a write would destroy.
    #[error(
        "refusing to write to {path}: {}; pass --destroy-data (job: destroy_data = true) if its contents may be destroyed",
        .findings.join("; ")
    )]
    Guarded {
        /// The target.
        path: PathBuf,
        /// What was found, each on its own: "ext4 signature at offset 1080", "mounted on
        /// /mnt/x", "the file exists and was not created by storlab (1048576 bytes)".
        findings: Vec<String>,
    },
    /// The block device is in use by the running system (a filesystem on it, or on one of
    /// its partitions, is mounted; or it is active swap): refused even with `--destroy-data`.
    #[error(
        "refusing to write to {path}: {}; storlab never writes over a mounted filesystem or active swap, whatever the flags: unmount it (umount MOUNT-POINT) or turn the swap off (swapoff), then run again",
        .findings.join("; ")
    )]
    InUse {
        /// The target.
        path: PathBuf,
        /// What was found, as for [`TargetError::Guarded`].
        findings: Vec<String>,
    },
    /// Invalid request (missing size or directory, file too small, not a file or device, on
    /// a pseudo-filesystem...).
    #[error("{path}: {message}")]
    Invalid {
        /// The target.
        path: PathBuf,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// An operating-system error while opening, sizing or preparing.
    #[error("{path}: {action}: {error}")]
    Io {
        /// The target.
        path: PathBuf,
        /// What storlab was doing ("cannot open with O_DIRECT", "writing data at offset 4096"...).
        action: String,
        /// The error (shown in the message, so not a `source` the error chain would repeat).
        error: std::io::Error,
    },
    /// Preparation was stopped by the progress callback (Ctrl-C); the file is left marked
    /// incomplete and will be prepared again next time.
    #[error("{path}: preparation interrupted after {done_bytes} of {total_bytes} bytes")]
    Interrupted {
        /// The target.
        path: PathBuf,
        /// Bytes written so far.
        done_bytes: u64,
        /// Bytes to write in all.
        total_bytes: u64,
    },
}

/// Opens (and for files, prepares) a target, as [`preview`] says it will. `progress(done_bytes,
/// total_bytes)` is called during preparation at least every 64 MiB and at the end; returning
/// `false` stops the preparation with [`TargetError::Interrupted`].
pub(crate) fn open(
    request: &TargetRequest,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<OpenTarget, TargetError> {
    let found = found::find(&request.path)?;
    let held = hold(&request.path, &found, request.shared)?;
    let plan = plan::decide(request, &found)?;
    let mut target = match (plan.kind, found) {
        (TargetKind::BlockDevice, found::Found::Existing(existing)) => {
            direct::open_device(request, &existing, plan)
        }
        (TargetKind::File, found) => prepare::open_file(request, found, plan, progress),
        _ => Err(invalid(
            &request.path,
            "a plan does not match what was found",
        )),
    }?;
    if target.lock.is_none() {
        target.lock = held;
    }
    Ok(target)
}

/// Locks the existing target `found` (at `path`) for this run, before its plan reads anything
/// of it (`shared`: with the other ranks of the run): another run holding it is a refusal
/// that names that process. A target that does not exist (a file still to be created: locked
/// as it is created) or that cannot be a target (its plan says why) holds nothing.
fn hold(path: &Path, found: &found::Found, shared: bool) -> Result<Option<File>, TargetError> {
    let found::Found::Existing(existing) = found else {
        return Ok(None);
    };
    let Some(file) = existing.readable.as_ref().and_then(|f| f.try_clone().ok()) else {
        return Ok(None);
    };
    let taken = if shared {
        lock::shared(&file)
    } else {
        lock::exclusive(&file)
    };
    match taken {
        Ok(true) => Ok(Some(file)),
        Ok(false) => Ok(None),
        Err(error) => Err(lock_refusal(path, error)),
    }
}

/// The refusal of a target whose lock could not be taken.
pub(super) fn lock_refusal(path: &Path, error: LockError) -> TargetError {
    match error {
        LockError::Held(who) => invalid(
            path,
            format!(
                "is in use by another storlab run ({who} holds its lock); wait for it to end, or give another target"
            ),
        ),
        LockError::Io(error) => io(path, "cannot lock the target for this run (flock)", error),
    }
}

/// Makes the directory `path` (storlab's own scratch directory or one under it, where a
/// workload puts its files) as storlab makes its directories (`crate::files::dir`): never
/// through a link, and refused, saying why and what to do, when another user could have
/// planted it.
pub(crate) fn scratch_directory(path: &Path) -> Result<(), String> {
    crate::files::dir::make(path)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A stand-in for a target of `size_bytes` at `path` that does not exist, for the null engine
/// (which does no I/O): open on /dev/null, nothing prepared.
pub(crate) fn stand_in(path: &Path, size_bytes: u64) -> Result<OpenTarget, TargetError> {
    let file = File::open("/dev/null")
        .map_err(|e| invalid(path, format!("cannot open /dev/null: {e}")))?;
    Ok(OpenTarget {
        file,
        path: path.to_path_buf(),
        canonical_path: path.to_path_buf(),
        kind: TargetKind::Model,
        size_bytes,
        logical_block_size: 512,
        direct: false,
        dsync: false,
        prepare: PrepareReport::default(),
        lock: None,
    })
}

fn invalid(path: &Path, message: impl Into<String>) -> TargetError {
    TargetError::Invalid {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

fn io(path: &Path, action: impl Into<String>, error: std::io::Error) -> TargetError {
    TargetError::Io {
        path: path.to_path_buf(),
        action: action.into(),
        error,
    }
}

/// What the tests of the submodules share: requests on real files in temporary directories.
#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::OFlags;
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt;

    pub(super) const MIB: u64 = 1 << 20;

    /// A progress callback that never stops the preparation.
    pub(super) fn always(_: u64, _: u64) -> bool {
        true
    }

    /// Whether O_DIRECT works in `dir` (tmpfs before Linux 6.6 refuses it).
    fn direct_supported(dir: &Path) -> bool {
        let probe = dir.join(".direct-probe");
        let result = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .custom_flags(direct::flag_bits(OFlags::DIRECT))
            .open(&probe);
        let _ = std::fs::remove_file(&probe);
        result.is_ok()
    }

    /// A write request for `path` (buffered where O_DIRECT does not work).
    pub(super) fn request(path: &Path, size_bytes: Option<u64>) -> TargetRequest {
        let dir = path.parent().unwrap_or(Path::new("."));
        TargetRequest {
            path: path.to_path_buf(),
            size_bytes,
            buffered: !direct_supported(dir),
            dsync: false,
            osync: false,
            fresh: false,
            writes: true,
            destroy_data: false,
            shared: false,
        }
    }

    /// The manifest beside `path`, as JSON.
    pub(super) fn manifest_json(path: &Path) -> serde_json::Value {
        let text = std::fs::read(manifest::manifest_path(path)).expect("manifest exists");
        serde_json::from_slice(&text).expect("manifest is JSON")
    }

    /// Rewrites one field of the manifest beside `path`.
    pub(super) fn set_manifest(path: &Path, field: &str, value: serde_json::Value) {
        let mut manifest = manifest_json(path);
        manifest[field] = value;
        std::fs::write(manifest::manifest_path(path), manifest.to_string())
            .expect("rewrite manifest");
    }

    #[test]
    fn guarded_message_lists_every_finding() {
        let error = TargetError::Guarded {
            path: "/dev/x".into(),
            findings: vec![
                "mounted on /mnt".into(),
                "ext4 signature at offset 1080".into(),
            ],
        };
        assert_eq!(
            error.to_string(),
            "refusing to write to /dev/x: mounted on /mnt; ext4 signature at offset 1080; pass --destroy-data (job: destroy_data = true) if its contents may be destroyed"
        );
    }
}
