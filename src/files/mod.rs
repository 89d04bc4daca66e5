//! The files storlab writes, safe in directories that others write in too (a shared `/tmp`, a
//! scratch directory), as coreutils' `install` and systemd's tmpfiles make theirs. Every file
//! storlab writes (results, time series, block samples, target manifests, reports, exports,
//! pages) is made here:
//!
//! - **Never through a name someone else could have prepared.** A file is created under a
//!   random temporary name in its directory with `O_CREAT | O_EXCL | O_NOFOLLOW` (an existing
//!   file, link or pipe at that name is never opened: another name is drawn), checked on the
//!   opened descriptor (`fstat`: a regular file, this user's, one link), written, synced when
//!   its data matters ([`Durability::Synced`]), then renamed over the final name: `rename`
//!   replaces a link at the final name, it never writes through it.
//! - **In the directory first opened.** The temporary file is created, renamed and removed
//!   through the descriptor of its directory (`openat`, `renameat`, `unlinkat`), so a
//!   directory swapped for a link meanwhile does not move the file elsewhere.
//! - **Streamed files** (the time series, the block sample) are renamed into place as soon as
//!   they are created ([`create_streamed`]); a later run of the same sequence reopens the file
//!   with `O_NOFOLLOW` and checks it is still the one this process created, by device and inode
//!   ([`reopen_created`]).
//! - [`lock`]: advisory locks that keep two runs off one target or results file.
//!
//! Both `engine` (manifests, targets' locks) and `results` (results files and what streams
//! beside them) use this module, so it sits below both, next to `units`.

pub(crate) mod dir;
pub(crate) mod lock;
pub(crate) mod resolve;

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Whether a file reaches the disk before it takes its final name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// The file, then its directory, are synced (`fsync`): results and manifests, which a
    /// crash must leave whole or not at all.
    Synced,
    /// Left to the kernel's write-back: reports, exports and pages that can be made again.
    Cached,
}

/// A file's identity: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The identity of the open `file` (`fstat`).
    pub(crate) fn of(file: &File) -> io::Result<FileId> {
        let metadata = file.metadata()?;
        Ok(FileId::from(&metadata))
    }
}

impl From<&std::fs::Metadata> for FileId {
    fn from(metadata: &std::fs::Metadata) -> FileId {
        FileId {
            dev: metadata.dev(),
            ino: metadata.ino(),
        }
    }
}

/// Attempts at a temporary name before giving up (each name is 64 random bits: only names
/// someone created on purpose are ever taken).
const NAME_ATTEMPTS: u32 = 32;
/// Bytes of the final name kept in the temporary one (names are at most 255 bytes).
const NAME_KEPT_BYTES: usize = 200;
/// Permissions of a new file before the umask, as `creat` gives them.
const NEW_FILE_MODE: u32 = 0o666;

/// The files this process created, by the path they were created at, for [`reopen_created`]:
/// the runs of a sequence are separate runs that share only the path of their time series.
static CREATED: Mutex<Vec<(PathBuf, FileId)>> = Mutex::new(Vec::new());

fn remember(path: &Path, id: FileId) {
    let mut created = CREATED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    created.retain(|(p, _)| p != path);
    created.push((path.to_path_buf(), id));
}

fn created_at(path: &Path) -> Option<FileId> {
    let created = CREATED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    created.iter().find(|(p, _)| p == path).map(|&(_, id)| id)
}

/// A file being created: open under a random temporary name beside `path`, given its final
/// name by [`NewFile::commit`]; removed if dropped before.
#[derive(Debug)]
pub(crate) struct NewFile {
    /// The directory, as opened (and checked, when storlab made it) before the file was
    /// created.
    dir: std::sync::Arc<dir::Dir>,
    /// The temporary name in `dir`.
    temporary: OsString,
    /// The final name in `dir`.
    name: OsString,
    /// The final path, as given.
    path: PathBuf,
    /// The open file.
    file: File,
    /// Whether it has its final name.
    named: bool,
}

