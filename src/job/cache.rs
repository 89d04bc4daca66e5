//! A cache tier in front of a target (`cache = { device = ..., size = ... }` on a `[[target]]`):
//! its settings as validated, the cache device added to the job as a target of its own (so it
//! is opened, guarded and counted like any target), and the workers of a cached target made
//! one, since a tier's state lives in one thread.

use super::file::Source;
use super::spec::{CacheSizeSpec, CacheSpec, JobSpec};
use super::{IoLimit, JobError, Rate, Target, Worker};
use crate::units;
use serde::{Deserialize, Serialize};

/// Write-back starts above this share of dirty lines, percent (bcache's `writeback_percent`
/// default).
pub(crate) const DIRTY_PCT: f64 = 10.0;
/// The longest synthetic hit delay accepted.
const MAX_HIT_DELAY_NS: u64 = 1_000_000_000;

/// A validated cache tier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheTier {
    /// Index of the cache device in [`super::Job::targets`].
    pub device: usize,
    /// How big.
    pub size: CacheSize,
    /// Replacement policy.
    pub policy: CachePolicy,
    /// What writes do.
    pub write: WriteMode,
    /// Cache line, bytes: the largest I/O of the target's workers unless given.
    pub line_bytes: u64,
    /// Sequential streams longer than this many bytes bypass the cache.
    pub sequential_bypass_bytes: Option<u64>,
    /// Synthetic delay added to every hit, ns (0: none).
    pub hit_delay_ns: u64,
    /// Write-back starts when more than this share of the lines is dirty, percent.
    pub dirty_pct: f64,
}

/// A cache size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheSize {
    /// Bytes.
    Bytes(u64),
    /// Percent of the target's size (known when it is opened).
    Pct(f64),
}

impl CacheSize {
    /// Bytes of a cache of this size in front of a target of `target_bytes`.
    pub(crate) fn bytes(self, target_bytes: u64) -> u64 {
        match self {
            CacheSize::Bytes(b) => b,
            CacheSize::Pct(p) => (target_bytes as f64 * p / 100.0) as u64,
        }
    }
}

/// A replacement policy: of a cache tier, and of the simulated caches of `cache-curve`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CachePolicy {
    /// Least recently used.
    Lru,
    /// Adaptive replacement cache.
    Arc,
    /// S3-FIFO.
    #[serde(rename = "s3fifo")]
    S3Fifo,
}

/// What a cached target's writes do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteMode {
    /// Written to the cache device and acknowledged; written back to the target later.
    Back,
    /// Written to the target and acknowledged; the cache copy refreshed after.
    Through,
    /// Written to the target only; a cached copy is dropped.
    Around,
}

impl WriteMode {
    /// Its name in job files and results.
    pub(crate) fn name(self) -> &'static str {
        match self {
            WriteMode::Back => "back",
            WriteMode::Through => "through",
            WriteMode::Around => "around",
        }
    }
}

impl CachePolicy {
    /// Every policy, in the order curves show them.
    pub const ALL: [CachePolicy; 3] = [CachePolicy::Lru, CachePolicy::Arc, CachePolicy::S3Fifo];

    /// Its name in job files, flags and results.
    pub(crate) fn name(self) -> &'static str {
        match self {
            CachePolicy::Lru => "lru",
            CachePolicy::Arc => "arc",
            CachePolicy::S3Fifo => "s3fifo",
        }
    }

    /// The policy named `name`.
    pub(crate) fn parse(name: &str) -> Result<CachePolicy, String> {
        CachePolicy::ALL
            .into_iter()
            .find(|p| p.name() == name.trim())
            .ok_or_else(|| format!("unknown cache policy `{name}`; use lru, arc or s3fifo"))
    }
}

