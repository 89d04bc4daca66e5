//! `storlab report`: a results file (or a killed run's time series) as the summary, its
//! JSON, a table, fio's json+, Iometer's results spreadsheet or an HTML report.

use crate::report::console;
use crate::results::file::{self as results_file, timeseries_path};
use crate::results::timeseries;
use crate::{Usage, exit};
use anyhow::Result;
use std::path::Path;

/// `storlab report RESULTS [--json] [-o FILE] [--format ...] [--table ...]`.
pub(super) fn report(
    results: &Path,
    json: bool,
    output: Option<&Path>,
    (format, table, layout, step): (
        Option<crate::report::Format>,
        crate::report::csv::Table,
        crate::report::iometer_csv::Layout,
        Option<usize>,
    ),
) -> Result<i32> {
    if let Some(path) = output {
        super::output::check("the HTML report", path)?;
    }
    let series = timeseries_path(results);
    let r = if timeseries::is_timeseries(results) {
        let (r, note) = crate::results::recovery::load(results)?;
        if let Some(note) = note {
            console::note(&note);
        }
        r
    } else if !results.exists() && series.exists() {
        return Err(Usage(format!(
            "{} does not exist: the run did not finish; make a report from its time series: storlab report {}",
            results.display(),
            series.display()
        ))
        .into());
    } else {
        let r = results_file::load(results)?;
        let unfinished = r.interrupted.unfinished();
        if unfinished && series.exists() {
            crate::results::recovery::complete(r, &series)?
        } else {
            r
        }
    };
    if let Some(path) = output {
        super::write_html(path, &r)?;
    } else if let Some(format) = format {
        use crate::report::{Format, csv, fio_json, iometer_csv};
        let every_interval = format == Format::FioJson
            || (matches!(format, Format::Csv | Format::Markdown)
                && table == csv::Table::Timeseries);
        if every_interval {
            whole_series(&r)?;
        }
        let text = match format {
            Format::Csv => csv::render(&r, csv::Format::Csv, table),
            Format::Markdown => csv::render(&r, csv::Format::Markdown, table),
            Format::FioJson => {
                console::print_json(&serde_json::to_string_pretty(&fio_json::render(&r, step))?);
                return Ok(exit::OK);
            }
            Format::IometerCsv => iometer_csv::render(&r, layout),
        };
        console::print_text(text.trim_end());
    } else if json {
        console::print_results_json(&r);
    } else {
        console::print_summary(&r);
    }
    Ok(exit::OK)
}

/// Before an export of every interval: a time series that cannot be read is refused (exit
/// 2: `RUN.ndjson line 7: …`), one that is missing is said (the export has no intervals).
/// Read one record at a time; the export reads it again.
fn whole_series(r: &crate::results::RunResult) -> Result<()> {
    match r.timeseries.each(|_| {}) {
        Ok(_) => Ok(()),
        Err(u) if u.missing => {
            console::note(&format!(
                "{}: it is not beside the results file, so the export has no intervals",
                u.why
            ));
            Ok(())
        }
        Err(u) => Err(Usage(u.why).into()),
    }
}
