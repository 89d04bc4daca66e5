//! Hostile input files (issue 33): each attack as it was made, on the real binary. Every one is
//! refused with exit 2 and a message naming what, where and how to fix, in bounded time and
//! memory, never by a panic, a hang or a table of NaN: a results file whose histogram claims a
//! 4 GiB payload, a time series with a mean latency near f64's largest, indexes out of range, a
//! minimum above a maximum, a block sample's rate of 1e308, fio include bombs, an include of a
//! FIFO or of /dev/zero, 200 jobs × numjobs=4096, a size of 1e26 bytes, an oversized job file.

use crate::harness::{Outcome, STORLAB, scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Far beyond what any of these takes on a loaded machine; only a hang reaches it.
const HANG: Duration = Duration::from_secs(120);

/// `storlab ARGS` in `dir` with at most 1 GiB of address space (`ulimit -v`: an allocation
/// sized from a file's claim fails, and the process with it) and at most [`HANG`] of time
/// (then it is killed and the test fails).
fn run_bounded(dir: &Path, args: &[&str]) -> Outcome {
    let (out, err) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    let mut child = std::process::Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(STORLAB)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("start bash");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "storlab {args:?} did not finish within {HANG:?}; stderr so far:\n{}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Outcome {
        code: status.code(),
        stdout: std::fs::read_to_string(&out).unwrap(),
        stderr: std::fs::read_to_string(&err).unwrap(),
    }
}

/// Refused: exit 2, every one of `parts` in the message, no panic.
#[track_caller]
fn refused(out: &Outcome, parts: &[&str]) {
    out.expect_code(2).stderr_has(parts);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

/// The results file of a plain run (the fixture), as JSON.
fn plain() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plain.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn write_json(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(v).unwrap()).unwrap();
    path
}

/// A compressed HdrHistogram V2 encoding (base64) whose header claims `payload` bytes of
/// counts with storlab's bounds, followed by `held` bytes.
fn histogram_claiming(payload: u32, held: usize) -> String {
    use base64::Engine as _;
    use std::io::Write;
    let mut inner = 0x1c84_9313u32.to_be_bytes().to_vec();
    for v in [payload, 0, 2] {
        inner.extend(v.to_be_bytes());
    }
    inner.extend(1u64.to_be_bytes());
    inner.extend((2 * 3600 * 1_000_000_000u64).to_be_bytes());
    inner.extend(1.0f64.to_be_bytes());
    inner.extend(vec![2u8; held]);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&inner).unwrap();
    let stream = z.finish().unwrap();
    let mut bytes = 0x1c84_9314u32.to_be_bytes().to_vec();
    bytes.extend((stream.len() as u32).to_be_bytes());
    bytes.extend(stream);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn a_histogram_claiming_a_4_gib_payload_is_refused_by_report_and_compare_in_bounded_memory() {
    let dir = scratch();
    let mut v = plain();
    v["totals"]["read"]["histogram"]["hdr_v2_deflate_base64"] =
        histogram_claiming(0xFFFF_FF00, 100).into();
    v["timeseries"] = Value::Array(Vec::new());
    let path = write_json(dir.path(), "bomb.json", &v);
    assert!(std::fs::metadata(&path).unwrap().len() < 20_000);
    let name = path.to_str().unwrap();
    for args in [vec!["report", name], vec!["compare", name, name]] {
        let out = run_bounded(dir.path(), &args);
        refused(
            &out,
            &[
                "bomb.json",
                "histogram declares 4294967040 bytes of counts but holds 100",
            ],
        );
    }
}

