//! The file-system workload: its description (from the same configuration its jobs come
//! from), its run (the tree opened and checked, removed and made as `format` says, then every
//! pass or every mdtest phase, each a run of the common path), its results section and rules,
//! and the way in from a job file.

use super::anchor::Tree;
use super::config::{Format, FsConfig};
use super::figures::{counts, failures, run_figures};
use super::jobs::{self, FsJob, FsSources};
use super::section::{FsResult, FsRun, ShapeFigures, SizeWeight, TreeCounts};
use super::spec::FsFile;
use super::state::TreeState;
use crate::job::Job;
use crate::results::description::{self, Description, Line};
use crate::results::verdict::Verdict;
use crate::results::{JobSource, RunResult};
use crate::run::{Execute, RunOptions, Workload};
use crate::stats::timeseries::SequenceRun;
use crate::units::{format_count, format_ms, format_number, format_size};
use crate::workloads::{JobText, Keys, Overrides};
use anyhow::{Result, anyhow};

/// A file-system workload ready to run.
#[derive(Debug)]
pub(crate) struct Fs {
    /// Its configuration, resolved.
    pub cfg: FsConfig,
}

impl Workload for Fs {
    fn kind(&self) -> &'static str {
        "fs"
    }

    fn describe(&self) -> Description {
        describe(&self.cfg)
    }

    fn jobs(&self) -> Vec<Job> {
        // No job has a target: the first shows the workers, timing and engine.
        first_job(&self.cfg).map(|j| j.job).into_iter().collect()
    }

    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> Result<RunResult> {
        Runner::new(&self.cfg, exec, opts).run()
    }
}

/// The first job the workload runs.
fn first_job(cfg: &FsConfig) -> Option<FsJob> {
    if let Some(m) = &cfg.mdtest {
        return m.phases.first().map(|&p| jobs::mdtest_job(cfg, p, 1));
    }
    match cfg.format {
        Format::Clean => Some(jobs::clean_job(cfg)),
        Format::Only => Some(jobs::format_job(cfg)),
        _ => cfg.passes.first().map(|p| jobs::pass_job(cfg, p)),
    }
}

/// One workload's run, job by job.
pub(super) struct Runner<'a> {
    /// The configuration.
    pub(super) cfg: &'a FsConfig,
    exec: &'a mut dyn Execute,
    opts: &'a RunOptions,
    /// Runs so far.
    count: usize,
    /// The last run's results.
    last: Option<RunResult>,
    /// Every run's figures.
    runs: Vec<FsRun>,
    /// Which of them are measured (passes, mdtest phases), not the format.
    measured: Vec<usize>,
    failures: Vec<super::section::FsFailure>,
    warnings: Vec<String>,
    /// The next run's sources learn what the tree holds first (a rank whose tree another
    /// rank made).
    refresh: bool,
}

impl<'a> Runner<'a> {
    fn new(cfg: &'a FsConfig, exec: &'a mut dyn Execute, opts: &'a RunOptions) -> Self {
        Runner {
            cfg,
            exec,
            opts,
            count: 0,
            last: None,
            runs: Vec::new(),
            measured: Vec::new(),
            failures: Vec::new(),
            warnings: Vec::new(),
            refresh: false,
        }
    }

    /// Runs `job` on `tree`: its figures kept; whether it ran to its end without a failure.
    pub(super) fn execute(&mut self, tree: &Tree, job: &FsJob, measured: bool) -> Result<bool> {
        let state = jobs::run_state(self.cfg, tree, job);
        let refresh = std::mem::take(&mut self.refresh).then(|| (tree, std::sync::Once::new()));
        let sources = FsSources {
            run: &state,
            job,
            refresh,
        };
        let mut opts = self.opts.clone();
        opts.step = Some(self.count);
        opts.label = Some(SequenceRun::Run);
        opts.append_timeseries = self.count > 0;
        let mut r = self.exec.execute(&job.job, &opts, &sources)?;
        self.count += 1;
        let figures = run_figures(job, &r, &state);
        super::figures::align_classes(&mut r, job, self.cfg);
        let clean = !r.interrupted.stopped_early() && figures.total.errors == 0;
        for w in &r.warnings {
            if !self.warnings.contains(w) {
                self.warnings.push(w.clone());
            }
        }
        self.failures.extend(failures(job, &state));
        if measured {
            self.measured.push(self.runs.len());
        }
        self.runs.push(figures);
        let stopped = r.interrupted.stopped_early();
        self.last = Some(r);
        Ok(clean || (measured && !stopped))
    }

