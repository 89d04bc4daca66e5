//! Generated job files (tame ones that reach the resolver's own checks, and wild ones) and
//! mutated copies of every example and preset: none may panic, and every error names the file
//! and line.

use super::grammar::{
    ACCESS, CYCLE, EXCHANGE, KINDS, Kind, LineChoice, PRECONDITION, TARGET, TOP, WORKER, parses,
    pool,
};
use super::{dry_run, panic_text, runner};
use crate::harness::scratch;
use proptest::prelude::*;
use proptest::sample::Index;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use storlab::testing::JobError;

fn line(keys: &[(&str, Kind)], tame: bool, (key, odd, kind, value): &LineChoice) -> String {
    let (name, own) = keys[key.index(keys.len())];
    let kind = if *odd < 24 && !tame {
        KINDS[kind.index(KINDS.len())]
    } else {
        own
    };
    let values = pool(kind);
    let first = value.index(values.len());
    let value = (0..values.len())
        .map(|i| values[(first + i) % values.len()])
        .find(|v| !tame || parses(kind, v))
        .unwrap_or(values[first]);
    match odd {
        _ if tame => format!("{name} = {value}"),
        250 => format!("bogus_{name} = {value}"),
        251 => format!("\"{name}\" = {value}"),
        252 => format!("{name} ="),
        _ => format!("{name} = {value}"),
    }
}

/// A table's lines; a key already used in the table is dropped (most of the time: a
/// duplicate key is one TOML error among many).
fn table(keys: &[(&str, Kind)], tame: bool, choices: &[LineChoice]) -> Vec<String> {
    let mut seen = Vec::new();
    choices
        .iter()
        .filter(|c| {
            let k = c.0.index(keys.len());
            let fresh = !seen.contains(&k) || (c.1 == 253 && !tame);
            seen.push(k);
            fresh
        })
        .map(|c| line(keys, tame, c))
        .collect()
}

fn lines(max: usize) -> impl Strategy<Value = Vec<LineChoice>> {
    prop::collection::vec(
        (any::<Index>(), any::<u8>(), any::<Index>(), any::<Index>()),
        0..max,
    )
}

/// A job file generated from the grammar: top-level keys, then targets, workers with access
/// entries, and the optional tables.
#[derive(Debug, Clone)]
struct Generated {
    top: Vec<LineChoice>,
    targets: Vec<Vec<LineChoice>>,
    workers: Vec<(Vec<LineChoice>, Vec<Vec<LineChoice>>)>,
    cycle: Option<Vec<LineChoice>>,
    precondition: Option<Vec<LineChoice>>,
    exchange: Option<Vec<LineChoice>>,
    /// Only well-formed values and no duplicate keys: a test of the resolver, not of TOML.
    tame: bool,
}

fn generated() -> impl Strategy<Value = Generated> {
    (
        lines(6),
        prop::collection::vec(lines(5), 0..4),
        prop::collection::vec((lines(6), prop::collection::vec(lines(6), 0..4)), 0..4),
        prop::option::weighted(0.3, lines(5)),
        prop::option::weighted(0.15, lines(4)),
        prop::option::weighted(0.2, lines(10)),
        prop::bool::weighted(0.7),
    )
        .prop_map(
            |(top, targets, workers, cycle, precondition, exchange, tame)| Generated {
                top,
                targets,
                workers,
                cycle,
                precondition,
                exchange,
                tame,
            },
        )
}

