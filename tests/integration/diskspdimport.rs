//! DiskSpd command lines (`storlab run --diskspd "ARGS"`) and XML profiles (`storlab run
//! PROFILE.xml`, `storlab import PROFILE.xml`), written from DiskSpd's documented options and
//! profile schema, converted and run for a second from the real binary, their Windows targets
//! placed in a scratch directory by `--map`: what ran is what DiskSpd was told (threads,
//! I/Os in flight, sizes, mix, rates, time spans one after another). And the refusals: what
//! cannot be converted is named with its argument or line and a reason, exit 2.

use crate::harness::{
    at, check_open_loop_accounting, load_json, run_in, scratch, share_tolerance, u64_at,
};
use serde_json::Value;
use std::path::Path;

/// A worker of the run's job, by name.
fn worker<'a>(r: &'a Value, name: &str) -> &'a Value {
    at(r, "/job/workers")
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"].as_str().is_some_and(|n| n.starts_with(name)))
        .unwrap_or_else(|| panic!("no worker {name}: {}", at(r, "/job/workers")))
}

/// Reads and writes a class did (in step `step` when the run had steps).
fn ios(r: &Value, step: Option<usize>, class: &str) -> (u64, u64) {
    let c = match step {
        Some(s) => &r["steps"][s]["classes"][class],
        None => &r["classes"][class],
    };
    let n = |d: &str| {
        c[d]["ops"]
            .as_u64()
            .unwrap_or_else(|| panic!("{class}: {c}"))
    };
    (n("read"), n("write"))
}

#[test]
fn a_diskspd_command_line_runs_with_its_targets_mapped() {
    let dir = scratch();
    let d = dir.path();
    let results = d.join("r.json");
    // 2 threads of 4 random 4 KiB I/Os in flight on a 16 MiB file, 30 % writes, through the
    // page cache (DiskSpd's default); D: placed in the scratch directory (its folder made
    // first: storlab makes only its own).
    std::fs::create_dir(d.join("bench")).unwrap();
    run_in(
        d,
        [
            "run",
            "--diskspd",
            r"-b4K -d1 -W0 -o4 -t2 -r -w30 -c16M -L D:\bench\test.dat",
            "--map",
            &format!("D:={}", d.display()),
            "-o",
            results.to_str().unwrap(),
        ],
    )
    .expect_ok();
    let file = d.join("bench/test.dat");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 16 << 20);
    let r = load_json(&results);
    assert_eq!(at(&r, "/invocation/source/format"), "diskspd");
    let w = worker(&r, "target1");
    assert_eq!(w["queue_depth"], 4);
    assert_eq!(
        at(&r, "/job/workers").as_array().unwrap().len(),
        2,
        "2 threads"
    );
    let (reads, writes) = ios(&r, None, "target1");
    let n = reads + writes;
    assert!(n > 0);
    let share = writes as f64 / n as f64;
    assert!(
        (share - 0.3).abs() <= share_tolerance(0.3, n, 0.05),
        "{writes} writes of {n}"
    );
}

#[test]
fn a_diskspd_rate_limit_becomes_an_open_loop_rate_per_thread() {
    let dir = scratch();
    let d = dir.path();
    let results = d.join("r.json");
    // -g800: 800 bytes per ms per thread, of 8 KiB blocks; -Su: O_DIRECT; one thread on each
    // of two targets, a physical disk and a drive, both placed by --map.
    run_in(
        d,
        [
            "run",
            "--diskspd",
            "-b8K -d1 -W0 -o2 -g800 -Su -c4M #1 E:",
            "--map",
            &format!("#1={}", d.join("disk1.dat").display()),
            "--map",
            &format!("E:={}", d.join("e.dat").display()),
            "-o",
            results.to_str().unwrap(),
        ],
    )
    .expect_ok();
    let r = load_json(&results);
    check_open_loop_accounting(&r);
    for name in ["target1", "target2"] {
        // 800 bytes per ms of 8 KiB blocks: 97.656 I/Os a second.
        let rate = worker(&r, name)["rate"].clone();
        assert!(
            rate.to_string().contains("97.656"),
            "{name}: {rate} ({})",
            at(&r, "/job/workers")
        );
    }
    assert_eq!(
        std::fs::metadata(d.join("e.dat")).unwrap().len(),
        4 << 20,
        "E: placed by --map"
    );
    assert_eq!(u64_at(&r, "/job/duration_ms"), 1000);
}

