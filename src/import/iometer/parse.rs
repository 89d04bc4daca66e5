//! Reads an Iometer configuration file (`.icf`) as Iometer 1998–2014 and its ports save it:
//! lines that start with `'` name an entry (or are the column headings of the values after
//! them), the lines after them hold its values; `Version ...` lines open and close the file.
//! Keys are compared without case, spacing or the `====` rulers; values with named columns
//! (the access specification lines, the worker's target settings) are read by their column's
//! name, so files with fewer or more columns (older and newer versions) read alike. Entries a
//! file leaves out keep Iometer's defaults. Every count is capped before anything is kept.

use crate::import::Unsupported;

/// Access specifications a file may hold (Iometer's own files hold a few dozen).
pub(super) const MAX_SPECS: usize = 4096;
/// Lines of one access specification (Iometer's editor allows 100).
pub(super) const MAX_SPEC_LINES: usize = 1024;
/// Workers (with their managers) and targets a file may name.
pub(super) const MAX_WORKERS: usize = crate::job::MAX_WORKERS;

/// A value and the line it is on.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct At<T> {
    pub line: usize,
    pub v: T,
}

/// `'Worker Cycling`, `'Disk Cycling`, `'Queue Depth Cycling`: start, end (queue depth only),
/// step and step type.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cycling {
    pub start: u64,
    pub end: Option<u64>,
    pub step: u64,
    pub exponential: bool,
}

/// `'TEST SETUP`.
#[derive(Debug, Clone, Default)]
pub(super) struct Setup {
    pub description: Option<At<String>>,
    /// Run time, seconds (hours, minutes and seconds added up); 0: until stopped.
    pub run_time: Option<At<u64>>,
    pub ramp: Option<At<u64>>,
    /// Default disk workers to spawn: `None` for `NUMBER_OF_CPUS`.
    pub disk_workers: Option<At<Option<u64>>>,
    pub network_workers: Option<At<Option<u64>>>,
    pub record: Option<At<String>>,
    pub worker_cycling: Option<At<Cycling>>,
    pub disk_cycling: Option<At<Cycling>>,
    pub queue_cycling: Option<At<Cycling>>,
    pub test_type: Option<At<String>>,
}

/// One line of an access specification.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SpecLine {
    pub line: usize,
    pub text: String,
    pub size: u64,
    pub share: u64,
    pub reads: u64,
    pub random: u64,
    pub delay: u64,
    pub burst: u64,
    pub align: u64,
    pub reply: u64,
}

/// `'Access specification name,default assignment` and its lines.
#[derive(Debug, Clone)]
pub(super) struct Spec {
    pub line: usize,
    pub name: String,
    /// `NONE`, `ALL`, `DISK` or `NET` (older files write 0–3).
    pub assign: String,
    pub lines: Vec<SpecLine>,
}

/// A worker's `'Target`.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub line: usize,
    /// As written: `C: "Local Disk"`, `PHYSICALDRIVE:1`, `sdb`.
    pub text: String,
    pub kind: Option<At<String>>,
}

/// A `'Worker`.
#[derive(Debug, Clone, Default)]
pub(super) struct Worker {
    pub line: usize,
    pub name: String,
    pub kind: Option<At<String>>,
    /// Number of outstanding I/Os (default 1).
    pub outstanding: Option<At<u64>>,
    /// Test connection rate: `Some(transactions per connection)` when ENABLED.
    pub connection_rate: Option<At<u64>>,
    /// Use fixed seed: its value when ENABLED.
    pub seed: Option<At<u64>>,
    /// Disk maximum size, sectors (0: the whole disk).
    pub max_sectors: Option<At<u64>>,
    pub start_sector: Option<At<u64>>,
    /// Data pattern (2008 and later: 0 repeating bytes, 1 pseudo-random, 2 full random).
    pub data_pattern: Option<At<u64>>,
    pub specs: Vec<At<String>>,
    pub targets: Vec<Target>,
}

