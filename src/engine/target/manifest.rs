//! The manifest beside a prepared file: `PATH.storlab.json` marks `PATH` as storlab's and
//! records its size, data seed and whether its preparation finished, so a later run can reuse
//! it, prepare it again, or tell that a file is someone else's.
//!
//! A manifest is trusted only when nobody else could have written it or swapped the file it
//! names ([`trusted`]): a regular file of one link, owned by the running user and writable by
//! nobody else, read through the target's own directory descriptor, naming the target's
//! device and inode and an identity written into the target itself (the extended attribute
//! `user.storlab.identity`; where the filesystem keeps none, the file's birth time; where it
//! keeps neither, the data seed in the file's first sector). Anything else makes the target a
//! file storlab did not create (`--destroy-data` territory).

use super::found::Existing;
use super::{TargetError, io};
use crate::files::dir::{Dir, others_may_write, owner_text};
use crate::files::{Durability, NewFile};
use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
#[cfg(test)]
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Version written in the `storlab_manifest` field. Version 2 files carry a verification
/// header in every sector; version 3 manifests name the file's device and identity. A file
/// of an older version is still storlab's when its first sector names its data seed (the
/// identity of a manifest that names no other), and is prepared again rather than reused.
pub(super) const MANIFEST_VERSION: u32 = 3;
/// The manifest of `PATH` is `PATH.storlab.json`.
const MANIFEST_SUFFIX: &str = ".storlab.json";
/// A manifest larger than this is not one of ours.
const MANIFEST_MAX_BYTES: u64 = 64 << 10;
/// Permissions of a manifest (the umask may only take more away): nobody else writes it.
const MANIFEST_MODE: u32 = 0o644;
/// The extended attribute that carries a prepared file's identity.
const IDENTITY_XATTR: &str = "user.storlab.identity";

/// The sidecar `PATH.storlab.json` that marks a file as storlab's.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Manifest {
    /// Manifest format version ([`MANIFEST_VERSION`]).
    pub(super) storlab_manifest: u32,
    /// Size of the prepared file.
    pub(super) size_bytes: u64,
    /// Seed of the file's data (unique per preparation).
    pub(super) data_seed: u64,
    /// False from the moment preparation starts until the whole file is written and synced.
    pub(super) complete: bool,
    /// When the preparation started (seconds since the Unix epoch).
    created_unix_s: u64,
    /// Device of the prepared file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    device: Option<u64>,
    /// Inode of the prepared file: a file replaced since is not ours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    inode: Option<u64>,
    /// The identity written into the file (its `user.storlab.identity` attribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    identity: Option<u64>,
    /// The file's birth time (ns since the Unix epoch), its identity where the filesystem
    /// keeps no extended attributes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    birth_ns: Option<u64>,
    /// Bytes per generator seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chunk_bytes: Option<u64>,
    /// How the data was generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    /// Version of storlab that prepared the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    storlab_version: Option<String>,
}

/// What binds a manifest to its file, from [`bind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Binding {
    device: u64,
    inode: u64,
    identity: Option<u64>,
    birth_ns: Option<u64>,
}

impl Manifest {
    /// The manifest of a preparation that starts now (incomplete) of the file `binding` names:
    /// `size_bytes` of data from `data_seed`, one generator seed per `chunk_bytes`.
    pub(super) fn started(
        size_bytes: u64,
        data_seed: u64,
        binding: Binding,
        chunk_bytes: u64,
    ) -> Self {
        Manifest {
            storlab_manifest: MANIFEST_VERSION,
            size_bytes,
            data_seed,
            complete: false,
            created_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs()),
            device: Some(binding.device),
            inode: Some(binding.inode),
            identity: binding.identity,
            birth_ns: binding.birth_ns,
            chunk_bytes: Some(chunk_bytes),
            data: Some(
                "pseudo-random: SmallRng seeded from (data_seed, chunk index) for each chunk; every 512-byte sector starts with a storlab verification header".into(),
            ),
            storlab_version: Some(env!("CARGO_PKG_VERSION").into()),
        }
    }
}