impl NewFile {
    /// Creates a new, empty file to become `path`, under a random name in the same directory
    /// (which must exist).
    pub(crate) fn create(path: &Path) -> io::Result<NewFile> {
        Self::create_named(path, OFlags::WRONLY, NEW_FILE_MODE, temporary_name)
    }

    /// A new file to become `name` in the directory `dir` (at `path`), open for reading and
    /// writing, with permissions `mode` (before the umask).
    pub(crate) fn create_in(
        dir: std::sync::Arc<dir::Dir>,
        name: &OsStr,
        mode: u32,
    ) -> io::Result<NewFile> {
        let path = dir.path().join(name);
        Self::create_at(
            dir,
            name.to_owned(),
            path,
            OFlags::RDWR,
            mode,
            temporary_name,
        )
    }

    /// [`NewFile::create`] with `access` and permissions `mode`, the temporary name of each
    /// attempt from `draw` (the final name, the attempt).
    fn create_named(
        path: &Path,
        access: OFlags,
        mode: u32,
        draw: impl Fn(&OsStr, u32) -> OsString,
    ) -> io::Result<NewFile> {
        let (dir_path, name) = split(path)?;
        let dir = dir::open(dir_path)?;
        Self::create_at(dir, name, path.to_path_buf(), access, mode, draw)
    }

    /// [`NewFile::create_named`] in the open directory `dir`.
    fn create_at(
        dir: std::sync::Arc<dir::Dir>,
        name: OsString,
        path: PathBuf,
        access: OFlags,
        mode: u32,
        draw: impl Fn(&OsStr, u32) -> OsString,
    ) -> io::Result<NewFile> {
        replaceable(dir.file(), &name)?;
        let flags = access | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        for attempt in 0..NAME_ATTEMPTS {
            let temporary = draw(&name, attempt);
            let fd = match rfs::openat(
                dir.file(),
                temporary.as_os_str(),
                flags | OFlags::CLOEXEC,
                Mode::from_bits_truncate(mode),
            ) {
                Ok(fd) => fd,
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            };
            let new = NewFile {
                dir,
                temporary,
                name,
                path,
                file: File::from(fd),
                named: false,
            };
            // Dropped on failure: the temporary file is removed.
            new.check()?;
            return Ok(new);
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{NAME_ATTEMPTS} random temporary names beside it were all taken"),
        ))
    }

    /// Checks on the descriptor that the file is the one just created: a regular file, of
    /// this user, with one link.
    fn check(&self) -> io::Result<()> {
        let metadata = self.file.metadata()?;
        let ours = metadata.file_type().is_file()
            && metadata.uid() == rustix::process::geteuid().as_raw()
            && metadata.nlink() == 1;
        if ours {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "the temporary file {} is not the regular file this process created",
                self.dir_entry().display()
            )))
        }
    }

    /// The temporary file's path.
    fn dir_entry(&self) -> PathBuf {
        self.path.with_file_name(&self.temporary)
    }

    /// The open file, to write into.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// Gives the file its final name (replacing whatever is there, a link included, never
    /// writing through it), synced first with its directory after when `durability` says so;
    /// the file stays open for more writes.
    pub(crate) fn commit(mut self, durability: Durability) -> io::Result<File> {
        if durability == Durability::Synced {
            self.file.sync_all()?;
        }
        // Checked again just before: a device or pipe put there meanwhile is not replaced.
        replaceable(self.dir.file(), &self.name)?;
        rfs::renameat(
            self.dir.file(),
            self.temporary.as_os_str(),
            self.dir.file(),
            self.name.as_os_str(),
        )?;
        self.named = true;
        if durability == Durability::Synced {
            self.dir.file().sync_all()?;
        }
        remember(&self.path, FileId::of(&self.file)?);
        self.file.try_clone()
    }
}

