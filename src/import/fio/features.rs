//! The fio options people use beyond a job's shape: verification, steady state, the latency
//! target (a capacity search), I/O priority, start delay, NUMA placement, `wait_for`, data
//! reduction, and the options storlab accepts without effect or refuses with a reason.

use super::{JobOpts, Opt, Out, duration, size};
use std::fmt::Write as _;

/// `verify=` values: every checksum fio offers, and `meta`/`pattern`. storlab's verification
/// is stronger than any of them: a checksum of every sector plus the block's identity (target,
/// offset, write generation), so a block written elsewhere or an old write is caught too.
const CHECKSUMS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha512",
    "sha256",
    "sha1",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
    "pattern",
    "1",
];

/// verify_* options storlab's verification makes moot, and why.
const VERIFY_ACCEPTED: &[(&str, &str)] = &[
    ("verify_interval", "storlab checksums every 512-byte sector"),
    (
        "verify_offset",
        "storlab places its own header in every block",
    ),
    (
        "verify_backlog",
        "storlab checks every read as it completes and reads back every written block at the end",
    ),
    (
        "verify_backlog_batch",
        "storlab checks every read as it completes and reads back every written block at the end",
    ),
    (
        "verify_async",
        "storlab checks on the worker; what is measured is the same I/O",
    ),
    (
        "verify_async_cpus",
        "storlab checks on the worker; what is measured is the same I/O",
    ),
    (
        "verify_fatal",
        "storlab counts every mismatch and names the first ones in the results",
    ),
    (
        "verify_dump",
        "storlab names the first mismatches in the results",
    ),
    (
        "verify_state_save",
        "storlab verifies within one run and saves no state",
    ),
    (
        "verify_write_sequence",
        "storlab's header carries each write's generation",
    ),
    (
        "verify_header_seed",
        "storlab's header carries the block's identity",
    ),
];

/// verify_* options refused, and why.
const VERIFY_REFUSED: &[(&str, &str)] = &[
    (
        "verify_pattern",
        "storlab writes its own block content (identity and checksums), not a given pattern",
    ),
    (
        "verify_only",
        "storlab verifies data written in the same run",
    ),
    (
        "verify_state_load",
        "storlab verifies within one run and loads no state",
    ),
    (
        "experimental_verify",
        "storlab has one verification: every read checked, every written block read back",
    ),
];

/// Options that need what storlab lacks, and why.
pub(super) const LACKS: &[(&str, &str)] = &[
    (
        "max_open_zones",
        "storlab does not drive zoned block devices",
    ),
    (
        "zone_reset_threshold",
        "storlab does not drive zoned block devices",
    ),
    (
        "zone_reset_frequency",
        "storlab does not drive zoned block devices",
    ),
    (
        "cmdprio_bssplit",
        "storlab gives a share of I/Os another priority whatever their size (cmdprio_percentage)",
    ),
    (
        "bs_unaligned",
        "storlab's block sizes are multiples of the smallest (bsrange without bs_unaligned)",
    ),
    ("trim_percentage", "storlab does not trim"),
];

/// The job-wide keys (top-level TOML) a job's verification, steady state, latency target and
/// data reduction ask for, with the comments naming their source lines: the first job's,
/// which the others must share.
pub(super) fn wide(job: &JobOpts<'_>, mean_bs_fixed: bool, out: &mut Out) -> String {
    let mut t = String::new();
    verify(job, &mut t, out);
    steady(job, mean_bs_fixed, &mut t, out);
    latency_target(job, &mut t, out);
    data(job, &mut t, out);
    uring(job, &mut t, out);
    t
}

