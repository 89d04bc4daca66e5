//! Input files, bounded: every file storlab reads that someone else may have written (job
//! files, fio job files with their includes, results files, time series, block traces, block
//! samples, user profiles) is opened the one way here and read within a cap on its size.
//!
//! - Opened without blocking and without side effects: an `O_PATH` open (which opens no
//!   device and waits for no writer), `fstat` on that descriptor, and only a regular file is
//!   read: a FIFO, a device, a socket or a directory is refused before anything could block.
//!   The file is then reopened for reading through the descriptor (`/proc/self/fd/N`: the
//!   same inode, nothing swapped in between); without `/proc`, by its path, the descriptor's
//!   type and inode checked again.
//! - Read within a cap: a file larger than its kind's cap ([`Kind::cap`]) is refused with its
//!   size and the cap before a byte is read, and a file that grows past the cap while being
//!   read stops there with the same error. Memory then never depends on what a file claims,
//!   only on its bytes, which are bounded.

use crate::units::format_size;
use rustix::fs::{FileType, Mode, OFlags};
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// What an input file is: its name in messages and its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A storlab job file (TOML).
    JobFile,
    /// A fio job file, its includes counted together.
    FioFile,
    /// A user profile of simulated users (TOML).
    Profile,
    /// A results file (JSON).
    Results,
    /// An NDJSON time series.
    TimeSeries,
    /// A block trace (MSR CSV, blkparse text).
    Trace,
    /// A block-sample file (`RUN.blocks`).
    BlockSample,
    /// A file whose bytes another tool writes (DiskSpd's `-Z<size>,<file>`), of which storlab
    /// reads a sample ([`read_prefix`]).
    WriteData,
}

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

impl Kind {
    /// The largest file of this kind storlab reads, bytes. Each is far above what storlab
    /// writes or a person writes (a results file of a 1,000-step sequence with its time series
    /// inline is tens of MiB; a day of 1 s intervals is about 200 MiB of time series) and
    /// below what would exhaust a machine's memory.
    pub(crate) fn cap(self) -> u64 {
        match self {
            Kind::JobFile | Kind::FioFile | Kind::Profile => 16 * MIB,
            Kind::Results => GIB,
            Kind::TimeSeries => 4 * GIB,
            Kind::Trace | Kind::BlockSample | Kind::WriteData => 16 * GIB,
        }
    }

    /// Its name in messages.
    pub(crate) fn what(self) -> &'static str {
        match self {
            Kind::JobFile => "job file",
            Kind::FioFile => "fio job file",
            Kind::Profile => "user profile",
            Kind::Results => "results file",
            Kind::TimeSeries => "time series",
            Kind::Trace => "trace",
            Kind::BlockSample => "block-sample file",
            Kind::WriteData => "write-data file",
        }
    }
}

/// An input file refused or unreadable: which, and why (a usage error: exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {} {name} {why}", kind.what())]
pub(crate) struct Refused {
    /// What the file is.
    pub(crate) kind: Kind,
    /// Its path, as given.
    pub(crate) name: String,
    /// What is wrong, after its name: `is a FIFO (named pipe); ...`, `cannot be read: ...`.
    pub(crate) why: String,
    /// There is no file at that path.
    pub(crate) missing: bool,
}

impl Refused {
    /// The message without the file's name, for errors that give it apart (`job.toml: the job
    /// file is ...`).
    pub(crate) fn unnamed(&self) -> String {
        format!("the {} {}", self.kind.what(), self.why)
    }
}

/// An input file opened for reading: a regular file of at most `cap` bytes (reading past
/// them is an error).
#[derive(Debug)]
pub(crate) struct Input {
    file: std::io::Take<std::fs::File>,
    /// Its size when it was opened, bytes.
    size: u64,
    cap: u64,
    kind: Kind,
    name: String,
}

impl Input {
    /// Reads the whole file.
    pub(crate) fn read_all(mut self) -> Result<Vec<u8>, Refused> {
        let mut bytes = Vec::with_capacity(self.size.min(self.cap) as usize);
        self.read_to_end(&mut bytes).map_err(|e| self.refused(&e))?;
        Ok(bytes)
    }

