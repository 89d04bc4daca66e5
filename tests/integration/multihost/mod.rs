//! Runs over many hosts on MPI (compiled always, run when storlab is built with `--features
//! mpi`, which `.ci/test` does when Open MPI is there to build against and `.ci/run` installs
//! from Debian; skipped otherwise): `mpirun -np 3` on this host starts three ranks of one job,
//! each on its own file by the `{rank}` template, and rank 0 writes one results file whose figures
//! are the sum of the ranks' own results, with a `hosts` entry per rank; one LUN (a loop
//! device) shared by slices, each rank on its own part; each host validating its own Exchange
//! databases; a rank killed mid-run, and one that hangs (SIGSTOP), named in the merged results
//! of the others; and a rank cut off by a network partition ([`partition`]).

mod partition;

use crate::harness::{
    LoopDevice, MIB, Outcome, STORLAB, load_json, loop_skip_reason, scratch, skip, sparse_image,
    u64_at, write_job,
};
use serde_json::Value;
use std::process::Command;

/// Why the multihost tests cannot run here, if they cannot: storlab built without the `mpi`
/// feature (these tests are compiled either way, so that the feature's lint pass in `.ci/run`
/// is of the library alone), or no `mpirun`.
pub(super) fn mpi_missing() -> Option<&'static str> {
    if !cfg!(feature = "mpi") {
        return Some(
            "storlab is built without the mpi feature (cargo test --features mpi; .ci/test adds it when Open MPI is installed)",
        );
    }
    if Command::new("mpirun").arg("--version").output().is_err() {
        return Some("mpirun is not installed (Debian: openmpi-bin)");
    }
    None
}

/// `mpirun` with what a container run as root needs (`--allow-run-as-root`), more ranks than
/// cores (`--oversubscribe`), and ranks not pinned to one core each (`--bind-to none`); `Err`
/// with [`mpi_missing`]'s reason.
fn mpirun(ranks: usize) -> Result<Command, &'static str> {
    if let Some(why) = mpi_missing() {
        return Err(why);
    }
    let mut c = Command::new("mpirun");
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--bind-to",
        "none",
        "-np",
    ])
    .arg(ranks.to_string());
    Ok(c)
}

/// `DIR/job.toml`: `duration` of 4 KiB random 70 % reads at `queue_depth`, each rank on its
/// own 8 MiB file `DIR/rank{rank}.dat`, in 500 ms intervals.
pub(super) fn per_rank_job(
    dir: &std::path::Path,
    duration: &str,
    queue_depth: u32,
) -> std::path::PathBuf {
    let job = format!(
        "duration = \"{duration}\"\nramp = \"0s\"\ninterval = \"500ms\"\n\
         [[target]]\nname = \"data\"\npath = \"{}/rank{{rank}}.dat\"\nsize = \"8MiB\"\n\
         [[worker]]\nname = \"w\"\nqueue_depth = {queue_depth}\n\
         [[worker.access]]\nclass = \"db\"\nblock_size = \"4k\"\nread = \"70%\"\nrandom = \"100%\"\n",
        dir.display()
    );
    write_job(dir, "job.toml", &job)
}

/// Runs storlab with `args` under `mpirun` in `dir`; it must succeed. Its standard output.
fn run_ok(mut mpirun: Command, dir: &std::path::Path, args: &[&str]) -> String {
    let output = mpirun
        .current_dir(dir)
        .arg(STORLAB)
        .args(args)
        .output()
        .expect("start mpirun");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    stdout
}

