//! The mount table and the swap areas, from `/proc/self/mountinfo` and `/proc/swaps`: the one
//! parser of these files in the crate (the placement of a target in the results and the
//! target guard both use it), the kernel's `\NNN` octal escapes, and the mount that holds a path.

use super::DeviceNumber;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// One line of `/proc/self/mountinfo` (proc(5)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    /// Device number of the mounted filesystem, as `st_dev` of its files shows it (an
    /// anonymous `0:N` for tmpfs, btrfs and other filesystems without one block device).
    pub dev: DeviceNumber,
    /// The directory of the filesystem that appears at the mount point: `/` for a whole
    /// filesystem, another path for a bind mount or a btrfs subvolume.
    pub root: PathBuf,
    /// Where it is mounted, byte for byte (escapes undone).
    pub mount_point: PathBuf,
    /// Filesystem type: `ext4`, `btrfs`, `tmpfs`, `proc`, `fuse.sshfs`...
    pub fstype: String,
    /// The mount source, byte for byte: a device path for disk filesystems (`/dev/vda2`),
    /// otherwise whatever was given to mount (`tmpfs`, `server:/export`, possibly empty).
    pub source: OsString,
    /// Per-mount options followed by the superblock options not already listed, e.g.
    /// `rw,relatime,compress=zstd:3`; the per-mount `ro`/`rw` wins over the superblock's.
    pub options: String,
}

impl Mount {
    /// The device number of the block device the source names (`/dev/sda2`), when it names
    /// one: btrfs reports an anonymous `dev`, so this is how its device is found.
    pub(crate) fn source_device(&self) -> Option<DeviceNumber> {
        block_device_number(Path::new(&self.source))
    }
}

/// The device number of `path` when it is a block device node.
pub(crate) fn block_device_number(path: &Path) -> Option<DeviceNumber> {
    if !path.is_absolute() {
        return None;
    }
    let metadata = std::fs::metadata(path).ok()?;
    metadata
        .file_type()
        .is_block_device()
        .then(|| DeviceNumber::of(metadata.rdev()))
}

/// The mounts of this process's mount namespace, in mount order; empty when
/// `/proc/self/mountinfo` cannot be read.
pub(crate) fn mounts() -> Vec<Mount> {
    std::fs::read("/proc/self/mountinfo")
        .map(|text| parse_mountinfo(&text))
        .unwrap_or_default()
}

/// Parses the text of `/proc/self/mountinfo`; malformed lines are skipped.
///
/// Fields are separated by exactly one space: the kernel escapes spaces, tabs, newlines and
/// backslashes inside fields, so an empty field (an empty mount source) keeps its place. (The
/// former parser in `stats::host` split on runs of whitespace, which shifted the fields after
/// an empty source; the one in `engine::target` split on single spaces, kept here.) The text is
/// bytes, not UTF-8: a mount point may hold any byte but `/` and NUL.
pub(crate) fn parse_mountinfo(text: &[u8]) -> Vec<Mount> {
    text.split(|&b| b == b'\n')
        .filter_map(parse_mountinfo_line)
        .collect()
}

fn parse_mountinfo_line(line: &[u8]) -> Option<Mount> {
    let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    // Mount ID and parent ID are numbers: a cheap check that this is a mountinfo line.
    for id in fields.get(..2)? {
        std::str::from_utf8(id).ok()?.parse::<u64>().ok()?;
    }
    let dev = DeviceNumber::parse(std::str::from_utf8(fields.get(2)?).ok()?)?;
    // Optional fields ("shared:1", "master:2"...) end with a lone "-".
    let separator = 6 + fields.get(6..)?.iter().position(|f| *f == b"-")?;
    let fstype = String::from_utf8_lossy(fields.get(separator + 1)?).into_owned();
    if fstype.is_empty() {
        return None;
    }
    let text = |field: &[u8]| String::from_utf8_lossy(field).into_owned();
    Some(Mount {
        dev,
        root: PathBuf::from(OsString::from_vec(unescape_octal(fields.get(3)?))),
        mount_point: PathBuf::from(OsString::from_vec(unescape_octal(fields.get(4)?))),
        fstype,
        source: OsString::from_vec(unescape_octal(fields.get(separator + 2)?)),
        options: merge_options(
            &text(fields.get(5)?),
            &fields
                .get(separator + 3)
                .map(|f| text(f))
                .unwrap_or_default(),
        ),
    })
}