impl NewFile {
    /// Gives the file its final name only if nothing is there yet (`RENAME_NOREPLACE`, or
    /// `link` then `unlink` of the temporary name where a filesystem lacks it): the file
    /// appears at its name whole, with whatever lock was taken on it already held. An
    /// existing file there is an [`io::ErrorKind::AlreadyExists`] error, and is left alone.
    pub(crate) fn publish(mut self) -> io::Result<File> {
        let (old, new) = (self.temporary.as_os_str(), self.name.as_os_str());
        let dir = self.dir.file();
        match rfs::renameat_with(dir, old, dir, new, rfs::RenameFlags::NOREPLACE) {
            Ok(()) => {}
            Err(Errno::INVAL | Errno::NOSYS) => {
                rfs::linkat(dir, old, dir, new, AtFlags::empty())?;
                let _ = rfs::unlinkat(dir, old, AtFlags::empty());
            }
            Err(e) => return Err(e.into()),
        }
        self.named = true;
        remember(&self.path, FileId::of(&self.file)?);
        self.file.try_clone()
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        if !self.named {
            let _ = rfs::unlinkat(
                self.dir.file(),
                self.temporary.as_os_str(),
                AtFlags::empty(),
            );
        }
    }
}

/// The directory and the name of the file `path` names.
fn split(path: &Path) -> io::Result<(&Path, OsString)> {
    let name = path
        .file_name()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "it does not name a file"))?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    Ok((dir, name.to_owned()))
}

/// Refuses to replace what is at `name` in `dir` unless it is a regular file (or a link,
/// which `rename` replaces without following): a device node, a pipe, a socket or a
/// directory at an output's name is an [`io::ErrorKind::InvalidInput`] error saying so.
fn replaceable(dir: &File, name: &OsStr) -> io::Result<()> {
    let stat = match rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => stat,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    match rfs::FileType::from_raw_mode(stat.st_mode) {
        rfs::FileType::RegularFile | rfs::FileType::Symlink => Ok(()),
        other => Err(not_an_output(other)),
    }
}

/// An output's path holds something storlab does not replace (see [`check_output`]).
#[derive(Debug)]
struct NotAnOutput(&'static str);

impl std::fmt::Display for NotAnOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "it is {}, and storlab writes an output only as a regular file (replacing one that is there) or to standard output (`-`); give the path of a file",
            self.0
        )
    }
}

impl std::error::Error for NotAnOutput {}

/// The error for an output whose path holds something that is not a regular file.
fn not_an_output(file_type: rfs::FileType) -> io::Error {
    let what = match file_type {
        rfs::FileType::CharacterDevice => "a character device",
        rfs::FileType::BlockDevice => "a block device",
        rfs::FileType::Fifo => "a named pipe (FIFO)",
        rfs::FileType::Socket => "a socket",
        rfs::FileType::Directory => "a directory",
        _ => "not a regular file",
    };
    io::Error::new(io::ErrorKind::InvalidInput, NotAnOutput(what))
}

/// Checks, before anything is written, that `path` can be an output: nothing is there, or a
/// regular file (or a link, replaced, never followed); a device, a pipe, a socket or a
/// directory is refused ([`crate::Usage`], exit 2), the message naming `what` ("the HTML
/// report").
pub(crate) fn check_output(what: &str, path: &Path) -> anyhow::Result<()> {
    let fail = |e: &io::Error| cannot_write(what, path, e);
    split(path).map_err(|e| fail(&e))?;
    match rfs::statat(rfs::CWD, path, AtFlags::SYMLINK_NOFOLLOW) {
        Err(Errno::NOENT | Errno::NOTDIR) => Ok(()),
        Err(e) => Err(fail(&e.into())),
        Ok(stat) => match rfs::FileType::from_raw_mode(stat.st_mode) {
            rfs::FileType::RegularFile | rfs::FileType::Symlink => Ok(()),
            other => Err(fail(&not_an_output(other))),
        },
    }
}

