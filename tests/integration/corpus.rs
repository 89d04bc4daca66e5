//! The tools' own files (`tests/fixtures/corpus/`, each with its source in PROVENANCE.md):
//! fio's examples, vdbench's distributed examples, VM Fleet's and StorScore's DiskSpd profiles
//! and the command lines of DiskSpd's documentation. Each is converted strictly, in process, as
//! `storlab run FILE --dry-run` converts it (with `--map` for the Windows names it uses), and its
//! dry run must refuse nothing but the tool's own folders that do not exist here (`/data1`,
//! `/dev/rdsk`); or it is refused for the reason `expected.txt` lists for it. One test over
//! every file; a failure lists every file that did not do what `expected.txt` says.

use clap::Parser;
use std::path::{Path, PathBuf};
use storlab::cli::{Cli, Command};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

/// `--map` for each Windows name `text` uses: drives to a folder, `*1` to a file that exists.
fn maps(text: &str, dir: &Path) -> Vec<String> {
    let mut m = Vec::new();
    for drive in ["C:", "D:", "E:"] {
        if text.to_ascii_uppercase().contains(drive) {
            m.push("--map".into());
            m.push(format!("{drive}={}", dir.display()));
        }
    }
    if text.contains("*1") {
        m.push("--map".into());
        m.push(format!("*1={}", dir.join("t1.dat").display()));
    }
    m
}

/// What storlab does with `args` (a `storlab run` command line): `Ok` when it converts and
/// its dry run refuses nothing but what is the machine's, not the conversion's: a folder or
/// device of the tool's own that does not exist here (`/data1`, `/dev/sda`), free space for
/// its files (ssd-test's 10 GiB), or a file a DiskSpd line names without `-c`, which DiskSpd
/// requires to exist.
fn outcome(args: &[String]) -> Result<(), String> {
    let cli = Cli::try_parse_from(args).map_err(|e| e.to_string())?;
    let Command::Run(run) = cli.command else {
        return Err("not a run".into());
    };
    // A plain job, or a workload's (vdbench's file-system definitions are storlab fs's).
    let dry = storlab::cli::dry_run_of(&run).map_err(|e| format!("{e:#}"))?;
    let refused: Vec<&String> = dry
        .refused
        .iter()
        .filter(|r| {
            let space = r.contains("more on its filesystem") || r.contains("together, and it has");
            !(r.contains("does not exist")
                || space
                || r.contains("no size given for new file")
                    && !args.iter().any(|a| a.contains("-c")))
        })
        .collect();
    match refused.as_slice() {
        [] => Ok(()),
        r => Err(format!("the dry run refuses: {r:?}")),
    }
}

#[test]
fn the_tools_own_files_convert_or_are_refused_for_a_listed_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t1.dat"), vec![0x5a; 1 << 20]).unwrap();
    let expected = std::fs::read_to_string(corpus().join("expected.txt")).unwrap();
    let lines = std::fs::read_to_string(corpus().join("diskspd/lines.txt")).unwrap();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for e in expected
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let (name, want) = e
            .split_once(": ")
            .expect("NAME: converts | refused: REASON");
        let base = ["storlab", "run"].map(String::from).to_vec();
        let args = if let Some(n) = name.strip_prefix("diskspd/lines.txt:") {
            let n: usize = n.parse().unwrap();
            let line = lines.lines().nth(n - 1).expect("a line of lines.txt");
            let mut a = base;
            a.extend(["--diskspd".into(), line.to_string()]);
            a.extend(maps(line, dir.path()));
            a
        } else {
            let path = corpus().join(name);
            let from = name.split('/').next().unwrap();
            let mut a = base;
            a.extend([path.display().to_string(), "--from".into(), from.into()]);
            if from == "diskspd" {
                let text = std::fs::read_to_string(&path).unwrap();
                a.extend(maps(&text, dir.path()));
            }
            a
        };
        let mut args = args;
        args.extend(["--destroy-data".into(), "--dry-run".into()]);
        checked += 1;
        match (outcome(&args), want.strip_prefix("refused: ")) {
            (Ok(()), None) | (Err(_), Some("")) => {}
            (Err(why), Some(reason)) if why.contains(reason) => {}
            (Ok(()), Some(reason)) => wrong.push(format!(
                "{name}: converts, but expected.txt says refused: {reason}"
            )),
            (Err(why), None) => wrong.push(format!("{name}: refused: {why}")),
            (Err(why), Some(reason)) => {
                wrong.push(format!("{name}: refused, but not for `{reason}`: {why}"))
            }
        }
    }
    // Every file of the corpus is listed (and every command line).
    let mut listed = 0;
    for sub in ["fio", "vdbench", "diskspd"] {
        for f in std::fs::read_dir(corpus().join(sub)).unwrap() {
            let n = format!("{sub}/{}", f.unwrap().file_name().to_string_lossy());
            if n.ends_with("license.txt") || n.ends_with("lines.txt") {
                continue;
            }
            listed += 1;
            if !expected.lines().any(|l| l.starts_with(&format!("{n}: "))) {
                wrong.push(format!("{n}: not in expected.txt"));
            }
        }
    }
    let command_lines = lines.lines().filter(|l| l.starts_with('-')).count();
    assert_eq!(
        checked,
        listed + command_lines,
        "expected.txt lists each once"
    );
    assert!(
        wrong.is_empty(),
        "{} of {checked}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
