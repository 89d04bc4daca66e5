//! The results schema's version and the list of its fields. The policy (docs/results-format.md):
//! adding a field bumps the minor version; removing a field or changing its meaning or type
//! bumps the major version. storlab reads files of its own major version and of a minor version
//! up to its own (older files lack the newer fields, which take their defaults). A test
//! compares the fields against a snapshot recorded for each version, so the schema cannot
//! change without a version bump.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A version of the results schema: `MAJOR.MINOR` (JSON: the string `"1.1"`; files written
/// before 1.1 carry the integer `1`, read as 1.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SchemaVersion {
    /// Changes when a field is removed or changes meaning or type.
    pub major: u32,
    /// Changes when a field is added.
    pub minor: u32,
}

impl Default for SchemaVersion {
    /// This version of storlab's.
    fn default() -> Self {
        SCHEMA_VERSION
    }
}

/// The version this storlab writes.
pub const SCHEMA_VERSION: SchemaVersion = SchemaVersion {
    major: 1,
    minor: 23,
};

impl SchemaVersion {
    /// Whether a storlab writing `self` reads a file of version `file`.
    pub(crate) fn reads(self, file: SchemaVersion) -> bool {
        file.major == self.major && file.minor <= self.minor
    }
}

impl fmt::Display for SchemaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl std::str::FromStr for SchemaVersion {
    type Err = String;
    fn from_str(s: &str) -> Result<SchemaVersion, String> {
        let bad = || format!("`{s}` is not a schema version (MAJOR.MINOR)");
        let (major, minor) = s.split_once('.').unwrap_or((s, "0"));
        Ok(SchemaVersion {
            major: major.parse().map_err(|_| bad())?,
            minor: minor.parse().map_err(|_| bad())?,
        })
    }
}

impl Serialize for SchemaVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SchemaVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Major(u32),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Major(major) => Ok(SchemaVersion { major, minor: 0 }),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

impl schemars::JsonSchema for SchemaVersion {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SchemaVersion".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "MAJOR.MINOR (the integer 1 in files written before 1.1)",
            "type": "string"
        })
    }
}

/// A document of the results layer whose JSON Schema `storlab schema` prints (the job file's
/// is `workloads::job_schema`, which knows every room).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// The results file (`RESULTS.json`).
    Results,
    /// One line of the time series (`RESULTS.ndjson`).
    Timeseries,
}

/// The JSON Schema (draft 2020-12) of `doc` as this storlab writes it, derived from the types
/// themselves: every field with its type and its documentation; an object's unknown fields
/// are refused (`additionalProperties: false`), as storlab's own reader refuses them.
pub fn json_schema(doc: Document) -> serde_json::Value {
    let (schema, name) = match doc {
        Document::Results => (schemars::schema_for!(crate::results::RunResult), "results"),
        Document::Timeseries => (
            schemars::schema_for!(crate::stats::timeseries::IntervalRecord),
            "timeseries",
        ),
    };
    stamped(schema, name, &SCHEMA_VERSION.to_string())
}

