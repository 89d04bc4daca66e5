//! Targets: opening files and block devices (O_DIRECT, O_DSYNC), their size and logical block
//! size, the safety guard that refuses to write over someone's data, and preparation of files
//! (created at full size, filled with unique incompressible data, recorded in a manifest so a
//! later run can reuse them).

use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::io::{Read, Seek, SeekFrom, Write};
use std::num::NonZeroU64;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};
use rustix::fs::{Advice, AtFlags, FallocateFlags, OFlags, StatxFlags};
use rustix::io::Errno;

pub use crate::stats::target::{PrepareReport, TargetKind};

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
    /// Whether the workload writes to this target (decides the safety guard).
    pub writes: bool,
    /// The user said `--destroy-data` / `destroy_data = true`.
    pub destroy_data: bool,
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
}

/// Why a target cannot be used. Messages say what was found and how to proceed.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The safety guard found data that a write would destroy.
    #[error(
        "refusing to write to {path}: {found}; pass --destroy-data (job: destroy_data = true) if its contents may be destroyed"
    )]
    Guarded {
        /// The target.
        path: PathBuf,
        /// What was found, e.g. "ext4 signature at offset 1080" or "mounted on /mnt/x".
        found: String,
    },
    /// Invalid request (missing size, file too small, not a file or device...).
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

/// Opens (and for files, prepares) a target. `progress(done_bytes, total_bytes)` is called
/// during preparation at least every 64 MiB and at the end; returning `false` stops the
/// preparation with [`TargetError::Interrupted`].
pub fn open(
    request: &TargetRequest,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<OpenTarget, TargetError> {
    let path = request.path.as_path();
    if request.size_bytes == Some(0) {
        return Err(invalid(path, "size is 0 bytes; give a size greater than 0"));
    }
    match resolve(path)? {
        Resolved::Existing {
            canonical,
            metadata,
        } => {
            let file_type = metadata.file_type();
            if file_type.is_block_device() {
                open_block_device(request, canonical, &metadata)
            } else if file_type.is_file() {
                open_file(request, canonical, Some(&metadata), progress)
            } else {
                Err(invalid(path, not_a_target(&metadata)))
            }
        }
        Resolved::Missing { parent, name } => {
            std::fs::create_dir_all(&parent).map_err(|e| {
                io(
                    path,
                    format!("cannot create the directory {}", parent.display()),
                    e,
                )
            })?;
            let parent = std::fs::canonicalize(&parent)
                .map_err(|e| io(path, "cannot resolve the parent directory", e))?;
            open_file(request, parent.join(name), None, progress)
        }
    }
}

/// The findings of the safety guard for `path` without opening it for writing: an empty list
/// means it is safe to write. Used by `open` when the workload writes and by `--dry-run`.
pub fn guard_findings(path: &Path) -> Result<Vec<String>, TargetError> {
    match resolve(path)? {
        // Nothing there yet: storlab will create it.
        Resolved::Missing { .. } => Ok(Vec::new()),
        Resolved::Existing {
            canonical,
            metadata,
        } => {
            let file_type = metadata.file_type();
            if file_type.is_block_device() {
                device_findings(path, &canonical, &metadata)
            } else if file_type.is_file() {
                Ok(foreign_file_finding(&canonical, &metadata)
                    .into_iter()
                    .collect())
            } else {
                Err(invalid(path, not_a_target(&metadata)))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Paths and errors
// ---------------------------------------------------------------------------------------------

/// Version written in the `storlab_manifest` field. Version 2 files carry a verification
/// header in every sector; a file of an older version is still storlab's, and is prepared
/// again rather than reused.
const MANIFEST_VERSION: u32 = 2;
/// The manifest of `PATH` is `PATH.storlab.json`.
const MANIFEST_SUFFIX: &str = ".storlab.json";
/// Preparation writes (and seeds its generator) in chunks of this size.
const CHUNK_BYTES: usize = 1 << 20;
/// Preparation calls `progress` whenever this many bytes more were written (and at the end).
const PROGRESS_EVERY_BYTES: u64 = 4 << 20;
/// How much of a device's beginning the guard reads to look for signatures (covers the btrfs
/// superblock at 64 KiB and swap signatures for pages up to 64 KiB).
const SCAN_BYTES: usize = 68 << 10;
/// Buffers in flight between the data generator thread and the writer.
const PREPARE_BUFFERS: usize = 3;
/// A manifest larger than this is not one of ours.
const MANIFEST_MAX_BYTES: u64 = 64 << 10;

/// A path after resolving symlinks.
enum Resolved {
    /// Something exists there.
    Existing {
        canonical: PathBuf,
        metadata: Metadata,
    },
    /// Nothing exists there (yet); the parent directory may be missing too.
    Missing { parent: PathBuf, name: OsString },
}

fn resolve(path: &Path) -> Result<Resolved, TargetError> {
    if path.as_os_str().is_empty() {
        return Err(invalid(path, "the path is empty"));
    }
    match std::fs::canonicalize(path) {
        Ok(canonical) => {
            let metadata = std::fs::metadata(&canonical)
                .map_err(|e| io(path, "cannot read the metadata", e))?;
            Ok(Resolved::Existing {
                canonical,
                metadata,
            })
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            if let Ok(link) = std::fs::read_link(path) {
                return Err(invalid(
                    path,
                    format!(
                        "is a symbolic link to {}, which does not exist; fix the link or give the path of the file itself",
                        link.display()
                    ),
                ));
            }
            let Some(name) = path.file_name() else {
                return Err(invalid(path, "does not name a file"));
            };
            let parent = match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                _ => PathBuf::from("."),
            };
            Ok(Resolved::Missing {
                parent,
                name: name.to_owned(),
            })
        }
        Err(error) => Err(io(path, "cannot resolve the path", error)),
    }
}

fn not_a_target(metadata: &Metadata) -> String {
    let file_type = metadata.file_type();
    let what = if file_type.is_dir() {
        "a directory"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_fifo() {
        "a named pipe (FIFO)"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "an object of an unsupported kind"
    };
    format!(
        "is {what}, not a regular file or a block device; give a file path (created if missing) or a block device"
    )
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

/// `path` with `suffix` appended to its last component.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut text = path.as_os_str().to_owned();
    text.push(suffix);
    PathBuf::from(text)
}

fn manifest_path(canonical: &Path) -> PathBuf {
    with_suffix(canonical, MANIFEST_SUFFIX)
}

/// `custom_flags` value of `flags` (the bits of open flags all fit in an `i32`).
fn flag_bits(flags: OFlags) -> i32 {
    i32::try_from(flags.bits()).unwrap_or(i32::MAX)
}

fn benchmark_flags(request: &TargetRequest) -> OFlags {
    let mut flags = OFlags::CLOEXEC;
    if !request.buffered {
        flags |= OFlags::DIRECT;
    }
    if request.dsync {
        flags |= OFlags::DSYNC;
    }
    flags
}

/// Opens an existing `canonical` for reading (and writing when `write`) with `flags`.
fn open_with(
    path: &Path,
    canonical: &Path,
    write: bool,
    flags: OFlags,
) -> Result<File, TargetError> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flag_bits(flags))
        .open(canonical)
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

// ---------------------------------------------------------------------------------------------
// Block devices
// ---------------------------------------------------------------------------------------------

fn open_block_device(
    request: &TargetRequest,
    canonical: PathBuf,
    metadata: &Metadata,
) -> Result<OpenTarget, TargetError> {
    let path = request.path.as_path();
    if request.writes && !request.destroy_data {
        let findings = device_findings(path, &canonical, metadata)?;
        if !findings.is_empty() {
            return Err(TargetError::Guarded {
                path: path.to_path_buf(),
                found: findings.join("; "),
            });
        }
    }
    let mut file = open_with(path, &canonical, request.writes, benchmark_flags(request))?;
    let logical_block_size = rustix::fs::ioctl_blksszget(&file).map_err(|e| {
        io(
            path,
            "cannot read the logical block size (BLKSSZGET)",
            e.into(),
        )
    })?;
    // The end of a block device is its size (what BLKGETSIZE64 reports).
    let device_bytes = file
        .seek(SeekFrom::End(0))
        .map_err(|e| io(path, "cannot read the device size", e))?;
    file.seek(SeekFrom::Start(0))
        .map_err(|e| io(path, "cannot seek to the start of the device", e))?;
    if device_bytes == 0 {
        return Err(invalid(
            path,
            "the device has a size of 0 bytes (a detached loop device, or a drive without a medium?)",
        ));
    }
    let size_bytes = match request.size_bytes {
        Some(size) if size > device_bytes => {
            return Err(invalid(
                path,
                format!(
                    "size {size} bytes is larger than the device ({device_bytes} bytes); lower `size` / --size, or leave it unset to use the whole device"
                ),
            ));
        }
        Some(size) => size,
        None => device_bytes,
    };
    Ok(OpenTarget {
        file,
        path: path.to_path_buf(),
        canonical_path: canonical,
        kind: TargetKind::BlockDevice,
        size_bytes,
        logical_block_size,
        direct: !request.buffered,
        dsync: request.dsync,
        prepare: PrepareReport::default(),
    })
}

/// A block device or one of its partitions, as the kernel names it.
struct BlockNode {
    /// Kernel name ("sda", "sda1", "loop0p1").
    name: String,
    major: u32,
    minor: u32,
    /// Its directory in sysfs, when there is one.
    sys_dir: Option<PathBuf>,
}

impl BlockNode {
    fn is(&self, (major, minor): (u32, u32)) -> bool {
        self.major == major && self.minor == minor
    }
}

fn device_findings(
    path: &Path,
    canonical: &Path,
    metadata: &Metadata,
) -> Result<Vec<String>, TargetError> {
    let rdev = metadata.rdev();
    let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    let sys_dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok();
    let name = sys_dir
        .as_deref()
        .and_then(Path::file_name)
        .or_else(|| canonical.file_name())
        .map_or_else(
            || format!("{major}:{minor}"),
            |name| name.to_string_lossy().into_owned(),
        );
    let device = BlockNode {
        name,
        major,
        minor,
        sys_dir,
    };
    let partitions = device
        .sys_dir
        .as_deref()
        .map(list_partitions)
        .unwrap_or_default();

    // What the running system uses: mounts (by device number, or by source path for
    // filesystems such as btrfs that report an anonymous device number), swap, holders.
    let mounts: Vec<(MountEntry, Option<(u32, u32)>)> =
        std::fs::read_to_string("/proc/self/mountinfo")
            .map(|text| parse_mountinfo(&text))
            .unwrap_or_default()
            .into_iter()
            .map(|mount| {
                let source = block_device_number(&mount.source);
                (mount, source)
            })
            .collect();
    let swaps: Vec<(u32, u32)> = std::fs::read_to_string("/proc/swaps")
        .map(|text| parse_swaps(&text))
        .unwrap_or_default()
        .iter()
        .filter_map(|name| block_device_number(name))
        .collect();

    let mut findings = Vec::new();
    let nodes = std::iter::once((&device, String::new()))
        .chain(partitions.iter().map(|p| (p, format!("{} ", p.name))));
    for (node, prefix) in nodes {
        let mut mount_points: Vec<&str> = Vec::new();
        for (mount, source) in &mounts {
            let on_node = node.is((mount.major, mount.minor)) || source.is_some_and(|s| node.is(s));
            if on_node && !mount_points.contains(&mount.mount_point.as_str()) {
                mount_points.push(&mount.mount_point);
            }
        }
        if !mount_points.is_empty() {
            findings.push(format!("{prefix}mounted on {}", mount_points.join(", ")));
        }
        if swaps.iter().any(|&number| node.is(number)) {
            findings.push(format!("{prefix}in use as swap"));
        }
        let holders = node
            .sys_dir
            .as_deref()
            .map(|dir| dir_entry_names(&dir.join("holders")))
            .unwrap_or_default();
        if !holders.is_empty() {
            findings.push(format!("{prefix}held by {}", holders.join(", ")));
        }
    }
    if !partitions.is_empty() {
        let names: Vec<&str> = partitions.iter().map(|p| p.name.as_str()).collect();
        findings.push(format!("has partitions {}", names.join(", ")));
    }

    let head = read_head(canonical).map_err(|e| {
        io(
            path,
            "cannot read the beginning of the device to look for existing data",
            e,
        )
    })?;
    findings.extend(scan_signatures(&head));
    Ok(findings)
}

/// Device number of `path` when it names a block device.
fn block_device_number(path: &str) -> Option<(u32, u32)> {
    if !path.starts_with('/') {
        return None;
    }
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.file_type().is_block_device() {
        return None;
    }
    let rdev = metadata.rdev();
    Some((rustix::fs::major(rdev), rustix::fs::minor(rdev)))
}

/// The partitions of the whole device whose sysfs directory is `sys_dir`, in partition order.
fn list_partitions(sys_dir: &Path) -> Vec<BlockNode> {
    let Ok(entries) = std::fs::read_dir(sys_dir) else {
        return Vec::new();
    };
    let mut partitions: Vec<(u64, BlockNode)> = Vec::new();
    for entry in entries.flatten() {
        let dir = entry.path();
        let Some(number) = read_trimmed(&dir.join("partition")) else {
            continue;
        };
        let Some((major, minor)) = read_trimmed(&dir.join("dev")).and_then(|d| parse_dev(&d))
        else {
            continue;
        };
        partitions.push((
            number.parse().unwrap_or(u64::MAX),
            BlockNode {
                name: entry.file_name().to_string_lossy().into_owned(),
                major,
                minor,
                sys_dir: Some(dir),
            },
        ));
    }
    partitions.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
    partitions.into_iter().map(|(_, node)| node).collect()
}

fn dir_entry_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().to_owned())
}

/// Parses "MAJOR:MINOR".
fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, PartialEq)]
struct MountEntry {
    major: u32,
    minor: u32,
    mount_point: String,
    /// The "mount source" field (a device path for disk filesystems).
    source: String,
}

