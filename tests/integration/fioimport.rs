//! fio job files (`tests/fixtures/fio/`: an OLTP-like mix of clones reported as one group, two jobs
//! at once with two block sizes and a log, two phases one after the other by `stonewall`, an
//! application that thinks between I/Os, reads with holes and backwards, a range of block sizes and
//! rwmixwrite with a rate per direction, all sharing an included file of options) converted by
//! `storlab import-fio`, run by storlab (`storlab run --fio`) and by fio alternately on the same
//! files, twice each: every fio job's IOPS and storlab's for it agree within 5 %. The jobs are
//! paced (`rate_iops`, or a think time long beside an I/O's latency), so the figures are the
//! conversion's (clones, mix, per-direction rates, paces by bytes, phases, think time, holes, size
//! ranges), not this machine's speed. And the refusals: what cannot be converted is listed with its
//! file and line, exit 2, unless `--lenient`.

use crate::harness::{load_json, run_in, scratch, skip, storlab};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio")
        .join(name)
}

/// fio's IOPS (reads and writes) of each job (or reporting group) of `file`, run in `dir`.
fn fio_iops(file: &Path, dir: &Path) -> BTreeMap<String, f64> {
    let out = Command::new("fio")
        .arg(file)
        .arg("--output-format=json")
        .env("STORLAB_FIO_DIR", dir)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "fio {}: {text}{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    let mut iops = BTreeMap::new();
    for j in json["jobs"].as_array().unwrap() {
        let v = j["read"]["iops"].as_f64().unwrap() + j["write"]["iops"].as_f64().unwrap();
        *iops
            .entry(j["jobname"].as_str().unwrap().to_string())
            .or_insert(0.0) += v;
    }
    iops
}

/// storlab's IOPS of each class (a fio job, or reporting group) of `file`, run in `dir`: from
/// the step it ran in when the job ran in phases.
fn storlab_iops(file: &Path, dir: &Path, round: usize) -> BTreeMap<String, f64> {
    let results = dir.join(format!("storlab-{round}.json"));
    let out = storlab(dir)
        .args(["run", "--fio"])
        .arg(file)
        .arg("-o")
        .arg(&results)
        .env("STORLAB_FIO_DIR", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "storlab run --fio {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let r = load_json(&results);
    let dir_iops =
        |c: &Value| c["read"]["iops"].as_f64().unwrap() + c["write"]["iops"].as_f64().unwrap();
    let mut iops = BTreeMap::new();
    match r["steps"].as_array() {
        Some(steps) => {
            for s in steps {
                for (name, c) in s["classes"].as_object().unwrap() {
                    if dir_iops(c) > 0.0 {
                        iops.insert(name.clone(), dir_iops(c));
                    }
                }
            }
        }
        None => {
            for (name, c) in r["classes"].as_object().unwrap() {
                iops.insert(name.clone(), dir_iops(c));
            }
        }
    }
    iops
}

#[test]
fn converted_fio_jobs_run_by_storlab_and_by_fio_agree_within_5_percent() {
    let test = "converted_fio_jobs_run_by_storlab_and_by_fio_agree_within_5_percent";
    if Command::new("fio").arg("--version").output().is_err() {
        skip(test, "fio is not installed (Debian: fio)");
        return;
    }
    let dir = scratch();
    for name in [
        "oltp.fio",
        "mixed.fio",
        "phases.fio",
        "think.fio",
        "shapes.fio",
    ] {
        let file = fixture(name);
        let mut ours: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let mut theirs: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        // storlab first: it creates the files, fio then writes into files storlab made.
        for round in 0..2 {
            for (k, v) in storlab_iops(&file, dir.path(), round) {
                ours.entry(k).or_default().push(v);
            }
            for (k, v) in fio_iops(&file, dir.path()) {
                theirs.entry(k).or_default().push(v);
            }
        }
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>(),
            "{name}: one storlab class per fio job"
        );
        for (job, f) in &theirs {
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let (s, f) = (mean(&ours[job]), mean(f));
            eprintln!("{name} {job}: storlab {s:.1} IOPS, fio {f:.1}");
            assert!(
                (s / f - 1.0).abs() <= 0.05,
                "{name} job {job}: storlab {s:.1} IOPS, fio {f:.1} ({:+.1} %)",
                (s / f - 1.0) * 100.0
            );
        }
    }
}

