//! The destroy-data guard: storlab never writes over a file it did not create, or a device
//! that carries a filesystem, a partition table or a mount, unless told `--destroy-data`;
//! reading is always allowed. And the targets refused before anything is written: a file in a
//! directory that does not exist (only storlab's own `storlab-scratch/` is created), and files
//! on kernel pseudo-filesystems (`/proc`, `/sys`); and copies a launcher (mpirun, srun) starts
//! as ranks of one run, which would each write the same targets. Loop-device tests need root, `losetup` and
//! `mkfs.ext4`, and skip with a reason elsewhere.

use crate::harness::{
    LoopDevice, MIB, RunArgs, at, load_json, loop_skip_reason, run_in, scratch, skip, sparse_image,
    str_at, u64_at,
};
use crate::placement::Mounted;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use storlab::testing::{TargetAction, TargetError, TargetRequest, target};

/// A 1 s one-line run of 4 KiB I/O at queue depth 4 on `target` (as it is: no size) with
/// `extra` flags, results in `NAME.json`.
fn run_on(dir: &Path, target: &Path, name: &str, extra: &[&str]) -> crate::harness::Outcome {
    RunArgs::target(target)
        .flags(&["--bs", "4k", "--qd", "4", "--duration", "1s"])
        .results(&dir.join(format!("{name}.json")))
        .flags(extra)
        .run(dir)
}

#[test]
fn foreign_file_is_not_written_without_destroy_data() {
    let dir = scratch();
    let foreign = dir.path().join("someones-data.bin");
    // 1 MiB of someone's data (not zeros, not ours).
    let content: Vec<u8> = (0..MIB as usize)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&foreign, &content).unwrap();

    // A write workload is refused, and the file is left as it was.
    run_on(dir.path(), &foreign, "w", &["--read", "70"])
        .expect_code(2)
        .stderr_has(&["not created by storlab", "--destroy-data"]);
    assert!(
        std::fs::read(&foreign).unwrap() == content,
        "the file changed"
    );
    assert!(!dir.path().join("w.json").exists());
    let manifest = dir.path().join("someones-data.bin.storlab.json");
    assert!(!manifest.exists(), "a refused run wrote a manifest");

    // Reading it is fine, as it is (no preparation, no manifest, no change).
    run_on(dir.path(), &foreign, "r", &["--read", "100"]).expect_ok();
    let v = load_json(&dir.path().join("r.json"));
    assert!(u64_at(&v, "/totals/read/ops") > 0);
    assert_eq!(u64_at(&v, "/totals/write/ops"), 0);
    assert_eq!(u64_at(&v, "/targets/0/prepare/written_bytes"), 0);
    assert!(
        std::fs::read(&foreign).unwrap() == content,
        "a read-only run changed the file"
    );
    assert!(!manifest.exists(), "a read-only run wrote a manifest");

    // With --destroy-data the write run goes ahead.
    run_on(
        dir.path(),
        &foreign,
        "d",
        &["--read", "70", "--destroy-data"],
    )
    .expect_ok();
    let v = load_json(&dir.path().join("d.json"));
    assert_eq!(at(&v, "/interrupted"), &serde_json::Value::Bool(false));
    assert!(u64_at(&v, "/totals/write/ops") > 0);
    assert!(std::fs::read(&foreign).unwrap() != content);
}

/// Every file and directory under `dir`, sorted.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        out.push(entry.path());
        if entry.path().is_dir() {
            out.extend(listing(&entry.path()));
        }
    }
    out.sort();
    out
}

/// `storlab run --target TARGET --size 16MiB --duration 1s` in `dir`, results in `r.json`.
fn sized_run(dir: &Path, target: &str) -> crate::harness::Outcome {
    RunArgs::target(Path::new(target))
        .size("16MiB")
        .flags(&["--bs", "4k", "--ramp", "0s", "--duration", "1s"])
        .results(Path::new("r.json"))
        .run(dir)
}

