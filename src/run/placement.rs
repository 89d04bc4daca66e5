//! Warnings about where the targets live: on memory (tmpfs), on a copy-on-write or
//! compressing filesystem, behind another layer (FUSE, NFS, overlay), or a data set smaller
//! than memory; each makes the figures say less about the storage under test.

use crate::job::{EngineKind, Job};
use crate::results::TargetResult;
use crate::stats::host::sysfs;
use crate::units::format_size;

/// The warnings for `job` on `targets` (as opened), `data_bytes` in all, on a host with
/// `memory` bytes (and the request slots of the disks under the targets, from `/sys`).
pub(super) fn warnings(
    job: &Job,
    targets: &[TargetResult],
    data_bytes: u64,
    memory: u64,
) -> Vec<String> {
    let mut w = Vec::new();
    if job.buffered {
        match buffered_io(job) {
            (true, true) => w.push("buffered I/O: reads may be served from the page cache and writes acknowledged before they reach the device".into()),
            (true, false) => w.push("buffered I/O: reads may be served from the page cache".into()),
            (false, true) => w.push("buffered I/O: writes are acknowledged before they reach the device".into()),
            (false, false) => {}
        }
    }
    if job.engine == EngineKind::Null {
        w.push("null engine: no I/O was done; the figures are storlab's own per-I/O cost".into());
    }
    for t in targets {
        let fs = t.filesystem.as_str();
        let options = MountOptions(&t.mount_options);
        match fs {
            "tmpfs" | "ramfs" => w.push(format!(
                "target `{}` is on {fs}: it lives in memory, not on a storage device",
                t.name
            )),
            "btrfs" if options.has("nodatacow") => w.push(format!(
                "target `{}` is on btrfs mounted with nodatacow: files it creates are overwritten in place, but metadata is still copy-on-write",
                t.name
            )),
            "btrfs" | "zfs" | "bcachefs" => w.push(format!(
                "target `{}` is on {fs}, a copy-on-write filesystem: writes relocate data and may be compressed or deduplicated",
                t.name
            )),
            "overlay" | "nfs" | "nfs4" | "cifs" | "smb3" | "9p" | "virtiofs" => w.push(format!(
                "target `{}` is on {fs}: results include that layer's behaviour",
                t.name
            )),
            _ if fs == "fuse" || fs == "fuseblk" || fs.starts_with("fuse.") => w.push(format!(
                "target `{}` is on {fs}: results include that layer's behaviour",
                t.name
            )),
            _ => {}
        }
        if let Some(option) = options.compression() {
            w.push(format!(
                "target `{}` is on a filesystem mounted with compression ({option}): written data may be compressed",
                t.name
            ));
        }
    }
    if data_bytes > 0 && memory > 0 && data_bytes < memory && job.engine != EngineKind::Null {
        let caches = if job.buffered {
            "the page cache (this run is buffered) and any array or device cache"
        } else {
            "an array or device cache of that size (O_DIRECT bypasses this host's page cache)"
        };
        w.push(format!(
            "the data set ({}) is smaller than this host's memory ({}): {caches} can hold all of it, so the figures may be a cache's, not the media's",
            format_size(data_bytes),
            format_size(memory)
        ));
    }
    w.extend(queue_warnings(job, targets, sysfs::request_slots));
    w.dedup();
    w
}

/// A warning for each disk under the O_DIRECT targets that the job gives more I/Os at once
/// (the queue depths of the workers using it, added up; 1 a worker with psync) than the disk
/// takes: `slots(device)` gives the disk under a target's device and its request slots
/// (`queue/nr_requests` of each hardware queue). The I/Os beyond them wait in the kernel for a
/// slot, and how long is the kernel's queueing, not the device's (docs/methodology.md, "More
/// I/Os in flight than the device has request slots").
fn queue_warnings(
    job: &Job,
    targets: &[TargetResult],
    slots: impl Fn(&str) -> Option<(String, u64)>,
) -> Vec<String> {
    if job.buffered || job.engine == EngineKind::Null {
        return Vec::new();
    }
    // Each target's disk and its slots, looked up once.
    let disks: Vec<Option<(String, u64)>> = targets
        .iter()
        .map(|t| t.device.as_deref().filter(|_| t.direct).and_then(&slots))
        .collect();
    // (disk, slots, I/Os the job gives it at once), in the order the targets name them.
    let mut given: Vec<(&str, u64, u64)> = Vec::new();
    for w in &job.workers {
        let depth = match job.engine {
            EngineKind::Psync => 1,
            _ => u64::from(w.queue_depth),
        };
        let mut mine: Vec<(&str, u64)> = (w.targets.iter())
            .filter_map(|&t| disks.get(t)?.as_ref().map(|(d, s)| (d.as_str(), *s)))
            .collect();
        mine.sort_unstable();
        mine.dedup();
        for (disk, disk_slots) in mine {
            match given.iter_mut().find(|g| g.0 == disk) {
                Some(g) => g.2 += depth,
                None => given.push((disk, disk_slots, depth)),
            }
        }
    }
    given
        .into_iter()
        .filter(|&(_, disk_slots, at_once)| at_once > disk_slots)
        .map(|(disk, disk_slots, at_once)| format!(
            "{disk} is given up to {at_once} I/Os at once and takes {disk_slots} (queue/nr_requests): the rest wait in the kernel for a slot, some far longer than others, so the latency tail is partly that queue's; to time the device alone, keep the queue depths on it to {disk_slots} in all, or raise its nr_requests under an I/O scheduler"
        ))
        .collect()
}

