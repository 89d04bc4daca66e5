//! The destroy-data guard: what a write to a target would destroy. On a block device: its
//! mounts and those of its partitions, swap, holders (device-mapper, md RAID...), partitions,
//! and the on-disk signatures of filesystems, partition tables, volume managers and swap in its
//! first bytes. On a file: that it exists and was not created by storlab. Reads only.

use super::{TargetError, io};
use crate::stats::host::DeviceNumber;
use crate::stats::host::mounts::{self, Mount};
use crate::stats::host::sysfs::BlockDevice;
use std::fs::Metadata;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

/// How much of a device's beginning the guard reads to look for signatures (covers the btrfs
/// superblock at 64 KiB and swap signatures for pages up to 64 KiB).
const SCAN_BYTES: usize = 68 << 10;

/// The guard's finding for an existing regular file of `length` bytes that storlab did not
/// create (no valid manifest).
pub(super) fn foreign_file(length: u64) -> String {
    format!("the file exists and was not created by storlab ({length} bytes)")
}

/// What the guard found on a block device.
#[derive(Debug, Default)]
pub(super) struct DeviceFindings {
    /// What a write would destroy or disturb; empty when it is blank and unused.
    pub(super) findings: Vec<String>,
    /// Whether the running system uses it (a filesystem on it is mounted, or it is active
    /// swap): never written over, `--destroy-data` or not.
    pub(super) in_use: bool,
}

/// What a write to the block device `canonical` (requested as `path`) would destroy or
/// disturb.
pub(super) fn device_findings(
    path: &Path,
    canonical: &Path,
    metadata: &Metadata,
    readable: Option<&std::fs::File>,
) -> Result<DeviceFindings, TargetError> {
    let dev = DeviceNumber::of(metadata.rdev());
    let device = BlockDevice::of(dev).unwrap_or_else(|| BlockDevice {
        name: canonical.file_name().map_or_else(
            || dev.to_string(),
            |name| name.to_string_lossy().into_owned(),
        ),
        dev,
        dir: None,
    });
    let partitions = device.partitions();

    // What the running system uses: mounts (by device number, or by source path for
    // filesystems such as btrfs that report an anonymous device number), swap, holders.
    let mounts: Vec<(Mount, Option<DeviceNumber>)> = mounts::mounts()
        .into_iter()
        .map(|mount| {
            let source = mount.source_device();
            (mount, source)
        })
        .collect();
    let swaps: Vec<DeviceNumber> = mounts::swaps()
        .iter()
        .filter_map(|name| mounts::block_device_number(name))
        .collect();

    let mut findings = Vec::new();
    let mut in_use = false;
    let nodes = std::iter::once((&device, String::new()))
        .chain(partitions.iter().map(|p| (p, format!("{} ", p.name))));
    for (node, prefix) in nodes {
        let mut mount_points: Vec<&Path> = Vec::new();
        for (mount, source) in &mounts {
            let on_node = mount.dev == node.dev || *source == Some(node.dev);
            if on_node && !mount_points.contains(&mount.mount_point.as_path()) {
                mount_points.push(&mount.mount_point);
            }
        }
        if !mount_points.is_empty() {
            let points: Vec<String> = mount_points
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            findings.push(format!("{prefix}mounted on {}", points.join(", ")));
            in_use = true;
        }
        if swaps.contains(&node.dev) {
            findings.push(format!("{prefix}in use as swap"));
            in_use = true;
        }
        let holders = node.holders();
        if !holders.is_empty() {
            findings.push(format!("{prefix}held by {}", holders.join(", ")));
        }
    }
    if !partitions.is_empty() {
        let names: Vec<&str> = partitions.iter().map(|p| p.name.as_str()).collect();
        findings.push(format!("has partitions {}", names.join(", ")));
    }

    let head = match readable.map_or_else(
        || Err(std::io::Error::other("it cannot be opened for reading")),
        read_head,
    ) {
        Ok(head) => head,
        // In use is reason enough to refuse, whatever the flags: no need to look further.
        Err(_) if in_use => return Ok(DeviceFindings { findings, in_use }),
        Err(e) => {
            return Err(io(
                path,
                "cannot read the beginning of the device to look for existing data",
                e,
            ));
        }
    };
    findings.extend(scan_signatures(&head));
    Ok(DeviceFindings { findings, in_use })
}