/// A `'Manager ID, manager name` and its workers.
#[derive(Debug, Clone, Default)]
pub(super) struct Manager {
    pub name: String,
    pub address: Option<At<String>>,
    pub workers: Vec<Worker>,
}

/// A whole `.icf`.
#[derive(Debug, Clone, Default)]
pub(super) struct Icf {
    pub version: Option<At<String>>,
    pub setup: Setup,
    pub specs: Vec<Spec>,
    pub managers: Vec<Manager>,
    /// Entries storlab does not know.
    pub unknown: Vec<Unsupported>,
    /// Entries read but with no effect in storlab (results display), with their line.
    pub ignored: Vec<At<String>>,
}

enum Item<'a> {
    Key(usize, &'a str),
    Value(usize, &'a str),
}

/// A key as compared: lower case, no ruler, single spaces, no space around commas.
fn norm(raw: &str) -> String {
    let t = raw.trim_start_matches('\'').trim().trim_end_matches('=');
    let words: Vec<&str> = t.split_whitespace().collect();
    words
        .join(" ")
        .to_ascii_lowercase()
        .replace(" ,", ",")
        .replace(", ", ",")
}

struct Reader<'a> {
    items: Vec<Item<'a>>,
    i: usize,
    file: String,
}

impl<'a> Reader<'a> {
    fn at(&self, line: usize) -> String {
        format!("{}:{line}", self.file)
    }

    fn err(&self, line: usize, msg: impl std::fmt::Display) -> String {
        format!("{}: {msg}", self.at(line))
    }

    /// The next value, when the next item is one.
    fn value(&mut self) -> Option<(usize, &'a str)> {
        match self.items.get(self.i) {
            Some(Item::Value(n, t)) => {
                self.i += 1;
                Some((*n, t))
            }
            _ => None,
        }
    }

    /// The next value, required: `what` names it in the error.
    fn need(&mut self, key_line: usize, what: &str) -> Result<(usize, &'a str), String> {
        self.value().ok_or_else(|| {
            self.err(
                key_line,
                format!(
                    "`{what}` has no value on the line after it; write one as Iometer saves it"
                ),
            )
        })
    }

    /// Skips the column-heading comment lines that start with one of `heads`, and returns the
    /// last one skipped.
    fn headings(&mut self, heads: &[&str]) -> Option<String> {
        let mut last = None;
        while let Some(Item::Key(_, raw)) = self.items.get(self.i) {
            let k = norm(raw);
            if !heads.iter().any(|h| k.starts_with(h)) {
                break;
            }
            last = Some(k);
            self.i += 1;
        }
        last
    }

    /// Skips the values up to the next key.
    fn skip_values(&mut self) {
        while self.value().is_some() {}
    }
}

fn number(r: &Reader, line: usize, what: &str, text: &str) -> Result<u64, String> {
    text.trim().parse::<u64>().map_err(|_| {
        r.err(
            line,
            format!(
                "{what} `{}` is not a whole number of 0 or more",
                text.trim()
            ),
        )
    })
}

/// `NUMBER_OF_CPUS` (`None`) or a count.
fn spawn(r: &Reader, line: usize, what: &str, text: &str) -> Result<Option<u64>, String> {
    if text.trim().eq_ignore_ascii_case("NUMBER_OF_CPUS") {
        return Ok(None);
    }
    let n = number(r, line, what, text)?;
    if n > MAX_WORKERS as u64 {
        return Err(r.err(
            line,
            format!("{what} {n}: storlab runs at most {MAX_WORKERS} workers"),
        ));
    }
    Ok(Some(n))
}

