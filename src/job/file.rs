//! Job files as text: reading them (UTF-8 checked), parsing TOML into a spec with the line of
//! every syntax error, and turning keys and table positions into `file:line` for errors.

use super::JobError;
use super::spec::JobSpec;
use std::path::Path;

/// Where a spanned table starts, as `file:line`.
pub(super) struct Source<'a> {
    pub(super) name: String,
    pub(super) text: Option<&'a str>,
}

impl Source<'_> {
    /// `file:line` of a top-level key (or of a `[key]` table), or `file:1` when the key is not
    /// written (an error about the file as a whole).
    pub(super) fn top_level(&self, key: &str) -> String {
        match self.text {
            Some(text) => format!("{}:{}", self.name, key_line(text, None, key).unwrap_or(1)),
            None => self.name.clone(),
        }
    }

    /// An error about top-level key `key` (or the `[key]` table), located at its line.
    pub(super) fn top_level_error(&self, key: &str, message: String) -> JobError {
        JobError {
            location: self.top_level(key),
            key: key.into(),
            message,
        }
    }

    /// An error about `key` of the `[table]` table, at the key's line (or the table's).
    pub(super) fn table_error(&self, table: &str, key: &str, message: String) -> JobError {
        let location = match self.text {
            Some(text) => match key_line(text, Some(table), key) {
                Some(line) => format!("{}:{line}", self.name),
                None => self.top_level(table),
            },
            None => self.name.clone(),
        };
        JobError {
            location,
            key: format!("{table}.{key}"),
            message,
        }
    }

    pub(super) fn at(&self, span: std::ops::Range<usize>) -> String {
        match self.text {
            Some(text) => format!("{}:{}", self.name, line_at(text, span.start)),
            None => self.name.clone(),
        }
    }
}

/// The 1-based line of byte `offset` in `text` (clamped to the text, any byte boundary).
fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The 1-based line where `key` is written in `table` of a TOML text (`None`: the top level,
/// before any table header), as `key = ...` (bare or quoted) or as a `[table.key]` header;
/// `None` when it is not written there. A line scanner, not a parser: it serves error
/// locations, so it never fails.
pub(crate) fn key_line(text: &str, table: Option<&str>, key: &str) -> Option<usize> {
    let header = |l: &str| -> Option<String> {
        let inner = l.strip_prefix('[')?;
        let inner = inner.strip_prefix('[').unwrap_or(inner);
        let name = inner.split(']').next()?;
        Some(
            name.split('.')
                .map(|part| part.trim().trim_matches('"').trim_matches('\''))
                .collect::<Vec<_>>()
                .join("."),
        )
    };
    let wanted_header = match table {
        Some(t) => format!("{t}.{key}"),
        None => key.to_string(),
    };
    let mut current: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let l = line.trim_start();
        if l.starts_with('[') {
            let h = header(l);
            if h.as_deref() == Some(wanted_header.as_str()) {
                return Some(i + 1);
            }
            current = h;
            continue;
        }
        if current.as_deref() != table {
            continue;
        }
        for quoted in [key.to_string(), format!("\"{key}\""), format!("'{key}'")] {
            if let Some(rest) = l.strip_prefix(quoted.as_str()) {
                if rest.trim_start().starts_with('=') {
                    return Some(i + 1);
                }
            }
        }
    }
    None
}

/// `name:line` of `key` in `table` of `text` (see [`key_line`]); when the key is not written,
/// the line of the table's header, else line 1.
pub(crate) fn locate(name: &Path, text: &str, table: Option<&str>, key: &str) -> String {
    let line = key_line(text, table, key)
        .or_else(|| {
            let (parent, last) = table?.rsplit_once('.').unwrap_or(("", table?));
            key_line(text, (!parent.is_empty()).then_some(parent), last)
        })
        .unwrap_or(1);
    format!("{}:{line}", name.display())
}

/// The sections that make a job file an application's job rather than a workload's, with what
/// they run; `storlab run` hands such a file to the command of the same name.
const APPLICATIONS: [(&str, &str); 2] = [
    ("exchange", "an Exchange validation job"),
    ("users", "a simulated-users job"),
];

/// Parses TOML text into `T`. Syntax errors, unknown keys, wrong types and bad units name the
/// file, line and column, and quote the line.
pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    name: &Path,
    text: &str,
) -> Result<T, JobError> {
    toml::from_str(text).map_err(|e| {
        let (line, col) = match e.span() {
            Some(s) => {
                let start = s.start.min(text.len());
                let line = line_at(text, start);
                let line_start = text.as_bytes()[..start]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map(|i| i + 1)
                    .unwrap_or(0);
                (line, start - line_start + 1)
            }
            None => (1, 1),
        };
        let snippet: String = text
            .lines()
            .nth(line.saturating_sub(1))
            .unwrap_or_default()
            .trim()
            .chars()
            .map(|c| {
                if c.is_control() {
                    format!("\\u{{{:x}}}", c as u32)
                } else {
                    c.to_string()
                }
            })
            .collect();
        let mut message = suggest(e.message().trim());
        let header = |a: &&(&str, &str)| snippet == format!("[{}]", a.0);
        let other_job = APPLICATIONS
            .iter()
            .find(header)
            .filter(|_| message.starts_with("unknown key"));
        let both = text.parse::<toml::Table>().is_ok_and(|t| {
            APPLICATIONS.iter().all(|a| t.contains_key(a.0))
        });
        if other_job.is_some() && both {
            message = "a job file is one job: an `[exchange]` section or a `[users]` section, not both; put each in a file of its own".to_string();
        } else if let Some(app) = other_job {
            // A whole job of another kind, given to the wrong command.
            message = format!(
                "the `[{}]` section makes this {}, not this command's: run it with `storlab {} {}`",
                app.0,
                app.1,
                app.0,
                name.display(),
            );
        }
        if message.is_empty() {
            // toml gives no text for a stray character; say which one it is.
            let at = e.span().map(|s| s.start).unwrap_or(0);
            message = match text.get(at..).and_then(|t| t.chars().next()) {
                Some(c) if c.is_control() => format!(
                    "control character U+{:04X} is not allowed in TOML, not even in a comment",
                    c as u32
                ),
                Some(c) => format!("unexpected `{c}`"),
                None => "unexpected end of the file".to_string(),
            };
        }
        let message = if snippet.is_empty() {
            message
        } else {
            format!("{message}\n    | {snippet}")
        };
        JobError {
            location: format!("{}:{line}:{col}", name.display()),
            key: String::new(),
            message,
        }
    })
}

