//! Hostile input: thousands of generated and mutated job files and command lines fed to the
//! same parsing and resolving code the `storlab` binary runs (in process, so they take seconds).
//! None may panic, and every error must say where it is: a job-file error names the file and
//! line (`job.toml:12`) and, once past TOML syntax, the key; a command-line error names the
//! flag (`--qd`) or says `command line` and the key. A last test runs the real binary on the
//! nastiest inputs found and checks exit code 2 and `file:line` on stderr.
//!
//! Each run draws fresh cases (set `PROPTEST_RNG_SEED` to repeat one); a failure prints the
//! shrunk input, the job file or command line, and what was wrong.

use crate::harness::{run_in, scratch};
use clap::CommandFactory;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestRunner};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use storlab::cli::{Cli, Command};
use storlab::job::JobError;

/// What a value is meant to be; a generated key gets a value of its kind, or (sometimes) any
/// value at all.
#[derive(Clone, Copy)]
enum Kind {
    Size,
    Dur,
    Pct,
    Count,
    Int,
    Float,
    Bool,
    Text,
    Engine,
    Choice,
    Arrivals,
    Dist,
    OnError,
    StopWhen,
    Pattern,
    Path,
    Names,
    Cpus,
    Mix,
    CountCycle,
    SizeCycle,
    PctList,
    FloatList,
    Order,
    Version,
    Threads,
    Test,
    Paths,
}

