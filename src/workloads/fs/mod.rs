//! File-system workloads: what applications do to a file system, as vdbench's file-system
//! definitions (`fsd`/`fwd`), IO500's mdtest and fio's file engines measure it. A tree under
//! an anchor directory (depth, width, files per directory, file sizes with weights, files in
//! the deepest directories or in all), made by a format and reused when it is there and
//! storlab's (a marker it owns); operations (read, write, create, delete, open, close, getattr,
//! setattr, access, mkdir, rmdir, copy, rename) in weighted mixes of workloads, sequential or
//! random file I/O, random or sequential file selection, transfer sizes, threads, closed or
//! open loop; or mdtest's phases. Every operation goes through the common path: a worker per
//! thread, its source ([`source`]) choosing what to do, a backend of its own ([`backend`])
//! making each operation a system call through its directory's descriptor, the worker's
//! clock and histograms timing it, a class per operation of each workload.
//!
//! The parts: [`spec`] (the `[fs]` section and `storlab fs`'s flags, declared once),
//! [`config`] (resolved), [`passes`] (runs and their cycles), [`mdtest`] (its phases), [`phases`] (the order the format, a removal and mdtest act in),
//! [`tree`] (the shape, names and sizes), [`state`] (what exists while it runs), [`anchor`]
//! (the tree on disk, and its safety), [`backend`], [`source`], [`jobs`] (the jobs and their
//! sources), [`figures`] (the section's figures and the rules), [`section`] (the results
//! file's part), [`workload`] (the workload).

pub(crate) mod anchor;
pub(crate) mod backend;
pub(crate) mod cli;
pub(crate) mod config;
pub(crate) mod figures;
pub(crate) mod jobs;
pub(crate) mod mdtest;
pub(crate) mod op;
pub(crate) mod passes;
pub(crate) mod phases;
pub(crate) mod section;
pub(crate) mod source;
pub(crate) mod spec;
pub(crate) mod state;
#[cfg(test)]
mod tests;
pub(crate) mod tree;
pub(crate) mod view;
pub(crate) mod workload;

use crate::workloads::Room;
#[cfg(feature = "mpi")]
pub(crate) use cli::OVER_HOSTS;

/// `[fs]` job files.
pub(crate) const ROOM: Room = Room {
    section: "fs",
    what: "a file-system workload (its operations come from the `[fs]` section)",
    hint: "storlab fs FILE --threads ...",
    flags: &["--duration", "--ramp", "--interval", "--engine", "--seed"],
    load: workload::load,
    schema: schemars::SchemaGenerator::subschema_for::<spec::FsFile>,
    view: &view::FsView,
    subcommand: Some(cli::SUBCOMMAND),
    foreign: None,
};