#[test]
fn what_cannot_be_converted_is_listed_with_its_line_and_left_out_only_when_lenient() {
    let dir = scratch();
    let file = dir.path().join("bad.fio");
    std::fs::write(
        &file,
        "; not all of it converts\n[global]\nioengine=windowsaio\nsize=1m\n\n[j]\nrw=randtrim\nbs=4k,8k\nthinktime_spin=100\niodepth=2\n",
    )
    .unwrap();
    let out = run_in(dir.path(), ["import-fio", "bad.fio"]);
    out.expect_code(2);
    for part in [
        "4 options of bad.fio storlab cannot convert",
        "bad.fio:3: ioengine=windowsaio",
        "bad.fio:7: rw=randtrim",
        "bad.fio:8: bs=4k,8k",
        "bad.fio:9: thinktime_spin=100",
        "--lenient",
    ] {
        assert!(out.stderr.contains(part), "{part}: {}", out.stderr);
    }
    // In file order.
    let at = |s: &str| out.stderr.find(s).unwrap();
    assert!(at("bad.fio:3") < at("bad.fio:7") && at("bad.fio:8") < at("bad.fio:9"));
    let lenient = run_in(dir.path(), ["import-fio", "bad.fio", "--lenient"]);
    lenient.expect_ok();
    assert!(
        lenient
            .stdout
            .contains("# left out (bad.fio:9): thinktime_spin=100"),
        "{}",
        lenient.stdout
    );
    assert!(
        lenient
            .stderr
            .contains("left out (bad.fio:3): ioengine=windowsaio")
    );
    // A job of the options that did convert: queue depth 2 on j's own file.
    assert!(
        lenient.stdout.contains("queue_depth = 2"),
        "{}",
        lenient.stdout
    );
    // Not a fio job file at all.
    std::fs::write(dir.path().join("none.fio"), "rw=read\n").unwrap();
    let none = run_in(dir.path(), ["import-fio", "none.fio"]);
    none.expect_code(2)
        .stderr_has(&["none.fio:1", "before any section"]);
    let missing = run_in(dir.path(), ["run", "--fio", "missing.fio"]);
    missing.expect_code(2).stderr_has(&["missing.fio"]);
}

/// The blocks (4 KiB) each I/O of a run touched, in the order issued, from its block sample.
fn sampled_blocks(path: &Path) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"STLBLKS1");
    let mut r: Vec<(u64, u64)> = bytes[8..]
        .chunks_exact(24)
        .map(|c| {
            let t = u64::from_le_bytes(c[0..8].try_into().unwrap());
            (t, u64::from_le_bytes(c[8..16].try_into().unwrap()))
        })
        .collect();
    r.sort_by_key(|x| x.0);
    r.into_iter().map(|x| x.1).collect()
}

