//! Advisory locks that keep two storlab runs off one target or one results file: `flock`,
//! exclusive, never waited for, taken before any I/O on a descriptor kept open for the whole
//! run and released by the kernel when it closes, however the process ends (`kill -9`
//! included). A refusal names the process that holds the lock, found in `/proc/locks`.

use super::FileId;
use crate::stats::host::locks;
use rustix::fs::{self as rfs, FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Why a lock was not taken.
#[derive(Debug)]
pub(crate) enum LockError {
    /// Another process holds it: which one, as "process 1234 (storlab)", or "another
    /// process" when `/proc/locks` does not say.
    Held(String),
    /// The lock, or the file it is taken on, could not be had.
    Io(io::Error),
}

impl From<io::Error> for LockError {
    fn from(error: io::Error) -> Self {
        LockError::Io(error)
    }
}

/// Who holds a `flock` lock on the file `metadata` describes, other than this process:
/// "process 1234 (storlab)"; `None` when nobody else does (as far as `/proc/locks` says).
pub(crate) fn holder(metadata: &Metadata) -> Option<String> {
    holder_of(metadata.dev(), metadata.ino())
}

/// [`holder`] of the file of device `dev` and inode `ino`.
pub(crate) fn holder_of(dev: u64, ino: u64) -> Option<String> {
    locks::flock_holder(dev, ino, std::process::id()).map(locks::process_text)
}

fn held(metadata: &Metadata) -> LockError {
    LockError::Held(holder(metadata).unwrap_or_else(|| "another process".into()))
}

/// Takes an exclusive lock on `file` without waiting; it is held until the last descriptor
/// of this open file closes. `Ok(false)`: this process holds it already through another
/// descriptor (the same file named twice in one job), so there is nothing more to hold.
pub(crate) fn exclusive(file: &File) -> Result<bool, LockError> {
    take(file, FlockOperation::NonBlockingLockExclusive)
}

/// Takes a shared lock on `file` without waiting, as [`exclusive`] does: held with other
/// shared holders (the ranks of one run on one host), refused while a run holds it whole.
pub(crate) fn shared(file: &File) -> Result<bool, LockError> {
    take(file, FlockOperation::NonBlockingLockShared)
}

fn take(file: &File, operation: FlockOperation) -> Result<bool, LockError> {
    match rfs::flock(file, operation) {
        Ok(()) => Ok(true),
        Err(Errno::WOULDBLOCK) => {
            let metadata = file.metadata()?;
            if locks::held_by_self(metadata.dev(), metadata.ino()) {
                Ok(false)
            } else {
                Err(held(&metadata))
            }
        }
        Err(e) => Err(LockError::Io(e.into())),
    }
}

/// A lock file at a path, held while this value lives and removed when it is dropped: what
/// keeps two runs from writing one results file, whose own inode changes at every save.
#[derive(Debug)]
pub(crate) struct LockFile {
    /// The directory it is in (made or checked by `super::dir`).
    dir: std::sync::Arc<super::dir::Dir>,
    /// Its name there.
    name: std::ffi::OsString,
    id: FileId,
    /// The locked descriptor.
    _file: File,
}

/// Attempts at a lock file that its holder removes just as it is opened.
const LOCK_ATTEMPTS: u32 = 8;

impl LockFile {
    /// Creates (or opens) the lock file at `path` and locks it; refused at once when another
    /// process holds it. Never follows a link there and never waits on a pipe.
    pub(crate) fn acquire(path: &Path) -> Result<LockFile, LockError> {
        let flags =
            OFlags::RDONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "it names no file"))?
            .to_owned();
        let dir = super::dir::open(path.parent().unwrap_or(Path::new(".")))?;
        for _ in 0..LOCK_ATTEMPTS {
            let file = File::from(
                rfs::openat(dir.file(), &name, flags, Mode::from_bits_truncate(0o644))
                    .map_err(io::Error::from)?,
            );
            let metadata = file.metadata()?;
            if !metadata.file_type().is_file() {
                return Err(LockError::Io(io::Error::other("it is not a regular file")));
            }
            match rfs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => {}
                Err(Errno::WOULDBLOCK) => return Err(held(&metadata)),
                Err(e) => return Err(LockError::Io(e.into())),
            }
            // The holder before removes the file while it still holds the lock: a lock taken
            // on a file no longer at the path holds nothing, and is taken again.
            let id = FileId::from(&metadata);
            if named(&dir, &name) == Some(id) {
                return Ok(LockFile {
                    dir,
                    name,
                    id,
                    _file: file,
                });
            }
        }
        Err(LockError::Io(io::Error::other(
            "it kept being replaced while it was being locked",
        )))
    }
}

