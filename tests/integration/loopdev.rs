//! Device counters next to storlab's own counts: on a loop device (direct I/O to its backing
//! file when losetup supports it) the reads and writes the kernel counted over the measured
//! phase match the ones storlab reports, and when another process uses the device too, the
//! summary says the device's figures are not storlab's alone.

use crate::harness::{
    LoopDevice, MIB, RunArgs, array_at, load_json, loop_skip_reason, report_html, scratch, skip,
    sparse_image, str_at, u64_at,
};

#[test]
fn loop_device_counters_match_storlab_counts() {
    const TEST: &str = "loop_device_counters_match_storlab_counts";
    if let Some(reason) = loop_skip_reason(&[]) {
        return skip(TEST, &reason);
    }
    let dir = scratch();
    let image = dir.path().join("counters.img");
    // Fresh zeros: no signature, so the guard lets a write workload through.
    sparse_image(&image, 128 * MIB);
    let device = match LoopDevice::attach(&image, true) {
        Ok(d) => d,
        Err(e) => return skip(TEST, &e),
    };
    let v = RunArgs::target(&device.path)
        .flags(&["--bs", "4k", "--read", "70", "--random", "100"])
        .flags(&["--qd", "8", "--ramp", "0s", "--duration", "3s"])
        .results(&dir.path().join("loop.json"))
        .run_ok(dir.path());
    let name = device.name();
    assert_eq!(str_at(&v, "/targets/0/kind"), "block_device");
    assert_eq!(str_at(&v, "/targets/0/device"), name);
    let entry = array_at(&v, "/devices")
        .iter()
        .find(|d| str_at(d, "/name") == name)
        .unwrap_or_else(|| panic!("no {name} in results.devices"))
        .clone();

    let ours = |p: &str| u64_at(&v, p) as f64;
    let theirs = |p: &str| u64_at(&entry, p) as f64;
    let pairs = [
        ("reads", ours("/totals/read/ops"), theirs("/delta/reads")),
        ("writes", ours("/totals/write/ops"), theirs("/delta/writes")),
        (
            "read bytes",
            ours("/totals/read/bytes"),
            theirs("/delta/read_bytes"),
        ),
        (
            "write bytes",
            ours("/totals/write/bytes"),
            theirs("/delta/write_bytes"),
        ),
    ];
    // The device counts what storlab counted, and besides at most the 8 I/Os (queue depth 8)
    // in flight when the window closed: storlab reaps them after it and leaves them out, the
    // device completes them before its counters are read. Within 1% beside that for requests
    // the block layer merged. However few I/Os a loaded machine managed, the bound is the
    // same: a queue, not a share of a rate.
    for (what, storlab, device) in pairs {
        let per_io = if what.ends_with("bytes") { 4096.0 } else { 1.0 };
        assert!(storlab > 0.0, "no {what}");
        assert!(
            (device - storlab).abs() <= storlab * 0.01 + 8.0 * per_io,
            "{what}: storlab counted {storlab}, {name} counted {device}"
        );
    }
}

/// A job that gives a device more I/Os at once than its request slots is warned that the rest
/// wait in the kernel (their latency is partly that queue's); one within the slots is not.
#[test]
fn more_ios_at_once_than_the_devices_request_slots_are_warned_of() {
    const TEST: &str = "more_ios_at_once_than_the_devices_request_slots_are_warned_of";
    if let Some(reason) = loop_skip_reason(&[]) {
        return skip(TEST, &reason);
    }
    let dir = scratch();
    let image = dir.path().join("slots.img");
    sparse_image(&image, 64 * MIB);
    let device = match LoopDevice::attach(&image, true) {
        Ok(d) => d,
        Err(e) => return skip(TEST, &e),
    };
    // What the device takes: its nr_requests on each of its hardware queues.
    let queue = format!("/sys/block/{}", device.name());
    let slots: u64 = std::fs::read_to_string(format!("{queue}/queue/nr_requests"))
        .unwrap_or_else(|e| panic!("{queue}: {e}"))
        .trim()
        .parse()
        .unwrap();
    let slots = slots * std::fs::read_dir(format!("{queue}/mq")).unwrap().count() as u64;
    let run = |workers: u64, qd: u64, name: &str| {
        RunArgs::target(&device.path)
            .flags(&["--bs", "4k", "--read", "100", "--random", "100"])
            .flags(&["--workers", &workers.to_string(), "--qd", &qd.to_string()])
            .flags(&["--ramp", "0s", "--duration", "1s"])
            .results(&dir.path().join(name))
            .run_ok(dir.path())
    };
    let about_slots = |v: &serde_json::Value| -> Vec<String> {
        array_at(v, "/warnings")
            .iter()
            .filter_map(|w| w.as_str().filter(|w| w.contains("nr_requests")))
            .map(str::to_owned)
            .collect()
    };
    // Two workers at the device's own depth, one more I/O each: twice its slots and two.
    let over = run(2, slots + 1, "over.json");
    let said = about_slots(&over);
    let expected = format!(
        "{} is given up to {} I/Os at once and takes {slots} (queue/nr_requests)",
        device.name(),
        2 * slots + 2
    );
    assert!(
        said.len() == 1 && said[0].starts_with(&expected),
        "want `{expected}…`, got {said:?}"
    );
    assert!(u64_at(&over, "/totals/read/ops") > 0);
    // Exactly the slots, from two workers: no warning.
    let within = run(2, slots / 2, "within.json");
    assert_eq!(about_slots(&within), Vec::<String>::new());
}

