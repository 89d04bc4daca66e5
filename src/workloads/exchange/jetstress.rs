//! Jetstress's own test file, `JetstressConfig.xml`, as the Exchange room's job: the file
//! `JetstressCmd /c` and JetstressWin run (its published format: `TestDesignInfo` with the test
//! type, duration, maintenance, checksum and thresholds; `ExchangeProfile` with the threads,
//! mailboxes, quota, IOPS per mailbox, copies per database and one `EseInstance` per database
//! with its database and log paths; `JetSystemParams` with the page size), read with roxmltree
//! into an [`ExchangeSpec`] that runs what the file describes. `storlab exchange FILE.xml` and
//! `storlab run FILE.xml` run it; `storlab import FILE.xml` writes the `[exchange]` job, each
//! key after a comment naming the element and line it came from. What storlab does not model
//! (ESE's own tuning: operation mix, record sizes, cache preloading…) is listed, with why.

use super::{ExchangeSpec, ThreadsSpec};
use crate::job::JobError;
use crate::units::{Dur, Percent, Size};
use roxmltree::{Document, Node};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Jetstress's file as the room's own job file ([`crate::workloads::Foreign`]).
pub(crate) const FOREIGN: crate::workloads::Foreign = crate::workloads::Foreign {
    format: "jetstress",
    tool: "Jetstress",
    detect: is_config,
    convert: job_of,
};

/// A Jetstress file as the `[exchange]` job it describes (its Windows paths placed with
/// `map`); its notes and what it leaves out printed.
fn job_of(path: &Path, text: &str, map: &[(String, PathBuf)]) -> anyhow::Result<String> {
    use crate::report::console::note;
    let c = read(path, text, map)?;
    for n in &c.notes {
        note(n);
    }
    let ese = c.left_out.iter().filter(|l| l.2 == ESE_OWN).count();
    for (at, element, why) in c.left_out.iter().filter(|l| l.2 != ESE_OWN) {
        note(&format!("left out ({at}): {element}: {why}"));
    }
    if ese > 0 {
        note(&format!(
            "left out: {ese} elements of ESE's own tuning (storlab models the I/O, not the ESE engine); the job storlab import writes lists them"
        ));
    }
    Ok(to_toml(&c, path))
}

/// Whether `text` is a Jetstress configuration file: XML whose root is `configuration` holding
/// `ExchangeProfile` or `TestDesignInfo`.
pub(crate) fn is_config(text: &str) -> bool {
    if !(text.contains("<configuration")
        && (text.contains("ExchangeProfile") || text.contains("TestDesignInfo")))
    {
        return false;
    }
    Document::parse(text).is_ok_and(|d| {
        let root = d.root_element();
        root.has_tag_name("configuration")
            && root
                .children()
                .any(|c| c.has_tag_name("ExchangeProfile") || c.has_tag_name("TestDesignInfo"))
    })
}