#[test]
fn missing_directory_is_refused_and_only_the_scratch_directory_is_created() {
    let dir = scratch();
    // A mistyped mount point, absolute and relative: refused, nothing created.
    let missing = dir.path().join("mnt/fats");
    let target = missing.join("bench.dat");
    sized_run(dir.path(), target.to_str().unwrap())
        .expect_code(2)
        .stderr_has(&[
            &format!("the directory {} does not exist", missing.display()),
            "create it, or mount the storage to test there",
        ]);
    sized_run(dir.path(), "data/bench.dat")
        .expect_code(2)
        .stderr_has(&["the directory data does not exist"]);
    // `..` leaves the scratch directory: not created either.
    sized_run(dir.path(), "storlab-scratch/../elsewhere/bench.dat")
        .expect_code(2)
        .stderr_has(&["does not exist"]);
    assert_eq!(
        listing(dir.path()),
        Vec::<PathBuf>::new(),
        "a refused run left files"
    );

    // storlab's own scratch directory is created, as the default job needs it.
    run_in(
        dir.path(),
        [
            "run",
            "--size",
            "16MiB",
            "--ramp",
            "0s",
            "--duration",
            "1s",
            "-q",
            "-o",
            "default.json",
        ],
    )
    .expect_ok();
    let default = dir.path().join("storlab-scratch/storlab-default.dat");
    assert_eq!(std::fs::metadata(&default).unwrap().len(), 16 * MIB);
    let v = load_json(&dir.path().join("default.json"));
    assert_eq!(u64_at(&v, "/targets/0/prepare/written_bytes"), 16 * MIB);
    // And deeper directories under it (presets use storlab-scratch/presets/).
    sized_run(dir.path(), "./storlab-scratch/presets/x.dat").expect_ok();
    assert!(dir.path().join("storlab-scratch/presets/x.dat").is_file());
}

#[test]
fn files_on_pseudo_filesystems_are_refused_naming_the_filesystem() {
    let dir = scratch();
    let thp = "/sys/kernel/mm/transparent_hugepage/enabled";
    let setting = std::fs::read(thp).ok();
    for (target, filesystem) in [("/proc/self/mem", "proc"), (thp, "sysfs")] {
        if !Path::new(target).exists() {
            skip(
                "files_on_pseudo_filesystems_are_refused_naming_the_filesystem",
                &format!("{target} does not exist here"),
            );
            continue;
        }
        sized_run(dir.path(), target).expect_code(2).stderr_has(&[
            target,
            &format!("is on {filesystem}, a kernel pseudo-filesystem"),
        ]);
        assert!(!Path::new(&format!("{target}.storlab.json")).exists());
    }
    assert_eq!(std::fs::read(thp).ok(), setting, "{thp} changed");
    assert_eq!(
        listing(dir.path()),
        Vec::<PathBuf>::new(),
        "a refused run left files"
    );
}

fn mkfs_ext4(device: &Path) {
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(device)
        .output()
        .unwrap();
    assert!(
        mkfs.status.success(),
        "mkfs.ext4 {} failed: {}",
        device.display(),
        String::from_utf8_lossy(&mkfs.stderr)
    );
}

fn device_request(path: &Path, writes: bool, destroy_data: bool) -> TargetRequest {
    TargetRequest {
        path: path.to_path_buf(),
        size_bytes: None,
        buffered: false,
        dsync: false,
        osync: false,
        fresh: false,
        writes,
        destroy_data,
        shared: false,
    }
}