/// The name of the manifest of the file `name`.
pub(super) fn manifest_name(name: &OsStr) -> OsString {
    let mut text = name.to_owned();
    text.push(MANIFEST_SUFFIX);
    text
}

/// Where the manifest of the file at `canonical` is.
#[cfg(test)]
pub(super) fn manifest_path(canonical: &Path) -> PathBuf {
    let mut text = canonical.as_os_str().to_owned();
    text.push(MANIFEST_SUFFIX);
    PathBuf::from(text)
}

/// What the manifest beside a file says of it.
#[derive(Debug)]
pub(super) enum Trust {
    /// A manifest storlab wrote for this very file.
    Ours(Manifest),
    /// No manifest.
    Absent,
    /// A manifest that is not trusted: why ("its manifest t.dat.storlab.json is owned by
    /// nobody (uid 65534), not by this user (root)").
    Untrusted(String),
}

/// What the manifest beside `target` says, trusted only as the module's documentation says;
/// `readable` is the target opened for reading (its identity is read from it).
pub(super) fn trusted(target: &Existing, readable: &File) -> Trust {
    let name = manifest_name(&target.name);
    let shown = crate::units::escape_text(&name.to_string_lossy()).into_owned();
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = match rustix::fs::openat(target.dir.file(), &name, flags, Mode::empty()) {
        Ok(fd) => File::from(fd),
        Err(Errno::NOENT) => return Trust::Absent,
        Err(Errno::LOOP) => {
            return Trust::Untrusted(format!(
                "its manifest {shown} is a symbolic link, which storlab never writes"
            ));
        }
        Err(e) => {
            return Trust::Untrusted(format!(
                "its manifest {shown} cannot be read ({})",
                crate::files::error_text(&e.into())
            ));
        }
    };
    match read_trusted(&file, &shown) {
        Ok(manifest) => match bound(&manifest, target, readable) {
            Ok(()) => Trust::Ours(manifest),
            Err(why) => Trust::Untrusted(why),
        },
        Err(why) => Trust::Untrusted(why),
    }
}

/// The manifest in `file` (named `shown`), when only the running user could have written it.
fn read_trusted(file: &File, shown: &str) -> Result<Manifest, String> {
    let metadata = file
        .metadata()
        .map_err(|e| format!("its manifest {shown} cannot be examined ({e})"))?;
    let me = rustix::process::geteuid().as_raw();
    if !metadata.is_file() {
        return Err(format!(
            "its manifest {shown} is {}",
            crate::files::kind_text(metadata.file_type())
        ));
    }
    if metadata.uid() != me {
        return Err(format!(
            "its manifest {shown} is owned by {}, not by this user ({}), so someone else could have written it",
            owner_text(metadata.uid()),
            owner_text(me)
        ));
    }
    if others_may_write(metadata.mode()) || metadata.nlink() != 1 {
        return Err(format!(
            "its manifest {shown} may have been changed by someone else (mode {:04o}, {} links)",
            metadata.mode() & 0o7777,
            metadata.nlink()
        ));
    }
    let mut text = Vec::new();
    let reader = file;
    reader
        .take(MANIFEST_MAX_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("its manifest {shown} cannot be read ({e})"))?;
    let manifest: Option<Manifest> = (text.len() as u64 <= MANIFEST_MAX_BYTES)
        .then(|| serde_json::from_slice(&text).ok())
        .flatten()
        .filter(|m: &Manifest| (1..=MANIFEST_VERSION).contains(&m.storlab_manifest));
    manifest.ok_or_else(|| format!("its manifest {shown} is not one this storlab wrote"))
}

