//! Before any I/O is measured: the engine (io_uring, or psync when io_uring cannot be used, at
//! queue depth 1), the O_DIRECT alignment check (before anything is written, and again once the
//! targets are open), opening and preparing every target, and each worker's access generator.

use super::Signals;
use crate::Usage;
use crate::engine::access::{AccessGen, TargetGeometry};
use crate::engine::probe;
use crate::engine::target::{self, OpenTarget, TargetError, TargetRequest};
use crate::job::cache::CacheSize;
use crate::job::{EngineKind, Job, Target};
use crate::results::EngineInfo;
use crate::results::progress::Observer;
use crate::trace::{Trace, formats};
use crate::units::format_size;
use anyhow::{Result, anyhow};
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The end of an alignment error: how to avoid O_DIRECT's constraint in a job file.
pub(crate) const BUFFERED_HINT: &str = " or `buffered = true` (--buffered)";

/// The engine the run uses and the job as that engine runs it: io_uring falls back to psync
/// when the kernel, a sysctl, a seccomp filter or the memlock limit forbids it, and psync runs
/// every worker at queue depth 1. Each change is noted in `engine` and `warnings`.
pub(super) fn engine<'j>(
    job: &'j Job,
    engine: &mut EngineInfo,
    warnings: &mut Vec<String>,
) -> (EngineKind, Cow<'j, Job>) {
    let mut kind = job.engine;
    if kind == EngineKind::IoUring {
        if let Err(why) = probe::io_uring() {
            engine.name = "psync".into();
            engine.fallback_reason = Some(why.clone());
            warnings.push(format!(
                "io_uring is not usable, psync was used instead: {why}"
            ));
            kind = EngineKind::Psync;
        }
    }
    if kind != EngineKind::Psync || job.workers.iter().all(|w| w.queue_depth <= 1) {
        return (kind, Cow::Borrowed(job));
    }
    let mut j = job.clone();
    for w in &mut j.workers {
        if w.queue_depth > 1 {
            warnings.push(format!(
                "worker `{}`: the psync engine does one I/O at a time; queue_depth {} is run as 1",
                w.name, w.queue_depth
            ));
            w.queue_depth = 1;
        }
    }
    (kind, Cow::Owned(j))
}

/// Refuses a misaligned job before preparing (writing) anything, from the block size each
/// target is expected to have; checked again by [`check_open_alignment`] once open.
pub(super) fn check_expected_alignment(job: &Job) -> Result<()> {
    if job.buffered {
        return Ok(());
    }
    let expected: Vec<u32> = job
        .targets
        .iter()
        .map(|t| target::expected_block_size(&t.path).unwrap_or(0))
        .collect();
    check_alignment(job, &expected)
}

/// Checks the job against the O_DIRECT granularity of the opened targets.
pub(super) fn check_open_alignment(job: &Job, opened: &[OpenTarget]) -> Result<()> {
    let direct: Vec<u32> = opened
        .iter()
        .map(|o| if o.direct { o.logical_block_size } else { 0 })
        .collect();
    check_alignment(job, &direct)
}

/// The size of the stand-in for target `t` when `engine` does not need it: the null engine
/// does no I/O, so a target of a given size that does not exist is never created.
pub(crate) fn stand_in_size(engine: EngineKind, t: &Target) -> Option<u64> {
    t.size_bytes
        .filter(|_| engine == EngineKind::Null && !t.path.exists())
}

/// What target `index` of `job` asks of the engine.
pub(crate) fn target_request(job: &Job, index: usize) -> TargetRequest {
    let t = &job.targets[index];
    TargetRequest {
        path: t.path.clone(),
        size_bytes: t.size_bytes,
        buffered: job.buffered,
        dsync: t.sync,
        osync: t.osync,
        fresh: t.fresh,
        // A cache device is written by its tier (fills, write-back writes).
        writes: job.is_cache_device(index)
            || job
                .workers
                .iter()
                .any(|w| w.targets.contains(&index) && w.writes()),
        destroy_data: job.destroy_data,
        shared: t.shared_slice,
    }
}

/// How opening the targets ended.
pub(super) enum Opened {
    /// Every target is open (and prepared).
    All(Vec<OpenTarget>),
    /// A stop was asked for during preparation.
    Interrupted,
}

