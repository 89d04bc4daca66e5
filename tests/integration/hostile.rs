//! A hostile scratch directory: links planted at the names storlab writes (the link's target
//! is never written), special files given as targets (refused at once, never waited on), two
//! runs on one target or one results file (the second refused, naming the first), and a
//! results filesystem that fills up (the error names the file; no report blames a kill).

use crate::harness::{RunArgs, load_json, run_in, scratch, skip, storlab, u64_at};
use crate::placement::Mounted;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a run that must not hang may take: far beyond what a refusal needs on any
/// machine, however loaded; the assertion is only that it ends.
const NO_HANG: Duration = Duration::from_secs(60);

/// A copy of /etc/passwd (a file a planted link would aim at), and its contents.
fn victim(dir: &Path) -> (std::path::PathBuf, Vec<u8>) {
    let path = dir.join("passwd-copy");
    let contents =
        std::fs::read("/etc/passwd").unwrap_or_else(|_| b"root:x:0:0::/root:/bin/sh\n".to_vec());
    std::fs::write(&path, &contents).unwrap();
    (path, contents)
}

/// Waits for `child` to end within [`NO_HANG`]; kills it and fails the test if it does not.
#[track_caller]
fn ended(mut child: Child, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > NO_HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running after {NO_HANG:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Waits until `path` exists (a run got that far), within [`NO_HANG`].
#[track_caller]
fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < NO_HANG,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn links_planted_at_predictable_names_are_never_written_through() {
    let dir = scratch();
    let (victim, before) = victim(dir.path());
    let target = dir.path().join("t.dat");
    let results = dir.path().join("r.json");
    let page = dir.path().join("page.html");
    // The old temporary names of the manifest and the results, and the results' own name.
    for link in [
        "t.dat.storlab.json.tmp",
        "r.json.tmp",
        "r.json",
        "r.ndjson.tmp",
        "page.html",
    ] {
        std::os::unix::fs::symlink(&victim, dir.path().join(link)).unwrap();
    }
    RunArgs::target(&target)
        .flags(&[
            "--size",
            "4MiB",
            "--bs",
            "4k",
            "--read",
            "70",
            "--duration",
            "1s",
        ])
        .results(&results)
        .run(dir.path())
        .expect_ok();
    run_in(
        dir.path(),
        [
            "report".as_ref(),
            results.as_os_str(),
            "-o".as_ref(),
            page.as_os_str(),
        ],
    )
    .expect_ok();
    assert!(
        std::fs::read(&victim).unwrap() == before,
        "the link's target was written"
    );
    // The final names are regular files now: the link there was replaced, not followed.
    for written in [&results, &page] {
        let metadata = std::fs::symlink_metadata(written).unwrap();
        assert!(
            metadata.is_file(),
            "{} is not a regular file",
            written.display()
        );
    }
    assert!(load_json(&results)["totals"].is_object());
    // The planted temporary names were left alone, as links.
    for link in ["t.dat.storlab.json.tmp", "r.json.tmp", "r.ndjson.tmp"] {
        assert!(
            std::fs::symlink_metadata(dir.path().join(link))
                .unwrap()
                .is_symlink()
        );
    }
    // Nothing else is left behind: no temporary file, no lock.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp") || n.ends_with(".lock"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["r.json.tmp", "r.ndjson.tmp", "t.dat.storlab.json.tmp"]
    );
}

#[test]
fn a_pipe_or_a_socket_given_as_a_target_is_refused_without_waiting() {
    let dir = scratch();
    let fifo = dir.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_bits_truncate(0o600),
        0,
    )
    .unwrap();
    let socket = dir.path().join("socket");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    for (target, what) in [(&fifo, "named pipe (FIFO)"), (&socket, "a socket")] {
        for extra in [
            &["--read", "100"][..],
            &["--read", "0"],
            &["--read", "100", "--dry-run"],
        ] {
            let args = RunArgs::target(target)
                .flags(&["--size", "1MiB", "--duration", "1s"])
                .flags(extra)
                .results(&dir.path().join("r.json"));
            let child = storlab(dir.path())
                .args(args.args())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let out = crate::harness::Outcome::from_output(&ended(child, "a run on a pipe"));
            out.expect_code(2);
            // The dry run says it on its target's line (stdout), a run in its error.
            let said = format!("{}{}", out.stdout, out.stderr);
            assert!(said.contains(what), "{said}");
        }
    }
    assert!(!dir.path().join("r.json").exists());
}

