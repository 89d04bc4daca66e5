//! `--dry-run`: what a run of a job would do, without touching any target.

use crate::engine::target;
use crate::job::Job;
use crate::units::{format_duration, format_size};

/// What a run of `job` would do, for `--dry-run`.
pub fn describe(job: &Job) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "engine {:?} · duration {} · ramp {} · interval {} · seed {} · {}",
        job.engine,
        format_duration(std::time::Duration::from_millis(job.duration_ms)),
        format_duration(std::time::Duration::from_millis(job.ramp_ms)),
        format_duration(std::time::Duration::from_millis(job.interval_ms)),
        job.seed,
        if job.buffered {
            "buffered (page cache)"
        } else {
            "O_DIRECT"
        }
    );
    let _ = writeln!(o, "targets:");
    for (i, t) in job.targets.iter().enumerate() {
        let preview = target::preview(&crate::run::prepare::target_request(job, i));
        let what = match &preview.outcome {
            Ok(action) => action.to_string(),
            Err(e) => format!("REFUSED: {e}"),
        };
        let place = &preview.placement;
        let mount = match (&place.mount_point, &place.device) {
            (Some(m), Some(d)) => format!(" · on {} ({}, /dev/{d})", m.display(), place.filesystem),
            (Some(m), None) => format!(" · on {} ({})", m.display(), place.filesystem),
            _ => String::new(),
        };
        let _ = writeln!(
            o,
            "  {} = {} · {what}{mount}{}",
            t.name,
            t.path.display(),
            if t.sync { " · O_DSYNC" } else { "" }
        );
    }
    let _ = writeln!(o, "workers:");
    for w in &job.workers {
        let _ = writeln!(
            o,
            "  {} · queue depth {} · targets {} ({:?}){}{}",
            w.name,
            w.queue_depth,
            w.targets
                .iter()
                .map(|&t| job.targets[t].name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            w.target_choice,
            w.rate
                .map(|r| format!(" · open loop {} IOPS {:?}", r.iops, r.arrivals))
                .unwrap_or_else(|| " · closed loop".into()),
            w.cpu.map(|c| format!(" · CPU {c}")).unwrap_or_default()
                + &w.io_limit
                    .map(|l| format!(" · stops after {l:?}"))
                    .unwrap_or_default()
        );
        for a in &w.access {
            let _ = writeln!(
                o,
                "    class {} · weight {} · {} · {}% read · {}% random · align {} · {:?}{}{}",
                job.classes[a.class],
                a.weight,
                format_size(a.block_size_bytes),
                a.read_pct,
                a.random_pct,
                format_size(a.align_bytes),
                a.distribution,
                if a.block_sizes.is_empty() {
                    String::new()
                } else {
                    format!(
                        " · sizes {}",
                        a.block_sizes
                            .iter()
                            .map(|(b, w)| format!("{}×{w}", format_size(*b)))
                            .collect::<Vec<_>>()
                            .join(" ")
                    )
                } + &if a.roll_every_bytes > 0 {
                    format!(" · rolls every {}", format_size(a.roll_every_bytes))
                } else {
                    String::new()
                } + if a.sync { " · RWF_DSYNC" } else { "" },
                if a.fsync_every > 0 {
                    format!(" · fdatasync every {} writes", a.fsync_every)
                } else {
                    String::new()
                }
            );
        }
    }
    let seq = &job.sequence;
    if seq.is_sequence() {
        let steps = crate::job::steps::expand(job);
        let _ = writeln!(o, "sequence: {} step(s)", steps.len());
        for c in &seq.cycles {
            let _ = writeln!(
                o,
                "  cycle {}: {}",
                c.parameter.name(),
                c.values
                    .iter()
                    .map(|v| c.parameter.show(*v))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if seq.repeat > 1 {
            let _ = writeln!(
                o,
                "  each step run {} times, {} ms apart",
                seq.repeat, seq.pause_ms
            );
        }
        if !seq.curve.is_empty() {
            let _ = writeln!(
                o,
                "  rate curve: closed-loop maximum, then {:?}% of it open loop{}",
                seq.curve,
                seq.stop_when
                    .as_ref()
                    .map(|r| format!(", stopping when {:?} > {} ns", r.statistic, r.threshold_ns))
                    .unwrap_or_default()
            );
        }
        if let Some(st) = &seq.steady {
            let _ = writeln!(
                o,
                "  until steady: rounds of {} ms, window {}, ±{}% range, ±{}% fit, at most {} rounds",
                st.round_ms, st.window, st.range_pct, st.slope_pct, st.max_rounds
            );
        }
        if let Some(p) = &seq.precondition {
            let _ = writeln!(
                o,
                "  precondition: {} {} pass(es) of {} writes over every target (writes every target in full)",
                p.passes,
                if p.random { "random" } else { "sequential" },
                format_size(p.block_bytes)
            );
        }
    }
    for w in &job.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    o
}
