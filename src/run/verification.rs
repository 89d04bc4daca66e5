//! Data verification around a run: the table of what every block should hold (built before the
//! workers start), the final pass that reads back every block written, and the integrity verdict
//! (no I/O errors, no verification errors) every verifying run or run with a failed I/O gets.

use crate::Usage;
use crate::engine::target::OpenTarget;
use crate::engine::verify::{MapTarget, VerifyMap};
use crate::job::Job;
use crate::results::RunResult;
use crate::results::verdict::{self, Comparison, Rule, Verdict};
use crate::stats::host::HostInfo;
use crate::stats::verification::{ReadBack, ReadBackState, VerifyCounts};
use crate::units::format_size;
use anyhow::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::Signals;
use super::assemble::Draft;
use crate::results::progress::Observer;
use crate::results::{Phase, PhaseState};

/// Memory the verification map may take, as a fraction of the host's memory.
const VERIFY_MAP_MEMORY_SHARE: u64 = 4;
/// Bytes per read of the final read-back pass.
const READ_BACK_BYTES: u64 = 1 << 20;
/// Reads the final read-back pass keeps in flight (one thread each).
const READ_BACK_THREADS: usize = 8;

/// The verification map of a job: the targets' identities, and with verification one entry
/// per block of every target, where a block is the largest size every I/O is a multiple of
/// and aligned to.
pub(super) fn verify_map(
    job: &Job,
    opened: &[OpenTarget],
    host: &HostInfo,
    warnings: &mut Vec<String>,
) -> Result<VerifyMap> {
    let mut values = Vec::new();
    for a in job.workers.iter().flat_map(|w| &w.access) {
        values.extend([
            a.block_size_bytes,
            a.align_bytes,
            a.offset_bytes,
            a.roll_every_bytes,
            a.gap_bytes.unsigned_abs(),
            a.start_bytes,
        ]);
        values.extend(a.zones.iter().flat_map(|z| [z.size_bytes, z.skip_bytes]));
        values.extend(a.block_sizes.iter().map(|&(b, _)| b));
    }
    let run = crate::engine::buf::splitmix(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ (u64::from(std::process::id()) << 32),
    )
    .max(1);
    let targets: Vec<MapTarget> = opened
        .iter()
        .map(|o| MapTarget {
            size_bytes: o.size_bytes,
            prepared_id: o.prepare.data_seed,
        })
        .collect();
    let block = crate::engine::verify::block_size(values);
    if !job.verify {
        return Ok(
            VerifyMap::new(&targets, block.unwrap_or(512), run, false).with_reduction(job.data)
        );
    }
    let Some(block) = block else {
        return Err(Usage(
            "verify needs every block size, alignment, span offset, roll_every, gap, start and zone to be a multiple of 512 bytes (each sector carries a header); change them or turn verify off".into(),
        )
        .into());
    };
    let bytes = VerifyMap::memory_bytes(&targets, block);
    if host.memory_bytes > 0 && bytes > host.memory_bytes / VERIFY_MAP_MEMORY_SHARE {
        return Err(Usage(format!(
            "verify needs {} of memory to track every {}-byte block of the targets, more than a quarter of this host's {}; verify a smaller span (size, or access offset/length) or use larger blocks",
            format_size(bytes),
            block,
            format_size(host.memory_bytes)
        ))
        .into());
    }
    for (t, o) in job.targets.iter().zip(opened) {
        if o.prepare.data_seed.is_none() {
            warnings.push(format!(
                "verify: target `{}` was not prepared by storlab, so its blocks can only be checked once the run has written them",
                t.name
            ));
        }
    }
    Ok(VerifyMap::new(&targets, block, run, true).with_reduction(job.data))
}

/// A verifying run's counts: the workers' (`reports`), then the final read-back of what `read`
/// says (the block table, the targets, whether the run is buffered), its phase told to `obs`
/// and recorded in `draft`.
pub(super) fn verified<'a>(
    reports: impl Iterator<Item = &'a VerifyCounts>,
    (map, opened, buffered): (&VerifyMap, &[OpenTarget], bool),
    signals: &Signals,
    obs: &mut dyn Observer,
    draft: &mut Draft,
) -> VerifyCounts {
    let mut counts = VerifyCounts {
        block_bytes: map.block,
        ..VerifyCounts::default()
    };
    for r in reports {
        counts.merge(r);
    }
    // The final pass reads back every block written, unless the user stopped the run.
    obs.phase(Phase::ReadBack);
    let (start, cpu) = (Instant::now(), crate::stats::host::process_cpu_s());
    let back = read_back(map, opened, buffered, signals, &mut counts);
    let state = PhaseState::of(back.state == ReadBackState::Completed);
    let cpu_s = crate::stats::host::process_cpu_s() - cpu;
    draft.phase(Phase::ReadBack, state, start.elapsed().as_secs_f64(), cpu_s);
    counts.read_back = Some(back);
    counts
}

/// Why the run stopped, when its final read-back (in `counts`) was cut short: by a signal
/// (`interrupted by SIGINT (Ctrl-C) during read-back`) or by a failed read.
pub(super) fn cut_short(counts: &VerifyCounts, signals: &Signals) -> Option<String> {
    match &counts.read_back.as_ref()?.state {
        ReadBackState::Completed => None,
        ReadBackState::Interrupted => Some(
            signals
                .reason_in(Phase::ReadBack)
                .unwrap_or_else(|| "interrupted during read-back".into()),
        ),
        ReadBackState::Failed(why) => Some(format!("failed during read-back: {why}")),
    }
}

