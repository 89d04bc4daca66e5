//! The summary of a results file as text, in the order a reader needs it: what ran, the
//! figures (per class, then the host and the devices), errors and verification, then what to
//! make of them (warnings, the verdict) and what to do next.

use crate::results::description::Description;
use crate::results::steps::StepKind;
use crate::results::verdict::{Comparison, Rule};
use crate::results::{JobSource, RunResult, TargetResult};
use crate::stats::summary::DirSummary;
use crate::stats::target::TargetKind;
use crate::units::{
    format_count, format_mb_per_s, format_pct, format_rate, format_seconds, format_size,
    format_size_exact,
};
use std::fmt::Write as _;

/// Width of the labels of the "what ran" block and of the lines after the table.
const LABEL: usize = 11;

/// A labelled line: `label      text`.
pub(crate) fn labelled(out: &mut String, label: &str, text: &str) {
    let _ = writeln!(out, "{label:<LABEL$}{text}");
}

/// The final summary; a sequence's steps table leaves out the first `rows_printed` rows
/// (printed as the steps ended).
pub(crate) fn summary(r: &RunResult, rows_printed: usize) -> String {
    // The steps table first, where a run prints it as its steps end (the rows not printed
    // then continue it), then the summary of the whole: `storlab report` reads as the run did.
    let mut out = super::steps_table(r, rows_printed);
    let what = match (&r.invocation.source, &r.exchange) {
        (JobSource::Unknown, Some(_)) => "Exchange validation".to_string(),
        (JobSource::Unknown, None) => "a run (what started it is not recorded)".to_string(),
        (source, _) => source_text(source),
    };
    let _ = writeln!(
        out,
        "storlab {} · {what}{}",
        r.storlab_version,
        match r.interrupted.reason() {
            None => String::new(),
            Some(why) => format!(" · INTERRUPTED: {why}"),
        }
    );
    out.push_str(&what_ran(r));
    out.push('\n');
    class_table(&mut out, r);
    out.push('\n');
    host(&mut out, r);
    hosts(&mut out, r);
    precondition(&mut out, r);
    io_errors(&mut out, r);
    verification(&mut out, r);
    crate::report::data::console(&mut out, r);
    locality(&mut out, r);
    super::tier::section(&mut out, &r.cache_tiers);
    if let Some(p) = &r.page_cache {
        super::tier::page_cache(&mut out, p);
    }
    for v in crate::report::view::installed() {
        v.console(r, &mut out);
    }
    if !r.warnings.is_empty() {
        out.push('\n');
        for w in &r.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
    }
    verdict(&mut out, r);
    next_steps(&mut out, r);
    out
}

/// Where the job came from, as people say it.
pub(crate) fn source_text(source: &JobSource) -> String {
    match source {
        JobSource::Default { file } => format!("default job ({file})"),
        JobSource::File { path } => format!("job file {path}"),
        JobSource::Preset { name } => format!("preset {name}"),
        JobSource::Imported { format, from } => imported_text(format, from),
        JobSource::Flags => "job from the command line".into(),
        JobSource::Exchange { path: Some(p) } => format!("Exchange validation, job file {p}"),
        JobSource::Exchange { path: None } => "Exchange validation".into(),
        JobSource::Users { path: Some(p) } => format!("simulated users, job file {p}"),
        JobSource::Users { path: None } => "simulated users".into(),
        JobSource::Database { path: Some(p) } => format!("database validation, job file {p}"),
        JobSource::Database { path: None } => "database validation".into(),
        JobSource::Calibrate { path: Some(p) } => format!("calibration, job file {p}"),
        JobSource::Calibrate { path: None } => "calibration".into(),
        JobSource::Etcd { path: Some(p) } => format!("etcd disk check, job file {p}"),
        JobSource::Etcd { path: None } => "etcd disk check".into(),
        JobSource::WalSync { path: Some(p) } => format!("WAL sync methods compared, job file {p}"),
        JobSource::WalSync { path: None } => "WAL sync methods compared".into(),
        JobSource::Fs { path: Some(p) } => format!("file-system workload, job file {p}"),
        JobSource::Fs { path: None } => "file-system workload".into(),
        JobSource::Unknown => "results".into(),
    }
}

/// A converted job's source: `Iometer file test.icf`, `DiskSpd command line -b8K -d1 ...`.
pub(crate) fn imported_text(format: &str, from: &str) -> String {
    let tool = crate::results::imported_tool(format);
    if format == "diskspd" && !from.to_ascii_lowercase().ends_with(".xml") {
        format!("{tool} command line {from}")
    } else {
        format!("{tool} file {from}")
    }
}

