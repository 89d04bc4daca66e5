//! What `--dry-run` can say about each target before anything happens: the [`TargetAction`]
//! that [`super::open`] would carry out, or the error it would refuse with, and the mount the
//! target lives on. Decided by the same rules as `open` (`plan`), without writing anything.

use super::plan::{self, PrepareReason, TargetAction};
use super::{TargetError, TargetKind, TargetRequest};
use crate::stats::host::{self, Placement};
use crate::units::format_size;
use std::fmt;
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;

/// What opening one target would do, found without changing anything.
#[derive(Debug)]
pub struct TargetPreview {
    /// Path as requested.
    pub path: PathBuf,
    /// Path after resolving symlinks, when it can be told (for a file still to be created:
    /// where it will be).
    pub canonical_path: Option<PathBuf>,
    /// File or block device, when the target exists or will be created.
    pub kind: Option<TargetKind>,
    /// The filesystem, mount point and block device the target lives on (for a path that does
    /// not exist: those of its nearest existing directory); empty fields when unknown.
    pub placement: Placement,
    /// What `open` would do; or the error it would return: [`TargetError::Guarded`] with the
    /// guard's findings, [`TargetError::Invalid`] with the same message, or
    /// [`TargetError::Io`] when the target could not be examined.
    pub outcome: Result<TargetAction, TargetError>,
}

/// What `super::open` would do with `request`, without writing or creating anything (files
/// and devices are at most opened read-only to read their manifest or first bytes).
pub fn preview(request: &TargetRequest) -> TargetPreview {
    let placement = host::placement(&request.path);
    match super::found::find(&request.path).and_then(|found| plan::decide(request, &found)) {
        Ok(plan) => TargetPreview {
            path: request.path.clone(),
            canonical_path: Some(plan.canonical),
            kind: Some(plan.kind),
            placement,
            outcome: Ok(plan.action),
        },
        Err(error) => {
            let canonical_path = std::fs::canonicalize(&request.path).ok();
            let kind = canonical_path
                .as_ref()
                .and_then(|c| std::fs::metadata(c).ok())
                .and_then(|m| {
                    if m.file_type().is_block_device() {
                        Some(TargetKind::BlockDevice)
                    } else if m.is_file() {
                        Some(TargetKind::File)
                    } else {
                        None
                    }
                });
            TargetPreview {
                path: request.path.clone(),
                canonical_path,
                kind,
                placement,
                outcome: Err(error),
            }
        }
    }
}

/// The filesystems that the targets to create or prepare do not fit in together (each alone
/// may): one sentence each, naming the filesystem, what the targets need and what is free.
pub(crate) fn shortfalls(previews: &[TargetPreview]) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    // (device, mount, bytes to write, free)
    let mut needs: Vec<(u64, String, u64, u64)> = Vec::new();
    for p in previews {
        let bytes = match &p.outcome {
            Ok(TargetAction::Create { size_bytes, .. }) => *size_bytes,
            Ok(TargetAction::Prepare { size_bytes, .. }) => {
                let held = std::fs::metadata(&p.path).map_or(0, |m| m.blocks() * 512);
                size_bytes.saturating_sub(held)
            }
            _ => continue,
        };
        let Some(at) = p
            .canonical_path
            .as_ref()
            .unwrap_or(&p.path)
            .ancestors()
            .find(|a| a.exists())
        else {
            continue;
        };
        let (Ok(meta), Ok(fs)) = (std::fs::metadata(at), rustix::fs::statvfs(at)) else {
            continue;
        };
        let free = fs.f_bavail.saturating_mul(fs.f_frsize);
        let mount = p
            .placement
            .mount_point
            .as_ref()
            .map_or_else(|| at.display().to_string(), |m| m.display().to_string());
        match needs.iter_mut().find(|n| n.0 == meta.dev()) {
            Some(n) => n.2 = n.2.saturating_add(bytes),
            None => needs.push((meta.dev(), mount, bytes, free)),
        }
    }
    needs
        .into_iter()
        .filter(|n| n.2 > n.3)
        .map(|(_, mount, bytes, free)| {
            format!(
                "the targets to write on the filesystem of {mount} need {} together, and it has {} free; free some space, give smaller sizes, or spread them over filesystems",
                format_size(bytes),
                format_size(free)
            )
        })
        .collect()
}

