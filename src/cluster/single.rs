//! One host, one rank: the default. Its collectives return at once.

use super::{Cluster, ClusterError, Gathered};
use std::time::Duration;

/// The only rank of a run on one host.
#[derive(Debug, Clone)]
pub(crate) struct Single {
    host: String,
}

impl Single {
    /// This host's rank.
    pub(crate) fn new() -> Single {
        Single {
            host: rustix::system::uname()
                .nodename()
                .to_string_lossy()
                .into_owned(),
        }
    }
}

impl Default for Single {
    fn default() -> Self {
        Single::new()
    }
}

impl Cluster for Single {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn host(&self) -> &str {
        &self.host
    }

    fn broadcast(&self, bytes: Option<Vec<u8>>, _: Duration) -> Result<Vec<u8>, ClusterError> {
        Ok(bytes.unwrap_or_default())
    }

    fn gather(&self, bytes: Vec<u8>, _: Duration) -> Result<Option<Gathered>, ClusterError> {
        Ok(Some(vec![Some(bytes)]))
    }
}