/// A Jetstress file read: the spec, and for `storlab import` what each key came from.
#[derive(Debug, Clone, Default)]
pub(crate) struct Converted {
    /// The `[exchange]` section it describes.
    pub spec: ExchangeSpec,
    /// Each key set, in order: (`FILE:LINE`, the element as written, key, TOML value).
    pub keys: Vec<(String, String, &'static str, String)>,
    /// What storlab leaves out: (`FILE:LINE`, the element, why).
    pub left_out: Vec<(String, String, String)>,
    /// Notes to print: where unmapped paths went, assumptions.
    pub notes: Vec<String>,
}

/// Why an element of [`ESE_TUNING`] is left out.
pub(crate) const ESE_OWN: &str = "ESE's own tuning: storlab models the I/O, not the ESE engine";

/// Elements of ESE's and Jetstress's own tuning that storlab, which models the I/O and not
/// the ESE engine, has no equal for; left out with this reason.
const ESE_TUNING: &[&str] = &[
    "OperationMix",
    "LongPadLength",
    "ShortPadLength",
    "PreloadJetCache",
    "SluggishSessions",
    "BatchRecords",
    "BatchUpdates",
    "Bulky1Percentage",
    "MaxVerPages",
    "CircularLog",
    "DBMThrottling",
    "RetrieveLVOnRead",
    "RetrieveLVOnScan",
    "PrereadOnRead",
    "PrereadOnScan",
    "UpdateLV",
    "ScanPercentage",
    "MaximumChecksumBuffers",
    "MaximumChecksumThreads",
    "TransPerSec",
    "DatabaseSpaceReserved",
];

/// The elements storlab reads, by the element they are in.
const READ: &[(&str, &[&str])] = &[
    (
        "configuration",
        &["TestDesignInfo", "ExchangeProfile", "JetSystemParams"],
    ),
    (
        "TestDesignInfo",
        &[
            "Type",
            "Duration",
            "RunDatabaseMaintenancePerformance",
            "RunDatabaseMaintenanceSoftRecovery",
            "VerifyChecksum",
            "LogFilesToChecksum",
            "SuppressTuning",
            "LogFilesToReplay",
            "ContinueOnErrors",
            "BackupToDisk",
            "RestoreBackupPath",
            "Thresholds",
        ],
    ),
    (
        "ExchangeProfile",
        &[
            "ThreadCount",
            "ThroughputPercentage",
            "DatabaseSource",
            "DatabaseSizing",
            "CapacityPercentage",
            "MailboxCount",
            "MailboxQuota",
            "MailboxIops",
            "MarginIops",
            "DatabaseCopyCount",
            "EseInstances",
        ],
    ),
    ("JetSystemParams", &["DatabasePageSize", "LogFileSize"]),
];

/// Elements that say how Jetstress reports or where it writes, not what it tests.
const REPORTING: &[&str] = &[
    "Description",
    "OutputPath",
    "BinaryPerfLog",
    "UseEseCounters",
    "LogInterval",
    "LogInterval2",
    "MultiHostBreak",
    "MaximumLatencyErrors",
    "JetstressVersionGenerated",
    "EseVersionGenerated",
];

/// Reads the Jetstress file `path` (its text `text`); Windows paths of its databases and logs
/// are placed with `map` (`C:\ExchangeVolumes=/mnt/exchange`: the longest matching prefix),
/// the rest in the default scratch directory with a note.
pub(crate) fn read(
    path: &Path,
    text: &str,
    map: &[(String, PathBuf)],
) -> Result<Converted, JobError> {
    let file = path.display().to_string();
    let doc = Document::parse(text).map_err(|e| JobError {
        location: file.clone(),
        key: String::new(),
        message: format!("not a Jetstress configuration file (XML): {e}"),
    })?;
    let mut r = Reader {
        file,
        doc: &doc,
        out: Converted::default(),
    };
    r.read(map)?;
    let line = |at: &str| at.rsplit(':').next().and_then(|l| l.parse::<u32>().ok());
    r.out.left_out.sort_by_key(|l| line(&l.0));
    Ok(r.out)
}

struct Reader<'a, 'input> {
    file: String,
    doc: &'a Document<'input>,
    out: Converted,
}

impl<'a, 'input> Reader<'a, 'input> {
    fn at(&self, n: Node) -> String {
        format!(
            "{}:{}",
            self.file,
            self.doc.text_pos_at(n.range().start).row
        )
    }

    /// The element as written, on one line (at most 120 characters).
    fn written(&self, n: Node) -> String {
        let raw = &self.doc.input_text()[n.range()];
        let one: String = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if one.chars().count() > 120 {
            one.chars().take(117).collect::<String>() + "..."
        } else {
            one
        }
    }

    fn error(&self, n: Node, message: String) -> JobError {
        JobError {
            location: self.at(n),
            key: element_path(n),
            message,
        }
    }

    fn key(&mut self, n: Node, key: &'static str, value: String) {
        self.out
            .keys
            .push((self.at(n), self.written(n), key, value));
    }

    fn leave(&mut self, n: Node, why: &str) {
        self.out
            .left_out
            .push((self.at(n), self.written(n), why.to_string()));
    }

    /// The child `name` of `parent` with text, or `None` when it is absent or empty (a
    /// template's blanks).
    fn value(parent: Node<'a, 'input>, name: &str) -> Option<(Node<'a, 'input>, &'a str)> {
        let n = parent.children().find(|c| c.has_tag_name(name))?;
        let t = n.text().map(str::trim).filter(|t| !t.is_empty())?;
        Some((n, t))
    }