/// One line for a dry run: "a new file, created and fully written (64 MiB)".
impl fmt::Display for TargetAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetAction::Create {
                size_bytes,
                create_directory,
                fresh,
            } => {
                write!(
                    f,
                    "a new file, created and {} ({})",
                    if *fresh {
                        "preallocated, not written"
                    } else {
                        "fully written"
                    },
                    format_size(*size_bytes)
                )?;
                if let Some(directory) = create_directory {
                    write!(f, " in the new directory {}", directory.display())?;
                }
                Ok(())
            }
            TargetAction::Reuse { size_bytes, .. } => write!(
                f,
                "prepared by storlab at this size: reused as it is ({})",
                format_size(*size_bytes)
            ),
            TargetAction::Prepare {
                size_bytes,
                reason: PrepareReason::Fresh,
            } => write!(
                f,
                "made anew, preallocated and not written ({}): {}",
                format_size(*size_bytes),
                PrepareReason::Fresh
            ),
            TargetAction::Prepare { size_bytes, reason } => write!(
                f,
                "prepared again and fully written ({}): {reason}",
                format_size(*size_bytes)
            ),
            TargetAction::UseAsIs {
                size_bytes,
                writes,
                destroys,
            } => {
                let size = format_size(*size_bytes);
                match (writes, destroys.is_empty()) {
                    (false, _) => write!(f, "used as it is, read only ({size})"),
                    (true, true) => write!(f, "used as it is and written ({size})"),
                    (true, false) => write!(
                        f,
                        "used as it is and written ({size}); --destroy-data destroys: {}",
                        destroys.join("; ")
                    ),
                }
            }
        }
    }
}

