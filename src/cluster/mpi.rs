//! The ranks of an MPI job (Open MPI or MPICH, started by `mpirun`, `srun` or an MPI
//! operator), behind the `mpi` feature. The collectives are point to point between the root
//! and each rank, non-blocking and polled with short sleeps until their deadline, so that the
//! root can name the ranks that never answered (a collective `MPI_Gather` cannot) and no rank
//! spins in a barrier.

use super::{Cluster, ClusterError, Gathered, Heartbeats};
use mpi::Tag;
use mpi::environment::Universe;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Destination, Source};
use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

/// The first sleep between looks at a pending message; each next one is twice as long, up to
/// [`POLL`]: a message that comes at once is seen within tens of microseconds (the clocks'
/// round trips depend on it), one that takes long costs no CPU. Open MPI moves a message along
/// only when a process looks (each look runs its progress engine), so the first looks must
/// be many: starting at 20 µs, the clocks' round trips before the start took 16 ms on this
/// project's VM (three ranks on two cores), starting at 1 µs (about 55 µs of sleep, with the
/// kernel's timer slack) 0.3 to 0.7 ms.
const FIRST_POLL: Duration = Duration::from_micros(1);
/// The longest sleep between looks at a pending message.
const POLL: Duration = Duration::from_millis(5);

/// Sleeps between looks: [`FIRST_POLL`], doubling up to [`POLL`].
struct Backoff(Duration);

impl Backoff {
    fn new() -> Backoff {
        Backoff(FIRST_POLL)
    }

    fn sleep(&mut self) {
        std::thread::sleep(self.0);
        self.0 = (self.0 * 2).min(POLL);
    }
}

/// The tag of a heartbeat (above every collective's).
const HEARTBEAT_TAG: Tag = 30_001;
/// The tag of rank 0's request to stop.
const STOP_TAG: Tag = 30_002;
/// The tag of a message on the side channel.
const SIDE_TAG: Tag = 30_003;
/// What a heartbeat or a stop request carries: one byte that lives as long as MPI needs it.
static SIGNAL: [u8; 1] = [1];

/// This process's rank of the MPI job.
pub(crate) struct Mpi {
    _universe: Universe,
    world: SimpleCommunicator,
    host: String,
    /// The number of the next collective: its messages' tag.
    seq: Cell<Tag>,
    /// Heartbeats, stop requests and side messages sent and not yet known to be delivered.
    pending: RefCell<Vec<Request<'static, [u8], StaticScope>>>,
    /// On rank 0: the other ranks' heartbeats.
    beats: RefCell<Heartbeats>,
    /// On the other ranks: rank 0 asked this rank to stop.
    stop: Cell<bool>,
}

impl Drop for Mpi {
    fn drop(&mut self) {
        // A signal still in flight (its peer gone) can never complete, and dropping it would
        // panic: it is left to MPI, which this process is leaving.
        for request in self.pending.take() {
            std::mem::forget(request);
        }
    }
}

impl std::fmt::Debug for Mpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mpi")
            .field("rank", &self.rank())
            .field("size", &self.size())
            .field("host", &self.host)
            .finish()
    }
}

impl Mpi {
    /// Joins the MPI job this process was started in (`None`: MPI could not be initialised,
    /// or was already).
    pub(crate) fn join() -> Option<Mpi> {
        let universe = mpi::initialize()?;
        let world = universe.world();
        let host = mpi::environment::processor_name().unwrap_or_else(|_| {
            rustix::system::uname()
                .nodename()
                .to_string_lossy()
                .into_owned()
        });
        let size = world.size() as usize;
        Some(Mpi {
            _universe: universe,
            world,
            host,
            seq: Cell::new(0),
            pending: RefCell::new(Vec::new()),
            beats: RefCell::new(Heartbeats::new(size)),
            stop: Cell::new(false),
        })
    }

    /// Sends `data` with `tag` to `to`, without waiting; forgets the sends completed.
    fn send_later(&self, to: usize, tag: Tag, data: &'static [u8]) {
        let request = self
            .world
            .process_at_rank(to as i32)
            .immediate_send_with_tag(StaticScope, data, tag);
        let mut pending = self.pending.borrow_mut();
        pending.push(request);
        let before = std::mem::take(&mut *pending);
        for r in before {
            if let Err(still) = r.test() {
                pending.push(still);
            }
        }
    }

    fn next_tag(&self) -> Tag {
        let t = self.seq.get();
        // Tags up to 32767 are guaranteed by the standard; wrap well below.
        self.seq.set((t + 1) % 30_000);
        t
    }

