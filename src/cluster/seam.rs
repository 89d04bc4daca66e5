//! The seam itself: [`Cluster`] (a rank's place and the collectives), why a collective failed,
//! rank 0's record of heartbeats, and what the root gathered.

use std::time::{Duration, Instant};

/// Why a collective failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ClusterError {
    /// Ranks that did not answer in time (a dead host, a hung process, a network partition).
    #[error("{} did not answer within {}: it stopped, hung or lost its network; the run ends with what arrived", ranks_text(.ranks), crate::units::format_duration(*.waited))]
    Late {
        /// The ranks, ascending.
        ranks: Vec<usize>,
        /// How long the collective waited.
        waited: Duration,
    },
    /// The ranks do not run the same thing.
    #[error("{0}")]
    Disagree(String),
    /// A message that is not what the protocol sends (a different storlab on the other end).
    #[error("rank {rank} sent a message storlab cannot read: {why}")]
    Garbled {
        /// Who sent it.
        rank: usize,
        /// What is wrong with it.
        why: String,
    },
}

/// `rank 2` or `ranks 1, 3`.
fn ranks_text(ranks: &[usize]) -> String {
    let list: Vec<String> = ranks.iter().map(usize::to_string).collect();
    match ranks {
        [_] => format!("rank {}", list[0]),
        _ => format!("ranks {}", list.join(", ")),
    }
}

/// This process's place among the ranks of a run, and the collectives between them. Every rank
/// calls the collectives in the same order; rank 0 is the root.
pub(crate) trait Cluster {
    /// This rank, 0-based.
    fn rank(&self) -> usize;
    /// How many ranks the run has.
    fn size(&self) -> usize;
    /// This rank's host name.
    fn host(&self) -> &str;
    /// The root's `bytes` (given on the root, `None` elsewhere) on every rank, waiting at most
    /// `wait` for them.
    fn broadcast(&self, bytes: Option<Vec<u8>>, wait: Duration) -> Result<Vec<u8>, ClusterError>;
    /// Every rank's `bytes`, in rank order, on the root (`None` on the other ranks), waiting at
    /// most `wait` for them: a rank that did not send in time has `None` (see [`complete`]).
    fn gather(&self, bytes: Vec<u8>, wait: Duration) -> Result<Option<Gathered>, ClusterError>;
    /// Tells rank 0 that this rank is alive, without waiting (once an interval during a run).
    fn heartbeat(&self) {}
    /// On rank 0: the ranks not heard from for `silence` (counted from the first call);
    /// elsewhere: none.
    fn silent(&self, _silence: Duration) -> Vec<usize> {
        Vec::new()
    }
    /// On rank 0: asks every other rank to stop its run, without waiting.
    fn stop_all(&self) {}
    /// On the other ranks: whether rank 0 asked them to stop.
    fn stop_asked(&self) -> bool {
        false
    }
    /// Ends every rank of the job at once (a rank that hangs would keep it alive); `code` is
    /// the exit status.
    #[cfg(feature = "mpi")]
    fn abort(&self, _code: i32) {}
    /// Sends `bytes` to rank `to` on the side channel (outside the collectives, for the clock
    /// checks during a run), without waiting.
    fn post(&self, _to: usize, _bytes: Vec<u8>) {}
    /// The next message on the side channel from rank `from`, waiting at most `wait`.
    fn take(&self, _from: usize, _wait: Duration) -> Option<Vec<u8>> {
        None
    }
}

/// Rank 0's record of the other ranks' heartbeats.
#[derive(Debug, Clone, Default)]
pub(crate) struct Heartbeats {
    /// When each rank's last heartbeat arrived.
    heard: Vec<Option<Instant>>,
    /// When the watch began (the first [`Heartbeats::silent`]): ranks never heard from count
    /// as silent from then.
    since: Option<Instant>,
}

impl Heartbeats {
    pub(crate) fn new(ranks: usize) -> Heartbeats {
        Heartbeats {
            heard: vec![None; ranks],
            since: None,
        }
    }

    /// Rank `rank` sent a heartbeat.
    pub(crate) fn heard(&mut self, rank: usize) {
        if let Some(slot) = self.heard.get_mut(rank) {
            *slot = Some(Instant::now());
        }
    }

    /// The ranks (other than 0) not heard from for `silence`.
    pub(crate) fn silent(&mut self, silence: Duration) -> Vec<usize> {
        let now = Instant::now();
        let since = *self.since.get_or_insert(now);
        (self.heard.iter().enumerate().skip(1))
            .filter(|(_, h)| now.duration_since(h.unwrap_or(since)) > silence)
            .map(|(r, _)| r)
            .collect()
    }
}

/// What the root gathered: each rank's bytes, `None` for a rank that did not send in time.
pub(crate) type Gathered = Vec<Option<Vec<u8>>>;

/// Every rank's bytes, or an error naming the ranks that did not send in time (`wait`).
pub(crate) fn complete(parts: Gathered, wait: Duration) -> Result<Vec<Vec<u8>>, ClusterError> {
    let late: Vec<usize> = (parts.iter().enumerate())
        .filter(|(_, p)| p.is_none())
        .map(|(r, _)| r)
        .collect();
    if late.is_empty() {
        Ok(parts.into_iter().flatten().collect())
    } else {
        Err(ClusterError::Late {
            ranks: late,
            waited: wait,
        })
    }
}
