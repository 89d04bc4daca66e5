//! The entry points of the fuzz targets (`fuzz/`) and of the tests that replay their committed
//! corpus: each takes any bytes, hands them to one of storlab's parsers as storlab itself would
//! (from a file where storlab reads a file), goes on with what a valid input leads to (a job
//! resolved and described, a results file rendered by every renderer, a block sample's cache
//! curve), and must not panic, hang or allocate in proportion to a number in the input. Errors
//! are the expected outcome for most inputs and are dropped.

use crate::import::Format;
use crate::job::file as job_file;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// An entry point: any bytes in, nothing out (it must not panic).
pub type Target = fn(&[u8]);

/// Every fuzz target by its name (`fuzz/fuzz_targets/NAME.rs`, `fuzz/corpus/NAME/`).
pub const TARGETS: [(&str, Target); 12] = [
    ("job_toml", job_toml),
    ("fio_job", fio_job),
    ("iometer_icf", iometer_icf),
    ("vdbench_job", vdbench_job),
    ("results_json", results_json),
    ("timeseries", timeseries),
    ("trace", trace),
    ("block_sample", block_sample),
    ("diskspd_profile", diskspd_profile),
    ("diskspd_args", diskspd_args),
    ("import_shapes", import_shapes),
    ("report_rows", report_rows),
];

/// A private directory for the inputs that parsers read from files (one per process): a new
/// directory of a random name, made by this process (`mkdir` fails on any name that exists, so
/// nothing another user prepared is used), mode 0700.
fn scratch() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        use std::hash::{BuildHasher, RandomState};
        use std::os::unix::fs::DirBuilderExt;
        (0..16u32).find_map(|i| {
            // RandomState carries per-process random keys.
            let draw = RandomState::new().hash_one(i);
            let dir = std::env::temp_dir().join(format!("storlab-fuzz-{draw:016x}"));
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&dir)
                .ok()
                .map(|()| dir)
        })
    })
    .as_deref()
}

/// `data` written to the scratch file `name`, alone in a directory of its own (so that no
/// other target's file is beside it: a time series would take a results file there as its).
fn file(name: &str, data: &[u8]) -> Option<PathBuf> {
    let dir = scratch()?.join(name.replace('.', "-"));
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join(name);
    crate::files::write_output("a fuzz input", &path, data).ok()?;
    Some(path)
}

/// A job file: parsed, resolved, expanded into its steps and described; a workload's section
/// loaded by its room.
pub fn job_toml(data: &[u8]) {
    let name = Path::new("fuzz.toml");
    let Ok(text) = job_file::decode(name, data.to_vec()) else {
        return;
    };
    if let Some(room) = crate::workloads::room_of(&text) {
        let file = crate::workloads::JobText {
            path: name,
            text: &text,
        };
        if let Ok(w) = (room.load)(&file, &Default::default()) {
            let _ = w.describe();
            let _ = w.jobs();
        }
        return;
    }
    let Ok(spec) = job_file::parse(name, &text) else {
        return;
    };
    if let Ok(job) = crate::job::resolve(&spec, Some((name, &text))) {
        let _ = crate::job::steps::expand(&job);
        let _ = crate::results::description::Description::of_job(&job);
    }
}

/// A fio job file, converted strictly and leniently (its includes are looked for beside it, in
/// a directory of its own).
pub fn fio_job(data: &[u8]) {
    let Some(path) = file("fuzz.fio", data) else {
        return;
    };
    let Ok(text) = crate::import::read(&path, Format::Fio) else {
        return;
    };
    convert_and_resolve(&[("C:\\test", "/tmp/x")], |opts| {
        crate::import::convert(&path, &text, Format::Fio, opts)
    });
}

/// Converts with `convert` strictly and leniently (with `map` for the source tool's targets),
/// and resolves each job it makes.
fn convert_and_resolve(
    map: &[(&str, &str)],
    convert: impl Fn(
        &crate::import::Options,
    ) -> Result<crate::import::Converted, crate::import::ImportError>,
) {
    for lenient in [false, true] {
        let opts = crate::import::Options {
            lenient,
            map: map
                .iter()
                .map(|(t, p)| (t.to_string(), PathBuf::from(p)))
                .collect(),
        };
        if let Ok(converted) = convert(&opts) {
            let name = Path::new("converted.toml");
            if let Ok(spec) = job_file::parse(name, &converted.toml) {
                let _ = crate::job::resolve(&spec, Some((name, &converted.toml)));
            }
        }
    }
}