/// `schema` as `storlab schema` prints it: with its `$id` and `title`, which name the
/// document and the version.
pub(crate) fn stamped(schema: schemars::Schema, name: &str, version: &str) -> serde_json::Value {
    let mut v = schema.to_value();
    if let Some(o) = v.as_object_mut() {
        o.insert(
            "$id".into(),
            format!("https://storlab.invalid/schema/{name}-{version}.json").into(),
        );
        o.insert(
            "title".into(),
            format!("storlab {name} schema {version}").into(),
        );
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Every field of a results file and of a time-series record, one line each: its path
    /// (`results.classes.*.read.latency_ns.p99`), whether it may be absent (`?`), and its JSON
    /// type. The snapshot the versioning test compares.
    fn fields() -> Vec<String> {
        let mut out = Vec::new();
        for (root, schema) in [
            ("results", schemars::schema_for!(crate::results::RunResult)),
            (
                "timeseries",
                schemars::schema_for!(crate::stats::timeseries::IntervalRecord),
            ),
        ] {
            let value = schema.to_value();
            let defs = value.get("$defs").cloned().unwrap_or(Value::Null);
            walk(root, &value, &defs, &mut out, 0);
        }
        out.sort();
        out.dedup();
        out
    }

    /// The JSON type names a schema allows (`string`, `integer|null`...), after `$ref`s.
    fn types(schema: &Value, defs: &Value) -> String {
        let schema = resolve(schema, defs);
        if let Some(t) = schema.get("type") {
            return match t {
                Value::Array(ts) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("|"),
                other => other.as_str().unwrap_or("?").to_string(),
            };
        }
        if let Some(c) = schema.get("const") {
            return format!("const {c}");
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(parts)) = schema.get(key) {
                let mut all: Vec<String> = parts.iter().map(|p| types(p, defs)).collect();
                all.sort();
                all.dedup();
                return all.join("|");
            }
        }
        if schema.get("enum").is_some() {
            return "enum".into();
        }
        "any".into()
    }

    fn resolve<'a>(schema: &'a Value, defs: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.rsplit('/').next().unwrap_or(r);
                resolve(defs.get(name).unwrap_or(&Value::Null), defs)
            }
            None => schema,
        }
    }

    fn walk(path: &str, schema: &Value, defs: &Value, out: &mut Vec<String>, depth: usize) {
        let schema = resolve(schema, defs);
        if depth > 24 {
            return;
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            let names: Vec<String> = values.iter().map(Value::to_string).collect();
            out.push(format!("{path}: enum {}", names.join("|")));
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(parts)) = schema.get(key) {
                for p in parts {
                    walk(path, p, defs, out, depth + 1);
                }
            }
        }
        if let Some(Value::Object(props)) = schema.get("properties") {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (name, p) in props {
                let optional = if required.contains(&name.as_str()) {
                    ""
                } else {
                    "?"
                };
                let child = format!("{path}.{name}");
                out.push(format!("{child}{optional}: {}", types(p, defs)));
                walk(&child, p, defs, out, depth + 1);
            }
        }
        if let Some(items) = schema.get("items") {
            walk(&format!("{path}[]"), items, defs, out, depth + 1);
        }
        if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
            walk(&format!("{path}.*"), values, defs, out, depth + 1);
        }
    }
    use std::collections::HashSet;
    use std::path::PathBuf;

    /// Where the snapshot of version `v` is kept.
    fn snapshot(v: SchemaVersion) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/snapshots/results-schema")
            .join(format!("{v}.txt"))
    }

    /// Every recorded version, oldest first.
    fn recorded() -> Vec<SchemaVersion> {
        let dir = snapshot(SCHEMA_VERSION).parent().unwrap().to_path_buf();
        let mut versions: Vec<SchemaVersion> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_suffix(".txt")?.parse().ok()
            })
            .collect();
        versions.sort();
        versions
    }

    fn read(v: SchemaVersion) -> Vec<String> {
        std::fs::read_to_string(snapshot(v))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The schema's fields are those recorded for [`SCHEMA_VERSION`]; a change needs a new
    /// version (set `STORLAB_RECORD_SCHEMA=1` to record the snapshot of a new version; an
    /// existing version's snapshot is never rewritten).
    #[test]
    fn the_fields_are_those_recorded_for_this_version() {
        let now = fields();
        let path = snapshot(SCHEMA_VERSION);
        if !path.exists() && std::env::var_os("STORLAB_RECORD_SCHEMA").is_some() {
            std::fs::write(&path, now.join("\n") + "\n").unwrap();
        }
        assert!(
            path.exists(),
            "no snapshot of schema {SCHEMA_VERSION}: record it with STORLAB_RECORD_SCHEMA=1 cargo test --lib schema"
        );
        let then = read(SCHEMA_VERSION);
        let (now_set, then_set): (HashSet<&String>, HashSet<&String>) =
            (now.iter().collect(), then.iter().collect());
        let added: Vec<&String> = now.iter().filter(|f| !then_set.contains(f)).collect();
        let removed: Vec<&String> = then.iter().filter(|f| !now_set.contains(f)).collect();
        assert!(
            added.is_empty() && removed.is_empty(),
            "the results schema changed without a version bump: bump SCHEMA_VERSION ({SCHEMA_VERSION}; the minor version for added fields, the major for removed or changed ones) and record its snapshot\nadded: {added:#?}\nremoved: {removed:#?}"
        );
    }

    /// Within a major version fields are only ever added; the newest snapshot is this
    /// version's.
    #[test]
    fn minor_versions_only_add_fields() {
        let versions = recorded();
        assert_eq!(versions.last(), Some(&SCHEMA_VERSION));
        for pair in versions.windows(2) {
            let (old, new) = (pair[0], pair[1]);
            if old.major != new.major {
                continue;
            }
            let newer: HashSet<String> = read(new).into_iter().collect();
            // A required field may become optional (older files still read).
            let gone: Vec<String> = read(old)
                .into_iter()
                .filter(|f| !newer.contains(f) && !newer.contains(&f.replacen(": ", "?: ", 1)))
                .collect();
            assert!(
                gone.is_empty(),
                "{old} → {new} removed or changed fields, which needs a major version: {gone:#?}"
            );
        }
    }

    /// A field's path, without its type and the optional mark.
    fn name(line: &str) -> &str {
        line.split(": ")
            .next()
            .unwrap_or(line)
            .trim_end_matches('?')
    }

    /// storlab reads the files of older minor versions: every field they lack, where they
    /// have the object it belongs to, is optional now (it takes its default).
    #[test]
    fn fields_older_files_lack_are_optional() {
        let now = fields();
        for old in recorded() {
            if old.major != SCHEMA_VERSION.major || old == SCHEMA_VERSION {
                continue;
            }
            let then: HashSet<String> = read(old).iter().map(|l| name(l).to_string()).collect();
            let known = |path: &str| then.contains(path);
            let required: Vec<&String> = now
                .iter()
                .filter(|l| !l.split(": ").next().unwrap_or("").ends_with('?'))
                .filter(|l| {
                    let path = name(l);
                    let parent = path.rsplit_once('.').map_or("", |p| p.0);
                    let parent = parent.trim_end_matches("[]");
                    !known(path) && (!parent.contains('.') || known(parent))
                })
                .collect();
            assert!(
                required.is_empty(),
                "fields added since {old} are required, so a {old} file cannot be read: give them #[serde(default)]: {required:#?}"
            );
        }
    }

    #[test]
    fn versions_read_and_compare() {
        let v = |s: &str| s.parse::<SchemaVersion>().unwrap();
        assert_eq!(v("1"), SchemaVersion { major: 1, minor: 0 });
        assert!(SCHEMA_VERSION.reads(v("1.0")));
        assert!(!v("1.0").reads(v("1.1")));
        assert!(!v("2.0").reads(v("1.0")));
        let old: SchemaVersion = serde_json::from_str("1").unwrap();
        assert_eq!(old, v("1.0"));
        assert_eq!(serde_json::to_string(&v("1.1")).unwrap(), "\"1.1\"");
    }
}
