//! The terminal: live progress on stderr (only when it is a terminal) and the final summary on
//! stdout. The only module besides `main` that writes to the terminal.
//!
//! Every number a person reads here carries its unit (or stands under a column that names
//! it), has at most 4 significant digits, and sizes are written one way (`units`). The
//! summary opens with what ran ([`summary::what_ran`]), then the figures, then what to make
//! of them: warnings and the verdict, and what to do next.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use super::tables;
use crate::results::progress::{Observer, RateWatch};
use crate::results::steps::{StepKind, StepResult};
use crate::results::{Phase, RunResult};
use crate::stats::timeseries::{IntervalGrid, IntervalRecord};
use crate::units::{
    format_count, format_known_ns, format_mb_per_s, format_number, format_pct, format_rate,
    format_seconds,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

mod summary;
mod tier;

pub(crate) use summary::{
    description_block, imported_text, labelled, mount_text, named, source_text, summary,
};
#[cfg(test)]
pub(crate) use tier::page_cache as page_cache_line;

/// Live progress on stderr: a byte bar while preparing, one status line while measuring.
/// Silent when stderr is not a terminal.
pub(crate) struct Live {
    bar: Option<ProgressBar>,
    enabled: bool,
    rows: bool,
    steps_printed: usize,
    /// An Exchange validation's achieved-IOPS rule, to show the live transactional rate
    /// beside everything's.
    watch: Option<RateWatch>,
    /// More to show at the end of the live line (a simulated population's tasks).
    extra: Option<Box<dyn Fn() -> String + Send>>,
    /// Another observer told everything this one is (the live view of `--serve`).
    also: Option<Box<dyn Observer>>,
}

impl Live {
    /// Progress if stderr is a terminal and `quiet` is false.
    pub(crate) fn new(quiet: bool) -> Self {
        Self {
            bar: None,
            enabled: !quiet && std::io::stderr().is_terminal(),
            rows: !quiet,
            steps_printed: 0,
            watch: None,
            extra: None,
            also: None,
        }
    }

    /// Tells `other` everything this observer is told.
    pub(crate) fn also(&mut self, other: Box<dyn Observer>) {
        self.also = Some(other);
    }

    /// Appends what `extra` says, at every interval, to the live line.
    pub(crate) fn show_extra(&mut self, extra: Box<dyn Fn() -> String + Send>) {
        self.extra = Some(extra);
    }

    /// How many step rows were printed while the run went.
    pub(crate) fn steps_printed(&self) -> usize {
        self.steps_printed
    }

    fn bar(&mut self, make: impl FnOnce() -> ProgressBar) -> &ProgressBar {
        self.bar.get_or_insert_with(|| {
            let b = make();
            b.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
            b
        })
    }
}

impl Observer for Live {
    /// Shows, in the live line, the rate of `watch`'s classes against its target (an Exchange
    /// validation's transactional I/O, which excludes log and maintenance I/O).
    fn watch(&mut self, watch: &RateWatch) {
        if let Some(o) = &mut self.also {
            o.watch(watch);
        }
        self.watch = Some(watch.clone());
    }

    fn job(&mut self, job: &crate::job::Job) {
        if let Some(o) = &mut self.also {
            o.job(job);
        }
    }

    fn worker_interval(&mut self, worker: usize, index: u64, stats: &crate::stats::StatsSet) {
        if let Some(o) = &mut self.also {
            o.worker_interval(worker, index, stats);
        }
    }

    fn phase(&mut self, phase: Phase) {
        if let Some(o) = &mut self.also {
            o.phase(phase);
        }
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }

    fn prepare(&mut self, target: &str, done: u64, total: u64) {
        if !self.enabled {
            return;
        }
        let target = target.to_string();
        let b = self.bar(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(
                    "prepare {msg} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b
        });
        b.set_length(total);
        b.set_message(crate::units::escape_text(&target).into_owned());
        b.set_position(done);
    }

    fn interval(&mut self, r: &IntervalRecord, grid: &IntervalGrid) {
        if let Some(o) = &mut self.also {
            o.interval(r, grid);
        }
        if !self.enabled {
            return;
        }
        let total_s = (grid.ramp_ns + grid.measure_ns) as f64 / 1e9;
        let transactional = self.watch.as_ref().map_or(String::new(), |w| {
            format!(
                " · {} transactional IOPS of a target of {} (the rest is log and maintenance I/O)",
                format_rate(w.iops_in(r)),
                format_rate(w.target_iops)
            )
        });
        let extra = self.extra.as_ref().map_or(String::new(), |f| f());
        let b = self.bar(|| {
            let b = ProgressBar::new_spinner();
            b.enable_steady_tick(Duration::from_millis(250));
            b
        });
        let t = &r.total;
        let ops = t.read.ops + t.write.ops;
        let mean = if ops > 0 {
            (t.read.latency_mean_ns * t.read.ops as f64
                + t.write.latency_mean_ns * t.write.ops as f64)
                / ops as f64
        } else {
            0.0
        };
        let p99 = t.read.latency_p99_ns.max(t.write.latency_p99_ns);
        let max = t.read.latency_max_ns.max(t.write.latency_max_ns);
        let (mean, p99) = (tables::known_mean(mean, max), tables::known_ns(p99));
        let errors = t.read.errors + t.write.errors + t.flush.errors;
        let extra = crate::units::escape_text(&extra);
        b.set_message(format!(
            "{:<7} {:>5} of {} · {:>6} IOPS · {:>9} · mean {:>8} · p99 {:>8}{}{transactional}{extra}",
            r.phase,
            format_seconds(r.t_end_ms as f64 / 1e3),
            format_seconds(total_s),
            format_rate(t.read.iops + t.write.iops),
            format_mb_per_s(t.read.bytes_per_s + t.write.bytes_per_s),
            format_known_ns(mean),
            format_known_ns(p99),
            if errors > 0 {
                format!(" · {} errors", format_count(errors))
            } else {
                String::new()
            }
        ));
    }

    fn step(&mut self, s: &StepResult) {
        if !self.rows {
            return;
        }
        if let Some(b) = &self.bar {
            b.suspend(|| {});
        }
        let mut out = String::new();
        if self.steps_printed == 0 {
            out.push_str(&step_header());
        }
        out.push_str(&step_line(s));
        write_stdout(&out);
        self.steps_printed += 1;
    }

    fn finish(&mut self) {
        if let Some(o) = &mut self.also {
            o.finish();
        }
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// The header of the steps table.
pub(crate) fn step_header() -> String {
    format!(
        "{:<4} {:<40} {:>10} {:>9} {:>9} {:>9} {:>9} {:>6} {:>8} {}\n     (busy%: the machine's CPUs busy, iowait counted idle; IOPS/%: IOPS per point of it)\n",
        "step", "parameters", "IOPS", "MB/s", "mean", "p99", "max", "busy%", "IOPS/%", "notes"
    )
}

/// One row of the steps table.
pub(crate) fn step_line(s: &StepResult) -> String {
    let t = &s.totals;
    let lat = t.reads_and_writes();
    let mut notes = Vec::new();
    if let Some(level) = s.curve_level_pct.filter(|_| s.kind == StepKind::CurveLevel) {
        notes.push(format!("curve {level}%"));
    }
    if s.kind == StepKind::CurveMax {
        notes.push("curve max (closed loop)".into());
    }
    if let Some(r) = &s.repetitions {
        notes.push(format!(
            "{} runs, ±{} IOPS (95% confidence), CV {}{}",
            r.runs.len(),
            format_rate((r.iops.ci95_high - r.iops.ci95_low) / 2.0),
            format_pct(r.iops.cv_pct),
            if r.high_variation {
                " HIGH VARIATION"
            } else {
                ""
            }
        ));
    }
    if let Some(st) = &s.steady {
        let of = st.metric_note();
        notes.push(match st.steady_at_round {
            Some(n) => format!("steady{of} at round {n}"),
            None => format!("NOT steady{of} after {} rounds", st.rounds_iops.len()),
        });
    }
    for c in &s.cache_tiers {
        notes.push(format!(
            "{} {} read hits, reads {} IOPS at {}",
            c.target,
            format_pct(c.read_hit_pct),
            format_rate(t.read.iops),
            format_known_ns(tables::summary_mean(&t.read.latency_ns))
        ));
    }
    if s.interrupted {
        notes.push("interrupted".into());
    }
    format!(
        "{:<4} {:<40} {:>10} {:>9} {:>9} {:>9} {:>9} {:>6} {:>8} {}\n",
        s.index,
        s.label,
        format_rate(t.iops()),
        format_number(t.bytes_per_s() / 1e6),
        format_known_ns(tables::summary_mean(&lat)),
        format_known_ns(tables::known_ns(lat.p99)),
        format_known_ns(tables::known_ns(lat.max)),
        format_number(s.cpu_busy_pct),
        format_rate(s.ios_per_cpu_pct),
        notes.join("; ")
    )
}

/// Prints the summary on stdout.
pub(crate) fn print_summary(r: &RunResult) {
    print_summary_after(r, 0);
}

/// Prints the summary on stdout, leaving out the first `rows_printed` step rows (already
/// printed as the steps ended).
pub(crate) fn print_summary_after(r: &RunResult, rows_printed: usize) {
    // Rows the run did not print continue its table; after a table printed whole, a blank
    // line.
    let whole = r.steps.as_ref().is_some_and(|s| rows_printed >= s.len());
    if rows_printed > 0 && whole {
        write_stdout("\n");
    }
    write_stdout(&summary(r, rows_printed));
}

/// The steps table of a sequence, leaving out the first `rows_printed` rows (printed as the
/// steps ended, with the table's header).
pub(crate) fn steps_table(r: &RunResult, rows_printed: usize) -> String {
    let mut out = String::new();
    if let Some(steps) = r.steps.as_ref().filter(|s| rows_printed < s.len()) {
        if rows_printed == 0 {
            out.push_str(&step_header());
        }
        for s in &steps[rows_printed..] {
            out.push_str(&step_line(s));
        }
        out.push('\n');
    }
    out
}

/// Prints a note on stderr (paths of written files, fallbacks), control characters written
/// as text.
pub(crate) fn note(text: &str) {
    eprintln!("{}", crate::units::escape_lines(text));
}

/// Prints text for people on stdout (dry-run listings, tables, a converted job), a line
/// break after it.
pub(crate) fn print_text(text: &str) {
    write_stdout(&format!("{text}\n"));
}

/// Prints JSON on stdout, a line break after it: what JSON may hold raw that a terminal
/// would act on (DEL, C1 controls, bidirectional marks) written as `\u` escapes, the same
/// JSON.
pub(crate) fn print_json(json: &str) {
    write_raw(&format!("{}\n", crate::units::escape_json(json)));
}

/// Prints a results file's JSON (`--json`) as [`print_json`] does, written out as it is made:
/// a series read from its file is streamed, never held whole. A closed pipe is not an error.
pub(crate) fn print_results_json(r: &RunResult) {
    use std::io::Write;
    let mut out = Escaped {
        out: std::io::BufWriter::new(std::io::stdout().lock()),
        pending: Vec::new(),
    };
    let _ = serde_json::to_writer_pretty(&mut out, r)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
}

/// JSON written through [`crate::units::escape_json`] as it comes (a character cut between
/// two writes waits for its end).
struct Escaped<W> {
    out: W,
    pending: Vec<u8>,
}

impl<W: std::io::Write> std::io::Write for Escaped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&self.pending[..e.valid_up_to()]).unwrap_or_default(),
        };
        let n = whole.len();
        self.out
            .write_all(crate::units::escape_json(whole).as_bytes())?;
        self.pending.drain(..n);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Prints what storlab made from its own definitions (completion scripts, man pages) as it
/// is, a line break after it.
pub(crate) fn print_raw(text: &str) {
    write_raw(&format!("{text}\n"));
}

/// Writes text for people to stdout: every control character of a name in it written as
/// text (`crate::units::escape_lines`), the line breaks kept.
fn write_stdout(text: &str) {
    write_raw(&crate::units::escape_lines(text));
}

/// Writes to stdout; a closed pipe (`storlab ... | head`) is not an error.
fn write_raw(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A run of class `c` with 100 reads whose latency is `latency` (JSON), on the file `t` on
    /// `vda` (4 KiB reads, O_DIRECT), which counted `device_reads` of 4 KiB.
    fn run(latency: serde_json::Value, device_reads: u64) -> RunResult {
        let dir = |ops: u64, latency: &serde_json::Value| {
            json!({"ops": ops, "bytes": ops * 4096, "errors": 0, "iops": ops as f64 / 2.0,
                   "bytes_per_s": ops as f64 * 2048.0, "latency_ns": latency})
        };
        let none = json!({"min": 0, "mean": 0.0, "max": 0, "stddev": 0.0, "p50": 0,
                          "p90": 0, "p95": 0, "p99": 0, "p99_9": 0, "p99_99": 0});
        let class = json!({"read": dir(100, &latency), "write": dir(0, &none),
                           "flush": dir(0, &none)});
        let mut v = crate::results::sample_json("io_uring", &["c"]);
        v["totals"] = class.clone();
        let mut c = class;
        c["write_durability"] = json!("none");
        v["classes"] = json!({ "c": c });
        v["targets"] = json!([{
            "name": "t", "path": "/mnt/t", "kind": "file", "size_bytes": 1 << 30,
            "logical_block_size_bytes": 512, "direct": true, "dsync": false,
            "filesystem": "ext4", "mount_point": "/mnt", "mount_options": "rw",
            "device": "vda", "device_model": null,
            "prepare": {"reused": true, "written_bytes": 0, "seconds": 0.0, "mb_per_s": 0.0,
                        "data_seed": null},
            "ops": {"read": 100, "write": 0, "flush": 0},
            "bytes": {"read": 100 * 4096, "write": 0, "flush": 0},
            "errors": {"read": 0, "write": 0, "flush": 0}
        }]);
        v["devices"] = json!([{"name": "vda", "model": null, "delta": {
            "reads": device_reads, "writes": 0, "read_bytes": device_reads * 4096,
            "write_bytes": 0, "flushes": 0, "busy_ms": 1000, "util_pct": 50.0,
            "read_await_ms": 0.1, "write_await_ms": 0.0}}]);
        serde_json::from_value(v).expect("a valid results file")
    }

    /// The class table's row of `c` reads, split into cells.
    fn read_row(text: &str) -> Vec<String> {
        let row = text
            .lines()
            .find(|l| l.starts_with("c "))
            .expect("a row of c");
        let cells: Vec<&str> = row.split_whitespace().collect();
        // Figures with their units (`2.50 µs`) are two words.
        let mut out = Vec::new();
        let mut i = 2;
        while i < cells.len() {
            match cells.get(i + 1) {
                Some(&u) if ["ns", "µs", "ms", "s"].contains(&u) => {
                    out.push(format!("{} {u}", cells[i]));
                    i += 2;
                }
                _ => {
                    out.push(cells[i].to_string());
                    i += 1;
                }
            }
        }
        out
    }

    #[test]
    fn unknown_latencies_show_as_unknown_never_zero() {
        // A run rebuilt from its time series: mean, p99 (a bound) and max known.
        let rebuilt = json!({"min": 0, "mean": 2500.0, "max": 90000, "stddev": 0.0,
                             "p50": 0, "p90": 0, "p95": 0, "p99": 8000, "p99_9": 0,
                             "p99_99": 0});
        let text = summary(&run(rebuilt, 100), 0);
        assert_eq!(
            read_row(&text),
            [
                "50", "0.20", "2.50 µs", "—", "—", "8.00 µs", "—", "90.0 µs", "0"
            ],
            "{text}"
        );
        assert!(!text.contains("0 ns"), "{text}");
        // I/O whose latency was never timed (a trace imported without times).
        let untimed = json!({"min": 0, "mean": 0.0, "max": 0, "stddev": 0.0, "p50": 0,
                             "p90": 0, "p95": 0, "p99": 0, "p99_9": 0, "p99_99": 0});
        let text = summary(&run(untimed, 100), 0);
        assert_eq!(
            read_row(&text),
            ["50", "0.20", "—", "—", "—", "—", "—", "—", "0"],
            "{text}"
        );
    }

    #[test]
    fn the_device_line_says_when_the_device_did_more_than_storlab() {
        let latency = json!({"min": 900, "mean": 2500.0, "max": 90000, "stddev": 1.0,
                             "p50": 2000, "p90": 3000, "p95": 4000, "p99": 8000,
                             "p99_9": 9000, "p99_99": 10000});
        let agreeing = summary(&run(latency.clone(), 100), 0);
        let device = |text: &str| -> Vec<String> {
            let lines: Vec<&str> = text.lines().collect();
            let at = lines.iter().position(|l| l.starts_with("device ")).unwrap();
            let mut out = vec![lines[at].to_string()];
            out.extend(
                lines[at + 1..]
                    .iter()
                    .take_while(|l| l.starts_with(' '))
                    .map(|l| l.trim().to_string()),
            );
            out
        };
        assert_eq!(device(&agreeing).len(), 1, "{agreeing}");
        let busy = summary(&run(latency, 30_000), 0);
        let lines = device(&busy);
        assert_eq!(lines.len(), 2, "{busy}");
        assert!(lines[0].starts_with("device     vda: 50% busy · 15k reads/s"));
        assert_eq!(
            lines[1],
            "vda did 15k reads/s (61.4 MB/s), storlab 50/s (0.20 MB/s): another process was reading from the device (or the filesystem read its metadata, or read ahead); the device's figures are not storlab's alone"
        );
    }
}
