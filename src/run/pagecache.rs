//! The kernel's page cache as a tier (buffered runs): what it served, from the bytes read and
//! the bytes the targets' devices read, beside the memory cgroup's limit and the cache it
//! held. (No curve here: the run may be in a small memory cgroup; `storlab cache-curve`
//! compares.)

use crate::job::Job;
use crate::results::RunResult;
use crate::results::pagecache::PageCache;
use crate::stats::host::cgroup::MemoryCgroup;

/// The page cache's figures of the buffered run `r` (`None`: not buffered).
pub(super) fn page_cache(job: &Job, r: &RunResult) -> Option<PageCache> {
    if !job.buffered {
        return None;
    }
    let cgroup = MemoryCgroup::own();
    let read_bytes = r.totals.read.bytes;
    let device_read_bytes: u64 = r.devices.iter().map(|d| d.delta.read_bytes).sum();
    let observed_hit_pct = if read_bytes == 0 {
        0.0
    } else {
        (1.0 - device_read_bytes as f64 / read_bytes as f64).max(0.0) * 100.0
    };
    Some(PageCache {
        memcg_limit_bytes: cgroup.as_ref().and_then(MemoryCgroup::limit_bytes),
        cached_bytes: cgroup.as_ref().and_then(MemoryCgroup::cache_bytes),
        read_bytes,
        device_read_bytes,
        observed_hit_pct,
    })
}
