//! Cache curves: a run on a real file records its block sample (`--sample-blocks`), and
//! `storlab cache-curve` reads it back into hit ratio against cache size; the LRU figures are
//! checked against an LRU cache the test simulates itself from the sample file's records; a
//! large target is sampled at a rate; Exchange validations and simulated users record samples
//! too; a run without a sample gets exit 2, named.

use crate::harness::{
    ExchangeArgs, RunArgs, at, f64_at, load_json, run_in, scratch, str_at, u64_at,
};
use serde_json::Value;
use std::collections::VecDeque;
use std::path::Path;

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
    // 90 % of the reads on 10 % of a 16 MiB file (4,096 blocks): a cache of a tenth of the
    // data set holds the hot band.
    let v = RunArgs::target(&dir.path().join("t.dat"))
        .size("16MiB")
        .flags(&["--bs", "4k", "--read", "100", "--random", "100"])
        .flags(&["--distribution", "zoned:90/10:10/90", "--qd", "4"])
        .flags(&["--duration", "2s", "--sample-blocks"])
        .results(&results)
        .run_ok(dir.path());
    let s = at(&v, "/block_sample");
    assert_eq!(u64_at(s, "/block_bytes"), 4096);
    assert_eq!(f64_at(s, "/rate"), 1.0, "a small target is sampled whole");
    assert_eq!(u64_at(s, "/dropped"), 0);
    let sampled = u64_at(s, "/sampled");
    assert_eq!(sampled, u64_at(s, "/references"));
    // Every I/O of the run (ramp included) is one block.
    assert!(sampled >= u64_at(&v, "/totals/read/ops"));
    let file = dir.path().join("hot.blocks");
    assert_eq!(str_at(s, "/path"), file.display().to_string());
    let refs = records(&file);
    assert_eq!(refs.len() as u64, sampled);
    assert!(refs.iter().all(|r| r.1 == 0 && r.2 < 4096));

    let out = run_in(
        dir.path(),
        [
            "cache-curve",
            results.to_str().unwrap(),
            "--json",
            "-o",
            "curve.html",
        ],
    );
    out.expect_code(0);
    let curve: Value = serde_json::from_str(&out.stdout).expect("only JSON on stdout");
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
    let html = std::fs::read_to_string(dir.path().join("curve.html")).unwrap();
    assert!(html.contains("data-chart=\"cache-curve\""));
    assert!(html.contains("data-series=\"s3fifo\""));
    // With sequential I/O bypassing the caches (a random run has little of it).
    let out = run_in(
        dir.path(),
        [
            "cache-curve",
            results.to_str().unwrap(),
            "--json",
            "--bypass-sequential",
        ],
    );
    out.expect_code(0);
    let bypassed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(bypassed["bypass_sequential"], true);
    let share = f64_at(&bypassed, "/sequential_share");
    assert!((0.0..0.2).contains(&share), "{share}");
    // What-if: with a cache device of 50 µs, closed loop at the run's own concurrency. With
    // no cache the model gives back the run's IOPS (Little's law both ways); a cache that
    // holds the hot band raises them.
    let out = run_in(
        dir.path(),
        [
            "cache-curve",
            results.to_str().unwrap(),
            "--json",
            "--cache-latency",
            "50us",
            "-o",
            "what-if.html",
        ],
    );
    out.expect_code(0);
    let what_if: Value = serde_json::from_str(&out.stdout).unwrap();
    let run_iops = f64_at(&v, "/totals/read/iops") + f64_at(&v, "/totals/write/iops");
    let none = f64_at(&what_if, "/no_cache/iops");
    assert!((none / run_iops - 1.0).abs() < 0.01, "{none} vs {run_iops}");
    assert_eq!(f64_at(&what_if, "/model/cache_latency_ns"), 50_000.0);
    let at_10 = point(&what_if, 10.0);
    let hit = f64_at(at_10, "/hit_ratio/lru");
    let lat = f64_at(at_10, "/predicted/lru/latency_ns");
    let backing = f64_at(&what_if, "/model/backing_latency_ns");
    assert!((lat - (hit * 50_000.0 + (1.0 - hit) * backing)).abs() < 1.0);
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
            "50us",
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
}

#[test]
fn a_large_target_is_sampled_at_a_rate() {
    let dir = scratch();
    let results = dir.path().join("big.json");
    // The null engine on a 64 GiB stand-in: 16 Mi blocks, sampled at 1/256.
    let v = RunArgs::target(&dir.path().join("absent.dat"))
        .size("64GiB")
        .flags(&["--engine", "null", "--bs", "4k", "--read", "100"])
        .flags(&["--random", "100", "--duration", "1s", "--sample-blocks"])
        .results(&results)
        .run_ok(dir.path());
    let s = at(&v, "/block_sample");
    assert!((f64_at(s, "/rate") - 1.0 / 256.0).abs() < 1e-6);
    let (refs, sampled) = (u64_at(s, "/references"), u64_at(s, "/sampled"));
    assert!(refs > 100_000, "{refs}");
    let share = sampled as f64 / refs as f64;
    assert!((share * 256.0 - 1.0).abs() < 0.15, "{sampled} of {refs}");
    let out = run_in(
        dir.path(),
        [
            "cache-curve",
            results.to_str().unwrap(),
            "--json",
            "--policy",
            "lru",
        ],
    );
    out.expect_code(0);
    let curve: Value = serde_json::from_str(&out.stdout).unwrap();
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
    let out = run_in(
        dir.path(),
        [
            "users",
            "--version",
            "2007",
            "--mailbox-size",
            "2MiB",
            "--users",
            "10",
            "--databases",
            "2",
            "--duration",
            "30m",
            "--compress",
            "360",
            "--quiet",
            "--sample-blocks",
            "--db-path",
            db.to_str().unwrap(),
            "-o",
            users.to_str().unwrap(),
        ],
    );
    assert!(out.code == Some(0) || out.code == Some(3), "{}", out.stderr);
    for results in [&ex, &users] {
        let v = load_json(results);
        assert_eq!(at(&v, "/job/sample_blocks"), &Value::Bool(true));
        assert!(
            u64_at(&v, "/block_sample/sampled") > 0,
            "{}",
            results.display()
        );
        let out = run_in(
            dir.path(),
            ["cache-curve", results.to_str().unwrap(), "--json"],
        );
        out.expect_code(0);
        let curve: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(curve["points"].as_array().unwrap().len(), 20);
    }
}
