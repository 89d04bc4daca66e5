//! Renderers of results files: the console table and live progress, the HTML report and its
//! SVG charts, comparisons of several results files, CSV and Markdown tables, fio's json+
//! shape, Iometer's results spreadsheet, cache curves.
//! Everything here is rendered from a [`crate::results::RunResult`] (or a curve computed from
//! one's block sample), never from engine internals.

pub(crate) mod compare;
pub(crate) mod console;
pub(crate) mod cost;
pub(crate) mod csv;
pub(crate) mod curve;
pub(crate) mod data;
pub(crate) mod fio_json;
pub(crate) mod html;
pub(crate) mod iometer_csv;
pub(crate) mod svg;
pub(crate) mod tables;
pub(crate) mod validation_tables;
pub(crate) mod view;

/// What `storlab report --format` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table (--table) as comma-separated values.
    Csv,
    /// A table (--table) as GitHub-flavoured Markdown.
    Markdown,
    /// The results in the shape of fio's --output-format=json+, for tools made for fio.
    FioJson,
    /// The results in the shape of Iometer's results spreadsheet (results.csv), for
    /// spreadsheets made for Iometer.
    IometerCsv,
}
