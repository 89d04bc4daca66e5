//! Simulated mailbox users (LoadGen-class): a population of users doing tasks on a mail-store
//! model whose I/O goes to the engine. `config` (the `[users]` section and its engine job),
//! `dispatch` (LoadGen's pacing and overload rule), `recipe` (what each task does, step by
//! step, to the mailboxes), `store` (the buffer cache of `cache`, each database's `log` and the
//! checkpoint writes of `flusher`, turning steps into I/O), `layout` (where a mailbox's data
//! lives in its database file) and `source` (the population as a request source: per-user
//! queues, running tasks, per-task latency and the population's time series).

pub mod cache;
#[cfg(test)]
pub(crate) mod calibration;
pub mod config;
pub mod dispatch;
pub mod flusher;
pub mod layout;
pub mod log;
pub mod recipe;
pub mod source;
pub mod store;
