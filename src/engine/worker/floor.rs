//! A worker's floor on its rate (fio's `rate_iops_min` and `ratemin`): once the settling time
//! has passed, each cycle's completed I/Os a second must reach the floor, or the worker ends
//! the run with an error that names its rate.

use crate::job::MinRate;

/// fio's settling time: no cycle is judged in a worker's first 2 s of I/O.
pub(super) const SETTLE_NS: u64 = 2_000_000_000;

/// The cycle being counted.
pub(super) struct Floor {
    iops: f64,
    cycle_ns: u64,
    /// When the next check is due.
    pub(super) due_ns: u64,
    /// When the cycle being counted began (`None` before the first).
    since_ns: Option<u64>,
    /// I/Os completed since then.
    pub(super) count: u64,
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
            since_ns: None,
            count: 0,
        }
    }

    /// At `now_ns`, the end of a cycle that fell below the floor, said as the run's error; a
    /// cycle that met it starts the next.
    #[inline]
    pub(super) fn check(&mut self, now_ns: u64) -> Option<String> {
        if now_ns < self.due_ns {
            return None;
        }
        if let Some(since) = self.since_ns {
            let rate = self.count as f64 * 1e9 / now_ns.saturating_sub(since).max(1) as f64;
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
        self.since_ns = Some(now_ns);
        self.count = 0;
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
        f.count = 5;
        assert!(f.check(1_999_999_999).is_none(), "settling");
        assert!(f.check(SETTLE_NS).is_none(), "the first cycle begins");
        assert_eq!(f.count, 0, "what came before is not counted");
        f.count = 100;
        assert!(f.check(SETTLE_NS + 999_999_999).is_none(), "not due");
        assert!(
            f.check(SETTLE_NS + 1_000_000_000).is_none(),
            "100 IOPS meets 100"
        );
        f.count = 99;
        let e = f
            .check(SETTLE_NS + 2_000_000_000)
            .expect("99 IOPS is below 100");
        assert!(
            e.contains("99 IOPS") && e.contains("100 IOPS") && e.contains("min_iops"),
            "{e}"
        );
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
