//! Other tools' job files as storlab jobs, the importers' layer: `storlab import FILE`,
//! `storlab run FILE`, `storlab import-fio`, `--fio` and `storlab run --diskspd "ARGS"`. One
//! table ([`CONVERTERS`]) says, for each format, how a file of it is recognised (from its
//! content, else from its name: [`identify`], called once by the command line) and converted;
//! each format's converter (`fio/`, `iometer/`, `diskspd/`, `vdbench/`) writes a storlab job
//! (TOML) whose comments name the source line each part came from. What cannot be converted is
//! listed with its file, line and reason ([`Unsupported`]), and refused unless `lenient`.
//! Nothing but the command line uses this layer; it uses `job` (the job model it writes for).

mod detect;
mod diskspd;
mod fio;
mod iometer;
mod text;
mod vdbench;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

/// A job file format storlab converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
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
    pub(crate) const ALL: [Format; 4] = [
        Format::Fio,
        Format::Iometer,
        Format::DiskSpd,
        Format::Vdbench,
    ];

    /// Its entry of [`CONVERTERS`].
    fn converter(self) -> &'static Converter {
        CONVERTERS
            .iter()
            .find(|c| c.format == self)
            .unwrap_or(&CONVERTERS[0])
    }

    /// The name `--from` takes (and the results record: `invocation.source.format`).
    pub(crate) fn name(self) -> &'static str {
        self.converter().name
    }

    /// The tool's name as people write it, for messages and comments.
    pub(crate) fn tool(self) -> &'static str {
        crate::results::imported_tool(self.name())
    }

    /// The format named `s` (`--from`), in any case.
    pub(crate) fn parse(s: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// How one format is recognised and converted.
struct Converter {
    format: Format,
    /// The name `--from` takes.
    name: &'static str,
    /// File name extensions (lower case) that name the format when the content does not
    /// (a broken file is then reported by its own tool's reader).
    extensions: &'static [&'static str],
    /// Whether a file's text is of this format, on positive evidence only ([`detect`]).
    detect: fn(&str) -> bool,
    /// Converts a file of the format: its path (for messages, comments and the files it
    /// includes) and its text as read.
    convert: fn(&Path, &str, &Options) -> Result<Converted, ImportError>,
}

/// Every format storlab converts, in the order their content is looked for: the formats
/// with the surest marks first (an Iometer file's `Version` line, a DiskSpd profile's
/// `<Profile>`, vdbench's definitions), fio's ini sections last.
const CONVERTERS: [Converter; 4] = [
    Converter {
        format: Format::Iometer,
        name: "iometer",
        extensions: &["icf"],
        detect: detect::iometer,
        convert: iometer::convert,
    },
    Converter {
        format: Format::DiskSpd,
        name: "diskspd",
        extensions: &["xml"],
        detect: detect::diskspd,
        convert: diskspd::convert,
    },
    Converter {
        format: Format::Vdbench,
        name: "vdbench",
        extensions: &["vdb", "vdbench"],
        detect: detect::vdbench,
        convert: vdbench::convert,
    },
    Converter {
        format: Format::Fio,
        name: "fio",
        extensions: &["fio"],
        detect: detect::fio,
        convert: fio::convert,
    },
];

/// An option or line storlab does not convert.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unsupported {
    /// The file and line it is on (`test.icf:12`), or `command line`.
    pub(crate) at: String,
    /// The option as written (`key=value`, or the line).
    pub(crate) option: String,
    /// Why, in one line.
    pub(crate) why: String,
}

/// A converted job file.
#[derive(Debug, Clone)]
pub(crate) struct Converted {
    /// The storlab job, TOML.
    pub(crate) toml: String,
    /// What was left out (only with `lenient`).
    pub(crate) left_out: Vec<Unsupported>,
    /// Files the conversion read besides its own (DiskSpd's write-data file): a `--map` may
    /// place one of them rather than a target.
    pub(crate) read: Vec<PathBuf>,
}

/// Why a job file cannot be converted.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImportError {
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
pub(crate) struct Options {
    /// Leave out what cannot be converted (each is listed) instead of refusing the file.
    pub(crate) lenient: bool,
    /// `--map TARGET=PATH`: where the source tool's targets (Windows drive names, physical
    /// disk numbers, paths of another machine) are on this one.
    pub(crate) map: Vec<(String, PathBuf)>,
}

impl Options {
    /// The path `--map` gives the source tool's target `name`: names are compared without
    /// case, quotes, surrounding spaces or a trailing `\` or `/` (`C:`, `c:\`, `"C:"` are one).
    pub(crate) fn mapped(&self, name: &str) -> Option<&Path> {
        let key = map_key(name);
        self.map
            .iter()
            .find(|(from, _)| map_key(from) == key)
            .map(|(_, to)| to.as_path())
    }

