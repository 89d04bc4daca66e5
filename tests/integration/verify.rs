//! Data verification (`--verify`): a clean run passes with every block checked and read back;
//! another process overwriting or moving blocks of the target while storlab runs is caught as
//! corruption or misdirection, with the offsets; lost, torn and misdirected writes made by a
//! faulty filesystem (the FUSE [`crate::faultfs::FaultFs`]) are told apart; a loop device is
//! verified once written; an Exchange run and a simulated-users run with `--verify` carry the
//! rule in their verdicts.

use crate::harness::{
    ExchangeArgs, MIB, Outcome, RunArgs, array_at, at, f64_at, load_json, report_html, run_in,
    scratch, skip, storlab, str_at, u64_at, users_args, write_job,
};
use serde_json::Value;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Runs `storlab run --verify` on `target` for 2 s of 4 KiB I/O at random, half of it writes
/// (which the reads then check), at queue depth `qd`, with `extra` flags; returns the outcome
/// and the results (null when it wrote none).
fn verify_run(dir: &Path, target: &Path, qd: &str, extra: &[&str]) -> (Outcome, Value) {
    let results = dir.join("verify.json");
    let out = RunArgs::target(target)
        .flags(&["--verify", "--bs", "4k", "--read", "50", "--random", "100"])
        .flags(&["--qd", qd, "--duration", "2s"])
        .flags(extra)
        .results(&results)
        .run(dir);
    let v = if results.exists() {
        load_json(&results)
    } else {
        Value::Null
    };
    (out, v)
}

fn kinds(v: &Value) -> Vec<String> {
    array_at(v, "/verify/first_errors")
        .iter()
        .map(|e| str_at(e, "/kind").to_string())
        .collect()
}

#[test]
fn a_read_back_stopped_by_sigint_is_interrupted_in_every_view_and_never_a_pass() {
    let dir = scratch();
    let target = dir.path().join("v.dat");
    let results = dir.path().join("stopped.json");
    // 200 writes at random over 16,384 blocks: about 200 ranges to read back, far more than
    // the 8 readers; SIGINT arrives once the first range is read (the test-only signal hook
    // sends the same signal a user's Ctrl-C does, at a point no timing decides).
    let args = RunArgs::target(&target)
        .flags(&["--verify", "--bs", "4k", "--read", "0", "--random", "100"])
        .flags(&["--size", "64MiB", "--rate", "200", "--duration", "1s"])
        .results(&results);
    let out = storlab(dir.path())
        .env("STORLAB_TEST_SIGNAL", "read-back")
        .args(args.args())
        .output()
        .unwrap();
    let out = Outcome::from_output(&out);
    out.expect_code(1);
    let v = load_json(&results);
    assert_eq!(
        str_at(&v, "/interrupted"),
        "interrupted by SIGINT (Ctrl-C) during read-back"
    );
    assert_eq!(str_at(&v, "/verify/read_back/state"), "interrupted");
    let checked = u64_at(&v, "/verify/read_back/blocks_checked");
    let unread = u64_at(&v, "/verify/read_back/blocks_unread");
    assert!(
        checked >= 1 && unread > 0,
        "{checked} checked, {unread} unread"
    );
    // Every block written is either checked or counted unchecked: none disappears (200
    // writes at random over 16,384 blocks rarely land twice on one; a few may still be in
    // flight as the measured window closes).
    let writes = u64_at(&v, "/totals/write/ops");
    assert!(
        (checked + unread) * 10 >= writes * 9 && checked + unread <= writes + 16,
        "{checked} + {unread} blocks for {writes} writes"
    );
    assert!(u64_at(&v, "/verify/blocks_unchecked") >= unread);
    assert_ne!(str_at(&v, "/verdict/result"), "PASS");
    let rule = array_at(&v, "/verdict/rules")
        .iter()
        .find(|r| str_at(r, "/rule") == "written blocks the read-back did not check")
        .expect("the rule of a read-back cut short");
    assert_eq!(f64_at(rule, "/measured"), unread as f64);
    // Every view says so, and none says PASS: the run's own summary, `storlab report` and
    // the HTML report.
    let report = run_in(dir.path(), ["report".as_ref(), results.as_os_str()]);
    report.expect_ok();
    let html = report_html(dir.path(), &results, &dir.path().join("stopped.html"));
    for (view, text) in [
        ("the run", out.stdout.as_str()),
        ("storlab report", report.stdout.as_str()),
        ("the HTML report", html.as_str()),
    ] {
        assert!(text.contains("INTERRUPTED"), "{view}: {text}");
        assert!(
            text.contains("written blocks never read back (not checked)"),
            "{view}: {text}"
        );
        assert!(
            !text.contains("RESULT: PASS") && !text.contains(">PASS<"),
            "{view}: {text}"
        );
    }
}