    /// The error of reading it.
    pub(crate) fn refused(&self, e: &std::io::Error) -> Refused {
        Refused {
            kind: self.kind,
            name: self.name.clone(),
            why: why_unreadable(e),
            missing: false,
        }
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        if n == 0 && self.file.limit() == 0 {
            // The cap is reached: the file ends here, or it grew past it while being read.
            let mut one = [0u8; 1];
            if self.file.get_mut().read(&mut one)? > 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::FileTooLarge,
                    too_large(self.kind, self.cap, None),
                ));
            }
        }
        Ok(n)
    }
}

/// Why a file cannot be read, after its name, without Rust's `(os error N)`.
fn why_unreadable(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::FileTooLarge => e.to_string(),
        _ => format!("cannot be read: {}", crate::units::os_error_text(e)),
    }
}

/// Why a file of `kind` is refused for its size (`None`: it grew past `cap` while read).
fn too_large(kind: Kind, cap: u64, size: Option<u64>) -> String {
    let is = match size {
        Some(size) => format!("is {} ({size} bytes)", format_size(size)),
        None => format!("grew past {} while being read", format_size(cap)),
    };
    let kinds = match kind {
        Kind::TimeSeries => "time series".into(),
        k => format!("{}s", k.what()),
    };
    if cap < kind.cap() {
        // What is left of a cap shared by several files (a fio job file and its includes).
        return format!(
            "{is}, more than the {} left of the {} that a {} and the files it includes may hold together",
            format_size(cap),
            format_size(kind.cap()),
            kind.what(),
        );
    }
    format!(
        "{is}; storlab reads {kinds} of at most {} ({cap} bytes)",
        format_size(cap),
    )
}

/// Opens the input file at `path` of `kind` for reading, within its kind's cap.
pub(crate) fn open(path: &Path, kind: Kind) -> Result<Input, Refused> {
    open_within(path, kind, kind.cap())
}

/// Opens the input file at `path` of `kind` for reading, within `cap` bytes (what is left of
/// a cap shared by several files, such as a fio file's includes).
pub(crate) fn open_within(path: &Path, kind: Kind, cap: u64) -> Result<Input, Refused> {
    let name = path.display().to_string();
    let refused = |why: String| Refused {
        kind,
        name: name.clone(),
        why,
        missing: false,
    };
    let fail = |e: rustix::io::Errno| Refused {
        missing: e == rustix::io::Errno::NOENT,
        ..refused(why_unreadable(&std::io::Error::from_raw_os_error(
            e.raw_os_error(),
        )))
    };
    // O_PATH: no device is opened, no FIFO waited on; only the inode is looked up.
    let at = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).map_err(fail)?;
    let stat = rustix::fs::fstat(&at).map_err(fail)?;
    regular(FileType::from_raw_mode(stat.st_mode), kind).map_err(refused)?;
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > cap {
        return Err(refused(too_large(kind, cap, Some(size))));
    }
    let Some(file) = reopen(&at, path, (stat.st_dev, stat.st_ino)).map_err(fail)? else {
        return Err(refused(
            "was replaced while it was being opened; try again".into(),
        ));
    };
    Ok(Input {
        file: std::fs::File::from(file).take(cap),
        size,
        cap,
        kind,
        name,
    })
}

/// The `O_PATH` descriptor `at` (of `path`, device and inode `id`) opened for reading: through
/// `/proc/self/fd`, the same inode; without `/proc`, `path` again without blocking, and `None`
/// when that is no longer the same regular file.
fn reopen(at: &OwnedFd, path: &Path, id: (u64, u64)) -> rustix::io::Result<Option<OwnedFd>> {
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY;
    let proc = format!("/proc/self/fd/{}", at.as_raw_fd());
    match rustix::fs::open(proc.as_str(), flags, Mode::empty()) {
        Ok(fd) => return Ok(Some(fd)),
        Err(rustix::io::Errno::NOENT) => {}
        Err(e) => return Err(e),
    }
    let fd = rustix::fs::open(path, flags | OFlags::NONBLOCK, Mode::empty())?;
    let stat = rustix::fs::fstat(&fd)?;
    let same = FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile
        && (stat.st_dev, stat.st_ino) == id;
    Ok(same.then_some(fd))
}

