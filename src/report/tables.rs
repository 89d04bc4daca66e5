//! Tables more than one renderer shows (console, HTML, CSV): the same columns and cells
//! everywhere.

use crate::results::RunResult;
use crate::stats::histogram::LatencySummary;
use crate::stats::summary::DirSummary;
use crate::units::{
    format_count, format_known_ns, format_mb_per_s, format_number, format_pct, format_rate,
    format_seconds,
};

/// A percentile or the maximum of a latency summary, ns, or `None` when it is not known. A
/// histogram records at least 1 ns for every I/O it times, so 0 there is never a measurement:
/// nothing was timed (no I/O of that kind, or a trace imported without times) or the figure
/// was never computed (a run rebuilt from its time series knows no p50). Every view shows it
/// as unknown, never as "0 ns".
pub(crate) fn known_ns(ns: u64) -> Option<f64> {
    (ns > 0).then_some(ns as f64)
}

/// A mean latency, ns, or `None` when nothing was timed (the maximum `max_ns` is 0).
pub(crate) fn known_mean(mean_ns: f64, max_ns: u64) -> Option<f64> {
    (max_ns > 0).then_some(mean_ns)
}

/// The mean of a latency summary, ns, or `None` when nothing was timed.
pub(crate) fn summary_mean(l: &LatencySummary) -> Option<f64> {
    known_mean(l.mean, l.max)
}

/// A verdict rule's value with its unit, as every view writes it: `0.49 ms`, `5 s`, `0
/// errors`, `120 IOPS`, `30.7k IOPS`, `2 databases`.
pub(crate) fn quantity(value: f64, unit: &str) -> String {
    match unit {
        "ms" => format_seconds(value / 1e3),
        "IOPS" | "%" | "transactions/s" if value < 1e4 => {
            format!("{} {unit}", format_number(value))
        }
        other => format!("{} {other}", format_rate(value)),
    }
}

/// Two figures that are compared (a measured value and its limit, an achieved rate and its
/// target), each as `fmt` writes it, or, when `fmt` would write different values alike, with
/// as many significant digits as it takes to keep them apart, followed by `unit` (`14.67`
/// and `14.85`, not `15` and `15`).
pub(crate) fn apart(a: f64, b: f64, fmt: impl Fn(f64) -> String, unit: &str) -> (String, String) {
    let (fa, fb) = (fmt(a), fmt(b));
    let digits = crate::units::digits_apart(a, b);
    if a == b || (fa != fb && digits == 3) {
        return (fa, fb);
    }
    let plain = |v: f64| format!("{}{unit}", crate::units::format_digits(v, digits));
    (plain(a), plain(b))
}

/// A verdict rule's measured value and limit, with their units, as every view writes them:
/// the measured value `—` when the rule was not measured, and both with the digits that show
/// which side of the limit the value fell (see [`apart`]).
pub(crate) fn rule_figures(rule: &crate::results::verdict::Rule) -> (String, String) {
    if !rule.measured() {
        return ("—".into(), quantity(rule.threshold, &rule.unit));
    }
    apart(
        rule.measured,
        rule.threshold,
        |v| quantity(v, &rule.unit),
        &format!(" {}", rule.unit),
    )
}

/// Column headings of a class's direction (after its class and direction names).
pub(crate) const DIR_COLUMNS: [&str; 9] = [
    "IOPS", "MB/s", "mean", "p50", "p95", "p99", "p99.9", "max", "errors",
];

/// The cells of one direction's figures, under [`DIR_COLUMNS`].
pub(crate) fn dir_cells(d: &DirSummary) -> [String; 9] {
    let l = &d.latency_ns;
    [
        format_rate(d.iops),
        format_number(d.bytes_per_s / 1e6),
        format_known_ns(summary_mean(l)),
        format_known_ns(known_ns(l.p50)),
        format_known_ns(known_ns(l.p95)),
        format_known_ns(known_ns(l.p99)),
        format_known_ns(known_ns(l.p99_9)),
        format_known_ns(known_ns(l.max)),
        d.errors.to_string(),
    ]
}

