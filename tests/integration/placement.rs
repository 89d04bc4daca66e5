//! Where a target lives shows in the results: a target on tmpfs, on btrfs (copy-on-write),
//! on btrfs mounted with compression, and a data set smaller than memory each leave their
//! warning in the results' `warnings`, and a plain ext4 file leaves none about its
//! filesystem. Filesystems are real: a tmpfs mounted for the test, btrfs on a loop device
//! (skipped with a reason when the machine cannot: not root, no loop devices, no
//! `mkfs.btrfs` from btrfs-progs). The ext4 test uses the scratch directory when it is on ext4
//! and a fresh ext4 on a loop device otherwise.

use crate::harness::{LoopDevice, RunArgs, array_at, loop_skip_reason, scratch, skip, str_at};
use crate::harness::{MIB, sparse_image, u64_at};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `statfs` magic numbers (linux/magic.h), to check the filesystem the results name is the
/// one the kernel reports.
const TMPFS_MAGIC: u64 = 0x0102_1994;
const BTRFS_SUPER_MAGIC: u64 = 0x9123_683e;
const EXT4_SUPER_MAGIC: u64 = 0xef53;

/// A filesystem mounted for a test, unmounted on drop (also used by `guard`).
pub(crate) struct Mounted {
    point: PathBuf,
}

