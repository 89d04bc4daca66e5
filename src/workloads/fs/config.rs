//! The `[fs]` section resolved: the tree's shape, how files are opened, what happens to the
//! tree first (the format), the workloads, the runs (each cycle's values a pass of its own)
//! or the mdtest phases, and the limits the verdict judges. Pure: no syscalls; an error names
//! its key.

use super::mdtest::{MdtestConfig, mdtest};
use super::op::FsOp;
use super::passes::{MAX_PASSES, run};
use super::spec::{FsSpec, RunSpec, WorkloadSpec, per_op, weighted};
use super::tree::{Shape, Spread};
use crate::job::data::DataReduction;
use crate::job::{Arrivals, EngineKind, JobError, SectionErrors};
use crate::units::{parse_duration, parse_size};
use std::path::PathBuf;

/// The anchor with no `anchor` given.
pub(crate) const DEFAULT_ANCHOR: &str = "storlab-scratch/fs";
/// vdbench's transfer size for file systems (5.03 on).
pub(crate) const DEFAULT_XFER: u64 = 128 << 10;
/// Threads of one workload at most.
pub(crate) const MAX_THREADS: u32 = 1024;
/// Largest transfer.
pub(crate) const MAX_XFER: u64 = 64 << 20;

/// How files are opened (vdbench's `openflags`, and its `fsync`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OpenFlags {
    /// `O_DIRECT`.
    pub direct: bool,
    /// `O_DSYNC`.
    pub dsync: bool,
    /// `O_SYNC`.
    pub sync: bool,
    /// `fsync` before each close of a file written.
    pub fsync: bool,
}

impl OpenFlags {
    /// `o_direct,fsync`, or `none`.
    pub(crate) fn text(&self) -> String {
        let mut parts = Vec::new();
        for (on, name) in [
            (self.direct, "o_direct"),
            (self.dsync, "o_dsync"),
            (self.sync, "o_sync"),
            (self.fsync, "fsync"),
        ] {
            if on {
                parts.push(name);
            }
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(",")
        }
    }
}

/// What happens to the tree before the runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Make what is missing (directories, files, the rest of files cut short), reuse the rest.
    Restart,
    /// Remove the tree, make it anew.
    Yes,
    /// Use it as it is.
    No,
    /// Remove it, make it anew, and run nothing.
    Only,
    /// Remove it and run nothing.
    Clean,
}

impl Format {
    /// Its name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Restart => "restart",
            Format::Yes => "yes",
            Format::No => "no",
            Format::Only => "only",
            Format::Clean => "clean",
        }
    }

    /// Whether the tree is removed first.
    pub(crate) fn removes(self) -> bool {
        matches!(self, Format::Yes | Format::Only | Format::Clean)
    }

    /// Whether the tree is made (what is missing of it).
    pub(crate) fn makes(self) -> bool {
        matches!(self, Format::Restart | Format::Yes | Format::Only)
    }

    /// Whether the runs follow.
    pub(crate) fn runs(self) -> bool {
        matches!(self, Format::Restart | Format::Yes | Format::No)
    }
}

/// How a file is read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileIo {
    /// From its start to its end.
    Sequential,
    /// As many transfers as it holds, at random aligned offsets; `shared`: other threads may
    /// use the file at the same time.
    Random {
        /// Several threads on one file.
        shared: bool,
    },
}

/// Which file comes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Select {
    /// Any, at random.
    Random,
    /// The next in order, shared by the workload's threads.
    Sequential,
}

/// One workload, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WorkloadConfig {
    /// Its name.
    pub name: String,
    /// Operations with their weights.
    pub mix: Vec<(FsOp, u32)>,
    /// Reads, percent, of a read's or a write's transfers (`None`: all the operation's).
    pub rdpct: Option<f64>,
    /// How files are read or written.
    pub fileio: FileIo,
    /// Which file comes next.
    pub select: Select,
    /// Random file I/O: transfers before a file is closed (`None`: as many as it holds).
    pub stopafter: Option<u64>,
    /// Transfer sizes with weights.
    pub xfer: Vec<(u64, u32)>,
    /// Threads.
    pub threads: u32,
    /// Share of an open-loop rate, percent.
    pub skew: Option<f64>,
}

