//! `FaultFs`: a small in-memory FUSE filesystem (pure Rust, `fuser`, mounted directly through
//! /dev/fuse) that makes real I/O fail on demand, so the tests see the errors a real system
//! call returns (EIO, ENOSPC, short reads, lost or misplaced writes) and not mocked ones.
//!
//! One flat directory of regular files, kept in memory. Every file is opened with
//! `FOPEN_DIRECT_IO`, so each read and write of an application reaches the filesystem (the page
//! cache hides nothing) and a fault shows in the system call that caused it. Faults apply to
//! *data files* only: files whose name contains no `.json` (storlab keeps a `FILE.storlab.json`
//! manifest beside each target, written through `FILE.storlab.json.tmp`; those are left alone).
//!
//! ```ignore
//! let fs = FaultFs::mount()?;                      // Err(reason) where FUSE is unavailable
//! std::fs::write(fs.dir().join("t.dat"), [0u8; 8192])?;
//! fs.set(|f| f.fail_reads = vec![(4096..8192, libc::EIO)]);
//! ```

use crate::harness::scratch;
use fuser::{Config, FileAttr, FileType, INodeNo, MountOption, ReplyData, Request};
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

mod filesystem;

use filesystem::FaultFsImpl;

/// Faults to inject; all off by default. Ranges are byte offsets in a data file; an I/O is hit
/// when its byte range overlaps one. Checked in this order: `fail_after`, the `fail_*` ranges,
/// then the ones that alter what is read or stored. Add a single range with `push`
/// (`f.short_reads.push(a..b)`): clippy rejects `vec![a..b]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Faults {
    /// A read overlapping the range fails with the errno (e.g. `libc::EIO`).
    pub fail_reads: Vec<(Range<u64>, i32)>,
    /// A write overlapping the range fails with the errno.
    pub fail_writes: Vec<(Range<u64>, i32)>,
    /// `(n, errno)`: the next `n` data I/Os (reads and writes) are served, every later one
    /// fails with the errno (e.g. `libc::ENOSPC`). Counts down as I/Os arrive.
    pub fail_after: Option<(u64, i32)>,
    /// A read overlapping the range returns only the first half of the bytes asked.
    pub short_reads: Vec<Range<u64>>,
    /// A write overlapping the range is acknowledged in full but nothing is stored (lost write).
    pub drop_writes: Vec<Range<u64>>,
    /// `(range, delta)`: a write overlapping the range is acknowledged but stored at
    /// `offset + delta` (misdirected write).
    pub misdirect_writes: Vec<(Range<u64>, i64)>,
    /// A write overlapping the range is acknowledged but only its first half, rounded down to
    /// 512 bytes, is stored (torn write).
    pub tear_writes: Vec<Range<u64>>,
    /// A read overlapping the range is held: not answered until [`FaultFs::release`] (a slow
    /// I/O whose end the test decides). [`FaultFs::held`] tells when one has arrived.
    pub hold_reads: Vec<Range<u64>>,
}

fn overlaps(range: &Range<u64>, offset: u64, len: u64) -> bool {
    offset < range.end && range.start < offset.saturating_add(len.max(1))
}

/// Attributes and data of one inode.
struct Node {
    /// Current name (the directory is flat).
    name: OsString,
    kind: FileType,
    perm: u16,
    uid: u32,
    gid: u32,
    data: Vec<u8>,
    atime: SystemTime,
    mtime: SystemTime,
    ctime: SystemTime,
    /// Names pointing at it (0 once unlinked).
    nlink: u32,
    /// Open handles; an unlinked node is dropped when the last one is released.
    open: u32,
}

impl Node {
    fn is_data(&self) -> bool {
        self.kind == FileType::RegularFile && !self.name.to_string_lossy().contains(".json")
    }
}

/// Everything the filesystem holds, shared with the [`FaultFs`] handle.
struct State {
    faults: Faults,
    nodes: HashMap<u64, Node>,
    /// Names in the root directory.
    names: BTreeMap<OsString, u64>,
    next_ino: u64,
    reads: u64,
    writes: u64,
    /// Held reads ([`Faults::hold_reads`]): each reply with the data it will carry.
    held: Vec<(ReplyData, Vec<u8>)>,
}

/// Total size reported by statfs: 1 GiB.
const CAPACITY_BYTES: u64 = 1 << 30;
/// Block size reported by stat and statfs.
const BLOCK: u32 = 4096;
/// No attribute caching: the kernel asks again every time, so sizes are never stale.
const TTL: Duration = Duration::ZERO;

