//! Iometer configuration files (`tests/fixtures/iometer/`, written from Iometer's User's Guide
//! and the files it saves: two access specifications run one after the other with queue
//! depth cycling on two workers and two targets; an old 1998 file with CRLF line ends and
//! mixed-case keys cycling two alike workers; a file with a network worker) converted by
//! `storlab import` and run by `storlab run FILE --map ...` for a short while: the steps,
//! classes and target sizes are the `.icf`'s. The network worker is refused with its line
//! (exit 2) unless `--lenient`. And `storlab report --format iometer-csv` of runs and of the
//! fixtures, read by a reader of Iometer's results format (written from Iometer's public
//! sources: its header lines, access specifications, row kinds and columns) and equal to the
//! results files. (No results file Iometer wrote itself is here: those found published carry no
//! licence that lets them be redistributed, as tests/fixtures/corpus/PROVENANCE.md says of
//! Iometer's configuration files.)

use crate::harness::{load_json, run_in, scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/iometer")
        .join(name)
}

/// Runs the `.icf` `name` with `maps` (TARGET=FILE in the scratch directory) and `extra`
/// flags; returns the results.
fn run_icf(dir: &Path, name: &str, maps: &[(&str, &str)], extra: &[&str]) -> Value {
    let results = dir.join(format!("{name}.json"));
    let mut args: Vec<String> = vec!["run".into(), fixture(name).display().to_string()];
    for (t, f) in maps {
        args.push("--map".into());
        args.push(format!("{t}={}", dir.join(f).display()));
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("-o".into());
    args.push(results.display().to_string());
    let out = run_in(dir, &args);
    assert_eq!(out.code, Some(0), "storlab {args:?}: {}", out.stderr);
    load_json(&results)
}

/// Each step's classes that did I/O.
fn step_classes(r: &Value) -> Vec<Vec<String>> {
    r["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no steps: {r}"))
        .iter()
        .map(|s| {
            let mut names: Vec<String> = s["classes"]
                .as_object()
                .unwrap()
                .iter()
                .filter(|(_, c)| {
                    c["read"]["ops"].as_u64().unwrap_or(0) + c["write"]["ops"].as_u64().unwrap_or(0)
                        > 0
                })
                .map(|(n, _)| n.clone())
                .collect();
            names.sort();
            names
        })
        .collect()
}

#[test]
fn studies_icf_imports_and_runs_each_specification_at_each_queue_depth() {
    let dir = scratch();
    let maps = [("C:", "c.dat"), ("D:", "d.dat")];
    // The job `storlab import` writes names the .icf's lines.
    let mut args = vec![
        "import".to_string(),
        fixture("studies.icf").display().to_string(),
    ];
    for (t, f) in maps {
        args.extend([
            "--map".into(),
            format!("{t}={}", dir.path().join(f).display()),
        ]);
    }
    let out = run_in(dir.path(), &args);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    out.stdout_has(&[
        "studies.icf:26: Test Type CYCLE_OUTSTANDING_IOS",
        "queue_depth = [1, 2]",
        "group = [1, 2]",
        "class = \"File Server\"",
    ]);
    let r = run_icf(dir.path(), "studies.icf", &maps, &["--duration", "300ms"]);
    let steps = step_classes(&r);
    assert_eq!(steps.len(), 4, "{steps:?}");
    for (i, s) in steps.iter().enumerate() {
        let want = if i < 2 { "Database 8K" } else { "File Server" };
        assert_eq!(s, &vec![want.to_string()], "step {i}: {steps:?}");
    }
    // Disk maximum size 8192 sectors; worker 2 starts at sector 2048 of D:.
    assert_eq!(
        std::fs::metadata(dir.path().join("c.dat")).unwrap().len(),
        4 << 20
    );
    assert_eq!(
        std::fs::metadata(dir.path().join("d.dat")).unwrap().len(),
        5 << 20
    );
}

#[test]
fn an_old_crlf_file_cycles_its_workers() {
    let dir = scratch();
    let r = run_icf(
        dir.path(),
        "old-1998.icf",
        &[("E:", "e.dat"), ("F:", "f.dat")],
        &["--duration", "300ms"],
    );
    let steps = step_classes(&r);
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert!(
        steps
            .iter()
            .all(|s| s == &vec!["64K Sequential Read".to_string()])
    );
}

