//! Who holds a lock: the `flock` locks of `/proc/locks`, and a process's name from
//! `/proc/PID/comm`, so a refusal can name the process a file or device is in use by.

use super::DeviceNumber;

/// One `FLOCK` lock of `/proc/locks`: the process that took it and the file it is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Flock {
    pid: u32,
    dev: DeviceNumber,
    ino: u64,
}

/// Parses the text of `/proc/locks` (proc(5)): its granted `FLOCK` locks (waiters, the lines
/// with `->`, and POSIX or OFD locks are left out). A line reads
/// `1: FLOCK  ADVISORY  WRITE 1234 08:02:5767 0 EOF`: the process id, the device (major and
/// minor in hexadecimal) and the inode.
fn parse(text: &str) -> Vec<Flock> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(1) != Some(&"FLOCK") {
                return None;
            }
            let pid = fields.get(4)?.parse().ok()?;
            let mut id = fields.get(5)?.splitn(3, ':');
            let major = u32::from_str_radix(id.next()?, 16).ok()?;
            let minor = u32::from_str_radix(id.next()?, 16).ok()?;
            let ino = id.next()?.parse().ok()?;
            Some(Flock {
                pid,
                dev: DeviceNumber { major, minor },
                ino,
            })
        })
        .collect()
}

/// The process holding a `flock` lock on the file `(dev, ino)` (its `st_dev` and `st_ino`),
/// other than `except`. A filesystem whose files report another device than its superblock's
/// (btrfs subvolumes) is matched by the inode alone when only one locked file has it. `None`
/// when `/proc/locks` cannot be read or names no such process.
pub(crate) fn flock_holder(dev: u64, ino: u64, except: u32) -> Option<u32> {
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    holder_in(&parse(&text), DeviceNumber::of(dev), ino, except)
}

fn holder_in(locks: &[Flock], dev: DeviceNumber, ino: u64, except: u32) -> Option<u32> {
    let others = || locks.iter().filter(|l| l.ino == ino && l.pid != except);
    if let Some(exact) = others().find(|l| l.dev == dev) {
        return Some(exact.pid);
    }
    let mut by_inode = others();
    match (by_inode.next(), by_inode.next()) {
        (Some(only), None) => Some(only.pid),
        _ => None,
    }
}

/// Whether this process holds a `flock` lock on the file `(dev, ino)`.
pub(crate) fn held_by_self(dev: u64, ino: u64) -> bool {
    let me = std::process::id();
    let Ok(text) = std::fs::read_to_string("/proc/locks") else {
        return false;
    };
    parse(&text)
        .iter()
        .any(|l| l.pid == me && l.ino == ino && l.dev == DeviceNumber::of(dev))
}

/// "process 1234 (storlab)": process `pid` with its command name, when it can be read.
pub(crate) fn process_text(pid: u32) -> String {
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(name) if !name.trim().is_empty() => format!("process {pid} ({})", name.trim()),
        _ => format!("process {pid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCKS: &str = "\
1: FLOCK  ADVISORY  WRITE 4242 fd:01:1048577 0 EOF
1: -> FLOCK  ADVISORY  WRITE 777 fd:01:1048577 0 EOF
2: POSIX  ADVISORY  WRITE 999 08:02:55 0 EOF
3: FLOCK  ADVISORY  WRITE 31 00:2c:55 0 EOF
4: OFDLCK ADVISORY  READ  -1 00:05:12 0 EOF
";

    #[test]
    fn flock_locks_are_read_with_hexadecimal_devices() {
        let locks = parse(LOCKS);
        assert_eq!(
            locks,
            [
                Flock {
                    pid: 4242,
                    dev: DeviceNumber {
                        major: 0xfd,
                        minor: 1
                    },
                    ino: 1_048_577
                },
                Flock {
                    pid: 31,
                    dev: DeviceNumber {
                        major: 0,
                        minor: 0x2c
                    },
                    ino: 55
                },
            ]
        );
        let dm = DeviceNumber {
            major: 253,
            minor: 1,
        };
        assert_eq!(holder_in(&locks, dm, 1_048_577, 1), Some(4242));
        // The holder itself is left out: nobody else holds it.
        assert_eq!(holder_in(&locks, dm, 1_048_577, 4242), None);
        // Another device number (a btrfs subvolume's): the one lock on that inode.
        assert_eq!(holder_in(&locks, DeviceNumber::of(0), 55, 1), Some(31));
        assert_eq!(holder_in(&locks, dm, 56, 1), None);
    }

    #[test]
    fn a_lock_this_process_takes_is_found_in_proc_locks() {
        use std::os::unix::fs::MetadataExt;
        let file = tempfile::tempfile().unwrap();
        let meta = file.metadata().unwrap();
        assert!(!held_by_self(meta.dev(), meta.ino()));
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
        assert!(held_by_self(meta.dev(), meta.ino()));
        // Seen from another process, this one holds it.
        assert_eq!(
            flock_holder(meta.dev(), meta.ino(), 0),
            Some(std::process::id())
        );
        assert!(process_text(std::process::id()).starts_with("process "));
    }
}
