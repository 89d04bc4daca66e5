//! What the tests share: a scratch directory on a real disk, running the `storlab` binary and
//! capturing what it printed, the command lines most tests run ([`RunArgs`], [`ExchangeArgs`])
//! and the job file most tests of run keys use ([`JobFile`]), reading results files as JSON,
//! and loop devices that are detached when the test ends (even when it fails).

use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub(crate) const STORLAB: &str = env!("CARGO_BIN_EXE_storlab");

/// A temporary directory under cargo's target tmp dir: on the same disk as the build, so
/// O_DIRECT works and nothing lives in memory (as it would on a tmpfs /tmp).
pub(crate) fn scratch() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(base).expect("create CARGO_TARGET_TMPDIR");
    tempfile::Builder::new()
        .prefix("storlab-it-")
        .tempdir_in(base)
        .expect("create a scratch directory")
}

/// `storlab` with its working directory set to `dir` (so a stray default results directory or
/// scratch file can only land there).
pub(crate) fn storlab(dir: &Path) -> Command {
    let mut command = Command::new(STORLAB);
    command.current_dir(dir).stdin(Stdio::null());
    command
}

/// What one invocation did.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Everything on stdout.
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
}

impl Outcome {
    /// What a finished process printed and how it exited (for a process the test started
    /// itself, where [`run_in`] does not serve: in a cgroup, or while the test works beside it).
    pub(crate) fn from_output(output: &Output) -> Outcome {
        Outcome {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Panics with the output unless the exit code is `code`.
    #[track_caller]
    pub(crate) fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code,
            Some(code),
            "expected exit code {code}\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    /// Panics with the output unless the run succeeded.
    #[track_caller]
    pub(crate) fn expect_ok(&self) -> &Self {
        self.expect_code(0)
    }

    /// Panics unless the run passed, or (on a host that kept storlab's threads from a CPU)
    /// was INCONCLUSIVE with exit code 4, every failed rule saying why: what a run that must
    /// pass on storage that carries it gives on any host. Never FAIL.
    #[track_caller]
    pub(crate) fn expect_pass_or_host(&self, v: &Value) -> &Self {
        match v.pointer("/verdict/result").and_then(Value::as_str) {
            Some("PASS") => self.expect_code(0),
            Some("INCONCLUSIVE") => {
                let rules = v["verdict"]["rules"].as_array().expect("rules");
                for r in rules.iter().filter(|r| r["pass"] == false) {
                    assert!(
                        r["inconclusive"].is_string(),
                        "a failed rule without why: {r}"
                    );
                }
                eprintln!(
                    "inconclusive on this host (the I/O threads waited {}% of their time for a CPU)",
                    v.pointer("/cost/measure/run_queue_wait_pct")
                        .unwrap_or(&Value::Null)
                );
                self.expect_code(4)
            }
            other => panic!(
                "the verdict is {other:?}, not PASS (or INCONCLUSIVE on a busy host): {}\n--- stdout\n{}",
                v["verdict"], self.stdout
            ),
        }
    }

    /// Panics unless stderr contains every one of `parts`.
    #[track_caller]
    pub(crate) fn stderr_has(&self, parts: &[&str]) -> &Self {
        has("stderr", &self.stderr, parts);
        self
    }

    /// Panics unless stdout contains every one of `parts`.
    #[track_caller]
    pub(crate) fn stdout_has(&self, parts: &[&str]) -> &Self {
        has("stdout", &self.stdout, parts);
        self
    }
}

#[track_caller]
fn has(name: &str, text: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            text.contains(part),
            "{name} does not contain {part:?}\n--- {name}\n{text}"
        );
    }
}

/// Runs `storlab ARGS` in `dir` to completion.
pub(crate) fn run_in<I, S>(dir: &Path, args: I) -> Outcome
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let output = storlab(dir)
        .args(args)
        .output()
        .expect("start the storlab binary");
    Outcome::from_output(&output)
}

