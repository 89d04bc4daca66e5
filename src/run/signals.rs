//! The process's stop requests: SIGINT and SIGTERM set flags the run looks at (the first asks
//! every phase to stop, a second exits at once with status 130) and ring the bell
//! (`crate::bell`) from a thread of their own, so a thread sleeping until a deadline wakes at
//! once; and the reason an interruption gives in the results. A thread that failed
//! (`crate::fault`) stops the run as a signal does, and its reason comes first.

use crate::fault::Failure;
use crate::results::Phase;
use anyhow::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Signal flags shared by the process: set by SIGINT/SIGTERM.
#[derive(Clone)]
pub(crate) struct Signals {
    /// Any stop request.
    pub stop: Arc<AtomicBool>,
    sigint: Arc<AtomicBool>,
    sigterm: Arc<AtomicBool>,
    /// Why the run was asked to stop, when not by a signal ([`Signals::stop_because`]).
    why: Arc<Mutex<Option<String>>>,
    /// Where a thread that failed leaves its reason (it raises `stop`).
    pub failure: Failure,
}

impl Signals {
    /// Installs handlers: the first SIGINT/SIGTERM asks the run to stop, a second one exits at
    /// once with status 130.
    pub(crate) fn install() -> Result<Signals> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let stop = Arc::new(AtomicBool::new(false));
        let sigint = Arc::new(AtomicBool::new(false));
        let sigterm = Arc::new(AtomicBool::new(false));
        // The exit is on a second signal, not on a signal after a stop for another reason
        // (rank 0 ending a run over many hosts, then writing the merged results while the
        // launcher sends SIGTERM).
        let any = Arc::new(AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM] {
            signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&any))?;
            signal_hook::flag::register(sig, Arc::clone(&any))?;
            signal_hook::flag::register(sig, Arc::clone(&stop))?;
        }
        signal_hook::flag::register(SIGINT, Arc::clone(&sigint))?;
        signal_hook::flag::register(SIGTERM, Arc::clone(&sigterm))?;
        // Registered after the flags, so they are set when the bell rings. The thread sleeps
        // in a read of the handler's pipe until a signal comes (it costs nothing meanwhile).
        let mut arrived = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
        std::thread::Builder::new()
            .name("storlab-signals".into())
            .spawn(move || {
                for _ in arrived.forever() {
                    crate::bell::ring();
                }
            })?;
        Ok(Signals {
            failure: Failure::new(Arc::clone(&stop)),
            stop,
            sigint,
            sigterm,
            why: Arc::default(),
        })
    }

    /// Flags that no signal will set (tests, library use).
    #[cfg(test)]
    pub(crate) fn none() -> Signals {
        let stop = Arc::new(AtomicBool::new(false));
        Signals {
            failure: Failure::new(Arc::clone(&stop)),
            stop,
            sigint: Arc::new(AtomicBool::new(false)),
            sigterm: Arc::new(AtomicBool::new(false)),
            why: Arc::default(),
        }
    }

    /// Asks the run to stop, for `why` (a rank of a run over many hosts that stopped
    /// answering): the results say so.
    #[cfg(any(feature = "mpi", test))]
    pub(crate) fn stop_because(&self, why: String) {
        let mut slot = self.why.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(why);
        self.stop.store(true, Ordering::Relaxed);
        crate::bell::ring();
    }

    /// Whether SIGINT or SIGTERM arrived.
    pub(crate) fn signalled(&self) -> bool {
        self.sigint.load(Ordering::Relaxed) || self.sigterm.load(Ordering::Relaxed)
    }

    /// Why the run stopped, naming where (`during`), when a stop was asked for.
    pub(crate) fn reason(&self, during: &str) -> Option<String> {
        if let Some(why) = self.failure.reason() {
            return Some(format!("failed during {during}: {why}"));
        }
        let by = if self.sigint.load(Ordering::Relaxed) {
            "SIGINT (Ctrl-C)"
        } else if self.sigterm.load(Ordering::Relaxed) {
            "SIGTERM"
        } else if let Some(why) = self.why.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return Some(format!("stopped during {during}: {why}"));
        } else if self.stop.load(Ordering::Relaxed) {
            "a stop request"
        } else {
            return None;
        };
        Some(format!("interrupted by {by} during {during}"))
    }

    /// Why the run stopped during `phase`, when a stop was asked for.
    pub(crate) fn reason_in(&self, phase: Phase) -> Option<String> {
        self.reason(&phase.to_string())
    }

    /// Asks the run to stop as SIGINT would (tests).
    #[cfg(test)]
    pub(crate) fn interrupt(&self) {
        self.sigint.store(true, Ordering::Relaxed);
        self.stop.store(true, Ordering::Relaxed);
        crate::bell::ring();
    }
}
