//! Cache curves: a run on a real file records its block sample (`--sample-blocks`), and
//! `storlab cache-curve` reads it back into hit ratio against cache size; the LRU figures are
//! checked against an LRU cache the test simulates itself from the sample file's records; a
//! large target is sampled at a rate; Exchange validations and simulated users record samples
//! too; a run without a sample gets exit 2, named.

use crate::harness::{
    ExchangeArgs, RunArgs, at, f64_at, load_json, run_in, scratch, str_at, u64_at, users_args,
    write_job,
};
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// The (target, block) of every record of a block-sample file, in time order.
fn records(path: &Path) -> Vec<(u64, u64, u64)> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"STLBLKS1");
    assert_eq!((bytes.len() - 8) % 24, 0);
    let mut r: Vec<(u64, u64, u64)> = bytes[8..]
        .chunks_exact(24)
        .map(|c| {
            let t = u64::from_le_bytes(c[0..8].try_into().unwrap());
            let block = u64::from_le_bytes(c[8..16].try_into().unwrap());
            let target = u64::from(u16::from_le_bytes([c[16], c[17]]));
            (t, target, block)
        })
        .collect();
    r.sort_by_key(|x| x.0);
    r
}

/// LRU hits of a cache of `capacity` blocks over `keys`, the plain way.
fn lru_hits(keys: &[(u64, u64)], capacity: usize) -> usize {
    let mut cache: VecDeque<(u64, u64)> = VecDeque::new();
    let mut hits = 0;
    for k in keys {
        if let Some(i) = cache.iter().position(|c| c == k) {
            hits += 1;
            cache.remove(i);
        } else if cache.len() == capacity {
            cache.pop_back();
        }
        cache.push_front(*k);
    }
    hits
}

/// A job of one worker doing `ios` 4 KiB random reads (seeded offsets spread by
/// `distribution`) on `target` of `size`, recording the block sample: a fixed stream, so the
/// same curve on a quiet machine and on a loaded one.
fn sampling_job(
    dir: &Path,
    engine: &str,
    target: &Path,
    size: &str,
    ios: u64,
    distribution: &str,
) -> PathBuf {
    let text = format!(
        "engine = \"{engine}\"\nduration = \"120s\"\nsample_blocks = true\n\n\
         [[target]]\nname = \"t\"\npath = \"{}\"\nsize = \"{size}\"\n\n\
         [[worker]]\nname = \"w\"\ntargets = [\"t\"]\nqueue_depth = 4\nio_limit = {ios}\n\n\
         [[worker.access]]\nblock_size = \"4k\"\nread = \"100%\"\nrandom = \"100%\"\n\
         distribution = \"{distribution}\"\n",
        target.display()
    );
    write_job(dir, "sampling.toml", &text)
}

/// `storlab cache-curve RESULTS --json EXTRA...` in `dir`, which must succeed: the curve.
#[track_caller]
fn curve_json(dir: &Path, results: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["cache-curve", results.to_str().unwrap(), "--json"];
    args.extend(extra);
    let out = run_in(dir, &args);
    out.expect_code(0);
    serde_json::from_str(&out.stdout).expect("only JSON on stdout")
}

