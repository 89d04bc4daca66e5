//! Warnings about where the targets live: on memory (tmpfs), on a copy-on-write or
//! compressing filesystem, behind another layer (FUSE, NFS, overlay), or a data set smaller
//! than memory; each makes the figures say less about the storage under test.

use crate::job::{EngineKind, Job};
use crate::results::TargetResult;
use crate::units::format_size;

/// The warnings for `job` on `targets` (as opened), `data_bytes` in all, on a host with
/// `memory` bytes.
pub(super) fn warnings(
    job: &Job,
    targets: &[TargetResult],
    data_bytes: u64,
    memory: u64,
) -> Vec<String> {
    let mut w = Vec::new();
    if job.buffered {
        w.push("buffered I/O: reads may be served from the page cache and writes acknowledged before they reach the device".into());
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
    w.dedup();
    w
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
        let t = TargetResult {
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
        };
        warnings(&job(), &[t], 0, 0)
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
