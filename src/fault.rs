//! A failure in any thread ends the run: every thread storlab starts for a run (the workers,
//! the live view's server; the collector and host sampler run on the calling thread) runs
//! inside [`Failure::guard`], which catches a panic, records which thread failed and why, and
//! sets the run's stop flag and rings the bell (`crate::bell`). Every wait of the run looks at
//! that flag with a deadline instead of blocking, so the run ends within a second of the
//! failure, with its results written and
//! marked failed with the reason. Also the test-only fault hook ([`inject`]) that makes one
//! kind of thread panic, to prove it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Where a failed thread leaves its reason, and the stop flag it raises. Cloned into every
/// thread of a run.
#[derive(Clone, Default)]
pub(crate) struct Failure {
    stop: Arc<AtomicBool>,
    why: Arc<Mutex<Option<String>>>,
}

impl Failure {
    /// A failure record that raises `stop` (the run's stop flag, the one signals raise too).
    pub(crate) fn new(stop: Arc<AtomicBool>) -> Self {
        Failure {
            stop,
            why: Arc::default(),
        }
    }

    /// Runs `body` as the thread `who` ("worker `w1`", "the collector"); a panic is caught,
    /// recorded with its message and stops the run, and `None` is returned.
    pub(crate) fn guard<T>(&self, who: &str, body: impl FnOnce() -> T) -> Option<T> {
        match catch_unwind(AssertUnwindSafe(body)) {
            Ok(v) => Some(v),
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".into());
                self.record(&format!("{who} panicked: {message}"));
                None
            }
        }
    }

    /// Records `why` (the first failure is kept) and stops the run.
    pub(crate) fn record(&self, why: &str) {
        let mut slot = self.why.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| why.to_string());
        self.stop.store(true, Ordering::SeqCst);
        crate::bell::ring();
    }

    /// What failed, when a thread did.
    pub(crate) fn reason(&self) -> Option<String> {
        self.why.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The kinds of thread the fault hook can make panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An I/O worker, as it starts (before the start gate).
    Worker,
    /// The collector, at its first interval.
    Collector,
    /// The host sampler (CPU and device counters), at its first sample.
    Sampler,
    /// The live view's server thread, as it starts.
    Live,
}

impl Kind {
    #[cfg(debug_assertions)]
    fn name(self) -> &'static str {
        match self {
            Kind::Worker => "worker",
            Kind::Collector => "collector",
            Kind::Sampler => "sampler",
            Kind::Live => "live",
        }
    }
}

/// The environment variable of the fault hook (debug builds only): `worker`, `collector`,
/// `sampler` or `live` makes that kind of thread panic; `worker-stuck` (and so on) makes it
/// stop forever without looking at the stop flag.
#[cfg(debug_assertions)]
pub(crate) const TEST_PANIC: &str = "STORLAB_TEST_PANIC";

/// The test-only fault hook: in a debug build, panics (or sticks) when [`TEST_PANIC`] names
/// `kind`. A release build has no hook (the call compiles to nothing).
#[inline]
pub(crate) fn inject(kind: Kind) {
    #[cfg(debug_assertions)]
    if let Ok(v) = std::env::var(TEST_PANIC) {
        if v == kind.name() {
            panic!("test fault injected into the {} thread", kind.name());
        }
        // `worker-stuck` and the like: the thread never returns and never looks at the
        // stop flag (a system call on a hung device).
        if v == format!("{}-stuck", kind.name()) {
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = kind;
}

/// The environment variable of the test-only signal hook (debug builds only): `read-back`
/// makes the process send itself SIGINT once the final read-back of `--verify` has read its
/// first range, as a user's Ctrl-C partway through it would.
#[cfg(debug_assertions)]
pub(crate) const TEST_SIGNAL: &str = "STORLAB_TEST_SIGNAL";

/// The test-only signal hook: in a debug build, sends this process SIGINT the first time it
/// is called at the point [`TEST_SIGNAL`] names. A release build has no hook.
#[inline]
pub(crate) fn signal_at(point: &str) {
    #[cfg(debug_assertions)]
    if std::env::var(TEST_SIGNAL).is_ok_and(|v| v == point) {
        static SENT: AtomicBool = AtomicBool::new(false);
        if !SENT.swap(true, Ordering::SeqCst) {
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::INT,
            );
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = point;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_recorded_and_stops_the_run() {
        let stop = Arc::new(AtomicBool::new(false));
        let f = Failure::new(Arc::clone(&stop));
        assert_eq!(f.guard("worker `a`", || 7), Some(7));
        assert!(!stop.load(Ordering::SeqCst) && f.reason().is_none());
        let out: Option<()> = f.guard("worker `b`", || panic!("bad {}", 1));
        assert_eq!(out, None);
        assert!(stop.load(Ordering::SeqCst));
        assert_eq!(f.reason().unwrap(), "worker `b` panicked: bad 1");
        // The first failure is the one kept.
        let _ = f.guard("the collector", || panic!("later"));
        assert_eq!(f.reason().unwrap(), "worker `b` panicked: bad 1");
    }

    #[test]
    fn a_thread_that_panics_is_caught_in_its_own_thread() {
        let f = Failure::default();
        let g = f.clone();
        std::thread::spawn(move || g.guard("the live view's server", || panic!("x")))
            .join()
            .expect("the guard caught the panic");
        assert_eq!(f.reason().unwrap(), "the live view's server panicked: x");
    }
}
