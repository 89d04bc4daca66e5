//! The shape of the code, kept by tests (docs/architecture.md): dependencies point one way
//! (units → job, stats → engine → results → cache, profiles, trace → users → run → report, live → cli), no
//! source file grows past about 800 lines, and `unsafe` lives only in `engine/ring.rs` and `engine/buf.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crate's top-level modules and what each may use (besides the crate root's `Usage` and
/// `exit`).
const ALLOWED: &[(&str, &[&str])] = &[
    ("units", &[]),
    ("job", &["units"]),
    ("stats", &["units"]),
    ("engine", &["job", "stats", "units"]),
    ("results", &["job", "stats", "units"]),
    ("cache", &["engine", "job", "results", "stats", "units"]),
    ("cluster", &["job", "results", "stats", "units"]),
    ("profiles", &["job", "results", "stats", "units"]),
    ("trace", &["engine", "job", "results", "stats", "units"]),
    (
        "users",
        &["engine", "job", "profiles", "results", "stats", "units"],
    ),
    (
        "run",
        &[
            "cache", "cluster", "engine", "job", "profiles", "results", "stats", "trace", "units",
            "users",
        ],
    ),
    ("report", &["cache", "job", "results", "stats", "units"]),
    ("live", &["job", "results", "stats", "units"]),
    (
        "cli",
        &[
            "cache", "cluster", "engine", "job", "live", "profiles", "report", "results", "run",
            "stats", "trace", "units", "users",
        ],
    ),
];

/// Longest source file allowed, lines.
const MAX_LINES: usize = 850;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source directory") {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`src/run/steps.rs` → `run`).
fn module_of(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_string())
}

/// The crate modules a file names (`crate::X`, `storlab::X`), outside comments.
fn uses(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for prefix in ["crate::"] {
            let mut rest = code;
            while let Some(at) = rest.find(prefix) {
                rest = &rest[at + prefix.len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        }
    }
    found
}

#[test]
fn dependencies_point_one_way() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let Some(module) = module_of(file) else {
            continue;
        };
        let Some(ok) = allowed.get(module.as_str()) else {
            // The crate root and the binary.
            assert!(
                ["lib", "main"].contains(&module.as_str()),
                "{}: a top-level module missing from ALLOWED (and from docs/architecture.md)",
                file.display()
            );
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for used in uses(&text) {
            let root_item =
                used.chars().next().is_some_and(|c| c.is_ascii_uppercase()) || used == "exit";
            if used != module && !root_item && !ok.contains(&used.as_str()) {
                wrong.push(format!("{} uses {used}", file.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies against the map in docs/architecture.md:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_source_file_is_too_long() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        &mut files,
    );
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).ok()?.lines().count();
            (n > MAX_LINES).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these by what they own (at most {MAX_LINES} lines):\n{}",
        long.join("\n")
    );
}

#[test]
fn unsafe_code_lives_in_the_ring_and_the_buffers_only() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let allowed = [src().join("engine/ring.rs"), src().join("engine/buf.rs")];
    let with_unsafe: Vec<String> = files
        .iter()
        .filter(|f| !allowed.contains(f))
        .filter(|f| {
            std::fs::read_to_string(f).unwrap().lines().any(|l| {
                let code = l.split("//").next().unwrap_or("");
                code.contains("unsafe ") || code.contains("unsafe{")
            })
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        with_unsafe.is_empty(),
        "unsafe outside ring.rs and buf.rs: {with_unsafe:?}"
    );
}