/// Values by kind, as TOML source text: good ones, boundaries and garbage.
fn pool(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Size => &[
            r#""4k""#,
            r#""512""#,
            r#""0""#,
            r#""1""#,
            r#""-1""#,
            r#""4kk""#,
            r#""1e99GiB""#,
            r#""18446744073709551615""#,
            r#""99999999999P""#,
            r#""1.5k""#,
            r#""0.3""#,
            r#""""#,
            r#""k""#,
            r#""64MiB""#,
            r#""65MiB""#,
            r#""1GiB""#,
            r#""1TB""#,
            r#"" 8k ""#,
            r#""NaN""#,
            r#""inf""#,
            r#""1_0k""#,
            r#""µs""#,
            "4096",
            "-4096",
            "0",
            "1.5",
            "nan",
            "-inf",
            "9223372036854775807",
        ],
        Kind::Dur => &[
            r#""30s""#,
            r#""0""#,
            r#""0s""#,
            r#""-1s""#,
            r#""1e99s""#,
            r#""500ms""#,
            r#""1h30m""#,
            r#""1d""#,
            r#""nan""#,
            r#""inf""#,
            r#""10ms""#,
            r#""9ms""#,
            r#""1ns""#,
            r#""s""#,
            r#""1x""#,
            r#""1.5s""#,
            r#""999999999999s""#,
            r#""1µs""#,
            r#""..s""#,
            r#""""#,
            "5",
            "-5",
            "0.001",
            "1e300",
            "nan",
            "inf",
        ],
        Kind::Pct => &[
            r#""70%""#,
            r#""101%""#,
            r#""-1%""#,
            r#""100""#,
            r#""0""#,
            r#""nan""#,
            r#""abc""#,
            r#""50.5%""#,
            r#""%""#,
            r#""1e400%""#,
            "70",
            "150",
            "-3",
            "nan",
            "inf",
            "0.0",
        ],
        Kind::Count => &[
            "0",
            "1",
            "2",
            "8",
            "4096",
            "4097",
            "32768",
            "32769",
            "-1",
            "4294967295",
            "4294967296",
            "9223372036854775807",
            "-9223372036854775808",
            "1.5",
            r#""8""#,
        ],
        Kind::Int => &[
            "0",
            "1",
            "-1",
            "18446744073709551615",
            "9223372036854775807",
            "1000",
        ],
        Kind::Float => &[
            "0", "0.0", "-1.0", "1e300", "1e-300", "nan", "inf", "-inf", "100", "1e9", "1e10",
            "0.12", r#""5""#,
        ],
        Kind::Bool => &["true", "false", r#""true""#, "1"],
        Kind::Text => &[
            r#""a""#,
            r#""""#,
            r#""db""#,
            r#""w#1""#,
            r##""#""##,
            r#""  ""#,
            r#""x\ny""#,
            r#""名前""#,
            "42",
        ],
        Kind::Engine => &[
            r#""io_uring""#,
            r#""psync""#,
            r#""null""#,
            r#""uring""#,
            r#""spdk""#,
            r#""""#,
        ],
        Kind::Choice => &[r#""round-robin""#, r#""random""#, r#""lottery""#],
        Kind::Arrivals => &[r#""uniform""#, r#""poisson""#, r#""bursty""#],
        Kind::Dist => &[
            r#""uniform""#,
            r#""shuffle""#,
            r#""zipf:1.2""#,
            r#""zipf:0""#,
            r#""zipf:-1""#,
            r#""zipf:nan""#,
            r#""zipf:inf""#,
            r#""zipf:""#,
            r#""zoned:80/10:20/90""#,
            r#""zoned:""#,
            r#""zoned:100/0""#,
            r#""zoned:0/100""#,
            r#""zoned:50/50:50/50""#,
            r#""zoned:101/50:-1/50""#,
            r#""zoned:nan/nan""#,
            r#""pareto""#,
        ],
        Kind::OnError => &[r#""continue""#, r#""stop""#, r#""explode""#],
        Kind::StopWhen => &[
            r#""p99 > 20ms""#,
            r#""db:mean > 5ms""#,
            r#""nope:p99 > 5ms""#,
            r#""p100 > 1s""#,
            r#""> ""#,
            r#"":p99 > -1s""#,
            r#""p99 > 1e99s""#,
            r#""p99.9 > 0""#,
        ],
        Kind::Pattern => &[r#""sequential""#, r#""random""#, r#""zigzag""#],
        Kind::Path => &[
            r#""/tmp/storlab-fuzz.dat""#,
            r#""""#,
            r#""/dev/null""#,
            r#""rel/path.dat""#,
            r#""/nonexistent/dir/x""#,
        ],
        Kind::Names => &[
            r#"["a"]"#,
            r#"[]"#,
            r#"["nope"]"#,
            r#"["a", "a"]"#,
            r#"["b", "a"]"#,
            "[1]",
        ],
        Kind::Cpus => &["[0, 1]", "[]", "[-1]", "[99999]", "[0.5]"],
        Kind::Mix => &[
            r#"{ "4k" = 50, "8k" = 50 }"#,
            "{}",
            r#"{ "0" = 1 }"#,
            r#"{ "4k" = 0 }"#,
            r#"{ "4kk" = 1 }"#,
            r#"{ "4k" = -1 }"#,
            r#"{ "128MiB" = 1 }"#,
            r#"{ "1e99GiB" = 1 }"#,
        ],
        Kind::CountCycle => &[
            "[1, 2, 4]",
            "[]",
            "[0]",
            "[4294967295]",
            "{ from = 1, to = 64 }",
            "{ from = 64, to = 1 }",
            "{ from = 0, to = 0 }",
            "{ from = 1, to = 4294967295 }",
            "{ from = 1 }",
            "[-1]",
            "[1.5]",
        ],
        Kind::SizeCycle => &[
            r#"["4k", "8k"]"#,
            "[]",
            r#"{ from = "512", to = "1M" }"#,
            r#"{ from = "1M", to = "4k" }"#,
            r#"{ from = "0", to = "4k" }"#,
            r#"{ from = "1", to = "16PiB" }"#,
            r#"["0"]"#,
            r#"["4kk"]"#,
            "[4096, 8192]",
        ],
        Kind::PctList => &["[0, 50, 100]", "[]", "[101]", r#"["70%", "nan"]"#, "[nan]"],
        Kind::FloatList => &[
            "[10, 50, 100]",
            "[]",
            "[0]",
            "[201]",
            "[nan]",
            "[inf]",
            "[-5]",
            "[1e300]",
            "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]",
        ],
        Kind::Order => &[
            r#"["workers", "block_size"]"#,
            r#"["bogus"]"#,
            "[]",
            r#"["read", "read"]"#,
            r#"["targets", "workers", "queue_depth", "block_size", "read", "random", "rate"]"#,
        ],
        Kind::Version => &[
            "2010",
            r#""2013""#,
            "2007",
            "1999",
            r#""vista""#,
            "-1",
            "4294967296",
        ],
        Kind::Threads => &["2", "0", "257", r#""auto""#, r#""many""#, r#""0""#, "-1"],
        Kind::Test => &[
            r#""performance""#,
            r#""stress""#,
            r#""backup""#,
            r#""recovery""#,
            r#""soak""#,
        ],
        Kind::Paths => &[
            r#"["storlab-scratch/x"]"#,
            "[]",
            r#"[""]"#,
            r#"["/a", "/b", "/c"]"#,
        ],
    }
}

/// Every kind, to pick a wrong-typed value from.
const KINDS: [Kind; 28] = [
    Kind::Size,
    Kind::Dur,
    Kind::Pct,
    Kind::Count,
    Kind::Int,
    Kind::Float,
    Kind::Bool,
    Kind::Text,
    Kind::Engine,
    Kind::Choice,
    Kind::Arrivals,
    Kind::Dist,
    Kind::OnError,
    Kind::StopWhen,
    Kind::Pattern,
    Kind::Path,
    Kind::Names,
    Kind::Cpus,
    Kind::Mix,
    Kind::CountCycle,
    Kind::SizeCycle,
    Kind::PctList,
    Kind::FloatList,
    Kind::Order,
    Kind::Version,
    Kind::Threads,
    Kind::Test,
    Kind::Paths,
];

/// The job-file grammar: keys of each table and the kind of their values.
const TOP: &[(&str, Kind)] = &[
    ("description", Kind::Text),
    ("engine", Kind::Engine),
    ("duration", Kind::Dur),
    ("ramp", Kind::Dur),
    ("interval", Kind::Dur),
    ("seed", Kind::Int),
    ("buffered", Kind::Bool),
    ("destroy_data", Kind::Bool),
    ("batch", Kind::Count),
    ("verify", Kind::Bool),
    ("on_error", Kind::OnError),
    ("max_errors", Kind::Int),
    ("repeat", Kind::Count),
    ("pause", Kind::Dur),
    ("curve", Kind::FloatList),
    ("stop_when", Kind::StopWhen),
    ("until_steady", Kind::Bool),
    ("round", Kind::Dur),
    ("steady_rounds", Kind::Count),
    ("steady_range", Kind::Pct),
    ("steady_slope", Kind::Pct),
    ("max_rounds", Kind::Count),
];
const TARGET: &[(&str, Kind)] = &[
    ("name", Kind::Text),
    ("path", Kind::Path),
    ("size", Kind::Size),
    ("sync", Kind::Bool),
    ("fsync_every", Kind::Count),
];
const WORKER: &[(&str, Kind)] = &[
    ("name", Kind::Text),
    ("count", Kind::Count),
    ("targets", Kind::Names),
    ("one_target_each", Kind::Bool),
    ("target_choice", Kind::Choice),
    ("queue_depth", Kind::Count),
    ("cpus", Kind::Cpus),
    ("rate_iops", Kind::Float),
    ("arrivals", Kind::Arrivals),
    ("io_limit", Kind::Int),
];
const ACCESS: &[(&str, Kind)] = &[
    ("class", Kind::Text),
    ("weight", Kind::Count),
    ("block_size", Kind::Size),
    ("block_sizes", Kind::Mix),
    ("roll_every", Kind::Size),
    ("read", Kind::Pct),
    ("random", Kind::Pct),
    ("align", Kind::Size),
    ("distribution", Kind::Dist),
    ("offset", Kind::Size),
    ("length", Kind::Size),
    ("sync", Kind::Bool),
    ("fsync_every", Kind::Count),
];
const CYCLE: &[(&str, Kind)] = &[
    ("order", Kind::Order),
    ("block_size", Kind::SizeCycle),
    ("workers", Kind::CountCycle),
    ("queue_depth", Kind::CountCycle),
    ("targets", Kind::CountCycle),
    ("read", Kind::PctList),
    ("random", Kind::PctList),
    ("rate", Kind::FloatList),
];
const PRECONDITION: &[(&str, Kind)] = &[
    ("passes", Kind::Count),
    ("pattern", Kind::Pattern),
    ("block_size", Kind::Size),
];
const EXCHANGE: &[(&str, Kind)] = &[
    ("mailboxes", Kind::Int),
    ("mailbox_size", Kind::Size),
    ("iops_per_mailbox", Kind::Float),
    ("messages_per_day", Kind::Count),
    ("version", Kind::Version),
    ("databases", Kind::Count),
    ("db_paths", Kind::Paths),
    ("log_paths", Kind::Paths),
    ("threads", Kind::Threads),
    ("headroom", Kind::Pct),
    ("maintenance", Kind::Bool),
    ("test", Kind::Test),
    ("duration", Kind::Dur),
    ("ramp", Kind::Dur),
    ("capacity", Kind::Pct),
    ("db_capacity", Kind::Pct),
    ("throughput", Kind::Pct),
    ("find_max_mailboxes", Kind::Bool),
    ("db_read_latency", Kind::Dur),
    ("log_write_latency", Kind::Dur),
    ("max_latency", Kind::Dur),
    ("log_files", Kind::Count),
    ("page_size", Kind::Size),
    ("backup_block_size", Kind::Size),
    ("engine", Kind::Engine),
    ("seed", Kind::Int),
    ("interval", Kind::Dur),
    ("destroy_data", Kind::Bool),
    ("verify", Kind::Bool),
];

/// One generated `key = value` line: which key, whether its value is of the wrong kind, which
/// value; sometimes an unknown key.
type LineChoice = (Index, u8, Index, Index);

/// Whether `value` (TOML source) is well-formed for `kind`: a tame file uses only those, so
/// that it gets past TOML and unit parsing to the resolver's own checks.
fn parses(kind: Kind, value: &str) -> bool {
    let text = value.trim_matches('"');
    match kind {
        Kind::Size => value.starts_with('"') && storlab::units::parse_size(text).is_ok(),
        Kind::Dur => value.starts_with('"') && storlab::units::parse_duration(text).is_ok(),
        Kind::Pct => value.starts_with('"') && storlab::units::parse_percent(text).is_ok(),
        Kind::Count => value.parse::<u32>().is_ok(),
        Kind::Int => value.parse::<u64>().is_ok() && value.parse::<i64>().is_ok(),
        Kind::Float => !value.starts_with('"'),
        Kind::Bool => value == "true" || value == "false",
        Kind::Text => value.starts_with('"'),
        Kind::Names => value != "[1]",
        Kind::Cpus => !value.contains(['-', '.']),
        Kind::Mix => !value.contains(['-', 'e']),
        Kind::CountCycle => !value.contains(['-', '.']) && value != "{ from = 1 }",
        Kind::SizeCycle => !value.contains("kk"),
        Kind::PctList => !value.contains(['1', 'n']) || value.contains("100]"),
        Kind::Version | Kind::Threads => !value.starts_with('-') && value != "4294967296",
        _ => true,
    }
}

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
fn corpus() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["examples", "src/profiles/presets"] {
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
fn names_a_line(location: &str, name: &str, text: &str) -> Result<(), String> {
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
            let args = storlab::cli::ExchangeArgs {
                job: Some(path.clone()),
                ..Default::default()
            };
            let cfg = storlab::cli::build_exchange(&args)?;
            // What `--dry-run` shows.
            let _ = storlab::profiles::exchange::sizing_summary(&cfg);
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

/// What `--dry-run` does with a resolved job (small jobs only: expansion clones per step).
fn dry_run(job: &storlab::job::Job) {
    let steps: usize = job.sequence.cycles.iter().map(|c| c.values.len()).product();
    if steps * job.workers.len().max(1) <= 20_000 {
        let _ = storlab::cli::describe(job);
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    })
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

/// Values for flags, by the flag's value name (`SIZE`, `TIME`...), plus garbage.
fn flag_values(value_name: &str) -> &'static [&'static str] {
    match value_name {
        "SIZE" => &[
            "4k", "0", "-1", "4kk", "1e99GiB", "1GiB", "65MiB", "", "512", "1.5k", "0.3",
        ],
        "TIME" => &[
            "1s", "0", "-1s", "1e99s", "500ms", "9ms", "nan", "", "1h30m", "5",
        ],
        "PCT" => &["70", "101%", "-1", "nan", "abc", "0", "100%", "1e-9"],
        "N" => &[
            "0",
            "1",
            "8",
            "-1",
            "4097",
            "32769",
            "4294967296",
            "18446744073709551615",
            "99999999999999999999",
            "x",
            "",
        ],
        "IOPS" => &["100", "0", "-1", "nan", "inf", "1e300", "0.12", "x"],
        "ENGINE" => &["io_uring", "psync", "null", "spdk"],
        "DIST" => &[
            "uniform",
            "zipf:1.2",
            "zipf:0",
            "zoned:80/10:20/90",
            "zoned:",
            "x",
        ],
        "KIND" => &["uniform", "poisson", "bursty"],
        "WHAT" => &["continue", "stop", "explode"],
        "YEAR" => &["2010", "2019", "1999", "x"],
        "N|auto" => &["auto", "0", "2", "257", "many"],
        "on|off" => &["on", "off", "maybe"],
        "TYPE" => &["performance", "stress", "backup", "recovery", "soak"],
        "NAME" => &["oltp-8k", "file-server", "nope", ""],
        _ => &["x", "", "-1", "/tmp/storlab-fuzz.dat"],
    }
}

/// Whether `value` is well-formed for a flag with value name `vn`.
fn flag_value_parses(vn: &str, value: &str) -> bool {
    match vn {
        "SIZE" => storlab::units::parse_size(value).is_ok(),
        "TIME" => storlab::units::parse_duration(value).is_ok(),
        "PCT" => storlab::units::parse_percent(value).is_ok(),
        "N" => value.parse::<u32>().is_ok(),
        "IOPS" => value.parse::<f64>().is_ok(),
        _ => !value.is_empty(),
    }
}

/// (long flag, value name or None for a switch) of a subcommand, from clap's own definition.
fn flags(sub: &str) -> Vec<(String, Option<String>)> {
    let cmd = Cli::command();
    let sub = cmd.find_subcommand(sub).unwrap();
    sub.get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            // Output destinations would be written by a real run; build_* never writes them.
            let takes_value = a.get_action().takes_values();
            let value = takes_value.then(|| {
                a.get_value_names()
                    .and_then(|v| v.first().map(|s| s.to_string()))
                    .unwrap_or_default()
            });
            Some((format!("--{long}"), value))
        })
        .collect()
}

/// The key of a job or `[exchange]` field each flag sets, to check an error about that key
/// blames the flag.
fn flag_of_key(key: &str) -> &'static [&'static str] {
    let last = key.rsplit('.').next().unwrap_or(key);
    match last {
        "queue_depth" => &["--qd"],
        "count" => &["--workers"],
        "rate_iops" => &["--rate"],
        "block_size" | "align" => &["--bs"],
        "size" => &["--size"],
        _ => &[],
    }
}

#[test]
fn random_command_lines_never_panic_and_every_error_names_a_flag_or_location() {
    let dir = scratch();
    let run_flags = flags("run");
    let exchange_flags = flags("exchange");
    let examples = corpus();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    // The examples the subcommand takes: an `[exchange]` file for `exchange`, any other for
    // `run` (which hands `[exchange]` files to `exchange`).
    let jobs: Vec<(bool, PathBuf)> = examples
        .iter()
        .map(|(n, bytes)| {
            let exchange = String::from_utf8_lossy(bytes).contains("[exchange]");
            (exchange, root.join(n))
        })
        .filter(|(_, p)| p.exists())
        .collect();
    let strategy = (
        any::<bool>(),
        prop::collection::vec((any::<Index>(), any::<Index>(), any::<u8>()), 0..8),
        prop::option::weighted(0.4, any::<Index>()),
        prop::bool::weighted(0.6),
    );
    let result = {
        runner(4000).run(&strategy, |(exchange, chosen, job, tame)| {
            let flags = if exchange {
                &exchange_flags
            } else {
                &run_flags
            };
            let mut argv: Vec<String> = vec![
                "storlab".into(),
                if exchange { "exchange" } else { "run" }.into(),
            ];
            let mine: Vec<&PathBuf> = jobs
                .iter()
                .filter(|(x, _)| *x == exchange)
                .map(|(_, p)| p)
                .collect();
            if let Some(i) = job {
                argv.push(mine[i.index(mine.len())].display().to_string());
            }
            for (f, v, form) in &chosen {
                let (flag, value_name) = &flags[f.index(flags.len())];
                if flag == "--output" || flag == "--html" {
                    continue;
                }
                match value_name {
                    None => argv.push(flag.clone()),
                    Some(vn) => {
                        let values = flag_values(vn);
                        let first = v.index(values.len());
                        // A tame command line has well-formed values, to reach the resolver.
                        let value = (0..values.len())
                            .map(|i| values[(first + i) % values.len()])
                            .find(|v| !tame || flag_value_parses(vn, v))
                            .unwrap_or(values[first]);
                        match form {
                            0 if !tame => argv.push(flag.clone()),
                            1 if !tame => argv.extend([flag.clone(), "--".into(), value.into()]),
                            2..=80 => argv.push(format!("{flag}={value}")),
                            _ => argv.extend([flag.clone(), value.into()]),
                        }
                    }
                }
            }
            if chosen.len() == 7 && !tame {
                argv.push("--no-such-flag".into());
            }
            let shown = argv.join(" ");
            let outcome = catch_unwind(AssertUnwindSafe(|| check_command_line(&argv, dir.path())))
                .map_err(|p| {
                    TestCaseError::fail(format!("panic: {}\n--- {shown}", panic_text(&p)))
                })?;
            outcome.map_err(|why| TestCaseError::fail(format!("{why}\n--- {shown}")))
        })
    };
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Parses `argv` with clap and builds the job or Exchange configuration from it, as the
/// binary does; an error must name a flag, or a location and key.
fn check_command_line(argv: &[String], _dir: &Path) -> Result<(), String> {
    let cli = match <Cli as clap::Parser>::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) => {
            let msg = e.to_string();
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) {
                return Ok(());
            }
            let named = msg.contains("'--")
                || msg.contains("'-")
                || argv[2..]
                    .iter()
                    .any(|a| !a.is_empty() && msg.contains(&format!("'{a}'")));
            return if named {
                Ok(())
            } else {
                Err(format!("clap error names no argument: {msg}"))
            };
        }
    };
    let result = match cli.command {
        Command::Run(args) => storlab::cli::build_job(&args).map(|job| dry_run(&job)),
        Command::Exchange(args) => storlab::cli::build_exchange(&args).map(|cfg| {
            let _ = storlab::profiles::exchange::sizing_summary(&cfg);
        }),
        _ => return Err("not run or exchange".into()),
    };
    let Err(e) = result else {
        return Ok(());
    };
    if let Some(je) = e.downcast_ref::<JobError>() {
        let loc = &je.location;
        let file_line = loc.contains(".toml:") || loc.starts_with("preset:");
        let command_line = loc.starts_with("command line") || loc.starts_with("--");
        if !(file_line || command_line) {
            return Err(format!("job error without a usable location: {je}"));
        }
        if command_line && je.key.is_empty() {
            return Err(format!("command-line error without a key or flag: {je}"));
        }
        if file_line && !loc.starts_with("preset:") {
            let path = loc.split(".toml:").next().unwrap().to_string() + ".toml";
            let text = match path.as_str() {
                "quickstart.toml" => storlab::cli::QUICKSTART_JOB.to_string(),
                _ => std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?,
            };
            names_a_line(loc, &path, &text)?;
        }
        // An error about a value a flag set must blame the flag.
        let blamed = flag_of_key(&je.key).iter().find(|f| {
            argv.iter()
                .any(|a| a == *f || a.starts_with(&format!("{f}=")))
        });
        if let Some(flag) = blamed {
            if file_line {
                return Err(format!(
                    "the error blames the file, but {flag} set the value: {je}"
                ));
            }
        }
        return Ok(());
    }
    let msg = format!("{e:#}");
    if e.chain().any(|c| c.is::<storlab::Usage>())
        && (msg.contains("--") || msg.contains("command line"))
    {
        return Ok(());
    }
    Err(format!("error names no flag or location: {msg}"))
}

/// (name, job file bytes, extra flags, what stderr must hold).
type NastyCase = (
    &'static str,
    &'static [u8],
    &'static [&'static str],
    &'static [&'static str],
);

