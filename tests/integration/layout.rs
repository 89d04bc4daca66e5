//! The shape of the code, kept by tests (docs/architecture.md): dependencies point one way
//! (units → input → job, stats → files → engine → results (with the workloads' sections) → cache, cluster, trace
//! → run, report, live → workloads (with their views) → cli; the importers, `import`, use `job` and are used by
//! `cli` alone), every source file is on the map, no source file grows
//! past about 800 lines, and `unsafe` lives only in `engine/ring.rs` and `engine/buf.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The crate's layers and what each may use (besides the crate root's items: `Usage`, `exit`,
/// `fault`, `bell`).
/// A layer is a top-level module, except `sections`: each workload's
/// `section.rs`, its part of the results file, which sits with `results`; and `views`: each
/// workload's `view.rs` (or `view/`), its part of the reports, which the report calls through
/// `report::view::View` without naming it.
const ALLOWED: &[(&str, &[&str])] = &[
    ("units", &[]),
    ("fault", &[]),
    ("bell", &[]),
    ("input", &["units"]),
    ("job", &["input", "units"]),
    ("stats", &["input", "units"]),
    ("files", &["input", "stats", "units"]),
    ("engine", &["files", "input", "job", "stats", "units"]),
    (
        "results",
        &["files", "input", "job", "sections", "stats", "units"],
    ),
    ("sections", &["input", "job", "stats", "units"]),
    (
        "cache",
        &["engine", "input", "job", "results", "stats", "units"],
    ),
    ("cluster", &["input", "job", "results", "stats", "units"]),
    (
        "trace",
        &["engine", "input", "job", "results", "stats", "units"],
    ),
    (
        "run",
        &[
            "cache", "cluster", "engine", "files", "input", "job", "results", "stats", "trace",
            "units",
        ],
    ),
    (
        "workloads",
        &[
            "engine", "files", "input", "job", "report", "results", "run", "sections", "stats",
            "units", "views",
        ],
    ),
    (
        "views",
        &[
            "input", "job", "report", "results", "sections", "stats", "units",
        ],
    ),
    (
        "report",
        &[
            "cache", "input", "job", "results", "sections", "stats", "units",
        ],
    ),
    ("live", &["input", "job", "results", "stats", "units"]),
    // The importers: other tools' files into jobs; only the command line uses them.
    ("import", &["input", "job", "results", "units"]),
    (
        "cli",
        &[
            "cache",
            "cluster",
            "engine",
            "files",
            "import",
            "input",
            "job",
            "live",
            "report",
            "results",
            "run",
            "sections",
            "stats",
            "trace",
            "units",
            "views",
            "workloads",
        ],
    ),
    // The fuzz targets' entry points: each parser, then what its output leads to.
    (
        "fuzzing",
        &[
            "cache",
            "files",
            "import",
            "input",
            "job",
            "report",
            "results",
            "sections",
            "stats",
            "trace",
            "units",
            "workloads",
        ],
    ),
];

/// Longest source file allowed, lines.
const MAX_LINES: usize = 850;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

use crate::cycles::rust_files;