/// A vdbench parameter file, converted strictly and leniently, and the converted job resolved
/// (the parameter file is text storlab already read: no file is written).
pub fn vdbench_job(data: &[u8]) {
    let name = Path::new("fuzz.vdb");
    let Ok(text) = crate::import::decode(name, data) else {
        return;
    };
    convert_and_resolve(&[], |opts| {
        crate::import::convert(name, &text, Format::Vdbench, opts)
    });
}

/// An Iometer configuration file (in any encoding Windows writes), converted strictly and leniently (with one target mapped,
/// the rest placed as scratch files), the job resolved.
pub fn iometer_icf(data: &[u8]) {
    let Some(path) = file("fuzz.icf", data) else {
        return;
    };
    let Ok(text) = crate::import::read(&path, Format::Iometer) else {
        return;
    };
    convert_and_resolve(&[("C:", "mapped.dat")], |opts| {
        crate::import::convert(&path, &text, Format::Iometer, opts)
    });
}

/// `--map` as a user gives it for DiskSpd's targets: a drive, a disk, a template path.
const DISKSPD_MAP: &[(&str, &str)] = &[("C:", "/mnt/c"), ("#1", "/dev/null"), ("*1", "first.dat")];

/// A DiskSpd XML profile, read as `storlab run PROFILE.xml` reads a job file, converted
/// strictly and leniently, and the job resolved.
pub fn diskspd_profile(data: &[u8]) {
    let name = Path::new("fuzz.xml");
    let Ok(text) = crate::import::decode(name, data) else {
        return;
    };
    convert_and_resolve(DISKSPD_MAP, |opts| {
        crate::import::convert(name, &text, Format::DiskSpd, opts)
    });
}

/// A DiskSpd command line (`storlab run --diskspd "ARGS"`), converted strictly and leniently,
/// and the job resolved.
pub fn diskspd_args(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    convert_and_resolve(DISKSPD_MAP, |opts| {
        crate::import::convert_diskspd_line(&line, opts)
    });
}

/// The shapes that made an importer slow, repeated as many times as the input says: an
/// element of many attributes (DiskSpd's profile took 34 s at 150 000), elements nested or
/// side by side, many vdbench definitions, Iometer specification lines or fio sections. The
/// first byte picks the shape, the next two the repetitions (up to 65 535, the whole at most
/// 4 MiB), the rest is the repeated unit. Each conversion must take time in proportion to its
/// input: the fuzzer's timeout catches one that does not.
pub fn import_shapes(data: &[u8]) {
    let [shape, hi, lo, unit @ ..] = data else {
        return;
    };
    let n = usize::from(u16::from_be_bytes([*hi, *lo]));
    let unit = String::from_utf8_lossy(unit);
    let unit = if unit.is_empty() { "x" } else { &unit };
    if n.saturating_mul(unit.len() + 16) > 4 << 20 {
        return;
    }
    let many = |f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<String>();
    let (format, text) = match shape % 6 {
        0 => (
            Format::DiskSpd,
            format!(
                "<Profile {}><TimeSpans/></Profile>",
                many(&|i| format!("a{i}=\"{unit}\" "))
            ),
        ),
        1 => (
            Format::DiskSpd,
            format!("<Profile>{}{unit}</Profile>", "<a>".repeat(n)),
        ),
        2 => (
            Format::DiskSpd,
            format!(
                "<Profile><TimeSpans><TimeSpan><Targets>{}</Targets></TimeSpan></TimeSpans></Profile>",
                many(&|i| format!("<Target><Path>{unit}{i}</Path></Target>"))
            ),
        ),
        3 => (
            Format::Vdbench,
            many(&|i| format!("sd=sd{i},lun={unit}{i}\nwd=wd{i},sd=sd*\n")) + "rd=rd,wd=wd*\n",
        ),
        4 => (
            Format::Iometer,
            format!(
                "Version 1.1.0\n'Access specification name,default assignment\n\tA,ALL\n'size,% of size,% reads,% random\n{}",
                many(&|_| format!("\t4096,1,{unit},0\n"))
            ),
        ),
        _ => (
            Format::Fio,
            many(&|i| format!("[j{i}]\nrw=randread\nfilename={unit}\n")),
        ),
    };
    let name = Path::new("shape");
    for lenient in [false, true] {
        let opts = crate::import::Options {
            lenient,
            map: Vec::new(),
        };
        let _ = crate::import::convert(name, &text, format, &opts);
    }
}

/// A results file: loaded as `storlab report` loads it, then rendered by every renderer.
pub fn results_json(data: &[u8]) {
    let Some(path) = file("fuzz.json", data) else {
        return;
    };
    let Ok(r) = crate::results::file::load(&path) else {
        return;
    };
    render_all(&r);
}