#[test]
fn a_clean_verified_run_checks_every_read_and_reads_back_every_write() {
    let dir = scratch();
    let target = dir.path().join("v.dat");
    let (out, v) = verify_run(
        dir.path(),
        &target,
        "8",
        &["--size", "8MiB", "--workers", "2"],
    );
    out.expect_ok();
    assert_eq!(u64_at(&v, "/verify/block_bytes"), 4096);
    let checked = u64_at(&v, "/verify/blocks_checked");
    let reads = u64_at(&v, "/totals/read/ops");
    assert!(
        checked >= reads,
        "every measured read is checked: {checked} < {reads}"
    );
    for k in ["corrupted", "misdirected", "lost", "torn"] {
        assert_eq!(u64_at(&v, &format!("/verify/{k}")), 0, "{k}");
    }
    assert_eq!(str_at(&v, "/verify/read_back/state"), "completed");
    // 8 MiB of 4 KiB blocks written at random for 2 s by 16 slots: the read-back checks every
    // block written. W random writes over 2048 blocks touch 2048 × (1 − (1 − 1/2048)^W) of
    // them on average; however many writes a loaded machine managed, the distinct blocks
    // stay within a few dozen of that, so 90% of it is a floor. At most W blocks, plus the
    // 16 I/Os still in flight when the window closed, which the measured count leaves out.
    let back = u64_at(&v, "/verify/read_back/blocks_checked");
    let writes = u64_at(&v, "/totals/write/ops");
    let expected = 2048.0 * (1.0 - (1.0 - 1.0 / 2048.0_f64).powf(writes as f64));
    assert!(
        back as f64 >= 0.9 * expected && back <= 2048.min(writes + 16),
        "read back {back} blocks after {writes} random writes (about {expected:.0} distinct)"
    );
    assert_eq!(str_at(&v, "/verdict/result"), "PASS");
    let rules: Vec<&str> = array_at(&v, "/verdict/rules")
        .iter()
        .map(|r| str_at(r, "/rule"))
        .collect();
    assert_eq!(rules, ["I/O errors", "data verification errors"]);
}

#[test]
fn mixed_block_sizes_verify_at_their_common_divisor() {
    let dir = scratch();
    let job = write_job(
        dir.path(),
        "mix.toml",
        &format!(
            r#"duration = "2s"
verify = true
[[target]]
path = "{}"
size = "4MiB"
[[worker]]
queue_depth = 4
count = 2
[[worker.access]]
block_sizes = {{ "8k" = 1, "32k" = 1 }}
read = 50
random = 100
[[worker.access]]
block_size = "64k"
read = 50
random = 0
"#,
            dir.path().join("mix.dat").display()
        ),
    );
    let v = RunArgs::job(&job)
        .results(&dir.path().join("mix.json"))
        .run_ok(dir.path());
    assert_eq!(u64_at(&v, "/verify/block_bytes"), 8192);
    // Every read checks its 8 KiB blocks (a 32 KiB read four of them).
    let reads = u64_at(&v, "/totals/read/ops");
    let checked = u64_at(&v, "/verify/blocks_checked");
    assert!(
        reads > 0 && checked >= reads,
        "{checked} blocks checked in {reads} reads"
    );
    assert_eq!(
        u64_at(&v, "/verify/corrupted") + u64_at(&v, "/verify/torn"),
        0
    );
    assert_eq!(str_at(&v, "/verdict/result"), "PASS");
}

