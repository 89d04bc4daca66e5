//! A worker that replays a block trace (`trace = { file = ..., speed = ... }` on a
//! `[[worker]]`): its settings as validated. The trace itself is read when the run starts.

use super::spec::{SpeedSpec, TraceSpec};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A validated trace replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceReplay {
    /// The trace file.
    pub file: PathBuf,
    /// Its format; `None`: from its first line.
    pub format: Option<Format>,
    /// How much faster than recorded (1: as recorded); `None`: as fast as possible (closed
    /// loop at the worker's queue depth).
    pub speed: Option<f64>,
}

/// The replay a worker's `trace` table asks for, or the key at fault and why.
pub(super) fn resolve(t: &TraceSpec) -> Result<TraceReplay, (&'static str, String)> {
    let file = t.file.clone().ok_or((
        "file",
        "a trace needs its file, e.g. trace = { file = \"usr_0.csv\" }".to_string(),
    ))?;
    let format = (t.format.as_deref())
        .map(Format::parse)
        .transpose()
        .map_err(|e| ("format", e))?;
    let speed = match &t.speed {
        None => Some(1.0),
        Some(SpeedSpec::Times(x)) if *x > 0.0 && x.is_finite() && *x <= 1e6 => Some(*x),
        Some(SpeedSpec::Times(x)) => {
            return Err((
                "speed",
                format!(
                    "speed {x}: give a factor above 0 (1: as recorded, 2: twice as fast) or \"max\""
                ),
            ));
        }
        Some(SpeedSpec::Word(w)) if w == "max" => None,
        Some(SpeedSpec::Word(w)) => {
            return Err((
                "speed",
                format!(
                    "speed `{w}`: give a factor (1: as recorded) or \"max\" (as fast as possible)"
                ),
            ));
        }
    };
    Ok(TraceReplay {
        file,
        format,
        speed,
    })
}

/// A trace format (the formats themselves are read by `crate::trace::formats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// MSR Cambridge / SNIA IOTTA CSV.
    Msr,
    /// blkparse's default text output.
    Blkparse,
}

impl Format {
    /// The format named `name` (`msr`, `blkparse`).
    pub(crate) fn parse(name: &str) -> Result<Format, String> {
        match name {
            "msr" | "csv" => Ok(Format::Msr),
            "blkparse" | "blktrace" => Ok(Format::Blkparse),
            other => Err(format!(
                "unknown trace format `{other}`; use msr (SNIA IOTTA / MSR Cambridge CSV) or blkparse"
            )),
        }
    }

    /// The format of a trace whose first non-empty line is `line`: a comma-separated line is
    /// MSR's, one starting `MAJ,MIN ` blkparse's.
    pub(crate) fn sniff(line: &str) -> Option<Format> {
        let first = line.split_whitespace().next()?;
        if line.contains(',') && first.split(',').count() >= 6 {
            Some(Format::Msr)
        } else if first.split(',').count() == 2
            && first.split(',').all(|p| p.parse::<u32>().is_ok())
        {
            Some(Format::Blkparse)
        } else {
            None
        }
    }
}
