//! storlab's own cost on the per-I/O path, measured by criterion on one core: drawing the next
//! offset for each distribution, recording a latency into a histogram and into a worker's
//! statistics, and one whole turn of the worker loop on the null backend (issue, complete,
//! record). `bench/regression.sh` compares these with the baseline committed for this machine
//! and fails when a case is more than 10% slower.
//!
//!   cargo bench --bench per_io
//!   cargo bench --bench per_io -- --save-baseline NAME

#![allow(missing_docs)]

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Instant;
use storlab::testing::{
    Access, AccessGen, ClosedLoop, Dir, Distribution, Histogram, IntervalGrid, IoLimit, MapTarget,
    NullBackend, SlotArena, StatsSet, TargetGeometry, VerifyMap, Worker, WorkerPlan, worker,
};

const TARGET_BYTES: u64 = 1 << 30;

/// One worker doing 4 KiB I/O, 70% reads, with `distribution` (`random_pct` 0: sequential).
fn worker(distribution: Distribution, random_pct: f64, queue_depth: u32) -> Worker {
    let access = Access {
        distribution,
        ..Access::new(0, 4096, 70.0, random_pct)
    };
    Worker::closed_loop("bench", vec![0], queue_depth, vec![access])
}

fn geometry() -> [TargetGeometry; 1] {
    [TargetGeometry {
        size_bytes: TARGET_BYTES,
        fsync_every: 0,
    }]
}

fn offsets(c: &mut Criterion) {
    let mut g = c.benchmark_group("offset");
    g.throughput(Throughput::Elements(1));
    let cases = [
        ("sequential", Distribution::Uniform, 0.0),
        ("uniform", Distribution::Uniform, 100.0),
        ("shuffle", Distribution::Shuffle, 100.0),
        ("zipf-1.2", Distribution::Zipf { theta: 1.2 }, 100.0),
        (
            "zoned-80-10",
            Distribution::parse("zoned:80/10:20/90").expect("a distribution"),
            100.0,
        ),
    ];
    for (name, distribution, random) in cases {
        let spec = worker(distribution, random, 1);
        let mut access = AccessGen::new(&spec, &geometry(), 7).expect("a generator");
        g.bench_function(name, |b| b.iter(|| black_box(access.next_op())));
    }
    g.finish();
}

fn histograms(c: &mut Criterion) {
    let mut g = c.benchmark_group("record");
    g.throughput(Throughput::Elements(1));
    let mut h = Histogram::new();
    let mut ns = 1u64;
    g.bench_function("histogram", |b| {
        b.iter(|| {
            ns = ns.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            h.record(black_box(50_000 + (ns >> 48)));
        })
    });
    let mut stats = StatsSet::new(2);
    g.bench_function("stats-set", |b| {
        b.iter(|| {
            ns = ns.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            stats.record(1, Dir::Read, 4096, black_box(50_000 + (ns >> 48)), None);
        })
    });
    g.finish();
}

/// One whole turn of the worker loop per I/O: the real `worker::run` on the null backend,
/// closed loop at queue depth 32, for `IOS` I/Os; criterion reports the time per run, and the
/// throughput per I/O.
fn null_loop(c: &mut Criterion) {
    const IOS: u64 = 200_000;
    let mut g = c.benchmark_group("null-loop");
    g.throughput(Throughput::Elements(IOS));
    g.sample_size(20);
    let spec = worker(Distribution::Uniform, 100.0, 32);
    let blocks = VerifyMap::new(
        &[MapTarget {
            size_bytes: TARGET_BYTES,
            prepared_id: Some(1),
        }],
        4096,
        1,
        false,
    );
    let (stop, halt, failures) = (
        AtomicBool::new(false),
        AtomicBool::new(false),
        AtomicU64::new(0),
    );
    g.bench_function("qd32-4k-uniform", |b| {
        b.iter_batched(
            || AccessGen::new(&spec, &geometry(), 7).expect("a generator"),
            |access| {
                let (tx, rx) = std::sync::mpsc::channel();
                let plan = WorkerPlan {
                    index: 0,
                    spec: &spec,
                    classes: 1,
                    start: Instant::now(),
                    grid: IntervalGrid::of(0, 3_600_000, 3_600_000),
                    stop: &stop,
                    halt: &halt,
                    tx,
                    batch: 1,
                    targets: 1,
                    blocks: &blocks,
                    failures: &failures,
                    max_failures: u64::MAX,
                    sample: None,
                };
                let mut source = ClosedLoop::new(access, Some(IoLimit::Ios(IOS)));
                let report = SlotArena::with(32, 4096, 1, |arena, slots| {
                    worker::run(
                        plan,
                        NullBackend::new(arena),
                        slots,
                        &mut source,
                        Vec::new(),
                    )
                });
                drop(rx);
                black_box(report)
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, offsets, histograms, null_loop);
criterion_main!(benches);