/// Why a file is prepared again: "it was prepared at another size (1 MiB)".
impl fmt::Display for PrepareReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrepareReason::OtherSize { prepared_bytes } => write!(
                f,
                "it was prepared at another size ({})",
                format_size(*prepared_bytes)
            ),
            PrepareReason::Incomplete => write!(f, "its preparation did not finish"),
            PrepareReason::OldManifest { version } => write!(
                f,
                "an older storlab prepared it (manifest version {version})"
            ),
            PrepareReason::Empty => write!(f, "it is empty"),
            PrepareReason::Fresh => {
                write!(f, "each run starts on a new file, as a log segment does")
            }
            PrepareReason::DestroyData { existing_bytes } => write!(
                f,
                "storlab did not create it ({existing_bytes} bytes) and --destroy-data was given"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{MIB, always, manifest_json, request, set_manifest};
    use super::super::{PrepareReport, SCRATCH_DIR, open};
    use super::*;
    use std::path::Path;

    /// `preview` of `request`, after checking it changes nothing in `dir`.
    fn looked(dir: &Path, request: &TargetRequest) -> TargetPreview {
        let before = listing(dir);
        let preview = preview(request);
        assert_eq!(listing(dir), before, "preview changed {}", dir.display());
        preview
    }

    /// Every path under `dir` with its length and modification time.
    fn listing(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let metadata = entry.metadata().unwrap();
            out.push((entry.path(), metadata.len(), metadata.modified().unwrap()));
            if metadata.is_dir() {
                out.extend(listing(&entry.path()));
            }
        }
        out.sort();
        out
    }

    /// The refusal both `preview` and `open` give for `request`, as `open`'s message.
    #[track_caller]
    fn refused(dir: &Path, request: &TargetRequest) -> TargetError {
        let previewed = looked(dir, request).outcome.expect_err("preview refuses");
        let opened = open(request, &mut always).expect_err("open refuses");
        assert_eq!(previewed.to_string(), opened.to_string());
        assert_eq!(
            std::mem::discriminant(&previewed),
            std::mem::discriminant(&opened)
        );
        opened
    }

    fn message(error: &TargetError) -> &str {
        match error {
            TargetError::Invalid { message, .. } => message,
            other => panic!("expected Invalid, got {other}"),
        }
    }

    #[test]
    fn new_file_is_created_and_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.dat");
        let p = looked(dir.path(), &request(&path, Some(2 * MIB)));
        let expected = TargetAction::Create {
            size_bytes: 2 * MIB,
            create_directory: None,
            fresh: false,
        };
        assert_eq!(p.outcome.unwrap(), expected);
        assert_eq!(p.kind, Some(TargetKind::File));
        assert_eq!(
            p.canonical_path.unwrap(),
            std::fs::canonicalize(dir.path()).unwrap().join("new.dat")
        );
        assert!(p.placement.mount_point.is_some(), "{:?}", p.placement);
        assert!(!path.exists());
        assert_eq!(
            expected.to_string(),
            "a new file, created and fully written (2 MiB)"
        );

        let target = open(&request(&path, Some(2 * MIB)), &mut always).unwrap();
        assert_eq!(target.prepare.written_bytes, 2 * MIB);
    }

    #[test]
    fn new_file_under_the_scratch_directory_creates_it() {
        let relative = Path::new(SCRATCH_DIR).join("preview-unit-test-never-created/x.dat");
        let p = preview(&request(&relative, Some(MIB)));
        let directory = Path::new(SCRATCH_DIR).join("preview-unit-test-never-created");
        assert_eq!(
            p.outcome.unwrap(),
            TargetAction::Create {
                size_bytes: MIB,
                create_directory: Some(directory.clone()),
                fresh: false,
            }
        );
        assert_eq!(
            p.canonical_path.unwrap(),
            std::env::current_dir().unwrap().join(&relative)
        );
        assert!(!directory.exists());
    }

    #[test]
    fn missing_directory_elsewhere_is_refused_and_nothing_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("typo/mnt");
        let error = refused(dir.path(), &request(&missing.join("x.dat"), Some(MIB)));
        let text = message(&error);
        assert!(
            text.contains(&format!(
                "the directory {} does not exist",
                missing.display()
            )),
            "{text}"
        );
        assert!(text.contains("mount the storage"), "{text}");
        assert!(!dir.path().join("typo").exists());
        // A relative path elsewhere too, and `..` out of the scratch directory.
        let outside = Path::new(SCRATCH_DIR).join("../storlab-unit-test-typo/x.dat");
        let error = open(&request(&outside, Some(MIB)), &mut always).unwrap_err();
        assert!(message(&error).contains("does not exist"), "{error}");
        assert!(!Path::new("storlab-unit-test-typo").exists());
    }

    #[test]
    fn prepared_file_of_that_size_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reuse");
        let first = open(&request(&path, Some(2 * MIB)), &mut always).unwrap();
        let before = std::fs::read(&path).unwrap();
        drop(first);
        let seed = manifest_json(&path)["data_seed"].as_u64().unwrap();
        let reuse = TargetAction::Reuse {
            size_bytes: 2 * MIB,
            data_seed: seed,
        };
        assert_eq!(
            looked(dir.path(), &request(&path, Some(2 * MIB)))
                .outcome
                .unwrap(),
            reuse
        );
        // Without a size, the prepared size is used.
        assert_eq!(
            looked(dir.path(), &request(&path, None)).outcome.unwrap(),
            reuse
        );

        let mut calls = 0;
        let second = open(&request(&path, Some(2 * MIB)), &mut |_, _| {
            calls += 1;
            true
        })
        .unwrap();
        assert!(second.prepare.reused);
        assert_eq!(second.prepare.written_bytes, 0);
        assert_eq!(calls, 0);
        assert_eq!(second.size_bytes, 2 * MIB);
        assert_eq!(second.prepare.data_seed, Some(seed));
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let third = open(&request(&path, None), &mut always).unwrap();
        assert!(third.prepare.reused);
        assert_eq!(third.size_bytes, 2 * MIB);
    }

    #[test]
    fn storlab_file_is_prepared_again_at_another_size_when_incomplete_or_old() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("again");
        let first = open(&request(&path, Some(2 * MIB)), &mut always).unwrap();

        let other_size = TargetAction::Prepare {
            size_bytes: 3 * MIB,
            reason: PrepareReason::OtherSize {
                prepared_bytes: 2 * MIB,
            },
        };
        let p = looked(dir.path(), &request(&path, Some(3 * MIB)));
        assert_eq!(p.outcome.unwrap(), other_size);
        assert_eq!(
            other_size.to_string(),
            "prepared again and fully written (3 MiB): it was prepared at another size (2 MiB)"
        );
        let second = open(&request(&path, Some(3 * MIB)), &mut always).unwrap();
        assert!(!second.prepare.reused);
        assert_eq!(second.prepare.written_bytes, 3 * MIB);
        assert_ne!(first.prepare.data_seed, second.prepare.data_seed);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 3 * MIB);
        let smaller = open(&request(&path, Some(MIB)), &mut always).unwrap();
        assert!(!smaller.prepare.reused);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), MIB);

        set_manifest(&path, "complete", false.into());
        assert_eq!(
            looked(dir.path(), &request(&path, Some(MIB)))
                .outcome
                .unwrap(),
            TargetAction::Prepare {
                size_bytes: MIB,
                reason: PrepareReason::Incomplete
            }
        );
        open(&request(&path, Some(MIB)), &mut always).unwrap();

        set_manifest(&path, "storlab_manifest", 1.into());
        let old = looked(dir.path(), &request(&path, Some(MIB)))
            .outcome
            .unwrap();
        assert_eq!(
            old,
            TargetAction::Prepare {
                size_bytes: MIB,
                reason: PrepareReason::OldManifest { version: 1 }
            }
        );
        assert!(old.to_string().ends_with("manifest version 1)"), "{old}");
        let again = open(&request(&path, Some(MIB)), &mut always).unwrap();
        assert_eq!(again.prepare.written_bytes, MIB);
        assert_eq!(
            manifest_json(&path)["storlab_manifest"],
            super::super::manifest::MANIFEST_VERSION
        );
        assert_eq!(manifest_json(&path)["complete"], true);
    }

    #[test]
    fn empty_file_is_prepared_without_the_guard() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty");
        std::fs::write(&path, b"").unwrap();
        let error = refused(dir.path(), &request(&path, None));
        assert!(
            message(&error).contains("no size given for empty file"),
            "{error}"
        );
        assert_eq!(
            looked(dir.path(), &request(&path, Some(MIB)))
                .outcome
                .unwrap(),
            TargetAction::Prepare {
                size_bytes: MIB,
                reason: PrepareReason::Empty
            }
        );
        let target = open(&request(&path, Some(MIB)), &mut always).unwrap();
        assert_eq!(target.prepare.written_bytes, MIB);
    }

    #[test]
    fn foreign_file_is_guarded_for_writes_read_as_it_is_or_destroyed_when_told() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("precious.db");
        let contents: Vec<u8> = (0..MIB as usize).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &contents).unwrap();
        let finding = "the file exists and was not created by storlab (1048576 bytes)";

        match refused(dir.path(), &request(&path, None)) {
            TargetError::Guarded { path: p, findings } => {
                assert_eq!(p, path);
                assert_eq!(findings, [finding]);
            }
            other => panic!("expected Guarded, got {other:?}"),
        }
        assert_eq!(std::fs::read(&path).unwrap(), contents);
        assert!(!super::super::manifest::manifest_path(&path).exists());

        // Read-only: used as it is, even with --destroy-data.
        let mut read_only = request(&path, None);
        read_only.writes = false;
        let as_is = TargetAction::UseAsIs {
            size_bytes: MIB,
            writes: false,
            destroys: Vec::new(),
        };
        assert_eq!(looked(dir.path(), &read_only).outcome.unwrap(), as_is);
        assert_eq!(as_is.to_string(), "used as it is, read only (1 MiB)");
        let target = open(&read_only, &mut always).unwrap();
        assert_eq!(target.size_bytes, MIB);
        assert_eq!(target.prepare, PrepareReport::default());
        let flags = rustix::fs::fcntl_getfl(&target.file).unwrap();
        assert!(!flags.contains(rustix::fs::OFlags::RDWR));
        read_only.destroy_data = true;
        assert_eq!(looked(dir.path(), &read_only).outcome.unwrap(), as_is);
        assert_eq!(
            open(&read_only, &mut always).unwrap().prepare,
            PrepareReport::default()
        );
        read_only.destroy_data = false;
        read_only.size_bytes = Some(MIB / 2);
        assert_eq!(open(&read_only, &mut always).unwrap().size_bytes, MIB / 2);
        read_only.size_bytes = Some(2 * MIB);
        let error = refused(dir.path(), &read_only);
        assert!(
            message(&error).contains("fewer than the requested size"),
            "{error}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), contents);

        // Writes with --destroy-data: recreated (at its own size when none is given).
        let mut destroy = request(&path, None);
        destroy.destroy_data = true;
        assert_eq!(
            looked(dir.path(), &destroy).outcome.unwrap(),
            TargetAction::Prepare {
                size_bytes: MIB,
                reason: PrepareReason::DestroyData {
                    existing_bytes: MIB
                }
            }
        );
        let target = open(&destroy, &mut always).unwrap();
        assert_eq!(target.prepare.written_bytes, MIB);
        assert_ne!(std::fs::read(&path).unwrap(), contents);
        assert_eq!(manifest_json(&path)["complete"], true);
        assert!(matches!(
            preview(&request(&path, None)).outcome,
            Ok(TargetAction::Reuse { .. })
        ));
    }

    #[test]
    fn unparsable_or_foreign_manifest_counts_as_absent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, b"someone's data").unwrap();
        std::fs::write(super::super::manifest::manifest_path(&path), b"{ not json").unwrap();
        assert!(matches!(
            refused(dir.path(), &request(&path, Some(MIB))),
            TargetError::Guarded { .. }
        ));
        // A manifest of another file that was replaced since (different inode).
        let other = dir.path().join("other");
        open(&request(&other, Some(MIB)), &mut always).unwrap();
        std::fs::write(dir.path().join("replacement"), b"new contents").unwrap();
        std::fs::rename(dir.path().join("replacement"), &other).unwrap();
        assert!(matches!(
            refused(dir.path(), &request(&other, Some(MIB))),
            TargetError::Guarded { .. }
        ));
    }

    #[test]
    fn symlink_behaves_like_the_file_and_a_dangling_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.bin");
        let link = dir.path().join("link.bin");
        open(&request(&real, Some(MIB)), &mut always).unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let p = looked(dir.path(), &request(&link, Some(MIB)));
        assert!(matches!(p.outcome, Ok(TargetAction::Reuse { .. })));
        assert_eq!(p.canonical_path, std::fs::canonicalize(&real).ok());
        let target = open(&request(&link, Some(MIB)), &mut always).unwrap();
        assert!(target.prepare.reused);
        assert_eq!(target.path, link);
        assert_eq!(target.canonical_path, std::fs::canonicalize(&real).unwrap());
        assert!(!super::super::manifest::manifest_path(&link).exists());

        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let error = refused(dir.path(), &request(&dangling, Some(MIB)));
        assert!(message(&error).contains("symbolic link"), "{error}");
    }

    #[test]
    fn missing_size_zero_size_and_directories_are_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nosize");
        let error = refused(dir.path(), &request(&path, None));
        let text = error.to_string();
        assert!(
            text.contains(&format!("no size given for new file {}", path.display())),
            "{text}"
        );
        assert!(text.contains("--size"), "{text}");
        refused(dir.path(), &request(&path, Some(0)));
        assert!(!path.exists());

        let error = refused(dir.path(), &request(dir.path(), Some(MIB)));
        assert!(error.to_string().contains("is a directory"), "{error}");
        let p = preview(&request(dir.path(), Some(MIB)));
        assert_eq!(p.kind, None);
        assert!(p.canonical_path.is_some());
    }

    #[test]
    fn files_on_pseudo_filesystems_are_refused_naming_the_filesystem() {
        let mem = Path::new("/proc/self/mem");
        let error = open(&request(mem, Some(16 * MIB)), &mut always).unwrap_err();
        let text = message(&error);
        assert!(
            text.contains("is on proc, a kernel pseudo-filesystem"),
            "{text}"
        );
        let p = preview(&request(mem, Some(16 * MIB)));
        assert_eq!(p.outcome.unwrap_err().to_string(), error.to_string());
        assert_eq!(p.kind, Some(TargetKind::File));
        assert_eq!(p.placement.filesystem, "proc");
        let mut read_only = request(mem, None);
        read_only.writes = false;
        assert!(matches!(
            open(&read_only, &mut always),
            Err(TargetError::Invalid { .. })
        ));

        let sysfs = Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
        if sysfs.exists() {
            let error = open(&request(sysfs, Some(MIB)), &mut always).unwrap_err();
            assert!(message(&error).contains("is on sysfs"), "{error}");
        }
        // A new file there, and in /dev (a device name that does not exist).
        let error = open(
            &request(Path::new("/proc/storlab-x"), Some(MIB)),
            &mut always,
        )
        .unwrap_err();
        assert!(
            message(&error).contains("cannot be created: /proc is on proc"),
            "{error}"
        );
        if host::placement(Path::new("/dev")).filesystem == "devtmpfs" {
            let missing = Path::new("/dev/storlab-no-such-disk");
            let error = open(&request(missing, Some(MIB)), &mut always).unwrap_err();
            assert!(message(&error).contains("/dev is on devtmpfs"), "{error}");
            assert!(!missing.exists());
        }
    }
}