impl WorkloadConfig {
    /// The largest transfer.
    pub(crate) fn max_xfer(&self) -> u64 {
        self.xfer
            .iter()
            .map(|&(b, _)| b)
            .max()
            .unwrap_or(DEFAULT_XFER)
    }

    /// Every operation its threads issue: the mix's, and what they imply (a read or write
    /// opens and closes its file, a create writes it whole and closes it).
    pub(crate) fn issued(&self) -> Vec<FsOp> {
        let mut ops = Vec::new();
        for &(op, _) in &self.mix {
            let implied: &[FsOp] = match op {
                FsOp::Read | FsOp::Write => match self.rdpct {
                    Some(_) => &[FsOp::Open, FsOp::Read, FsOp::Write, FsOp::Close],
                    None if op == FsOp::Read => &[FsOp::Open, FsOp::Read, FsOp::Close],
                    None => &[FsOp::Open, FsOp::Write, FsOp::Close],
                },
                FsOp::Create => &[FsOp::Create, FsOp::Write, FsOp::Close],
                FsOp::Open | FsOp::Close => &[FsOp::Open, FsOp::Close],
                other => std::slice::from_ref(match other {
                    FsOp::Delete => &FsOp::Delete,
                    FsOp::Getattr => &FsOp::Getattr,
                    FsOp::Setattr => &FsOp::Setattr,
                    FsOp::Access => &FsOp::Access,
                    FsOp::Mkdir => &FsOp::Mkdir,
                    FsOp::Rmdir => &FsOp::Rmdir,
                    FsOp::Copy => &FsOp::Copy,
                    _ => &FsOp::Rename,
                }),
            };
            ops.extend_from_slice(implied);
        }
        let mut seen = Vec::new();
        for op in FsOp::ALL {
            if ops.contains(&op) {
                seen.push(op);
            }
        }
        seen
    }
}

/// One pass of a run: its workloads as this pass runs them, its rate and times.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pass {
    /// The run's name, with the cycle's values: `r1 threads=4 xfersize=8 KiB`.
    pub label: String,
    /// The workloads, with the cycle's values applied.
    pub workloads: Vec<WorkloadConfig>,
    /// Operations a second of all threads together (`None`: closed loop).
    pub rate: Option<f64>,
    /// Open-loop arrivals.
    pub arrivals: Arrivals,
    /// Measured time, ms.
    pub duration_ms: u64,
    /// Warm-up, ms.
    pub ramp_ms: u64,
    /// Interval, ms.
    pub interval_ms: u64,
}

/// The limits of the verdict.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Limits {
    /// 99th percentile, ns, per operation (`None`: every operation).
    pub p99_ns: Vec<(Option<FsOp>, u64)>,
    /// Mean, ns, per operation.
    pub mean_ns: Vec<(Option<FsOp>, u64)>,
    /// Operations a second, per operation.
    pub min_rate: Vec<(Option<FsOp>, f64)>,
    /// Failed operations allowed.
    pub max_errors: u64,
}

/// Where this process is among the ranks of a run over many hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rank {
    /// This rank.
    pub rank: u64,
    /// How many.
    pub ranks: u64,
}

impl Default for Rank {
    fn default() -> Self {
        Rank { rank: 0, ranks: 1 }
    }
}