/// A storlab command line, built up flag by flag: `storlab run` ([`RunArgs`]) or `storlab
/// exchange` ([`ExchangeArgs`]). Most tests run the same few flags around the ones they are
/// about; the builder writes those few, and a test's own flags stay in the test, in
/// [`CommandLine::flags`].
#[derive(Clone, Debug)]
pub(crate) struct CommandLine<Kind> {
    args: Vec<OsString>,
    results: Option<PathBuf>,
    kind: PhantomData<Kind>,
}

/// [`CommandLine`] of `storlab run`.
#[derive(Clone, Debug)]
pub(crate) struct Run;

/// [`CommandLine`] of `storlab exchange`.
#[derive(Clone, Debug)]
pub(crate) struct Exchange;

/// A `storlab run` command line: a one-line run on a target ([`RunArgs::target`]) or a job
/// file ([`RunArgs::job`]).
pub(crate) type RunArgs = CommandLine<Run>;

/// A `storlab exchange` command line, from the sizing every Exchange test states
/// ([`ExchangeArgs::sized`]).
pub(crate) type ExchangeArgs = CommandLine<Exchange>;

impl<Kind> CommandLine<Kind> {
    /// `storlab WORDS`.
    fn new(words: &[&OsStr]) -> CommandLine<Kind> {
        CommandLine {
            args: words.iter().map(|w| w.to_os_string()).collect(),
            results: None,
            kind: PhantomData,
        }
    }

    /// More flags, as given: what the test varies.
    pub(crate) fn flags(mut self, flags: &[&str]) -> CommandLine<Kind> {
        self.args.extend(flags.iter().map(OsString::from));
        self
    }

    /// `FLAG PATH`.
    fn path_flag(mut self, flag: &str, path: &Path) -> CommandLine<Kind> {
        self.args.extend([flag.into(), path.into()]);
        self
    }

    /// `-q -o RESULTS`: no live progress (the console summary is still printed), the results
    /// file at `results`, which [`CommandLine::run_ok`] reads back.
    pub(crate) fn results(self, results: &Path) -> CommandLine<Kind> {
        self.flags(&["-q"]).output(results)
    }

    /// `-o RESULTS` with the live progress left on: the console as a user sees it.
    pub(crate) fn output(mut self, results: &Path) -> CommandLine<Kind> {
        self.results = Some(results.to_path_buf());
        self.path_flag("-o", results)
    }

    /// The results file given by [`CommandLine::results`] or [`CommandLine::output`].
    #[track_caller]
    pub(crate) fn results_path(&self) -> &Path {
        self.results
            .as_deref()
            .expect("a command line without a results file")
    }

    /// The whole argument list, from the subcommand on (for a process the test starts itself).
    pub(crate) fn args(&self) -> &[OsString] {
        &self.args
    }

    /// Runs it in `dir` to completion.
    pub(crate) fn run(&self, dir: &Path) -> Outcome {
        run_in(dir, &self.args)
    }

    /// Runs it in `dir`, panics (with the output) unless it exits 0 (for an Exchange run, a
    /// PASS), and returns the results file it wrote.
    #[track_caller]
    pub(crate) fn run_ok(&self, dir: &Path) -> Value {
        self.run(dir).expect_ok();
        load_json(self.results_path())
    }
}

impl CommandLine<Run> {
    /// `run --target TARGET`: a one-line run.
    pub(crate) fn target(target: &Path) -> RunArgs {
        RunArgs::new(&["run".as_ref(), "--target".as_ref(), target.as_os_str()])
    }

    /// `run JOB`: a run of a job file.
    pub(crate) fn job(job: &Path) -> RunArgs {
        RunArgs::new(&["run".as_ref(), job.as_os_str()])
    }

    /// `--size SIZE`: the target's size (a one-line run creates and prepares a file of it).
    pub(crate) fn size(self, size: &str) -> RunArgs {
        self.flags(&["--size", size])
    }
}

