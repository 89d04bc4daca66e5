//! Iometer configuration files (`.icf`) as storlab jobs. `parse` reads the file as Iometer
//! 1998–2014 and its ports save it; `plan` turns its test setup, access specifications and
//! managers' disk workers into storlab's workers, targets and cycle; `render` writes the
//! TOML, each part preceded by a comment naming the `.icf` line it came from. Network workers,
//! reply sizes, transfer delays in bursts, connection rates and serial target increments have
//! no faithful storlab form: they are listed as unsupported (refused unless lenient).

mod parse;
mod plan;
mod render;

use super::{Converted, ImportError, Options};
use std::path::Path;

/// Converts the Iometer configuration file `text`, read from `path`.
pub(super) fn convert(path: &Path, text: &str, opts: &Options) -> Result<Converted, ImportError> {
    let file = path.display().to_string();
    let icf = parse::parse(&file, text).map_err(ImportError::Read)?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut job = plan::plan(&file, &icf, opts, cpus).map_err(ImportError::Read)?;
    job.unsupported.sort_by_key(|u| {
        u.at.rsplit_once(':')
            .and_then(|(_, l)| l.parse::<usize>().ok())
            .unwrap_or(0)
    });
    if !job.unsupported.is_empty() && !opts.lenient {
        return Err(ImportError::Unsupported(job.unsupported, file));
    }
    if job.workers.is_empty() {
        return Err(ImportError::Read(format!(
            "{file}: no disk worker with both an access specification and a target: Iometer would run nothing, and neither can storlab; assign each worker an access specification and a target"
        )));
    }
    Ok(Converted {
        toml: render::render(&file, &icf, &job),
        left_out: job.unsupported,
        read: Vec::new(),
    })
}

#[cfg(test)]
mod tests;