#[test]
fn sequential_gaps_and_starts_verify_at_their_common_divisor() {
    // 16 KiB writes and reads 4 KiB apart, starting 6 KiB in: every I/O is at a multiple of
    // 2 KiB, the block verification must track (16 KiB blocks could not verify them).
    let dir = scratch();
    let job = write_job(
        dir.path(),
        "gaps.toml",
        &format!(
            "duration = \"2s\"\nverify = true\n[[target]]\npath = \"{}\"\nsize = \"4MiB\"\n\
             [[worker]]\nqueue_depth = 4\n[[worker.access]]\nblock_size = \"16k\"\nread = 50\n\
             random = 0\ngap = \"4k\"\nstart = \"6k\"\n",
            dir.path().join("gaps.dat").display()
        ),
    );
    let v = RunArgs::job(&job)
        .results(&dir.path().join("gaps.json"))
        .run_ok(dir.path());
    assert_eq!(u64_at(&v, "/verify/block_bytes"), 2048);
    let reads = u64_at(&v, "/totals/read/ops");
    let checked = u64_at(&v, "/verify/blocks_checked");
    assert!(
        reads > 0 && checked >= reads * 8,
        "{checked} blocks checked in {reads} reads"
    );
    assert_eq!(at(&v, "/interrupted"), &Value::Bool(false));
    assert_eq!(str_at(&v, "/verdict/result"), "PASS");
}

#[test]
fn a_verified_run_a_failure_stopped_never_passes() {
    // A floor no storage meets (fio's rate_iops_min): once settled, the worker's first cycle
    // below it ends the run. What it did not run was not verified.
    let dir = scratch();
    let job = write_job(
        dir.path(),
        "floor.toml",
        &format!(
            "duration = \"6s\"\nverify = true\n[[target]]\npath = \"{}\"\nsize = \"4MiB\"\n\
             [[worker]]\nqueue_depth = 1\nmin_iops = 1000000000\n[[worker.access]]\n\
             block_size = \"4k\"\nread = 50\nrandom = 100\n",
            dir.path().join("floor.dat").display()
        ),
    );
    let results = dir.path().join("floor.json");
    let out = RunArgs::job(&job).results(&results).run(dir.path());
    out.expect_code(1);
    let v = load_json(&results);
    assert!(
        str_at(&v, "/interrupted").starts_with("failed: "),
        "{}",
        str_at(&v, "/interrupted")
    );
    assert_eq!(str_at(&v, "/verdict/result"), "FAIL");
    let rule = array_at(&v, "/verdict/rules")
        .iter()
        .find(|r| str_at(r, "/rule") == "failures that stopped the run")
        .expect("the rule of a run a failure stopped");
    assert_eq!(f64_at(rule, "/measured"), 1.0);
    assert!(!out.stdout.contains("RESULT: PASS"), "{}", out.stdout);
    assert!(out.stdout.contains("RESULT: FAIL"), "{}", out.stdout);
}