/// Validates every target's `cache`, adds each cache device to `targets` and merges the workers
/// of each cached target into one (a warning says so).
pub(super) fn resolve_caches(
    spec: &JobSpec,
    src: &Source,
    targets: &mut Vec<Target>,
    workers: &mut Vec<Worker>,
    warnings: &mut Vec<String>,
) -> Result<(), JobError> {
    for (i, t) in spec.target.iter().enumerate() {
        let Some(c) = &t.get_ref().cache else {
            continue;
        };
        let err = |key: &str, message: String| JobError {
            location: src.at(t.span()),
            key: format!("target[{i}].cache.{key}"),
            message,
        };
        let (device, tier) = settings(c).map_err(|(k, m)| err(k, m))?;
        attach(targets, workers, warnings, i, device, tier).map_err(|(k, m)| err(k, m))?;
    }
    Ok(())
}

/// Puts a cache tier of `tier`'s settings (its `device` index is set here; a `line_bytes` of 0
/// means the largest I/O of the target's worker) on `device` in front of target `t`: the
/// device becomes a target of its own and the target's workers one worker. Errors name the
/// `cache` key at fault.
pub(crate) fn attach(
    targets: &mut Vec<Target>,
    workers: &mut Vec<Worker>,
    warnings: &mut Vec<String>,
    t: usize,
    device: std::path::PathBuf,
    mut tier: CacheTier,
) -> Result<(), (&'static str, String)> {
    let merged = merge_workers(t, targets, workers, warnings).map_err(|m| ("device", m))?;
    if tier.line_bytes == 0 {
        tier.line_bytes = merged.map_or(0, Worker::max_block_bytes);
    }
    let line_bytes = tier.line_bytes;
    if line_bytes == 0 || line_bytes % 512 != 0 {
        return Err((
            "line",
            format!(
                "the cache line is {line_bytes} bytes; give a multiple of 512 bytes, e.g. line = \"64KiB\""
            ),
        ));
    }
    if let CacheSize::Bytes(b) = tier.size {
        if b < line_bytes {
            return Err((
                "size",
                format!(
                    "a cache of {b} bytes holds no line of {line_bytes} bytes; give at least one line"
                ),
            ));
        }
    }
    if device.as_os_str().is_empty() || device == targets[t].path {
        return Err((
            "device",
            "the cache device must be a path other than the target's own".into(),
        ));
    }
    if let Some(j) = targets.iter().position(|o| o.path == device) {
        return Err((
            "device",
            format!(
                "the cache device {} is target[{j}] of the job; a cache needs a device or file of its own",
                device.display()
            ),
        ));
    }
    let size_bytes = match tier.size {
        CacheSize::Bytes(b) => Some(b / line_bytes * line_bytes),
        CacheSize::Pct(_) => targets[t]
            .size_bytes
            .map(|s| tier.size.bytes(s) / line_bytes * line_bytes),
    };
    tier.device = targets.len();
    targets.push(Target::file(
        format!("{}-cache", targets[t].name),
        device,
        size_bytes.filter(|&b| b > 0),
    ));
    targets[t].cache = Some(tier);
    Ok(())
}

