//! LoadGen's pacing: tasks are dispatched one at a time, every (simulated day length ÷ tasks of
//! every user in a day), each to a user and of a kind drawn in proportion to the profile's
//! daily counts. The day can be compressed (`compress` times faster than real time: the same
//! tasks, `compress` times the rate), and stress mode dispatches as fast as tasks complete.
//! A run is overloaded, and stops, when unfinished tasks (queued and running) exceed 1.5 × the
//! users (LoadGen's rule: "Frequently Asked Questions about Exchange Load Generator", TechNet,
//! 2008).

use crate::workloads::users::profile::{Profile, Task};
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// Unfinished tasks beyond this multiple of the users overload a run (LoadGen's).
pub(crate) const OVERLOAD_FACTOR: f64 = 1.5;

/// One dispatched task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dispatch {
    /// When it is due, nanoseconds of real time from the start.
    pub at_ns: u64,
    /// The user (0-based).
    pub user: u64,
    /// What the user does.
    pub task: Task,
}

/// The dispatcher of a user population.
#[derive(Debug)]
pub(crate) struct Dispatcher {
    users: u64,
    /// Real nanoseconds between dispatches (0: stress mode).
    interval_ns: f64,
    /// Tasks dispatched so far.
    dispatched: u64,
    /// Task kinds with their cumulative daily counts.
    kinds: Vec<(Task, f64)>,
    total: f64,
    rng: SmallRng,
}

impl Dispatcher {
    /// Dispatches `profile`'s tasks to `users` users over a simulated day of `day_ns`, run
    /// `compress` times faster than real time; `stress`: no pacing, as fast as tasks complete.
    /// Errors when there is nothing to dispatch.
    pub(crate) fn new(
        profile: &Profile,
        users: u64,
        day_ns: u64,
        compress: f64,
        stress: bool,
        seed: u64,
    ) -> Result<Self, String> {
        let total = profile.tasks_per_day();
        if users == 0 || total <= 0.0 || day_ns == 0 || !(compress > 0.0 && compress.is_finite()) {
            return Err(format!(
                "nothing to dispatch: {users} users, {total} tasks per user per day, a day of {day_ns} ns compressed {compress} times"
            ));
        }
        let mut acc = 0.0;
        let kinds = profile
            .tasks_per_day
            .iter()
            .filter(|t| t.1 > 0.0)
            .map(|&(task, n)| {
                acc += n;
                (task, acc)
            })
            .collect();
        let interval_ns = if stress {
            0.0
        } else {
            day_ns as f64 / compress / (users as f64 * total)
        };
        Ok(Self {
            users,
            interval_ns,
            dispatched: 0,
            kinds,
            total: acc,
            rng: SmallRng::seed_from_u64(seed),
        })
    }

    /// Real nanoseconds between two dispatches (0 in stress mode).
    pub(crate) fn interval_ns(&self) -> f64 {
        self.interval_ns
    }

    /// When dispatch `k` (0-based) is due, ns.
    fn at_ns(&self, k: u64) -> u64 {
        (k as f64 * self.interval_ns) as u64
    }

    /// How many dispatches are due before `until_ns` (paced; unbounded in stress mode).
    pub(crate) fn due_before(&self, until_ns: u64) -> u64 {
        if self.interval_ns <= 0.0 {
            return u64::MAX;
        }
        let mut n = (until_ns as f64 / self.interval_ns).ceil() as u64;
        while n > 0 && self.at_ns(n - 1) >= until_ns {
            n -= 1;
        }
        while self.at_ns(n) < until_ns {
            n += 1;
        }
        n
    }

    /// The next task: due `interval` after the one before (the first at 0).
    pub(crate) fn dispatch(&mut self) -> Dispatch {
        let at_ns = self.at_ns(self.dispatched);
        self.dispatched += 1;
        let user = self.rng.random_range(0..self.users);
        let r = self.rng.random::<f64>() * self.total;
        let task = self
            .kinds
            .iter()
            .find(|k| r < k.1)
            .unwrap_or(&self.kinds[self.kinds.len() - 1])
            .0;
        Dispatch { at_ns, user, task }
    }

