//! Targets in the hands of a hostile neighbour (issue 44): a target swapped for a link or
//! for another user's file while it is being prepared (the progress callback makes the swap,
//! so the race is the same every time), another user's file, a hard link and a planted
//! manifest in a directory everybody may write.

use super::tests::{MIB, always, request};
use super::{TargetError, open, preview};
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt, symlink};
use std::path::Path;

/// The user another user's files belong to: nobody.
const NOBODY: u32 = 65534;

/// Bytes a victim holds: not storlab's data.
fn precious(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

fn give_to_nobody(path: &Path) {
    rustix::fs::chownat(
        rustix::fs::CWD,
        path,
        Some(rustix::process::Uid::from_raw(NOBODY)),
        Some(rustix::process::Gid::from_raw(NOBODY)),
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
    )
    .unwrap();
}

/// Whether the test may act for another user (chown needs root); says so when it may not.
fn as_root(test: &str) -> bool {
    let root = rustix::process::geteuid().is_root();
    if !root {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "{test} needs root under CI"
        );
        #[allow(clippy::print_stderr, reason = "a skipped test says why")]
        {
            eprintln!("skipped {test}: files of another user need root (chown)");
        }
    }
    root
}

/// A directory everybody may write, sticky, as /tmp is; in a directory others may enter.
fn shared(base: &Path) -> std::path::PathBuf {
    std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = base.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    shared
}

#[test]
fn a_target_swapped_for_a_link_while_it_is_prepared_leaves_the_victim_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    let before = precious(100_000);
    std::fs::write(&victim, &before).unwrap();
    let slow = dir.path().join("slow");
    std::fs::create_dir(&slow).unwrap();
    let path = slow.join("s.dat");
    let moved = slow.join("s.moved");
    // A new file, and then one storlab prepared at another size: both prepared again.
    for size in [16 * MIB, 8 * MIB] {
        let mut req = request(&path, Some(size));
        req.buffered = true;
        let mut swapped = false;
        let target = open(&req, &mut |_, _| {
            if !swapped {
                // As the attacker did: `mv s.dat s.moved; ln -s VICTIM s.dat`.
                std::fs::rename(&path, &moved).unwrap();
                symlink(&victim, &path).unwrap();
                swapped = true;
            }
            true
        })
        .unwrap();
        assert!(swapped);
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            before,
            "the victim was written"
        );
        // The file prepared is the one checked, wherever its name went.
        let prepared = std::fs::metadata(&moved).unwrap();
        assert_eq!(prepared.len(), size);
        let opened = target.file.metadata().unwrap();
        assert_eq!(
            (opened.dev(), opened.ino()),
            (prepared.dev(), prepared.ino())
        );
        // The run writes through that descriptor: never into the victim.
        target.file.write_all_at(&[0xa5; 4096], 0).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), before);
        drop(target);
        // Made storlab's again for the second round.
        std::fs::remove_file(&path).unwrap();
        std::fs::rename(&moved, &path).unwrap();
        let manifest = super::manifest::manifest_path(&path);
        assert!(manifest.exists());
    }
    // The link left at the name leads to the victim, which is not storlab's: refused.
    std::fs::rename(&path, &moved).unwrap();
    symlink(&victim, &path).unwrap();
    let error = open(&request(&path, Some(8 * MIB)), &mut always).unwrap_err();
    assert!(matches!(error, TargetError::Guarded { .. }), "{error}");
    assert_eq!(std::fs::read(&victim).unwrap(), before);
}

#[test]
fn another_users_file_swapped_in_while_a_target_is_prepared_is_left_as_it_was() {
    const TEST: &str = "another_users_file_swapped_in_while_a_target_is_prepared_is_left_as_it_was";
    if !as_root(TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs");
    let before = precious(64 << 10);
    std::fs::write(&theirs, &before).unwrap();
    give_to_nobody(&theirs);
    let path = dir.path().join("s.dat");
    let mut req = request(&path, Some(16 * MIB));
    req.buffered = true;
    let mut swapped = false;
    let target = open(&req, &mut |_, _| {
        if !swapped {
            std::fs::rename(&path, dir.path().join("s.moved")).unwrap();
            std::fs::rename(&theirs, &path).unwrap();
            swapped = true;
        }
        true
    })
    .unwrap();
    assert!(swapped);
    target.file.write_all_at(&[0xa5; 4096], 0).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "their file was written"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().uid(), NOBODY);
}

