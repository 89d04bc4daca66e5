//! storlab's own cost and the host's delays as the views say them (console and HTML): the
//! sentence beside the host's CPU (per I/O: system calls, context switches, CPU; how long
//! the I/O threads waited for a CPU), and what spins on purpose.

use crate::results::cost::{CostResult, PhaseCost};
use crate::units::{format_ns, format_number, format_pct};

/// `per I/O: 2.1 system calls, 2.0 context switches, 63 µs of CPU · I/O threads waited 108 µs
/// for a CPU per wake, 1.2 ms at worst after a timed sleep, 4.0 ms at most between two
/// readings (0.50% of their time) · the kernel's I/O threads waited 3.1 ms at most over two
/// readings (ksoftirqd/0) · the machine's CPUs contended 2.39% of the time`: the measured
/// phase's cost.
pub(crate) fn sentence(c: &CostResult) -> String {
    let m = &c.measure;
    let mut s = format!(
        "per I/O: {} system calls, {} context switches, {} of CPU · {}",
        format_number(m.syscalls_per_io),
        format_number(m.switches_per_io),
        format_ns(m.cpu_us_per_io * 1e3),
        waited(m),
    );
    if let (Some(ns), Some(name)) = (c.kernel_wait_max_ns, &c.kernel_wait_thread) {
        s.push_str(&format!(
            " · the kernel's I/O threads waited {} at most over two readings ({name})",
            format_ns(ns as f64)
        ));
    }
    if let Some(p) = m.cpu_pressure_pct {
        s.push_str(&format!(
            " · the machine's CPUs contended {} of the time",
            format_pct(p)
        ));
    }
    s
}

/// How long the I/O threads waited for a CPU.
fn waited(m: &PhaseCost) -> String {
    // A file older than the readings between intervals (schema 1.23) has none.
    let window = match m.threads.run_queue_wait_max_ns {
        0 => String::new(),
        ns => format!(", {} at most between two readings", format_ns(ns as f64)),
    };
    format!(
        "I/O threads waited {} for a CPU per wake, {} at worst after a timed sleep{window} ({} of their time)",
        format_ns(m.run_queue_wait_mean_ns),
        format_ns(m.threads.wake_lateness_max_ns as f64),
        format_pct(m.run_queue_wait_pct),
    )
}

/// What spins on purpose, a sentence (`None`: every wait sleeps).
pub(crate) fn spinning(c: &CostResult) -> Option<String> {
    (!c.spinning.is_empty()).then(|| format!("spins on purpose: {}", c.spinning.join("; ")))
}
