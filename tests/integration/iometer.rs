//! Iometer configuration files (`tests/fixtures/iometer/`, written from Iometer's User's Guide
//! and the files it saves: two access specifications run one after the other with queue
//! depth cycling on two workers and two targets; an old 1998 file with CRLF line ends and
//! mixed-case keys cycling two alike workers; a file with a network worker) converted by
//! `storlab import` and run by `storlab run FILE --map ...` for a short while: the steps,
//! classes and target sizes are the `.icf`'s. The network worker is refused with its line
//! (exit 2) unless `--lenient`. And `storlab report --format iometer-csv` of a run.

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

/// `storlab report RESULTS --format iometer-csv`: Iometer's header lines and columns, and
/// each row's figures equal to the results file's.
fn iometer_csv(dir: &Path, results: &Path) -> Vec<Vec<String>> {
    let out = run_in(
        dir,
        [
            "report",
            results.to_str().unwrap(),
            "--format",
            "iometer-csv",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.starts_with("'Test Description\n"),
        "{}",
        out.stdout
    );
    out.stdout_has(&["'Version\n", "'Time Stamp\n", "'Results\n'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read IOps,Write IOps,MBps (Binary)", "'End Test"]);
    out.stdout
        .lines()
        .filter(|l| {
            ["ALL,", "MANAGER,", "WORKER,"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(cells)
        .collect()
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

/// A row's figures against a `ClassSummary` of the results file.
fn check_row(row: &[String], c: &Value) {
    let f = |i: usize| {
        row[i]
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("{i}: {row:?}"))
    };
    let r = |k: &str| c["read"][k].as_f64().unwrap();
    let w = |k: &str| c["write"][k].as_f64().unwrap();
    assert_eq!(f(6), r("iops") + w("iops"), "IOps {row:?}");
    assert_eq!((f(7), f(8)), (r("iops"), w("iops")));
    assert_eq!(f(9), (r("bytes_per_s") + w("bytes_per_s")) / 1_048_576.0);
    assert_eq!(f(12), (r("bytes_per_s") + w("bytes_per_s")) / 1e6);
    assert_eq!(f(15), f(6), "a disk transaction is one I/O");
    assert_eq!(
        f(18),
        c["read"]["latency_ns"]["mean"].as_f64().unwrap() / 1e6
    );
    assert_eq!(
        f(24),
        c["write"]["latency_ns"]["max"].as_f64().unwrap() / 1e6
    );
    assert_eq!((f(30), f(31)), (r("bytes"), w("bytes")));
    assert_eq!((f(32), f(33)), (r("ops"), w("ops")));
    assert_eq!(f(27), r("errors") + w("errors"));
    assert!(f(6) > 0.0, "{row:?}");
}

#[test]
fn iometer_csv_rows_equal_the_results_file() {
    let dir = scratch();
    // One test (no steps): ALL, MANAGER and a WORKER row per worker.
    let r = run_icf(
        dir.path(),
        "network.icf",
        &[("PHYSICALDRIVE:1", "p.dat")],
        &["--lenient", "--duration", "300ms"],
    );
    let rows = iometer_csv(dir.path(), &dir.path().join("network.icf.json"));
    let workers = r["workers"].as_array().unwrap();
    assert_eq!(rows.len(), 2 + workers.len(), "{rows:?}");
    check_row(&rows[0], &r["totals"]);
    check_row(&rows[1], &r["totals"]);
    assert_eq!(rows[0][2], "4K Random Write");
    for (row, w) in rows[2..].iter().zip(workers) {
        assert_eq!(row[1], w["name"].as_str().unwrap());
        assert_eq!(row[47], "8", "queue depth");
        check_row(row, &w["totals"]);
    }
    // A sequence: one test per step.
    let r = run_icf(
        dir.path(),
        "old-1998.icf",
        &[("E:", "e.dat"), ("F:", "f.dat")],
        &["--duration", "300ms"],
    );
    let rows = iometer_csv(dir.path(), &dir.path().join("old-1998.icf.json"));
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * steps.len());
    for (pair, s) in rows.chunks(2).zip(steps) {
        assert_eq!(pair[0][2], s["label"].as_str().unwrap());
        check_row(&pair[0], &s["totals"]);
        check_row(&pair[1], &s["totals"]);
    }
}