/// Parses /proc/self/mountinfo (proc(5)); malformed lines are skipped.
fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let (major, minor) = parse_dev(fields.nth(2)?)?;
            let mount_point = unescape_octal(fields.nth(1)?);
            // Optional fields end with a lone "-"; then come the type and the source.
            let mut after = fields.skip_while(|field| *field != "-").skip(1);
            let _filesystem_type = after.next();
            let source = after.next().map(unescape_octal).unwrap_or_default();
            Some(MountEntry {
                major,
                minor,
                mount_point,
                source,
            })
        })
        .collect()
}

/// The file names in /proc/swaps (after its header line).
fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .map(unescape_octal)
        .collect()
}

/// Undoes the `\NNN` octal escapes the kernel uses for spaces and the like in /proc files.
fn unescape_octal(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            if let Some(digits) = bytes.get(i + 1..i + 4) {
                if digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                    let value = digits
                        .iter()
                        .fold(0u32, |value, d| value * 8 + u32::from(d - b'0'));
                    if let Ok(byte) = u8::try_from(value) {
                        out.push(byte);
                        i += 4;
                        continue;
                    }
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads up to [`SCAN_BYTES`] from the start of `path` (read-only, through the page cache).
fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let mut buffer = vec![0u8; SCAN_BYTES];
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read_at(&mut buffer[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    buffer.truncate(filled);
    Ok(buffer)
}

fn bytes_at(buffer: &[u8], offset: usize, magic: &[u8]) -> bool {
    buffer.get(offset..offset + magic.len()) == Some(magic)
}

fn u16_le_at(buffer: &[u8], offset: usize) -> Option<u16> {
    let bytes = buffer.get(offset..offset + 2)?;
    Some(u16::from_le_bytes([bytes[0], bytes[1]]))
}

fn u32_le_at(buffer: &[u8], offset: usize) -> Option<u32> {
    let bytes = buffer.get(offset..offset + 4)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// Known on-disk signatures (filesystems, partition tables, volume managers, swap) in the
/// first bytes of a device, each as "WHAT signature at offset N" (or "... partition table at
/// offset N"). `head` may be shorter than [`SCAN_BYTES`] (a small device).
fn scan_signatures(head: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut add = |what: &str, offset: usize| found.push(format!("{what} at offset {offset}"));

    if bytes_at(head, 0, b"XFSB") {
        add("xfs signature", 0);
    }
    if u16_le_at(head, 1080) == Some(0xEF53) {
        add(&format!("{} signature", ext_variant(head)), 1080);
    }
    if bytes_at(head, 65600, b"_BHRfS_M") {
        add("btrfs signature", 65600);
    }
    if u32_le_at(head, 1024) == Some(0xF2F5_2010) {
        add("f2fs signature", 1024);
    }
    if bytes_at(head, 0, b"LUKS\xba\xbe") {
        add("luks (encrypted volume) signature", 0);
    }
    for offset in [0, 512, 1024, 1536] {
        if bytes_at(head, offset, b"LABELONE") {
            add("lvm2 physical volume signature", offset);
        }
    }
    // The swap signature ends the first page; page sizes of 4, 16 and 64 KiB.
    for offset in [4086, 16374, 65526] {
        if bytes_at(head, offset, b"SWAPSPACE2") || bytes_at(head, offset, b"SWAP-SPACE") {
            add("swap signature", offset);
        }
    }
    // Linux md RAID superblocks 1.1 (offset 0) and 1.2 (offset 4096).
    for offset in [0, 4096] {
        if u32_le_at(head, offset) == Some(0xA92B_4EFC) {
            add("linux md raid signature", offset);
        }
    }
    if bytes_at(head, 32769, b"CD001") {
        add("iso9660 signature", 32769);
    }
    // A ZFS label starts with its name/value list at 16 KiB.
    if let Some(nvlist) = head.get(16384..) {
        if contains(nvlist, b"pool_guid") && contains(nvlist, b"vdev_tree") {
            add("zfs label", 16384);
        }
    }

    // Boot sectors: FAT, NTFS and exFAT carry the 0x55AA boot signature of an MBR too.
    let boot_signature = bytes_at(head, 510, &[0x55, 0xAA]);
    let mut boot_filesystem = false;
    if bytes_at(head, 3, b"NTFS    ") {
        add("ntfs signature", 3);
        boot_filesystem = true;
    }
    if bytes_at(head, 3, b"EXFAT   ") {
        add("exfat signature", 3);
        boot_filesystem = true;
    }
    if boot_signature && bytes_at(head, 82, b"FAT32") {
        add("vfat signature", 82);
        boot_filesystem = true;
    } else if boot_signature && bytes_at(head, 54, b"FAT") {
        add("vfat signature", 54);
        boot_filesystem = true;
    }
    let mut gpt = false;
    for offset in [512, 4096] {
        if bytes_at(head, offset, b"EFI PART") {
            add("gpt partition table", offset);
            gpt = true;
        }
    }
    // With a GPT, the MBR is only its protective MBR.
    if boot_signature && !boot_filesystem && !gpt {
        add("dos partition table (mbr)", 510);
    }
    found
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// "ext4", "ext3" or "ext2", from the feature flags of the ext superblock at 1024.
fn ext_variant(head: &[u8]) -> &'static str {
    let compat = u32_le_at(head, 1024 + 0x5C).unwrap_or(0);
    let incompat = u32_le_at(head, 1024 + 0x60).unwrap_or(0);
    let ro_compat = u32_le_at(head, 1024 + 0x64).unwrap_or(0);
    // extents, 64bit, flex_bg, ...; huge_file, gdt_csum, dir_nlink, extra_isize, metadata_csum.
    let ext4_incompat = 0x0040 | 0x0080 | 0x0200 | 0x0400 | 0x1000 | 0x8000 | 0x10000;
    let ext4_ro_compat = 0x0008 | 0x0010 | 0x0020 | 0x0040 | 0x0400;
    if incompat & 0x0008 != 0 {
        "ext journal device"
    } else if incompat & ext4_incompat != 0 || ro_compat & ext4_ro_compat != 0 {
        "ext4"
    } else if compat & 0x0004 != 0 {
        "ext3"
    } else {
        "ext2"
    }
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

/// The sidecar `PATH.storlab.json` that marks a file as storlab's.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Manifest {
    /// Manifest format version ([`MANIFEST_VERSION`]).
    storlab_manifest: u32,
    /// Size of the prepared file.
    size_bytes: u64,
    /// Seed of the file's data (unique per preparation).
    data_seed: u64,
    /// False from the moment preparation starts until the whole file is written and synced.
    complete: bool,
    /// When the preparation started (seconds since the Unix epoch).
    created_unix_s: u64,
    /// Inode of the prepared file: a file replaced since is not ours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    inode: Option<u64>,
    /// Bytes per generator seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chunk_bytes: Option<u64>,
    /// How the data was generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    /// Version of storlab that prepared the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    storlab_version: Option<String>,
}

/// How `open_file` treats the file.
enum Plan {
    /// A complete preparation of the requested size, with this data seed.
    Reuse(u64),
    /// Someone else's file, read as it is.
    AsIs,
    /// (Re)write the whole file.
    Prepare,
}

/// The manifest of the file at `canonical`, when there is a valid one for this very file.
fn owned_manifest(canonical: &Path, metadata: &Metadata) -> Option<Manifest> {
    let mut file = File::open(manifest_path(canonical)).ok()?;
    let mut text = Vec::new();
    (&mut file)
        .take(MANIFEST_MAX_BYTES + 1)
        .read_to_end(&mut text)
        .ok()?;
    if text.len() as u64 > MANIFEST_MAX_BYTES {
        return None;
    }
    let manifest: Manifest = serde_json::from_slice(&text).ok()?;
    let same_file = manifest.inode.is_none_or(|inode| inode == metadata.ino());
    ((1..=MANIFEST_VERSION).contains(&manifest.storlab_manifest) && same_file).then_some(manifest)
}

/// The guard's finding for an existing regular file: non-empty and without a valid manifest.
fn foreign_file_finding(canonical: &Path, metadata: &Metadata) -> Option<String> {
    (metadata.len() > 0 && owned_manifest(canonical, metadata).is_none()).then(|| {
        format!(
            "the file exists and was not created by storlab ({} bytes)",
            metadata.len()
        )
    })
}

fn open_file(
    request: &TargetRequest,
    canonical: PathBuf,
    existing: Option<&Metadata>,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<OpenTarget, TargetError> {
    let path = request.path.as_path();
    let owned = existing.and_then(|metadata| owned_manifest(&canonical, metadata));
    let (plan, size_bytes) = match (existing, owned) {
        (Some(metadata), Some(manifest)) => {
            let size = request.size_bytes.unwrap_or(manifest.size_bytes);
            let reusable = manifest.complete
                && manifest.storlab_manifest == MANIFEST_VERSION
                && manifest.size_bytes == size
                && metadata.len() == size;
            if reusable {
                (Plan::Reuse(manifest.data_seed), size)
            } else {
                (Plan::Prepare, size)
            }
        }
        (Some(metadata), None) if metadata.len() > 0 => {
            let length = metadata.len();
            // --destroy-data lets a job that writes recreate the file; a job that only reads
            // it reads it as it is, even with the flag.
            if request.destroy_data && request.writes {
                (Plan::Prepare, request.size_bytes.unwrap_or(length))
            } else if request.writes {
                return Err(TargetError::Guarded {
                    path: path.to_path_buf(),
                    found: format!(
                        "the file exists and was not created by storlab ({length} bytes)"
                    ),
                });
            } else {
                let size = request.size_bytes.unwrap_or(length);
                if size > length {
                    return Err(invalid(
                        path,
                        format!(
                            "the file has {length} bytes, fewer than the requested size of {size} bytes; it was not created by storlab, so it is read as it is: lower `size` / --size, or pass --destroy-data to let storlab recreate it at that size"
                        ),
                    ));
                }
                (Plan::AsIs, size)
            }
        }
        // A new file, or an empty one (nothing to destroy): prepared at the requested size.
        (existing, _) => {
            let Some(size) = request.size_bytes else {
                let what = if existing.is_some() {
                    "empty file"
                } else {
                    "new file"
                };
                return Err(invalid(
                    path,
                    format!(
                        "no size given for {what} {}; set `size` (e.g. size = \"1GiB\") or --size",
                        path.display()
                    ),
                ));
            };
            (Plan::Prepare, size)
        }
    };
    if size_bytes == 0 {
        return Err(invalid(
            path,
            "the size is 0 bytes; set `size` (e.g. size = \"1GiB\") or --size",
        ));
    }
    let prepare = match plan {
        Plan::Reuse(data_seed) => PrepareReport {
            reused: true,
            data_seed: Some(data_seed),
            ..PrepareReport::default()
        },
        Plan::AsIs => PrepareReport::default(),
        Plan::Prepare => prepare_file(
            path,
            &canonical,
            size_bytes,
            request.buffered,
            existing.is_none(),
            progress,
        )
        .inspect_err(|e| {
            // A preparation that failed (not one that was interrupted, which is resumed by
            // preparing again) gives back the space it took: a file storlab created is
            // removed with its manifest; an existing one is emptied, still marked incomplete.
            if matches!(e, TargetError::Io { .. }) {
                if existing.is_none() {
                    let _ = std::fs::remove_file(&canonical);
                    let _ = std::fs::remove_file(manifest_path(&canonical));
                } else {
                    let _ = OpenOptions::new()
                        .write(true)
                        .open(&canonical)
                        .and_then(|f| f.set_len(0));
                }
            }
        })?,
    };
    let file = open_with(path, &canonical, request.writes, benchmark_flags(request))?;
    let logical_block_size = direct_alignment(&file).offset;
    Ok(OpenTarget {
        file,
        path: path.to_path_buf(),
        canonical_path: canonical,
        kind: TargetKind::File,
        size_bytes,
        logical_block_size,
        direct: !request.buffered,
        dsync: request.dsync,
        prepare,
    })
}

/// The O_DIRECT granularity a target will have, found without writing anything: a device's
/// logical block size, an existing file's O_DIRECT alignment, or for a file not yet created the
/// logical block size of the device under its directory. `None` when it cannot be told.
pub fn expected_block_size(path: &Path) -> Option<u32> {
    if let Ok(file) = File::open(path) {
        let metadata = file.metadata().ok()?;
        if metadata.file_type().is_block_device() {
            return rustix::fs::ioctl_blksszget(&file).ok();
        }
        return Some(direct_alignment(&file).offset);
    }
    let dir = path.ancestors().skip(1).find(|p| p.exists())?;
    device_logical_block_size(std::fs::metadata(dir).ok()?.dev())
}

/// O_DIRECT alignment of a file: of offsets and lengths, and of memory buffers.
struct DirectAlignment {
    offset: u32,
    memory: u32,
}

/// From statx(STATX_DIOALIGN) when the kernel and filesystem report it, else the logical
/// block size of the underlying device, else 512.
fn direct_alignment(file: &File) -> DirectAlignment {
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
        .and_then(|metadata| device_logical_block_size(metadata.dev()))
        .unwrap_or(512);
    DirectAlignment {
        offset: size,
        memory: size,
    }
}

/// The logical block size of the block device numbered `dev` (or of the disk holding it when
/// it is a partition), from sysfs.
fn device_logical_block_size(dev: u64) -> Option<u32> {
    let base = PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev)
    ));
    [
        base.join("queue/logical_block_size"),
        base.join("../queue/logical_block_size"),
    ]
    .iter()
    .find_map(|candidate| {
        read_trimmed(candidate)
            .and_then(|text| text.parse::<u32>().ok())
            .filter(|&size| size > 0)
    })
}

/// A data seed unique to this preparation.
fn fresh_data_seed(canonical: &Path) -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState carries per-process random keys.
    let mut hasher = RandomState::new().build_hasher();
    canonical.hash(&mut hasher);
    std::process::id().hash(&mut hasher);
    COUNTER.fetch_add(1, Ordering::Relaxed).hash(&mut hasher);
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos())
        .hash(&mut hasher);
    hasher.finish()
}