/// Opens `file` again with `flags` (and `O_CLOEXEC`) through `/proc/self/fd`: the same inode,
/// whatever is at its path now (a path is never looked up again). `file` may be an `O_PATH`
/// descriptor, whose type the caller checked (a pipe would wait for a writer).
pub(crate) fn reopen(file: &File, flags: OFlags) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    let proc = format!("/proc/self/fd/{}", file.as_raw_fd());
    let reopened = File::from(rfs::open(
        proc.as_str(),
        flags | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )?);
    if FileId::of(&reopened)? != FileId::of(file)? {
        return Err(io::Error::other(
            "reopening it through /proc/self/fd gave another file",
        ));
    }
    Ok(reopened)
}

/// `NAME.XXXXXXXXXXXXXXXX.tmp`: the final name (its first bytes when long) and 64 random bits.
fn temporary_name(name: &OsStr, attempt: u32) -> OsString {
    use std::hash::{BuildHasher, Hash, Hasher, RandomState};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState carries keys the standard library draws from the operating system.
    let mut hasher = RandomState::new().build_hasher();
    COUNTER.fetch_add(1, Ordering::Relaxed).hash(&mut hasher);
    std::process::id().hash(&mut hasher);
    attempt.hash(&mut hasher);
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.as_nanos())
        .hash(&mut hasher);
    let bytes = name.as_bytes();
    let mut out = bytes[..bytes.len().min(NAME_KEPT_BYTES)].to_vec();
    out.extend_from_slice(format!(".{:016x}.tmp", hasher.finish()).as_bytes());
    OsString::from_vec(out)
}

/// Writes `contents` to a new file that then replaces `path` (see the module's documentation).
pub(crate) fn write_atomic(path: &Path, contents: &[u8], durability: Durability) -> io::Result<()> {
    let new = NewFile::create(path)?;
    new.file().write_all(contents)?;
    new.commit(durability)?;
    Ok(())
}

/// Writes `contents` to `path` as [`write_atomic`] does, for a file that can be made again
/// (a report, a page, a converted job: [`Durability::Cached`]); an error names `what` and
/// the path: "cannot write the HTML report r.html: no space left on device".
pub(crate) fn write_output(what: &str, path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    write_atomic(path, contents, Durability::Cached).map_err(|e| cannot_write(what, path, &e))
}

/// Creates an empty file at `path` (replacing whatever is there) for writing as a run goes;
/// [`reopen_created`] opens it again.
pub(crate) fn create_streamed(path: &Path) -> io::Result<File> {
    NewFile::create(path)?.commit(Durability::Cached)
}

/// How [`reopen_created`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reopen {
    /// To add to its end (`O_APPEND`).
    Append,
    /// To read and write it in place.
    InPlace,
}

/// Opens again the file this process created at `path` ([`NewFile::commit`],
/// [`create_streamed`]): never through a link (`O_NOFOLLOW`), never waiting on a pipe
/// (`O_NONBLOCK`, cleared once checked), and refused unless it is still the very file this
/// process created there (device and inode).
pub(crate) fn reopen_created(path: &Path, how: Reopen) -> io::Result<File> {
    let Some(expected) = created_at(path) else {
        return Err(io::Error::other(
            "this process did not create it, so it is not reopened",
        ));
    };
    let (access, keep) = match how {
        Reopen::Append => (OFlags::WRONLY | OFlags::APPEND, OFlags::APPEND),
        Reopen::InPlace => (OFlags::RDWR, OFlags::empty()),
    };
    let flags = access | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = File::from(rfs::open(path, flags, Mode::empty())?);
    if FileId::of(&file)? != expected {
        return Err(io::Error::other(
            "it was replaced since this process created it (by another process?)",
        ));
    }
    rfs::fcntl_setfl(&file, keep)?;
    Ok(file)
}

/// What kind of file `file_type` is, as a message says it: "a named pipe (FIFO)".
pub(crate) fn kind_text(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        "a named pipe (FIFO)"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else {
        "a regular file"
    }
}

