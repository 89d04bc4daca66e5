//! The terminal: live progress on stderr (only when it is a terminal) and the final summary
//! table on stdout. The only module besides `main` that writes to the terminal.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use crate::results::progress::Observer;
use crate::results::steps::{StepKind, StepResult};
use crate::results::{Phase, RunResult};
use crate::stats::summary::DirSummary;
use crate::stats::timeseries::{IntervalGrid, IntervalRecord};
use crate::units::{format_ns, format_rate};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::time::Duration;

/// Live progress on stderr: a byte bar while preparing, one status line while measuring.
/// Silent when stderr is not a terminal.
pub(crate) struct Live {
    bar: Option<ProgressBar>,
    enabled: bool,
    rows: bool,
    steps_printed: usize,
}

impl Live {
    /// Progress if stderr is a terminal and `quiet` is false.
    pub(crate) fn new(quiet: bool) -> Self {
        Self {
            bar: None,
            enabled: !quiet && std::io::stderr().is_terminal(),
            rows: !quiet,
            steps_printed: 0,
        }
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
    fn phase(&mut self, _phase: Phase) {
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
        b.set_message(target);
        b.set_position(done);
    }

    fn interval(&mut self, r: &IntervalRecord, grid: &IntervalGrid) {
        if !self.enabled {
            return;
        }
        let total_s = (grid.ramp_ns + grid.measure_ns) as f64 / 1e9;
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
        b.set_message(format!(
            "{:<7} {:>5.0}s elapsed {:>5.0}s left  IOPS {:>8}  MB/s {:>8.1}  mean {:>8}  p99 {:>8}{}",
            r.phase,
            r.t_end_ms as f64 / 1e3,
            (total_s - r.t_end_ms as f64 / 1e3).max(0.0),
            format_rate(t.read.iops + t.write.iops),
            (t.read.bytes_per_s + t.write.bytes_per_s) / 1e6,
            format_ns(mean),
            format_ns(p99 as f64),
            if t.read.errors + t.write.errors > 0 {
                format!("  errors {}", t.read.errors + t.write.errors)
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
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// The header of the steps table.
pub(crate) fn step_header() -> String {
    format!(
        "{:<4} {:<40} {:>10} {:>9} {:>9} {:>9} {:>9} {:>6} {:>8} {}\n",
        "step", "parameters", "IOPS", "MB/s", "mean", "p99", "max", "CPU%", "IO/CPU%", "notes"
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
            "{} runs, IOPS ±{} (95% CI), CV {:.1}%{}",
            r.runs.len(),
            format_rate((r.iops.ci95_high - r.iops.ci95_low) / 2.0),
            r.iops.cv_pct,
            if r.high_variation {
                " HIGH VARIATION"
            } else {
                ""
            }
        ));
    }
    if let Some(st) = &s.steady {
        notes.push(match st.steady_at_round {
            Some(n) => format!("steady at round {n}"),
            None => format!("NOT steady after {} rounds", st.rounds_iops.len()),
        });
    }
    if s.interrupted {
        notes.push("interrupted".into());
    }
    format!(
        "{:<4} {:<40} {:>10} {:>9.2} {:>9} {:>9} {:>9} {:>6.1} {:>8.0} {}\n",
        s.index,
        s.label,
        format_rate(t.iops()),
        t.bytes_per_s() / 1e6,
        format_ns(lat.mean),
        format_ns(lat.p99 as f64),
        format_ns(lat.max as f64),
        s.cpu_busy_pct,
        s.ios_per_cpu_pct,
        notes.join("; ")
    )
}

/// Widths of the class table's columns: class, op, then [`super::tables::DIR_COLUMNS`].
const WIDTHS: [usize; 11] = [16, 5, 10, 10, 9, 9, 9, 9, 9, 9, 7];

/// A line of the class table, left-aligned names then right-aligned figures.
fn line(cells: &[&str]) -> String {
    cells
        .iter()
        .zip(WIDTHS)
        .enumerate()
        .map(|(i, (c, w))| {
            if i < 2 {
                format!("{c:<w$}")
            } else {
                format!("{c:>w$}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn row(out: &mut String, class: &str, dir: &str, d: &DirSummary) {
    let cells = super::tables::dir_cells(d);
    let mut all = vec![class, dir];
    all.extend(cells.iter().map(String::as_str));
    let _ = writeln!(out, "{}", line(&all));
}

/// The final summary as text: per class and direction, totals, host CPU, devices, warnings.
pub(crate) fn summary(r: &RunResult) -> String {
    let mut out = String::new();
    let secs = r.measured_ms as f64 / 1e3;
    let _ = writeln!(
        out,
        "storlab {} · engine {} · {} · measured {:.1}s{}",
        r.storlab_version,
        r.engine.name,
        match &r.steps {
            Some(s) => format!("{} step(s)", s.len()),
            None => format!("{} worker(s)", r.job.workers.len()),
        },
        secs,
        match r.interrupted.reason() {
            None => String::new(),
            Some(why) => format!(" · INTERRUPTED: {why}"),
        }
    );
    let open = r.job.workers.iter().any(|w| w.rate.is_some())
        || r.steps
            .iter()
            .flatten()
            .any(|s| s.kind == StepKind::CurveLevel);
    let _ = writeln!(
        out,
        "latency: {} · MB/s = 10^6 bytes/s\n",
        if open {
            "response time from the intended issue time (open loop)"
        } else {
            "from submission to completion"
        }
    );
    let mut head = vec!["class", "op"];
    head.extend(super::tables::DIR_COLUMNS);
    let _ = writeln!(out, "{}", line(&head));
    for (name, c) in &r.classes {
        for (dir, d) in c.summary().dirs().into_iter().filter(|(_, d)| d.ops > 0) {
            row(&mut out, name, dir.name(), d);
        }
    }
    if r.classes.len() > 1 {
        for (dir, d) in r.totals.dirs().into_iter().filter(|(_, d)| d.ops > 0) {
            row(&mut out, "(all)", dir.name(), d);
        }
    }
    let c = &r.host_cpu;
    let _ = writeln!(
        out,
        "\nCPU: storlab {:.1}% user {:.1}% sys (of one CPU) · machine {:.1}% user {:.1}% sys {:.1}% iowait {:.1}% idle",
        c.process_user_pct,
        c.process_system_pct,
        c.system_user_pct,
        c.system_system_pct,
        c.system_iowait_pct,
        c.system_idle_pct
    );
    for d in &r.devices {
        let s = r.measured_ms.max(1) as f64 / 1e3;
        let _ = writeln!(
            out,
            "device {}{}: {:.1}% busy · {} reads/s {} writes/s · {:.2} MB/s read {:.2} MB/s written",
            d.name,
            d.model
                .as_ref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default(),
            d.delta.util_pct,
            format_rate(d.delta.reads as f64 / s),
            format_rate(d.delta.writes as f64 / s),
            d.delta.read_bytes as f64 / s / 1e6,
            d.delta.write_bytes as f64 / s / 1e6,
        );
    }
    if let Some(p) = &r.precondition {
        let _ = writeln!(
            out,
            "precondition: {} {} pass(es) of {} writes: {} written in {:.1}s ({:.1} MB/s){}",
            p.passes,
            p.pattern,
            crate::units::format_size(p.block_size_bytes),
            crate::units::format_size_approx(p.bytes_written),
            p.seconds,
            p.mb_per_s,
            if p.complete { "" } else { " INCOMPLETE" }
        );
    }
    for e in r.errors.iter().take(5) {
        let _ = writeln!(
            out,
            "error: target {} {} at offset {} ({} bytes): {}",
            r.targets
                .get(e.target)
                .map(|t| t.name.as_str())
                .unwrap_or("?"),
            e.op,
            e.offset,
            e.len,
            e.error
        );
    }
    if let Some(v) = &r.verify {
        let _ = writeln!(
            out,
            "verify: {} blocks of {} checked ({} unchecked) · corrupted {} · misdirected {} · lost {} · torn {}{}",
            v.blocks_checked,
            crate::units::format_size(v.block_bytes),
            v.blocks_unchecked,
            v.corrupted,
            v.misdirected,
            v.lost,
            v.torn,
            v.read_back.as_ref().map_or(String::new(), |b| format!(
                " · read-back {} ({} blocks, {:.1}s)",
                b.state, b.blocks_checked, b.seconds
            ))
        );
        for e in v.first_errors.iter().take(5) {
            let _ = writeln!(
                out,
                "verify error: {} block at offset {} of target {} ({}): expected {}; {}",
                e.kind.name(),
                e.offset,
                r.targets
                    .get(e.target)
                    .map(|t| t.name.as_str())
                    .unwrap_or("?"),
                e.phase,
                e.expected,
                e.found
            );
        }
    }
    if let Some(x) = &r.exchange {
        exchange_section(&mut out, r, x);
    }
    if let Some(v) = &r.verdict {
        let _ = writeln!(out, "\nverdict:");
        for rule in &v.rules {
            let _ = writeln!(
                out,
                "  {:<4} {:<70} measured {:>10.3} {} (limit {} {:.3})",
                if rule.pass { "ok" } else { "FAIL" },
                rule.rule,
                rule.measured,
                rule.unit,
                match rule.comparison {
                    crate::results::verdict::Comparison::AtMost => "≤",
                    crate::results::verdict::Comparison::AtLeast => "≥",
                },
                rule.threshold
            );
        }
        let _ = writeln!(out, "RESULT: {}", v.result);
    }

    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

fn exchange_section(out: &mut String, r: &RunResult, x: &crate::results::exchange::ExchangeResult) {
    let _ = writeln!(
        out,
        "\nExchange {} {} test · {} mailboxes · {} IOPS/mailbox ({}) · headroom {}%",
        x.version, x.test, x.mailboxes, x.iops_per_mailbox, x.iops_source, x.headroom_pct
    );
    let _ = writeln!(
        out,
        "target {:.1} transactional IOPS · achieved {:.1} · {} database(s) of {} (page {}){} · {} thread(s) per database · maintenance {}",
        x.target_iops,
        x.achieved_iops,
        x.database_count,
        crate::units::format_size_approx(x.database_size_bytes),
        crate::units::format_size(x.page_size_bytes),
        if x.capacity_fraction < 1.0 {
            format!(" built at {}% of real size", x.capacity_fraction * 100.0)
        } else {
            String::new()
        },
        x.threads_per_database,
        if x.maintenance { "on" } else { "off" }
    );
    let _ = writeln!(
        out,
        "initialisation: {:.1}s{}",
        x.initialisation.seconds,
        if x.initialisation.reused {
            " (reused from an earlier run)".to_string()
        } else {
            format!(
                ", {} written",
                crate::units::format_size_approx(x.initialisation.written_bytes)
            )
        }
    );
    let widths = [5, 9, 9, 9, 9, 9, 9, 12, 9, 9, 16, 7];
    let line = |cells: &[&str]| {
        cells
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(out, "\n{}", line(&super::tables::DATABASE_COLUMNS));
    for d in &x.databases {
        let cells = super::tables::database_cells(d);
        let _ = writeln!(
            out,
            "{}",
            line(&cells.iter().map(String::as_str).collect::<Vec<_>>())
        );
    }
    if let Some(b) = &x.backup {
        let _ = writeln!(
            out,
            "backup: {:.1} MB/s in total ({}), full backup {:.1}s{}",
            b.mb_per_s_total,
            b.mb_per_s_per_database
                .iter()
                .map(|v| format!("{v:.1}"))
                .collect::<Vec<_>>()
                .join(" / "),
            b.full_backup_seconds,
            if b.complete {
                ""
            } else {
                " (estimated: not every database was read within the duration)"
            }
        );
    }
    if let Some(rc) = &x.recovery {
        let _ = writeln!(
            out,
            "recovery: {} log files per database in {:.1}s: {:.3}s per log file",
            rc.log_files, rc.seconds, rc.seconds_per_log_file
        );
    }
    for (title, trials) in [
        ("thread tuning", Some(&x.thread_trials)),
        ("maximum-mailboxes search", r.trials.as_ref()),
    ] {
        let Some(trials) = trials.filter(|t| !t.is_empty()) else {
            continue;
        };
        let _ = writeln!(out, "\n{title}:");
        let _ = writeln!(
            out,
            "  {:<8} {:>9} {:>7} {:>10} {:>10} {:>9} {:>9} {:>9} result",
            "trial",
            "mailboxes",
            "threads",
            "target",
            "achieved",
            "read avg",
            "log avg",
            "read max",
        );
        for t in trials {
            let _ = writeln!(
                out,
                "  {:<8} {:>9} {:>7} {:>10.1} {:>10.1} {:>7.2}ms {:>7.2}ms {:>7.1}ms {}",
                t.purpose,
                t.mailboxes,
                t.threads,
                t.target_iops,
                t.achieved_iops,
                t.db_read_latency_ms,
                t.log_write_latency_ms,
                t.max_read_latency_ms,
                if t.pass {
                    "pass".to_string()
                } else {
                    format!("FAIL ({})", t.failed_rules.join("; "))
                }
            );
        }
    }
    if let Some(m) = r.max_mailboxes {
        let _ = writeln!(out, "\nmaximum mailboxes that pass: {m}");
    }
}

/// Prints the summary on stdout.
pub(crate) fn print_summary(r: &RunResult) {
    print_summary_after(r, 0);
}

/// Prints the summary on stdout, leaving out the first `rows_printed` step rows (already
/// printed as the steps ended).
pub(crate) fn print_summary_after(r: &RunResult, rows_printed: usize) {
    let mut out = String::new();
    if let Some(steps) = &r.steps {
        if rows_printed < steps.len() {
            if rows_printed == 0 {
                out.push_str(&step_header());
            }
            for s in &steps[rows_printed..] {
                out.push_str(&step_line(s));
            }
        }
        out.push('\n');
    }
    out.push_str(&summary(r));
    write_stdout(&out);
}

/// Prints a note on stderr (paths of written files, fallbacks).
pub(crate) fn note(text: &str) {
    eprintln!("{text}");
}

/// Prints text on stdout as it is (JSON, dry-run listings).
pub(crate) fn print_text(text: &str) {
    write_stdout(&format!("{text}\n"));
}

/// Writes to stdout; a closed pipe (`storlab ... | head`) is not an error.
fn write_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
