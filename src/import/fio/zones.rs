//! fio's strided zones (`zonemode=strided`, `zonesize`, `zonerange`, `zoneskip`) as an access
//! entry's zones.

use super::{JobOpts, Opt, Out, size};
use std::fmt::Write as _;

/// fio's strided zones: with `zonemode=strided`, or no `zonemode` and a `zonesize` (fio
/// 3.34 on; 3.33 asks for the mode), the job's I/O stays in a zone of `zonerange` bytes
/// (default `zonesize`) until it has transferred `zonesize`, then moves `zoneskip` past the
/// zone's end, back to the start past the file's end: the access entry's `zone_size`,
/// `zone_transfer` and `zone_skip`. `zonemode=zbd` is refused (no zoned block devices).
pub(super) fn zones(job: &JobOpts<'_>, t: &mut String, out: &mut Out) {
    let mode = job.get("zonemode");
    let [transfer_o, range_o, skip_o] = ["zonesize", "zonerange", "zoneskip"].map(|k| job.get(k));
    let capacity = job.get("zonecapacity");
    let strided = match mode.map(|o| o.value.as_deref().unwrap_or("").trim()) {
        Some("zbd") => {
            if let Some(o) = mode {
                out.bad(
                    o,
                    "zonemode",
                    "storlab does not drive zoned block devices (ZBC, ZNS)",
                );
            }
            return;
        }
        Some("none") => false,
        Some("strided") | None => true,
        Some(_) => {
            if let Some(o) = mode {
                out.bad(o, "zonemode", "none, strided or zbd");
            }
            return;
        }
    };
    let Some(transfer_o) = transfer_o.filter(|_| strided) else {
        if let (Some(o), false) = (job.get("zonesize"), strided) {
            out.bad(o, "zonesize", "fio refuses zonesize with zonemode=none");
        } else if let (Some(o), Some("strided")) = (mode, mode.and_then(|o| o.value.as_deref())) {
            out.bad(
                o,
                "zonemode",
                "fio needs zonesize with zonemode=strided; give it",
            );
        }
        for (k, o) in [
            ("zonerange", range_o),
            ("zoneskip", skip_o),
            ("zonecapacity", capacity),
        ] {
            if o.is_some() {
                out.note(&format!("{k}: no effect (no strided zones)"));
            }
        }
        return;
    };
    let bytes = |o: &Opt, key: &str, out: &mut Out| {
        let v = o.value.as_deref().and_then(size);
        if v.is_none() {
            out.bad(o, key, "bytes, e.g. 256m");
        }
        v
    };
    let Some(transfer) = bytes(transfer_o, "zonesize", out) else {
        return;
    };
    let zone = match range_o {
        Some(o) => bytes(o, "zonerange", out),
        None => Some(transfer),
    };
    let gap = match skip_o {
        Some(o) => bytes(o, "zoneskip", out),
        None => Some(0),
    };
    if capacity.is_some() {
        out.note("zonecapacity: no effect (fio ignores it in strided zones)");
    }
    if let (Some(zone), Some(gap)) = (zone, gap) {
        let _ = writeln!(
            t,
            "# fio's strided zones: {transfer} bytes in each zone of {zone}, then {gap} skipped\nzone_size = {zone}\nzone_transfer = {transfer}\nzone_skip = {gap}"
        );
    }
}
