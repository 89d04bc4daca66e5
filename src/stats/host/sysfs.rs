//! Block devices as sysfs shows them: the kernel name of a device number
//! (`/sys/dev/block/MAJOR:MINOR`), a device's model, partitions, holders and logical block
//! size, and its I/O counters file (`/sys/class/block/NAME/stat`). The one reader of these
//! files in the crate: the placement of a target in the results, the host sampler and the
//! target guard all use it.

use super::DeviceNumber;
use std::path::{Path, PathBuf};

/// The contents of a sysfs (or `/proc`) attribute file without surrounding whitespace; `None`
/// when it cannot be read or is empty. (Of the two former copies, the one from `stats::host`:
/// an empty attribute, such as a blank model, says nothing.)
pub(crate) fn read_trimmed(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// A block device or one of its partitions, as the kernel names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlockDevice {
    /// Kernel name: `sda`, `sda1`, `nvme0n1p2`, `loop0p1`.
    pub name: String,
    /// Its device number.
    pub dev: DeviceNumber,
    /// Its directory in sysfs (`/sys/devices/.../block/sda`), when there is one.
    pub dir: Option<PathBuf>,
}

impl BlockDevice {
    /// The block device numbered `dev`, found through `/sys/dev/block/MAJOR:MINOR`.
    pub(crate) fn of(dev: DeviceNumber) -> Option<BlockDevice> {
        let dir = std::fs::canonicalize(format!("/sys/dev/block/{dev}")).ok()?;
        Some(BlockDevice {
            name: dir.file_name()?.to_str()?.to_owned(),
            dev,
            dir: Some(dir),
        })
    }

    /// The partitions of this (whole) device, in partition order.
    pub(crate) fn partitions(&self) -> Vec<BlockDevice> {
        let Some(entries) = self.dir.as_deref().and_then(|d| std::fs::read_dir(d).ok()) else {
            return Vec::new();
        };
        let mut partitions: Vec<(u64, BlockDevice)> = Vec::new();
        for entry in entries.flatten() {
            let dir = entry.path();
            let Some(number) = read_trimmed(&dir.join("partition")) else {
                continue;
            };
            let Some(dev) = read_trimmed(&dir.join("dev")).and_then(|d| DeviceNumber::parse(&d))
            else {
                continue;
            };
            partitions.push((
                number.parse().unwrap_or(u64::MAX),
                BlockDevice {
                    name: entry.file_name().to_string_lossy().into_owned(),
                    dev,
                    dir: Some(dir),
                },
            ));
        }
        partitions.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
        partitions.into_iter().map(|(_, device)| device).collect()
    }