/// Mount options as `/proc/self/mountinfo` lists them: `rw,relatime,compress=zstd:3`.
struct MountOptions<'a>(&'a str);

impl<'a> MountOptions<'a> {
    /// (name, value) of each option.
    fn iter(&self) -> impl Iterator<Item = (&'a str, Option<&'a str>)> {
        self.0.split(',').filter(|o| !o.is_empty()).map(|o| {
            o.split_once('=')
                .map_or((o, None), |(name, value)| (name, Some(value)))
        })
    }

    /// Whether option `name` is set (with or without a value).
    fn has(&self, name: &str) -> bool {
        self.iter().any(|(n, _)| n == name)
    }

    /// The option that turns compression on: btrfs `compress[=alg]` and
    /// `compress-force[=alg]` (not `=no`), f2fs `compress_algorithm=alg`.
    fn compression(&self) -> Option<&'a str> {
        self.0.split(',').find(|o| {
            let (name, value) = o.split_once('=').map_or((*o, None), |(n, v)| (n, Some(v)));
            let off = value.is_some_and(|v| matches!(v, "no" | "none" | "off" | "false"));
            matches!(name, "compress" | "compress-force" | "compress_algorithm") && !off
        })
    }
}

/// Whether `job`'s workers read, and whether any of their writes is acknowledged before it is
/// durable: not opened with O_DSYNC or O_SYNC, nor written with RWF_DSYNC, nor each followed by
/// a flush (a replayed trace may do anything).
fn buffered_io(job: &Job) -> (bool, bool) {
    let durable = |t: usize| {
        let t = &job.targets[t];
        t.sync || t.osync || t.fsync_every == 1
    };
    let mut reads = false;
    let mut loose_writes = false;
    for w in &job.workers {
        if w.trace.is_some() {
            return (true, true);
        }
        for a in &w.access {
            reads |= a.read_pct > 0.0;
            loose_writes |= a.read_pct < 100.0
                && !(a.sync || a.fsync_every == 1 || w.targets.iter().all(|&t| durable(t)));
        }
    }
    (reads, loose_writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        crate::job::resolve(
            &crate::job::file::parse(
                std::path::Path::new("t.toml"),
                "[[target]]\npath = \"/x\"\nsize = \"1GiB\"\n[[worker]]\n[[worker.access]]\n",
            )
            .unwrap(),
            None,
        )
        .unwrap()
    }

    fn on(filesystem: &str, mount_options: &str) -> Vec<String> {
        warnings(&job(), &[target(filesystem, mount_options)], 0, 0)
    }

    /// A 1 GiB file target on `filesystem` mounted with `mount_options`.
    fn target(filesystem: &str, mount_options: &str) -> TargetResult {
        TargetResult {
            name: "t".into(),
            path: "/x".into(),
            kind: crate::engine::target::TargetKind::File,
            size_bytes: 1 << 30,
            logical_block_size_bytes: 512,
            direct: true,
            dsync: false,
            filesystem: filesystem.into(),
            mount_point: None,
            mount_options: mount_options.into(),
            device: None,
            device_model: None,
            prepare: Default::default(),
            ops: Default::default(),
            bytes: Default::default(),
            errors: Default::default(),
        }
    }

    #[test]
    fn buffered_io_is_warned_about_for_what_the_page_cache_can_change() {
        let mut job = job();
        job.buffered = true;
        let said = |job: &Job| warnings(job, &[target("ext4", "rw")], 0, 0).join("\n");
        job.workers[0].access[0].read_pct = 70.0;
        assert!(
            said(&job).contains("reads may be served from the page cache and writes acknowledged")
        );
        job.workers[0].access[0].fsync_every = 1;
        let w = said(&job);
        assert!(
            w.contains("reads may be served") && !w.contains("writes"),
            "{w}"
        );
        job.workers[0].access[0].read_pct = 0.0;
        assert_eq!(
            said(&job),
            "",
            "each write followed by a flush: nothing to say"
        );
        job.workers[0].access[0].fsync_every = 2;
        assert!(said(&job).contains("writes are acknowledged before they reach the device"));
        job.targets[0].osync = true;
        assert_eq!(said(&job), "", "an O_SYNC target");
    }

    #[test]
    fn filesystems_that_are_not_plain_storage_are_named() {
        assert!(on("tmpfs", "rw")[0].contains("on tmpfs: it lives in memory"));
        assert!(on("btrfs", "rw,relatime,ssd")[0].contains("copy-on-write"));
        assert!(on("btrfs", "rw,nodatacow")[0].contains("nodatacow"));
        assert!(on("fuse.sshfs", "rw")[0].contains("fuse.sshfs"));
        assert!(on("ext4", "rw,relatime").is_empty());
        assert!(on("xfs", "rw").is_empty());
    }

    /// `workers` (queue depth, targets) over targets on `devices`, O_DIRECT or not.
    fn given(engine: &str, workers: &[(u32, &[usize])], devices: &[(&str, bool)]) -> Vec<String> {
        let mut text = format!("engine = \"{engine}\"\n");
        for i in 0..devices.len() {
            text += &format!("[[target]]\nname = \"t{i}\"\npath = \"/x{i}\"\nsize = \"1GiB\"\n");
        }
        for (qd, ts) in workers {
            let names: Vec<String> = ts.iter().map(|t| format!("\"t{t}\"")).collect();
            text += &format!(
                "[[worker]]\nqueue_depth = {qd}\ntargets = [{}]\n[[worker.access]]\n",
                names.join(", ")
            );
        }
        let path = std::path::Path::new("t.toml");
        let job =
            crate::job::resolve(&crate::job::file::parse(path, &text).unwrap(), None).unwrap();
        let targets: Vec<TargetResult> = (devices.iter())
            .map(|&(device, direct)| TargetResult {
                device: Some(device.into()),
                direct,
                ..target("ext4", "rw")
            })
            .collect();
        // sda1 and sda2 are partitions of sda (64 slots); nvme0n1 takes 1023 on each of 4
        // queues; dm-0 queues nothing itself.
        queue_warnings(&job, &targets, |d| match d {
            "sda" | "sda1" | "sda2" => Some(("sda".into(), 64)),
            "nvme0n1" => Some(("nvme0n1".into(), 4 * 1023)),
            _ => None,
        })
    }

    #[test]
    fn more_ios_at_once_than_a_disk_takes_are_warned_of_per_disk() {
        // Two workers of 48 on two partitions of one disk: 96 against its 64.
        let w = given(
            "io_uring",
            &[(48, &[0]), (48, &[1])],
            &[("sda1", true), ("sda2", true)],
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("sda is given up to 96 I/Os at once and takes 64"),
            "{w:?}"
        );
        // A worker over both partitions counts once: 48 + 16.
        let w = given(
            "io_uring",
            &[(48, &[0, 1]), (16, &[1])],
            &[("sda1", true), ("sda2", true)],
        );
        assert!(w.is_empty(), "{w:?}");
        // Exactly the slots: no warning; one more: a warning.
        assert!(given("io_uring", &[(64, &[0])], &[("sda", true)]).is_empty());
        assert_eq!(
            given("io_uring", &[(64, &[0]), (1, &[0])], &[("sda", true)]).len(),
            1
        );
        // Many queues take many: 512 on NVMe's 4 × 1023 is fine.
        assert!(given("io_uring", &[(128, &[0][..]); 4], &[("nvme0n1", true)]).is_empty());
        // A bio-based device, a buffered target, psync (one I/O a worker) and the null engine
        // put nothing in a request queue of their own making.
        assert!(given("io_uring", &[(512, &[0])], &[("dm-0", true)]).is_empty());
        assert!(given("io_uring", &[(512, &[0])], &[("sda", false)]).is_empty());
        assert!(given("psync", &[(512, &[0][..]); 4], &[("sda", true)]).is_empty());
        assert!(given("null", &[(512, &[0])], &[("sda", true)]).is_empty());
    }

    #[test]
    fn compression_options_are_found_and_only_they() {
        let compressed = |o: &str| MountOptions(o).compression().map(str::to_string);
        assert_eq!(
            compressed("rw,relatime,compress=zstd:3,ssd"),
            Some("compress=zstd:3".into())
        );
        assert_eq!(
            compressed("rw,compress-force=lzo"),
            Some("compress-force=lzo".into())
        );
        assert_eq!(compressed("rw,compress"), Some("compress".into()));
        assert_eq!(
            compressed("rw,compress_algorithm=lz4"),
            Some("compress_algorithm=lz4".into())
        );
        assert_eq!(compressed("rw,compress=no"), None);
        assert_eq!(compressed("rw,subvol=/compress,subvolid=5"), None);
        assert_eq!(compressed("rw,relatime"), None);
        let w = on("btrfs", "rw,compress-force=zstd:3");
        assert!(
            w.iter()
                .any(|w| w.contains("mounted with compression (compress-force=zstd:3)")),
            "{w:?}"
        );
    }
}
