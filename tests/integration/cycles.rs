//! The crate's modules as a graph (docs/architecture.md, "Layers"): which module each file's
//! product code names, with `crate::`, `super::` and `self::` paths resolved to the module
//! they reach (grouped imports expanded; a bare path through a child module too), and the
//! cycles of that graph. No cycle may span two top-level modules, counting every edge; within
//! one, a cycle among sibling modules (a folder's module naming its own parts is not one)
//! stays only where [`WITHIN`] says why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path in the crate: `["engine", "worker"]`; the crate root is empty.
pub(crate) type Module = Vec<String>;

/// Which modules each module's product code names.
pub(crate) type Graph = BTreeMap<Module, BTreeSet<Module>>;

/// The cycles that stay within a top-level module, each with why it stays. Each lists the
/// modules of one strongly connected part of the graph, sorted; a cycle not listed here, or
/// one listed that is gone or changed, fails the test below.
const WITHIN: &[(&[&str], &str)] = &[
    (
        &["engine::reduce", "engine::verify"],
        "reduced payloads carry verify's header and checksum; verify rebuilds a reduced block to check it",
    ),
    (
        &["engine::sample", "engine::worker"],
        "the worker drives the block sampler, which reports through the worker's messages",
    ),
    (
        &["engine::target::direct", "engine::target::plan"],
        "the plan asks a device its size; opening a target directly follows the plan",
    ),
    (
        &["job::data", "job::file", "job::spec", "job::uring"],
        "one job file's parse: `[data]` and `[io_uring]` are parts of the spec, read with its locations",
    ),
    (
        &["report::compare", "report::view"],
        "the comparison asks each room's view for its tables, which the view adds to the comparison",
    ),
    (
        &["report::console::summary", "report::console::tier"],
        "the summary places the cache tiers' section, which uses the summary's labelled lines",
    ),
    (
        &["results::blocks", "results::file", "results::validate"],
        "a results file's block sample is written beside it and checked as the file is loaded",
    ),
    (
        &["run::sources", "run::workers"],
        "a run's sources hand each worker its input; the workers' driver asks the sources for it",
    ),
    (
        &[
            "workloads::exchange::compare",
            "workloads::exchange::validation",
            "workloads::exchange::workload",
        ],
        "the workload runs the validation (twice to compare the cache), whose trials the workload describes line by line",
    ),
    (
        &[
            "workloads::fs::backend",
            "workloads::fs::config",
            "workloads::fs::figures",
            "workloads::fs::jobs",
            "workloads::fs::mdtest",
            "workloads::fs::passes",
            "workloads::fs::source",
            "workloads::fs::workload",
        ],
        "one workload: its configuration names its passes and mdtest's phases, which run through its jobs and sources",
    ),
];

/// Every module of the tree under `src` and its file (`mod.rs` is its folder's module;
/// `lib.rs` the root; `main.rs`, the binary, is not in the crate).
pub(crate) fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        if rel == Path::new("main.rs") {
            continue;
        }
        let mut parts: Module = rel
            .with_extension("")
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
            parts.pop();
        }
        out.insert(parts, file);
    }
    out
}

/// Every `.rs` file under `dir`, into `out`.
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source directory") {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The paths `code` names (`a::b`, from `crate`, `super`, `self`, a child module, another
/// crate or an item), each as its segments, a grouped import (`use crate::{a, b::{c, self}}`)
/// as one path per item.
pub(crate) fn named_paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let boundary = i == 0 || !(word(chars[i - 1]) || "_:$".contains(chars[i - 1]));
        if !(boundary && (chars[i].is_alphabetic() || chars[i] == '_')) {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < chars.len() && word(chars[end]) {
            end += 1;
        }
        if chars[end..].starts_with(&[':', ':']) {
            i = path_at(&chars, i, Vec::new(), &mut out);
        } else {
            i = end;
        }
    }
    out
}

/// Reads the path starting at `i` (after `prefix`), pushing each item it names; returns where
/// it ends.
fn path_at(chars: &[char], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    let mut segment = String::new();
    loop {
        let c = chars.get(i).copied();
        match c {
            Some(c) if c.is_alphanumeric() || c == '_' => segment.push(c),
            Some(':') if chars.get(i + 1) == Some(&':') => {
                path.push(std::mem::take(&mut segment));
                i += 1;
                if chars.get(i + 1) == Some(&'{') {
                    return group_at(chars, i + 2, path, out);
                }
            }
            _ => {
                if !segment.is_empty() {
                    path.push(segment);
                }
                if path.last().is_some_and(|s| s == "self") && path.len() > 1 {
                    path.pop();
                }
                out.push(path);
                return i;
            }
        }
        i += 1;
    }
}