    /// The kernel names of the devices built on this one (device-mapper, md RAID, bcache...),
    /// sorted: the entries of its `holders` directory.
    pub(crate) fn holders(&self) -> Vec<String> {
        let Some(entries) = self
            .dir
            .as_deref()
            .and_then(|d| std::fs::read_dir(d.join("holders")).ok())
        else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// Kernel name of the block device numbered `dev` (`sda2`), from the `/sys/dev/block` link.
pub(crate) fn block_name(dev: DeviceNumber) -> Option<String> {
    let target = std::fs::read_link(format!("/sys/dev/block/{dev}")).ok()?;
    Some(target.file_name()?.to_str()?.to_owned())
}

/// Model of the block device `name` (`device/model` of the disk holding it), or the backing
/// file of a loop device.
pub(crate) fn device_model(name: &str) -> Option<String> {
    let dir = class_dir(name)?;
    if let Some(backing) = read_trimmed(&dir.join("loop/backing_file")) {
        return Some(format!("loop (backing {backing})"));
    }
    read_trimmed(&disk_dir(dir)?.join("device/model"))
}

/// The `/sys` directory of the disk a block device's directory `dir` belongs to: `dir` itself,
/// or its parent when it is a partition.
fn disk_dir(dir: PathBuf) -> Option<PathBuf> {
    match dir.join("partition").exists() {
        true => dir.join("..").canonicalize().ok(),
        false => Some(dir),
    }
}

/// The logical block size of the block device numbered `dev` (or of the disk holding it when
/// it is a partition).
pub(crate) fn logical_block_size(dev: DeviceNumber) -> Option<u32> {
    let base = PathBuf::from(format!("/sys/dev/block/{dev}"));
    [
        base.join("queue/logical_block_size"),
        base.join("../queue/logical_block_size"),
    ]
    .iter()
    .find_map(|candidate| {
        read_trimmed(candidate)
            .and_then(|text| text.parse::<u32>().ok())
            .filter(|&size| size > 0)
    })
}

/// The disk under block device `name` (itself, or the disk holding it when it is a partition)
/// and the requests that disk takes at once: `queue/nr_requests` for each of its hardware
/// queues (`mq/*`). `None` for a device that queues no requests of its own (bio-based, such
/// as device-mapper's: no `mq` directory) or that `/sys` does not describe.
pub(crate) fn request_slots(name: &str) -> Option<(String, u64)> {
    let disk = disk_dir(class_dir(name)?)?;
    let per_queue: u64 = read_trimmed(&disk.join("queue/nr_requests"))?
        .parse()
        .ok()?;
    let queues = std::fs::read_dir(disk.join("mq")).ok()?.count() as u64;
    let disk_name = disk.file_name()?.to_str()?.to_owned();
    Some((disk_name, per_queue * queues)).filter(|&(_, slots)| slots > 0)
}

/// The text of `/sys/class/block/NAME/stat` (the I/O counters of block device `name`).
pub(crate) fn block_stat(name: &str) -> Option<String> {
    std::fs::read_to_string(class_dir(name)?.join("stat")).ok()
}

/// `/sys/class/block/NAME`, for a plain kernel name only (no `/`, not `.` or `..`).
fn class_dir(name: &str) -> Option<PathBuf> {
    (!name.is_empty() && !name.contains('/') && !name.starts_with('.'))
        .then(|| Path::new("/sys/class/block").join(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn names_that_are_not_kernel_names_are_not_read() {
        assert_eq!(block_stat("../../etc"), None);
        assert_eq!(block_stat(""), None);
        assert_eq!(block_stat(".."), None);
        assert_eq!(device_model("../x"), None);
        assert_eq!(request_slots("../x"), None);
        assert_eq!(block_stat("no-such-disk"), None);
        assert_eq!(read_trimmed(Path::new("/nonexistent/storlab")), None);
    }

    #[test]
    fn live_block_devices_are_named_sized_and_counted() {
        let Ok(entries) = std::fs::read_dir("/sys/class/block") else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // Loop devices' partitions come and go with other tests' loop devices.
            if name.starts_with("loop") {
                continue;
            }
            let Some(dev) =
                read_trimmed(&entry.path().join("dev")).and_then(|d| DeviceNumber::parse(&d))
            else {
                continue;
            };
            assert_eq!(block_name(dev).as_deref(), Some(name.as_str()));
            let device = BlockDevice::of(dev).unwrap();
            assert_eq!(device.name, name);
            assert!(logical_block_size(dev).is_some_and(|s| s.is_power_of_two()));
            // A blk-mq disk (and its partitions) says how many requests it takes; zram,
            // bio-based, has no queues.
            if disk_dir(entry.path()).unwrap().join("mq").exists() {
                let (of, slots) = request_slots(&name).unwrap_or_else(|| panic!("{name}"));
                assert!(name.starts_with(&of) && slots > 0, "{name}: {of} {slots}");
            } else {
                assert_eq!(request_slots(&name), None, "{name}");
            }
            assert!(block_stat(&name).is_some());
            for partition in device.partitions() {
                assert!(partition.name.starts_with(&name), "{partition:?}");
                assert_eq!(block_name(partition.dev), Some(partition.name.clone()));
            }
        }
        // A device number without a device.
        let none = DeviceNumber::of(std::fs::metadata("/proc").unwrap().dev());
        assert_eq!(BlockDevice::of(none), None);
    }
}
