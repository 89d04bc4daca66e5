//! The NDJSON time series beside every results file (`run.json` → `run.ndjson`, one
//! [`IntervalRecord`] per line, written and flushed as each interval ends), read back: one
//! record at a time as a view needs it ([`Series`], the results file's `timeseries`: inlined
//! into the results file as it is written when short, charted at a bounded number of points),
//! or whole from a run that was killed (a last line cut off by the kill is left out and said
//! so). The one reader of that format: read within the cap of time series (`crate::input`), a
//! line of at most [`MAX_LINE_BYTES`], every number of a line scanned before it is read as a
//! record ([`super::validate`]). Nothing here holds more than one record of a file at a time,
//! except [`Series::within`] (at most as many as it is asked) and [`Series::records`] (for
//! exports of every interval).

use super::INLINE_INTERVALS;
use crate::input::{self, Kind};
use crate::stats::downsample::Downsampled;
use crate::stats::timeseries::IntervalRecord;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// Longest first line looked at to tell a time series from a results file.
const SNIFF_BYTES: u64 = 1 << 20;

/// Longest line of a time series, bytes: an interval's record is a few KiB, or a few MiB for
/// a run over many hosts with thousands of classes (each with its histograms).
pub(crate) const MAX_LINE_BYTES: usize = 64 << 20;

/// An NDJSON time series read back whole (in tests: storlab reads series one record at a
/// time).
#[cfg(test)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimeSeries {
    /// Every complete record, in file order.
    pub records: Vec<IntervalRecord>,
    /// The last line was cut off (the run was killed while writing it) and left out.
    pub cut_off: bool,
}

/// Whether `path` holds an NDJSON time series rather than a results file: its name ends in
/// `.ndjson`, or its first line is an interval record (a results file's first line is `{`).
/// A file that cannot be read as an input file (missing, a FIFO, too large) is not one.
pub(crate) fn is_timeseries(path: &Path) -> bool {
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

/// The records of an NDJSON time series, read one line at a time (`name` in errors): every
/// complete line (ended by a newline) must be a record, except that blank lines are skipped;
/// a last line without its newline is kept when it parses and otherwise left out as cut off.
struct Records<R> {
    input: R,
    name: String,
    line: Vec<u8>,
    /// The line read last, from 1.
    n: u64,
    /// The last line was cut off and left out.
    cut_off: bool,
}

impl<R: BufRead> Records<R> {
    fn new(input: R, name: &str) -> Records<R> {
        Records {
            input,
            name: name.to_string(),
            line: Vec::new(),
            n: 0,
            cut_off: false,
        }
    }

    /// The next record; `None` at the end.
    fn next_record(&mut self) -> Result<Option<IntervalRecord>> {
        loop {
            self.n += 1;
            let name = &self.name;
            let ended = match next_line(&mut self.input, &mut self.line) {
                Ok(Some(ended)) => ended,
                Ok(None) => return Ok(None),
                Err(e) => bail!(
                    "cannot read {name} line {}: {}",
                    self.n,
                    crate::units::os_error_text(&e)
                ),
            };
            if self.line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line = &self.line;
            let record = super::validate::scan_record(line).and_then(|()| {
                serde_json::from_slice::<IntervalRecord>(line).map_err(|e| e.to_string())
            });
            match record {
                Ok(record) => return Ok(Some(record)),
                // The last line has no newline after it: the writer was stopped in the middle.
                Err(_) if !ended => self.cut_off = true,
                Err(e) => bail!(
                    "{name} line {}: not an interval record of the time series: {e}",
                    self.n
                ),
            }
        }
    }
}

#[cfg(test)]
impl<R: BufRead> Records<R> {
    /// Every record left, and whether the last line was cut off.
    fn collect(mut self) -> Result<TimeSeries> {
        let mut records = Vec::new();
        while let Some(record) = self.next_record()? {
            records.push(record);
        }
        Ok(TimeSeries {
            records,
            cut_off: self.cut_off,
        })
    }
}

/// Parses NDJSON text (see [`Records`]).
#[cfg(test)]
pub(crate) fn parse(text: &[u8], name: &str) -> Result<TimeSeries> {
    Records::new(text, name).collect()
}

/// Opens the NDJSON time series at `path` to read its records one at a time.
fn open(path: &Path) -> Result<Records<impl BufRead>, input::Refused> {
    let file = input::open(path, Kind::TimeSeries)?;
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    Ok(Records::new(reader, &path.display().to_string()))
}

/// Reads the NDJSON time series at `path`, within the cap of time series.
#[cfg(test)]
pub(crate) fn read(path: &Path) -> Result<TimeSeries> {
    open(path)?.collect()
}

/// Reads the NDJSON time series at `path` one record at a time, within the cap of time series,
/// handing each to `each`: whether its last line was cut off (and left out).
pub(crate) fn read_each(path: &Path, mut each: impl FnMut(IntervalRecord)) -> Result<bool> {
    let mut lines = open(path)?;
    while let Some(record) = lines.next_record()? {
        each(record);
    }
    Ok(lines.cut_off)
}

/// A results file's interval records (its `timeseries`): the ones it holds, or, when it holds
/// none, those of the NDJSON time series beside it, read one at a time as a view needs them,
/// so that no view holds a long run's series.
///
/// In JSON it is the array of the records inlined: those held, or for a series read from its
/// file the file's records when there are at most [`INLINE_INTERVALS`] of them, streamed into
/// the results file as it is written (longer series, or one with a broken line, are `[]`: the
/// file holds them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// The records held: those a results file inlined, or made in memory (a merge of the ranks
    /// of a run over many hosts, results recovered from a time series, tests).
    pub held: Vec<IntervalRecord>,
    /// The NDJSON time series the records are read from when none are held.
    pub file: Option<PathBuf>,
}

