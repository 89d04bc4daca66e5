//! `storlab schema`: the JSON Schema of the results file, derived from the types. Every fixture
//! validates under Debian's python3-jsonschema (an independent validator; every results file
//! any other test loads is validated by the `jsonschema` crate in the harness); a field the
//! schema does not know fails; `docs/results-format.md` documents the schema's version and
//! every field the schema names.

use crate::harness::{run_in, scratch, skip};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every property name of `schema`, at any depth.
fn property_names(v: &Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Object(p)) = m.get("properties") {
                out.extend(p.keys().cloned());
            }
            m.values().for_each(|v| property_names(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| property_names(v, out)),
        _ => {}
    }
}

#[test]
fn the_schema_validates_every_fixture_and_refuses_unknown_fields() {
    let test = "the_schema_validates_every_fixture_and_refuses_unknown_fields";
    let dir = scratch();
    let out = run_in(dir.path(), ["schema"]);
    out.expect_ok();
    let schema: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let version = storlab::results::schema::SCHEMA_VERSION.to_string();
    assert!(schema["title"].as_str().unwrap().ends_with(&version));
    std::fs::write(dir.path().join("schema.json"), &out.stdout).unwrap();
    let series = run_in(dir.path(), ["schema", "timeseries"]);
    series.expect_ok();
    assert!(series.stdout.contains("\"t_end_ms\""));
    let fixtures: Vec<String> = std::fs::read_dir(repo().join("tests/fixtures"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(fixtures.len() >= 10);
    // The Rust validator on every fixture, and on each with an unknown field at the top and
    // deep inside.
    for f in &fixtures {
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        assert_eq!(crate::harness::schema_errors(&v), None, "{f}");
        v["totals"]["read"]["latency_ns"]["p42"] = 1.into();
        assert!(
            crate::harness::schema_errors(&v).is_some(),
            "{f}: an unknown field passes"
        );
    }
    let python = Command::new("/usr/bin/python3")
        .args(["-c", "import jsonschema"])
        .status()
        .is_ok_and(|s| s.success());
    if !python {
        skip(
            test,
            "Debian's python3-jsonschema is not installed (apt-get install python3-jsonschema)",
        );
        return;
    }
    let script = "import json, sys, copy, jsonschema\n\
        v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))\n\
        bad = []\n\
        for f in sys.argv[2:]:\n\
        \x20   d = json.load(open(f))\n\
        \x20   bad += ['%s: %s' % (f, e.message) for e in v.iter_errors(d)]\n\
        \x20   x = copy.deepcopy(d); x['unknown_field'] = 1\n\
        \x20   if v.is_valid(x): bad.append(f + ': an unknown top-level field passes')\n\
        \x20   x = copy.deepcopy(d); x['job']['workers'][0]['unknown_field'] = 1\n\
        \x20   if v.is_valid(x): bad.append(f + ': an unknown worker field passes')\n\
        print(json.dumps(bad))\n";
    let out = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(dir.path().join("schema.json"))
        .args(&fixtures)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bad: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(bad.is_empty(), "python3-jsonschema: {bad:#?}");
}

/// docs/results-format.md says which version it documents, and names every field of the
/// schema (in backticks), so the page cannot fall behind the files.
#[test]
fn the_results_format_page_documents_this_version_and_every_field() {
    let doc = std::fs::read_to_string(repo().join("docs/results-format.md")).unwrap();
    let version = storlab::results::schema::SCHEMA_VERSION.to_string();
    assert!(
        doc.contains(&format!("This page documents schema version {version}.")),
        "docs/results-format.md must say it documents {version}"
    );
    assert!(
        doc.contains(&format!("| {version} | Added:")),
        "no row for {version} in the table of versions"
    );
    let schema = storlab::results::schema::json_schema(storlab::results::schema::Document::Results);
    let mut names = std::collections::BTreeSet::new();
    property_names(&schema, &mut names);
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| {
            let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
            !doc.split('`')
                .skip(1)
                .step_by(2)
                .any(|code| code.split(|c: char| !word(c)).any(|w| w == n.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "fields the schema has and docs/results-format.md does not name: {missing:?}"
    );
}

/// `storlab schema job`: every job file the repository ships (examples/, the presets), its
/// TOML as JSON, validates with the `jsonschema` crate, a plain job and every room's section
/// alike; an unknown key at the top, in a `[[worker]]`, in a `[[worker.access]]` or in a
/// room's section fails, as storlab refuses it.
#[test]
fn the_job_schema_validates_every_shipped_job_file_and_refuses_unknown_keys() {
    let dir = scratch();
    let out = run_in(dir.path(), ["schema", "job"]);
    out.expect_ok();
    let schema: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let validator = jsonschema::validator_for(&schema).expect("the job schema compiles");
    let errors = |v: &Value| -> Vec<String> {
        (validator.iter_errors(v))
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect()
    };
    let rooms = [
        "exchange",
        "users",
        "database",
        "etcd",
        "calibrate",
        "fs",
        "wal_sync",
    ];
    let mut checked = Vec::new();
    let mut sections = std::collections::BTreeSet::new();
    for folder in ["examples", "src/workloads/presets"] {
        for entry in std::fs::read_dir(repo().join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let table: toml::Table = text.parse().unwrap();
            let name = path.display().to_string();
            let mut v = serde_json::to_value(&table).unwrap();
            assert_eq!(errors(&v), Vec::<String>::new(), "{name}");
            let room = rooms.iter().find(|r| table.contains_key(**r));
            let planted = match room {
                Some(r) => {
                    sections.insert(*r);
                    vec![format!("/{r}/no_such_key"), "/no_such_section".into()]
                }
                None => vec![
                    "/queue_depht".into(),
                    "/worker/0/queue_depht".into(),
                    "/worker/0/access/0/blok_size".into(),
                ],
            };
            // An unknown key fails wherever it is.
            for bad in planted {
                let (parent, key) = bad.rsplit_once('/').unwrap();
                let Some(Value::Object(o)) = v.pointer_mut(parent) else {
                    continue;
                };
                o.insert(key.into(), 4.into());
                let found = errors(&v);
                assert!(!found.is_empty(), "{name}: `{bad}` passes");
                if let Some(Value::Object(o)) = v.pointer_mut(parent) {
                    o.remove(key);
                }
            }
            checked.push(name);
        }
    }
    // Every room's section is among the files checked.
    assert_eq!(
        sections.len(),
        rooms.len(),
        "sections checked: {sections:?}"
    );
    assert!(
        checked.len() >= 30,
        "{} job files checked: {checked:#?}",
        checked.len()
    );
    // A value of the wrong type fails too (a queue depth in words).
    let example = |name: &str| -> Value {
        let text = std::fs::read_to_string(repo().join("examples").join(name)).unwrap();
        serde_json::to_value(text.parse::<toml::Table>().unwrap()).unwrap()
    };
    let mut v = example("quickstart.toml");
    v["worker"][0]["queue_depth"] = "deep".into();
    assert!(!errors(&v).is_empty());
    // And in a room's section (a mailbox count in words).
    let mut v = example("exchange-2010.toml");
    v["exchange"]["mailboxes"] = "many".into();
    assert!(!errors(&v).is_empty());
    eprintln!("{} job files valid", checked.len());
}