    fn number<T: std::str::FromStr>(&self, n: Node, text: &str, what: &str) -> Result<T, JobError> {
        text.parse::<T>()
            .map_err(|_| self.error(n, format!("`{text}` is not {what}")))
    }

    fn flag(&self, n: Node, text: &str) -> Result<bool, JobError> {
        match text.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => Err(self.error(n, format!("`{text}`: use true or false"))),
        }
    }

    fn read(&mut self, map: &[(String, PathBuf)]) -> Result<(), JobError> {
        let root = self.doc.root_element();
        if !root.has_tag_name("configuration") {
            return Err(self.error(
                root,
                format!(
                    "the root element is <{}>, not Jetstress's <configuration>",
                    root.tag_name().name()
                ),
            ));
        }
        self.version(root)?;
        let design = root.children().find(|c| c.has_tag_name("TestDesignInfo"));
        if let Some(d) = design {
            self.design(d)?;
        }
        let Some(profile) = root.children().find(|c| c.has_tag_name("ExchangeProfile")) else {
            return Err(self.error(
                root,
                "no <ExchangeProfile>: the file names no mailboxes or databases; write one as Jetstress does (JetstressCmd /g generates a sample)".into(),
            ));
        };
        self.profile(profile)?;
        self.instances(profile, map)?;
        if let Some(ese) = root.children().find(|c| c.has_tag_name("JetSystemParams")) {
            self.ese(ese)?;
        }
        self.others(root);
        Ok(())
    }

    /// The Exchange version from the ESE (or else Jetstress) version that wrote the file.
    fn version(&mut self, root: Node<'a, 'input>) -> Result<(), JobError> {
        let from = Self::value(root, "EseVersionGenerated")
            .or_else(|| Self::value(root, "JetstressVersionGenerated"));
        let Some((n, v)) = from else {
            self.out.notes.push(format!(
                "{}: the file names no ESE or Jetstress version; Exchange 2010 is modelled (give --version)",
                self.file
            ));
            return Ok(());
        };
        let mut parts = v
            .split('.')
            .map(|p| p.trim().parse::<u32>().unwrap_or(u32::MAX));
        let year = match (parts.next(), parts.next()) {
            (Some(8), _) => "2007",
            (Some(14), _) => "2010",
            (Some(15), Some(0)) => "2013",
            (Some(15), Some(1)) => "2016",
            (Some(15), Some(2)) => "2019",
            _ => {
                return Err(self.error(
                    n,
                    format!("version {v} is no Exchange storlab models (ESE 8 is 2007, 14 is 2010, 15.0 2013, 15.1 2016, 15.2 2019); give --version"),
                ));
            }
        };
        self.out.spec.version = Some(ThreadsSpec::Word(year.into()));
        self.key(n, "version", format!("\"{year}\""));
        Ok(())
    }

