//! The io_uring flags of `storlab run`: fast paths and completion batching, each setting a key
//! of the job's `[io_uring]` table (the table in `flags.rs` applies them).

use crate::units::Dur;
use clap::Args;

/// The `[io_uring]` flags.
#[derive(Debug, Args, Default)]
pub struct UringArgs {
    /// io_uring: polled completions (IOPOLL, fio's hipri), for O_DIRECT on devices with poll
    /// queues; probed, and run without when the device cannot poll.
    #[arg(long)]
    pub hipri: bool,
    /// io_uring: a kernel thread polls the submission queue (SQPOLL).
    #[arg(long)]
    pub sqpoll: bool,
    /// io_uring: the CPU the submission polling thread runs on.
    #[arg(long, value_name = "CPU", requires = "sqpoll")]
    pub sqpoll_cpu: Option<u32>,
    /// io_uring: how long the submission polling thread spins idle before it sleeps (default 1s).
    #[arg(long, value_name = "TIME", requires = "sqpoll")]
    pub sqpoll_idle: Option<Dur>,
    /// io_uring: how completion work runs: auto (default: the fastest the kernel has), defer,
    /// coop or plain.
    #[arg(long, value_name = "MODE")]
    pub task_run: Option<String>,
    /// io_uring: wait for at least N completions at once (default 1; 0: never wait, poll).
    #[arg(long, value_name = "N")]
    pub batch_complete_min: Option<u32>,
    /// io_uring: reap at most N completions at once (default: all there are).
    #[arg(long, value_name = "N")]
    pub batch_complete_max: Option<u32>,
}
