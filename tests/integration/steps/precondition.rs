//! Preconditioning: every byte of the target rewritten before measurement, none of it
//! counted in the results.

use super::{run_job, steps};
use crate::harness::{JobFile, MIB, array_at, at, f64_at, load_json, scratch, str_at, u64_at};
use serde_json::Value;
use std::time::Instant;

const BLOCK: usize = 64 << 10;

/// Runs a read-only job on a 16 MiB file (prepared by a first run), with `precondition`, and
/// checks every 64 KiB block of the file changed while the same job without preconditioning
/// changes none. Returns the results.
fn precondition_rewrites_every_block(precondition: &str) -> Value {
    let dir = scratch();
    let target = dir.path().join("p.dat");
    let job = |pre: &str| {
        let head = format!(
            r#"duration = "200ms"
interval = "100ms"
ramp = "0s"
{pre}"#
        );
        JobFile::on(&target, &head)
    };
    let plain = job("").write(dir.path(), "plain.toml");
    let pre = job(&format!("precondition = {precondition}")).write(dir.path(), "pre.toml");
    // Prepare (random data), then a control: the same read-only job leaves the file as it is.
    run_job(dir.path(), &plain, &dir.path().join("prepare.json"))
        .0
        .expect_ok();
    let before = std::fs::read(&target).unwrap();
    assert_eq!(before.len() as u64, 16 * MIB);
    run_job(dir.path(), &plain, &dir.path().join("control.json"))
        .0
        .expect_ok();
    assert!(
        std::fs::read(&target).unwrap() == before,
        "a read-only run without preconditioning changed the target"
    );

    let results = dir.path().join("pre.json");
    run_job(dir.path(), &pre, &results).0.expect_ok();
    let after = std::fs::read(&target).unwrap();
    assert_eq!(after.len(), before.len(), "the target keeps its size");
    let unchanged: Vec<usize> = before
        .chunks(BLOCK)
        .zip(after.chunks(BLOCK))
        .enumerate()
        .filter(|(_, (a, b))| a == b)
        .map(|(i, _)| i)
        .collect();
    assert!(
        unchanged.is_empty(),
        "{precondition}: {} of {} 64 KiB blocks were not rewritten, e.g. block {:?}",
        unchanged.len(),
        before.len() / BLOCK,
        &unchanged[..unchanged.len().min(8)]
    );

    let v = load_json(&results);
    assert_eq!(at(&v, "/precondition/complete"), &Value::Bool(true));
    assert!(f64_at(&v, "/precondition/seconds") > 0.0);
    assert!(f64_at(&v, "/precondition/mb_per_s") > 0.0);
    let phase = array_at(&v, "/phases")
        .iter()
        .find(|p| str_at(p, "/name") == "precondition")
        .unwrap_or_else(|| panic!("no precondition phase: {}", at(&v, "/phases")));
    assert_eq!(str_at(phase, "/state"), "completed");
    // Its writes are not part of the measurement, which is read only.
    assert_eq!(
        u64_at(&v, "/totals/write/ops"),
        0,
        "precondition writes in the totals"
    );
    assert!(u64_at(&v, "/totals/read/ops") > 0);
    assert_eq!(steps(&v).len(), 1);
    v
}

#[test]
fn precondition_random_pass_writes_every_byte() {
    let started = Instant::now();
    let v = precondition_rewrites_every_block(
        r#"{ passes = 1, pattern = "random", block_size = "64k" }"#,
    );
    assert_eq!(u64_at(&v, "/precondition/bytes_written"), 16 * MIB);
    assert_eq!(u64_at(&v, "/precondition/passes"), 1);
    assert_eq!(str_at(&v, "/precondition/pattern"), "random");
    assert_eq!(u64_at(&v, "/precondition/block_size_bytes"), 64 << 10);
    eprintln!("precondition_random: {:.1?}", started.elapsed());
}

#[test]
fn precondition_two_sequential_passes_write_every_byte_twice() {
    let started = Instant::now();
    // The block size defaults to 128 KiB.
    let v = precondition_rewrites_every_block(r#"{ passes = 2, pattern = "sequential" }"#);
    assert_eq!(u64_at(&v, "/precondition/bytes_written"), 32 * MIB);
    assert_eq!(u64_at(&v, "/precondition/passes"), 2);
    assert_eq!(str_at(&v, "/precondition/pattern"), "sequential");
    assert_eq!(u64_at(&v, "/precondition/block_size_bytes"), 128 << 10);
    eprintln!("precondition_sequential: {:.1?}", started.elapsed());
}