/// Refuses anything but a regular file, saying what it is.
fn regular(t: FileType, kind: Kind) -> Result<(), String> {
    let is = match t {
        FileType::RegularFile => return Ok(()),
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Socket => "a socket",
        _ => "not a regular file",
    };
    Err(format!(
        "is {is}; storlab reads a {} only from a regular file (a pipe or a device could block or never end): save it to a file first",
        kind.what()
    ))
}

/// The first `n` bytes of the regular file at `path` (all of it when it is shorter), whatever
/// its size: a sample of it.
pub(crate) fn read_prefix(path: &Path, kind: Kind, n: u64) -> Result<Vec<u8>, Refused> {
    let mut input = open_within(path, kind, u64::MAX)?;
    let mut bytes = Vec::with_capacity(input.size.min(n) as usize);
    let read = (&mut input.file).take(n).read_to_end(&mut bytes);
    read.map_err(|e| input.refused(&e))?;
    Ok(bytes)
}

/// Reads the whole input file at `path` of `kind`, within its cap.
pub(crate) fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, Refused> {
    open(path, kind)?.read_all()
}

/// Reads the whole input file at `path` of `kind` as UTF-8 text, within its cap.
pub(crate) fn read_text(path: &Path, kind: Kind) -> Result<String, Refused> {
    String::from_utf8(read(path, kind)?).map_err(|e| Refused {
        kind,
        name: path.display().to_string(),
        why: format!(
            "is not UTF-8 text (byte {} is not)",
            e.utf8_error().valid_up_to()
        ),
        missing: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_whole_and_its_size_known() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.toml");
        std::fs::write(&path, "duration = \"1s\"\n").unwrap();
        assert_eq!(open(&path, Kind::JobFile).unwrap().size, 16);
        assert_eq!(
            read_text(&path, Kind::JobFile).unwrap(),
            "duration = \"1s\"\n"
        );
    }

    #[test]
    fn a_file_over_its_cap_is_refused_with_its_size_and_the_cap_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.fio");
        // Sparse: 17 MiB that are never read.
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(17 * MIB).unwrap();
        let e = read(&path, Kind::FioFile).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "the fio job file {} is 17 MiB (17825792 bytes); storlab reads fio job files of at most 16 MiB (16777216 bytes)",
                path.display()
            )
        );
        // Within a smaller cap shared with other files.
        std::fs::write(&path, "0123456789").unwrap();
        let e = open_within(&path, Kind::FioFile, 4)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("is 10 B (10 bytes), more than the 4 B left of the 16 MiB that a fio job file and the files it includes may hold together"),
            "{e}"
        );
    }

    #[test]
    fn a_file_that_grows_past_its_cap_while_read_stops_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.ndjson");
        std::fs::write(&path, "0123").unwrap();
        let mut input = open_within(&path, Kind::TimeSeries, 6).unwrap();
        // It grows after it was opened and its size checked.
        std::fs::write(&path, "0123456789").unwrap();
        let mut bytes = Vec::new();
        let e = input.read_to_end(&mut bytes).unwrap_err().to_string();
        assert!(e.contains("grew past 6 B while being read"), "{e}");
        assert_eq!(bytes, b"012345");
    }

    #[test]
    fn fifos_directories_and_devices_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_raw_mode(0o600)).unwrap();
        // No writer: an ordinary open would wait forever.
        let e = read(&fifo, Kind::Results).unwrap_err().to_string();
        assert!(e.contains("is a FIFO (named pipe)"), "{e}");
        let e = read(dir.path(), Kind::Trace).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = read(Path::new("/dev/zero"), Kind::FioFile)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("the fio job file /dev/zero is a character device"),
            "{e}"
        );
        let e = read(&dir.path().join("missing"), Kind::JobFile).unwrap_err();
        assert_eq!(
            e.unnamed(),
            "the job file cannot be read: No such file or directory"
        );
        let e = e.to_string();
        assert!(!e.contains("os error"), "{e}");
    }
}
