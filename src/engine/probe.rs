//! Probes io_uring at start: whether a ring can be created, and if not, what blocked it (the
//! `kernel.io_uring_disabled` sysctl, a seccomp filter, the memlock limit, an old kernel).

use io_uring::IoUring;

/// Why io_uring is not usable, with what to do about it; `Ok` when it is.
pub(crate) fn io_uring() -> Result<(), String> {
    match IoUring::new(8) {
        Ok(ring) => {
            if ring.params().is_feature_ext_arg() {
                Ok(())
            } else {
                Err("the kernel's io_uring lacks IORING_FEAT_EXT_ARG (Linux 5.11 or later is needed)".into())
            }
        }
        Err(e) => Err(diagnose(&e)),
    }
}

/// What sysfs says of polled I/O on the device under `fd` (the device itself, or the one
/// holding the file): its `queue/io_poll` flag, for the reason a poll probe failed.
pub(crate) fn poll_queues(fd: std::os::fd::RawFd) -> String {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(m) = std::fs::metadata(format!("/proc/self/fd/{fd}")) else {
        return "the device is unknown".into();
    };
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    let base = format!(
        "/sys/dev/block/{}:{}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev)
    );
    // A partition has no queue of its own: its disk's is one level up.
    for queue in [format!("{base}/queue"), format!("{base}/../queue")] {
        if let Ok(v) = std::fs::read_to_string(format!("{queue}/io_poll")) {
            let name = std::fs::canonicalize(format!("{queue}/.."))
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "the device".into());
            return format!("{name}'s queue/io_poll is {}", v.trim());
        }
    }
    format!("{base} has no queue/io_poll")
}

fn diagnose(e: &std::io::Error) -> String {
    let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    let seccomp = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Seccomp:").map(|v| v.trim().to_string()))
        });
    match e.raw_os_error() {
        Some(libc::ENOSYS) => format!(
            "io_uring_setup failed ({e}): the kernel has no io_uring, or a seccomp filter{} returns ENOSYS for it",
            seccomp
                .map(|s| format!(" (Seccomp: {s})"))
                .unwrap_or_default()
        ),
        Some(libc::EPERM) if sysctl.unwrap_or(0) > 0 => format!(
            "io_uring_setup failed ({e}): the sysctl kernel.io_uring_disabled is {}; set it to 0 (or add this user to kernel.io_uring_group when it is 1)",
            sysctl.unwrap_or(0)
        ),
        Some(libc::EPERM) => format!(
            "io_uring_setup failed ({e}): blocked by a seccomp filter or security policy (Seccomp: {}); allow io_uring_setup/io_uring_enter for storlab",
            seccomp.unwrap_or_else(|| "unknown".into())
        ),
        Some(libc::ENOMEM) => {
            let limit = rustix::process::getrlimit(rustix::process::Resource::Memlock);
            format!(
                "io_uring_setup failed ({e}): the locked-memory limit is too low ({} bytes); raise it with `ulimit -l`",
                limit
                    .current
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "unlimited".into())
            )
        }
        _ => format!("io_uring_setup failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn probe_reports_something_clear() {
        match super::io_uring() {
            Ok(()) => {}
            Err(m) => assert!(m.contains("io_uring"), "{m}"),
        }
    }
}
