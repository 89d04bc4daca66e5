//! A results file in the shape of Iometer's results spreadsheet (`results.csv` as Iometer
//! 2008.06.18 and 1.1.0 save it), so spreadsheets and scripts made for Iometer's output read
//! storlab runs: the `'Test Description`, `'Version` and `'Time Stamp` header lines, then per
//! test (a run, or each step of a sequence: Iometer runs each access specification and each
//! cycling value as a test of its own) a `'Results` block with Iometer's column headings and
//! an `ALL` row, a `MANAGER` row (this machine) and, for a run without steps, a `WORKER` row
//! per worker, then `'Time Stamp` and `'End Test`.
//!
//! Every figure is the results file's: IOps (reads + writes), MBps in binary (2^20 bytes) and
//! decimal (10^6 bytes) megabytes, response times in milliseconds (the mean of reads and
//! writes weighted by their I/Os), maximum response times, errors, bytes and I/Os. A disk
//! worker's transaction is one I/O, so Transactions per Second is its IOps and the average
//! transaction time its average response time, as Iometer reports them. What storlab does not
//! measure (connections, Iometer's raw counters, interrupts, DPC time, network packets) is
//! left empty; flushes are not I/Os in Iometer and are left out.

use crate::results::RunResult;
use crate::stats::host::CpuPercent;
use crate::stats::summary::{ClassSummary, DirSummary};
use std::fmt::Write as _;

/// Iometer's results columns (2008.06.18 and 1.1.0, without 1.1.0's latency bins).
pub(crate) const COLUMNS: [&str; 56] = [
    "Target Type",
    "Target Name",
    "Access Specification Name",
    "# Managers",
    "# Workers",
    "# Disks",
    "IOps",
    "Read IOps",
    "Write IOps",
    "MBps (Binary)",
    "Read MBps (Binary)",
    "Write MBps (Binary)",
    "MBps (Decimal)",
    "Read MBps (Decimal)",
    "Write MBps (Decimal)",
    "Transactions per Second",
    "Connections per Second",
    "Average Response Time",
    "Average Read Response Time",
    "Average Write Response Time",
    "Average Transaction Time",
    "Average Connection Time",
    "Maximum Response Time",
    "Maximum Read Response Time",
    "Maximum Write Response Time",
    "Maximum Transaction Time",
    "Maximum Connection Time",
    "Errors",
    "Read Errors",
    "Write Errors",
    "Bytes Read",
    "Bytes Written",
    "Read I/Os",
    "Write I/Os",
    "Connections",
    "Transactions per Connection",
    "Total Raw Read Response Time",
    "Total Raw Write Response Time",
    "Total Raw Transaction Time",
    "Total Raw Connection Time",
    "Maximum Raw Read Response Time",
    "Maximum Raw Write Response Time",
    "Maximum Raw Transaction Time",
    "Maximum Raw Connection Time",
    "Total Raw Run Time",
    "Starting Sector",
    "Maximum Size",
    "Queue Depth",
    "% CPU Utilization",
    "% User Time",
    "% Privileged Time",
    "% DPC Time",
    "% Interrupt Time",
    "Processor Speed",
    "Interrupts per Second",
    "CPU Effectiveness",
];

/// A CSV field: control characters written as text (`crate::units::escape_text`), quoted
/// when it holds a comma, a quote or a line end.
fn field(s: &str) -> String {
    let s = crate::units::escape_text(s);
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Milliseconds from nanoseconds.
fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// The mean response time of reads and writes together, ns (weighted by their I/Os).
fn mean_ns(r: &DirSummary, w: &DirSummary) -> f64 {
    let n = r.ops + w.ops;
    if n == 0 {
        return 0.0;
    }
    (r.latency_ns.mean * r.ops as f64 + w.latency_ns.mean * w.ops as f64) / n as f64
}

/// Who a row is about.
struct Row<'a> {
    kind: &'a str,
    name: &'a str,
    spec: &'a str,
    managers: usize,
    workers: usize,
    disks: usize,
    queue_depth: Option<u32>,
}

