//! An access entry's stream over its span, resolved: a sequential stream's `gap` and
//! `start`, strided zones (`zone_size`, `zone_transfer`, `zone_skip`), and what atomic
//! writes ask of them.

use super::spec::AccessSpec;

/// A sequential stream's `gap` and `start`, bytes; an error names the key.
pub(super) fn sequential(a: &AccessSpec) -> Result<(i64, u64), (&'static str, String)> {
    let gap = (a.gap.as_ref().map(|g| g.bytes()).transpose())
        .map_err(|m| ("gap", m))?
        .unwrap_or(0);
    let start = a.start.map_or(0, |s| s.0);
    if start % 512 != 0 {
        return Err((
            "start",
            format!("start is {start} bytes; use a multiple of 512 bytes (O_DIRECT's alignment)"),
        ));
    }
    Ok((gap, start))
}

/// An entry's strided zones (`zone_size`, `zone_transfer`, `zone_skip`) for its largest block
/// `block` and span `length`; an error names the key.
pub(super) fn zones(
    a: &AccessSpec,
    block: u64,
    length: Option<u64>,
) -> Result<Option<crate::job::Zones>, (&'static str, String)> {
    let Some(size) = a.zone_size.map(|s| s.0) else {
        return match (a.zone_transfer, a.zone_skip) {
            (None, None) => Ok(None),
            (Some(_), _) => Err(("zone_transfer", "zone_transfer needs zone_size".into())),
            (_, Some(_)) => Err(("zone_skip", "zone_skip needs zone_size".into())),
        };
    };
    if size < block || size % 512 != 0 || length.is_some_and(|l| size > l) {
        return Err((
            "zone_size",
            format!(
                "zone_size is {size} bytes; give a multiple of 512 bytes, at least one block ({block} bytes) and at most the span's length"
            ),
        ));
    }
    let transfer = a.zone_transfer.map_or(size, |s| s.0);
    if transfer == 0 {
        return Err((
            "zone_transfer",
            "zone_transfer must be more than 0 bytes".into(),
        ));
    }
    let skip = a.zone_skip.map_or(0, |s| s.0);
    if skip % 512 != 0 || skip > 1 << 50 {
        return Err((
            "zone_skip",
            format!("zone_skip is {skip} bytes; give a multiple of 512 bytes, at most 1 PiB"),
        ));
    }
    Ok(Some(crate::job::Zones {
        size_bytes: size,
        transfer_bytes: transfer,
        skip_bytes: skip,
    }))
}

/// Whether the entry writes atomically (`atomic`): RWF_ATOMIC asks a power-of-two length the
/// target allows at an offset that is a multiple of it, so the entry has one block size
/// `block` and every place its I/O can be (`geometry`: its align, offset, gap, start and
/// roll_every, and its zones) is a multiple of it; an error names the key.
pub(super) fn atomic(
    a: &AccessSpec,
    block: u64,
    block_sizes: &[(u64, u32)],
    geometry: [u64; 5],
    zones: Option<crate::job::Zones>,
) -> Result<bool, (&'static str, String)> {
    if a.atomic != Some(true) {
        return Ok(false);
    }
    if !block_sizes.is_empty() || !block.is_power_of_two() {
        return Err((
            "atomic",
            format!(
                "atomic writes are one power-of-two size; give block_size one (it is {block} bytes{})",
                if block_sizes.is_empty() {
                    ""
                } else {
                    ", in a mix"
                }
            ),
        ));
    }
    let zones = zones.iter().flat_map(|z| [z.size_bytes, z.skip_bytes]);
    let names = [
        "align",
        "offset",
        "gap",
        "start",
        "roll_every",
        "zone_size",
        "zone_skip",
    ];
    if let Some((key, v)) = (names.into_iter())
        .zip(geometry.into_iter().chain(zones))
        .find(|&(_, v)| v % block != 0)
    {
        return Err((
            key,
            format!(
                "{key} is {v} bytes; an atomic write must be at a multiple of its size ({block} bytes), so give {key} one"
            ),
        ));
    }
    Ok(true)
}