/// Whether `manifest` names `target` (open for reading as `readable`): its device and inode
/// (as far as the manifest records them), and its identity: the extended attribute, or
/// where the filesystem keeps none its birth time, or where it keeps neither (a manifest of
/// an older storlab too) the data seed in the file's first sector, which every sector
/// storlab prepares and every block a run writes (without data reduction) begins with.
fn bound(manifest: &Manifest, target: &Existing, readable: &File) -> Result<(), String> {
    let metadata = &target.metadata;
    if metadata.nlink() != 1 {
        return Err(format!(
            "it has {} links (other names share its data), and a manifest stands for a file of one name only",
            metadata.nlink()
        ));
    }
    let same = manifest.device.is_none_or(|d| d == metadata.dev())
        && manifest.inode.is_none_or(|i| i == metadata.ino())
        && match (manifest.identity, manifest.birth_ns) {
            (Some(identity), _) => read_identity(readable) == Some(identity),
            (None, Some(birth)) => birth_ns(readable) == Some(birth),
            (None, None) => first_sector_names(readable, manifest.data_seed),
        };
    same.then_some(()).ok_or_else(|| {
        "its manifest names another file: this one was put at its name since storlab prepared it"
            .into()
    })
}

/// Whether the first sector of `file` is one storlab prepared with `data_seed`.
fn first_sector_names(file: &File, data_seed: u64) -> bool {
    let mut sector = [0u8; 32];
    file.read_exact_at(&mut sector, 0).is_ok()
        && sector[..8] == crate::engine::verify::MAGIC
        && sector[16..24] == data_seed.to_le_bytes()
}

/// The identity written into `file`, if it has one.
fn read_identity(file: &File) -> Option<u64> {
    let mut value = [0u8; 32];
    let len = rustix::fs::fgetxattr(file, IDENTITY_XATTR, &mut value[..]).ok()?;
    u64::from_str_radix(std::str::from_utf8(&value[..len]).ok()?, 16).ok()
}

/// The birth time of `file` in ns since the Unix epoch, where the filesystem keeps one.
fn birth_ns(file: &File) -> Option<u64> {
    let stat = rustix::fs::statx(file, "", AtFlags::EMPTY_PATH, StatxFlags::BTIME).ok()?;
    (stat.stx_mask & StatxFlags::BTIME.bits() != 0).then(|| {
        u64::try_from(stat.stx_btime.tv_sec)
            .unwrap_or(0)
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::from(stat.stx_btime.tv_nsec))
    })
}

/// Binds `file` (open for writing, being prepared) to its manifest: its device and inode,
/// and the identity `keep` it has (a file storlab prepared before) or a new one written into
/// it; where the filesystem refuses extended attributes, its birth time stands for it, and
/// where it keeps neither, the data seed its first sector is prepared with.
pub(super) fn bind(file: &File, keep: Option<&Manifest>) -> std::io::Result<Binding> {
    let metadata = file.metadata()?;
    let mut binding = Binding {
        device: metadata.dev(),
        inode: metadata.ino(),
        identity: None,
        birth_ns: None,
    };
    if let Some(identity) = keep.and_then(|m| m.identity) {
        if read_identity(file) == Some(identity) {
            binding.identity = Some(identity);
            return Ok(binding);
        }
    }
    let identity = fresh_identity();
    match rustix::fs::fsetxattr(
        file,
        IDENTITY_XATTR,
        format!("{identity:016x}").as_bytes(),
        rustix::fs::XattrFlags::empty(),
    ) {
        Ok(()) => binding.identity = Some(identity),
        Err(_) => binding.birth_ns = birth_ns(file),
    }
    Ok(binding)
}

/// An identity no other file of this process, or of another, is likely to get.
fn fresh_identity() -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher, RandomState};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState carries keys the standard library draws from the operating system.
    let mut hasher = RandomState::new().build_hasher();
    COUNTER.fetch_add(1, Ordering::Relaxed).hash(&mut hasher);
    std::process::id().hash(&mut hasher);
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |t| t.as_nanos())
        .hash(&mut hasher);
    hasher.finish()
}