fn point(curve: &Value, pct: f64) -> &Value {
    curve["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["cache_pct"].as_f64() == Some(pct))
        .unwrap_or_else(|| panic!("no point at {pct}%"))
}

#[test]
fn a_run_records_its_block_sample_and_the_curve_reads_it() {
    let dir = scratch();
    let results = dir.path().join("hot.json");
    // 20,000 reads, 90 % of them on 10 % of a 16 MiB file (4,096 blocks): a cache of a tenth
    // of the data set holds the hot band.
    let target = dir.path().join("t.dat");
    let job = sampling_job(
        dir.path(),
        "io_uring",
        &target,
        "16MiB",
        20_000,
        "zoned:90/10:10/90",
    );
    let v = RunArgs::job(&job).results(&results).run_ok(dir.path());
    let s = at(&v, "/block_sample");
    assert_eq!(u64_at(s, "/block_bytes"), 4096);
    assert_eq!(f64_at(s, "/rate"), 1.0, "a small target is sampled whole");
    assert_eq!(u64_at(s, "/dropped"), 0);
    let sampled = u64_at(s, "/sampled");
    // Every I/O is one block, and every block is sampled.
    assert_eq!(sampled, 20_000);
    assert_eq!(u64_at(s, "/references"), 20_000);
    let file = dir.path().join("hot.blocks");
    assert_eq!(str_at(s, "/path"), file.display().to_string());
    let refs = records(&file);
    assert_eq!(refs.len() as u64, sampled);
    assert!(refs.iter().all(|r| r.1 == 0 && r.2 < 4096));

    let curve = curve_json(dir.path(), &results, &["-o", "curve.html"]);
    assert_eq!(u64_at(&curve, "/sampled"), sampled);
    let points = curve["points"].as_array().unwrap();
    assert_eq!(points.len(), 20);
    for p in points {
        for policy in ["lru", "arc", "s3fifo"] {
            let h = p["hit_ratio"][policy].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&h), "{p}");
        }
    }
    let lru: Vec<f64> = points
        .iter()
        .map(|p| p["hit_ratio"]["lru"].as_f64().unwrap())
        .collect();
    assert!(
        lru.windows(2).all(|w| w[0] <= w[1]),
        "LRU never falls: {lru:?}"
    );
    // The curve's LRU is exact at rate 1: an LRU cache simulated here agrees.
    let keys: Vec<(u64, u64)> = refs.iter().map(|r| (r.1, r.2)).collect();
    for pct in [5.0, 10.0, 25.0] {
        let p = point(&curve, pct);
        let blocks = (u64_at(p, "/cache_bytes") / 4096) as usize;
        let want = lru_hits(&keys, blocks) as f64 / keys.len() as f64;
        let got = f64_at(p, "/hit_ratio/lru");
        assert!((got - want).abs() < 1e-9, "{pct}%: {got} vs {want}");
    }
    // The hot band fits in a tenth: most reads hit there.
    assert!(
        f64_at(point(&curve, 10.0), "/hit_ratio/lru") > 0.6,
        "{curve}"
    );
    // The first reference to each block misses in any cache: at rate 1 their share is the
    // distinct blocks over the references, and no curve goes above the rest.
    let distinct = keys.iter().collect::<std::collections::HashSet<_>>().len();
    let first = f64_at(&curve, "/first_reference_share");
    assert!((first - distinct as f64 / keys.len() as f64).abs() < 1e-12);
    for p in points {
        for policy in ["lru", "arc", "s3fifo"] {
            assert!(p["hit_ratio"][policy].as_f64().unwrap() <= 1.0 - first + 1e-12);
        }
    }
    let tenths = (1000.0 * first).round();
    let stated = format!(
        "{:.1}% of references are first references to a block: no cache of any size can hit them, so no curve goes above {:.1}%",
        tenths / 10.0,
        (1000.0 - tenths) / 10.0
    );
    let html = std::fs::read_to_string(dir.path().join("curve.html")).unwrap();
    assert!(html.contains("data-chart=\"cache-curve\""));
    assert!(html.contains("data-series=\"s3fifo\""));
    assert!(html.contains(&stated), "{stated}");
    assert!(html.contains("data-series=\"ceiling "));
    // With sequential I/O bypassing the caches (a random run has little of it).
    let bypassed = curve_json(dir.path(), &results, &["--bypass-sequential"]);
    assert_eq!(bypassed["bypass_sequential"], true);
    let share = f64_at(&bypassed, "/sequential_share");
    assert!((0.0..0.2).contains(&share), "{share}");
    // What-if: with a cache device of 1 µs (faster than any disk), closed loop at the run's
    // own concurrency. With no cache the model gives back the run's IOPS (Little's law both
    // ways); a cache that holds the hot band raises them.
    let args = ["--cache-latency", "1us", "-o", "what-if.html"];
    let what_if = curve_json(dir.path(), &results, &args);
    let run_iops = f64_at(&v, "/totals/read/iops") + f64_at(&v, "/totals/write/iops");
    let none = f64_at(&what_if, "/no_cache/iops");
    assert!((none / run_iops - 1.0).abs() < 0.01, "{none} vs {run_iops}");
    assert_eq!(f64_at(&what_if, "/model/cache_latency_ns"), 1_000.0);
    let at_10 = point(&what_if, 10.0);
    let hit = f64_at(at_10, "/hit_ratio/lru");
    let lat = f64_at(at_10, "/predicted/lru/latency_ns");
    let backing = f64_at(&what_if, "/model/backing_latency_ns");
    assert!((lat - (hit * 1_000.0 + (1.0 - hit) * backing)).abs() < 1.0);
    assert!(f64_at(at_10, "/predicted/lru/iops") > none);
    let html = std::fs::read_to_string(dir.path().join("what-if.html")).unwrap();
    assert!(html.contains("data-chart=\"cache-iops\""));
    assert!(html.contains("data-chart=\"cache-latency\""));
    // Open loop, and flags that need --cache-latency.
    let out = run_in(
        dir.path(),
        [
            "cache-curve",
            results.to_str().unwrap(),
            "--cache-latency",
            "1us",
            "--rate",
            "1000",
        ],
    );
    out.expect_code(0);
    assert!(
        out.stdout.contains("open loop at 1000 IOPS"),
        "{}",
        out.stdout
    );
    run_in(
        dir.path(),
        ["cache-curve", results.to_str().unwrap(), "--rate", "1000"],
    )
    .expect_code(2)
    .stderr_has(&["--cache-latency"]);
    // The table for people.
    let out = run_in(dir.path(), ["cache-curve", results.to_str().unwrap()]);
    out.expect_code(0);
    assert!(out.stdout.contains("lru hit%") && out.stdout.contains("100%"));
    assert!(out.stdout.contains(&stated), "{}", out.stdout);
}