#[test]
fn three_ranks_on_mpi_write_one_results_file_equal_to_the_sum_of_theirs() {
    let mpirun = match mpirun(3) {
        Ok(c) => c,
        Err(why) => {
            skip(
                "three_ranks_on_mpi_write_one_results_file_equal_to_the_sum_of_theirs",
                why,
            );
            return;
        }
    };
    let dir = scratch();
    let file = per_rank_job(dir.path(), "3500ms", 4);
    // 70 intervals of 50 ms: the clocks are measured again after interval 59.
    let text = std::fs::read_to_string(&file).unwrap();
    let text = text.replace("interval = \"500ms\"", "interval = \"50ms\"");
    std::fs::write(&file, text).unwrap();
    let merged_path = dir.path().join("merged.json");
    let run = [
        "run",
        file.to_str().unwrap(),
        "-o",
        merged_path.to_str().unwrap(),
    ];
    let stdout = run_ok(mpirun, dir.path(), &run);
    let merged = load_json(&merged_path);
    let journals: Vec<_> = (0..3)
        .map(|r| load_json(&dir.path().join(format!("merged.rank{r}.json"))))
        .collect();
    for (r, j) in journals.iter().enumerate() {
        assert_eq!(
            j["job"]["targets"][0]["path"].as_str().unwrap(),
            dir.path().join(format!("rank{r}.dat")).to_str().unwrap(),
            "rank {r} ran on its own file"
        );
        assert!(dir.path().join(format!("rank{r}.dat")).exists());
    }
    for pointer in [
        "/totals/read/ops",
        "/totals/write/ops",
        "/totals/read/bytes",
        "/classes/db/write/bytes",
    ] {
        let sum: u64 = journals.iter().map(|j| u64_at(j, pointer)).sum();
        assert_eq!(u64_at(&merged, pointer), sum, "{pointer}");
    }
    let hosts = merged["hosts"].as_array().expect("hosts");
    assert_eq!(hosts.len(), 3);
    assert!(hosts.iter().all(|h| h["present"] == true));
    assert_eq!(merged["verdict"]["result"], "PASS", "{stdout}");
    // One host, one monotonic clock: each measured offset's interval holds the true one, 0.
    for h in hosts {
        let offset = h["clock_offset_ns"].as_i64().unwrap();
        let within = h["clock_uncertainty_ns"].as_u64().unwrap();
        assert!(offset.unsigned_abs() <= within, "{h}");
    }
    // And again during the run, over MPI's side channel.
    for h in &hosts[1..] {
        let checks = h["clock_checks"].as_array().expect("clock checks");
        assert_eq!(checks.len(), 1, "{h}");
        assert_eq!(checks[0]["interval"], 59);
        let offset = checks[0]["offset_ns"].as_i64().unwrap();
        let within = checks[0]["uncertainty_ns"].as_u64().unwrap();
        assert!(offset.unsigned_abs() <= within, "{h}");
    }
    // One summary, from rank 0.
    assert_eq!(stdout.matches("RESULT: PASS").count(), 1, "{stdout}");
}

#[test]
fn ranks_sharing_a_lun_by_slices_each_write_only_their_own_part() {
    let test = "ranks_sharing_a_lun_by_slices_each_write_only_their_own_part";
    let mpirun = match mpirun(3) {
        Ok(c) => c,
        Err(why) => {
            skip(test, why);
            return;
        }
    };
    if let Some(reason) = loop_skip_reason(&["losetup"]) {
        skip(test, &reason);
        return;
    }
    let dir = scratch();
    let image = dir.path().join("lun.img");
    sparse_image(&image, 12 * MIB);
    let lun = LoopDevice::attach(&image, true).expect("loop device");
    // Random 64 KiB writes, each rank within its slice: rank r on the 4 MiB from r × 4 MiB. With
    // verification every rank reads back what it wrote: had another rank written over a block
    // of its slice, its read-back would find the other rank's data there.
    let job = format!(
        "duration = \"1s\"\nramp = \"0s\"\ndestroy_data = true\nverify = true\n\
         [[target]]\nname = \"lun\"\npath = \"{}\"\nshared = \"slice\"\n\
         [[worker]]\nname = \"w\"\nqueue_depth = 2\n\
         [[worker.access]]\nclass = \"db\"\nblock_size = \"64k\"\nread = \"0%\"\nrandom = \"100%\"\n",
        lun.path.display()
    );
    let file = write_job(dir.path(), "job.toml", &job);
    let merged_path = dir.path().join("merged.json");
    let run = [
        "run",
        file.to_str().unwrap(),
        "-o",
        merged_path.to_str().unwrap(),
    ];
    let stdout = run_ok(mpirun, dir.path(), &run);
    for r in 0..3u64 {
        let j = load_json(&dir.path().join(format!("merged.rank{r}.json")));
        let a = &j["job"]["workers"][0]["access"][0];
        assert_eq!(u64_at(a, "/offset_bytes"), r * 4 * MIB, "rank {r}");
        assert_eq!(u64_at(a, "/length_bytes"), 4 * MIB, "rank {r}");
        // Verification checks every block the rank wrote: nothing of another rank's.
        assert_eq!(j["verdict"]["result"], "PASS", "rank {r}: {}", j["verdict"]);
    }
    let merged = load_json(&merged_path);
    assert_eq!(merged["verdict"]["result"], "PASS", "{stdout}");
}