/// Writes `manifest` as the manifest of the file `name` in `dir` (requested as `path`)
/// durably and atomically, never through a link at a predictable name ([`crate::files`]: a
/// randomly named temporary file made through the directory's descriptor, fsync, rename,
/// fsync of the directory), readable by all and writable by this user only.
pub(super) fn write(
    path: &Path,
    dir: &Arc<Dir>,
    name: &OsStr,
    manifest: &Manifest,
) -> Result<(), TargetError> {
    let target = manifest_name(name);
    let fail = |error: std::io::Error| {
        io(
            path,
            format!(
                "cannot write the manifest {}",
                dir.path().join(&target).display()
            ),
            error,
        )
    };
    let mut text = serde_json::to_vec_pretty(manifest).map_err(|e| fail(e.into()))?;
    text.push(b'\n');
    let new = NewFile::create_in(Arc::clone(dir), &target, MANIFEST_MODE).map_err(fail)?;
    new.file().write_all(&text).map_err(fail)?;
    new.commit(Durability::Synced).map_err(fail)?;
    Ok(())
}

/// Removes the manifest of the file `name` in `dir` (a file storlab created and could not
/// prepare).
pub(super) fn remove(dir: &Dir, name: &OsStr) {
    let _ = rustix::fs::unlinkat(dir.file(), manifest_name(name), AtFlags::empty());
}

#[cfg(test)]
mod tests {
    use super::super::found::{Found, find};
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// The existing file at `path`, as a target finds it.
    fn existing(path: &Path) -> Existing {
        match find(path).unwrap() {
            Found::Existing(e) => e,
            Found::Missing(_) => panic!("{} is missing", path.display()),
        }
    }

    fn trust(path: &Path) -> Trust {
        let e = existing(path);
        let readable = e.readable.as_ref().unwrap().try_clone().unwrap();
        trusted(&e, &readable)
    }

    /// A file at `path` with a complete manifest written for it, as preparation writes one.
    fn prepared(path: &Path) -> Manifest {
        std::fs::write(path, b"data").unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        let e = existing(path);
        let mut manifest = Manifest::started(4, 7, bind(&file, None).unwrap(), 1 << 20);
        manifest.complete = true;
        write(path, &e.dir, &e.name, &manifest).unwrap();
        manifest
    }

    #[test]
    fn written_manifest_is_read_back_for_the_same_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        prepared(&path);
        assert_eq!(manifest_path(&path), dir.path().join("data.storlab.json"));
        let names = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(names, 2, "no temporary file is left");
        let mode = std::fs::metadata(manifest_path(&path)).unwrap().mode();
        assert_eq!(mode & 0o022, 0, "{mode:o}");
        let Trust::Ours(read) = trust(&path) else {
            panic!("not trusted: {:?}", trust(&path));
        };
        assert_eq!(
            (read.size_bytes, read.data_seed, read.complete),
            (4, 7, true)
        );
        assert_eq!(read.storlab_manifest, MANIFEST_VERSION);
        assert!(read.identity.is_some() || read.birth_ns.is_some());

