//! A fio job file read as fio reads it: its sections and options, with the files it includes
//! (`include`, nested at most [`MAX_INCLUDE_DEPTH`] deep, [`MAX_INCLUDES`] in all, their bytes
//! counted together within the cap of fio job files, [`crate::input`]) and `${VAR}` from the
//! environment.

use super::{FioError, Opt, Section};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The sections of the fio job file `text` (read from `path`) and of the files it includes, in
/// order: `text` is the file as the caller read it, the files it includes are read by their
/// path (relative to its folder), its bytes counted within the cap of fio job files.
pub(super) fn read(path: &Path, text: &str) -> Result<Vec<Section>, FioError> {
    let mut sections = Vec::new();
    let mut budget = Budget {
        bytes: crate::input::Kind::FioFile
            .cap()
            .saturating_sub(text.len() as u64),
        includes: 0,
    };
    read_text(path, text, &mut sections, 0, &mut budget)?;
    Ok(sections)
}

/// Includes a fio job file may nest, one in another.
const MAX_INCLUDE_DEPTH: usize = 16;
/// `include` lines a fio job file and its includes may hold together.
const MAX_INCLUDES: usize = 256;
/// Options a section (or all `[global]` sections together) may hold.
pub(super) const MAX_OPTIONS: usize = 1024;

/// What the files read so far leave of the limits on a fio job file and its includes
/// together: bytes ([`crate::input::Kind::FioFile`]'s cap) and `include` lines.
struct Budget {
    bytes: u64,
    includes: usize,
}

/// Reads the sections of the included file `path` (and of the files it includes) into `out`.
fn read_into(
    path: &Path,
    out: &mut Vec<Section>,
    depth: usize,
    included_at: &str,
    budget: &mut Budget,
) -> Result<(), FioError> {
    if depth > MAX_INCLUDE_DEPTH {
        return Err(FioError::Read(format!(
            "{included_at}: includes nest more than {MAX_INCLUDE_DEPTH} deep (a file including itself?); nest them at most {MAX_INCLUDE_DEPTH} deep"
        )));
    }
    let kind = crate::input::Kind::FioFile;
    let bytes = crate::input::open_within(path, kind, budget.bytes)
        .and_then(crate::input::Input::read_all)
        .map_err(|e| FioError::Read(format!("{included_at}: cannot include it: {e}")))?;
    budget.bytes -= bytes.len() as u64;
    let text = crate::import::decode(path, &bytes)?;
    read_text(path, &text, out, depth, budget)
}

/// Reads the sections of `text`, the file `path` (included `depth` deep), into `out`.
fn read_text(
    path: &Path,
    text: &str,
    out: &mut Vec<Section>,
    depth: usize,
    budget: &mut Budget,
) -> Result<(), FioError> {
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let at = || format!("{}:{line}", path.display());
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix("include ") {
            budget.includes += 1;
            if budget.includes > MAX_INCLUDES {
                return Err(FioError::Read(format!(
                    "{}: more than {MAX_INCLUDES} includes in all; a fio job file and the files it includes hold at most {MAX_INCLUDES} `include` lines together: merge the included files",
                    at()
                )));
            }
            let inc = PathBuf::from(rest.trim());
            let inc = match path.parent() {
                Some(dir) if inc.is_relative() => dir.join(inc),
                _ => inc,
            };
            read_into(&inc, out, depth + 1, &at(), budget)?;
            continue;
        }
        if let Some(name) = l.strip_prefix('[') {
            if depth > 0 {
                return Err(FioError::Read(format!(
                    "{}: `{l}`: an included file adds options to the section it is included in; it has no sections of its own (as in fio)",
                    at()
                )));
            }
            let name = name.strip_suffix(']').ok_or_else(|| {
                FioError::Read(format!("{}: `{l}`: a section name ends with `]`", at()))
            })?;
            out.push(Section {
                name: name.trim().to_string(),
                opts: BTreeMap::new(),
                file: path.to_path_buf(),
                line,
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            return Err(FioError::Read(format!(
                "{}: `{l}` comes before any section; fio options go in [global] or a [job] section",
                at()
            )));
        };
        // What follows a `;` or `#` after a blank is a comment, as fio reads it
        // (`runtime=3600  # one hour`, `numjobs=4\t; 4 jobs`).
        let l = match l.find([';', '#']) {
            Some(i) if i > 0 && l[..i].ends_with([' ', '\t']) => l[..i].trim_end(),
            _ => l,
        };
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(expand_env(v.trim(), &at)?)),
            None => (l, None),
        };
        // Read by the name storlab knows it by; the file's is kept for messages.
        let (key, written) = match ALIASES.iter().find(|(other, _)| *other == key) {
            Some(&(other, name)) => (name, Some(other)),
            None => (key, None),
        };
        if section.opts.len() == MAX_OPTIONS && !section.opts.contains_key(key) {
            return Err(FioError::Read(format!(
                "{}: `{key}` is the {}th option of [{}]; a section holds at most {MAX_OPTIONS} (fio has about 400)",
                at(),
                MAX_OPTIONS + 1,
                section.name
            )));
        }
        section.opts.insert(
            key.to_string(),
            Opt {
                value,
                file: path.to_path_buf(),
                line,
                written,
            },
        );
    }
    Ok(())
}

/// fio's other names for options storlab reads by their short ones (fio's `.alias`): the
/// file's name, then storlab's.
const ALIASES: [(&str, &str); 5] = [
    ("timeout", "runtime"),
    ("steadystate", "ss"),
    ("steadystate_duration", "ss_dur"),
    ("steadystate_ramp_time", "ss_ramp"),
    ("steadystate_check_interval", "ss_interval"),
];

/// `${VAR}` replaced by the environment's `VAR`.
fn expand_env(v: &str, at: &dyn Fn() -> String) -> Result<String, FioError> {
    let mut out = String::new();
    let mut rest = v;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| FioError::Read(format!("{}: `{v}`: `${{` without `}}`", at())))?;
        let name = &after[..end];
        let value = std::env::var(name).map_err(|_| {
            FioError::Read(format!(
                "{}: `{v}` uses ${{{name}}}, which is not set in the environment",
                at()
            ))
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