#[test]
fn a_second_run_on_a_target_or_results_file_in_use_is_refused_naming_the_first() {
    let dir = scratch();
    let target = dir.path().join("t.dat");
    let args = |results: &str, extra: &[&str]| {
        RunArgs::target(&target)
            .flags(&["--size", "4MiB", "--bs", "4k", "--qd", "1"])
            .flags(extra)
            .results(&dir.path().join(results))
    };
    // The first run holds the target for far longer than the test needs it.
    let first = args(
        "first.json",
        &["--verify", "--read", "50", "--duration", "60s"],
    );
    let child = storlab(dir.path())
        .args(first.args())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Its time series exists once its targets are open (and locked).
    wait_for(&dir.path().join("first.ndjson"));
    let holder = format!("process {pid} (storlab)");
    // Another run, another --verify run (which would report the first's writes as lost
    // blocks), and a run writing the same results file: each refused, naming the first.
    args("second.json", &["--read", "100", "--duration", "1s"])
        .run(dir.path())
        .expect_code(2)
        .stderr_has(&["in use by another storlab run", &holder]);
    args(
        "third.json",
        &["--verify", "--read", "50", "--duration", "1s"],
    )
    .run(dir.path())
    .expect_code(2)
    .stderr_has(&[&holder]);
    RunArgs::target(&dir.path().join("other.dat"))
        .flags(&["--size", "1MiB", "--duration", "1s"])
        .results(&dir.path().join("first.json"))
        .run(dir.path())
        .expect_code(2)
        .stderr_has(&["being written by another run", &holder]);
    assert!(!dir.path().join("second.json").exists() && !dir.path().join("third.json").exists());
    assert!(
        !dir.path().join("other.dat").exists(),
        "a refused run created its target"
    );
    // The first run is untouched by all this: stopped with Ctrl-C, it passes its verification.
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = crate::harness::Outcome::from_output(&ended(child, "the first run"));
    assert!(matches!(out.code, Some(0 | 1)), "{}", out.stderr);
    let v = load_json(&dir.path().join("first.json"));
    for found in ["lost", "corrupted", "misdirected", "torn"] {
        assert_eq!(u64_at(&v, &format!("/verify/{found}")), 0, "{found}");
    }
    assert!(
        !dir.path().join("first.json.lock").exists(),
        "the lock file is removed"
    );
}

#[test]
fn two_runs_creating_one_target_at_once_one_runs_the_other_is_refused() {
    let dir = scratch();
    let target = dir.path().join("new.dat");
    let spawn = |results: &str| {
        let args = RunArgs::target(&target)
            .flags(&[
                "--size",
                "16MiB",
                "--bs",
                "4k",
                "--read",
                "70",
                "--duration",
                "2s",
            ])
            .results(&dir.path().join(results));
        storlab(dir.path())
            .args(args.args())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("a.json"), spawn("b.json"));
    let (pa, pb) = (a.id(), b.id());
    let outs =
        [ended(a, "run a"), ended(b, "run b")].map(|o| crate::harness::Outcome::from_output(&o));
    let codes: Vec<_> = outs.iter().map(|o| o.code).collect();
    // Both may also run one after the other, when the first ends before the second starts.
    if codes == [Some(0), Some(0)] {
        return;
    }
    let (refused, other) = match codes.as_slice() {
        [Some(0), Some(2)] => (&outs[1], pa),
        [Some(2), Some(0)] => (&outs[0], pb),
        _ => panic!(
            "expected one run and one refusal: {codes:?}\n{}\n{}",
            outs[0].stderr, outs[1].stderr
        ),
    };
    refused.stderr_has(&["in use by another storlab run", &format!("process {other}")]);
}

#[test]
fn a_full_results_filesystem_names_the_file_and_no_report_blames_a_kill() {
    const TEST: &str = "a_full_results_filesystem_names_the_file_and_no_report_blames_a_kill";
    if !rustix::process::geteuid().is_root() {
        return skip(TEST, "mounting a small tmpfs needs root");
    }
    let dir = scratch();
    let point = dir.path().join("small");
    let mounted = match Mounted::new("tmpfs", Path::new("tmpfs"), &point, "size=1m") {
        Ok(m) => m,
        Err(e) => return skip(TEST, &e),
    };
    let results = point.join("r.json");
    let args = RunArgs::target(&dir.path().join("t.dat"))
        .flags(&[
            "--size",
            "4MiB",
            "--bs",
            "4k",
            "--read",
            "100",
            "--duration",
            "4s",
        ])
        .results(&results);
    let child = storlab(dir.path())
        .args(args.args())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the run has written its first results file (marked unfinished), the filesystem
    // fills up: the results at the end no longer fit.
    // (after its first interval record, so that the report has something to show).
    let series = point.join("r.ndjson");
    wait_for(&results);
    let start = Instant::now();
    while std::fs::metadata(&series).map_or(0, |m| m.len()) == 0 {
        assert!(start.elapsed() < NO_HANG, "no interval record was written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut filler = std::fs::File::create(point.join("filler")).unwrap();
    let block = vec![0u8; 64 << 10];
    while std::io::Write::write_all(&mut filler, &block).is_ok() {}
    let out = crate::harness::Outcome::from_output(&ended(child, "the run"));
    out.expect_code(1)
        .stderr_has(&["no space left on device", &point.display().to_string()]);
    assert!(!out.stderr.contains("killed"), "{}", out.stderr);
    // The report of what the run measured says why it has no final results.
    drop(filler);
    let report = run_in(dir.path(), ["report".as_ref(), results.as_os_str()]);
    report.expect_ok();
    let text = format!("{}{}", report.stdout, report.stderr);
    assert!(text.contains("could not write its results"), "{text}");
    assert!(!text.contains("killed"), "{text}");
    drop(mounted);
}
