//! The NDJSON time series beside every results file (`run.json` → `run.ndjson`, one
//! [`IntervalRecord`] per line, written and flushed as each interval ends), read back: whole,
//! to inline it in a results file, or from a run that was killed (a last line cut off by the
//! kill is left out and said so). The one reader of that format: read within the cap of
//! time series (`crate::input`), a line of at most [`MAX_LINE_BYTES`], every number of a
//! line scanned before it is read as a record ([`super::validate`]).

use super::INLINE_INTERVALS;
use crate::input::{self, Kind};
use crate::stats::timeseries::IntervalRecord;
use anyhow::{Result, bail};
use std::io::{BufRead, Read};
use std::path::Path;

/// Longest first line looked at to tell a time series from a results file.
const SNIFF_BYTES: u64 = 1 << 20;

/// Longest line of a time series, bytes: an interval's record is a few KiB, or a few MiB for
/// a run over many hosts with thousands of classes (each with its histograms).
pub const MAX_LINE_BYTES: usize = 64 << 20;

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
/// A file that cannot be read as an input file (missing, a FIFO, too large) is not one.
pub fn is_timeseries(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e == "ndjson") {
        return true;
    }
    let Ok(file) = input::open(path, Kind::TimeSeries) else {
        return false;
    };
    let mut first = Vec::new();
    let mut head = std::io::BufReader::new(file.take(SNIFF_BYTES));
    if head.read_until(b'\n', &mut first).is_err() {
        return false;
    }
    serde_json::from_slice::<IntervalRecord>(&first).is_ok()
}

/// The next line of `input` without its newline, at most [`MAX_LINE_BYTES`] long; `None` at
/// the end. The bool says whether a newline ended it.
fn next_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
    line.clear();
    let limit = MAX_LINE_BYTES as u64 + 1;
    let n = input.take(limit).read_until(b'\n', line)?;
    if n == 0 {
        return Ok(None);
    }
    let ended = line.last() == Some(&b'\n');
    if ended {
        line.pop();
    } else if line.len() > MAX_LINE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "a line is longer than {} (an interval's record is a few KiB)",
                crate::units::format_size(MAX_LINE_BYTES as u64)
            ),
        ));
    }
    Ok(Some(ended))
}

/// Reads records from `input` (named `name` in errors): every complete line (ended by a
/// newline) must be a record, except that blank lines are skipped; a last line without its
/// newline is kept when it parses and otherwise left out as cut off. `None` when there are
/// more than `limit` records (reading stops there, so a long series is never held).
fn read_from(mut input: impl BufRead, name: &str, limit: usize) -> Result<Option<TimeSeries>> {
    let mut records = Vec::new();
    let mut cut_off = false;
    let mut line = Vec::new();
    let mut n = 0;
    loop {
        n += 1;
        let ended = match next_line(&mut input, &mut line) {
            Ok(Some(ended)) => ended,
            Ok(None) => break,
            Err(e) => bail!(
                "cannot read {name} line {n}: {}",
                crate::units::os_error_text(&e)
            ),
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let record = super::validate::scan_record(&line).and_then(|()| {
            serde_json::from_slice::<IntervalRecord>(&line).map_err(|e| e.to_string())
        });
        match record {
            Ok(_) if records.len() == limit => return Ok(None),
            Ok(record) => records.push(record),
            // The last line has no newline after it: the writer was stopped in the middle.
            Err(_) if !ended => cut_off = true,
            Err(e) => bail!("{name} line {n}: not an interval record of the time series: {e}"),
        }
    }
    Ok(Some(TimeSeries { records, cut_off }))
}

/// Parses NDJSON text (see [`read_from`]).
#[cfg(test)]
pub fn parse(text: &[u8], name: &str) -> Result<TimeSeries> {
    Ok(read_from(text, name, usize::MAX)?.expect("no limit"))
}

/// Reads the NDJSON time series at `path`, within the cap of time series.
pub fn read(path: &Path) -> Result<TimeSeries> {
    let file = input::open(path, Kind::TimeSeries)?;
    let name = path.display().to_string();
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    Ok(read_from(reader, &name, usize::MAX)?.expect("no limit"))
}

/// The series at `path` to inline in a results file: empty when the file is missing,
/// unreadable, cut off, or longer than [`INLINE_INTERVALS`].
pub fn read_inline(path: &Path) -> Vec<IntervalRecord> {
    let Ok(file) = input::open(path, Kind::TimeSeries) else {
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

    #[test]
    fn a_figure_no_run_makes_is_refused_with_its_line_and_place() {
        let mut text = ndjson(&[record(0, IntervalPhase::Measure)]);
        let mut bad = record(1, IntervalPhase::Measure);
        bad.total.read.latency_mean_ns = 1.7e308;
        // serde_json writes it as it is; the reader refuses it.
        text.push_str(&ndjson(&[bad]));
        text.push_str(&ndjson(&[record(2, IntervalPhase::Measure)]));
        let e = parse(text.as_bytes(), "t.ndjson").unwrap_err().to_string();
        assert!(
            e.starts_with("t.ndjson line 2: not an interval record of the time series: `total.read.latency_mean_ns` is 1.7e308"),
            "{e}"
        );
    }

    #[test]
    fn a_line_longer_than_any_record_is_refused_without_holding_it() {
        let mut text = ndjson(&[record(0, IntervalPhase::Measure)]).into_bytes();
        text.extend(std::iter::repeat_n(b' ', MAX_LINE_BYTES + 10));
        text.extend(b"\n");
        let e = parse(&text, "t.ndjson").unwrap_err().to_string();
        assert!(
            e.contains("cannot read t.ndjson line 2: a line is longer than 64 MiB"),
            "{e}"
        );
    }
}