    /// Whether the last run stopped early.
    pub(super) fn stopped(&self) -> bool {
        self.last
            .as_ref()
            .is_some_and(|r| r.interrupted.stopped_early())
    }

    fn run(mut self) -> Result<RunResult> {
        let cfg = self.cfg;
        // Ranks sharing one tree: the first scans, removes and makes it; the others learn what
        // it holds from a walk and run its removal and format with nothing to do, so that every
        // rank runs the same runs (each starts on every rank at once).
        let shared = cfg.rank.ranks > 1 && (cfg.shared || cfg.mdtest.is_some());
        let follower = shared && cfg.rank.rank > 0;
        if follower {
            wait_for_marker(&cfg.anchor)?;
        }
        let tree = Tree::open(&cfg.anchor, &cfg.shape)?;
        if !follower && tree.found.is_none() {
            // The anchor is storlab's from now on (and the other ranks wait for this).
            tree.mark(&cfg.shape, false)?;
        }
        let learn = |t: &Tree, shape: &super::tree::Shape| {
            if follower {
                t.walk(shape, &t.state)
            } else {
                t.scan(shape, &t.state)
            }
        };
        let mut removed = TreeCounts::default();
        let old = (tree.found.as_ref())
            .map(|m| m.shape.clone())
            .filter(|s| *s != cfg.shape);
        if let Some(old) = &old {
            // A tree of another shape is removed (format = yes, and always before mdtest's
            // phases, which make their own files) or refused.
            if !cfg.format.removes() && cfg.mdtest.is_none() {
                return Err(anyhow!(crate::Usage(format!(
                    "the tree at {} has another shape ({}); give format = \"yes\" to remove it and make this one ({}), or another anchor",
                    cfg.anchor.display(),
                    old.text(),
                    cfg.shape.text()
                ))));
            }
            let other = tree.with_shape(old.clone());
            learn(&other, old)?;
            removed = counts(&other.state);
            let clean = part(jobs::clean_job(&with_shape(cfg, old)), follower);
            if !self.execute(&other, &clean, false)? {
                return self.finish(&tree, removed, TreeCounts::default());
            }
        } else {
            learn(&tree, &cfg.shape)?;
            // mdtest's phases start from a tree with nothing in it.
            let empty = counts(&tree.state) == TreeCounts::default();
            if (cfg.format.removes() || cfg.mdtest.is_some()) && (!empty || shared) {
                removed = counts(&tree.state);
                if !self.execute(&tree, &part(jobs::clean_job(cfg), follower), false)? {
                    return self.finish(&tree, removed, TreeCounts::default());
                }
            }
        }
        if cfg.format == Format::Clean {
            if !follower {
                tree.mark(&cfg.shape, false)?;
            }
            let start = counts(&tree.state);
            return self.finish(&tree, removed, start);
        }
        if cfg.format.makes() && cfg.mdtest.is_none() {
            if !follower {
                self.check_space(&tree)?;
                tree.mark(&cfg.shape, false)?;
            }
            let done = self.execute(&tree, &part(jobs::format_job(cfg), follower), false)?;
            if !done {
                self.warnings.push(
                    "the format did not complete: the tree is not whole (format = \"restart\" completes it); no run was made".into(),
                );
                let start = counts(&tree.state);
                return self.finish(&tree, removed, start);
            }
            if !follower {
                tree.mark(&cfg.shape, true)?;
            }
            // What the first rank made, this one learns as its next run starts.
            self.refresh = follower;
        } else if !follower && tree.found.is_none() {
            // Made by the runs themselves (mdtest's, or a mix that creates its files).
            tree.mark(&cfg.shape, true)?;
        } else if !follower
            && tree.found.as_ref().is_some_and(|m| !m.complete)
            && cfg.mdtest.is_none()
        {
            self.warnings.push(
                "the tree was not made whole by a format (format = \"restart\" completes it): the runs act on what there is".into(),
            );
        }
        let start = counts(&tree.state);
        if cfg.format.runs() {
            if cfg.mdtest.is_some() {
                super::mdtest::run_phases(&mut self, &tree)?;
            } else {
                for pass in &cfg.passes {
                    let job = jobs::pass_job(cfg, pass);
                    self.execute(&tree, &job, true)?;
                    if self.stopped() {
                        break;
                    }
                }
            }
        }
        self.finish(&tree, removed, start)
    }

