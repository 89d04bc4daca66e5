//! Everything rendered from a [`run_result::RunResult`]: the results file itself, the console
//! table and live progress.

pub mod compare;
pub mod console;
pub mod csv;
pub mod html;
pub mod json;
pub mod recovered;
pub mod run_result;
pub mod svg;
