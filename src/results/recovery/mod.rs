//! Results recovered from the NDJSON time series of a run that did not finish (killed with
//! `kill -9`, the machine crashed, the disk filled): every complete line is read back (a last
//! line cut off by the kill is left out), and the best [`RunResult`] the intervals allow is
//! built from them, marked `interrupted` with what was recovered and what is unknown, so every
//! report (`storlab report run.ndjson`, HTML, CSV, Markdown) can be made from it.
//!
//! A time series is not always a killed run's: `storlab report run.ndjson` first looks at the
//! results file beside it (`run.json`). When the run wrote it as it ended, that file is the
//! report; when it is the file written before the workers started (the run was killed), its
//! job, targets and host are completed with the measurements here and its plan says how far
//! the run got ("the time series ends at 12 s of 30 s planned"). Only a file that is missing
//! leaves open whether the run finished, and the results say so.
//!
//! An interval record holds counts (summed exactly), the mean latency (averaged weighted by
//! operations: exact), the maximum (exact) and the 99th percentile; the run-wide 99th
//! percentile is reported as the largest of the intervals' (an upper bound: no interval had
//! more than 1% of its I/Os above it, so neither had the run). Other percentiles cannot be
//! rebuilt from intervals and are left at 0 (reports show them as unknown). The job, the
//! targets and the host are not in the time series and are left empty.
//!
//! The series is read once, one record at a time, into sums (`facts.rs`), never held: results
//! recovered from a day of 10 ms intervals take the memory of a minute's; their own series is
//! the file, which every view reads again as it renders.

mod facts;

use super::steps::{StepKind, StepResult};
use super::timeseries::Series;
use super::{
    ClassResult, DeviceResult, EngineInfo, Interrupted, Phase, PhaseRecord, PhaseState, RunResult,
    StepRun,
};
use crate::job::{EngineKind, Job};
use crate::stats::host::HostInfo;
use crate::stats::timeseries::SequenceRun;
use crate::units::format_seconds;
use anyhow::{Result, bail};
use facts::{Facts, Sum};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What `storlab report` reports for the time series at `path`, and a note when that is the
/// results file the run wrote beside it rather than results rebuilt from the series.
pub(crate) fn load(path: &Path) -> Result<(RunResult, Option<String>)> {
    let series = Facts::read(path).map_err(|e| crate::Usage(format!("{e:#}")))?;
    let source = path.display().to_string();
    match beside(path, &series) {
        Beside::Finished(results, r) => {
            let note = format!(
                "{source} is the time series of a run that ended and wrote its results: this is the report of its results file {}",
                results.display()
            );
            Ok((r, Some(note)))
        }
        Beside::Unfinished(unfinished) => Ok((completed(unfinished, &series, &source)?, None)),
        Beside::Other(why) => {
            let mut r = recover_alone(&series, path, &why)?;
            r.warnings.push(
                "recovered from the time series: the job, the targets and the host are not in it and are left empty; start and end times are estimated from the file's modification time".into(),
            );
            Ok((r, None))
        }
    }
}

/// The results file beside a time series, and what it says of the run.
enum Beside {
    /// The run's own results, written when it ended (at this path).
    Finished(PathBuf, RunResult),
    /// The file written before the workers started, never replaced: the run was killed, or
    /// its results could not be written (the file then says why).
    Unfinished(RunResult),
    /// No results of this run: why not, as the end of a sentence on how the run ended.
    Other(Why),
}

/// Why a time series is reported alone.
enum Why {
    /// Its run did not finish (its results file is another run's, or the series was cut off
    /// in a write): how that is known.
    Stopped(String),
    /// Nothing says whether its run finished: why.
    Unknown(String),
}

