//! fio's block sizes (`bs`, `bsrange`, `bssplit`) for reads and for writes, as access entries'
//! sizes: fio gives reads', writes' and trims' apart with commas (`bs=4k,64k`), one value
//! being all of them and an empty one fio's default, 4 KiB.

use super::{JobOpts, Opt, Out, features, size};

/// One direction's sizes: the largest block and the mix (`None`: every I/O is `bs`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Sizes {
    pub(super) bs: u64,
    pub(super) mix: Option<Vec<(u64, u32)>>,
}

impl Sizes {
    /// The smallest size and the mean (weighted by the mix), bytes.
    pub(super) fn min_mean(&self) -> (f64, f64) {
        match &self.mix {
            Some(l) => {
                let w: u32 = l.iter().map(|(_, w)| w).sum();
                let mean = (l.iter())
                    .map(|(b, w)| *b as f64 * f64::from(*w))
                    .sum::<f64>()
                    / f64::from(w.max(1));
                (
                    l.iter().map(|(b, _)| *b).min().unwrap_or(self.bs) as f64,
                    mean,
                )
            }
            None => (self.bs as f64, self.bs as f64),
        }
    }
}

/// fio's default block size.
const DEFAULT: u64 = 4096;

/// The job's sizes: the reads' (every I/O's when the writes have none of their own), and the
/// writes' own when they differ.
pub(super) fn of(job: &JobOpts<'_>, out: &mut Out) -> (Sizes, Option<Sizes>) {
    let mut reads = Sizes {
        bs: DEFAULT,
        mix: None,
    };
    let mut writes = None;
    let mut range: Option<(&Opt, &str)> = None;
    for key in ["bs", "blocksize"] {
        let Some(o) = job.get(key) else { continue };
        let v = o.value.as_deref().unwrap_or("");
        // Reads, writes (trims are not converted); an empty one is fio's default.
        let parts: Vec<Option<u64>> = (v.split(',').take(2))
            .map(|p| {
                if p.trim().is_empty() {
                    Some(DEFAULT)
                } else {
                    size(p)
                }
            })
            .collect();
        match parts.as_slice() {
            _ if v.contains('-') => range = Some((o, key)),
            [Some(r), rest @ ..] if *r > 0 && rest.iter().all(|w| w.is_some_and(|w| w > 0)) => {
                reads.bs = *r;
                writes = (rest.first().copied().flatten())
                    .filter(|w| w != r)
                    .map(|bs| Sizes { bs, mix: None });
            }
            _ => out.bad(
                o,
                key,
                "block sizes for reads and writes, e.g. 4k or 4k,64k",
            ),
        }
    }
    for key in ["bsrange", "blocksize_range"] {
        if let Some(o) = job.get(key) {
            range = Some((o, key));
        }
    }
    if let Some((o, key)) = range {
        match features::bsrange(o.value.as_deref().unwrap_or("")) {
            Ok(list) => {
                reads.bs = list.iter().map(|(b, _)| *b).max().unwrap_or(reads.bs);
                reads.mix = Some(list);
            }
            Err(why) => out.bad(o, key, why),
        }
    }
    if let Some(o) = job.get("bssplit") {
        if range.is_some() {
            out.bad(o, "bssplit", "with bsrange: give one of them");
        }
        // The reads' list, then the writes' (one list is both).
        let mut lists = o.value.as_deref().unwrap_or("").split(',');
        let first = lists.next().and_then(super::bssplit);
        let second = match lists.next() {
            Some(w) if !w.is_empty() => super::bssplit(w).map(Some),
            _ => Some(None),
        };
        match (first, second) {
            (Some(r), Some(w)) => {
                let largest = |l: &[(u64, u32)]| l.iter().map(|(b, _)| *b).max().unwrap_or(DEFAULT);
                writes = w.filter(|w| *w != r).map(|w| Sizes {
                    bs: largest(&w),
                    mix: Some(w),
                });
                reads.mix = Some(r);
            }
            _ => out.bad(
                o,
                "bssplit",
                "size/percent pairs separated by `:` (4k/50:64k/50), the writes' after a comma",
            ),
        }
    }
    (reads, writes)
}
