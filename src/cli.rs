//! The command line: clap definitions, subcommands, and the mapping of flags onto a
//! [`JobSpec`] (flags override job-file values). Nothing depends on this module.

use crate::job::spec::{AccessSpec, JobSpec, TargetSpec, WorkerSpec};
use crate::job::units::{Dur, Percent, Size, format_duration, format_size};
use crate::job::{self, Job, JobError};
use crate::report::{console, json};
use crate::run::{self, RunOptions, Signals};
use crate::{Usage, exit};
use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The job `storlab run` runs with no job file and no target.
pub const QUICKSTART_JOB: &str = include_str!("../examples/quickstart.toml");

/// storlab: will this storage carry my application's load, with the latency it needs?
#[derive(Debug, Parser)]
#[command(name = "storlab", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a job file, a one-line job (--target ...), or with nothing: a 30 s mixed workload on
    /// a 1 GiB scratch file under ./storlab-scratch.
    Run(Box<RunArgs>),
    /// Print the summary of a results file.
    Report {
        /// A results file written by `storlab run`.
        results: PathBuf,
        /// Print the results JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
}

/// Flags of `storlab run`. Each overrides the job file's value (for every worker or access
/// entry when it applies to those).
#[derive(Debug, Args, Default)]
pub struct RunArgs {
    /// Job file (TOML).
    pub job: Option<PathBuf>,
    /// Target file or block device (repeatable); replaces the job's targets.
    #[arg(long = "target", value_name = "PATH")]
    pub targets: Vec<PathBuf>,
    /// Size of file targets, e.g. 1GiB (k/KiB... are 1024-based, KB/MB... 1000-based).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<Size>,
    /// Block size, e.g. 4k.
    #[arg(long, value_name = "SIZE")]
    pub bs: Option<Size>,
    /// Read share, e.g. 70 or 70%.
    #[arg(long, value_name = "PCT")]
    pub read: Option<Percent>,
    /// Random share, e.g. 100.
    #[arg(long, value_name = "PCT")]
    pub random: Option<Percent>,
    /// Offset distribution: uniform, zipf:1.2, zoned:80/10:20/90.
    #[arg(long, value_name = "DIST")]
    pub distribution: Option<String>,
    /// Queue depth per worker.
    #[arg(long, value_name = "N")]
    pub qd: Option<u32>,
    /// Number of workers (threads) per worker group.
    #[arg(long, value_name = "N")]
    pub workers: Option<u32>,
    /// Open loop: I/Os per second per worker.
    #[arg(long, value_name = "IOPS")]
    pub rate: Option<f64>,
    /// Open-loop arrivals: uniform or poisson.
    #[arg(long, value_name = "KIND")]
    pub arrivals: Option<String>,
    /// Measured duration, e.g. 30s.
    #[arg(long, value_name = "TIME")]
    pub duration: Option<Dur>,
    /// Ramp before measurement, e.g. 5s.
    #[arg(long, value_name = "TIME")]
    pub ramp: Option<Dur>,
    /// Time-series interval, e.g. 1s.
    #[arg(long, value_name = "TIME")]
    pub interval: Option<Dur>,
    /// Engine: io_uring, psync or null.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Use the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Open targets with O_DSYNC (every write durable).
    #[arg(long)]
    pub sync: bool,
    /// fdatasync after every N writes of each entry.
    #[arg(long, value_name = "N")]
    pub fsync_every: Option<u32>,
    /// Closed loop: refill only when N slots are free (default 1).
    #[arg(long, value_name = "N")]
    pub batch: Option<u32>,
    /// Seed of offsets and choices.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Allow writing over block devices and files that may hold data.
    #[arg(long)]
    pub destroy_data: bool,
    /// Print the resolved job and exit without touching any target.
    #[arg(long)]
    pub dry_run: bool,
    /// Results file (default: storlab-results/run-TIMESTAMP.json).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the results JSON on stdout (and nothing else).
    #[arg(long)]
    pub json: bool,
    /// No live progress.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs the command line; returns the exit code. Errors are returned for `main` to print.
pub fn run<I: IntoIterator<Item = OsString>>(args: I) -> Result<i32> {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return Ok(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    match cli.command {
        Command::Run(args) => run_job(*args),
        Command::Report { results, json } => {
            let r = json::load(&results)?;
            if json {
                console::print_text(&json::to_string(&r)?);
            } else {
                console::print_summary(&r);
            }
            Ok(exit::OK)
        }
    }
}

/// The exit code for an error: 2 for usage and validation errors, 1 otherwise.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| c.is::<Usage>() || c.is::<JobError>()) {
        exit::USAGE
    } else {
        exit::RUNTIME
    }
}

fn run_job(args: RunArgs) -> Result<i32> {
    let job = build_job(&args)?;
    if args.dry_run {
        console::print_text(&describe(&job));
        return Ok(exit::OK);
    }
    let results_path = args.output.clone().unwrap_or_else(|| {
        PathBuf::from("storlab-results").join(format!(
            "run-{}.json",
            chrono::Local::now().format("%Y%m%d-%H%M%S")
        ))
    });
    let opts = RunOptions {
        results_path: results_path.clone(),
        command: std::env::args().collect(),
    };
    let signals = Signals::install()?;
    let mut live = console::Live::new(args.quiet || args.json);
    let result = run::execute(&job, &opts, &signals, &mut live)?;
    if args.json {
        console::print_text(&json::to_string(&result)?);
    } else {
        console::print_summary(&result);
        console::note(&format!(
            "results: {} (time series: {})",
            results_path.display(),
            run::timeseries_path(&results_path).display()
        ));
    }
    Ok(match result.interrupted {
        crate::report::run_result::Interrupted::No => exit::OK,
        crate::report::run_result::Interrupted::Yes(_) => exit::RUNTIME,
    })
}

