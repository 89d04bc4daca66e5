//! `--dry-run`: what a run of a job would do, in the job's own vocabulary and units, without
//! writing anything: one statement per target of what will happen to it (created and written,
//! reused, prepared again, used as it is, or refused by the guard and why), the workers and
//! their access, the timing and the sequence.

use crate::engine::target::{self, TargetKind};
use crate::job::Job;
use crate::job::steps::{Param, Statistic};
use crate::report::console::{job_block, mount_text, named};
use crate::units::{format_ms, format_number, format_pct, format_rate, format_size};
use std::fmt::Write as _;

/// What a dry run found.
#[derive(Debug, Clone)]
pub struct DryRun {
    /// The text to print.
    pub text: String,
    /// Why the run would be refused, one line per refused target (empty: it would run).
    pub refused: Vec<String>,
}

/// What a run of `job` would do.
pub fn describe(job: &Job) -> DryRun {
    let mut refused = Vec::new();
    let mut targets = Vec::new();
    for (i, t) in job.targets.iter().enumerate() {
        let path = t.path.display().to_string();
        if crate::run::prepare::stand_in_size(job.engine, t).is_some() {
            targets.push(format!(
                "{}: not there and not needed: the null engine does no I/O, nothing is created",
                named(&t.name, &path)
            ));
            continue;
        }
        let preview = target::preview(&crate::run::prepare::target_request(job, i));
        let place = &preview.placement;
        let mount = mount_text(
            place
                .mount_point
                .as_ref()
                .map(|m| m.display().to_string())
                .as_deref(),
            &place.filesystem,
            place.device.as_deref(),
        );
        let kind = match preview.kind {
            Some(TargetKind::BlockDevice) => "block device ",
            _ => "",
        };
        let what = match &preview.outcome {
            Ok(action) => format!("{kind}{action}{mount}"),
            Err(e) => {
                refused.push(format!("{}: {e}", t.name));
                let text = e.to_string();
                let prefix = format!("{}: ", t.path.display());
                format!("REFUSED: {}", text.strip_prefix(&prefix).unwrap_or(&text))
            }
        };
        let sync = if t.sync { ", O_DSYNC" } else { "" };
        targets.push(format!("{}: {what}{sync}", named(&t.name, &path)));
    }
    let mut o = job_block(job, &targets);
    sequence(&mut o, job);
    let _ = writeln!(
        o,
        "seed       {} (the same seed gives the same offsets)",
        job.seed
    );
    for w in &job.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    if refused.is_empty() {
        o.push_str("\nthe run would start: run the same command without --dry-run\n");
    } else {
        let _ = writeln!(
            o,
            "\nthe run would be refused ({} of {} targets): change the target, or pass --destroy-data if its contents may be destroyed",
            refused.len(),
            job.targets.len()
        );
    }
    DryRun { text: o, refused }
}

/// The unit a cycled parameter's values are in.
fn unit(p: Param) -> &'static str {
    match p {
        Param::Targets => " targets",
        Param::Workers => " workers",
        Param::QueueDepth => " outstanding I/Os",
        Param::Rate => " IOPS per worker",
        Param::Cache => " of the cached target",
        Param::Group => "",
        Param::BlockSize | Param::Read | Param::Random => "",
    }
}

/// The value of a cycled parameter as people read it.
fn value(p: Param, v: f64) -> String {
    match p {
        Param::BlockSize => format_size(v as u64),
        Param::Read | Param::Random | Param::Cache => format_pct(v),
        Param::Rate => format_rate(v),
        _ => format_number(v),
    }
}

fn statistic(s: Statistic) -> &'static str {
    match s {
        Statistic::Mean => "mean",
        Statistic::P50 => "p50",
        Statistic::P90 => "p90",
        Statistic::P95 => "p95",
        Statistic::P99 => "p99",
        Statistic::P99_9 => "p99.9",
        Statistic::P99_99 => "p99.99",
        Statistic::Max => "max",
    }
}

/// The sequence: cycles, repetitions, the rate curve, steady state, preconditioning.
fn sequence(o: &mut String, job: &Job) {
    let seq = &job.sequence;
    if !seq.is_sequence() {
        return;
    }
    let steps = crate::job::steps::expand(job);
    let _ = writeln!(o, "sequence   {} steps", steps.len());
    for c in &seq.cycles {
        let values: Vec<String> = c.values.iter().map(|&v| value(c.parameter, v)).collect();
        let _ = writeln!(
            o,
            "  cycle    {}: {}{}",
            c.parameter.name(),
            values.join(", "),
            unit(c.parameter)
        );
    }
    if seq.repeat > 1 {
        let _ = writeln!(
            o,
            "  repeat   each step {} times, {} apart",
            seq.repeat,
            format_ms(seq.pause_ms)
        );
    }
    if !seq.curve.is_empty() {
        let levels: Vec<String> = seq.curve.iter().map(|&l| format_pct(l)).collect();
        let stop = seq.stop_when.as_ref().map_or(String::new(), |r| {
            format!(
                ", stopping when {}{} exceeds {}",
                r.class
                    .as_ref()
                    .map(|c| format!("{c}'s "))
                    .unwrap_or_default(),
                statistic(r.statistic),
                format_ms(r.threshold_ns / 1_000_000)
            )
        });
        let _ = writeln!(
            o,
            "  curve    the closed-loop maximum, then {} of it open loop{stop}",
            levels.join(", ")
        );
    }
    if let Some(st) = &seq.steady {
        let _ = writeln!(
            o,
            "  steady   rounds of {} until the last {} rounds are within ±{} of their mean and their fit within ±{}; at most {} rounds",
            format_ms(st.round_ms),
            st.window,
            format_pct(st.range_pct),
            format_pct(st.slope_pct),
            st.max_rounds
        );
    }
    if let Some(p) = &seq.precondition {
        let _ = writeln!(
            o,
            "  precondition  {} {} passes of {} writes over every target (writes every target in full)",
            p.passes,
            if p.random { "random" } else { "sequential" },
            format_size(p.block_bytes)
        );
    }
}
