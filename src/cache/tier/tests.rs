//! The tier against a model of the devices: every 4 KiB block of the backing target and of the
//! cache device remembers which backing block (and which version of it) it holds; I/Os
//! complete in a random order, with the worker's verification locks; every read must find the
//! last acknowledged version, and after the write-back every acknowledged write must be on the
//! backing target. Every write policy, every replacement policy, lines of one and two I/Os,
//! with and without the synthetic delay.

use super::*;
use crate::engine::buf::splitmix;
use std::collections::HashMap;

const BLK: u64 = 4096;
const BACKING: u32 = 0;
const DEVICE: u32 = 1;
/// Backing target: 256 blocks of 4 KiB.
const TARGET_BYTES: u64 = 256 * BLK;

/// A closed-loop load: 4 and 8 KiB I/Os aligned to their size, 60 % reads, 80 % of them on
/// the first 32 blocks, and now and then a 16 KiB I/O at a 4 KiB offset (spanning lines).
struct Load {
    rng: u64,
    issued: u64,
    limit: u64,
    completed: u64,
}

impl Load {
    fn draw(&mut self) -> u64 {
        self.rng = splitmix(self.rng);
        self.rng
    }
}

impl RequestSource for Load {
    fn next(&mut self, _now_ns: u64) -> Next {
        if self.issued >= self.limit {
            return Next::Done;
        }
        let d = self.draw();
        let read = d % 100 < 60;
        let hot = (d >> 8) % 100 < 80;
        let span = (d >> 16) % 50 == 0;
        let len: u64 = if span {
            4 * BLK
        } else if (d >> 24) % 2 == 0 {
            BLK
        } else {
            2 * BLK
        };
        let range = if hot { 32 * BLK } else { TARGET_BYTES };
        let slots = (range - len) / if span { BLK } else { len };
        let offset = (d >> 32) % slots * if span { BLK } else { len };
        let tag = self.issued;
        self.issued += 1;
        Next::Issue(Request {
            op: IoOp {
                kind: if read { OpKind::Read } else { OpKind::Write },
                target: BACKING,
                offset,
                len: len as u32,
                dsync: false,
                atomic: false,
                class: 0,
            },
            intended_ns: None,
            tag,
            home: None,
        })
    }

    fn completed(&mut self, _request: &Request, _result: i32, _now_ns: u64) {
        self.completed += 1;
    }
}

/// What a 4 KiB block holds: (home target, home block, version).
type Held = (u32, u64, u64);

#[derive(Default)]
struct Model {
    disk: HashMap<(u32, u64), Held>,
    acked: HashMap<u64, u64>,
    /// Per backing block: readers, writer.
    locks: HashMap<u64, (u32, bool)>,
    errors: Vec<String>,
}

impl Model {
    /// The backing blocks a request's data belongs to, and whether it is a copy.
    fn home(r: &Request) -> (Vec<u64>, bool) {
        let (off, copy) = match r.home {
            None => (r.op.offset, false),
            Some(h) => (h.offset, h.copy),
        };
        let n = u64::from(r.op.len) / BLK;
        ((0..n).map(|i| off / BLK + i).collect(), copy)
    }

    fn lock(&mut self, r: &Request) -> bool {
        let (blocks, copy) = Model::home(r);
        let exclusive = r.op.kind == OpKind::Write && !copy;
        let free = blocks.iter().all(|b| match self.locks.get(b) {
            None => true,
            Some(&(readers, writer)) => !writer && (!exclusive || readers == 0),
        });
        if free {
            for b in blocks {
                let e = self.locks.entry(b).or_default();
                if exclusive {
                    e.1 = true;
                } else {
                    e.0 += 1;
                }
            }
        }
        free
    }

    fn unlock(&mut self, r: &Request) {
        let (blocks, copy) = Model::home(r);
        let exclusive = r.op.kind == OpKind::Write && !copy;
        for b in blocks {
            let e = self.locks.get_mut(&b).unwrap();
            if exclusive {
                e.1 = false;
            } else {
                e.0 -= 1;
            }
        }
    }

    /// What a write will put in each of its blocks (sealed at issue, as the worker does).
    fn stamp(&self, r: &Request) -> Vec<Held> {
        let (blocks, copy) = Model::home(r);
        blocks
            .into_iter()
            .map(|b| {
                let v = self.acked.get(&b).copied().unwrap_or(0);
                (BACKING, b, v + u64::from(!copy))
            })
            .collect()
    }

