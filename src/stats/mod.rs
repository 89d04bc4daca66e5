//! Measurement data: latency histograms, per-class counters, interval time series, summaries
//! and host counters. Pure data: nothing here knows about engines or reports.

pub(crate) mod blocks;
pub(crate) mod cost;
pub(crate) mod databases;
pub(crate) mod downsample;
pub(crate) mod errors;
pub(crate) mod histogram;
pub(crate) mod host;
pub(crate) mod repetition;
pub(crate) mod reuse;
pub(crate) mod steady;
pub(crate) mod summary;
pub(crate) mod target;
pub(crate) mod tier;
pub(crate) mod timeseries;
pub(crate) mod verification;

pub use histogram::Histogram;

/// Direction of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// A read.
    Read = 0,
    /// A write.
    Write = 1,
    /// A flush (fdatasync).
    Flush = 2,
}

impl Dir {
    /// Every direction, in the order results list them.
    pub const ALL: [Dir; 3] = [Dir::Read, Dir::Write, Dir::Flush];

    /// The name results and reports use: `read`, `write`, `flush`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Flush => "flush",
        }
    }
}

impl std::fmt::Display for Dir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `count` per second over `seconds` (0 over no time).
pub(crate) fn per_second(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// Counters and latency of one direction of one class.
#[derive(Debug, Clone, Default)]
pub struct OpStats {
    /// Completed operations (errors included).
    pub ops: u64,
    /// Bytes transferred by successful operations.
    pub bytes: u64,
    /// Operations that failed (error or short transfer).
    pub errors: u64,
    /// Latency: response time in open loop (from the intended issue time), service time in
    /// closed loop (from submission), ns.
    pub latency: Histogram,
    /// Service time (from submission) in open loop only, ns.
    pub service: Histogram,
}

impl OpStats {
    /// Adds `other` into `self`.
    pub(crate) fn add(&mut self, other: &OpStats) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.errors += other.errors;
        self.latency.add(&other.latency);
        self.service.add(&other.service);
    }
    /// Moves everything out (histograms compact, see [`Histogram::take`]) and leaves `self`
    /// empty, ready to record.
    pub(crate) fn take(&mut self) -> OpStats {
        let out = OpStats {
            ops: self.ops,
            bytes: self.bytes,
            errors: self.errors,
            latency: self.latency.take(),
            service: self.service.take(),
        };
        self.ops = 0;
        self.bytes = 0;
        self.errors = 0;
        out
    }

    /// Forgets everything.
    pub(crate) fn reset(&mut self) {
        self.ops = 0;
        self.bytes = 0;
        self.errors = 0;
        self.latency.reset();
        self.service.reset();
    }
}

/// Read, write and flush statistics of one class.
#[derive(Debug, Clone, Default)]
pub struct ClassStats {
    /// Indexed by [`Dir`].
    pub dirs: [OpStats; 3],
}

/// Statistics of every class, as kept by a worker (and merged across workers).
#[derive(Debug, Clone, Default)]
pub struct StatsSet {
    /// Indexed by class id.
    pub classes: Vec<ClassStats>,
    /// What the I/O threads themselves cost over the same time.
    pub cost: cost::Cost,
}

impl StatsSet {
    /// Empty statistics for `classes` classes.
    pub fn new(classes: usize) -> Self {
        Self {
            classes: (0..classes).map(|_| ClassStats::default()).collect(),
            cost: cost::Cost::default(),
        }
    }

    /// Records one completed operation. `service_ns` is given in open loop only.
    #[inline]
    pub fn record(
        &mut self,
        class: usize,
        dir: Dir,
        bytes: u64,
        latency_ns: u64,
        service_ns: Option<u64>,
    ) {
        let s = &mut self.classes[class].dirs[dir as usize];
        s.ops += 1;
        s.bytes += bytes;
        s.latency.record(latency_ns);
        if let Some(svc) = service_ns {
            s.service.record(svc);
        }
    }

