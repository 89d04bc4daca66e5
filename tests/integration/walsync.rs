//! `storlab wal-sync`: every method (with and without O_DIRECT, at each number of writes per
//! sync) is listed with its numbers, or with why the filesystem refused it, and the fastest
//! is named, the same in the results file, the console summary and the HTML report.

use crate::harness::{load_json, run_in, scratch};
use storlab::units::{format_ns, format_rate};

#[test]
fn every_method_is_listed_with_its_numbers_and_the_fastest_is_named() {
    let dir = scratch();
    let wal = dir.path().join("pg_wal");
    std::fs::create_dir(&wal).unwrap();
    let results = dir.path().join("wal.json");
    let html = dir.path().join("wal.html");
    // 17 methods of 0.2 s each.
    let out = run_in(
        dir.path(),
        [
            "wal-sync",
            "--directory",
            wal.to_str().unwrap(),
            "--file-size",
            "1MiB",
            "--seconds-per-method",
            "200ms",
            "-q",
            "-o",
            results.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    out.expect_ok();
    let r = storlab::results::file::load(&results).expect("results");
    let w = r.wal_sync.as_ref().expect("a wal_sync section");
    assert_eq!(w.block_bytes, 8192);
    let names: Vec<(String, u32)> = w
        .methods
        .iter()
        .map(|m| (m.name(), m.writes_per_sync))
        .collect();
    for writes in [1, 2] {
        for method in ["open_datasync", "fdatasync", "fsync", "open_sync"] {
            for direct in ["", " +O_DIRECT"] {
                let name = format!("{method}{direct}");
                assert!(
                    names.contains(&(name.clone(), writes)),
                    "{name} ×{writes} missing: {names:?}"
                );
            }
        }
    }
    assert!(names.contains(&("write only".to_string(), 1)));
    assert_eq!(names.len(), 17);
    let console = run_in(dir.path(), ["report", results.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    let json = load_json(&results);
    for (i, m) in w.methods.iter().enumerate() {
        match &m.unavailable {
            Some(why) => {
                // Refused by this filesystem: said, with the reason, in every view.
                assert!(m.direct, "only O_DIRECT can be refused: {}", m.name());
                assert!(console.stdout.contains(why.as_str()), "{why}");
                assert_eq!(m.ops, 0);
            }
            None => {
                assert!(m.ops > 0, "{} ×{} did nothing", m.name(), m.writes_per_sync);
                assert_eq!(m.failed_ops, 0);
                assert!(m.latency_ns.mean > 0.0);
                assert!(m.latency_ns.p50 <= m.latency_ns.p99);
                let ops = format_rate(m.ops_per_s);
                let mean = format_ns(m.latency_ns.mean);
                let p99 = format_ns(m.latency_ns.p99 as f64);
                let line = console
                    .stdout
                    .lines()
                    .find(|l| {
                        // The method's name, then its writes per sync (columns as wide as
                        // their cells).
                        l.strip_prefix(m.name().as_str())
                            .and_then(|rest| rest.split_whitespace().next())
                            .is_some_and(|w| w == m.writes_per_sync.to_string())
                            && l.len() > m.name().len()
                            && l.as_bytes()[m.name().len()] == b' '
                    })
                    .unwrap_or_else(|| panic!("no row for {}:\n{}", m.name(), console.stdout));
                for cell in [&ops, &mean, &p99] {
                    assert!(line.contains(cell.as_str()), "`{cell}` not in `{line}`");
                    assert!(page.contains(&format!("<td>{cell}</td>")), "HTML: {cell}");
                }
                // The JSON's figure is the one shown.
                assert_eq!(
                    json["wal_sync"]["methods"][i]["ops_per_s"].as_f64(),
                    Some(m.ops_per_s)
                );
            }
        }
    }
    // The fastest sync method at each number of writes per sync: the one with the most
    // operations per second among those measured, named in every view.
    assert_eq!(w.fastest.len(), 2);
    for f in &w.fastest {
        let best = w
            .methods
            .iter()
            .filter(|m| {
                m.writes_per_sync == f.writes_per_sync
                    && m.unavailable.is_none()
                    && m.method != "write only"
            })
            .map(|m| m.ops_per_s)
            .fold(0.0, f64::max);
        assert_eq!(f.ops_per_s, best);
        let line = format!(
            "with {} write{} of 8 KiB per sync: {} ({} ops/s)",
            f.writes_per_sync,
            if f.writes_per_sync == 1 { "" } else { "s" },
            f.method,
            format_rate(f.ops_per_s)
        );
        assert!(console.stdout.contains(&line), "{line}\n{}", console.stdout);
        assert!(page.contains(&line), "HTML: {line}");
    }
    assert!(page.contains("data-chart=\"wal-sync-ops\""));
    // Each method was a class of its own, its syncs of the right kind counted.
    let fsync = &r.classes["fsync ×2"];
    assert!(fsync.flush.ops > 0 && fsync.write.ops >= 2 * fsync.flush.ops - 2);
    assert_eq!(r.classes["open_sync ×1"].write_durability, "o_sync");
    assert_eq!(r.classes["open_datasync ×1"].write_durability, "o_dsync");
    assert_eq!(r.classes["write only ×1"].flush.ops, 0);
}