const PROFILE: &str = r#"<?xml version="1.0"?>
<Profile>
  <Verbose>false</Verbose>
  <TimeSpans>
    <TimeSpan>
      <Duration>1</Duration>
      <Warmup>0</Warmup>
      <MeasureLatency>true</MeasureLatency>
      <DisableAffinity>true</DisableAffinity>
      <Targets>
        <Target>
          <Path>C:\db\data.dat</Path>
          <BlockSize>8192</BlockSize>
          <Random>8192</Random>
          <ThreadsPerFile>2</ThreadsPerFile>
          <RequestCount>4</RequestCount>
          <WriteRatio>25</WriteRatio>
          <FileSize>8388608</FileSize>
          <WriteBufferContent><Pattern>random</Pattern></WriteBufferContent>
        </Target>
        <Target>
          <Path>C:\db\log.dat</Path>
          <BlockSize>65536</BlockSize>
          <RequestCount>1</RequestCount>
          <WriteRatio>100</WriteRatio>
          <FileSize>4194304</FileSize>
          <WriteThrough>true</WriteThrough>
          <WriteBufferContent><Pattern>random</Pattern></WriteBufferContent>
        </Target>
      </Targets>
    </TimeSpan>
    <TimeSpan>
      <Duration>1</Duration>
      <Warmup>0</Warmup>
      <DisableAffinity>true</DisableAffinity>
      <Targets>
        <Target>
          <Path>C:\db\data.dat</Path>
          <BlockSize>65536</BlockSize>
          <FileSize>8388608</FileSize>
        </Target>
      </Targets>
    </TimeSpan>
  </TimeSpans>
</Profile>
"#;

#[test]
fn a_diskspd_profile_runs_its_time_spans_one_after_another() {
    let dir = scratch();
    let d = dir.path();
    let profile = d.join("oltp.xml");
    std::fs::write(&profile, PROFILE).unwrap();
    std::fs::create_dir(d.join("db")).unwrap();
    let results = d.join("r.json");
    let map = format!("C:={}", d.display());
    // Converted first: the job names each part's line.
    let import = run_in(d, ["import", "oltp.xml", "--map", &map]);
    import.expect_ok().stdout_has(&[
        "# oltp.xml:11: target C:\\db\\data.dat",
        "[cycle]\ngroup = [1, 2]",
    ]);
    run_in(d, ["run", "oltp.xml", "--map", &map, "-o", "r.json"])
        .expect_ok()
        .stderr_has(&["DiskSpd file, converted"]);
    let r = load_json(&results);
    assert_eq!(
        r["steps"].as_array().unwrap().len(),
        2,
        "a step a time span"
    );
    // Time span 1: the data file's random mix and the log's writes; time span 2: the
    // sequential scan alone.
    let (reads, writes) = ios(&r, Some(0), "span1-target1");
    assert!(reads > 0 && writes > 0);
    let (log_reads, log_writes) = ios(&r, Some(0), "span1-target2");
    assert!(log_reads == 0 && log_writes > 0);
    let (scan_reads, scan_writes) = ios(&r, Some(1), "span2-target1");
    assert!(scan_reads > 0 && scan_writes == 0);
    assert!(Path::new(&d.join("db/log.dat")).exists());
}

#[test]
fn what_diskspd_asks_and_storlab_cannot_do_is_refused_with_its_place() {
    let dir = scratch();
    let d = dir.path();
    run_in(d, ["run", "--diskspd", "-b4K -Sm -p -c1M a.dat"])
        .expect_code(2)
        .stderr_has(&[
            "command line, argument 2: -Sm: memory-mapped I/O",
            "command line, argument 3: -p",
            "--lenient",
        ]);
    run_in(d, ["run", "--diskspd", "-b 4K a.dat"])
        .expect_code(2)
        .stderr_has(&["write -b4K"]);
    let bad = PROFILE.replace(
        "<RequestCount>1</RequestCount>",
        "<MemoryMappedIo>true</MemoryMappedIo>",
    );
    std::fs::write(d.join("bad.xml"), bad).unwrap();
    run_in(d, ["import", "bad.xml"])
        .expect_code(2)
        .stderr_has(&["bad.xml:24: <MemoryMappedIo>true</MemoryMappedIo>: memory-mapped"]);
    // --lenient: converted without it, and said so.
    run_in(d, ["import", "bad.xml", "--lenient"])
        .expect_ok()
        .stdout_has(&["# left out (bad.xml:24)"]);
}

/// Each target's I/Os in a results file: (name, reads + writes).
fn target_ops(r: &serde_json::Value) -> Vec<(String, u64)> {
    r["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let ops = &t["ops"];
            let n = ops["read"].as_u64().unwrap_or(0) + ops["write"].as_u64().unwrap_or(0);
            (t["name"].as_str().unwrap().to_string(), n)
        })
        .collect()
}

