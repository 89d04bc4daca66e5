//! What the tests share: a scratch directory on a real disk, running the `storlab` binary and
//! capturing what it printed, reading results files as JSON, and loop devices that are detached
//! when the test ends (even when it fails).

use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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

    /// Panics unless stderr contains every one of `parts`.
    #[track_caller]
    pub(crate) fn stderr_has(&self, parts: &[&str]) -> &Self {
        for part in parts {
            assert!(
                self.stderr.contains(part),
                "stderr does not contain {part:?}\n--- stderr\n{}",
                self.stderr
            );
        }
        self
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
    Outcome {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A results (or other JSON) file.
#[track_caller]
pub(crate) fn load_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
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
