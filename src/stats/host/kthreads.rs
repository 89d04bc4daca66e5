//! The kernel's own threads on the targets' I/O path, and how long they waited for a CPU.
//!
//! Part of an I/O's latency is spent in threads that are not storlab's: a filesystem's
//! journal thread (ext4's `jbd2/DEV-8`, which a durable write waits for; XFS's
//! `xfsaild/DEV`), and each CPU's `ksoftirqd`, which completes requests when interrupts are
//! deferred (always for a loop device, whose completions are raised from a worker). They wait
//! in the same run queues as every other task: beside CPU hogs, ext4's journal thread of a
//! loop device was seen runnable for 118 ms while storlab's own threads waited 9 ms at worst,
//! and every durable write on that filesystem waited with it. These threads are found once
//! (by name, and only if the kernel marks them its own: a process cannot pose as one) and
//! their run-queue wait (`/proc/PID/schedstat`, world-readable) is read at every measured
//! interval's end and at least once a second. Pooled workers (`kworker/*`: a loop device's,
//! direct I/O's completions) serve any device at any moment and are not watched.

use std::os::fd::OwnedFd;

/// `PF_KTHREAD`: the process flag (`/proc/PID/stat`, field 9) of a kernel thread.
const PF_KTHREAD: u64 = 0x0020_0000;

/// The longest name the kernel keeps for a task (`TASK_COMM_LEN` less its terminator).
const COMM_LEN: usize = 15;

/// The watched threads.
#[derive(Debug, Default)]
pub(crate) struct KernelThreads {
    threads: Vec<Watched>,
    /// The most one thread waited within two adjacent windows, ns, and which.
    longest: Option<(u64, usize)>,
}

#[derive(Debug)]
struct Watched {
    name: String,
    schedstat: OwnedFd,
    /// Its run-queue wait at the last reading, ns.
    waited: u64,
    /// What it waited in the window before the last one ended, ns.
    previous: u64,
}

/// Whether a thread named `comm` is on the I/O path of block devices `devices` (kernel
/// names, `sda`, `loop0`): each CPU's softirq thread, and the journal threads of the
/// filesystems on those devices or their partitions.
fn on_path(comm: &str, devices: &[String]) -> bool {
    if comm.starts_with("ksoftirqd/") {
        return true;
    }
    devices.iter().any(|dev| {
        ["jbd2/", "xfsaild/"].iter().any(|kind| {
            let want = format!("{kind}{dev}");
            comm.starts_with(&want[..want.len().min(COMM_LEN)])
        })
    })
}

/// The flags of a `/proc/PID/stat` line (its ninth field; the name, in parentheses, may
/// hold spaces and parentheses itself).
fn flags(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(6)?.parse().ok()
}

/// The run-queue wait a thread's schedstat file holds, ns.
fn read_fd(fd: &OwnedFd) -> Option<u64> {
    let mut buf = [0u8; 128];
    let n = rustix::io::pread(fd, &mut buf, 0).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    crate::stats::cost::ThreadCounters::parse_schedstat(text).map(|(_, wait, _)| wait)
}

impl KernelThreads {
    /// Finds the kernel threads on the I/O path of `devices` (none without `/proc`).
    pub(crate) fn find(devices: &[String]) -> KernelThreads {
        let mut threads = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return KernelThreads::default();
        };
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            let path = |file: &str| format!("/proc/{pid}/{file}");
            let Ok(comm) = std::fs::read_to_string(path("comm")) else {
                continue;
            };
            let comm = comm.trim_end();
            if !on_path(comm, devices) {
                continue;
            }
            let kernel = std::fs::read_to_string(path("stat"))
                .ok()
                .and_then(|s| flags(&s))
                .is_some_and(|f| f & PF_KTHREAD != 0);
            let schedstat = rustix::fs::open(
                path("schedstat").as_str(),
                rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            );
            if let (true, Ok(fd)) = (kernel, schedstat) {
                let waited = read_fd(&fd).unwrap_or(0);
                threads.push(Watched {
                    name: comm.to_string(),
                    schedstat: fd,
                    waited,
                    previous: 0,
                });
            }
        }
        threads.sort_by(|a, b| a.name.cmp(&b.name));
        KernelThreads {
            threads,
            longest: None,
        }
    }

    /// The threads' names.
    #[cfg(test)]
    fn names(&self) -> Vec<&str> {
        self.threads.iter().map(|t| t.name.as_str()).collect()
    }

    /// Ends a window: reads each thread's wait; when `measured` (the window is in the measured
    /// time), the most one waited within it and the window before counts towards
    /// [`KernelThreads::longest`] (a wait may span a reading, never two once it is shorter
    /// than a window).
    pub(crate) fn sample(&mut self, measured: bool) {
        for (i, t) in self.threads.iter_mut().enumerate() {
            let Some(now) = read_fd(&t.schedstat) else {
                continue;
            };
            let window = now.saturating_sub(t.waited);
            t.waited = now;
            let both = window + std::mem::replace(&mut t.previous, window);
            if measured && self.longest.is_none_or(|(ns, _)| both > ns) {
                self.longest = Some((both, i));
            }
        }
    }

    /// The most one of the threads waited for a CPU within two adjacent windows of the
    /// measured time, ns, and its name.
    pub(crate) fn longest(&self) -> Option<(u64, String)> {
        let (ns, i) = self.longest?;
        Some((ns, self.threads[i].name.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_the_softirq_threads_and_the_devices_journals() {
        let devs = ["loop0".to_string(), "nvme0n1p12".to_string()];
        assert!(on_path("ksoftirqd/3", &devs));
        assert!(on_path("jbd2/loop0-8", &devs));
        assert!(on_path("xfsaild/loop0", &devs));
        // A name the kernel cut at 15 characters.
        assert!(on_path("jbd2/nvme0n1p12", &devs));
        assert!(!on_path("jbd2/loop1-8", &devs));
        assert!(!on_path("kworker/u8:3-loop0", &devs));
        assert!(!on_path("jbd2/sda1-8", &[]));
    }

    #[test]
    fn flags_come_after_the_name_whatever_it_holds() {
        let stat = "14 (ksoftirqd/0) S 2 0 0 0 -1 69238848 0 0 0 0 9 1111 0 0 20 0 1 0 4";
        assert_eq!(flags(stat), Some(69238848));
        let tricky = "99 (a) b) (c) R 1 99 99 0 -1 4194560 12 0";
        assert_eq!(flags(tricky), Some(4194560));
        assert_eq!(flags("garbage"), None);
    }

    #[test]
    fn this_machines_softirq_threads_are_found_and_an_impostor_is_not() {
        // A thread of this process named like a journal thread is not the kernel's.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (named_tx, named_rx) = std::sync::mpsc::channel::<()>();
        let impostor = std::thread::spawn(move || {
            std::fs::write("/proc/thread-self/comm", "jbd2/loop99-8").unwrap();
            named_tx.send(()).unwrap();
            let _ = rx.recv();
        });
        named_rx.recv().unwrap();
        let mut k = KernelThreads::find(&["loop99".to_string()]);
        tx.send(()).unwrap();
        impostor.join().unwrap();
        let names = k.names();
        assert!(!names.iter().any(|n| n.starts_with("jbd2/")), "{names:?}");
        assert!(names.contains(&"ksoftirqd/0"), "{names:?}");
        // Readings: nothing counts before the measured time.
        k.sample(false);
        assert_eq!(k.longest(), None);
        k.sample(true);
        let (_, name) = k.longest().expect("a reading");
        assert!(name.starts_with("ksoftirqd/"), "{name}");
    }
}