/// Opens (and prepares) every target of `job`, reporting preparation progress to `obs`.
pub(super) fn open_targets(
    job: &Job,
    engine: EngineKind,
    signals: &Signals,
    obs: &mut dyn Observer,
) -> Result<Opened> {
    // Targets that each fit may not fit together: refused before any is written.
    let previews: Vec<_> = (0..job.targets.len())
        .filter(|&ti| stand_in_size(engine, &job.targets[ti]).is_none())
        .map(|ti| target::preview(&target_request(job, ti)))
        .collect();
    if let Some(short) = target::shortfalls(&previews).into_iter().next() {
        return Err(Usage(short).into());
    }
    let mut opened = Vec::with_capacity(job.targets.len());
    for (ti, t) in job.targets.iter().enumerate() {
        if let Some(size) = stand_in_size(engine, t) {
            opened.push(target::stand_in(&t.path, size).map_err(|e| anyhow!(e))?);
            continue;
        }
        let request = target_request(job, ti);
        let progress = &mut |done, total| {
            obs.prepare(&t.name, done, total);
            !signals.stop.load(Ordering::Relaxed)
        };
        match target::open(&request, progress) {
            Ok(o) => opened.push(o),
            Err(TargetError::Interrupted { .. }) => return Ok(Opened::Interrupted),
            Err(
                e @ (TargetError::Guarded { .. }
                | TargetError::InUse { .. }
                | TargetError::Invalid { .. }),
            ) => {
                return Err(Usage(e.to_string()).into());
            }
            Err(e) => return Err(anyhow!(e)),
        }
    }
    Ok(Opened::All(opened))
}

