//! Packages (`packaging/build.sh`): the `.deb`, built around the binary under test, unpacked
//! into a scratch root with `dpkg -x` runs `storlab --version` and carries the man pages and
//! shell completions. (The static musl binary is built by the same script; building it is a
//! release build for another target, too long for the test suite: docs/guide.md says how it was
//! checked.)

use crate::harness::{STORLAB, scratch, skip};
use std::path::Path;
use std::process::Command;

#[test]
fn the_deb_unpacks_into_a_scratch_root_and_runs() {
    let test = "the_deb_unpacks_into_a_scratch_root_and_runs";
    if Command::new("dpkg-deb").arg("--version").output().is_err() {
        skip(test, "dpkg-deb is not installed (Debian: dpkg)");
        return;
    }
    let dir = scratch();
    let out = dir.path().join("out");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/build.sh");
    let built = Command::new("bash")
        .arg(&script)
        .args(["deb", "--binary", STORLAB, "--out"])
        .arg(&out)
        // gzip: the package is the same, built in a fraction of xz's time (a debug binary).
        .env("DEB_COMPRESSION", "gzip")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&built.stdout);
    assert!(
        built.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let deb = said.trim().lines().last().unwrap().to_string();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        deb.ends_with(".deb") && deb.contains(&format!("storlab_{version}_")),
        "{deb}"
    );
    let field = |name: &str| {
        let o = Command::new("dpkg-deb")
            .args(["--field", &deb, name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    assert_eq!(field("Package"), "storlab");
    assert_eq!(field("Version"), version);
    assert!(
        field("Depends").starts_with("libc6"),
        "{}",
        field("Depends")
    );
    let root = dir.path().join("root");
    let unpacked = Command::new("dpkg")
        .args(["-x", &deb])
        .arg(&root)
        .status()
        .unwrap();
    assert!(unpacked.success());
    let run = Command::new(root.join("usr/bin/storlab"))
        .arg("--version")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && said.starts_with(&format!("storlab {version}")),
        "{said}"
    );
    for file in [
        "usr/share/man/man1/storlab.1.gz",
        "usr/share/man/man1/storlab-run.1.gz",
        "usr/share/bash-completion/completions/storlab",
        "usr/share/zsh/vendor-completions/_storlab",
        "usr/share/fish/vendor_completions.d/storlab.fish",
        "usr/share/doc/storlab/copyright",
    ] {
        let meta = std::fs::metadata(root.join(file));
        assert!(meta.is_ok_and(|m| m.len() > 0), "{file} in the package");
    }
    let completion =
        std::fs::read_to_string(root.join("usr/share/bash-completion/completions/storlab"))
            .unwrap();
    assert!(completion.contains("storlab"), "a bash completion script");
}
