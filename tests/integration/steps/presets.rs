//! The built-in presets: listed with their sources, shown as job files that resolve, run with
//! their targets replaced, and each one run for real on small files.

use super::{ops, step_block_sizes, steps};
use crate::harness::{
    MIB, array_at, at, f64_at, load_json, run_in, scratch, str_at, u64_at, write_job,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;

const PRESETS: [&str; 14] = [
    "exchange-2007-iometer",
    "cna-database-mix",
    "hba-scaling",
    "exchange-heavy-20",
    "oltp-8k",
    "db-log",
    "data-warehouse",
    "backup",
    "file-server",
    "iometer-default",
    "iometer-database",
    "iometer-workstation",
    "iometer-web-server",
    "iometer-sweep",
];

#[test]
fn presets_lists_every_preset_with_its_source() {
    let dir = scratch();
    let out = run_in(dir.path(), ["presets"]);
    out.expect_ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    for name in PRESETS {
        let i = lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("`storlab presets` does not list {name}:\n{}", out.stdout));
        let source = lines
            .get(i + 1)
            .and_then(|l| l.trim().strip_prefix("source:"))
            .unwrap_or_else(|| panic!("{name} has no source line:\n{}", out.stdout));
        assert!(!source.trim().is_empty(), "{name}: empty source");
    }
}

#[test]
fn presets_show_prints_a_job_file_that_resolves() {
    let dir = scratch();
    let out = run_in(dir.path(), ["presets", "show", "oltp-8k"]);
    out.expect_ok();
    assert!(out.stdout.contains("# Source"), "{}", out.stdout);
    let job = write_job(dir.path(), "oltp.toml", &out.stdout);
    let dry = run_in(dir.path(), ["run", job.to_str().unwrap(), "--dry-run"]);
    dry.expect_ok();
    assert!(
        dry.stdout.contains("storlab-scratch/presets/oltp.dat"),
        "{}",
        dry.stdout
    );
    assert!(
        !dir.path().join("storlab-scratch").exists(),
        "--dry-run created the scratch directory"
    );
}

#[test]
fn presets_show_unknown_name_is_a_usage_error() {
    let dir = scratch();
    let out = run_in(dir.path(), ["presets", "show", "nope"]);
    out.expect_code(2).stderr_has(&["nope", "oltp-8k"]);
    let out = run_in(dir.path(), ["run", "--preset", "nope", "--dry-run"]);
    out.expect_code(2).stderr_has(&["nope"]);
}

#[test]
fn preset_targets_are_replaced_in_order_when_the_count_matches() {
    let dir = scratch();
    let paths: Vec<PathBuf> = (1..=8)
        .map(|i| dir.path().join(format!("lun{i}.dat")))
        .collect();
    let mut args = vec!["run", "--preset", "exchange-2007-iometer", "--dry-run"];
    for p in &paths {
        args.extend(["--target", p.to_str().unwrap()]);
    }
    let out = run_in(dir.path(), &args);
    out.expect_ok();
    let names = ["db1", "db2", "db3", "db4", "log1", "log2", "log3", "log4"];
    for (name, path) in names.iter().zip(&paths) {
        let line = format!("{name} = {}", path.display());
        assert!(
            out.stdout.contains(&line),
            "{name} keeps its name and gets {}:\n{}",
            path.display(),
            out.stdout
        );
    }
    assert!(!out.stdout.contains("storlab-scratch"), "{}", out.stdout);
    // Worker assignments stay: one database target per database worker.
    assert!(
        out.stdout.contains("one each on db1, db2, db3, db4"),
        "one database target per database worker:\n{}",
        out.stdout
    );
}

