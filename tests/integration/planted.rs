//! What a hostile neighbour plants (issue 44), as that neighbour: another user (`nobody`,
//! through `setpriv`) makes links, directories and manifests where root's storlab goes, in
//! a directory everybody may write; and outputs that are device nodes. Each attack is
//! refused before anything is written (exit 2), with the path, the owner and what to do,
//! and what it aimed at is left as it was.

use crate::harness::{RunArgs, run_in, scratch, skip, storlab};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why the tests acting as another user cannot run here, if they cannot.
fn no_other_user() -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("acting as another user (setpriv) needs root".into());
    }
    let probe = Command::new("setpriv").args(["--version"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return Some("setpriv (util-linux) is not installed".into());
    }
    None
}

/// Runs `script` with `sh` in `dir` as the user nobody (uid 65534), as an attacker would.
#[track_caller]
fn as_nobody(dir: &Path, script: &str) {
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args(["sh", "-c", script])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "as nobody: {script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A scratch directory holding `shared`, a directory everybody may write (sticky, as /tmp),
/// which the run takes as its working directory, and `root-only`, root's directory the
/// attacker aims at.
fn shared() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = scratch();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let aimed = dir.path().join("root-only");
    std::fs::create_dir(&aimed).unwrap();
    std::fs::set_permissions(&aimed, std::fs::Permissions::from_mode(0o700)).unwrap();
    (dir, shared, aimed)
}

/// Every name under `dir`.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn planted_scratch_and_results_directories_are_refused_naming_them_and_their_owner() {
    const TEST: &str =
        "planted_scratch_and_results_directories_are_refused_naming_them_and_their_owner";
    if let Some(why) = no_other_user() {
        return skip(TEST, &why);
    }
    let (_dir, cwd, aimed) = shared();
    let aimed_text = aimed.display().to_string();
    let refused = |args: &[&str], names: &[&str]| {
        let out = run_in(&cwd, args);
        out.expect_code(2);
        out.stderr_has(names);
        assert!(
            listing(&aimed).is_empty(),
            "{args:?} wrote into {aimed_text}"
        );
    };
    // ./storlab-scratch as a link: the default run, the database and the calibration.
    as_nobody(&cwd, &format!("ln -s {aimed_text} storlab-scratch"));
    let link = [
        "refusing to use the directory storlab-scratch",
        "a symbolic link",
        "nobody (uid 65534)",
        "rm -r storlab-scratch",
    ];
    refused(&["run", "--duration", "1s"], &link);
    refused(&["database"], &link);
    refused(&["calibrate"], &link);
    // ./storlab-results as a link: the results writer.
    as_nobody(&cwd, &format!("ln -s {aimed_text} storlab-results"));
    let target = cwd.join("t.dat");
    let results_link = [
        "refusing to use the directory storlab-results",
        "a symbolic link",
        "nobody (uid 65534)",
    ];
    let out = RunArgs::target(&target)
        .flags(&["--size", "1MiB", "--duration", "1s"])
        .run(&cwd);
    out.expect_code(2).stderr_has(&results_link);
    assert!(listing(&aimed).is_empty());
    assert!(!target.exists(), "the refused run created its target");
    as_nobody(&cwd, "rm storlab-scratch storlab-results");

    // Root's own scratch directory (sticky, so nobody can replace it) with what another user
    // made inside: a link for wal-sync and database, a directory of theirs for etcd with a
    // link at its log's name pointing at root's file.
    std::fs::create_dir(cwd.join("storlab-scratch")).unwrap();
    let scratch_dir = cwd.join("storlab-scratch");
    std::fs::set_permissions(&scratch_dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    for name in ["wal-sync", "database", "calibrate"] {
        as_nobody(&scratch_dir, &format!("ln -s {aimed_text} {name}"));
    }
    let precious = aimed.join("precious");
    std::fs::write(&precious, b"root's data").unwrap();
    as_nobody(
        &scratch_dir,
        &format!(
            "mkdir etcd && chmod 777 etcd && ln -s {} etcd/etcd-wal.storlab",
            precious.display()
        ),
    );
    let inner = |name: &str| {
        [
            format!("refusing to use the directory storlab-scratch/{name}"),
            "nobody (uid 65534)".to_string(),
            format!("rm -r storlab-scratch/{name}"),
        ]
    };
    for (command, name) in [
        (&["wal-sync"][..], "wal-sync"),
        (&["database"], "database"),
        (&["calibrate"], "calibrate"),
        (&["etcd", "--destroy-data"], "etcd"),
    ] {
        let names = inner(name);
        let out = run_in(&cwd, command);
        out.expect_code(2);
        out.stderr_has(&names.iter().map(String::as_str).collect::<Vec<_>>());
    }
    assert_eq!(listing(&aimed), ["precious"]);
    assert_eq!(std::fs::read(&precious).unwrap(), b"root's data");
    assert_eq!(std::fs::metadata(&precious).unwrap().len(), 11);
}