/// The identity of what is at `name` in `dir` (never following a link).
fn named(dir: &super::dir::Dir, name: &std::ffi::OsStr) -> Option<FileId> {
    rfs::statat(dir.file(), name, rfs::AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .map(|s| FileId {
            dev: s.st_dev,
            ino: s.st_ino,
        })
}

impl Drop for LockFile {
    fn drop(&mut self) {
        // Removed while still locked, and only if it is still this file.
        if named(&self.dir, &self.name) == Some(self.id) {
            let _ = rfs::unlinkat(self.dir.file(), &self.name, rfs::AtFlags::empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json.lock");
        let first = LockFile::acquire(&path).unwrap();
        assert!(path.exists());
        // In another process, as a second storlab would be: flock(1) is util-linux's.
        let status = std::process::Command::new("flock")
            .args(["--nonblock", "--conflict-exit-code", "7"])
            .arg(&path)
            .arg("true")
            .status();
        if let Ok(status) = status {
            assert_eq!(status.code(), Some(7), "flock took a held lock");
        }
        drop(first);
        assert!(!path.exists(), "the holder removes the lock file");
        let again = LockFile::acquire(&path).unwrap();
        drop(again);
    }

    #[test]
    fn a_lock_held_by_another_process_is_refused_with_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target");
        std::fs::write(&path, b"x").unwrap();
        // flock(1) holds the lock in a child process until its stdin closes.
        let child = std::process::Command::new("flock")
            .arg(&path)
            .args(["cat"])
            .stdin(std::process::Stdio::piped())
            .spawn();
        let Ok(mut child) = child else {
            return;
        };
        let file = File::open(&path).unwrap();
        let mut refused = None;
        for _ in 0..500 {
            match exclusive(&file) {
                Err(LockError::Held(who)) => {
                    refused = Some(who);
                    break;
                }
                Ok(_) => {
                    // Not yet taken by the child: let it go and try again.
                    rfs::flock(&file, FlockOperation::Unlock).unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(LockError::Io(e)) => panic!("{e}"),
            }
        }
        drop(child.stdin.take());
        child.wait().unwrap();
        let who = refused.expect("the child's lock was seen");
        // flock(1) runs cat with the lock held by its own descriptor: the pid is flock's.
        assert_eq!(who, format!("process {} (flock)", child.id()));
    }

    #[test]
    fn ranks_share_a_shared_lock_and_keep_out_a_run_that_takes_it_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lun");
        std::fs::write(&path, b"x").unwrap();
        // Another rank on this host: flock(1) holds a shared lock until its stdin closes.
        let mut child = std::process::Command::new("flock")
            .arg("--shared")
            .arg(&path)
            .args(["cat"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("flock(1), from util-linux");
        let whole = File::open(&path).unwrap();
        let mut refused = false;
        for _ in 0..500 {
            match exclusive(&whole) {
                Err(LockError::Held(_)) => {
                    refused = true;
                    break;
                }
                Ok(_) => {
                    rfs::flock(&whole, FlockOperation::Unlock).unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(LockError::Io(e)) => panic!("{e}"),
            }
        }
        assert!(refused, "the rank's shared lock kept nobody out");
        let rank = File::open(&path).unwrap();
        assert!(shared(&rank).unwrap(), "a second rank shares the lock");
        drop(child.stdin.take());
        child.wait().unwrap();
    }

    #[test]
    fn the_same_process_locking_twice_holds_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target");
        std::fs::write(&path, b"x").unwrap();
        let a = File::open(&path).unwrap();
        let b = File::open(&path).unwrap();
        assert!(exclusive(&a).unwrap());
        assert!(!exclusive(&b).unwrap());
    }

    #[test]
    fn a_link_or_a_pipe_at_a_lock_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"v").unwrap();
        let link = dir.path().join("l.lock");
        symlink(&victim, &link).unwrap();
        assert!(matches!(LockFile::acquire(&link), Err(LockError::Io(_))));
        let fifo = dir.path().join("f.lock");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap();
        assert!(matches!(LockFile::acquire(&fifo), Err(LockError::Io(_))));
        assert_eq!(std::fs::read(&victim).unwrap(), b"v");
    }
}
