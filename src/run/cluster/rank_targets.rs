//! Each rank's targets in a run over many hosts: the slices of shared targets (`shared =
//! "slice"`: every rank on its own part of every access span), and the preflight that finds
//! two ranks about to write the same data by accident (the same LUN seen by two hosts, the same
//! file on a network filesystem, or one local file named without `{rank}` on one host).

use crate::job::Job;
use crate::stats::host::DeviceNumber;
use crate::stats::host::mounts::{self, Mount};
use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// Filesystems whose files every host that mounts them sees as the same files.
const NETWORK_FILESYSTEMS: [&str; 13] = [
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "lustre",
    "gpfs",
    "ceph",
    "glusterfs",
    "fuse.glusterfs",
    "beegfs",
    "9p",
    "virtiofs",
    "fuse.sshfs",
];

/// Gives rank `rank` of `ranks` its slice of every access span on a shared target: the span is
/// cut in `ranks` equal parts (a multiple of the access's block size and alignment), rank `r`
/// gets part `r`. A worker must use only shared targets or none.
pub(super) fn slice(job: &mut Job, rank: usize, ranks: usize) -> Result<(), String> {
    let sizes: Vec<Option<u64>> = job
        .targets
        .iter()
        .map(|t| t.shared_slice.then(|| existing_size(&t.path, t.size_bytes)))
        .map(Option::transpose)
        .collect::<Result<_, _>>()?;
    for w in &mut job.workers {
        let shared: Vec<bool> = w.targets.iter().map(|&t| sizes[t].is_some()).collect();
        if !shared.iter().any(|&s| s) {
            continue;
        }
        if shared.iter().any(|&s| !s) {
            return Err(format!(
                "worker {} uses shared and unshared targets: a slice applies to every target of a worker, so give the shared ones (shared = \"slice\") their own worker",
                w.name
            ));
        }
        let size = w
            .targets
            .iter()
            .filter_map(|&t| sizes[t])
            .min()
            .unwrap_or(0);
        for a in &mut w.access {
            let start = a.offset_bytes.min(size);
            let span = a.length_bytes.unwrap_or(size - start).min(size - start);
            let unit = a.block_size_bytes.max(a.align_bytes).max(1);
            let part = span / ranks as u64 / unit * unit;
            if part == 0 {
                return Err(format!(
                    "worker {}: a span of {span} bytes cut in {ranks} slices leaves less than one {unit}-byte I/O each; make the shared target larger or use fewer ranks",
                    w.name
                ));
            }
            a.offset_bytes = start + rank as u64 * part;
            a.length_bytes = Some(part);
        }
    }
    Ok(())
}

/// The size of a shared target, which must be a block device: every rank uses it as it is.
fn existing_size(path: &Path, asked: Option<u64>) -> Result<u64, String> {
    let meta = std::fs::metadata(path).map_err(|e| {
        format!(
            "{}: a shared target must be a block device every host sees (a LUN): {e}",
            path.display()
        )
    })?;
    if !meta.file_type().is_block_device() {
        // Every rank would prepare (create, fill, adopt) the same file at once.
        return Err(format!(
            "{}: shared = \"slice\" is for a block device every host sees (a LUN); for files, give each rank its own with {{rank}} or {{host}} in the path",
            path.display()
        ));
    }
    let size = crate::stats::host::sysfs::BlockDevice::of(DeviceNumber::of(meta.rdev()))
        .and_then(|d| d.dir)
        .and_then(|dir| crate::stats::host::sysfs::read_trimmed(&dir.join("size")))
        .and_then(|s| s.parse::<u64>().ok())
        .map(|sectors| sectors * 512)
        .unwrap_or(0);
    Ok(asked.map_or(size, |a| a.min(size)))
}

/// What rank `rank` tells the root about its targets: one line per target, its name, whether
/// the job writes it, whether it is shared by slices, and where its data lives.
pub(super) fn describe(job: &Job, host: &str) -> String {
    let all = mounts::mounts();
    job.targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let writes = job.verify
                || job
                    .workers
                    .iter()
                    .any(|w| w.targets.contains(&i) && w.access.iter().any(|a| a.read_pct < 100.0));
            format!(
                "{}\t{}\t{}\t{}",
                t.name,
                writes,
                t.shared_slice,
                identity(&t.path, host, &all)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where the data of `path` lives, written the same by every host that would touch the same
/// data: a block device by its world-wide name or serial (else this host and its number), a
/// file on a network filesystem by the filesystem's source and the file's path in it, any
/// other file by this host and its path.
fn identity(path: &Path, host: &str, all: &[Mount]) -> String {
    let meta = std::fs::metadata(path);
    if let Ok(m) = &meta {
        if m.file_type().is_block_device() {
            return block_identity(DeviceNumber::of(m.rdev()), host);
        }
    }
    // A file, or one to be created: where it is (its directory for a new one).
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = dir.and_then(|d| std::fs::canonicalize(d).ok());
        match (dir, path.file_name()) {
            (Some(d), Some(n)) => d.join(n),
            _ => path.to_path_buf(),
        }
    });
    let dev = std::fs::metadata(canonical.parent().unwrap_or(&canonical))
        .map(|m| DeviceNumber::of(m.dev()))
        .ok();
    let mount = dev.and_then(|d| mounts::find_mount(all, d, &canonical));
    match mount {
        Some(m) if NETWORK_FILESYSTEMS.contains(&m.fstype.as_str()) => {
            let inside = canonical.strip_prefix(&m.mount_point).unwrap_or(&canonical);
            format!(
                "file on {} {}: {}",
                m.fstype,
                m.source.to_string_lossy(),
                m.root.join(inside).display()
            )
        }
        _ => format!("file on {host}: {}", canonical.display()),
    }
}

