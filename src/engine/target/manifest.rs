//! The manifest beside a prepared file: `PATH.storlab.json` marks `PATH` as storlab's and
//! records its size, data seed and whether its preparation finished, so a later run can reuse
//! it, prepare it again, or tell that a file is someone else's.

use super::{TargetError, io};
use rustix::fs::{Mode, OFlags};
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Version written in the `storlab_manifest` field. Version 2 files carry a verification
/// header in every sector; a file of an older version is still storlab's, and is prepared
/// again rather than reused.
pub(super) const MANIFEST_VERSION: u32 = 2;
/// The manifest of `PATH` is `PATH.storlab.json`.
const MANIFEST_SUFFIX: &str = ".storlab.json";
/// A manifest larger than this is not one of ours.
const MANIFEST_MAX_BYTES: u64 = 64 << 10;

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
    /// Inode of the prepared file: a file replaced since is not ours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    inode: Option<u64>,
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

impl Manifest {
    /// The manifest of a preparation that starts now (incomplete): file `inode`, `size_bytes`
    /// of data from `data_seed`, one generator seed per `chunk_bytes`.
    pub(super) fn started(size_bytes: u64, data_seed: u64, inode: u64, chunk_bytes: u64) -> Self {
        Manifest {
            storlab_manifest: MANIFEST_VERSION,
            size_bytes,
            data_seed,
            complete: false,
            created_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs()),
            inode: Some(inode),
            chunk_bytes: Some(chunk_bytes),
            data: Some(
                "pseudo-random: SmallRng seeded from (data_seed, chunk index) for each chunk; every 512-byte sector starts with a storlab verification header".into(),
            ),
            storlab_version: Some(env!("CARGO_PKG_VERSION").into()),
        }
    }
}

/// `path` with `suffix` appended to its last component.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut text = path.as_os_str().to_owned();
    text.push(suffix);
    PathBuf::from(text)
}

/// Where the manifest of the file at `canonical` is.
pub(super) fn manifest_path(canonical: &Path) -> PathBuf {
    with_suffix(canonical, MANIFEST_SUFFIX)
}

/// The manifest of the file at `canonical`, when there is a valid one for this very file (a
/// known version, the file's inode); `None` means the file is not storlab's.
pub(super) fn owned(canonical: &Path, metadata: &Metadata) -> Option<Manifest> {
    // Never through a link, never waiting on a pipe: only a regular file is read.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let mut file =
        File::from(rustix::fs::open(manifest_path(canonical), flags, Mode::empty()).ok()?);
    if !file.metadata().ok()?.file_type().is_file() {
        return None;
    }
    let mut text = Vec::new();
    (&mut file)
        .take(MANIFEST_MAX_BYTES + 1)
        .read_to_end(&mut text)
        .ok()?;
    if text.len() as u64 > MANIFEST_MAX_BYTES {
        return None;
    }
    let manifest: Manifest = serde_json::from_slice(&text).ok()?;
    let same_file = manifest.inode.is_none_or(|inode| inode == metadata.ino());
    ((1..=MANIFEST_VERSION).contains(&manifest.storlab_manifest) && same_file).then_some(manifest)
}

