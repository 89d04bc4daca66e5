//! Reading a vdbench parameter file as vdbench reads it: comment lines (`*`, `#`, `/`), blank
//! lines, a definition spread over lines (a line ending with `,`, or the next starting with
//! one, continues it), `key=value` items separated by commas, `key=(a,b,c)` lists, quoted
//! values, and `kind=default` definitions that give later definitions of their kind their
//! values. Every definition, item and list is bounded before anything is allocated for it.

use crate::import::ImportError;
use std::path::Path;

/// Definitions a file may hold in all (vdbench files hold tens).
pub(super) const MAX_DEFS: usize = 4096;
/// Items one definition may have.
const MAX_ITEMS: usize = 256;
/// Values one list (written or expanded from a range) may have.
pub(super) const MAX_LIST: usize = 1024;
/// Values the file's definitions hold together (a default's counted again in each definition
/// it applies to): what keeps matching names and lists linear in the file's size.
const MAX_VALUES: usize = 16_384;

/// The kinds of definition: general parameters, then host, storage, workload and run
/// definitions, and the file-system ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    General,
    Hd,
    Sd,
    Wd,
    Rd,
    Fsd,
    Fwd,
}

impl Kind {
    fn of(key: &str) -> Option<Kind> {
        Some(match key {
            "hd" => Kind::Hd,
            "sd" => Kind::Sd,
            "wd" => Kind::Wd,
            "rd" => Kind::Rd,
            "fsd" => Kind::Fsd,
            "fwd" => Kind::Fwd,
            _ => return None,
        })
    }
}

/// A value as written: one word, or a parenthesised list.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    One(String),
    List(Vec<String>),
}

impl Value {
    /// The values: one, or the list's.
    pub(super) fn items(&self) -> Vec<&str> {
        match self {
            Value::One(s) => vec![s.as_str()],
            Value::List(l) => l.iter().map(String::as_str).collect(),
        }
    }
}

/// One `key=value` item and the line it is on.
#[derive(Debug, Clone)]
pub(super) struct Item {
    pub(super) key: String,
    pub(super) value: Value,
    pub(super) line: usize,
    /// As written, for messages and comments.
    pub(super) text: String,
}

/// A definition (`sd=sd1,lun=...`), or a general parameter (a definition of kind
/// [`Kind::General`] with one item), with its `default`'s items before its own.
#[derive(Debug, Clone)]
pub(super) struct Def {
    pub(super) kind: Kind,
    pub(super) name: String,
    pub(super) line: usize,
    /// The definition as written (its first 120 characters end up in the job's comments).
    pub(super) text: String,
    pub(super) items: Vec<Item>,
}

impl Def {
    /// The last item named `key` (a definition's own items come after its default's).
    pub(super) fn get(&self, key: &str) -> Option<&Item> {
        self.items.iter().rev().find(|i| i.key == key)
    }

    /// Every distinct key, in the order first written, each its last item.
    pub(super) fn keys(&self) -> Vec<&Item> {
        let mut out: Vec<&Item> = Vec::new();
        for i in &self.items {
            if !out.iter().any(|o| o.key == i.key) {
                out.push(self.get(&i.key).unwrap_or(i));
            }
        }
        out
    }
}

/// A statement: the text of one definition or parameter over its lines, with the line each
/// character came from.
struct Statement {
    text: String,
    lines: Vec<(usize, usize)>,
}

impl Statement {
    fn line_at(&self, offset: usize) -> usize {
        self.lines
            .iter()
            .rev()
            .find(|(start, _)| *start <= offset)
            .map_or(0, |(_, l)| *l)
    }
}

fn is_comment(l: &str) -> bool {
    l.is_empty() || l.starts_with('*') || l.starts_with('#') || l.starts_with('/')
}

