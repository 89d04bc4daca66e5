//! Simulated mailbox users (LoadGen-class): a population of users doing tasks on a mail-store
//! model whose I/O goes to the engine. `config` (the `[users]` section and its engine job),
//! `dispatch` (LoadGen's pacing and overload rule), `recipe` (what each task does, step by
//! step, to the mailboxes), `store` (the buffer cache of `cache`, each database's `log` and the
//! checkpoint writes of `flusher`, turning steps into I/O), `layout` (where a mailbox's data
//! lives in its database file) and `source` (the population as a request source: per-user
//! queues, running tasks, per-task latency and the population's time series).

pub(crate) mod cache;
#[cfg(test)]
pub(crate) mod calibration;
pub(crate) mod cli;
pub(crate) mod config;
pub(crate) mod dispatch;
pub(crate) mod flusher;
pub(crate) mod layout;
pub(crate) mod log;
pub(crate) mod profile;
pub(crate) mod recipe;
pub(crate) mod run;
pub(crate) mod section;
pub(crate) mod source;
pub(crate) mod store;
pub(crate) mod view;
pub(crate) mod workload;

/// `[users]` job files. Their duration is simulated time (given to `storlab users`) and they
/// have no ramp: `--duration` and `--ramp` do not apply.
pub(crate) const ROOM: crate::workloads::Room = crate::workloads::Room {
    section: "users",
    what: "a simulated-users job (its I/O comes from the users' tasks)",
    hint: "storlab users FILE --duration ...",
    flags: crate::workloads::OVERRIDE_FLAGS.split_at(2).1,
    load: workload::load,
    schema: schemars::SchemaGenerator::subschema_for::<config::UsersFile>,
    view: &view::UsersView,
    subcommand: Some(cli::SUBCOMMAND),
    foreign: None,
};
