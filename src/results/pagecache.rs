//! What the kernel's page cache did for a buffered run: the share of the bytes read that the
//! devices did not have to read, beside the memory cgroup's limit and the cache it held
//! (`storlab cache-curve` compares it with LRU's curve at that size).

use serde::{Deserialize, Serialize};

/// The page cache as a tier (buffered runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PageCache {
    /// The memory cgroup's limit, bytes (`None`: no limit, or no memory cgroup).
    pub memcg_limit_bytes: Option<u64>,
    /// The page cache the cgroup held when the run ended, bytes.
    pub cached_bytes: Option<u64>,
    /// Bytes the run's reads asked for (measured time).
    pub read_bytes: u64,
    /// Bytes the targets' devices read in the measured time.
    pub device_read_bytes: u64,
    /// Reads served from memory: 1 − device bytes ÷ read bytes, percent (0 when the devices
    /// read more; readahead makes the devices read more than was asked).
    pub observed_hit_pct: f64,
}

impl PageCache {
    /// The cache it had: the page cache held at the end under a limit, else the limit
    /// (`None` without a memory limit).
    pub(crate) fn cache_bytes(&self) -> Option<u64> {
        self.memcg_limit_bytes?;
        self.cached_bytes.or(self.memcg_limit_bytes)
    }
}
