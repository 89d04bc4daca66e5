//! The application's requests through the tier: counted, checked for sequential streams, and
//! routed to the cache device or the backing target by the module's rules.

use super::{NONE, Routed, State, Tier, What, Work};
use crate::engine::OpKind;
use crate::engine::source::{Next, Request, RequestSource};
use crate::job::cache::WriteMode;

impl<S: RequestSource> Tier<S> {
    /// What the application's request `r` becomes.
    pub(super) fn route(&mut self, r: Request, bypass: bool, now: u64) -> Routed {
        let op = r.op;
        let l = self.plan.line_bytes;
        let (key, within) = (op.offset / l, op.offset % l);
        if op.target != self.plan.backing || op.kind.is_sync() || op.len == 0 {
            return Routed::Issue(self.flight(What::Pass, NONE, r, r, now));
        }
        if within + u64::from(op.len) > l {
            return self.span(r, now);
        }
        let slot = self.map.get(key);
        let state = slot.map(|s| self.lines[s as usize].state);
        let whole = within == 0 && op.len == self.line_len(key);
        match (op.kind, slot, state) {
            (OpKind::Read, Some(s), Some(State::Clean | State::Dirty)) => {
                if !self.lines[s as usize].evicting {
                    self.policy.lookup(key);
                }
                self.count(now, |c| c.read_hits += 1);
                self.lines[s as usize].busy += 1;
                let mut p = self.on_cache(OpKind::Read, s, key, within, op.len, false);
                p.op.class = op.class;
                if self.plan.hit_delay_ns == 0 {
                    p.intended_ns = r.intended_ns;
                    return Routed::Issue(self.flight(What::Hit, s, r, p, now));
                }
                // The delay counts in the I/O's latency: it is due from now (or its own time).
                p.intended_ns = Some(r.intended_ns.unwrap_or(now));
                let p = self.flight(What::Hit, s, r, p, now);
                self.delayed
                    .push_back((now + self.plan.hit_delay_ns, p.tag as u32));
                Routed::Delayed
            }
            (OpKind::Read, Some(_), _) => {
                // Being filled: the backing target has the data.
                self.policy.lookup(key);
                Routed::Issue(self.flight(What::Miss { fill: NONE }, NONE, r, r, now))
            }
            (OpKind::Read, None, _) => {
                let fill = if bypass {
                    self.policy.lookup(key);
                    None
                } else {
                    self.admit(key, State::Filling, now)
                };
                let fill = match fill {
                    Some(s) if !whole => {
                        self.work.push_back(Work::FillRead(s));
                        NONE
                    }
                    Some(s) => s,
                    None => NONE,
                };
                Routed::Issue(self.flight(What::Miss { fill }, NONE, r, r, now))
            }
            (OpKind::Write, Some(_), Some(State::Filling)) => Routed::Held,
            (OpKind::Write, Some(s), _) => self.write_resident(r, s, key, within, now),
            (OpKind::Write, None, _) => {
                let admitted = match self.plan.write {
                    WriteMode::Back if whole && !bypass => self.admit(key, State::Dirty, now),
                    WriteMode::Through if whole && !bypass => self.admit(key, State::Filling, now),
                    _ => None,
                };
                match (admitted, self.plan.write) {
                    (Some(s), WriteMode::Back) => {
                        self.count(now, |c| c.write_hits += 1);
                        self.lines[s as usize].busy += 1;
                        let mut p = self.on_cache(OpKind::Write, s, key, 0, op.len, false);
                        p.op.class = op.class;
                        p.op.dsync = op.dsync;
                        p.intended_ns = r.intended_ns;
                        Routed::Issue(self.flight(What::Absorb, s, r, p, now))
                    }
                    (Some(s), _) => {
                        Routed::Issue(self.flight(What::Through { fill: s }, NONE, r, r, now))
                    }
                    (None, _) => Routed::Issue(self.flight(What::Pass, NONE, r, r, now)),
                }
            }
            (OpKind::Flush | OpKind::Fsync, ..) => {
                Routed::Issue(self.flight(What::Pass, NONE, r, r, now))
            }
        }
    }

    /// A write of resident line `key` in slot `s` (not being filled).
    fn write_resident(&mut self, r: Request, s: u32, key: u64, within: u64, now: u64) -> Routed {
        let op = r.op;
        let line = self.lines[s as usize];
        match self.plan.write {
            WriteMode::Back => {
                if !line.evicting {
                    self.policy.lookup(key);
                }
                self.count(now, |c| c.write_hits += 1);
                self.dirty(s);
                self.lines[s as usize].busy += 1;
                let mut p = self.on_cache(OpKind::Write, s, key, within, op.len, false);
                p.op.class = op.class;
                p.op.dsync = op.dsync;
                p.intended_ns = r.intended_ns;
                Routed::Issue(self.flight(What::Absorb, s, r, p, now))
            }
            WriteMode::Through => {
                if line.busy > 0 {
                    // A hit waiting out its delay would read the old copy after this write.
                    return Routed::Held;
                }
                if !line.evicting {
                    self.policy.lookup(key);
                }
                // Reads go to the backing target until the copy is refreshed.
                self.lines[s as usize].state = State::Filling;
                Routed::Issue(self.flight(What::Through { fill: s }, NONE, r, r, now))
            }
            WriteMode::Around => {
                if line.busy > 0 || line.destaging {
                    return Routed::Held;
                }
                self.free(s);
                Routed::Issue(self.flight(What::Pass, NONE, r, r, now))
            }
        }
    }

    /// An I/O spanning lines: to the backing target once none of its lines is cached.
    fn span(&mut self, r: Request, now: u64) -> Routed {
        let l = self.plan.line_bytes;
        let (first, last) = (r.op.offset / l, (r.op.offset + u64::from(r.op.len) - 1) / l);
        let mut wait = false;
        for key in first..=last {
            let Some(s) = self.map.get(key) else {
                continue;
            };
            let line = self.lines[s as usize];
            if line.state == State::Clean && line.busy == 0 && !line.destaging {
                self.free(s);
            } else {
                wait = true;
                self.lines[s as usize].evicting = true;
                self.destage(s);
            }
        }
        if wait {
            return Routed::Held;
        }
        Routed::Issue(self.flight(What::Pass, NONE, r, r, now))
    }

    /// The application's request `r`, new from the inner source: counted, then routed.
    pub(super) fn take(&mut self, r: Request, now: u64) -> Next {
        let op = r.op;
        let mut bypass = false;
        if op.target == self.plan.backing && !op.kind.is_sync() {
            let (end, run) = self.seq;
            let run = if op.offset == end {
                run + u64::from(op.len)
            } else {
                u64::from(op.len)
            };
            self.seq = (op.offset + u64::from(op.len), run);
            bypass = self.plan.bypass_bytes.is_some_and(|b| run > b);
            let spans = op.offset % self.plan.line_bytes + u64::from(op.len) > self.plan.line_bytes;
            let read = op.kind == OpKind::Read;
            self.count(now, |c| {
                if read {
                    c.reads += 1;
                } else {
                    c.writes += 1;
                }
                c.bypassed += u64::from(bypass);
                c.spanning += u64::from(spans);
            });
        }
        match self.route(r, bypass, now) {
            Routed::Issue(p) => Next::Issue(p),
            Routed::Delayed => self.next(now),
            Routed::Held => {
                self.count(now, |c| c.held += 1);
                self.held.push_back(r);
                self.next(now)
            }
        }
    }
}