/// The results file beside the time series at `path` (`run.ndjson` → `run.json`, or `run`).
fn beside(path: &Path, series: &Facts) -> Beside {
    let candidates = [path.with_extension("json"), path.with_extension("")];
    let Some(results) = candidates
        .into_iter()
        .find(|c| c != path && super::file::timeseries_path(c) == path && c.exists())
    else {
        let why = if path.extension().is_some_and(|e| e == "ndjson") {
            format!(
                "there is no results file {} beside it",
                path.with_extension("json").display()
            )
        } else {
            "it is not named RUN.ndjson, so no results file RUN.json is known to be beside it"
                .into()
        };
        return Beside::Other(cut_off_or(series, Why::Unknown(why)));
    };
    let r = match super::file::load(&results) {
        Ok(r) => r,
        Err(e) => {
            let why = format!(
                "its results file {} cannot be read ({e:#})",
                results.display()
            );
            return Beside::Other(cut_off_or(series, Why::Unknown(why)));
        }
    };
    if r.interrupted.unfinished() {
        return Beside::Unfinished(r);
    }
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match not_its_results(&r, series, modified(&results), modified(path)) {
        None => Beside::Finished(results, r),
        Some(why) => Beside::Other(Why::Stopped(format!(
            "storlab stopped without writing its results ({} beside it {why})",
            results.display()
        ))),
    }
}

/// A series whose last line was cut off was being written when storlab stopped: the run did
/// not finish, whatever else is unknown.
fn cut_off_or(series: &Facts, why: Why) -> Why {
    match series.cut_off {
        true => Why::Stopped(
            "storlab stopped while writing its last line, without writing its results".into(),
        ),
        false => why,
    }
}

/// Why `r`, a finished results file beside a time series, is not the results of the run that
/// wrote `series` (`None`: it is). A run rewrites its results file when it ends, so a file of
/// another run there means this one stopped first: a sequence's runs each leave theirs until
/// the sequence writes its own, and Exchange trials theirs.
fn not_its_results(
    r: &RunResult,
    series: &Facts,
    results_modified: Option<SystemTime>,
    series_modified: Option<SystemTime>,
) -> Option<&'static str> {
    if series.tagged && r.steps.is_none() {
        return Some("holds one run of the sequence, written when that run ended");
    }
    // The same intervals (their numbers, times and counts compared: floats may differ in
    // their last digit once written again).
    if !r.timeseries.held.is_empty() {
        let same = r.timeseries.held.len() as u64 == series.count
            && facts::fingerprint(&r.timeseries.held) == series.keys;
        return (!same).then_some("is another run's: its intervals are not these");
    }
    // Longer runs do not carry their series: a run's results are written after its last
    // interval.
    match (results_modified, series_modified) {
        (Some(r), Some(s)) if r < s => {
            Some("is another run's: it was written before this time series' last interval")
        }
        _ => None,
    }
}

/// The results of the run whose time series (at `path`) is reported alone, `why` saying how
/// far what happened to the run is known.
fn recover_alone(series: &Facts, path: &Path, why: &Why) -> Result<RunResult> {
    let source = path.display().to_string();
    has_records(series, &source)?;
    let modified = modified_at(path);
    let alone = format!(
        "the results are recovered from its time series {source} alone ({})",
        intervals(series)
    );
    let reason = match why {
        Why::Stopped(how) => format!(
            "the run did not finish: {}; {how}; {alone}",
            ends_at(series, None)
        ),
        Why::Unknown(how) => format!(
            "whether the run finished is not known: {how}; {alone}, which {}",
            ends_at(series, None).trim_start_matches("the time series ")
        ),
    };
    Ok(recover(series, &source, modified, reason, false))
}

/// Completes a results file that storlab wrote before its workers started and never replaced
/// (`interrupted` is [`super::UNFINISHED`]): the measurements are recovered from the time
/// series at `series`, the job, targets and host are the file's own.
pub(crate) fn complete(unfinished: RunResult, series: &Path) -> Result<RunResult> {
    let read = Facts::read(series).map_err(|e| crate::Usage(format!("{e:#}")))?;
    completed(unfinished, &read, &series.display().to_string())
}

