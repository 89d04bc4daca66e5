//! Other tools' job files as storlab jobs: `storlab import FILE`, `storlab run FILE` and
//! `storlab run --diskspd "ARGS"`. The format is recognised from the content ([`detect`]) or
//! given (`--from`); each format's converter ([`super::fio`], [`super::iometer`],
//! [`super::diskspd`], [`super::vdbench`]) writes a storlab job (TOML) whose comments name the
//! source line each part came from. What cannot be converted is listed with its file, line and
//! reason ([`Unsupported`]), and refused unless `lenient`.

use std::path::{Path, PathBuf};

/// A job file format storlab converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A fio job file (ini).
    Fio,
    /// An Iometer configuration file (`.icf`).
    Iometer,
    /// A DiskSpd XML profile (or, from `--diskspd`, a command line).
    DiskSpd,
    /// A vdbench parameter file.
    Vdbench,
}

impl Format {
    /// Every format, in the order `--from` lists them.
    pub const ALL: [Format; 4] = [
        Format::Fio,
        Format::Iometer,
        Format::DiskSpd,
        Format::Vdbench,
    ];

    /// The name `--from` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Fio => "fio",
            Format::Iometer => "iometer",
            Format::DiskSpd => "diskspd",
            Format::Vdbench => "vdbench",
        }
    }

    /// The tool's name as people write it, for messages and comments.
    pub fn tool(self) -> &'static str {
        match self {
            Format::Fio => "fio",
            Format::Iometer => "Iometer",
            Format::DiskSpd => "DiskSpd",
            Format::Vdbench => "vdbench",
        }
    }

    /// The format named `s` (`--from`), in any case.
    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// An option or line storlab does not convert.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsupported {
    /// The file and line it is on (`test.icf:12`), or `command line`.
    pub at: String,
    /// The option as written (`key=value`, or the line).
    pub option: String,
    /// Why, in one line.
    pub why: String,
}

/// A converted job file.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The storlab job, TOML.
    pub toml: String,
    /// What was left out (only with `lenient`).
    pub left_out: Vec<Unsupported>,
}

/// Why a job file cannot be converted.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// It cannot be read, or is not a file of its format (the message names file and line).
    #[error("{0}")]
    Read(String),
    /// Options storlab does not support, and the file's name.
    #[error("{} option{} of {} storlab cannot convert:\n{}\nremove or change them, or convert without them: --lenient (each is then listed in the job as left out)", .0.len(), if .0.len() == 1 { "" } else { "s" }, .1, list(.0))]
    Unsupported(Vec<Unsupported>, String),
}

fn list(items: &[Unsupported]) -> String {
    items
        .iter()
        .map(|u| format!("  {}: {}: {}", u.at, u.option, u.why))
        .collect::<Vec<_>>()
        .join("\n")
}

/// How to convert: what the user said beside the file.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Leave out what cannot be converted (each is listed) instead of refusing the file.
    pub lenient: bool,
    /// `--map TARGET=PATH`: where the source tool's targets (Windows drive names, physical
    /// disk numbers, paths of another machine) are on this one.
    pub map: Vec<(String, PathBuf)>,
}

impl Options {
    /// The path `--map` gives the source tool's target `name`: names are compared without
    /// case, quotes, surrounding spaces or a trailing `\` or `/` (`C:`, `c:\`, `"C:"` are one).
    pub fn mapped(&self, name: &str) -> Option<&Path> {
        let key = map_key(name);
        self.map
            .iter()
            .find(|(from, _)| map_key(from) == key)
            .map(|(_, to)| to.as_path())
    }

    /// Where the source tool's target `name` goes: its `--map` path, or else `fallback` (a
    /// scratch file the converter names), with a note saying how to place it.
    pub fn place(&self, name: &str, fallback: &str, notes: &mut Vec<String>) -> PathBuf {
        match self.mapped(name) {
            Some(p) => p.to_path_buf(),
            None => {
                notes.push(format!(
                    "target {name} placed at {fallback}, a new file in the current directory (place it elsewhere with --map \"{name}=PATH\")"
                ));
                PathBuf::from(fallback)
            }
        }
    }
}