#[test]
fn each_file_gets_the_share_of_the_io_diskspd_gives_it() {
    let dir = scratch();
    let d = dir.path();
    // -F2 -O4: two threads, four I/Os in flight each over both files, each I/O's file at
    // random (DiskSpd's wiki): both files about half the I/O, whatever their speed.
    run_in(
        d,
        [
            "run",
            "--diskspd",
            "-F2 -O4 -b4K -r -d1 -W0 -c4M f1.dat f2.dat",
            "-o",
            "f.json",
        ],
    )
    .expect_ok();
    let ops = target_ops(&load_json(&d.join("f.json")));
    let total: u64 = ops.iter().map(|o| o.1).sum();
    assert!(total >= 200, "{ops:?}");
    for (name, n) in &ops {
        let share = *n as f64 / total as f64;
        assert!(
            (0.4..=0.6).contains(&share),
            "{name}: {share:.3} of {total}"
        );
    }
    let r = load_json(&d.join("f.json"));
    assert_eq!(r["job"]["workers"][0]["target_choice"], "random");
    assert_eq!(r["job"]["workers"].as_array().unwrap().len(), 2);
    // -t2 -o2: two threads on each file, each file's own I/Os in flight: every file is driven.
    run_in(
        d,
        [
            "run",
            "--diskspd",
            "-t2 -o2 -b4K -r -d1 -W0 -c4M f1.dat f2.dat",
            "-o",
            "t.json",
        ],
    )
    .expect_ok();
    let r = load_json(&d.join("t.json"));
    let workers = r["job"]["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 4, "two threads a file");
    for w in workers {
        assert_eq!(w["targets"].as_array().unwrap().len(), 1, "{w}");
    }
    assert!(target_ops(&r).iter().all(|(_, n)| *n > 0));
}

/// Three targets of a time span's two threads (`ThreadCount`, `RequestCount`): `a` weighs 3
/// and `b` 1 on both threads; `c` is thread 1's alone (`ThreadTargets`), there of weight 4.
const WEIGHTED: &str = r#"<Profile><TimeSpans><TimeSpan>
  <Duration>1</Duration><Warmup>0</Warmup><DisableAffinity>true</DisableAffinity>
  <ThreadCount>2</ThreadCount><RequestCount>4</RequestCount>
  <Targets>
    <Target><Path>a.dat</Path><BlockSize>4096</BlockSize><Random>4096</Random>
      <FileSize>4194304</FileSize><Weight>3</Weight></Target>
    <Target><Path>b.dat</Path><BlockSize>4096</BlockSize><Random>4096</Random>
      <FileSize>4194304</FileSize></Target>
    <Target><Path>c.dat</Path><BlockSize>4096</BlockSize><Random>4096</Random>
      <FileSize>4194304</FileSize>
      <ThreadTargets><ThreadTarget><Thread>1</Thread><Weight>4</Weight></ThreadTarget></ThreadTargets>
    </Target>
  </Targets>
</TimeSpan></TimeSpans></Profile>"#;

#[test]
fn diskspd_weights_and_thread_targets_give_each_file_its_share_of_each_thread() {
    let dir = scratch();
    let d = dir.path();
    std::fs::write(d.join("w.xml"), WEIGHTED).unwrap();
    run_in(d, ["run", "w.xml", "-o", "w.json"]).expect_ok();
    let r = load_json(&d.join("w.json"));
    // Thread 1 on a and b, 3:1; thread 2 on a, b and c, 3:1:4.
    let (w1, w2) = (worker(&r, "thread1"), worker(&r, "thread2"));
    assert_eq!(w1["target_weights"], serde_json::json!([3, 1]), "{w1}");
    assert_eq!(w2["target_weights"], serde_json::json!([3, 1, 4]), "{w2}");
    assert_eq!(w2["target_choice"], "random");
    let ops: std::collections::HashMap<String, u64> = target_ops(&r).into_iter().collect();
    let (a, b, c) = (ops["a.dat"], ops["b.dat"], ops["c.dat"]);
    let (r1, w) = ios(&r, None, "thread2");
    let second = r1 + w;
    assert!(a + b + c >= 400 && second >= 200, "{ops:?}");
    // Each thread gives a three times b: so do both together.
    let ab = a as f64 / (a + b) as f64;
    assert!(
        (0.65..=0.85).contains(&ab),
        "a: {ab:.3} of a and b ({ops:?})"
    );
    // c is half of thread 2's I/O and none of thread 1's.
    let share = c as f64 / second as f64;
    assert!(
        (0.4..=0.6).contains(&share),
        "c: {share:.3} of thread 2's {second}"
    );
}

/// A template profile of two targets, `*1` read and `*2` written, 10 s measured after 5 s of
/// warm-up unless the command line says otherwise.
const TEMPLATE: &str = r#"<Profile><TimeSpans><TimeSpan>
  <Duration>10</Duration><Warmup>5</Warmup><RandSeed>3</RandSeed><DisableAffinity>true</DisableAffinity>
  <Targets>
    <Target><Path>*1</Path><BlockSize>4096</BlockSize><Random>4096</Random>
      <FileSize>4194304</FileSize><WriteRatio>0</WriteRatio></Target>
    <Target><Path>*2</Path><BlockSize>8192</BlockSize>
      <FileSize>4194304</FileSize><WriteRatio>100</WriteRatio></Target>
  </Targets>
</TimeSpan></TimeSpans></Profile>"#;

#[test]
fn a_command_line_runs_a_profile_with_its_times_seed_and_targets() {
    let dir = scratch();
    let d = dir.path();
    std::fs::write(d.join("p.xml"), TEMPLATE).unwrap();
    // DiskSpd's own example: diskspd -d60 -Xprof.xml first.bin second.bin.
    let line = "-d1 -W0 -z9 -Xp.xml first.bin second.bin";
    run_in(d, ["run", "--diskspd", line, "-o", "x.json"]).expect_ok();
    let r = load_json(&d.join("x.json"));
    assert_eq!(
        u64_at(&r, "/job/duration_ms"),
        1000,
        "-d1 over <Duration>10"
    );
    assert_eq!(u64_at(&r, "/job/ramp_ms"), 0, "-W0 over <Warmup>5");
    assert_eq!(u64_at(&r, "/job/seed"), 9, "-z9 over <RandSeed>3");
    let ops: std::collections::HashMap<String, u64> = target_ops(&r).into_iter().collect();
    assert!(ops["first.bin"] > 0 && ops["second.bin"] > 0, "{ops:?}");
    let (reads, writes) = ios(&r, None, "target1");
    assert!(reads > 0 && writes == 0, "*1 is read: {reads} {writes}");
    let (reads, writes) = ios(&r, None, "target2");
    assert!(reads == 0 && writes > 0, "*2 is written: {reads} {writes}");
    // What DiskSpd refuses beside -X, and targets that do not match the templates.
    for (line, says) in [
        ("-b4K -Xp.xml a.bin b.bin", "-b4K: not with -X"),
        (
            "-Xp.xml a.bin",
            "the template path *2 has no target on the command line",
        ),
        (
            "-Xp.xml a.bin b.bin c.bin",
            "c.bin: no template path *3 in p.xml",
        ),
        ("-Xp.xml -Xq.xml a.bin b.bin", "a second profile"),
        (
            "-Xnone.xml a.bin b.bin",
            "-Xnone.xml: the profile cannot be read",
        ),
    ] {
        run_in(d, ["run", "--diskspd", line, "--dry-run"])
            .expect_code(2)
            .stderr_has(&[says]);
    }
}

#[test]
fn writes_from_a_file_compress_as_the_file_does() {
    let dir = scratch();
    let d = dir.path();
    // StorScore's entropy files: a compressibility each. Here 3 in 4 bytes of every 2 KiB are
    // zeros: about 4:1 in 32 KiB units.
    let mut bytes = Vec::new();
    let mut x = 1u64;
    while bytes.len() < 4 << 20 {
        for _ in 0..64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        bytes.extend_from_slice(&[0u8; 1536]);
    }
    std::fs::write(d.join("entropy.bin"), &bytes).unwrap();
    let map = format!("C:\\entropy\\e75.bin={}", d.join("entropy.bin").display());
    let line = "-b32K -w100 -r -d1 -W0 -c32M -Z20M,C:\\entropy\\e75.bin f.dat";
    run_in(d, ["run", "--diskspd", line, "--map", &map, "-o", "z.json"]).expect_ok();
    let r = load_json(&d.join("z.json"));
    let asked = at(&r, "/job/data/compress").as_f64().unwrap();
    assert!((3.4..=4.6).contains(&asked), "asked {asked}");
    // What the run wrote compresses as the file does, at every unit arrays use.
    for u in at(&r, "/data/compress_by_unit").as_array().unwrap() {
        let got = u["compress_achieved"].as_f64().unwrap();
        assert!((got / asked - 1.0).abs() <= 0.15, "{u} against {asked}");
    }
}
