//! The bell that ends a sleep early. A thread with nothing to do before a deadline (a worker
//! whose next I/O is not due and that has none in flight, the watchdog, the pause between the
//! steps of a sequence) sleeps in one system call, a futex wait, until the deadline or until
//! the bell rings; whatever should end such a sleep early rings it: a stop request (the signal
//! thread), a thread that failed, a worker halting its run, a run that ends.
//!
//! There is one bell for the process. A ring meant for another run's threads (ranks as
//! threads in tests) wakes a sleeper only to look at its own flags and sleep again, which is
//! what every sleeper does after any wake.

use std::sync::atomic::{AtomicU32, Ordering};

static BELL: AtomicU32 = AtomicU32::new(0);

/// What a sleeper reads before it looks at the flags that would keep it awake: a ring after
/// this read ends its sleep at once, so no ring is missed between the look and the sleep.
#[inline]
pub(crate) fn ticket() -> u32 {
    BELL.load(Ordering::Acquire)
}

/// Rings the bell: every thread sleeping in [`sleep_until`] wakes.
pub(crate) fn ring() {
    BELL.fetch_add(1, Ordering::Release);
    let _ = rustix::thread::futex::wake(
        &BELL,
        rustix::thread::futex::Flags::PRIVATE,
        i32::MAX as u32,
    );
}

/// Sleeps until CLOCK_MONOTONIC reads `deadline_ns` (absolute, the clock of
/// [`std::time::Instant`]) or the bell rings after `ticket` was read, whichever comes first
/// (a signal may end it early too; every caller looks at its flags and clock again).
pub(crate) fn sleep_until(ticket: u32, deadline_ns: u64) {
    let at = rustix::time::Timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as i64,
        tv_nsec: (deadline_ns % 1_000_000_000) as i64,
    };
    // FUTEX_WAIT_BITSET takes an absolute deadline on CLOCK_MONOTONIC: a thread preempted
    // between reading the clock and sleeping still wakes at the intended time.
    let _ = rustix::thread::futex::wait_bitset(
        &BELL,
        rustix::thread::futex::Flags::PRIVATE,
        ticket,
        Some(&at),
        std::num::NonZeroU32::MAX,
    );
}

/// Sleeps for `ns` from now, or until the bell rings after `ticket` was read.
pub(crate) fn sleep_for(ticket: u32, ns: u64) {
    sleep_until(ticket, monotonic_ns().saturating_add(ns));
}

/// CLOCK_MONOTONIC, ns (the clock of [`std::time::Instant`]).
#[inline]
pub(crate) fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_sleep_lasts_until_its_deadline() {
        // Other tests of this process ring the bell: a sleep that ends early was rung.
        let (t, before) = (Instant::now(), ticket());
        sleep_for(before, 30_000_000);
        assert!(t.elapsed() >= Duration::from_millis(30) || ticket() != before);
    }

    #[test]
    fn a_ring_after_the_ticket_ends_the_sleep_at_once() {
        let before = ticket();
        ring();
        let t = Instant::now();
        // The ring came after the ticket: no sleep at all (the value differs).
        sleep_for(before, 60_000_000_000);
        assert!(t.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn a_ring_from_another_thread_wakes_a_sleeper() {
        let t = Instant::now();
        let sleeper = std::thread::spawn(|| sleep_for(ticket(), 60_000_000_000));
        // Ring until the sleeper is gone (it may not be asleep yet at the first ring).
        while !sleeper.is_finished() {
            ring();
            std::thread::sleep(Duration::from_millis(5));
        }
        sleeper.join().unwrap();
        assert!(t.elapsed() < Duration::from_secs(30));
    }
}
