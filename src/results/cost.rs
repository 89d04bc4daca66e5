//! storlab's own cost in a results file: per phase (the ramp, the measured time), the CPU of
//! the whole process, and for its I/O threads their CPU, system calls, context switches,
//! run-queue wait and the lateness of their timed sleeps, in all and per I/O; and what spins
//! on purpose. The figures a verdict weighs to tell the host's delays from the storage's
//! ([`super::verdict::HostDelay`]).

use crate::stats::cost::Cost;
use crate::stats::host::CpuPercent;
use serde::{Deserialize, Serialize};

/// What storlab itself cost while the run ran (schema 1.18).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostResult {
    /// The measured time.
    pub measure: PhaseCost,
    /// The ramp, when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<PhaseCost>,
    /// How late the collector's own timed wake-ups (one at each measured interval's end) were,
    /// at worst, ns: a sample of the host's delays to a thread ready to run, even in a run
    /// whose I/O threads never sleep on a timer (closed loop).
    #[serde(default)]
    pub probe_lateness_max_ns: u64,
    /// The most one of the kernel's threads on the targets' I/O path (each CPU's
    /// `ksoftirqd`, the targets' filesystems' journal threads) waited for a CPU in the measured
    /// time, within two adjacent readings (at every interval's end and at least once a
    /// second), ns: what a latency may include beyond storlab's own threads' waits. Absent
    /// when no reading was made (schema 1.23).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_wait_max_ns: Option<u64>,
    /// The thread that waited that long, by the kernel's name (`jbd2/loop0-8`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_wait_thread: Option<String>,
    /// What spins on purpose, using CPU while it waits (the kernel's SQPOLL thread, polled
    /// completions, completions looked for without waiting): empty when every wait sleeps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spinning: Vec<String>,
}

/// storlab's cost over one phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseCost {
    /// The phase's length, s.
    pub seconds: f64,
    /// I/Os completed in it.
    pub ios: u64,
    /// I/O threads (workers).
    pub io_threads: usize,
    /// CPU time of the whole process, every thread (user and kernel), s: from
    /// `/proc/self/stat` at the phase's ends, in the kernel's 10 ms ticks.
    pub process_cpu_s: f64,
    /// The I/O threads' own counters, summed (`cpu_ns` is exact: the kernel's schedstat).
    pub threads: Cost,
    /// The I/O threads' CPU per I/O, µs.
    pub cpu_us_per_io: f64,
    /// System calls per I/O, as storlab counts them (`threads.syscalls`).
    pub syscalls_per_io: f64,
    /// Context switches (voluntary and involuntary) per I/O.
    pub switches_per_io: f64,
    /// Run-queue wait per I/O, ns.
    pub run_queue_wait_per_io_ns: f64,
    /// The mean wait for a CPU of an I/O thread that became ready to run, ns.
    pub run_queue_wait_mean_ns: f64,
    /// Share of the I/O threads' time (threads × the phase's length) spent waiting for a CPU,
    /// percent.
    pub run_queue_wait_pct: f64,
    /// How late the I/O threads' timed sleeps woke on average, ns (0 without one).
    pub wake_lateness_mean_ns: f64,
    /// Share of the phase some task on the machine waited for a CPU (pressure stall
    /// information), percent; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_pct: Option<f64>,
}

impl PhaseCost {
    /// The cost of a phase of `seconds` with `ios` I/Os by `io_threads` threads, whose counters
    /// are `threads`, the process's CPU over it being `cpu`.
    pub(crate) fn of(
        seconds: f64,
        ios: u64,
        io_threads: usize,
        threads: Cost,
        cpu: &CpuPercent,
    ) -> Self {
        let per_io = |x: f64| if ios == 0 { 0.0 } else { x / ios as f64 };
        let thread_time_ns = io_threads as f64 * seconds * 1e9;
        PhaseCost {
            seconds,
            ios,
            io_threads,
            process_cpu_s: cpu.process_pct() / 100.0 * seconds,
            cpu_us_per_io: per_io(threads.cpu_ns as f64 / 1e3),
            syscalls_per_io: per_io(threads.syscalls as f64),
            switches_per_io: per_io(threads.switches() as f64),
            run_queue_wait_per_io_ns: per_io(threads.run_queue_wait_ns as f64),
            run_queue_wait_mean_ns: threads.mean_run_queue_wait_ns(),
            run_queue_wait_pct: if thread_time_ns > 0.0 {
                (threads.run_queue_wait_ns as f64 / thread_time_ns * 100.0).min(100.0)
            } else {
                0.0
            },
            wake_lateness_mean_ns: if threads.timed_wakes == 0 {
                0.0
            } else {
                threads.wake_lateness_ns as f64 / threads.timed_wakes as f64
            },
            cpu_pressure_pct: cpu.system_cpu_pressure_pct,
            threads,
        }
    }