#[test]
fn a_large_target_is_sampled_at_a_rate() {
    let dir = scratch();
    let results = dir.path().join("big.json");
    // The null engine on a 64 GiB stand-in: 16 Mi blocks, sampled at 1/256; 200,000 reads.
    let target = dir.path().join("absent.dat");
    let job = sampling_job(dir.path(), "null", &target, "64GiB", 200_000, "uniform");
    let v = RunArgs::job(&job).results(&results).run_ok(dir.path());
    let s = at(&v, "/block_sample");
    assert!((f64_at(s, "/rate") - 1.0 / 256.0).abs() < 1e-6);
    let (refs, sampled) = (u64_at(s, "/references"), u64_at(s, "/sampled"));
    assert_eq!(refs, 200_000);
    // Binomial: 781 expected, within 5 standard deviations (140).
    let expected = refs as f64 / 256.0;
    assert!(
        (sampled as f64 - expected).abs() < 5.0 * expected.sqrt(),
        "{sampled} of {refs}"
    );
    let curve = curve_json(dir.path(), &results, &["--policy", "lru"]);
    // Uniform over 64 GiB: nearly every reference is a first one.
    assert!(
        f64_at(point(&curve, 50.0), "/hit_ratio/lru") < 0.05,
        "{curve}"
    );
    assert!(curve["points"][0]["hit_ratio"].get("arc").is_none());
}

#[test]
fn a_run_without_a_sample_or_a_bad_policy_is_a_usage_error() {
    let dir = scratch();
    let results = dir.path().join("plain.json");
    RunArgs::target(&dir.path().join("p.dat"))
        .size("4MiB")
        .flags(&["--engine", "null", "--duration", "200ms"])
        .results(&results)
        .run_ok(dir.path());
    let r = results.to_str().unwrap();
    run_in(dir.path(), ["cache-curve", r])
        .expect_code(2)
        .stderr_has(&["no block sample", "--sample-blocks"]);
    run_in(dir.path(), ["cache-curve", r, "--policy", "lru,clock"])
        .expect_code(2)
        .stderr_has(&["--policy", "clock", "lru, arc or s3fifo"]);
}