/// What storlab and the machine did with their CPUs over the measured phase: storlab as a share
/// of one CPU, the machine as busy against idle, and iowait as the part of idle it is (idle time
/// with I/O pending, not load).
pub(crate) fn cpu_sentence(r: &RunResult) -> String {
    let c = &r.host_cpu;
    let cpus = match r.host.cpus {
        0 => String::new(),
        1 => " (1 CPU)".into(),
        n => format!(" ({n} CPUs)"),
    };
    let iowait = c.iowait_note();
    format!(
        "storlab used {} of one CPU · the machine{cpus} was {} busy, {} idle{iowait}",
        format_pct(c.process_pct()),
        format_pct(c.machine_busy_pct()),
        format_pct(c.machine_idle_pct()),
    )
}

/// What a read-back cut short left unread, as the console and the HTML report say it after
/// its figures: "; 720 written blocks never read back (not checked)", or nothing.
pub(crate) fn unread_text(back: &crate::stats::verification::ReadBack) -> String {
    if back.blocks_unread == 0 {
        return String::new();
    }
    format!(
        "; {} written blocks never read back (not checked)",
        format_count(back.blocks_unread)
    )
}

/// Column headings of the hosts table of a run over many hosts (console and HTML).
pub(crate) const HOST_COLUMNS: [&str; 8] = [
    "rank",
    "host",
    "read IOPS",
    "write IOPS",
    "read p99",
    "write p99",
    "verdict",
    "results",
];

/// A row of the hosts table.
pub(crate) fn host_cells(h: &crate::results::hosts::HostResult) -> [String; 8] {
    let verdict = match (h.present, h.pass, &h.interrupted) {
        (false, _, _) => "MISSING".to_string(),
        (true, _, Some(_)) => "STOPPED".to_string(),
        (true, Some(false), None) if h.inconclusive => "INCONCLUSIVE".to_string(),
        (true, Some(false), None) if h.not_measured => "NOT MEASURED".to_string(),
        (true, Some(true), None) => "PASS".to_string(),
        (true, Some(false), None) => "FAIL".to_string(),
        (true, None, None) => "-".to_string(),
    };
    let t = &h.totals;
    [
        h.rank.to_string(),
        h.host.clone(),
        format_rate(t.read.iops),
        format_rate(t.write.iops),
        format_known_ns(known_ns(t.read.latency_ns.p99)),
        format_known_ns(known_ns(t.write.latency_ns.p99)),
        verdict,
        h.results_path.clone(),
    ]
}

