//! The destroy-data guard: storlab never writes over a file it did not create or a device that
//! carries a filesystem unless told `--destroy-data`; reading is always allowed.

use crate::harness::{
    LoopDevice, MIB, at, load_json, loop_skip_reason, run_in, scratch, skip, sparse_image, str_at,
    u64_at,
};
use std::path::Path;
use std::process::Command;

fn run_on(dir: &Path, target: &Path, name: &str, extra: &[&str]) -> crate::harness::Outcome {
    let results = dir.join(format!("{name}.json"));
    let mut args = vec![
        "run",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "4k",
        "--qd",
        "4",
        "--duration",
        "1s",
        "-q",
        "-o",
        results.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run_in(dir, &args)
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

#[test]
fn loop_device_with_ext4_is_not_written_without_destroy_data() {
    const TEST: &str = "loop_device_with_ext4_is_not_written_without_destroy_data";
    if let Some(reason) = loop_skip_reason(&["mkfs.ext4"]) {
        return skip(TEST, &reason);
    }
    let dir = scratch();
    let image = dir.path().join("ext4.img");
    sparse_image(&image, 64 * MIB);
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&image)
        .output()
        .unwrap();
    assert!(
        mkfs.status.success(),
        "mkfs.ext4 failed: {}",
        String::from_utf8_lossy(&mkfs.stderr)
    );
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
            .stderr_has(&["ext", "1080", "--destroy-data"]);
        assert!(!dir.path().join(format!("{name}.json")).exists());
    }

    // Read-only is allowed, on the device and through the link.
    run_on(dir.path(), &link, "ro", &["--read", "100"]).expect_ok();
    let v = load_json(&dir.path().join("ro.json"));
    assert_eq!(str_at(&v, "/targets/0/kind"), "block_device");
    assert_eq!(u64_at(&v, "/targets/0/size_bytes"), 64 * MIB);
    assert!(u64_at(&v, "/totals/read/ops") > 0);
    assert_eq!(u64_at(&v, "/totals/write/ops"), 0);

    drop(device);
    assert!(
        std::fs::read(&image).unwrap() == before,
        "the filesystem image changed"
    );
}