#[test]
fn a_network_worker_is_refused_with_its_line_unless_lenient() {
    let dir = scratch();
    let icf = fixture("network.icf").display().to_string();
    let out = run_in(dir.path(), ["import", icf.as_str()]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    out.stderr_has(&["network.icf:52: Worker type NETWORK,TCP", "--lenient"]);
    let out = run_in(dir.path(), ["import", icf.as_str(), "--lenient"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    out.stdout_has(&["# left out (", "network.icf:52)", "queue_depth = 8"]);
}

/// Iometer 1.1.0's results columns, as its `ManagerList::SaveResults` writes them (Iometer's
/// public sources); 2008.06.18 and 2006.07.27 write `MBps`, `Read MBps`, `Write MBps` in place
/// of the six binary and decimal columns and no latency bins.
const IOMETER_1_1_0: &str = "Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read IOps,Write IOps,MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),MBps (Decimal),Read MBps (Decimal),Write MBps (Decimal),Transactions per Second,Connections per Second,Average Response Time,Average Read Response Time,Average Write Response Time,Average Transaction Time,Average Connection Time,Maximum Response Time,Maximum Read Response Time,Maximum Write Response Time,Maximum Transaction Time,Maximum Connection Time,Errors,Read Errors,Write Errors,Bytes Read,Bytes Written,Read I/Os,Write I/Os,Connections,Transactions per Connection,Total Raw Read Response Time,Total Raw Write Response Time,Total Raw Transaction Time,Total Raw Connection Time,Maximum Raw Read Response Time,Maximum Raw Write Response Time,Maximum Raw Transaction Time,Maximum Raw Connection Time,Total Raw Run Time,Starting Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,% Privileged Time,% DPC Time,% Interrupt Time,Processor Speed,Interrupts per Second,CPU Effectiveness,Packets/Second,Packet Errors,Segments Retransmitted/Second,0 to 50 uS,50 to 100 uS,100 to 200 uS,200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,5 to 10 mS,10 to 15 mS,15 to 20 mS,20 to 30 mS,30 to 50 mS,50 to 100 mS,100 to 200 mS,200 to 500 mS,0.5 to 1 S,1 to 2 s,2 to 4.7 s,4.7 to 5 s,5 to 10 s, >= 10 s";

/// An Iometer results file read as Iometer's format says: the header lines, then tests, each
/// its access specifications, its results (heading and rows) and its time stamp, then
/// `'End Test`.
#[derive(Debug)]
struct IometerFile {
    test_type: String,
    version: String,
    tests: Vec<IometerTest>,
}

#[derive(Debug)]
struct IometerTest {
    /// Each specification: its name and its lines (size, % of size, % reads, % random, delay,
    /// burst, align, reply).
    specs: Vec<(String, Vec<Vec<u64>>)>,
    columns: Vec<String>,
    /// Each row by its heading.
    rows: Vec<std::collections::BTreeMap<String, String>>,
}

/// Whether `s` is an Iometer time stamp, `YYYY-MM-DD HH:MM:SS:mmm`.
fn is_stamp(s: &str) -> bool {
    let digits = |r: std::ops::Range<usize>| {
        s.get(r)
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
    };
    s.len() == 23
        && [4, 7].iter().all(|&i| &s[i..i + 1] == "-")
        && &s[10..11] == " "
        && [13, 16, 19].iter().all(|&i| &s[i..i + 1] == ":")
        && [0..4, 5..7, 8..10, 11..13, 14..16, 17..19, 20..23]
            .into_iter()
            .all(digits)
}

impl IometerFile {
    /// A file of one run (what `storlab report --format iometer-csv` writes).
    fn parse(text: &str) -> IometerFile {
        let mut runs = IometerFile::parse_runs(text);
        assert_eq!(runs.len(), 1, "one run in:\n{text}");
        runs.remove(0)
    }

    /// Every run of a file: Iometer appends each run to its `/r` file, header and all.
    fn parse_runs(text: &str) -> Vec<IometerFile> {
        let mut lines = text.lines().peekable();
        let mut runs = Vec::new();
        while lines.peek().is_some() {
            runs.push(IometerFile::parse_run(&mut lines));
        }
        runs
    }

    fn parse_run(lines: &mut std::iter::Peekable<std::str::Lines<'_>>) -> IometerFile {
        let mut next = |what: &str| lines.next().unwrap_or_else(|| panic!("no {what}"));
        assert_eq!(next("header"), "'Test Type,Test Description");
        let test_type = next("test type").split(',').next().unwrap().to_string();
        assert_eq!(next("version line"), "'Version");
        let version = next("version").to_string();
        assert_eq!(next("time stamp line"), "'Time Stamp");
        assert!(is_stamp(next("time stamp")));
        let mut tests = Vec::new();
        loop {
            match next("a test or 'End Test") {
                "'End Test" => break,
                "'Access specifications" => {}
                other => panic!("expected 'Access specifications, got {other}"),
            }
            let mut specs = Vec::new();
            loop {
                match next("a specification") {
                    "'End access specifications" => break,
                    "'Access specification name,default assignment" => {
                        let name = next("its name");
                        let (name, assignment) = name.rsplit_once(',').unwrap();
                        assert!(["0", "1", "2", "3"].contains(&assignment), "{name}");
                        assert_eq!(
                            next("its heading"),
                            "'size,% of size,% reads,% random,delay,burst,align,reply"
                        );
                        specs.push((name.to_string(), Vec::new()));
                    }
                    line => {
                        let fields: Vec<u64> = (line.trim_end_matches(',').split(','))
                            .map(|f| f.parse().unwrap_or_else(|_| panic!("{line}")))
                            .collect();
                        assert_eq!(fields.len(), 8, "{line}");
                        specs.last_mut().unwrap().1.push(fields);
                    }
                }
            }
            assert_eq!(next("'Results"), "'Results");
            let heading = next("the heading");
            let columns: Vec<String> = heading
                .strip_prefix('\'')
                .unwrap()
                .split(',')
                .map(String::from)
                .collect();
            let mut rows = Vec::new();
            loop {
                let line = next("a row or 'Time Stamp");
                if line == "'Time Stamp" {
                    assert!(is_stamp(next("its time stamp")));
                    break;
                }
                let cells = cells(line);
                let kind = cells[0].as_str();
                assert!(
                    ["ALL", "MANAGER", "PROCESSOR", "WORKER", "DISK"].contains(&kind),
                    "{line}"
                );
                if kind != "PROCESSOR" {
                    assert_eq!(cells.len(), columns.len(), "{line}");
                }
                rows.push(columns.iter().cloned().zip(cells).collect());
            }
            tests.push(IometerTest {
                specs,
                columns,
                rows,
            });
        }
        IometerFile {
            test_type,
            version,
            tests,
        }
    }
}

/// `storlab report RESULTS --format iometer-csv [--iometer-layout LAYOUT]`, read.
fn iometer_csv(dir: &Path, results: &Path, layout: &str) -> IometerFile {
    let out = run_in(
        dir,
        [
            "report",
            results.to_str().unwrap(),
            "--format",
            "iometer-csv",
            "--iometer-layout",
            layout,
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    IometerFile::parse(&out.stdout)
}

/// A CSV line's cells (quoted cells may hold commas and doubled quotes).
fn cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// A row's figures are a `ClassSummary` of the results file's: counts exactly, rates and
/// times to Iometer's six decimals.
fn check_row(row: &std::collections::BTreeMap<String, String>, c: &Value, seconds: f64) {
    let six = |v: f64| format!("{v:.6}");
    let get = |k: &str| {
        row.get(k)
            .unwrap_or_else(|| panic!("no {k}: {row:?}"))
            .as_str()
    };
    let r = |k: &str| c["read"][k].as_f64().unwrap();
    let w = |k: &str| c["write"][k].as_f64().unwrap();
    let ms = |d: &str, k: &str| c[d]["latency_ns"][k].as_f64().unwrap() / 1e6;
    assert_eq!(get("IOps"), six(r("iops") + w("iops")), "{row:?}");
    assert_eq!(
        (get("Read IOps"), get("Write IOps")),
        (six(r("iops")).as_str(), six(w("iops")).as_str())
    );
    let mib = (r("bytes_per_s") + w("bytes_per_s")) / 1_048_576.0;
    match row.get("MiBps (Binary)") {
        Some(v) => {
            assert_eq!(v, &six(mib));
            assert_eq!(
                get("MBps (Decimal)"),
                six((r("bytes_per_s") + w("bytes_per_s")) / 1e6)
            );
        }
        None => assert_eq!(
            get("MBps"),
            six(mib),
            "MBps are binary megabytes in 2008.06.18"
        ),
    }
    assert_eq!(
        get("Transactions per Second"),
        get("IOps"),
        "a disk transaction is one I/O"
    );
    assert_eq!(get("Average Read Response Time"), six(ms("read", "mean")));
    assert_eq!(get("Maximum Write Response Time"), six(ms("write", "max")));
    assert_eq!(get("Bytes Read"), r("bytes").to_string());
    assert_eq!(get("Bytes Written"), w("bytes").to_string());
    assert_eq!(get("Read I/Os"), r("ops").to_string());
    assert_eq!(get("Write I/Os"), w("ops").to_string());
    assert_eq!(get("Errors"), (r("errors") + w("errors")).to_string());
    assert_eq!(get("Transactions per Connection"), "-1");
    if row["Target Type"] != "ALL" {
        // Raw times in ticks of Processor Speed (10^9 a second: nanoseconds).
        let sum = |d: &str| {
            c[d]["histogram"]["sum_ns"]
                .as_str()
                .unwrap_or("0")
                .to_string()
        };
        assert_eq!(get("Total Raw Read Response Time"), sum("read"));
        assert_eq!(get("Total Raw Write Response Time"), sum("write"));
        assert_eq!(
            get("Total Raw Run Time"),
            ((seconds * 1e9).round() as u64).to_string()
        );
    }
    if row.contains_key("0 to 50 uS") {
        let bins: u64 = row
            .iter()
            .filter(|(k, _)| k.ends_with(" S") || k.ends_with(" s") || k.ends_with("S"))
            .filter(|(k, _)| k.contains(" to ") || k.contains(">="))
            .map(|(_, v)| v.parse::<u64>().unwrap())
            .sum();
        assert_eq!(
            bins as f64,
            r("ops") + w("ops"),
            "every I/O is in a latency bin: {row:?}"
        );
    }
}

/// The fixtures' results as Iometer 1.1.0's and 2008.06.18's files, read with a reader of
/// Iometer's format: every row kind with its columns, each test's specifications, and every
/// figure equal to the results file's (counts exactly, rates and times to six decimals).
#[test]
fn iometer_results_of_the_fixtures_read_as_iometers_and_equal_the_results() {
    let dir = scratch();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for layout in ["1.1.0", "2008.06.18", "2006.07.27"] {
        let heading: String = if layout == "1.1.0" {
            IOMETER_1_1_0.into()
        } else {
            let old = IOMETER_1_1_0.replace("MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),MBps (Decimal),Read MBps (Decimal),Write MBps (Decimal)", "MBps,Read MBps,Write MBps");
            old[..old.find(",0 to 50 uS").unwrap()].to_string()
        };
        for name in ["plain", "exchange", "steps", "groups"] {
            let path = fixtures.join(format!("{name}.json"));
            let r = load_json(&path);
            let f = iometer_csv(dir.path(), &path, layout);
            assert_eq!(f.version, layout);
            let steps = r["steps"].as_array();
            assert_eq!(
                f.tests.len(),
                steps.map_or(1, Vec::len),
                "{name}: a test per step"
            );
            for (i, t) in f.tests.iter().enumerate() {
                assert_eq!(t.columns.join(","), heading, "{name} {layout}");
                let (totals, workers, ms) = match steps {
                    Some(s) => (
                        &s[i]["totals"],
                        s[i]["workers"].as_array(),
                        s[i]["measured_ms"].as_f64().unwrap(),
                    ),
                    None => (
                        &r["totals"],
                        r["workers"].as_array(),
                        r["measured_ms"].as_f64().unwrap(),
                    ),
                };
                let kinds: Vec<&str> = t.rows.iter().map(|r| r["Target Type"].as_str()).collect();
                assert_eq!(&kinds[..2], ["ALL", "MANAGER"], "{name}");
                for row in &t.rows[..2] {
                    check_row(row, totals, ms / 1e3);
                }
                assert_eq!(
                    t.rows[1]["# Managers"], "",
                    "a MANAGER row's # Managers is empty"
                );
                let worker_rows: Vec<_> = t
                    .rows
                    .iter()
                    .filter(|r| r["Target Type"] == "WORKER")
                    .collect();
                if let Some(workers) = workers {
                    assert_eq!(worker_rows.len(), workers.len(), "{name}");
                    for (row, w) in worker_rows.iter().zip(workers) {
                        assert_eq!(row["Target Name"], w["name"].as_str().unwrap());
                        check_row(row, &w["totals"], ms / 1e3);
                        // Its own specification: the classes it ran, each a spec's part.
                        let spec = &row["Access Specification Name"];
                        let classes: Vec<&String> =
                            w["classes"].as_object().unwrap().keys().collect();
                        assert!(
                            classes.iter().all(|c| spec.contains(c.as_str())),
                            "{spec} {classes:?}"
                        );
                        assert!(
                            t.specs.iter().any(|s| &s.0 == spec),
                            "{spec} in {:?}",
                            t.specs
                        );
                    }
                }
                for (_, lines) in &t.specs {
                    assert_eq!(
                        lines.iter().map(|l| l[1]).sum::<u64>(),
                        100,
                        "{name}: % of size"
                    );
                }
            }
            if name == "steps" {
                assert_eq!(f.test_type, "0");
            }
        }
    }
}

#[test]
fn iometer_csv_rows_equal_the_results_file() {
    let dir = scratch();
    // One test (no steps): ALL, MANAGER, a PROCESSOR row per CPU and a WORKER row (and its
    // DISK rows) per worker.
    let r = run_icf(
        dir.path(),
        "network.icf",
        &[("PHYSICALDRIVE:1", "p.dat")],
        &["--lenient", "--duration", "300ms"],
    );
    let f = iometer_csv(dir.path(), &dir.path().join("network.icf.json"), "1.1.0");
    let t = &f.tests[0];
    let secs = r["measured_ms"].as_f64().unwrap() / 1e3;
    let of = |kind: &str| {
        t.rows
            .iter()
            .filter(|r| r["Target Type"] == kind)
            .collect::<Vec<_>>()
    };
    check_row(of("ALL")[0], &r["totals"], secs);
    assert_eq!(of("ALL")[0]["Access Specification Name"], "4K Random Write");
    assert_eq!(
        of("PROCESSOR").len() as u64,
        r["host"]["cpus"].as_u64().unwrap()
    );
    let workers = r["workers"].as_array().unwrap();
    for (row, w) in of("WORKER").iter().zip(workers) {
        assert_eq!(row["Target Name"], w["name"].as_str().unwrap());
        assert_eq!(row["Queue Depth"], "8");
        check_row(row, &w["totals"], secs);
    }
    assert_eq!(of("DISK").len(), workers.len(), "one target each");
    // A sequence: one test per step, each with its own workers.
    let r = run_icf(
        dir.path(),
        "old-1998.icf",
        &[("E:", "e.dat"), ("F:", "f.dat")],
        &["--duration", "300ms"],
    );
    let f = iometer_csv(dir.path(), &dir.path().join("old-1998.icf.json"), "1.1.0");
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(f.tests.len(), steps.len());
    for (t, s) in f.tests.iter().zip(steps) {
        let secs = s["measured_ms"].as_f64().unwrap() / 1e3;
        check_row(&t.rows[0], &s["totals"], secs);
        let workers = s["workers"].as_array().unwrap();
        let rows: Vec<_> = t
            .rows
            .iter()
            .filter(|r| r["Target Type"] == "WORKER")
            .collect();
        assert_eq!(rows.len(), workers.len(), "the step's own workers");
        for (row, w) in rows.iter().zip(workers) {
            check_row(row, &w["totals"], secs);
        }
    }
}
