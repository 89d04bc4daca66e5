//! fio job files (`tests/fixtures/fio/`: an OLTP-like mix of clones reported as one group,
//! two jobs at once with two block sizes and a log, two phases one after the other by
//! `stonewall`, an application that thinks between I/Os, all sharing an included file of
//! options) converted by `storlab import-fio`,
//! run by storlab (`storlab run --fio`) and by fio alternately on the same files, twice each:
//! every fio job's IOPS and storlab's for it agree within 5 %. The jobs are paced (`rate_iops`,
//! or a think time long beside an I/O's latency), so the figures are the conversion's (clones,
//! mix, per-direction rates, paces by bytes, phases, think time), not this machine's speed. And the refusals: what cannot be converted is listed with
//! its file and line, exit 2, unless `--lenient`.

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
    for name in ["oltp.fio", "mixed.fio", "phases.fio", "think.fio"] {
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