/// The device and settings of one `cache` table (the device not yet a target: index 0), or
/// the key at fault and why.
pub(crate) fn settings(
    c: &CacheSpec,
) -> Result<(std::path::PathBuf, CacheTier), (&'static str, String)> {
    let err = |key: &'static str, message: String| (key, message);
    let path = c.device.clone().ok_or_else(|| {
        err(
            "device",
            "a cache needs a device, e.g. cache = { device = \"/dev/zram0\", size = \"30%\" }"
                .into(),
        )
    })?;
    let size = match &c.size {
        None => {
            return Err(err(
                "size",
                "a cache needs a size: bytes (size = \"2GiB\") or a share of the target (size = \"30%\")".into(),
            ));
        }
        Some(CacheSizeSpec::Bytes(b)) => CacheSize::Bytes(*b),
        Some(CacheSizeSpec::Text(t)) if t.trim().ends_with('%') => {
            let p = units::parse_percent(t).map_err(|e| err("size", e))?;
            if p <= 0.0 {
                return Err(err("size", "the share must be more than 0%".into()));
            }
            CacheSize::Pct(p)
        }
        Some(CacheSizeSpec::Text(t)) => {
            CacheSize::Bytes(units::parse_size(t).map_err(|e| err("size", e))?)
        }
    };
    let policy =
        CachePolicy::parse(c.policy.as_deref().unwrap_or("lru")).map_err(|e| err("policy", e))?;
    let write = match c.write.as_deref().unwrap_or("back") {
        "back" => WriteMode::Back,
        "through" => WriteMode::Through,
        "around" => WriteMode::Around,
        other => {
            return Err(err(
                "write",
                format!("unknown write policy `{other}`; use back, through or around"),
            ));
        }
    };
    // 0: the largest I/O of the target's worker, once its workers are one.
    let line_bytes = c.line.map_or(0, |l| l.0);
    let hit_delay_ns = c.hit_delay.map_or(0, |d| d.0.as_nanos() as u64);
    if hit_delay_ns > MAX_HIT_DELAY_NS {
        return Err(err(
            "hit_delay",
            "the synthetic hit delay is over 1 s; give e.g. hit_delay = \"200us\"".into(),
        ));
    }
    let dirty_pct = c.dirty.map_or(DIRTY_PCT, |p| p.0);
    if !(0.0..=100.0).contains(&dirty_pct) {
        return Err(err("dirty", "give a share from 0% to 100%".into()));
    }
    if c.sequential_bypass.is_some_and(|b| b.0 == 0) {
        return Err(err(
            "sequential_bypass",
            "give a length above 0, e.g. sequential_bypass = \"4MiB\"".into(),
        ));
    }
    Ok((
        path,
        CacheTier {
            device: 0,
            size,
            policy,
            write,
            line_bytes,
            sequential_bypass_bytes: c.sequential_bypass.map(|b| b.0),
            hit_delay_ns,
            dirty_pct,
        },
    ))
}

/// Makes the workers of target `t` one: their queue depths, rates and I/O limits add up. Each
/// must use `t` only and issue the same access entries; a warning names what was merged.
fn merge_workers<'w>(
    t: usize,
    targets: &[Target],
    workers: &'w mut Vec<Worker>,
    warnings: &mut Vec<String>,
) -> Result<Option<&'w Worker>, String> {
    let on: Vec<usize> = (0..workers.len())
        .filter(|&w| workers[w].targets.contains(&t))
        .collect();
    let name = &targets[t].name;
    for &w in &on {
        let other = &workers[w];
        if other.targets != [t] {
            return Err(format!(
                "worker `{}` uses the cached target `{name}` and other targets; a worker on a cached target must use it alone",
                other.name
            ));
        }
        let first = &workers[on[0]];
        if other.access != first.access || other.rate.is_some() != first.rate.is_some() {
            return Err(format!(
                "workers `{}` and `{}` of the cached target `{name}` differ; a cached target's workers run as one, so give them the same access entries (or use one worker with a larger queue depth)",
                first.name, other.name
            ));
        }
    }
    let Some((&keep, rest)) = on.split_first() else {
        return Ok(None);
    };
    if !rest.is_empty() {
        let mut merged = workers[keep].clone();
        for &w in rest {
            let o = &workers[w];
            merged.queue_depth += o.queue_depth;
            merged.rate = match (merged.rate, o.rate) {
                (Some(a), Some(b)) => Some(Rate {
                    iops: a.iops + b.iops,
                    ..a
                }),
                (r, _) => r,
            };
            merged.io_limit = match (merged.io_limit, o.io_limit) {
                (Some(IoLimit::Ios(a)), Some(IoLimit::Ios(b))) => Some(IoLimit::Ios(a + b)),
                (Some(IoLimit::Passes(a)), Some(IoLimit::Passes(b))) => {
                    Some(IoLimit::Passes(a + b))
                }
                _ => None,
            };
        }
        warnings.push(format!(
            "the {} workers of the cached target `{name}` run as one worker, `{}`, with queue depth {} (a cache tier's state lives in one thread)",
            on.len(),
            merged.name,
            merged.queue_depth
        ));
        workers[keep] = merged;
        let mut k = 0;
        workers.retain(|_| {
            k += 1;
            !rest.contains(&(k - 1))
        });
    }
    let keep = workers.iter().position(|w| w.targets == [t]);
    Ok(keep.map(|k| &workers[k]))
}