/// What each class's figures span in a sequence (`a: step 0, 3 s`), then every class
/// together's (`(all): every step, 6 s`); `None` for a run of one step.
pub(crate) fn class_spans(r: &RunResult) -> Option<Vec<String>> {
    r.steps.as_ref()?;
    let mut spans: Vec<String> = (r.classes.iter())
        .filter_map(|(name, c)| {
            let steps = c.steps.as_ref()?;
            let which = match steps.as_slice() {
                [] => "no step".to_string(),
                [one] => format!("step {one}"),
                many => format!(
                    "steps {}",
                    many.iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            Some(format!(
                "{name}: {which}, {}",
                format_seconds(c.measured_ms.unwrap_or(r.measured_ms) as f64 / 1e3)
            ))
        })
        .collect();
    if spans.is_empty() {
        return None;
    }
    spans.push(format!(
        "(all): every step, {}",
        format_seconds(r.measured_ms as f64 / 1e3)
    ));
    Some(spans)
}

/// What a block device's own counters say against storlab's counts for the targets on it,
/// when the two differ: a sentence for the device line of the console summary and the devices
/// section of the HTML report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeviceNote {
    /// The sentence: what each counted, what that usually means.
    pub text: String,
    /// The device's figures are not storlab's I/O alone (another process, the filesystem, or
    /// I/O of storlab's that never reached it); `false`: the same I/O counted differently
    /// (requests merged or split, the page cache in between).
    pub foreign: bool,
}

/// A difference that counts: more than a fifth of the larger figure, and more than `floor`.
fn differs(device: u64, storlab: u64, floor: u64) -> bool {
    let (low, high) = (device.min(storlab), device.max(storlab));
    let gap = high - low;
    gap > floor && gap as f64 > high as f64 / 5.0
}

/// Smallest difference in bytes worth a note: below it, a filesystem's few metadata blocks.
const NOTE_BYTES: u64 = 1 << 20;

/// Smallest difference in I/Os worth a note.
const NOTE_IOS: u64 = 100;

/// How the counters of block device `d` compare with storlab's own counts over the measured
/// phase (an iostat user's check): storlab's per-target counts summed over the targets on `d`
/// (a device's counters cover all of them) against the device's reads and writes, bytes
/// first, then requests. Bytes that differ by more than a fifth mean the device did I/O that
/// was not storlab's (another process, the filesystem's journal and metadata, readahead) or
/// did not see all of storlab's; bytes that agree with counts that differ mean the kernel
/// merged or split the requests. Buffered targets go through the page cache, so their
/// counts differ by design: that is said as such. Nothing is said when they agree, when no
/// target is on `d`, or for the null engine's stand-ins. Differences within the I/Os the
/// workers keep in flight (counted on one side of the window's edge and not the other) are
/// not differences.
pub(crate) fn device_notes(r: &RunResult, d: &crate::results::DeviceResult) -> Vec<DeviceNote> {
    use crate::stats::target::TargetKind;
    let on: Vec<usize> = (0..r.targets.len())
        .filter(|&i| r.targets[i].device.as_deref() == Some(d.name.as_str()))
        .collect();
    let seconds = r.measured_ms as f64 / 1e3;
    if on.is_empty() || seconds <= 0.0 || on.iter().any(|&i| r.targets[i].kind == TargetKind::Model)
    {
        return Vec::new();
    }
    let buffered = on.iter().any(|&i| !r.targets[i].direct);
    let files = on.iter().any(|&i| r.targets[i].kind == TargetKind::File);
    // What the workers on these targets keep in flight: I/Os, and bytes at their largest size.
    let workers = (r.job.workers.iter()).filter(|w| w.targets.iter().any(|t| on.contains(t)));
    let (in_flight, largest) = workers.fold((0u64, 0u64), |(n, b), w| {
        let sizes = (w.access.iter()).flat_map(|a| {
            std::iter::once(a.block_size_bytes).chain(a.block_sizes.iter().map(|s| s.0))
        });
        (
            n + u64::from(w.queue_depth),
            b.max(sizes.max().unwrap_or(0)),
        )
    });
    let sum = |f: &dyn Fn(&crate::results::TargetResult) -> u64| -> u64 {
        (on.iter()).fold(0u64, |sum, &i| sum.saturating_add(f(&r.targets[i])))
    };
    let t = &d.delta;
    let directions = [
        (
            Direction::Reads,
            (t.reads, t.read_bytes),
            (sum(&|x| x.ops.read), sum(&|x| x.bytes.read)),
        ),
        (
            Direction::Writes,
            (t.writes, t.write_bytes),
            (sum(&|x| x.ops.write), sum(&|x| x.bytes.write)),
        ),
    ];
    let slack_ios = NOTE_IOS.max(in_flight);
    let slack_bytes = NOTE_BYTES.max(in_flight.saturating_mul(largest));
    let mut notes = Vec::new();
    // `330/s (1.35 MB/s)`.
    let rate = |ios: u64, bytes: u64| {
        let (ios, bytes) = (ios as f64 / seconds, bytes as f64 / seconds);
        (format_rate(ios), format_mb_per_s(bytes))
    };
    for (dir, (dev_ios, dev_bytes), (our_ios, our_bytes)) in directions {
        let (device, storlab) = (rate(dev_ios, dev_bytes), rate(our_ios, our_bytes));
        let counted = format!(
            "{} did {} {}/s ({}), storlab {}/s ({})",
            d.name,
            device.0,
            dir.noun(),
            device.1,
            storlab.0,
            storlab.1
        );
        let note = if differs(dev_bytes, our_bytes, slack_bytes) {
            let (why, foreign) = match (buffered, dev_bytes > our_bytes) {
                (true, _) => (dir.page_cache(), false),
                (false, true) => (dir.more(files), true),
                (false, false) => (dir.less(files), true),
            };
            let what = match (foreign, dev_bytes > our_bytes) {
                (false, _) => "the device's figures are what reached it",
                (true, true) => "the device's figures are not storlab's alone",
                (true, false) => "the device's figures are not all of storlab's",
            };
            DeviceNote {
                text: format!("{counted}: {why}; {what}"),
                foreign,
            }
        } else if differs(dev_ios, our_ios, slack_ios) && !buffered {
            // Bytes within a fifth but not equal: the requests that are not storlab's may be
            // a neighbour's, small enough to hide in the bytes.
            let (verb, others) = match dev_bytes.abs_diff(our_bytes) > slack_bytes {
                true => ("about the same", true),
                false => ("the same", false),
            };
            let why = if dev_ios < our_ios {
                format!(
                    "{verb} bytes in fewer requests: the kernel merged adjacent {} (iostat's {})",
                    dir.noun(),
                    dir.merged_column()
                )
            } else {
                format!(
                    "{verb} bytes in more requests: the kernel split storlab's {} (larger than the device takes at once, queue/max_sectors_kb){}",
                    dir.noun(),
                    if others {
                        format!(", or another process did small {} beside them", dir.noun())
                    } else {
                        String::new()
                    }
                )
            };
            DeviceNote {
                text: format!("{counted}: {why}"),
                foreign: false,
            }
        } else {
            continue;
        };
        notes.push(note);
    }
    notes
}

/// Reads or writes, as a device note words them.
#[derive(Clone, Copy)]
enum Direction {
    Reads,
    Writes,
}

impl Direction {
    fn noun(self) -> &'static str {
        match self {
            Direction::Reads => "reads",
            Direction::Writes => "writes",
        }
    }

    /// iostat's column of merged requests.
    fn merged_column(self) -> &'static str {
        match self {
            Direction::Reads => "rrqm/s",
            Direction::Writes => "wrqm/s",
        }
    }

    /// Why a device did more than storlab (on files: the filesystem's own I/O too).
    fn more(self, files: bool) -> &'static str {
        match (self, files) {
            (Direction::Reads, false) => "another process was reading from the device",
            (Direction::Reads, true) => {
                "another process was reading from the device (or the filesystem read its metadata, or read ahead)"
            }
            (Direction::Writes, false) => "another process was writing to the device",
            (Direction::Writes, true) => {
                "another process was writing to the device (or the filesystem wrote its journal and metadata, or wrote back another file's cached data)"
            }
        }
    }

    /// Why a device did less than storlab, with O_DIRECT.
    fn less(self, files: bool) -> &'static str {
        match (self, files) {
            (Direction::Reads, false) => "part of storlab's reads never reached the device",
            (Direction::Reads, true) => {
                "part of storlab's reads never reached the device (the filesystem answered them, or they went to another device under it)"
            }
            (Direction::Writes, false) => "part of storlab's writes never reached the device",
            (Direction::Writes, true) => {
                "part of storlab's writes never reached the device (the filesystem held them, or they went to another device under it)"
            }
        }
    }

    /// Why a device behind buffered targets counts other figures than storlab.
    fn page_cache(self) -> &'static str {
        match self {
            Direction::Reads => {
                "buffered targets read through the page cache, which answers reads from memory and reads ahead"
            }
            Direction::Writes => {
                "buffered targets write into the page cache, which writes back later, in its own requests"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::DeviceResult;
    use crate::stats::host::DiskDelta;
    use serde_json::json;

    /// A 10 s run of one worker (queue depth 4, 4 KiB) on a file on `vda` that read 3,300
    /// times and wrote 1,000 times (4 KiB each), opened with O_DIRECT unless `buffered`; the
    /// device counted `delta`.
    fn run(buffered: bool, delta: DiskDelta) -> RunResult {
        let mut v = crate::results::sample_json("io_uring", &["c"]);
        v["measured_ms"] = json!(10_000);
        v["job"]["workers"][0]["queue_depth"] = json!(4);
        v["targets"] = json!([{
            "name": "t", "path": "/mnt/t", "kind": "file", "size_bytes": 1 << 30,
            "logical_block_size_bytes": 512, "direct": !buffered, "dsync": false,
            "filesystem": "ext4", "mount_point": "/mnt", "mount_options": "rw",
            "device": "vda", "device_model": null,
            "prepare": {"reused": true, "written_bytes": 0, "seconds": 0.0, "mb_per_s": 0.0,
                        "data_seed": null},
            "ops": {"read": 3300, "write": 1000, "flush": 0},
            "bytes": {"read": 3300 * 4096, "write": 1000 * 4096, "flush": 0},
            "errors": {"read": 0, "write": 0, "flush": 0}
        }]);
        let mut r: RunResult = serde_json::from_value(v).expect("a valid results file");
        r.devices = vec![DeviceResult {
            name: "vda".into(),
            model: None,
            delta,
        }];
        r
    }

    /// What the device counted: `reads` and `writes` of `read_size` and `write_size` bytes.
    fn counted(reads: u64, read_size: u64, writes: u64, write_size: u64) -> DiskDelta {
        DiskDelta {
            reads,
            read_bytes: reads * read_size,
            writes,
            write_bytes: writes * write_size,
            ..Default::default()
        }
    }

    fn notes(r: &RunResult) -> Vec<DeviceNote> {
        device_notes(r, &r.devices[0])
    }

    #[test]
    fn a_device_that_agrees_gets_no_note() {
        // A few I/Os more on the device (in flight at the window's edge, a metadata block).
        let r = run(false, counted(3304, 4096, 1003, 4096));
        assert_eq!(notes(&r), []);
        // Another device, or no target on it: nothing to compare.
        let mut other = run(false, counted(99_000, 4096, 0, 0));
        other.devices[0].name = "vdb".into();
        assert_eq!(notes(&other), []);
    }

    #[test]
    fn a_busy_neighbour_is_named_with_both_rates() {
        let r = run(false, counted(152_000, 4096, 1000, 4096));
        let n = notes(&r);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].foreign);
        assert_eq!(
            n[0].text,
            "vda did 15.2k reads/s (62.3 MB/s), storlab 330/s (1.35 MB/s): another process was reading from the device (or the filesystem read its metadata, or read ahead); the device's figures are not storlab's alone"
        );
        // A block device target has no filesystem to blame.
        let mut device = r.clone();
        device.targets[0].kind = crate::stats::target::TargetKind::BlockDevice;
        assert!(notes(&device)[0].text.contains(
            "another process was reading from the device; the device's figures are not storlab's alone"
        ));
    }

    #[test]
    fn merged_writes_are_the_same_bytes_in_fewer_requests() {
        // 1,000 writes of 4 KiB reached the device as 250 of 16 KiB.
        let r = run(false, counted(3300, 4096, 250, 16_384));
        let n = notes(&r);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(!n[0].foreign);
        assert_eq!(
            n[0].text,
            "vda did 25 writes/s (0.41 MB/s), storlab 100/s (0.41 MB/s): the same bytes in fewer requests: the kernel merged adjacent writes (iostat's wrqm/s)"
        );
        // Split: the same bytes in more requests.
        let split = run(false, counted(6600, 2048, 1000, 4096));
        assert!(notes(&split)[0].text.contains(
            "the same bytes in more requests: the kernel split storlab's reads (larger than the device takes at once, queue/max_sectors_kb)"
        ));
        // More requests and more bytes, within a fifth: small I/O of another process may be
        // among them.
        let mixed = run(false, counted(6600, 2400, 1000, 4096));
        let text = &notes(&mixed)[0].text;
        assert!(
            text.contains("about the same bytes in more requests")
                && text.ends_with("or another process did small reads beside them"),
            "{text}"
        );
    }

    #[test]
    fn buffered_targets_are_said_to_go_through_the_page_cache() {
        // Reads answered from memory, writes not yet written back.
        let r = run(true, counted(10, 4096, 0, 0));
        let n = notes(&r);
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(n.iter().all(|n| !n.foreign));
        assert!(n[0].text.starts_with("vda did 1 reads/s"), "{}", n[0].text);
        assert!(
            n[0].text
                .contains("page cache, which answers reads from memory")
        );
        assert!(
            n[1].text
                .contains("write into the page cache, which writes back later")
        );
        assert!(
            n[1].text
                .ends_with("the device's figures are what reached it")
        );
        // Merged requests are no news behind a page cache.
        assert_eq!(notes(&run(true, counted(3300, 4096, 250, 16_384))), []);
    }

    #[test]
    fn a_device_that_saw_less_than_storlab_says_so() {
        let r = run(false, counted(3300, 4096, 100, 4096));
        let n = notes(&r);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].foreign);
        assert!(
            n[0].text
                .contains("part of storlab's writes never reached the device")
                && n[0]
                    .text
                    .ends_with("the device's figures are not all of storlab's"),
            "{}",
            n[0].text
        );
    }
}