/// Rows [`report_rows`] makes of one input at most (a megabyte of input, 4 bytes a row).
const MAX_ROWS: usize = 1 << 18;

/// Many rows of one table from a few bytes each, written as a results file, loaded as
/// `storlab report` loads one and rendered by every renderer: the shape that found a renderer
/// whose time grew faster than its input (20,000 calibration points on a diagonal; 2,000 made
/// 144 MB of text). The first byte picks the table (calibration points, classes, steps,
/// targets, warnings); each 4 bytes after it make a row: its loads, or its name (control
/// characters included).
pub fn report_rows(data: &[u8]) {
    let r = rows_result(data);
    let Ok(text) = crate::results::file::to_string(&r) else {
        return;
    };
    results_json(text.as_bytes());
}

/// The results [`report_rows`] makes of `data`.
fn rows_result(data: &[u8]) -> crate::results::RunResult {
    use crate::results::RunResult;
    let mut r = RunResult {
        schema_version: crate::results::schema::SCHEMA_VERSION,
        ..RunResult::default()
    };
    let Some((&table, rest)) = data.split_first() else {
        return r;
    };
    let rows = rest.chunks_exact(4).take(MAX_ROWS);
    let name = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match table % 5 {
        0 => r.calibrate = Some(calibration(rows)),
        1 => {
            for b in rows {
                r.classes
                    .entry(name(b))
                    .or_insert_with(|| crate::results::ClassResult {
                        read: Default::default(),
                        write: Default::default(),
                        flush: Default::default(),
                        write_durability: "none".into(),
                        measured_ms: None,
                        steps: None,
                    });
            }
            r.job.classes = r.classes.keys().cloned().collect();
        }
        2 => {
            let steps = rows
                .enumerate()
                .map(|(index, b)| crate::results::steps::StepResult {
                    index,
                    label: name(b),
                    ..Default::default()
                });
            r.steps = Some(steps.collect());
        }
        3 => {
            r.targets = rows
                .map(|b| crate::results::TargetResult {
                    name: name(b),
                    path: name(b),
                    kind: crate::stats::target::TargetKind::File,
                    size_bytes: 4096,
                    logical_block_size_bytes: 512,
                    direct: true,
                    dsync: false,
                    filesystem: "ext4".into(),
                    mount_point: None,
                    mount_options: String::new(),
                    device: None,
                    device_model: None,
                    prepare: Default::default(),
                    ops: Default::default(),
                    bytes: Default::default(),
                    errors: Default::default(),
                })
                .collect();
        }
        _ => r.warnings = rows.map(name).collect(),
    }
    r
}

/// A calibration whose points' loads are the rows' bytes (small load from the first two,
/// large from the last two), their figures made from the loads.
fn calibration<'a>(
    rows: impl Iterator<Item = &'a [u8]>,
) -> crate::workloads::calibrate::section::CalibrateResult {
    use crate::workloads::calibrate::section::{CalibrateResult, LargeType, PointResult};
    let points = rows
        .enumerate()
        .map(|(step, b)| {
            let small = u32::from(u16::from_le_bytes([b[0], b[1]]));
            let large = u32::from(u16::from_le_bytes([b[2], b[3]]));
            PointResult {
                step,
                small,
                large,
                small_iops: f64::from(small) * 100.0,
                small_latency_ms: (small > 0).then(|| f64::from(large + 1) / 10.0),
                large_mb_per_s: f64::from(large) * 10.0,
                ..PointResult::default()
            }
        })
        .collect();
    CalibrateResult {
        level: "advanced".into(),
        matrix: "detailed".into(),
        disks: 1,
        small_size_bytes: 8192,
        large_size_bytes: 1 << 20,
        large_type: LargeType::Random,
        write_pct: 0.0,
        point_ms: 1000,
        warm_up_ms: 0,
        latency_limit_ms: 20.0,
        points,
        max_small_iops: None,
        max_large_mb_per_s: None,
        min_small_latency_ms: None,
        small_load_within_limit: None,
        notes: Vec::new(),
        csv_files: Vec::new(),
    }
}

/// Every renderer of a results file: the console summary, the HTML report, fio's json+,
/// Iometer's results spreadsheet, every
/// CSV and Markdown table.
fn render_all(r: &crate::results::RunResult) {
    use crate::report::csv::{Format, Table, render};
    crate::workloads::install_views();
    let _ = crate::report::console::summary(r, 0);
    let _ = crate::report::html::render(r);
    let _ = crate::report::fio_json::render(r, None);
    let _ = crate::report::iometer_csv::render(r, Default::default());
    for table in [Table::Summary, Table::Steps, Table::Timeseries] {
        for format in [Format::Csv, Format::Markdown] {
            let _ = render(r, format, table);
        }
    }
}

