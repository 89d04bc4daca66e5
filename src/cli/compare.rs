//! `storlab compare`: several results files side by side, the first the baseline.

use super::Usage;
use crate::exit;
use crate::report::compare as report;
use crate::report::console;
use crate::results::file as results_file;
use crate::units::Percent;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Flags of `storlab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Results files; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub results: Vec<PathBuf>,
    /// A label per file, in order (default: the file names).
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
    /// Write the comparison as a self-contained HTML page to FILE.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Differences below this many percent are noise (runs with repetitions use their own
    /// spread when it is larger).
    #[arg(long, value_name = "PCT", default_value = "2%")]
    pub noise: Percent,
    /// Exit 3 (a failed verdict) when any throughput falls, or latency rises, by more than PCT
    /// beyond noise.
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<Percent>,
}

pub(super) fn compare(a: CompareArgs) -> Result<i32> {
    if let Some(path) = &a.output {
        super::output::check("the HTML comparison", path)?;
    }
    if !a.labels.is_empty() && a.labels.len() != a.results.len() {
        return Err(Usage(format!(
            "{} labels for {} results files; give one --label per file or none",
            a.labels.len(),
            a.results.len()
        ))
        .into());
    }
    let mut runs = Vec::new();
    for (i, path) in a.results.iter().enumerate() {
        let label = a.labels.get(i).cloned().unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string())
        });
        runs.push((label, results_file::load(path)?));
    }
    // The baseline is the first file given; one that ran after another is named, since its
    // differences then read backwards in time.
    if let Some((label, r)) =
        (runs.iter().skip(1)).find(|(_, r)| r.started_at < runs[0].1.started_at)
    {
        console::note(&format!(
            "note: the baseline {} ran after {label} ({} against {}): each difference is from {} to {label}; give the older run first to read them as what changed since",
            runs[0].0, runs[0].1.started_at, r.started_at, runs[0].0
        ));
    }
    let c = report::compare(&runs, a.noise.0);
    console::print_text(report::console(&c).trim_end());
    if let Some(path) = &a.output {
        super::output::emit("the HTML comparison", path, &report::html(&c))?;
        if !super::output::is_stdout(path) {
            console::note(&format!("HTML comparison: {}", path.display()));
        }
    }
    if let Some(pct) = a.fail_on_regression {
        let found = report::regressions(&c, pct.0);
        if !found.is_empty() {
            console::note(&format!(
                "regressions beyond {}%:\n{}",
                pct.0,
                found.join("\n")
            ));
            // A regression is a failed verdict.
            return Ok(exit::FAIL);
        }
    }
    Ok(exit::OK)
}