/// Undoes the `\NNN` escapes the kernel writes for a space (`\040`), tab (`\011`), newline
/// (`\012`) and backslash (`\134`) in `/proc` mount and swap files, byte for byte.
///
/// Only `\0NN` to `\3NN` are escapes (a byte is at most `\377`); anything else is kept as
/// written. Of the two former copies, this is the one from `stats::host` (bytes in, bytes
/// out); the one in `engine::target` turned invalid UTF-8 into U+FFFD.
pub(crate) fn unescape_octal(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field.get(i + 1..i + 4).filter(|digits| {
            field[i] == b'\\'
                && digits.iter().all(|d| (b'0'..=b'7').contains(d))
                && digits[0] <= b'3'
        });
        match octal {
            Some(digits) => {
                out.push(digits.iter().fold(0u8, |value, d| value * 8 + (d - b'0')));
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

/// Per-mount options followed by the superblock options not already listed; the per-mount
/// `ro`/`rw` wins over the superblock's.
fn merge_options(per_mount: &str, superblock: &str) -> String {
    let mut options: Vec<&str> = per_mount.split(',').filter(|o| !o.is_empty()).collect();
    let has_mode = options.iter().any(|o| matches!(*o, "ro" | "rw"));
    for option in superblock.split(',').filter(|o| !o.is_empty()) {
        if !options.contains(&option) && (!has_mode || !matches!(option, "ro" | "rw")) {
            options.push(option);
        }
    }
    options.join(",")
}

/// The mount that holds `path` (canonical), a file of device `dev`: among the mounts of that
/// device the one with the longest mount point that is a prefix of `path`, the later (upper)
/// mount on ties; else the last mount of that device; else (a btrfs subvolume has its own
/// anonymous device) the longest matching mount point of any device.
pub(crate) fn find_mount<'a>(
    mounts: &'a [Mount],
    dev: DeviceNumber,
    path: &Path,
) -> Option<&'a Mount> {
    let same_dev = || mounts.iter().filter(move |m| m.dev == dev);
    longest_prefix(same_dev(), path)
        .or_else(|| same_dev().next_back())
        .or_else(|| longest_prefix(mounts.iter(), path))
}

fn longest_prefix<'a>(mounts: impl Iterator<Item = &'a Mount>, path: &Path) -> Option<&'a Mount> {
    mounts
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len())
}

/// The swap areas in use (files and devices), from `/proc/swaps`; empty when it cannot be read.
pub(crate) fn swaps() -> Vec<PathBuf> {
    std::fs::read("/proc/swaps")
        .map(|text| parse_swaps(&text))
        .unwrap_or_default()
}