    /// `TestDesignInfo`: the test type, duration, maintenance, checksum, recovery's log files
    /// and the thresholds of the test type; the name of the test storlab runs.
    fn design(&mut self, d: Node<'a, 'input>) -> Result<&'static str, JobError> {
        let test = match Self::value(d, "Type") {
            Some((n, t)) => {
                let name = match t.to_ascii_lowercase().as_str() {
                    "performance" => "performance",
                    "stress" => "stress",
                    "databasebackup" => "backup",
                    "softrecovery" => "recovery",
                    _ => {
                        return Err(self.error(
                            n,
                            format!("test type `{t}`: use Performance, Stress, DatabaseBackup or SoftRecovery"),
                        ));
                    }
                };
                self.out.spec.test = Some(name.into());
                self.key(n, "test", format!("\"{name}\""));
                name
            }
            None => "performance",
        };
        if let Some((n, t)) = Self::value(d, "Duration") {
            let dur = xsd_duration(t).map_err(|m| self.error(n, m))?;
            self.out.spec.duration = Some(Dur(dur));
            self.key(
                n,
                "duration",
                format!("\"{}\"", crate::units::format_duration(dur)),
            );
        }
        if let Some((n, t)) = Self::value(d, "RunDatabaseMaintenancePerformance") {
            let on = self.flag(n, t)?;
            if matches!(test, "performance" | "stress") {
                self.out.spec.maintenance = Some(on);
                self.key(n, "maintenance", on.to_string());
            }
        }
        if let Some((n, t)) = Self::value(d, "RunDatabaseMaintenanceSoftRecovery") {
            if self.flag(n, t)? && test == "recovery" {
                self.leave(n, "background maintenance during soft recovery is not modelled: the recovery test replays logs only");
            }
        }
        if let Some((n, t)) = Self::value(d, "VerifyChecksum") {
            let on = self.flag(n, t)?;
            self.out.spec.verify = Some(on);
            self.key(n, "verify", on.to_string());
        }
        if let Some((n, t)) = Self::value(d, "SuppressTuning") {
            if !self.flag(n, t)? {
                // Jetstress tunes the thread count itself: so does storlab, unless a count
                // is given (ThreadCount, read after this).
                self.out.spec.threads = Some(ThreadsSpec::Word("auto".into()));
                self.key(n, "threads", "\"auto\"".into());
            }
        }
        if let Some((n, t)) = Self::value(d, "LogFilesToReplay") {
            let files: u32 = self.number(n, t, "a number of log files")?;
            if test == "recovery" {
                self.out.spec.log_files = Some(files);
                self.key(n, "log_files", files.to_string());
            }
        }
        if let Some((n, t)) = Self::value(d, "ContinueOnErrors") {
            if self.flag(n, t)? {
                self.leave(n, "storlab always runs on after an I/O error, counting it; any error fails the verdict");
            }
        }
        if let Some((n, _)) = Self::value(d, "BackupToDisk") {
            if test == "backup" {
                self.leave(n, "the backup test reads each database and discards what it read; it writes no backup");
            }
        }
        self.thresholds(d, test)?;
        self.others(d);
        Ok(test)
    }

    /// The `Thresholds` of the test type (`TestRunTypes` naming it, else the one naming none).
    fn thresholds(&mut self, d: Node<'a, 'input>, test: &str) -> Result<(), JobError> {
        let jetstress_type = match test {
            "stress" => "Stress",
            "backup" => "DatabaseBackup",
            "recovery" => "SoftRecovery",
            _ => "Performance",
        };
        let all: Vec<Node> = d
            .children()
            .filter(|c| c.has_tag_name("Thresholds"))
            .collect();
        let names = |n: &Node| n.attribute("TestRunTypes").map(str::to_string);
        let chosen = all
            .iter()
            .find(|n| names(n).is_some_and(|t| t.split([',', ' ']).any(|x| x == jetstress_type)))
            .or_else(|| all.iter().find(|n| names(n).is_none()));
        let Some(&t) = chosen else { return Ok(()) };
        for (element, key) in [
            ("AverageDatabaseReadLatency", "db_read_latency"),
            ("MaximumDatabaseReadLatency", "max_latency"),
            ("AverageLogWriteLatency", "log_write_latency"),
        ] {
            if let Some((n, v)) = Self::value(t, element) {
                let ms: f64 = self.number(n, v, "a latency in milliseconds")?;
                if !(ms > 0.0 && ms <= 1e6) {
                    return Err(self.error(n, format!("{ms} ms is not a usable limit")));
                }
                let d = Dur(Duration::from_secs_f64(ms / 1e3));
                match key {
                    "db_read_latency" => self.out.spec.db_read_latency = Some(d),
                    "max_latency" => self.out.spec.max_latency = Some(d),
                    _ => self.out.spec.log_write_latency = Some(d),
                }
                self.key(n, key, format!("\"{}ms\"", crate::units::format_number(ms)));
            }
        }
        if let Some((n, _)) = Self::value(t, "MaximumLogWriteLatency") {
            self.leave(
                n,
                "storlab judges the average log write latency, not its maximum",
            );
        }
        Ok(())
    }

    /// `ExchangeProfile`: threads, sizing (the mailbox profile or a share of the capacity and
    /// throughput), mailboxes, quota, IOPS per mailbox, copies per database.
    fn profile(&mut self, p: Node<'a, 'input>) -> Result<(), JobError> {
        if let Some((n, t)) = Self::value(p, "ThreadCount") {
            let threads: u32 = self.number(n, t, "a thread count")?;
            if self.out.spec.threads.is_some() {
                self.leave(n, "Jetstress tunes the thread count itself (SuppressTuning is false), and so does storlab (threads = \"auto\")");
            } else {
                self.out.spec.threads = Some(ThreadsSpec::Count(threads));
                self.key(n, "threads", threads.to_string());
            }
        }
        let sizing = Self::value(p, "DatabaseSizing").map(|(_, t)| t.to_ascii_lowercase());
        let capacity = match Self::value(p, "CapacityPercentage") {
            Some((n, t)) => Some((n, self.number::<f64>(n, t, "a percentage")?)),
            None => None,
        };
        if sizing.as_deref().is_some_and(|s| s != "profile") {
            // Sized by the disks, not by mailboxes: Jetstress's disk subsystem throughput
            // test, storlab's throughput mode.
            let throughput = match Self::value(p, "ThroughputPercentage") {
                Some((n, t)) => (n, self.number::<f64>(n, t, "a percentage")?),
                None => (p, 100.0),
            };
            let (cn, c) = capacity.unwrap_or((p, 100.0));
            self.out.spec.db_capacity = Some(Percent(c));
            self.key(cn, "db_capacity", format!("\"{c}%\""));
            self.out.spec.throughput = Some(Percent(throughput.1));
            self.key(throughput.0, "throughput", format!("\"{}%\"", throughput.1));
        } else if let Some((n, c)) = capacity.filter(|(_, c)| *c != 100.0) {
            self.out.spec.capacity = Some(Percent(c));
            self.key(n, "capacity", format!("\"{c}%\""));
        }
        if let Some((n, t)) = Self::value(p, "MailboxCount") {
            let m: u64 = self.number(n, t, "a number of mailboxes")?;
            self.out.spec.mailboxes = Some(m);
            self.key(n, "mailboxes", m.to_string());
        }
        if let Some((n, t)) = Self::value(p, "MailboxQuota") {
            // Megabytes as Windows counts them: MiB.
            let mb: u64 = self.number(n, t, "a mailbox quota in MB")?;
            let bytes = mb
                .checked_mul(1 << 20)
                .ok_or_else(|| self.error(n, format!("{mb} MB is larger than any mailbox")))?;
            self.out.spec.mailbox_size = Some(Size(bytes));
            self.key(n, "mailbox_size", format!("\"{mb}MiB\""));
        }
        if let Some((n, t)) = Self::value(p, "MailboxIops") {
            let iops: f64 = self.number(n, t, "an IOPS per mailbox")?;
            self.out.spec.iops_per_mailbox = Some(iops);
            self.key(n, "iops_per_mailbox", format!("{iops}"));
        }
        if let Some((n, t)) = Self::value(p, "DatabaseCopyCount") {
            let copies: u32 = self.number(n, t, "a number of copies")?;
            self.out.spec.copies = Some(copies);
            self.key(n, "copies", copies.to_string());
        }
        if let Some((n, t)) = Self::value(p, "MarginIops") {
            let _: f64 = self.number(n, t, "an IOPS margin")?;
            self.leave(n, "Jetstress's own tuning margin; storlab's rule on the achieved rate allows 1 % or one I/O per thread, whichever is more");
        }
        if let Some((n, t)) = Self::value(p, "DatabaseSource") {
            if !t.eq_ignore_ascii_case("new") && !t.eq_ignore_ascii_case("open") {
                self.leave(n, "storlab builds its databases (or reuses those it built); it restores none from a backup");
            }
        }
        self.others(p);
        Ok(())
    }

    /// Lists the children of `parent` storlab does not read: ESE's own tuning, and any
    /// element it does not know; what says how Jetstress reports is passed over.
    fn others(&mut self, parent: Node<'a, 'input>) {
        let read = (READ.iter())
            .find(|(name, _)| parent.has_tag_name(*name))
            .map_or(&[][..], |(_, r)| *r);
        for n in parent.children().filter(Node::is_element) {
            let name = n.tag_name().name();
            if ESE_TUNING.contains(&name) {
                self.leave(n, ESE_OWN);
            } else if !read.contains(&name) && !REPORTING.contains(&name) {
                self.leave(n, "not an element storlab knows");
            }
        }
    }

    /// `EseInstances`: one database per `DatabasePaths/Path`, each instance's log path.
    fn instances(
        &mut self,
        p: Node<'a, 'input>,
        map: &[(String, PathBuf)],
    ) -> Result<(), JobError> {
        let Some(list) = p.children().find(|c| c.has_tag_name("EseInstances")) else {
            return Ok(());
        };
        let mut dbs = Vec::new();
        let mut logs = Vec::new();
        let mut unmapped = Vec::new();
        let mut biases = Vec::new();
        for inst in list.children().filter(|c| c.has_tag_name("EseInstance")) {
            biases.push(inst.attribute("IopsBias").unwrap_or("1").trim().to_string());
            let paths: Vec<(Node, &str)> = (inst.children())
                .filter(|c| c.has_tag_name("DatabasePaths"))
                .flat_map(|d| d.children().filter(|c| c.has_tag_name("Path")))
                .filter_map(|n| Some((n, n.text().map(str::trim).filter(|t| !t.is_empty())?)))
                .collect();
            if paths.is_empty() {
                return Err(self.error(
                    inst,
                    "an <EseInstance> without a database <Path>: give each database's directory"
                        .into(),
                ));
            }
            let log = Self::value(inst, "LogPath");
            for (n, path) in &paths {
                dbs.push(place(path, map, &mut unmapped));
                self.key(*n, "db_paths", String::new());
                let (ln, lp) = log.unwrap_or((*n, path));
                logs.push(place(lp, map, &mut unmapped));
                if log.is_some() {
                    self.key(ln, "log_paths", String::new());
                }
            }
            if paths.len() > 1 {
                self.out.notes.push(format!(
                    "{}: {} databases share one log in this instance; storlab gives each database its own log stream in that directory",
                    self.at(inst),
                    paths.len()
                ));
            }
        }
        if dbs.is_empty() {
            return Ok(());
        }
        if biases.iter().any(|b| b != &biases[0]) {
            self.leave(list, "storlab gives every database the same share of the IOPS; the instances' IopsBias differ");
        }
        self.out.spec.databases = Some(dbs.len() as u32);
        self.out.spec.db_paths = Some(dbs);
        self.out.spec.log_paths = Some(logs);
        if !unmapped.is_empty() {
            unmapped.sort();
            unmapped.dedup();
            self.out.notes.push(format!(
                "{}: the databases and logs at {} placed in {} (place them with storlab exchange --db-path DIR --log-path DIR, or with storlab run or import and --map \"WINDOWS-PATH=DIR\", e.g. --map \"{}=/mnt/exchange\")",
                self.file,
                unmapped.join(", "),
                super::quick::DIR,
                unmapped[0]
            ));
        }
        Ok(())
    }

    /// `JetSystemParams`: the page size; the rest is ESE's own.
    fn ese(&mut self, e: Node<'a, 'input>) -> Result<(), JobError> {
        if let Some((n, t)) = Self::value(e, "DatabasePageSize") {
            let bytes: u64 = self.number(n, t, "a page size in bytes")?;
            self.out.spec.page_size = Some(Size(bytes));
            self.key(
                n,
                "page_size",
                format!("\"{}\"", crate::units::format_size(bytes).replace(' ', "")),
            );
        }
        if let Some((n, t)) = Self::value(e, "LogFileSize") {
            let kb: u64 = self.number(n, t, "a log file size in KB")?;
            if kb != super::LOG_FILE_BYTES >> 10 {
                self.leave(n, "storlab's log streams are of 1 MiB log files, as Exchange 2007 and later write them");
            }
        }
        self.others(e);
        Ok(())
    }
}

