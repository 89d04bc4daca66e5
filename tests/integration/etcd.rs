//! `storlab etcd`: the check passes on a scratch directory with limits no machine misses, and
//! its JSON section, console summary and HTML report say the same numbers (the sync time's
//! 99th percentile, the rate); a job file's `[etcd]` section runs through `storlab run` and two
//! checks compare; on an ext4 filesystem on a loop device whose writes are throttled to 20 a
//! second, the rate rule fails with exit 3, the rule named with its measured value; the dry run
//! says what would run and creates nothing.

use crate::exchange::devices::{BlkioCgroup, LoopFs, blkio_skip_reason, dev_number};
use crate::harness::{array_at, f64_at, load_json, run_in, scratch, skip, u64_at, write_job};
use crate::views::checks::{Kind, check_views};
use storlab::units::{format_ns, format_rate};

#[test]
fn the_check_passes_on_a_scratch_directory_and_every_view_says_the_same() {
    let dir = scratch();
    let wal = dir.path().join("wal");
    std::fs::create_dir(&wal).unwrap();
    // 1 MiB of 2300-byte writes: 455 writes and syncs. Limits no machine misses, however
    // loaded: a sync may take up to 10 s, one a second is enough.
    let args = [
        "etcd",
        "--directory",
        wal.to_str().unwrap(),
        "--file-size",
        "1MiB",
        "--duration",
        "60s",
        "--sync-p99",
        "10s",
        "--min-rate",
        "1",
    ];
    let r = check_views(dir.path(), &args, Kind::Plain);
    let e = r.etcd.as_ref().expect("an etcd section");
    assert_eq!(e.planned_writes, (1 << 20) / 2300);
    assert_eq!((e.writes, e.syncs), (e.planned_writes, e.planned_writes));
    let flush = &r.classes["wal"].flush;
    assert_eq!(e.sync_latency_ns, flush.latency_ns);
    assert_eq!(e.syncs_per_s, flush.iops);
    assert_eq!(
        e.sync_histogram.iter().map(|b| b.count).sum::<u64>(),
        e.syncs
    );
    // The file was preallocated, never filled with data before the run.
    assert_eq!(r.targets[0].prepare.written_bytes, 0);
    let verdict = r.verdict.as_ref().expect("a verdict");
    assert!(verdict.passed(), "{verdict:?}");
    let p99 = verdict
        .rules
        .iter()
        .find(|x| x.rule.contains("99th"))
        .unwrap();
    assert_eq!(p99.measured, e.sync_latency_ns.p99 as f64 / 1e6);
    let rate = verdict
        .rules
        .iter()
        .find(|x| x.rule.contains("per second"))
        .unwrap();
    assert_eq!(rate.measured, e.syncs_per_s);
    // The section's figures, as the console and the HTML report print them.
    let results = dir.path().join("views.json");
    let console = run_in(dir.path(), ["report", results.to_str().unwrap()]);
    let html = std::fs::read_to_string(dir.path().join("views.html")).unwrap();
    for text in [
        format!("p99 {}", format_ns(e.sync_latency_ns.p99 as f64)),
        format!("p50 {}", format_ns(e.sync_latency_ns.p50 as f64)),
        format!("{}/s (at least 1/s required)", format_rate(e.syncs_per_s)),
    ] {
        assert!(
            console.stdout.contains(&text),
            "console: no `{text}`\n{}",
            console.stdout
        );
        assert!(html.contains(&text), "HTML: no `{text}`");
    }
    assert!(
        html.contains("data-chart=\"etcd-sync\""),
        "the histogram chart"
    );

    // The same check from a job file's [etcd] section, through `storlab run`, and the two
    // compared.
    let job = write_job(
        dir.path(),
        "etcd.toml",
        &format!(
            "[etcd]\ndirectory = \"{}\"\nfile_size = \"100KiB\"\nsync_p99 = \"10s\"\nmin_rate = 1\n",
            wal.display()
        ),
    );
    let second = dir.path().join("second.json");
    run_in(
        dir.path(),
        [
            "run",
            job.to_str().unwrap(),
            "-q",
            "-o",
            second.to_str().unwrap(),
        ],
    )
    .expect_ok();
    let v = load_json(&second);
    assert_eq!(u64_at(&v, "/etcd/syncs"), (100 << 10) / 2300);
    assert_eq!(v["invocation"]["source"]["kind"], "file");
    run_in(
        dir.path(),
        [
            "compare",
            results.to_str().unwrap(),
            second.to_str().unwrap(),
        ],
    )
    .expect_ok()
    .stdout_has(&["totals flush", "p99"]);
}