    fn complete(&mut self, r: &Request, data: &[Held]) {
        let first = r.op.offset / BLK;
        let (blocks, copy) = Model::home(r);
        match r.op.kind {
            OpKind::Write => {
                for (i, &d) in data.iter().enumerate() {
                    self.disk.insert((r.op.target, first + i as u64), d);
                    if !copy {
                        self.acked.insert(d.1, d.2);
                    }
                }
            }
            OpKind::Read => {
                for (i, b) in blocks.into_iter().enumerate() {
                    let want = self.acked.get(&b).copied().unwrap_or(0);
                    let found = self.disk.get(&(r.op.target, first + i as u64)).copied();
                    let ok = match found {
                        None => want == 0,
                        Some(h) => h == (BACKING, b, want),
                    };
                    if !ok {
                        self.errors.push(format!(
                            "{r:?}: block {b} of the backing target wants version {want}, target {} block {} holds {found:?}",
                            r.op.target,
                            first + i as u64
                        ));
                    }
                }
            }
            OpKind::Flush | OpKind::Fsync => {}
        }
        self.unlock(r);
    }

    /// Backing blocks whose last acknowledged version is not on the backing target.
    fn lost(&self) -> Vec<u64> {
        let mut lost: Vec<u64> = (self.acked.iter())
            .filter(|&(&b, &v)| self.disk.get(&(BACKING, b)) != Some(&(BACKING, b, v)))
            .map(|(&b, _)| b)
            .collect();
        lost.sort_unstable();
        lost
    }
}

struct Case {
    write: WriteMode,
    policy: CachePolicy,
    line: u64,
    lines: u32,
    delay_ns: u64,
    seed: u64,
    /// The line map as a hash map, as for a backing target of many lines per cache line.
    sparse: bool,
    /// The length of the tier's intervals, ns.
    interval_ns: u64,
}

/// Drives a tier of `case` with the model for 3000 I/Os at queue depth 8, completing I/Os in
/// a random order; returns the model (before any write-back after the run) and the tier.
fn drive(case: &Case) -> (Model, Tier<Load>, u64) {
    let plan = TierPlan {
        backing: BACKING,
        backing_bytes: TARGET_BYTES,
        device: DEVICE,
        lines: case.lines,
        line_bytes: case.line,
        policy: case.policy,
        write: case.write,
        bypass_bytes: None,
        hit_delay_ns: case.delay_ns,
        dirty_pct: 25.0,
        queue_depth: 8,
        ramp_ns: 0,
        end_ns: u64::MAX / 2,
        interval_ns: case.interval_ns,
    };
    let load = Load {
        rng: case.seed,
        issued: 0,
        limit: 3000,
        completed: 0,
    };
    let mut tier = Tier::new(load, plan);
    if case.sparse {
        tier.map = Residents::Sparse(KeyMap::default());
    }
    let mut model = Model::default();
    let mut rng = case.seed ^ 0xD1CE;
    let mut inflight: Vec<(Request, Vec<Held>)> = Vec::new();
    let mut blocked: Option<Request> = None;
    let (mut now, mut done) = (0u64, false);
    for _ in 0..1_000_000 {
        now += 1000;
        while inflight.len() < 8 {
            let r = match blocked.take() {
                Some(r) => r,
                None if done => break,
                None => match tier.next(now) {
                    Next::Issue(r) => r,
                    Next::At(t) => {
                        if inflight.is_empty() {
                            now = now.max(t);
                        }
                        break;
                    }
                    Next::AwaitCompletion => break,
                    Next::Done => {
                        done = true;
                        break;
                    }
                },
            };
            if !model.lock(&r) {
                blocked = Some(r);
                break;
            }
            let data = if r.op.kind == OpKind::Write {
                model.stamp(&r)
            } else {
                Vec::new()
            };
            inflight.push((r, data));
        }
        if inflight.is_empty() {
            if done && blocked.is_none() {
                break;
            }
            continue;
        }
        rng = splitmix(rng);
        let (r, data) = inflight.swap_remove((rng % inflight.len() as u64) as usize);
        model.complete(&r, &data);
        tier.completed(&r, r.op.len as i32, now);
    }
    assert!(done, "the tier never finished");
    (model, tier, now)
}

/// Copies the dirty lines to the backing target in the model.
fn drain(model: &mut Model, tier: &mut Tier<Load>) -> u64 {
    let d = tier.drain_with(|from, to, len| {
        for i in 0..len as u64 / BLK {
            let held = model.disk.get(&(DEVICE, from / BLK + i)).copied();
            let held = held.ok_or("an empty cache block")?;
            model.disk.insert((BACKING, to / BLK + i), held);
        }
        Ok(())
    });
    assert_eq!(d.error, None);
    d.lines
}