#[test]
fn every_source_file_is_on_the_map() {
    let map =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let missing: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(src()).unwrap().display().to_string())
        .filter(|rel| !map.contains(&format!("`{rel}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "source files missing from the map in docs/architecture.md (each as `path/from/src.rs`):\n{}",
        missing.join("\n")
    );
}

/// Each module's dependencies (the modules its product code names, `super::` and `self::`
/// paths resolved; see `cycles`), as layers: the product's, not its tests'. Tests may check a
/// layer's output through the layers above it (a workload's console line, a Jetstress file run
/// through the command line): they are not the crate's dependencies, and no cycle of the
/// product passes through them.
#[test]
fn dependencies_point_one_way() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut wrong = Vec::new();
    for (module, reached) in crate::cycles::graph(&src()) {
        let from = crate::cycles::layer(&module);
        if module.is_empty() {
            continue;
        }
        let Some(ok) = allowed.get(from.as_str()) else {
            panic!(
                "{}: a top-level module missing from ALLOWED (and from docs/architecture.md)",
                module.join("::")
            );
        };
        for to in reached {
            let used = crate::cycles::layer(&to);
            // The crate root's items (`Usage`, `exit`) and its two leaves every layer may use.
            let root_item = ["exit", "fault", "bell"].contains(&used.as_str());
            if used != from && !root_item && !ok.contains(&used.as_str()) {
                wrong.push(format!("{} uses {}", module.join("::"), to.join("::")));
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

/// The `a::b::c` paths of the crate's picture (the text block of `src/lib.rs`): each names a
/// module file or folder, or an item (a type, function, module, re-export) of one.
fn picture_paths() -> Vec<String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let picture: String = lib
        .lines()
        .skip_while(|l| !l.starts_with("//! ```text"))
        .skip(1)
        .take_while(|l| !l.starts_with("//! ```"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut paths = Vec::new();
    for word in picture.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '{'))
    {
        let word = word.trim_matches(':');
        if !word.contains("::") || word.contains('{') {
            continue;
        }
        paths.push(word.to_string());
    }
    // `report::{console, html, ...}`: each name after the braces.
    for (head, rest) in picture
        .match_indices("::{")
        .map(|(i, _)| picture.split_at(i))
    {
        let module = head
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .next()
            .unwrap();
        let names = &rest[3..rest.find('}').unwrap()];
        for name in names.split(',') {
            paths.push(format!("{module}::{}", name.trim()));
        }
    }
    paths
}

/// Whether `path` (`a::b::c`, from the crate's root) is a module or an item of this crate.
fn resolves(path: &str) -> bool {
    let mut dir = src();
    let mut file: Option<PathBuf> = Some(src().join("lib.rs"));
    let parts: Vec<&str> = path.split("::").collect();
    for (i, part) in parts.iter().enumerate() {
        let as_file = dir.join(format!("{part}.rs"));
        let as_dir = dir.join(part).join("mod.rs");
        if as_file.exists() || as_dir.exists() {
            file = Some(if as_file.exists() { as_file } else { as_dir });
            dir = dir.join(part);
            continue;
        }
        // The rest must be an item of the last module found, declared or re-exported there.
        if i + 1 != parts.len() {
            return false;
        }
        let text = std::fs::read_to_string(file.take().unwrap()).unwrap();
        let declared = [
            "fn", "struct", "enum", "trait", "type", "mod", "const", "static",
        ]
        .iter()
        .any(|kw| {
            text.contains(&format!("{kw} {part}("))
                || text.contains(&format!("{kw} {part} "))
                || text.contains(&format!("{kw} {part}<"))
                || text.contains(&format!("{kw} {part};"))
        });
        let reexported = text.lines().any(|l| {
            let l = l.trim_start();
            (l.starts_with("pub use") || l.starts_with("pub(crate) use"))
                && l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == *part)
        });
        return declared || reexported;
    }
    true
}

#[test]
fn the_crates_picture_names_only_what_exists() {
    let paths = picture_paths();
    assert!(
        paths.len() >= 20,
        "the picture's paths were not read: {paths:?}"
    );
    let stale: Vec<&String> = paths.iter().filter(|p| !resolves(p)).collect();
    assert!(
        stale.is_empty(),
        "src/lib.rs's picture names what no longer exists: {stale:?}"
    );
    // A planted stale name is caught.
    assert!(!resolves("run::exchange"));
    assert!(!resolves("profiles::exchange"));
    assert!(resolves("workloads::plain::steps"));
}

#[test]
fn the_long_functions_are_the_ones_the_architecture_lists() {
    let doc = std::fs::read_to_string(src().join("../docs/architecture.md")).unwrap();
    let section: &str = doc
        .split("- clippy's `too_many_lines`")
        .nth(1)
        .and_then(|s| s.split("\n- ").next())
        .expect("docs/architecture.md states the function-length limit");
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut allowed = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        if crate::cycles::product_code(file, &text).contains("allow(clippy::too_many_lines)") {
            let rel = file.strip_prefix(src().parent().unwrap()).unwrap();
            allowed.push(rel.display().to_string());
        }
    }
    assert!(
        !allowed.is_empty(),
        "no exception found: the search is broken"
    );
    for file in &allowed {
        assert!(
            section.contains(&format!("`{file}`")),
            "{file} allows a function over 150 lines, but docs/architecture.md (\"Limits that keep it this way\") does not list it"
        );
    }
    let listed = section.matches("- `src/").count();
    assert_eq!(
        listed,
        allowed.len(),
        "docs/architecture.md lists {listed} exceptions, the code has {allowed:?}"
    );
}

/// One place saves results: the run layer (`run/`, through `Execute::save` for what a
/// workload makes of its runs). No other layer's product code writes a results file.
#[test]
fn only_the_run_layer_saves_results() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let saving: Vec<String> = files
        .iter()
        .filter(|f| !f.starts_with(src().join("run")) && !f.starts_with(src().join("results")))
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            crate::cycles::product_code(f, &text).contains("file::save(")
        })
        .map(|f| f.strip_prefix(src()).unwrap().display().to_string())
        .collect();
    // The one exception: `storlab trace import`, which writes a block trace as results and
    // runs nothing.
    assert_eq!(saving, ["trace/import.rs"], "save through Execute::save");
}