impl State {
    fn new() -> State {
        let now = SystemTime::now();
        let mut nodes = HashMap::new();
        nodes.insert(
            INodeNo::ROOT.0,
            Node {
                name: OsString::from("/"),
                kind: FileType::Directory,
                perm: 0o755,
                uid: rustix::process::geteuid().as_raw(),
                gid: rustix::process::getegid().as_raw(),
                data: Vec::new(),
                atime: now,
                mtime: now,
                ctime: now,
                nlink: 2,
                open: 0,
            },
        );
        State {
            faults: Faults::default(),
            nodes,
            names: BTreeMap::new(),
            next_ino: INodeNo::ROOT.0 + 1,
            reads: 0,
            writes: 0,
            held: Vec::new(),
        }
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let node = self.nodes.get(&ino)?;
        let size = node.data.len() as u64;
        Some(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: node.atime,
            mtime: node.mtime,
            ctime: node.ctime,
            crtime: node.ctime,
            kind: node.kind,
            perm: node.perm,
            nlink: node.nlink,
            uid: node.uid,
            gid: node.gid,
            rdev: 0,
            blksize: BLOCK,
            flags: 0,
        })
    }

    /// The inode of `name` in the root directory.
    fn child(&self, parent: INodeNo, name: &OsStr) -> Option<u64> {
        (parent == INodeNo::ROOT)
            .then(|| self.names.get(name).copied())
            .flatten()
    }

    fn new_file(&mut self, req: &Request, name: &OsStr, mode: u32, umask: u32) -> u64 {
        let ino = self.next_ino;
        self.next_ino += 1;
        let now = SystemTime::now();
        self.nodes.insert(
            ino,
            Node {
                name: name.to_owned(),
                kind: FileType::RegularFile,
                perm: (mode & !umask & 0o7777) as u16,
                uid: req.uid(),
                gid: req.gid(),
                data: Vec::new(),
                atime: now,
                mtime: now,
                ctime: now,
                nlink: 1,
                open: 0,
            },
        );
        self.names.insert(name.to_owned(), ino);
        ino
    }

    /// Drops the name `name`; the node goes when no handle holds it.
    fn remove_name(&mut self, name: &OsStr) {
        if let Some(ino) = self.names.remove(name) {
            if let Some(node) = self.nodes.get_mut(&ino) {
                node.nlink = node.nlink.saturating_sub(1);
                if node.nlink == 0 && node.open == 0 {
                    self.nodes.remove(&ino);
                }
            }
        }
    }

    /// Counts a data I/O and applies `fail_after`: the errno when this I/O must fail.
    fn count_and_fail_after(&mut self, write: bool) -> Option<i32> {
        if write {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        match &mut self.faults.fail_after {
            Some((0, errno)) => Some(*errno),
            Some((n, _)) => {
                *n -= 1;
                None
            }
            None => None,
        }
    }

    fn used_bytes(&self) -> u64 {
        self.nodes.values().map(|n| n.data.len() as u64).sum()
    }
}

/// A mounted [`Faults`]-injecting filesystem; unmounted when dropped (lazily when something
/// still holds it), also when the test panics.
pub(crate) struct FaultFs {
    state: Arc<Mutex<State>>,
    session: Option<fuser::BackgroundSession>,
    // Dropped after the unmount in `drop`.
    dir: tempfile::TempDir,
}

impl FaultFs {
    /// Mounts an empty filesystem on a fresh scratch directory; `Err(reason)` when this machine
    /// cannot (no /dev/fuse, not allowed to mount).
    pub(crate) fn mount() -> Result<FaultFs, String> {
        if let Err(e) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/fuse")
        {
            return Err(format!("cannot open /dev/fuse: {e}"));
        }
        let dir = scratch();
        let state = Arc::new(Mutex::new(State::new()));
        let mut config = Config::default();
        config.mount_options = vec![
            MountOption::FSName("storlab-faultfs".into()),
            MountOption::Subtype("faultfs".into()),
            MountOption::NoAtime,
        ];
        let fs = FaultFsImpl {
            state: Arc::clone(&state),
        };
        let session = fuser::spawn_mount(fs, dir.path(), &config).map_err(|e| {
            format!(
                "cannot mount a FUSE filesystem on {}: {e}",
                dir.path().display()
            )
        })?;
        Ok(FaultFs {
            state,
            session: Some(session),
            dir,
        })
    }

    /// The mountpoint.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the faults; takes effect with the next request.
    pub(crate) fn set(&self, f: impl FnOnce(&mut Faults)) {
        f(&mut self.lock().faults);
    }

    /// `(reads, writes)` requests received on data files so far, failed ones included.
    pub(crate) fn counts(&self) -> (u64, u64) {
        let state = self.lock();
        (state.reads, state.writes)
    }

    /// Reads held now ([`Faults::hold_reads`]): arrived and not answered.
    pub(crate) fn held(&self) -> usize {
        self.lock().held.len()
    }

    /// Stops holding reads and answers every held one (with the data the file held when it
    /// arrived); returns how many. When it returns, every answer has been handed to the kernel.
    pub(crate) fn release(&self) -> usize {
        let held = {
            let mut state = self.lock();
            state.faults.hold_reads.clear();
            std::mem::take(&mut state.held)
        };
        let n = held.len();
        for (reply, data) in held {
            reply.data(&data);
        }
        n
    }