/// Reads a group's items (from just after its `{`), each a path after `prefix`.
fn group_at(
    chars: &[char],
    mut i: usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        match chars.get(i) {
            None => return i,
            Some('}') => return i + 1,
            Some(c) if c.is_whitespace() || *c == ',' => i += 1,
            Some('*') => {
                out.push(prefix.clone());
                i += 1;
            }
            Some(_) => {
                let end = path_at(chars, i, prefix.clone(), out);
                // An item's `as` rename, up to the next comma or the group's end.
                i = end.max(i + 1);
                while chars.get(i).is_some_and(|c| *c != ',' && *c != '}') {
                    i += 1;
                }
            }
        }
    }
}

/// The module `path` reaches from module `at`: the longest prefix of it that is a module
/// (the rest names an item of that module).
pub(crate) fn resolve(
    at: &Module,
    path: &[String],
    modules: &BTreeMap<Module, PathBuf>,
) -> Option<Module> {
    let mut base: Module = at.clone();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self" | "super") => {
            // In `a/b.rs` and in `a/b/mod.rs` alike, `self` is `a::b` and `super` is `a`.
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "self" => {}
                    "super" => {
                        base.pop()?;
                    }
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        // A child module (`points::levels`), else another crate or an item: not a module.
        Some(first) => {
            base.push(first.to_string());
            if !modules.contains_key(&base) {
                return None;
            }
            base.pop();
        }
        None => return None,
    }
    base.extend(rest.iter().cloned());
    (0..=base.len())
        .rev()
        .map(|k| base[..k].to_vec())
        .find(|m| modules.contains_key(m))
}

/// The part of a file that builds the product: none of a test file (`tests.rs`,
/// `*_tests.rs`), and of any other the part before its test module; comments removed.
pub(crate) fn product_code(file: &Path, text: &str) -> String {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name == "tests.rs" || name.ends_with("_tests.rs") {
        return String::new();
    }
    let product = [
        "#[cfg(test)]\nmod tests",
        "#[cfg(test)]\npub(crate) mod tests",
    ]
    .iter()
    .filter_map(|m| text.find(m))
    .min()
    .map_or(text, |at| &text[..at]);
    product
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The graph of the crate under `src`: each module to the modules (other than itself and
/// the crate root, whose items every layer may use) its product code names.
pub(crate) fn graph(src: &Path) -> Graph {
    let modules = modules(src);
    let mut graph = Graph::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        let reached = graph.entry(module.clone()).or_default();
        for path in named_paths(&product_code(file, &text)) {
            if let Some(to) = resolve(module, &path, &modules) {
                if &to != module && !to.is_empty() {
                    reached.insert(to);
                }
            }
        }
    }
    graph
}

/// The top-level module (layer) of a module: its first segment, or `sections` for a
/// workload's part of the results file (`workloads::NAME::section`), which sits with
/// `results`.
pub(crate) fn layer(m: &Module) -> String {
    if m.len() == 3 && m[0] == "workloads" && m[2] == "section" {
        return "sections".into();
    }
    if m.len() >= 3 && m[0] == "workloads" && m[2] == "view" {
        return "views".into();
    }
    m.first().cloned().unwrap_or_default()
}

/// The graph's cycles: its strongly connected parts of more than one module, each sorted.
pub(crate) fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iteratively.
    let nodes: Vec<&Module> = graph.keys().collect();
    let index_of: BTreeMap<&Module, usize> =
        nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let next: Vec<Vec<usize>> = nodes
        .iter()
        .map(|m| {
            graph[*m]
                .iter()
                .filter_map(|t| index_of.get(t).copied())
                .collect()
        })
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut out, mut counter) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut calls = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut edge)) = calls.last_mut() {
            if *edge == 0 && index[v] == usize::MAX {
                index[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = next[v].get(*edge) {
                *edge += 1;
                if index[w] == usize::MAX {
                    calls.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut part = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    part.push(nodes[w].join("::"));
                    if w == v {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort();
                    out.push(part);
                }
            }
        }
    }
    out.sort();
    out
}

/// The cycles of `graph` that span more than one top-level module, each with the edges
/// between its modules that cross one.
pub(crate) fn crossing(graph: &Graph) -> Vec<String> {
    cycles(graph)
        .into_iter()
        .filter_map(|part| {
            let members: BTreeSet<Module> = part
                .iter()
                .map(|m| m.split("::").map(str::to_string).collect())
                .collect();
            let layers: BTreeSet<String> = members.iter().map(layer).collect();
            (layers.len() > 1).then(|| {
                let edges: Vec<String> = members
                    .iter()
                    .flat_map(|a| {
                        let members = &members;
                        graph[a]
                            .iter()
                            .filter(move |b| members.contains(*b) && layer(a) != layer(b))
                            .map(move |b| format!("{} -> {}", a.join("::"), b.join("::")))
                    })
                    .collect();
                format!("{} (crossing: {})", part.join(", "), edges.join(", "))
            })
        })
        .collect()
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn paths_from_crate_super_and_self_resolve_to_modules() {
    let found = named_paths(
        "use crate::{job::Job, results::{self, RunResult}};\nuse super::section::X as Y;\nlet a = self::b::c(); super::super::d(); x.self_check(); Self::new();\n",
    );
    let want: Vec<Vec<&str>> = vec![
        vec!["crate", "job", "Job"],
        vec!["crate", "results"],
        vec!["crate", "results", "RunResult"],
        vec!["super", "section", "X"],
        vec!["self", "b", "c"],
        vec!["super", "super", "d"],
        vec!["Self", "new"],
    ];
    assert_eq!(found, want);
    let modules: BTreeMap<Module, PathBuf> = [
        vec![],
        vec!["a".to_string()],
        vec!["a".to_string(), "b".to_string()],
        vec!["c".to_string()],
    ]
    .into_iter()
    .map(|m| (m, PathBuf::new()))
    .collect();
    let at = vec!["a".to_string(), "b".to_string()];
    let path = |p: &str| p.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        resolve(&at, &path("super::Item"), &modules),
        Some(vec!["a".into()])
    );
    assert_eq!(
        resolve(&at, &path("super::super::c::f"), &modules),
        Some(vec!["c".into()])
    );
    assert_eq!(
        resolve(&at, &path("self::Thing"), &modules),
        Some(at.clone())
    );
    assert_eq!(
        resolve(&at, &path("crate::c::d::e"), &modules),
        Some(vec!["c".into()])
    );
    // From the root, `a::b::f` is its child's child; from `c`, `a::f` is another crate's.
    assert_eq!(
        resolve(&vec![], &path("a::b::f"), &modules),
        Some(at.clone())
    );
    assert_eq!(resolve(&vec!["c".into()], &path("a::f"), &modules), None);
    assert_eq!(resolve(&at, &path("std::fs::read"), &modules), None);
}

/// A cycle planted in a small crate of its own: `a` names `b` by `crate::`, and `b`'s file
/// names `a` by `super::` only. The check finds it, and finds nothing once the cycle is cut.
#[test]
fn a_planted_cycle_across_modules_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let path = src.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod a;\nmod b;\npub struct Usage;\n");
    write("a/mod.rs", "mod inner;\nuse crate::b::Thing;\n");
    write(
        "a/inner.rs",
        "use super::super::Usage; // crate::b in a comment\n",
    );
    write(
        "b/mod.rs",
        "pub struct Thing;\nmod deep;\npub fn h() { deep::f() }\n",
    );
    write(
        "b/deep.rs",
        "fn f() { super::super::a::g() }\n#[cfg(test)]\nmod tests {\n use crate::a::x;\n}\n",
    );
    let found = crossing(&graph(src));
    assert_eq!(found, ["a, b, b::deep (crossing: a -> b, b::deep -> a)"]);
    // Only the test module of b::deep names `a` now: no cycle.
    write(
        "b/deep.rs",
        "fn f() {}\n#[cfg(test)]\nmod tests {\n use crate::a::x;\n}\n",
    );
    assert!(crossing(&graph(src)).is_empty());
    assert!(cycles(&graph(src)).is_empty());
}

