//! What will happen to a target: the rules that [`super::open`] follows and
//! [`super::preview`] reports, in one place. A path is resolved (symlinks followed); a missing
//! file may be created only in an existing directory, or under storlab's own scratch
//! directory; files on kernel pseudo-filesystems are refused; a write that would destroy data
//! is refused by the guard; an existing file is reused, prepared again or read as it is,
//! according to its manifest. Nothing here writes or creates anything: files and devices are
//! at most opened read-only.

use super::found::{Existing, Found, Missing};
use super::manifest::{self, MANIFEST_VERSION, Manifest, Trust};
use super::{TargetError, TargetKind, TargetRequest, direct, guard, invalid};
use crate::files::dir::{others_may_write, owner_text};
use crate::stats::host;
use crate::units::format_size;
use std::ffi::OsStr;
use std::fs::Metadata;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

/// storlab's own scratch directory, relative to the working directory: the default job, the
/// presets and `storlab exchange` put their files under it. A missing directory on the way to
/// a new file is created only when the file's path is relative and starts with it
/// (`storlab-scratch/presets/x.dat`, `./storlab-scratch/x.dat`, no `..`); anywhere else a
/// missing directory is refused, so a mistyped mount point never lands on the wrong disk.
pub const SCRATCH_DIR: &str = "storlab-scratch";

/// What opening a target will do to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetAction {
    /// A new file: created at `size_bytes` and fully written with storlab's data (or only
    /// preallocated, when `fresh`).
    Create {
        /// Size of the file.
        size_bytes: u64,
        /// The missing directory (under [`SCRATCH_DIR`]) created first, with its parents.
        create_directory: Option<PathBuf>,
        /// Preallocated and not written ([`TargetRequest::fresh`]).
        fresh: bool,
    },
    /// A file storlab prepared at this size: reused as it is, nothing is written before the run.
    Reuse {
        /// Size of the file.
        size_bytes: u64,
        /// The data seed in its manifest.
        data_seed: u64,
    },
    /// An existing file written anew (at `size_bytes`) before the run.
    Prepare {
        /// Size of the file once prepared.
        size_bytes: u64,
        /// Why it is not reused.
        reason: PrepareReason,
    },
    /// An existing block device, or a file storlab did not create, used as it is.
    UseAsIs {
        /// Bytes of it the run uses.
        size_bytes: u64,
        /// Whether the workload writes to it (only a device is written as it is).
        writes: bool,
        /// What the guard found that the workload will destroy because `--destroy-data` was
        /// given (empty when nothing was found, or when the workload only reads).
        destroys: Vec<String>,
    },
}

impl TargetAction {
    /// Bytes of the target the run uses.
    pub(crate) fn size_bytes(&self) -> u64 {
        match self {
            TargetAction::Create { size_bytes, .. }
            | TargetAction::Reuse { size_bytes, .. }
            | TargetAction::Prepare { size_bytes, .. }
            | TargetAction::UseAsIs { size_bytes, .. } => *size_bytes,
        }
    }
}

/// Why an existing file is prepared again rather than reused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareReason {
    /// storlab prepared it at another size: the file has `prepared_bytes`.
    OtherSize {
        /// Its length now.
        prepared_bytes: u64,
    },
    /// storlab's preparation of it did not finish (interrupted, or failed).
    Incomplete,
    /// An older storlab prepared it (manifest `version`, before the verification headers).
    OldManifest {
        /// The version in its manifest.
        version: u32,
    },
    /// It is empty: nothing to destroy.
    Empty,
    /// The workload starts each run on a new, preallocated file ([`TargetRequest::fresh`]).
    Fresh,
    /// storlab did not create it, and `--destroy-data` lets the run recreate it.
    DestroyData {
        /// Its length now.
        existing_bytes: u64,
    },
}

/// The decision for one target.
pub(super) struct Plan {
    /// The target after resolving symlinks; for a file in a directory still to be created,
    /// the requested path.
    pub(super) canonical: PathBuf,
    /// File or block device.
    pub(super) kind: TargetKind,
    /// What `open` does.
    pub(super) action: TargetAction,
    /// The trusted manifest of a file storlab prepared (its identity is kept when it is
    /// prepared again).
    pub(super) manifest: Option<Manifest>,
}

/// Decides what opening `request` (found as `found`) does, or why it is refused:
/// [`TargetError::Invalid`], [`TargetError::Guarded`], or [`TargetError::Io`] when the target
/// cannot be examined.
pub(super) fn decide(request: &TargetRequest, found: &Found) -> Result<Plan, TargetError> {
    let plan = decide_action(request, found)?;
    fits(request, &plan)?;
    Ok(plan)
}

