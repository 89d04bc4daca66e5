//! The last resort that keeps a stop request's promise while the workers run: once the run is
//! asked to stop (Ctrl-C, SIGTERM, a thread that failed), its threads normally end within a
//! few milliseconds and the run writes its results. A thread that does not (stuck in a
//! system call on a hung device, or in a loop that never looks at the stop flag) would keep
//! the run waiting for it forever. The watchdog, a thread of its own, waits [`GRACE`] after
//! the stop; if the workers have still not all ended, it writes the results the time series
//! allows (as `storlab report` does after `kill -9`), marked with why the run stopped and that
//! a thread did not, and ends the process with exit code 1.

use super::Signals;
use crate::results;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the threads of a run may take to end after a stop request before the watchdog
/// ends the process: well above what a healthy worker takes to finish its I/Os in flight,
/// and short enough that a stop request always ends the run within two seconds.
pub(super) const GRACE: Duration = Duration::from_millis(1500);

/// Longest the watchdog sleeps without looking at its flags (the bell wakes it sooner: a stop
/// request, the run's end).
const SLEEP_NS: u64 = 10_000_000_000;

/// Watches one run's workers from [`Watchdog::start`] until it is dropped (the workers have
/// all ended).
pub(super) struct Watchdog {
    done: Arc<AtomicBool>,
}

impl Watchdog {
    /// Starts watching: `results` is the run's results file (its time series beside it).
    pub(super) fn start(signals: &Signals, results: PathBuf) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let (signals, watched) = (signals.clone(), Arc::clone(&done));
        // Without the thread (none can be started) a run is as it was: it ends when its
        // threads do.
        let _ = std::thread::Builder::new()
            .name("storlab-watchdog".into())
            .spawn(move || watch(&signals, &watched, &results));
        Watchdog { done }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        crate::bell::ring();
    }
}

fn watch(signals: &Signals, done: &AtomicBool, results: &std::path::Path) {
    let mut stopped: Option<Instant> = None;
    loop {
        // Asleep until a stop request or the run's end rings the bell, then until the grace
        // after the stop has passed: it costs the run nothing while it goes well.
        let ticket = crate::bell::ticket();
        if done.load(Ordering::SeqCst) {
            return;
        }
        if !signals.stop.load(Ordering::SeqCst) {
            crate::bell::sleep_for(ticket, SLEEP_NS);
            continue;
        }
        let since = *stopped.get_or_insert_with(Instant::now);
        if let Some(left) = GRACE.checked_sub(since.elapsed()) {
            crate::bell::sleep_for(ticket, left.as_nanos() as u64 + 1);
            continue;
        }
        let why = signals
            .reason("the run")
            .unwrap_or_else(|| "stopped during the run".into());
        let series = results::file::timeseries_path(results);
        let late = format!(
            "{why}; a thread of the run did not end within {} of the stop, so storlab ended the process",
            crate::units::format_seconds(GRACE.as_secs_f64())
        );
        // The results the time series allows; before its first complete interval, the file
        // written as the workers started (job, targets, host), without measurements.
        let ended = match results::recovery::load(&series) {
            Ok((mut r, _)) => {
                let recovered = r.interrupted.reason().unwrap_or_default().to_string();
                r.interrupted = results::Interrupted::Yes(format!(
                    "{late}; these results are recovered from the time series: {recovered}"
                ));
                Some(r)
            }
            Err(_) => results::file::load(results).ok().map(|mut r| {
                r.interrupted = results::Interrupted::Yes(format!(
                    "{late}, before any interval was complete: there are no measurements"
                ));
                r
            }),
        };
        if let Some(r) = ended {
            let _ = results::file::save(results, &r);
        }
        std::process::exit(crate::exit::RUNTIME);
    }
}