/// Writes `manifest` for the file at `canonical` (requested as `path`) durably and atomically,
/// never through a link at a predictable name ([`crate::files`]: a randomly named temporary
/// file, fsync, rename, fsync of the directory).
pub(super) fn write(path: &Path, canonical: &Path, manifest: &Manifest) -> Result<(), TargetError> {
    let target = manifest_path(canonical);
    let fail = |error: std::io::Error| {
        io(
            path,
            format!("cannot write the manifest {}", target.display()),
            error,
        )
    };
    let mut text = serde_json::to_vec_pretty(manifest).map_err(|e| fail(e.into()))?;
    text.push(b'\n');
    crate::files::write_atomic(&target, &text, crate::files::Durability::Synced).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with_manifest(dir: &Path, manifest: &[u8]) -> (PathBuf, Metadata) {
        let path = dir.join("data");
        std::fs::write(&path, b"data").unwrap();
        std::fs::write(manifest_path(&path), manifest).unwrap();
        let metadata = std::fs::metadata(&path).unwrap();
        (path, metadata)
    }

    #[test]
    fn written_manifest_is_read_back_for_the_same_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, b"data").unwrap();
        let metadata = std::fs::metadata(&path).unwrap();
        let mut manifest = Manifest::started(4, 7, metadata.ino(), 1 << 20);
        manifest.complete = true;
        write(&path, &path, &manifest).unwrap();
        assert_eq!(manifest_path(&path), dir.path().join("data.storlab.json"));
        let names = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(names, 2, "no temporary file is left");
        let read = owned(&path, &metadata).unwrap();
        assert_eq!(
            (read.size_bytes, read.data_seed, read.complete),
            (4, 7, true)
        );
        assert_eq!(read.storlab_manifest, MANIFEST_VERSION);

        // Another file at that path since (another inode: made while the first one still
        // exists) is not ours.
        std::fs::write(dir.path().join("replacement"), b"someone else's").unwrap();
        std::fs::rename(dir.path().join("replacement"), &path).unwrap();
        assert!(owned(&path, &std::fs::metadata(&path).unwrap()).is_none());
    }

    #[test]
    fn unparsable_unknown_or_huge_manifests_are_not_ours() {
        let dir = tempfile::tempdir().unwrap();
        for text in [
            &b"{ not json"[..],
            br#"{"storlab_manifest": 3, "size_bytes": 4, "data_seed": 1, "complete": true, "created_unix_s": 0}"#,
            br#"{"storlab_manifest": 0, "size_bytes": 4, "data_seed": 1, "complete": true, "created_unix_s": 0}"#,
        ] {
            let (path, metadata) = file_with_manifest(dir.path(), text);
            assert!(owned(&path, &metadata).is_none(), "{}", String::from_utf8_lossy(text));
        }
        let mut huge = br#"{"storlab_manifest": 2, "size_bytes": 4, "data_seed": 1, "complete": true, "created_unix_s": 0, "data": ""#.to_vec();
        huge.extend(std::iter::repeat_n(b'x', MANIFEST_MAX_BYTES as usize));
        huge.extend(br#""}"#);
        let (path, metadata) = file_with_manifest(dir.path(), &huge);
        assert!(owned(&path, &metadata).is_none());
        // Version 1 (no inode, no headers) is still storlab's.
        let (path, metadata) = file_with_manifest(
            dir.path(),
            br#"{"storlab_manifest": 1, "size_bytes": 4, "data_seed": 1, "complete": true, "created_unix_s": 0}"#,
        );
        assert_eq!(owned(&path, &metadata).unwrap().storlab_manifest, 1);
    }
    #[test]
    fn a_link_planted_at_the_old_temporary_name_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("passwd");
        std::fs::write(&victim, b"root:x:0:0\n").unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, b"data").unwrap();
        let planted = dir.path().join("data.storlab.json.tmp");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let metadata = std::fs::metadata(&path).unwrap();
        write(
            &path,
            &path,
            &Manifest::started(4, 7, metadata.ino(), 1 << 20),
        )
        .unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"root:x:0:0\n");
        assert!(owned(&path, &metadata).is_some());
        // A link or a pipe at the manifest's own name is not read: not ours, and no wait.
        std::fs::remove_file(manifest_path(&path)).unwrap();
        std::os::unix::fs::symlink(&victim, manifest_path(&path)).unwrap();
        assert!(owned(&path, &metadata).is_none());
        std::fs::remove_file(manifest_path(&path)).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            manifest_path(&path),
            rustix::fs::FileType::Fifo,
            Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap();
        assert!(owned(&path, &metadata).is_none());
    }
}