/// The "what ran" block: the run's description (for a file written before descriptions were
/// kept, the job's) with its targets as they were used.
pub(crate) fn what_ran(r: &RunResult) -> String {
    if r.job.workers.is_empty() && r.description.is_none() {
        // Rebuilt from a time series: the job is not known.
        let mut out = String::new();
        let what = r
            .job
            .description
            .as_deref()
            .unwrap_or("the job is not known");
        labelled(&mut out, "job", what);
        return out;
    }
    let targets: Vec<String> = r.targets.iter().map(target_line).collect();
    match &r.description {
        Some(d) => description_block(d, &targets),
        None => description_block(&Description::of_job(&r.job), &targets),
    }
}

/// One target as it was used: `name = path: 1 GiB file on / (ext4 on /dev/vda), O_DIRECT`.
fn target_line(t: &TargetResult) -> String {
    let kind = match t.kind {
        TargetKind::File => "file",
        TargetKind::BlockDevice => "block device",
        TargetKind::Model => "stand-in (null engine, no file)",
    };
    let mut line = format!(
        "{}: {} {kind}{}",
        named(&t.name, &t.path),
        format_size(t.size_bytes),
        mount_text(t.mount_point.as_deref(), &t.filesystem, t.device.as_deref())
    );
    line.push_str(if t.direct { ", O_DIRECT" } else { ", buffered" });
    if t.dsync {
        line.push_str(", O_DSYNC");
    }
    line
}

/// A target as `name = path`, or its path alone when that is its name.
pub(crate) fn named(name: &str, path: &str) -> String {
    if name == path {
        path.to_string()
    } else {
        format!("{name} = {path}")
    }
}

/// ` on /mnt (ext4 on /dev/sdb)`: where a target lives, as far as it is known.
pub(crate) fn mount_text(mount: Option<&str>, filesystem: &str, device: Option<&str>) -> String {
    match (mount, device) {
        (Some(m), Some(d)) => format!(" on {m} ({filesystem} on /dev/{d})"),
        (Some(m), None) => format!(" on {m} ({filesystem})"),
        (None, Some(d)) => format!(" (/dev/{d})"),
        (None, None) => String::new(),
    }
}

/// A run's description with its `targets` lines (as used, or as a dry run foresees them)
/// between its head and its body: the "what ran" block and the dry run.
pub(crate) fn description_block(d: &Description, targets: &[String]) -> String {
    let mut out = String::new();
    for l in &d.head {
        labelled(&mut out, &l.label, &l.text);
    }
    for (i, t) in targets.iter().enumerate() {
        labelled(&mut out, if i == 0 { "targets" } else { "" }, t);
    }
    for l in &d.body {
        labelled(&mut out, &l.label, &l.text);
    }
    out
}

/// Widths of the class table's columns: class, op, then [`super::super::tables::DIR_COLUMNS`].
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
        .trim_end()
        .to_string()
}

fn row(out: &mut String, class: &str, dir: &str, d: &DirSummary) {
    let cells = super::super::tables::dir_cells(d);
    let mut all = vec![class, dir];
    all.extend(cells.iter().map(String::as_str));
    let _ = writeln!(out, "{}", line(&all));
}

/// Per class and direction (then every class together), with what latency means here.
fn class_table(out: &mut String, r: &RunResult) {
    let open = (r.job.workers.iter())
        .any(|w| w.rate.is_some() || w.trace.as_ref().is_some_and(|t| t.speed.is_some()))
        || r.steps
            .iter()
            .flatten()
            .any(|s| s.kind == StepKind::CurveLevel);
    let spans = crate::report::tables::class_spans(r);
    let _ = writeln!(
        out,
        "{} · latency {} · MB/s = 10^6 bytes/s",
        match &spans {
            Some(_) => format!(
                "across the {} measured of every step · each class over the steps it ran in",
                format_seconds(r.measured_ms as f64 / 1e3)
            ),
            None => format!("{} measured", format_seconds(r.measured_ms as f64 / 1e3)),
        },
        if open {
            "from each I/O's intended start (open loop: response time)"
        } else {
            "from submission to completion"
        }
    );
    let mut head = vec!["class", "op"];
    head.extend(super::super::tables::DIR_COLUMNS);
    let _ = writeln!(out, "{}", line(&head));
    for (name, c) in &r.classes {
        for (dir, d) in c.summary().dirs().into_iter().filter(|(_, d)| d.ops > 0) {
            row(out, name, dir.name(), d);
        }
    }
    if r.classes.len() > 1 {
        for (dir, d) in r.totals.dirs().into_iter().filter(|(_, d)| d.ops > 0) {
            row(out, "(all)", dir.name(), d);
        }
    }
    if let Some(spans) = spans {
        let _ = writeln!(out, "spans      {}", spans.join(" · "));
    }
}