/// Opens the target `path` (a regular file or a block device; a link to one is followed)
/// with `flags` added to `O_CLOEXEC`, without ever blocking in `open`: its type is checked
/// first on an `O_PATH` descriptor (which opens nothing: no pipe waits for a writer, no
/// device runs its open), then the file is opened with `O_NONBLOCK`, checked to be that same
/// file (device and inode), and `O_NONBLOCK` is cleared. Anything else (a pipe, a socket, a
/// character device, a directory) is an [`io::ErrorKind::InvalidInput`] error naming what it
/// is.
pub(crate) fn open_target(path: &Path, flags: OFlags) -> io::Result<File> {
    let probe = File::from(rfs::open(
        path,
        OFlags::PATH | OFlags::CLOEXEC,
        Mode::empty(),
    )?);
    let metadata = probe.metadata()?;
    check_target_type(&metadata)?;
    let file = File::from(rfs::open(
        path,
        flags | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?);
    let opened = file.metadata()?;
    if FileId::from(&opened) != FileId::from(&metadata) {
        return Err(io::Error::other(
            "it was replaced by another file while it was being opened",
        ));
    }
    let status = rfs::fcntl_getfl(&file)? - OFlags::NONBLOCK;
    rfs::fcntl_setfl(&file, status)?;
    Ok(file)
}

/// Refuses what is neither a regular file nor a block device.
fn check_target_type(metadata: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let file_type = metadata.file_type();
    if file_type.is_file() || file_type.is_block_device() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "it is {}, not a regular file or a block device",
            kind_text(file_type)
        ),
    ))
}

/// What an error while writing `path` says: "cannot write the results file r.json: no space
/// left on device" (`what` is "the results file"), the operating system's words without
/// `(os error N)`.
pub(crate) fn cannot_write(what: &str, path: &Path, error: &io::Error) -> anyhow::Error {
    let text = format!(
        "cannot write {what} {}: {}",
        path.display(),
        error_text(error)
    );
    // An output that cannot be one is the user's to change: refused (exit 2).
    if error.get_ref().is_some_and(|e| e.is::<NotAnOutput>()) {
        return crate::Usage(text).into();
    }
    anyhow::anyhow!(text)
}