/// Starts a read-only verifying run on a prepared 1 MiB file, lets `damage` change the file
/// from this (another) process while it measures, and returns the results.
fn damaged_while_running(damage: impl FnOnce(&std::fs::File)) -> (Outcome, Value) {
    let dir = scratch();
    let target = dir.path().join("d.dat");
    // Prepare it (every sector gets its header), then read it back verified while damaging.
    prepare(dir.path(), &target, "200ms");
    let results = dir.path().join("d.json");
    // Sequential reads: every pass over the file's 256 blocks reads each damaged block, so the
    // damage is found by the first full pass after it (a few hundred reads, a fraction of a
    // second even on a loaded disk), not by random reads that may miss one block for long.
    let args = RunArgs::target(&target)
        .flags(&["--verify", "--bs", "4k", "--read", "100", "--random", "0"])
        .flags(&["--qd", "4", "--duration", "4s", "--interval", "200ms"])
        .results(&results);
    damaged_while(dir.path(), &target, args.args(), &results, damage)
}

/// Runs `storlab ARGS` (a verifying run on `target`, results in `results`), lets `damage`
/// change the target once it measures, and returns the outcome and the results.
fn damaged_while(
    dir: &Path,
    target: &Path,
    args: &[std::ffi::OsString],
    results: &Path,
    damage: impl FnOnce(&std::fs::File),
) -> (Outcome, Value) {
    let mut child = storlab(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Damage once storlab is measuring: its first interval is in the time series.
    let series = results.with_extension("ndjson");
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(&series).map_or(true, |t| !t.contains('\n')) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("storlab exited ({status}) before measuring");
        }
        assert!(Instant::now() < deadline, "storlab did not start measuring");
        std::thread::sleep(Duration::from_millis(5));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(target)
        .unwrap();
    damage(&file);
    file.sync_all().unwrap();
    // Drop cached pages so O_DIRECT reads and the page cache agree (they already do for
    // O_DIRECT; this is belt and braces for the buffered write above).
    let out = child.wait_with_output().unwrap();
    (Outcome::from_output(&out), load_json(results))
}

/// Creates and prepares a 1 MiB `target` (every sector gets its header) with a run of
/// `duration`, which must succeed (results in `prep.json`).
fn prepare(dir: &Path, target: &Path, duration: &str) {
    RunArgs::target(target)
        .size("1MiB")
        .flags(&["--duration", duration])
        .results(&dir.join("prep.json"))
        .run(dir)
        .expect_ok();
}

#[test]
fn another_process_overwriting_blocks_is_caught_as_corruption() {
    let (out, v) = damaged_while_running(|f| {
        // Garbage over 16 blocks from 256 KiB.
        f.write_all_at(&vec![0x5Au8; 16 * 4096], 256 * 1024)
            .unwrap();
    });
    out.expect_code(3);
    assert!(u64_at(&v, "/verify/corrupted") > 0, "{}", at(&v, "/verify"));
    for e in array_at(&v, "/verify/first_errors") {
        assert_eq!(str_at(e, "/kind"), "corrupted");
        let off = u64_at(e, "/offset");
        assert!((256 * 1024..320 * 1024).contains(&off), "offset {off}");
        assert!(str_at(e, "/found").contains("checksum"), "{e}");
    }
    assert_eq!(str_at(&v, "/verdict/result"), "FAIL");
    assert!(out.stdout.contains("corrupted") || out.stderr.contains("corrupted"));
}

#[test]
fn another_process_copying_a_block_elsewhere_is_caught_as_misdirection() {
    let (out, v) = damaged_while_running(|f| {
        let mut block = vec![0u8; 4096];
        f.read_exact_at(&mut block, 0).unwrap();
        f.write_all_at(&block, 512 * 1024).unwrap();
    });
    out.expect_code(3);
    assert!(
        u64_at(&v, "/verify/misdirected") > 0,
        "{}",
        at(&v, "/verify")
    );
    assert_eq!(u64_at(&v, "/verify/corrupted"), 0);
    let e = &array_at(&v, "/verify/first_errors")[0];
    assert_eq!(u64_at(e, "/offset"), 512 * 1024);
    assert!(str_at(e, "/found").contains("offset 0 of target 0"), "{e}");
}