#[test]
fn each_host_validates_its_own_exchange_databases_and_every_host_must_pass() {
    let test = "each_host_validates_its_own_exchange_databases_and_every_host_must_pass";
    let mut mpirun = match mpirun(2) {
        Ok(c) => c,
        Err(why) => {
            skip(test, why);
            return;
        }
    };
    let dir = scratch();
    for r in 0..2 {
        std::fs::create_dir(dir.path().join(format!("r{r}"))).unwrap();
    }
    let path = format!("{}/r{{rank}}", dir.path().display());
    let merged_path = dir.path().join("exchange.json");
    // 50 transactional IOPS a host: in 3 s every rule has enough I/Os to be judged.
    let mut args = vec!["exchange", "--mailboxes", "50", "--mailbox-size", "32MiB"];
    args.extend(["--iops-per-mailbox", "1"]);
    args.extend(["--capacity", "1%", "--databases", "1", "--threads", "2"]);
    args.extend([
        "--duration",
        "3s",
        "--ramp",
        "0s",
        "--db-path",
        &path,
        "--log-path",
        &path,
    ]);
    args.extend(crate::harness::LENIENT);
    args.extend(["-o", merged_path.to_str().unwrap()]);
    let output = mpirun
        .current_dir(dir.path())
        .arg(STORLAB)
        .args(&args)
        .output()
        .expect("start mpirun");
    let merged = load_json(&merged_path);
    // Storage that carries the load passes, unless the host kept a rank's threads from a CPU
    // (the suite beside CPU hogs, or the fuzzing beside it in CI): then that rank, and the
    // whole, are INCONCLUSIVE with the reason, never FAIL.
    Outcome::from_output(&output).expect_pass_or_host(&merged);
    let hosts = merged["hosts"].as_array().expect("hosts");
    assert_eq!(hosts.len(), 2);
    for (r, h) in hosts.iter().enumerate() {
        // Each host judged its own databases, in its own directory.
        let inconclusive = h["inconclusive"] == true && h["failed_rules"] != Value::Array(vec![]);
        assert!(h["pass"] == true || inconclusive, "rank {r}: {h}");
        assert!(dir.path().join(format!("r{r}/storlab-db1.edb")).exists());
        let own = load_json(&dir.path().join(format!("exchange.rank{r}.json")));
        assert!(own["exchange"]["achieved_iops"].as_f64().unwrap() > 0.0);
        let expected = if inconclusive { "INCONCLUSIVE" } else { "PASS" };
        assert_eq!(own["verdict"]["result"], expected, "rank {r}");
    }
    let rules: Vec<&str> = merged["verdict"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules.len(), 3, "{rules:?}");
    let sum: u64 = (0..2)
        .map(|r| {
            let own = load_json(&dir.path().join(format!("exchange.rank{r}.json")));
            u64_at(&own, "/classes/db1~1read/read/ops")
        })
        .sum();
    assert_eq!(u64_at(&merged, "/classes/db1~1read/read/ops"), sum);
}