impl Mounted {
    /// `mount [-t TYPE] [-o OPTIONS] SOURCE POINT`.
    pub(crate) fn new(
        kind: &str,
        source: &Path,
        point: &Path,
        options: &str,
    ) -> Result<Mounted, String> {
        std::fs::create_dir_all(point).map_err(|e| e.to_string())?;
        let mut command = Command::new("mount");
        command.args(["-t", kind]);
        if !options.is_empty() {
            command.args(["-o", options]);
        }
        let out = command
            .arg(source)
            .arg(point)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t {kind} -o {options} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Mounted {
            point: point.to_path_buf(),
        })
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        // A process's io_uring releases its files shortly after it exits (in a kernel
        // worker), so the filesystem can be busy for a moment: retry before giving up lazily.
        for _ in 0..50 {
            let unmounted = Command::new("umount")
                .arg(&self.point)
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if unmounted {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = Command::new("umount").arg("-l").arg(&self.point).status();
    }
}

/// The kernel's filesystem magic for `path`.
fn magic(path: &Path) -> u64 {
    rustix::fs::statfs(path)
        .unwrap_or_else(|e| panic!("statfs {}: {e}", path.display()))
        .f_type as u64
}

/// Runs a short job on a 16 MiB file `target` and returns the results.
fn run_on(dir: &Path, target: &Path) -> Value {
    let results = dir.join(format!(
        "{}.json",
        target.file_stem().unwrap().to_string_lossy()
    ));
    RunArgs::target(target)
        .size("16MiB")
        .flags(&["--bs", "4k", "--duration", "1s"])
        .results(&results)
        .run_ok(dir)
}

fn warnings(v: &Value) -> Vec<String> {
    array_at(v, "/warnings")
        .iter()
        .map(|w| w.as_str().expect("a warning is a string").to_string())
        .collect()
}

/// Panics unless some warning contains every one of `parts`.
#[track_caller]
fn has_warning(v: &Value, parts: &[&str]) {
    let w = warnings(v);
    assert!(
        w.iter().any(|w| parts.iter().all(|p| w.contains(p))),
        "no warning contains {parts:?}: {w:#?}"
    );
}

/// Panics if some warning contains `part`.
#[track_caller]
fn no_warning(v: &Value, part: &str) {
    let w = warnings(v);
    assert!(
        !w.iter().any(|w| w.contains(part)),
        "a warning contains {part:?}: {w:#?}"
    );
}

/// The data-set warning names both sizes: 16 MiB of data, and the host's memory.
fn smaller_than_memory(v: &Value) {
    let memory = u64_at(v, "/host/memory_bytes");
    assert!(memory > 16 * MIB, "this host has {memory} bytes of memory");
    has_warning(
        v,
        &[
            "the data set (16 MiB) is smaller than this host's memory",
            &format!("memory ({})", storlab::units::format_size(memory)),
        ],
    );
}

#[test]
fn plain_ext4_file_warns_only_that_the_data_set_fits_in_memory() {
    const TEST: &str = "plain_ext4_file_warns_only_that_the_data_set_fits_in_memory";
    let dir = scratch();
    // The scratch directory when it is on ext4; otherwise a fresh ext4 on a loop device.
    let made = if magic(dir.path()) == EXT4_SUPER_MAGIC {
        None
    } else {
        let Some(made) = fresh_fs(TEST, dir.path(), "mkfs.ext4", "ext4", "") else {
            return;
        };
        Some(made)
    };
    let target = made
        .as_ref()
        .map_or(dir.path(), |(_, m)| m.point.as_path())
        .join("plain.dat");
    assert_eq!(magic(target.parent().unwrap()), EXT4_SUPER_MAGIC);
    let v = run_on(dir.path(), &target);
    assert_eq!(str_at(&v, "/targets/0/filesystem"), "ext4");
    smaller_than_memory(&v);
    for part in ["tmpfs", "copy-on-write", "compression", "layer", "buffered"] {
        no_warning(&v, part);
    }
}

#[test]
fn tmpfs_target_warns_that_it_lives_in_memory() {
    const TEST: &str = "tmpfs_target_warns_that_it_lives_in_memory";
    if !rustix::process::geteuid().is_root() {
        return skip(TEST, "not root, cannot mount a tmpfs");
    }
    let dir = scratch();
    let point = dir.path().join("tmpfs");
    let mounted = match Mounted::new("tmpfs", Path::new("tmpfs"), &point, "size=64m") {
        Ok(m) => m,
        Err(e) => return skip(TEST, &e),
    };
    assert_eq!(magic(&mounted.point), TMPFS_MAGIC);
    let v = run_on(dir.path(), &mounted.point.join("t.dat"));
    assert_eq!(str_at(&v, "/targets/0/filesystem"), "tmpfs");
    has_warning(&v, &["target `", "t.dat` is on tmpfs: it lives in memory"]);
    smaller_than_memory(&v);
    no_warning(&v, "copy-on-write");
}

/// A fresh filesystem made by `mkfs` (`mkfs.ext4`, `mkfs.btrfs`) on a loop device, mounted as
/// `kind` with `options`; `None` after [`skip`] said why when this machine cannot make one.
fn fresh_fs(
    test: &str,
    dir: &Path,
    mkfs: &str,
    kind: &str,
    options: &str,
) -> Option<(LoopDevice, Mounted)> {
    if let Some(why) = loop_skip_reason(&[mkfs]) {
        skip(test, &why);
        return None;
    }
    let supported = std::fs::read_to_string("/proc/filesystems")
        .is_ok_and(|f| f.lines().any(|l| l.trim_end().ends_with(kind)));
    if !supported && !Path::new("/sys/fs").join(kind).exists() {
        // The module may load on first mount; try anyway, and skip if the mount fails.
        eprintln!("note: {kind} not listed in /proc/filesystems; trying to mount anyway");
    }
    let image = dir.join(format!("{kind}.img"));
    sparse_image(&image, 320 * MIB);
    let device = match LoopDevice::attach(&image, false) {
        Ok(d) => d,
        Err(e) => {
            skip(test, &e);
            return None;
        }
    };
    let made = Command::new(mkfs)
        .args(["-q", if kind == "btrfs" { "-f" } else { "-F" }])
        .arg(&device.path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {mkfs}: {e}"));
    assert!(
        made.status.success(),
        "{mkfs} failed: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    match Mounted::new(kind, &device.path, &dir.join("mnt"), options) {
        Ok(m) => Some((device, m)),
        Err(e) => {
            skip(test, &e);
            None
        }
    }
}

/// A btrfs filesystem on a loop device, mounted with `options` (see [`fresh_fs`]).
fn btrfs(test: &str, dir: &Path, options: &str) -> Option<(LoopDevice, Mounted)> {
    fresh_fs(test, dir, "mkfs.btrfs", "btrfs", options)
}

#[test]
fn btrfs_target_warns_copy_on_write_and_no_compression_unless_mounted_so() {
    let dir = scratch();
    let Some((_device, mounted)) = btrfs(
        "btrfs_target_warns_copy_on_write_and_no_compression_unless_mounted_so",
        dir.path(),
        "",
    ) else {
        return;
    };
    assert_eq!(magic(&mounted.point), BTRFS_SUPER_MAGIC);
    let v = run_on(dir.path(), &mounted.point.join("cow.dat"));
    assert_eq!(str_at(&v, "/targets/0/filesystem"), "btrfs");
    has_warning(&v, &["cow.dat` is on btrfs, a copy-on-write filesystem"]);
    no_warning(&v, "compression");
    smaller_than_memory(&v);
}

#[test]
fn btrfs_mounted_with_compression_warns_and_names_the_option() {
    let dir = scratch();
    for (options, shown) in [
        ("compress=zstd", "compress=zstd"),
        ("compress-force=lzo", "compress-force=lzo"),
    ] {
        let Some((_device, mounted)) = btrfs(
            "btrfs_mounted_with_compression_warns_and_names_the_option",
            dir.path(),
            options,
        ) else {
            return;
        };
        let mount_options = std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .find(|l| l.contains(mounted.point.to_str().unwrap()))
            .map(str::to_string)
            .unwrap_or_default();
        assert!(
            mount_options.contains(shown),
            "the kernel does not list {shown}: {mount_options}"
        );
        let v = run_on(dir.path(), &mounted.point.join("z.dat"));
        assert!(
            str_at(&v, "/targets/0/mount_options").contains(shown),
            "{}",
            str_at(&v, "/targets/0/mount_options")
        );
        has_warning(&v, &["z.dat` is on btrfs, a copy-on-write filesystem"]);
        has_warning(
            &v,
            &[
                "z.dat` is on a filesystem mounted with compression (",
                shown,
            ],
        );
        drop(mounted);
        drop(_device);
        std::fs::remove_file(dir.path().join("btrfs.img")).unwrap();
    }
}