/// The action for `request`, before the filesystem it needs is checked.
fn decide_action(request: &TargetRequest, found: &Found) -> Result<Plan, TargetError> {
    let path = request.path.as_path();
    if request.size_bytes == Some(0) {
        return Err(invalid(path, "size is 0 bytes; give a size greater than 0"));
    }
    match found {
        Found::Existing(existing) => {
            let file_type = existing.metadata.file_type();
            if file_type.is_block_device() {
                device(request, existing)
            } else if file_type.is_file() {
                existing_file(request, existing)
            } else {
                Err(invalid(path, not_a_target(&existing.metadata)))
            }
        }
        Found::Missing(missing) => new_file(request, missing),
    }
}

/// Refuses, before anything is written, what the run would fail at once it started: a file to
/// write on a read-only filesystem, one to create or fill that does not fit in the free space,
/// and a target this process may not open as it needs (read, or read and write).
fn fits(request: &TargetRequest, plan: &Plan) -> Result<(), TargetError> {
    use rustix::fs::{Access, StatVfsMountFlags};
    let path = request.path.as_path();
    let writes = match &plan.action {
        TargetAction::UseAsIs { writes, .. } => *writes,
        TargetAction::Reuse { .. } => request.writes,
        TargetAction::Create { .. } | TargetAction::Prepare { .. } => true,
    };
    // The file itself, or for a file to create the nearest directory that exists.
    let existing = plan
        .canonical
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or(Path::new("/"));
    let fs = rustix::fs::statvfs(existing).ok();
    let mount = || {
        crate::stats::host::placement(existing)
            .mount_point
            .map_or_else(
                || existing.display().to_string(),
                |m| m.display().to_string(),
            )
    };
    if writes && plan.kind == TargetKind::File {
        if let Some(fs) = &fs {
            if fs.f_flag.contains(StatVfsMountFlags::RDONLY) {
                return Err(invalid(
                    path,
                    format!(
                        "is on a read-only filesystem ({}), and the run writes it; give a target on a writable filesystem, or a job that only reads (an existing file, read 100%)",
                        mount()
                    ),
                ));
            }
        }
    }
    let to_write = match &plan.action {
        TargetAction::Create { size_bytes, .. } => *size_bytes,
        TargetAction::Prepare { size_bytes, .. } => {
            // What the file already occupies is reused.
            let held = std::fs::metadata(&plan.canonical)
                .map(|m| std::os::unix::fs::MetadataExt::blocks(&m) * 512)
                .unwrap_or(0);
            size_bytes.saturating_sub(held)
        }
        TargetAction::Reuse { .. } | TargetAction::UseAsIs { .. } => 0,
    };
    if let Some(fs) = fs.filter(|_| to_write > 0) {
        let free = fs.f_bavail.saturating_mul(fs.f_frsize);
        if to_write > free {
            return Err(invalid(
                path,
                format!(
                    "needs {} more on its filesystem ({}), which has {} free; free some space, give a smaller size, or a target on another filesystem",
                    format_size(to_write),
                    mount(),
                    format_size(free)
                ),
            ));
        }
    }
    let (need, what) = if writes {
        (Access::READ_OK | Access::WRITE_OK, "read and written")
    } else {
        (Access::READ_OK, "read")
    };
    let checked = match &plan.action {
        TargetAction::Create { .. } => existing,
        _ => plan.canonical.as_path(),
    };
    let need = if checked == plan.canonical {
        need
    } else {
        // A file to create: its directory must let this process add a file.
        Access::WRITE_OK | Access::EXEC_OK
    };
    if let Err(e) = rustix::fs::access(checked, need) {
        let why = crate::units::os_error_text(&std::io::Error::from(e)).to_lowercase();
        let what = if checked == plan.canonical {
            format!("cannot be {what} by this process ({why})")
        } else {
            format!(
                "cannot be created: its directory {} does not let this process add a file ({why})",
                checked.display()
            )
        };
        return Err(invalid(
            path,
            format!(
                "{what}; run storlab as a user who may (block devices: root or the disk group), or give another target"
            ),
        ));
    }
    Ok(())
}

