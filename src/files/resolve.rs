//! A path a user gave for a target, resolved link by link through directory descriptors, as
//! the kernel resolves it, so that what is checked is what is opened:
//!
//! - each component is looked at (`fstatat` without following it) in the directory reached so
//!   far, and a directory is entered with `openat(O_PATH | O_NOFOLLOW)` on that descriptor: a
//!   component swapped for a link after it was looked at is an error, never followed;
//! - a symbolic link is followed only if someone who may write its directory could not have
//!   planted it: its directory is not writable by others, or the link is the running user's or
//!   the directory owner's (the kernel's `protected_symlinks` rule, for every directory others
//!   may write, sticky or not); anything else is [`Refused::PlantedLink`];
//! - the end of the path is opened `O_PATH | O_NOFOLLOW` (which opens no device and waits for
//!   no writer) in the directory it is in, and that directory is kept open for the files made
//!   beside it (a manifest), so neither can be swapped afterwards.

use super::dir::{Dir, others_may_write, owner_text};
use crate::units::escape_text;
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Links followed at most on one path (the kernel's limit).
const MAX_LINKS: u32 = 40;

/// Where a path leads.
#[derive(Debug)]
pub(crate) enum Walked {
    /// Something is there.
    Found {
        /// The directory it is in, open for reading (or `O_PATH` where it may not be read).
        dir: Dir,
        /// Its name in `dir`.
        name: OsString,
        /// It, opened with `O_PATH | O_NOFOLLOW`: neither a link (they were followed) nor
        /// opened in any other sense.
        file: File,
        /// Its path with every link resolved.
        canonical: PathBuf,
    },
    /// Nothing is there (yet).
    Missing {
        /// The deepest directory on the path that exists.
        dir: Dir,
        /// What is missing below it, in order: the last is the file's name.
        missing: Vec<OsString>,
    },
}

/// Why a path is not followed.
#[derive(Debug)]
pub(crate) enum Refused {
    /// A link someone other than the running user could have planted.
    PlantedLink {
        /// The link.
        link: PathBuf,
        /// Where it points.
        to: PathBuf,
        /// Its owner.
        owner: u32,
    },
    /// A component before the end is not a directory.
    NotADirectory(PathBuf),
    /// More than [`MAX_LINKS`] links.
    Loop,
    /// A component changed between being looked at and opened.
    Changed(PathBuf),
    /// An operating-system error on `path`.
    Io(PathBuf, io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::PlantedLink { link, to, owner } => write!(
                f,
                "{} is a symbolic link (to {}) of {}'s in a directory others may write, so another user could have planted it, and storlab follows no such link; give the path it points to instead, if that is the file meant",
                escape_text(&link.to_string_lossy()),
                escape_text(&to.to_string_lossy()),
                owner_text(*owner)
            ),
            Refused::NotADirectory(file) => write!(
                f,
                "{} is not a directory, so nothing can be inside it; check the path",
                file.display()
            ),
            Refused::Loop => write!(
                f,
                "the path goes through more than {MAX_LINKS} symbolic links; check the links on it"
            ),
            Refused::Changed(path) => write!(
                f,
                "{} changed while storlab was opening it (was it replaced by a link?); run again once nothing changes it",
                path.display()
            ),
            Refused::Io(path, error) => write!(
                f,
                "cannot resolve the path at {}: {}",
                path.display(),
                super::error_text(error)
            ),
        }
    }
}

/// The directory to start from: `/` for an absolute path, the working directory otherwise.
fn start(absolute: bool) -> Result<(File, PathBuf), Refused> {
    let (at, path) = if absolute {
        (PathBuf::from("/"), PathBuf::from("/"))
    } else {
        let cwd = std::env::current_dir().map_err(|e| Refused::Io(".".into(), e))?;
        (PathBuf::from("."), cwd)
    };
    let fd = rfs::open(
        &at,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Refused::Io(at, e.into()))?;
    Ok((File::from(fd), path))
}