/// `storlab users`: small mailboxes (2 MiB, 8 KiB pages, 4 MiB of cache each: a mailbox
/// fits) of Heavy users in `dir`, results in `results`, quiet, judged at the [`LENIENT`]
/// storage limits; `extra` flags last.
pub(crate) fn users_args(dir: &Path, results: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "users",
        "--version",
        "2007",
        "--mailbox-size",
        "2MiB",
        "--cache-per-mailbox",
        "4MiB",
        "--quiet",
        "--db-path",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(dir.display().to_string());
    args.push("-o".into());
    args.push(results.display().to_string());
    // The storage rules at limits no working disk misses: these runs judge the users, and a
    // neighbour's 200 ms hiccup on the shared scratch disk must not fail them.
    args.extend(LENIENT.iter().map(|s| s.to_string()));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Latency limits no working disk misses, for Exchange runs that judge mechanics rather than
/// this disk's latency: the scratch disk is shared with whatever else the machine runs, and a
/// 200 ms hiccup from a neighbour must not decide them.
pub(crate) const LENIENT: [&str; 6] = [
    "--db-read-latency",
    "500ms",
    "--log-write-latency",
    "500ms",
    "--max-latency",
    "5s",
];

impl CommandLine<Exchange> {
    /// `exchange --mailboxes MAILBOXES --mailbox-size MAILBOX_SIZE --capacity CAPACITY
    /// --databases DATABASES`: the load (mailboxes × IOPS per mailbox) and the databases'
    /// size (mailboxes × mailbox size × capacity, split over the databases).
    pub(crate) fn sized(
        mailboxes: u32,
        mailbox_size: &str,
        capacity: &str,
        databases: u32,
    ) -> ExchangeArgs {
        ExchangeArgs::new(&["exchange".as_ref()]).flags(&[
            "--mailboxes",
            &mailboxes.to_string(),
            "--mailbox-size",
            mailbox_size,
            "--capacity",
            capacity,
            "--databases",
            &databases.to_string(),
        ])
    }

    /// `--duration DURATION --ramp 0s`: the measured window opens at time 0, with the
    /// open-loop schedules (so each I/O of the window is due in it).
    pub(crate) fn measure(self, duration: &str) -> ExchangeArgs {
        self.flags(&["--duration", duration, "--ramp", "0s"])
    }

    /// `--db-path DIR`: where the databases go (given again, the next database's directory).
    pub(crate) fn db_path(self, dir: &Path) -> ExchangeArgs {
        self.path_flag("--db-path", dir)
    }

    /// `--log-path DIR`: where the log streams go.
    pub(crate) fn log_path(self, dir: &Path) -> ExchangeArgs {
        self.path_flag("--log-path", dir)
    }

    /// The [`LENIENT`] latency limits.
    pub(crate) fn lenient(self) -> ExchangeArgs {
        self.flags(&LENIENT)
    }
}

/// The job file most tests of run keys use: one 16 MiB target and one worker at queue depth 4
/// doing 4 KiB random I/O, all reads unless told otherwise, under `head` (the run keys and
/// tables such as `[cycle]` that the test is about). The methods change the rest where a test
/// needs it.
#[derive(Clone, Debug)]
pub(crate) struct JobFile {
    head: String,
    target: PathBuf,
    named: bool,
    queue_depth: u32,
    worker_keys: String,
    class: Option<String>,
    read: String,
}

impl JobFile {
    /// The job on `target` under `head`.
    pub(crate) fn on(target: &Path, head: &str) -> JobFile {
        JobFile {
            head: head.to_string(),
            target: target.to_path_buf(),
            named: false,
            queue_depth: 4,
            worker_keys: String::new(),
            class: None,
            read: "100%".to_string(),
        }
    }

    /// Names the target `t`, the worker `w` and the access entry's class `c`.
    pub(crate) fn named(mut self) -> JobFile {
        self.named = true;
        self.class = Some("c".to_string());
        self
    }

    /// The share of reads (`70%`).
    pub(crate) fn read(mut self, share: &str) -> JobFile {
        self.read = share.to_string();
        self
    }

    /// The worker's queue depth.
    pub(crate) fn queue_depth(mut self, queue_depth: u32) -> JobFile {
        self.queue_depth = queue_depth;
        self
    }

    /// The access entry's class.
    pub(crate) fn class(mut self, class: &str) -> JobFile {
        self.class = Some(class.to_string());
        self
    }

    /// More keys of the worker (`rate_iops = 1000`).
    pub(crate) fn worker_keys(mut self, keys: &str) -> JobFile {
        self.worker_keys = keys.to_string();
        self
    }

    /// The job file's text.
    pub(crate) fn text(&self) -> String {
        let mut text = format!("{}\n\n[[target]]\n", self.head);
        if self.named {
            text.push_str("name = \"t\"\n");
        }
        text.push_str(&format!(
            "path = \"{}\"\nsize = \"16MiB\"\n\n[[worker]]\n",
            self.target.display()
        ));
        if self.named {
            text.push_str("name = \"w\"\n");
        }
        text.push_str(&format!("queue_depth = {}\n", self.queue_depth));
        if !self.worker_keys.is_empty() {
            text.push_str(&format!("{}\n", self.worker_keys));
        }
        text.push_str("[[worker.access]]\n");
        if let Some(class) = &self.class {
            text.push_str(&format!("class = \"{class}\"\n"));
        }
        text.push_str(&format!(
            "block_size = \"4k\"\nread = \"{}\"\nrandom = \"100%\"\n",
            self.read
        ));
        text
    }

    /// Writes the job as `dir/name` and returns its path.
    pub(crate) fn write(&self, dir: &Path, name: &str) -> PathBuf {
        write_job(dir, name, &self.text())
    }
}

/// Writes `body` to `dir/name` and returns its path.
#[track_caller]
pub(crate) fn write_job(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// `storlab report RESULTS -o HTML` in `dir`, which must succeed; returns the page. The
/// report is rebuilt from the results file (or time series) alone.
#[track_caller]
pub(crate) fn report_html(dir: &Path, results: &Path, html: &Path) -> String {
    run_in(
        dir,
        [
            OsStr::new("report"),
            results.as_os_str(),
            OsStr::new("-o"),
            html.as_os_str(),
        ],
    )
    .expect_ok();
    std::fs::read_to_string(html).unwrap_or_else(|e| panic!("cannot read {}: {e}", html.display()))
}

/// The machine's CPU pressure over a run's measured phase, as storlab measured it (PSI `some`,
/// % of the time some task waited for a CPU); `None` without PSI. Tests of figures a busy host
/// bends (memory-backed loop devices, a collector that falls behind) judge them by it.
pub(crate) fn cpu_pressure_pct(v: &Value) -> Option<f64> {
    v.pointer("/cost/measure/cpu_pressure_pct")
        .and_then(Value::as_f64)
}

/// A results (or other JSON) file.
#[track_caller]
///
/// A results file (one with `schema_version` and `storlab_version`) is also validated against
/// the JSON Schema `storlab schema` prints, by an independent validator (the `jsonschema`
/// crate): every run of every workload the suite makes is checked against the published schema.
pub(crate) fn load_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    if v.get("schema_version").is_some() && v.get("storlab_version").is_some() {
        if let Some(e) = schema_errors(&v) {
            panic!(
                "{} does not validate against storlab's schema: {e}",
                path.display()
            );
        }
    }
    v
}

/// What the published results schema finds wrong with `v` (`None`: it validates).
pub(crate) fn schema_errors(v: &Value) -> Option<String> {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let schema =
            storlab::results::schema::json_schema(storlab::results::schema::Document::Results);
        jsonschema::validator_for(&schema).expect("the published schema compiles")
    });
    let errors: Vec<String> = validator
        .iter_errors(v)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

