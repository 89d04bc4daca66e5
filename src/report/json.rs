//! Reading and writing results files.

use super::run_result::{RunResult, SCHEMA_VERSION};
use anyhow::{Context, Result, bail};
use std::path::Path;

/// Loads a results file, checking its schema version.
pub fn load(path: &Path) -> Result<RunResult> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the results file {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == SCHEMA_VERSION as u64 => {}
        Some(v) => bail!(
            "{} has schema_version {v}; this storlab reads version {SCHEMA_VERSION}",
            path.display()
        ),
        None => bail!(
            "{} is not a storlab results file (no schema_version)",
            path.display()
        ),
    }
    serde_json::from_value(value)
        .with_context(|| format!("{} does not match the results schema", path.display()))
}

/// The results as pretty JSON.
pub fn to_string(result: &RunResult) -> Result<String> {
    Ok(serde_json::to_string_pretty(result)?)
}
