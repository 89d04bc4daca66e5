//! The tree on disk, made and used as storlab makes and uses targets in shared directories.
//! The anchor is a directory this process makes (`mkdirat`), or one storlab made before (its
//! marker, `.storlab-fs.json`, a regular file of this user's with one link, says so and
//! records the tree's shape), or an empty one of this user's; anything else is refused: a
//! link, a directory of another user or one others may write in, a directory holding files
//! storlab did not make. Every directory of the tree is then opened from its parent's
//! descriptor with `O_NOFOLLOW` and checked on its own (a directory, this user's, writable by
//! no one else), every file and directory is made and removed through its directory's
//! descriptor (`openat`, `mkdirat`, `unlinkat`, `renameat2`), and the scan before anything is
//! written refuses a tree with anything in it storlab did not make: a symbolic link, a file
//! with a second link, a FIFO, a name outside the shape. Nothing outside the anchor is ever
//! opened, made or removed. Since no one else may write in the tree's directories, nothing can
//! be planted in them once scanned.

use super::state::TreeState;
use super::tree::Shape;
use anyhow::{Result, anyhow};
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// The marker's name in the anchor.
pub(crate) const MARKER: &str = ".storlab-fs.json";
/// The largest marker read.
const MARKER_CAP: u64 = 64 << 10;
/// What the marker says it is.
const MARKER_KIND: &str = "storlab file-system tree";
/// Mode of the directories storlab makes.
pub(crate) const DIR_MODE: u32 = 0o755;
/// Mode of the files storlab makes.
pub(crate) const FILE_MODE: u32 = 0o644;

/// What a tree's marker records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Marker {
    /// Always `"storlab file-system tree"`.
    pub kind: String,
    /// The shape the tree was made with.
    pub shape: Shape,
    /// Whether a format made all of it.
    pub complete: bool,
}

/// The tree: its anchor, the state of everything in it, and a descriptor for each of its
/// directories that exists.
pub(crate) struct Tree {
    /// The anchor, as given.
    pub path: PathBuf,
    /// What exists.
    pub state: TreeState,
    /// Each directory's descriptor (the anchor's at 0), opened when first used.
    dirs: Vec<RwLock<Option<Arc<OwnedFd>>>>,
    /// This process's user.
    uid: u32,
    /// The marker found, when the anchor had one.
    pub found: Option<Marker>,
}

/// Why a tree is refused, as a sentence naming the path.
fn refused(path: &Path, why: impl std::fmt::Display) -> anyhow::Error {
    anyhow!(crate::Usage(format!(
        "cannot use {} as the file-system tree's anchor: {why}",
        path.display()
    )))
}

/// A name as the system calls take it.
pub(crate) fn cname(name: &str) -> CString {
    CString::new(name).unwrap_or_default()
}

/// Checks a directory of the tree on its descriptor: a directory, this user's, writable by no
/// one else.
fn check_dir(fd: BorrowedFd<'_>, uid: u32, path: &Path) -> Result<()> {
    let st = rfs::fstat(fd).map_err(|e| refused(path, e))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(refused(path, "it is not a directory"));
    }
    if st.st_uid != uid {
        return Err(refused(
            path,
            format!(
                "it belongs to user {} and this process runs as user {uid}: storlab makes its tree only in a directory of its own (give a new path)",
                st.st_uid
            ),
        ));
    }
    if st.st_mode & 0o022 != 0 {
        return Err(refused(
            path,
            format!(
                "others may write in it (mode {:o}), so anyone could put a link in the tree; `chmod go-w` it or give a new path",
                st.st_mode & 0o7777
            ),
        ));
    }
    Ok(())
}