    /// Whether `unfinished` tasks overload a population of this many users.
    pub(crate) fn overloaded(&self, unfinished: u64) -> bool {
        unfinished as f64 > OVERLOAD_FACTOR * self.users as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR_NS: u64 = 3_600_000_000_000;

    #[test]
    fn the_dispatches_due_are_counted_as_dispatched() {
        let heavy = Profile::builtin("heavy").unwrap();
        for (users, compress, until) in [(200, 720.0, 10_000_000_000), (7, 3.3, 123_456_789)] {
            let mut d = Dispatcher::new(&heavy, users, 8 * HOUR_NS, compress, false, 1).unwrap();
            let want = d.due_before(until);
            let got = std::iter::from_fn(|| Some(d.dispatch()))
                .take_while(|x| x.at_ns < until)
                .count() as u64;
            assert_eq!(want, got);
        }
    }

    #[test]
    fn the_interval_is_the_day_over_every_task() {
        // The seed study: 16,000 Heavy users (47 tasks a day) over an 8-hour day.
        let heavy = Profile::builtin("heavy").unwrap();
        let d = Dispatcher::new(&heavy, 16_000, 8 * HOUR_NS, 1.0, false, 1).unwrap();
        let want = 8.0 * 3600e9 / (16_000.0 * 47.0);
        assert!((d.interval_ns() - want).abs() < 1e-3, "{}", d.interval_ns());
        // An 8-hour day in 10 minutes: 48 times the rate.
        let fast = Dispatcher::new(&heavy, 16_000, 8 * HOUR_NS, 48.0, false, 1).unwrap();
        assert!((fast.interval_ns() * 48.0 - want).abs() < 1e-3);
        let stress = Dispatcher::new(&heavy, 16_000, 8 * HOUR_NS, 1.0, true, 1).unwrap();
        assert_eq!(stress.interval_ns(), 0.0);
    }

    #[test]
    fn a_day_brings_each_task_in_its_share_and_every_user() {
        let heavy = Profile::builtin("heavy").unwrap();
        let users = 200;
        let mut d = Dispatcher::new(&heavy, users, 8 * HOUR_NS, 1.0, false, 7).unwrap();
        let day = users as usize * 47 * 50; // fifty days, for the counts to settle
        let mut by_task = std::collections::HashMap::new();
        let mut by_user = vec![0u32; users as usize];
        let mut last = 0;
        for i in 0..day {
            let x = d.dispatch();
            assert!(x.at_ns >= last, "dispatch times never go back");
            if i == 0 {
                assert_eq!(x.at_ns, 0);
            }
            last = x.at_ns;
            *by_task.entry(x.task).or_insert(0u32) += 1;
            by_user[x.user as usize] += 1;
        }
        // Fifty simulated days end at 50 × 8 hours, within one interval.
        assert!(((last as f64) - 400.0 * 3600e9).abs() <= d.interval_ns() * 1.5 + 1.0);
        for (task, per_day) in &heavy.tasks_per_day {
            let share = f64::from(by_task[task]) / day as f64;
            let want = per_day / 47.0;
            assert!(
                (share - want).abs() < 0.1 * want + 0.002,
                "{task:?}: {share} against {want}"
            );
        }
        assert!(by_user.iter().all(|&n| n > 0));
    }

    #[test]
    fn overload_is_more_than_one_and_a_half_unfinished_tasks_per_user() {
        let heavy = Profile::builtin("heavy").unwrap();
        let d = Dispatcher::new(&heavy, 2000, HOUR_NS, 1.0, false, 1).unwrap();
        assert!(!d.overloaded(3000));
        assert!(d.overloaded(3001));
    }

    #[test]
    fn nothing_to_dispatch_is_an_error() {
        let heavy = Profile::builtin("heavy").unwrap();
        assert!(Dispatcher::new(&heavy, 0, HOUR_NS, 1.0, false, 1).is_err());
        assert!(Dispatcher::new(&heavy, 10, 0, 1.0, false, 1).is_err());
        assert!(Dispatcher::new(&heavy, 10, HOUR_NS, 0.0, false, 1).is_err());
        assert!(Dispatcher::new(&heavy, 10, HOUR_NS, f64::NAN, false, 1).is_err());
    }
}
