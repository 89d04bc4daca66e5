//! Measurement data: latency histograms, per-class counters, interval time series, summaries
//! and host counters. Pure data: nothing here knows about engines or reports.

pub mod histogram;
pub mod host;
pub mod repetition;
pub mod steady;
pub mod summary;
pub mod timeseries;

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
    pub fn add(&mut self, other: &OpStats) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.errors += other.errors;
        self.latency.add(&other.latency);
        self.service.add(&other.service);
    }
    /// Forgets everything.
    pub fn reset(&mut self) {
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
}

impl StatsSet {
    /// Empty statistics for `classes` classes.
    pub fn new(classes: usize) -> Self {
        Self {
            classes: (0..classes).map(|_| ClassStats::default()).collect(),
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
    pub fn record_error(&mut self, class: usize, dir: Dir, latency_ns: u64) {
        let s = &mut self.classes[class].dirs[dir as usize];
        s.ops += 1;
        s.errors += 1;
        s.latency.record(latency_ns);
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &StatsSet) {
        if self.classes.len() < other.classes.len() {
            self.classes
                .resize_with(other.classes.len(), ClassStats::default);
        }
        for (a, b) in self.classes.iter_mut().zip(&other.classes) {
            for (x, y) in a.dirs.iter_mut().zip(&b.dirs) {
                x.add(y);
            }
        }
    }

    /// Forgets everything, keeping the allocation.
    pub fn reset(&mut self) {
        for c in &mut self.classes {
            for d in &mut c.dirs {
                d.reset();
            }
        }
    }

    /// All classes merged into one.
    pub fn total(&self) -> ClassStats {
        let mut t = ClassStats::default();
        for c in &self.classes {
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