/// Reads up to [`SCAN_BYTES`] from the start of `file` (open read-only, through the page
/// cache).
fn read_head(file: &std::fs::File) -> std::io::Result<Vec<u8>> {
    let mut buffer = vec![0u8; SCAN_BYTES];
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read_at(&mut buffer[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    buffer.truncate(filled);
    Ok(buffer)
}

fn bytes_at(buffer: &[u8], offset: usize, magic: &[u8]) -> bool {
    buffer.get(offset..offset + magic.len()) == Some(magic)
}

fn u16_le_at(buffer: &[u8], offset: usize) -> Option<u16> {
    let bytes = buffer.get(offset..offset + 2)?;
    Some(u16::from_le_bytes([bytes[0], bytes[1]]))
}

fn u32_le_at(buffer: &[u8], offset: usize) -> Option<u32> {
    let bytes = buffer.get(offset..offset + 4)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// Known on-disk signatures (filesystems, partition tables, volume managers, swap) in the
/// first bytes of a device, each as "WHAT signature at offset N" (or "... partition table at
/// offset N"). `head` may be shorter than [`SCAN_BYTES`] (a small device).
fn scan_signatures(head: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut add = |what: &str, offset: usize| found.push(format!("{what} at offset {offset}"));

    if bytes_at(head, 0, b"XFSB") {
        add("xfs signature", 0);
    }
    if u16_le_at(head, 1080) == Some(0xEF53) {
        add(&format!("{} signature", ext_variant(head)), 1080);
    }
    if bytes_at(head, 65600, b"_BHRfS_M") {
        add("btrfs signature", 65600);
    }
    if u32_le_at(head, 1024) == Some(0xF2F5_2010) {
        add("f2fs signature", 1024);
    }
    if bytes_at(head, 0, b"LUKS\xba\xbe") {
        add("luks (encrypted volume) signature", 0);
    }
    for offset in [0, 512, 1024, 1536] {
        if bytes_at(head, offset, b"LABELONE") {
            add("lvm2 physical volume signature", offset);
        }
    }
    // The swap signature ends the first page; page sizes of 4, 16 and 64 KiB.
    for offset in [4086, 16374, 65526] {
        if bytes_at(head, offset, b"SWAPSPACE2") || bytes_at(head, offset, b"SWAP-SPACE") {
            add("swap signature", offset);
        }
    }
    // Linux md RAID superblocks 1.1 (offset 0) and 1.2 (offset 4096).
    for offset in [0, 4096] {
        if u32_le_at(head, offset) == Some(0xA92B_4EFC) {
            add("linux md raid signature", offset);
        }
    }
    if bytes_at(head, 32769, b"CD001") {
        add("iso9660 signature", 32769);
    }
    // A ZFS label starts with its name/value list at 16 KiB.
    if let Some(nvlist) = head.get(16384..) {
        if contains(nvlist, b"pool_guid") && contains(nvlist, b"vdev_tree") {
            add("zfs label", 16384);
        }
    }

    // Boot sectors: FAT, NTFS and exFAT carry the 0x55AA boot signature of an MBR too.
    let boot_signature = bytes_at(head, 510, &[0x55, 0xAA]);
    let mut boot_filesystem = false;
    if bytes_at(head, 3, b"NTFS    ") {
        add("ntfs signature", 3);
        boot_filesystem = true;
    }
    if bytes_at(head, 3, b"EXFAT   ") {
        add("exfat signature", 3);
        boot_filesystem = true;
    }
    if boot_signature && bytes_at(head, 82, b"FAT32") {
        add("vfat signature", 82);
        boot_filesystem = true;
    } else if boot_signature && bytes_at(head, 54, b"FAT") {
        add("vfat signature", 54);
        boot_filesystem = true;
    }
    let mut gpt = false;
    for offset in [512, 4096] {
        if bytes_at(head, offset, b"EFI PART") {
            add("gpt partition table", offset);
            gpt = true;
        }
    }
    // With a GPT, the MBR is only its protective MBR.
    if boot_signature && !boot_filesystem && !gpt {
        add("dos partition table (mbr)", 510);
    }
    found
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// "ext4", "ext3" or "ext2", from the feature flags of the ext superblock at 1024.
fn ext_variant(head: &[u8]) -> &'static str {
    let compat = u32_le_at(head, 1024 + 0x5C).unwrap_or(0);
    let incompat = u32_le_at(head, 1024 + 0x60).unwrap_or(0);
    let ro_compat = u32_le_at(head, 1024 + 0x64).unwrap_or(0);
    // extents, 64bit, flex_bg, ...; huge_file, gdt_csum, dir_nlink, extra_isize, metadata_csum.
    let ext4_incompat = 0x0040 | 0x0080 | 0x0200 | 0x0400 | 0x1000 | 0x8000 | 0x10000;
    let ext4_ro_compat = 0x0008 | 0x0010 | 0x0020 | 0x0040 | 0x0400;
    if incompat & 0x0008 != 0 {
        "ext journal device"
    } else if incompat & ext4_incompat != 0 || ro_compat & ext4_ro_compat != 0 {
        "ext4"
    } else if compat & 0x0004 != 0 {
        "ext3"
    } else {
        "ext2"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::process::Command;

    fn image_with(offset: usize, magic: &[u8]) -> Vec<u8> {
        let mut image = vec![0u8; SCAN_BYTES];
        image[offset..offset + magic.len()].copy_from_slice(magic);
        image
    }

    #[test]
    fn signatures_are_found_with_their_offsets() {
        assert!(scan_signatures(&vec![0u8; SCAN_BYTES]).is_empty());
        assert!(scan_signatures(&[]).is_empty());
        assert!(scan_signatures(&[0x55; 600]).is_empty());

        let mut ext4 = image_with(1080, &[0x53, 0xEF]);
        ext4[1024 + 0x60] = 0x40; // extents
        assert_eq!(scan_signatures(&ext4), ["ext4 signature at offset 1080"]);
        let ext2 = image_with(1080, &[0x53, 0xEF]);
        assert_eq!(scan_signatures(&ext2), ["ext2 signature at offset 1080"]);

        assert_eq!(
            scan_signatures(&image_with(0, b"XFSB")),
            ["xfs signature at offset 0"]
        );
        assert_eq!(
            scan_signatures(&image_with(65600, b"_BHRfS_M")),
            ["btrfs signature at offset 65600"]
        );
        assert_eq!(
            scan_signatures(&image_with(4086, b"SWAPSPACE2")),
            ["swap signature at offset 4086"]
        );
        assert_eq!(
            scan_signatures(&image_with(512, b"LABELONE")),
            ["lvm2 physical volume signature at offset 512"]
        );
        assert_eq!(
            scan_signatures(&image_with(0, b"LUKS\xba\xbe")),
            ["luks (encrypted volume) signature at offset 0"]
        );
        assert_eq!(
            scan_signatures(&image_with(1024, &0xF2F5_2010u32.to_le_bytes())),
            ["f2fs signature at offset 1024"]
        );
        assert_eq!(
            scan_signatures(&image_with(32769, b"CD001")),
            ["iso9660 signature at offset 32769"]
        );

        // MBR alone; GPT (with its protective MBR); GPT on 4 KiB sectors.
        let mbr = image_with(510, &[0x55, 0xAA]);
        assert_eq!(
            scan_signatures(&mbr),
            ["dos partition table (mbr) at offset 510"]
        );
        let mut gpt = mbr.clone();
        gpt[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(scan_signatures(&gpt), ["gpt partition table at offset 512"]);
        assert_eq!(
            scan_signatures(&image_with(4096, b"EFI PART")),
            ["gpt partition table at offset 4096"]
        );

        // FAT and NTFS boot sectors are not reported as partition tables.
        let mut fat32 = mbr.clone();
        fat32[82..90].copy_from_slice(b"FAT32   ");
        assert_eq!(scan_signatures(&fat32), ["vfat signature at offset 82"]);
        let mut fat16 = mbr.clone();
        fat16[54..62].copy_from_slice(b"FAT16   ");
        assert_eq!(scan_signatures(&fat16), ["vfat signature at offset 54"]);
        let mut ntfs = mbr.clone();
        ntfs[3..11].copy_from_slice(b"NTFS    ");
        assert_eq!(scan_signatures(&ntfs), ["ntfs signature at offset 3"]);

        // Short buffers (small devices) never panic.
        for len in [0, 1, 511, 512, 1081, 4095, 65601] {
            let _ = scan_signatures(&ext4[..len.min(ext4.len())]);
        }
    }

    #[test]
    #[allow(clippy::print_stderr)]
    fn mkfs_ext4_image_is_recognised() {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("ext4.img");
        File::create(&image).unwrap().set_len(16 << 20).unwrap();
        match Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&image)
            .output()
        {
            Ok(output) if output.status.success() => {}
            other => {
                eprintln!("skipped: mkfs.ext4 unavailable or failed: {other:?}");
                return;
            }
        }
        let head = read_head(&std::fs::File::open(&image).unwrap()).unwrap();
        assert_eq!(head.len(), SCAN_BYTES);
        assert_eq!(scan_signatures(&head), ["ext4 signature at offset 1080"]);
    }
}