#[test]
fn no_import_cycle_crosses_a_top_level_module() {
    let found = crossing(&graph(&src()));
    assert!(
        found.is_empty(),
        "cycles across top-level modules (break each: move what both sides need below both, or hand it in from above):\n{}",
        found.join("\n")
    );
}

/// `graph` without each module's edges to its own descendants: a folder's module naming its
/// parts (to re-export or drive them) while they use its types is how a folder is built, not
/// a cycle to explain. What remains are the cycles among siblings and cousins.
pub(crate) fn without_descent(graph: &Graph) -> Graph {
    graph
        .iter()
        .map(|(a, reached)| {
            let up: BTreeSet<Module> = reached
                .iter()
                .filter(|b| !(b.len() > a.len() && b.starts_with(a)))
                .cloned()
                .collect();
            (a.clone(), up)
        })
        .collect()
}

#[test]
fn the_cycles_within_a_module_are_the_ones_that_say_why() {
    let found: BTreeSet<Vec<String>> = cycles(&without_descent(&graph(&src())))
        .into_iter()
        .collect();
    let listed: BTreeSet<Vec<String>> = WITHIN
        .iter()
        .map(|(m, _)| m.iter().map(|s| s.to_string()).collect())
        .collect();
    let new: Vec<String> = found.difference(&listed).map(|c| c.join(", ")).collect();
    let gone: Vec<String> = listed.difference(&found).map(|c| c.join(", ")).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "cycles within a module not in WITHIN (break them, or list them with why they stay): {new:#?}\nlisted in WITHIN but no longer a cycle as listed (update WITHIN): {gone:#?}"
    );
    assert!(WITHIN.iter().all(|(_, why)| why.len() > 20));
}
