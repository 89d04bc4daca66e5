//! `storlab report --format fio-json`: a real run's results in the shape of fio's json+, read
//! by fio's own `fio_jsonplus_clat2csv` (Debian's fio package) with the numbers it prints
//! checked against the results, and compared key by key with fio 3.33's own json+ output.

use crate::harness::{load_json, run_in, scratch, skip};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Whether `tool` runs (`--help` or `--version`).
fn runs(tool: &str) -> bool {
    ["--version", "--help"].iter().any(|flag| {
        Command::new(tool)
            .arg(flag)
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Every key path of `v` with its JSON type (`number`, `string`...); under `bins`,
/// `percentile` and `job options` only the key itself (their keys are data).
fn shape(v: &Value, path: &str, out: &mut BTreeMap<String, &'static str>) {
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    out.insert(path.to_string(), kind);
    let leaf = ["bins", "percentile", "job options"]
        .iter()
        .any(|k| path.ends_with(&format!(".{k}")));
    match v {
        Value::Object(m) if !leaf => {
            for (k, v) in m {
                shape(v, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(a) => {
            if let Some(first) = a.first() {
                shape(first, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

/// A 2 s run of 4 KiB random 70 % reads at queue depth 4 on `DIR/data.dat`; its results.
fn run(dir: &Path) -> Value {
    let results = dir.join("run.json");
    run_in(
        dir,
        [
            "run",
            "--target",
            "data.dat",
            "--size",
            "16MiB",
            "--duration",
            "2s",
            "--ramp",
            "0s",
            "--interval",
            "500ms",
            "--read",
            "70",
            "--qd",
            "4",
            "-o",
            "run.json",
        ],
    )
    .expect_ok();
    load_json(&results)
}

#[test]
fn fios_own_tools_read_the_export_and_print_storlabs_numbers() {
    let test = "fios_own_tools_read_the_export_and_print_storlabs_numbers";
    if !runs("fio") || !Path::new("/usr/bin/fio_jsonplus_clat2csv").exists() {
        skip(
            test,
            "fio and fio_jsonplus_clat2csv are not installed (Debian: fio)",
        );
        return;
    }
    let dir = scratch();
    let results = run(dir.path());
    let out = run_in(dir.path(), ["report", "run.json", "--format", "fio-json"]);
    out.expect_ok();
    let export = dir.path().join("export.json");
    std::fs::write(&export, &out.stdout).unwrap();
    // fio's script writes one CSV per job (one per class here) and checks it against the JSON.
    let csv = dir.path().join("lat.csv");
    for extra in [None, Some("--validate")] {
        let status = Command::new("fio_jsonplus_clat2csv")
            .arg(&export)
            .arg(&csv)
            .args(extra)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&status.stdout);
        assert!(status.status.success(), "{said}");
        let word = if extra.is_some() {
            "validated"
        } else {
            "generated"
        };
        assert!(said.contains(word), "{said}");
    }
    let text = std::fs::read_to_string(dir.path().join("lat_job0.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(|c| c.trim().to_string()).collect())
        .collect();
    for dir_name in ["read", "write"] {
        let ops = results["totals"][dir_name]["ops"].as_u64().unwrap();
        let p99 = results["totals"][dir_name]["latency_ns"]["p99"]
            .as_u64()
            .unwrap();
        let (cum, pct) = (
            col(&format!("{dir_name}_clat_ns_cumulative")),
            col(&format!("{dir_name}_clat_ns_percentile")),
        );
        let filled: Vec<&Vec<String>> = rows.iter().filter(|r| !r[cum].is_empty()).collect();
        // Every I/O of the run, in the script's running total.
        let last: u64 = filled.last().unwrap()[cum].parse().unwrap();
        assert_eq!(last, ops, "{dir_name}: the script's count of I/Os");
        // The latency where the script's percentile first reaches 0.99 is storlab's p99.
        let at = filled
            .iter()
            .find(|r| r[pct].parse::<f64>().unwrap() >= 0.99)
            .map(|r| r[0].parse::<u64>().unwrap())
            .unwrap();
        assert_eq!(at, p99, "{dir_name} p99 as fio's script reads it");
    }
}

#[test]
fn the_export_has_every_field_of_fios_own_json_plus_output() {
    let test = "the_export_has_every_field_of_fios_own_json_plus_output";
    if !runs("fio") {
        skip(test, "fio is not installed (Debian: fio)");
        return;
    }
    let dir = scratch();
    run(dir.path());
    let out = run_in(dir.path(), ["report", "run.json", "--format", "fio-json"]);
    out.expect_ok();
    let ours: Value = serde_json::from_str(&out.stdout).unwrap();
    let fio = Command::new("fio")
        .current_dir(dir.path())
        .args([
            "--name=ref",
            "--filename=data.dat",
            "--size=16M",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--ioengine=psync",
            "--runtime=1",
            "--time_based",
            "--output-format=json+",
        ])
        .output()
        .unwrap();
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let theirs: Value = serde_json::from_slice(&fio.stdout).unwrap();
    let (mut want, mut have) = (BTreeMap::new(), BTreeMap::new());
    shape(&theirs, "", &mut want);
    shape(&ours, "", &mut have);
    let missing: Vec<String> = (want.iter())
        .filter(|(k, v)| have.get(*k) != Some(*v))
        .map(|(k, v)| format!("{k} ({v}; ours: {:?})", have.get(k)))
        .collect();
    assert!(
        missing.is_empty(),
        "fields of fio's json+ the export lacks: {missing:#?}"
    );
    // And its options say what fio would have been given.
    let o = &ours["jobs"][0]["job options"];
    assert_eq!(
        (o["rw"].as_str(), o["rwmixread"].as_str()),
        (Some("randrw"), Some("70"))
    );
    assert_eq!(
        (o["bs"].as_str(), o["iodepth"].as_str()),
        (Some("4k"), Some("4"))
    );
}

/// Whether fio-plot (PyPI, installed by .ci/run) is importable and runs.
fn fio_plot() -> bool {
    runs("fio-plot")
        && Command::new("python3")
            .args(["-c", "import fio_plot.fiolib.jsonparsing"])
            .status()
            .is_ok_and(|s| s.success())
}

/// A three-step queue-depth sweep (1, 4, 16) on the null engine (fast, and storlab's own
/// figures are what the tools read): each step's export (`--step N`) in its own file, as
/// fio-plot reads one fio run per queue depth. fio-plot draws its queue-depth chart from them,
/// its parser (the one that chart uses) lists three queue depths, and the IOPS and mean
/// latency it reads of each are the step's in the results file; fio's own
/// fio_jsonplus_clat2csv reads the export of the whole sweep, a job per step.
#[test]
fn fio_plot_draws_a_queue_depth_sweep_with_storlabs_numbers() {
    let test = "fio_plot_draws_a_queue_depth_sweep_with_storlabs_numbers";
    if !fio_plot() || !Path::new("/usr/bin/fio_jsonplus_clat2csv").exists() {
        skip(
            test,
            "fio-plot (pip install fio-plot==1.1.21) and fio_jsonplus_clat2csv (Debian: fio) are needed",
        );
        return;
    }
    let dir = scratch();
    std::fs::write(
        dir.path().join("sweep.toml"),
        "engine = \"null\"\nduration = \"300ms\"\nramp = \"0s\"\ninterval = \"100ms\"\n[cycle]\nqueue_depth = [1, 4, 16]\n[[target]]\npath = \"data.dat\"\nsize = \"16MiB\"\n[[worker]]\n[[worker.access]]\nread = 70\nrandom = 100\n",
    )
    .unwrap();
    run_in(dir.path(), ["run", "sweep.toml", "-q", "-o", "run.json"]).expect_ok();
    let results = load_json(&dir.path().join("run.json"));
    let steps = results["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    let out = dir.path().join("fio");
    std::fs::create_dir(&out).unwrap();
    for i in 0..3 {
        let export = run_in(
            dir.path(),
            [
                "report",
                "run.json",
                "--format",
                "fio-json",
                "--step",
                &i.to_string(),
            ],
        );
        export.expect_ok();
        std::fs::write(out.join(format!("randrw-step{i}.json")), &export.stdout).unwrap();
    }
    // fio-plot's queue-depth chart (-l), as a user draws it.
    let plot = Command::new("fio-plot")
        .current_dir(dir.path())
        .args([
            "-i", "fio", "-T", "sweep", "-l", "-r", "randrw", "-f", "read", "-d", "1", "4", "16",
            "-n", "1",
        ])
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&plot.stdout).to_string() + &String::from_utf8_lossy(&plot.stderr);
    assert!(plot.status.success(), "{said}");
    assert!(said.contains("Saving to file"), "{said}");
    // What that chart is drawn from: fio-plot's own parser over the same files.
    let script = "import json, sys\n\
        from fio_plot.fiolib import jsonimport, jsonparsing\n\
        s = {'input_directory': [sys.argv[1]], 'rw': 'randrw', 'iodepth': [1, 4, 16], 'numjobs': [1], 'filter': ['read', 'write'], 'include_hosts': None, 'exclude_hosts': None, 'compare_graph': False}\n\
        d = jsonparsing.parse_json_data(s, jsonimport.import_json_dataset(s, jsonimport.list_json_files(s)))\n\
        print(json.dumps([{k: r[k] for k in ('iodepth', 'numjobs', 'iops', 'lat')} for r in d[0]['data']]))\n";
    let parsed = Command::new("python3")
        .args(["-c", script])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        parsed.status.success(),
        "{}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    let rows: Vec<Value> = serde_json::from_slice(&parsed.stdout).unwrap();
    let depths: Vec<&str> = rows
        .iter()
        .map(|r| r["iodepth"].as_str().unwrap())
        .collect();
    assert_eq!(
        depths,
        ["1", "4", "16"],
        "fio-plot lists three queue depths"
    );
    for (row, s) in rows.iter().zip(steps) {
        let read = &s["totals"]["read"];
        assert_eq!(row["iops"].as_f64(), read["iops"].as_f64(), "{row}");
        assert_eq!(
            row["lat"].as_f64(),
            read["latency_ns"]["mean"].as_f64(),
            "{row}"
        );
    }
    // fio's own tool on the whole sweep: a CSV per job, one job per step.
    let all = run_in(dir.path(), ["report", "run.json", "--format", "fio-json"]);
    all.expect_ok();
    std::fs::write(dir.path().join("all.json"), &all.stdout).unwrap();
    for extra in [None, Some("--validate")] {
        let status = Command::new("fio_jsonplus_clat2csv")
            .args(["all.json", "lat.csv"])
            .args(extra)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
    }
    for (i, step) in steps.iter().enumerate() {
        let csv = std::fs::read_to_string(dir.path().join(format!("lat_job{i}.csv"))).unwrap();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
        let cum = header
            .iter()
            .position(|h| *h == "read_clat_ns_cumulative")
            .unwrap();
        let last: u64 = (lines.rev())
            .find_map(|l| {
                l.split(',')
                    .nth(cum)
                    .map(str::trim)
                    .filter(|c| !c.is_empty())?
                    .parse()
                    .ok()
            })
            .unwrap();
        assert_eq!(
            last,
            step["totals"]["read"]["ops"].as_u64().unwrap(),
            "job {i}'s reads"
        );
    }
}