/// The nastiest inputs the properties above found, through the real binary: exit code 2 and
/// the file and line (or the flag) on stderr.
#[test]
fn nasty_inputs_exit_2_naming_file_and_line() {
    let dir = scratch();
    // (name, job file bytes, extra flags, what stderr must hold besides `name.toml:LINE`)
    let cases: &[NastyCase] = &[
        ("empty", b"", &[], &["empty.toml:1:", "no target"]),
        (
            "control",
            b"# a comment with a \x01 in it\nduration = \"1s\"\n",
            &[],
            &["control.toml:1:", "U+0001"],
        ),
        (
            "latin1",
            b"duration = \"1s\"\ndescription = \"caf\xe9\"\n",
            &[],
            &["latin1.toml:2", "not UTF-8"],
        ),
        (
            "huge_mailboxes",
            b"[exchange]\nmailboxes = 9223372036854775807\n",
            &[],
            &["huge_mailboxes.toml:2:", "exchange.mailboxes"],
        ),
        (
            "no_value",
            b"[[target]]\npath =\n",
            &[],
            &["no_value.toml:2:", "invalid string"],
        ),
        (
            "duplicate_worker",
            b"[[target]]\npath = \"x.dat\"\nsize = \"1MiB\"\n[[worker]]\nname = \"w\"\n[[worker.access]]\n[[worker]]\nname = \"w\"\n[[worker.access]]\n",
            &[],
            &["duplicate_worker.toml:7:", "worker[1].name", "`w`"],
        ),
        (
            "steady_without_until",
            b"round = \"1s\"\n[[target]]\npath = \"x.dat\"\nsize = \"1MiB\"\n[[worker]]\n[[worker.access]]\n",
            &[],
            &["steady_without_until.toml:1:", "`round`"],
        ),
        (
            "flag_overrides_file",
            b"[[target]]\npath = \"x.dat\"\nsize = \"1MiB\"\n[[worker]]\nqueue_depth = 4\n[[worker.access]]\n",
            &["--qd", "0"],
            &["command line: `--qd`", "queue_depth is 0"],
        ),
    ];
    for (name, bytes, flags, expected) in cases {
        let file = dir.path().join(format!("{name}.toml"));
        std::fs::write(&file, bytes).unwrap();
        let mut args = vec![
            "run".to_string(),
            file.display().to_string(),
            "--dry-run".into(),
        ];
        args.extend(flags.iter().map(|f| f.to_string()));
        let out = run_in(dir.path(), &args);
        out.expect_code(2).stderr_has(expected);
        assert!(!out.stderr.contains("panicked"), "{name}: {}", out.stderr);
    }
}