#[test]
fn mdtest_over_mpi_shares_one_tree_and_merges_every_ranks_phases() {
    let test = "mdtest_over_mpi_shares_one_tree_and_merges_every_ranks_phases";
    let mpirun = match mpirun(2) {
        Ok(c) => c,
        Err(why) => {
            skip(test, why);
            return;
        }
    };
    let dir = scratch();
    let anchor = dir.path().join("tree");
    let merged_path = dir.path().join("fs.json");
    let args = [
        "fs",
        "--anchor",
        anchor.to_str().unwrap(),
        "--threads",
        "2",
        "--mdtest-items",
        "25",
        "--mdtest-io500",
        "easy",
        "-o",
        merged_path.to_str().unwrap(),
    ];
    run_ok(mpirun, dir.path(), &args);
    let merged = load_json(&merged_path);
    let m = &merged["fs"]["mdtest"];
    // 2 ranks × 2 threads, each task 25 files in its own directory of the one tree.
    assert_eq!(u64_at(m, "/tasks"), 4, "{m}");
    for p in m["phases"].as_array().expect("phases") {
        let phase = p["phase"].as_str().unwrap();
        let want = if phase.starts_with("tree") { 4 } else { 100 };
        assert_eq!(
            (u64_at(p, "/items"), u64_at(p, "/errors")),
            (want, 0),
            "{p}"
        );
    }
    // Each rank's own file holds its half of the creates; the merged figure is their sum.
    let creates = |v: &Value| -> u64 {
        v["fs"]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "mdtest create 1")
            .and_then(|r| r["operations"].as_array())
            .and_then(|ops| ops.iter().find(|o| o["operation"] == "create"))
            .map(|o| u64_at(o, "/figures/ops"))
            .unwrap_or(0)
    };
    let own: Vec<u64> = (0..2)
        .map(|r| creates(&load_json(&dir.path().join(format!("fs.rank{r}.json")))))
        .collect();
    assert_eq!(own, [50, 50]);
    assert_eq!(creates(&merged), 100);
}

/// The pid of the process whose command line holds `marker` and whose environment says it is
/// MPI rank `rank`.
fn rank_pid(marker: &str, rank: usize) -> Option<u32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let environ = std::fs::read(e.path().join("environ")).ok()?;
        let has = |hay: &[u8], needle: &str| hay.split(|&b| b == 0).any(|f| f == needle.as_bytes());
        (String::from_utf8_lossy(&cmdline).contains(marker) && has(&environ, &want)).then_some(pid)
    })
}