/// The final pass: reads back and checks every block written during the run, with
/// [`READ_BACK_THREADS`] reads in flight.
pub(super) fn read_back(
    map: &VerifyMap,
    opened: &[OpenTarget],
    buffered: bool,
    signals: &Signals,
    counts: &mut VerifyCounts,
) -> ReadBack {
    let start = Instant::now();
    if buffered {
        // Read what reached the device, not what the page cache holds.
        for o in opened {
            let _ = rustix::fs::fdatasync(&o.file);
            let _ = rustix::fs::fadvise(&o.file, 0, None, rustix::fs::Advice::DontNeed);
        }
    }
    let ranges: Vec<(usize, u64, u32)> = (0..opened.len())
        .flat_map(|t| {
            map.written_ranges(t, READ_BACK_BYTES)
                .into_iter()
                .map(move |(offset, len)| (t, offset, len))
        })
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failure = std::sync::Mutex::new(None::<String>);
    let interrupted = AtomicBool::new(false);
    let parts: Vec<(VerifyCounts, u64)> = std::thread::scope(|scope| {
        let reader = || {
            let mut arena = crate::engine::buf::BufArena::new(1, READ_BACK_BYTES as usize, 0);
            let mut part = VerifyCounts::default();
            let mut bytes = 0u64;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(t, offset, len)) = ranges.get(i) else {
                    break;
                };
                // Not after Ctrl-C or a thread's failure: either ends the run at once.
                if signals.signalled() || signals.failure.reason().is_some() {
                    interrupted.store(true, Ordering::Relaxed);
                    break;
                }
                let buf = &mut arena.slot_mut(0)[..len as usize];
                let why = match rustix::io::pread(&opened[t].file, &mut *buf, offset) {
                    Ok(n) if n == len as usize => None,
                    Ok(n) => Some(format!("short read of {n} of {len} bytes")),
                    Err(e) => Some(format!("reading {len} bytes: {e}")),
                };
                if let Some(why) = why {
                    let mut f = failure.lock().unwrap_or_else(|e| e.into_inner());
                    f.get_or_insert(format!("{why} at offset {offset} of target {t}"));
                    // Stop every reader.
                    next.store(ranges.len(), Ordering::Relaxed);
                    break;
                }
                bytes += len as u64;
                // A block still held by an I/O a failed worker left in flight is not checkable.
                if map.lock(t as u32, offset, len, false) {
                    let at = start.elapsed().as_millis() as u64;
                    map.read(buf, t as u32, offset, len, true, "read-back", at, &mut part);
                } else {
                    part.blocks_unchecked += u64::from(len) / map.block.max(1);
                }
                crate::fault::signal_at("read-back");
            }
            (part, bytes)
        };
        let threads: Vec<_> = (0..READ_BACK_THREADS.min(ranges.len().max(1)))
            .map(|_| scope.spawn(move || signals.failure.guard("a read-back thread", reader)))
            .collect();
        // A reader that panicked left its reason in `signals.failure` and stopped the others.
        (threads.into_iter())
            .filter_map(|h| h.join().ok().flatten())
            .collect()
    });
    let mut back = ReadBack::default();
    for (part, bytes) in &parts {
        back.blocks_checked += part.blocks_checked;
        back.bytes += bytes;
        counts.merge(part);
    }
    // What was written and never read back (the pass was stopped, or a read failed): not
    // checked, and said so.
    let written: u64 = ranges.iter().map(|&(_, _, len)| u64::from(len)).sum();
    back.blocks_unread = written.saturating_sub(back.bytes) / map.block.max(1);
    counts.blocks_unchecked += back.blocks_unread;
    back.state = match failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(why) => ReadBackState::Failed(why),
        None if let Some(why) = signals.failure.reason() => ReadBackState::Failed(why),
        None if interrupted.load(Ordering::Relaxed) => ReadBackState::Interrupted,
        None => ReadBackState::Completed,
    };
    back.seconds = start.elapsed().as_secs_f64();
    back
}

/// The verdict every run gets once it verifies data or an I/O failed: no I/O errors, no
/// verification errors, and no failure that stopped the run (what it did not run was not
/// shown to pass). `None` for a run with neither errors nor verification (nothing to judge).
pub(crate) fn integrity_verdict(result: &RunResult, io_failures: u64) -> Option<Verdict> {
    let errors = io_failures.max(result.totals.errors());
    if result.verify.is_none() && errors == 0 {
        return None;
    }
    let mut rules = vec![Rule::judge(
        verdict::IO_ERRORS,
        errors as f64,
        Comparison::AtMost,
        0.0,
        "errors",
    )];
    rules.extend(verification_rule(result));
    if result.interrupted.failed() {
        rules.push(Rule::judge(
            verdict::RUN_FAILED,
            1.0,
            Comparison::AtMost,
            0.0,
            "failures",
        ));
    }
    Some(Verdict::of(rules))
}

/// The rules a run with data verification is judged by (none without verification): every
/// verdict includes them. No verification errors; and when the final read-back did not read
/// every block written (it was stopped, or a read failed), that none was left unread: a
/// verification cut short is never a pass.
pub(crate) fn verification_rule(result: &RunResult) -> Vec<Rule> {
    let Some(v) = result.verify.as_ref() else {
        return Vec::new();
    };
    let mut rules = vec![Rule::judge(
        verdict::VERIFY_ERRORS,
        v.errors() as f64,
        Comparison::AtMost,
        0.0,
        "errors",
    )];
    if let Some(back) = v
        .read_back
        .as_ref()
        .filter(|b| b.state != ReadBackState::Completed)
    {
        rules.push(Rule::judge(
            verdict::NOT_READ_BACK,
            back.blocks_unread as f64,
            Comparison::AtMost,
            0.0,
            "blocks",
        ));
    }
    rules
}