/// `e`, an error about the `[exchange]` key a Jetstress file `path` set, at that element's
/// line: `JetstressConfig.xml:62: MailboxCount (exchange.mailboxes): ...`.
pub(crate) fn blame(mut e: JobError, path: &Path, text: &str) -> JobError {
    let key = e
        .key
        .strip_prefix("exchange.")
        .unwrap_or(&e.key)
        .to_string();
    if let Ok(c) = read(path, text, &[]) {
        if let Some((at, element, _, _)) = c.keys.iter().find(|k| k.2 == key) {
            let name = element
                .trim_start_matches('<')
                .split(['>', ' ', '/'])
                .next()
                .unwrap_or_default()
                .to_string();
            e.location = at.clone();
            e.key = format!("{name} ({})", e.key);
        }
    }
    e
}

/// `configuration/ExchangeProfile/MailboxCount`.
fn element_path(n: Node) -> String {
    let mut names: Vec<&str> = n
        .ancestors()
        .filter(Node::is_element)
        .map(|a| a.tag_name().name())
        .collect();
    names.reverse();
    names.join("/")
}

/// Where a Windows path of the file goes on this machine: the longest `map` prefix that
/// matches it (compared without case, `\` and `/` alike), the rest of its components after;
/// else the scratch directory (and the path is listed in `unmapped`).
fn place(path: &str, map: &[(String, PathBuf)], unmapped: &mut Vec<String>) -> PathBuf {
    let parts = |p: &str| -> Vec<String> {
        p.trim()
            .trim_matches(|c| c == '"' || c == '\'')
            .split(['\\', '/'])
            .filter(|s| !s.is_empty())
            .map(str::to_ascii_lowercase)
            .collect()
    };
    let mine = parts(path);
    let original: Vec<&str> = path.split(['\\', '/']).filter(|s| !s.is_empty()).collect();
    let best = map
        .iter()
        .map(|(from, to)| (parts(from), to))
        .filter(|(from, _)| !from.is_empty() && mine.starts_with(from))
        .max_by_key(|(from, _)| from.len());
    match best {
        Some((from, to)) => original[from.len()..]
            .iter()
            .fold(to.clone(), |p, c| p.join(c)),
        None => {
            unmapped.push(path.trim().to_string());
            PathBuf::from(super::quick::DIR)
        }
    }
}