/// A long job (`duration`) of three ranks on their own files in `dir`, started by `mpirun`
/// (with `extra` arguments) in the background, returned once rank 2 is measuring, with rank 2's
/// pid.
fn three_ranks_measuring(
    mut mpirun: Command,
    dir: &std::path::Path,
    duration: &str,
    extra: &[&str],
) -> (std::process::Child, u32) {
    let file = per_rank_job(dir, duration, 2);
    let merged_path = dir.join("merged.json");
    let child = mpirun
        .args(extra)
        .current_dir(dir)
        .arg(STORLAB)
        .args([
            "run",
            file.to_str().unwrap(),
            "-o",
            merged_path.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start mpirun");
    let started = std::time::Instant::now();
    let series = dir.join("merged.rank2.ndjson");
    while std::fs::read_to_string(&series).map_or(true, |s| s.lines().count() < 2) {
        assert!(
            started.elapsed().as_secs() < 60,
            "rank 2 never started measuring"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let pid = rank_pid(file.to_str().unwrap(), 2).expect("rank 2's process");
    (child, pid)
}

/// Sends `signal` to `pid`, waits for `child` to end, and returns how long that took, s.
fn signal_and_wait(signal: &str, pid: u32, mut child: std::process::Child) -> u64 {
    use std::time::{Duration, Instant};
    let sent = Instant::now();
    Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    // Open MPI's mpirun now and then stays after every rank it started has exited (seen
    // beside other tests with a rank stopped by SIGSTOP: the ranks zombies, mpirun asleep in
    // futex waits for minutes, deaf to SIGTERM). The job is over when its ranks are: that is
    // when it ended here, and an mpirun still there 10 s later is killed.
    let mut ranks_gone: Option<Instant> = None;
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if ranks_gone.is_none() && ranks_exited(child.id()) {
            ranks_gone = Some(Instant::now());
        }
        if ranks_gone.is_some_and(|t| t.elapsed() > Duration::from_secs(10)) {
            eprintln!("mpirun stayed 10 s after its ranks exited: killed");
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(300),
            "the job had not ended 300 s after {signal}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    ranks_gone.map_or(sent.elapsed(), |t| t - sent).as_secs()
}

/// Whether every process `mpirun` started has exited (gone, or a zombie it has not reaped).
fn ranks_exited(mpirun: u32) -> bool {
    let Ok(children) = std::fs::read_to_string(format!("/proc/{mpirun}/task/{mpirun}/children"))
    else {
        return false;
    };
    children.split_whitespace().all(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            // The state follows the command's closing parenthesis.
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z'))
        })
    })
}

#[test]
fn a_rank_killed_mid_run_is_named_and_the_others_results_are_merged() {
    let test = "a_rank_killed_mid_run_is_named_and_the_others_results_are_merged";
    let mpirun = match mpirun(3) {
        Ok(c) => c,
        Err(why) => {
            skip(test, why);
            return;
        }
    };
    let dir = scratch();
    // mpirun ends the job when a rank dies: SIGTERM to the others, SIGKILL 10 s later.
    let grace = ["--mca", "odls_base_sigkill_timeout", "10"];
    let (child, pid) = three_ranks_measuring(mpirun, dir.path(), "60s", &grace);
    let took = signal_and_wait("-KILL", pid, child);
    assert!(took < 30, "the job ended {took} s after the kill");
    let merged = load_json(&dir.path().join("merged.json"));
    let reason = merged["interrupted"].as_str().unwrap_or_default();
    assert!(reason.contains("rank 2 on"), "{merged}");
    assert_eq!(merged["verdict"]["result"], "FAIL");
    assert_eq!(merged["hosts"][2]["present"], false);
    let own = |r: usize| load_json(&dir.path().join(format!("merged.rank{r}.json")));
    // The merged totals are the sum of the ranks it says are present. Rank 0 writes its own
    // results as the merged ones as soon as mpirun's SIGTERM comes (SIGKILL may follow), then
    // again with the ranks whose results arrive within an interval and a second: beside four
    // CPU hogs rank 1's did not, and the file said rank 1 was missing too.
    assert_eq!(merged["hosts"][0]["present"], true);
    let present: Vec<usize> = (0..2)
        .filter(|&r| merged["hosts"][r]["present"] == true)
        .collect();
    let sum: u64 = present
        .iter()
        .map(|&r| u64_at(&own(r), "/totals/read/ops"))
        .sum();
    assert_eq!(
        u64_at(&merged, "/totals/read/ops"),
        sum,
        "the ranks present in the merged results: {present:?}"
    );
    // Rank 2's own time series is on disk up to its death.
    let series = std::fs::read_to_string(dir.path().join("merged.rank2.ndjson")).unwrap();
    assert!(series.lines().count() >= 2);
}

#[test]
fn a_rank_that_hangs_is_named_by_the_watchdog_and_the_job_ends() {
    let test = "a_rank_that_hangs_is_named_by_the_watchdog_and_the_job_ends";
    let mpirun = match mpirun(3) {
        Ok(c) => c,
        Err(why) => {
            skip(test, why);
            return;
        }
    };
    let dir = scratch();
    // Rank 2 hangs: stopped, it neither dies nor answers; mpirun alone would wait for ever.
    let (child, pid) = three_ranks_measuring(mpirun, dir.path(), "120s", &[]);
    let took = signal_and_wait("-STOP", pid, child);
    assert!(took < 60, "the job ended {took} s after rank 2 hung");
    let merged = load_json(&dir.path().join("merged.json"));
    let r0 = load_json(&dir.path().join("merged.rank0.json"));
    let why = r0["interrupted"].as_str().unwrap_or_default();
    assert!(
        why.contains("rank 2 on") && why.contains("sent no heartbeat"),
        "{why}"
    );
    assert_eq!(merged["hosts"][2]["present"], false);
    assert_eq!(merged["hosts"][1]["present"], true);
    assert_eq!(merged["verdict"]["result"], "FAIL");
}
