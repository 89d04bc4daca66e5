//! Loop devices, filesystems, blkio cgroups and block tracing for the Exchange tests (root
//! only): an ext4 filesystem on a loop device, unmounted and detached when dropped; a blkio
//! cgroup with throttle limits to run `storlab exchange` in; a tracefs instance recording the
//! requests each block device was given; the extents of a file on its device.

use crate::harness::{
    ExchangeArgs, LoopDevice, MIB, Outcome, STORLAB, array_at, at, loop_skip_reason, sparse_image,
    str_at,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// `losetup -f --show EXTRA IMAGE`, detached when dropped.
fn attach(image: &Path, extra: &[&str]) -> Result<LoopDevice, String> {
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .args(extra)
        .arg(image)
        .output()
        .map_err(|e| format!("cannot run losetup: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "losetup -f --show {} {} failed: {}",
            extra.join(" "),
            image.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(LoopDevice {
        path: PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()),
    })
}

/// `MAJ:MIN` of a loop device, from /sys/class/block/loopN/dev.
pub(crate) fn dev_number(device: &LoopDevice) -> (u32, u32) {
    let text = std::fs::read_to_string(format!("/sys/class/block/{}/dev", device.name()))
        .unwrap_or_else(|e| panic!("cannot read the device number of {}: {e}", device.name()));
    let (major, minor) = text.trim().split_once(':').expect("MAJ:MIN");
    (major.parse().unwrap(), minor.parse().unwrap())
}

/// Runs a command that must succeed.
fn must(command: &mut Command) -> Result<(), String> {
    let out = command
        .output()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A fresh ext4 filesystem on a loop device over a sparse image, mounted on a directory;
/// unmounted and detached when dropped (even when the test fails).
pub(crate) struct LoopFs {
    pub(crate) mount_point: PathBuf,
    /// Dropped after `drop` has unmounted.
    pub(crate) device: LoopDevice,
}

impl LoopFs {
    /// `name.img` of `mib` MiB in `dir`, attached with `losetup_extra`, formatted with
    /// `mkfs.ext4 -q -F MKFS_EXTRA`, mounted on `dir/name`. Inode tables and the journal are
    /// initialised by mkfs, so no background initialisation writes to the device later.
    pub(crate) fn create(
        dir: &Path,
        name: &str,
        mib: u64,
        losetup_extra: &[&str],
        mkfs_extra: &[&str],
    ) -> Result<LoopFs, String> {
        LoopFs::create_with_image(dir, dir, name, mib, losetup_extra, mkfs_extra)
    }

    /// As [`LoopFs::create`], with the image in `image_dir`.
    pub(crate) fn create_with_image(
        image_dir: &Path,
        dir: &Path,
        name: &str,
        mib: u64,
        losetup_extra: &[&str],
        mkfs_extra: &[&str],
    ) -> Result<LoopFs, String> {
        let image = image_dir.join(format!("{name}.img"));
        sparse_image(&image, mib * MIB);
        let device = attach(&image, losetup_extra)?;
        must(
            Command::new("mkfs.ext4")
                .args(["-q", "-F", "-b", "4096"])
                .args(["-E", "lazy_itable_init=0,lazy_journal_init=0"])
                .args(mkfs_extra)
                .arg(&device.path),
        )?;
        let mount_point = dir.join(name);
        std::fs::create_dir_all(&mount_point).map_err(|e| e.to_string())?;
        must(
            Command::new("mount")
                .args(["-t", "ext4"])
                .arg(&device.path)
                .arg(&mount_point),
        )?;
        Ok(LoopFs {
            mount_point,
            device,
        })
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        for _ in 0..20 {
            let ok = Command::new("umount")
                .arg(&self.mount_point)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mount_point)
            .status();
    }
}

/// A directory in memory (under /dev/shm) for a loop device's image, when the machine has
/// one: the device's speed is then the throttle's or the CPU's, never the shared scratch
/// disk's.
pub(crate) fn ram_dir() -> Option<tempfile::TempDir> {
    Path::new("/dev/shm")
        .is_dir()
        .then(|| tempfile::tempdir_in("/dev/shm").ok())
        .flatten()
}

/// The cgroup v1 blkio hierarchy.
const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// Why blkio throttling tests cannot run here, or `None`.
pub(crate) fn blkio_skip_reason() -> Option<String> {
    if let Some(r) = loop_skip_reason(&["mkfs.ext4"]) {
        return Some(r);
    }
    let probe = Path::new(BLKIO).join("blkio.throttle.read_iops_device");
    if !probe.exists() {
        return Some(format!(
            "no {} (cgroup v1 blkio throttling is not available)",
            probe.display()
        ));
    }
    None
}

/// A blkio cgroup `storlab-test-PID-TAG` with throttle limits; removed when dropped (its
/// processes have exited by then).
pub(crate) struct BlkioCgroup {
    path: PathBuf,
}

impl BlkioCgroup {
    /// Creates the cgroup and writes each (file, value) pair, e.g.
    /// ("blkio.throttle.read_iops_device", "7:3 40").
    pub(crate) fn create(tag: &str, limits: &[(&str, String)]) -> Result<BlkioCgroup, String> {
        let path = Path::new(BLKIO).join(format!("storlab-test-{}-{tag}", std::process::id()));
        std::fs::create_dir(&path)
            .map_err(|e| format!("cannot create the cgroup {}: {e}", path.display()))?;
        let cgroup = BlkioCgroup { path };
        for (file, value) in limits {
            std::fs::write(cgroup.path.join(file), value).map_err(|e| {
                format!(
                    "cannot write {value:?} to {}/{file}: {e}",
                    cgroup.path.display()
                )
            })?;
        }
        Ok(cgroup)
    }

    /// A cgroup `tag` that lets `iops` reads and `iops` writes a second through to `device`:
    /// a device whose capacity is known.
    pub(crate) fn iops_limit(
        tag: &str,
        device: &LoopDevice,
        iops: u32,
    ) -> Result<BlkioCgroup, String> {
        let (major, minor) = dev_number(device);
        let limit = format!("{major}:{minor} {iops}");
        BlkioCgroup::create(
            tag,
            &[
                ("blkio.throttle.read_iops_device", limit.clone()),
                ("blkio.throttle.write_iops_device", limit),
            ],
        )
    }

    /// Its `cgroup.procs`: a process that writes its pid there joins it.
    pub(crate) fn procs(&self) -> PathBuf {
        self.path.join("cgroup.procs")
    }

    /// Runs `command` in `dir`, inside this cgroup.
    pub(crate) fn run_exchange(&self, dir: &Path, command: &ExchangeArgs) -> Outcome {
        self.run(dir, command.args())
    }

    /// Runs storlab with `args` in `dir`, inside this cgroup.
    pub(crate) fn run<S: AsRef<std::ffi::OsStr>>(&self, dir: &Path, args: &[S]) -> Outcome {
        self.run_joining(dir, args, &[])
    }

    /// Runs storlab with `args` in `dir`, inside this cgroup and the cgroups whose
    /// `cgroup.procs` are `also` (a memory cgroup, say).
    pub(crate) fn run_joining<S: AsRef<std::ffi::OsStr>>(
        &self,
        dir: &Path,
        args: &[S],
        also: &[&Path],
    ) -> Outcome {
        let join: String = std::iter::once(self.procs().as_path())
            .chain(also.iter().copied())
            .map(|procs| format!("echo $$ > '{}' && ", procs.display()))
            .collect();
        let output = Command::new("sh")
            .current_dir(dir)
            .stdin(Stdio::null())
            .arg("-c")
            .arg(format!("{join}exec \"$0\" \"$@\""))
            .arg(STORLAB)
            .args(args)
            .output()
            .expect("start sh");
        Outcome::from_output(&output)
    }
}

impl Drop for BlkioCgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.path).is_ok() || !self.path.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("could not remove the cgroup {}", self.path.display());
    }
}