impl Generated {
    fn text(&self) -> String {
        let mut out = Vec::new();
        // An Exchange file is usually nothing but its section, as the CLI expects.
        let exchange_only = self.exchange.is_some() && self.top.len() % 3 != 0;
        if !exchange_only {
            out.extend(table(TOP, self.tame, &self.top));
            // A tame file has the skeleton a job needs: a target with a path, a worker with
            // an access entry.
            let skeleton = vec![Vec::new()];
            let targets = match &self.targets {
                t if t.is_empty() && self.tame => &skeleton,
                t => t,
            };
            for (i, t) in targets.iter().enumerate() {
                out.push("[[target]]".into());
                let lines = table(TARGET, self.tame, t);
                if self.tame && !lines.iter().any(|l| l.starts_with("path =")) {
                    out.push(format!("path = \"/tmp/storlab-fuzz-{i}.dat\""));
                }
                out.extend(lines);
            }
            let skeleton = vec![(Vec::new(), vec![Vec::new()])];
            let workers = match &self.workers {
                w if w.is_empty() && self.tame => &skeleton,
                w => w,
            };
            for (w, access) in workers {
                out.push("[[worker]]".into());
                out.extend(table(WORKER, self.tame, w));
                let one = vec![Vec::new()];
                let access = if access.is_empty() && self.tame {
                    &one
                } else {
                    access
                };
                for a in access {
                    out.push("[[worker.access]]".into());
                    out.extend(table(ACCESS, self.tame, a));
                }
            }
            if let Some(c) = &self.cycle {
                out.push("[cycle]".into());
                out.extend(table(CYCLE, self.tame, c));
            }
            if let Some(p) = &self.precondition {
                out.push("[precondition]".into());
                out.extend(table(PRECONDITION, self.tame, p));
            }
        }
        if let Some(e) = &self.exchange {
            out.push("[exchange]".into());
            out.extend(table(EXCHANGE, self.tame, e));
        }
        out.join("\n") + "\n"
    }
}

/// The real job files: examples and presets.
pub(super) fn corpus() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["examples", "src/workloads/presets"] {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            files.push((name, std::fs::read(&p).unwrap()));
        }
    }
    assert!(files.len() >= 10, "found only {} job files", files.len());
    files
}

/// One edit of a job file's bytes or tokens.
#[derive(Debug, Clone)]
enum Mutation {
    SetByte(Index, u8),
    DeleteBytes(Index, usize),
    InsertBytes(Index, Vec<u8>),
    Truncate(Index),
    DuplicateLine(Index),
    DeleteLine(Index),
    SwapLines(Index, Index),
    /// Replace the value of a `key = value` line with a value of any kind.
    ReplaceValue(Index, Index, Index),
    /// Give a `key = value` line the key of another line.
    ReplaceKey(Index, Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::SetByte(i, b)),
        (any::<Index>(), 1usize..40).prop_map(|(i, n)| Mutation::DeleteBytes(i, n)),
        (
            any::<Index>(),
            prop::collection::vec(
                prop_oneof![
                    Just(b'['),
                    Just(b']'),
                    Just(b'='),
                    Just(b'"'),
                    Just(b'\n'),
                    Just(b'{'),
                    Just(b'-'),
                    Just(b'.'),
                    any::<u8>()
                ],
                1..6
            )
        )
            .prop_map(|(i, b)| Mutation::InsertBytes(i, b)),
        any::<Index>().prop_map(Mutation::Truncate),
        any::<Index>().prop_map(Mutation::DuplicateLine),
        any::<Index>().prop_map(Mutation::DeleteLine),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<Index>(), any::<Index>(), any::<Index>())
            .prop_map(|(l, k, v)| Mutation::ReplaceValue(l, k, v)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::ReplaceKey(a, b)),
    ]
}

