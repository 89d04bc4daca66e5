//! Simulated mailbox users (LoadGen-class): the mail-store model whose I/O a user population
//! causes. So far the store's three mechanisms, each a pure model tested on its own: the buffer
//! cache with ESE's LRU-2 replacement (`cache`), the transaction log with group commit in whole
//! 4 KiB segments (`log`) and the checkpoint flusher that writes the oldest dirty pages with
//! their neighbours (`flusher`), and where a mailbox's messages live in its database file
//! (`layout`); and LoadGen's pacing of tasks with its overload rule (`dispatch`). Task recipes,
//! the store and the request source that turns them into engine I/O build on these.

pub mod cache;
pub mod config;
pub mod dispatch;
pub mod flusher;
pub mod layout;
pub mod log;
pub mod recipe;
pub mod source;
pub mod store;
