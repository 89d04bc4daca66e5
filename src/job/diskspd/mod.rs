//! DiskSpd XML profiles and command lines as storlab jobs.

use super::import::{Converted, ImportError, Options};
use std::path::Path;

/// Converts the DiskSpd XML profile `text`, read from `path`.
pub fn convert(path: &Path, text: &str, opts: &Options) -> Result<Converted, ImportError> {
    let _ = (text, opts);
    Err(ImportError::Read(format!(
        "{}: DiskSpd profiles are not converted yet",
        path.display()
    )))
}

/// Converts a DiskSpd command line (`-b8K -d60 -o4 -t2 -r -w30 -Sh D:\\test.dat`), as given
/// to `storlab run --diskspd`.
pub fn convert_args(args: &str, opts: &Options) -> Result<Converted, ImportError> {
    let _ = (args, opts);
    Err(ImportError::Read(
        "DiskSpd command lines are not converted yet".into(),
    ))
}