/// Runs a preset for about a second on 16 MiB files in a fresh working directory (the
/// presets use relative paths under storlab-scratch/) and returns its results.
fn run_preset(name: &str, extra: &[&str]) -> Value {
    let started = Instant::now();
    let dir = scratch();
    let results = dir.path().join(format!("{name}.json"));
    let mut args = vec![
        "run",
        "--preset",
        name,
        "--size",
        "16MiB",
        "--duration",
        "300ms",
        "--interval",
        "100ms",
        "--ramp",
        "0s",
        "-o",
        results.to_str().unwrap(),
    ];
    args.extend(extra);
    run_in(dir.path(), &args).expect_ok();
    let v = load_json(&results);
    assert_eq!(at(&v, "/interrupted"), &Value::Bool(false), "{name}");
    assert!(ops(&v, "/totals") > 0, "{name}: no I/O");
    assert_eq!(u64_at(&v, "/totals/read/errors"), 0, "{name}");
    assert_eq!(u64_at(&v, "/totals/write/errors"), 0, "{name}");
    for t in array_at(&v, "/targets") {
        let path = Path::new(str_at(t, "/path"));
        let full = dir.path().join(path);
        assert!(
            path.starts_with("storlab-scratch/presets") && full.is_file(),
            "{name}: target {} is not under the working directory's storlab-scratch/presets",
            path.display()
        );
        assert_eq!(u64_at(t, "/size_bytes"), 16 * MIB, "{name}: --size");
        assert_eq!(std::fs::metadata(&full).unwrap().len(), 16 * MIB, "{name}");
    }
    eprintln!("preset {name}: {:.1?}", started.elapsed());
    v
}

#[test]
fn preset_exchange_2007_iometer_runs() {
    let v = run_preset("exchange-2007-iometer", &[]);
    assert_eq!(steps(&v).len(), 1);
    assert_eq!(array_at(&steps(&v)[0], "/repetitions/runs").len(), 3);
    assert!(ops(&v, "/classes/database") > 0 && ops(&v, "/classes/log") > 0);
}

#[test]
fn preset_cna_database_mix_runs() {
    let v = run_preset("cna-database-mix", &[]);
    let blocks = step_block_sizes(&v);
    let want: Vec<f64> = (0..6).map(|i| (4096u64 << i) as f64).collect();
    assert_eq!(blocks, want);
    assert_eq!(array_at(&v, "/targets").len(), 12);
}

#[test]
fn preset_hba_scaling_runs() {
    let v = run_preset("hba-scaling", &[]);
    let steps = steps(&v);
    assert_eq!(steps.len(), 48);
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(
            f64_at(step, "/parameters/workers"),
            [1.0, 2.0, 4.0, 8.0][i / 12]
        );
        assert_eq!(
            f64_at(step, "/parameters/block_size"),
            (512u64 << (i % 12)) as f64
        );
        assert!(ops(step, "/totals") > 0, "step {i}: no I/O");
    }
}

#[test]
fn preset_exchange_heavy_20_runs() {
    let v = run_preset("exchange-heavy-20", &[]);
    assert_eq!(array_at(&v, "/targets").len(), 20);
    assert_eq!(array_at(&v, "/workers").len(), 20);
}

#[test]
fn preset_oltp_8k_runs() {
    let v = run_preset("oltp-8k", &[]);
    assert!(u64_at(&v, "/totals/read/ops") > 0 && u64_at(&v, "/totals/write/ops") > 0);
}

#[test]
fn preset_db_log_runs() {
    let v = run_preset("db-log", &[]);
    assert_eq!(u64_at(&v, "/totals/read/ops"), 0);
    assert!(u64_at(&v, "/totals/write/ops") > 0);
}

#[test]
fn preset_data_warehouse_runs() {
    let v = run_preset("data-warehouse", &[]);
    let blocks = step_block_sizes(&v);
    let want: Vec<f64> = (0..5).map(|i| ((64u64 << 10) << i) as f64).collect();
    assert_eq!(blocks, want, "64 KiB doubling to 1 MiB");
}

#[test]
fn preset_backup_runs() {
    let v = run_preset("backup", &[]);
    assert!(u64_at(&v, "/totals/read/ops") > 0);
    assert_eq!(u64_at(&v, "/totals/write/ops"), 0);
}

#[test]
fn preset_file_server_runs() {
    // 512-byte O_DIRECT I/O: runs as is where the filesystem's logical block size is 512.
    let v = run_preset("file-server", &[]);
    assert!(u64_at(&v, "/totals/read/ops") > 0 && u64_at(&v, "/totals/write/ops") > 0);
}