/// An XML Schema duration as Jetstress writes it (`P0Y0M0DT2H0M0S`): days, hours, minutes and
/// seconds; years or months (of no fixed length) are refused.
fn xsd_duration(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!("`{text}` is not a duration as Jetstress writes it, e.g. P0Y0M0DT2H0M0S (2 hours)")
    };
    let rest = text.trim().strip_prefix('P').ok_or_else(bad)?;
    let (date, time) = rest.split_once('T').unwrap_or((rest, ""));
    let mut seconds = 0.0;
    for (part, units) in [
        (date, &[('Y', 0.0), ('M', 0.0), ('D', 86400.0)][..]),
        (time, &[('H', 3600.0), ('M', 60.0), ('S', 1.0)][..]),
    ] {
        let mut s = part;
        for &(unit, scale) in units {
            let Some(i) = s.find(unit) else { continue };
            let v: f64 = s[..i].parse().map_err(|_| bad())?;
            if v < 0.0 || !v.is_finite() {
                return Err(bad());
            }
            if scale == 0.0 && v != 0.0 {
                return Err(format!(
                    "`{text}`: a duration in years or months has no fixed length; write it in days (D) and hours (H)"
                ));
            }
            seconds += v * scale;
            s = &s[i + 1..];
        }
        if !s.is_empty() {
            return Err(bad());
        }
    }
    if seconds > 366.0 * 86400.0 {
        return Err(format!("`{text}` is more than a year"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// The `[exchange]` job of a Jetstress file, each key after the element it came from.
pub(crate) fn to_toml(c: &Converted, path: &Path) -> String {
    let mut out = format!(
        "# storlab's Exchange job from the Jetstress file {} (storlab import); run it with storlab run\n[exchange]\n",
        path.display()
    );
    let quote = |p: &PathBuf| format!("{:?}", p.display().to_string());
    let is_path = |key: &str| matches!(key, "db_paths" | "log_paths");
    for (at, element, key, value) in c.keys.iter().filter(|k| !is_path(k.2)) {
        out.push_str(&crate::job::file::source_comment(at, element));
        out.push_str(&format!("{key} = {value}\n"));
    }
    let paths: Vec<_> = c.keys.iter().filter(|k| is_path(k.2)).collect();
    if !paths.is_empty() {
        for (at, element, _, _) in paths {
            out.push_str(&crate::job::file::source_comment(at, element));
        }
        let list =
            |v: &Option<Vec<PathBuf>>| v.iter().flatten().map(quote).collect::<Vec<_>>().join(", ");
        out.push_str(&format!(
            "databases = {}\ndb_paths = [{}]\nlog_paths = [{}]\n",
            c.spec.databases.unwrap_or(0),
            list(&c.spec.db_paths),
            list(&c.spec.log_paths)
        ));
    }
    for (at, element, why) in &c.left_out {
        out.push_str(&format!("# left out ({at}): {element}: {why}\n"));
    }
    for n in &c.notes {
        out.push_str(&format!("# note: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests;