/// A tracefs instance recording `block:block_rq_issue` for some devices: the requests each
/// device was given, in issue order. Removed when dropped.
pub(crate) struct BlockTrace {
    dir: PathBuf,
}

/// One request a block device was given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rq {
    pub(crate) dev: (u32, u32),
    pub(crate) write: bool,
    pub(crate) read: bool,
    pub(crate) sector: u64,
    pub(crate) sectors: u64,
}

impl BlockTrace {
    /// Why block tracing cannot run here, or `None`. Mounts tracefs on /sys/kernel/tracing
    /// when the kernel has it but nothing mounted it (left mounted: other users may come).
    pub(crate) fn skip_reason() -> Option<String> {
        let base = Path::new("/sys/kernel/tracing");
        if !base.join("instances").is_dir() && base.is_dir() {
            let _ = Command::new("mount")
                .args(["-t", "tracefs", "tracefs"])
                .arg(base)
                .stderr(Stdio::null())
                .status();
        }
        if !base.join("instances").is_dir() {
            return Some(
                "no /sys/kernel/tracing/instances (tracefs is not mounted and cannot be)".into(),
            );
        }
        if !base.join("events/block/block_rq_issue").is_dir() {
            return Some("no block:block_rq_issue trace event".into());
        }
        let works = Command::new("filefrag")
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !works {
            return Some("filefrag (e2fsprogs) is not installed".into());
        }
        None
    }