#[test]
fn a_time_series_with_a_mean_latency_near_the_largest_float_is_refused_on_load() {
    let dir = scratch();
    let mut v = plain();
    v["timeseries"][2]["total"]["read"]["latency_mean_ns"] = 1.7e308.into();
    let json = write_json(dir.path(), "huge.json", &v);
    let mut beyond = v.clone();
    beyond["timeseries"][2]["total"]["read"]["latency_mean_ns"] = 123_456.5.into();
    let out = run_bounded(
        dir.path(),
        &["report", json.to_str().unwrap(), "-o", "x.html"],
    );
    refused(
        &out,
        &[
            "huge.json",
            "`timeseries[2].total.read.latency_mean_ns` is 1.7e308",
            "at most 1e30",
        ],
    );
    assert!(!dir.path().join("x.html").exists());
    // 1.8e308 as written in the attack: beyond f64 itself.
    let text = serde_json::to_string(&beyond)
        .unwrap()
        .replace("123456.5", "1.8e308");
    std::fs::write(&json, text).unwrap();
    let out = run_bounded(
        dir.path(),
        &["report", json.to_str().unwrap(), "-o", "x.html"],
    );
    refused(&out, &["huge.json", "number out of range"]);
    // The same record in the NDJSON time series.
    let records: Vec<String> = (v["timeseries"].as_array().unwrap().iter())
        .map(|r| serde_json::to_string(r).unwrap())
        .collect();
    let ndjson = dir.path().join("huge.ndjson");
    std::fs::write(&ndjson, records.join("\n") + "\n").unwrap();
    let out = run_bounded(
        dir.path(),
        &["report", ndjson.to_str().unwrap(), "-o", "y.html"],
    );
    refused(
        &out,
        &[
            "huge.ndjson line 3",
            "`total.read.latency_mean_ns` is 1.7e308",
        ],
    );
    // The largest figure a file may hold still makes a bounded report.
    v["timeseries"][2]["total"]["read"]["latency_mean_ns"] = 1e30.into();
    let json = write_json(dir.path(), "large.json", &v);
    let out = run_bounded(
        dir.path(),
        &["report", json.to_str().unwrap(), "-o", "z.html"],
    );
    out.expect_ok();
    let html = std::fs::metadata(dir.path().join("z.html")).unwrap().len();
    assert!(html < 10 << 20, "{html} bytes of HTML");
}

