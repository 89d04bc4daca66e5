//! The NDJSON time series beside every results file (`run.json` → `run.ndjson`, one
//! [`IntervalRecord`] per line, written and flushed as each interval ends), read back: whole,
//! to inline it in a results file, or from a run that was killed (a last line cut off by the
//! kill is left out and said so). The one reader of that format.

use super::INLINE_INTERVALS;
use crate::stats::timeseries::IntervalRecord;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, Read};
use std::path::Path;

/// Longest first line looked at to tell a time series from a results file.
const SNIFF_BYTES: u64 = 1 << 20;

/// An NDJSON time series read back.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSeries {
    /// Every complete record, in file order.
    pub records: Vec<IntervalRecord>,
    /// The last line was cut off (the run was killed while writing it) and left out.
    pub cut_off: bool,
}

/// Whether `path` holds an NDJSON time series rather than a results file: its name ends in
/// `.ndjson`, or its first line is an interval record (a results file's first line is `{`).
pub fn is_timeseries(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e == "ndjson") {
        return true;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = Vec::new();
    let mut head = std::io::BufReader::new(file.take(SNIFF_BYTES));
    if head.read_until(b'\n', &mut first).is_err() {
        return false;
    }
    serde_json::from_slice::<IntervalRecord>(&first).is_ok()
}

/// Reads records from `input` (named `name` in errors): every complete line (ended by a
/// newline) must be a record, except that blank lines are skipped; a last line without its
/// newline is kept when it parses and otherwise left out as cut off. `None` when there are
/// more than `limit` records (reading stops there, so a long series is never held).
fn read_from(input: impl BufRead, name: &str, limit: usize) -> Result<Option<TimeSeries>> {
    let mut records = Vec::new();
    let mut cut_off = false;
    let mut lines = input.split(b'\n').enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let line = line.with_context(|| format!("cannot read {name}"))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<IntervalRecord>(&line) {
            Ok(_) if records.len() == limit => return Ok(None),
            Ok(record) => records.push(record),
            // The last line has no newline after it: the writer was stopped in the middle.
            Err(_) if lines.peek().is_none() => cut_off = true,
            Err(e) => bail!(
                "{name} line {}: not an interval record of the time series: {e}",
                n + 1
            ),
        }
    }
    Ok(Some(TimeSeries { records, cut_off }))
}

/// Parses NDJSON text (see [`read_from`]).
#[cfg(test)]
pub fn parse(text: &[u8], name: &str) -> Result<TimeSeries> {
    Ok(read_from(text, name, usize::MAX)?.expect("no limit"))
}

/// Reads the NDJSON time series at `path`.
pub fn read(path: &Path) -> Result<TimeSeries> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read the time series {}", path.display()))?;
    let name = path.display().to_string();
    Ok(read_from(std::io::BufReader::new(file), &name, usize::MAX)?.expect("no limit"))
}

/// The series at `path` to inline in a results file: empty when the file is missing,
/// unreadable, cut off, or longer than [`INLINE_INTERVALS`].
pub fn read_inline(path: &Path) -> Vec<IntervalRecord> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    match read_from(std::io::BufReader::new(file), "", INLINE_INTERVALS) {
        Ok(Some(series)) if !series.cut_off => series.records,
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::timeseries::IntervalPhase;

    fn record(index: u64, phase: IntervalPhase) -> IntervalRecord {
        IntervalRecord {
            index,
            phase,
            t_end_ms: (index + 1) * 1000,
            interval_ms: 1000,
            ..Default::default()
        }
    }

    fn ndjson(records: &[IntervalRecord]) -> String {
        records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect()
    }

    #[test]
    fn a_cut_off_last_line_is_left_out_and_said_so() {
        let text = ndjson(&[
            record(0, IntervalPhase::Ramp),
            record(1, IntervalPhase::Measure),
        ]);
        let whole = parse(text.as_bytes(), "t").unwrap();
        assert_eq!(whole.records.len(), 2);
        assert!(!whole.cut_off);
        let cut = &text[..text.len() - 20];
        let part = parse(cut.as_bytes(), "t").unwrap();
        assert_eq!(part.records.len(), 1);
        assert!(part.cut_off);
        // A complete last record without its newline is kept.
        let unended = parse(text.trim_end().as_bytes(), "t").unwrap();
        assert_eq!(unended.records.len(), 2);
        assert!(!unended.cut_off);
    }

    #[test]
    fn a_broken_line_in_the_middle_is_an_error() {
        let mut text = ndjson(&[record(0, IntervalPhase::Measure)]);
        text.push_str("{\"index\": 1, broken\n");
        text.push_str(&ndjson(&[record(2, IntervalPhase::Measure)]));
        let e = parse(text.as_bytes(), "t.ndjson").unwrap_err().to_string();
        assert!(e.contains("t.ndjson line 2"), "{e}");
    }
}
