//! Build details for `storlab --version`: the git commit (when built from a git checkout), the
//! target, the profile, the features and the compiler.

use std::process::Command;

fn main() {
    let run = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = run("git", &["rev-parse", "--short=12", "HEAD"]);
    let dirty = run("git", &["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|s| !s.is_empty());
    let commit = match commit {
        Some(c) if dirty => format!("commit {c} with local changes"),
        Some(c) => format!("commit {c}"),
        None => "no git commit recorded".into(),
    };
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let compiler = run(&rustc, &["-V"]).unwrap_or_else(|| "rustc (version unknown)".into());
    let target = std::env::var("TARGET").unwrap_or_default();
    let profile = std::env::var("PROFILE").unwrap_or_default();
    let features = if std::env::var_os("CARGO_FEATURE_MPI").is_some() {
        "features: mpi"
    } else {
        "features: none"
    };
    println!(
        "cargo:rustc-env=STORLAB_LONG_VERSION={} ({commit}; {target}, {profile} build; {features}; built with {compiler})",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
    for path in [".git/HEAD", ".git/index"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
