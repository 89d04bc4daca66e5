//! The command line: clap definitions, subcommands, and the mapping of flags onto a
//! `JobSpec` (flags override job-file values). Nothing depends on this module.

use crate::job::spec::{AccessSpec, JobSpec, WorkerSpec};
use crate::job::{self, Job};
use crate::report::console;
use crate::results::description::Description;
use crate::results::schema::{Document, json_schema};
use crate::results::{Invocation, JobSource, RunResult};
use crate::run::{self, Workload};
use crate::units::{Dur, Percent, Size};
use crate::workloads::plain::Plain;
use crate::workloads::presets;
use crate::workloads::{JobText, Overrides};
use crate::{Usage, exit};
use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use toml::Spanned;

mod compare;
pub use compare::CompareArgs;
mod curve;
mod describe;
mod flags;
mod import;
#[cfg(feature = "mpi")]
mod multihost;
mod output;
mod report;
mod terminal;
#[cfg(test)]
pub(crate) mod tests;
mod trace;
mod uring;

pub use describe::{DryRun, describe};

/// The job file the default job is a copy of.
pub const QUICKSTART_FILE: &str = "examples/quickstart.toml";

/// The job `storlab run` runs with no job file and no target.
pub const QUICKSTART_JOB: &str = include_str!("../../examples/quickstart.toml");