    /// Sends `bytes` to `to`, waiting at most until `deadline` for the send to complete. The
    /// buffer must outlive a send that never completes, so it is given to MPI for good (a
    /// few messages a run: the job, the readiness, the results).
    fn send(&self, to: usize, tag: Tag, bytes: Vec<u8>, deadline: Instant) -> bool {
        let data: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let mut request = self
            .world
            .process_at_rank(to as i32)
            .immediate_send_with_tag(StaticScope, data, tag);
        let mut backoff = Backoff::new();
        loop {
            match request.test() {
                Ok(_) => return true,
                Err(pending) => request = pending,
            }
            if Instant::now() >= deadline {
                // The peer is gone: the request can never complete, and dropping it would
                // panic; it is left to MPI, which the run is about to leave.
                std::mem::forget(request);
                return false;
            }
            backoff.sleep();
        }
    }

    /// The message of tag `tag` from each of `from`, until all arrived or `deadline` (`None`:
    /// not here).
    fn receive(&self, tag: Tag, from: &[usize], deadline: Instant) -> Gathered {
        let mut got: Gathered = vec![None; from.len()];
        let mut backoff = Backoff::new();
        loop {
            for (slot, &rank) in got.iter_mut().zip(from) {
                if slot.is_some() {
                    continue;
                }
                let peer = self.world.process_at_rank(rank as i32);
                if let Some(matched) = peer.immediate_matched_probe_with_tag(tag) {
                    let (bytes, _) = matched.matched_receive_vec::<u8>();
                    *slot = Some(bytes);
                }
            }
            if got.iter().all(Option::is_some) || Instant::now() >= deadline {
                return got;
            }
            backoff.sleep();
        }
    }
}

impl Cluster for Mpi {
    fn heartbeat(&self) {
        if self.rank() != 0 {
            self.send_later(0, HEARTBEAT_TAG, &SIGNAL);
        }
    }

    fn silent(&self, silence: Duration) -> Vec<usize> {
        if self.rank() != 0 {
            return Vec::new();
        }
        let any = self.world.any_process();
        while let Some(matched) = any.immediate_matched_probe_with_tag(HEARTBEAT_TAG) {
            let (_, status) = matched.matched_receive_vec::<u8>();
            self.beats.borrow_mut().heard(status.source_rank() as usize);
        }
        self.beats.borrow_mut().silent(silence)
    }

    fn stop_all(&self) {
        for to in 1..self.size() {
            self.send_later(to, STOP_TAG, &SIGNAL);
        }
    }

    fn stop_asked(&self) -> bool {
        let root = self.world.process_at_rank(0);
        while let Some(matched) = root.immediate_matched_probe_with_tag(STOP_TAG) {
            let _ = matched.matched_receive_vec::<u8>();
            self.stop.set(true);
        }
        self.stop.get()
    }

    fn abort(&self, code: i32) {
        self.world.abort(code)
    }

    fn post(&self, to: usize, bytes: Vec<u8>) {
        // The buffer must outlive a send that may never complete (its peer gone): given to
        // MPI for good, 16 bytes a message, some hundreds an hour.
        self.send_later(to, SIDE_TAG, Box::leak(bytes.into_boxed_slice()));
    }

    fn take(&self, from: usize, wait: Duration) -> Option<Vec<u8>> {
        self.receive(SIDE_TAG, &[from], Instant::now() + wait)
            .remove(0)
    }

    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn host(&self) -> &str {
        &self.host
    }

    fn broadcast(&self, bytes: Option<Vec<u8>>, wait: Duration) -> Result<Vec<u8>, ClusterError> {
        let tag = self.next_tag();
        let deadline = Instant::now() + wait;
        if self.rank() == 0 {
            let bytes = bytes.unwrap_or_default();
            let late: Vec<usize> = (1..self.size())
                .filter(|&to| !self.send(to, tag, bytes.clone(), deadline))
                .collect();
            if !late.is_empty() {
                return Err(ClusterError::Late {
                    ranks: late,
                    waited: wait,
                });
            }
            return Ok(bytes);
        }
        match self.receive(tag, &[0], deadline).remove(0) {
            Some(bytes) => Ok(bytes),
            None => Err(ClusterError::Late {
                ranks: vec![0],
                waited: wait,
            }),
        }
    }

    fn gather(&self, bytes: Vec<u8>, wait: Duration) -> Result<Option<Gathered>, ClusterError> {
        let tag = self.next_tag();
        let deadline = Instant::now() + wait;
        if self.rank() != 0 {
            if !self.send(0, tag, bytes, deadline) {
                return Err(ClusterError::Late {
                    ranks: vec![0],
                    waited: wait,
                });
            }
            return Ok(None);
        }
        let others: Vec<usize> = (1..self.size()).collect();
        let mut all = vec![Some(bytes)];
        all.extend(self.receive(tag, &others, deadline));
        Ok(Some(all))
    }
}