/// Another process reading the device storlab measures: the device's own counters are far
/// above storlab's, and the summary's device line says so (and what it means) under the
/// figures, as the HTML report does under its devices table.
#[test]
fn a_busy_neighbour_on_the_device_is_named_on_the_device_line() {
    const TEST: &str = "a_busy_neighbour_on_the_device_is_named_on_the_device_line";
    if let Some(reason) = loop_skip_reason(&["dd"]) {
        return skip(TEST, &reason);
    }
    let dir = scratch();
    let image = dir.path().join("neighbour.img");
    sparse_image(&image, 64 * MIB);
    let device = match LoopDevice::attach(&image, true) {
        Ok(d) => d,
        Err(e) => return skip(TEST, &e),
    };
    let name = device.name();
    // The neighbour: whole passes over the device with O_DIRECT (no page cache between it
    // and the device), one after another until the run is over. Each pass is 64 MiB; storlab
    // reads 4 KiB 20 times a second, a few hundred KiB in all.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let neighbour = {
        let (stop, path) = (stop.clone(), device.path.clone());
        std::thread::spawn(move || {
            let mut passes = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let status = std::process::Command::new("dd")
                    .arg(format!("if={}", path.display()))
                    .args(["of=/dev/null", "bs=1M", "iflag=direct"])
                    .stderr(std::process::Stdio::null())
                    .status()
                    .expect("run dd");
                assert!(status.success(), "dd over {}: {status}", path.display());
                passes += 1;
            }
            passes
        })
    };
    let args = RunArgs::target(&device.path)
        .flags(&["--bs", "4k", "--read", "100", "--random", "100"])
        .flags(&["--rate", "20", "--ramp", "0s", "--duration", "3s"])
        .results(&dir.path().join("neighbour.json"));
    let out = args.run(dir.path());
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let passes = neighbour.join().expect("the neighbour");
    out.expect_ok();
    let v = load_json(args.results_path());
    let entry = array_at(&v, "/devices")
        .iter()
        .find(|d| str_at(d, "/name") == name)
        .unwrap_or_else(|| panic!("no {name} in results.devices"))
        .clone();
    let (ours, theirs) = (
        u64_at(&v, "/targets/0/bytes/read"),
        u64_at(&entry, "/delta/read_bytes"),
    );
    assert!(
        theirs > 10 * ours.max(MIB),
        "the neighbour's {passes} passes did not show: {name} read {theirs} bytes, storlab {ours}"
    );
    // The device line, then the note under it.
    let lines: Vec<&str> = out.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("device     {name}")))
        .unwrap_or_else(|| panic!("no device line for {name}:\n{}", out.stdout));
    let note = lines.get(at + 1).map_or("", |l| l.trim());
    assert!(
        note.starts_with(&format!("{name} did "))
            && note.contains("reads/s")
            && note.contains(", storlab ")
            && note.contains("another process was reading from the device")
            && note.ends_with("the device's figures are not storlab's alone"),
        "no note under the device line:\n{}",
        out.stdout
    );
    // The HTML report says the same under its devices table.
    let page = report_html(dir.path(), args.results_path(), &dir.path().join("r.html"));
    assert!(
        page.contains(&format!("data-device-note=\"{name}\">{note}</p>")),
        "no device note in the HTML report"
    );
}