fn cycling(r: &Reader, line: usize, what: &str, text: &str) -> Result<Cycling, String> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let (nums, kind) = match parts.split_last() {
        Some((k, nums)) if k.parse::<u64>().is_err() => (nums, Some(*k)),
        _ => (&parts[..], None),
    };
    let exponential = match kind.map(str::to_ascii_uppercase).as_deref() {
        None | Some("LINEAR") => false,
        Some("EXPONENTIAL") => true,
        Some(other) => {
            return Err(r.err(
                line,
                format!("{what}: step type `{other}` is neither LINEAR nor EXPONENTIAL"),
            ));
        }
    };
    let n: Vec<u64> = nums
        .iter()
        .map(|t| number(r, line, what, t))
        .collect::<Result<_, _>>()?;
    let (start, end, step) = match n[..] {
        [start, step] => (start, None, step),
        [start, end, step] => (start, Some(end), step),
        _ => {
            return Err(r.err(
                line,
                format!(
                    "{what} `{}`: expected start, step and step type (queue depth: start, end, step and step type)",
                    text.trim()
                ),
            ));
        }
    };
    Ok(Cycling {
        start,
        end,
        step,
        exponential,
    })
}

/// Values with named columns: `heading` (`size,% of size,...`) and `text` (`4096,100,...`),
/// as (column, value) pairs.
fn columns(heading: &str, text: &str) -> Vec<(String, String)> {
    heading
        .split(',')
        .map(|c| c.trim().to_string())
        .zip(text.split(',').map(|v| v.trim().to_string()))
        .collect()
}

fn column<'c>(cols: &'c [(String, String)], name: &str) -> Option<&'c str> {
    cols.iter()
        .find(|(c, _)| c == name)
        .map(|(_, v)| v.as_str())
}

fn spec_line(r: &Reader, line: usize, heading: &str, text: &str) -> Result<SpecLine, String> {
    let cols = columns(heading, text);
    let get = |name: &str, default: u64| -> Result<u64, String> {
        match column(&cols, name) {
            None | Some("") => Ok(default),
            Some(v) => number(r, line, name, v),
        }
    };
    let size = match column(&cols, "size") {
        Some(v) if !v.is_empty() => number(r, line, "size", v)?,
        _ => {
            return Err(r.err(
                line,
                "an access specification line without a size; write size,% of size,% reads,% random,delay,burst,align,reply",
            ));
        }
    };
    let l = SpecLine {
        line,
        text: text.trim().to_string(),
        size,
        share: get("% of size", 100)?,
        reads: get("% reads", 100)?,
        random: get("% random", 0)?,
        delay: get("delay", 0)?,
        burst: get("burst", 1)?,
        align: get("align", 0)?,
        reply: get("reply", 0)?,
    };
    for (what, v) in [
        ("% of size", l.share),
        ("% reads", l.reads),
        ("% random", l.random),
    ] {
        if v > 100 {
            return Err(r.err(line, format!("{what} {v} is more than 100")));
        }
    }
    Ok(l)
}

/// A worker's target settings row (`'Number of outstanding IOs,...` or `'Disk maximum
/// size,...`).
fn settings(
    r: &Reader,
    w: &mut Worker,
    line: usize,
    heading: &str,
    text: &str,
) -> Result<(), String> {
    let cols = columns(heading, text);
    let num = |name: &str| -> Result<Option<At<u64>>, String> {
        match column(&cols, name) {
            None | Some("") => Ok(None),
            Some(v) => Ok(Some(At {
                line,
                v: number(r, line, name, v)?,
            })),
        }
    };
    let enabled = |name: &str| {
        column(&cols, name).is_some_and(|v| v.eq_ignore_ascii_case("ENABLED") || v == "1")
    };
    if let Some(o) = num("number of outstanding ios")? {
        w.outstanding = Some(o);
    }
    if enabled("test connection rate") {
        let per = num("transactions per connection")?.map_or(1, |a| a.v);
        w.connection_rate = Some(At { line, v: per });
    }
    if enabled("use fixed seed") {
        let seed = num("fixed seed value")?.map_or(0, |a| a.v);
        w.seed = Some(At { line, v: seed });
    }
    if let Some(m) = num("disk maximum size")? {
        w.max_sectors = Some(m);
    }
    if let Some(s) = num("starting sector")? {
        w.start_sector = Some(s);
    }
    if let Some(p) = num("data pattern")? {
        w.data_pattern = Some(p);
    }
    Ok(())
}