/// The `[fs]` section, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FsConfig {
    /// Free text.
    pub description: Option<String>,
    /// The anchor.
    pub anchor: PathBuf,
    /// The tree's shape.
    pub shape: Shape,
    /// How files are opened.
    pub open: OpenFlags,
    /// Ranks share the tree, each its own files.
    pub shared: bool,
    /// What happens to the tree first.
    pub format: Format,
    /// Bytes of each write of the format.
    pub format_xfer: u64,
    /// Threads of the format.
    pub format_threads: u32,
    /// The engine: psync, or null.
    pub engine: EngineKind,
    /// Seed.
    pub seed: u64,
    /// Interval of the format, ms.
    pub interval_ms: u64,
    /// The passes of every run, in order.
    pub passes: Vec<Pass>,
    /// The mdtest phases, instead of passes.
    pub mdtest: Option<MdtestConfig>,
    /// The verdict's limits.
    pub limits: Limits,
    /// `[data]`: the data's compression and dedupe.
    pub data: DataReduction,
    /// This rank.
    pub rank: Rank,
}

pub(super) fn ms(d: Option<crate::units::Dur>, default_ms: u64) -> u64 {
    d.map_or(default_ms, |d| d.0.as_millis() as u64)
}

/// `sizes` read as sizes with weights.
fn sizes(e: &SectionErrors, key: &str, text: &str) -> Result<Vec<(u64, u32)>, JobError> {
    weighted(text, parse_size).map_err(|m| e.error(key, m))
}

/// Resolves `spec` (from `location`) with the job file's `[data]` already resolved.
pub(crate) fn resolve(
    spec: &FsSpec,
    location: &str,
    data: DataReduction,
) -> Result<FsConfig, JobError> {
    let e = SectionErrors {
        location,
        section: "fs",
    };
    let anchor = spec
        .anchor
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_ANCHOR));
    if anchor.as_os_str().is_empty() || anchor.file_name().is_none() {
        return Err(e.error(
            "anchor",
            format!(
                "`{}` names no directory to make the tree in; give a new directory, e.g. /mnt/nas/storlab-fs",
                anchor.display()
            ),
        ));
    }
    let seed = spec.seed.unwrap_or(crate::job::defaults::SEED);
    let mdtest = spec
        .mdtest
        .as_ref()
        .map(|m| mdtest(&e, m, spec.threads.unwrap_or(1)))
        .transpose()?;
    let shape = match &mdtest {
        Some(m) => m.shape(seed, 1),
        None => Shape {
            depth: spec.depth.unwrap_or(1),
            width: spec.width.unwrap_or(4),
            files: spec.files.unwrap_or(100),
            sizes: sizes(&e, "sizes", spec.sizes.as_deref().unwrap_or("4k"))?,
            spread: match spec.distribution.as_deref().unwrap_or("bottom") {
                "bottom" => Spread::Bottom,
                "all" => Spread::All,
                other => {
                    return Err(e.error(
                        "distribution",
                        format!("`{other}`: use bottom (files in the deepest directories) or all"),
                    ));
                }
            },
            seed,
        },
    };
    if let Some(why) = shape.refusal() {
        return Err(e.error(if mdtest.is_some() { "mdtest" } else { "files" }, why));
    }
    let open = openflags(&e, spec.openflags.as_deref().unwrap_or("none"))?;
    let format = format_of(&e, spec.format.as_deref().unwrap_or("restart"))?;
    let engine = match spec.engine.as_deref().unwrap_or("psync") {
        "psync" | "sync" => EngineKind::Psync,
        "null" => EngineKind::Null,
        other => {
            return Err(e.error(
                "engine",
                format!(
                    "`{other}`: file-system operations run as system calls of their own (psync) or not at all (null, storlab's own cost); io_uring punts them to kernel threads at twice the CPU an operation (see docs/methodology.md)"
                ),
            ));
        }
    };
    let interval_ms = ms(spec.interval, crate::job::defaults::INTERVAL_MS);
    if interval_ms < 100 {
        return Err(e.error("interval", "give an interval of at least 100 ms".into()));
    }
    let workloads = if spec.workload.is_empty() {
        vec![workload(&e, spec, &WorkloadSpec::default(), 0)?]
    } else {
        (spec.workload.iter().enumerate())
            .map(|(i, w)| workload(&e, spec, w, i))
            .collect::<Result<Vec<_>, _>>()?
    };
    for (i, w) in workloads.iter().enumerate() {
        if workloads[..i].iter().any(|o| o.name == w.name) {
            return Err(e.error(
                "workload",
                format!(
                    "two workloads are named `{}`; give each its own name",
                    w.name
                ),
            ));
        }
    }
    if mdtest.is_some() && !spec.run.is_empty() {
        return Err(e.error(
            "mdtest",
            "a job runs either mdtest phases or runs ([[fs.run]]), not both; give two job files"
                .into(),
        ));
    }
    let passes = if mdtest.is_some() {
        Vec::new()
    } else if spec.run.is_empty() {
        run(&e, spec, &RunSpec::default(), 0, &workloads)?
    } else {
        let mut all = Vec::new();
        for (i, r) in spec.run.iter().enumerate() {
            all.extend(run(&e, spec, r, i, &workloads)?);
            if all.len() > MAX_PASSES {
                return Err(e.error(
                    "run",
                    format!("the runs' cycles make more than {MAX_PASSES} passes; give shorter for_ lists"),
                ));
            }
        }
        all
    };
    let max_xfer = workloads.iter().map(WorkloadConfig::max_xfer).max();
    let format_xfer = spec
        .format_xfersize
        .map_or(max_xfer.unwrap_or(DEFAULT_XFER).max(4096), |s| s.0);
    if format_xfer == 0 || format_xfer > MAX_XFER {
        return Err(e.error(
            "format_xfersize",
            format!("{format_xfer} bytes is out of range; give 1 byte to 64 MiB"),
        ));
    }
    let format_threads = spec.format_threads.unwrap_or_else(|| {
        (workloads.iter().map(|w| w.threads).max().unwrap_or(1))
            .max(mdtest.as_ref().map_or(1, |m| m.threads))
    });
    if format_threads == 0 || format_threads > MAX_THREADS {
        return Err(e.error("format_threads", format!("give 1 to {MAX_THREADS} threads")));
    }
    Ok(FsConfig {
        description: spec.description.clone(),
        anchor,
        shape,
        open,
        shared: spec.shared.unwrap_or(false),
        format,
        format_xfer,
        format_threads,
        engine,
        seed,
        interval_ms,
        passes,
        mdtest,
        limits: limits(&e, spec)?,
        data,
        rank: Rank::default(),
    })
}