/// The components of `path` in reverse order (the next one last), as `OsString`s; the root
/// of an absolute path is not among them.
fn reversed(path: &Path) -> Vec<OsString> {
    let mut out: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    out.reverse();
    out
}

/// Follows `path` (see the module's documentation).
pub(crate) fn walk(path: &Path) -> Result<Walked, Refused> {
    let (dir, dir_path) = start(path.is_absolute())?;
    walk_from(dir, dir_path, path)
}

/// Follows `rest` from the directory `dir` (at `dir_path`), which was checked already.
pub(crate) fn walk_in(dir: &Dir, rest: &Path) -> Result<Walked, Refused> {
    let file = dir
        .file()
        .try_clone()
        .map_err(|e| Refused::Io(dir.path().to_path_buf(), e))?;
    let dir_path = std::fs::canonicalize(dir.path()).unwrap_or_else(|_| dir.path().to_path_buf());
    walk_from(file, dir_path, rest)
}

fn walk_from(mut dir: File, mut dir_path: PathBuf, path: &Path) -> Result<Walked, Refused> {
    let mut stack = reversed(path);
    let mut links = 0;
    // The last component entered, when the path ends in a directory named by `..` or `.`.
    while let Some(name) = stack.pop() {
        let here = dir_path.join(&name);
        if name == ".." {
            dir = open_dir(&dir, OsStr::new(".."), &here)?;
            dir_path.pop();
            continue;
        }
        let stat = match rfs::statat(&dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => {
                let mut missing = vec![name];
                missing.extend(stack.into_iter().rev().filter(|c| c != "."));
                return Ok(Walked::Missing {
                    dir: readable(dir, dir_path),
                    missing,
                });
            }
            Err(Errno::NOTDIR) => return Err(Refused::NotADirectory(dir_path)),
            Err(e) => return Err(Refused::Io(here, e.into())),
        };
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Symlink => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(Refused::Loop);
                }
                let to = PathBuf::from(OsStr::from_bytes(
                    rfs::readlinkat(&dir, name.as_os_str(), Vec::new())
                        .map_err(|e| Refused::Io(here.clone(), e.into()))?
                        .as_bytes(),
                ));
                check_link(&dir, &here, &to, stat.st_uid)?;
                stack.extend(reversed(&to));
                if to.is_absolute() {
                    (dir, dir_path) = start(true)?;
                }
            }
            FileType::Directory if !stack.is_empty() => {
                dir = open_dir(&dir, &name, &here)?;
                dir_path = here;
            }
            _ if !stack.iter().all(|c| c == ".") => return Err(Refused::NotADirectory(here)),
            _ => {
                let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let file = File::from(
                    rfs::openat(&dir, name.as_os_str(), flags, Mode::empty())
                        .map_err(|e| Refused::Io(here.clone(), e.into()))?,
                );
                let opened = file.metadata().map_err(|e| Refused::Io(here.clone(), e))?;
                if (opened.dev(), opened.ino()) != (stat.st_dev, stat.st_ino) {
                    return Err(Refused::Changed(here));
                }
                return Ok(Walked::Found {
                    dir: readable(dir, dir_path),
                    name,
                    file,
                    canonical: here,
                });
            }
        }
    }
    // The path ends at a directory (`.`, `..`, `/`): it is the one found.
    let file = dir
        .try_clone()
        .map_err(|e| Refused::Io(dir_path.clone(), e))?;
    let name = dir_path
        .file_name()
        .map_or_else(|| OsString::from("/"), OsStr::to_owned);
    let parent = open_dir(&dir, OsStr::new(".."), &dir_path)?;
    let canonical = dir_path.clone();
    dir_path.pop();
    Ok(Walked::Found {
        dir: readable(parent, dir_path),
        name,
        file,
        canonical,
    })
}

/// The directory `name` in `dir` (at `path`), entered without following a link.
fn open_dir(dir: &File, name: &OsStr, path: &Path) -> Result<File, Refused> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rfs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(File::from(fd)),
        Err(Errno::LOOP | Errno::NOTDIR | Errno::NOENT) => {
            Err(Refused::Changed(path.to_path_buf()))
        }
        Err(e) => Err(Refused::Io(path.to_path_buf(), e.into())),
    }
}