    /// Refuses a format that cannot fit: more bytes or files to make than the file system has
    /// free.
    fn check_space(&self, tree: &Tree) -> Result<()> {
        let s = &tree.state;
        let shape = &s.shape;
        let mut bytes = 0u64;
        let mut files = 0u64;
        for f in 0..s.files() {
            let want = shape.file_size(f);
            match s.file(f) {
                Some(have) => bytes = bytes.saturating_add(want.saturating_sub(have)),
                None => {
                    files += 1;
                    bytes = bytes.saturating_add(want);
                }
            }
        }
        let dirs = (1..s.dirs()).filter(|&d| !s.dir_exists(d)).count() as u64;
        let (free, inodes) = tree.free();
        if bytes > free {
            return Err(anyhow!(crate::Usage(format!(
                "the format needs {} more for the tree's files and {} has {} free; give fewer or smaller files, or more space",
                format_size(bytes),
                self.cfg.anchor.display(),
                format_size(free)
            ))));
        }
        if let Some(free) = inodes {
            if files + dirs > free {
                return Err(anyhow!(crate::Usage(format!(
                    "the format makes {} files and directories and the file system of {} has {} inodes free; give fewer files",
                    format_count(files + dirs),
                    self.cfg.anchor.display(),
                    format_count(free)
                ))));
            }
        }
        Ok(())
    }

    /// The results: the last run's, with the section, the rules and the verdict.
    fn finish(mut self, tree: &Tree, removed: TreeCounts, start: TreeCounts) -> Result<RunResult> {
        let cfg = self.cfg;
        // Ranks sharing the tree end their last runs at their own pace: the tree is walked
        // once every rank has ended (a walk at this rank's end counted files another rank
        // was still removing).
        let waited = if cfg.rank.ranks > 1 && (cfg.shared || cfg.mdtest.is_some()) {
            self.exec.together().err()
        } else {
            None
        };
        let Some(mut r) = self.last.take() else {
            return Err(anyhow!(crate::Usage(format!(
                "nothing ran on {}: the tree was already as `format = \"{}\"` asks",
                cfg.anchor.display(),
                cfg.format.name()
            ))));
        };
        if let Some(e) = waited {
            r.warnings.push(format!(
                "the tree was walked before every rank had ended ({e:#}): its counts at the end may miss what the others did last"
            ));
        }
        let end = {
            let fresh = TreeState::new(cfg.shape.clone());
            match tree.walk(&cfg.shape, &fresh) {
                Ok(()) => counts(&fresh),
                Err(e) => {
                    r.warnings
                        .push(format!("the tree could not be walked at the end: {e:#}"));
                    counts(&tree.state)
                }
            }
        };
        let measured: Vec<FsRun> = self
            .measured
            .iter()
            .map(|&i| self.runs[i].clone())
            .collect();
        let mut rules = super::figures::rules(&cfg.limits, &measured, &self.runs);
        rules.extend(r.verdict.take().into_iter().flat_map(|v| v.rules));
        r.verdict = Some(Verdict::weighed(rules, r.cost.as_ref()));
        for w in self.warnings.drain(..) {
            if !r.warnings.contains(&w) {
                r.warnings.push(w);
            }
        }
        // The block sample's locality is of blocks of targets; the tree's files are not.
        r.reuse = None;
        let place = crate::stats::host::placement(&cfg.anchor);
        if matches!(place.filesystem.as_str(), "tmpfs" | "ramfs") {
            r.warnings.push(format!(
                "the tree is on {}: it lives in memory, not on a storage device",
                place.filesystem
            ));
        }
        r.fs = Some(FsResult {
            anchor: cfg.anchor.display().to_string(),
            filesystem: place.filesystem,
            mount_point: place.mount_point.map(|m| m.display().to_string()),
            device: place.device,
            shape: shape_figures(cfg),
            openflags: cfg.open.text(),
            format: cfg.format.name().into(),
            removed,
            start,
            end,
            runs: std::mem::take(&mut self.runs),
            failures: std::mem::take(&mut self.failures),
            mdtest: None,
        });
        if let Some(m) = &cfg.mdtest {
            if let Some(section) = r.fs.as_mut() {
                section.mdtest = Some(super::mdtest::summary(m, &section.runs, cfg.rank.ranks));
            }
        }
        let ts = crate::results::file::timeseries_path(&self.opts.results_path);
        r.timeseries = crate::results::timeseries::Series::of_file(ts.clone());
        r.timeseries_path = Some(ts.display().to_string());
        self.exec.save(&self.opts.results_path, &r)?;
        Ok(r)
    }
}