/// An I/O error as the end of a sentence: the operating system's words in lower case
/// ("no space left on device"), other messages as they are.
pub(crate) fn error_text(error: &io::Error) -> String {
    let text = crate::units::os_error_text(error);
    if error.raw_os_error().is_none() {
        return text;
    }
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_is_written_under_a_random_name_then_renamed_into_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let new = NewFile::create(&path).unwrap();
        let temporary = new.dir_entry();
        let name = temporary
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with("r.json.") && name.ends_with(".tmp") && name.len() == 27,
            "{name}"
        );
        new.file().write_all(b"results").unwrap();
        assert!(!path.exists(), "the final name appears only at the commit");
        let fd_flags = rustix::io::fcntl_getfd(new.file()).unwrap();
        assert!(fd_flags.contains(rustix::io::FdFlags::CLOEXEC));
        new.commit(Durability::Synced).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"results");
        assert_eq!(names(dir.path()), ["r.json"]);
        // Two temporary names differ.
        let a = NewFile::create(&path).unwrap();
        let b = NewFile::create(&path).unwrap();
        assert_ne!(a.dir_entry(), b.dir_entry());
        drop((a, b));
        assert_eq!(names(dir.path()), ["r.json"], "dropped files are removed");
    }

    #[test]
    fn a_link_at_the_final_name_is_replaced_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("passwd");
        std::fs::write(&victim, b"root:x:0:0\n").unwrap();
        let path = dir.path().join("r.json");
        symlink(&victim, &path).unwrap();
        write_atomic(&path, b"{}", Durability::Cached).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"root:x:0:0\n");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        // A hard link too: the other name keeps the old contents.
        let other = dir.path().join("other");
        std::fs::hard_link(&path, &other).unwrap();
        write_atomic(&path, b"new", Durability::Cached).unwrap();
        assert_eq!(std::fs::read(&other).unwrap(), b"{}");
    }

    #[test]
    fn a_planted_temporary_name_is_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("passwd");
        std::fs::write(&victim, b"root:x:0:0\n").unwrap();
        let path = dir.path().join("r.json");
        // The names drawn are known here and planted: a link to the victim, a named pipe (an
        // open would wait for a writer), a file of someone else's.
        symlink(&victim, dir.path().join("r.json.tmp")).unwrap();
        let fifo = dir.path().join("r.json.1.tmp");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap();
        std::fs::write(dir.path().join("r.json.2.tmp"), b"someone's").unwrap();
        let draw = |_: &OsStr, attempt: u32| match attempt {
            0 => OsString::from("r.json.tmp"),
            n => OsString::from(format!("r.json.{n}.tmp")),
        };
        let new = NewFile::create_named(&path, OFlags::WRONLY, NEW_FILE_MODE, draw).unwrap();
        assert_eq!(new.dir_entry(), dir.path().join("r.json.3.tmp"));
        new.file().write_all(b"{}").unwrap();
        new.commit(Durability::Synced).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"root:x:0:0\n");
        assert!(
            std::fs::symlink_metadata(dir.path().join("r.json.tmp"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read(dir.path().join("r.json.2.tmp")).unwrap(),
            b"someone's"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        // When every name drawn is taken, the creation fails; nothing is written.
        let taken = |_: &OsStr, _: u32| OsString::from("r.json.tmp");
        let error = NewFile::create_named(&path, OFlags::WRONLY, NEW_FILE_MODE, taken).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&victim).unwrap(), b"root:x:0:0\n");
    }

    #[test]
    fn a_file_lands_in_the_directory_first_opened() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("first");
        std::fs::create_dir(&first).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let new = NewFile::create(&first.join("r.json")).unwrap();
        // The directory is swapped for a link to another one before the rename.
        std::fs::rename(&first, dir.path().join("moved")).unwrap();
        symlink(&elsewhere, &first).unwrap();
        new.commit(Durability::Cached).unwrap();
        assert!(dir.path().join("moved/r.json").exists());
        assert!(names(&elsewhere).is_empty());
    }

    #[test]
    fn new_files_follow_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write_atomic(&path, b"x", Durability::Cached).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        let umask = rustix::process::umask(Mode::empty());
        rustix::process::umask(umask);
        assert_eq!(mode, NEW_FILE_MODE & !umask.bits());
    }

    #[test]
    fn a_streamed_file_is_reopened_only_while_it_is_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.ndjson");
        let mut first = create_streamed(&path).unwrap();
        first.write_all(b"1\n").unwrap();
        let mut again = reopen_created(&path, Reopen::Append).unwrap();
        again.write_all(b"2\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"1\n2\n");
        let flags = rfs::fcntl_getfl(&again).unwrap();
        assert!(flags.contains(OFlags::APPEND) && !flags.contains(OFlags::NONBLOCK));

        // Replaced by a link to another file, or by another file: refused.
        let victim = dir.path().join("passwd");
        std::fs::write(&victim, b"root:x:0:0\n").unwrap();
        std::fs::remove_file(&path).unwrap();
        symlink(&victim, &path).unwrap();
        assert!(reopen_created(&path, Reopen::Append).is_err());
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, b"someone's").unwrap();
        let error = reopen_created(&path, Reopen::InPlace).unwrap_err();
        assert!(error.to_string().contains("replaced"), "{error}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"root:x:0:0\n");
        // A file this process never created.
        let error = reopen_created(&dir.path().join("x"), Reopen::Append).unwrap_err();
        assert!(error.to_string().contains("did not create"), "{error}");
    }

    #[test]
    fn a_device_a_pipe_or_a_socket_at_an_output_is_refused_and_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.json");
        rfs::mknodat(
            rfs::CWD,
            &fifo,
            rfs::FileType::Fifo,
            Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap();
        let socket = dir.path().join("socket.json");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let sub = dir.path().join("sub.json");
        std::fs::create_dir(&sub).unwrap();
        let mut special = vec![
            (fifo, "a named pipe (FIFO)"),
            (socket, "a socket"),
            (sub, "a directory"),
        ];
        if rustix::process::geteuid().is_root() {
            // A node of the null device (1, 3), made here: /dev/null itself is never risked.
            let null = dir.path().join("null");
            rfs::mknodat(
                rfs::CWD,
                &null,
                rfs::FileType::CharacterDevice,
                Mode::from_bits_truncate(0o666),
                rfs::makedev(1, 3),
            )
            .unwrap();
            special.push((null, "a character device"));
        }
        for (path, what) in special {
            let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
            let error = check_output("the report", &path).unwrap_err();
            assert!(error.downcast_ref::<crate::Usage>().is_some(), "{error}");
            assert!(error.to_string().contains(what), "{error}");
            let error = write_output("the report", &path, b"x").unwrap_err();
            assert!(error.downcast_ref::<crate::Usage>().is_some(), "{error}");
            assert!(
                error.to_string().contains(&format!("it is {what}")),
                "{error}"
            );
            assert_eq!(std::fs::symlink_metadata(&path).unwrap().file_type(), kind);
        }
        // A regular file and a link are replaced; nothing is left behind.
        check_output("the report", &dir.path().join("new.html")).unwrap();
        assert!(
            names(dir.path()).iter().all(|n| !n.ends_with(".tmp")),
            "{:?}",
            names(dir.path())
        );
    }

    #[test]
    fn a_missing_directory_or_name_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = NewFile::create(&dir.path().join("no/r.json")).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        let error = NewFile::create(Path::new("/")).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        // A long name keeps a temporary name within the limit.
        let long = dir.path().join("x".repeat(255));
        write_atomic(&long, b"x", Durability::Cached).unwrap();
        assert!(long.exists());
    }
    #[test]
    fn a_pipe_or_a_socket_is_refused_as_a_target_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rfs::mknodat(
            rfs::CWD,
            &fifo,
            rfs::FileType::Fifo,
            Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap();
        // No writer ever comes: a blocking open would wait here forever.
        for flags in [OFlags::RDONLY, OFlags::RDWR, OFlags::WRONLY] {
            let error = open_target(&fifo, flags).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
            assert!(error.to_string().contains("named pipe (FIFO)"), "{error}");
        }
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let error = open_target(&socket, OFlags::RDONLY).unwrap_err();
        assert!(error.to_string().contains("a socket"), "{error}");
        let error = open_target(Path::new("/dev/null"), OFlags::RDONLY).unwrap_err();
        assert!(error.to_string().contains("character device"), "{error}");
        assert!(open_target(dir.path(), OFlags::RDONLY).is_err());
        // A regular file (through a link) opens, O_NONBLOCK cleared.
        let file = dir.path().join("data");
        std::fs::write(&file, b"x").unwrap();
        let link = dir.path().join("link");
        symlink(&file, &link).unwrap();
        let opened = open_target(&link, OFlags::RDWR).unwrap();
        assert!(
            !rfs::fcntl_getfl(&opened)
                .unwrap()
                .contains(OFlags::NONBLOCK)
        );
    }
    #[test]
    fn a_published_file_never_replaces_one_already_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.dat");
        let in_dir = || dir::open(dir.path()).unwrap();
        let new = NewFile::create_in(in_dir(), OsStr::new("t.dat"), NEW_FILE_MODE).unwrap();
        new.file().write_all(b"ours").unwrap();
        let file = new.publish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"ours");
        assert_eq!(
            FileId::of(&file).unwrap(),
            FileId::from(&std::fs::metadata(&path).unwrap())
        );
        // Someone else's file (or a link) at the name: refused, left as it is.
        let victim = dir.path().join("passwd");
        std::fs::write(&victim, b"root:x:0:0\n").unwrap();
        std::fs::remove_file(&path).unwrap();
        symlink(&victim, &path).unwrap();
        let error = NewFile::create_in(in_dir(), OsStr::new("t.dat"), NEW_FILE_MODE)
            .unwrap()
            .publish()
            .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert!(std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(std::fs::read(&victim).unwrap(), b"root:x:0:0\n");
        assert_eq!(names(dir.path()), ["passwd", "t.dat"]);
    }
}
