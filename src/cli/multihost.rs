//! `storlab run` and a room's own subcommand (`storlab exchange`, `storlab fs`) started by an
//! MPI launcher (the `mpi` feature): one job over every rank, the merged results written by
//! rank 0, the other ranks quiet.

use super::{Invocation, JobSource, OutputArgs, RunArgs, flags};
use crate::report::console;
use crate::run::Workload;
use crate::run::{self, RunOptions, Signals};
use crate::workloads::OverHosts;
use crate::{Usage, exit, job};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// `storlab run JOB` started by an MPI launcher: one job over every rank, the merged results
/// written by rank 0 (the other ranks print nothing and write their own results beside).
pub(super) fn run_over_mpi(args: &RunArgs) -> Result<i32> {
    use crate::cluster::Cluster as _;
    let Some(path) = args.job.as_ref().filter(|_| args.preset.is_none()) else {
        return Err(Usage(
            "a run over many hosts needs a job file (its targets' paths can use {rank}, {host} and {node}): storlab run JOB.toml".into(),
        )
        .into());
    };
    let changed = flags::given(flags::RUN_FLAGS, args);
    if let Some(f) = changed.first() {
        return Err(Usage(format!(
            "{f}: a run over many hosts runs its job file as written; set it in {}",
            path.display()
        ))
        .into());
    }
    let mpi = join()?;
    let text = if mpi.rank() == 0 {
        Some(job::file::read_text(path)?)
    } else {
        None
    };
    let invocation = Invocation {
        source: JobSource::File {
            path: path.display().to_string(),
        },
        flags: Vec::new(),
    };
    over_mpi(&mpi, text, path, invocation, &args.out, "run")
}

/// A room's own subcommand started by an MPI launcher (`storlab exchange`, `storlab fs`): each
/// rank runs the room's workload for its own place (its paths' `{rank}`, `{host}`, `{node}`),
/// all starting together; rank 0 writes the merged results, with a verdict per host.
pub(super) fn room_over_mpi(
    over: &OverHosts,
    name: &str,
    m: &clap::ArgMatches,
    out: &OutputArgs,
) -> Result<i32> {
    use crate::cluster::Cluster as _;
    let mpi = join()?;
    let text = if mpi.rank() == 0 {
        Some((over.text)(m)?)
    } else {
        None
    };
    let invocation = (over.invocation)(m)?;
    over_mpi(&mpi, text, Path::new(name), invocation, out, name)
}

/// Joins the MPI job, refusing a launcher that started more ranks than MPI sees: a launcher of
/// another MPI than the one storlab was built with starts copies that each see a world of one,
/// and would each run the whole job on the same targets.
fn join() -> Result<crate::cluster::Mpi> {
    use crate::cluster::Cluster as _;
    let mpi =
        crate::cluster::Mpi::join().ok_or_else(|| Usage("MPI could not be initialised".into()))?;
    crate::cluster::check_launcher(mpi.size(), &|var| std::env::var(var).ok()).map_err(Usage)?;
    Ok(mpi)
}

/// Runs `text` over the ranks of `mpi`: rank 0 with the usual output, the others quiet.
fn over_mpi(
    mpi: &crate::cluster::Mpi,
    text: Option<String>,
    label: &Path,
    invocation: Invocation,
    out: &OutputArgs,
    kind: &str,
) -> Result<i32> {
    use crate::cluster::Cluster as _;
    if mpi.rank() == 0 {
        let missing = std::cell::Cell::new(false);
        // The description, as rank 0 reads the job (its own paths).
        let text_ref = text.as_deref().unwrap_or_default();
        let place = run::cluster::Place {
            rank: 0,
            ranks: mpi.size(),
            host: mpi.host().to_string(),
            node: 0,
        };
        let description = decode(text_ref, label, &place).map_err(Usage)?.describe();
        let code = out.run(kind, invocation, description, |opts, signals, live| {
            let r = run::cluster::run(mpi, text.as_deref(), label, opts, signals, live, &decode)
                .map(Option::unwrap_or_default)?;
            missing.set(r.hosts.iter().any(|h| !h.present));
            Ok(r)
        })?;
        if missing.get() {
            // A rank that hangs would keep the job (and every rank's exit) waiting: the merged
            // results are written, so end them all.
            mpi.abort(code);
        }
        return Ok(code);
    }
    let results_path = out
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("storlab-results").join(format!("{kind}-mpi.json")));
    let mut opts = RunOptions::new(results_path, std::env::args().collect());
    opts.invocation = invocation;
    let signals = Signals::install()?;
    let mut quiet = console::Live::new(true);
    run::cluster::run(mpi, None, label, &opts, &signals, &mut quiet, &decode)?;
    Ok(exit::OK)
}

/// A rank's workload from the shared text: a plain job file, or the section of a room that
/// runs over many hosts.
fn decode(
    text: &str,
    label: &Path,
    place: &run::cluster::Place,
) -> Result<Box<dyn Workload>, String> {
    match crate::workloads::room_of(text) {
        None => run::cluster::rank_job(text, label, place)
            .map(|job| Box::new(crate::workloads::plain::Plain { job }) as Box<dyn Workload>),
        Some(room) => match crate::workloads::over_hosts(room.section) {
            Some(over) => (over.for_rank)(text, label, place),
            None => Err(format!("{} does not run over many hosts", room.what)),
        },
    }
}