/// storlab: will this storage carry my application's load, with the latency it needs?
#[derive(Debug, Parser)]
#[command(name = "storlab", version, long_version = env!("STORLAB_LONG_VERSION"), about, long_about = None)]
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
    /// List the built-in presets, or print one's job file (`presets show NAME`).
    Presets {
        /// `show NAME` prints the job file.
        #[command(subcommand)]
        action: Option<PresetsAction>,
    },
    /// Print the summary of a results file.
    Report {
        /// A results file written by `storlab run` or `storlab exchange`, or the NDJSON time
        /// series of a run that did not finish (`run.ndjson`), rebuilt into results.
        results: PathBuf,
        /// Print the results JSON instead of the table.
        #[arg(long)]
        json: bool,
        /// Write a self-contained HTML report to FILE instead of printing the table.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Print a table as CSV or Markdown (see --table), or the results as fio's json+
        /// (fio-json), instead.
        #[arg(long, value_name = "FORMAT")]
        format: Option<crate::report::Format>,
        /// The table --format prints.
        #[arg(long, value_name = "TABLE", default_value = "summary")]
        table: crate::report::csv::Table,
        /// The Iometer version whose results layout `--format iometer-csv` writes.
        #[arg(long, value_name = "VERSION", default_value = "1.1.0")]
        iometer_layout: crate::report::iometer_csv::Layout,
        /// `--format fio-json`: only step N's jobs (fio-plot reads a file per queue depth).
        #[arg(long, value_name = "N")]
        step: Option<usize>,
    },
    /// Compare results files side by side (the first is the baseline).
    Compare(CompareArgs),
    /// Hit ratio against cache size (LRU, ARC, S3-FIFO) from the block sample of a run made
    /// with --sample-blocks.
    CacheCurve(curve::CacheCurveArgs),
    /// Block traces from other tools: `trace import` reads one for `cache-curve`.
    Trace {
        /// `import TRACE -o OUT.json`.
        #[command(subcommand)]
        action: trace::TraceAction,
    },
    /// Print a shell completion script, e.g. `storlab completions bash >
    /// /etc/bash_completion.d/storlab`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Convert another tool's job file (fio, Iometer .icf, DiskSpd XML profile, vdbench
    /// parameter file: recognised from its content) into a storlab job (TOML on stdout, or -o
    /// FILE); its comments name the source line of each part.
    Import {
        /// The job file.
        file: PathBuf,
        /// Its format, when it is not recognised: fio, iometer, diskspd or vdbench.
        #[arg(long, value_name = "FORMAT")]
        from: Option<String>,
        /// Leave out what storlab cannot convert (each is listed in the job and on stderr)
        /// instead of refusing the file.
        #[arg(long)]
        lenient: bool,
        /// Place the file's target TARGET (a Windows drive such as C:, a physical disk, a path)
        /// at PATH on this machine (repeatable).
        #[arg(long, value_name = "TARGET=PATH", value_parser = crate::import::parse_map)]
        map: Vec<(String, PathBuf)>,
        /// Write the job to FILE.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Convert a fio job file into a storlab job (TOML on stdout, or -o FILE).
    ImportFio {
        /// The fio job file.
        job: PathBuf,
        /// Leave out the options storlab cannot convert (each is listed in the job and on
        /// stderr) instead of refusing the file.
        #[arg(long)]
        lenient: bool,
        /// Write the job to FILE.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Print the JSON Schema of the results file (`storlab schema`), of a line of its NDJSON
    /// time series (`storlab schema timeseries`) or of a job file (`storlab schema job`).
    Schema {
        /// Which file's schema.
        #[arg(value_enum, default_value = "results")]
        of: SchemaOf,
    },
    /// Print the man page (roff; `storlab man | man -l -`), or write every page to a directory.
    Man {
        /// Write storlab.1 and a page per subcommand (storlab-run.1...) to DIR.
        #[arg(long, short, value_name = "DIR")]
        output: Option<PathBuf>,
    },
}

/// `storlab presets show NAME`.
#[derive(Debug, Subcommand)]
pub enum PresetsAction {
    /// Print a preset's job file, to copy and edit.
    Show {
        /// Preset name.
        name: String,
    },
}

/// Flags of `storlab run`. Each overrides the job file's value (for every worker or access
/// entry when it applies to those).
#[derive(Debug, Args, Default)]
pub struct RunArgs {
    /// Job file (TOML); one with an `[exchange]` or `[users]` section runs as `storlab
    /// exchange` or `storlab users` would. Another tool's job file (fio, Iometer .icf, DiskSpd
    /// XML profile, vdbench) is converted first (see `storlab import`).
    pub job: Option<PathBuf>,
    /// Run a built-in preset (see `storlab presets`).
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub preset: Option<String>,
    /// Convert a fio job file and run it (see `storlab import-fio`).
    #[arg(long, value_name = "JOB.fio", conflicts_with_all = ["job", "preset"])]
    pub fio: Option<PathBuf>,
    /// Convert a DiskSpd command line and run it, e.g. --diskspd "-b8K -d60 -o4 -t2 -r -w30
    /// -Sh D:\\test.dat" (place its targets with --map).
    #[arg(long, value_name = "ARGS", conflicts_with_all = ["job", "preset", "fio"], allow_hyphen_values = true)]
    pub diskspd: Option<String>,
    /// The job file's format, when it is not recognised: fio, iometer, diskspd or vdbench.
    #[arg(long, value_name = "FORMAT", requires = "job")]
    pub from: Option<String>,
    /// Place a converted job's target TARGET (a Windows drive such as C:, a physical disk, a
    /// path) at PATH on this machine (repeatable).
    #[arg(long, value_name = "TARGET=PATH", value_parser = crate::import::parse_map)]
    pub map: Vec<(String, PathBuf)>,
    /// With another tool's job file: leave out what storlab cannot convert (each is listed).
    #[arg(long)]
    pub lenient: bool,
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
    /// Cool-down after measurement: I/O goes on, not counted, e.g. 5s.
    #[arg(long, value_name = "TIME")]
    pub cooldown: Option<Dur>,
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
    /// Closed loop: refill when N slots are free, submitting N at a time (default 1: each I/O on
    /// its own).
    #[arg(long, value_name = "N")]
    pub batch: Option<u32>,
    /// The io_uring fast paths and completion batching.
    #[command(flatten)]
    pub uring: uring::UringArgs,
    /// Seed of offsets and choices.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Allow writing over block devices and files that may hold data.
    #[arg(long)]
    pub destroy_data: bool,
    /// Verify data: headers and checksums on every written block, checked on every read and
    /// in a final read-back pass.
    #[arg(long)]
    pub verify: bool,
    /// Record a sample of the blocks every I/O touches (about 64 Ki distinct 4 KiB blocks) in
    /// RUN.blocks beside the results, for `storlab cache-curve`.
    #[arg(long)]
    pub sample_blocks: bool,
    /// What a failed I/O does: continue (up to --max-errors) or stop.
    #[arg(long, value_name = "WHAT")]
    pub on_error: Option<String>,
    /// With --on-error continue: stop after this many failed I/Os (default 1000).
    #[arg(long, value_name = "N")]
    pub max_errors: Option<u64>,
    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Where results go and how they are shown: the same for `run` and `exchange`.
#[derive(Debug, Args, Default, Clone)]
pub struct OutputArgs {
    /// Print what would run (the resolved job, or the sizing) and exit without touching any
    /// target.
    #[arg(long)]
    pub dry_run: bool,
    /// Results file (default: storlab-results/KIND-TIMESTAMP.json).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the results JSON on stdout (and nothing else).
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// No live progress.
    #[arg(long, short)]
    pub quiet: bool,
    /// Serve a live view while the run goes: a page of live charts, /live.json and /metrics
    /// (Prometheus). PORT listens on loopback; ADDR:PORT (e.g. 0.0.0.0:9100) anywhere, which
    /// the page then says.
    #[arg(long, value_name = "PORT|ADDR:PORT")]
    pub serve: Option<String>,
    /// With --serve: keep serving the final figures this long after the run (so that a
    /// scraper gets them), e.g. 30s.
    #[arg(long, value_name = "DURATION", requires = "serve")]
    pub serve_linger: Option<Dur>,
}

/// Writes the HTML report of `r` to `path` (`-`: standard output), and says so on stderr.
fn write_html(path: &Path, r: &RunResult) -> Result<()> {
    let html = crate::report::html::render(r);
    output::emit("the HTML report", path, &html)?;
    if !output::is_stdout(path) {
        console::note(&format!(
            "HTML report: {} (self-contained: open it in a browser or send it as it is)",
            path.display()
        ));
    }
    Ok(())
}

/// The rooms that declare a subcommand of their own, and it.
fn room_commands() -> Vec<(
    &'static crate::workloads::Room,
    &'static crate::workloads::Subcommand,
)> {
    (crate::workloads::rooms().into_iter())
        .filter_map(|r| Some((r, r.subcommand.as_ref()?)))
        .collect()
}

/// `storlab`'s command: its own subcommands, and each room's that it declares itself (its
/// flags, its spec's, and the output flags every run takes), listed after `run` in the rooms'
/// order. The help, the completions and the manual pages are of this.
pub fn command() -> clap::Command {
    let base = <Cli as clap::CommandFactory>::command();
    let own: Vec<String> = (base.get_subcommands())
        .map(|c| c.get_name().to_string())
        .collect();
    let rooms = room_commands();
    let with_rooms = rooms.iter().fold(base, |c, (_, s)| {
        // The about last: the flags' structs would give theirs.
        let sub = OutputArgs::augment_args((s.args)(clap::Command::new(s.name)));
        c.subcommand(sub.about(s.about))
    });
    let order = std::iter::once("run")
        .chain(rooms.iter().map(|(_, s)| s.name))
        .chain(own.iter().map(String::as_str).filter(|n| *n != "run"));
    order.enumerate().fold(with_rooms, |c, (i, name)| {
        c.mut_subcommand(name, |s| s.display_order(i))
    })
}

/// What the room's own subcommand that `m` (of [`command`]) holds would run, as its dry run
/// describes it, errors and all; `None` when `m` holds none (the fuzz targets' way in).
pub fn describe_room(m: &clap::ArgMatches) -> Option<Result<Description>> {
    let (name, sub) = m.subcommand()?;
    let (_, s) = room_commands().into_iter().find(|(_, s)| s.name == name)?;
    Some((s.load)(sub).map(|(w, _)| w.describe()))
}

/// Runs the command line; returns the exit code. Errors are returned for `main` to print.
pub fn run<I: IntoIterator<Item = OsString>>(args: I) -> Result<i32> {
    crate::workloads::install_views();
    let rooms = room_commands();
    let parsed = command().try_get_matches_from(args).and_then(|m| {
        let room = (m.subcommand())
            .and_then(|(name, sub)| Some((rooms.iter().find(|(_, s)| s.name == name)?, sub)));
        match room {
            Some((r, sub)) => {
                let out = <OutputArgs as clap::FromArgMatches>::from_arg_matches(sub)?;
                Ok(Err((*r, sub.clone(), out)))
            }
            None => <Cli as clap::FromArgMatches>::from_arg_matches(&m).map(Ok),
        }
    });
    let cli = match parsed {
        Ok(Ok(c)) => c,
        Ok(Err(((room, s), sub, out))) => {
            #[cfg(feature = "mpi")]
            if let Some(over) = crate::workloads::over_hosts(room.section) {
                if crate::cluster::launched(&|var| std::env::var(var).ok()).is_some() {
                    return multihost::room_over_mpi(over, s.name, &sub, &out);
                }
            }
            #[cfg(not(feature = "mpi"))]
            let _ = room; // Only a build with MPI runs a room over many hosts.
            // One copy per host without MPI (as for `run`, below).
            crate::cluster::check_launcher(1, &|var| std::env::var(var).ok()).map_err(Usage)?;
            let (w, invocation) = (s.load)(&sub)?;
            return run_workload(&*w, &out, invocation);
        }
        Err(e) => {
            match terminal::better_tip(&e) {
                Some(text) => console::note(text.trim_end()),
                None => {
                    let _ = e.print();
                }
            }
            return Ok(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    #[cfg(feature = "mpi")]
    if let Command::Run(args) = &cli.command {
        if crate::cluster::launched(&|var| std::env::var(var).ok()).is_some() {
            return multihost::run_over_mpi(args);
        }
    }
    if matches!(cli.command, Command::Run(_)) {
        // One copy per host without MPI: refuse a launcher's N copies that would each run
        // the whole job as if alone, on the same targets.
        crate::cluster::check_launcher(1, &|var| std::env::var(var).ok()).map_err(Usage)?;
    }
    match cli.command {
        Command::Run(args) => run_job(*args),
        Command::CacheCurve(args) => curve::run_cache_curve(args),
        Command::Trace { action } => trace::run_trace(action),
        Command::Presets { action } => {
            match action {
                None => {
                    let mut out = String::new();
                    for p in presets::PRESETS {
                        out.push_str(&format!(
                            "{:<24} {}\n{:<24} source: {}\n",
                            p.name, p.description, "", p.source
                        ));
                    }
                    out.push_str("\nstorlab presets show NAME prints the job file; storlab run --preset NAME [--target PATH ...] [--duration ...] runs it.");
                    console::print_text(&out);
                }
                Some(PresetsAction::Show { name }) => {
                    let p = presets::find(&name).ok_or_else(|| {
                        let all: Vec<&str> = presets::PRESETS.iter().map(|p| p.name).collect();
                        Usage(
                            presets::unknown(&name, "", &all)
                                .trim_start_matches("--preset: ")
                                .to_string(),
                        )
                    })?;
                    console::print_text(p.toml.trim_end());
                }
            }
            Ok(exit::OK)
        }
        Command::Compare(args) => compare::compare(args),
        Command::Completions { shell } => terminal::completions(shell),
        Command::Man { output } => terminal::man(output.as_deref()),
        Command::Schema { of } => {
            let schema = match of {
                SchemaOf::Results => json_schema(Document::Results),
                SchemaOf::Timeseries => json_schema(Document::Timeseries),
                SchemaOf::Job => crate::workloads::job_schema(),
            };
            crate::report::console::print_text(&serde_json::to_string_pretty(&schema)?);
            Ok(exit::OK)
        }
        Command::ImportFio {
            job,
            lenient,
            output,
        } => import::import_fio(&job, lenient, output.as_deref()),
        Command::Import {
            file,
            from,
            lenient,
            map,
            output,
        } => {
            let opts = crate::import::Options { lenient, map };
            import::import(&file, from.as_deref(), &opts, output.as_deref())
        }
        Command::Report {
            results,
            json,
            output,
            format,
            table,
            iometer_layout,
            step,
        } => report::report(
            &results,
            json,
            output.as_deref(),
            (format, table, iometer_layout, step),
        ),
    }
}

/// The exit code for an error ([`exit::of_error`]).
pub fn exit_code(e: &anyhow::Error) -> i32 {
    exit::of_error(e)
}

/// Runs `w` as `out` asks (or, with --dry-run, says what it would do) and returns the exit
/// code. Every command that runs a workload comes here.
fn run_workload(w: &dyn Workload, out: &OutputArgs, invocation: Invocation) -> Result<i32> {
    // What a run writes, `storlab report` reads: a job whose results load would refuse is
    // refused now, before the dry run or anything else.
    for job in w.jobs() {
        crate::results::validate::runnable(&job)
            .map_err(|e| Usage(format!("this job cannot run: {e}")))?;
    }
    if out.dry_run {
        return dry_run(w, &invocation.source);
    }
    let notes = w.notes();
    let described = w.describe();
    let head = Description {
        head: described.head.clone(),
        body: Vec::new(),
    };
    out.run(w.kind(), invocation, described, |opts, signals, live| {
        if !out.json {
            // What runs, said as it starts (the summary at the end says it all again).
            console::note(console::description_block(&head, &[]).trim_end());
            for n in &notes {
                console::note(n);
            }
        }
        if let Some(progress) = w.progress() {
            live.show_extra(progress);
        }
        w.run(&mut run::Runner::new(signals, live), opts)
    })
}

/// What a run of `w` would do (the dry run's text, and the refusals it predicts).
pub(crate) fn describe_workload(w: &dyn Workload) -> describe::DryRun {
    describe::dry_run(&w.describe(), &w.jobs())
}

/// Prints what a run of `w` (from `source`) would do; exit code 2 when the run would be
/// refused.
fn dry_run(w: &dyn Workload, source: &JobSource) -> Result<i32> {
    let d = describe_workload(w);
    let mut text = format!(
        "dry run of the {}: nothing was written; this is what the run would do\n",
        console::source_text(source)
    );
    for n in w.notes() {
        text.push_str(&n);
        text.push('\n');
    }
    text.push_str(d.text.trim_end());
    console::print_text(&text);
    Ok(if d.refused.is_empty() {
        exit::OK
    } else {
        exit::USAGE
    })
}

fn run_job(args: RunArgs) -> Result<i32> {
    let input = import::job_input(&args)?;
    if let Some(input) = &input {
        if let Some(room) = crate::workloads::room_of(&input.text) {
            // A workload's job file: its I/O comes from its section, so flags about workers
            // and access entries do not apply to it.
            let what = match &args.preset {
                Some(name) => format!("--preset {name}"),
                None => input.label.display().to_string(),
            };
            if let Some(f) = flags::RUN_FLAGS
                .iter()
                .find(|f| (f.given)(&args) && !room.flags.contains(&f.flag))
            {
                return Err(Usage(format!(
                    "{} does not apply to {what}, {}; leave it out, or run it with `{}`",
                    f.flag,
                    room.what,
                    room.hint.replace("FILE", &what),
                ))
                .into());
            }
            let text = JobText {
                path: &input.label,
                text: &input.text,
            };
            let w = (room.load)(&text, &overrides(&args))?;
            let invocation = Invocation {
                source: input.source.clone(),
                flags: flags::given(flags::RUN_FLAGS, &args),
            };
            return run_workload(w.as_ref(), &args.out, invocation);
        }
    }
    let job = job_of(&args, input.as_ref())?;
    let source = input.map_or(JobSource::Flags, |i| i.source);
    let invocation = Invocation {
        source,
        flags: flags::given(flags::RUN_FLAGS, &args),
    };
    run_workload(&Plain { job }, &args.out, invocation)
}

/// The flags of `storlab run` that a workload's job file takes.
fn overrides(a: &RunArgs) -> Overrides {
    Overrides {
        duration: a.duration,
        ramp: a.ramp,
        interval: a.interval,
        engine: a.engine.clone(),
        seed: a.seed,
        destroy_data: a.destroy_data,
        verify: a.verify,
        sample_blocks: a.sample_blocks,
    }
}

/// Builds the job from the job file (or the quickstart job, or a one-line job) and the flags.
pub fn build_job(args: &RunArgs) -> Result<Job> {
    job_of(args, import::job_input(args)?.as_ref())
}

/// What `storlab run` with `args` would do: its dry run, for a plain job or a workload's job
/// file (another tool's converted into one: vdbench's file-system definitions are a
/// file-system workload's).
pub fn dry_run_of(args: &RunArgs) -> Result<DryRun> {
    let input = import::job_input(args)?;
    if let Some(i) = &input {
        if let Some(room) = crate::workloads::room_of(&i.text) {
            let text = JobText {
                path: &i.label,
                text: &i.text,
            };
            let w = (room.load)(&text, &overrides(args))?;
            return Ok(describe_workload(w.as_ref()));
        }
    }
    Ok(describe(&job_of(args, input.as_ref())?))
}

/// The job of `input` (none: a one-line job from the flags) with the flags applied.
fn job_of(args: &RunArgs, input: Option<&import::JobInput>) -> Result<Job> {
    let mut spec = match input {
        Some(i) => job::file::parse(&i.label, &i.text)?,
        None => one_line_spec(),
    };
    flags::apply_run(&mut spec, args);
    // The file's description says what the file runs; flags that changed the job are named
    // after it, so that no view (the summary, the HTML title, the exports) reads as the file
    // alone when it was not.
    let given = flags::given(flags::RUN_FLAGS, args);
    if let Some(d) = spec.description.as_mut().filter(|_| !given.is_empty()) {
        *d = format!(
            "{} (as its job file says it; changed by {})",
            d.trim(),
            given.join(", ")
        );
    }
    let job = job::resolve(&spec, input.map(|i| (i.label.as_path(), i.text.as_str())))
        .map_err(|e| flags::blame_run(e, args))?;
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

/// A document whose JSON Schema `storlab schema` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaOf {
    /// The results file (`RESULTS.json`).
    Results,
    /// One line of the time series (`RESULTS.ndjson`).
    Timeseries,
    /// A job file (`storlab run JOB.toml`), its TOML as JSON: the keys and values as written,
    /// before they are validated; a plain job or any workload's section (`[exchange]`,
    /// `[users]`, `[database]`, `[calibrate]`, `[etcd]`, `[wal_sync]`, `[fs]`).
    Job,
}