/// storlab's CPU, the machine's (busy and idle, iowait explained), and each device's own
/// counters.
fn host(out: &mut String, r: &RunResult) {
    labelled(out, "host", &crate::report::tables::cpu_sentence(r));
    if let Some(c) = &r.cost {
        labelled(out, "cost", &crate::report::cost::sentence(c));
        if let Some(spin) = crate::report::cost::spinning(c) {
            labelled(out, "", &spin);
        }
    }
    // The io_uring paths, when the job asked for one or one was not used.
    if let Some(p) = &r.engine.io_uring {
        if !p.not_used.is_empty() || r.job.io_uring != Default::default() {
            labelled(out, "io_uring", &p.line());
        }
    }
    let s = r.measured_ms.max(1) as f64 / 1e3;
    for d in &r.devices {
        labelled(
            out,
            "device",
            &format!(
                "{}{}: {} busy · {} reads/s, {} writes/s · {} read, {} written",
                d.name,
                d.model
                    .as_ref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default(),
                format_pct(d.delta.util_pct),
                format_rate(d.delta.reads as f64 / s),
                format_rate(d.delta.writes as f64 / s),
                format_mb_per_s(d.delta.read_bytes as f64 / s),
                format_mb_per_s(d.delta.write_bytes as f64 / s),
            ),
        );
        // Where the device's own counters and storlab's differ, what that means.
        for note in crate::report::tables::device_notes(r, d) {
            labelled(out, "", &note.text);
        }
    }
}

fn precondition(out: &mut String, r: &RunResult) {
    let Some(p) = &r.precondition else {
        return;
    };
    labelled(
        out,
        "precondition",
        &format!(
            " {} {} pass(es) of {} writes: {} written in {} ({}){}",
            p.passes,
            p.pattern,
            format_size(p.block_size_bytes),
            format_size(p.bytes_written),
            format_seconds(p.seconds),
            format_mb_per_s(p.mb_per_s * 1e6),
            if p.complete { "" } else { ", INCOMPLETE" }
        ),
    );
}

/// The first failed I/Os.
fn io_errors(out: &mut String, r: &RunResult) {
    for e in r.errors.iter().take(5) {
        labelled(
            out,
            "I/O error",
            &format!(
                "{} of {} at offset {} of target {}: {}",
                e.op,
                format_size_exact(u64::from(e.len)),
                e.offset,
                r.targets
                    .get(e.target)
                    .map(|t| t.name.as_str())
                    .unwrap_or("?"),
                e.error
            ),
        );
    }
}

/// A run over many hosts: one line per rank (the class table above is every rank's, merged).
fn hosts(out: &mut String, r: &RunResult) {
    use crate::report::tables::{HOST_COLUMNS, host_cells};
    if r.hosts.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "hosts      {} ranks; the figures above are all of them, merged (histograms added)",
        r.hosts.len()
    );
    let widths = [5, 16, 10, 10, 10, 10, 8];
    let line = |cells: &[String]| {
        let mut l = String::from("          ");
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            if i == 1 {
                let _ = write!(l, " {c:<w$}");
            } else {
                let _ = write!(l, " {c:>w$}");
            }
        }
        let _ = write!(l, "  {}", cells[7]);
        l
    };
    let _ = writeln!(out, "{}", line(&HOST_COLUMNS.map(String::from)));
    for h in &r.hosts {
        let _ = writeln!(out, "{}", line(&host_cells(h)));
    }
}

/// The run's locality: its footprint, re-references and hot sets.
fn locality(out: &mut String, r: &RunResult) {
    let Some(u) = &r.reuse else { return };
    if u.sampled == 0 {
        return;
    }
    let hot: Vec<String> = (u.hot_sets.iter())
        .map(|h| {
            format!(
                "{} of the I/Os on the busiest {} of it",
                format_pct(h.references_pct),
                format_pct(h.footprint_pct)
            )
        })
        .collect();
    labelled(
        out,
        "locality",
        &format!(
            "the I/Os touched {} of the targets · {} of them went to a {} block touched before · {} (an even spread puts x% of the I/Os on x% of it)",
            format_size(u.footprint_bytes),
            format_pct(u.rereference_pct),
            format_size(u.block_bytes),
            hot.join(", ")
        ),
    );
}

