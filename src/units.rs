//! Units as users write them: sizes (`4k`, `4KiB`, `1GiB`, `1GB`), durations (`500ms`, `30s`,
//! `2h`), percentages (`70%`, `70`) and rates. `k`, `KiB`, `M`, `MiB`... are 1024-based;
//! `KB`, `MB`, `GB`... are 1000-based, as the SI and IEC standards say.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// A size in bytes, parsed from `4k`, `4KiB`, `1GiB`, `1GB`, `512`, `512B`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Size(pub u64);

/// A duration, parsed from `500ms`, `30s`, `5m`, `2h`, `1h30m`, or a bare number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Dur(pub Duration);

/// A percentage 0–100, parsed from `70%`, `70` or `70.5`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct Percent(pub f64);

/// Parses a size. Errors say what was expected.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num = num.replace('_', "");
    if num.is_empty() {
        return Err(format!(
            "`{text}` is not a size: expected a number with an optional unit, e.g. 4k, 64KiB, 1GiB, 1GB"
        ));
    }
    let mult: u64 = match unit.trim() {
        "" | "b" | "B" => 1,
        "k" | "K" | "KiB" | "kiB" | "Ki" => 1 << 10,
        "m" | "M" | "MiB" | "Mi" => 1 << 20,
        "g" | "G" | "GiB" | "Gi" => 1 << 30,
        "t" | "T" | "TiB" | "Ti" => 1 << 40,
        "p" | "P" | "PiB" | "Pi" => 1 << 50,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "PB" => 1_000_000_000_000_000,
        other => {
            return Err(format!(
                "`{text}`: unknown size unit `{other}`; use k/KiB, M/MiB, G/GiB, T/TiB (1024-based) or KB, MB, GB, TB (1000-based)"
            ));
        }
    };
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a size: `{num}` is not a number"))?;
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("`{text}` is too large"));
    }
    if bytes.fract() != 0.0 {
        return Err(format!("`{text}` is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// Parses a duration such as `500ms`, `30s`, `5m`, `2h`, `1h30m`, `1.5s` or `30` (seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration: write e.g. 30s, 500ms, 5m or 2h".into());
    }
    if let Ok(secs) = t.parse::<f64>() {
        return secs_to_duration(secs, text);
    }
    let mut total = 0.0f64;
    let mut rest = t;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(split);
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let value: f64 = num.parse().map_err(|_| {
            format!("`{text}` is not a duration: write e.g. 30s, 500ms, 5m, 2h or 1h30m")
        })?;
        let scale = match unit.trim() {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            other => {
                return Err(format!(
                    "`{text}`: unknown time unit `{other}`; use ms, s, m, h (e.g. 500ms, 30s, 2h)"
                ));
            }
        };
        total += value * scale;
        rest = next;
    }
    secs_to_duration(total, text)
}