/// A job of 16 KiB writes and reads at random, half each, with `atomic` and verification,
/// on `target`, by `engine`.
fn atomic_job(
    dir: &std::path::Path,
    name: &str,
    target: &std::path::Path,
    engine: &str,
    block: &str,
) -> std::path::PathBuf {
    let job = dir.join(format!("{name}.toml"));
    std::fs::write(
        &job,
        format!(
            "engine = \"{engine}\"\nduration = \"1s\"\nramp = \"0s\"\nverify = true\n[[target]]\npath = \"{}\"\nsize = \"16MiB\"\n\
             [[worker]]\nqueue_depth = 8\n[[worker.access]]\nblock_size = \"{block}\"\nread = 50\natomic = true\n",
            target.display()
        ),
    )
    .unwrap();
    job
}

#[test]
fn atomic_writes_run_where_the_filesystem_takes_them_and_are_refused_where_not() {
    const TEST: &str =
        "atomic_writes_run_where_the_filesystem_takes_them_and_are_refused_where_not";
    if let Some(reason) = loop_skip_reason(&["mkfs.xfs"]) {
        return skip(TEST, &reason);
    }
    let dir = scratch();
    let image = dir.path().join("xfs.img");
    sparse_image(&image, 512 * MIB);
    let device = match LoopDevice::attach(&image, true) {
        Ok(d) => d,
        Err(e) => return skip(TEST, &e),
    };
    let mkfs = std::process::Command::new("mkfs.xfs")
        .args(["-q", "-f"])
        .arg(&device.path)
        .output()
        .unwrap();
    assert!(
        mkfs.status.success(),
        "{}",
        String::from_utf8_lossy(&mkfs.stderr)
    );
    // XFS (Linux 6.16 on) writes atomically in software, from one block to 1 MiB here.
    let xfs = crate::placement::Mounted::new("xfs", &device.path, &dir.path().join("xfs"), "")
        .unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("xfs/a.dat");
    for engine in ["io_uring", "psync"] {
        let job = atomic_job(dir.path(), engine, &file, engine, "16k");
        let v = RunArgs::job(&job)
            .results(&dir.path().join(format!("{engine}.json")))
            .run_ok(dir.path());
        assert!(u64_at(&v, "/totals/write/ops") > 0, "{engine}");
        assert_eq!(u64_at(&v, "/totals/write/errors"), 0, "{engine}");
        assert_eq!(
            u64_at(&v, "/verify/corrupted") + u64_at(&v, "/verify/torn"),
            0
        );
        assert_eq!(
            v["job"]["workers"][0]["access"][0]["atomic"], true,
            "{engine}"
        );
        assert_eq!(str_at(&v, "/verdict/result"), "PASS", "{engine}");
    }
    // Larger than the filesystem's largest atomic write: refused before any I/O, with its
    // range.
    let job = atomic_job(dir.path(), "big", &file, "io_uring", "2MiB");
    let out = RunArgs::job(&job)
        .results(&dir.path().join("big.json"))
        .run(dir.path());
    out.expect_code(2);
    assert!(
        out.stderr.contains("2097152-byte atomic writes to")
            && out.stderr.contains("which takes atomic writes of"),
        "{}",
        out.stderr
    );
    // tmpfs has none: refused, saying so.
    let tmpfs = crate::placement::Mounted::new(
        "tmpfs",
        std::path::Path::new("tmpfs"),
        &dir.path().join("tmp"),
        "size=64m",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let job = atomic_job(
        dir.path(),
        "none",
        &dir.path().join("tmp/a.dat"),
        "io_uring",
        "16k",
    );
    let out = RunArgs::job(&job)
        .results(&dir.path().join("none.json"))
        .run(dir.path());
    out.expect_code(2);
    assert!(
        out.stderr.contains("which takes no atomic writes"),
        "{}",
        out.stderr
    );
    // The dry run says so too of targets that exist, and lets the one XFS takes through.
    let dry = |job: &std::path::Path| {
        let out = crate::harness::run_in(
            dir.path(),
            ["run".as_ref(), job.as_os_str(), "--dry-run".as_ref()],
        );
        (out.code, out.stdout)
    };
    let (code, text) = dry(&job);
    assert!(
        code == Some(2) && text.contains("REFUSED: worker `worker0` writes atomically"),
        "{code:?} {text}"
    );
    let (code, text) = dry(&atomic_job(dir.path(), "xfs16k", &file, "io_uring", "16k"));
    assert!(
        code == Some(0) && text.contains("the run would start"),
        "{code:?} {text}"
    );
    drop(tmpfs);
    drop(xfs);
}