fn splitmix64(value: u64) -> u64 {
    let mut z = value.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The `CHUNK_BYTES` of `storage` (`CHUNK_BYTES + align` long) that start at an address
/// aligned to `align` (a power of two), as O_DIRECT needs.
fn aligned_chunk_mut(storage: &mut [u8], align: usize) -> &mut [u8] {
    let pad = (align - storage.as_ptr().addr() % align) % align;
    let end = (pad + CHUNK_BYTES).min(storage.len());
    &mut storage[pad.min(end)..end]
}

/// Fills chunk `chunk_index` of the file with data seed `data_seed`, every sector sealed with
/// a verification header naming the file (its data seed) and the sector's offset.
fn fill_chunk(data_seed: u64, chunk_index: u64, chunk: &mut [u8]) {
    SmallRng::seed_from_u64(splitmix64(data_seed ^ splitmix64(chunk_index))).fill_bytes(chunk);
    crate::engine::verify::seal_prepared(chunk, data_seed, chunk_index * CHUNK_BYTES as u64);
}

/// Writes `manifest` for the file at `canonical` durably and atomically (temporary file,
/// fsync, rename, fsync of the directory).
fn write_manifest(path: &Path, canonical: &Path, manifest: &Manifest) -> Result<(), TargetError> {
    let target = manifest_path(canonical);
    let temporary = with_suffix(&target, ".tmp");
    let fail = |error: std::io::Error| {
        io(
            path,
            format!("cannot write the manifest {}", target.display()),
            error,
        )
    };
    let mut text = serde_json::to_vec_pretty(manifest).map_err(|e| fail(e.into()))?;
    text.push(b'\n');
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temporary)
        .map_err(fail)?;
    file.write_all(&text).map_err(fail)?;
    file.sync_all().map_err(fail)?;
    drop(file);
    std::fs::rename(&temporary, &target).map_err(fail)?;
    if let Some(directory) = target.parent() {
        File::open(directory)
            .and_then(|directory| directory.sync_all())
            .map_err(fail)?;
    }
    Ok(())
}

fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// Creates (or recreates) the file at `canonical` at `size_bytes`, entirely written with
/// unique pseudo-random data, marked complete in its manifest only at the end.
fn prepare_file(
    path: &Path,
    canonical: &Path,
    size_bytes: u64,
    buffered: bool,
    new_file: bool,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<PrepareReport, TargetError> {
    let start = Instant::now();
    // A new file must still be new: never truncate one that appeared in the meantime.
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(new_file)
        .custom_flags(flag_bits(OFlags::CLOEXEC))
        .open(canonical)
        .map_err(|e| {
            let action = if new_file {
                "cannot create the file"
            } else {
                "cannot open the file for preparation"
            };
            io(path, action, e)
        })?;
    let inode = file
        .metadata()
        .map_err(|e| io(path, "cannot read the metadata", e))?
        .ino();
    let data_seed = fresh_data_seed(canonical);
    let mut manifest = Manifest {
        storlab_manifest: MANIFEST_VERSION,
        size_bytes,
        data_seed,
        complete: false,
        created_unix_s: unix_seconds(),
        inode: Some(inode),
        chunk_bytes: Some(CHUNK_BYTES as u64),
        data: Some(
            "pseudo-random: SmallRng seeded from (data_seed, chunk index) for each chunk; every 512-byte sector starts with a storlab verification header".into(),
        ),
        storlab_version: Some(env!("CARGO_PKG_VERSION").into()),
    };
    // Marked incomplete before the first byte changes, so an interruption is noticed.
    write_manifest(path, canonical, &manifest)?;

    // Drop the old contents, then reserve the space (fails early when it is missing).
    file.set_len(0)
        .map_err(|e| io(path, "cannot truncate the file", e))?;
    let available = rustix::fs::fstatvfs(&file).map(|v| v.f_bavail * v.f_frsize);
    match rustix::fs::fallocate(&file, FallocateFlags::empty(), 0, size_bytes) {
        Err(errno) if errno == Errno::NOSPC || errno == Errno::FBIG => {
            let free = available
                .map(|bytes| {
                    format!(
                        "; the filesystem has {} free",
                        crate::units::format_size_approx(bytes)
                    )
                })
                .unwrap_or_default();
            return Err(io(
                path,
                format!(
                    "cannot allocate {} ({size_bytes} bytes){free}; free some space or lower the size",
                    crate::units::format_size_approx(size_bytes)
                ),
                errno.into(),
            ));
        }
        // Unsupported by the filesystem: writing allocates.
        Ok(()) | Err(_) => {}
    }
    file.set_len(size_bytes).map_err(|e| {
        io(
            path,
            format!("cannot set the file length to {size_bytes} bytes"),
            e,
        )
    })?;

    let direct = if buffered {
        None
    } else {
        Some(open_with(
            path,
            canonical,
            true,
            OFlags::CLOEXEC | OFlags::DIRECT,
        )?)
    };
    let alignment = direct_alignment(&file);
    let offset_align = u64::from(alignment.offset.max(1));
    let memory_align = usize::try_from(alignment.memory.max(alignment.offset).max(4096))
        .unwrap_or(4096)
        .next_power_of_two();
    let chunks = size_bytes.div_ceil(CHUNK_BYTES as u64);
    let chunk_len = |index: u64| {
        let remaining = size_bytes.saturating_sub(index * CHUNK_BYTES as u64);
        usize::try_from(remaining.min(CHUNK_BYTES as u64)).unwrap_or(0)
    };

    // A generator thread fills buffers while this thread writes the previous ones, in order.
    std::thread::scope(|scope| -> Result<(), TargetError> {
        let (filled_sender, filled) = mpsc::sync_channel::<Vec<u8>>(PREPARE_BUFFERS);
        let (empty_sender, empty) = mpsc::sync_channel::<Vec<u8>>(PREPARE_BUFFERS);
        for _ in 0..PREPARE_BUFFERS {
            let _ = empty_sender.send(vec![0u8; CHUNK_BYTES + memory_align]);
        }
        let generator = move || {
            for index in 0..chunks {
                let Ok(mut storage) = empty.recv() else {
                    return;
                };
                let chunk = &mut aligned_chunk_mut(&mut storage, memory_align)[..chunk_len(index)];
                fill_chunk(data_seed, index, chunk);
                if filled_sender.send(storage).is_err() {
                    return;
                }
            }
        };
        std::thread::Builder::new()
            .name("storlab-prepare".into())
            .spawn_scoped(scope, generator)
            .map_err(|e| io(path, "cannot start the data generator thread", e))?;

        let mut done = 0u64;
        let mut reported = 0u64;
        for index in 0..chunks {
            let Ok(mut storage) = filled.recv() else {
                return Err(io(
                    path,
                    "preparing the data",
                    std::io::Error::other("the data generator thread stopped"),
                ));
            };
            let len = chunk_len(index);
            let chunk = &aligned_chunk_mut(&mut storage, memory_align)[..len];
            // O_DIRECT for the aligned part; a short unaligned tail goes through the page cache.
            let direct_len = match &direct {
                Some(_) if done % offset_align == 0 => len - (len as u64 % offset_align) as usize,
                _ => 0,
            };
            if let (Some(direct), true) = (&direct, direct_len > 0) {
                direct
                    .write_all_at(&chunk[..direct_len], done)
                    .map_err(|e| io(path, format!("cannot write data at offset {done}"), e))?;
            }
            if direct_len < len {
                let offset = done + direct_len as u64;
                file.write_all_at(&chunk[direct_len..], offset)
                    .map_err(|e| io(path, format!("cannot write data at offset {offset}"), e))?;
            }
            let _ = empty_sender.send(storage);
            done += len as u64;
            if done - reported >= PROGRESS_EVERY_BYTES || done == size_bytes {
                reported = done;
                if !progress(done, size_bytes) {
                    return Err(TargetError::Interrupted {
                        path: path.to_path_buf(),
                        done_bytes: done,
                        total_bytes: size_bytes,
                    });
                }
            }
        }
        // Returning drops this side's channel ends, so the generator always ends.
        Ok(())
    })?;
    rustix::fs::fdatasync(&file).map_err(|e| io(path, "cannot sync the written data", e.into()))?;
    drop(direct);
    // Leave no prepared data in the page cache to flatter buffered reads (advice only).
    let _ = rustix::fs::fadvise(&file, 0, NonZeroU64::new(size_bytes), Advice::DontNeed);

    manifest.complete = true;
    write_manifest(path, canonical, &manifest)?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(PrepareReport {
        reused: false,
        written_bytes: size_bytes,
        seconds,
        mb_per_s: if seconds > 0.0 {
            size_bytes as f64 / seconds / 1e6
        } else {
            0.0
        },
        data_seed: Some(data_seed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::process::Command;
    use std::time::Duration;

    const MIB: u64 = 1 << 20;

    fn always(_: u64, _: u64) -> bool {
        true
    }

    /// Whether O_DIRECT works in `dir` (tmpfs before Linux 6.6 refuses it).
    fn direct_supported(dir: &Path) -> bool {
        let probe = dir.join(".direct-probe");
        let result = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .custom_flags(flag_bits(OFlags::DIRECT))
            .open(&probe);
        let _ = std::fs::remove_file(&probe);
        result.is_ok()
    }

    fn request(path: &Path, size_bytes: Option<u64>) -> TargetRequest {
        let dir = path.parent().unwrap_or(Path::new("."));
        TargetRequest {
            path: path.to_path_buf(),
            size_bytes,
            buffered: !direct_supported(dir),
            dsync: false,
            writes: true,
            destroy_data: false,
        }
    }

    fn manifest_json(path: &Path) -> serde_json::Value {
        let text = std::fs::read(manifest_path(path)).expect("manifest exists");
        serde_json::from_slice(&text).expect("manifest is JSON")
    }

    fn set_manifest_complete(path: &Path, complete: bool) {
        let mut value = manifest_json(path);
        value["complete"] = serde_json::Value::Bool(complete);
        std::fs::write(manifest_path(path), value.to_string()).expect("rewrite manifest");
    }

    #[test]
    fn new_file_is_created_at_full_size_and_fully_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A missing parent directory is created too.
        let path = dir.path().join("nested/deeper/data.bin");
        let size = 5 * MIB + 12 * 4096;
        let req = request(&path, Some(size));
        let target = open(&req, &mut always).expect("open");

        assert_eq!(target.kind, TargetKind::File);
        assert_eq!(target.size_bytes, size);
        assert_eq!(target.direct, !req.buffered);
        assert!(target.logical_block_size >= 512);
        assert!(target.logical_block_size.is_power_of_two());
        assert_eq!(target.canonical_path, std::fs::canonicalize(&path).unwrap());
        assert!(!target.prepare.reused);
        assert_eq!(target.prepare.written_bytes, size);
        assert!(target.prepare.seconds > 0.0);
        assert!(target.prepare.mb_per_s > 0.0);

        let metadata = std::fs::metadata(&path).unwrap();
        assert_eq!(metadata.len(), size);
        assert!(
            metadata.blocks() * 512 >= size,
            "sparse: {} blocks",
            metadata.blocks()
        );

        let manifest = manifest_json(&path);
        assert_eq!(manifest["storlab_manifest"], MANIFEST_VERSION);
        assert_eq!(manifest["size_bytes"], size);
        assert_eq!(manifest["complete"], true);
        assert!(manifest["created_unix_s"].as_u64().unwrap() > 0);
        assert_eq!(manifest["data_seed"].as_u64(), target.prepare.data_seed);

        let data = std::fs::read(&path).unwrap();
        assert!(data.iter().any(|&b| b != 0));
        assert_ne!(data[..4096], data[4096..8192]);
        let blocks: HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.len(), data.len() / 4096, "every 4 KiB block differs");
        // Every sector carries its verification header: the magic, and its own offset.
        for (i, sector) in data.chunks(crate::engine::verify::SECTOR).enumerate() {
            assert_eq!(sector[..8], crate::engine::verify::MAGIC, "sector {i}");
            assert_eq!(
                u64::from_le_bytes(sector[24..32].try_into().unwrap()),
                (i * crate::engine::verify::SECTOR) as u64
            );
        }
        // Roughly uniform bytes after each sector's header: incompressible (the header is
        // 48 of every 512 bytes).
        let mut counts = [0u64; 256];
        let header = crate::engine::verify::HEADER_BYTES;
        for sector in data.chunks(crate::engine::verify::SECTOR) {
            for &b in &sector[header..] {
                counts[usize::from(b)] += 1;
            }
        }
        let expected = counts.iter().sum::<u64>() / 256;
        assert!(
            counts
                .iter()
                .all(|&c| c > expected * 9 / 10 && c < expected * 11 / 10)
        );

        // Open flags are the requested ones.
        let flags = rustix::fs::fcntl_getfl(&target.file).unwrap();
        assert_eq!(flags.contains(OFlags::DIRECT), target.direct);
        assert!(!flags.contains(OFlags::DSYNC));
        assert!(flags.contains(OFlags::RDWR));
    }

    #[test]
    fn two_files_of_the_same_size_differ() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        let ta = open(&request(&a, Some(MIB)), &mut always).unwrap();
        let tb = open(&request(&b, Some(MIB)), &mut always).unwrap();
        assert_ne!(ta.prepare.data_seed, tb.prepare.data_seed);
        let da = std::fs::read(&a).unwrap();
        let db = std::fs::read(&b).unwrap();
        assert!(da.chunks(4096).zip(db.chunks(4096)).all(|(x, y)| x != y));
    }

    #[test]
    fn unaligned_size_is_written_completely() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("odd");
        let size = MIB + 4096 + 100;
        let target = open(&request(&path, Some(size)), &mut always).unwrap();
        assert_eq!(target.size_bytes, size);
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len() as u64, size);
        assert!(data[data.len() - 100..].iter().any(|&b| b != 0));
        assert!(
            data[MIB as usize..MIB as usize + 4096]
                .iter()
                .any(|&b| b != 0)
        );
    }

    #[test]
    fn second_open_reuses_the_preparation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reuse");
        let first = open(&request(&path, Some(2 * MIB)), &mut always).unwrap();
        let before = std::fs::read(&path).unwrap();
        drop(first);

        let mut calls = 0;
        let start = Instant::now();
        let second = open(&request(&path, Some(2 * MIB)), &mut |_, _| {
            calls += 1;
            true
        })
        .unwrap();
        assert!(start.elapsed() < Duration::from_secs(2));
        assert!(second.prepare.reused);
        assert_eq!(second.prepare.written_bytes, 0);
        assert_eq!(calls, 0);
        assert_eq!(second.size_bytes, 2 * MIB);
        assert_eq!(
            second.prepare.data_seed,
            manifest_json(&path)["data_seed"].as_u64()
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);

        // Without a size, the prepared size is used.
        let third = open(&request(&path, None), &mut always).unwrap();
        assert!(third.prepare.reused);
        assert_eq!(third.size_bytes, 2 * MIB);
    }

    #[test]
    fn another_size_is_prepared_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("resize");
        let first = open(&request(&path, Some(2 * MIB)), &mut always).unwrap();
        let second = open(&request(&path, Some(3 * MIB)), &mut always).unwrap();
        assert!(!second.prepare.reused);
        assert_eq!(second.prepare.written_bytes, 3 * MIB);
        assert_ne!(first.prepare.data_seed, second.prepare.data_seed);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 3 * MIB);
        assert_eq!(manifest_json(&path)["size_bytes"], 3 * MIB);
        let smaller = open(&request(&path, Some(MIB)), &mut always).unwrap();
        assert!(!smaller.prepare.reused);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), MIB);
    }

    #[test]
    fn incomplete_manifest_is_prepared_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("incomplete");
        open(&request(&path, Some(MIB)), &mut always).unwrap();
        set_manifest_complete(&path, false);
        // Ours, so no guard, even for writes.
        assert!(guard_findings(&path).unwrap().is_empty());
        let again = open(&request(&path, Some(MIB)), &mut always).unwrap();
        assert!(!again.prepare.reused);
        assert_eq!(again.prepare.written_bytes, MIB);
        assert_eq!(manifest_json(&path)["complete"], true);
    }

    #[test]
    fn foreign_file_is_guarded_for_writes_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("precious.db");
        let contents: Vec<u8> = (0..MIB as usize).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &contents).unwrap();

        let finding = "the file exists and was not created by storlab (1048576 bytes)";
        assert_eq!(guard_findings(&path).unwrap(), vec![finding.to_owned()]);
        match open(&request(&path, None), &mut always) {
            Err(TargetError::Guarded { path: p, found }) => {
                assert_eq!(p, path);
                assert_eq!(found, finding);
            }
            other => panic!("expected Guarded, got {other:?}"),
        }
        assert_eq!(std::fs::read(&path).unwrap(), contents);
        assert!(!manifest_path(&path).exists());

        // Read-only: used as it is.
        let mut read_only = request(&path, None);
        read_only.writes = false;
        let target = open(&read_only, &mut always).unwrap();
        assert_eq!(target.size_bytes, MIB);
        assert_eq!(target.prepare, PrepareReport::default());
        assert!(
            !rustix::fs::fcntl_getfl(&target.file)
                .unwrap()
                .contains(OFlags::RDWR)
        );
        // Even with --destroy-data, a job that only reads leaves the file as it is.
        read_only.destroy_data = true;
        assert_eq!(
            open(&read_only, &mut always).unwrap().prepare,
            PrepareReport::default()
        );
        assert_eq!(std::fs::read(&path).unwrap(), contents);
        read_only.destroy_data = false;
        read_only.size_bytes = Some(MIB / 2);
        assert_eq!(open(&read_only, &mut always).unwrap().size_bytes, MIB / 2);
        read_only.size_bytes = Some(2 * MIB);
        match open(&read_only, &mut always) {
            Err(TargetError::Invalid { message, .. }) => {
                assert!(
                    message.contains("fewer than the requested size"),
                    "{message}"
                );
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
        assert_eq!(std::fs::read(&path).unwrap(), contents);

        // With destroy_data: prepared (at its own size when none is given).
        let mut destroy = request(&path, None);
        destroy.destroy_data = true;
        let target = open(&destroy, &mut always).unwrap();
        assert_eq!(target.prepare.written_bytes, MIB);
        assert_ne!(std::fs::read(&path).unwrap(), contents);
        assert_eq!(manifest_json(&path)["complete"], true);
        assert!(guard_findings(&path).unwrap().is_empty());
    }

    #[test]
    fn unparsable_or_foreign_manifest_counts_as_absent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, b"someone's data").unwrap();
        std::fs::write(manifest_path(&path), b"{ not json").unwrap();
        assert!(matches!(
            open(&request(&path, Some(MIB)), &mut always),
            Err(TargetError::Guarded { .. })
        ));

        // A manifest of another file that was replaced since (different inode).
        let other = dir.path().join("other");
        open(&request(&other, Some(MIB)), &mut always).unwrap();
        std::fs::write(dir.path().join("replacement"), b"new contents").unwrap();
        std::fs::rename(dir.path().join("replacement"), &other).unwrap();
        assert_eq!(guard_findings(&other).unwrap().len(), 1);
        assert!(matches!(
            open(&request(&other, Some(MIB)), &mut always),
            Err(TargetError::Guarded { .. })
        ));
    }

    #[test]
    fn empty_existing_file_is_prepared_without_the_guard() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty");
        std::fs::write(&path, b"").unwrap();
        assert!(guard_findings(&path).unwrap().is_empty());
        match open(&request(&path, None), &mut always) {
            Err(TargetError::Invalid { message, .. }) => {
                assert!(message.contains("no size given"), "{message}");
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
        let target = open(&request(&path, Some(MIB)), &mut always).unwrap();
        assert_eq!(target.prepare.written_bytes, MIB);
    }

    #[test]
    fn interrupted_preparation_leaves_the_manifest_incomplete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("interrupted");
        let size = 16 * MIB;
        match open(&request(&path, Some(size)), &mut |_, _| false) {
            Err(TargetError::Interrupted {
                path: p,
                done_bytes,
                total_bytes,
            }) => {
                assert_eq!(p, path);
                assert!(done_bytes > 0 && done_bytes < size);
                assert_eq!(total_bytes, size);
            }
            other => panic!("expected Interrupted, got {other:?}"),
        }
        assert_eq!(manifest_json(&path)["complete"], false);
        // Ours: no guard; the next run prepares it again.
        assert!(guard_findings(&path).unwrap().is_empty());
        let target = open(&request(&path, Some(size)), &mut always).unwrap();
        assert!(!target.prepare.reused);
        assert_eq!(manifest_json(&path)["complete"], true);
    }

    #[test]
    fn progress_is_reported_regularly_and_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress");
        let size = 9 * MIB + 4096;
        let mut calls = Vec::new();
        open(&request(&path, Some(size)), &mut |done, total| {
            calls.push((done, total));
            true
        })
        .unwrap();
        assert_eq!(calls.last(), Some(&(size, size)));
        let mut previous = 0;
        for &(done, total) in &calls {
            assert_eq!(total, size);
            assert!(done > previous && done - previous <= 64 * MIB);
            previous = done;
        }
    }

    #[test]
    fn symlink_behaves_like_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.bin");
        let link = dir.path().join("link.bin");
        open(&request(&real, Some(MIB)), &mut always).unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let target = open(&request(&link, Some(MIB)), &mut always).unwrap();
        assert!(target.prepare.reused);
        assert_eq!(target.path, link);
        assert_eq!(target.canonical_path, std::fs::canonicalize(&real).unwrap());
        assert!(!manifest_path(&link).exists());

        // A dangling link is refused rather than followed.
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(matches!(
            open(&request(&dangling, Some(MIB)), &mut always),
            Err(TargetError::Invalid { .. })
        ));
    }

    #[test]
    fn new_file_without_size_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nosize");
        let error = open(&request(&path, None), &mut always).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains(&format!("no size given for new file {}", path.display())),
            "{message}"
        );
        assert!(message.contains("--size"), "{message}");
        assert!(!path.exists());
        assert!(matches!(
            open(&request(&path, Some(0)), &mut always),
            Err(TargetError::Invalid { .. })
        ));
    }

    #[test]
    fn directory_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let error = open(&request(dir.path(), Some(MIB)), &mut always).unwrap_err();
        assert!(error.to_string().contains("is a directory"), "{error}");
        assert!(matches!(
            guard_findings(dir.path()),
            Err(TargetError::Invalid { .. })
        ));
        assert!(
            guard_findings(&dir.path().join("missing"))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn dsync_and_buffered_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flags");
        let mut req = request(&path, Some(MIB));
        req.buffered = true;
        req.dsync = true;
        let target = open(&req, &mut always).unwrap();
        assert!(!target.direct);
        assert!(target.dsync);
        let flags = rustix::fs::fcntl_getfl(&target.file).unwrap();
        assert!(flags.contains(OFlags::DSYNC));
        assert!(!flags.contains(OFlags::DIRECT));
        assert!(std::fs::metadata(&path).unwrap().blocks() * 512 >= MIB);
    }

    #[test]
    fn chunk_data_depends_on_seed_and_index() {
        let mut a = vec![0u8; 8192];
        let mut b = vec![0u8; 8192];
        fill_chunk(1, 0, &mut a);
        fill_chunk(1, 1, &mut b);
        assert_ne!(a, b);
        fill_chunk(2, 0, &mut b);
        assert_ne!(a, b);
        fill_chunk(1, 0, &mut b);
        assert_eq!(a, b);
    }

    fn image_with(offset: usize, magic: &[u8]) -> Vec<u8> {
        let mut image = vec![0u8; SCAN_BYTES];
        image[offset..offset + magic.len()].copy_from_slice(magic);
        image
    }

    #[test]
    fn signatures_are_found_with_their_offsets() {
        assert!(scan_signatures(&vec![0u8; SCAN_BYTES]).is_empty());
        assert!(scan_signatures(&[]).is_empty());
        assert!(scan_signatures(&[0x55; 600]).is_empty());

        let mut ext4 = image_with(1080, &[0x53, 0xEF]);
        ext4[1024 + 0x60] = 0x40; // extents
        assert_eq!(scan_signatures(&ext4), ["ext4 signature at offset 1080"]);
        let ext2 = image_with(1080, &[0x53, 0xEF]);
        assert_eq!(scan_signatures(&ext2), ["ext2 signature at offset 1080"]);

        assert_eq!(
            scan_signatures(&image_with(0, b"XFSB")),
            ["xfs signature at offset 0"]
        );
        assert_eq!(
            scan_signatures(&image_with(65600, b"_BHRfS_M")),
            ["btrfs signature at offset 65600"]
        );
        assert_eq!(
            scan_signatures(&image_with(4086, b"SWAPSPACE2")),
            ["swap signature at offset 4086"]
        );
        assert_eq!(
            scan_signatures(&image_with(512, b"LABELONE")),
            ["lvm2 physical volume signature at offset 512"]
        );
        assert_eq!(
            scan_signatures(&image_with(0, b"LUKS\xba\xbe")),
            ["luks (encrypted volume) signature at offset 0"]
        );
        assert_eq!(
            scan_signatures(&image_with(1024, &0xF2F5_2010u32.to_le_bytes())),
            ["f2fs signature at offset 1024"]
        );
        assert_eq!(
            scan_signatures(&image_with(32769, b"CD001")),
            ["iso9660 signature at offset 32769"]
        );

        // MBR alone; GPT (with its protective MBR); GPT on 4 KiB sectors.
        let mbr = image_with(510, &[0x55, 0xAA]);
        assert_eq!(
            scan_signatures(&mbr),
            ["dos partition table (mbr) at offset 510"]
        );
        let mut gpt = mbr.clone();
        gpt[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(scan_signatures(&gpt), ["gpt partition table at offset 512"]);
        assert_eq!(
            scan_signatures(&image_with(4096, b"EFI PART")),
            ["gpt partition table at offset 4096"]
        );

        // FAT and NTFS boot sectors are not reported as partition tables.
        let mut fat32 = mbr.clone();
        fat32[82..90].copy_from_slice(b"FAT32   ");
        assert_eq!(scan_signatures(&fat32), ["vfat signature at offset 82"]);
        let mut fat16 = mbr.clone();
        fat16[54..62].copy_from_slice(b"FAT16   ");
        assert_eq!(scan_signatures(&fat16), ["vfat signature at offset 54"]);
        let mut ntfs = mbr.clone();
        ntfs[3..11].copy_from_slice(b"NTFS    ");
        assert_eq!(scan_signatures(&ntfs), ["ntfs signature at offset 3"]);

        // Short buffers (small devices) never panic.
        for len in [0, 1, 511, 512, 1081, 4095, 65601] {
            let _ = scan_signatures(&ext4[..len.min(ext4.len())]);
        }
    }

    #[test]
    #[allow(clippy::print_stderr)]
    fn mkfs_ext4_image_is_recognised() {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("ext4.img");
        File::create(&image).unwrap().set_len(16 * MIB).unwrap();
        match Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&image)
            .output()
        {
            Ok(output) if output.status.success() => {}
            other => {
                eprintln!("skipped: mkfs.ext4 unavailable or failed: {other:?}");
                return;
            }
        }
        let head = read_head(&image).unwrap();
        assert_eq!(head.len(), SCAN_BYTES);
        assert_eq!(scan_signatures(&head), ["ext4 signature at offset 1080"]);
    }

    #[test]
    fn mountinfo_and_swaps_are_parsed() {
        let text = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
                    36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext3 /dev/root rw\n\
                    40 35 0:45 / /data rw shared:5 - btrfs /dev/sdb2 rw\n\
                    garbage\n";
        let mounts = parse_mountinfo(text);
        assert_eq!(mounts.len(), 3);
        assert_eq!(
            mounts[1],
            MountEntry {
                major: 98,
                minor: 0,
                mount_point: "/mnt/with space".into(),
                source: "/dev/root".into(),
            }
        );
        assert_eq!(mounts[2].source, "/dev/sdb2");
        assert_eq!(mounts[2].mount_point, "/data");

        let swaps = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                     /dev/sda2                               partition\t8388604\t\t0\t\t-2\n\
                     /swap\\040file                           file\t\t1024\t\t0\t\t-3\n";
        assert_eq!(parse_swaps(swaps), ["/dev/sda2", "/swap file"]);
        assert_eq!(unescape_octal("a\\134b\\04"), "a\\b\\04");
        assert_eq!(unescape_octal("\\777"), "\\777");
    }

    // -----------------------------------------------------------------------------------------
    // Live tests on loop devices (root only).
    // -----------------------------------------------------------------------------------------

    fn live_skip_reason() -> Option<String> {
        if !rustix::process::geteuid().is_root() {
            return Some("not root".into());
        }
        if !Path::new("/dev/loop-control").exists() {
            return Some("no /dev/loop-control".into());
        }
        for tool in ["losetup", "mkfs.ext4"] {
            let works = Command::new(tool)
                .arg("-V")
                .output()
                .is_ok_and(|o| o.status.success());
            if !works {
                return Some(format!("{tool} unavailable"));
            }
        }
        None
    }

    /// A loop device, detached on drop.
    struct LoopDevice(PathBuf);

    impl LoopDevice {
        fn attach(image: &Path, partitions: bool) -> Result<Self, String> {
            let mut command = Command::new("losetup");
            command.args(["-f", "--show"]);
            if partitions {
                command.arg("-P");
            }
            let output = command.arg(image).output().map_err(|e| e.to_string())?;
            if !output.status.success() {
                return Err(String::from_utf8_lossy(&output.stderr).into_owned());
            }
            let device = String::from_utf8_lossy(&output.stdout).trim().to_owned();
            Ok(Self(PathBuf::from(device)))
        }
    }

    impl Drop for LoopDevice {
        fn drop(&mut self) {
            let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
        }
    }

    /// A mount, unmounted on drop.
    struct Mounted(PathBuf);

    impl Mounted {
        fn mount(device: &Path, at: &Path) -> Option<Self> {
            let ok = Command::new("mount")
                .args(["-o", "ro"])
                .arg(device)
                .arg(at)
                .output()
                .is_ok_and(|o| o.status.success());
            ok.then(|| Self(at.to_path_buf()))
        }
    }

    impl Drop for Mounted {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }

    fn mkfs_ext4(path: &Path) -> bool {
        Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(path)
            .output()
            .is_ok_and(|o| o.status.success())
    }

    #[test]
    #[allow(clippy::print_stderr)]
    fn live_loop_device_with_ext4_is_guarded() {
        if let Some(reason) = live_skip_reason() {
            eprintln!("skipped: {reason}");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("disk.img");
        File::create(&image).unwrap().set_len(64 * MIB).unwrap();
        assert!(mkfs_ext4(&image));
        let device = match LoopDevice::attach(&image, false) {
            Ok(device) => device,
            Err(error) => {
                eprintln!("skipped: losetup failed: {error}");
                return;
            }
        };

        let findings = guard_findings(&device.0).unwrap();
        assert!(
            findings
                .iter()
                .any(|f| f.contains("ext") && f.contains("1080")),
            "{findings:?}"
        );

        let link = dir.path().join("disk-link");
        std::os::unix::fs::symlink(&device.0, &link).unwrap();
        for path in [&device.0, &link] {
            let req = TargetRequest {
                path: path.clone(),
                size_bytes: None,
                buffered: false,
                dsync: false,
                writes: true,
                destroy_data: false,
            };
            match open(&req, &mut always) {
                Err(TargetError::Guarded { found, .. }) => {
                    assert!(found.contains("1080"), "{found}");
                }
                other => panic!("expected Guarded, got {other:?}"),
            }
        }

        // Read-only, and writes with destroy_data, are allowed; nothing is prepared.
        let mut req = TargetRequest {
            path: link.clone(),
            size_bytes: None,
            buffered: false,
            dsync: true,
            writes: false,
            destroy_data: false,
        };
        let target = open(&req, &mut always).unwrap();
        assert_eq!(target.kind, TargetKind::BlockDevice);
        assert_eq!(target.size_bytes, 64 * MIB);
        assert_eq!(target.logical_block_size, 512);
        assert_eq!(target.canonical_path, device.0);
        assert_eq!(target.prepare, PrepareReport::default());
        let flags = rustix::fs::fcntl_getfl(&target.file).unwrap();
        assert!(flags.contains(OFlags::DIRECT) && flags.contains(OFlags::DSYNC));
        drop(target);
        req.size_bytes = Some(128 * MIB);
        assert!(matches!(
            open(&req, &mut always),
            Err(TargetError::Invalid { .. })
        ));
        req.size_bytes = Some(MIB);
        req.writes = true;
        req.destroy_data = true;
        let target = open(&req, &mut always).unwrap();
        assert_eq!(target.size_bytes, MIB);
        drop(target);

        // Mounted: reported with the mount point.
        let at = dir.path().join("mnt");
        std::fs::create_dir(&at).unwrap();
        match Mounted::mount(&device.0, &at) {
            Some(mounted) => {
                let findings = guard_findings(&device.0).unwrap();
                let expected = format!("mounted on {}", mounted.0.display());
                assert!(findings.contains(&expected), "{findings:?}");
            }
            None => eprintln!("mount part skipped: cannot mount here"),
        }
        assert!(scan_signatures(&read_head(&image).unwrap()).len() == 1);
    }

    #[test]
    #[allow(clippy::print_stderr)]
    fn live_loop_device_with_partitions_is_guarded() {
        if let Some(reason) = live_skip_reason() {
            eprintln!("skipped: {reason}");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("parted.img");
        let file = File::create(&image).unwrap();
        file.set_len(64 * MIB).unwrap();
        // A DOS partition table with one Linux partition at 1 MiB, 32 MiB long.
        let mut mbr = [0u8; 512];
        mbr[446 + 4] = 0x83;
        mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
        mbr[446 + 12..446 + 16].copy_from_slice(&65536u32.to_le_bytes());
        mbr[510] = 0x55;
        mbr[511] = 0xAA;
        file.write_all_at(&mbr, 0).unwrap();
        drop(file);
        let device = match LoopDevice::attach(&image, true) {
            Ok(device) => device,
            Err(error) => {
                eprintln!("skipped: losetup failed: {error}");
                return;
            }
        };
        let name = device.0.file_name().unwrap().to_string_lossy().into_owned();
        let partition_name = format!("{name}p1");
        let partition = PathBuf::from(format!("/dev/{partition_name}"));
        let deadline = Instant::now() + Duration::from_secs(5);
        while !partition.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        if !partition.exists() {
            eprintln!("skipped: {} did not appear", partition.display());
            return;
        }

        let findings = guard_findings(&device.0).unwrap();
        assert!(
            findings.contains(&format!("has partitions {partition_name}")),
            "{findings:?}"
        );
        assert!(
            findings.contains(&"dos partition table (mbr) at offset 510".to_owned()),
            "{findings:?}"
        );

        assert!(mkfs_ext4(&partition));
        let findings = guard_findings(&partition).unwrap();
        assert_eq!(findings, ["ext4 signature at offset 1080"]);
        let at = dir.path().join("mnt");
        std::fs::create_dir(&at).unwrap();
        if let Some(mounted) = Mounted::mount(&partition, &at) {
            let findings = guard_findings(&device.0).unwrap();
            let expected = format!("{partition_name} mounted on {}", mounted.0.display());
            assert!(findings.contains(&expected), "{findings:?}");
            let findings = guard_findings(&partition).unwrap();
            let expected = format!("mounted on {}", mounted.0.display());
            assert!(findings.contains(&expected), "{findings:?}");
        } else {
            eprintln!("mount part skipped: cannot mount here");
        }
    }
}