/// A verifying write-and-read run on a file on the fault-injecting FUSE filesystem with
/// `faults` set once the file is prepared. None (and a printed reason) when FUSE is missing.
fn on_faultfs(
    name: &str,
    faults: impl FnOnce(&mut crate::faultfs::Faults),
) -> Option<(Outcome, Value)> {
    let fs = match crate::faultfs::FaultFs::mount() {
        Ok(fs) => fs,
        Err(why) => {
            skip(&format!("{name}_writes_are_reported_as_{name}"), &why);
            return None;
        }
    };
    let dir = scratch();
    let target = fs.dir().join(format!("{name}.dat"));
    prepare(dir.path(), &target, "100ms");
    fs.set(faults);
    Some(verify_run(dir.path(), &target, "2", &[]))
}

#[test]
fn lost_writes_are_reported_as_lost() {
    let Some((out, v)) = on_faultfs("lost", |f| f.drop_writes = vec![0..64 * 1024]) else {
        return;
    };
    out.expect_code(3);
    assert!(u64_at(&v, "/verify/lost") > 0, "{}", at(&v, "/verify"));
    assert!(kinds(&v).iter().all(|k| k == "lost"), "{:?}", kinds(&v));
    for e in array_at(&v, "/verify/first_errors") {
        assert!(u64_at(e, "/offset") < 64 * 1024);
    }
}

#[test]
fn torn_writes_are_reported_as_torn() {
    let Some((out, v)) = on_faultfs("torn", |f| f.tear_writes = vec![0..1 << 20]) else {
        return;
    };
    out.expect_code(3);
    assert!(u64_at(&v, "/verify/torn") > 0, "{}", at(&v, "/verify"));
    assert_eq!(u64_at(&v, "/verify/corrupted"), 0);
    // The summary and the HTML report show what was found, rebuilt from the results file.
    assert!(
        out.stdout.contains("torn block at offset"),
        "{}",
        out.stdout
    );
    let dir = scratch();
    let file = dir.path().join("v.json");
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let page = report_html(dir.path(), &file, &dir.path().join("v.html"));
    assert!(page.contains("<h2 id=\"verify\">Data verification</h2>"));
    assert!(
        page.contains("<td class=\"fail\">torn</td>"),
        "the first errors are listed"
    );
    assert!(
        page.contains("of this run"),
        "with what was expected and found"
    );
}

#[test]
fn misdirected_writes_are_reported_as_misdirected() {
    let Some((out, v)) = on_faultfs("misdirected", |f| {
        f.misdirect_writes = vec![(0..128 * 1024, 512 * 1024)]
    }) else {
        return;
    };
    out.expect_code(3);
    assert!(
        u64_at(&v, "/verify/misdirected") > 0,
        "{}",
        at(&v, "/verify")
    );
}

#[test]
fn a_loop_device_is_checked_once_written() {
    const TEST: &str = "a_loop_device_is_checked_once_written";
    if let Some(why) = crate::harness::loop_skip_reason(&["losetup"]) {
        return skip(TEST, &why);
    }
    let dir = scratch();
    let image = dir.path().join("disk.img");
    crate::harness::sparse_image(&image, 16 * MIB);
    let dev = match crate::harness::LoopDevice::attach(&image, true) {
        Ok(d) => d,
        Err(why) => return skip(TEST, &why),
    };
    let (out, v) = verify_run(
        dir.path(),
        Path::new(&format!("/dev/{}", dev.name())),
        "4",
        &["--destroy-data"],
    );
    out.expect_ok();
    assert!(u64_at(&v, "/verify/blocks_checked") > 0);
    assert!(
        u64_at(&v, "/verify/blocks_unchecked") > 0,
        "never-written blocks cannot be checked"
    );
    assert_eq!(str_at(&v, "/verify/read_back/state"), "completed");
    let warnings = at(&v, "/warnings").to_string();
    assert!(
        warnings.contains("was not prepared by storlab"),
        "{warnings}"
    );
}

