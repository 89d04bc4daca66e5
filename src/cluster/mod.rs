//! Many hosts, one run: the cluster seam. A [`Cluster`] is this process's place among the run's
//! ranks (one per host, or several): its rank, how many there are, its host, and the two
//! collectives a run needs: the root's bytes to every rank ([`Cluster::broadcast`]) and every
//! rank's bytes to the root ([`Cluster::gather`]), each waiting at most a given time and naming
//! the ranks that did not answer. Implementations: [`Single`] (one host, the default) and
//! [`Threads`] (ranks as threads of one process, for tests without MPI), and with the `mpi`
//! feature `Mpi` (the ranks of an MPI job). On top of it: the job shared by every rank with the same storlab version and the
//! same job hash before any I/O ([`share_job`]), per-rank paths from templates ([`expand`]), a
//! refusal of launchers that start copies which each believe they are alone
//! ([`check_launcher`]), and the exact merge of every rank's results ([`merge`]): histograms
//! add, percentiles are read from the sum, never averaged.
//!
//! All of it but the launcher check ([`launcher`]) is compiled only with the `mpi` feature and
//! in the tests (where [`Threads`] stands in for MPI).

mod launcher;
pub(crate) use launcher::check_launcher;
#[cfg(feature = "mpi")]
pub(crate) use launcher::launched;

#[cfg(any(feature = "mpi", test))]
mod job;
#[cfg(any(feature = "mpi", test))]
mod merge;
#[cfg(feature = "mpi")]
mod mpi;
#[cfg(any(feature = "mpi", test))]
mod seam;
#[cfg(test)]
mod single;
#[cfg(any(feature = "mpi", test))]
mod template;
#[cfg(test)]
mod threads;

#[cfg(any(feature = "mpi", test))]
pub(crate) use job::share_job;
#[cfg(any(feature = "mpi", test))]
pub(crate) use merge::{HostRun, merge, merge_intervals};
#[cfg(feature = "mpi")]
pub(crate) use mpi::Mpi;
#[cfg(any(feature = "mpi", test))]
pub(crate) use seam::Heartbeats;
#[cfg(any(feature = "mpi", test))]
pub(crate) use seam::{Cluster, ClusterError, Gathered, complete};
#[cfg(test)]
pub(crate) use single::Single;
#[cfg(any(feature = "mpi", test))]
pub(crate) use template::expand;
#[cfg(test)]
pub(crate) use threads::Threads;