#[test]
fn loop_device_with_ext4_is_not_written_without_destroy_data() {
    const TEST: &str = "loop_device_with_ext4_is_not_written_without_destroy_data";
    if let Some(reason) = loop_skip_reason(&["mkfs.ext4"]) {
        return skip(TEST, &reason);
    }
    let dir = scratch();
    let image = dir.path().join("ext4.img");
    sparse_image(&image, 64 * MIB);
    mkfs_ext4(&image);
    let before = std::fs::read(&image).unwrap();
    let device = match LoopDevice::attach(&image, false) {
        Ok(d) => d,
        Err(e) => return skip(TEST, &e),
    };
    let link = dir.path().join("disk-link");
    std::os::unix::fs::symlink(&device.path, &link).unwrap();

    for (name, path) in [("dev", device.path.as_path()), ("link", link.as_path())] {
        run_on(dir.path(), path, name, &["--read", "70"])
            .expect_code(2)
            .stderr_has(&["ext4 signature at offset 1080", "--destroy-data"]);
        assert!(!dir.path().join(format!("{name}.json")).exists());
    }

    // Read-only is allowed, on the device and through the link; nothing is prepared.
    run_on(dir.path(), &link, "ro", &["--read", "100", "--sync"]).expect_ok();
    let v = load_json(&dir.path().join("ro.json"));
    assert_eq!(str_at(&v, "/targets/0/kind"), "block_device");
    assert_eq!(u64_at(&v, "/targets/0/size_bytes"), 64 * MIB);
    assert_eq!(u64_at(&v, "/targets/0/logical_block_size_bytes"), 512);
    assert_eq!(at(&v, "/targets/0/direct"), &serde_json::Value::Bool(true));
    assert_eq!(at(&v, "/targets/0/dsync"), &serde_json::Value::Bool(true));
    assert_eq!(u64_at(&v, "/targets/0/prepare/written_bytes"), 0);
    assert!(u64_at(&v, "/totals/read/ops") > 0);
    assert_eq!(u64_at(&v, "/totals/write/ops"), 0);
    // A size beyond the device is a usage error.
    run_on(
        dir.path(),
        &link,
        "big",
        &["--read", "100", "--size", "128MiB"],
    )
    .expect_code(2)
    .stderr_has(&["larger than the device (67108864 bytes)"]);

    // The preview says the same, without writing.
    let preview = target::preview(&device_request(&link, true, false));
    assert_eq!(
        preview.canonical_path.as_deref(),
        Some(device.path.as_path())
    );
    assert_eq!(preview.kind, Some(target::TargetKind::BlockDevice));
    assert_eq!(preview.placement.device, Some(device.name()));
    match preview.outcome {
        Err(TargetError::Guarded { findings, .. }) => {
            assert_eq!(findings, ["ext4 signature at offset 1080"]);
        }
        other => panic!("expected Guarded, got {other:?}"),
    }
    assert_eq!(
        target::preview(&device_request(&link, false, false))
            .outcome
            .unwrap(),
        TargetAction::UseAsIs {
            size_bytes: 64 * MIB,
            writes: false,
            destroys: Vec::new()
        }
    );
    assert_eq!(
        target::preview(&device_request(&device.path, true, true))
            .outcome
            .unwrap(),
        TargetAction::UseAsIs {
            size_bytes: 64 * MIB,
            writes: true,
            destroys: vec!["ext4 signature at offset 1080".into()]
        }
    );

    // Mounted: the mount point is named too.
    let point = dir.path().join("mnt");
    match Mounted::new("ext4", &device.path, &point, "ro") {
        Ok(mounted) => {
            run_on(dir.path(), &device.path, "mounted", &["--read", "70"])
                .expect_code(2)
                .stderr_has(&[
                    &format!("mounted on {}", point.display()),
                    "ext4 signature at offset 1080",
                ]);
            // --destroy-data never lifts it: the message says to unmount, and never suggests
            // the flag.
            let forced = ["--read", "70", "--destroy-data"];
            let out = run_on(dir.path(), &device.path, "mounted-forced", &forced);
            out.expect_code(2).stderr_has(&["unmount", "mounted on"]);
            assert!(!out.stderr.contains("--destroy-data"), "{}", out.stderr);
            drop(mounted);
        }
        Err(e) => skip(TEST, &format!("mounted part: {e}")),
    }
    assert!(
        std::fs::read(&image).unwrap() == before,
        "the filesystem image changed"
    );

    // With --destroy-data the write run goes ahead.
    run_on(
        dir.path(),
        &device.path,
        "d",
        &["--read", "70", "--size", "1MiB", "--destroy-data"],
    )
    .expect_ok();
    let v = load_json(&dir.path().join("d.json"));
    assert!(u64_at(&v, "/totals/write/ops") > 0);
    drop(device);
    assert!(std::fs::read(&image).unwrap() != before);
}

