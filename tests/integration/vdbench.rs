//! vdbench parameter files written from vdbench's public description, run directly by
//! `storlab run FILE` for a second a step over small files: two storage definitions (one a
//! Windows physical drive placed by `--map`), two workloads with a transfer-size distribution
//! and skews, a `forxfersize` cycle and an open-loop `iorate`, comments and a continued line;
//! then `iorate=curve` and two run definitions one after another. And the refusals: what
//! cannot be converted is listed with its file and line, exit 2, unless `--lenient`.

use crate::harness::{load_json, run_in, scratch};
use serde_json::Value;

const MIX: &str = "\
* An OLTP-like mix, as a vendor's proof of concept writes it
sd=default,openflags=o_direct,threads=4
sd=sd1,lun=a.dat,size=4m
sd=sd2,lun=\\\\.\\PhysicalDrive1,size=4m,
   threads=2
wd=oltp,sd=(sd1,sd2),xfersize=(4k,75,8k,25),rdpct=70,skew=70
wd=log,sd=sd1,xfersize=16k,rdpct=0,seekpct=seq,skew=30
rd=run1,wd=*,iorate=400,elapsed=60,interval=1,forxfersize=(4k,8k)
";

/// Every class's I/Os (reads and writes) in each step of the results at `path`.
fn ios_by_step(path: &std::path::Path) -> Vec<Vec<(String, u64)>> {
    let r = load_json(path);
    let classes = |c: &Value| -> Vec<(String, u64)> {
        c.as_object()
            .unwrap()
            .iter()
            .map(|(n, v)| {
                let ios = v["read"]["ops"].as_u64().unwrap_or(0)
                    + v["write"]["ops"].as_u64().unwrap_or(0);
                (n.clone(), ios)
            })
            .collect()
    };
    match r["steps"].as_array() {
        Some(steps) => steps.iter().map(|s| classes(&s["classes"])).collect(),
        None => vec![classes(&r["classes"])],
    }
}

#[test]
fn a_vdbench_file_runs_directly_with_its_luns_workloads_and_cycle() {
    let dir = scratch();
    std::fs::write(dir.path().join("mix.vdb"), MIX).unwrap();
    let b = dir.path().join("b.dat");
    let map = format!("\\\\.\\PhysicalDrive1={}", b.display());
    let out = run_in(
        dir.path(),
        [
            "run",
            "mix.vdb",
            "--map",
            &map,
            "--duration",
            "1s",
            "-o",
            "mix.json",
        ],
    );
    out.expect_ok();
    assert!(b.exists(), "the mapped drive's file was made");
    let steps = ios_by_step(&dir.path().join("mix.json"));
    assert_eq!(steps.len(), 2, "forxfersize=(4k,8k): two steps");
    for s in &steps {
        for wd in ["oltp", "log"] {
            let n = s.iter().find(|(c, _)| c == wd).map_or(0, |(_, n)| *n);
            assert!(n > 0, "{wd} ran in every step: {steps:?}");
        }
    }
    // The same file, converted: what ran.
    let imported = run_in(dir.path(), ["import", "mix.vdb", "--map", &map]);
    imported.expect_ok().stdout_has(&[
        "# mix.vdb:8: rd=run1",
        "block_size = [\"4 KiB\", \"8 KiB\"]",
        "queue_depth = 2",
    ]);
}

#[test]
fn iorate_curve_and_several_run_definitions_run_as_steps() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("curve.vdb"),
        "sd=sd1,lun=c.dat,size=2m,openflags=o_direct,threads=2\n\
         wd=rand,sd=sd1,xfersize=4k,rdpct=100\n\
         wd=seq,sd=sd1,xfersize=64k,rdpct=0,seekpct=0\n\
         rd=default,elapsed=10,interval=1\n\
         rd=reads,wd=rand,iorate=curve,curve=(50)\n",
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        ["run", "curve.vdb", "--duration", "1s", "-o", "curve.json"],
    );
    out.expect_ok();
    let r = load_json(&dir.path().join("curve.json"));
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "the maximum, then 50 % of it");
    std::fs::write(
        dir.path().join("two.vdb"),
        "sd=sd1,lun=c.dat,size=2m,openflags=o_direct\n\
         wd=rand,sd=sd1,xfersize=4k,rdpct=100\n\
         wd=seq,sd=sd1,xfersize=64k,rdpct=0,seekpct=0\n\
         rd=default,elapsed=10,interval=1,iorate=max\n\
         rd=fill,wd=seq\nrd=read,wd=rand\n",
    )
    .unwrap();
    run_in(
        dir.path(),
        ["run", "two.vdb", "--duration", "1s", "-o", "two.json"],
    )
    .expect_ok();
    let steps = ios_by_step(&dir.path().join("two.json"));
    assert_eq!(steps.len(), 2, "one run definition after the other");
    let ran = |s: &Vec<(String, u64)>, c: &str| s.iter().any(|(n, ios)| n == c && *ios > 0);
    assert!(
        ran(&steps[0], "seq") && !ran(&steps[0], "rand"),
        "{steps:?}"
    );
    assert!(
        ran(&steps[1], "rand") && !ran(&steps[1], "seq"),
        "{steps:?}"
    );
}

#[test]
fn what_a_vdbench_file_asks_that_storlab_cannot_do_is_refused_with_its_line() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("bad.vdb"),
        "hd=default,vdbench=/opt/vdbench,shell=ssh\nhd=host1,system=10.1.1.1\n\
         sd=sd1,lun=d.dat,size=1m,openflags=o_direct\n\
         wd=wd1,sd=sd1,rhpct=90\nrd=rd1,wd=wd1,iorate=max,elapsed=10\n",
    )
    .unwrap();
    let out = run_in(dir.path(), ["run", "bad.vdb", "--duration", "1s"]);
    out.expect_code(2).stderr_has(&[
        "2 options of bad.vdb storlab cannot convert",
        "bad.vdb:2: hd=host1",
        "docs/multihost.md",
        "bad.vdb:4: rhpct=90",
        "--lenient",
    ]);
    let lenient = run_in(dir.path(), ["import", "bad.vdb", "--lenient"]);
    lenient
        .expect_ok()
        .stdout_has(&["# left out (bad.vdb:4): rhpct=90"]);
    std::fs::write(dir.path().join("empty.vdb"), "* only\nsd=sd1,lun=/x\n").unwrap();
    run_in(dir.path(), ["import", "empty.vdb"])
        .expect_code(2)
        .stderr_has(&["empty.vdb", "no run definition"]);
}