#[test]
fn the_dry_run_says_what_would_run_and_creates_nothing() {
    let dir = scratch();
    let out = run_in(
        dir.path(),
        ["etcd", "--preset", "etcd-openshift", "--heavy", "--dry-run"],
    );
    out.expect_ok().stdout_has(&[
        "dry run of the preset etcd-openshift",
        "22 MiB log file written once from its start in 2883 writes of 8000 bytes",
        "at least 500 synced writes/s (a heavily loaded cluster)",
        "99th percentile of fdatasync time at most 10.0 ms",
        "storlab-scratch/etcd/etcd-wal.storlab",
        "created and preallocated, not written (22 MiB)",
        "fdatasync after every write",
    ]);
    assert!(!dir.path().join("storlab-scratch").exists());
    let out = run_in(
        dir.path(),
        ["wal-sync", "--dry-run", "--writes-per-sync", "1,4"],
    );
    out.expect_ok().stdout_has(&[
        "PostgreSQL's WAL sync methods compared",
        "open_datasync ×1: 1 write per operation, the file opened with O_DSYNC, through the page cache",
        "open_sync +O_DIRECT ×4: 4 writes per operation, the file opened with O_SYNC, O_DIRECT",
        "fdatasync ×4: 4 writes per operation, fdatasync after the writes",
        "fsync +O_DIRECT ×1",
        "write only ×1: 1 write per operation, never synced",
        "17 methods, each measured for 2 s (34 s in all)",
    ]);
    assert!(!dir.path().join("storlab-scratch").exists());
    // Refused input: exit 2, the flag named.
    run_in(dir.path(), ["etcd", "--write-size", "0"])
        .expect_code(2)
        .stderr_has(&["--write-size"]);
    run_in(dir.path(), ["wal-sync", "--methods", "fsync_writethrough"])
        .expect_code(2)
        .stderr_has(&["--methods", "fsync_writethrough is Windows'"]);
}

#[test]
fn a_throttled_device_fails_the_rate_with_exit_3() {
    if let Some(reason) = blkio_skip_reason() {
        return skip("a_throttled_device_fails_the_rate_with_exit_3", &reason);
    }
    let dir = scratch();
    let fs = LoopFs::create(dir.path(), "etcd", 64, &[], &[]).expect("filesystem");
    // 20 writes a second reach the device: every fdatasync writes its data there (and the
    // journal's commit), so fewer than 20 syncs a second complete, under etcd's 50.
    let (major, minor) = dev_number(&fs.device);
    let limit = format!("{major}:{minor} 20");
    let cgroup = BlkioCgroup::create(
        "etcd",
        &[
            ("blkio.throttle.write_iops_device", limit.clone()),
            ("blkio.throttle.read_iops_device", limit),
        ],
    )
    .expect("cgroup");
    let results = dir.path().join("slow.json");
    let args = [
        "etcd",
        "--directory",
        fs.mount_point.to_str().unwrap(),
        "--file-size",
        "1MiB",
        "--duration",
        "3s",
        "-o",
        results.to_str().unwrap(),
    ];
    let out = cgroup.run(dir.path(), &args);
    let v = load_json(&results);
    assert_eq!(out.code, Some(3), "{}\n{}", out.stdout, out.stderr);
    let rule = array_at(&v, "/verdict/rules")
        .iter()
        .find(|r| r["rule"] == "synced writes per second")
        .expect("the rate rule");
    assert_eq!(rule["pass"], false);
    let measured = rule["measured"].as_f64().unwrap();
    assert!(measured < 50.0, "{measured}");
    assert_eq!(measured, f64_at(&v, "/etcd/syncs_per_s"));
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("synced writes per second"))
        .unwrap_or_else(|| panic!("the rule is named:\n{}", out.stdout));
    assert!(line.trim_start().starts_with("FAIL"), "{line}");
    assert!(
        line.contains(&format!("{} writes/s", format_rate(measured))),
        "{line}"
    );
    assert!(out.stdout.contains("RESULT: FAIL"), "{}", out.stdout);
}
