//! The FUSE operations of the fault filesystem: lookups, attributes, reads and writes through
//! the [`State`](super::State) and its [`Faults`](super::Faults).

use super::{BLOCK, CAPACITY_BYTES, State, TTL, overlaps};
use fuser::{
    AccessFlags, Errno, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    KernelConfig, LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
    WriteFlags,
};
use std::ffi::{OsStr, OsString};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

/// The `fuser` side: every request locks the shared state.
pub(super) struct FaultFsImpl {
    pub(super) state: Arc<Mutex<State>>,
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