#[test]
fn verify_rejects_blocks_that_cannot_carry_headers() {
    let dir = scratch();
    let out = RunArgs::target(&dir.path().join("x.dat"))
        .size("1MiB")
        .flags(&["--verify", "--buffered", "--bs", "1000", "--duration", "1s"])
        .run(dir.path());
    out.expect_code(2).stderr_has(&["verify", "512"]);
}

/// The verdict's data-verification rule.
fn verification_rule(v: &Value) -> &Value {
    array_at(v, "/verdict/rules")
        .iter()
        .find(|r| str_at(r, "/rule") == "data verification errors")
        .expect("the verdict has the verification rule")
}

#[test]
fn an_exchange_validation_verifies_its_databases_and_logs() {
    let dir = scratch();
    let results = dir.path().join("x.json");
    let out = ExchangeArgs::sized(200, "40MiB", "1%", 2)
        .flags(&["--verify"])
        .measure("3s")
        .flags(&["--db-read-latency", "1s", "--log-write-latency", "1s"])
        .flags(&["--max-latency", "5s"])
        .db_path(dir.path())
        .results(&results)
        .run(dir.path());
    let v = load_json(&results);
    assert!(matches!(out.code, Some(0 | 3 | 4)), "{}", out.stderr);
    assert!(
        u64_at(&v, "/verify/blocks_checked") > 0,
        "{}",
        at(&v, "/verify")
    );
    assert_eq!(
        u64_at(&v, "/verify/corrupted") + u64_at(&v, "/verify/lost"),
        0
    );
    assert_eq!(str_at(&v, "/verify/read_back/state"), "completed");
    assert!(u64_at(&v, "/verify/read_back/blocks_checked") > 0);
    assert_eq!(verification_rule(&v)["pass"], Value::Bool(true));
}

#[test]
fn a_users_run_verifies_its_databases_and_logs() {
    // Simulated users' pages (8 KiB) and log segments (4 KiB, partial ones rewritten) are
    // checked in 4 KiB blocks, while they run and read back at the end.
    let dir = scratch();
    let results = dir.path().join("u.json");
    let args = users_args(
        dir.path(),
        &results,
        &[
            "--users",
            "10",
            "--databases",
            "2",
            "--duration",
            "30m",
            "--compress",
            "360",
            "--verify",
        ],
    );
    let out = run_in(dir.path(), &args);
    let v = load_json(&results);
    assert!(matches!(out.code, Some(0 | 3 | 4)), "{}", out.stderr);
    assert_eq!(u64_at(&v, "/verify/block_bytes"), 4096);
    assert!(
        u64_at(&v, "/verify/blocks_checked") > 0,
        "{}",
        at(&v, "/verify")
    );
    for k in ["corrupted", "misdirected", "lost", "torn"] {
        assert_eq!(u64_at(&v, &format!("/verify/{k}")), 0, "{k}");
    }
    assert_eq!(str_at(&v, "/verify/read_back/state"), "completed");
    assert!(u64_at(&v, "/verify/read_back/blocks_checked") > 0);
    assert_eq!(verification_rule(&v)["pass"], Value::Bool(true));
}

/// A job on a 1 MiB `target` writing data that compresses 3:1 and dedupes 2:1, verified: 4 KiB
/// sequential, half reads (each pass reads about half the blocks the pass before wrote).
fn reduced_job(dir: &Path, target: &Path) -> std::path::PathBuf {
    write_job(
        dir,
        "reduced.toml",
        &format!(
            "duration = \"3s\"\ninterval = \"200ms\"\nverify = true\n[data]\ncompress = 3.0\ndedupe = 2.0\n[[target]]\npath = \"{}\"\nsize = \"1MiB\"\n[[worker]]\nqueue_depth = 4\n[[worker.access]]\nblock_size = \"4k\"\nread = \"50%\"\nrandom = \"0%\"\n",
            target.display()
        ),
    )
}