fn map_key(name: &str) -> String {
    let t = name.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    let t = t.trim_end_matches(['\\', '/']);
    t.to_ascii_lowercase()
}

/// Parses `--map TARGET=PATH` (the last `=` splits, so a target name may hold one).
pub fn parse_map(s: &str) -> Result<(String, PathBuf), String> {
    match s.rsplit_once('=') {
        Some((from, to)) if !from.trim().is_empty() && !to.trim().is_empty() => {
            Ok((from.trim().to_string(), PathBuf::from(to.trim())))
        }
        _ => Err(format!(
            "`{s}`: write TARGET=PATH, e.g. --map \"C:=/mnt/test/iobw.tst\" or --map \"PHYSICALDRIVE:1=/dev/sdb\""
        )),
    }
}

/// The comment that ties a part of the converted job to its source line: `# FILE:LINE: TEXT`
/// (the text on one line, control characters dropped, at most 120 characters).
pub fn source_comment(at: &str, text: &str) -> String {
    let mut clean: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if clean.chars().count() > 120 {
        clean = clean.chars().take(117).collect::<String>() + "...";
    }
    format!("# {at}: {clean}\n")
}

/// Keys a fio job file almost always holds (one of them in a section marks a fio file).
const FIO_KEYS: &[&str] = &[
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bssplit",
    "bsrange",
    "ioengine",
    "iodepth",
    "filename",
    "directory",
    "size",
    "filesize",
    "numjobs",
    "runtime",
    "time_based",
    "direct",
    "buffered",
    "rwmixread",
    "rwmixwrite",
    "rate_iops",
    "ramp_time",
    "stonewall",
    "thinktime",
    "group_reporting",
    "io_size",
    "nrfiles",
];

/// The format of a job file from its content, or `None` for a storlab job (or anything that
/// is none of them). Only positive evidence counts, so that a storlab job with a syntax error
/// is still read, and its error reported, as a storlab job: an Iometer file has its `Version`
/// line or its `'TEST SETUP`/`'ACCESS SPECIFICATIONS` markers; a DiskSpd profile is XML with
/// `<Profile>`; a vdbench file has an `rd=` line and an `sd=`, `wd=`, `fsd=` or `fwd=` line; a
/// fio file is not TOML, has no storlab table (`[[worker]]`, `[cycle]`...) or quoted value,
/// and has a `[section]` and one of fio's common options (`rw=`, `bs=`, `filename=`...).
pub fn detect(text: &str) -> Option<Format> {
    let lines = || {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(4000)
    };
    let lower = |l: &str| l.to_ascii_lowercase();
    if lines().take(20).any(|l| {
        let l = lower(l);
        l.starts_with("version ") && l.contains("iometer") || l.starts_with("'test setup")
    }) || lines().any(|l| lower(l).starts_with("'access specifications"))
    {
        return Some(Format::Iometer);
    }
    let head: String = lines().take(5).collect::<Vec<_>>().join(" ");
    if head.starts_with('<') && lower(&head).contains("<profile") {
        return Some(Format::DiskSpd);
    }
    let starts = |keys: &[&str]| {
        lines()
            .filter(|l| !l.starts_with('*') && !l.starts_with('#'))
            .any(|l| keys.iter().any(|k| lower(l).starts_with(k)))
    };
    if starts(&["rd="]) && starts(&["sd=", "wd=", "fsd=", "fwd="]) {
        return Some(Format::Vdbench);
    }
    let storlab = lines().any(|l| {
        let value = l.split_once('=').map(|(_, v)| v.trim_start());
        l.starts_with("[[")
            || [
                "[cycle]",
                "[exchange]",
                "[users]",
                "[data]",
                "[precondition]",
            ]
            .contains(&l)
            || value.is_some_and(|v| v.starts_with(['"', '\'', '{']))
    });
    if storlab || toml::from_str::<toml::Table>(text).is_ok() {
        return None;
    }
    let section = lines().any(|l| l.starts_with('[') && l.ends_with(']'));
    let fio_key = lines().any(|l| {
        let key = l.split('=').next().unwrap_or("").trim();
        FIO_KEYS.contains(&key.to_ascii_lowercase().as_str())
    });
    (section && fio_key).then_some(Format::Fio)
}

