//! Renderers of results files: the console table and live progress, the HTML report and its
//! SVG charts, comparisons of several results files, CSV and Markdown tables, cache curves.
//! Everything here is rendered from a [`crate::results::RunResult`] (or a curve computed from
//! one's block sample), never from engine internals.

pub(crate) mod compare;
pub(crate) mod console;
pub(crate) mod csv;
pub(crate) mod curve;
pub(crate) mod html;
pub(crate) mod svg;
pub(crate) mod tables;