        // Another file at that path since (another inode: made while the first one still
        // exists) is not ours.
        std::fs::write(dir.path().join("replacement"), b"someone else's").unwrap();
        std::fs::rename(dir.path().join("replacement"), &path).unwrap();
        let Trust::Untrusted(why) = trust(&path) else {
            panic!("trusted");
        };
        assert!(why.contains("names another file"), "{why}");
    }

    #[test]
    fn a_manifest_naming_the_inode_but_not_the_identity_is_not_trusted() {
        // The inode of a file removed and made again can be the same: the identity written
        // into the file tells them apart.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let mut manifest = prepared(&path);
        let e = existing(&path);
        manifest.identity = manifest.identity.map(|i| i ^ 1);
        manifest.birth_ns = manifest.birth_ns.map(|b| b ^ 1);
        write(&path, &e.dir, &e.name, &manifest).unwrap();
        assert!(matches!(trust(&path), Trust::Untrusted(_)));
        // One that names no identity at all, the same.
        manifest.identity = None;
        manifest.birth_ns = None;
        write(&path, &e.dir, &e.name, &manifest).unwrap();
        assert!(matches!(trust(&path), Trust::Untrusted(_)));
    }

    #[test]
    fn a_manifest_others_may_write_or_of_two_links_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        prepared(&path);
        let m = manifest_path(&path);
        std::fs::set_permissions(&m, std::fs::Permissions::from_mode(0o666)).unwrap();
        let Trust::Untrusted(why) = trust(&path) else {
            panic!("trusted");
        };
        assert!(
            why.contains("may have been changed by someone else"),
            "{why}"
        );
        std::fs::set_permissions(&m, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(trust(&path), Trust::Ours(_)));
        // The file with a second name.
        std::fs::hard_link(&path, dir.path().join("second")).unwrap();
        let Trust::Untrusted(why) = trust(&path) else {
            panic!("trusted");
        };
        assert!(why.contains("2 links"), "{why}");
    }

    #[test]
    fn unparsable_unknown_or_huge_manifests_are_not_ours() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, b"data").unwrap();
        for text in [
            &b"{ not json"[..],
            br#"{"storlab_manifest": 4, "size_bytes": 4, "data_seed": 1, "complete": true, "created_unix_s": 0}"#,
            br#"{"storlab_manifest": 0, "size_bytes": 4, "data_seed": 1, "complete": true, "created_unix_s": 0}"#,
        ] {
            std::fs::write(manifest_path(&path), text).unwrap();
            assert!(
                matches!(trust(&path), Trust::Untrusted(_)),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        let mut huge = br#"{"storlab_manifest": 2, "size_bytes": 4, "data_seed": 1, "complete": true, "created_unix_s": 0, "data": ""#.to_vec();
        huge.extend(std::iter::repeat_n(b'x', MANIFEST_MAX_BYTES as usize));
        huge.extend(br#""}"#);
        std::fs::write(manifest_path(&path), &huge).unwrap();
        assert!(matches!(trust(&path), Trust::Untrusted(_)));
        // Version 1 (no inode, no headers, no identity): storlab's only when its first sector
        // names the data seed, as storlab prepared it.
        std::fs::write(
            manifest_path(&path),
            br#"{"storlab_manifest": 1, "size_bytes": 4, "data_seed": 1, "complete": true, "created_unix_s": 0}"#,
        )
        .unwrap();
        assert!(matches!(trust(&path), Trust::Untrusted(_)));
        let mut sector = vec![0u8; 512];
        sector[..8].copy_from_slice(&crate::engine::verify::MAGIC);
        sector[16..24].copy_from_slice(&1u64.to_le_bytes());
        std::fs::write(&path, &sector).unwrap();
        let Trust::Ours(old) = trust(&path) else {
            panic!("not ours");
        };
        assert_eq!(old.storlab_manifest, 1);
    }

    #[test]
    fn a_link_planted_at_the_old_temporary_name_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("passwd");
        std::fs::write(&victim, b"root:x:0:0\n").unwrap();
        let path = dir.path().join("data");
        let planted = dir.path().join("data.storlab.json.tmp");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        prepared(&path);
        assert_eq!(std::fs::read(&victim).unwrap(), b"root:x:0:0\n");
        assert!(matches!(trust(&path), Trust::Ours(_)));
        // A link or a pipe at the manifest's own name is not read: not ours, and no wait.
        std::fs::remove_file(manifest_path(&path)).unwrap();
        std::os::unix::fs::symlink(&victim, manifest_path(&path)).unwrap();
        let Trust::Untrusted(why) = trust(&path) else {
            panic!("trusted");
        };
        assert!(why.contains("symbolic link"), "{why}");
        std::fs::remove_file(manifest_path(&path)).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            manifest_path(&path),
            rustix::fs::FileType::Fifo,
            Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap();
        assert!(matches!(trust(&path), Trust::Untrusted(_)));
    }
}