    /// Where the source tool's target `name` goes: its `--map` path, or else `fallback` (a
    /// scratch file the converter names), with a note saying how to place it.
    pub(crate) fn place(&self, name: &str, fallback: &str, notes: &mut Vec<String>) -> PathBuf {
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
pub(crate) fn parse_map(s: &str) -> Result<(String, PathBuf), String> {
    match s.rsplit_once('=') {
        Some((from, to)) if !from.trim().is_empty() && !to.trim().is_empty() => {
            Ok((from.trim().to_string(), PathBuf::from(to.trim())))
        }
        _ => Err(format!(
            "`{s}`: write TARGET=PATH, e.g. --map \"C:=/mnt/test/iobw.tst\" or --map \"PHYSICALDRIVE:1=/dev/sdb\""
        )),
    }
}

pub(crate) use crate::job::file::source_comment;

/// The format of another tool's job file `text`, read from `path` (`None`: storlab's own, or
/// none storlab knows): from its content ([`CONVERTERS`]' marks), else from its name (`.fio`,
/// `.icf`, `.xml`, `.vdb`), so that a broken file is reported by its own tool's reader. A file
/// named `.toml` is storlab's (`--from` says otherwise). The command line calls this once and
/// hands the format to [`convert`].
pub(crate) fn identify(path: &Path, text: &str) -> Option<Format> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if ext.as_deref() == Some("toml") {
        return None;
    }
    let by_content = if detect::storlab(text) {
        None
    } else {
        CONVERTERS.iter().find(|c| (c.detect)(text))
    };
    by_content
        .or_else(|| {
            let ext = ext?;
            CONVERTERS
                .iter()
                .find(|c| c.extensions.contains(&ext.as_str()))
        })
        .map(|c| c.format)
}

/// Reads the job file of `format` at `path` as text, within the cap of job files (a regular
/// file, [`crate::input`]), in any encoding Windows tools write ([`decode`]); errors name the
/// file.
pub(crate) fn read(path: &Path, format: Format) -> Result<String, ImportError> {
    let kind = match format {
        Format::Fio => crate::input::Kind::FioFile,
        _ => crate::input::Kind::JobFile,
    };
    let bytes = crate::input::read(path, kind).map_err(|e| ImportError::Read(e.to_string()))?;
    decode(path, &bytes)
}

/// Another tool's file as text: UTF-8 (a byte-order mark skipped), UTF-16 with its byte-order
/// mark, or else Windows-1252, as Iometer, DiskSpd, vdbench and fio files saved on Windows
/// are; an error names `path` and the byte.
pub(crate) fn decode(path: &Path, bytes: &[u8]) -> Result<String, ImportError> {
    text::decode(bytes)
        .map(|(text, _)| text)
        .map_err(|e| ImportError::Read(format!("{}: {e}", path.display())))
}

/// Converts `text`, the job file at `path`, of format `format`. The job it writes is one
/// storlab reads back ([`readable`]), and every `--map` places a target of it.
pub(crate) fn convert(
    path: &Path,
    text: &str,
    format: Format,
    opts: &Options,
) -> Result<Converted, ImportError> {
    let converted = (format.converter().convert)(path, text, opts)?;
    readable(&path.display().to_string(), &converted, opts)?;
    Ok(converted)
}

/// Converts a DiskSpd command line (`-b8K -d60 -o4 -t2 -r -w30 -Sh D:\\test.dat`), as given
/// to `storlab run --diskspd`, to a job storlab reads back.
pub(crate) fn convert_diskspd_line(line: &str, opts: &Options) -> Result<Converted, ImportError> {
    let converted = diskspd::convert_args(line, opts)?;
    readable("the DiskSpd command line", &converted, opts)?;
    Ok(converted)
}

/// The one check of what an importer writes: the job parses and resolves as storlab reads
/// any job file (the same validation `storlab run` makes), so that no conversion, strict or
/// lenient, hands on a job storlab refuses later; and each `--map` names a target the job
/// has. A failure here names what the converted job asks for that storlab cannot do.
fn readable(source: &str, converted: &Converted, opts: &Options) -> Result<(), ImportError> {
    let name = PathBuf::from(format!("the job converted from {source}"));
    if let Some(anchor) = workload_anchor(&converted.toml) {
        // A file-system workload's job (vdbench's fsd): the command line loads it through
        // its workload, which checks it as it checks any `[fs]` section; here, the maps.
        for (from, to) in &opts.map {
            if !anchor.starts_with(to) {
                return Err(ImportError::Read(format!(
                    "--map \"{from}={}\": {source} has no anchor named `{from}`; its anchor is {}",
                    to.display(),
                    anchor.display()
                )));
            }
        }
        return Ok(());
    }
    let refused = |e: crate::job::JobError| {
        ImportError::Read(format!(
            "{source}: storlab cannot run what it converts to: {e}"
        ))
    };
    let spec = crate::job::file::parse(&name, &converted.toml).map_err(refused)?;
    crate::job::resolve(&spec, Some((&name, &converted.toml))).map_err(refused)?;
    let paths: Vec<&Path> = spec
        .target
        .iter()
        .filter_map(|t| t.get_ref().path.as_deref())
        .collect();
    for (from, to) in &opts.map {
        let read = converted.read.iter().any(|p| p.starts_with(to));
        if !read && !paths.iter().any(|p| p.starts_with(to)) {
            return Err(ImportError::Read(format!(
                "--map \"{from}={}\": {source} has no target named `{from}`; its targets are {}: give --map one of them",
                to.display(),
                target_names(&spec)
            )));
        }
    }
    Ok(())
}

/// The anchor of a converted file-system workload's job (its `[fs]` table), if it is one.
fn workload_anchor(toml: &str) -> Option<PathBuf> {
    let table = toml.parse::<toml::Table>().ok()?;
    let fs = table.get("fs")?.as_table()?;
    Some(PathBuf::from(
        fs.get("anchor").and_then(toml::Value::as_str).unwrap_or(""),
    ))
}

/// The targets of a converted job as the source tool named them, for messages.
fn target_names(spec: &crate::job::spec::JobSpec) -> String {
    let names: Vec<String> = spec
        .target
        .iter()
        .take(16)
        .filter_map(|t| t.get_ref().name.clone())
        .map(|n| format!("`{n}`"))
        .collect();
    match (names.len(), spec.target.len()) {
        (0, _) => "none".into(),
        (n, all) if all > n => format!("{} and {} more", names.join(", "), all - n),
        _ => names.join(", "),
    }
}

#[cfg(test)]
mod map_tests {
    use super::*;

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