/// The value at JSON pointer `pointer` (e.g. `/totals/read/ops`); panics when it is missing.
#[track_caller]
pub(crate) fn at<'a>(v: &'a Value, pointer: &str) -> &'a Value {
    v.pointer(pointer)
        .unwrap_or_else(|| panic!("results have no {pointer}"))
}

/// The unsigned integer at `pointer`.
#[track_caller]
pub(crate) fn u64_at(v: &Value, pointer: &str) -> u64 {
    at(v, pointer)
        .as_u64()
        .unwrap_or_else(|| panic!("{pointer} is not an unsigned integer: {}", at(v, pointer)))
}

/// The number at `pointer`.
#[track_caller]
pub(crate) fn f64_at(v: &Value, pointer: &str) -> f64 {
    at(v, pointer)
        .as_f64()
        .unwrap_or_else(|| panic!("{pointer} is not a number: {}", at(v, pointer)))
}

/// The string at `pointer`.
#[track_caller]
pub(crate) fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    at(v, pointer)
        .as_str()
        .unwrap_or_else(|| panic!("{pointer} is not a string: {}", at(v, pointer)))
}

/// The array at `pointer`.
#[track_caller]
pub(crate) fn array_at<'a>(v: &'a Value, pointer: &str) -> &'a Vec<Value> {
    at(v, pointer)
        .as_array()
        .unwrap_or_else(|| panic!("{pointer} is not an array: {}", at(v, pointer)))
}

