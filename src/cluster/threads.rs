//! Ranks as threads of one process, over channels: the collectives of a multi-host run without
//! MPI, for tests (a rank that stops answering is a thread that returns).

use super::{Cluster, ClusterError, Gathered, Heartbeats};
use std::cell::{Cell, RefCell};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError, channel};
use std::time::{Duration, Instant};

/// One message of a collective: which collective (every rank numbers them alike), from whom.
struct Msg {
    seq: u64,
    from: usize,
    bytes: Vec<u8>,
}

/// Makes in-process ranks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Threads;

impl Threads {
    /// `n` ranks; rank `r` says it is on host `host(r)`. Give each to its own thread.
    pub(crate) fn ranks(n: usize, host: impl Fn(usize) -> String) -> Vec<ThreadRank> {
        let (senders, receivers): (Vec<Sender<Msg>>, Vec<Receiver<Msg>>) =
            (0..n).map(|_| channel()).unzip();
        receivers
            .into_iter()
            .enumerate()
            .map(|(rank, inbox)| ThreadRank {
                rank,
                size: n,
                host: host(rank),
                inbox,
                peers: senders.clone(),
                seq: Cell::new(0),
                early: RefCell::new(Vec::new()),
                beats: RefCell::new(Heartbeats::new(n)),
                stop: Cell::new(false),
            })
            .collect()
    }
}

/// A rank of [`Threads`].
pub(crate) struct ThreadRank {
    rank: usize,
    size: usize,
    host: String,
    inbox: Receiver<Msg>,
    peers: Vec<Sender<Msg>>,
    /// The number of the next collective.
    seq: Cell<u64>,
    /// Messages of later collectives that arrived first.
    early: RefCell<Vec<Msg>>,
    /// On rank 0: the other ranks' heartbeats.
    beats: RefCell<Heartbeats>,
    /// On the other ranks: rank 0 asked this rank to stop.
    stop: Cell<bool>,
}

/// The `seq` of a heartbeat, outside every collective's.
const HEARTBEAT: u64 = u64::MAX;
/// The `seq` of rank 0's request to stop.
const STOP: u64 = u64::MAX - 1;
/// The `seq` of a message on the side channel.
const SIDE: u64 = u64::MAX - 2;

impl std::fmt::Debug for ThreadRank {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadRank")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("host", &self.host)
            .finish()
    }
}

/// How long one wait for a message lasts before the deadline is looked at again.
const POLL: Duration = Duration::from_millis(50);

impl ThreadRank {
    fn next_seq(&self) -> u64 {
        let s = self.seq.get();
        self.seq.set(s + 1);
        s
    }

    /// Takes in a heartbeat or a stop request; gives back any other message.
    fn note(&self, m: Msg) -> Option<Msg> {
        match m.seq {
            HEARTBEAT => {
                self.beats.borrow_mut().heard(m.from);
                None
            }
            STOP => {
                self.stop.set(true);
                None
            }
            _ => Some(m),
        }
    }

    /// Reads what has arrived without waiting: heartbeats and stop requests taken in, the
    /// messages of later collectives kept for them.
    fn drain(&self) {
        loop {
            match self.inbox.try_recv() {
                Ok(m) => {
                    if let Some(m) = self.note(m) {
                        self.early.borrow_mut().push(m);
                    }
                }
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return,
            }
        }
    }

    fn send(&self, to: usize, seq: u64, bytes: Vec<u8>) {
        // A rank that has gone has dropped its inbox: what it would have read is lost, and
        // the root names it when it does not answer.
        let _ = self.peers[to].send(Msg {
            seq,
            from: self.rank,
            bytes,
        });
    }

    /// The messages of collective `seq` from each of `from`, until they are all here or
    /// `wait` has passed (`None`: not here).
    fn receive(&self, seq: u64, from: &[usize], wait: Duration) -> Gathered {
        let mut got: Vec<Option<Vec<u8>>> = vec![None; from.len()];
        let keep = |m: Msg, got: &mut Vec<Option<Vec<u8>>>| {
            let Some(m) = self.note(m) else { return };
            if m.seq > seq {
                self.early.borrow_mut().push(m);
            } else if m.seq == seq {
                if let Some(i) = from.iter().position(|&r| r == m.from) {
                    got[i] = Some(m.bytes);
                }
            }
            // Older: a collective this rank already gave up on.
        };
        let early: Vec<Msg> = std::mem::take(&mut *self.early.borrow_mut());
        for m in early {
            keep(m, &mut got);
        }
        let start = Instant::now();
        while got.iter().any(Option::is_none) {
            let left = wait.saturating_sub(start.elapsed());
            if left.is_zero() {
                break;
            }
            match self.inbox.recv_timeout(left.min(POLL)) {
                Ok(m) => keep(m, &mut got),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        got
    }
}

impl Cluster for ThreadRank {
    fn heartbeat(&self) {
        if self.rank != 0 {
            self.send(0, HEARTBEAT, Vec::new());
        }
    }

    fn silent(&self, silence: Duration) -> Vec<usize> {
        if self.rank != 0 {
            return Vec::new();
        }
        self.drain();
        self.beats.borrow_mut().silent(silence)
    }

    fn stop_all(&self) {
        for to in 1..self.size {
            self.send(to, STOP, Vec::new());
        }
    }

    fn stop_asked(&self) -> bool {
        self.drain();
        self.stop.get()
    }

    fn post(&self, to: usize, bytes: Vec<u8>) {
        self.send(to, SIDE, bytes);
    }

    fn take(&self, from: usize, wait: Duration) -> Option<Vec<u8>> {
        let start = Instant::now();
        loop {
            self.drain();
            let mut early = self.early.borrow_mut();
            if let Some(i) = early.iter().position(|m| m.seq == SIDE && m.from == from) {
                return Some(early.remove(i).bytes);
            }
            drop(early);
            let left = wait.saturating_sub(start.elapsed());
            if left.is_zero() {
                return None;
            }
            match self.inbox.recv_timeout(left.min(POLL)) {
                Ok(m) => {
                    if let Some(m) = self.note(m) {
                        self.early.borrow_mut().push(m);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn host(&self) -> &str {
        &self.host
    }

    fn broadcast(&self, bytes: Option<Vec<u8>>, wait: Duration) -> Result<Vec<u8>, ClusterError> {
        let seq = self.next_seq();
        if self.rank == 0 {
            let bytes = bytes.unwrap_or_default();
            for to in 1..self.size {
                self.send(to, seq, bytes.clone());
            }
            return Ok(bytes);
        }
        match self.receive(seq, &[0], wait).remove(0) {
            Some(bytes) => Ok(bytes),
            None => Err(ClusterError::Late {
                ranks: vec![0],
                waited: wait,
            }),
        }
    }

    fn gather(&self, bytes: Vec<u8>, wait: Duration) -> Result<Option<Gathered>, ClusterError> {
        let seq = self.next_seq();
        if self.rank != 0 {
            self.send(0, seq, bytes);
            return Ok(None);
        }
        let others: Vec<usize> = (1..self.size).collect();
        let mut all = vec![Some(bytes)];
        all.extend(self.receive(seq, &others, wait));
        Ok(Some(all))
    }
}