    pub(crate) fn start(tag: &str, devs: &[(u32, u32)]) -> Result<BlockTrace, String> {
        let dir = PathBuf::from(format!(
            "/sys/kernel/tracing/instances/storlab-it-{}-{tag}",
            std::process::id()
        ));
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot create the trace instance {}: {e}", dir.display()))?;
        let trace = BlockTrace { dir };
        let filter = devs
            .iter()
            .map(|(major, minor)| format!("dev == {}", (major << 20) | minor))
            .collect::<Vec<_>>()
            .join(" || ");
        let event = "events/block/block_rq_issue";
        for (file, value) in [
            ("buffer_size_kb".to_string(), "16384".to_string()),
            (format!("{event}/filter"), filter),
            (format!("{event}/enable"), "1".to_string()),
            ("tracing_on".to_string(), "1".to_string()),
        ] {
            std::fs::write(trace.dir.join(&file), &value)
                .map_err(|e| format!("cannot write {value:?} to {file}: {e}"))?;
        }
        Ok(trace)
    }

    /// Stops tracing and returns the requests; errors when the buffer lost some.
    pub(crate) fn stop(&self) -> Result<Vec<Rq>, String> {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
        let text = std::fs::read_to_string(self.dir.join("trace")).map_err(|e| e.to_string())?;
        if let Some(line) = text
            .lines()
            .find(|l| l.contains("entries-in-buffer/entries-written"))
        {
            let counts = line.rsplit(' ').find(|w| w.contains('/')).unwrap_or("");
            let (kept, written) = counts.split_once('/').unwrap_or(("", ""));
            if kept != written {
                return Err(format!("the trace buffer lost events ({counts})"));
            }
        }
        Ok(text.lines().filter_map(parse_rq).collect())
    }
}

impl Drop for BlockTrace {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
        let _ = std::fs::write(self.dir.join("events/block/block_rq_issue/enable"), "0");
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// `... block_rq_issue: 7,0 WS 16384 () 41856 + 32 be,0,4 [comm]`.
fn parse_rq(line: &str) -> Option<Rq> {
    let rest = line.split("block_rq_issue: ").nth(1)?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let (major, minor) = words.first()?.split_once(',')?;
    let rwbs = words.get(1)?;
    let plus = words.iter().position(|w| *w == "+")?;
    let sectors: u64 = words.get(plus + 1)?.parse().ok()?;
    if sectors == 0 {
        return None;
    }
    Some(Rq {
        dev: (major.parse().ok()?, minor.parse().ok()?),
        write: rwbs.contains('W'),
        read: rwbs.contains('R'),
        sector: words.get(plus.checked_sub(1)?)?.parse().ok()?,
        sectors,
    })
}

/// The extents of a file as (file offset, device offset, length), bytes, from
/// `filefrag -v -b512` (the filesystem fills its whole device, so its blocks are the device's).
pub(crate) fn extents(path: &Path) -> Vec<(u64, u64, u64)> {
    let out = Command::new("filefrag")
        .args(["-v", "-b512"])
        .arg(path)
        .output()
        .expect("run filefrag");
    let text = String::from_utf8_lossy(&out.stdout);
    let found: Vec<(u64, u64, u64)> = text
        .lines()
        .filter(|l| {
            l.trim_start()
                .split(':')
                .next()
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
        .filter_map(|l| {
            let n: Vec<u64> = l
                .replace("..", " ")
                .replace(':', " ")
                .split_whitespace()
                .map_while(|w| w.parse().ok())
                .collect();
            // ext, logical start, logical end, physical start, physical end, length
            (n.len() >= 6).then(|| (n[1] * 512, n[3] * 512, n[5] * 512))
        })
        .collect();
    assert!(
        !found.is_empty(),
        "no extents for {}:\n{text}",
        path.display()
    );
    found
}

/// The file range (offset, length) of a request lying inside one of `extents`.
pub(crate) fn file_range(rq: &Rq, extents: &[(u64, u64, u64)]) -> Option<(u64, u64)> {
    let start = rq.sector * 512;
    let len = rq.sectors * 512;
    extents
        .iter()
        .find(|(_, dev, elen)| start >= *dev && start + len <= dev + elen)
        .map(|(file, dev, _)| (file + start - dev, len))
}

/// The `results.devices` entry of a device.
pub(crate) fn device_entry<'a>(v: &'a Value, name: &str) -> &'a Value {
    array_at(v, "/devices")
        .iter()
        .find(|d| str_at(d, "/name") == name)
        .unwrap_or_else(|| panic!("no {name} in results.devices: {}", at(v, "/devices")))
}