/// `a` and `b` differ by at most `fraction` of `b`.
pub(crate) fn close(a: f64, b: f64, fraction: f64) -> bool {
    (a - b).abs() <= b.abs() * fraction
}

/// Checks one direction's summary (`/totals/read`, `/classes/db/write`...): every field is
/// there, the latency percentiles are ordered, and the rates agree with the counts over
/// `measured_ms`.
#[track_caller]
pub(crate) fn check_dir_summary(v: &Value, pointer: &str) {
    let ops = u64_at(v, &format!("{pointer}/ops"));
    u64_at(v, &format!("{pointer}/bytes"));
    assert_eq!(
        u64_at(v, &format!("{pointer}/errors")),
        0,
        "{pointer}: errors"
    );
    let iops = f64_at(v, &format!("{pointer}/iops"));
    f64_at(v, &format!("{pointer}/bytes_per_s"));
    let keys = [
        "min", "mean", "max", "p50", "p90", "p95", "p99", "p99_9", "p99_99",
    ];
    let lat: Vec<f64> = keys
        .iter()
        .map(|k| f64_at(v, &format!("{pointer}/latency_ns/{k}")))
        .collect();
    let measured_s = u64_at(v, "/measured_ms") as f64 / 1000.0;
    if ops > 0 {
        assert!(
            close(iops, ops as f64 / measured_s, 0.02),
            "{pointer}: iops {iops} but {ops} ops in {measured_s} s"
        );
        let (min, mean, max) = (lat[0], lat[1], lat[2]);
        assert!(
            min > 0.0 && min <= mean && mean <= max,
            "{pointer}: latency min/mean/max {lat:?}"
        );
        // p50 <= p90 <= ... <= p99.99 <= max (histogram buckets: allow 1%).
        let mut ordered = lat[3..].to_vec();
        ordered.push(max * 1.01);
        assert!(
            ordered.windows(2).all(|w| w[0] <= w[1]),
            "{pointer}: percentiles out of order {lat:?}"
        );
    }
}

/// A loop device attached to an image file, detached on drop.
pub(crate) struct LoopDevice {
    /// `/dev/loopN`.
    pub path: PathBuf,
}