#[test]
fn reduced_data_verifies_clean_and_damage_to_it_is_caught() {
    let dir = scratch();
    let target = dir.path().join("r.dat");
    let job = reduced_job(dir.path(), &target);
    let results = dir.path().join("r.json");
    let args = RunArgs::job(&job).results(&results);
    let (out, v) = damaged_while(dir.path(), &target, args.args(), &results, |f| {
        // Garbage over 16 blocks from 256 KiB: the next pass reads about half of them before
        // rewriting them, and each such read is corruption.
        f.write_all_at(&vec![0x5Au8; 16 * 4096], 256 * 1024)
            .unwrap();
    });
    out.expect_code(3);
    assert!(u64_at(&v, "/verify/corrupted") > 0, "{}", at(&v, "/verify"));
    // Copies of pool entries and unique units, read and read back: nothing else is an error.
    for e in array_at(&v, "/verify/first_errors") {
        assert_eq!(str_at(e, "/kind"), "corrupted", "{e}");
        let off = u64_at(e, "/offset");
        assert!((256 * 1024..320 * 1024).contains(&off), "offset {off}");
    }
    for k in ["misdirected", "lost", "torn"] {
        assert_eq!(u64_at(&v, &format!("/verify/{k}")), 0, "{k}");
    }
    assert!(u64_at(&v, "/verify/blocks_checked") > 256);
    assert!(u64_at(&v, "/data/units_sampled") > 0);
}

#[test]
fn reduced_data_as_written_compresses_and_dedupes_as_asked_and_as_reported() {
    let dir = scratch();
    let target = dir.path().join("c.dat");
    let job = write_job(
        dir.path(),
        "c.toml",
        &format!(
            "duration = \"60s\"\n[data]\ncompress = 3\ndedupe = 2\n[[target]]\npath = \"{}\"\nsize = \"8MiB\"\n[[worker]]\nqueue_depth = 4\nio_limit = 256\n[[worker.access]]\nblock_size = \"64k\"\nread = \"0%\"\nrandom = \"0%\"\n",
            target.display()
        ),
    );
    let results = dir.path().join("c.json");
    let v = RunArgs::job(&job).results(&results).run_ok(dir.path());
    // Sequential writes over the whole file, twice (a count of I/Os, not a time, so that a
    // loaded machine writes as much): every unit holds what the run wrote once it has made one
    // pass (128 writes).
    let writes = u64_at(&v, "/totals/write/ops");
    assert!(
        writes >= 128,
        "only {writes} writes: the file was not written over once"
    );
    let data = std::fs::read(&target).unwrap();
    let (mut compressed, mut hashes) = (0usize, Vec::new());
    for unit in data.chunks_exact(4096) {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, unit).unwrap();
        compressed += e.finish().unwrap().len().min(unit.len());
        hashes.push(xxhash_rust::xxh3::xxh3_64(unit));
    }
    let units = hashes.len();
    hashes.sort_unstable();
    hashes.dedup();
    let compress = data.len() as f64 / compressed as f64;
    let dedupe = units as f64 / hashes.len() as f64;
    let near = |got: f64, asked: f64| (got / asked - 1.0).abs() <= 0.1;
    assert!(near(compress, 3.0), "the file compresses {compress:.2}:1");
    assert!(near(dedupe, 2.0), "the file dedupes {dedupe:.2}:1");
    // The results file reports what was asked and what its sample achieved, alike.
    assert_eq!(f64_at(&v, "/data/compress_asked"), 3.0);
    assert_eq!(f64_at(&v, "/data/dedupe_asked"), 2.0);
    let c = f64_at(&v, "/data/compress_achieved");
    let d = f64_at(&v, "/data/dedupe_achieved");
    assert!(
        near(c, 3.0) && near(d, 2.0),
        "reported {c:.2}:1 and {d:.2}:1"
    );
    assert!(u64_at(&v, "/data/units_sampled") > 0);
}