impl Tree {
    /// Opens the anchor at `path` for a tree of `shape`, making it when it does not exist
    /// (and its parents, as `mkdir -p`): refused unless it is new, storlab's (its marker) or
    /// empty and this user's.
    pub(crate) fn open(path: &Path, shape: &Shape) -> Result<Tree> {
        let name = path
            .file_name()
            .ok_or_else(|| refused(path, "it names no directory"))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| {
            refused(
                path,
                format!(
                    "cannot make its parent directory {}: {}",
                    parent.display(),
                    crate::units::os_error_text(&e)
                ),
            )
        })?;
        let pfd = rfs::open(
            &parent,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| refused(path, format!("cannot open its parent: {e}")))?;
        let uid = rustix::process::geteuid().as_raw();
        let made = match rfs::mkdirat(&pfd, name, Mode::from_raw_mode(DIR_MODE)) {
            Ok(()) => true,
            Err(Errno::EXIST) => false,
            Err(e) => return Err(refused(path, format!("cannot make it: {e}"))),
        };
        let anchor = rfs::openat(
            &pfd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::LOOP | Errno::NOTDIR => refused(
                path,
                "it is a symbolic link or not a directory; storlab never makes its tree through a link",
            ),
            e => refused(path, format!("cannot open it: {e}")),
        })?;
        check_dir(anchor.as_fd(), uid, path)?;
        let found = read_marker(anchor.as_fd(), path)?;
        if found.is_none() && !made && !empty(anchor.as_fd(), path)? {
            return Err(refused(
                path,
                format!(
                    "it holds files storlab did not make (it has no {MARKER}); give a new directory, or an empty one"
                ),
            ));
        }
        let state = TreeState::new(shape.clone());
        let mut dirs: Vec<RwLock<Option<Arc<OwnedFd>>>> =
            (0..state.dirs()).map(|_| RwLock::new(None)).collect();
        dirs[0] = RwLock::new(Some(Arc::new(anchor)));
        Ok(Tree {
            path: path.to_path_buf(),
            state,
            dirs,
            uid,
            found,
        })
    }

    /// The anchor's descriptor.
    pub(crate) fn anchor(&self) -> Arc<OwnedFd> {
        self.dir_fd(0).expect("the anchor is open")
    }

    /// The descriptor of directory `d`, opened from its parent's (with `O_NOFOLLOW`, checked)
    /// when first asked for; `None` when it cannot be opened (it does not exist).
    pub(crate) fn dir_fd(&self, d: u64) -> Option<Arc<OwnedFd>> {
        let slot = self.dirs.get(d as usize)?;
        if let Some(fd) = slot.read().ok()?.as_ref() {
            return Some(fd.clone());
        }
        if d == 0 {
            return None;
        }
        let parent = self.dir_fd(self.state.shape.parent(d))?;
        let name = cname(&self.state.shape.dir_name(d));
        let fd = rfs::openat(
            &*parent,
            name.as_c_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        let where_ = self.path.join(self.state.shape.dir_path(d));
        check_dir(fd.as_fd(), self.uid, &where_).ok()?;
        let fd = Arc::new(fd);
        *slot.write().ok()? = Some(fd.clone());
        Some(fd)
    }

    /// Forgets directory `d`'s descriptor (it was removed).
    pub(crate) fn forget_dir(&self, d: u64) {
        if d > 0 {
            if let Some(Ok(mut slot)) = self.dirs.get(d as usize).map(RwLock::write) {
                *slot = None;
            }
        }
    }

    /// Writes the marker: the tree has `shape` and is `complete` or not. Through the
    /// anchor's own descriptor (`/proc/self/fd`), as every file storlab writes: a new file under
    /// a random name, renamed over the marker.
    pub(crate) fn mark(&self, shape: &Shape, complete: bool) -> Result<()> {
        let marker = Marker {
            kind: MARKER_KIND.into(),
            shape: shape.clone(),
            complete,
        };
        let text = serde_json::to_vec_pretty(&marker)?;
        let fd = self.anchor();
        let at = PathBuf::from(format!(
            "/proc/self/fd/{}/{MARKER}",
            std::os::fd::AsRawFd::as_raw_fd(&*fd)
        ));
        crate::files::write_atomic(&at, &text, crate::files::Durability::Synced).map_err(|e| {
            crate::files::cannot_write("the tree's marker", &self.path.join(MARKER), &e)
        })
    }

    /// Finds what exists of a tree of `shape` (the one found, to remove it, or the one to
    /// run): every directory and file it should have that it has, with each file's size.
    /// Refused when anything else is there (see the module's documentation).
    pub(crate) fn scan(&self, shape: &Shape, state: &TreeState) -> Result<()> {
        self.visit(shape, state, true)
    }

    /// What a tree of `shape` holds now, into `state` (the end of a run): what a scan finds,
    /// what is not the tree's passed over rather than refused.
    pub(crate) fn walk(&self, shape: &Shape, state: &TreeState) -> Result<()> {
        self.visit(shape, state, false)
    }

    /// The same tree with `shape` (one found, to remove): its anchor, its state empty.
    pub(crate) fn with_shape(&self, shape: Shape) -> Tree {
        let state = TreeState::new(shape);
        let mut dirs: Vec<RwLock<Option<Arc<OwnedFd>>>> =
            (0..state.dirs()).map(|_| RwLock::new(None)).collect();
        dirs[0] = RwLock::new(Some(self.anchor()));
        Tree {
            path: self.path.clone(),
            state,
            dirs,
            uid: self.uid,
            found: self.found.clone(),
        }
    }

    /// A scan (`strict`) or a walk.
    fn visit(&self, shape: &Shape, state: &TreeState, strict: bool) -> Result<()> {
        let same = *shape == self.state.shape;
        let mut queue = vec![0u64];
        while let Some(d) = queue.pop() {
            let where_ = self.path.join(shape.dir_path(d));
            let fd = if same || d == 0 {
                self.dir_fd(d)
            } else {
                self.open_other(shape, d)
            }
            .ok_or_else(|| refused(&where_, "it cannot be opened again as the directory it was"))?;
            let level = shape.level(d);
            let dir = rfs::Dir::read_from(&*fd).map_err(|e| refused(&where_, e))?;
            for entry in dir {
                let entry = entry.map_err(|e| refused(&where_, e))?;
                let name = entry.file_name();
                let bytes = name.to_bytes();
                if bytes == b"." || bytes == b".." {
                    continue;
                }
                let text = String::from_utf8_lossy(bytes).into_owned();
                let at = where_.join(&text);
                let st = rfs::statat(&*fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|e| refused(&at, e))?;
                let kind = FileType::from_raw_mode(st.st_mode);
                if kind == FileType::Symlink {
                    if !strict {
                        continue;
                    }
                    return Err(refused(
                        &at,
                        "a symbolic link is in the tree; storlab never follows a link it did not make, so it refuses a tree someone put one in (remove it, or give a new anchor)",
                    ));
                }
                if d == 0 && (text == MARKER || is_marker_temporary(&text)) {
                    if kind != FileType::RegularFile || st.st_uid != self.uid || st.st_nlink != 1 {
                        return Err(refused(&at, "the marker is not storlab's own file"));
                    }
                    if text != MARKER && strict {
                        let _ = rfs::unlinkat(&*fd, name, AtFlags::empty());
                    }
                    continue;
                }
                let unexpected = || {
                    refused(
                        &at,
                        "it is not part of the tree storlab made (its name, kind or owner); remove it or give a new anchor",
                    )
                };
                let foreign = st.st_uid != self.uid
                    || (child_dir(shape, d, level, &text).is_none()
                        && file_index(shape, &text)
                            .and_then(|i| shape.file_at(d, i))
                            .is_none());
                if foreign && !strict {
                    continue;
                }
                if st.st_uid != self.uid {
                    return Err(unexpected());
                }
                if let Some(child) = child_dir(shape, d, level, &text) {
                    if kind != FileType::Directory {
                        if strict {
                            return Err(unexpected());
                        }
                        continue;
                    }
                    if st.st_mode & 0o022 != 0 && strict {
                        return Err(refused(
                            &at,
                            "others may write in this directory of the tree",
                        ));
                    }
                    state.set_dir(child, true);
                    queue.push(child);
                    continue;
                }
                match file_index(shape, &text).and_then(|i| shape.file_at(d, i)) {
                    Some(f) if kind == FileType::RegularFile => {
                        if st.st_nlink != 1 && strict {
                            return Err(refused(
                                &at,
                                format!(
                                    "the file has {} links: another name elsewhere reaches it, and storlab writes only files of its own",
                                    st.st_nlink
                                ),
                            ));
                        }
                        state.set_file(f, Some(st.st_size as u64));
                    }
                    _ if strict => return Err(unexpected()),
                    _ => {}
                }
            }
        }
        state.recount();
        Ok(())
    }

    /// Directory `d` of another `shape` than the tree's (a tree found, to be removed), opened
    /// from the anchor down, each step with `O_NOFOLLOW` and checked.
    fn open_other(&self, shape: &Shape, d: u64) -> Option<Arc<OwnedFd>> {
        let mut chain = Vec::new();
        let mut x = d;
        while x > 0 {
            chain.push(x);
            x = shape.parent(x);
        }
        let mut fd = self.anchor();
        for &x in chain.iter().rev() {
            let name = cname(&shape.dir_name(x));
            let next = rfs::openat(
                &*fd,
                name.as_c_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()?;
            check_dir(next.as_fd(), self.uid, &self.path).ok()?;
            fd = Arc::new(next);
        }
        Some(fd)
    }

    /// Free space and inodes of the anchor's file system: (bytes, inodes; `None` where it
    /// does not count them).
    pub(crate) fn free(&self) -> (u64, Option<u64>) {
        match rfs::fstatvfs(&*self.anchor()) {
            Ok(v) => (
                v.f_bavail.saturating_mul(v.f_frsize),
                (v.f_files > 0).then_some(v.f_favail),
            ),
            Err(_) => (u64::MAX, None),
        }
    }
}

/// Whether `name` is one of the marker's temporary names (a marker being written when
/// storlab stopped).
fn is_marker_temporary(name: &str) -> bool {
    name.strip_prefix(MARKER)
        .and_then(|rest| rest.strip_prefix('.'))
        .and_then(|rest| rest.strip_suffix(".tmp"))
        .is_some_and(|hex| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The child of directory `d` (at `level`) named `name`, if the shape has one.
fn child_dir(shape: &Shape, d: u64, level: u32, name: &str) -> Option<u64> {
    if level >= shape.depth {
        return None;
    }
    let index: u64 = name.strip_prefix('d')?.parse().ok()?;
    if index == 0 || index > u64::from(shape.width) {
        return None;
    }
    let child = d * u64::from(shape.width) + index;
    (shape.dir_name(child) == name).then_some(child)
}

/// The index in its directory of the file named `name`, if it is a file's name of `shape`.
fn file_index(shape: &Shape, name: &str) -> Option<u64> {
    let n: u64 = name.strip_prefix('f')?.parse().ok()?;
    (n >= 1 && shape.file_name_at(n - 1) == name).then(|| n - 1)
}

/// Whether the directory holds nothing.
fn empty(fd: BorrowedFd<'_>, path: &Path) -> Result<bool> {
    let dir = rfs::Dir::read_from(fd).map_err(|e| refused(path, e))?;
    for entry in dir {
        let entry = entry.map_err(|e| refused(path, e))?;
        let n = entry.file_name().to_bytes();
        if n != b"." && n != b".." {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The anchor's marker, if it has one: a regular file of this user's with one link, at most
/// 64 KiB, that says it is storlab's; anything else at its name is refused.
fn read_marker(anchor: BorrowedFd<'_>, path: &Path) -> Result<Option<Marker>> {
    let at = path.join(MARKER);
    let fd = match rfs::openat(
        anchor,
        MARKER,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => {
            return Err(refused(
                &at,
                format!("its marker cannot be opened ({e}); it is not storlab's"),
            ));
        }
    };
    let st = rfs::fstat(&fd).map_err(|e| refused(&at, e))?;
    let uid = rustix::process::geteuid().as_raw();
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || st.st_uid != uid
        || st.st_nlink != 1
        || st.st_size as u64 > MARKER_CAP
    {
        return Err(refused(
            &at,
            "its marker is not a regular file of this user's with one link: someone else put it there",
        ));
    }
    let mut text = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(std::fs::File::from(fd), MARKER_CAP),
        &mut text,
    )
    .map_err(|e| refused(&at, e))?;
    let marker: Marker = serde_json::from_slice(&text)
        .map_err(|e| refused(&at, format!("its marker is not storlab's: {e}")))?;
    if marker.kind != MARKER_KIND {
        return Err(refused(
            &at,
            "its marker is not a storlab file-system tree's",
        ));
    }
    Ok(Some(marker))
}