/// Why a series could not be read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unread {
    /// Its file is not there (a results file moved without it).
    pub missing: bool,
    /// What went wrong, with the file and the line (`the time series r.ndjson is missing`,
    /// `r.ndjson line 7: not an interval record …`).
    pub why: String,
}

/// A series made short enough to chart (see [`Series::downsampled`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Charted {
    /// The points: intervals, or consecutive intervals of a run and phase merged.
    pub points: Vec<IntervalRecord>,
    /// The intervals read.
    pub intervals: u64,
    /// The most intervals one point merges (1: none).
    pub widest: u64,
    /// Why the series could not be read (whole): the points are those read before.
    pub unread: Option<Unread>,
}

impl Series {
    /// A series of the records held.
    pub(crate) fn held(records: Vec<IntervalRecord>) -> Series {
        Series {
            held: records,
            file: None,
        }
    }

    /// The series of the NDJSON time series at `path`, read when needed.
    pub(crate) fn of_file(path: PathBuf) -> Series {
        Series {
            held: Vec::new(),
            file: Some(path),
        }
    }

    /// Whether there is no series: no record held and no file to read.
    pub(crate) fn is_empty(&self) -> bool {
        self.held.is_empty() && self.file.is_none()
    }

    /// Calls `each` with every record, in order: those held, or each read from the file (a
    /// last line cut off is left out). The number of records; an error when the file cannot
    /// be read (after the records before the problem).
    pub(crate) fn each(&self, mut each: impl FnMut(&IntervalRecord)) -> Result<u64, Unread> {
        let Some(path) = self.file.as_ref().filter(|_| self.held.is_empty()) else {
            self.held.iter().for_each(&mut each);
            return Ok(self.held.len() as u64);
        };
        let mut lines = open(path).map_err(|e| Unread {
            missing: e.missing,
            why: match e.missing {
                true => format!("the time series {} is missing", path.display()),
                false => e.to_string(),
            },
        })?;
        let mut n = 0;
        loop {
            match lines.next_record() {
                Ok(Some(record)) => {
                    each(&record);
                    n += 1;
                }
                Ok(None) => return Ok(n),
                Err(e) => {
                    return Err(Unread {
                        missing: false,
                        why: format!("{e:#}"),
                    });
                }
            }
        }
    }

    /// The series at most about `limit` points long (at most twice that, see
    /// [`crate::stats::downsample`]), read in one pass in constant memory: consecutive
    /// intervals of a run and phase merged into one point when there are more.
    pub(crate) fn downsampled(&self, limit: usize) -> Charted {
        let mut points = Downsampled::new(limit);
        let unread = self.each(|r| points.push(r.clone())).err();
        Charted {
            intervals: points.pushed(),
            widest: points.widest(),
            points: points.into_points(),
            unread,
        }
    }