/// fio's completion batching and io_uring engine options → the `[io_uring]` table (at the end
/// of `t`: nothing top-level may follow a table). fio reaps at most `iodepth_batch_complete_min`
/// at once unless `iodepth_batch_complete_max` says more, so a minimum alone sets both.
fn uring(job: &JobOpts<'_>, t: &mut String, out: &mut Out) {
    let mut keys = String::new();
    let count = |key: &'static str, least: u32, out: &mut Out| -> Option<(u32, &Opt)> {
        let o = job.get(key)?;
        match o
            .value
            .as_deref()
            .and_then(|v| v.trim().parse::<u32>().ok())
        {
            Some(n) if n >= least => Some((n, o)),
            _ => {
                out.bad(o, key, format!("a count of I/Os, at least {least}"));
                None
            }
        }
    };
    let min = ["iodepth_batch_complete_min", "iodepth_batch_complete"]
        .into_iter()
        .find_map(|k| count(k, 0, out).map(|(n, o)| (n, o, k)));
    let max = count("iodepth_batch_complete_max", 1, out);
    if let Some((n, o, key)) = min {
        keys.push_str(&from(o, key));
        let _ = writeln!(keys, "batch_complete_min = {n}");
    }
    match (max, min) {
        (Some((m, o)), Some((n, ..))) if m < n => {
            out.bad(o, "iodepth_batch_complete_max", "below iodepth_batch_complete_min, which fio then uses: give it at least the minimum");
        }
        (Some((m, o)), _) => {
            keys.push_str(&from(o, "iodepth_batch_complete_max"));
            let _ = writeln!(keys, "batch_complete_max = {m}");
        }
        (None, Some((n, ..))) if n > 1 => {
            keys.push_str("# fio reaps at most iodepth_batch_complete_min at once without iodepth_batch_complete_max\n");
            let _ = writeln!(keys, "batch_complete_max = {n}");
        }
        (None, _) => {}
    }
    if let Some(o) = job.get("hipri") {
        if job.flag("hipri") {
            keys.push_str(&from(o, "hipri"));
            keys.push_str("poll = true\n");
        }
    }
    if let Some(o) = job.get("sqthread_poll") {
        if job.flag("sqthread_poll") {
            keys.push_str(&from(o, "sqthread_poll"));
            keys.push_str("sqpoll = true\n");
            if let Some((cpu, o)) = count("sqthread_poll_cpu", 0, out) {
                keys.push_str(&from(o, "sqthread_poll_cpu"));
                let _ = writeln!(keys, "sqpoll_cpu = {cpu}");
            }
        }
    }
    if !keys.is_empty() {
        let _ = write!(t, "\n[io_uring]\n{keys}");
    }
}

/// `# job.fio:12: key=value` for an option.
pub(super) fn from(o: &Opt, key: &str) -> String {
    crate::import::source_comment(&format!("{}:{}", o.file.display(), o.line), &o.shown(key))
}

fn verify(job: &JobOpts<'_>, t: &mut String, out: &mut Out) {
    for (key, why) in VERIFY_REFUSED {
        if let Some(o) = job.get(key) {
            out.bad(o, key, *why);
        }
    }
    let on = match job.get("verify") {
        None => false,
        Some(o) => {
            let v = o
                .value
                .as_deref()
                .unwrap_or("1")
                .trim()
                .to_ascii_lowercase();
            match v.as_str() {
                "0" | "none" => false,
                "null" => {
                    out.note("verify=null: no effect (fio only pretends to verify)");
                    false
                }
                _ if CHECKSUMS.contains(&v.as_str()) => {
                    let do_verify = job.get("do_verify");
                    if do_verify.is_some_and(|d| d.value.as_deref() == Some("0")) {
                        out.note(
                            "do_verify=0: fio writes checksums but never checks them; storlab does not verify",
                        );
                        false
                    } else {
                        let _ = write!(
                            t,
                            "{}# fio's {v}: storlab's verification is stronger (a checksum of every sector plus the block's target, offset and write generation)\nverify = true\n",
                            from(o, "verify")
                        );
                        true
                    }
                }
                _ => {
                    out.bad(o, "verify", "a checksum fio offers (md5, crc32c, crc64, xxhash, sha256, sha3-256, meta, pattern, ...), 0 or null");
                    false
                }
            }
        }
    };
    let _ = job.get("do_verify");
    for (key, why) in VERIFY_ACCEPTED {
        if job.get(key).is_some() {
            out.note(&format!(
                "{key}: no effect{} ({why})",
                if on { "" } else { " (no verification)" }
            ));
        }
    }
}