/// [`complete`] with the series read (named `source`).
fn completed(unfinished: RunResult, series: &Facts, source: &str) -> Result<RunResult> {
    has_records(series, source)?;
    let job = &unfinished.job;
    let planned_ms = job.ramp_ms + job.duration_ms;
    let plain = !series.tagged;
    let measured_to_the_end = plain
        && (series.last.as_ref()).is_some_and(|x| x.t_end_ms >= planned_ms)
        && !series.cut_off;
    let from = format!(
        "the measurements are recovered from its time series {source} ({})",
        intervals(series)
    );
    let why = match &unfinished.interrupted {
        Interrupted::Unwritten(reason) => {
            let cause = reason.strip_prefix(super::UNWRITTEN).unwrap_or(reason);
            format!("storlab could not write its results ({cause})")
        }
        _ if measured_to_the_end => "storlab stopped without writing its results (killed, or the machine stopped, during the read-back or while writing them)".into(),
        _ => "storlab stopped without writing its results (killed, or the machine stopped)".into(),
    };
    let reason = if measured_to_the_end {
        format!(
            "the run did not finish: it measured to its planned end ({}), then {why}; {from}",
            format_seconds(planned_ms as f64 / 1e3)
        )
    } else {
        format!(
            "the run did not finish: {}; {why}; {from}",
            ends_at(series, plain.then_some(planned_ms))
        )
    };
    let modified = modified_at(Path::new(source));
    let mut r = recover(series, source, modified, reason, measured_to_the_end);
    r.warnings.extend(unfinished.warnings);
    r.command = unfinished.command;
    r.invocation = unfinished.invocation;
    r.job = unfinished.job;
    r.host = unfinished.host;
    r.started_at = unfinished.started_at;
    r.engine = unfinished.engine;
    r.targets = unfinished.targets;
    let phases = std::mem::take(&mut r.phases);
    r.phases = unfinished.phases;
    r.phases.extend(phases);
    Ok(r)
}

/// An error (the user's: exit 2) when `series` (named `source`) holds no record.
fn has_records(series: &Facts, source: &str) -> Result<()> {
    if series.count == 0 {
        bail!(crate::Usage(format!(
            "{source} holds no complete interval record: the run stopped before its first interval ended, so there is nothing to report"
        )));
    }
    Ok(())
}

/// When the file at `path` was last written.
fn modified_at(path: &Path) -> Option<chrono::DateTime<chrono::Utc>> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Some(chrono::DateTime::<chrono::Utc>::from(modified))
}

/// `120 intervals`, `, the last one cut off` when it was.
fn intervals(series: &Facts) -> String {
    format!(
        "{} intervals{}",
        series.count,
        if series.cut_off {
            ", the last one cut off"
        } else {
            ""
        }
    )
}

/// Where the time series ends: `the time series ends at 12 s of 30 s planned` (with the plan,
/// ramp included, ms), `the time series ends at 12 s into measure`, `… into step 2 (rep 1),
/// measure`.
fn ends_at(series: &Facts, planned_ms: Option<u64>) -> String {
    let Some(last) = series.last.as_ref() else {
        return "the time series holds no interval".into();
    };
    let at = format_seconds(last.t_end_ms as f64 / 1e3);
    if let Some(planned) = planned_ms {
        return format!(
            "the time series ends at {at} of {} planned",
            format_seconds(planned as f64 / 1e3)
        );
    }
    let within = match (last.step, &last.label) {
        (Some(i), Some(l)) => format!("step {i} ({l}), {}", last.phase),
        (Some(i), None) => format!("step {i}, {}", last.phase),
        (None, Some(l)) => format!("{l}, {}", last.phase),
        (None, None) => last.phase.to_string(),
    };
    format!("the time series ends at {at} into {within}")
}