fn mutate(bytes: &mut Vec<u8>, m: &Mutation) {
    let split_lines = |bytes: &[u8]| -> Vec<Vec<u8>> {
        bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
    };
    let assignments = |lines: &[Vec<u8>]| -> Vec<usize> {
        (0..lines.len())
            .filter(|&i| {
                let l = &lines[i];
                l.contains(&b'=') && !l.starts_with(b"#") && !l.starts_with(b"[")
            })
            .collect()
    };
    match m {
        Mutation::SetByte(i, b) if !bytes.is_empty() => {
            let i = i.index(bytes.len());
            bytes[i] = *b;
        }
        Mutation::DeleteBytes(i, n) if !bytes.is_empty() => {
            let i = i.index(bytes.len());
            let end = (i + n).min(bytes.len());
            bytes.drain(i..end);
        }
        Mutation::InsertBytes(i, b) => {
            let i = i.index(bytes.len() + 1);
            bytes.splice(i..i, b.iter().copied());
        }
        Mutation::Truncate(i) => {
            let i = i.index(bytes.len() + 1);
            bytes.truncate(i);
        }
        Mutation::DuplicateLine(i) | Mutation::DeleteLine(i) | Mutation::SwapLines(i, _) => {
            let mut lines = split_lines(bytes);
            let a = i.index(lines.len());
            match m {
                Mutation::DuplicateLine(_) => {
                    let l = lines[a].clone();
                    lines.insert(a, l);
                }
                Mutation::DeleteLine(_) => {
                    lines.remove(a);
                }
                Mutation::SwapLines(_, j) => {
                    let b = j.index(lines.len());
                    lines.swap(a, b);
                }
                _ => unreachable!(),
            }
            *bytes = lines.join(&b'\n');
        }
        Mutation::ReplaceValue(l, k, _) | Mutation::ReplaceKey(l, k) => {
            let mut lines = split_lines(bytes);
            let found = assignments(&lines);
            if found.is_empty() {
                return;
            }
            let at = found[l.index(found.len())];
            let eq = lines[at].iter().position(|&b| b == b'=').unwrap();
            if let Mutation::ReplaceValue(_, _, v) = m {
                let kind = KINDS[k.index(KINDS.len())];
                let values = pool(kind);
                let mut new = lines[at][..=eq].to_vec();
                new.push(b' ');
                new.extend_from_slice(values[v.index(values.len())].as_bytes());
                lines[at] = new;
            } else {
                let other = found[k.index(found.len())];
                let oeq = lines[other].iter().position(|&b| b == b'=').unwrap();
                let mut new = lines[other][..oeq].to_vec();
                new.extend_from_slice(&lines[at][eq..]);
                lines[at] = new;
            }
            *bytes = lines.join(&b'\n');
        }
        _ => {}
    }
}

/// `location` names `name` and a line that exists in `text` (1-based; one past the end is
/// where an unterminated construct ends).
pub(super) fn names_a_line(location: &str, name: &str, text: &str) -> Result<(), String> {
    let rest = location
        .strip_prefix(name)
        .and_then(|r| r.strip_prefix(':'))
        .ok_or_else(|| format!("location `{location}` does not start with `{name}:`"))?;
    let line: usize = rest
        .split(':')
        .next()
        .and_then(|l| l.parse().ok())
        .ok_or_else(|| format!("location `{location}` has no line number"))?;
    let lines = text.lines().count().max(1);
    if line == 0 || line > lines + 1 {
        return Err(format!(
            "location `{location}`: line {line} is not in the file ({lines} lines)"
        ));
    }
    Ok(())
}

/// Checks a job-file error: it names the file, a line, and (past TOML syntax) the key.
fn check_file_error(e: &JobError, name: &str, text: &str) -> Result<(), String> {
    names_a_line(&e.location, name, text)?;
    let shown = e.to_string();
    if !shown.starts_with(&e.location) {
        return Err(format!(
            "the message does not start with the location: {shown}"
        ));
    }
    // TOML errors (`file:line:col`) quote the line; past TOML, the error names the key.
    let toml_error = e
        .location
        .rsplit(':')
        .nth(1)
        .is_some_and(|l| l.parse::<usize>().is_ok());
    if !toml_error && e.key.is_empty() && !e.message.contains("not UTF-8") {
        return Err(format!("the error names no key: {shown}"));
    }
    if e.message
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .is_empty()
    {
        return Err(format!("empty message: {shown}"));
    }
    Ok(())
}