/// A block device's identity: its (or, for a partition, its disk's) world-wide name or serial
/// number, which every host that sees the LUN reads the same; else this host and its number.
fn block_identity(dev: DeviceNumber, host: &str) -> String {
    let Some(d) = crate::stats::host::sysfs::BlockDevice::of(dev) else {
        return format!("block device {dev} on {host}");
    };
    let Some(dir) = d.dir else {
        return format!("block device {} on {host}", d.name);
    };
    let read = |p: &Path| crate::stats::host::sysfs::read_trimmed(p).filter(|s| !s.is_empty());
    let partition = read(&dir.join("partition"));
    let disk = if partition.is_some() {
        dir.parent().map(Path::to_path_buf).unwrap_or(dir.clone())
    } else {
        dir.clone()
    };
    let id = ["wwid", "device/wwid", "serial", "device/serial"]
        .iter()
        .find_map(|a| read(&disk.join(a)));
    match (id, partition) {
        (Some(id), None) => format!("block device {id}"),
        (Some(id), Some(p)) => format!("block device {id} partition {p}"),
        (None, _) => format!("block device {} on {host}", d.name),
    }
}

/// One rank's use of a target, as [`describe`] told it.
struct Use<'a> {
    rank: usize,
    host: &'a str,
    target: &'a str,
    writes: bool,
    sliced: bool,
}

/// The root's judgement of every rank's [`describe`] (rank, host, text): the targets two ranks
/// would both touch, at least one of them writing, that are not shared by slices.
pub(super) fn collisions(all: &[(usize, String, String)]) -> Option<String> {
    let mut by_identity: BTreeMap<&str, Vec<Use>> = BTreeMap::new();
    for (rank, host, text) in all {
        for line in text.lines() {
            let mut f = line.splitn(4, '\t');
            let (Some(target), Some(writes), Some(sliced), Some(identity)) =
                (f.next(), f.next(), f.next(), f.next())
            else {
                continue;
            };
            by_identity.entry(identity).or_default().push(Use {
                rank: *rank,
                host,
                target,
                writes: writes == "true",
                sliced: sliced == "true",
            });
        }
    }
    let problems: Vec<String> = by_identity
        .iter()
        .filter_map(|(identity, uses)| {
            let ranks: std::collections::BTreeSet<usize> = uses.iter().map(|u| u.rank).collect();
            let written = uses.iter().any(|u| u.writes);
            let all_sliced = uses.iter().all(|u| u.sliced);
            (ranks.len() > 1 && written && !all_sliced).then(|| {
                let who: Vec<String> = uses
                    .iter()
                    .map(|u| format!("rank {} on {} (target {})", u.rank, u.host, u.target))
                    .collect();
                format!("{} would all use {identity}", who.join(", "))
            })
        })
        .collect();
    (!problems.is_empty()).then(|| {
        format!(
            "{}, and at least one writes it: give each rank its own target with {{rank}} or {{host}} in the path, or share it on purpose with shared = \"slice\" (each rank on its own slice)",
            problems.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(r: usize, host: &str, lines: &[&str]) -> (usize, String, String) {
        (r, host.into(), lines.join("\n"))
    }

    #[test]
    fn two_ranks_writing_one_lun_are_found_and_named() {
        let all = [
            rank(
                0,
                "ex1",
                &[
                    "db\ttrue\tfalse\tblock device naa.600a0b80001",
                    "log\ttrue\tfalse\tfile on ex1: /l/0",
                ],
            ),
            rank(
                1,
                "ex2",
                &[
                    "db\ttrue\tfalse\tblock device naa.600a0b80002",
                    "log\ttrue\tfalse\tfile on ex2: /l/0",
                ],
            ),
            rank(
                2,
                "ex3",
                &[
                    "db\ttrue\tfalse\tblock device naa.600a0b80001",
                    "log\ttrue\tfalse\tfile on ex3: /l/0",
                ],
            ),
        ];
        let e = collisions(&all).expect("a collision");
        assert!(
            e.starts_with("rank 0 on ex1 (target db), rank 2 on ex3 (target db) would all use block device naa.600a0b80001"),
            "{e}"
        );
        assert!(!e.contains("ex2"), "{e}");
        assert!(!e.contains("/l/0"), "same path, other hosts: {e}");
    }

    #[test]
    fn reading_together_or_sharing_by_slices_is_allowed() {
        let read = [
            rank(0, "a", &["db\tfalse\tfalse\tblock device X"]),
            rank(1, "b", &["db\tfalse\tfalse\tblock device X"]),
        ];
        assert_eq!(collisions(&read), None);
        let sliced = [
            rank(0, "a", &["db\ttrue\ttrue\tblock device X"]),
            rank(1, "b", &["db\ttrue\ttrue\tblock device X"]),
        ];
        assert_eq!(collisions(&sliced), None);
        let one_not = [
            rank(0, "a", &["db\ttrue\ttrue\tblock device X"]),
            rank(1, "b", &["db\tfalse\tfalse\tblock device X"]),
        ];
        assert!(collisions(&one_not).is_some());
    }

    #[test]
    fn a_local_file_is_this_hosts_and_a_missing_one_its_directorys() {
        let dir = tempfile::tempdir().unwrap();
        let all = mounts::mounts();
        let new = dir.path().join("new.dat");
        let id = identity(&new, "h", &all);
        let canonical = std::fs::canonicalize(dir.path()).unwrap().join("new.dat");
        assert_eq!(id, format!("file on h: {}", canonical.display()));
        std::fs::write(&new, b"x").unwrap();
        assert_eq!(identity(&new, "h", &all), id, "the same once it exists");
        assert_ne!(identity(&new, "other", &all), id);
    }
}
