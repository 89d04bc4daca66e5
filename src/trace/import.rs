//! A trace as storlab's block sample beside a results file, so `storlab cache-curve` (and every
//! report) reads it as it reads a run's: one target per device of the trace (its size the
//! largest extent reached), one class, the trace's reads and writes counted over its span
//! (with their latency when the trace recorded it), and the sample of the 4 KiB blocks they
//! touched, chosen as a run's is (SHARDS, about 64 Ki distinct blocks).

use super::Trace;
use crate::engine::sample::{BLOCK_BYTES, MODULUS, SampleSpec};
use crate::job::trace::Format;
use crate::job::{Job, Target};
use crate::results::blocks::{self, BlockSample};
use crate::results::{ClassResult, DirCounts, RunResult, TargetResult};
use crate::stats::blocks::{BlockRef, SEQUENTIAL, WRITE};
use crate::stats::summary::ClassSummary;
use crate::stats::target::TargetKind;
use crate::stats::{Dir, StatsSet};
use anyhow::{Context, Result};
use std::path::Path;

/// The class every imported I/O is in.
pub(crate) const CLASS: &str = "trace";

/// Writes `trace` (read from `source` in `format`) as the results `results` and the block
/// sample beside it; returns the results.
pub(crate) fn import(
    trace: &Trace,
    source: &Path,
    format: Format,
    results: &Path,
) -> Result<RunResult> {
    // Each device's extent, in one pass (a device's I/Os end within 1 EiB: the formats
    // refuse others).
    let mut sizes = vec![0u64; trace.devices.len()];
    for io in &trace.ios {
        let size = &mut sizes[io.device as usize];
        *size = (*size).max(io.offset + u64::from(io.len));
    }
    for size in &mut sizes {
        *size = size.next_multiple_of(BLOCK_BYTES);
    }
    let total = (sizes.iter())
        .try_fold(0u64, |sum, &s| sum.checked_add(s))
        .ok_or_else(|| {
            crate::Usage(format!(
                "the trace {}'s devices reach more than 16 EiB together; storlab's results hold at most 16 EiB of targets",
                source.display()
            ))
        })?;
    let spec = SampleSpec::for_size(total, BLOCK_BYTES);
    let path = blocks::blocks_path(results);
    let mut out = blocks::create(&path, false)?;
    let mut stats = StatsSet::new(1);
    let mut ends = vec![u64::MAX; sizes.len()];
    let mut counts = vec![(DirCounts::default(), DirCounts::default()); sizes.len()];
    let (mut references, mut sampled) = (0u64, 0u64);
    let mut buf: Vec<BlockRef> = Vec::with_capacity(1 << 16);
    for io in &trace.ios {
        let d = io.device as usize;
        let dir = if io.write { Dir::Write } else { Dir::Read };
        stats.record(0, dir, u64::from(io.len), io.latency_ns.unwrap_or(0), None);
        let (ops, bytes) = &mut counts[d];
        if io.write {
            ops.write += 1;
            bytes.write += u64::from(io.len);
        } else {
            ops.read += 1;
            bytes.read += u64::from(io.len);
        }
        let mut flags = if io.write { WRITE } else { 0 };
        if ends[d] == io.offset {
            flags |= SEQUENTIAL;
        }
        ends[d] = io.offset + u64::from(io.len);
        let (first, last) = (io.offset / BLOCK_BYTES, (ends[d] - 1) / BLOCK_BYTES);
        references += last - first + 1;
        for block in (first..=last).filter(|&b| spec.sampled(io.device, b)) {
            buf.push(BlockRef {
                t_ns: io.t_ns,
                block,
                target: io.device as u16,
                class: 0,
                flags,
            });
        }
        if buf.len() >= 1 << 16 {
            sampled += buf.len() as u64;
            blocks::append(&mut out, &buf).context("writing the block sample")?;
            buf.clear();
        }
    }
    sampled += buf.len() as u64;
    blocks::append(&mut out, &buf).context("writing the block sample")?;
    std::io::Write::flush(&mut out).context("writing the block sample")?;
    let secs = (trace.span_ns() as f64 / 1e9).max(1e-9);
    let totals = ClassSummary::of(&stats.total(), secs, true);
    let class = ClassSummary::of(&stats.classes[0], secs, true);
    let shown = format!("{} ({})", source.display(), format_name(format));
    let mut warnings = Vec::new();
    if trace.ios.iter().all(|io| io.latency_ns.is_none()) {
        warnings.push(format!(
            "imported from {shown}: the trace records no latency, so latencies are shown as 0"
        ));
    }
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let result = RunResult {
        job: Job {
            description: Some(format!("trace imported from {shown}")),
            targets: (trace.devices.iter().zip(&sizes))
                .map(|(name, &size)| Target::file(name.clone(), source.to_path_buf(), Some(size)))
                .collect(),
            classes: vec![CLASS.into()],
            ..Default::default()
        },
        storlab_version: env!("CARGO_PKG_VERSION").into(),
        started_at: now.clone(),
        ended_at: now,
        warnings,
        measured_ms: trace.span_ns() / 1_000_000,
        targets: (trace.devices.iter().zip(&sizes).zip(&counts))
            .map(|((name, &size), (ops, bytes))| TargetResult {
                name: name.clone(),
                path: source.display().to_string(),
                kind: TargetKind::Model,
                size_bytes: size,
                logical_block_size_bytes: 512,
                direct: false,
                dsync: false,
                filesystem: "trace".into(),
                mount_point: None,
                mount_options: String::new(),
                device: None,
                device_model: None,
                prepare: Default::default(),
                ops: *ops,
                bytes: *bytes,
                errors: Default::default(),
            })
            .collect(),
        totals,
        classes: [(
            CLASS.to_string(),
            ClassResult {
                read: class.read,
                write: class.write,
                flush: class.flush,
                write_durability: "as traced".into(),
                measured_ms: None,
                steps: None,
            },
        )]
        .into(),
        block_sample: Some(BlockSample {
            path: path.display().to_string(),
            block_bytes: BLOCK_BYTES,
            rate: spec.rate(),
            threshold: spec.threshold,
            modulus: MODULUS,
            references,
            sampled,
            dropped: 0,
        }),
        ..Default::default()
    };
    crate::results::file::save(results, &result)?;
    Ok(result)
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Msr => "MSR Cambridge CSV",
        Format::Blkparse => "blkparse",
    }
}