    /// Every record readable, in memory at once: those held, or those of the file up to a
    /// problem. For exports of every interval, whose output holds them all anyway.
    pub(crate) fn records(&self) -> std::borrow::Cow<'_, [IntervalRecord]> {
        if !self.held.is_empty() || self.file.is_none() {
            return std::borrow::Cow::Borrowed(&self.held);
        }
        let mut records = Vec::new();
        let _ = self.each(|r| records.push(r.clone()));
        std::borrow::Cow::Owned(records)
    }

    #[cfg(any(feature = "mpi", test))]
    /// The records when there are at most `limit` of them (and the file, if they are read
    /// from one, can be read: a last line cut off is left out); else none. Holds at most
    /// `limit` records.
    pub(crate) fn within(&self, limit: usize) -> Vec<IntervalRecord> {
        if !self.held.is_empty() {
            return match self.held.len() <= limit {
                true => self.held.clone(),
                false => Vec::new(),
            };
        }
        let mut records = Vec::new();
        match self
            .file
            .as_deref()
            .map(|p| up_to(p, limit, |r| records.push(r)))
        {
            Some(Some(_)) => records,
            _ => Vec::new(),
        }
    }
}

/// Hands `each` the records of the time series at `path` (a last line cut off is left out)
/// while there are at most `limit`: how many, or `None` when there are more, or the file
/// cannot be read.
fn up_to(path: &Path, limit: usize, mut each: impl FnMut(IntervalRecord)) -> Option<usize> {
    let mut lines = open(path).ok()?;
    let mut n = 0;
    loop {
        match lines.next_record() {
            Ok(Some(_)) if n == limit => return None,
            Ok(Some(record)) => {
                each(record);
                n += 1;
            }
            Ok(None) => return Some(n),
            Err(_) => return None,
        }
    }
}