/// Reads `text`, the `.icf` file `file`.
pub(super) fn parse(file: &str, text: &str) -> Result<Icf, String> {
    let mut items = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        if l.is_empty() {
            continue;
        }
        if l.starts_with('\'') {
            items.push(Item::Key(i + 1, l));
        } else {
            items.push(Item::Value(i + 1, l));
        }
    }
    let mut r = Reader {
        items,
        i: 0,
        file: file.to_string(),
    };
    let mut icf = Icf::default();
    // Inside 'RESULTS DISPLAY: its entries are skipped.
    let mut display = false;
    while r.i < r.items.len() {
        let (line, raw) = match r.items[r.i] {
            Item::Value(n, t) => {
                r.i += 1;
                if t.to_ascii_lowercase().starts_with("version") {
                    icf.version.get_or_insert(At {
                        line: n,
                        v: t["version".len()..].trim().to_string(),
                    });
                } else {
                    icf.unknown.push(Unsupported {
                        at: r.at(n),
                        option: t.to_string(),
                        why: "a value outside any Iometer entry (the line before it should name its entry, starting with ')".into(),
                    });
                }
                continue;
            }
            Item::Key(n, t) => (n, t),
        };
        r.i += 1;
        let k = norm(raw);
        if display && !k.starts_with("end") {
            r.skip_values();
            continue;
        }
        match k.as_str() {
            "results display" => {
                display = true;
                icf.ignored.push(At {
                    line,
                    v: "RESULTS DISPLAY: Iometer's on-screen charts; storlab reports every figure"
                        .into(),
                });
            }
            "end test setup"
            | "end results display"
            | "end access specifications"
            | "end manager list" => display = false,
            "test setup"
            | "access specifications"
            | "manager list"
            | "end manager"
            | "end worker"
            | "end target"
            | "end target assignments"
            | "end assigned access specs"
            | "end default target settings for worker"
            | "default target settings for worker"
            | "target assignments" => {}
            _ => {
                if !setup_entry(&mut r, &mut icf, line, raw, &k)?
                    && !list_entry(&mut r, &mut icf, line, &k)?
                {
                    worker_entry(&mut r, &mut icf, line, raw, &k)?;
                }
            }
        }
    }
    Ok(icf)
}

