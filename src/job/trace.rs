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
    /// Its format (`msr`, `blkparse`); `None`: from its first line.
    pub format: Option<String>,
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
    if let Some(f) = t.format.as_deref() {
        if !["msr", "csv", "blkparse", "blktrace"].contains(&f) {
            return Err((
                "format",
                format!("unknown trace format `{f}`; use msr or blkparse"),
            ));
        }
    }
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
        format: t.format.clone(),
        speed,
    })
}
