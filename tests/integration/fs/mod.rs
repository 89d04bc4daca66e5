//! The file-system workload (`storlab fs`, `[fs]` job files) on real file systems: tmpfs,
//! ext4, xfs and btrfs on loop devices and a FUSE file system, a metadata-heavy mix reporting
//! each operation, the same figures in every view (the console, `storlab report`, the HTML
//! report, the CSV table and the JSON), a full file system during the format, and the
//! hostile cases through the command line (a link planted in the tree, another user's
//! anchor).

mod views;

use crate::faultfs::FaultFs;
use crate::harness::{
    LoopDevice, MIB, load_json, loop_skip_reason, run_in, scratch, skip, sparse_image,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A file system mounted for a test, unmounted (and its loop device detached) when dropped.
struct Mounted {
    dir: PathBuf,
    _device: Option<LoopDevice>,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        for _ in 0..20 {
            let ok = Command::new("umount")
                .arg(&self.dir)
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// Runs a command that must succeed.
fn must(command: &mut Command) -> Result<(), String> {
    let out = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// `kind` (`tmpfs`, `ext4`, `xfs`, `btrfs`) mounted on `dir/kind`: tmpfs of 64 MiB, the others
/// made by their mkfs on a loop device over a sparse image (xfs needs 300 MiB at least).
fn mount(dir: &Path, kind: &str) -> Result<Mounted, String> {
    let at = dir.join(kind);
    std::fs::create_dir_all(&at).map_err(|e| e.to_string())?;
    if kind == "tmpfs" {
        must(
            Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=64m", "tmpfs"])
                .arg(&at),
        )?;
        return Ok(Mounted {
            dir: at,
            _device: None,
        });
    }
    let image = dir.join(format!("{kind}.img"));
    sparse_image(&image, if kind == "xfs" { 320 } else { 256 } * MIB);
    let device = LoopDevice::attach(&image, false)?;
    let mkfs = format!("mkfs.{kind}");
    let quiet: &[&str] = match kind {
        "ext4" => &["-q", "-F"],
        "xfs" => &["-q", "-f"],
        _ => &["-q", "-f"],
    };
    must(Command::new(&mkfs).args(quiet).arg(&device.path))?;
    must(
        Command::new("mount")
            .args(["-t", kind])
            .arg(&device.path)
            .arg(&at),
    )?;
    Ok(Mounted {
        dir: at,
        _device: Some(device),
    })
}

/// The figures of `operation` in run `run` of the results `v`.
fn op<'v>(v: &'v Value, run: &str, operation: &str) -> &'v Value {
    let runs = v["fs"]["runs"].as_array().expect("runs");
    let r = runs
        .iter()
        .find(|r| r["name"] == run)
        .unwrap_or_else(|| panic!("no run {run}"));
    &r["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["operation"] == operation)
        .unwrap_or_else(|| panic!("no {operation} in {run}"))["figures"]
}

/// The metadata-heavy mix: creates, getattrs, deletes and small reads, two threads.
const MIX: [&str; 14] = [
    "--depth",
    "2",
    "--width",
    "3",
    "--files",
    "20",
    "--sizes",
    "4k",
    "--mix",
    "create:2,getattr:5,delete:2,read:1",
    "--xfersize",
    "4k",
    "--threads",
    "2",
];

#[test]
fn a_metadata_heavy_mix_reports_each_operation_on_tmpfs_ext4_xfs_and_btrfs() {
    let test = "a_metadata_heavy_mix_reports_each_operation_on_tmpfs_ext4_xfs_and_btrfs";
    if let Some(why) = loop_skip_reason(&["mkfs.ext4", "mkfs.xfs", "mkfs.btrfs"]) {
        return skip(test, &why);
    }
    let dir = scratch();
    for kind in ["tmpfs", "ext4", "xfs", "btrfs"] {
        let m = mount(dir.path(), kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let anchor = m.dir.join("tree");
        let results = dir.path().join(format!("{kind}.json"));
        let mut args = vec![
            "fs",
            "--anchor",
            anchor.to_str().unwrap(),
            "--duration",
            "1s",
        ];
        args.extend(MIX);
        args.extend(["-q", "-o", results.to_str().unwrap()]);
        let out = run_in(dir.path(), &args);
        out.expect_ok();
        let v = load_json(&results);
        assert_eq!(v["fs"]["filesystem"], kind, "{kind}");
        assert_eq!(u64_of(op(&v, "format", "create"), "ops"), 180, "{kind}");
        assert_eq!(u64_of(op(&v, "format", "mkdir"), "ops"), 12, "{kind}");
        for name in ["create", "getattr", "delete", "open", "read", "close"] {
            let f = op(&v, "r1", name);
            assert!(u64_of(f, "ops") > 0, "{kind} {name}: {f}");
            assert_eq!(
                u64_of(f, "errors"),
                0,
                "{kind} {name}: {}",
                v["fs"]["failures"]
            );
            assert!(
                f["latency_ns"]["p99"].as_u64().unwrap() > 0,
                "{kind} {name}"
            );
        }
        // Small reads: each a 4 KiB read of a 4 KiB file.
        let reads = op(&v, "r1", "read");
        assert_eq!(
            u64_of(reads, "bytes"),
            4096 * u64_of(reads, "ops"),
            "{kind}"
        );
        // The tree at the end, as a walk found it, is what the operations left.
        let (c, d) = (
            u64_of(op(&v, "r1", "create"), "ops"),
            u64_of(op(&v, "r1", "delete"), "ops"),
        );
        let end = v["fs"]["end"]["files"].as_u64().unwrap();
        assert!(
            (end as i64 - (180 + c as i64 - d as i64)).abs() <= 2,
            "{kind}: {end} files, {c} created, {d} deleted"
        );
        assert_eq!(v["fs"]["end"]["dirs"], 12, "{kind}");
        // Each file whole, but those whose create the run's end cut short (one a thread).
        let bytes = v["fs"]["end"]["bytes"].as_u64().unwrap();
        assert!(
            bytes <= end * 4096 && bytes >= (end - 2) * 4096,
            "{kind}: {bytes} bytes in {end} files"
        );
        drop(m);
    }
}

fn u64_of(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

/// The FUSE mount, or `None` after [`skip`] said why.
fn fuse_or_skip(test: &str) -> Option<FaultFs> {
    match FaultFs::mount() {
        Ok(fs) => Some(fs),
        Err(why) => {
            skip(test, &why);
            None
        }
    }
}

#[test]
fn every_operation_runs_on_a_fuse_file_system_and_a_full_one_stops_the_format() {
    let test = "every_operation_runs_on_a_fuse_file_system_and_a_full_one_stops_the_format";
    let Some(fuse) = fuse_or_skip(test) else {
        return;
    };
    let dir = scratch();
    // FaultFs is one flat directory: the tree's files in the anchor (its root) itself.
    let anchor = fuse.dir().to_path_buf();
    let results = dir.path().join("fuse.json");
    let out = run_in(
        dir.path(),
        [
            "fs",
            "--anchor",
            anchor.to_str().unwrap(),
            "--depth",
            "0",
            "--files",
            "30",
            "--sizes",
            "8k",
            "--xfersize",
            "4k",
            "--duration",
            "1s",
            "--threads",
            "2",
            "--mix",
            "create,delete,getattr:2,setattr,access,read:2,write,copy,rename",
            "-q",
            "-o",
            results.to_str().unwrap(),
        ],
    );
    out.expect_ok();
    let v = load_json(&results);
    assert!(
        v["fs"]["filesystem"].as_str().unwrap().starts_with("fuse"),
        "{}",
        v["fs"]["filesystem"]
    );
    for name in [
        "create", "delete", "getattr", "setattr", "access", "open", "read", "write", "close",
        "copy", "rename",
    ] {
        let f = op(&v, "r1", name);
        assert!(u64_of(f, "ops") > 0, "{name}: {f}");
        assert_eq!(u64_of(f, "errors"), 0, "{name}: {}", v["fs"]["failures"]);
    }
    // A copy's bytes are what it copied: whole 8 KiB files.
    let copy = op(&v, "r1", "copy");
    assert_eq!(u64_of(copy, "bytes"), 8192 * u64_of(copy, "ops"));
    // The format again (yes) on a file system that fills after 20 writes: the first write
    // that finds it full stops the format, which says so, and nothing runs.
    fuse.set(|f| f.fail_after = Some((20, libc::ENOSPC)));
    let full = dir.path().join("full.json");
    let out = run_in(
        dir.path(),
        [
            "fs",
            "--anchor",
            anchor.to_str().unwrap(),
            "--depth",
            "0",
            "--files",
            "30",
            "--sizes",
            "8k",
            "--xfersize",
            "4k",
            "--duration",
            "1s",
            "--format",
            "yes",
            "-q",
            "-o",
            full.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.code,
        Some(3),
        "a failed operation fails the run: {}\n{}",
        out.stdout,
        out.stderr
    );
    let v = load_json(&full);
    let failures = v["fs"]["failures"].as_array().unwrap();
    assert!(
        failures
            .iter()
            .any(|f| f["error"].as_str().unwrap().contains("ENOSPC")),
        "{failures:?}"
    );
    let runs: Vec<&str> = v["fs"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        runs.last(),
        Some(&"format"),
        "no run after the failed format: {runs:?}"
    );
    assert!(
        v["interrupted"]
            .as_str()
            .is_some_and(|s| s.contains("first failed")),
        "{}",
        v["interrupted"]
    );
    assert!(
        v["warnings"]
            .to_string()
            .contains("format did not complete")
    );
    // The marker says the tree is not whole: a run that asks to use it as it is is warned.
    let marker: Value =
        serde_json::from_slice(&std::fs::read(anchor.join(".storlab-fs.json")).unwrap()).unwrap();
    assert_eq!(marker["complete"], false);
}

#[test]
fn a_link_planted_in_the_tree_or_another_users_anchor_is_refused_with_exit_2() {
    let dir = scratch();
    let anchor = dir.path().join("tree");
    let common = [
        "--depth",
        "1",
        "--width",
        "2",
        "--files",
        "3",
        "--duration",
        "200ms",
    ];
    let mut args = vec!["fs", "--anchor", anchor.to_str().unwrap()];
    args.extend(common);
    run_in(
        dir.path(),
        [&args[..], &["--mix", "getattr", "-q", "-o", "a.json"]].concat(),
    )
    .expect_ok();
    let victim = dir.path().join("passwd");
    std::fs::write(&victim, "root:x:0:0\n").unwrap();
    std::fs::remove_file(anchor.join("d02/f0002")).unwrap();
    std::os::unix::fs::symlink(&victim, anchor.join("d02/f0002")).unwrap();
    let out = run_in(
        dir.path(),
        [&args[..], &["--mix", "write", "-o", "b.json"]].concat(),
    );
    out.expect_code(2)
        .stderr_has(&["symbolic link", "d02/f0002"]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root:x:0:0\n");
    assert!(
        !dir.path().join("b.json").exists(),
        "a refusal writes no results"
    );
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    rustix::fs::chown(&theirs, Some(rustix::process::Uid::from_raw(65534)), None).unwrap();
    let mut args = vec!["fs", "--anchor", theirs.to_str().unwrap()];
    args.extend(common);
    run_in(dir.path(), &args)
        .expect_code(2)
        .stderr_has(&["belongs to user 65534"]);
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
}

/// vdbench 5.02's file-system examples (tests/fixtures/corpus/vdbench/, PROVENANCE.md), as
/// written: their anchors mapped into the scratch directory (`--map`), each run a second.
const VDBENCH_EXAMPLES: [(&str, &str); 9] = [
    ("example7", "/dir1"),
    ("examples_filesys_create_files", "/dir"),
    ("examples_filesys_delete_files", "/dir1"),
    ("examples_filesys_random_read", "/dir1"),
    ("examples_filesys_random_rw", "/dir1"),
    ("examples_filesys_random_write", "/dir1"),
    ("examples_filesys_seq_read", "/dir1"),
    ("examples_filesys_seq_rw", "/dir1"),
    ("examples_filesys_seq_write", "/dir1"),
];

#[test]
fn vdbench_file_system_examples_convert_strictly_and_run() {
    let dir = scratch();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus/vdbench");
    for (name, anchor) in VDBENCH_EXAMPLES {
        let results = dir.path().join(format!("{name}.json"));
        let map = format!("{anchor}={}", dir.path().join(&anchor[1..]).display());
        let out = run_in(
            dir.path(),
            [
                "run",
                corpus.join(name).to_str().unwrap(),
                "--map",
                &map,
                "--duration",
                "1s",
                "-q",
                "-o",
                results.to_str().unwrap(),
            ],
        );
        out.expect_ok();
        let v = load_json(&results);
        assert_eq!(v["invocation"]["source"]["format"], "vdbench", "{name}");
        let runs = v["fs"]["runs"].as_array().unwrap();
        assert_eq!(runs[runs.len() - 1]["interrupted"], false, "{name}");
        let ops: u64 = runs
            .iter()
            .filter(|r| r["name"] != "format" && r["name"] != "clean")
            .map(|r| r["total"]["ops"].as_u64().unwrap())
            .sum();
        assert!(ops > 0, "{name}: no operation ran");
        assert_eq!(
            v["fs"]["failures"].as_array().unwrap().len(),
            0,
            "{name}: {}",
            v["fs"]["failures"]
        );
        match name {
            // Every file deleted, then every directory: the tree empty at the end.
            "examples_filesys_delete_files" => {
                assert_eq!(v["fs"]["end"]["files"], 0);
                assert_eq!(v["fs"]["end"]["dirs"], 0);
                assert_eq!(u64_of(op(&v, "rd_delete", "delete"), "ops"), 1000);
            }
            // 100 random 4 KiB reads of each file picked, then its close.
            "examples_filesys_random_read" => {
                let (reads, opens) = (
                    u64_of(op(&v, "rd1", "read"), "ops"),
                    u64_of(op(&v, "rd1", "open"), "ops"),
                );
                assert!(
                    reads <= 100 * opens && reads + 8 * 100 >= 100 * opens,
                    "{reads} reads, {opens} opens"
                );
            }
            _ => {}
        }
    }
}