    /// `self` and `other` together, as one phase of both lengths: counters add, figures per
    /// I/O and shares are those of the sum (a sequence's runs, one after another).
    pub(crate) fn and(&self, other: &PhaseCost) -> PhaseCost {
        let seconds = self.seconds + other.seconds;
        let mut threads = self.threads;
        threads.add(&other.threads);
        let weighted = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if seconds > 0.0 => {
                Some((a * self.seconds + b * other.seconds) / seconds)
            }
            (a, b) => a.or(b),
        };
        let process_pct = if seconds > 0.0 {
            (self.process_cpu_s + other.process_cpu_s) / seconds * 100.0
        } else {
            0.0
        };
        let cpu = CpuPercent {
            process_user_pct: process_pct,
            system_cpu_pressure_pct: weighted(self.cpu_pressure_pct, other.cpu_pressure_pct),
            ..CpuPercent::default()
        };
        // Threads are the larger count: the runs are one after another, not side by side.
        let io_threads = self.io_threads.max(other.io_threads);
        let mut sum = PhaseCost::of(seconds, self.ios + other.ios, io_threads, threads, &cpu);
        // The share of the threads' time is over each run's own threads.
        let thread_time =
            self.io_threads as f64 * self.seconds + other.io_threads as f64 * other.seconds;
        sum.run_queue_wait_pct = if thread_time > 0.0 {
            (threads.run_queue_wait_ns as f64 / (thread_time * 1e9) * 100.0).min(100.0)
        } else {
            0.0
        };
        sum
    }

    #[cfg(test)]
    /// The process's CPU as a percentage of one CPU.
    pub(crate) fn process_cpu_pct(&self) -> f64 {
        if self.seconds > 0.0 {
            self.process_cpu_s / self.seconds * 100.0
        } else {
            0.0
        }
    }
}

impl CostResult {
    /// The cost of `self`'s run and then `other`'s: each phase added, the longest collector
    /// lateness, what spins in either.
    pub(crate) fn and(&self, other: &CostResult) -> CostResult {
        let ramp = match (&self.ramp, &other.ramp) {
            (Some(a), Some(b)) => Some(a.and(b)),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let mut spinning = self.spinning.clone();
        for s in &other.spinning {
            if !spinning.contains(s) {
                spinning.push(s.clone());
            }
        }
        let kernel = [self, other]
            .into_iter()
            .filter_map(|c| Some((c.kernel_wait_max_ns?, c.kernel_wait_thread.clone())))
            .max_by_key(|(ns, _)| *ns);
        CostResult {
            measure: self.measure.and(&other.measure),
            ramp,
            probe_lateness_max_ns: self.probe_lateness_max_ns.max(other.probe_lateness_max_ns),
            kernel_wait_max_ns: kernel.as_ref().map(|k| k.0),
            kernel_wait_thread: kernel.and_then(|k| k.1),
            spinning,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_io_figures_divide_by_the_ios() {
        let threads = Cost {
            cpu_ns: 3_000_000,
            run_queue_wait_ns: 600_000,
            timeslices: 300,
            voluntary_switches: 280,
            involuntary_switches: 20,
            syscalls: 450,
            timed_wakes: 100,
            wake_lateness_ns: 5_000_000,
            wake_lateness_max_ns: 400_000,
            run_queue_wait_max_ns: 300_000,
        };
        let cpu = CpuPercent {
            process_user_pct: 4.0,
            process_system_pct: 1.0,
            system_cpu_pressure_pct: Some(12.5),
            ..CpuPercent::default()
        };
        let p = PhaseCost::of(2.0, 150, 1, threads, &cpu);
        assert_eq!(p.syscalls_per_io, 3.0);
        assert_eq!(p.switches_per_io, 2.0);
        assert_eq!(p.cpu_us_per_io, 20.0);
        assert_eq!(p.run_queue_wait_per_io_ns, 4000.0);
        assert_eq!(p.run_queue_wait_mean_ns, 2000.0);
        assert!((p.run_queue_wait_pct - 0.03).abs() < 1e-12);
        assert_eq!(p.wake_lateness_mean_ns, 50_000.0);
        assert!((p.process_cpu_s - 0.1).abs() < 1e-12);
        assert!((p.process_cpu_pct() - 5.0).abs() < 1e-9);
        assert_eq!(p.cpu_pressure_pct, Some(12.5));
        let none = PhaseCost::of(0.0, 0, 0, Cost::default(), &CpuPercent::default());
        assert_eq!((none.syscalls_per_io, none.run_queue_wait_pct), (0.0, 0.0));
        // Two runs one after another: counters add, per-I/O figures are the sum's.
        let both = p.and(&p);
        assert_eq!((both.seconds, both.ios), (4.0, 300));
        assert_eq!(both.threads.syscalls, 900);
        assert_eq!(both.syscalls_per_io, 3.0);
        assert!((both.process_cpu_s - 0.2).abs() < 1e-9);
        assert!((both.run_queue_wait_pct - p.run_queue_wait_pct).abs() < 1e-9);
        assert_eq!(both.cpu_pressure_pct, Some(12.5));
        assert_eq!(both.threads.wake_lateness_max_ns, 400_000);
        assert_eq!(both.threads.run_queue_wait_max_ns, 300_000);
    }
}
