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
use fuser::{
    AccessFlags, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation,
    INodeNo, KernelConfig, LockOwner, MountOption, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
    TimeOrNow, WriteFlags,
};
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// Faults to inject; all off by default. Ranges are byte offsets in a data file; an I/O is hit
/// when its byte range overlaps one. Checked in this order: `fail_after`, the `fail_*` ranges,
/// then the ones that alter what is read or stored. Add a single range with `push`
/// (`f.short_reads.push(a..b)`): clippy rejects `vec![a..b]`.
#[derive(Debug, Clone, Default)]
pub struct Faults {
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

/// The `fuser` side: every request locks the shared state.
struct FaultFsImpl {
    state: Arc<Mutex<State>>,
}

impl FaultFsImpl {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Writes `data` into `file` at `offset`, growing it as needed.
fn store(file: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let start = offset as usize;
    let end = start + data.len();
    if file.len() < end {
        file.resize(end, 0);
    }
    file[start..end].copy_from_slice(data);
}

impl Filesystem for FaultFsImpl {
    fn init(&mut self, _req: &Request, _config: &mut KernelConfig) -> std::io::Result<()> {
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let state = self.lock();
        match state.child(parent, name).and_then(|ino| state.attr(ino)) {
            Some(attr) => reply.entry(&TTL, &attr, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.lock().attr(ino.0) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut state = self.lock();
        let Some(node) = state.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let time = |t: TimeOrNow| match t {
            TimeOrNow::SpecificTime(t) => t,
            TimeOrNow::Now => SystemTime::now(),
        };
        if let Some(mode) = mode {
            node.perm = (mode & 0o7777) as u16;
        }
        if let Some(uid) = uid {
            node.uid = uid;
        }
        if let Some(gid) = gid {
            node.gid = gid;
        }
        if let Some(size) = size {
            if node.kind != FileType::RegularFile {
                return reply.error(Errno::EISDIR);
            }
            node.data.resize(size as usize, 0);
            node.mtime = SystemTime::now();
        }
        if let Some(t) = atime {
            node.atime = time(t);
        }
        if let Some(t) = mtime {
            node.mtime = time(t);
        }
        node.ctime = SystemTime::now();
        let attr = state.attr(ino.0).expect("node exists");
        reply.attr(&TTL, &attr);
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        let mut state = self.lock();
        if parent != INodeNo::ROOT {
            return reply.error(Errno::ENOENT);
        }
        if mode & libc::S_IFMT != libc::S_IFREG {
            return reply.error(Errno::EPERM);
        }
        if state.names.contains_key(name) {
            return reply.error(Errno::EEXIST);
        }
        let ino = state.new_file(req, name, mode, umask);
        let attr = state.attr(ino).expect("node exists");
        reply.entry(&TTL, &attr, Generation(0));
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let mut state = self.lock();
        if parent != INodeNo::ROOT {
            return reply.error(Errno::ENOENT);
        }
        let ino = match state.names.get(name).copied() {
            Some(_) if flags & libc::O_EXCL != 0 => return reply.error(Errno::EEXIST),
            Some(ino) => ino,
            None => state.new_file(req, name, mode, umask),
        };
        let node = state.nodes.get_mut(&ino).expect("node exists");
        if flags & libc::O_TRUNC != 0 {
            node.data.clear();
        }
        node.open += 1;
        let attr = state.attr(ino).expect("node exists");
        reply.created(
            &TTL,
            &attr,
            Generation(0),
            FileHandle(0),
            FopenFlags::FOPEN_DIRECT_IO,
        );
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let mut state = self.lock();
        let Some(node) = state.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        if node.kind != FileType::RegularFile {
            return reply.error(Errno::EISDIR);
        }
        if flags.0 & libc::O_TRUNC != 0 {
            node.data.clear();
        }
        node.open += 1;
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let mut state = self.lock();
        let Some(node) = state.nodes.get(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let mut len = u64::from(size);
        let data_file = node.is_data();
        if data_file {
            if let Some(errno) = state.count_and_fail_after(false) {
                return reply.error(Errno::from_i32(errno));
            }
            let faults = &state.faults;
            if let Some((_, errno)) = faults
                .fail_reads
                .iter()
                .find(|(r, _)| overlaps(r, offset, len))
            {
                return reply.error(Errno::from_i32(*errno));
            }
            if faults.short_reads.iter().any(|r| overlaps(r, offset, len)) {
                len /= 2;
            }
        }
        let hold = data_file
            && state
                .faults
                .hold_reads
                .iter()
                .any(|r| overlaps(r, offset, len));
        let node = state.nodes.get_mut(&ino.0).expect("node exists");
        node.atime = SystemTime::now();
        let file_len = node.data.len() as u64;
        let start = offset.min(file_len) as usize;
        let end = offset.saturating_add(len).min(file_len) as usize;
        if hold {
            let data = node.data[start..end].to_vec();
            state.held.push((reply, data));
            return;
        }
        reply.data(&node.data[start..end]);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut state = self.lock();
        let Some(node) = state.nodes.get(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let len = data.len() as u64;
        // Where the bytes go and how many of them (all, none, or a torn prefix).
        let mut target = Some(offset);
        let mut stored = data.len();
        if node.is_data() {
            if let Some(errno) = state.count_and_fail_after(true) {
                return reply.error(Errno::from_i32(errno));
            }
            let faults = &state.faults;
            if let Some((_, errno)) = faults
                .fail_writes
                .iter()
                .find(|(r, _)| overlaps(r, offset, len))
            {
                return reply.error(Errno::from_i32(*errno));
            }
            if faults.drop_writes.iter().any(|r| overlaps(r, offset, len)) {
                target = None;
            } else if let Some((_, delta)) = faults
                .misdirect_writes
                .iter()
                .find(|(r, _)| overlaps(r, offset, len))
            {
                target = Some(offset.saturating_add_signed(*delta));
            }
            if faults.tear_writes.iter().any(|r| overlaps(r, offset, len)) {
                stored = data.len() / 2 / 512 * 512;
            }
        }
        let node = state.nodes.get_mut(&ino.0).expect("node exists");
        if let Some(at) = target {
            store(&mut node.data, at, &data[..stored]);
        }
        // A lost, misdirected or torn write still leaves the file as long as the write says.
        if (node.data.len() as u64) < offset + len {
            node.data.resize((offset + len) as usize, 0);
        }
        node.mtime = SystemTime::now();
        node.ctime = node.mtime;
        reply.written(data.len() as u32);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let mut state = self.lock();
        if let Some(node) = state.nodes.get_mut(&ino.0) {
            node.open = node.open.saturating_sub(1);
            if node.open == 0 && node.nlink == 0 {
                state.nodes.remove(&ino.0);
            }
        }
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut state = self.lock();
        if state.child(parent, name).is_none() {
            return reply.error(Errno::ENOENT);
        }
        state.remove_name(name);
        reply.ok();
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let mut state = self.lock();
        let Some(ino) = state.child(parent, name) else {
            return reply.error(Errno::ENOENT);
        };
        if newparent != INodeNo::ROOT {
            return reply.error(Errno::ENOENT);
        }
        if flags.contains(RenameFlags::RENAME_EXCHANGE)
            || flags.contains(RenameFlags::RENAME_WHITEOUT)
        {
            return reply.error(Errno::EINVAL);
        }
        if name == newname {
            return reply.ok();
        }
        if state.names.contains_key(newname) {
            if flags.contains(RenameFlags::RENAME_NOREPLACE) {
                return reply.error(Errno::EEXIST);
            }
            state.remove_name(newname);
        }
        state.names.remove(name);
        state.names.insert(newname.to_owned(), ino);
        let node = state.nodes.get_mut(&ino).expect("node exists");
        node.name = newname.to_owned();
        node.ctime = SystemTime::now();
        reply.ok();
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if ino == INodeNo::ROOT {
            reply.opened(FileHandle(0), FopenFlags::empty());
        } else {
            reply.error(Errno::ENOTDIR);
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let state = self.lock();
        let entries = [
            (INodeNo::ROOT.0, FileType::Directory, OsString::from(".")),
            (INodeNo::ROOT.0, FileType::Directory, OsString::from("..")),
        ]
        .into_iter()
        .chain(
            state
                .names
                .iter()
                .map(|(name, ino)| (*ino, FileType::RegularFile, name.clone())),
        );
        // The offset of an entry is the index of the next one.
        for (index, (ino, kind, name)) in entries.enumerate().skip(offset as usize) {
            if reply.add(INodeNo(ino), index as u64 + 1, kind, &name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let state = self.lock();
        let blocks = CAPACITY_BYTES / u64::from(BLOCK);
        let free = CAPACITY_BYTES.saturating_sub(state.used_bytes()) / u64::from(BLOCK);
        let files = state.nodes.len() as u64;
        reply.statfs(
            blocks,
            free,
            free,
            files + 1_000_000,
            1_000_000,
            BLOCK,
            255,
            BLOCK,
        );
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        if mode != 0 {
            return reply.error(Errno::EOPNOTSUPP);
        }
        let mut state = self.lock();
        let Some(node) = state.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let end = offset.saturating_add(length);
        if end > CAPACITY_BYTES {
            return reply.error(Errno::ENOSPC);
        }
        if (node.data.len() as u64) < end {
            node.data.resize(end as usize, 0);
        }
        node.ctime = SystemTime::now();
        reply.ok();
    }
}

/// A mounted [`Faults`]-injecting filesystem; unmounted when dropped (lazily when something
/// still holds it), also when the test panics.
pub struct FaultFs {
    state: Arc<Mutex<State>>,
    session: Option<fuser::BackgroundSession>,
    // Dropped after the unmount in `drop`.
    dir: tempfile::TempDir,
}

impl FaultFs {
    /// Mounts an empty filesystem on a fresh scratch directory; `Err(reason)` when this machine
    /// cannot (no /dev/fuse, not allowed to mount).
    pub fn mount() -> Result<FaultFs, String> {
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
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the faults; takes effect with the next request.
    pub fn set(&self, f: impl FnOnce(&mut Faults)) {
        f(&mut self.lock().faults);
    }

    /// `(reads, writes)` requests received on data files so far, failed ones included.
    pub fn counts(&self) -> (u64, u64) {
        let state = self.lock();
        (state.reads, state.writes)
    }

    /// Reads held now ([`Faults::hold_reads`]): arrived and not answered.
    pub fn held(&self) -> usize {
        self.lock().held.len()
    }

    /// Stops holding reads and answers every held one (with the data the file held when it
    /// arrived); returns how many. When it returns, every answer has been handed to the kernel.
    pub fn release(&self) -> usize {
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
    pub fn corrupt(&self, name: &str, offset: u64, len: usize) {
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
            eprintln!("skipped faultfs_serves_files_and_injects_faults: {reason}");
            return;
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
