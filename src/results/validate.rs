//! What a results file or a time series must hold to be read: checked on load, before any
//! view sees it, so that no file can make a view panic, loop or allocate in proportion to a
//! number written in it (docs/results-format.md, "What load refuses").
//!
//! - [`scan`]: every number of the JSON text, without building it: none is larger in
//!   magnitude than [`MAX_FIGURE`] (storlab's own figures are all far below it, and sums,
//!   products and squares of figures that size stay finite). The top-level `schema_version`
//!   is picked up on the way.
//! - [`check`]: what the typed results say of themselves: every index into a list of the
//!   file in range (a worker's targets, an access entry's class, a cache's device), the block
//!   sample's rate and counts consistent, the data set's size a number.
//!
//! Histogram encodings check themselves when they are read (`crate::stats::histogram`):
//! their declared sizes and bounds are checked before anything is allocated from them.

use super::RunResult;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::fmt;

/// The largest magnitude of a number in a results file or a time series. A latency in
/// nanoseconds, a rate or a count of bytes is below 2^64 (1.8e19); 1e30 leaves room for any
/// figure while keeping every sum, product and square of figures finite.
pub(crate) const MAX_FIGURE: f64 = 1e30;

/// Scans the JSON `text` without building it: every number is at most [`MAX_FIGURE`] in
/// magnitude. Returns the top-level `schema_version` as written, when there is one. Errors
/// name the number's place (`timeseries[3].total.read.latency_mean_ns`).
pub(crate) fn scan(text: &str) -> Result<Option<serde_json::Value>, String> {
    let path = RefCell::new(Vec::new());
    let version = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let node = Node {
        path: &path,
        version: Some(&version),
        job: false,
    };
    match node.deserialize(&mut de).and_then(|()| de.end()) {
        Ok(()) => Ok(version.into_inner()),
        Err(e) => Err(e.to_string()),
    }
}

/// A place in a JSON document: a key or an index.
enum Step {
    Key(String),
    Index(usize),
}

/// `a.b[3].c`, as written in errors.
fn place(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// One value of the document being scanned, at `path`; the top level also keeps its
/// `schema_version` in `version`.
#[derive(Clone, Copy)]
struct Node<'a> {
    path: &'a RefCell<Vec<Step>>,
    version: Option<&'a RefCell<Option<serde_json::Value>>>,
    /// A job about to run, not a results file: the message says what to change.
    job: bool,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Node<'_> {
    fn nested(self) -> Self {
        Node {
            path: self.path,
            version: None,
            job: self.job,
        }
    }

    fn number<E: de::Error>(self, v: f64) -> Result<(), E> {
        if v.abs() <= MAX_FIGURE {
            return Ok(());
        }
        let at = place(&self.path.borrow());
        let at = if at.is_empty() {
            "the value".into()
        } else {
            format!("`{at}`")
        };
        if self.job {
            return Err(E::custom(format!(
                "{at} is {v:e}: its results would hold a number beyond any figure a results file may (at most {MAX_FIGURE:e}), which no report reads; give a value of at most {MAX_FIGURE:e}"
            )));
        }
        Err(E::custom(format!(
            "{at} is {v:e}, not a figure of a run: a run's figures are at most {MAX_FIGURE:e}"
        )))
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.number(v)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            self.path.borrow_mut().push(Step::Index(i));
            let more = seq.next_element_seed(self.nested())?;
            self.path.borrow_mut().pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "schema_version" {
                if let Some(version) = self.version {
                    *version.borrow_mut() = Some(map.next_value()?);
                    continue;
                }
            }
            self.path.borrow_mut().push(Step::Key(key));
            map.next_value_seed(self.nested())?;
            self.path.borrow_mut().pop();
        }
        Ok(())
    }
}

/// Scans one JSON value of a time series' line (see [`scan`]), skipping nothing.
pub(crate) fn scan_record(line: &[u8]) -> Result<(), String> {
    let path = RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_slice(line);
    let node = Node {
        path: &path,
        version: None,
        job: false,
    };
    node.deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| e.to_string())
}

/// Checks what a results file says of itself (see the module's documentation); the error
/// says what is wrong and where.
pub(crate) fn check(r: &RunResult) -> Result<(), String> {
    check_job(&r.job)?;
    if let Some(s) = &r.block_sample {
        super::blocks::check(s)?;
    }
    if r.targets
        .iter()
        .try_fold(0u64, |sum, t| sum.checked_add(t.size_bytes))
        .is_none()
    {
        return Err(
            "`targets`: their sizes add up to more than 2^64 bytes, which no data set is".into(),
        );
    }
    Ok(())
}

/// Refuses, before it runs, a job whose results file [`check`] or [`scan`] would refuse on
/// load: the one validator, for what a run writes and what `storlab report` reads. The error
/// names the job's value (`workers[0].access[0].distribution.zipf.theta is 1e31`).
pub(crate) fn runnable(job: &crate::job::Job) -> Result<(), String> {
    let value = serde_json::to_value(job).map_err(|e| e.to_string())?;
    let path = RefCell::new(Vec::new());
    let node = Node {
        path: &path,
        version: None,
        job: true,
    };
    node.deserialize(value).map_err(|e| e.to_string())?;
    check_job(job)
}