fn verification(out: &mut String, r: &RunResult) {
    let Some(v) = &r.verify else {
        return;
    };
    let back = v.read_back.as_ref().map_or(String::new(), |b| {
        format!(
            " · read-back {}: {} blocks in {}{}",
            b.state,
            format_count(b.blocks_checked),
            format_seconds(b.seconds),
            crate::report::tables::unread_text(b)
        )
    });
    labelled(
        out,
        "verify",
        &format!(
            "{} blocks of {} checked, {} unchecked · {} corrupted, {} misdirected, {} lost, {} torn{back}",
            format_count(v.blocks_checked),
            format_size(v.block_bytes),
            format_count(v.blocks_unchecked),
            format_count(v.corrupted),
            format_count(v.misdirected),
            format_count(v.lost),
            format_count(v.torn),
        ),
    );
    for e in v.first_errors.iter().take(5) {
        labelled(
            out,
            "",
            &format!(
                "{} block at offset {} of target {} ({}): expected {}; {}",
                e.kind.name(),
                e.offset,
                r.targets
                    .get(e.target)
                    .map(|t| t.name.as_str())
                    .unwrap_or("?"),
                e.phase,
                e.expected,
                e.found
            ),
        );
    }
}

/// One rule of a verdict: `ok    db1 average database read latency   0.54 ms   ≤ 20 ms`
/// (`outcome` columns for the outcome), and under an inconclusive or unmeasured rule, why.
fn rule_line(rule: &Rule, outcome: usize, width: usize, measured_width: usize) -> String {
    let (measured, threshold) = crate::report::tables::rule_figures(rule);
    let mut line = format!(
        "  {:<outcome$}  {:<width$}  {:>measured_width$}   {} {}",
        rule.outcome(),
        rule.rule,
        measured,
        match rule.comparison {
            Comparison::AtMost => "≤",
            Comparison::AtLeast => "≥",
        },
        threshold,
    );
    for (what, why) in [
        ("the host", &rule.inconclusive),
        ("too few samples", &rule.not_measured),
    ] {
        if let Some(why) = why {
            line.push_str(&format!("\n  {:outcome$}  {what}: {why}", ""));
        }
    }
    line
}

fn verdict(out: &mut String, r: &RunResult) {
    let Some(v) = &r.verdict else {
        return;
    };
    let width = v
        .rules
        .iter()
        .map(|r| r.rule.chars().count())
        .max()
        .unwrap_or(0);
    // The measured values right-aligned in a column of at least 10 characters.
    let measured_width = (v.rules.iter())
        .map(|r| crate::report::tables::rule_figures(r).0.chars().count())
        .fold(10, usize::max);
    let outcome = (v.rules.iter())
        .map(|r| r.outcome().len())
        .fold(4, usize::max);
    let _ = writeln!(out, "\nverdict:");
    for rule in &v.rules {
        let _ = writeln!(out, "{}", rule_line(rule, outcome, width, measured_width));
    }
    for note in (crate::report::view::installed().iter()).filter_map(|v| v.verdict_note(r)) {
        let _ = writeln!(out, "  {note}");
    }
    let _ = writeln!(out, "RESULT: {}", v.result);
    if let Some(note) = v.note() {
        let _ = writeln!(out, "{note}");
    }
}

/// What to do next, where storlab can tell: after the default job or the quick Exchange
/// check, how to test one's own storage; after a run whose verdict failed, where to look.
fn next_steps(out: &mut String, r: &RunResult) {
    let mut next = Vec::new();
    match &r.invocation.source {
        JobSource::Default { .. } => next.push(
            "this was storlab's default job on a scratch file; to test your storage, point a job at it: storlab run --target /mnt/array/storlab.dat --size 64GiB (storlab creates and fills the file), or start from a job file in examples/ or a preset (storlab presets)".to_string(),
        ),
        _ => next.extend(
            (crate::report::view::installed().iter()).filter_map(|v| v.next_step(r)),
        ),
    }
    if r.verdict
        .as_ref()
        .is_some_and(|v| !v.passed() && !v.inconclusive() && !v.not_measured())
    {
        // The HTML report is named as the run wrote it (`--html FILE`), or how to make one.
        let html = (r.command.iter())
            .position(|a| a == "--html")
            .and_then(|i| r.command.get(i + 1).map(String::as_str))
            .or_else(|| (r.command.iter()).find_map(|a| a.strip_prefix("--html=")));
        next.push(match html {
            Some(path) => {
                format!("the rules marked FAIL say what missed; the HTML report {path} shows when in the run")
            }
            None => "the rules marked FAIL say what missed; the HTML report (--html FILE, or storlab report RESULTS.json -o FILE) shows when in the run".into(),
        });
    }
    if next.is_empty() {
        return;
    }
    out.push('\n');
    for n in next {
        let _ = writeln!(out, "next: {n}");
    }
}