/// Converts the job file at `path` (its text already read: `text`), of format `from` or, when
/// `None`, of the format [`detect`] finds.
pub fn convert(
    path: &Path,
    text: &str,
    from: Option<Format>,
    opts: &Options,
) -> Result<(Format, Converted), ImportError> {
    let format = match from.or_else(|| detect(text)) {
        Some(f) => f,
        None => {
            return Err(ImportError::Read(format!(
                "{}: not a job file storlab can convert: none of fio, Iometer (.icf), DiskSpd (XML profile) or vdbench; name its format with --from {}",
                path.display(),
                Format::ALL.map(Format::name).join("|")
            )));
        }
    };
    let converted = match format {
        Format::Fio => super::fio::convert(path, opts)?,
        Format::Iometer => super::iometer::convert(path, text, opts)?,
        Format::DiskSpd => super::diskspd::convert(path, text, opts)?,
        Format::Vdbench => super::vdbench::convert(path, text, opts)?,
    };
    Ok((format, converted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_apart_by_content() {
        let icf = "Version 1.1.0 \n'TEST SETUP ====================================\n";
        assert_eq!(detect(icf), Some(Format::Iometer));
        let xml = "<?xml version=\"1.0\"?>\n<Profile>\n<TimeSpans>";
        assert_eq!(detect(xml), Some(Format::DiskSpd));
        let vd = "* a comment\nsd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1,xfersize=4k\nrd=run1,wd=wd1,iorate=max,elapsed=60\n";
        assert_eq!(detect(vd), Some(Format::Vdbench));
        let fio = "[global]\nioengine=io_uring\n[job]\nrw=randread\n";
        assert_eq!(detect(fio), Some(Format::Fio));
        let storlab = "duration = \"10s\"\n[[worker]]\nqueue_depth = 8\n";
        assert_eq!(detect(storlab), None);
        // storlab jobs with syntax errors stay storlab's, to be reported as such.
        for broken in [
            "description = \"x\"\n[[worker]]\nqueue_depth = \n",
            "[[worker]]\n[[worker.access]]\nclass =\n",
            "[[target]]\npath=\n",
            "description = \"bad\"\n[job]\nrw = read\n",
            "[exchange]\nmailboxes = 10\n[exchange]\n",
        ] {
            assert_eq!(detect(broken), None, "{broken}");
        }
        assert_eq!(detect("[a]\nfoo=bar\n"), None);
        assert_eq!(detect("hello\n"), None);
    }

    #[test]
    fn map_names_compare_loosely() {
        let o = Options {
            lenient: false,
            map: vec![
                parse_map("C:=/mnt/a").unwrap(),
                parse_map("\"D:\\\"=/mnt/b").unwrap(),
            ],
        };
        assert_eq!(o.mapped("c:\\"), Some(Path::new("/mnt/a")));
        assert_eq!(o.mapped("D:"), Some(Path::new("/mnt/b")));
        assert_eq!(o.mapped("E:"), None);
        assert!(parse_map("nothing").is_err());
        assert!(parse_map("=x").is_err());
        let mut notes = Vec::new();
        assert_eq!(
            o.place("E:", "storlab-E.dat", &mut notes),
            PathBuf::from("storlab-E.dat")
        );
        assert!(notes[0].contains("--map \"E:=PATH\""), "{notes:?}");
    }

    #[test]
    fn source_comments_stay_on_one_line() {
        let c = source_comment("a.icf:3", "x\ny\u{7}z");
        assert_eq!(c, "# a.icf:3: x y z\n");
        assert!(source_comment("a:1", &"w".repeat(500)).len() < 140);
    }
}
