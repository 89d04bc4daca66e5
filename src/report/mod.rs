//! Renderers of results files: the console table and live progress, the HTML report and its
//! SVG charts, comparisons of several results files, CSV and Markdown tables. Everything here
//! is rendered from a [`crate::results::RunResult`], never from engine internals.

pub mod compare;
pub mod console;
pub mod csv;
pub mod html;
pub mod svg;
pub mod tables;
