//! A worker thread's own cost meter: the kernel's counters of the calling thread
//! (`/proc/thread-self/schedstat`: CPU time, run-queue wait, time slices;
//! `/proc/thread-self/status`: context switches), opened once when the worker starts and read
//! again (one `pread` each) at every interval's end, never on the per-I/O path. The
//! difference between two readings is the interval's [`Cost`]. Between them, a thread whose
//! interval is longer than a second reads its run-queue wait alone once a second ([`Meter::peek`]),
//! so that the most it waited between two readings ([`Cost::run_queue_wait_max_ns`]) bounds its
//! longest wait at any interval length.

use crate::stats::cost::{Cost, ThreadCounters};
use std::os::fd::OwnedFd;

/// The calling thread's counters, open.
pub(super) struct Meter {
    schedstat: Option<OwnedFd>,
    status: Option<OwnedFd>,
    last: ThreadCounters,
    /// The run-queue wait at the latest reading or peek, ns.
    waited: u64,
    /// The most waited between two of them since the interval's reading, ns.
    window_max: u64,
}

/// The system calls one [`Meter::read`] makes.
pub(super) const READ_SYSCALLS: u64 = 2;

/// The longest the thread runs between two readings of its run-queue wait, ns.
pub(super) const PEEK_NS: u64 = 1_000_000_000;

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
            waited: 0,
            window_max: 0,
        };
        meter.last = meter.counters();
        meter.waited = meter.last.run_queue_wait_ns;
        meter
    }

    /// The thread's cost since the last reading (system calls and sleeps are the loop's to
    /// add).
    pub(super) fn read(&mut self) -> Cost {
        let now = self.counters();
        let mut cost = now.since(&self.last);
        self.window(now.run_queue_wait_ns);
        cost.run_queue_wait_max_ns = std::mem::take(&mut self.window_max);
        self.last = now;
        cost
    }

    /// Reads the run-queue wait alone (one `pread`), closing a window of the thread's time.
    pub(super) fn peek(&mut self) {
        if let Some((_, wait, _)) = self.text_schedstat() {
            self.window(wait);
        }
    }

    /// A window of the thread's time ends with its run-queue wait at `wait`.
    fn window(&mut self, wait: u64) {
        self.window_max = self.window_max.max(wait.saturating_sub(self.waited));
        self.waited = wait;
    }

    fn text_schedstat(&self) -> Option<(u64, u64, u64)> {
        let mut buf = [0u8; 256];
        let n = rustix::io::pread(self.schedstat.as_ref()?, &mut buf, 0).ok()?;
        ThreadCounters::parse_schedstat(&String::from_utf8_lossy(&buf[..n]))
    }

    fn counters(&self) -> ThreadCounters {
        let mut buf = [0u8; 4096];
        let mut text = |fd: &Option<OwnedFd>| -> Option<String> {
            let n = rustix::io::pread(fd.as_ref()?, &mut buf, 0).ok()?;
            Some(String::from_utf8_lossy(&buf[..n]).into_owned())
        };
        let mut c = ThreadCounters::default();
        if let Some((cpu, wait, slices)) = self.text_schedstat() {
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

    #[test]
    fn the_longest_window_is_one_part_of_the_whole_wait() {
        let mut m = Meter::start();
        // Two threads that spin on one CPU wait for it in turns.
        let cpu = rustix::thread::sched_getcpu();
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu);
        let spin = move || {
            let _ = rustix::thread::sched_setaffinity(None, &set);
            let until = std::time::Instant::now() + std::time::Duration::from_millis(150);
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
        };
        let other = std::thread::spawn(spin);
        spin();
        m.peek();
        spin();
        other.join().unwrap();
        let c = m.read();
        assert!(c.run_queue_wait_ns > 0, "{c:?}");
        assert!(
            c.run_queue_wait_max_ns > 0 && c.run_queue_wait_max_ns <= c.run_queue_wait_ns,
            "{c:?}"
        );
        // The next window starts afresh.
        assert!(m.read().run_queue_wait_max_ns <= c.run_queue_wait_max_ns);
    }
}
