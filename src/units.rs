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

/// Formats bytes with a 1024-based unit, exact when possible: `4KiB`, `1GiB`, `1536B`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 5] = [
        ("PiB", 1 << 50),
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, unit) in UNITS {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    for (name, unit) in UNITS {
        if bytes >= unit {
            return format!("{:.2}{name}", bytes as f64 / unit as f64);
        }
    }
    format!("{bytes}B")
}

/// Formats bytes for reading, 1024-based with one decimal: `23.5GiB`, `4.0KiB`.
pub fn format_size_approx(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes}B")
    } else {
        format!("{v:.1}{}", units[i])
    }
}

/// Formats a duration compactly: `30s`, `1.5s`, `500ms`, `2h`.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        "0s".into()
    } else if ns % 3_600_000_000_000 == 0 {
        format!("{}h", ns / 3_600_000_000_000)
    } else if ns % 60_000_000_000 == 0 {
        format!("{}m", ns / 60_000_000_000)
    } else if ns >= 1_000_000_000 {
        format!("{}s", d.as_secs_f64())
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}us", d.as_secs_f64() * 1e6)
    }
}

/// Formats nanoseconds with a unit that keeps 3 significant digits: `812ns`, `12.3µs`,
/// `4.56ms`, `1.20s`.
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
        format!("{v:.2}{unit}")
    } else if v < 100.0 && unit != "ns" {
        format!("{v:.1}{unit}")
    } else {
        format!("{v:.0}{unit}")
    }
}

/// Formats a rate: `123.4k`, `1.23M`.
pub fn format_rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
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
        s.serialize_str(&format_size(self.0))
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
    fn formats_round_trip() {
        for b in [512u64, 4096, 65536, 1 << 30, 3 << 20, 1536] {
            assert_eq!(parse_size(&format_size(b)), Ok(b));
        }
        for d in ["30s", "500ms", "2h", "5m", "1.5s"] {
            let parsed = parse_duration(d).unwrap();
            assert_eq!(parse_duration(&format_duration(parsed)), Ok(parsed));
        }
    }
}
