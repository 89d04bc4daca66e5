//! `storlab import-fio JOB.fio` (the storlab job on stdout, or in a file) and the job of
//! `storlab run --fio JOB.fio`: fio job files converted by [`crate::job::fio`].

use crate::job::fio::{self, Converted, FioError};
use crate::report::console;
use crate::{Usage, exit};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Converts `path`: errors are usage errors (exit 2), each prefixed by `flag` (the flag that
/// named the file, if one did); with `lenient`, what was left out is listed on stderr.
fn convert(path: &Path, lenient: bool, flag: &str) -> Result<Converted> {
    let converted = fio::convert(path, lenient).map_err(|e| match e {
        FioError::Read(m) => Usage(format!("{flag}{m}")),
        e @ FioError::Unsupported(..) => Usage(format!("{flag}{e}")),
    })?;
    for u in &converted.left_out {
        console::note(&format!("left out ({}): {}: {}", u.at, u.option, u.why));
    }
    Ok(converted)
}

/// `storlab import-fio`.
pub(super) fn import(path: &Path, lenient: bool, output: Option<&Path>) -> Result<i32> {
    let converted = convert(path, lenient, "")?;
    match output {
        Some(out) => {
            crate::files::write_output("the job", out, converted.toml.as_bytes())?;
            console::note(&format!(
                "storlab job: {} (run it with storlab run {})",
                out.display(),
                out.display()
            ));
        }
        None => console::print_text(converted.toml.trim_end()),
    }
    Ok(exit::OK)
}

/// The job of `storlab run --fio PATH`: its label (`PATH (converted from fio)`) and TOML.
pub(super) fn job_text(path: &Path, lenient: bool) -> Result<(PathBuf, String)> {
    let converted = convert(path, lenient, "--fio: ")?;
    let label = PathBuf::from(format!("{} (converted from fio)", path.display()));
    Ok((label, converted.toml))
}