/// Issue 44: a sample recorded at a device or a pipe was said to be "not at /dev/zero", and
/// a file that is no sample exited 1; each is refused input (exit 2) said as it is.
#[test]
fn a_sample_that_is_a_device_a_pipe_or_no_sample_is_refused_saying_what_it_is() {
    let dir = scratch();
    let results = dir.path().join("s.json");
    RunArgs::target(&dir.path().join("s.dat"))
        .size("1MiB")
        .flags(&["--engine", "null", "--duration", "200ms", "--sample-blocks"])
        .results(&results)
        .run_ok(dir.path());
    let fifo = dir.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_bits_truncate(0o600),
        0,
    )
    .unwrap();
    let junk = dir.path().join("junk");
    std::fs::write(&junk, b"not a sample").unwrap();
    std::fs::remove_file(dir.path().join("s.blocks")).unwrap();
    let mut v = load_json(&results);
    for (at, says) in [
        ("/dev/zero", "/dev/zero is a character device"),
        (fifo.to_str().unwrap(), "is a named pipe (FIFO)"),
        (junk.to_str().unwrap(), "is not a storlab block-sample file"),
    ] {
        v["block_sample"]["path"] = at.into();
        let moved = dir.path().join("moved.json");
        std::fs::write(&moved, v.to_string()).unwrap();
        run_in(dir.path(), ["cache-curve", moved.to_str().unwrap()])
            .expect_code(2)
            .stderr_has(&[says]);
    }
}

#[test]
fn exchange_and_users_runs_record_samples_too() {
    let dir = scratch();
    let ex = dir.path().join("ex.json");
    let out = ExchangeArgs::sized(200, "40MiB", "1%", 2)
        .flags(&["--sample-blocks"])
        .measure("3s")
        .lenient()
        .db_path(dir.path())
        .results(&ex)
        .run(dir.path());
    assert!(out.code == Some(0) || out.code == Some(3), "{}", out.stderr);
    let users = dir.path().join("users.json");
    let db = dir.path().join("users");
    std::fs::create_dir(&db).unwrap();
    let args = users_args(
        &db,
        &users,
        &[
            "--users",
            "10",
            "--databases",
            "2",
            "--duration",
            "30m",
            "--compress",
            "360",
            "--sample-blocks",
        ],
    );
    let out = run_in(dir.path(), &args);
    assert!(out.code == Some(0) || out.code == Some(3), "{}", out.stderr);
    for results in [&ex, &users] {
        let v = load_json(results);
        assert_eq!(at(&v, "/job/sample_blocks"), &Value::Bool(true));
        assert!(
            u64_at(&v, "/block_sample/sampled") > 0,
            "{}",
            results.display()
        );
        let curve = curve_json(dir.path(), results, &[]);
        assert_eq!(curve["points"].as_array().unwrap().len(), 20);
    }
}