fn secs_to_duration(secs: f64, text: &str) -> Result<Duration, String> {
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(format!("`{text}` is not a usable duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a percentage in 0–100: `70%`, `70` or `70.5%`.
pub fn parse_percent(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let num = t.strip_suffix('%').unwrap_or(t).trim();
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a percentage: write e.g. 70% or 70"))?;
    check_percent(v)
}

fn check_percent(v: f64) -> Result<f64, String> {
    if !(0.0..=100.0).contains(&v) || v.is_nan() {
        return Err(format!("{v} is not a percentage between 0 and 100"));
    }
    Ok(v)
}

/// Binary units, largest first.
const SIZE_UNITS: [(&str, u64); 5] = [
    ("PiB", 1 << 50),
    ("TiB", 1 << 40),
    ("GiB", 1 << 30),
    ("MiB", 1 << 20),
    ("KiB", 1 << 10),
];

/// Formats bytes for people, the one way storlab writes sizes: a number of at most 4
/// significant digits, a space and a 1024-based unit. Exact when some unit gives a whole
/// number of at most 4 digits (`4 KiB`, `1 GiB`, `1536 MiB`, `512 B`); otherwise 3 significant
/// digits in the largest unit (`1.46 GiB`, `23.5 GiB`).
pub fn format_size(bytes: u64) -> String {
    let exact = SIZE_UNITS
        .iter()
        .find(|&&(_, unit)| bytes >= unit && bytes % unit == 0 && bytes / unit < 10_000);
    if let Some((name, unit)) = exact {
        return format!("{} {name}", bytes / unit);
    }
    if bytes < 10_000 {
        return format!("{bytes} B");
    }
    let (name, unit) = SIZE_UNITS
        .iter()
        .find(|&&(_, unit)| bytes >= unit)
        .copied()
        .unwrap_or(("KiB", 1 << 10));
    format!("{} {name}", significant(bytes as f64 / unit as f64))
}

/// Formats bytes exactly, as a job file can hold them: a whole number of the largest unit
/// that divides them (`4 KiB`, `1536 MiB`, `4097 B`). [`parse_size`] reads it back.
pub fn format_size_exact(bytes: u64) -> String {
    match SIZE_UNITS
        .iter()
        .find(|&&(_, unit)| bytes >= unit && bytes % unit == 0)
    {
        Some((name, unit)) => format!("{} {name}", bytes / unit),
        None => format!("{bytes} B"),
    }
}

/// `v` with 3 significant digits (at most 4 for whole numbers up to 9999): `1.46`, `23.5`,
/// `117`, `1024`.
fn significant(v: f64) -> String {
    if v == v.trunc() && v.abs() < 10_000.0 {
        return format!("{v:.0}");
    }
    // The decimals are chosen by the magnitude after rounding: 99.97 is `100`, not `100.0`.
    for (decimals, below) in [(2, 10.0), (1, 100.0)] {
        let s = format!("{v:.decimals$}");
        if s.parse::<f64>().is_ok_and(|r| r.abs() < below) {
            return s;
        }
    }
    format!("{v:.0}")
}

/// Formats a duration as people and job files write it: `30 s`, `1.5 s`, `500 ms`, `2 min`,
/// `1 h 30 min`. [`parse_duration`] reads it back.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    const MIN: u128 = 60_000_000_000;
    const HOUR: u128 = 60 * MIN;
    if ns == 0 {
        "0 s".into()
    } else if ns % MIN == 0 && ns >= HOUR {
        match (ns / HOUR, ns % HOUR / MIN) {
            (h, 0) => format!("{h} h"),
            (h, m) => format!("{h} h {m} min"),
        }
    } else if ns % MIN == 0 {
        format!("{} min", ns / MIN)
    } else if ns >= 1_000_000_000 {
        format!("{} s", d.as_secs_f64())
    } else if ns % 1_000_000 == 0 {
        format!("{} ms", ns / 1_000_000)
    } else {
        format!("{} µs", d.as_secs_f64() * 1e6)
    }
}

/// An operating-system error as a sentence, without Rust's `(os error N)`: `Permission
/// denied`, `No space left on device`.
pub fn os_error_text(e: &std::io::Error) -> String {
    strip_os_error(&e.to_string())
}

/// `text` without any ` (os error N)` that an error message carries.
pub fn strip_os_error(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" (os error ") {
        let tail = &rest[at + " (os error ".len()..];
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(')') {
            out.push_str(&rest[..at]);
            rest = &tail[digits + 1..];
        } else {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// Whether `c` must not reach a terminal or a text file as it is: a control character (C0,
/// DEL, C1: escape sequences that set a window's title or clear the screen start with one),
/// a line or paragraph separator, or a bidirectional mark or override (text that reads in
/// another order than it is stored).
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` (a name that came from a file or a job: a class, worker, target, host or step, a
/// path, a message with one in it) as every text output writes it, the console, CSV,
/// Markdown and Iometer's spreadsheet alike: each control character and each bidirectional
/// or separator mark written as text, `\x1b` for ESC (`\n`, `\r`, `\t` for those), `\u{202e}`
/// for the others, so what the name holds is shown, never acted on. Text without them is
/// returned as it is.
pub fn escape_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hidden(c) && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// JSON text (as serde_json writes it: control characters C0 escaped already) with what a
/// terminal would still act on, DEL, C1 controls and the marks [`escape_text`] escapes,
/// written as JSON's own `\uXXXX` escapes: the same JSON. Outside strings, JSON holds only
/// spaces and line breaks, which are kept.
pub fn escape_json(json: &str) -> std::borrow::Cow<'_, str> {
    let raw = |c: char| c != '\n' && c != '\t' && c != '\r' && hidden(c);
    if !json.chars().any(raw) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Text of many lines (a summary, a message) as [`escape_text`] writes each of its lines:
/// its line breaks kept, everything else that [`escape_text`] escapes written as text.
pub fn escape_lines(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && hidden(c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let lines: Vec<_> = text.split('\n').map(escape_text).collect();
    std::borrow::Cow::Owned(lines.join("\n"))
}

/// Formats an elapsed time for people with at most 3 significant digits: `812 ms`, `34.8 s`,
/// `2 min 5 s`, `1 h 30 min`.
pub fn format_seconds(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "n/a".into();
    }
    if seconds < 1.0 {
        return format!("{} ms", significant_f(seconds * 1e3));
    }
    if seconds < 60.0 {
        return format!("{} s", significant_f(seconds));
    }
    let whole = seconds.round() as u64;
    match (whole / 3600, whole % 3600 / 60, whole % 60) {
        (0, m, 0) => format!("{m} min"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, 0, _) => format!("{h} h"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

/// Formats milliseconds as a duration ([`format_duration`]).
pub fn format_ms(ms: u64) -> String {
    format_duration(Duration::from_millis(ms))
}

/// Formats a count for people: exact up to 9999, then 3 significant digits with `k`, `M`
/// or `G` (`83.5k`, `1.20M`).
pub fn format_count(n: u64) -> String {
    format_rate(n as f64)
}

/// Formats bytes per second as MB/s (10^6 bytes/s) with 3 significant digits: `251 MB/s`,
/// `12.5 MB/s`, `0.98 MB/s`.
pub fn format_mb_per_s(bytes_per_s: f64) -> String {
    format!("{} MB/s", significant_f(bytes_per_s / 1e6))
}

/// Formats a percentage with at most 3 significant digits: `99.2%`, `0.5%`, `100%`.
pub fn format_pct(pct: f64) -> String {
    format!("{}%", significant_f(pct))
}

/// A number for people: 3 significant digits, whole numbers as they are up to 9999
/// (`0.54`, `12.3`, `120`, `4874`); the caller adds the unit.
pub fn format_number(v: f64) -> String {
    significant_f(v)
}

/// `v` with 3 significant digits, whole numbers as they are (up to 4 digits).
fn significant_f(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    if v.abs() >= 1.0 {
        return significant(v);
    }
    // Below 1: 2 significant digits (`0.53`, `0.041`).
    let digits = (-v.abs().log10().floor()) as usize + 1;
    format!("{v:.digits$}")
}

/// Formats nanoseconds with a unit that keeps 3 significant digits: `812 ns`, `12.3 µs`,
/// `4.56 ms`, `1.20 s`.
pub fn format_ns(ns: f64) -> String {
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    if v < 10.0 && unit != "ns" {
        format!("{v:.2} {unit}")
    } else if v < 100.0 && unit != "ns" {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// What every view shows for a value that is not known (no data, or never measured): a dash,
/// never a 0 a reader would take for a measurement. CSV leaves the cell empty instead.
pub const UNKNOWN: &str = "—";

/// [`format_ns`] of a value that may be unknown ([`UNKNOWN`]).
pub fn format_known_ns(ns: Option<f64>) -> String {
    ns.map_or_else(|| UNKNOWN.to_string(), format_ns)
}

/// Formats a rate or a large number with at most 4 significant digits: `4874`, `30.7k`,
/// `123k`, `1.23M`, `2.50G`. The caller adds the unit (`IOPS`, `reads/s`...), or the table's
/// column names it.
pub fn format_rate(v: f64) -> String {
    let (v, suffix) = if v >= 1e9 {
        (v / 1e9, "G")
    } else if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e4 {
        (v / 1e3, "k")
    } else {
        return format!("{v:.0}");
    };
    format!("{}{suffix}", significant(v))
}

/// `v` with `digits` significant digits, in plain notation: `14.667` at 5 is `14.667`, at 3
/// `14.7`; whole numbers of more digits keep them all (`1964` at 3 is `1964`).
pub fn format_digits(v: f64, digits: usize) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let magnitude = v.abs().log10().floor() as i64 + 1;
    let decimals = (digits as i64 - magnitude).max(0) as usize;
    format!("{v:.decimals$}")
}

/// The number of significant digits, from 3, at which `a` and `b` stop looking equal: the
/// fewest with which rounding keeps them apart (their order shows), or 3 when they are equal.
/// A figure compared with a limit is written with them, so that 14.667 against 14.85 reads
/// `14.67` and `14.85`, never `15` and `15`.
pub fn digits_apart(a: f64, b: f64) -> usize {
    if !(a.is_finite() && b.is_finite()) || a == b {
        return 3;
    }
    let round = |v: f64, d: usize| format_digits(v, d).parse::<f64>().unwrap_or(v);
    (3..=12).find(|&d| round(a, d) != round(b, d)).unwrap_or(12)
}

/// Formats a relative change in percent with its sign: `+12.3%`, `-0.4%`, `n/a` when unknown.
pub fn format_change_pct(d: f64) -> String {
    if d.is_finite() {
        format!("{d:+.1}%")
    } else {
        "n/a".into()
    }
}

struct UnitVisitor<T>(&'static str, fn(&str) -> Result<T, String>);

impl<'de, T> Visitor<'de> for UnitVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.1)(v).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        (self.1)(&v.to_string()).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        (self.1)(&v.to_string()).map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        (self.1)(&v.to_string()).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor("a size such as \"4k\" or \"1GiB\"", |s| {
            parse_size(s).map(Size)
        }))
    }
}

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_size_exact(self.0))
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor(
            "a duration such as \"30s\" or \"500ms\"",
            |s| parse_duration(s).map(Dur),
        ))
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(self.0))
    }
}

impl<'de> Deserialize<'de> for Percent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor("a percentage such as \"70%\" or 70", |s| {
            parse_percent(s).map(Percent)
        }))
    }
}

impl Serialize for Percent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

/// The JSON Schema of a value written with a unit (`Size`, `Dur`, `Percent` in job files):
/// the text with its unit, or a bare number of `bare`.
fn unit_schema(name: &str, example: &str, bare: &str) -> schemars::Schema {
    schemars::json_schema!({
        "description": format!("{name}: text with its unit, such as {example}, or a bare number of {bare}"),
        "type": ["string", "number"]
    })
}

impl schemars::JsonSchema for Size {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Size".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        unit_schema("a size", "\"4k\" or \"1GiB\"", "bytes")
    }
}

impl schemars::JsonSchema for Dur {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Dur".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        unit_schema("a duration", "\"30s\" or \"500ms\"", "seconds")
    }
}

impl schemars::JsonSchema for Percent {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Percent".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        unit_schema("a percentage", "\"70%\"", "percent")
    }
}

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_size(s).map(Size)
    }
}

impl std::str::FromStr for Dur {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_duration(s).map(Dur)
    }
}

impl std::str::FromStr for Percent {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_percent(s).map(Percent)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_in_names_are_written_as_text() {
        let crafted = "db\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}x\u{202e}gnp.exe\ttab\nline";
        let shown = escape_text(crafted);
        assert_eq!(
            shown,
            "db\\x1b]0;pwned\\x07\\x1b[2J\\u{9b}x\\u{202e}gnp.exe\\ttab\\nline"
        );
        assert!(!shown.chars().any(hidden));
        assert!(matches!(
            escape_text("plain-class é ü"),
            std::borrow::Cow::Borrowed(_)
        ));
        // Lines keep their breaks; what is on them is escaped.
        assert_eq!(escape_lines("a\u{1b}[2J\nb\r\n"), "a\\x1b[2J\nb\\r\n");
        assert!(matches!(
            escape_lines("a\nb\n"),
            std::borrow::Cow::Borrowed(_)
        ));
        // Escaping what was escaped changes nothing: no double escapes at a second sink.
        assert_eq!(escape_text(&shown), shown);
        // JSON keeps being JSON, with the same strings.
        let json = serde_json::to_string(&serde_json::json!({ "class": crafted })).unwrap();
        let safe = escape_json(&json);
        assert!(!safe.chars().any(|c| hidden(c) && c != '\n'), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["class"], crafted);
    }

    use super::*;

    #[test]
    fn sizes_binary_and_decimal() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KB"), Ok(4000));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("512B"), Ok(512));
        assert_eq!(parse_size("1.5M"), Ok(1536 * 1024));
        assert_eq!(parse_size("1_024"), Ok(1024));
        assert!(
            parse_size("4x")
                .unwrap_err()
                .contains("unknown size unit `x`")
        );
        assert!(parse_size("k").is_err());
        assert!(parse_size("0.3").unwrap_err().contains("whole number"));
        assert!(parse_size("99999999999P").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("30 parsecs").is_err());
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn percents() {
        assert_eq!(parse_percent("70%"), Ok(70.0));
        assert_eq!(parse_percent("70"), Ok(70.0));
        assert_eq!(parse_percent("0.5%"), Ok(0.5));
        assert!(parse_percent("101%").is_err());
        assert!(parse_percent("-1").is_err());
        assert!(parse_percent("abc").is_err());
    }

    #[test]
    fn people_read_at_most_four_significant_digits_and_a_unit() {
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(1 << 30), "1 GiB");
        assert_eq!(format_size(1536 << 20), "1536 MiB");
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(1_073_741_824_000), "1000 GiB");
        assert_eq!(format_size(1_570_000_000), "1.46 GiB");
        assert_eq!(format_size(25_232_932_864), "23.5 GiB");
        assert_eq!(format_size(12_345), "12.1 KiB");
        assert_eq!(format_ns(634_000.0), "634 µs");
        assert_eq!(format_ns(2_180_000.0), "2.18 ms");
        assert_eq!(format_known_ns(Some(0.0)), "0 ns", "a real zero is a zero");
        assert_eq!(format_known_ns(Some(634_000.0)), "634 µs");
        assert_eq!(format_known_ns(None), "—");
        assert_eq!(format_rate(4874.0), "4874");
        assert_eq!(format_rate(30_712.0), "30.7k");
        assert_eq!(format_rate(182_500.0), "182k");
        assert_eq!(format_count(83_450), "83.5k");
        assert_eq!(format_mb_per_s(251_290_000.0), "251 MB/s");
        assert_eq!(format_mb_per_s(532_000.0), "0.53 MB/s");
        assert_eq!(format_pct(99.23), "99.2%");
        assert_eq!(format_pct(0.5), "0.50%");
        assert_eq!(format_pct(100.0), "100%");
        // Rounding that reaches the next magnitude takes that magnitude's decimals.
        assert_eq!(format_number(99.97), "100");
        assert_eq!(format_number(9.996), "10.0");
        assert_eq!(format_number(-12.34), "-12.3");
        assert_eq!(format_duration(Duration::from_secs(5400)), "1 h 30 min");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(format_ms(30_000), "30 s");
    }

    #[test]
    fn formats_round_trip() {
        for b in [
            512u64,
            4096,
            65536,
            1 << 30,
            3 << 20,
            1536,
            4097,
            12_345_678,
        ] {
            assert_eq!(parse_size(&format_size_exact(b)), Ok(b));
        }
        for d in ["30s", "500ms", "2h", "5m", "1.5s", "1h30m", "250us"] {
            let parsed = parse_duration(d).unwrap();
            assert_eq!(parse_duration(&format_duration(parsed)), Ok(parsed));
        }
    }
}
