//! The summary's lines for a cache tier (what it was, what it served, what it wrote back, and
//! each tier's latency) and for the kernel's page cache of a buffered run.

use super::summary::labelled;
use crate::results::pagecache::PageCache;
use crate::stats::histogram::LatencySummary;
use crate::stats::tier::TierResult;
use crate::units::{format_count, format_ns, format_pct, format_size};

/// The lines of every cache tier of a run.
pub(super) fn section(out: &mut String, tiers: &[TierResult]) {
    for t in tiers {
        let delay = t.synthetic_hit_delay_us.map_or(String::new(), |d| {
            format!(" · SYNTHETIC hit delay {}", format_ns(d * 1000.0))
        });
        let bypass = t.sequential_bypass_bytes.map_or(String::new(), |b| {
            format!(", sequential streams over {} bypass", format_size(b))
        });
        labelled(
            out,
            "cache",
            &format!(
                "{}: {} on {} ({}, write-{}, {} lines{bypass}){delay}",
                t.target,
                format_size(t.cache_bytes),
                t.device,
                t.policy,
                t.write,
                format_size(t.line_bytes)
            ),
        );
        let c = &t.totals;
        let writes = if c.writes == 0 {
            String::new()
        } else {
            format!(
                " · writes {} to the cache device",
                format_pct(c.write_hits as f64 * 100.0 / c.writes as f64)
            )
        };
        labelled(
            out,
            "",
            &format!(
                "reads {} hits ({} of {}){writes} · filled {} · written back {} during the run, {} after it",
                format_pct(t.read_hit_pct),
                format_count(c.read_hits),
                format_count(c.reads),
                format_size(c.fill_bytes),
                format_size(c.destage_bytes),
                format_size(t.drain.bytes),
            ),
        );
        let lat = |name: &str, s: &Option<LatencySummary>| {
            s.as_ref().map(|s| {
                format!(
                    "{name} mean {} p99 {}",
                    format_ns(s.mean),
                    format_ns(s.p99 as f64)
                )
            })
        };
        let l = &t.latency;
        let parts: Vec<String> = [
            lat("cache read", &l.cache_read),
            lat("cache write", &l.cache_write),
            lat("backing read", &l.backing_read),
            lat("backing write", &l.backing_write),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !parts.is_empty() {
            labelled(out, "", &parts.join(" · "));
        }
        if let Some(e) = &t.drain.error {
            labelled(out, "", &format!("WRITE-BACK AFTER THE RUN FAILED: {e}"));
        }
    }
}

/// The page cache's line of a buffered run.
pub(crate) fn page_cache(out: &mut String, p: &PageCache) {
    let limit = p.memcg_limit_bytes.map_or(String::new(), |l| {
        let held = p.cached_bytes.map_or(String::new(), |c| {
            format!(", {} cached at the end", format_size(c))
        });
        format!(" (memory cgroup limit {}{held})", format_size(l))
    });
    // A run that read nothing through the cache (etcd's and wal-sync's writes) has no hit
    // share to show: say what the cache held, not "0% of 0 B".
    let text = if p.read_bytes == 0 {
        format!("nothing was read through it (the run only wrote){limit}")
    } else {
        format!(
            "{} of the bytes read came from memory: {} read, the devices read {}{limit}",
            format_pct(p.observed_hit_pct),
            format_size(p.read_bytes),
            format_size(p.device_read_bytes)
        )
    };
    labelled(out, "page cache", &text);
}