impl Serialize for Series {
    /// The records held; for a series read from its file, the file's records streamed one
    /// at a time when they are at most [`INLINE_INTERVALS`] and every line is one (but a last
    /// line cut off, left out; a file that changed since it was counted ends the array where
    /// it stops being readable), else none.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let Some(path) = self.file.as_ref().filter(|_| self.held.is_empty()) else {
            return self.held.serialize(s);
        };
        // Counted first, keeping none: the array is written only when it is short.
        let count = up_to(path, INLINE_INTERVALS, drop);
        let mut seq = s.serialize_seq(Some(count.unwrap_or(0)))?;
        if let (Some(n), Ok(mut lines)) = (count, open(path)) {
            for _ in 0..n {
                match lines.next_record() {
                    Ok(Some(record)) => seq.serialize_element(&record)?,
                    _ => break,
                }
            }
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Series {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Series, D::Error> {
        Vec::<IntervalRecord>::deserialize(d).map(Series::held)
    }
}

impl schemars::JsonSchema for Series {
    fn inline_schema() -> bool {
        <Vec<IntervalRecord>>::inline_schema()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        <Vec<IntervalRecord>>::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        <Vec<IntervalRecord>>::schema_id()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Vec<IntervalRecord>>::json_schema(g)
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

    /// A series of `n` measured intervals of 10 ms (the first `ramp` of them ramp), with 10 + i % 3
    /// reads at a p99 of 1 + i % 7 µs, in a file `name` of `dir`.
    fn series_file(dir: &Path, name: &str, n: u64, ramp: u64) -> PathBuf {
        let records: Vec<IntervalRecord> = (0..n)
            .map(|i| {
                let mut r = record(i, IntervalPhase::Measure);
                if i < ramp {
                    r.phase = IntervalPhase::Ramp;
                }
                (r.t_end_ms, r.interval_ms) = ((i + 1) * 10, 10);
                r.total.read.ops = 10 + i % 3;
                r.total.read.iops = r.total.read.ops as f64 * 100.0;
                r.total.read.latency_p99_ns = 1000 * (1 + i % 7);
                r
            })
            .collect();
        let path = dir.join(name);
        std::fs::write(&path, ndjson(&records)).unwrap();
        path
    }

    #[test]
    fn a_series_read_from_its_file_is_inlined_only_when_short_and_readable() {
        let dir = tempfile::tempdir().unwrap();
        let json = |s: &Series| serde_json::to_value(s).unwrap();
        let short = series_file(dir.path(), "short.ndjson", 5, 0);
        let inlined = json(&Series::of_file(short.clone()));
        assert_eq!(
            inlined,
            serde_json::to_value(&read(&short).unwrap().records).unwrap()
        );
        let exactly = series_file(dir.path(), "cap.ndjson", INLINE_INTERVALS as u64, 0);
        let n = json(&Series::of_file(exactly)).as_array().unwrap().len();
        assert_eq!(n, INLINE_INTERVALS);
        let long = series_file(dir.path(), "long.ndjson", INLINE_INTERVALS as u64 + 1, 0);
        assert_eq!(json(&Series::of_file(long.clone())), serde_json::json!([]));
        // A last line cut off in its write is left out; a broken line or a missing file
        // inlines nothing.
        let text = std::fs::read(&short).unwrap();
        let cut = dir.path().join("cut.ndjson");
        std::fs::write(&cut, &text[..text.len() - 10]).unwrap();
        assert_eq!(json(&Series::of_file(cut)).as_array().unwrap().len(), 4);
        let broken = dir.path().join("broken.ndjson");
        std::fs::write(&broken, [&text[..], b"{oops\n", &text[..]].concat()).unwrap();
        assert_eq!(json(&Series::of_file(broken)), serde_json::json!([]));
        let gone = Series::of_file(dir.path().join("gone.ndjson"));
        assert_eq!(json(&gone), serde_json::json!([]));
        // Held records are the array, and read back as held.
        let held = Series::held(read(&short).unwrap().records);
        let back: Series = serde_json::from_value(json(&held)).unwrap();
        assert_eq!(back, held);
        assert_eq!(Series::of_file(long.clone()).within(INLINE_INTERVALS), []);
        assert_eq!(
            Series::of_file(long).within(usize::MAX).len(),
            INLINE_INTERVALS + 1
        );
    }

    #[test]
    fn a_series_is_read_one_record_at_a_time_and_says_what_it_cannot_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = series_file(dir.path(), "r.ndjson", 4, 0);
        let mut seen = Vec::new();
        let n = Series::of_file(path.clone()).each(|r| seen.push(r.index));
        assert_eq!((n, seen), (Ok(4), vec![0, 1, 2, 3]));
        let gone = dir.path().join("gone.ndjson");
        let e = Series::of_file(gone.clone()).each(|_| {}).unwrap_err();
        assert!(e.missing);
        assert_eq!(
            e.why,
            format!("the time series {} is missing", gone.display())
        );
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"index\": 4, broken\n");
        text.push_str(&ndjson(&[record(5, IntervalPhase::Measure)]));
        std::fs::write(&path, text).unwrap();
        let mut seen = 0;
        let e = Series::of_file(path.clone())
            .each(|_| seen += 1)
            .unwrap_err();
        assert!(
            !e.missing && e.why.contains("r.ndjson line 5: not an interval record"),
            "{e:?}"
        );
        assert_eq!(seen, 4, "the records before the problem");
        let charted = Series::of_file(path).downsampled(10);
        assert_eq!((charted.points.len(), charted.unread.is_some()), (4, true));
    }

    #[test]
    fn a_long_series_is_charted_at_a_bounded_number_of_merged_points() {
        let dir = tempfile::tempdir().unwrap();
        let n = 50_000;
        let path = series_file(dir.path(), "r.ndjson", n, 1000);
        let c = Series::of_file(path).downsampled(300);
        assert!((300..=600).contains(&c.points.len()), "{}", c.points.len());
        assert_eq!(c.intervals, n);
        assert!(c.widest > 1 && c.unread.is_none());
        // Nothing lost: every I/O, every millisecond, in order; the ramp merged apart.
        let ops: u64 = c.points.iter().map(|p| p.total.read.ops).sum();
        assert_eq!(ops, (0..n).map(|i| 10 + i % 3).sum::<u64>());
        let ms: u64 = c.points.iter().map(|p| p.interval_ms).sum();
        assert_eq!(ms, n * 10);
        assert_eq!(c.points.last().unwrap().t_end_ms, n * 10);
        let ramp: u64 = (c.points.iter())
            .filter(|p| p.phase == IntervalPhase::Ramp)
            .map(|p| p.interval_ms)
            .sum();
        assert_eq!(ramp, 1000 * 10);
        for p in &c.points {
            // Rates over the point's time: its I/Os over its length.
            let rate = p.total.read.ops as f64 / (p.interval_ms as f64 / 1e3);
            assert!((p.total.read.iops - rate).abs() < 1e-6 * rate, "{p:?}");
            assert!(p.total.read.latency_p99_ns <= 7000);
        }
        assert_eq!(
            c.points[0].total.read.latency_p99_ns, 7000,
            "the largest of its intervals'"
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
