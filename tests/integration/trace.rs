//! Replaying block traces with `storlab run` (`trace = { ... }` on a worker): a storlab run
//! recorded by the kernel's block tracepoint on one loop device, written as blkparse text and
//! replayed on another, gives the same requests; a trace's own times are kept or scaled.

use crate::exchange::devices::{BlockTrace, Rq, dev_number, ram_dir};
use crate::harness::{
    LoopDevice, MIB, RunArgs, f64_at, loop_skip_reason, run_in, scratch, skip, sparse_image,
    write_job,
};
use std::fmt::Write as _;
use std::path::Path;

/// Runs `job` (TOML) in `dir`; its results.
fn run_job(dir: &Path, name: &str, job: &str) -> serde_json::Value {
    let file = write_job(dir, &format!("{name}.toml"), job);
    let results = dir.join(format!("{name}.json"));
    RunArgs::job(&file).results(&results).run_ok(dir)
}

/// The reads and writes of `rqs` within [1 MiB, 9 MiB): (write, sector, sectors).
fn requests(rqs: &[Rq]) -> Vec<(bool, u64, u64)> {
    rqs.iter()
        .filter(|r| r.read || r.write)
        .filter(|r| (2048..18432).contains(&r.sector))
        .map(|r| (r.write, r.sector, r.sectors))
        .collect()
}

#[test]
fn a_replayed_storlab_run_gives_the_same_requests() {
    let reason = loop_skip_reason(&[]).or_else(BlockTrace::skip_reason);
    if let Some(reason) = reason {
        return skip("a_replayed_storlab_run_gives_the_same_requests", &reason);
    }
    let dir = scratch();
    let ram = ram_dir();
    let images = ram.as_ref().map_or(dir.path(), |r| r.path());
    let (a, b) = (images.join("a.img"), images.join("b.img"));
    sparse_image(&a, 16 * MIB);
    sparse_image(&b, 16 * MIB);
    let a = LoopDevice::attach(&a, true).expect("loop device a");
    let b = LoopDevice::attach(&b, true).expect("loop device b");
    // 300 I/Os of 4, 8 and 16 KiB, reads and writes, at random within [1 MiB, 9 MiB), one at
    // a time: recorded as the device got them.
    let trace = BlockTrace::start("replay-a", &[dev_number(&a)]).expect("trace a");
    let job = format!(
        "destroy_data = true\nduration = \"1m\"\n[[target]]\npath = \"{}\"\n\
         [[worker]]\nqueue_depth = 1\nio_limit = 300\n\
         [[worker.access]]\nblock_sizes = {{ \"4k\" = 1, \"8k\" = 1, \"16k\" = 1 }}\nalign = \"16k\"\n\
         read = \"60%\"\nrandom = \"100%\"\noffset = \"1MiB\"\nlength = \"8MiB\"\n",
        a.path.display()
    );
    run_job(dir.path(), "record", &job);
    let recorded = requests(&trace.stop().expect("trace a"));
    drop(trace);
    assert_eq!(recorded.len(), 300, "{recorded:?}");
    // As blkparse prints the driver's issue events (D): replayed as fast as it can.
    let (major, minor) = dev_number(&a);
    let mut text = String::new();
    for (i, &(write, sector, sectors)) in recorded.iter().enumerate() {
        let rwbs = if write { "WS" } else { "R" };
        let _ = writeln!(
            text,
            "{major:3},{minor:<3} 1 {:8} {:14.9} 4242  D {rwbs:>3} {sector} + {sectors} [storlab]",
            i + 1,
            i as f64 * 1e-4
        );
    }
    text.push_str("\nCPU1 (7,0):\n Reads Queued:           0,        0KiB\n");
    let file = dir.path().join("a.blkparse.txt");
    std::fs::write(&file, text).unwrap();
    let trace = BlockTrace::start("replay-b", &[dev_number(&b)]).expect("trace b");
    let job = format!(
        "destroy_data = true\nduration = \"1m\"\n[[target]]\npath = \"{}\"\n\
         [[worker]]\nqueue_depth = 1\ntrace = {{ file = \"{}\", speed = \"max\" }}\n",
        b.path.display(),
        file.display()
    );
    let v = run_job(dir.path(), "replay", &job);
    let replayed = requests(&trace.stop().expect("trace b"));
    assert_eq!(replayed, recorded, "the same requests, in the same order");
    assert_eq!(
        v["classes"]["trace"]["read"]["ops"].as_u64().unwrap()
            + v["classes"]["trace"]["write"]["ops"].as_u64().unwrap(),
        300
    );
}

#[test]
fn a_trace_keeps_its_times_or_scales_them() {
    let dir = scratch();
    // 21 reads of 4 KiB, 10 ms apart (MSR ticks of 100 ns): 200 ms from first to last.
    let mut text = String::new();
    for i in 0..21u64 {
        let _ = writeln!(
            text,
            "{},h,0,Read,{},4096,50",
            128166372000000000 + i * 100_000,
            i * 4096
        );
    }
    let trace = dir.path().join("slow.csv");
    std::fs::write(&trace, text).unwrap();
    let target = dir.path().join("t.dat");
    for (speed, floor_ms) in [("1", 200.0), ("10", 20.0)] {
        let job = format!(
            "duration = \"1m\"\n[[target]]\npath = \"{}\"\nsize = \"1MiB\"\n\
             [[worker]]\nqueue_depth = 4\ntrace = {{ file = \"{}\", speed = {speed} }}\n",
            target.display(),
            trace.display()
        );
        let v = run_job(dir.path(), &format!("speed{speed}"), &job);
        assert_eq!(v["classes"]["trace"]["read"]["ops"], 21, "speed {speed}");
        // Never ahead of the schedule: the last read was due at 200 ms ÷ speed.
        assert!(
            f64_at(&v, "/measured_ms") >= floor_ms,
            "speed {speed}: {}",
            v["measured_ms"]
        );
        assert_eq!(v["workers"][0]["unissued"], 0);
    }
    // A trace beyond its target, and a bad speed: exit 2, saying what.
    let job = format!(
        "[[target]]\npath = \"{}\"\nsize = \"64KiB\"\n[[worker]]\ntrace = {{ file = \"{}\" }}\n",
        dir.path().join("small.dat").display(),
        trace.display()
    );
    std::fs::write(dir.path().join("small.toml"), job).unwrap();
    let out = run_in(dir.path(), ["run", "small.toml", "-o", "small.json"]);
    out.expect_code(2);
    assert!(out.stderr.contains("reaches byte 86016"), "{}", out.stderr);
    std::fs::write(
        dir.path().join("bad.toml"),
        "[[target]]\npath = \"x.dat\"\nsize = \"1MiB\"\n[[worker]]\ntrace = { file = \"t.csv\", speed = \"fast\" }\n",
    )
    .unwrap();
    let out = run_in(dir.path(), ["run", "bad.toml"]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("worker[0].trace.speed"),
        "{}",
        out.stderr
    );
}