    /// Flips (XOR 0xff) `len` stored bytes of the file `name` from `offset`, behind the back
    /// of any reader: silent corruption. Panics when the file or the range does not exist.
    pub(crate) fn corrupt(&self, name: &str, offset: u64, len: usize) {
        let mut state = self.lock();
        let ino = *state
            .names
            .get(OsStr::new(name))
            .unwrap_or_else(|| panic!("faultfs has no file {name:?}"));
        let data = &mut state.nodes.get_mut(&ino).expect("node exists").data;
        let start = offset as usize;
        assert!(
            start + len <= data.len(),
            "cannot corrupt {name:?} at {offset}+{len}: the file has {} bytes",
            data.len()
        );
        for byte in &mut data[start..start + len] {
            *byte ^= 0xff;
        }
    }
}

/// Whether `dir` is the root of a mount (its device differs from its parent's).
fn is_mountpoint(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(dir), dir.parent().map(std::fs::metadata)) {
        (Ok(d), Some(Ok(p))) => d.dev() != p.dev(),
        _ => false,
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        let Some(session) = self.session.take() else {
            return;
        };
        // A clean unmount ends the session thread (its /dev/fuse reads fail with ENODEV).
        let clean = session.umount_and_join().is_ok();
        if !clean || is_mountpoint(self.dir.path()) {
            // Busy: detach now, the kernel drops it when the last user lets go.
            let _ = rustix::mount::unmount(self.dir.path(), rustix::mount::UnmountFlags::DETACH);
        }
    }
}

#[test]
fn faultfs_serves_files_and_injects_faults() {
    use std::os::unix::fs::FileExt;
    let fs = match FaultFs::mount() {
        Ok(fs) => fs,
        Err(reason) => {
            return crate::harness::skip("faultfs_serves_files_and_injects_faults", &reason);
        }
    };
    let mountpoint = fs.dir().to_path_buf();
    assert!(is_mountpoint(&mountpoint), "not mounted");
    let path = mountpoint.join("t.dat");
    let data: Vec<u8> = (0..16384u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), data);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 16384);
    let (reads, writes) = fs.counts();
    assert!(
        reads >= 1 && writes >= 1,
        "counts {reads} reads, {writes} writes"
    );

    // Renames and manifests (names with .json) work and are never faulted.
    std::fs::write(mountpoint.join("t.dat.storlab.json.tmp"), b"{}").unwrap();
    std::fs::rename(
        mountpoint.join("t.dat.storlab.json.tmp"),
        mountpoint.join("t.dat.storlab.json"),
    )
    .unwrap();
    let names: Vec<String> = std::fs::read_dir(&mountpoint)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["t.dat", "t.dat.storlab.json"]);

    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let mut buf = vec![0u8; 4096];
    fs.set(|f| {
        f.fail_reads = vec![(8192..8193, libc::EIO)];
        f.fail_writes = vec![(0..4096, libc::ENOSPC)];
        f.short_reads.push(12288..16384);
    });
    let e = file.read_at(&mut buf, 8192).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
    file.read_exact_at(&mut buf, 4096).unwrap();
    assert_eq!(buf, data[4096..8192]);
    assert_eq!(file.read_at(&mut buf, 12288).unwrap(), 2048, "short read");
    let e = file.write_at(&buf, 0).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
    assert_eq!(
        std::fs::read(mountpoint.join("t.dat.storlab.json")).unwrap(),
        b"{}"
    );

    // After two more data I/Os, everything fails.
    fs.set(|f| *f = Faults::default());
    fs.set(|f| f.fail_after = Some((2, libc::EIO)));
    file.read_exact_at(&mut buf, 0).unwrap();
    file.write_all_at(&buf, 4096).unwrap();
    let mut expected = data.clone();
    expected[4096..8192].copy_from_slice(&data[..4096]);
    let e = file.read_at(&mut buf, 0).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");

    // Lost, misdirected and torn writes are acknowledged; corruption flips stored bytes.
    fs.set(|f| {
        *f = Faults::default();
        f.drop_writes.push(0..4096);
        f.misdirect_writes = vec![(4096..8192, 4096)];
        f.tear_writes.push(12288..16384);
    });
    let ones = vec![1u8; 4096];
    file.write_all_at(&ones, 0).unwrap();
    file.write_all_at(&ones, 4096).unwrap();
    file.write_all_at(&ones, 12288).unwrap();
    fs.set(|f| *f = Faults::default());
    fs.corrupt("t.dat", 100, 2);
    let now = std::fs::read(&path).unwrap();
    assert_eq!(now.len(), 16384);
    assert_eq!(now[..100], expected[..100], "dropped write stored nothing");
    assert_eq!(
        now[100..102],
        [expected[100] ^ 0xff, expected[101] ^ 0xff],
        "corrupted"
    );
    assert_eq!(now[102..8192], expected[102..8192], "misdirected away");
    assert!(now[8192..12288].iter().all(|b| *b == 1), "misdirected here");
    assert!(
        now[12288..14336].iter().all(|b| *b == 1),
        "torn: first half"
    );
    assert_eq!(
        now[14336..],
        expected[14336..],
        "torn: second half not stored"
    );

    std::fs::remove_file(&path).unwrap();
    drop(file);
    assert!(!path.exists());
    drop(fs);
    assert!(!is_mountpoint(&mountpoint), "still mounted after drop");
    assert!(!mountpoint.exists(), "scratch directory left behind");
}
