//! A worker thread's own cost meter: the kernel's counters of the calling thread
//! (`/proc/thread-self/schedstat`: CPU time, run-queue wait, time slices;
//! `/proc/thread-self/status`: context switches), opened once when the worker starts and read
//! again (one `pread` each) at every interval's end, never on the per-I/O path. The
//! difference between two readings is the interval's [`Cost`].

use crate::stats::cost::{Cost, ThreadCounters};
use std::os::fd::OwnedFd;

/// The calling thread's counters, open.
pub(super) struct Meter {
    schedstat: Option<OwnedFd>,
    status: Option<OwnedFd>,
    last: ThreadCounters,
}

/// The system calls one [`Meter::read`] makes.
pub(super) const READ_SYSCALLS: u64 = 2;

impl Meter {
    /// Opens the calling thread's counter files (a kernel without them gives zeros) and takes
    /// the first reading.
    pub(super) fn start() -> Meter {
        let open = |name: &str| {
            rustix::fs::open(
                name,
                rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .ok()
        };
        let mut meter = Meter {
            schedstat: open("/proc/thread-self/schedstat"),
            status: open("/proc/thread-self/status"),
            last: ThreadCounters::default(),
        };
        meter.last = meter.counters();
        meter
    }

    /// The thread's cost since the last reading (system calls and sleeps are the loop's to
    /// add).
    pub(super) fn read(&mut self) -> Cost {
        let now = self.counters();
        let cost = now.since(&self.last);
        self.last = now;
        cost
    }

    fn counters(&self) -> ThreadCounters {
        let mut buf = [0u8; 4096];
        let mut text = |fd: &Option<OwnedFd>| -> Option<String> {
            let n = rustix::io::pread(fd.as_ref()?, &mut buf, 0).ok()?;
            Some(String::from_utf8_lossy(&buf[..n]).into_owned())
        };
        let mut c = ThreadCounters::default();
        if let Some((cpu, wait, slices)) =
            text(&self.schedstat).and_then(|s| ThreadCounters::parse_schedstat(&s))
        {
            (c.cpu_ns, c.run_queue_wait_ns, c.timeslices) = (cpu, wait, slices);
        }
        if let Some((v, i)) = text(&self.status).and_then(|s| ThreadCounters::parse_status(&s)) {
            (c.voluntary_switches, c.involuntary_switches) = (v, i);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_sees_the_threads_own_sleeps_and_cpu() {
        let mut m = Meter::start();
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let c = m.read();
        // Each sleep is a voluntary switch; the reads themselves add none.
        assert!(c.voluntary_switches >= 5, "{c:?}");
        assert!(c.cpu_ns > 0 && c.timeslices >= 5, "{c:?}");
        // A second reading starts from the first.
        let again = m.read();
        assert!(again.voluntary_switches < c.voluntary_switches, "{again:?}");
    }
}