#[test]
fn every_read_finds_the_last_write_and_nothing_is_lost_after_the_write_back() {
    let mut dirty_left = 0;
    for write in [WriteMode::Back, WriteMode::Through, WriteMode::Around] {
        for policy in [CachePolicy::Lru, CachePolicy::Arc, CachePolicy::S3Fifo] {
            for (line, lines) in [(2 * BLK, 24), (4 * BLK, 10)] {
                for delay_ns in [0, 30_000] {
                    let case = Case {
                        write,
                        policy,
                        line,
                        lines,
                        delay_ns,
                        seed: line ^ delay_ns ^ (policy as u64) << 8 ^ (write as u64) << 16,
                        sparse: false,
                        interval_ns: 1_000_000,
                    };
                    let what =
                        format!("{write:?} {policy:?} line {line} × {lines} delay {delay_ns}");
                    let (mut model, mut tier, now) = drive(&case);
                    assert_eq!(model.errors, Vec::<String>::new(), "{what}");
                    let load = &tier.inner;
                    assert_eq!((load.issued, load.completed), (3000, 3000), "{what}");
                    let out = tier.outcome(now);
                    let t = out.totals;
                    assert_eq!(t.reads + t.writes, 3000, "{what}: {t:?}");
                    // Write-around drops a line at every write to it: fewer hits.
                    assert!(
                        t.read_hits > t.reads / 8,
                        "{what}: a hot set of 32 blocks: {t:?}"
                    );
                    assert!(t.spanning > 0, "{what}: {t:?}");
                    assert!(t.evictions > 0, "{what}: {t:?}");
                    match write {
                        WriteMode::Back => {
                            assert!(t.write_hits > 0 && t.destage_bytes > 0, "{what}: {t:?}");
                            dirty_left += tier.dirty_count;
                        }
                        _ => {
                            assert_eq!((t.write_hits, t.destage_bytes), (0, 0), "{what}: {t:?}");
                            assert_eq!(tier.dirty_count, 0, "{what}");
                        }
                    }
                    drain(&mut model, &mut tier);
                    assert_eq!(model.lost(), Vec::<u64>::new(), "{what}");
                    assert_eq!(tier.dirty_count, 0, "{what}");
                }
            }
        }
    }
    assert!(
        dirty_left > 0,
        "some runs end with dirty lines to write back"
    );
}

#[test]
fn a_run_of_many_intervals_keeps_a_bounded_series_that_adds_up_to_its_totals() {
    let case = |interval_ns| Case {
        write: WriteMode::Back,
        policy: CachePolicy::Arc,
        line: 2 * BLK,
        lines: 24,
        delay_ns: 30_000,
        seed: 17,
        sparse: false,
        interval_ns,
    };
    // Intervals of 1 ms: the run's few, one record each.
    let (_, mut tier, now) = drive(&case(1_000_000));
    let few = tier.outcome(now);
    let closed = (now / 1_000_000) as usize;
    let n = few.series.len();
    assert!(n == closed || n == closed + 1, "{n} records in {now} ns");
    assert!(
        few.series
            .iter()
            .all(|i| i.interval_s.is_some_and(|s| s <= 1e-3))
    );
    // Intervals of 50 ns: tens of thousands, merged into at most SERIES_POINTS.
    let (model, mut tier, now) = drive(&case(50));
    assert_eq!(model.errors, Vec::<String>::new());
    let many = tier.outcome(now);
    assert!(now / 50 > 10 * SERIES_POINTS as u64, "{now} ns");
    let n = many.series.len();
    assert!(
        (SERIES_POINTS / 2..=SERIES_POINTS).contains(&n),
        "{n} points"
    );
    // The same I/O, whatever the intervals; every count of the series adds up to the totals
    // (all of the run is measured), the points' lengths to the run's.
    assert_eq!(many.totals, few.totals);
    let mut sum = TierCounts::default();
    for i in &many.series {
        sum.add(&i.counts);
    }
    assert_eq!(sum, many.totals);
    let seconds: f64 = many.series.iter().filter_map(|i| i.interval_s).sum();
    // (The last interval is left out when nothing happened in it.)
    let left = now as f64 / 1e9 - seconds;
    assert!((-1e-12..50e-9).contains(&left), "{seconds} s in {now} ns");
    for w in many.series.windows(2) {
        let end = w[0].t_s + w[0].interval_s.unwrap();
        assert!((w[1].t_s - end).abs() < 1e-9, "{:?} then {:?}", w[0], w[1]);
    }
}

#[test]
fn without_the_write_back_after_the_run_writes_are_lost() {
    let case = Case {
        write: WriteMode::Back,
        policy: CachePolicy::Lru,
        line: 2 * BLK,
        lines: 24,
        delay_ns: 0,
        seed: 5,
        sparse: false,
        interval_ns: 1_000_000,
    };
    let (model, tier, _) = drive(&case);
    assert!(tier.dirty_count > 0);
    assert!(
        !model.lost().is_empty(),
        "the model sees dirty data that never reached the backing target"
    );
}

