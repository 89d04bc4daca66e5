//! vdbench parameter files as storlab jobs.

use super::import::{Converted, ImportError, Options};
use std::path::Path;

/// Converts the vdbench parameter file `text`, read from `path`.
pub fn convert(path: &Path, text: &str, opts: &Options) -> Result<Converted, ImportError> {
    let _ = (text, opts);
    Err(ImportError::Read(format!(
        "{}: vdbench files are not converted yet",
        path.display()
    )))
}