/// `job` as this rank runs it: with nothing to do for a rank that follows (see
/// [`Runner::run`]).
fn part(mut job: FsJob, follower: bool) -> FsJob {
    if follower {
        for t in &mut job.threads {
            *t = jobs::Thread::Idle;
        }
    }
    job
}

/// Waits (at most a minute) for the first rank to have made the anchor and its marker.
fn wait_for_marker(anchor: &std::path::Path) -> Result<()> {
    let marker = anchor.join(super::anchor::MARKER);
    for _ in 0..600 {
        if std::fs::symlink_metadata(&marker).is_ok() {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(anyhow!(
        "the first rank did not make the tree's anchor {} within a minute",
        anchor.display()
    ))
}

/// `cfg` with another shape (a tree found, to remove).
fn with_shape(cfg: &FsConfig, shape: &super::tree::Shape) -> FsConfig {
    FsConfig {
        shape: shape.clone(),
        ..cfg.clone()
    }
}

/// The shape as the results record it.
fn shape_figures(cfg: &FsConfig) -> ShapeFigures {
    let s = &cfg.shape;
    ShapeFigures {
        depth: s.depth,
        width: s.width,
        files_per_dir: s.files,
        distribution: match s.spread {
            super::tree::Spread::Bottom => "bottom".into(),
            super::tree::Spread::All => "all".into(),
        },
        sizes: (s.sizes.iter())
            .map(|&(bytes, weight)| SizeWeight { bytes, weight })
            .collect(),
        dirs: s.dirs() - 1,
        files: s.file_count(),
        bytes: s.total_bytes(),
    }
}

/// Loads a job file's `[fs]` section with the flags of `storlab run` that apply.
pub(crate) fn load(file: &JobText, o: &Overrides) -> Result<Box<dyn Workload>> {
    let parsed: FsFile = crate::job::file::parse_toml(file.path, file.text)?;
    let mut spec = parsed.fs;
    let (mut destroy, mut verify, mut sample_blocks) = (None, None, None);
    o.apply(Keys {
        duration: Some(&mut spec.duration),
        ramp: Some(&mut spec.ramp),
        interval: &mut spec.interval,
        engine: &mut spec.engine,
        seed: &mut spec.seed,
        destroy_data: &mut destroy,
        verify: &mut verify,
        sample_blocks: &mut sample_blocks,
    });
    // A flag's time is every run's.
    for r in &mut spec.run {
        if o.duration.is_some() {
            r.duration = None;
        }
        if o.ramp.is_some() {
            r.ramp = None;
        }
        if o.interval.is_some() {
            r.interval = None;
        }
    }
    let data = crate::job::data::resolve_in(parsed.data.as_ref(), file.path, Some(file.text))?;
    let cfg = super::config::resolve(&spec, &file.path.display().to_string(), data)
        .map_err(|e| o.blame(e, file, "fs"))?;
    Ok(Box::new(Fs { cfg }))
}

/// A rank's workload of the shared `[fs]` text of a run over many hosts: the anchor's
/// templates (`{rank}`, `{host}`, `{node}`) filled in for its place, and its place kept (its
/// slice of a shared tree, its mdtest tasks). Ranks share one tree only when it says so
/// (`shared`, or mdtest's phases, whose tasks each have their own files): otherwise each
/// needs an anchor of its own.
#[cfg(any(feature = "mpi", test))]
pub(crate) fn for_rank(
    text: &str,
    label: &std::path::Path,
    place: &crate::run::cluster::Place,
) -> Result<Box<dyn Workload>, String> {
    let file: FsFile = crate::job::file::parse_toml(label, text).map_err(|e| e.to_string())?;
    let mut spec = file.fs;
    let templated = spec
        .anchor
        .as_ref()
        .is_some_and(|a| a.to_string_lossy().contains('{'));
    if let Some(a) = &spec.anchor {
        spec.anchor = Some(place.expand(a)?);
    }
    let data = crate::job::data::resolve_in(file.data.as_ref(), label, Some(text))
        .map_err(|e| e.to_string())?;
    let mut cfg = super::config::resolve(&spec, &label.display().to_string(), data)
        .map_err(|e| e.to_string())?;
    cfg.rank = super::config::Rank {
        rank: place.rank as u64,
        ranks: place.ranks as u64,
    };
    if let Some(m) = &cfg.mdtest {
        cfg.shape = m.shape(cfg.seed, cfg.rank.ranks);
        if let Some(why) = cfg.shape.refusal() {
            return Err(format!("{}: `fs.mdtest`: {why}", label.display()));
        }
    }
    if cfg.rank.ranks > 1 && !cfg.shared && cfg.mdtest.is_none() && !templated {
        return Err(format!(
            "{}: `fs.anchor`: every rank would make and use the same tree; give each rank its own anchor ({{rank}} or {{host}} in its path) or share the tree (shared = true: each rank its own files)",
            label.display()
        ));
    }
    Ok(Box::new(Fs { cfg }))
}

/// Where a file-system workload came from, as its results record it.
pub(crate) fn source(path: Option<&std::path::Path>) -> JobSource {
    JobSource::Fs {
        path: path.map(|p| p.display().to_string()),
    }
}

/// What the workload does: the tree, the format, the workloads, the runs or phases, the
/// limits, then the first job's timing and engine.
pub(crate) fn describe(cfg: &FsConfig) -> Description {
    let mut d = Description::default();
    if let Some(text) = &cfg.description {
        d.head.push(Line::new("job", text.trim()));
    }
    d.head.push(Line::new(
        "tree",
        format!("{}: {}", cfg.anchor.display(), cfg.shape.text()),
    ));
    d.head.push(Line::new(
        "files",
        format!(
            "opened with {}{}{}",
            match cfg.open.text().as_str() {
                "none" => "no flags".to_string(),
                t => t.to_string(),
            },
            if cfg.open.direct {
                ""
            } else {
                ", through the page cache"
            },
            if cfg.shared && cfg.rank.ranks > 1 {
                format!(", shared by {} ranks, each its own files", cfg.rank.ranks)
            } else {
                String::new()
            }
        ),
    ));
    d.head.push(Line::new("format", format_text(cfg)));
    if let Some(m) = &cfg.mdtest {
        super::mdtest::describe(cfg, m, &mut d);
    } else if cfg.format.runs() {
        describe_passes(cfg, &mut d);
    }
    let limits = limits_text(cfg);
    if !limits.is_empty() {
        d.head.push(Line::new("limits", limits));
    }
    if let Some(j) = first_job(cfg) {
        d.body.extend(description::workers(&j.job));
        d.body
            .push(Line::new("timing", description::timing(&j.job)));
    }
    d.body.push(Line::new(
        "engine",
        match cfg.engine {
            crate::job::EngineKind::Null => {
                "null: no system call is made, every operation completes at once (storlab's own cost per operation)"
            }
            _ => "psync: each operation a system call of its own, made through its directory's descriptor, one at a time a thread",
        },
    ));
    d.body.push(Line::new("seed", cfg.seed.to_string()));
    d
}

fn format_text(cfg: &FsConfig) -> String {
    let by = format!(
        "{} thread{}, {} writes",
        cfg.format_threads,
        if cfg.format_threads == 1 { "" } else { "s" },
        format_size(cfg.format_xfer)
    );
    match cfg.format {
        Format::Restart => {
            format!("restart: what is missing of the tree is made ({by}), what is there is used")
        }
        Format::Yes => format!("yes: a tree there is removed and the tree made anew ({by})"),
        Format::No => "no: the tree is used as it is".into(),
        Format::Only => "only: the tree is made anew, then nothing runs".into(),
        Format::Clean => "clean: the tree is removed, then nothing runs".into(),
    }
}

/// The workloads and passes.
fn describe_passes(cfg: &FsConfig, d: &mut Description) {
    let Some(first) = cfg.passes.first() else {
        return;
    };
    let mut label = "workloads";
    for w in &first.workloads {
        let mix: Vec<String> = w.mix.iter().map(|(o, n)| format!("{o}:{n}")).collect();
        let xfer: Vec<String> = (w.xfer.iter())
            .map(|&(b, n)| match w.xfer.len() {
                1 => format_size(b),
                _ => format!("{}:{n}", format_size(b)),
            })
            .collect();
        let fileio = match w.fileio {
            super::config::FileIo::Sequential => "sequential",
            super::config::FileIo::Random { shared: false } => "random",
            super::config::FileIo::Random { shared: true } => "random, shared",
        };
        let select = match w.select {
            super::config::Select::Random => "random",
            super::config::Select::Sequential => "sequential",
        };
        d.head.push(Line::new(
            label,
            format!(
                "{}: {} thread{}, {}, transfers of {}{}, {fileio} file I/O, {select} file selection{}",
                w.name,
                w.threads,
                if w.threads == 1 { "" } else { "s" },
                mix.join(","),
                xfer.join(","),
                w.rdpct.map(|p| format!(" ({}% reads)", format_number(p))).unwrap_or_default(),
                w.skew.map(|s| format!(", skew {}%", format_number(s))).unwrap_or_default()
            ),
        ));
        label = "";
    }
    let mut label = "runs";
    for p in cfg.passes.iter().take(12) {
        d.head.push(Line::new(
            label,
            format!(
                "{}: {}, {}{} measured",
                p.label,
                match p.rate {
                    Some(r) => format!("{} operations/s (open loop)", format_number(r)),
                    None => "as fast as it goes (closed loop)".into(),
                },
                if p.ramp_ms > 0 {
                    format!("{} warm-up, then ", format_ms(p.ramp_ms))
                } else {
                    String::new()
                },
                format_ms(p.duration_ms)
            ),
        ));
        label = "";
    }
    if cfg.passes.len() > 12 {
        d.head.push(Line::new(
            "",
            format!("… {} runs in all", format_count(cfg.passes.len() as u64)),
        ));
    }
}

/// `p99 of create at most 5 ms; at most 0 failed operations`.
fn limits_text(cfg: &FsConfig) -> String {
    let l = &cfg.limits;
    let op = |o: &Option<super::op::FsOp>| {
        o.map_or("every operation".to_string(), |o| o.name().to_string())
    };
    let mut parts: Vec<String> = Vec::new();
    for (o, ns) in &l.p99_ns {
        parts.push(format!(
            "99th percentile of {} at most {}",
            op(o),
            crate::units::format_ns(*ns as f64)
        ));
    }
    for (o, ns) in &l.mean_ns {
        parts.push(format!(
            "mean of {} at most {}",
            op(o),
            crate::units::format_ns(*ns as f64)
        ));
    }
    for (o, r) in &l.min_rate {
        parts.push(format!("{} at least {}/s", op(o), format_number(*r)));
    }
    if !parts.is_empty() || l.max_errors > 0 {
        parts.push(format!("at most {} failed operations", l.max_errors));
    }
    parts.join("; ")
}