/// Builds the job from the job file (or the quickstart job, or a one-line job) and the flags.
pub fn build_job(args: &RunArgs) -> Result<Job> {
    let (mut spec, source) = match &args.job {
        Some(path) => {
            let (spec, text) = job::load(path)?;
            (spec, Some((path.clone(), text)))
        }
        None if args.targets.is_empty() => {
            let name = Path::new("quickstart.toml");
            (
                job::parse(name, QUICKSTART_JOB)?,
                Some((name.to_path_buf(), QUICKSTART_JOB.to_string())),
            )
        }
        None => (one_line_spec(), None),
    };
    apply_flags(&mut spec, args)?;
    let job = match &source {
        Some((p, t)) => job::resolve(&spec, Some((p, t))),
        None => job::resolve(&spec, None),
    }?;
    Ok(job)
}

fn one_line_spec() -> JobSpec {
    JobSpec {
        worker: vec![Spanned::new(
            0..0,
            WorkerSpec {
                name: Some("worker".into()),
                access: vec![Spanned::new(0..0, AccessSpec::default())],
                ..Default::default()
            },
        )],
        ..Default::default()
    }
}

fn apply_flags(spec: &mut JobSpec, a: &RunArgs) -> Result<()> {
    if !a.targets.is_empty() {
        spec.target = a
            .targets
            .iter()
            .map(|p| {
                Spanned::new(
                    0..0,
                    TargetSpec {
                        path: Some(p.clone()),
                        ..Default::default()
                    },
                )
            })
            .collect();
        for w in &mut spec.worker {
            w.get_mut().targets = None;
        }
    }
    for t in &mut spec.target {
        let t = t.get_mut();
        if a.size.is_some() {
            t.size = a.size;
        }
        if a.sync {
            t.sync = Some(true);
        }
    }
    macro_rules! set {
        ($field:expr, $value:expr) => {
            if let Some(v) = $value {
                $field = Some(v);
            }
        };
    }
    set!(spec.duration, a.duration);
    set!(spec.ramp, a.ramp);
    set!(spec.interval, a.interval);
    set!(spec.engine, a.engine.clone());
    set!(spec.seed, a.seed);
    set!(spec.batch, a.batch);
    if a.buffered {
        spec.buffered = Some(true);
    }
    if a.destroy_data {
        spec.destroy_data = Some(true);
    }
    for w in &mut spec.worker {
        let w = w.get_mut();
        set!(w.queue_depth, a.qd);
        set!(w.count, a.workers);
        set!(w.rate_iops, a.rate);
        set!(w.arrivals, a.arrivals.clone());
        for e in &mut w.access {
            let e = e.get_mut();
            set!(e.block_size, a.bs);
            set!(e.read, a.read);
            set!(e.random, a.random);
            set!(e.distribution, a.distribution.clone());
            set!(e.fsync_every, a.fsync_every);
            if a.bs.is_some() {
                e.align = None;
            }
        }
    }
    Ok(())
}

/// What a run of `job` would do, for `--dry-run`.
pub fn describe(job: &Job) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "engine {:?} · duration {} · ramp {} · interval {} · seed {} · {}",
        job.engine,
        format_duration(std::time::Duration::from_millis(job.duration_ms)),
        format_duration(std::time::Duration::from_millis(job.ramp_ms)),
        format_duration(std::time::Duration::from_millis(job.interval_ms)),
        job.seed,
        if job.buffered {
            "buffered (page cache)"
        } else {
            "O_DIRECT"
        }
    );
    let _ = writeln!(o, "targets:");
    for (i, t) in job.targets.iter().enumerate() {
        let writers: Vec<&str> = job
            .workers
            .iter()
            .filter(|w| w.targets.contains(&i) && w.writes())
            .map(|w| w.name.as_str())
            .collect();
        let _ = writeln!(
            o,
            "  {} = {} · {} · {}{}",
            t.name,
            t.path.display(),
            t.size_bytes
                .map(|s| format!("{} ({s} bytes): a new or storlab-made file is prepared (fully written with random data)", format_size(s)))
                .unwrap_or_else(|| "existing size".into()),
            if writers.is_empty() {
                "read only".to_string()
            } else {
                format!("written by {}", writers.join(", "))
            },
            if t.sync { " · O_DSYNC" } else { "" }
        );
    }
    let _ = writeln!(o, "workers:");
    for w in &job.workers {
        let _ = writeln!(
            o,
            "  {} · queue depth {} · targets {} ({:?}){}{}",
            w.name,
            w.queue_depth,
            w.targets
                .iter()
                .map(|&t| job.targets[t].name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            w.target_choice,
            w.rate
                .map(|r| format!(" · open loop {} IOPS {:?}", r.iops, r.arrivals))
                .unwrap_or_else(|| " · closed loop".into()),
            w.cpu.map(|c| format!(" · CPU {c}")).unwrap_or_default()
        );
        for a in &w.access {
            let _ = writeln!(
                o,
                "    class {} · weight {} · {} · {}% read · {}% random · align {} · {:?}{}{}",
                job.classes[a.class],
                a.weight,
                format_size(a.block_size_bytes),
                a.read_pct,
                a.random_pct,
                format_size(a.align_bytes),
                a.distribution,
                if a.sync { " · RWF_DSYNC" } else { "" },
                if a.fsync_every > 0 {
                    format!(" · fdatasync every {} writes", a.fsync_every)
                } else {
                    String::new()
                }
            );
        }
    }
    for w in &job.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    o
}

/// Loads a job file and resolves it (used by tests and `examples/`).
pub fn resolve_file(path: &Path) -> Result<Job> {
    let (spec, text) = job::load(path)?;
    job::resolve(&spec, Some((path, &text))).context("resolving the job")
}