/// The `format` key.
fn format_of(e: &SectionErrors, text: &str) -> Result<Format, JobError> {
    Ok(match text {
        "restart" => Format::Restart,
        "yes" => Format::Yes,
        "no" => Format::No,
        "only" => Format::Only,
        "clean" => Format::Clean,
        other => {
            return Err(e.error(
                "format",
                format!("`{other}`: use restart, yes, no, only or clean"),
            ));
        }
    })
}

fn openflags(e: &SectionErrors, text: &str) -> Result<OpenFlags, JobError> {
    let mut f = OpenFlags::default();
    for flag in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match flag.to_ascii_lowercase().as_str() {
            "none" => {}
            "o_direct" | "directio" => f.direct = true,
            "o_dsync" => f.dsync = true,
            "o_sync" => f.sync = true,
            "fsync" => f.fsync = true,
            other => {
                return Err(e.error(
                    "openflags",
                    format!("`{other}`: use none, o_direct, o_dsync, o_sync or fsync"),
                ));
            }
        }
    }
    Ok(f)
}

/// Workload `i` from its spec `w`, its keys defaulting to the section's.
fn workload(
    e: &SectionErrors,
    s: &FsSpec,
    w: &WorkloadSpec,
    i: usize,
) -> Result<WorkloadConfig, JobError> {
    let key = |k: &str| {
        if s.workload.is_empty() {
            k.to_string()
        } else {
            format!("workload[{i}].{k}")
        }
    };
    let name = w.name.clone().unwrap_or_else(|| {
        if s.workload.is_empty() {
            "fs".into()
        } else {
            format!("w{}", i + 1)
        }
    });
    if name.is_empty() || name.len() > 64 || name.contains(['/', '\n']) {
        return Err(e.error(
            &key("name"),
            "give a name of 1 to 64 characters without `/`".into(),
        ));
    }
    let mix_text = w.mix.as_deref().or(s.mix.as_deref()).unwrap_or("read");
    let mix = weighted(mix_text, FsOp::parse).map_err(|m| e.error(&key("mix"), m))?;
    let rdpct = w.rdpct.or(s.rdpct);
    if let Some(p) = rdpct {
        if !(0.0..=100.0).contains(&p) {
            return Err(e.error(&key("rdpct"), "give a percentage from 0 to 100".into()));
        }
    }
    let fileio = match w
        .fileio
        .as_deref()
        .or(s.fileio.as_deref())
        .unwrap_or("sequential")
    {
        "sequential" | "seq" => FileIo::Sequential,
        "random" => FileIo::Random { shared: false },
        "random,shared" | "(random,shared)" => FileIo::Random { shared: true },
        other => {
            return Err(e.error(
                &key("fileio"),
                format!("`{other}`: use sequential, random or random,shared"),
            ));
        }
    };
    let select = match w
        .fileselect
        .as_deref()
        .or(s.fileselect.as_deref())
        .unwrap_or("random")
    {
        "random" => Select::Random,
        "sequential" | "seq" => Select::Sequential,
        other => {
            return Err(e.error(
                &key("fileselect"),
                format!("`{other}`: use random or sequential"),
            ));
        }
    };
    let xfer_text = w.xfersize.as_deref().or(s.xfersize.as_deref());
    let xfer = match xfer_text {
        Some(t) => sizes(e, &key("xfersize"), t)?,
        None => vec![(DEFAULT_XFER, 1)],
    };
    if let Some(&(b, _)) = xfer.iter().find(|&&(b, _)| b == 0 || b > MAX_XFER) {
        return Err(e.error(
            &key("xfersize"),
            format!("{b} bytes is out of range; give 1 byte to 64 MiB"),
        ));
    }
    let threads = w.threads.or(s.threads).unwrap_or(1);
    if threads == 0 || threads > MAX_THREADS {
        return Err(e.error(&key("threads"), format!("give 1 to {MAX_THREADS} threads")));
    }
    if let Some(k) = w.skew {
        if !(k > 0.0 && k <= 100.0) {
            return Err(e.error(
                &key("skew"),
                "give a percentage above 0, at most 100".into(),
            ));
        }
    }
    let stopafter = w.stopafter.or(s.stopafter);
    if stopafter == Some(0) {
        return Err(e.error(&key("stopafter"), "give at least 1 transfer".into()));
    }
    Ok(WorkloadConfig {
        name,
        mix,
        rdpct,
        fileio,
        select,
        stopafter,
        xfer,
        threads,
        skew: w.skew,
    })
}

fn limits(e: &SectionErrors, s: &FsSpec) -> Result<Limits, JobError> {
    let dur = |key: &str, t: &Option<String>| -> Result<Vec<(Option<FsOp>, u64)>, JobError> {
        match t {
            None => Ok(Vec::new()),
            Some(t) => per_op(t, |v| {
                parse_duration(v)
                    .map(|d| d.as_nanos() as u64)
                    .and_then(|ns| {
                        if ns == 0 {
                            Err("a limit above 0".into())
                        } else {
                            Ok(ns)
                        }
                    })
            })
            .map_err(|m| e.error(key, m)),
        }
    };
    let min_rate = match &s.min_rate {
        None => Vec::new(),
        Some(t) => per_op(t, |v| {
            v.parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r >= 0.0)
                .ok_or_else(|| format!("`{v}` is not operations a second"))
        })
        .map_err(|m| e.error("min_rate", m))?,
    };
    Ok(Limits {
        p99_ns: dur("p99", &s.p99)?,
        mean_ns: dur("mean", &s.mean)?,
        min_rate,
        max_errors: s.max_errors.unwrap_or(0),
    })
}