/// A time series (NDJSON), reported as `storlab report RUN.ndjson` reports one (no results
/// file beside it: rebuilt from the series alone), then rendered.
pub fn timeseries(data: &[u8]) {
    let Some(path) = file("fuzz.ndjson", data) else {
        return;
    };
    if let Ok((r, _)) = crate::results::recovery::load(&path) {
        render_all(&r);
    }
}

/// A block trace, in the format its first line says (MSR Cambridge CSV or blkparse text).
pub fn trace(data: &[u8]) {
    if let Some(path) = file("fuzz.trace", data) {
        let _ = crate::trace::formats::read(&path, None);
    }
}

/// A block-sample file: read as `storlab cache-curve` reads it.
pub fn block_sample(data: &[u8]) {
    if let Some(path) = file("fuzz.blocks", data) {
        let _ = crate::results::blocks::read(&path);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every input of the committed corpus (`fuzz/corpus/TARGET/`) goes through its target's
    /// entry point without a panic: the corpus the fuzzers start from stays valid input for
    /// this build, and each target is exercised by `cargo test` too.
    /// The rows [`super::report_rows`] makes are a results file storlab reads: each table's
    /// rows reach the renderers, not a refusal.
    #[test]
    fn the_rows_of_every_table_load_as_a_results_file() {
        for table in 0..5u8 {
            let mut data = vec![table];
            data.extend([1, 0, 2, 0, 0x1b, b']', b'0', b';', 3, 0, 3, 0]);
            let r = super::rows_result(&data);
            let text = crate::results::file::to_string(&r).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("r.json");
            std::fs::write(&path, text).unwrap();
            crate::results::file::load(&path).unwrap_or_else(|e| panic!("table {table}: {e:#}"));
        }
    }

    /// What the summary and the HTML report write of `data` (loaded as a results file).
    fn rendered(data: &[u8]) -> (usize, usize) {
        crate::workloads::install_views();
        let text = crate::results::file::to_string(&super::rows_result(data)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, text).unwrap();
        let r = crate::results::file::load(&path).unwrap();
        (
            crate::report::console::summary(&r, 0).len(),
            crate::report::html::render(&r).len(),
        )
    }

    /// Issue 44: 2,000 calibration points on a diagonal made 144 MB of text in 13.7 s, and
    /// 20,000 did not finish. Ten times the rows of any table makes at most about ten times
    /// the text (12.5 ×; what every report writes whatever its rows counts too, and a table
    /// may leave rows out, as the summary does classes without I/O), and
    /// the larger report is written in seconds: the work is linear in the rows. No clock is
    /// compared: the bound on time is one only a renderer quadratic in its rows reaches.
    #[test]
    fn ten_times_the_rows_of_any_table_make_about_ten_times_the_report() {
        let started = std::time::Instant::now();
        for (table, rows) in [(0u8, 2_000u32), (1, 500), (2, 300), (3, 500), (4, 500)] {
            let input = |n: u32| {
                let mut data = vec![table];
                for i in 0..n {
                    // A point on the diagonal (calibration), a distinct name (the others).
                    let (a, b) = ((i % 65_536) as u16, (i % 65_536) as u16);
                    data.extend(a.to_le_bytes());
                    data.extend(b.to_le_bytes());
                }
                data
            };
            let (small, large) = (rendered(&input(rows)), rendered(&input(rows * 10)));
            for (what, a, b) in [("summary", small.0, large.0), ("HTML", small.1, large.1)] {
                let ratio = b as f64 / a as f64;
                // Never more than linear; the calibration's points are all shown.
                let least = if table == 0 { 5.0 } else { 0.0 };
                assert!(
                    (least..=12.5).contains(&ratio),
                    "table {table}: the {what} of {rows} rows has {a} bytes, of {} rows {b} bytes ({ratio:.1}×)",
                    rows * 10
                );
            }
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn the_committed_corpus_replays_without_a_panic() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
        for (name, target) in super::TARGETS {
            let dir = corpus.join(name);
            let mut inputs: Vec<_> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().path())
                .collect();
            inputs.sort();
            assert!(!inputs.is_empty(), "{} holds no input", dir.display());
            for input in inputs {
                let data = std::fs::read(&input).unwrap();
                target(&data);
                // A cut and a flipped byte of every input: the shapes a fuzzer tries first.
                target(&data[..data.len() / 2]);
                let mut flipped = data.clone();
                if let Some(b) = flipped.get_mut(data.len() / 3) {
                    *b ^= 0x5a;
                }
                target(&flipped);
            }
        }
    }
}
