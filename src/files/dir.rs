//! Directories storlab writes in, used through descriptors that were checked once.
//!
//! - **storlab's own directories** ([`is_own`]: `./storlab-scratch`, everything under it, and
//!   `./storlab-results`) are made with `mkdirat` (mode 0755, never through a link: each
//!   component is opened relative to its parent's descriptor with `O_NOFOLLOW`) and checked on
//!   that descriptor: a directory, owned by the running user or root, and not writable by
//!   anyone else unless it is sticky and the running user's. One that another user planted (a
//!   link, a directory of theirs, one everybody may write) is refused with its path, its owner
//!   and what to do ([`DirError`]).
//! - **Directories storlab creates elsewhere** (a missing directory of a results path) are made
//!   the same way, inside the existing directory the user named.
//! - Each directory made or checked here is kept open for the process ([`make`], [`open`]) and
//!   every file storlab writes in it is created, renamed and removed through that descriptor,
//!   never by its path again; a later use checks that the path still names that directory.

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The directories in the working directory that are storlab's own.
pub(crate) const OWN: [&str; 2] = ["storlab-scratch", "storlab-results"];

/// Permissions of a directory storlab makes, before the umask.
const NEW_DIR_MODE: u32 = 0o755;

/// A directory, open (for reading: it can be synced) and checked.
#[derive(Debug)]
pub(crate) struct Dir {
    file: File,
    path: PathBuf,
}

impl Dir {
    /// The directory at `path` as the path gives it (links followed: a directory the user
    /// named), opened for reading; nothing is checked.
    pub(crate) fn open_path(path: &Path) -> io::Result<Dir> {
        let file = File::from(rfs::open(
            path,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?);
        Ok(Dir {
            file,
            path: path.to_path_buf(),
        })
    }

    /// `file`, a directory found at `path` by other means (a path resolved link by link).
    pub(crate) fn from_file(file: File, path: PathBuf) -> Dir {
        Dir { file, path }
    }

    /// The open directory, for the `*at` calls.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// Its path, for messages.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// Why a directory storlab would write in is refused.
#[derive(Debug)]
pub(crate) enum DirError {
    /// Someone other than the running user or root could have put it there, or may change it.
    Planted {
        /// The directory.
        path: PathBuf,
        /// What it is: "it is owned by nobody (uid 65534), not by this user (root (uid 0))".
        why: String,
    },
    /// An operating-system error on it.
    Io {
        /// The directory.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The error.
        error: io::Error,
    },
}

impl std::fmt::Display for DirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DirError::Planted { path, why } => write!(
                f,
                "refusing to use the directory {}: {why}; another user could have put it there or may change it, so storlab writes nothing in it: remove it (rm -r {}) if it is not yours, or give a directory of your own",
                path.display(),
                path.display()
            ),
            DirError::Io {
                path,
                action,
                error,
            } => write!(
                f,
                "cannot {action} the directory {}: {}",
                path.display(),
                super::error_text(error)
            ),
        }
    }
}

impl std::error::Error for DirError {}

/// Whether someone other than its owner may write in a directory of `mode` (its group or
/// everybody).
pub(crate) fn others_may_write(mode: u32) -> bool {
    mode & 0o022 != 0
}