impl LoopDevice {
    /// `losetup -f --show [--direct-io=on] IMAGE`; without direct I/O when losetup refuses it.
    pub(crate) fn attach(image: &Path, direct_io: bool) -> Result<LoopDevice, String> {
        let attach = |direct: bool| {
            let mut command = Command::new("losetup");
            command.args(["-f", "--show"]);
            if direct {
                command.arg("--direct-io=on");
            }
            command
                .arg(image)
                .output()
                .map_err(|e| format!("cannot run losetup: {e}"))
        };
        let mut output = attach(direct_io)?;
        if direct_io && !output.status.success() {
            output = attach(false)?;
        }
        if !output.status.success() {
            return Err(format!(
                "losetup -f --show {} failed: {}",
                image.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        let path = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        Ok(LoopDevice { path })
    }

    /// Kernel name, e.g. `loop3`.
    pub(crate) fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}

/// Why loop-device tests cannot run here (not root, no loop support, missing tools), or
/// `None` when they can. `tools` are run with `-V` (or `--version`) to check they work.
pub(crate) fn loop_skip_reason(tools: &[&str]) -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("not root: loop devices need CAP_SYS_ADMIN".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control (loop driver missing)".into());
    }
    for tool in std::iter::once(&"losetup").chain(tools) {
        let works = ["-V", "--version"].iter().any(|flag| {
            Command::new(tool)
                .arg(flag)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        if !works {
            return Some(format!("{tool} is not installed or does not run"));
        }
    }
    None
}

/// Creates a sparse image file of `bytes`.
pub(crate) fn sparse_image(path: &Path, bytes: u64) {
    std::fs::File::create(path)
        .and_then(|f| f.set_len(bytes))
        .unwrap_or_else(|e| panic!("cannot create image {}: {e}", path.display()));
}

/// 1 MiB.
pub(crate) const MIB: u64 = 1 << 20;

/// How far the share of reads (or of anything else drawn at random per I/O with probability
/// `p`) may stray from `p` over `n` I/Os: `floor`, or 3.5 standard deviations of that share
/// when `n` is too small for `floor`. The draws are seeded, but how many of them a timed run
/// makes is the machine's: a slow machine makes fewer, and the bound widens only as much as
/// counting statistics demand, never because the machine was slow.
pub(crate) fn share_tolerance(p: f64, n: u64, floor: f64) -> f64 {
    let sd = (p * (1.0 - p) / n.max(1) as f64).sqrt();
    floor.max(3.5 * sd)
}

/// Checks that every open-loop worker of a run (a `rate` in `/job/workers`) accounted for every
/// I/O its schedule intended over the measured time: those it counted, those it never issued
/// (`/workers/N/unissued`: their time came while every slot was busy, or after the window
/// closed before the worker woke) and at most a queue of I/Os still in flight when the window
/// closed add up to the schedule's `ceil(rate × measured time)`, give or take one for rounding.
/// And no worker counted more than its schedule: open loop never runs ahead of it.
///
/// This holds on any machine, however loaded: a slow one leaves more I/Os unissued (and its
/// results say so), it cannot make the sum differ. A pacer that issued at the wrong rate, or
/// counts that lost or doubled I/Os, would. The run must have no ramp (`--ramp 0s`): I/Os
/// intended during a ramp and issued late would count in the window.
#[track_caller]
pub(crate) fn check_open_loop_accounting(v: &Value) {
    assert_eq!(
        u64_at(v, "/job/ramp_ms"),
        0,
        "the accounting needs a run without ramp"
    );
    let seconds = u64_at(v, "/measured_ms") as f64 / 1000.0;
    let specs = array_at(v, "/job/workers");
    let results = array_at(v, "/workers");
    assert_eq!(
        specs.len(),
        results.len(),
        "workers in the job and in the results"
    );
    let mut open = 0;
    for (spec, result) in specs.iter().zip(results) {
        let name = str_at(result, "/name");
        assert_eq!(
            str_at(spec, "/name"),
            name,
            "the job's and the results' workers in order"
        );
        let Some(rate) = spec.pointer("/rate/iops").and_then(Value::as_f64) else {
            continue;
        };
        open += 1;
        let qd = u64_at(spec, "/queue_depth");
        let intended = (rate * seconds).ceil() as u64;
        let counted: u64 = ["read", "write", "flush"]
            .iter()
            .map(|d| u64_at(result, &format!("/totals/{d}/ops")))
            .sum();
        let unissued = u64_at(result, "/unissued");
        let accounted = counted + unissued;
        assert!(
            accounted + qd + 1 >= intended && accounted <= intended + 1,
            "worker {name} at {rate} IOPS for {seconds} s: {intended} I/Os intended, {counted} \
             counted and {unissued} never issued (at most {qd} more can be in flight at the end)"
        );
    }
    assert!(open > 0, "no open-loop worker in the job");
}

/// A test that cannot run here: under CI (`CI=true`) a missing capability is a failure;
/// elsewhere the reason is printed and the test returns early.
pub(crate) fn skip(test: &str, reason: &str) {
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true" && v != "1"),
        "{test}: cannot run under CI: {reason}"
    );
    eprintln!("skipped {test}: {reason}");
    // Counted too: the `skipped` test target prints every skip of this `cargo test` at the
    // end (libtest counts a test that returned early as passed). The full test path comes
    // from libtest's thread name when it has one.
    let thread = std::thread::current();
    let name = thread.name().filter(|n| n.ends_with(test)).unwrap_or(test);
    crate::ledger::record(name, reason);
}

/// The flags every headless Chromium of the tests runs with (a fresh profile is added by each).
pub(crate) const HEADLESS_CHROMIUM: [&str; 7] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];