/// A line as vdbench reads it: everything from its first blank (or tab) outside double
/// quotes on is a comment (`compratio=2.3  # 65%`, `rate and 6 data points` is `rate`).
fn code_of(line: &str) -> &str {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ' ' | '\t' if !quoted => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The statements of `text`: comment lines dropped (a line starting `*`, `#` or `/`, and what
/// follows a line's first blank), continued lines joined, reading stopped at a line starting
/// `eof`, as vdbench reads a parameter file.
fn statements(lines: &[(usize, String)]) -> Vec<Statement> {
    let mut out: Vec<Statement> = Vec::new();
    let mut open = false;
    for (line, raw) in lines {
        let l = raw.trim();
        if l.starts_with("eof") {
            break;
        }
        if is_comment(l) {
            continue;
        }
        let l = code_of(l);
        if l.is_empty() {
            continue;
        }
        let continues = open || l.starts_with(',');
        match out.last_mut() {
            Some(s) if continues => {
                s.lines.push((s.text.len(), *line));
                s.text.push_str(l);
            }
            _ => out.push(Statement {
                text: l.to_string(),
                lines: vec![(0, *line)],
            }),
        }
        open = l.ends_with(',') || unbalanced(l);
    }
    out
}

/// A line whose parentheses are not closed continues on the next line.
fn unbalanced(l: &str) -> bool {
    let open = l.chars().filter(|&c| c == '(').count();
    let close = l.chars().filter(|&c| c == ')').count();
    open > close
}

/// Splits `s` at commas outside parentheses and quotes: (start offset, piece).
fn split_top(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, false, 0);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quote = !quote,
            '(' if !quote => depth += 1,
            ')' if !quote => depth -= 1,
            ',' if !quote && depth <= 0 => {
                out.push((start, &s[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push((start, &s[start..]));
    out
}

fn unquote(s: &str) -> String {
    let t = s.trim();
    t.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
        .to_string()
}

/// A value: `(a,b,c)` a list, else one word.
fn value(v: &str) -> Option<Value> {
    let v = v.trim();
    match v.strip_prefix('(') {
        Some(inner) => {
            let inner = inner.strip_suffix(')')?;
            if inner.contains('(') || inner.contains(')') {
                return None;
            }
            let list: Vec<String> = inner
                .split(',')
                .map(unquote)
                .filter(|s| !s.is_empty())
                .collect();
            Some(Value::List(list))
        }
        None => (!v.contains('(') && !v.contains(')')).then(|| Value::One(unquote(v))),
    }
}

/// Each kind's keywords in the order vdbench compares a keyword with them: it takes any
/// start of one (of 2 characters or more: `el=10` is `elapsed=10`, `forx=` `forxfersize=`),
/// the first that matches.
const KEYWORDS: [(Kind, &[&str]); 3] = [
    (
        Kind::Sd,
        &[
            "sd",
            "host",
            "hd",
            "lun",
            "count",
            "size",
            "threads",
            "hitarea",
            "offset",
            "align",
            "kstat",
            "instance",
            "replay",
            "journal",
            "resetlun",
            "resetbus",
            "openflags",
            "range",
            "streams",
        ],
    ),
    (
        Kind::Wd,
        &[
            "wd",
            "rd",
            "sd",
            "skew",
            "xfersize",
            "readpct",
            "rdpct",
            "writepct",
            "wrpct",
            "range",
            "hotband",
            "seekpct",
            "stride",
            "priority",
            "iorate",
            "rhpct",
            "whpct",
            "host",
            "hd",
            "openflags",
            "user",
            "threads",
            "streams",
        ],
    ),
    (
        Kind::Rd,
        &[
            "rd",
            "wd",
            "sd",
            "fsd",
            "iorate",
            "maxdata",
            "skew",
            "curve",
            "stopcurve",
            "elapsed",
            "interval",
            "warmup",
            "replay",
            "pause",
            "distribution",
            "startcmd",
            "start_cmd",
            "endcmd",
            "end_cmd",
            "fwd",
            "fwdrate",
            "operations",
            "format",
            "openflags",
            "mount",
            "forxfersize",
            "forthreads",
            "forrdpct",
            "forrhpct",
            "forwhpct",
            "forseekpct",
            "forhitarea",
            "forcompratio",
            "threads",
            "xfersize",
            "rdpct",
            "seekpct",
            "rhpct",
            "whpct",
            "hitarea",
            "compratio",
        ],
    ),
];

/// A keyword of a definition of `kind` as vdbench reads it: itself when it is one, else the
/// first of the kind's keywords it starts ([`KEYWORDS`]), else as written.
fn full_keyword(kind: Kind, key: &str) -> String {
    let Some((_, words)) = KEYWORDS.iter().find(|(k, _)| *k == kind) else {
        return key.to_string();
    };
    if words.contains(&key) || key.len() < 2 {
        return key.to_string();
    }
    words
        .iter()
        .find(|w| w.starts_with(key))
        .map_or_else(|| key.to_string(), |w| (*w).to_string())
}

/// `include=FILE` lines a parameter file may hold (vdbench reads each once, none nested).
const MAX_INCLUDES: usize = 64;

/// The lines of `text` with their numbers, each `include=FILE` line replaced by the lines of
/// FILE (found beside `path`, else from the current directory, as vdbench looks for it; its
/// lines numbered as the `include=` line, which messages then point at). An included file
/// that includes another is refused, as vdbench refuses it.
fn with_includes(path: &Path, text: &str) -> Result<Vec<(usize, String)>, ImportError> {
    let mut out = Vec::new();
    let mut includes = 0;
    for (i, raw) in text.lines().enumerate() {
        let Some(name) = raw.trim().strip_prefix("include=") else {
            out.push((i + 1, raw.to_string()));
            continue;
        };
        let at = format!("{}:{}", path.display(), i + 1);
        includes += 1;
        if includes > MAX_INCLUDES {
            return Err(ImportError::Read(format!(
                "{at}: more than {MAX_INCLUDES} include= lines; merge the included files"
            )));
        }
        let name = code_of(name.trim());
        let beside = path.parent().map(|d| d.join(name));
        let file = match beside.filter(|_| !name.contains('/')) {
            Some(b) if b.exists() => b,
            _ => std::path::PathBuf::from(name),
        };
        let included = crate::import::read(&file, crate::import::Format::Vdbench)
            .map_err(|e| ImportError::Read(format!("{at}: include={name}: {e}")))?;
        for l in included.lines() {
            if l.trim().starts_with("include=") {
                return Err(ImportError::Read(format!(
                    "{at}: include={name} holds an include= line itself; vdbench includes one level only: paste it in"
                )));
            }
            out.push((i + 1, l.to_string()));
        }
    }
    Ok(out)
}

/// Every definition of the file, `default` ones folded into the definitions after them.
pub(super) fn read(path: &Path, text: &str) -> Result<Vec<Def>, ImportError> {
    let at = |line: usize| format!("{}:{line}", path.display());
    let mut defs: Vec<Def> = Vec::new();
    let mut defaults: Vec<(Kind, Vec<Item>)> = Vec::new();
    let mut values = 0usize;
    for st in statements(&with_includes(path, text)?) {
        let pieces = split_top(&st.text);
        let first_line = st.line_at(0);
        if pieces.len() > MAX_ITEMS {
            return Err(ImportError::Read(format!(
                "{}: this definition has {} items; vdbench definitions here have at most {MAX_ITEMS}",
                at(first_line),
                pieces.len()
            )));
        }
        let mut items = Vec::new();
        for (start, piece) in pieces {
            let line = st.line_at(start);
            let p = piece.trim();
            if p.is_empty() {
                continue;
            }
            let Some((k, v)) = p.split_once('=') else {
                return Err(ImportError::Read(format!(
                    "{}: `{p}` is not a vdbench parameter (vdbench reads a line up to its first blank, and refuses this one too: \"Expecting 'keyword='\"): write keyword=value, e.g. xfersize=4k, or make the line a comment with a * at its start",
                    at(line)
                )));
            };
            let Some(value) = value(v) else {
                return Err(ImportError::Read(format!(
                    "{}: `{p}`: a list is written (a,b,c), with no parentheses inside",
                    at(line)
                )));
            };
            if let Value::List(l) = &value
                && l.len() > MAX_LIST
            {
                return Err(ImportError::Read(format!(
                    "{}: `{}` lists {} values; a list holds at most {MAX_LIST}",
                    at(line),
                    k.trim(),
                    l.len()
                )));
            }
            items.push(Item {
                key: k.trim().to_ascii_lowercase(),
                value,
                line,
                text: p.to_string(),
            });
        }
        let Some(first) = items.first() else {
            continue;
        };
        let kind = Kind::of(&first.key).unwrap_or(Kind::General);
        let name = match (&first.value, kind) {
            (_, Kind::General) => first.key.clone(),
            (Value::One(n), _) if !n.is_empty() => n.clone(),
            _ => {
                return Err(ImportError::Read(format!(
                    "{}: `{}`: a definition is named by one word, e.g. {}=name1",
                    at(first.line),
                    first.text,
                    first.key
                )));
            }
        };
        if kind == Kind::General {
            // Each general parameter is a definition of its own.
            for it in items {
                defs.push(Def {
                    kind,
                    name: it.key.clone(),
                    line: it.line,
                    text: it.text.clone(),
                    items: vec![it],
                });
            }
        } else {
            let own: Vec<Item> = items
                .into_iter()
                .skip(1)
                .map(|mut it| {
                    it.key = full_keyword(kind, &it.key);
                    it
                })
                .collect();
            if name.eq_ignore_ascii_case("default") {
                match defaults.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, d)) => d.extend(own),
                    None => defaults.push((kind, own)),
                }
                if defaults.iter().map(|(_, d)| d.len()).sum::<usize>() > MAX_DEFS {
                    return Err(ImportError::Read(format!(
                        "{}: the default definitions hold more than {MAX_DEFS} items",
                        at(first_line)
                    )));
                }
                continue;
            }
            let mut all: Vec<Item> = defaults
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|(_, d)| d.clone())
                .unwrap_or_default();
            all.extend(own);
            values += all.iter().map(|i| i.value.items().len()).sum::<usize>();
            if values > MAX_VALUES {
                return Err(ImportError::Read(format!(
                    "{}: the definitions up to this one hold more than {MAX_VALUES} values (a default's counted in each definition it applies to); split the file",
                    at(first_line)
                )));
            }
            defs.push(Def {
                kind,
                name,
                line: first_line,
                text: st.text.clone(),
                items: all,
            });
        }
        if defs.len() > MAX_DEFS {
            return Err(ImportError::Read(format!(
                "{}: the file holds more than {MAX_DEFS} definitions and parameters",
                at(first_line)
            )));
        }
    }
    Ok(defs)
}

/// A vdbench size: a number with an optional k, m, g, t or p (1024-based), bytes.
pub(super) fn size(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    let (num, mult) = match v.chars().last()? {
        'k' => (&v[..v.len() - 1], 1u64 << 10),
        'm' => (&v[..v.len() - 1], 1 << 20),
        'g' => (&v[..v.len() - 1], 1 << 30),
        't' => (&v[..v.len() - 1], 1 << 40),
        'p' => (&v[..v.len() - 1], 1 << 50),
        _ => (v.as_str(), 1),
    };
    let n: f64 = num.trim().parse().ok()?;
    let bytes = (n * mult as f64).round();
    (n.is_finite() && n >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

/// A number (a percentage, a rate, a count): finite and not negative.
pub(super) fn number(v: &str) -> Option<f64> {
    let n: f64 = v.trim().parse().ok()?;
    (n.is_finite() && n >= 0.0).then_some(n)
}

/// A vdbench time: seconds, or a number with s, m or h; whole seconds.
pub(super) fn seconds(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    let (num, mult) = match v.chars().last()? {
        's' => (&v[..v.len() - 1], 1.0),
        'm' => (&v[..v.len() - 1], 60.0),
        'h' => (&v[..v.len() - 1], 3600.0),
        _ => (v.as_str(), 1.0),
    };
    let s = number(num)? * mult;
    (s < 1e9).then_some(s.round() as u64)
}

/// The values of a `for` list or an `iorate` list, each read by `one`: written one by one, or
/// as a range `(FROM-TO,STEP)` (STEP a number to add, or `d` to double). The count is known
/// and capped before the list is made.
pub(super) fn expand(
    items: &[&str],
    one: impl Fn(&str) -> Option<f64>,
) -> Result<Vec<f64>, String> {
    if let [range, step] = items
        && let Some((from, to)) = range.split_once('-')
        && !from.trim().is_empty()
    {
        let (from, to) = (
            one(from).ok_or_else(|| format!("`{from}` is not a value here"))?,
            one(to).ok_or_else(|| format!("`{to}` is not a value here"))?,
        );
        if !(from > 0.0 && to >= from) {
            return Err("a range runs from a value above 0 up to one at least as large".into());
        }
        let step = step.trim().to_ascii_lowercase();
        let count = if step == "d" {
            (to / from).log2().floor() + 1.0
        } else {
            let s = one(&step).filter(|s| *s > 0.0).ok_or_else(|| {
                format!("`{step}`: a range's step is a value above 0, or d to double")
            })?;
            ((to - from) / s).floor() + 1.0
        };
        if !(count.is_finite() && count <= MAX_LIST as f64) {
            return Err(format!(
                "the range makes more than {MAX_LIST} values; a list holds at most {MAX_LIST}"
            ));
        }
        let mut out = Vec::with_capacity(count as usize);
        let mut v = from;
        for _ in 0..count as usize {
            out.push(v);
            v = if step == "d" {
                v * 2.0
            } else {
                v + one(&step).unwrap_or(1.0)
            };
        }
        return Ok(out);
    }
    items
        .iter()
        .map(|s| one(s).ok_or_else(|| format!("`{s}` is not a value here")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_continuations_lists_and_defaults_are_read_as_vdbench_reads_them() {
        let text = "* a comment\n# another\n/ and another\n\ncompratio=2\n\
                    sd=default,threads=4\nsd=sd1,lun=/dev/sdb,\n   size=1g\n\
                    wd=wd1,sd=(sd1,sd2),xfersize=(4k,50,\n 8k,50)\n\
                    rd=run1,wd=wd1\n  ,iorate=max\n";
        let defs = read(Path::new("t.vdb"), text).unwrap();
        let kinds: Vec<Kind> = defs.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, [Kind::General, Kind::Sd, Kind::Wd, Kind::Rd]);
        let sd = &defs[1];
        assert_eq!((sd.name.as_str(), sd.line), ("sd1", 7));
        assert_eq!(sd.get("threads").unwrap().value, Value::One("4".into()));
        assert_eq!(sd.get("size").unwrap().line, 8);
        let wd = &defs[2];
        assert_eq!(
            wd.get("xfersize").unwrap().value.items(),
            ["4k", "50", "8k", "50"]
        );
        assert_eq!(wd.get("sd").unwrap().value.items(), ["sd1", "sd2"]);
        assert_eq!(defs[3].get("iorate").unwrap().line, 12);
    }

    #[test]
    fn bad_items_name_their_line() {
        let e = read(Path::new("t.vdb"), "sd=sd1,lun=/x\nwd=wd1,nonsense\n").unwrap_err();
        assert!(e.to_string().starts_with("t.vdb:2: `nonsense`"), "{e}");
        let e = read(Path::new("t.vdb"), "wd=wd1,xfersize=((4k)\n").unwrap_err();
        assert!(e.to_string().contains("t.vdb:1"), "{e}");
        let many = format!("wd=w,xfersize=({})\n", vec!["4k"; 2000].join(","));
        assert!(read(Path::new("t.vdb"), &many).is_err());
    }

    #[test]
    fn sizes_times_and_ranges() {
        assert_eq!(size("4k"), Some(4096));
        assert_eq!(size("1.5m"), Some(3 << 19));
        assert_eq!(size("1e30"), None);
        assert_eq!(seconds("10m"), Some(600));
        assert_eq!(seconds("30"), Some(30));
        let n = |s: &str| number(s);
        assert_eq!(
            expand(&["1-64", "d"], n).unwrap(),
            [1., 2., 4., 8., 16., 32., 64.]
        );
        assert_eq!(expand(&["10-30", "10"], n).unwrap(), [10., 20., 30.]);
        assert_eq!(expand(&["4", "8"], n).unwrap(), [4., 8.]);
        assert!(
            expand(&["1-1e12", "1"], n).is_err(),
            "capped before it is made"
        );
        let b = |s: &str| size(s).map(|b| b as f64);
        assert_eq!(expand(&["4k-16k", "d"], b).unwrap(), [4096., 8192., 16384.]);
    }
}