#[test]
fn a_manifest_another_user_planted_makes_no_file_storlabs() {
    const TEST: &str = "a_manifest_another_user_planted_makes_no_file_storlabs";
    if let Some(why) = no_other_user() {
        return skip(TEST, &why);
    }
    let (_dir, shared, _) = shared();
    let target = shared.join("d.dat");
    let before: Vec<u8> = (0..1usize << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&target, &before).unwrap();
    let meta = std::fs::metadata(&target).unwrap();
    // Marked complete, naming the inode (and the device) of root's file.
    let planted = serde_json::json!({
        "storlab_manifest": 2, "size_bytes": 1 << 20, "data_seed": 1, "complete": true,
        "created_unix_s": 1, "inode": meta.ino(), "device": meta.dev(),
    });
    as_nobody(
        &shared,
        &format!("printf '%s' '{planted}' > d.dat.storlab.json"),
    );
    let out = RunArgs::target(&target)
        .flags(&["--size", "1MiB", "--read", "0", "--duration", "1s"])
        .results(&shared.join("r.json"))
        .run(&shared);
    out.expect_code(2).stderr_has(&[
        "refusing to write to",
        "d.dat.storlab.json is owned by nobody (uid 65534), not by this user",
        "--destroy-data",
    ]);
    assert!(
        std::fs::read(&target).unwrap() == before,
        "root's file was written"
    );
    assert!(!shared.join("r.json").exists());
}

/// A node of the null device (char 1:3) at `path`, made here: not /dev/null itself.
fn null_node(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_bits_truncate(0o666),
        rustix::fs::makedev(1, 3),
    )
    .unwrap();
}

#[test]
fn an_output_that_is_a_device_stays_a_device() {
    const TEST: &str = "an_output_that_is_a_device_stays_a_device";
    if !rustix::process::geteuid().is_root() {
        return skip(TEST, "making a device node needs root");
    }
    let dir = scratch();
    let results = dir.path().join("r.json");
    RunArgs::target(&dir.path().join("t.dat"))
        .flags(&["--size", "1MiB", "--duration", "1s"])
        .results(&results)
        .run(dir.path())
        .expect_ok();
    let job = dir.path().join("j.fio");
    std::fs::write(&job, "[j]\nrw=randread\nbs=4k\nsize=1m\nfilename=x.dat\n").unwrap();
    let node = dir.path().join("null");
    let node_text = node.display().to_string();
    let results_text = results.display().to_string();
    let job_text = job.display().to_string();
    let target_text = dir.path().join("t.dat").display().to_string();
    let commands: [&[&str]; 6] = [
        &[
            "run",
            "--target",
            &target_text,
            "--size",
            "1MiB",
            "--duration",
            "1s",
            "-q",
            "-o",
            &node_text,
        ],
        &[
            "run",
            "--target",
            &target_text,
            "--size",
            "1MiB",
            "--duration",
            "1s",
            "-q",
            "--html",
            &node_text,
        ],
        &["report", &results_text, "-o", &node_text],
        &["import", &job_text, "-o", &node_text],
        &["import-fio", &job_text, "-o", &node_text],
        &["compare", &results_text, &results_text, "-o", &node_text],
    ];
    null_node(&node);
    for args in commands {
        let out = run_in(dir.path(), args);
        out.expect_code(2)
            .stderr_has(&["a character device", "regular file"]);
        let kind = std::fs::symlink_metadata(&node).unwrap().file_type();
        assert!(kind.is_char_device(), "{args:?} replaced the device node");
    }
    // `-` is standard output.
    let out = run_in(dir.path(), ["report", &results_text, "-o", "-"]);
    out.expect_ok().stdout_has(&["<!DOCTYPE html>"]);
    // /dev/null itself, where nothing else can be harmed: in a mount namespace of its own,
    // over a /dev of its own holding a null device made for it.
    let unshared = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(format!(
            "mount -t tmpfs tmpfs /dev && mknod -m 666 /dev/null c 1 3 && {} report {results_text} -o /dev/null; code=$?; test -c /dev/null || exit 99; exit $code",
            crate::harness::STORLAB
        ))
        .current_dir(dir.path())
        .output()
        .unwrap();
    match unshared.status.code() {
        Some(2) => assert!(
            String::from_utf8_lossy(&unshared.stderr)
                .contains("/dev/null: it is a character device"),
            "{}",
            String::from_utf8_lossy(&unshared.stderr)
        ),
        Some(99) => panic!("/dev/null was replaced"),
        other => skip(
            TEST,
            &format!(
                "no mount namespace of its own here ({other:?}): {}",
                String::from_utf8_lossy(&unshared.stderr)
            ),
        ),
    }
    let _ = storlab(dir.path());
}