fn not_a_target(metadata: &Metadata) -> String {
    let file_type = metadata.file_type();
    if file_type.is_char_device() {
        use std::os::unix::fs::MetadataExt;
        let dev = metadata.rdev();
        let class = format!(
            "/sys/dev/char/{}:{}/subsystem",
            rustix::fs::major(dev),
            rustix::fs::minor(dev)
        );
        if nvme_generic(Path::new(&class)) {
            return "is an NVMe generic character device (/dev/ngXnY, for NVMe passthrough), which storlab does not drive yet; give the namespace's block device (/dev/nvmeXnY) instead".into();
        }
    }
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

/// Whether the sysfs `subsystem` link of a character device names the NVMe generic class.
fn nvme_generic(subsystem: &Path) -> bool {
    std::fs::read_link(subsystem).is_ok_and(|t| t.file_name() == Some(OsStr::new("nvme-generic")))
}

/// A block device: guarded when the workload writes, then sized.
fn device(request: &TargetRequest, existing: &Existing) -> Result<Plan, TargetError> {
    let path = request.path.as_path();
    let (canonical, metadata) = (&existing.canonical, &existing.metadata);
    let destroys = if request.writes {
        let readable = existing.readable.as_ref();
        match guard::device_findings(path, canonical, metadata, readable) {
            // A mounted filesystem or active swap is never written over, whatever the flags.
            Ok(found) if found.in_use => {
                return Err(TargetError::InUse {
                    path: path.to_path_buf(),
                    findings: found.findings,
                });
            }
            Ok(found) if found.findings.is_empty() || request.destroy_data => found.findings,
            Ok(found) => {
                return Err(TargetError::Guarded {
                    path: path.to_path_buf(),
                    findings: found.findings,
                });
            }
            // With --destroy-data the findings only inform: not being able to look does not
            // stop the run.
            Err(_) if request.destroy_data => Vec::new(),
            Err(error) => return Err(error),
        }
    } else {
        Vec::new()
    };
    let device_bytes = direct::device_size(path, existing)?;
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
    Ok(Plan {
        canonical: canonical.clone(),
        kind: TargetKind::BlockDevice,
        action: TargetAction::UseAsIs {
            size_bytes,
            writes: request.writes,
            destroys,
        },
        manifest: None,
    })
}

/// Refuses to write a file that another user could have put where it is: in a directory
/// others may write, a file must be the running user's and have one link, `--destroy-data`
/// or not (it could be a link another user made to someone's data, or their own file).
fn shared_directory(request: &TargetRequest, existing: &Existing) -> Result<(), TargetError> {
    let Ok(dir) = existing.dir.file().metadata() else {
        return Ok(());
    };
    if !request.writes || !others_may_write(dir.mode()) {
        return Ok(());
    }
    let me = rustix::process::geteuid().as_raw();
    let metadata = &existing.metadata;
    let what = if metadata.uid() != me {
        format!(
            "is owned by {}, not by this user",
            owner_text(metadata.uid())
        )
    } else if metadata.nlink() != 1 {
        format!(
            "has {} links (other names share its data)",
            metadata.nlink()
        )
    } else {
        return Ok(());
    };
    Err(invalid(
        &request.path,
        format!(
            "{what}, in {} where others may write (mode {:04o}), so another user could have put it there; storlab writes no such file, --destroy-data or not: give a file of this user's, or one in a directory only this user may write",
            existing.dir.path().display(),
            dir.mode() & 0o7777
        ),
    ))
}

/// An existing regular file: storlab's (reused or prepared again), empty, or someone else's.
fn existing_file(request: &TargetRequest, existing: &Existing) -> Result<Plan, TargetError> {
    let path = request.path.as_path();
    let canonical = &existing.canonical;
    if let Some(filesystem) = pseudo_filesystem(canonical) {
        return Err(invalid(
            path,
            format!(
                "is on {filesystem}, a kernel pseudo-filesystem (an interface to the kernel, not storage); give a file on a disk filesystem, or a block device"
            ),
        ));
    }
    shared_directory(request, existing)?;
    let length = existing.metadata.len();
    let trust = match &existing.readable {
        Some(readable) => manifest::trusted(existing, readable),
        None => Trust::Untrusted("it cannot be opened for reading".into()),
    };
    let mut trusted = None;
    let action = match trust {
        Trust::Ours(manifest) => {
            let size_bytes = request.size_bytes.unwrap_or(manifest.size_bytes);
            let reason = if manifest.storlab_manifest != MANIFEST_VERSION {
                Some(PrepareReason::OldManifest {
                    version: manifest.storlab_manifest,
                })
            } else if request.fresh {
                Some(PrepareReason::Fresh)
            } else if !manifest.complete {
                Some(PrepareReason::Incomplete)
            } else if manifest.size_bytes != size_bytes || length != size_bytes {
                Some(PrepareReason::OtherSize {
                    prepared_bytes: length,
                })
            } else {
                None
            };
            let action = match reason {
                None => TargetAction::Reuse {
                    size_bytes,
                    data_seed: manifest.data_seed,
                },
                Some(reason) => TargetAction::Prepare { size_bytes, reason },
            };
            trusted = Some(manifest);
            action
        }
        // --destroy-data lets a job that writes recreate the file; a job that only reads it
        // reads it as it is, even with the flag.
        _ if length > 0 && request.writes && request.destroy_data => TargetAction::Prepare {
            size_bytes: request.size_bytes.unwrap_or(length),
            reason: PrepareReason::DestroyData {
                existing_bytes: length,
            },
        },
        trust if length > 0 && request.writes => {
            let mut finding = guard::foreign_file(length);
            if let Trust::Untrusted(why) = trust {
                finding = format!("{finding}: {why}");
            }
            return Err(TargetError::Guarded {
                path: path.to_path_buf(),
                findings: vec![finding],
            });
        }
        _ if length > 0 => {
            let size_bytes = request.size_bytes.unwrap_or(length);
            if size_bytes > length {
                return Err(invalid(
                    path,
                    format!(
                        "the file has {length} bytes, fewer than the requested size of {size_bytes} bytes; it was not created by storlab, so it is read as it is: lower `size` / --size, or pass --destroy-data to let storlab recreate it at that size"
                    ),
                ));
            }
            TargetAction::UseAsIs {
                size_bytes,
                writes: false,
                destroys: Vec::new(),
            }
        }
        // An empty file: nothing to destroy, prepared at the requested size.
        _ => TargetAction::Prepare {
            size_bytes: required_size(request, "empty file")?,
            reason: PrepareReason::Empty,
        },
    };
    if action.size_bytes() == 0 {
        return Err(invalid(
            path,
            "the size is 0 bytes; set `size` (e.g. size = \"1GiB\") or --size",
        ));
    }
    Ok(Plan {
        canonical: canonical.clone(),
        kind: TargetKind::File,
        action,
        manifest: trusted,
    })
}

/// A file that does not exist yet: in an existing directory, or under storlab's scratch
/// directory, whose missing directories are created first.
fn new_file(request: &TargetRequest, missing: &Missing) -> Result<Plan, TargetError> {
    let path = request.path.as_path();
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let create_directory = match (&missing.create_directory, missing.missing.len()) {
        (_, 0 | 1) => None,
        (Some(directory), _) if is_scratch(directory) => Some(directory.clone()),
        _ => {
            return Err(invalid(
                path,
                format!(
                    "the directory {} does not exist; create it, or mount the storage to test there (storlab creates only its own scratch directory, ./{SCRATCH_DIR}, by itself)",
                    parent.display()
                ),
            ));
        }
    };
    // The filesystem the file would be created on: of the nearest directory that exists.
    let existing = crate::files::dir::Dir::path(&missing.dir);
    let existing = std::fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    if let Some(filesystem) = pseudo_filesystem(&existing) {
        return Err(invalid(
            path,
            format!(
                "does not exist and cannot be created: {} is on {filesystem}, a kernel pseudo-filesystem (an interface to the kernel, not storage); give a block device that exists, or a file on a disk filesystem",
                existing.display()
            ),
        ));
    }
    Ok(Plan {
        canonical: missing.canonical.clone(),
        kind: TargetKind::File,
        action: TargetAction::Create {
            size_bytes: required_size(request, "new file")?,
            create_directory,
            fresh: request.fresh,
        },
        manifest: None,
    })
}

/// The requested size of a file that has none yet (`what`: "new file", "empty file").
fn required_size(request: &TargetRequest, what: &str) -> Result<u64, TargetError> {
    request.size_bytes.ok_or_else(|| {
        invalid(
            &request.path,
            format!(
                "no size given for {what} {}; set `size` (e.g. size = \"1GiB\") or --size",
                request.path.display()
            ),
        )
    })
}

/// Whether `directory` is under storlab's own scratch directory (see [`SCRATCH_DIR`]).
fn is_scratch(directory: &Path) -> bool {
    let mut components = directory
        .components()
        .skip_while(|c| matches!(c, Component::CurDir));
    components.next() == Some(Component::Normal(OsStr::new(SCRATCH_DIR)))
        && components.all(|c| matches!(c, Component::Normal(_)))
}

/// Kernel pseudo-filesystems: interfaces to the kernel, where a file is not storage. Each with
/// its `statfs` magic (linux/magic.h; configfs, fusectl and mqueue from their sources) where it
/// has its own; devtmpfs is a tmpfs inside, told apart by the mount table only.
const PSEUDO_FILESYSTEMS: &[(&str, Option<u32>)] = &[
    ("proc", Some(0x9fa0)),
    ("sysfs", Some(0x6265_6572)),
    ("devtmpfs", None),
    ("devpts", Some(0x1cd1)),
    ("cgroup", Some(0x0027_e0eb)),
    ("cgroup2", Some(0x6367_7270)),
    ("debugfs", Some(0x6462_6720)),
    ("tracefs", Some(0x7472_6163)),
    ("securityfs", Some(0x7363_6673)),
    ("selinuxfs", Some(0xf97c_ff8c)),
    ("configfs", Some(0x6265_6570)),
    ("bpf", Some(0xcafe_4a11)),
    ("pstore", Some(0x6165_676c)),
    ("efivarfs", Some(0xde5e_81e4)),
    ("fusectl", Some(0x6573_5543)),
    ("mqueue", Some(0x1980_0202)),
    ("binfmt_misc", Some(0x4249_4e4d)),
    ("nsfs", Some(0x6e73_6673)),
];

/// The pseudo-filesystem `existing` (a file or directory) is on, if it is on one: by the
/// filesystem type in the mount table, or by the `statfs` magic of the file itself.
fn pseudo_filesystem(existing: &Path) -> Option<&'static str> {
    let by_mount = host::placement(existing).filesystem;
    let by_magic = rustix::fs::statfs(existing)
        .ok()
        // The magics are 32-bit; `f_type` is a C long (sign-extended on 32-bit hosts).
        .map(|stat| stat.f_type as u32);
    PSEUDO_FILESYSTEMS
        .iter()
        .find(|(name, magic)| *name == by_mount || (magic.is_some() && *magic == by_magic))
        .map(|(name, _)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_nvme_generic_device_is_told_apart_from_other_character_devices() {
        // sysfs as the kernel lays it out, in a scratch directory (this machine has no NVMe).
        let dir = tempfile::tempdir().unwrap();
        let class = dir.path().join("class");
        for c in ["nvme-generic", "mem"] {
            std::fs::create_dir_all(class.join(c)).unwrap();
            std::os::unix::fs::symlink(class.join(c), dir.path().join(c)).unwrap();
        }
        assert!(nvme_generic(&dir.path().join("nvme-generic")));
        assert!(!nvme_generic(&dir.path().join("mem")));
        assert!(!nvme_generic(&dir.path().join("absent")));
        // /dev/null is a character device of the `mem` class: the general refusal.
        let null = std::fs::metadata("/dev/null").unwrap();
        let why = not_a_target(&null);
        assert!(
            why.contains("a character device") && !why.contains("NVMe"),
            "{why}"
        );
    }

    #[test]
    fn scratch_directory_is_relative_and_under_storlab_scratch_only() {
        for yes in [
            "storlab-scratch",
            "storlab-scratch/presets",
            "./storlab-scratch/exchange",
            "storlab-scratch/a/b/c",
        ] {
            assert!(is_scratch(Path::new(yes)), "{yes}");
        }
        for no in [
            "/storlab-scratch",
            "/tmp/storlab-scratch/x",
            "storlab-scratch/../elsewhere",
            "storlab-scratch/a/../../x",
            "../storlab-scratch",
            "x/storlab-scratch",
            "storlab-scratch2",
            "scratch",
            ".",
            "",
        ] {
            assert!(!is_scratch(Path::new(no)), "{no}");
        }
    }

    #[test]
    fn live_pseudo_filesystems_are_recognised() {
        assert_eq!(pseudo_filesystem(Path::new("/proc/self")), Some("proc"));
        assert_eq!(pseudo_filesystem(Path::new("/sys/kernel")), Some("sysfs"));
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(pseudo_filesystem(dir.path()), None);
        assert_eq!(pseudo_filesystem(Path::new("/")), None);
        // The magic of every entry is distinct.
        let mut magics: Vec<u32> = PSEUDO_FILESYSTEMS.iter().filter_map(|e| e.1).collect();
        let count = magics.len();
        magics.sort_unstable();
        magics.dedup();
        assert_eq!(magics.len(), count);
    }

    #[test]
    fn a_file_used_as_a_directory_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        let request = TargetRequest {
            path: file.join("inside.dat"),
            size_bytes: Some(4096),
            buffered: true,
            dsync: false,
            osync: false,
            fresh: false,
            writes: true,
            destroy_data: false,
            shared: false,
        };
        match super::super::preview(&request).outcome {
            Err(TargetError::Invalid { message, .. }) => {
                assert!(
                    message.contains(&format!("{} is not a directory", file.display())),
                    "{message}"
                );
            }
            Err(other) => panic!("expected Invalid, got {other}"),
            Ok(_) => panic!("expected Invalid"),
        }
    }
}