/// Builds the results of the run whose time series `series` is (`source` names it; `modified`
/// is when it was last written, which is about when the run stopped), marked interrupted for
/// `why`; `measured_to_the_end`: its measurement ran to its planned end.
fn recover(
    series: &Facts,
    source: &str,
    modified: Option<chrono::DateTime<chrono::Utc>>,
    why: String,
    measured_to_the_end: bool,
) -> RunResult {
    let sequence = series.stepped;
    let measured = series.measured();
    let ramp_ms = series.first_ramp_ms;
    let wall_ms = series.wall_ms;
    let ended = modified.unwrap_or_else(chrono::Utc::now);
    let started = ended - chrono::Duration::milliseconds(wall_ms as i64);
    let stamp =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);

    let step_rows = measured.step_rows();
    let phases = if sequence {
        sequence_phases(series, &step_rows)
    } else {
        run_phases(&measured.all, ramp_ms, measured_to_the_end)
    };
    let warnings = vec![
        "recovered from the time series: counts, rates, mean and maximum latency are exact; the 99th percentile is an upper bound (the largest of the intervals' 99th percentiles); the other percentiles, the minimum and the standard deviation are unknown (0 in the results, unknown in reports)".into(),
    ];
    let all = &measured.all;
    let secs = all.seconds();
    RunResult {
        schema_version: super::schema::SCHEMA_VERSION,
        storlab_version: env!("CARGO_PKG_VERSION").into(),
        command: Vec::new(),
        invocation: Default::default(),
        description: None,
        job: recovered_job(series, source, all, ramp_ms),
        host: HostInfo::default(),
        started_at: stamp(started),
        ended_at: stamp(ended),
        interrupted: Interrupted::Yes(why),
        phases,
        engine: EngineInfo {
            name: "unknown".into(),
            fallback_reason: None,
            notes: Vec::new(),
            io_uring: None,
        },
        warnings,
        measured_ms: all.ms,
        targets: Vec::new(),
        totals: all.total.summary(secs),
        classes: class_results(all),
        workers: Vec::new(),
        devices: device_results(all),
        host_cpu: all.cpu,
        host_cpus: None,
        errors: Vec::new(),
        timeseries_path: Some(source.to_string()),
        // Read from the file again by whoever needs it (the views, the results file when
        // short enough to inline).
        timeseries: Series::of_file(PathBuf::from(source)),
        cost: None,
        data: None,
        verify: None,
        verdict: None,
        exchange: None,
        max_mailboxes: None,
        trials: None,
        steps: sequence.then_some(step_rows),
        precondition: None,
        users: None,
        database: None,
        calibrate: None,
        etcd: None,
        wal_sync: None,
        fs: None,
        block_sample: None,
        cache_tiers: Vec::new(),
        page_cache: None,
        reuse: None,
        hosts: Vec::new(),
    }
}

/// The record of phase `name`: how it ended and how long it took.
fn phase(name: Phase, state: PhaseState, seconds: f64) -> PhaseRecord {
    PhaseRecord {
        name,
        state,
        seconds,
        cpu_s: None,
    }
}

/// The phases of a sequence: preconditioning (when its intervals are there), then each step.
fn sequence_phases(series: &Facts, step_rows: &[StepResult]) -> Vec<PhaseRecord> {
    let mut phases = Vec::new();
    let (pre, ms) = series.unstepped;
    if pre > 0 {
        phases.push(phase(
            Phase::Precondition,
            PhaseState::Completed,
            ms as f64 / 1e3,
        ));
    }
    for row in step_rows {
        phases.push(phase(
            Phase::step(row.index, StepRun::Only),
            PhaseState::of(!row.interrupted),
            row.measured_ms as f64 / 1e3,
        ));
    }
    phases
}