/// A results file spoiled one way: its name, the spoiling, what the refusal says.
type Spoiled = (&'static str, fn(&mut Value), &'static [&'static str]);

#[test]
fn indexes_out_of_range_and_a_minimum_above_the_maximum_are_refused_not_panicked_on() {
    let dir = scratch();
    let cases: [Spoiled; 3] = [
        (
            "class.json",
            |v| v["job"]["workers"][0]["access"][0]["class"] = 7.into(),
            &["`job.workers[0].access[0].class` is 7, but the job has 1 class"],
        ),
        (
            "target.json",
            |v| v["job"]["workers"][0]["targets"] = serde_json::json!([0, 5]),
            &["`job.workers[0].targets[1]` is 5, but the job has 1 target"],
        ),
        (
            "minmax.json",
            |v| {
                let h = &mut v["totals"]["read"]["histogram"];
                h["min_ns"] = (h["max_ns"].as_u64().unwrap() + 1).into();
            },
            &["histogram's min_ns", "is above its max_ns"],
        ),
    ];
    for (name, spoil, parts) in cases {
        let mut v = plain();
        spoil(&mut v);
        let path = write_json(dir.path(), name, &v);
        let p = path.to_str().unwrap();
        for args in [
            vec!["report", p],
            vec!["compare", p, p],
            vec!["report", p, "-o", "r.html"],
        ] {
            let out = run_bounded(dir.path(), &args);
            refused(&out, parts);
            refused(&out, &[name]);
        }
    }
}

/// A results file with a block sample, from a small MSR trace imported in `dir`.
fn sampled(dir: &Path) -> PathBuf {
    let trace: String = (0..200)
        .map(|i| {
            format!(
                "{},hm,0,Read,{},4096,100\n",
                128_166_372_000_000_000u64 + i * 1000,
                (i % 50) * 4096
            )
        })
        .collect();
    std::fs::write(dir.join("t.csv"), trace).unwrap();
    let out = run_bounded(dir, &["trace", "import", "t.csv", "-o", "tr.json"]);
    out.expect_ok();
    dir.join("tr.json")
}

#[test]
fn a_block_sample_rate_of_1e308_is_refused_by_cache_curve_and_so_are_rates_to_predict_for() {
    let dir = scratch();
    let results = sampled(dir.path());
    let p = results.to_str().unwrap();
    run_bounded(dir.path(), &["cache-curve", p]).expect_ok();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    v["block_sample"]["rate"] = 1e308.into();
    let spoiled = write_json(dir.path(), "rate.json", &v);
    std::fs::copy(dir.path().join("tr.blocks"), dir.path().join("rate.blocks")).unwrap();
    let out = run_bounded(dir.path(), &["cache-curve", spoiled.to_str().unwrap()]);
    refused(&out, &["rate.json", "`block_sample.rate` is 1e308"]);
    assert!(!out.stdout.contains("NaN"), "{}", out.stdout);
    // Within the largest figure but not its threshold over its modulus.
    v["block_sample"]["rate"] = 1e29.into();
    write_json(dir.path(), "rate.json", &v);
    let out = run_bounded(dir.path(), &["cache-curve", "rate.json"]);
    refused(
        &out,
        &[
            "rate.json",
            "`block_sample`: rate 1e29 is not its threshold over its modulus",
        ],
    );
    // The rates and concurrencies a prediction is asked for.
    for (flag, value) in [
        ("--rate", "1e308"),
        ("--rate", "inf"),
        ("--concurrency", "1e308"),
    ] {
        let out = run_bounded(
            dir.path(),
            &["cache-curve", p, "--cache-latency", "100us", flag, value],
        );
        refused(&out, &[flag, "at most 1e9"]);
    }
}

/// `storlab import-fio FILE` in `dir`.
fn import(dir: &Path, file: &str) -> Outcome {
    run_bounded(dir, &["import-fio", file])
}

#[test]
fn a_fio_include_bomb_is_refused_at_once() {
    let dir = scratch();
    // Fifteen levels of ten includes each: 10^14 reads if followed.
    for level in 1..=15 {
        let body = match level {
            15 => "bs=4k\n".to_string(),
            l => format!("include lvl{}.fio\n", l + 1).repeat(10),
        };
        std::fs::write(dir.path().join(format!("lvl{level}.fio")), body).unwrap();
    }
    std::fs::write(
        dir.path().join("bomb.fio"),
        "[global]\ninclude lvl1.fio\n[job]\nrw=read\nsize=1m\n",
    )
    .unwrap();
    let out = import(dir.path(), "bomb.fio");
    refused(
        &out,
        &[
            ".fio:",
            "more than 256 includes in all",
            "merge the included files",
        ],
    );
    // A file including itself.
    std::fs::write(dir.path().join("self.fio"), "include self.fio\n").unwrap();
    std::fs::write(dir.path().join("loop.fio"), "[job]\ninclude self.fio\n").unwrap();
    let out = import(dir.path(), "loop.fio");
    refused(
        &out,
        &["self.fio:1: includes nest more than 16 deep (a file including itself?)"],
    );
}

#[test]
fn a_fio_include_of_a_fifo_or_of_dev_zero_is_refused_without_reading() {
    let dir = scratch();
    let fifo = dir.path().join("fifo.fio");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("fifo-include.fio"),
        "[global]\ninclude fifo.fio\n[job]\nrw=read\n",
    )
    .unwrap();
    let out = import(dir.path(), "fifo-include.fio");
    refused(
        &out,
        &[
            "fifo-include.fio:2: cannot include it: the fio job file",
            "fifo.fio is a FIFO (named pipe)",
            "save it to a file first",
        ],
    );
    std::fs::write(
        dir.path().join("zero.fio"),
        "[global]\ninclude /dev/zero\n[job]\nrw=read\n",
    )
    .unwrap();
    let out = import(dir.path(), "zero.fio");
    refused(
        &out,
        &["zero.fio:2: cannot include it: the fio job file /dev/zero is a character device"],
    );
    // The fio file itself a FIFO: refused before anything could wait for a writer.
    let out = import(dir.path(), "fifo.fio");
    refused(&out, &["fifo.fio is a FIFO (named pipe)"]);
    // Includes counted together against the cap: a sparse 17 MiB include.
    let big = std::fs::File::create(dir.path().join("big.fio")).unwrap();
    big.set_len(17 << 20).unwrap();
    std::fs::write(
        dir.path().join("big-include.fio"),
        "[global]\ninclude big.fio\n[job]\nrw=read\n",
    )
    .unwrap();
    let out = import(dir.path(), "big-include.fio");
    refused(
        &out,
        &[
            "big-include.fio:2: cannot include it",
            "is 17 MiB",
            "that a fio job file and the files it includes may hold together",
        ],
    );
}

#[test]
fn two_hundred_fio_jobs_of_numjobs_4096_are_refused_at_once_even_as_a_dry_run() {
    let dir = scratch();
    let mut text = "[global]\nrw=randread\nsize=1m\nnumjobs=4096\n".to_string();
    for i in 0..200 {
        text.push_str(&format!("[j{i}]\n"));
    }
    std::fs::write(dir.path().join("many.fio"), text).unwrap();
    let parts = [
        "many.fio:4: the jobs up to [j1] make 8192 workers",
        "at most 4096 workers in all",
        "lower numjobs",
    ];
    refused(&import(dir.path(), "many.fio"), &parts);
    let out = run_bounded(dir.path(), &["run", "--fio", "many.fio", "--dry-run"]);
    refused(&out, &parts);
    // The same in a storlab job file: two workers of count = 4096.
    let job = "[[target]]\npath = \"t.dat\"\nsize = \"1MiB\"\n\n\
               [[worker]]\ncount = 4096\n[[worker.access]]\n\n\
               [[worker]]\ncount = 4096\n[[worker.access]]\n";
    std::fs::write(dir.path().join("many.toml"), job).unwrap();
    let out = run_bounded(dir.path(), &["run", "many.toml", "--dry-run"]);
    refused(
        &out,
        &[
            "worker[1].count",
            "make 8192 workers",
            "at most 4096 in all",
        ],
    );
}

#[test]
fn a_fio_size_of_1e26_bytes_is_refused_not_saturated() {
    let dir = scratch();
    std::fs::write(dir.path().join("huge.fio"), "[job]\nrw=read\nsize=1e26\n").unwrap();
    let out = import(dir.path(), "huge.fio");
    refused(&out, &["huge.fio:3: size=1e26", "below 16 EiB"]);
    assert!(
        !out.stdout.contains("18446744073709551615"),
        "{}",
        out.stdout
    );
}

#[test]
fn an_oversized_job_file_or_one_that_is_a_fifo_is_refused_before_it_is_read() {
    let dir = scratch();
    // Sparse: 17 MiB that are never read.
    let big = std::fs::File::create(dir.path().join("big.toml")).unwrap();
    big.set_len(17 << 20).unwrap();
    let out = run_bounded(dir.path(), &["run", "big.toml", "--dry-run"]);
    refused(
        &out,
        &[
            "big.toml",
            "the job file is 17 MiB (17825792 bytes); storlab reads job files of at most 16 MiB",
        ],
    );
    let fifo = dir.path().join("job.toml");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let out = run_bounded(dir.path(), &["run", "job.toml", "--dry-run"]);
    refused(&out, &["job.toml", "is a FIFO (named pipe)"]);
    // A results file too.
    let out = run_bounded(dir.path(), &["report", "job.toml"]);
    refused(&out, &["the results file job.toml is a FIFO (named pipe)"]);
}

#[test]
fn counts_at_the_largest_whole_number_are_reported_not_panicked_on() {
    let dir = scratch();
    let fixture = |name: &str| -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let mut plain = plain();
    plain["targets"][0]["ops"]["read"] = u64::MAX.into();
    plain["targets"][0]["bytes"]["read"] = u64::MAX.into();
    plain["job"]["workers"][0]["access"][0]["block_size_bytes"] = u64::MAX.into();
    plain["timeseries"][0]["interval_ms"] = u64::MAX.into();
    let mut steps = fixture("steps.json");
    steps["steps"][0]["totals"]["read"]["ops"] = u64::MAX.into();
    steps["steps"][0]["totals"]["write"]["ops"] = u64::MAX.into();
    for (name, v) in [("plain.json", plain), ("steps.json", steps)] {
        let path = write_json(dir.path(), name, &v);
        let p = path.to_str().unwrap();
        for args in [vec!["report", p], vec!["compare", p, p]] {
            let out = run_bounded(dir.path(), &args);
            assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
            out.expect_ok();
        }
    }
}
