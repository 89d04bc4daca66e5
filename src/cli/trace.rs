//! `storlab trace import`: a public block trace (MSR Cambridge CSV, blkparse text) read into a
//! results file with its block sample, for `storlab cache-curve` and the reports.

use crate::job::trace::Format;
use crate::report::console;
use crate::trace::{formats, import};
use crate::units::{format_count, format_pct, format_size};
use crate::{Usage, exit};
use anyhow::Result;
use clap::Subcommand;
use std::path::PathBuf;

/// What `storlab trace` does.
#[derive(Debug, Subcommand)]
pub enum TraceAction {
    /// Read a block trace into a results file and its block sample (`OUT.blocks`), for
    /// `storlab cache-curve OUT.json`.
    Import {
        /// The trace: MSR Cambridge / SNIA IOTTA CSV, or blkparse's text output.
        trace: PathBuf,
        /// Its format: msr or blkparse (default: from its first line).
        #[arg(long, value_name = "FORMAT")]
        format: Option<String>,
        /// The results file to write.
        #[arg(long, short, value_name = "FILE")]
        output: PathBuf,
    },
}

/// Runs `storlab trace ACTION`.
pub(super) fn run_trace(action: TraceAction) -> Result<i32> {
    let TraceAction::Import {
        trace,
        format,
        output,
    } = action;
    let format = format
        .as_deref()
        .map(Format::parse)
        .transpose()
        .map_err(|e| Usage(format!("--format: {e}")))?;
    super::output::check("the results file", &output)?;
    super::output::check(
        "the block sample",
        &crate::results::blocks::blocks_path(&output),
    )?;
    let (t, format) = formats::read(&trace, format).map_err(Usage)?;
    let r = import::import(&t, &trace, format, &output)?;
    let sample = r
        .block_sample
        .as_ref()
        .map_or((0, 0.0), |s| (s.sampled, s.rate));
    let writes = t.ios.iter().filter(|io| io.write).count() as u64;
    console::print_text(&format!(
        "{} I/Os ({} writes) over {:.1} s on {} device(s), {} in all · {} block references sampled (rate {})\nresults: {} (block sample: {})",
        format_count(t.ios.len() as u64),
        format_pct(writes as f64 * 100.0 / t.ios.len().max(1) as f64),
        t.span_ns() as f64 / 1e9,
        t.devices.len(),
        format_size(r.targets.iter().map(|t| t.size_bytes).sum()),
        format_count(sample.0),
        sample.1,
        output.display(),
        crate::results::blocks::blocks_path(&output).display()
    ));
    Ok(exit::OK)
}
