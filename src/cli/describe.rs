//! `--dry-run`: what a run of a workload would do, in its own vocabulary and units, without
//! writing anything: its description (the same lines its results will keep and its reports
//! will show), and one statement per target of what will happen to it (created and written,
//! reused, prepared again, used as it is, or refused by the guard and why).

use crate::engine::target::{self, TargetKind};
use crate::job::Job;
use crate::report::console::{description_block, mount_text, named};
use crate::results::description::Description;
use std::fmt::Write as _;

/// What a dry run found.
#[derive(Debug, Clone)]
pub struct DryRun {
    /// The text to print.
    pub text: String,
    /// Why the run would be refused, one line per refused target or filesystem short of
    /// space (empty: it would run).
    pub refused: Vec<String>,
}

/// What a run of the plain `job` would do.
pub fn describe(job: &Job) -> DryRun {
    dry_run(&Description::of_job(job), std::slice::from_ref(job))
}

/// What a run described by `description`, opening the targets of `jobs`, would do.
pub(crate) fn dry_run(description: &Description, jobs: &[Job]) -> DryRun {
    let mut refused = Vec::new();
    let mut targets = Vec::new();
    let mut seen = Vec::new();
    let mut previews = Vec::new();
    for job in jobs {
        for (i, t) in job.targets.iter().enumerate() {
            if seen.contains(&t.path) {
                continue;
            }
            seen.push(t.path.clone());
            let (line, preview) = target_line(job, i, &mut refused);
            targets.push(line);
            previews.extend(preview);
        }
    }
    let refused_targets = refused.len();
    // Targets that each fit may not fit together.
    let mut shortfalls = 0;
    for short in target::shortfalls(&previews) {
        targets.push(format!("REFUSED: {short}"));
        refused.push((short, false));
        shortfalls += 1;
    }
    // The workers' own limits, which the run checks before it opens a target.
    let memory = crate::stats::host::host_info().memory_bytes;
    let mut workers = Vec::new();
    for job in jobs {
        // Atomic writes, to targets that exist (a new file's unit is known once it is made).
        let mut unit = |t: usize| {
            let path = &job.targets[t].path;
            (path.symlink_metadata().is_ok())
                .then(|| crate::engine::target::atomic_write_unit_at(path))
        };
        for refusal in crate::run::prepare::atomic_refusals(job, &mut unit) {
            if !workers.contains(&refusal) {
                workers.push(refusal);
            }
        }
        let checks = [
            crate::run::limits::ensure_cpus(job),
            crate::run::limits::ensure_buffers(job, memory),
        ];
        for refusal in checks.into_iter().filter_map(Result::err) {
            if !workers.contains(&refusal.0) {
                workers.push(refusal.0);
            }
        }
    }
    let mut o = description_block(description, &targets);
    for w in &workers {
        let _ = writeln!(o, "REFUSED: {w}");
    }
    refused.extend(workers.iter().map(|w| (w.clone(), false)));
    let warnings = jobs.iter().flat_map(|j| &j.warnings);
    for w in warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    if refused.is_empty() {
        o.push_str("\nthe run would start: run the same command without --dry-run\n");
    } else {
        // Only the guard's refusals are lifted by --destroy-data; the others need another
        // target (or space, or permissions).
        let guarded = refused.iter().any(|r| r.1);
        let mut whats = Vec::new();
        if refused_targets > 0 {
            whats.push(format!("{refused_targets} of {} targets", seen.len()));
        }
        if shortfalls > 0 {
            whats.push("for space".to_string());
        }
        if !workers.is_empty() {
            whats.push("for its workers".to_string());
        }
        let what = whats.join(", ");
        let _ = writeln!(
            o,
            "\nthe run would be refused ({what}): {}",
            if guarded {
                "change the target, or pass --destroy-data if its contents may be destroyed"
            } else {
                "each REFUSED line says what to change"
            }
        );
    }
    let refused = refused.into_iter().map(|r| r.0).collect();
    DryRun { text: o, refused }
}

/// What will happen to target `i` of `job`; a refusal is added to `refused`.
fn target_line(
    job: &Job,
    i: usize,
    refused: &mut Vec<(String, bool)>,
) -> (String, Option<target::TargetPreview>) {
    let t = &job.targets[i];
    let path = t.path.display().to_string();
    if crate::run::prepare::stand_in_size(job.engine, t).is_some() {
        let line = format!(
            "{}: not there and not needed: the null engine does no I/O, nothing is created",
            named(&t.name, &path)
        );
        return (line, None);
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
            let guarded = matches!(e, target::TargetError::Guarded { .. });
            refused.push((format!("{}: {e}", t.name), guarded));
            let text = e.to_string();
            let prefix = format!("{}: ", t.path.display());
            format!("REFUSED: {}", text.strip_prefix(&prefix).unwrap_or(&text))
        }
    };
    let sync = if t.sync { ", O_DSYNC" } else { "" };
    (
        format!("{}: {what}{sync}", named(&t.name, &path)),
        Some(preview),
    )
}