#[test]
fn in_a_directory_everybody_may_write_another_users_file_or_a_hard_link_is_never_written() {
    const TEST: &str =
        "in_a_directory_everybody_may_write_another_users_file_or_a_hard_link_is_never_written";
    if !as_root(TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shared = shared(dir.path());
    let before = precious(MIB as usize);
    // Another user's file.
    let theirs = shared.join("t.dat");
    std::fs::write(&theirs, &before).unwrap();
    give_to_nobody(&theirs);
    // A hard link to root's own file (kernels without protected_hardlinks let anyone make
    // one).
    let victim = dir.path().join("victim");
    std::fs::write(&victim, &before).unwrap();
    let linked = shared.join("l.dat");
    std::fs::hard_link(&victim, &linked).unwrap();
    for (path, why) in [
        (&theirs, "is owned by nobody (uid 65534), not by this user"),
        (&linked, "has 2 links"),
    ] {
        for destroy_data in [false, true] {
            let mut req = request(path, Some(MIB));
            req.destroy_data = destroy_data;
            let error = open(&req, &mut always).unwrap_err();
            let text = error.to_string();
            assert!(matches!(error, TargetError::Invalid { .. }), "{text}");
            assert!(text.contains(why), "{text}");
            assert!(
                text.contains("where others may write (mode 1777)"),
                "{text}"
            );
            assert_eq!(
                preview(&req).outcome.unwrap_err().to_string(),
                text,
                "the dry run says the same"
            );
        }
        assert_eq!(std::fs::read(path).unwrap(), before);
        // Read as it is, it is only read.
        let mut read = request(path, None);
        read.writes = false;
        open(&read, &mut always).unwrap();
    }
    assert_eq!(std::fs::read(&victim).unwrap(), before);
}

#[test]
fn a_manifest_planted_by_another_user_makes_no_file_storlabs() {
    const TEST: &str = "a_manifest_planted_by_another_user_makes_no_file_storlabs";
    if !as_root(TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shared = shared(dir.path());
    // Root's data, which storlab never prepared.
    let path = shared.join("d.dat");
    let before = precious(MIB as usize);
    std::fs::write(&path, &before).unwrap();
    let metadata = std::fs::metadata(&path).unwrap();
    let manifest = super::manifest::manifest_path(&path);
    // What the attacker planted: marked complete, naming the file's inode (and device), as
    // every version of storlab's manifests would.
    for version in [2, 3] {
        let planted = serde_json::json!({
            "storlab_manifest": version, "size_bytes": MIB, "data_seed": 7,
            "complete": true, "created_unix_s": 1, "inode": metadata.ino(),
            "device": metadata.dev(), "identity": 1,
        });
        std::fs::write(&manifest, planted.to_string()).unwrap();
        give_to_nobody(&manifest);
        let error = open(&request(&path, Some(MIB)), &mut always).unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, TargetError::Guarded { .. }), "{text}");
        assert!(
            text.contains("d.dat.storlab.json is owned by nobody (uid 65534), not by this user"),
            "{text}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
        // Root's own copy of it binds nothing either: the file carries no such identity.
        std::fs::remove_file(&manifest).unwrap();
        std::fs::write(&manifest, planted.to_string()).unwrap();
        let error = open(&request(&path, Some(MIB)), &mut always).unwrap_err();
        assert!(error.to_string().contains("names another file"), "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        std::fs::remove_file(&manifest).unwrap();
    }
    // A file storlab prepared, whose valid manifest another user replaced with a copy of
    // their own: not trusted either.
    std::fs::remove_file(&path).unwrap();
    let mut req = request(&path, Some(MIB));
    req.buffered = true;
    drop(open(&req, &mut always).unwrap());
    let text = std::fs::read(&manifest).unwrap();
    std::fs::remove_file(&manifest).unwrap();
    std::fs::write(&manifest, &text).unwrap();
    give_to_nobody(&manifest);
    let error = open(&req, &mut always).unwrap_err();
    assert!(error.to_string().contains("owned by nobody"), "{error}");
}