/// An entry of `'TEST SETUP`: whether `k` is one.
fn setup_entry(
    r: &mut Reader,
    icf: &mut Icf,
    line: usize,
    raw: &str,
    k: &str,
) -> Result<bool, String> {
    match k {
        "test description" => {
            let v = r.value().map(|(_, t)| t.to_string()).unwrap_or_default();
            icf.setup.description = Some(At { line, v });
        }
        "run time" => {
            r.headings(&["hours"]);
            let (vl, t) = r.need(line, "Run Time")?;
            let n: Vec<u64> = t
                .split_whitespace()
                .map(|x| number(r, vl, "run time", x))
                .collect::<Result<_, _>>()?;
            let secs = match n[..] {
                [h, m, s] if h <= 1_000_000 && m <= 1_000_000 && s <= 1_000_000_000 => {
                    h * 3600 + m * 60 + s
                }
                _ => {
                    return Err(r.err(
                        vl,
                        format!("run time `{t}`: expected hours, minutes and seconds, e.g. 0 1 30"),
                    ));
                }
            };
            icf.setup.run_time = Some(At { line: vl, v: secs });
        }
        k if k.starts_with("ramp up time") => {
            let (vl, t) = r.need(line, "Ramp Up Time (s)")?;
            let v = number(r, vl, "ramp up time", t)?;
            icf.setup.ramp = Some(At { line: vl, v });
        }
        "default disk workers to spawn" => {
            let (vl, t) = r.need(line, "Default Disk Workers to Spawn")?;
            let v = spawn(r, vl, "default disk workers to spawn", t)?;
            icf.setup.disk_workers = Some(At { line: vl, v });
        }
        "default network workers to spawn" => {
            let (vl, t) = r.need(line, "Default Network Workers to Spawn")?;
            let v = spawn(r, vl, "default network workers to spawn", t)?;
            icf.setup.network_workers = Some(At { line: vl, v });
        }
        "record results" => {
            let (vl, t) = r.need(line, "Record Results")?;
            icf.setup.record = Some(At {
                line: vl,
                v: t.to_string(),
            });
        }
        "worker cycling" | "disk cycling" | "target cycling" | "queue depth cycling" => {
            r.headings(&["start"]);
            let (vl, t) = r.need(line, raw.trim_start_matches('\''))?;
            let c = At {
                line: vl,
                v: cycling(r, vl, k, t)?,
            };
            match k {
                "worker cycling" => icf.setup.worker_cycling = Some(c),
                "queue depth cycling" => icf.setup.queue_cycling = Some(c),
                _ => icf.setup.disk_cycling = Some(c),
            }
        }
        "test type" => {
            let (vl, t) = r.need(line, "Test Type")?;
            icf.setup.test_type = Some(At {
                line: vl,
                v: t.to_ascii_uppercase(),
            });
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// An access specification, a manager or a worker: whether `k` is one.
fn list_entry(r: &mut Reader, icf: &mut Icf, line: usize, k: &str) -> Result<bool, String> {
    match k {
        k if k.starts_with("access specification name") => {
            let (vl, t) = r.need(line, "Access specification name")?;
            if icf.specs.len() >= MAX_SPECS {
                return Err(r.err(
                    vl,
                    format!("more than {MAX_SPECS} access specifications; storlab reads at most {MAX_SPECS}"),
                ));
            }
            let (name, assign) = match t.rsplit_once(',') {
                Some((n, a)) if k.contains("default assignment") => (n, a),
                _ => (t, "NONE"),
            };
            let assign = match assign.trim().to_ascii_uppercase().as_str() {
                "0" => "NONE".to_string(),
                "1" => "ALL".to_string(),
                "2" => "DISK".to_string(),
                "3" => "NET".to_string(),
                a => a.to_string(),
            };
            icf.specs.push(Spec {
                line: vl,
                name: name.trim().to_string(),
                assign,
                lines: Vec::new(),
            });
        }
        k if k.starts_with("size,") => {
            let Some(spec) = icf.specs.last_mut() else {
                return Err(r.err(
                    line,
                    "access specification lines before any 'Access specification name",
                ));
            };
            let heading = k.to_string();
            while let Some((vl, t)) = r.value() {
                if spec.lines.len() >= MAX_SPEC_LINES {
                    return Err(r.err(
                        vl,
                        format!("access specification `{}` has more than {MAX_SPEC_LINES} lines; storlab reads at most {MAX_SPEC_LINES}", spec.name),
                    ));
                }
                spec.lines.push(spec_line(r, vl, &heading, t)?);
            }
        }
        k if k.starts_with("manager id") => {
            let (vl, t) = r.need(line, "Manager ID, manager name")?;
            if icf.managers.len() >= MAX_WORKERS {
                return Err(r.err(vl, format!("more than {MAX_WORKERS} managers")));
            }
            let name = t.split_once(',').map_or(t, |(_, n)| n).trim();
            icf.managers.push(Manager {
                name: name.to_string(),
                ..Manager::default()
            });
        }
        "manager network address" => {
            let v = r.value().map(|(vl, t)| At {
                line: vl,
                v: t.to_string(),
            });
            if let Some(m) = icf.managers.last_mut() {
                m.address = v;
            }
        }
        "worker" => {
            let (vl, t) = r.need(line, "Worker")?;
            if icf.managers.is_empty() {
                icf.managers.push(Manager::default());
            }
            let total: usize = icf.managers.iter().map(|m| m.workers.len()).sum();
            if total >= MAX_WORKERS {
                return Err(r.err(
                    vl,
                    format!("more than {MAX_WORKERS} workers; storlab runs at most {MAX_WORKERS}"),
                ));
            }
            if let Some(m) = icf.managers.last_mut() {
                m.workers.push(Worker {
                    line: vl,
                    name: t.to_string(),
                    ..Worker::default()
                });
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// An entry of the last worker, or one storlab does not know.
fn worker_entry(
    r: &mut Reader,
    icf: &mut Icf,
    line: usize,
    raw: &str,
    k: &str,
) -> Result<(), String> {
    let worker = icf.managers.last_mut().and_then(|m| m.workers.last_mut());
    let in_network = worker.as_ref().is_some_and(|w| {
        w.kind
            .as_ref()
            .is_some_and(|k| !k.v.eq_ignore_ascii_case("DISK"))
    });
    match (k, worker) {
        ("worker type", Some(w)) => {
            let (vl, t) = r.need(line, "Worker type")?;
            w.kind = Some(At {
                line: vl,
                v: t.trim().to_ascii_uppercase(),
            });
        }
        (k, Some(w))
            if k.starts_with("number of outstanding ios") || k.starts_with("disk maximum size") =>
        {
            if let Some((vl, t)) = r.value() {
                settings(r, w, vl, k, t)?;
            }
        }
        ("assigned access specs", Some(w)) => {
            while let Some((vl, t)) = r.value() {
                if w.specs.len() >= MAX_SPECS {
                    return Err(r.err(
                        vl,
                        format!("more than {MAX_SPECS} assigned access specifications"),
                    ));
                }
                w.specs.push(At {
                    line: vl,
                    v: t.to_string(),
                });
            }
        }
        ("target", Some(w)) => {
            let (vl, t) = r.need(line, "Target")?;
            if w.targets.len() >= crate::job::MAX_TARGETS {
                return Err(r.err(
                    vl,
                    format!(
                        "worker `{}` has more than {} targets",
                        w.name,
                        crate::job::MAX_TARGETS
                    ),
                ));
            }
            w.targets.push(Target {
                line: vl,
                text: t.to_string(),
                kind: None,
            });
        }
        ("target type", Some(w)) => {
            let (vl, t) = r.need(line, "Target type")?;
            if let Some(tg) = w.targets.last_mut() {
                tg.kind = Some(At {
                    line: vl,
                    v: t.trim().to_ascii_uppercase(),
                });
            }
        }
        // A network worker's own settings (local interface, remote address, ...):
        // the worker is refused as a whole.
        _ if in_network => r.skip_values(),
        _ => {
            let mut option = raw.trim().to_string();
            if let Some((_, v)) = r.value() {
                option = format!("{option} = {v}");
            }
            r.skip_values();
            icf.unknown.push(Unsupported {
                at: r.at(line),
                option,
                why: "not an entry of any Iometer version storlab knows".into(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_loosely() {
        assert_eq!(norm("'TEST SETUP ===="), "test setup");
        assert_eq!(norm("'Manager ID, manager name"), "manager id,manager name");
        assert_eq!(norm("'\tstart   step  step type"), "start step step type");
    }

    #[test]
    fn columns_are_read_by_name() {
        let text = "'Access specification name,default assignment\n\tA,ALL\n'size,% of size,% reads,% random\n\t4096,100,70,100\n";
        let icf = parse("a.icf", text).unwrap();
        let l = &icf.specs[0].lines[0];
        assert_eq!(
            (l.size, l.reads, l.random, l.burst, l.align),
            (4096, 70, 100, 1, 0)
        );
        assert_eq!(icf.specs[0].assign, "ALL");
    }

    #[test]
    fn bad_numbers_name_their_line() {
        let text = "'TEST SETUP\n'Run Time\n'\thours minutes seconds\n\t0 x 10\n";
        let e = parse("a.icf", text).unwrap_err();
        assert!(e.starts_with("a.icf:4: run time `x`"), "{e}");
        let e = parse("a.icf", "'Queue Depth Cycling\n\t1 32 2 SIDEWAYS\n").unwrap_err();
        assert!(e.contains("a.icf:2") && e.contains("SIDEWAYS"), "{e}");
        let e = parse("a.icf", "'Default Disk Workers to Spawn\n\t99999999\n").unwrap_err();
        assert!(e.contains("at most 4096 workers"), "{e}");
    }
}