#[test]
fn the_line_map_as_a_table_and_as_a_hash_map_does_the_same() {
    for write in [WriteMode::Back, WriteMode::Through, WriteMode::Around] {
        for policy in CachePolicy::ALL {
            let run = |sparse| {
                let case = Case {
                    write,
                    policy,
                    line: 2 * BLK,
                    lines: 24,
                    delay_ns: 0,
                    seed: 11 ^ (policy as u64) << 8 ^ (write as u64) << 16,
                    sparse,
                    interval_ns: 1_000_000,
                };
                let (model, mut tier, now) = drive(&case);
                assert_eq!(model.errors, Vec::<String>::new(), "{write:?} {policy:?}");
                (tier.outcome(now).totals, tier.dirty_count)
            };
            assert_eq!(run(false), run(true), "{write:?} {policy:?}");
        }
    }
    for dense in [true, false] {
        let mut map = if dense {
            Residents::Dense(vec![NONE; 100])
        } else {
            Residents::Sparse(KeyMap::default())
        };
        let mut reference = HashMap::new();
        let mut rng = 3u64;
        for i in 0..5000u32 {
            rng = splitmix(rng);
            // Now and then a key past the table's end.
            let key = if rng % 50 == 0 {
                100 + rng % 20
            } else {
                rng % 100
            };
            match rng >> 32 & 3 {
                0 => {
                    map.remove(key);
                    reference.remove(&key);
                }
                1 | 2 => {
                    map.insert(key, i);
                    reference.insert(key, i);
                }
                _ => {}
            }
            assert_eq!(map.get(key), reference.get(&key).copied(), "key {key}");
        }
    }
}

#[test]
fn the_policies_report_every_key_they_drop() {
    for kind in CachePolicy::ALL {
        let mut p = kind.simulator(50);
        let mut resident = std::collections::HashSet::new();
        let mut rng = 9u64;
        for _ in 0..20_000 {
            rng = splitmix(rng);
            let key = if rng % 100 < 70 {
                rng >> 40 & 63
            } else {
                rng >> 40 & 1023
            };
            let hit = p.access(key);
            assert_eq!(hit, resident.contains(&key), "{kind:?} key {key}");
            while let Some(k) = p.evicted() {
                assert!(
                    resident.remove(&k),
                    "{kind:?} dropped {k}, which it did not hold"
                );
            }
            resident.insert(key);
            assert!(resident.len() <= 50, "{kind:?}");
        }
    }
}

#[test]
fn sequential_streams_past_the_bypass_are_not_admitted() {
    // 64 sequential reads of 8 KiB, twice: with a bypass of 64 KiB only the first 8 lines of
    // each pass are admitted (or hit), the rest pass by.
    struct Scan(u64);
    impl RequestSource for Scan {
        fn next(&mut self, _now_ns: u64) -> Next {
            if self.0 >= 128 {
                return Next::Done;
            }
            let offset = self.0 % 64 * 2 * BLK;
            self.0 += 1;
            Next::Issue(Request {
                op: IoOp {
                    kind: OpKind::Read,
                    target: BACKING,
                    offset,
                    len: 2 * BLK as u32,
                    dsync: false,
                    atomic: false,
                    class: 0,
                },
                intended_ns: None,
                tag: self.0,
                home: None,
            })
        }
        fn completed(&mut self, _request: &Request, _result: i32, _now_ns: u64) {}
    }
    let plan = TierPlan {
        backing: BACKING,
        backing_bytes: 1 << 20,
        device: DEVICE,
        lines: 100,
        line_bytes: 2 * BLK,
        policy: CachePolicy::Lru,
        write: WriteMode::Back,
        bypass_bytes: Some(64 << 10),
        hit_delay_ns: 0,
        dirty_pct: 10.0,
        queue_depth: 1,
        ramp_ns: 0,
        end_ns: u64::MAX / 2,
        interval_ns: 1_000_000_000,
    };
    let mut tier = Tier::new(Scan(0), plan);
    let mut now = 0;
    loop {
        now += 1;
        match tier.next(now) {
            Next::Issue(r) => tier.completed(&r, r.op.len as i32, now),
            Next::Done => break,
            other => panic!("{other:?}"),
        }
    }
    let t = tier.outcome(now).totals;
    assert_eq!(t.reads, 128);
    assert_eq!(
        t.bypassed,
        2 * (64 - 8),
        "past 64 KiB of each pass, every read"
    );
    assert_eq!(
        t.read_hits, 8,
        "the second pass's first 64 KiB, admitted by the first"
    );
    assert_eq!(
        t.fill_bytes,
        8 * 2 * BLK,
        "only the first 8 lines were filled"
    );
}