/// The phases of a single run: the ramp (when it ran), then the measurement, interrupted
/// unless it ran `to_the_end`.
fn run_phases(all: &Sum, ramp_ms: u64, to_the_end: bool) -> Vec<PhaseRecord> {
    let mut phases = Vec::new();
    if ramp_ms > 0 {
        let state = PhaseState::of(all.ms > 0);
        phases.push(phase(Phase::Ramp, state, ramp_ms as f64 / 1e3));
    }
    let state = if all.ms > 0 {
        PhaseState::of(to_the_end)
    } else {
        PhaseState::NotStarted
    };
    phases.push(phase(Phase::Measure, state, all.seconds()));
    phases
}

/// The job as far as the time series tells it: its times and classes; no targets or workers.
fn recovered_job(series: &Facts, source: &str, all: &Sum, ramp_ms: u64) -> Job {
    Job {
        description: Some(format!("recovered from the time series {source}")),
        engine: EngineKind::IoUring,
        duration_ms: all.ms,
        ramp_ms,
        cooldown_ms: 0,
        interval_ms: series.interval_ms(),
        seed: 0,
        buffered: false,
        destroy_data: false,
        batch: 1,
        verify: false,
        on_error: Default::default(),
        sample_blocks: false,
        targets: Vec::new(),
        workers: Vec::new(),
        classes: all.classes.keys().cloned().collect(),
        warnings: Vec::new(),
        sequence: Default::default(),
        data: Default::default(),
        io_uring: Default::default(),
    }
}

/// Each class's reads, writes and flushes; how writes were made durable is unknown.
fn class_results(all: &Sum) -> BTreeMap<String, ClassResult> {
    let secs = all.seconds();
    all.classes
        .iter()
        .map(|(name, c)| {
            let s = c.summary(secs);
            (
                name.clone(),
                ClassResult {
                    read: s.read,
                    write: s.write,
                    flush: s.flush,
                    write_durability: "unknown".into(),
                    measured_ms: None,
                    steps: None,
                },
            )
        })
        .collect()
}

/// Each device's counters, its utilisation over the measured time.
fn device_results(all: &Sum) -> Vec<DeviceResult> {
    all.devices
        .iter()
        .map(|(name, d)| {
            let mut delta = *d;
            delta.util_pct = (d.busy_ms as f64 / all.ms.max(1) as f64 * 100.0).min(100.0);
            DeviceResult {
                name: name.clone(),
                model: None,
                delta,
            }
        })
        .collect()
}

/// The row of step `index` from its measured intervals (`runs`: which runs they came from).
fn step_row(index: usize, sum: &Sum, runs: &[SequenceRun], interrupted: bool) -> StepResult {
    let secs = sum.seconds();
    let totals = sum.total.summary(secs);
    let (kind, curve_level_pct) = match runs.first() {
        Some(SequenceRun::CurveMax) => (StepKind::CurveMax, Some(100.0)),
        Some(&SequenceRun::CurveLevel(pct)) => (StepKind::CurveLevel, Some(pct)),
        _ => (StepKind::Step, None),
    };
    let busy = sum.busy_pct();
    let shown: Vec<String> = runs
        .iter()
        .filter(|r| **r != SequenceRun::Run)
        .map(SequenceRun::to_string)
        .collect();
    StepResult {
        index,
        parameters: BTreeMap::new(),
        label: if shown.is_empty() {
            format!("step {index}")
        } else {
            format!("step {index} ({})", shown.join(", "))
        },
        kind,
        curve_level_pct,
        target_iops: None,
        measured_ms: sum.ms,
        ios_per_cpu_pct: if busy > 0.0 {
            totals.iops() / busy
        } else {
            0.0
        },
        classes: sum
            .classes
            .iter()
            .map(|(n, c)| (n.clone(), c.summary(secs)))
            .collect(),
        totals,
        host_cpu: sum.cpu,
        cpu_busy_pct: busy,
        repetitions: None,
        steady: None,
        interrupted,
        cache_tiers: Vec::new(),
        data: None,
        workers: Vec::new(),
        host_cpus: None,
    }
}

#[cfg(test)]
mod tests;