#[test]
fn holes_and_backwards_reads_touch_the_offsets_fio_would() {
    let dir = scratch();
    // 16 blocks of 4 KiB, read once over (fio: size-bound, 16 I/Os).
    for (name, rw, want) in [
        (
            "holes",
            "read:4k",
            vec![0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14],
        ),
        (
            "back",
            "read:-8k",
            vec![0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
        ),
    ] {
        let file = dir.path().join(format!("{name}.fio"));
        std::fs::write(
            &file,
            format!("[global]\nioengine=psync\ndirect=1\nbs=4k\nsize=64k\nfilename={name}.dat\n[{name}]\nrw={rw}\n"),
        )
        .unwrap();
        let results = format!("{name}.json");
        let out = run_in(
            dir.path(),
            [
                "run",
                &format!("{name}.fio"),
                "--sample-blocks",
                "-o",
                &results,
            ],
        );
        out.expect_ok();
        assert_eq!(
            sampled_blocks(&dir.path().join(format!("{name}.blocks"))),
            want,
            "{name}: rw={rw}"
        );
        let r = load_json(&dir.path().join(&results));
        let gap = r["job"]["workers"][0]["access"][0]["gap_bytes"].as_i64();
        assert_eq!(gap, Some(if name == "back" { -8192 } else { 4096 }));
    }
}

#[test]
fn a_converted_job_runs_at_the_io_priorities_it_asks_for() {
    let test = "a_converted_job_runs_at_the_io_priorities_it_asks_for";
    // The probe: the kernel takes an I/O priority (ionice sets one the same way).
    let probe = Command::new("ionice").args(["-c2", "-n5", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        skip(
            test,
            "ionice -c2 -n5 fails or is missing: no I/O priorities here (util-linux)",
        );
        return;
    }
    let dir = scratch();
    std::fs::write(
        dir.path().join("prio.fio"),
        "[global]\nioengine=io_uring\ndirect=1\nbs=4k\nsize=1m\nfilename=prio.dat\nruntime=1\ntime_based\n\
         [p]\nrw=randread\niodepth=4\nprioclass=2\nprio=5\ncmdprio_percentage=50\ncmdprio_class=1\n\
         [s]\nioengine=io_uring\nrw=read\nprio=7\n",
    )
    .unwrap();
    let out = run_in(dir.path(), ["run", "prio.fio", "-o", "prio.json"]);
    out.expect_ok();
    let r = load_json(&dir.path().join("prio.json"));
    let w = &r["job"]["workers"];
    assert_eq!(
        w[0]["io_priority"],
        serde_json::json!({"class": 2, "level": 5})
    );
    assert_eq!(
        w[0]["io_priority_mix"],
        serde_json::json!({"share_pct": 50.0, "priority": {"class": 1, "level": 0}})
    );
    assert_eq!(
        w[1]["io_priority"],
        serde_json::json!({"class": 2, "level": 7})
    );
    for c in ["p", "s"] {
        let ops = r["classes"][c]["read"]["ops"].as_u64().unwrap();
        assert!(ops > 0, "{c} did no I/O: {}", out.stderr);
        assert_eq!(r["classes"][c]["read"]["errors"].as_u64(), Some(0));
    }
}

#[test]
fn a_start_delay_keeps_its_job_idle_until_then() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("late.fio"),
        "[global]\nioengine=psync\ndirect=1\nbs=4k\nsize=1m\nfilename=late.dat\nruntime=1\ntime_based\n\
         [early]\nrw=randread\n[late]\nrw=randread\nstartdelay=500ms\n",
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        ["run", "late.fio", "--interval", "250ms", "-o", "late.json"],
    );
    out.expect_ok();
    let r = load_json(&dir.path().join("late.json"));
    assert_eq!(
        r["job"]["workers"][1]["start_delay_ns"].as_u64(),
        Some(500_000_000)
    );
    let series = std::fs::read_to_string(dir.path().join("late.ndjson")).unwrap();
    let mut late_after = 0;
    for line in series.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["phase"] != "measure" {
            continue;
        }
        let ops = v["classes"]["late"]["read"]["ops"].as_u64().unwrap_or(0);
        if v["t_end_ms"].as_u64().unwrap() <= 500 {
            assert_eq!(ops, 0, "the late job did I/O before its delay: {line}");
        } else {
            late_after += ops;
        }
    }
    assert!(late_after > 0, "the late job never started");
}

#[test]
fn a_job_below_its_floor_ends_the_run_with_an_error_naming_it_and_its_rate() {
    let dir = scratch();
    // `slow` thinks 100 ms after each read: 10 reads a second against a floor of 50. `paced`
    // reads 200 a second against a floor of 20, and is not the one blamed.
    std::fs::write(
        dir.path().join("floor.fio"),
        "[global]\nioengine=psync\nbs=4k\nsize=1m\nfilename=floor.dat\nruntime=60\ntime_based\n\
         [slow]\nrw=randread\nthinktime=100000\nrate_iops_min=50\n\
         [paced]\nrw=randread\nrate_iops=200\nrate_iops_min=20\n",
    )
    .unwrap();
    let out = run_in(dir.path(), ["run", "floor.fio", "-o", "floor.json"]);
    out.expect_code(1).stdout_has(&[
        "worker `slow`: its rate fell to",
        "below its floor of 50 IOPS (min_iops)",
        "ending the run below 50 IOPS over any 1.00 s once settled",
    ]);
    let r = load_json(&dir.path().join("floor.json"));
    let workers = r["workers"].as_array().unwrap();
    let fatal = workers[0]["fatal"].as_str().unwrap();
    assert!(fatal.starts_with("its rate fell to "), "{fatal}");
    assert!(workers[1]["fatal"].is_null(), "{}", workers[1]);
    assert_eq!(
        r["job"]["workers"][0]["min_rate"]["iops"].as_f64(),
        Some(50.0)
    );
    // fio's settling time (2 s) and one cycle (1 s): the run ended after 3 s, not 60.
    let measured = r["phases"][1]["seconds"].as_f64().unwrap();
    assert!((3.0..50.0).contains(&measured), "{measured}");
    assert_eq!(r["phases"][1]["state"], "interrupted");
}