    /// Records one failed operation (counted as an operation and an error; its latency is
    /// recorded too, so a slow failure is visible).
    #[inline]
    pub(crate) fn record_error(&mut self, class: usize, dir: Dir, latency_ns: u64) {
        let s = &mut self.classes[class].dirs[dir as usize];
        s.ops += 1;
        s.errors += 1;
        s.latency.record(latency_ns);
    }

    /// Adds `other` into `self`.
    pub(crate) fn add(&mut self, other: &StatsSet) {
        if self.classes.len() < other.classes.len() {
            self.classes
                .resize_with(other.classes.len(), ClassStats::default);
        }
        for (a, b) in self.classes.iter_mut().zip(&other.classes) {
            for (x, y) in a.dirs.iter_mut().zip(&b.dirs) {
                x.add(y);
            }
        }
        self.cost.add(&other.cost);
    }

    /// Moves the statistics out and leaves `self` empty, its buckets kept for more recording:
    /// what a worker sends at the end of each interval. The copy holds only non-empty
    /// histogram buckets (at most a few KiB per class and direction, where a set ready to
    /// record is 220 KiB per class), so statistics waiting for a collector that falls behind
    /// (a busy machine, 10 ms intervals, hundreds of workers) take little memory, and the
    /// worker allocates no new set per interval.
    pub(crate) fn take(&mut self) -> StatsSet {
        StatsSet {
            classes: self
                .classes
                .iter_mut()
                .map(|c| ClassStats {
                    dirs: [c.dirs[0].take(), c.dirs[1].take(), c.dirs[2].take()],
                })
                .collect(),
            cost: std::mem::take(&mut self.cost),
        }
    }

    /// Forgets everything, keeping the allocation.
    pub(crate) fn reset(&mut self) {
        for c in &mut self.classes {
            for d in &mut c.dirs {
                d.reset();
            }
        }
        self.cost = cost::Cost::default();
    }

    /// All classes merged into one.
    pub(crate) fn total(&self) -> ClassStats {
        let Some((first, rest)) = self.classes.split_first() else {
            return ClassStats::default();
        };
        let mut t = first.clone();
        for c in rest {
            for (x, y) in t.dirs.iter_mut().zip(&c.dirs) {
                x.add(y);
            }
        }
        t
    }
}

/// Operations per target and direction, as a worker counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TargetCounters {
    /// Operations, indexed by [`Dir`].
    pub ops: [u64; 3],
    /// Bytes, indexed by [`Dir`].
    pub bytes: [u64; 3],
    /// Errors, indexed by [`Dir`].
    pub errors: [u64; 3],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_leaves_an_empty_set_and_adds_like_the_original() {
        let mut s = StatsSet::new(2);
        for i in 0..1000u64 {
            s.record(0, Dir::Read, 4096, 50_000 + i * 37, None);
            s.record(1, Dir::Write, 8192, 900_000 + i, Some(800_000));
        }
        s.record_error(1, Dir::Flush, 3_000_000);
        let whole = s.clone();
        let taken = s.take();
        assert!(s.classes.iter().all(|c| {
            c.dirs
                .iter()
                .all(|d| d.ops == 0 && d.latency.count() == 0 && d.service.count() == 0)
        }));
        let (mut a, mut b) = (StatsSet::new(2), StatsSet::new(2));
        a.add(&taken);
        b.add(&whole);
        for (x, y) in a.classes.iter().zip(&b.classes) {
            for (d, e) in x.dirs.iter().zip(&y.dirs) {
                assert_eq!((d.ops, d.bytes, d.errors), (e.ops, e.bytes, e.errors));
                assert_eq!(d.latency.summary(), e.latency.summary());
                assert_eq!(d.service.summary(), e.service.summary());
            }
        }
        // Recording goes on in the emptied set.
        s.record(0, Dir::Read, 4096, 7, None);
        assert_eq!(s.classes[0].dirs[0].latency.max(), 7);
    }
}