/// Refuses the link `link` (to `to`, of user `owner`) in `dir` when someone other than the
/// running user could have planted it.
fn check_link(dir: &File, link: &Path, to: &Path, owner: u32) -> Result<(), Refused> {
    let metadata = dir
        .metadata()
        .map_err(|e| Refused::Io(link.to_path_buf(), e))?;
    let me = rustix::process::geteuid().as_raw();
    if others_may_write(metadata.mode()) && owner != me && owner != metadata.uid() {
        return Err(Refused::PlantedLink {
            link: link.to_path_buf(),
            to: to.to_path_buf(),
            owner,
        });
    }
    Ok(())
}

/// The `O_PATH` descriptor `dir` (at `path`) as a directory files can be made in and synced:
/// reopened for reading through `/proc/self/fd`, or kept as it is where that is not allowed.
fn readable(dir: File, path: PathBuf) -> Dir {
    let file = super::reopen(&dir, OFlags::RDONLY | OFlags::DIRECTORY).unwrap_or(dir);
    Dir::from_file(file, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn found(walked: Walked) -> (PathBuf, PathBuf) {
        match walked {
            Walked::Found { dir, canonical, .. } => (dir.path().to_path_buf(), canonical),
            Walked::Missing { missing, .. } => panic!("missing {missing:?}"),
        }
    }

    #[test]
    fn links_are_followed_as_the_kernel_follows_them() {
        let base = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(base.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f"), b"x").unwrap();
        symlink("a/b", root.join("ab")).unwrap();
        symlink("../b/f", root.join("a/b/up")).unwrap();
        symlink(root.join("ab/up"), root.join("abs")).unwrap();
        for (path, canonical) in [
            ("a/b/f", "a/b/f"),
            ("ab/f", "a/b/f"),
            ("ab/up", "a/b/f"),
            ("abs", "a/b/f"),
            ("a/./b/../b/f", "a/b/f"),
        ] {
            let (dir, c) = found(walk(&root.join(path)).unwrap());
            assert_eq!(c, root.join(canonical), "{path}");
            assert_eq!(dir, root.join("a/b"), "{path}");
            assert_eq!(c, std::fs::canonicalize(root.join(path)).unwrap());
        }
        match walk(&root.join("ab/new/x")).unwrap() {
            Walked::Missing { dir, missing } => {
                assert_eq!(dir.path(), root.join("a/b"));
                assert_eq!(missing, ["new", "x"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            walk(&root.join("a/b/f/inside")),
            Err(Refused::NotADirectory(_))
        ));
        symlink("loop", root.join("loop")).unwrap();
        assert!(matches!(walk(&root.join("loop")), Err(Refused::Loop)));
        // A directory itself.
        let (_, c) = found(walk(&root.join("a/b/..")).unwrap());
        assert_eq!(c, root.join("a"));
    }

    #[test]
    fn a_link_another_user_may_have_planted_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(base.path()).unwrap();
        let shared = root.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        std::fs::write(root.join("victim"), b"x").unwrap();
        let link = shared.join("t.dat");
        symlink(root.join("victim"), &link).unwrap();
        // The running user's own link there is followed.
        found(walk(&link).unwrap());
        if !rustix::process::geteuid().is_root() {
            return;
        }
        // Someone else's (nobody's) is not.
        rfs::chownat(
            rfs::CWD,
            &link,
            Some(rustix::process::Uid::from_raw(65534)),
            None,
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .unwrap();
        let refused = walk(&link).unwrap_err();
        let text = refused.to_string();
        assert!(
            matches!(refused, Refused::PlantedLink { owner: 65534, .. }),
            "{text}"
        );
        assert!(
            text.contains("of nobody (uid 65534)'s") || text.contains("uid 65534"),
            "{text}"
        );
        // In a directory nobody else may write, it is followed.
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
        found(walk(&link).unwrap());
    }
}
