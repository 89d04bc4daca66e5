//! Preparation of file targets: a new or stale file is created (or emptied) at its full size
//! and entirely written with unique, incompressible data, every sector sealed with a
//! verification header, and recorded in its manifest (incomplete until the last byte is
//! synced); then the file is opened for the run as its plan says.

use super::direct::{benchmark_flags, direct_alignment, open_with};
use super::found::Found;
use super::manifest::{self, Manifest};
use super::plan::Plan;
use super::{OpenTarget, PrepareReport, TargetAction, TargetError, TargetKind, TargetRequest};
use super::{invalid, io};
use crate::files::NewFile;
use crate::files::dir::{self, Dir};
use crate::files::lock;
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};
use rustix::fs::{Advice, AtFlags, FallocateFlags, OFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::fs::File;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::num::NonZeroU64;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Preparation writes (and seeds its generator) in chunks of this size.
const CHUNK_BYTES: usize = 1 << 20;
/// Preparation calls `progress` whenever this many bytes more were written (and at the end).
const PROGRESS_EVERY_BYTES: u64 = 4 << 20;
/// Buffers in flight between the data generator thread and the writer.
const PREPARE_BUFFERS: usize = 3;
/// Permissions of a new target file before the umask, as `creat` gives them.
const NEW_TARGET_MODE: u32 = 0o666;

/// Carries out `plan` (decided for `request`, found as `found`) and opens the file for the
/// run: creates it (and the scratch directory it goes in), prepares it again, reuses it, or
/// opens it as it is. Everything is done through the descriptors `found` holds and the ones
/// made from them: the path is never looked up again.
pub(super) fn open_file(
    request: &TargetRequest,
    found: Found,
    plan: Plan,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<OpenTarget, TargetError> {
    let path = request.path.as_path();
    let size_bytes = plan.action.size_bytes();
    // A file created here is locked as it is created (an existing one is by `super::open`).
    let mut lock = None;
    let keep = plan.manifest.as_ref();
    let (base, prepare) = match (found, &plan.action) {
        (
            Found::Missing(missing),
            TargetAction::Create {
                create_directory, ..
            },
        ) => {
            let dir = match create_directory {
                Some(directory) => {
                    dir::make(directory)
                        .map_err(|e| super::found::dir_refusal(path, e))?
                        .0
                }
                None => missing.dir,
            };
            let Some(name) = missing.missing.last() else {
                return Err(invalid(path, "does not name a file"));
            };
            let file = create_new(path, &dir, name)?;
            let at = At { dir: &dir, name };
            let report =
                prepare_or_clean_up(request, &file, &at, size_bytes, None, true, progress)?;
            lock = Some(
                file.try_clone()
                    .map_err(|e| io(path, "cannot hold the file", e))?,
            );
            (file, report)
        }
        (Found::Existing(existing), TargetAction::Prepare { .. }) => {
            let file = existing
                .reopen(OFlags::RDWR)
                .map_err(|e| io(path, "cannot open the file for preparation", e))?;
            let at = At {
                dir: &existing.dir,
                name: &existing.name,
            };
            let report =
                prepare_or_clean_up(request, &file, &at, size_bytes, keep, false, progress)?;
            (file, report)
        }
        (Found::Existing(existing), TargetAction::Reuse { data_seed, .. }) => (
            existing.file,
            PrepareReport {
                reused: true,
                data_seed: Some(*data_seed),
                ..PrepareReport::default()
            },
        ),
        (Found::Existing(existing), TargetAction::UseAsIs { .. }) => {
            (existing.file, PrepareReport::default())
        }
        _ => return Err(invalid(path, "a plan does not match what was found")),
    };
    let file = open_with(path, &base, request.writes, benchmark_flags(request))?;
    let logical_block_size = direct_alignment(&file).offset;
    Ok(OpenTarget {
        file,
        path: path.to_path_buf(),
        canonical_path: plan.canonical,
        kind: TargetKind::File,
        size_bytes,
        logical_block_size,
        direct: !request.buffered,
        dsync: request.dsync,
        prepare,
        lock,
    })
}

/// Where a file being prepared is: its directory (open) and its name there.
struct At<'a> {
    dir: &'a Arc<Dir>,
    name: &'a OsStr,
}

/// Prepares the file; a preparation that failed (not one that was interrupted, which is
/// resumed by preparing again) gives back the space it took: a file storlab created is
/// removed with its manifest (only while its name is still this file); an existing one is
/// emptied, still marked incomplete.
fn prepare_or_clean_up(
    request: &TargetRequest,
    file: &File,
    at: &At<'_>,
    size_bytes: u64,
    keep: Option<&Manifest>,
    new_file: bool,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<PrepareReport, TargetError> {
    let how = How {
        size_bytes,
        buffered: request.buffered,
        fresh: request.fresh,
        keep,
    };
    prepare_file(&request.path, file, at, &how, progress).inspect_err(|e| {
        if !matches!(e, TargetError::Io { .. }) {
            return;
        }
        if new_file {
            let ours = (file.metadata().ok())
                .zip(rustix::fs::statat(at.dir.file(), at.name, AtFlags::SYMLINK_NOFOLLOW).ok())
                .is_some_and(|(m, s)| (m.dev(), m.ino()) == (s.st_dev, s.st_ino));
            if ours {
                let _ = rustix::fs::unlinkat(at.dir.file(), at.name, AtFlags::empty());
                manifest::remove(at.dir, at.name);
            }
        } else {
            let _ = file.set_len(0);
        }
    })
}

/// How a file is prepared.
struct How<'a> {
    /// Its size.
    size_bytes: u64,
    /// Written through the page cache (else O_DIRECT).
    buffered: bool,
    /// Preallocated, not written ([`TargetRequest::fresh`]).
    fresh: bool,
    /// The trusted manifest it had, whose identity it keeps.
    keep: Option<&'a Manifest>,
}

/// A data seed unique to this preparation.
fn fresh_data_seed(path: &Path) -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState carries per-process random keys.
    let mut hasher = RandomState::new().build_hasher();
    path.hash(&mut hasher);
    std::process::id().hash(&mut hasher);
    COUNTER.fetch_add(1, Ordering::Relaxed).hash(&mut hasher);
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos())
        .hash(&mut hasher);
    hasher.finish()
}