fn row(t: &mut String, who: &Row, c: &ClassSummary, cpu: Option<&CpuPercent>) {
    let (r, w) = (&c.read, &c.write);
    let iops = r.iops + w.iops;
    let bps = r.bytes_per_s + w.bytes_per_s;
    let mean = ms(mean_ns(r, w));
    let max = ms(r.latency_ns.max.max(w.latency_ns.max) as f64);
    let mib = |b: f64| b / 1_048_576.0;
    let mb = |b: f64| b / 1e6;
    let mut cells: Vec<String> = vec![
        field(who.kind),
        field(who.name),
        field(who.spec),
        who.managers.to_string(),
        who.workers.to_string(),
        who.disks.to_string(),
        iops.to_string(),
        r.iops.to_string(),
        w.iops.to_string(),
        mib(bps).to_string(),
        mib(r.bytes_per_s).to_string(),
        mib(w.bytes_per_s).to_string(),
        mb(bps).to_string(),
        mb(r.bytes_per_s).to_string(),
        mb(w.bytes_per_s).to_string(),
        iops.to_string(),
        "0".into(),
        mean.to_string(),
        ms(r.latency_ns.mean).to_string(),
        ms(w.latency_ns.mean).to_string(),
        mean.to_string(),
        "0".into(),
        max.to_string(),
        ms(r.latency_ns.max as f64).to_string(),
        ms(w.latency_ns.max as f64).to_string(),
        max.to_string(),
        "0".into(),
        (r.errors + w.errors).to_string(),
        r.errors.to_string(),
        w.errors.to_string(),
        r.bytes.to_string(),
        w.bytes.to_string(),
        r.ops.to_string(),
        w.ops.to_string(),
        "0".into(),
    ];
    // Transactions per connection, the raw counters, starting sector and maximum size.
    cells.extend(std::iter::repeat_n(String::new(), 12));
    cells.push(who.queue_depth.map(|q| q.to_string()).unwrap_or_default());
    match cpu {
        Some(c) => {
            let busy = c.system_user_pct + c.system_system_pct;
            cells.push(busy.to_string());
            cells.push(c.system_user_pct.to_string());
            cells.push(c.system_system_pct.to_string());
            cells.extend(std::iter::repeat_n(String::new(), 4));
            cells.push(if busy > 0.0 {
                (iops / busy).to_string()
            } else {
                String::new()
            });
        }
        None => cells.extend(std::iter::repeat_n(
            String::new(),
            COLUMNS.len() - cells.len(),
        )),
    }
    debug_assert_eq!(cells.len(), COLUMNS.len());
    t.push_str(&cells.join(","));
    t.push('\n');
}

/// `r` as Iometer's results spreadsheet.
pub(crate) fn render(r: &RunResult) -> String {
    let description = r
        .job
        .description
        .clone()
        .unwrap_or_else(|| r.command.join(" "));
    let mut t = String::new();
    let _ = writeln!(t, "'Test Description\n{}", field(&description));
    let _ = writeln!(
        t,
        "'Version\nstorlab {} (Iometer 2008.06.18 results layout; storlab report --format iometer-csv)",
        r.storlab_version
    );
    let _ = writeln!(t, "'Time Stamp\n{}", r.started_at);
    let heading = COLUMNS.map(field).join(",");
    let host = r.host.hostname.as_str();
    let disks = r.targets.len();
    let workers = r.job.workers.len();
    // The ALL and MANAGER rows of a test: every worker and target of this one machine.
    let summary = |t: &mut String, spec: &str, c: &ClassSummary, cpu: &CpuPercent| {
        for (kind, name) in [("ALL", "All"), ("MANAGER", host)] {
            let who = Row {
                kind,
                name,
                spec,
                managers: 1,
                workers,
                disks,
                queue_depth: None,
            };
            row(t, &who, c, Some(cpu));
        }
    };
    match &r.steps {
        Some(steps) => {
            for s in steps {
                let _ = writeln!(t, "'Results\n'{heading}");
                summary(&mut t, &s.label, &s.totals, &s.host_cpu);
            }
        }
        None => {
            let spec = r.classes.keys().cloned().collect::<Vec<_>>().join(" + ");
            let _ = writeln!(t, "'Results\n'{heading}");
            summary(&mut t, &spec, &r.totals, &r.host_cpu);
            for w in &r.workers {
                let job = r.job.workers.iter().find(|j| j.name == w.name);
                let who = Row {
                    kind: "WORKER",
                    name: &w.name,
                    spec: &spec,
                    managers: 1,
                    workers: 1,
                    disks: job.map_or(0, |j| j.targets.len()),
                    queue_depth: job.map(|j| j.queue_depth),
                };
                row(&mut t, &who, &w.totals, None);
            }
        }
    }
    let _ = writeln!(t, "'Time Stamp\n{}\n'End Test", r.ended_at);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_are_quoted_and_means_weighted() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
        let mut r = DirSummary::default();
        let mut w = DirSummary::default();
        r.ops = 3;
        r.latency_ns.mean = 1000.0;
        w.ops = 1;
        w.latency_ns.mean = 5000.0;
        assert_eq!(mean_ns(&r, &w), 2000.0);
        assert_eq!(mean_ns(&DirSummary::default(), &DirSummary::default()), 0.0);
        assert!(COLUMNS.contains(&"MBps (Decimal)"));
    }
}