/// Rewrites serde's "unknown field `x`, expected one of `a`, `b`" as "unknown key `x`; did you
/// mean `a`?" when a known key is close (edit distance, or the same but for case, `_` and
/// `-`); otherwise lists the keys allowed there. Other messages are returned as they are.
fn suggest(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_string();
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return message.to_string();
    };
    let allowed: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    match closest(unknown, &allowed) {
        Some(known) => format!("unknown key `{unknown}`; did you mean `{known}`?"),
        None if allowed.is_empty() => format!("unknown key `{unknown}`: no key is allowed here"),
        None => format!(
            "unknown key `{unknown}`; the keys allowed here are {}",
            allowed.join(", ")
        ),
    }
}

/// The known word closest to `word`, if one is close enough to be what was meant.
pub(crate) fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let plain = |w: &str| w.to_lowercase().replace(['_', '-'], "");
    let p = plain(word);
    if let Some(same) = known.iter().find(|k| plain(k) == p) {
        return Some(same);
    }
    let limit = (word.chars().count() / 3).clamp(1, 3);
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(word, k), *k))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// Parses a TOML job file's text. Syntax errors, unknown keys and bad units name the line.
pub(crate) fn parse(name: &Path, text: &str) -> Result<JobSpec, JobError> {
    parse_toml(name, text)
}

/// A job file's bytes as text; bytes that are not UTF-8 are an error naming their line.
pub(crate) fn decode(name: &Path, bytes: Vec<u8>) -> Result<String, JobError> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        JobError {
            location: format!("{}:{line}", name.display()),
            key: String::new(),
            message: format!("byte {at} is not UTF-8 text; a job file is TOML, which is UTF-8"),
        }
    })
}

/// Reads a job file as text, within the cap of job files (`crate::input`: a regular file of
/// at most 16 MiB); errors name the file (and the line of a byte that is not UTF-8).
pub(crate) fn read_text(path: &Path) -> Result<String, JobError> {
    let bytes = crate::input::read(path, crate::input::Kind::JobFile).map_err(|e| JobError {
        location: path.display().to_string(),
        key: String::new(),
        message: e.unnamed(),
    })?;
    decode(path, bytes)
}

/// The comment that ties a part of a job converted from another tool's file to its source line: `# FILE:LINE: TEXT`
/// (the text on one line, control characters dropped, at most 120 characters).
pub(crate) fn source_comment(at: &str, text: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_application_section_names_its_command() {
        // A workload job given an `[exchange]` section (as `storlab run` would not: it hands
        // such a file on) is told which command runs it, not which keys a workload allows.
        let e = parse(Path::new("j.toml"), "# db\n[exchange]\nmailboxes = 3\n").unwrap_err();
        assert_eq!(e.location, "j.toml:2:2");
        assert!(
            e.message.starts_with(
                "the `[exchange]` section makes this an Exchange validation job, not this command's: run it with `storlab exchange j.toml`"
            ),
            "{e}"
        );
        let e = parse(Path::new("j.toml"), "[exchange]\n[users]\n").unwrap_err();
        assert!(e.message.starts_with("a job file is one job"), "{e}");
        // A `users` key that is not a section header is only an unknown key.
        let e = parse(Path::new("j.toml"), "users = 3\n").unwrap_err();
        assert!(e.message.starts_with("unknown key `users`"), "{e}");
    }

    #[test]
    fn unknown_keys_get_a_suggestion_when_one_is_close() {
        let e = parse(Path::new("j.toml"), "[[targets]]\npath = \"x\"\n").unwrap_err();
        assert_eq!(e.location, "j.toml:1:3");
        assert!(
            e.message
                .starts_with("unknown key `targets`; did you mean `target`?"),
            "{e}"
        );
        let e = parse(
            Path::new("j.toml"),
            "[[worker]]\n[[worker.access]]\nblocksize = \"4k\"\n",
        )
        .unwrap_err();
        assert!(
            e.message
                .starts_with("unknown key `blocksize`; did you mean `block_size`?"),
            "{e}"
        );
        let e = parse(Path::new("j.toml"), "colour = 1\n").unwrap_err();
        assert!(
            e.message
                .contains("the keys allowed here are description, engine"),
            "{e}"
        );
        assert_eq!(
            closest("QueueDepth", &["queue_depth", "count"]),
            Some("queue_depth")
        );
        assert_eq!(closest("duraton", &["duration", "ramp"]), Some("duration"));
        assert_eq!(closest("x", &["duration", "ramp"]), None);
    }
}