/// `losetup -f --show -P IMAGE` (detached on drop) and its partition 1, once it appears. A
/// kernel built without the DOS partition parser does not scan the table itself: then
/// `partx -a` (util-linux) reads it and adds the partition.
fn attach_partitioned(image: &Path) -> Result<(LoopDevice, PathBuf), String> {
    let output = Command::new("losetup")
        .args(["-f", "--show", "-P"])
        .arg(image)
        .output()
        .map_err(|e| format!("cannot run losetup: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "losetup -P failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let device = LoopDevice {
        path: PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()),
    };
    let partition = PathBuf::from(format!("{}p1", device.path.display()));
    let appears = |within: Duration| {
        let deadline = Instant::now() + within;
        while !partition.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        partition.exists()
    };
    if !appears(Duration::from_secs(1)) {
        let partx = Command::new("partx")
            .arg("-a")
            .arg(&device.path)
            .output()
            .map_err(|e| format!("the kernel did not scan the partition table, and partx: {e}"))?;
        if !partx.status.success() || !appears(Duration::from_secs(5)) {
            return Err(format!(
                "{} did not appear (partx -a: {})",
                partition.display(),
                String::from_utf8_lossy(&partx.stderr).trim()
            ));
        }
    }
    Ok((device, partition))
}

#[test]
fn loop_device_with_partitions_is_not_written_without_destroy_data() {
    const TEST: &str = "loop_device_with_partitions_is_not_written_without_destroy_data";
    if let Some(reason) = loop_skip_reason(&["mkfs.ext4"]) {
        return skip(TEST, &reason);
    }
    let dir = scratch();
    let image = dir.path().join("parted.img");
    sparse_image(&image, 64 * MIB);
    // A DOS partition table with one Linux partition at 1 MiB, 32 MiB long.
    let mut mbr = [0u8; 512];
    mbr[446 + 4] = 0x83;
    mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
    mbr[446 + 12..446 + 16].copy_from_slice(&65536u32.to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    std::os::unix::fs::FileExt::write_all_at(
        &std::fs::OpenOptions::new()
            .write(true)
            .open(&image)
            .unwrap(),
        &mbr,
        0,
    )
    .unwrap();
    let (device, partition) = match attach_partitioned(&image) {
        Ok(attached) => attached,
        Err(e) => return skip(TEST, &e),
    };
    let partition_name = format!("{}p1", device.name());

    run_on(dir.path(), &device.path, "disk", &["--read", "70"])
        .expect_code(2)
        .stderr_has(&[
            &format!("has partitions {partition_name}"),
            "dos partition table (mbr) at offset 510",
        ]);
    mkfs_ext4(&partition);
    run_on(dir.path(), &partition, "part", &["--read", "70"])
        .expect_code(2)
        .stderr_has(&["ext4 signature at offset 1080"]);

    let point = dir.path().join("mnt");
    match Mounted::new("ext4", &partition, &point, "ro") {
        Ok(mounted) => {
            let on = format!("mounted on {}", point.display());
            run_on(dir.path(), &device.path, "disk-mounted", &["--read", "70"])
                .expect_code(2)
                .stderr_has(&[&format!("{partition_name} {on}")]);
            run_on(dir.path(), &partition, "part-mounted", &["--read", "70"])
                .expect_code(2)
                .stderr_has(&[&on]);
            drop(mounted);
        }
        Err(e) => skip(TEST, &format!("mounted part: {e}")),
    }
    assert_eq!(
        std::fs::read(&image).unwrap()[..512],
        mbr[..],
        "the partition table changed"
    );
    let left: Vec<_> = ["disk", "part", "disk-mounted", "part-mounted"]
        .iter()
        .filter(|n| dir.path().join(format!("{n}.json")).exists())
        .collect();
    assert!(left.is_empty(), "refused runs wrote results: {left:?}");
}

#[test]
fn copies_a_launcher_starts_as_ranks_of_one_run_are_refused_before_any_io() {
    // `mpirun -np 3 storlab run` without MPI support, or by a launcher whose MPI is not the
    // one storlab was built with (each copy then sees a world of one): three copies, each
    // believing it is alone, would write the same targets. Each refuses, with nothing written.
    let dir = crate::harness::scratch();
    let jobs = crate::harness::scratch();
    let job = crate::harness::write_job(
        jobs.path(),
        "job.toml",
        &format!(
            "[[target]]\nname = \"t\"\npath = \"{}\"\nsize = \"1MiB\"\n\n[[worker]]\ntarget = \"t\"\n\n[[worker.access]]\nbs = \"4k\"\nread = 100\n\n[timing]\nduration = \"1s\"\n",
            dir.path().join("t.dat").display()
        ),
    );
    let run = ["run", job.to_str().unwrap()];
    for (var, value) in [
        ("OMPI_COMM_WORLD_SIZE", "3"),
        ("PMI_SIZE", "2"),
        ("SLURM_STEP_NUM_TASKS", "4"),
    ] {
        for command in [&run[..], &["exchange"], &["users"], &["database"]] {
            let output = std::process::Command::new(crate::harness::STORLAB)
                .current_dir(dir.path())
                .args(command)
                .env(var, value)
                .stdin(std::process::Stdio::null())
                .output()
                .expect("start storlab");
            let out = crate::harness::Outcome::from_output(&output);
            out.expect_code(2);
            assert!(
                out.stderr
                    .contains(&format!("one of {value} ranks ({var}={value})")),
                "{var}: {}",
                out.stderr
            );
        }
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing was created"
    );
    // One rank of one: runs as usual.
    let output = std::process::Command::new(crate::harness::STORLAB)
        .current_dir(dir.path())
        .args(["run", "--dry-run"])
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .output()
        .expect("start storlab");
    crate::harness::Outcome::from_output(&output).expect_code(0);
}