/// The file names in the text of `/proc/swaps`, after its header line. Columns are separated
/// by runs of spaces and tabs; the name's own spaces and tabs are escaped.
pub(crate) fn parse_swaps(text: &[u8]) -> Vec<PathBuf> {
    text.split(|&b| b == b'\n')
        .skip(1)
        .filter_map(|line| {
            line.split(|b| b.is_ascii_whitespace())
                .find(|field| !field.is_empty())
        })
        .map(|name| PathBuf::from(OsString::from_vec(unescape_octal(name))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    /// `path` as the bytes the kernel would escape in `/proc` files.
    fn escaped(path: &Path) -> String {
        let mut out = String::new();
        for &b in path.as_os_str().as_bytes() {
            match b {
                b' ' | b'\t' | b'\n' | b'\\' => out.push_str(&format!("\\{b:03o}")),
                _ => out.push(char::from(b)),
            }
        }
        out
    }

    fn dev(major: u32, minor: u32) -> DeviceNumber {
        DeviceNumber { major, minor }
    }

    /// Recorded from a Fedora host with btrfs subvolumes and a bind mount (IDs and sizes as
    /// they were), plus lines made to test escapes, an empty source and malformed input.
    const MOUNTINFO: &str = "\
23 1 0:21 / / rw,relatime shared:1 - btrfs /dev/vda2 rw,seclabel,compress=zstd:1,discard=async,space_cache=v2,subvolid=257,subvol=/root
24 23 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
25 23 0:23 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw,seclabel
26 23 0:5 / /dev rw,nosuid shared:8 - devtmpfs devtmpfs rw,seclabel,size=4096k,nr_inodes=1048576,mode=755
62 23 0:21 /home /home rw,relatime shared:31 - btrfs /dev/vda2 rw,seclabel,compress=zstd:1,discard=async,space_cache=v2,subvolid=256,subvol=/home
70 23 252:1 / /srv ro,noatime shared:40 master:2 - ext4 /dev/vdb1 rw
71 23 252:1 /exports/db /mnt/db-bind ro,noatime shared:40 master:2 - ext4 /dev/vdb1 rw
80 23 0:50 / /mnt/with\\040space\\011tab\\134slash rw,relatime shared:50 - tmpfs tmpfs rw,size=1024k
81 23 0:51 / /mnt/empty-source rw - tmpfs  rw,size=1024k
82 23 0:52 / /mnt/not\\477octal rw - tmpfs tmpfs rw
garbage line
83 23 0:53 / /mnt/no-separator rw shared:1 tmpfs tmpfs rw
84 23 0:54 / /mnt/no-type rw -
x 23 0:55 / /mnt/bad-id rw - tmpfs tmpfs rw
85 23 0-56 / /mnt/bad-dev rw - tmpfs tmpfs rw
";

    fn parsed() -> Vec<Mount> {
        parse_mountinfo(MOUNTINFO.as_bytes())
    }

    fn at<'a>(mounts: &'a [Mount], point: &str) -> &'a Mount {
        mounts
            .iter()
            .find(|m| m.mount_point == Path::new(point))
            .unwrap_or_else(|| panic!("no mount at {point}: {mounts:#?}"))
    }

    #[test]
    fn malformed_lines_are_skipped() {
        let mounts = parsed();
        assert_eq!(mounts.len(), 10, "{mounts:#?}");
        for point in [
            "/mnt/no-separator",
            "/mnt/no-type",
            "/mnt/bad-id",
            "/mnt/bad-dev",
        ] {
            assert!(!mounts.iter().any(|m| m.mount_point == Path::new(point)));
        }
        assert!(parse_mountinfo(b"").is_empty());
        assert!(parse_mountinfo(b"\n\n").is_empty());
    }

    #[test]
    fn escaped_space_tab_and_backslash_are_undone_byte_for_byte() {
        let mounts = parsed();
        let m = at(&mounts, "/mnt/with space\ttab\\slash");
        assert_eq!(m.fstype, "tmpfs");
        assert_eq!(m.dev, dev(0, 50));
        assert_eq!(
            escaped(&m.mount_point),
            "/mnt/with\\040space\\011tab\\134slash"
        );
        // \477 is not a byte: kept as written.
        at(&mounts, "/mnt/not\\477octal");
        assert_eq!(unescape_octal(br"a\134b\040c\9\04"), b"a\\b c\\9\\04");
        assert_eq!(unescape_octal(br"\012\000\377"), b"\n\0\xff");
        // Bytes that are not UTF-8 survive.
        let raw = b"20 1 8:1 / /mnt/caf\xe9 rw - ext4 /dev/sda1 rw\n";
        let mounts = parse_mountinfo(raw);
        assert_eq!(
            mounts[0].mount_point.as_os_str().as_bytes(),
            b"/mnt/caf\xe9"
        );
    }

    #[test]
    fn btrfs_subvolumes_keep_source_and_options() {
        let mounts = parsed();
        let root = at(&mounts, "/");
        let home = at(&mounts, "/home");
        assert_eq!(root.fstype, "btrfs");
        assert_eq!(root.source, "/dev/vda2");
        assert_eq!(home.source, "/dev/vda2");
        assert_eq!(home.root, Path::new("/home"));
        assert_eq!(
            home.options,
            "rw,relatime,seclabel,compress=zstd:1,discard=async,space_cache=v2,subvolid=256,subvol=/home"
        );
        assert!(root.options.ends_with("subvolid=257,subvol=/root"));
        // A file in a nested subvolume has its own anonymous device: found by its path.
        let found = find_mount(&mounts, dev(0, 99), Path::new("/home/u/.cache/x")).unwrap();
        assert_eq!(found.mount_point, Path::new("/home"));
    }

    #[test]
    fn optional_fields_and_option_merging() {
        let mounts = parsed();
        let srv = at(&mounts, "/srv");
        assert_eq!(srv.dev, dev(252, 1));
        assert_eq!(srv.fstype, "ext4");
        assert_eq!(srv.source, "/dev/vdb1");
        // The per-mount "ro" wins over the superblock's "rw".
        assert_eq!(srv.options, "ro,noatime");
        let devtmpfs = at(&mounts, "/dev");
        assert_eq!(devtmpfs.fstype, "devtmpfs");
        assert_eq!(
            devtmpfs.options,
            "rw,nosuid,seclabel,size=4096k,nr_inodes=1048576,mode=755"
        );
        // An empty source keeps the fields after it in place.
        let empty = at(&mounts, "/mnt/empty-source");
        assert_eq!(empty.source, "");
        assert_eq!(empty.options, "rw,size=1024k");
    }

    #[test]
    fn bind_mounts_share_a_device_and_the_longest_mount_point_wins() {
        let mounts = parsed();
        let bind = at(&mounts, "/mnt/db-bind");
        assert_eq!(bind.dev, at(&mounts, "/srv").dev);
        assert_eq!(bind.root, Path::new("/exports/db"));
        let find = |dev, path: &str| {
            find_mount(&mounts, dev, Path::new(path)).map(|m| m.mount_point.clone())
        };
        assert_eq!(
            find(dev(252, 1), "/mnt/db-bind/x"),
            Some("/mnt/db-bind".into())
        );
        assert_eq!(find(dev(252, 1), "/srv/x"), Some("/srv".into()));
        // A path of that device under neither: its last mount.
        assert_eq!(find(dev(252, 1), "/elsewhere"), Some("/mnt/db-bind".into()));
        assert_eq!(find(dev(0, 22), "/proc/1/mem"), Some("/proc".into()));
        assert_eq!(find(dev(0, 21), "/var/tmp/f"), Some("/".into()));
        assert_eq!(find(dev(7, 7), "/sys/x"), Some("/sys".into()));
        assert_eq!(find_mount(&[], dev(0, 1), Path::new("/")), None);
    }

    #[test]
    fn swaps_are_parsed_with_escapes() {
        let swaps = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                     /dev/sda2                               partition\t8388604\t\t0\t\t-2\n\
                     /swap\\040file                           file\t\t1024\t\t0\t\t-3\n\
                     \n";
        assert_eq!(
            parse_swaps(swaps.as_bytes()),
            [PathBuf::from("/dev/sda2"), PathBuf::from("/swap file")]
        );
        assert!(parse_swaps(b"Filename Type Size Used Priority\n").is_empty());
        assert!(parse_swaps(b"").is_empty());
    }

    #[test]
    fn live_mounts_include_root_and_proc() {
        let mounts = mounts();
        assert!(mounts.iter().any(|m| m.mount_point == Path::new("/")));
        let proc_mem = std::fs::canonicalize("/proc/self/mem").unwrap();
        let dev = DeviceNumber::of(std::fs::metadata(&proc_mem).unwrap().dev());
        assert_eq!(find_mount(&mounts, dev, &proc_mem).unwrap().fstype, "proc");
    }
}
