//! Random command lines for every subcommand, with values for each flag's kind: none may
//! panic, and every error names a flag or a location; and the real binary on the nastiest
//! inputs exits 2 naming file and line.

use super::job_files::{corpus, names_a_line};
use super::{dry_run, panic_text, runner};
use crate::harness::{run_in, scratch};
use proptest::prelude::*;
use proptest::sample::Index;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use storlab::testing::JobError;

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
        "true|false" => &["true", "false", "maybe", ""],
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
    let cmd = storlab::cli::command();
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
    let m = match storlab::cli::command().try_get_matches_from(argv) {
        Ok(m) => m,
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
    let result = match m.subcommand() {
        Some(("run", sub)) => {
            let args = <storlab::cli::RunArgs as clap::FromArgMatches>::from_arg_matches(sub)
                .map_err(|e| e.to_string())?;
            storlab::cli::build_job(&args).map(|job| dry_run(&job))
        }
        _ => match storlab::cli::describe_room(&m) {
            Some(described) => described.map(|_| ()),
            None => return Err("not run or a workload's own command".into()),
        },
    };
    let Err(e) = result else {
        return Ok(());
    };
    if let Some(je) = e.downcast_ref::<JobError>() {
        let loc = &je.location;
        let file_line = loc.contains(".toml:") || loc.starts_with("preset:");
        let command_line = loc.starts_with("command line") || loc.starts_with("--");
        // A file given that cannot be read (a switch's value written apart from it, `--verify
        // x`, is the job file's path).
        let named_file = argv.iter().any(|a| a == loc);
        if !(file_line || command_line || named_file) {
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
