//! A trace replayed against targets: a request source that issues the trace's I/Os, each at
//! its recorded time divided by the speed (open loop: latency counts from that time), or one
//! after another as fast as the worker's queue depth allows (speed `max`, closed loop). Device
//! `d` of the trace goes to the worker's `d`-th target, at the same offsets and sizes.

use super::Trace;
use crate::engine::source::{Next, Request, RequestSource};
use crate::engine::{IoOp, OpKind};
use std::sync::Arc;

/// A replay in progress.
#[derive(Debug)]
pub(crate) struct Replay {
    trace: Arc<Trace>,
    next: usize,
    /// Divides the trace's times; `None`: as fast as possible.
    speed: Option<f64>,
    /// The target of each device of the trace.
    targets: Vec<u32>,
    class: u16,
}

impl Replay {
    /// A replay of `trace` at `speed`, device `d` on `targets[d]`, its I/O in class `class`.
    pub(crate) fn new(
        trace: Arc<Trace>,
        speed: Option<f64>,
        targets: Vec<u32>,
        class: u16,
    ) -> Replay {
        Replay {
            trace,
            next: 0,
            speed,
            targets,
            class,
        }
    }

    /// Its largest I/O, bytes (the worker's buffers must hold it).
    pub(crate) fn largest(&self) -> u64 {
        self.trace
            .ios
            .iter()
            .map(|io| u64::from(io.len))
            .max()
            .unwrap_or(0)
    }

    /// When I/O `i` is due, ns from the start of the run.
    fn due(&self, i: usize) -> Option<u64> {
        self.speed
            .map(|s| (self.trace.ios[i].t_ns as f64 / s) as u64)
    }
}

impl RequestSource for Replay {
    #[inline]
    fn next(&mut self, now_ns: u64) -> Next {
        let Some(io) = self.trace.ios.get(self.next) else {
            return Next::Done;
        };
        let due = self.due(self.next);
        if let Some(t) = due.filter(|&t| t > now_ns) {
            return Next::At(t);
        }
        let tag = self.next as u64;
        self.next += 1;
        Next::Issue(Request {
            op: IoOp {
                kind: if io.write {
                    OpKind::Write
                } else {
                    OpKind::Read
                },
                target: self.targets[io.device as usize],
                offset: io.offset,
                len: io.len,
                dsync: false,
                atomic: false,
                class: self.class,
            },
            intended_ns: due,
            tag,
            home: None,
        })
    }

    #[inline]
    fn completed(&mut self, _request: &Request, _result: i32, _now_ns: u64) {}

    fn unissued(&self, until_ns: u64) -> u64 {
        (self.next..self.trace.ios.len())
            .take_while(|&i| self.due(i).is_some_and(|t| t < until_ns))
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceIo;

    fn trace() -> Arc<Trace> {
        let io = |t_ns, device, write, offset| TraceIo {
            t_ns,
            device,
            write,
            offset,
            len: 8192,
            latency_ns: None,
        };
        Arc::new(Trace {
            ios: vec![
                io(0, 0, false, 0),
                io(1000, 1, true, 8192),
                io(5000, 0, false, 4096),
            ],
            devices: vec!["a".into(), "b".into()],
        })
    }

    #[test]
    fn as_recorded_each_io_comes_at_its_time_on_its_device_s_target() {
        let mut r = Replay::new(trace(), Some(1.0), vec![3, 5], 2);
        let Next::Issue(first) = r.next(0) else {
            panic!()
        };
        assert_eq!(
            (first.op.target, first.op.offset, first.op.len),
            (3, 0, 8192)
        );
        assert_eq!((first.intended_ns, first.op.class), (Some(0), 2));
        assert_eq!(r.next(999), Next::At(1000));
        let Next::Issue(second) = r.next(1200) else {
            panic!()
        };
        assert_eq!(
            (second.op.kind, second.op.target, second.intended_ns),
            (OpKind::Write, 5, Some(1000))
        );
        assert_eq!(r.unissued(6000), 1, "the third was due at 5 µs");
        assert_eq!(r.unissued(4000), 0);
        let Next::Issue(_) = r.next(5000) else {
            panic!()
        };
        assert_eq!(r.next(5000), Next::Done);
    }

    #[test]
    fn faster_and_as_fast_as_possible() {
        let mut r = Replay::new(trace(), Some(10.0), vec![0, 1], 0);
        r.next(0);
        assert_eq!(r.next(0), Next::At(100), "ten times faster");
        let mut r = Replay::new(trace(), None, vec![0, 1], 0);
        for _ in 0..3 {
            let Next::Issue(q) = r.next(0) else { panic!() };
            assert_eq!(q.intended_ns, None, "closed loop");
        }
        assert_eq!(r.next(0), Next::Done);
        assert_eq!(r.unissued(u64::MAX), 0);
    }
}
