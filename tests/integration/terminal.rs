//! The terminal's part: `storlab --version` with the build's details, shell completion scripts
//! that bash loads and completes with, and man pages that `man` renders.

use crate::harness::{STORLAB, run_in, scratch, skip};
use std::process::Command;

#[test]
fn the_long_version_says_what_was_built() {
    let dir = scratch();
    let out = run_in(dir.path(), ["--version"]);
    out.expect_code(0);
    let v = out.stdout.trim();
    assert!(
        v.starts_with(&format!("storlab {} (", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    assert!(
        v.contains("commit ") || v.contains("no git commit recorded"),
        "{v}"
    );
    for part in ["build;", "features: ", "built with rustc "] {
        assert!(v.contains(part), "{part}: {v}");
    }
    // -V stays short.
    let short = run_in(dir.path(), ["-V"]);
    assert_eq!(
        short.stdout.trim(),
        format!("storlab {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn bash_loads_the_completions_and_completes_subcommands_and_flags() {
    let script = format!(
        "source <('{STORLAB}' completions bash) || exit 9\n\
         complete -p storlab\n\
         COMP_WORDS=(storlab ''); COMP_CWORD=1; _storlab storlab '' storlab; echo \"words: ${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(storlab exchange --cache-); COMP_CWORD=2; _storlab storlab --cache- exchange; echo \"flags: ${{COMPREPLY[*]}}\"\n"
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("bash");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("-F _storlab storlab"), "{text}");
    let words = text.lines().find(|l| l.starts_with("words: ")).unwrap();
    for sub in [
        "run",
        "exchange",
        "users",
        "database",
        "cache-curve",
        "completions",
        "man",
    ] {
        assert!(words.split_whitespace().any(|w| w == sub), "{sub}: {words}");
    }
    let flags = text.lines().find(|l| l.starts_with("flags: ")).unwrap();
    for flag in [
        "--cache-device",
        "--cache-size",
        "--cache-policy",
        "--cache-write",
    ] {
        assert!(
            flags.split_whitespace().any(|w| w == flag),
            "{flag}: {flags}"
        );
    }
}

#[test]
fn zsh_and_fish_scripts_name_every_subcommand() {
    let dir = scratch();
    for shell in ["zsh", "fish"] {
        let out = run_in(dir.path(), ["completions", shell]);
        out.expect_code(0);
        for sub in ["run", "exchange", "users", "database", "compare", "report"] {
            assert!(out.stdout.contains(sub), "{shell}: {sub}");
        }
    }
    run_in(dir.path(), ["completions", "tcsh"]).expect_code(2);
}

#[test]
fn man_renders_the_pages() {
    let dir = scratch();
    let pages = dir.path().join("man");
    std::fs::create_dir(&pages).unwrap();
    run_in(dir.path(), ["man", "-o", pages.to_str().unwrap()]).expect_code(0);
    for page in [
        "storlab.1",
        "storlab-run.1",
        "storlab-exchange.1",
        "storlab-users.1",
        "storlab-database.1",
    ] {
        assert!(pages.join(page).exists(), "{page}");
    }
    let printed = run_in(dir.path(), ["man"]);
    printed.expect_code(0);
    assert!(printed.stdout.starts_with(".ie"), "roff");
    assert!(printed.stdout.contains(".TH storlab 1"));
    // Not a directory: a usage error.
    run_in(
        dir.path(),
        ["man", "-o", pages.join("storlab.1").to_str().unwrap()],
    )
    .expect_code(2);
    if Command::new("man").arg("--version").output().is_err() {
        skip(
            "man_renders_the_pages",
            "man is not installed (Debian: man-db)",
        );
        return;
    }
    let out = Command::new("man")
        .args(["-l", pages.join("storlab-exchange.1").to_str().unwrap()])
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .expect("man");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("--compare-cache"), "{text}");
    assert!(text.contains("--find-max-mailboxes"), "{text}");
}