/// The user `uid` as a message names it: "nobody (uid 65534)", "uid 1234" when
/// `/etc/passwd` does not name it.
pub(crate) fn owner_text(uid: u32) -> String {
    let name = std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                let mut fields = line.split(':');
                let name = fields.next()?;
                let id: u32 = fields.nth(1)?.parse().ok()?;
                (id == uid).then(|| crate::units::escape_text(name).into_owned())
            })
        });
    match name {
        Some(name) => format!("{name} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}

/// Whether `path` is one of storlab's own directories or under one ([`OWN`]): relative, its
/// first component (after `./`) `storlab-scratch` or `storlab-results`, no `..`.
pub(crate) fn is_own(path: &Path) -> bool {
    let mut components = path
        .components()
        .skip_while(|c| matches!(c, Component::CurDir));
    let first = components.next();
    OWN.iter()
        .any(|own| first == Some(Component::Normal(OsStr::new(own))))
        && components.all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Why the directory `path` (open as `file`) is not one storlab may use as its own: not owned
/// by the running user or root, or writable by others (unless sticky and the user's).
fn refusal(file: &File, path: &Path) -> Result<(), DirError> {
    let metadata = file.metadata().map_err(|error| DirError::Io {
        path: path.to_path_buf(),
        action: "examine",
        error,
    })?;
    let me = rustix::process::geteuid().as_raw();
    let owner = metadata.uid();
    let mode = metadata.mode() & 0o7777;
    let why = if !metadata.is_dir() {
        Some("it is not a directory".to_string())
    } else if owner != me && owner != 0 {
        Some(format!(
            "it is owned by {}, not by this user ({}){}",
            owner_text(owner),
            owner_text(me),
            if me == 0 { "" } else { " or root" }
        ))
    } else if others_may_write(mode) && !(mode & 0o1000 != 0 && owner == me) {
        Some(format!(
            "others may write in it (mode {mode:04o}{})",
            if mode & 0o1000 == 0 {
                ", not sticky"
            } else {
                ", sticky but not this user's"
            }
        ))
    } else {
        None
    };
    match why {
        Some(why) => Err(DirError::Planted {
            path: path.to_path_buf(),
            why,
        }),
        None => Ok(()),
    }
}

/// Opens the directory `name` in `parent` (at `path`) without following a link, and checks it
/// is one storlab may use as its own. `Ok(None)`: nothing is there.
fn open_own(parent: &File, name: &OsStr, path: &Path) -> Result<Option<File>, DirError> {
    let io = |action, error: Errno| DirError::Io {
        path: path.to_path_buf(),
        action,
        error: error.into(),
    };
    match rfs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(io("examine", e)),
        Ok(stat) if rfs::FileType::from_raw_mode(stat.st_mode) == rfs::FileType::Symlink => {
            let to = rfs::readlinkat(parent, name, Vec::new())
                .map(|t| crate::units::escape_text(&t.to_string_lossy()).into_owned())
                .unwrap_or_else(|_| "?".into());
            return Err(DirError::Planted {
                path: path.to_path_buf(),
                why: format!(
                    "it is a symbolic link (to {to}, made by {}), and storlab makes its own directories itself, never through a link",
                    owner_text(stat.st_uid)
                ),
            });
        }
        Ok(_) => {}
    }
    let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = match rfs::openat(parent, name, flags, Mode::empty()) {
        Ok(fd) => File::from(fd),
        // Replaced since it was looked at (by a link: ELOOP; a file: ENOTDIR).
        Err(Errno::LOOP | Errno::NOTDIR) => {
            return Err(DirError::Planted {
                path: path.to_path_buf(),
                why: "it was replaced while storlab opened it (by a link or a file)".into(),
            });
        }
        Err(e) => return Err(io("open", e)),
    };
    refusal(&file, path)?;
    Ok(Some(file))
}

/// A directory path as storlab's directories are looked up: without `.` components.
fn normal(path: &Path) -> PathBuf {
    let out: PathBuf = path
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

/// The directories this process made or checked, by their path ([`make`], [`look`]).
static CHECKED: Mutex<Vec<(PathBuf, Arc<Dir>)>> = Mutex::new(Vec::new());

/// The directory `path` this process checked, if the path still names it.
fn checked(path: &Path) -> Option<Arc<Dir>> {
    let mut list = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    let at = list.iter().position(|(p, _)| p == path)?;
    let dir = Arc::clone(&list[at].1);
    let same = (dir.file.metadata().ok())
        .zip(std::fs::symlink_metadata(path).ok())
        .is_some_and(|(a, b)| (a.dev(), a.ino()) == (b.dev(), b.ino()) && b.is_dir());
    if same {
        Some(dir)
    } else {
        // Moved or replaced since: checked again by whoever asks next.
        list.remove(at);
        None
    }
}

fn remember(path: &Path, dir: &Arc<Dir>) {
    let mut list = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    list.retain(|(p, _)| p != path);
    list.push((path.to_path_buf(), Arc::clone(dir)));
}

/// Forgets the directory `path` (removed by this process).
pub(crate) fn forget(path: &Path) {
    let path = normal(path);
    CHECKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|(p, _)| *p != path);
}

/// What [`look`] found of a directory path.
#[derive(Debug)]
pub(crate) struct Looked {
    /// The deepest directory of the path that exists (checked, when it is storlab's own).
    pub(crate) dir: Arc<Dir>,
    /// The components below it that do not exist yet, in order (empty: the whole path exists).
    pub(crate) missing: Vec<OsString>,
}

/// Walks the directory `path` without creating anything. storlab's own ([`is_own`]: then the
/// whole path is) is walked from the working directory component by component, each opened
/// without following a link and checked; a path of the user's is opened as it is given
/// (links followed), and where it does not exist, its deepest directory that does.
pub(crate) fn look(path: &Path) -> Result<Looked, DirError> {
    look_at(Path::new("."), path)
}

/// [`look`], storlab's own directories taken relative to `base` (the working directory).
fn look_at(base: &Path, path: &Path) -> Result<Looked, DirError> {
    let key = normal(&base.join(path));
    if let Some(dir) = checked(&key) {
        return Ok(Looked {
            dir,
            missing: Vec::new(),
        });
    }
    let looked = if is_own(path) {
        look_own(base, &normal(path))?
    } else {
        look_users(path)?
    };
    if looked.missing.is_empty() {
        remember(&key, &looked.dir);
    }
    Ok(looked)
}

/// [`look`] of one of storlab's own directories.
fn look_own(base: &Path, path: &Path) -> Result<Looked, DirError> {
    let mut at = Dir::open_path(base).map_err(|error| DirError::Io {
        path: base.to_path_buf(),
        action: "open",
        error,
    })?;
    // Paths in the working directory are said as relative ones: `storlab-scratch/etcd`.
    let mut done = match normal(base) {
        dot if dot == Path::new(".") => PathBuf::new(),
        base => base,
    };
    let mut missing = Vec::new();
    for component in path.components() {
        let name = component.as_os_str();
        done.push(name);
        if !missing.is_empty() {
            missing.push(name.to_owned());
            continue;
        }
        match open_own(&at.file, name, &done)? {
            Some(file) => at = Dir::from_file(file, done.clone()),
            None => missing.push(name.to_owned()),
        }
    }
    Ok(Looked {
        dir: Arc::new(at),
        missing,
    })
}

/// [`look`] of a directory of the user's: the deepest directory on it that exists, opened as
/// the path gives it.
fn look_users(path: &Path) -> Result<Looked, DirError> {
    let mut missing = Vec::new();
    let mut at = path.to_path_buf();
    loop {
        let open_at = if at.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &at
        };
        match Dir::open_path(open_at) {
            Ok(dir) => {
                missing.reverse();
                return Ok(Looked {
                    dir: Arc::new(dir),
                    missing,
                });
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                let Some(name) = at.file_name() else {
                    return Err(DirError::Io {
                        path: path.to_path_buf(),
                        action: "open",
                        error,
                    });
                };
                missing.push(name.to_owned());
                at.pop();
            }
            Err(error) => {
                return Err(DirError::Io {
                    path: at,
                    action: "open",
                    error,
                });
            }
        }
    }
}

/// The directory `path`, made where it is missing (each new directory with `mkdirat`, mode
/// 0755, opened without following a link and checked as storlab's own), and checked where it
/// is storlab's own ([`look`]); kept open for the process. With the directories it created,
/// deepest first.
pub(crate) fn make(path: &Path) -> Result<(Arc<Dir>, Vec<PathBuf>), DirError> {
    make_at(Path::new("."), path)
}

/// [`make`], storlab's own directories taken relative to `base` (the working directory).
fn make_at(base: &Path, path: &Path) -> Result<(Arc<Dir>, Vec<PathBuf>), DirError> {
    let looked = look_at(base, path)?;
    let mut at = looked.dir;
    let mut created = Vec::new();
    for name in &looked.missing {
        let below = match at.path.as_path() {
            dot if dot == Path::new(".") => PathBuf::from(name),
            parent => parent.join(name),
        };
        match rfs::mkdirat(
            &at.file,
            name.as_os_str(),
            Mode::from_bits_truncate(NEW_DIR_MODE),
        ) {
            Ok(()) => created.push(below.clone()),
            // Made meanwhile (by another run, or another user): checked as any other.
            Err(Errno::EXIST) => {}
            Err(e) => {
                return Err(DirError::Io {
                    path: below,
                    action: "create",
                    error: e.into(),
                });
            }
        }
        let Some(file) = open_own(&at.file, name, &below)? else {
            return Err(DirError::Io {
                path: below,
                action: "open",
                error: io::Error::other("it was removed just after it was made"),
            });
        };
        at = Arc::new(Dir::from_file(file, below));
    }
    remember(&normal(&base.join(path)), &at);
    created.reverse();
    Ok((at, created))
}

/// The directory files are made in at `dir`: the one this process made or checked there
/// ([`make`], [`look`]; storlab's own directories are always checked), else opened by the path
/// the user gave.
pub(crate) fn open(dir: &Path) -> io::Result<Arc<Dir>> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if let Some(checked) = checked(&normal(dir)) {
        return Ok(checked);
    }
    if !is_own(dir) {
        return Dir::open_path(dir).map(Arc::new);
    }
    match look(dir) {
        Ok(looked) if looked.missing.is_empty() => Ok(looked.dir),
        Ok(_) => Err(io::ErrorKind::NotFound.into()),
        Err(DirError::Io { error, .. }) => Err(error),
        Err(planted) => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            planted.to_string(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn own_directories_are_relative_and_named() {
        for yes in [
            "storlab-scratch",
            "./storlab-scratch/etcd",
            "storlab-results",
            "storlab-scratch/a/b",
        ] {
            assert!(is_own(Path::new(yes)), "{yes}");
        }
        for no in [
            "/storlab-scratch",
            "x/storlab-scratch",
            "storlab-scratch/../x",
            "storlab-results2",
            ".",
            "",
        ] {
            assert!(!is_own(Path::new(no)), "{no}");
        }
    }

    #[test]
    fn own_directories_are_made_without_links_and_planted_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        let at = |p: &str| base.join(p);
        let (made, created) = make_at(base, Path::new("storlab-scratch/etcd")).unwrap();
        assert_eq!(created, [at("storlab-scratch/etcd"), at("storlab-scratch")]);
        assert_eq!(made.path(), at("storlab-scratch/etcd"));
        let mode = std::fs::metadata(at("storlab-scratch/etcd"))
            .unwrap()
            .mode()
            & 0o777;
        assert_eq!(mode & 0o022, 0, "{mode:o}");
        // Again: the same directory, nothing made.
        let (again, created) = make_at(base, Path::new("./storlab-scratch/etcd")).unwrap();
        assert!(created.is_empty());
        assert_eq!(
            again.file().metadata().unwrap().ino(),
            made.file().metadata().unwrap().ino()
        );

        // A link planted where a directory of storlab's goes: refused, naming the link.
        let elsewhere = at("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        symlink(&elsewhere, at("storlab-results")).unwrap();
        let error = make_at(base, Path::new("storlab-results"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("it is a symbolic link (to "), "{error}");
        assert!(error.contains("rm -r "), "{error}");
        std::fs::remove_file(at("storlab-results")).unwrap();
        // One anybody may write (not sticky): refused.
        std::fs::create_dir(at("storlab-results")).unwrap();
        let mode = |m: u32| std::fs::Permissions::from_mode(m);
        std::fs::set_permissions(at("storlab-results"), mode(0o777)).unwrap();
        let error = make_at(base, Path::new("storlab-results"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("others may write in it (mode 0777"),
            "{error}"
        );
        // Sticky and this user's: used.
        std::fs::set_permissions(at("storlab-results"), mode(0o1777)).unwrap();
        make_at(base, Path::new("storlab-results")).unwrap();
        // A directory swapped for a link after it was checked is checked again.
        std::fs::rename(at("storlab-scratch/etcd"), at("storlab-scratch/moved")).unwrap();
        symlink(&elsewhere, at("storlab-scratch/etcd")).unwrap();
        assert!(make_at(base, Path::new("storlab-scratch/etcd")).is_err());
        assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none());
    }

    #[test]
    fn a_directory_of_the_users_is_followed_and_its_missing_part_made() {
        let base = tempfile::tempdir().unwrap();
        let real = base.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = base.path().join("link");
        symlink(&real, &link).unwrap();
        let (dir, created) = make(&link.join("a/b")).unwrap();
        assert_eq!(created, [link.join("a/b"), link.join("a")]);
        assert!(real.join("a/b").is_dir());
        assert_eq!(dir.path(), link.join("a/b"));
        // A file where a directory should be.
        std::fs::write(base.path().join("file"), b"x").unwrap();
        assert!(make(&base.path().join("file/sub")).is_err());
    }

    #[test]
    fn owners_are_named() {
        assert_eq!(owner_text(0), "root (uid 0)");
        assert_eq!(owner_text(4_000_000_000), "uid 4000000000");
    }
}
