//! storlab's own cost, as its I/O threads measure it: their CPU time, the time they were ready
//! to run but had no CPU (the run-queue wait, from the kernel's schedstat), their time slices,
//! their context switches, the system calls they made (counted by storlab itself: ring
//! entries, psync's reads and writes, sleeps, the reads of these counters), and how late the
//! sleeps that ran to their deadline woke. Pure data, kept per interval and added like every
//! other statistic, so a phase's cost is the sum of its intervals'.

use serde::{Deserialize, Serialize};

/// The cost of one or more I/O threads over some time (an interval, a phase).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    /// CPU time the threads ran (user and kernel), ns.
    pub cpu_ns: u64,
    /// Time the threads were ready to run but waited for a CPU (run-queue wait), ns.
    pub run_queue_wait_ns: u64,
    /// Times a thread was put on a CPU (each may have waited in the run queue first).
    pub timeslices: u64,
    /// Voluntary context switches: a thread slept (waiting for I/O, a time, the bell).
    pub voluntary_switches: u64,
    /// Involuntary context switches: a thread was preempted.
    pub involuntary_switches: u64,
    /// System calls the threads made, as storlab counts them: io_uring_enter calls, psync's
    /// reads, writes and syncs, sleeps, and the reads of these counters (one per interval).
    pub syscalls: u64,
    /// Sleeps with nothing in flight that ran to their deadline (the next intended I/O, the
    /// interval's end).
    pub timed_wakes: u64,
    /// How late those sleeps woke, in all: timer slack plus the wait for a CPU, ns.
    pub wake_lateness_ns: u64,
    /// The latest of them, ns.
    pub wake_lateness_max_ns: u64,
    /// The most one thread waited for a CPU between two readings of its own counters, ns: an
    /// upper bound of its longest single wait (a thread reads its counters while it runs, so
    /// no wait spans a reading; readings are at every interval's end and at most a second of
    /// the thread's time apart). Added in schema 1.23.
    #[serde(default)]
    pub run_queue_wait_max_ns: u64,
}

impl Cost {
    /// Adds `other` into `self` (the maximum is the larger).
    pub(crate) fn add(&mut self, other: &Cost) {
        self.cpu_ns += other.cpu_ns;
        self.run_queue_wait_ns += other.run_queue_wait_ns;
        self.timeslices += other.timeslices;
        self.voluntary_switches += other.voluntary_switches;
        self.involuntary_switches += other.involuntary_switches;
        self.syscalls += other.syscalls;
        self.timed_wakes += other.timed_wakes;
        self.wake_lateness_ns += other.wake_lateness_ns;
        self.wake_lateness_max_ns = self.wake_lateness_max_ns.max(other.wake_lateness_max_ns);
        self.run_queue_wait_max_ns = (self.run_queue_wait_max_ns).max(other.run_queue_wait_max_ns);
    }

    /// Records a sleep that ran to its deadline and woke `late_ns` after it.
    #[inline]
    pub(crate) fn woke_late(&mut self, late_ns: u64) {
        self.timed_wakes += 1;
        self.wake_lateness_ns += late_ns;
        self.wake_lateness_max_ns = self.wake_lateness_max_ns.max(late_ns);
    }

    /// Context switches of both kinds.
    pub(crate) fn switches(&self) -> u64 {
        self.voluntary_switches + self.involuntary_switches
    }

    /// The mean wait for a CPU of a thread that became ready to run, ns (0 without a slice).
    pub(crate) fn mean_run_queue_wait_ns(&self) -> f64 {
        if self.timeslices == 0 {
            0.0
        } else {
            self.run_queue_wait_ns as f64 / self.timeslices as f64
        }
    }
}

/// The cumulative counters of one thread, as the kernel keeps them: what a thread reads at
/// each interval's end, the difference of two readings being the interval's [`Cost`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ThreadCounters {
    /// `/proc/thread-self/schedstat`: time on a CPU, ns.
    pub cpu_ns: u64,
    /// Time waiting in the run queue, ns.
    pub run_queue_wait_ns: u64,
    /// Time slices run.
    pub timeslices: u64,
    /// `/proc/thread-self/status`: `voluntary_ctxt_switches`.
    pub voluntary_switches: u64,
    /// `nonvoluntary_ctxt_switches`.
    pub involuntary_switches: u64,
}

impl ThreadCounters {
    /// Reads the three numbers of a schedstat file (`cpu wait slices`).
    pub(crate) fn parse_schedstat(text: &str) -> Option<(u64, u64, u64)> {
        let mut it = text.split_ascii_whitespace().map(|w| w.parse::<u64>().ok());
        Some((it.next()??, it.next()??, it.next()??))
    }

    /// Reads the two context-switch counts of a status file.
    pub(crate) fn parse_status(text: &str) -> Option<(u64, u64)> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Some((
            field("voluntary_ctxt_switches:")?,
            field("nonvoluntary_ctxt_switches:")?,
        ))
    }

    /// What happened between `before` and `self` (counters only grow; a reading that failed
    /// gives 0, not a negative count).
    pub(crate) fn since(&self, before: &ThreadCounters) -> Cost {
        Cost {
            cpu_ns: self.cpu_ns.saturating_sub(before.cpu_ns),
            run_queue_wait_ns: self
                .run_queue_wait_ns
                .saturating_sub(before.run_queue_wait_ns),
            timeslices: self.timeslices.saturating_sub(before.timeslices),
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(before.voluntary_switches),
            involuntary_switches: (self.involuntary_switches)
                .saturating_sub(before.involuntary_switches),
            ..Cost::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_files_are_read() {
        assert_eq!(
            ThreadCounters::parse_schedstat("1234 56 7\n"),
            Some((1234, 56, 7))
        );
        assert_eq!(ThreadCounters::parse_schedstat("1 2"), None);
        let status =
            "Name:\tstorlab-w0\nvoluntary_ctxt_switches:\t41\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(ThreadCounters::parse_status(status), Some((41, 3)));
        // The real files of this thread.
        let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
        assert!(ThreadCounters::parse_schedstat(&s).is_some(), "{s}");
        let s = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        assert!(ThreadCounters::parse_status(&s).is_some());
    }

    #[test]
    fn costs_add_and_keep_the_largest_lateness() {
        let mut a = Cost::default();
        a.woke_late(10);
        a.woke_late(30);
        let mut b = Cost {
            syscalls: 5,
            ..Cost::default()
        };
        b.woke_late(20);
        a.add(&b);
        assert_eq!(a.timed_wakes, 3);
        assert_eq!(a.wake_lateness_ns, 60);
        assert_eq!(a.wake_lateness_max_ns, 30);
        assert_eq!(a.syscalls, 5);
        let before = ThreadCounters {
            cpu_ns: 10,
            voluntary_switches: 4,
            ..Default::default()
        };
        let after = ThreadCounters {
            cpu_ns: 25,
            voluntary_switches: 9,
            ..Default::default()
        };
        let d = after.since(&before);
        assert_eq!((d.cpu_ns, d.voluntary_switches), (15, 5));
        assert_eq!(before.since(&after).cpu_ns, 0);
    }
}