/// fio's steady state: `ss=iops:10%` ends the job once every IOPS sample of the last
/// `ss_dur` (one per `ss_interval`, default 1 s) is within 10 % of their mean;
/// `iops_slope:X%` once the least-squares slope per sample is within X % of the mean; `bw`
/// and `lat` (each interval's mean completion latency) the same of bandwidth and latency.
/// storlab's `until_steady` with rounds of `ss_interval` and `ss_dur / ss_interval` rounds
/// in the window (fio's integer division) checks the same: `steady_range` is the first, and
/// `steady_slope` (the fit's excursion over the window) is fio's slope times the window's
/// rounds less one. The criterion fio does not ask for is set to its loosest (100 %).
fn steady(job: &JobOpts<'_>, fixed_bs: bool, t: &mut String, out: &mut Out) {
    let dur = job.get("ss_dur");
    let ramp = job.get("ss_ramp");
    let interval = job.get("ss_interval");
    let Some(o) = job.get("ss") else {
        for (k, o) in [
            ("ss_dur", dur),
            ("ss_ramp", ramp),
            ("ss_interval", interval),
        ] {
            if o.is_some() {
                out.note(&format!("{k}: no effect (without ss)"));
            }
        }
        return;
    };
    let v = o.value.as_deref().unwrap_or("").trim().to_ascii_lowercase();
    let Some((metric, limit)) = v.split_once(':') else {
        out.bad(o, "ss", "METRIC:LIMIT, e.g. iops:10% or iops_slope:0.1%");
        return;
    };
    let Some(pct) = limit
        .trim()
        .strip_suffix('%')
        .and_then(|p| p.trim().parse::<f64>().ok())
    else {
        out.bad(o, "ss", "storlab's steady state is relative: give the limit in percent of the mean (iops:10%), not in IOPS or bytes");
        return;
    };
    let (slope, what) = match metric {
        "iops" => (false, "iops"),
        "iops_slope" => (true, "iops"),
        "lat" => (false, "lat"),
        "lat_slope" => (true, "lat"),
        "bw" | "bw_slope" if !fixed_bs => {
            out.bad(o, "ss", "storlab's steady state is on IOPS, which follows bandwidth only with one block size");
            return;
        }
        "bw" => (false, "bw"),
        "bw_slope" => (true, "bw"),
        _ => {
            out.bad(o, "ss", "iops, iops_slope, bw, bw_slope, lat or lat_slope");
            return;
        }
    };
    // A time in whole milliseconds (fio's unit, seconds, when none is given).
    let millis = |o: &Opt| {
        (o.value.as_deref())
            .and_then(duration)
            .and_then(|s| crate::units::parse_duration(&s).ok())
            .filter(|d| d.as_nanos() % 1_000_000 == 0)
            .map(|d| d.as_millis() as u64)
    };
    let round_ms = match interval {
        None => 1000,
        Some(i) => match millis(i) {
            Some(ms) if ms >= 100 => ms,
            _ => {
                out.bad(
                    i,
                    "ss_interval",
                    "a time of whole milliseconds, at least 100 ms (storlab's shortest round)",
                );
                return;
            }
        },
    };
    let rounds = match dur {
        None => {
            out.bad(o, "ss", "fio needs ss_dur with ss; give it");
            return;
        }
        Some(d) => {
            match millis(d).map(|ms| ms / round_ms) {
                Some(n) if n >= 2 => n,
                _ => {
                    out.bad(d, "ss_dur", "at least two of ss_interval's samples (storlab's rounds are fio's samples)");
                    return;
                }
            }
        }
    };
    if rounds > 10_000 {
        out.bad(o, "ss_dur", "at most 10000 of ss_interval's samples");
        return;
    }
    let (range, slope_pct) = if slope {
        (100.0, pct * (rounds as f64 - 1.0))
    } else {
        (pct, 100.0)
    };
    if range > 100.0 || slope_pct > 100.0 || pct < 0.0 {
        out.bad(
            o,
            "ss",
            "the limit makes storlab's criterion beyond 100 % of the mean; give a smaller one",
        );
        return;
    }
    let _ = write!(t, "{}", from(o, "ss"));
    for (k, o) in [("ss_dur", dur), ("ss_interval", interval)] {
        if let Some(o) = o {
            let _ = write!(t, "{}", from(o, k));
        }
    }
    match what {
        "bw" => t.push_str(
            "# one block size: bandwidth is IOPS times it, so steady IOPS is steady bandwidth\n",
        ),
        "lat" => t.push_str("# fio's lat: each sample's mean completion latency, reads and writes together\nsteady_metric = \"latency\"\n"),
        _ => {}
    }
    let _ = write!(
        t,
        "# storlab's rounds are fio's samples, one each ss_interval; the criterion fio does not ask for is at its loosest (100%)\nuntil_steady = true\nround = \"{}\"\nsteady_rounds = {rounds}\nsteady_range = \"{}%\"\nsteady_slope = \"{}%\"\n",
        if round_ms % 1000 == 0 {
            format!("{}s", round_ms / 1000)
        } else {
            format!("{round_ms}ms")
        },
        round3(range),
        round3(slope_pct)
    );
    // fio's runtime caps the job: as many rounds as fit in it (without one, storlab's
    // default of 25 rounds, or the window if longer).
    let runtime = (job.opts.get("runtime"))
        .and_then(|r| r.value.as_deref().and_then(duration))
        .and_then(|r| crate::units::parse_duration(&r).ok());
    let most = runtime
        .map_or(25, |d| d.as_millis() as u64 / round_ms)
        .max(rounds);
    let _ = writeln!(t, "max_rounds = {most}");
    if let Some(r) = ramp {
        match r.value.as_deref().and_then(duration) {
            Some(d) if !job.opts.contains_key("ramp_time") => {
                let _ = write!(
                    t,
                    "{}# fio leaves the first ss_ramp out of the steady-state check; storlab leaves it out of the results too\nramp = \"{d}\"\n",
                    from(r, "ss_ramp")
                );
            }
            _ => out.bad(
                r,
                "ss_ramp",
                "a time, and not with ramp_time (storlab has one ramp)",
            ),
        }
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// fio's `latency_target`: it searches for the highest queue depth at which
/// `latency_percentile` % of the I/Os in each `latency_window` complete within the target.
/// storlab's capacity search: queue depth doubling from 1 to the job's `iodepth`, each step
/// `latency_window` long, ending at the first step whose percentile exceeds the target (the
/// step before it is the answer).
fn latency_target(job: &JobOpts<'_>, t: &mut String, out: &mut Out) {
    let window = job.get("latency_window");
    let pct = job.get("latency_percentile");
    let run = job.get("latency_run");
    let Some(o) = job.get("latency_target") else {
        for (k, o) in [
            ("latency_window", window),
            ("latency_percentile", pct),
            ("latency_run", run),
        ] {
            if o.is_some() {
                out.note(&format!("{k}: no effect (without latency_target)"));
            }
        }
        return;
    };
    if let Some(r) = run.filter(|r| r.value.as_deref() != Some("0")) {
        out.bad(r, "latency_run", "storlab searches once (latency_run=0)");
    }
    // fio's latency_target is µs unless a unit says otherwise.
    let target = o.value.as_deref().and_then(|v| {
        let v = v.trim().to_ascii_lowercase();
        let (n, scale) = [("us", 1.0), ("ms", 1e3), ("s", 1e6)]
            .iter()
            .find_map(|(u, s)| v.strip_suffix(u).map(|n| (n.to_string(), *s)))
            .unwrap_or((v.clone(), 1.0));
        n.trim()
            .parse::<f64>()
            .ok()
            .map(|n| n * scale)
            .filter(|us| *us >= 1.0 && us.is_finite())
    });
    let Some(us) = target else {
        out.bad(
            o,
            "latency_target",
            "a time, µs unless a unit says otherwise (10000, 10ms)",
        );
        return;
    };
    let p = pct.map_or(Some(100.0), |p| {
        p.value
            .as_deref()
            .and_then(|v| v.trim().trim_end_matches('%').parse::<f64>().ok())
    });
    let stat = match p {
        Some(x) if x >= 100.0 => "max",
        Some(x) if (x - 99.99).abs() < 1e-9 => "p99.99",
        Some(x) if (x - 99.9).abs() < 1e-9 => "p99.9",
        Some(x) if (x - 99.0).abs() < 1e-9 => "p99",
        Some(x) if (x - 95.0).abs() < 1e-9 => "p95",
        Some(x) if (x - 90.0).abs() < 1e-9 => "p90",
        Some(x) if (x - 50.0).abs() < 1e-9 => "p50",
        _ => {
            if let Some(p) = pct {
                out.bad(p, "latency_percentile", "storlab's stop rule reads the 50th, 90th, 95th, 99th, 99.9th, 99.99th percentile or the maximum (100)");
            }
            return;
        }
    };
    let depth = job
        .opts
        .get("iodepth")
        .and_then(|d| d.value.as_deref()?.trim().parse::<u32>().ok())
        .unwrap_or(1);
    if depth < 2 {
        out.bad(
            o,
            "latency_target",
            "fio searches queue depths up to iodepth: give iodepth above 1",
        );
        return;
    }
    let step = match window.map(|w| w.value.as_deref().and_then(duration)) {
        None => None,
        Some(Some(d)) => Some(d),
        Some(None) => {
            if let Some(w) = window {
                out.bad(
                    w,
                    "latency_window",
                    "a time (µs unless a unit says otherwise)",
                );
            }
            return;
        }
    };
    let _ = write!(t, "{}", from(o, "latency_target"));
    if let Some(w) = window {
        let _ = write!(t, "{}", from(w, "latency_window"));
    }
    if let Some(p) = pct {
        let _ = write!(t, "{}", from(p, "latency_percentile"));
    }
    let ms = us / 1000.0;
    let _ = write!(
        t,
        "# fio's search for the highest queue depth that meets the target: storlab doubles the depth from 1 to {depth}, each a step{}, and stops at the first over the target\nstop_when = \"{stat} > {}ms\"\n",
        step.as_deref()
            .map(|s| format!(" of {s}"))
            .unwrap_or_default(),
        round3(ms)
    );
    out.depth_cycle = Some((depth, step));
}

/// fio's `buffer_compress_percentage` (the share of each buffer that compresses away) and
/// `dedupe_percentage` (the share of writes that repeat an earlier buffer) as the ratios of
/// storlab's `[data]` table: 100 / (100 − percentage).
fn data(job: &JobOpts<'_>, t: &mut String, out: &mut Out) {
    let mut lines = String::new();
    for (key, storlab) in [
        ("buffer_compress_percentage", "compress"),
        ("dedupe_percentage", "dedupe"),
    ] {
        let Some(o) = job.get(key) else { continue };
        match o
            .value
            .as_deref()
            .and_then(|v| v.trim().parse::<f64>().ok())
        {
            Some(p) if (0.0..100.0).contains(&p) => {
                if p > 0.0 {
                    let _ = writeln!(
                        lines,
                        "{}{storlab} = {}",
                        from(o, key),
                        round3(100.0 / (100.0 - p))
                    );
                }
            }
            _ => out.bad(
                o,
                key,
                "a percentage from 0 to below 100 (100 would be a ratio without end)",
            ),
        }
    }
    for key in [
        "buffer_compress_chunk",
        "dedupe_mode",
        "dedupe_working_set_percentage",
        "compress_percentage",
    ] {
        if let Some(o) = job.get(key) {
            out.bad(o, key, "storlab's data reduction has a ratio for compression and one for dedupe ([data] compress, dedupe)");
        }
    }
    if !lines.is_empty() {
        let _ = write!(t, "\n[data]\n{lines}");
    }
}

/// The worker's keys: start delay, I/O priority, CPUs of NUMA nodes.
pub(super) fn worker_keys(job: &JobOpts<'_>, engine_async: bool, t: &mut String, out: &mut Out) {
    if let Some(o) = job.get("startdelay") {
        let v = o.value.as_deref().unwrap_or("");
        match duration(v) {
            Some(d) if !v.contains('-') => {
                let _ = writeln!(t, "{}start_delay = \"{d}\"", from(o, "startdelay"));
            }
            _ if v.trim() == "0" => {}
            _ => out.bad(
                o,
                "startdelay",
                "one time (storlab does not draw a delay from a range)",
            ),
        }
    }
    priority(job, engine_async, t, out);
    if let Some(o) = job.get("numa_cpu_nodes") {
        match numa_cpus(o.value.as_deref().unwrap_or("")) {
            Ok(cpus) => {
                let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
                let _ = write!(
                    t,
                    "{}# the CPUs of those nodes on this machine, read when converted\ncpus = [{}]\n",
                    from(o, "numa_cpu_nodes"),
                    list.join(", ")
                );
            }
            Err(why) => out.bad(o, "numa_cpu_nodes", why),
        }
    }
    for key in ["numa_mem_policy"] {
        if let Some(o) = job.get(key) {
            out.bad(o, key, "storlab does not place its buffers on NUMA nodes");
        }
    }
}

/// fio's `prioclass`/`prio` (or `prio` alone: best effort) as the worker's `io_priority`, and
/// `cmdprio_percentage` (with `cmdprio_class`, default real time, and `cmdprio`, default 0) as
/// `io_priority_mix`: that share of its I/Os at that priority (io_uring only, as in fio).
fn priority(job: &JobOpts<'_>, engine_async: bool, t: &mut String, out: &mut Out) {
    let class_name = |c: u32| match c {
        1 => Some("rt"),
        2 => Some("be"),
        3 => Some("idle"),
        _ => None,
    };
    let one = |o: &Opt| {
        o.value.as_deref().and_then(|v| {
            let mut parts = v.split(',').map(str::trim);
            let first = parts.next()?;
            parts
                .all(|p| p == first)
                .then(|| first.parse::<u32>().ok())
                .flatten()
        })
    };
    let text = |class: &str, level: Option<u32>| match (class, level) {
        ("idle", _) => "idle".to_string(),
        (c, Some(l)) => format!("{c}:{l}"),
        (c, None) => format!("{c}:4"),
    };
    let class = job.get("prioclass");
    let level = job.get("prio");
    if class.is_some() || level.is_some() {
        let c = match class.map(|o| (o, one(o).and_then(class_name))) {
            None => Some("be"),
            Some((_, Some(c))) => Some(c),
            Some((o, None)) => {
                out.bad(
                    o,
                    "prioclass",
                    "1 (real time), 2 (best effort) or 3 (idle), one for reads and writes",
                );
                None
            }
        };
        let l = match level.map(|o| (o, one(o))) {
            None => None,
            Some((_, Some(l))) if l <= 7 => Some(l),
            Some((o, _)) => {
                out.bad(
                    o,
                    "prio",
                    "a level from 0 (highest) to 7, one for reads and writes",
                );
                return;
            }
        };
        if let Some(c) = c {
            let src: String = [
                class.map(|o| from(o, "prioclass")),
                level.map(|o| from(o, "prio")),
            ]
            .into_iter()
            .flatten()
            .collect();
            let _ = writeln!(t, "{src}io_priority = \"{}\"", text(c, l));
        }
    }
    let cmd_class = job.get("cmdprio_class");
    let cmd_level = job.get("cmdprio");
    let Some(o) = job.get("cmdprio_percentage") else {
        for (k, o) in [("cmdprio_class", cmd_class), ("cmdprio", cmd_level)] {
            if let Some(o) = o {
                out.bad(o, k, "fio applies it with cmdprio_percentage or cmdprio_bssplit; storlab converts cmdprio_percentage");
            }
        }
        return;
    };
    if !engine_async {
        out.bad(o, "cmdprio_percentage", "a share of I/Os at another priority needs the io_uring engine (fio: io_uring or libaio)");
        return;
    }
    let share = match one(o) {
        Some(p) if (1..=100).contains(&p) => p,
        Some(0) => return,
        _ => {
            out.bad(
                o,
                "cmdprio_percentage",
                "a percentage from 0 to 100, one for reads and writes",
            );
            return;
        }
    };
    let c = match cmd_class.map(|o| (o, one(o).and_then(class_name))) {
        None => "rt",
        Some((_, Some(c))) => c,
        Some((o, None)) => {
            out.bad(
                o,
                "cmdprio_class",
                "1 (real time), 2 (best effort) or 3 (idle), one for reads and writes",
            );
            return;
        }
    };
    let l = match cmd_level.map(|o| (o, one(o))) {
        None => Some(0),
        Some((_, Some(l))) if l <= 7 => Some(l),
        Some((o, _)) => {
            out.bad(
                o,
                "cmdprio",
                "a level from 0 (highest) to 7, one for reads and writes",
            );
            return;
        }
    };
    let src: String = [
        Some(from(o, "cmdprio_percentage")),
        cmd_class.map(|o| from(o, "cmdprio_class")),
        cmd_level.map(|o| from(o, "cmdprio")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let _ = writeln!(
        t,
        "{src}io_priority_mix = {{ share = \"{share}%\", priority = \"{}\" }}",
        text(c, l)
    );
}

/// The CPUs of the NUMA nodes `list` (`0`, `0-1`, `0,2`) on this machine.
fn numa_cpus(list: &str) -> Result<Vec<usize>, String> {
    let nodes = parse_list(list, 1024).ok_or_else(|| {
        format!("`{list}`: node numbers (0, 0-1, 0,2); storlab does not convert `all` or `+` lists")
    })?;
    let mut cpus = Vec::new();
    for n in nodes {
        let path = format!("/sys/devices/system/node/node{n}/cpulist");
        let text = std::fs::read_to_string(&path)
            .map_err(|_| format!("this machine has no NUMA node {n} ({path} cannot be read); convert on the machine that runs the job, or use cpus"))?;
        let c = parse_list(text.trim(), 4096)
            .ok_or_else(|| format!("{path}: `{}` is not a CPU list", text.trim()))?;
        cpus.extend(c);
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err("those nodes have no CPUs".into());
    }
    Ok(cpus)
}

/// A list such as `0-3,6,8-9`, each number below `max`.
fn parse_list(list: &str, max: usize) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi): (usize, usize) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
        if lo > hi || hi >= max {
            return None;
        }
        out.extend(lo..=hi);
    }
    (!out.is_empty()).then_some(out)
}

/// fio's `bsrange=MIN-MAX` (or `bs=MIN-MAX`): fio 3 draws each I/O's size as MIN plus a
/// uniform draw below MAX (not MAX − MIN), rounds it down to a multiple of MIN (MIN a power of
/// two, as fio does without `bs_unaligned`) and caps it at MAX. As a block-size distribution:
/// each multiple of MIN below MAX weighs MIN, and MAX weighs what rounds to or above it, so
/// `4k-16k` is 4, 8, 12 and 16 KiB alike (measured with fio 3.33: a mean of 9.96 KiB over 370
/// I/Os); at most [`MAX_RANGE_SIZES`] sizes.
pub(super) fn bsrange(v: &str) -> Result<Vec<(u64, u32)>, &'static str> {
    let mut parts = v.split(',').map(str::trim).filter(|p| !p.is_empty());
    let first = parts.next().ok_or("MIN-MAX, e.g. 4k-64k")?;
    if parts.any(|p| p != first) {
        return Err(
            "one range for reads and writes (their own sizes convert as bs=R,W or bssplit=R,W, not as ranges)",
        );
    }
    let (lo, hi) = first.split_once('-').ok_or("MIN-MAX, e.g. 4k-64k")?;
    let (lo, hi) = (
        size(lo).ok_or("MIN-MAX, e.g. 4k-64k")?,
        size(hi).ok_or("MIN-MAX, e.g. 4k-64k")?,
    );
    if lo == 0 || hi < lo || !lo.is_power_of_two() || hi > u64::from(u32::MAX) {
        return Err("MIN-MAX with MIN a power of two, MIN at most MAX, MAX below 4 GiB");
    }
    let k = hi / lo;
    if k as usize > MAX_RANGE_SIZES {
        return Err("at most 256 sizes (MAX / MIN); storlab's block-size list is bounded");
    }
    // The draws MIN + 0 .. MIN + MAX − 1: those from j·MIN up to the next multiple (or the
    // end) round down to j·MIN; every one from MAX on is capped at MAX.
    let end = lo + hi;
    let mut list: Vec<(u64, u32)> = Vec::new();
    for j in 1..=end.div_ceil(lo) {
        let from = j * lo;
        if from >= end {
            break;
        }
        let weight = u32::try_from((from + lo).min(end) - from).unwrap_or(u32::MAX);
        let value = from.min(hi);
        match list.last_mut() {
            Some((v, w)) if *v == value => *w = w.saturating_add(weight),
            _ => list.push((value, weight)),
        }
    }
    Ok(list)
}

/// Sizes a `bsrange` may make.
const MAX_RANGE_SIZES: usize = 256;
