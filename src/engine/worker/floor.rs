//! A worker's floor on its rate (fio's `rate_iops_min` and `ratemin`): once the settling time
//! has passed, each cycle's completed I/Os a second must reach the floor, or the worker ends
//! the run with an error that names its rate. It costs the per-I/O loop nothing: the loop
//! compares the time with the next check's, and a check counts what the worker's measured
//! statistics already hold.

use crate::job::MinRate;
use crate::stats::StatsSet;

/// fio's settling time: no cycle is judged in a worker's first 2 s of I/O.
pub(super) const SETTLE_NS: u64 = 2_000_000_000;

/// The cycle being counted.
pub(super) struct Floor {
    iops: f64,
    cycle_ns: u64,
    /// When the next check is due.
    pub(super) due_ns: u64,
    /// When the cycle being counted began and the I/Os completed by then (`None` before the
    /// first).
    since: Option<(u64, u64)>,
}

/// The I/Os `totals` holds that completed without an error.
pub(super) fn completed(totals: &StatsSet) -> u64 {
    (totals.classes.iter())
        .flat_map(|c| &c.dirs)
        .map(|d| d.ops - d.errors)
        .sum()
}

impl Floor {
    /// The floor of a worker whose first I/O is at `first_ns` and whose measured phase begins
    /// at `ramp_ns`: its first cycle begins at the later of the ramp's end and the end of the
    /// settling time.
    pub(super) fn new(rate: &MinRate, first_ns: u64, ramp_ns: u64) -> Floor {
        Floor {
            iops: rate.iops,
            cycle_ns: rate.cycle_ns.max(1),
            due_ns: ramp_ns.max(first_ns.saturating_add(SETTLE_NS)),
            since: None,
        }
    }

    /// At `now_ns` (at or after [`Floor::due_ns`]), with `done` I/Os completed in all: the
    /// end of a cycle that fell below the floor, said as the run's error; a cycle that met it
    /// starts the next.
    pub(super) fn check(&mut self, now_ns: u64, done: u64) -> Option<String> {
        if let Some((since, before)) = self.since {
            let count = done.saturating_sub(before);
            let rate = count as f64 * 1e9 / now_ns.saturating_sub(since).max(1) as f64;
            if rate < self.iops {
                return Some(format!(
                    "its rate fell to {} IOPS over the {} up to {} into the run, below its floor of {} IOPS (min_iops); the run ends here as fio's rate_iops_min does",
                    crate::units::format_number(rate),
                    crate::units::format_seconds(now_ns.saturating_sub(since) as f64 / 1e9),
                    crate::units::format_seconds(now_ns as f64 / 1e9),
                    crate::units::format_number(self.iops),
                ));
            }
        }
        self.since = Some((now_ns, done));
        self.due_ns = now_ns.saturating_add(self.cycle_ns);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floor() -> Floor {
        let rate = MinRate {
            iops: 100.0,
            cycle_ns: 1_000_000_000,
        };
        Floor::new(&rate, 0, 500_000_000)
    }

    #[test]
    fn no_cycle_is_judged_while_settling_and_each_cycle_is_judged_on_its_own() {
        let mut f = floor();
        assert_eq!(f.due_ns, SETTLE_NS, "settling outlasts the ramp");
        assert!(f.check(SETTLE_NS, 5).is_none(), "the first cycle begins");
        assert_eq!(f.due_ns, SETTLE_NS + 1_000_000_000);
        // 100 more, what came before not counted.
        let next = SETTLE_NS + 1_000_000_000;
        assert!(f.check(next, 105).is_none(), "100 IOPS meets 100");
        let e = (f.check(next + 1_000_000_000, 204)).expect("99 IOPS is below 100");
        assert!(
            e.contains("99 IOPS") && e.contains("100 IOPS") && e.contains("min_iops"),
            "{e}"
        );
    }

    #[test]
    fn what_completed_is_what_completed_without_an_error() {
        let mut totals = StatsSet::new(2);
        totals.record(0, crate::stats::Dir::Read, 4096, 10, None);
        totals.record(1, crate::stats::Dir::Write, 4096, 10, None);
        totals.record_error(1, crate::stats::Dir::Flush, 10);
        assert_eq!(completed(&totals), 2);
    }

    #[test]
    fn a_late_ramp_end_starts_the_first_cycle() {
        let rate = MinRate {
            iops: 1.0,
            cycle_ns: 10,
        };
        assert_eq!(
            Floor::new(&rate, 1_000, 5_000_000_000).due_ns,
            5_000_000_000
        );
        assert_eq!(Floor::new(&rate, 1_000, 0).due_ns, SETTLE_NS + 1_000);
    }
}
