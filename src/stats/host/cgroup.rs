//! The memory cgroup storlab runs in: its limit (which bounds the page cache its buffered I/O
//! can keep) and the page cache it holds, from cgroup v1 (`memory.limit_in_bytes`,
//! `memory.stat`'s `cache`) or v2 (`memory.max`, `memory.stat`'s `file`).

use super::mounts::{Mount, mounts};
use std::path::{Path, PathBuf};

/// Limits at or above this are "no limit" (v1 writes a huge page-rounded number).
const UNLIMITED: u64 = 1 << 60;

/// This process's memory cgroup: its directory and version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemoryCgroup {
    /// Its directory under the cgroup filesystem.
    pub dir: PathBuf,
    /// cgroup v2 (else v1).
    pub v2: bool,
}

impl MemoryCgroup {
    /// The memory cgroup of this process, if the system has one mounted.
    pub(crate) fn own() -> Option<MemoryCgroup> {
        let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        find(&text, &mounts())
    }

    /// Its memory limit, bytes (`None`: unlimited or unreadable).
    pub(crate) fn limit_bytes(&self) -> Option<u64> {
        let file = if self.v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        let text = std::fs::read_to_string(self.dir.join(file)).ok()?;
        text.trim().parse::<u64>().ok().filter(|&b| b < UNLIMITED)
    }

    /// The page cache it holds now, bytes.
    pub(crate) fn cache_bytes(&self) -> Option<u64> {
        let key = if self.v2 { "file" } else { "cache" };
        let text = std::fs::read_to_string(self.dir.join("memory.stat")).ok()?;
        text.lines()
            .filter_map(|l| l.split_once(' '))
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v.trim().parse().ok())
    }
}

/// The memory cgroup `/proc/self/cgroup` (`text`) names, under the cgroup mounts in `mounts`:
/// the v1 `memory` hierarchy if there is one, else the v2 one.
pub(crate) fn find(text: &str, mounts: &[Mount]) -> Option<MemoryCgroup> {
    let mut v2 = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = Path::new(path.trim_start_matches('/'));
        if controllers.split(',').any(|c| c == "memory") {
            let m = mounts
                .iter()
                .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == "memory"))?;
            return Some(MemoryCgroup {
                dir: m.mount_point.join(rel),
                v2: false,
            });
        }
        if controllers.is_empty() {
            v2 = mounts
                .iter()
                .find(|m| m.fstype == "cgroup2")
                .map(|m| MemoryCgroup {
                    dir: m.mount_point.join(rel),
                    v2: true,
                });
        }
    }
    v2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::host::mounts::parse_mountinfo;

    const MOUNTS: &str = "\
30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw
31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid shared:10 - cgroup cgroup rw,memory
";

    #[test]
    fn v1_memory_wins_and_v2_is_the_fallback() {
        let mounts = parse_mountinfo(MOUNTS.as_bytes());
        let v1 = find("4:memory:/jobs/a\n0::/user.slice\n", &mounts).unwrap();
        assert_eq!(v1.dir, Path::new("/sys/fs/cgroup/memory/jobs/a"));
        assert!(!v1.v2);
        let v2 = find("0::/user.slice/x\n", &mounts).unwrap();
        assert_eq!(v2.dir, Path::new("/sys/fs/cgroup/unified/user.slice/x"));
        assert!(v2.v2);
        assert_eq!(find("1:cpu:/\n", &mounts[..0]), None);
    }
}