/// A trace of 100 blocks of 4 KiB read in a loop 50 times, then one write: in MSR Cambridge
/// CSV (ticks of 100 ns) or in blkparse text (sectors of 512 bytes), with noise the readers
/// must skip (a header; blkparse's other events and summary).
fn loop_trace(format: &str) -> String {
    let mut text = String::new();
    if format == "msr" {
        text.push_str("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
    }
    for i in 0..5001u64 {
        let (write, block) = if i == 5000 {
            (true, 7)
        } else {
            (false, i % 100)
        };
        if format == "msr" {
            let kind = if write { "Write" } else { "Read" };
            text.push_str(&format!(
                "{},usr,0,{kind},{},4096,{}\n",
                128166372000000000 + i * 10,
                block * 4096,
                1000 + i % 3
            ));
        } else {
            let rwbs = if write { "W" } else { "R" };
            let t = i as f64 * 1e-6;
            text.push_str(&format!(
                "  7,0    0 {i:8} {t:14.9}  42  Q   {rwbs} {} + 8 [app]\n  7,0    0 {i:8} {t:14.9}  42  D   {rwbs} {} + 8 [app]\n",
                block * 8,
                block * 8
            ));
        }
    }
    if format != "msr" {
        text.push_str("CPU0 (7,0):\n Reads Queued:        5000,    20000KiB\n");
    }
    text
}

#[test]
fn imported_traces_give_exact_curves() {
    let dir = scratch();
    for format in ["msr", "blkparse"] {
        let trace = dir.path().join(format!("loop.{format}"));
        std::fs::write(&trace, loop_trace(format)).unwrap();
        let results = dir.path().join(format!("{format}.json"));
        let out = run_in(
            dir.path(),
            [
                "trace",
                "import",
                trace.to_str().unwrap(),
                "-o",
                results.to_str().unwrap(),
            ],
        );
        out.expect_code(0);
        assert!(out.stdout.contains("5001 I/Os"), "{}", out.stdout);
        let v = load_json(&results);
        assert_eq!(v["targets"][0]["size_bytes"], 100 * 4096, "{format}");
        assert_eq!(v["block_sample"]["rate"], 1.0);
        assert_eq!(v["block_sample"]["sampled"], 5001);
        assert_eq!(v["totals"]["read"]["ops"], 5000);
        assert_eq!(v["totals"]["write"]["ops"], 1);
        if format == "msr" {
            // Response times of 1000 to 1002 ticks: 100 µs.
            let mean = f64_at(&v, "/totals/read/latency_ns/mean");
            assert!((100_000.0..=100_200.0).contains(&mean), "{mean}");
        }
        // A loop over 100 blocks: LRU misses every reference below 100 blocks and hits all
        // but the first 100 (and the write's block, already in) at 100 blocks.
        let c = curve_json(dir.path(), &results, &["--policy", "lru"]);
        assert_eq!(c["sampled"], 5001);
        let lru = |pct: f64| point(&c, pct)["hit_ratio"]["lru"].as_f64().unwrap();
        assert!(
            (lru(100.0) - 4901.0 / 5001.0).abs() < 1e-9,
            "{}",
            lru(100.0)
        );
        assert_eq!(
            lru(50.0),
            0.0,
            "a loop larger than the cache never hits in LRU"
        );
    }
    // Bad input: the file and line, exit 2.
    let bad = dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        "128166372000000000,usr,0,Read,0,4096,1\n128166372000000010,usr,0,Trim,0,4096,1\n",
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        ["trace", "import", bad.to_str().unwrap(), "-o", "x.json"],
    );
    out.expect_code(2);
    assert!(
        out.stderr.contains("bad.csv:2: Type `trim`"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_rate_curve_gives_the_model_the_target_s_latency_against_load() {
    // A rate curve on a file: the closed-loop maximum, then 25 %, 50 % and 75 % of it, each a
    // load at which the target's latency is measured; with the block sample, cache-curve's
    // model takes those points as the backing target's latency against load.
    let dir = scratch();
    let text = format!(
        "duration = \"1s\"\nsample_blocks = true\ncurve = [25, 50, 75]\n\n\
         [[target]]\nname = \"t\"\npath = \"{}\"\nsize = \"8MiB\"\n\n\
         [[worker]]\nname = \"w\"\nqueue_depth = 4\n\n\
         [[worker.access]]\nblock_size = \"4k\"\nread = \"100%\"\nrandom = \"100%\"\n\
         distribution = \"zoned:80/10:20/90\"\n",
        dir.path().join("t.dat").display()
    );
    let job = write_job(dir.path(), "curve.toml", &text);
    let results = dir.path().join("curve.json");
    let run = RunArgs::job(&job).results(&results).run_ok(dir.path());
    let c = curve_json(
        dir.path(),
        &results,
        &["--policy", "lru", "--cache-latency", "1us"],
    );
    let points = c["model"]["backing_curve"]
        .as_array()
        .expect("a backing curve");
    assert!(points.len() >= 3, "{points:?}");
    let loads: Vec<f64> = points.iter().map(|p| p[0].as_f64().unwrap()).collect();
    let lats: Vec<f64> = points.iter().map(|p| p[1].as_f64().unwrap()).collect();
    assert!(loads.windows(2).all(|w| w[0] <= w[1]), "by load: {loads:?}");
    assert!(
        lats.windows(2).all(|w| w[0] <= w[1]),
        "non-decreasing: {lats:?}"
    );
    // Every size predicts. In open loop at the lowest load measured, no size sends the target
    // more than was measured (hits only lighten its load), and the mean latency falls as the
    // cache grows (more hits at 1 µs, a lighter load on the target). (Closed loop's load comes
    // from the run's own concurrency, which depends on this machine's latencies.)
    for p in c["points"].as_array().unwrap() {
        assert!(f64_at(&p["predicted"]["lru"], "/iops") > 0.0, "{p}");
    }
    let lowest = format!("{}", loads[0]);
    let c = curve_json(
        dir.path(),
        &results,
        &[
            "--policy",
            "lru",
            "--cache-latency",
            "1us",
            "--rate",
            &lowest,
        ],
    );
    let mut last = f64::INFINITY;
    for p in c["points"].as_array().unwrap() {
        let pred = &p["predicted"]["lru"];
        assert_eq!(pred["beyond_measured"], false, "{p}");
        let latency = f64_at(pred, "/latency_ns");
        assert!(latency <= last * (1.0 + 1e-9), "{p}");
        last = latency;
    }
    // The cache device's latency from a run on it (here the same run, for its mean).
    let (r, w) = (&run["totals"]["read"], &run["totals"]["write"]);
    let ops = f64_at(r, "/ops") + f64_at(w, "/ops");
    let mean = (f64_at(r, "/latency_ns/mean") * f64_at(r, "/ops")
        + f64_at(w, "/latency_ns/mean") * f64_at(w, "/ops"))
        / ops;
    let c = curve_json(
        dir.path(),
        &results,
        &[
            "--policy",
            "lru",
            "--cache-latency",
            results.to_str().unwrap(),
        ],
    );
    assert!((f64_at(&c, "/model/cache_latency_ns") - mean).abs() < 1e-6 * mean);
    let out = run_in(
        dir.path(),
        [
            "cache-curve",
            results.to_str().unwrap(),
            "--cache-latency",
            "fast",
        ],
    );
    out.expect_code(2);
    assert!(out.stderr.contains("neither a time"), "{}", out.stderr);
    // A constant latency given: no curve.
    let c = curve_json(
        dir.path(),
        &results,
        &[
            "--policy",
            "lru",
            "--cache-latency",
            "1us",
            "--backing-latency",
            "1ms",
        ],
    );
    assert!(c["model"].get("backing_curve").is_none(), "{}", c["model"]);
}

#[test]
fn every_run_measures_its_locality() {
    // 20,000 reads of 4 KiB, 90 % of them on the first tenth of 8 MiB (205 of 2048 blocks):
    // every block is sampled (a small data set), the hot tenth takes 80 % of the references.
    let dir = scratch();
    let target = dir.path().join("t.dat");
    let job = sampling_job(
        dir.path(),
        "io_uring",
        &target,
        "8MiB",
        20_000,
        "zoned:90/10:10/90",
    );
    let text = std::fs::read_to_string(&job)
        .unwrap()
        .replace("sample_blocks = true\n", "");
    std::fs::write(&job, text).unwrap();
    let results = dir.path().join("r.json");
    let v = RunArgs::job(&job).results(&results).run_ok(dir.path());
    assert!(
        !dir.path().join("r.blocks").exists(),
        "nothing recorded without sample_blocks"
    );
    let u = &v["reuse"];
    assert_eq!(u["rate"], 1.0, "{u}");
    assert_eq!(
        (u["references"].as_u64(), u["sampled"].as_u64()),
        (Some(20_000), Some(20_000))
    );
    assert_eq!(u["dropped"], 0);
    let distinct = u64_at(u, "/distinct_blocks");
    assert!((205..=2048).contains(&distinct), "{u}");
    assert!(f64_at(u, "/rereference_pct") > 85.0, "{u}");
    // 80 % of the references on the hot 205 blocks: at most about 205 of the footprint.
    let hot80 = f64_at(u, "/hot_sets/1/footprint_pct");
    assert!(hot80 <= 205.0 * 100.0 / distinct as f64 + 1.0, "{u}");
    // 90 % needs (nearly) the whole hot band and no more.
    assert!(f64_at(u, "/hot_sets/2/footprint_pct") < 30.0, "{u}");
}