fn splitmix64(value: u64) -> u64 {
    let mut z = value.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The `CHUNK_BYTES` of `storage` (`CHUNK_BYTES + align` long) that start at an address
/// aligned to `align` (a power of two), as O_DIRECT needs.
fn aligned_chunk_mut(storage: &mut [u8], align: usize) -> &mut [u8] {
    let pad = (align - storage.as_ptr().addr() % align) % align;
    let end = (pad + CHUNK_BYTES).min(storage.len());
    &mut storage[pad.min(end)..end]
}

/// Fills chunk `chunk_index` of the file with data seed `data_seed`, every sector sealed with
/// a verification header naming the file (its data seed) and the sector's offset.
fn fill_chunk(data_seed: u64, chunk_index: u64, chunk: &mut [u8]) {
    SmallRng::seed_from_u64(splitmix64(data_seed ^ splitmix64(chunk_index))).fill_bytes(chunk);
    crate::engine::verify::seal_prepared(chunk, data_seed, chunk_index * CHUNK_BYTES as u64);
}

/// Prepares `file` (at `at`, requested as `path`) as `how` says: bound to its manifest, the
/// manifest written incomplete, its space reserved, entirely written with unique
/// pseudo-random data (unless fresh), synced, then marked complete.
fn prepare_file(
    path: &Path,
    file: &File,
    at: &At<'_>,
    how: &How<'_>,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<PrepareReport, TargetError> {
    let start = Instant::now();
    let size_bytes = how.size_bytes;
    let binding =
        manifest::bind(file, how.keep).map_err(|e| io(path, "cannot read the metadata", e))?;
    let data_seed = fresh_data_seed(path);
    let mut manifest = Manifest::started(size_bytes, data_seed, binding, CHUNK_BYTES as u64);
    // Marked incomplete before the first byte changes, so an interruption is noticed.
    manifest::write(path, at.dir, at.name, &manifest)?;

    reserve_space(path, file, size_bytes)?;
    if how.fresh {
        // A new log segment: preallocated, unwritten, nothing of it in the page cache. Its
        // manifest stays incomplete: it holds no data of storlab's to reuse or verify.
        let _ = rustix::fs::fadvise(file, 0, NonZeroU64::new(size_bytes), Advice::DontNeed);
        progress(size_bytes, size_bytes);
        return Ok(PrepareReport {
            seconds: start.elapsed().as_secs_f64(),
            ..PrepareReport::default()
        });
    }
    let direct = if how.buffered {
        None
    } else {
        Some(open_with(
            path,
            file,
            true,
            OFlags::CLOEXEC | OFlags::DIRECT,
        )?)
    };
    write_data(path, file, direct.as_ref(), size_bytes, data_seed, progress)?;
    rustix::fs::fdatasync(file).map_err(|e| io(path, "cannot sync the written data", e.into()))?;
    drop(direct);
    // Leave no prepared data in the page cache to flatter buffered reads (advice only).
    let _ = rustix::fs::fadvise(file, 0, NonZeroU64::new(size_bytes), Advice::DontNeed);

    manifest.complete = true;
    manifest::write(path, at.dir, at.name, &manifest)?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(PrepareReport {
        reused: false,
        written_bytes: size_bytes,
        seconds,
        mb_per_s: if seconds > 0.0 {
            size_bytes as f64 / seconds / 1e6
        } else {
            0.0
        },
        data_seed: Some(data_seed),
    })
}

/// Creates the new file `name` in `dir` (requested as `path`): under a random name, locked,
/// then given its name only if none is there, so no other run ever sees it unlocked, and one
/// that created it meanwhile is named.
fn create_new(path: &Path, dir: &Arc<Dir>, name: &OsStr) -> Result<File, TargetError> {
    let create = |e: std::io::Error| io(path, "cannot create the file", e);
    let new = NewFile::create_in(Arc::clone(dir), name, NEW_TARGET_MODE).map_err(create)?;
    if let Err(error) = lock::exclusive(new.file()) {
        return Err(super::lock_refusal(path, error));
    }
    new.publish().map_err(|e| {
        let holder = (e.kind() == std::io::ErrorKind::AlreadyExists)
            .then(|| rustix::fs::statat(dir.file(), name, AtFlags::empty()).ok())
            .flatten()
            .and_then(|s| lock::holder_of(s.st_dev, s.st_ino));
        match holder {
            Some(who) => super::lock_refusal(path, lock::LockError::Held(who)),
            None => create(e),
        }
    })
}

/// Drops the old contents of `file`, then reserves `size_bytes` for it (failing early when
/// the filesystem lacks the space) and sets its length.
fn reserve_space(path: &Path, file: &File, size_bytes: u64) -> Result<(), TargetError> {
    file.set_len(0)
        .map_err(|e| io(path, "cannot truncate the file", e))?;
    let available = rustix::fs::fstatvfs(file).map(|v| v.f_bavail * v.f_frsize);
    match rustix::fs::fallocate(file, FallocateFlags::empty(), 0, size_bytes) {
        Err(errno) if errno == Errno::NOSPC || errno == Errno::FBIG => {
            let free = available
                .map(|bytes| {
                    format!(
                        "; the filesystem has {} free",
                        crate::units::format_size(bytes)
                    )
                })
                .unwrap_or_default();
            return Err(io(
                path,
                format!(
                    "cannot allocate {} ({size_bytes} bytes){free}; free some space or lower the size",
                    crate::units::format_size(size_bytes)
                ),
                errno.into(),
            ));
        }
        // Unsupported by the filesystem: writing allocates.
        Ok(()) | Err(_) => {}
    }
    file.set_len(size_bytes).map_err(|e| {
        io(
            path,
            format!("cannot set the file length to {size_bytes} bytes"),
            e,
        )
    })
}

/// Writes all `size_bytes` of `file` in order with data seed `data_seed`: the aligned part of
/// each chunk through `direct` (the file opened with O_DIRECT, unless the run is buffered),
/// the rest through `file`. `progress` hears of the bytes written; when it returns false the
/// preparation stops, interrupted.
fn write_data(
    path: &Path,
    file: &File,
    direct: Option<&File>,
    size_bytes: u64,
    data_seed: u64,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<(), TargetError> {
    let alignment = direct_alignment(file);
    let offset_align = u64::from(alignment.offset.max(1));
    let memory_align = usize::try_from(alignment.memory.max(alignment.offset).max(4096))
        .unwrap_or(4096)
        .next_power_of_two();
    let chunks = size_bytes.div_ceil(CHUNK_BYTES as u64);
    let chunk_len = |index: u64| {
        let remaining = size_bytes.saturating_sub(index * CHUNK_BYTES as u64);
        usize::try_from(remaining.min(CHUNK_BYTES as u64)).unwrap_or(0)
    };

    // A generator thread fills buffers while this thread writes the previous ones, in order.
    std::thread::scope(|scope| -> Result<(), TargetError> {
        let (filled_sender, filled) = mpsc::sync_channel::<Vec<u8>>(PREPARE_BUFFERS);
        let (empty_sender, empty) = mpsc::sync_channel::<Vec<u8>>(PREPARE_BUFFERS);
        for _ in 0..PREPARE_BUFFERS {
            let _ = empty_sender.send(vec![0u8; CHUNK_BYTES + memory_align]);
        }
        let generator = move || {
            for index in 0..chunks {
                let Ok(mut storage) = empty.recv() else {
                    return;
                };
                let chunk = &mut aligned_chunk_mut(&mut storage, memory_align)[..chunk_len(index)];
                fill_chunk(data_seed, index, chunk);
                if filled_sender.send(storage).is_err() {
                    return;
                }
            }
        };
        // A panic of the generator is caught (and named) in its own thread; the writer below
        // then finds its channel closed and fails the preparation with the reason.
        let failure = crate::fault::Failure::default();
        let caught = failure.clone();
        std::thread::Builder::new()
            .name("storlab-prepare".into())
            .spawn_scoped(scope, move || caught.guard("the data generator", generator))
            .map_err(|e| io(path, "cannot start the data generator thread", e))?;

        let mut done = 0u64;
        let mut reported = 0u64;
        for index in 0..chunks {
            let Ok(mut storage) = filled.recv() else {
                return Err(io(
                    path,
                    "preparing the data",
                    std::io::Error::other(
                        failure
                            .reason()
                            .unwrap_or_else(|| "the data generator thread stopped".into()),
                    ),
                ));
            };
            let len = chunk_len(index);
            let chunk = &aligned_chunk_mut(&mut storage, memory_align)[..len];
            // O_DIRECT for the aligned part; a short unaligned tail goes through the page cache.
            let direct_len = match direct {
                Some(_) if done % offset_align == 0 => len - (len as u64 % offset_align) as usize,
                _ => 0,
            };
            if let (Some(direct), true) = (direct, direct_len > 0) {
                direct
                    .write_all_at(&chunk[..direct_len], done)
                    .map_err(|e| io(path, format!("cannot write data at offset {done}"), e))?;
            }
            if direct_len < len {
                let offset = done + direct_len as u64;
                file.write_all_at(&chunk[direct_len..], offset)
                    .map_err(|e| io(path, format!("cannot write data at offset {offset}"), e))?;
            }
            let _ = empty_sender.send(storage);
            done += len as u64;
            if done - reported >= PROGRESS_EVERY_BYTES || done == size_bytes {
                reported = done;
                if !progress(done, size_bytes) {
                    return Err(TargetError::Interrupted {
                        path: path.to_path_buf(),
                        done_bytes: done,
                        total_bytes: size_bytes,
                    });
                }
            }
        }
        // Returning drops this side's channel ends, so the generator always ends.
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{MIB, always, manifest_json, request};
    use super::super::{PrepareReason, TargetKind, open, preview};
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn a_fresh_file_is_preallocated_unwritten_and_made_anew_each_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("wal.log");
        let mut req = request(&path, Some(MIB));
        req.buffered = true;
        req.fresh = true;
        let first = preview(&req).outcome.expect("a plan");
        assert!(
            matches!(first, TargetAction::Create { fresh: true, .. }),
            "{first:?}"
        );
        assert!(
            first.to_string().contains("preallocated, not written"),
            "{first}"
        );
        let target = open(&req, &mut always).expect("open");
        assert_eq!((target.size_bytes, target.prepare.written_bytes), (MIB, 0));
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), MIB);
        // Reserved (where the filesystem can), and nothing of storlab's data in it: it reads
        // back as zeros.
        assert!(
            meta.blocks() * 512 >= MIB || meta.blocks() == 0,
            "{}",
            meta.blocks()
        );
        let mut head = vec![1u8; 4096];
        target.file.read_exact_at(&mut head, 0).unwrap();
        assert!(head.iter().all(|&b| b == 0));
        drop(target);
        // The next run makes it anew rather than reusing it; a run that is not fresh
        // prepares it (fills it) again, never takes it as filled.
        let again = preview(&req).outcome.expect("a plan");
        assert!(
            matches!(
                again,
                TargetAction::Prepare {
                    reason: PrepareReason::Fresh,
                    ..
                }
            ),
            "{again:?}"
        );
        assert!(
            again
                .to_string()
                .starts_with("made anew, preallocated and not written"),
            "{again}"
        );
        req.fresh = false;
        let filled = preview(&req).outcome.expect("a plan");
        assert!(
            matches!(
                filled,
                TargetAction::Prepare {
                    reason: PrepareReason::Incomplete,
                    ..
                }
            ),
            "{filled:?}"
        );
    }

    #[test]
    fn new_file_is_created_at_full_size_and_fully_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("data.bin");
        let size = 5 * MIB + 12 * 4096;
        let req = request(&path, Some(size));
        let target = open(&req, &mut always).expect("open");

        assert_eq!(target.kind, TargetKind::File);
        assert_eq!(target.size_bytes, size);
        assert_eq!(target.direct, !req.buffered);
        assert!(target.logical_block_size >= 512);
        assert!(target.logical_block_size.is_power_of_two());
        assert_eq!(target.canonical_path, std::fs::canonicalize(&path).unwrap());
        assert!(!target.prepare.reused);
        assert_eq!(target.prepare.written_bytes, size);
        assert!(target.prepare.seconds > 0.0);
        assert!(target.prepare.mb_per_s > 0.0);

        let metadata = std::fs::metadata(&path).unwrap();
        assert_eq!(metadata.len(), size);
        assert!(
            metadata.blocks() * 512 >= size,
            "sparse: {} blocks",
            metadata.blocks()
        );

        let manifest = manifest_json(&path);
        assert_eq!(manifest["storlab_manifest"], manifest::MANIFEST_VERSION);
        assert_eq!(manifest["size_bytes"], size);
        assert_eq!(manifest["complete"], true);
        assert!(manifest["created_unix_s"].as_u64().unwrap() > 0);
        assert_eq!(manifest["data_seed"].as_u64(), target.prepare.data_seed);

        let data = std::fs::read(&path).unwrap();
        assert!(data.iter().any(|&b| b != 0));
        assert_ne!(data[..4096], data[4096..8192]);
        let blocks: HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.len(), data.len() / 4096, "every 4 KiB block differs");
        // Every sector carries its verification header: the magic, and its own offset.
        for (i, sector) in data.chunks(crate::engine::verify::SECTOR).enumerate() {
            assert_eq!(sector[..8], crate::engine::verify::MAGIC, "sector {i}");
            assert_eq!(
                u64::from_le_bytes(sector[24..32].try_into().unwrap()),
                (i * crate::engine::verify::SECTOR) as u64
            );
        }
        // Roughly uniform bytes after each sector's header: incompressible (the header is
        // 48 of every 512 bytes).
        let mut counts = [0u64; 256];
        let header = crate::engine::verify::HEADER_BYTES;
        for sector in data.chunks(crate::engine::verify::SECTOR) {
            for &b in &sector[header..] {
                counts[usize::from(b)] += 1;
            }
        }
        let expected = counts.iter().sum::<u64>() / 256;
        assert!(
            counts
                .iter()
                .all(|&c| c > expected * 9 / 10 && c < expected * 11 / 10)
        );

        // Open flags are the requested ones.
        let flags = rustix::fs::fcntl_getfl(&target.file).unwrap();
        assert_eq!(flags.contains(OFlags::DIRECT), target.direct);
        assert!(!flags.contains(OFlags::DSYNC));
        assert!(flags.contains(OFlags::RDWR));
    }

    #[test]
    fn two_files_of_the_same_size_differ() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        let ta = open(&request(&a, Some(MIB)), &mut always).unwrap();
        let tb = open(&request(&b, Some(MIB)), &mut always).unwrap();
        assert_ne!(ta.prepare.data_seed, tb.prepare.data_seed);
        let da = std::fs::read(&a).unwrap();
        let db = std::fs::read(&b).unwrap();
        assert!(da.chunks(4096).zip(db.chunks(4096)).all(|(x, y)| x != y));
    }

    #[test]
    fn unaligned_size_is_written_completely() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("odd");
        let size = MIB + 4096 + 100;
        let target = open(&request(&path, Some(size)), &mut always).unwrap();
        assert_eq!(target.size_bytes, size);
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len() as u64, size);
        assert!(data[data.len() - 100..].iter().any(|&b| b != 0));
        assert!(
            data[MIB as usize..MIB as usize + 4096]
                .iter()
                .any(|&b| b != 0)
        );
    }

    #[test]
    fn interrupted_preparation_leaves_the_manifest_incomplete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("interrupted");
        let size = 16 * MIB;
        match open(&request(&path, Some(size)), &mut |_, _| false) {
            Err(TargetError::Interrupted {
                path: p,
                done_bytes,
                total_bytes,
            }) => {
                assert_eq!(p, path);
                assert!(done_bytes > 0 && done_bytes < size);
                assert_eq!(total_bytes, size);
            }
            other => panic!("expected Interrupted, got {other:?}"),
        }
        assert_eq!(manifest_json(&path)["complete"], false);
        // Ours: no guard; the next run prepares it again.
        assert_eq!(
            preview(&request(&path, Some(size))).outcome.unwrap(),
            TargetAction::Prepare {
                size_bytes: size,
                reason: PrepareReason::Incomplete
            }
        );
        let target = open(&request(&path, Some(size)), &mut always).unwrap();
        assert!(!target.prepare.reused);
        assert_eq!(manifest_json(&path)["complete"], true);
    }

    #[test]
    fn progress_is_reported_regularly_and_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress");
        let size = 9 * MIB + 4096;
        let mut calls = Vec::new();
        open(&request(&path, Some(size)), &mut |done, total| {
            calls.push((done, total));
            true
        })
        .unwrap();
        assert_eq!(calls.last(), Some(&(size, size)));
        let mut previous = 0;
        for &(done, total) in &calls {
            assert_eq!(total, size);
            assert!(done > previous && done - previous <= 64 * MIB);
            previous = done;
        }
    }

    #[test]
    fn chunk_data_depends_on_seed_and_index() {
        let mut a = vec![0u8; 8192];
        let mut b = vec![0u8; 8192];
        fill_chunk(1, 0, &mut a);
        fill_chunk(1, 1, &mut b);
        assert_ne!(a, b);
        fill_chunk(2, 0, &mut b);
        assert_ne!(a, b);
        fill_chunk(1, 0, &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn failed_preparation_of_a_new_file_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("too-big");
        // Larger than the filesystem's free space: refused before anything is created.
        let error = open(&request(&path, Some(1 << 62)), &mut always).unwrap_err();
        assert!(matches!(error, TargetError::Invalid { .. }), "{error}");
        assert!(error.to_string().contains("free"), "{error}");
        assert!(!path.exists());
        // Past that check (the space taken meanwhile, as by another process), the failed
        // preparation gives the space back: the new file and its manifest are removed.
        let create = TargetAction::Create {
            size_bytes: 1 << 62,
            create_directory: None,
            fresh: false,
        };
        let plan = Plan {
            canonical: path.clone(),
            kind: TargetKind::File,
            action: create,
            manifest: None,
        };
        let found = super::super::found::find(&path).unwrap();
        let error = open_file(&request(&path, Some(1 << 62)), found, plan, &mut always)
            .map(|_| ())
            .unwrap_err();
        assert!(matches!(error, TargetError::Io { .. }), "{error}");
        assert!(!path.exists());
        assert!(!manifest::manifest_path(&path).exists());
    }
}
