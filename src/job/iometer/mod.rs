//! Iometer configuration files (`.icf`) as storlab jobs.

use super::import::{Converted, ImportError, Options};
use std::path::Path;

/// Converts the Iometer configuration file `text`, read from `path`.
pub fn convert(path: &Path, text: &str, opts: &Options) -> Result<Converted, ImportError> {
    let _ = (text, opts);
    Err(ImportError::Read(format!(
        "{}: Iometer files are not converted yet",
        path.display()
    )))
}
