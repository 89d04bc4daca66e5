//! vdbench parameter files as storlab jobs (`storlab import FILE`, `storlab run FILE`). The file
//! is read as vdbench reads it (`parse.rs`: comments, continued lines, lists, ranges,
//! `default` definitions); each storage definition (`sd`) becomes a `[[target]]`, each run
//! definition's storage definitions a `[[worker]]` each whose queue depth is vdbench's threads
//! (outstanding I/Os per storage definition), and each workload definition (`wd`) an access
//! entry on each of its storage definitions, weighted by its skew (`defs.rs`). The run
//! definitions (`runs.rs`) give the duration, interval, ramp, rate (`iorate`: max, a rate,
//! a list, or the curve) and `[cycle]` lists (`forxfersize`, `forrdpct`, `forseekpct`,
//! `forthreads`); several run one after another, a worker group each. `compratio`,
//! `dedupratio` and `dedupunit` become the `[data]` table. Every part of the job is preceded by
//! a comment naming its source line; what cannot be converted is listed with its line and
//! refused unless lenient.

use super::{Converted, ImportError, Options};
use std::fmt::Write as _;
use std::path::Path;

mod defs;
mod fs;
mod parse;
mod runs;
#[cfg(test)]
mod tests;

use defs::{Out, q};

/// Converts the vdbench parameter file `text`, read from `path`.
pub(super) fn convert(path: &Path, text: &str, opts: &Options) -> Result<Converted, ImportError> {
    let all = parse::read(path, text)?;
    let mut out = Out {
        path,
        unsupported: Vec::new(),
        notes: Vec::new(),
    };
    let general = defs::general(&all, &mut out);
    defs::hosts(&all, &mut out);
    if fs::is_fs(&all) {
        let section = fs::convert(&all, opts, &mut out);
        out.unsupported.sort_by_key(|u| line_of(&u.at));
        if !out.unsupported.is_empty() && !opts.lenient {
            return Err(ImportError::Unsupported(
                out.unsupported,
                path.display().to_string(),
            ));
        }
        let Some(section) = section else {
            return Err(ImportError::Read(format!(
                "{}: no file-system definition (fsd=) for the workloads (fwd=): storlab has nothing to run",
                path.display()
            )));
        };
        let toml = render_fs(path, &general, &section, &out);
        return Ok(Converted {
            toml,
            left_out: out.unsupported,
            read: Vec::new(),
        });
    }
    let sds = defs::sds(&all, opts, &mut out);
    let wds = defs::wds(&all, &sds, &mut out);
    let runs = runs::runs(&all, &sds, &wds, &mut out).map_err(ImportError::Read)?;
    out.unsupported.sort_by_key(|u| line_of(&u.at));
    if !out.unsupported.is_empty() && !opts.lenient {
        return Err(ImportError::Unsupported(
            out.unsupported,
            path.display().to_string(),
        ));
    }
    if runs.groups == 0 || runs.used.is_empty() {
        return Err(ImportError::Read(format!(
            "{}: no run definition (rd=) runs a workload (wd=) on a storage definition (sd=): storlab has nothing to run",
            path.display()
        )));
    }
    let toml = render(path, &general, &runs, &sds, &out);
    Ok(Converted {
        toml,
        left_out: out.unsupported,
        read: Vec::new(),
    })
}

/// The line number of `FILE:LINE`, for sorting.
fn line_of(at: &str) -> usize {
    at.rsplit(':')
        .next()
        .and_then(|l| l.parse().ok())
        .unwrap_or(0)
}

/// The comments every converted job starts with: notes and what was left out.
fn head(t: &mut String, out: &Out) {
    // A comment is one line, of no control characters (TOML allows none but tab).
    let line = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    };
    for n in &out.notes {
        let _ = writeln!(t, "# {}", line(n));
    }
    for u in &out.unsupported {
        let _ = writeln!(
            t,
            "# left out ({}): {}: {}",
            line(&u.at),
            line(&u.option),
            u.why
        );
    }
}

/// A file-system parameter file's job: its `[fs]` section, and `[data]`.
fn render_fs(path: &Path, general: &defs::General, section: &str, out: &Out) -> String {
    let mut t = format!(
        "# Converted from the vdbench parameter file {} by storlab import: a file-system workload\n\
         # (storlab fs). vdbench's fsd is the tree, each fwd a workload, each rd a run.\n",
        path.display()
    );
    head(&mut t, out);
    if !general.data.is_empty() {
        let _ = write!(t, "\n[data]\n{}", general.data);
    }
    t.push_str(section);
    t
}

fn render(
    path: &Path,
    general: &defs::General,
    runs: &runs::Runs,
    sds: &[defs::Sd],
    out: &Out,
) -> String {
    let mut t = format!(
        "# Converted from the vdbench parameter file {} by storlab import.\n\
         # vdbench's threads (outstanding I/Os per storage definition) are each worker's queue_depth: one storlab\n\
         # worker per storage definition and run definition keeps that many I/Os in flight on it.\n",
        path.display()
    );
    head(&mut t, out);
    t.push_str(&runs.level.top);
    if runs.buffered == Some(true) {
        t.push_str(
            "# no openflags=o_direct: vdbench goes through the page cache\nbuffered = true\n",
        );
    }
    t.push_str(&general.top);
    if !general.data.is_empty() {
        let _ = write!(t, "\n[data]\n{}", general.data);
    }
    if runs.groups > 1 || !runs.level.cycle.is_empty() {
        t.push_str("\n[cycle]\n");
        if runs.groups > 1 {
            let list: Vec<String> = (1..=runs.groups).map(|g| g.to_string()).collect();
            let _ = writeln!(
                t,
                "# vdbench's run definitions, one after another: a group of workers each\ngroup = [{}]",
                list.join(", ")
            );
        }
        t.push_str(&runs.level.cycle);
    }
    for &s in &runs.used {
        let sd = &sds[s];
        let _ = write!(
            t,
            "\n{}[[target]]\nname = {}\npath = {}\n",
            out.comment(sd.line, &sd.text),
            q(&sd.name),
            q(&sd.path)
        );
        if let Some(b) = sd.size {
            let _ = writeln!(t, "size = {}", q(&crate::units::format_size_exact(b)));
        }
    }
    t.push_str(&runs.workers);
    t
}