/// Each worker's access generator over the opened targets.
pub(super) fn access_generators(job: &Job, opened: &[OpenTarget]) -> Result<Vec<AccessGen>> {
    let geometry: Vec<TargetGeometry> = opened
        .iter()
        .zip(&job.targets)
        .map(|(o, t)| TargetGeometry {
            size_bytes: o.size_bytes,
            fsync_every: t.fsync_every,
        })
        .collect();
    job.workers
        .iter()
        .enumerate()
        .map(|(wi, w)| {
            let seed = job.seed ^ (wi as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            AccessGen::new(w, &geometry, seed).map_err(|e| Usage(e).into())
        })
        .collect()
}

/// Checks every offset and size the workers use against each target's O_DIRECT granularity
/// (`block_sizes[t]`; 0 or 1: nothing to check).
fn check_alignment(job: &Job, block_sizes: &[u32]) -> Result<()> {
    for w in &job.workers {
        for (ai, a) in w.access.iter().enumerate() {
            for &t in &w.targets {
                let lbs = block_sizes[t] as u64;
                if lbs <= 1 {
                    continue;
                }
                let mut what = vec![
                    ("block size", a.block_size_bytes, "a block size"),
                    ("alignment", a.align_bytes, "an alignment"),
                    ("span offset", a.offset_bytes, "an offset"),
                    ("roll_every", a.roll_every_bytes, "a roll_every"),
                ];
                what.extend(
                    a.block_sizes
                        .iter()
                        .map(|&(b, _)| ("block size", b, "block sizes")),
                );
                for (name, value, fix) in what {
                    if value % lbs != 0 {
                        return Err(Usage(format!(
                            "cannot use {} with O_DIRECT: its logical block size is {lbs} but worker `{}` access[{ai}] has {name} {value}; use {fix} that is a multiple of {}{BUFFERED_HINT}",
                            job.targets[t].path.display(),
                            w.name,
                            format_size(lbs)
                        ))
                        .into());
                    }
                }
            }
        }
    }
    Ok(())
}

/// The lines each cached target's tier holds (indexed like the job's targets; 0 where none),
/// once the targets are open: the cache must fit its device, hold a line, and its lines must
/// suit the device's O_DIRECT granularity.
pub(super) fn cache_lines(job: &Job, opened: &[OpenTarget]) -> Result<Vec<u32>> {
    let mut out = vec![0; job.targets.len()];
    for (ti, t) in job.targets.iter().enumerate() {
        let Some(c) = t.cache.as_ref().filter(|c| c.size != CacheSize::Pct(0.0)) else {
            // No cache, or a cache cycled to 0 % (the step without one).
            continue;
        };
        let device = &opened[c.device];
        let line = c.line_bytes;
        // Whole lines.
        let wanted = c.size.bytes(opened[ti].size_bytes) / line * line;
        let name = &t.name;
        if wanted > device.size_bytes {
            return Err(Usage(format!(
                "the cache of target `{name}` is {} but its device {} holds {}; give a smaller size or a larger device",
                format_size(wanted),
                device.path.display(),
                format_size(device.size_bytes)
            ))
            .into());
        }
        let lines = wanted / line;
        if lines == 0 || lines > u64::from(u32::MAX - 1) {
            return Err(Usage(format!(
                "the cache of target `{name}` ({}) holds {lines} lines of {}; give a size of 1 to 2^32 - 2 lines",
                format_size(wanted),
                format_size(line)
            ))
            .into());
        }
        let lbs = u64::from(device.logical_block_size);
        if device.direct && lbs > 1 && line % lbs != 0 {
            return Err(Usage(format!(
                "the cache line of target `{name}` ({line} bytes) is not a multiple of the logical block size of its device {} ({lbs} bytes); give a line that is{BUFFERED_HINT}",
                device.path.display()
            ))
            .into());
        }
        out[ti] = lines as u32;
    }
    Ok(out)
}

/// Every target an atomically writing entry writes takes atomic writes of its block size
/// (statx's atomic write unit): refused otherwise, before the first I/O, naming the target.
pub(super) fn atomic_writes(job: &Job, opened: &[OpenTarget]) -> Result<()> {
    let unit = |t: usize| crate::engine::target::atomic_write_unit(&opened[t].file);
    match atomic_refusals(job, &mut |t| Some(unit(t)))
        .into_iter()
        .next()
    {
        Some(why) => Err(Usage(why).into()),
        None => Ok(()),
    }
}

/// Why each worker writing atomically (atomic = true) cannot, on the targets whose atomic
/// write unit `unit` tells (`Some(None)`: it has none; `None`: not known, not judged).
pub(crate) fn atomic_refusals(
    job: &Job,
    unit: &mut dyn FnMut(usize) -> Option<Option<(u32, u32)>>,
) -> Vec<String> {
    let mut refusals = Vec::new();
    for w in &job.workers {
        let Some(block) = (w.access.iter())
            .find(|a| a.atomic && a.read_pct < 100.0)
            .map(|a| a.block_size_bytes)
        else {
            continue;
        };
        for &t in &w.targets {
            let path = job.targets[t].path.display();
            match unit(t) {
                None => {}
                Some(Some((min, max))) if (u64::from(min)..=u64::from(max)).contains(&block) => {}
                Some(Some((min, max))) => refusals.push(format!(
                    "worker `{}` writes {block}-byte atomic writes to {path}, which takes atomic writes of {min} to {max} bytes; give block_size one of those",
                    w.name
                )),
                Some(None) => refusals.push(format!(
                    "worker `{}` writes atomically (atomic = true) to {path}, which takes no atomic writes (statx reports no atomic write unit: its filesystem or device has none, e.g. ext4 without bigalloc, or a disk without atomic writes; XFS on Linux 6.16 and later has them in software); write to a target that has them, or remove atomic",
                    w.name
                )),
            }
        }
    }
    refusals
}

/// The trace each worker replays (indexed like the job's workers; `None` where none), read and
/// checked against the opened targets: a device per target of the worker, every I/O within
/// its target and, with O_DIRECT, aligned to its logical block size.
pub(super) fn traces(job: &Job, opened: &[OpenTarget]) -> Result<Vec<Option<Arc<Trace>>>> {
    let mut read: Vec<(std::path::PathBuf, Arc<Trace>)> = Vec::new();
    let mut out = Vec::with_capacity(job.workers.len());
    for w in &job.workers {
        let Some(t) = &w.trace else {
            out.push(None);
            continue;
        };
        let trace = match read.iter().find(|(p, _)| *p == t.file) {
            Some((_, trace)) => trace.clone(),
            None => {
                let (trace, _) = formats::read(&t.file, t.format).map_err(Usage)?;
                let trace = Arc::new(trace);
                read.push((t.file.clone(), trace.clone()));
                trace
            }
        };
        let file = t.file.display();
        if trace.devices.len() > w.targets.len() {
            return Err(Usage(format!(
                "the trace {file} has {} devices ({}) but worker `{}` has {} target(s); give it one target per device, in that order",
                trace.devices.len(),
                trace.devices.join(", "),
                w.name,
                w.targets.len()
            ))
            .into());
        }
        for (d, name) in trace.devices.iter().enumerate() {
            let o = &opened[w.targets[d]];
            let extent = trace.extent(d as u32);
            if extent > o.size_bytes {
                return Err(Usage(format!(
                    "the trace {file} reaches byte {extent} of device {name}, but its target {} has {} bytes; give a larger target (size = \"{}\")",
                    o.path.display(),
                    o.size_bytes,
                    format_size(extent.next_multiple_of(1 << 20))
                ))
                .into());
            }
            let lbs = u64::from(o.logical_block_size).max(1);
            let misaligned = (trace.ios.iter())
                .filter(|io| io.device == d as u32)
                .find(|io| o.direct && (io.offset % lbs != 0 || u64::from(io.len) % lbs != 0));
            if let Some(io) = misaligned {
                return Err(Usage(format!(
                    "the trace {file} has an I/O of {} bytes at offset {} on device {name}, which O_DIRECT cannot do on {} (logical block size {lbs} bytes){BUFFERED_HINT}",
                    io.len,
                    io.offset,
                    o.path.display()
                ))
                .into());
            }
        }
        out.push(Some(trace));
    }
    Ok(out)
}