/// Resolves a job file's text the way `storlab run FILE` does: a file with an `[exchange]`
/// table goes to the Exchange model, anything else to the job resolver. Returns the error, if
/// any.
fn resolve_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<Option<JobError>, String> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(bytes).into_owned();
    let is_exchange = text
        .parse::<toml::Table>()
        .ok()
        .is_some_and(|t| t.contains_key("exchange"));
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<(), anyhow::Error> {
        if is_exchange {
            let m = storlab::cli::command().try_get_matches_from([
                "storlab".as_ref(),
                "exchange".as_ref(),
                path.as_os_str(),
            ])?;
            // What `--dry-run` shows.
            let _ = storlab::cli::describe_room(&m).expect("Exchange's command")?;
        } else {
            let args = storlab::cli::RunArgs {
                job: Some(path.clone()),
                ..Default::default()
            };
            let job = storlab::cli::build_job(&args)?;
            dry_run(&job);
        }
        Ok(())
    }))
    .map_err(|p| format!("panic: {}", panic_text(&p)))?;
    match outcome {
        Ok(()) => Ok(None),
        Err(e) => match e.downcast::<JobError>() {
            Ok(je) => Ok(Some(je)),
            Err(e) => Err(format!("an error that is not a JobError: {e:#}")),
        },
    }
}
#[test]
fn generated_job_files_never_panic_and_every_error_names_file_and_line() {
    let dir = scratch();
    let errors = std::cell::Cell::new(0u32);
    let resolved = std::cell::Cell::new(0u32);
    let result = {
        runner(4000).run(&generated(), |g| {
            let text = g.text();
            let name = "job.toml";
            match resolve_file(dir.path(), name, text.as_bytes()) {
                Err(why) => Err(TestCaseError::fail(format!("{why}\n--- job file\n{text}"))),
                Ok(None) => {
                    resolved.set(resolved.get() + 1);
                    Ok(())
                }
                Ok(Some(e)) => {
                    errors.set(errors.get() + 1);
                    let name = dir.path().join(name).display().to_string();
                    check_file_error(&e, &name, &text).map_err(|why| {
                        TestCaseError::fail(format!("{why}\n--- error\n{e}\n--- job file\n{text}"))
                    })
                }
            }
        })
    };
    if let Err(e) = result {
        panic!("{e}");
    }
    let errors = errors.get();
    assert!(errors > 1000, "only {errors} generated files were refused");
    // Enough good files get through to exercise the resolver's success path and --dry-run.
    let resolved = resolved.get();
    assert!(resolved > 100, "only {resolved} generated files resolved");
}

#[test]
fn mutated_examples_and_presets_never_panic_and_every_error_names_file_and_line() {
    let dir = scratch();
    let files = corpus();
    let strategy = (
        0..files.len(),
        prop::collection::vec(mutation(), 1..5),
        any::<u8>(),
    );
    let result = {
        runner(4000).run(&strategy, |(f, mutations, _)| {
            let (name, original) = &files[f];
            let mut bytes = original.clone();
            for m in &mutations {
                mutate(&mut bytes, m);
            }
            let text = String::from_utf8_lossy(&bytes).into_owned();
            match resolve_file(dir.path(), name, &bytes) {
                Err(why) => Err(TestCaseError::fail(format!(
                    "{why}\n--- mutations {mutations:?}\n--- {name}\n{text}"
                ))),
                Ok(None) => Ok(()),
                Ok(Some(e)) => {
                    let path = dir.path().join(name).display().to_string();
                    check_file_error(&e, &path, &text).map_err(|why| {
                        TestCaseError::fail(format!(
                            "{why}\n--- error\n{e}\n--- mutations {mutations:?}\n--- {name}\n{text}"
                        ))
                    })
                }
            }
        })
    };
    if let Err(e) = result {
        panic!("{e}");
    }
}
