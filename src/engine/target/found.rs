//! A target as found: its path followed once, link by link (`files::resolve`), to an `O_PATH`
//! descriptor of what is there and a descriptor of the directory it is in (for a file still to
//! be created: of the deepest directory that exists, checked when it is storlab's scratch
//! directory). Everything after works on these descriptors: the checks, the lock, the
//! manifest beside it, preparation and the opens for the run, which reopen the descriptor
//! (`/proc/self/fd`), never the path.

use super::{TargetError, invalid, io};
use crate::files::dir::{self, Dir, DirError};
use crate::files::resolve::{self, Refused, Walked};
use rustix::fs::OFlags;
use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What is at a target's path.
#[derive(Debug)]
pub(super) enum Found {
    /// Something exists there.
    Existing(Existing),
    /// Nothing exists there yet.
    Missing(Missing),
}

/// An existing target, open.
#[derive(Debug)]
pub(super) struct Existing {
    /// The directory it is in.
    pub(super) dir: Arc<Dir>,
    /// Its name there.
    pub(super) name: OsString,
    /// It, opened `O_PATH` (nothing opened in the device's or pipe's sense).
    pub(super) file: File,
    /// Its metadata, from that descriptor.
    pub(super) metadata: Metadata,
    /// It opened for reading (through the descriptor) when it is a regular file or a block
    /// device and may be read: what its lock is taken on, its identity and its first bytes
    /// read through.
    pub(super) readable: Option<File>,
    /// Its path with every link resolved.
    pub(super) canonical: PathBuf,
}

/// A target that does not exist yet.
#[derive(Debug)]
pub(super) struct Missing {
    /// The deepest directory on its path that exists.
    pub(super) dir: Arc<Dir>,
    /// The directories below `dir` to create first (only under storlab's scratch directory),
    /// then the file's name.
    pub(super) missing: Vec<OsString>,
    /// Where the file will be, with every link resolved.
    pub(super) canonical: PathBuf,
    /// The directory to create first, as the request gives it (`None`: `dir` is the file's).
    pub(super) create_directory: Option<PathBuf>,
}

impl Existing {
    /// The target opened again with `flags` through its descriptor (the same inode).
    pub(super) fn reopen(&self, flags: OFlags) -> std::io::Result<File> {
        crate::files::reopen(&self.file, flags)
    }
}

/// Where `path` leads, looked at without creating or opening anything in the device's sense.
/// Under storlab's own scratch directory (`storlab-scratch/…`), each directory must be one
/// storlab may use ([`crate::files::dir`]); elsewhere, links are followed unless another user
/// could have planted them.
pub(super) fn find(path: &Path) -> Result<Found, TargetError> {
    if path.as_os_str().is_empty() {
        return Err(invalid(path, "the path is empty"));
    }
    let Some(name) = path.file_name() else {
        return walked(path, resolve::walk(path));
    };
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !dir::is_own(parent) {
        return walked(path, resolve::walk(path));
    }
    let looked = dir::look(parent).map_err(|e| dir_refusal(path, e))?;
    if looked.missing.is_empty() {
        return walked(path, resolve::walk_in(&looked.dir, Path::new(name)));
    }
    let mut missing = looked.missing;
    missing.push(name.to_owned());
    Ok(Found::Missing(Missing {
        canonical: absolute(looked.dir.path()).join(missing.iter().collect::<PathBuf>()),
        dir: looked.dir,
        missing,
        create_directory: Some(parent.to_path_buf()),
    }))
}

/// `path` made absolute against the working directory.
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    path.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .fold(cwd, |mut at, c| {
            at.push(c);
            at
        })
}

/// The refusal of a scratch directory that storlab may not use.
pub(super) fn dir_refusal(path: &Path, error: DirError) -> TargetError {
    match error {
        DirError::Io {
            path: dir,
            action,
            error,
        } => io(
            path,
            format!("cannot {action} the directory {}", dir.display()),
            error,
        ),
        planted => invalid(path, planted.to_string()),
    }
}

/// What a walk of `path` found, as a target.
fn walked(path: &Path, walked: Result<Walked, Refused>) -> Result<Found, TargetError> {
    match walked {
        Ok(Walked::Found {
            dir,
            name,
            file,
            canonical,
        }) => {
            let metadata = file
                .metadata()
                .map_err(|e| io(path, "cannot read the metadata", e))?;
            use std::os::unix::fs::FileTypeExt;
            let openable = metadata.is_file() || metadata.file_type().is_block_device();
            let readable = openable
                .then(|| crate::files::reopen(&file, OFlags::RDONLY | OFlags::NONBLOCK).ok())
                .flatten();
            Ok(Found::Existing(Existing {
                dir: Arc::new(dir),
                name,
                file,
                metadata,
                readable,
                canonical,
            }))
        }
        Ok(Walked::Missing { dir, missing }) => {
            if let Ok(link) = std::fs::read_link(path) {
                return Err(invalid(
                    path,
                    format!(
                        "is a symbolic link to {}, which does not exist; fix the link or give the path of the file itself",
                        link.display()
                    ),
                ));
            }
            let canonical = absolute(dir.path()).join(missing.iter().collect::<PathBuf>());
            Ok(Found::Missing(Missing {
                dir: Arc::new(dir),
                missing,
                canonical,
                create_directory: None,
            }))
        }
        Err(Refused::Io(at, error)) => Err(io(
            path,
            format!("cannot resolve the path at {}", at.display()),
            error,
        )),
        Err(refused) => Err(invalid(path, refused.to_string())),
    }
}
