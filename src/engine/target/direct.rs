//! How targets are opened for the benchmark: open flags (O_DIRECT, O_DSYNC, O_SYNC), the O_DIRECT
//! alignment of files and the logical block size of devices, and block devices' sizes.

use super::found::Existing;
use super::plan::Plan;
use super::{OpenTarget, PrepareReport, TargetError, TargetKind, TargetRequest, io};
use crate::stats::host::{DeviceNumber, sysfs};
use rustix::fs::{AtFlags, OFlags, StatxFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// `custom_flags` value of `flags` (the bits of open flags all fit in an `i32`).
#[cfg(test)]
pub(super) fn flag_bits(flags: OFlags) -> i32 {
    i32::try_from(flags.bits()).unwrap_or(i32::MAX)
}

/// The open flags `request` asks for (O_DIRECT unless buffered, O_DSYNC or O_SYNC when asked).
pub(super) fn benchmark_flags(request: &TargetRequest) -> OFlags {
    let mut flags = OFlags::CLOEXEC;
    if !request.buffered {
        flags |= OFlags::DIRECT;
    }
    if request.dsync {
        flags |= OFlags::DSYNC;
    }
    if request.osync {
        flags |= OFlags::SYNC;
    }
    flags
}

/// Opens the target `file` (requested as `path`; a descriptor of it, reopened through
/// `/proc/self/fd`, never by its path) for reading, and writing when `write`, with `flags`,
/// and with O_NOATIME where the owner allows it (reads then do not check or update the access
/// time: no metadata writes of storlab's own among the workload's).
pub(super) fn open_with(
    path: &Path,
    file: &File,
    write: bool,
    flags: OFlags,
) -> Result<File, TargetError> {
    let access = if write { OFlags::RDWR } else { OFlags::RDONLY };
    let open = |f: OFlags| crate::files::reopen(file, access | f);
    match open(flags | OFlags::NOATIME) {
        // Only the file's owner (or CAP_FOWNER) may ask for O_NOATIME.
        Err(e) if e.raw_os_error() == Some(Errno::PERM.raw_os_error()) => open(flags),
        r => r,
    }
    .map_err(|error| {
            if flags.contains(OFlags::DIRECT)
                && error.raw_os_error() == Some(Errno::INVAL.raw_os_error())
            {
                io(
                    path,
                    "cannot open with O_DIRECT (the filesystem does not support it); use `buffered = true` / --buffered",
                    error,
                )
            } else if write {
                io(path, "cannot open for reading and writing", error)
            } else {
                io(path, "cannot open for reading", error)
            }
        })
}

/// The size of the block device `existing` (requested as `path`), read-only: the end of a
/// block device is its size (what BLKGETSIZE64 reports).
pub(super) fn device_size(path: &Path, existing: &Existing) -> Result<u64, TargetError> {
    let Some(mut file) = existing.readable.as_ref() else {
        return Err(io(
            path,
            "cannot open for reading",
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        ));
    };
    file.seek(SeekFrom::End(0))
        .map_err(|e| io(path, "cannot read the device size", e))
}

/// Opens the block device `existing` as `plan` (a [`TargetAction::UseAsIs`] decided for
/// `request`) says.
pub(super) fn open_device(
    request: &TargetRequest,
    existing: &Existing,
    plan: Plan,
) -> Result<OpenTarget, TargetError> {
    let path = request.path.as_path();
    let file = open_with(
        path,
        &existing.file,
        request.writes,
        benchmark_flags(request),
    )?;
    let logical_block_size = rustix::fs::ioctl_blksszget(&file).map_err(|e| {
        io(
            path,
            "cannot read the logical block size (BLKSSZGET)",
            e.into(),
        )
    })?;
    Ok(OpenTarget {
        file,
        path: path.to_path_buf(),
        canonical_path: plan.canonical,
        kind: TargetKind::BlockDevice,
        size_bytes: plan.action.size_bytes(),
        logical_block_size,
        direct: !request.buffered,
        dsync: request.dsync,
        prepare: PrepareReport::default(),
        lock: None,
    })
}

/// The O_DIRECT granularity a target will have, found without writing anything: a device's
/// logical block size, an existing file's O_DIRECT alignment, or for a file not yet created the
/// logical block size of the device under its directory. `None` when it cannot be told.
pub(crate) fn expected_block_size(path: &Path) -> Option<u32> {
    // Never waits in `open`: a pipe given as a target is refused later, by its plan.
    if let Ok(file) = crate::files::open_target(path, OFlags::RDONLY) {
        let metadata = file.metadata().ok()?;
        if metadata.file_type().is_block_device() {
            return rustix::fs::ioctl_blksszget(&file).ok();
        }
        return Some(direct_alignment(&file).offset);
    }
    let dir = path.ancestors().skip(1).find(|p| p.exists())?;
    sysfs::logical_block_size(DeviceNumber::of(std::fs::metadata(dir).ok()?.dev()))
}

/// Why the existing file `path` cannot be opened with O_DIRECT, when its filesystem refuses
/// it (`None`: it can, or the file cannot be examined, in which case opening it for the run
/// says why).
pub(crate) fn direct_refusal(path: &Path) -> Option<String> {
    match crate::files::open_target(path, OFlags::RDONLY | OFlags::DIRECT) {
        Err(e) if e.raw_os_error() == Some(Errno::INVAL.raw_os_error()) => Some(
            "the filesystem refuses O_DIRECT (open with O_DIRECT returned EINVAL; ext4 with data=journal, tmpfs and some network filesystems do)".into(),
        ),
        _ => None,
    }
}

/// O_DIRECT alignment of a file: of offsets and lengths, and of memory buffers.
pub(super) struct DirectAlignment {
    /// Offsets and lengths are multiples of this.
    pub(super) offset: u32,
    /// Buffers start at a multiple of this.
    pub(super) memory: u32,
}

/// The sizes an atomic write (RWF_ATOMIC) to `file` may have, bytes, from
/// statx(STATX_WRITE_ATOMIC): (smallest, largest), both powers of two; `None` when it takes
/// none (the filesystem or device has no atomic writes, or the kernel predates 6.11).
pub(crate) fn atomic_write_unit(file: &File) -> Option<(u32, u32)> {
    atomic_unit_of(rustix::fs::statx(file, "", AtFlags::EMPTY_PATH, ATOMIC).ok()?)
}

/// [`atomic_write_unit`] of the file or device at `path`, without opening it or following a
/// last link (what a dry run may ask).
pub(crate) fn atomic_write_unit_at(path: &Path) -> Option<(u32, u32)> {
    let stat = rustix::fs::statx(rustix::fs::CWD, path, AtFlags::SYMLINK_NOFOLLOW, ATOMIC);
    atomic_unit_of(stat.ok()?)
}

/// STATX_WRITE_ATOMIC, which rustix does not name.
const ATOMIC: StatxFlags = StatxFlags::from_bits_retain(0x0001_0000);

fn atomic_unit_of(stat: rustix::fs::Statx) -> Option<(u32, u32)> {
    (stat.stx_mask & ATOMIC.bits() != 0 && stat.stx_atomic_write_unit_max > 0).then_some((
        stat.stx_atomic_write_unit_min,
        stat.stx_atomic_write_unit_max,
    ))
}

/// From statx(STATX_DIOALIGN) when the kernel and filesystem report it, else the logical
/// block size of the underlying device, else 512.
pub(super) fn direct_alignment(file: &File) -> DirectAlignment {
    if let Ok(stat) = rustix::fs::statx(file, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN) {
        if stat.stx_mask & StatxFlags::DIOALIGN.bits() != 0 && stat.stx_dio_offset_align != 0 {
            return DirectAlignment {
                offset: stat.stx_dio_offset_align,
                memory: stat.stx_dio_mem_align.max(1),
            };
        }
    }
    let size = file
        .metadata()
        .ok()
        .and_then(|metadata| sysfs::logical_block_size(DeviceNumber::of(metadata.dev())))
        .unwrap_or(512);
    DirectAlignment {
        offset: size,
        memory: size,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{MIB, always, request};
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn dsync_and_buffered_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flags");
        let mut req = request(&path, Some(MIB));
        req.buffered = true;
        req.dsync = true;
        let target = super::super::open(&req, &mut always).unwrap();
        assert!(!target.direct);
        assert!(target.dsync);
        let flags = rustix::fs::fcntl_getfl(&target.file).unwrap();
        assert!(flags.contains(OFlags::DSYNC));
        assert!(!flags.contains(OFlags::DIRECT));
        assert!(std::fs::metadata(&path).unwrap().blocks() * 512 >= MIB);
    }

    #[test]
    fn expected_block_size_of_existing_and_new_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        let existing = expected_block_size(&path).unwrap();
        assert!(existing.is_power_of_two(), "{existing}");
        let alignment = direct_alignment(&File::open(&path).unwrap());
        assert_eq!(existing, alignment.offset);
        // A file not yet created, in a directory not yet created: the device under the
        // nearest directory (when sysfs knows it).
        if let Some(size) = expected_block_size(&dir.path().join("no/such/file")) {
            assert!(size.is_power_of_two() && size >= 512, "{size}");
        }
        assert!(!dir.path().join("no").exists());
    }
}