/// Every index the job makes into its own lists in range.
fn check_job(job: &crate::job::Job) -> Result<(), String> {
    let (targets, classes) = (job.targets.len(), job.classes.len());
    let out_of = |at: String, i: usize, what: &str, n: usize| {
        Err(format!(
            "`{at}` is {i}, but the job has {n} {what}{}",
            if n == 1 { "" } else { "s" }
        ))
    };
    for (ti, t) in job.targets.iter().enumerate() {
        if let Some(c) = t.cache.as_ref().filter(|c| c.device >= targets) {
            return out_of(
                format!("job.targets[{ti}].cache.device"),
                c.device,
                "target",
                targets,
            );
        }
    }
    for (wi, w) in job.workers.iter().enumerate() {
        if let Some((k, &t)) = w.targets.iter().enumerate().find(|(_, t)| **t >= targets) {
            return out_of(
                format!("job.workers[{wi}].targets[{k}]"),
                t,
                "target",
                targets,
            );
        }
        if let Some((k, a)) = w
            .access
            .iter()
            .enumerate()
            .find(|(_, a)| a.class >= classes)
        {
            return out_of(
                format!("job.workers[{wi}].access[{k}].class"),
                a.class,
                "class",
                classes,
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_beyond_the_largest_figure_are_refused_with_their_place() {
        let text = r#"{"schema_version": "1.9", "timeseries": [{"total": {"read": {"latency_mean_ns": 12.5}}}, {"total": {"read": {"latency_mean_ns": 1.7e308}}}]}"#;
        let e = scan(text).unwrap_err();
        assert!(
            e.starts_with(
                "`timeseries[1].total.read.latency_mean_ns` is 1.7e308, not a figure of a run: a run's figures are at most 1e30"
            ),
            "{e}"
        );
        let e = scan("[1, -2e31]").unwrap_err();
        assert!(e.starts_with("`[1]` is -2e31"), "{e}");
        let e = scan("1e300").unwrap_err();
        assert!(e.starts_with("the value is 1e300"), "{e}");
        // Integers are any u64 or i64; the version is picked up.
        let version = scan(r#"{"seed": 18446744073709551615, "schema_version": "1.2", "x": -9223372036854775808, "y": 1e30}"#)
            .unwrap();
        assert_eq!(version, Some(serde_json::json!("1.2")));
        assert_eq!(scan("{}").unwrap(), None);
        // Not JSON, or more than one value: an error, never a panic.
        assert!(scan("{\"a\": ").is_err());
        assert!(scan("{} {}").is_err());
        assert!(
            scan_record(br#"{"a": [1e31]}"#)
                .unwrap_err()
                .starts_with("`a[0]` is 1e31")
        );
        assert!(scan_record(br#"{"a": [1e29]}"#).is_ok());
    }

    #[test]
    fn a_job_whose_results_load_would_refuse_is_not_runnable() {
        let spec = crate::job::file::parse(
            std::path::Path::new("z.toml"),
            "[[target]]\nname = \"t\"\npath = \"/tmp/z\"\nsize = \"1MiB\"\n[[worker]]\nname = \"w\"\n[[worker.access]]\nblock_size = \"4k\"\nrandom = \"100%\"\ndistribution = \"zipf:1e31\"\n",
        )
        .unwrap();
        let job = crate::job::resolve(&spec, None).unwrap();
        let error = runnable(&job).unwrap_err();
        assert!(
            error.starts_with("`workers[0].access[0].distribution.zipf.theta` is 1e31"),
            "{error}"
        );
        // What is written is what load reads: the same job in a results file is refused.
        let mut v = crate::results::sample_json("io_uring", &["c"]);
        v["job"] = serde_json::to_value(&job).unwrap();
        assert!(scan(&v.to_string()).is_err());
        // Its theta at the largest figure runs, and its results load.
        let mut fine = job.clone();
        fine.workers[0].access[0].distribution = crate::job::Distribution::Zipf { theta: 1e30 };
        runnable(&fine).unwrap();
        v["job"] = serde_json::to_value(&fine).unwrap();
        scan(&v.to_string()).unwrap();
    }

    /// Every committed job (the examples, the job-file fuzz corpus, attacks included) that
    /// resolves is either refused before it runs or written into results that load reads.
    #[test]
    fn every_committed_job_that_runs_writes_results_that_load() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut runs = 0;
        for dir in ["examples", "fuzz/corpus/job_toml"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let Ok(spec) = crate::job::file::parse(&path, &text) else {
                    continue;
                };
                let Ok(job) = crate::job::resolve(&spec, Some((&path, &text))) else {
                    continue;
                };
                if runnable(&job).is_err() {
                    continue;
                }
                let mut v = crate::results::sample_json("io_uring", &[]);
                v["job"] = serde_json::to_value(&job).unwrap();
                let text = v.to_string();
                scan(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let r: RunResult = serde_json::from_str(&text).unwrap();
                check(&r).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                runs += 1;
            }
        }
        assert!(runs > 10, "{runs} jobs");
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let e = scan(&deep).unwrap_err();
        assert!(e.contains("recursion limit exceeded"), "{e}");
    }

    #[test]
    fn indexes_of_the_job_out_of_range_are_refused() {
        let mut r: RunResult =
            serde_json::from_value(super::super::sample_json("null", &["a"])).unwrap();
        assert_eq!(check(&r), Ok(()));
        r.job.workers[0].access[0].class = 7;
        assert_eq!(
            check(&r).unwrap_err(),
            "`job.workers[0].access[0].class` is 7, but the job has 1 class"
        );
        r.job.workers[0].access[0].class = 0;
        r.job.workers[0].targets = vec![0, 3];
        assert_eq!(
            check(&r).unwrap_err(),
            "`job.workers[0].targets[1]` is 3, but the job has 1 target"
        );
    }
}
