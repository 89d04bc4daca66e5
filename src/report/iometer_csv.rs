//! A results file as Iometer's results spreadsheet (`results.csv`), laid out as Iometer 1.1.0
//! writes it (`ManagerList::SaveResults` and its kin in Iometer's public sources), or on
//! request as 2008.06.18 and 2006.07.27 (and 2010.02.07) wrote it, so the spreadsheets and
//! parsers made for Iometer's output read storlab runs:
//!
//! - `'Test Type,Test Description` (Iometer's cycling type: 0 normal, 6 cycling the queue
//!   depth, …), `'Version` (the layout's Iometer version), `'Time Stamp` (local time,
//!   `YYYY-MM-DD HH:MM:SS:mmm`);
//! - per test (a run, or each step of a sequence, as Iometer runs each cycling value as a
//!   test): `'Access specifications` with each active worker's own specification (one line
//!   per access entry: size, % of size, % reads, % random, delay, burst, align, reply) and
//!   `'End access specifications`; `'Results`, the column headings and the rows: `ALL`, the
//!   `MANAGER` (this machine), a `PROCESSOR` row per CPU, and per worker a `WORKER` row then a
//!   `DISK` row per target; `'Time Stamp`;
//! - `'End Test` once at the end.
//!
//! Figures are written as Iometer writes them: floating-point figures with six decimals,
//! counts as integers, an unknown common value as Iometer's -1 (`Transactions per
//! Connection`, a queue depth that differs between workers; 18446744073709551615 for a
//! sector figure). Response times are in milliseconds; raw times in ticks of the `Processor
//! Speed` column, which storlab sets to 10^9 ticks a second (a tick is a nanosecond: the raw
//! sums are the results' exact `sum_ns`). What storlab does not measure is left empty as
//! Iometer leaves it (connections, network packets, a target's own latency when a worker
//! has several targets, a CPU's own interrupt rate).

use crate::job::{Job, Worker};
use crate::results::{RunResult, WorkerResult};
use crate::stats::histogram::Histogram;
use crate::stats::host::CpuPercent;
use crate::stats::host::cpus::PerCpu;
use crate::stats::summary::{ClassSummary, DirSummary};
use std::fmt::Write as _;

/// Which Iometer's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Layout {
    /// Iometer 1.1.0: 80 columns, binary and decimal megabytes, 21 latency bins.
    #[default]
    #[value(name = "1.1.0")]
    V1_1_0,
    /// Iometer 2008.06.18 (and 2010.02.07): 56 columns, `MBps` in binary megabytes.
    #[value(name = "2008.06.18")]
    V2008,
    /// Iometer 2006.07.27: the 2008.06.18 layout, its access lines without a trailing comma.
    #[value(name = "2006.07.27")]
    V2006,
}

impl Layout {
    fn version(self) -> &'static str {
        match self {
            Layout::V1_1_0 => "1.1.0",
            Layout::V2008 => "2008.06.18",
            Layout::V2006 => "2006.07.27",
        }
    }

    /// The column headings.
    pub(crate) fn columns(self) -> Vec<&'static str> {
        let mut c: Vec<&str> = COLUMNS.to_vec();
        if self != Layout::V1_1_0 {
            let at = c.iter().position(|h| *h == "MiBps (Binary)").unwrap_or(9);
            c.splice(at..at + 6, ["MBps", "Read MBps", "Write MBps"]);
        } else {
            c.extend(BINS.iter().map(|b| b.0));
        }
        c
    }
}

/// Iometer 1.1.0's columns before its latency bins.
const COLUMNS: [&str; 59] = [
    "Target Type",
    "Target Name",
    "Access Specification Name",
    "# Managers",
    "# Workers",
    "# Disks",
    "IOps",
    "Read IOps",
    "Write IOps",
    "MiBps (Binary)",
    "Read MiBps (Binary)",
    "Write MiBps (Binary)",
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
    "Packets/Second",
    "Packet Errors",
    "Segments Retransmitted/Second",
];

/// Iometer 1.1.0's latency bins: heading, upper bound (ns; the last has none).
const BINS: [(&str, u64); 21] = [
    ("0 to 50 uS", 50_000),
    ("50 to 100 uS", 100_000),
    ("100 to 200 uS", 200_000),
    ("200 to 500 uS", 500_000),
    ("0.5 to 1 mS", 1_000_000),
    ("1 to 2 mS", 2_000_000),
    ("2 to 5 mS", 5_000_000),
    ("5 to 10 mS", 10_000_000),
    ("10 to 15 mS", 15_000_000),
    ("15 to 20 mS", 20_000_000),
    ("20 to 30 mS", 30_000_000),
    ("30 to 50 mS", 50_000_000),
    ("50 to 100 mS", 100_000_000),
    ("100 to 200 mS", 200_000_000),
    ("200 to 500 mS", 500_000_000),
    ("0.5 to 1 S", 1_000_000_000),
    ("1 to 2 s", 2_000_000_000),
    ("2 to 4.7 s", 4_700_000_000),
    ("4.7 to 5 s", 5_000_000_000),
    ("5 to 10 s", 10_000_000_000),
    (" >= 10 s", u64::MAX),
];

/// Ticks a second of the raw columns (`Processor Speed`): a tick is a nanosecond.
const TICKS_PER_S: f64 = 1e9;
/// Iometer's value for a figure that differs between the workers it sums (`AMBIGUOUS_VALUE`).
const AMBIGUOUS: i64 = -1;

/// One cell.
enum Cell {
    Empty,
    /// A floating-point figure: six decimals.
    F(f64),
    /// A count.
    I(i128),
    /// Text (commas and line ends made spaces, as Iometer does with names; other control
    /// characters written as text, `crate::units::escape_text`).
    S(String),
}

impl Cell {
    fn text(&self) -> String {
        match self {
            Cell::Empty => String::new(),
            Cell::F(v) if v.is_finite() => format!("{v:.6}"),
            Cell::F(_) => String::new(),
            Cell::I(v) => v.to_string(),
            Cell::S(s) => {
                crate::units::escape_text(&s.replace([',', '\n', '\r'], " ")).into_owned()
            }
        }
    }
}

/// One test (a run, or a step of a sequence) and what it measured.
struct Test<'a> {
    /// The job it ran.
    job: Job,
    workers: &'a [WorkerResult],
    totals: &'a ClassSummary,
    cpu: &'a CpuPercent,
    cpus: Option<&'a PerCpu>,
    seconds: f64,
    /// When it ended (RFC 3339).
    ended_at: String,
}

/// A worker of a test: its job and what it did.
struct Active<'a> {
    job: &'a Worker,
    result: Option<&'a WorkerResult>,
    spec: String,
}

/// `r` as Iometer's results spreadsheet in `layout`.
pub(crate) fn render(r: &RunResult, layout: Layout) -> String {
    let mut t = String::new();
    let description = (r.job.description.clone()).unwrap_or_else(|| r.command.join(" "));
    let _ = writeln!(
        t,
        "'Test Type,Test Description\n{},{}",
        test_type(&r.job),
        Cell::S(description).text()
    );
    let _ = writeln!(t, "'Version\n{}", layout.version());
    let _ = writeln!(t, "'Time Stamp\n{}", stamp(&r.started_at));
    let tests: Vec<Test> = match &r.steps {
        Some(steps) => (steps.iter())
            .map(|s| Test {
                job: s.job(&r.job),
                workers: &s.workers,
                totals: &s.totals,
                cpu: &s.host_cpu,
                cpus: s.host_cpus.as_ref(),
                seconds: s.measured_ms as f64 / 1e3,
                ended_at: step_end(r, s.index),
            })
            .collect(),
        None => vec![Test {
            job: r.job.clone(),
            workers: &r.workers,
            totals: &r.totals,
            cpu: &r.host_cpu,
            cpus: r.host_cpus.as_ref(),
            seconds: r.measured_ms as f64 / 1e3,
            ended_at: r.ended_at.clone(),
        }],
    };
    for test in &tests {
        write_test(&mut t, r, test, layout);
    }
    t.push_str("'End Test\n");
    t
}

/// When step `index` ended: the run's start and the time of every phase up to the step's last
/// run (RFC 3339); the run's end when its phases do not say.
fn step_end(r: &RunResult, index: usize) -> String {
    use crate::results::Phase;
    let last = r
        .phases
        .iter()
        .rposition(|p| matches!(p.name, Phase::Step { index: i, .. } if i == index));
    let (Some(last), Ok(start)) = (last, chrono::DateTime::parse_from_rfc3339(&r.started_at))
    else {
        return r.ended_at.clone();
    };
    let secs: f64 = r.phases[..=last].iter().map(|p| p.seconds).sum();
    let end = start + chrono::Duration::milliseconds((secs * 1e3).round() as i64);
    end.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Iometer's test type: 0 normal, 1 cycling targets, 2 cycling workers, 6 cycling the queue
/// depth (what the sequence cycles, when it cycles only that).
fn test_type(job: &Job) -> u32 {
    use crate::job::steps::Param;
    match job.sequence.cycles.as_slice() {
        [c] if c.parameter == Param::Targets => 1,
        [c] if c.parameter == Param::Workers => 2,
        [c] if c.parameter == Param::QueueDepth => 6,
        _ => 0,
    }
}

/// An RFC 3339 time as Iometer writes its time stamps (local time, milliseconds after a colon).
fn stamp(rfc3339: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(t) => (t.with_timezone(&chrono::Local))
            .format("%Y-%m-%d %H:%M:%S:%3f")
            .to_string(),
        Err(_) => rfc3339.to_string(),
    }
}

/// One test: its access specifications, its results, its time stamp.
fn write_test(t: &mut String, r: &RunResult, test: &Test, layout: Layout) {
    // Every worker of the test (a results file before 1.19 has no step's own workers: their
    // specifications are the step's job's, without WORKER rows).
    let active: Vec<Active> = (test.job.workers.iter())
        .map(|w| Active {
            job: w,
            result: test.workers.iter().find(|x| x.name == w.name),
            spec: spec_name(&test.job, w),
        })
        .collect();
    let mut active = active;
    // Two workers with specifications of one name but different entries: named apart.
    for i in 0..active.len() {
        let clash = (0..active.len()).any(|j| {
            j != i
                && active[j].spec == active[i].spec
                && active[j].job.access != active[i].job.access
        });
        if clash {
            active[i].spec = format!("{} ({})", active[i].spec, active[i].job.name);
        }
    }
    t.push_str("'Access specifications\n");
    let mut written: Vec<&str> = Vec::new();
    for a in &active {
        if written.contains(&a.spec.as_str()) {
            continue;
        }
        written.push(&a.spec);
        let _ = writeln!(
            t,
            "'Access specification name,default assignment\n{},0\n'size,% of size,% reads,% random,delay,burst,align,reply",
            Cell::S(a.spec.clone()).text()
        );
        for line in access_lines(a.job) {
            t.push_str(&line);
            t.push_str(if layout == Layout::V2006 { "\n" } else { ",\n" });
        }
    }
    t.push_str("'End access specifications\n'Results\n'");
    t.push_str(&layout.columns().join(","));
    t.push('\n');
    let common_spec = match active.first() {
        Some(first) if active.iter().all(|a| a.spec == first.spec) => first.spec.clone(),
        _ => String::new(),
    };
    let disks: usize = active.iter().map(|a| a.job.targets.len()).sum();
    let common = |f: &dyn Fn(&Worker) -> i128, ambiguous: i128| -> Cell {
        match active.first() {
            Some(a) if active.iter().all(|b| f(b.job) == f(a.job)) => Cell::I(f(a.job)),
            Some(_) => Cell::I(ambiguous),
            None => Cell::I(ambiguous),
        }
    };
    let sectors_ambiguous = i128::from(u64::MAX);
    let placement = [
        common(&|w| start_sector(w), sectors_ambiguous),
        common(&|w| max_size(&test.job, w), sectors_ambiguous),
        common(&|w| i128::from(w.queue_depth), i128::from(AMBIGUOUS)),
    ];
    let figures = |s: &ClassSummary| Figures::of(s, test.seconds);
    let summary = figures(test.totals);
    for (kind, name, managers) in [
        ("ALL", "All".to_string(), Cell::I(1)),
        ("MANAGER", r.host.hostname.clone(), Cell::Empty),
    ] {
        let mut cells = vec![
            Cell::S(kind.into()),
            Cell::S(name),
            Cell::S(common_spec.clone()),
            managers,
            Cell::I(active.len() as i128),
            Cell::I(disks as i128),
        ];
        cells.extend(summary.cells(layout, kind == "MANAGER"));
        cells.extend(placement.iter().map(|c| match c {
            Cell::I(v) => Cell::I(*v),
            _ => Cell::Empty,
        }));
        cells.extend(cpu_cells(
            test.cpu,
            test.cpus,
            summary.iops,
            kind == "MANAGER",
        ));
        cells.extend([Cell::Empty, Cell::Empty, Cell::Empty]);
        cells.extend(summary.bins(layout));
        row(t, cells);
        if kind == "MANAGER" {
            processor_rows(t, test.cpus, layout);
        }
    }
    for a in &active {
        let Some(result) = a.result else { continue };
        let f = figures(&result.totals);
        let mut cells = vec![
            Cell::S("WORKER".into()),
            Cell::S(a.job.name.clone()),
            Cell::S(a.spec.clone()),
            Cell::Empty,
            Cell::Empty,
            Cell::I(a.job.targets.len() as i128),
        ];
        cells.extend(f.cells(layout, true));
        cells.extend(worker_placement(&test.job, a.job));
        cells.extend(std::iter::repeat_with(|| Cell::Empty).take(5));
        cells.extend([Cell::F(TICKS_PER_S), Cell::Empty, Cell::Empty]);
        cells.extend([Cell::Empty, Cell::Empty, Cell::Empty]);
        cells.extend(f.bins(layout));
        row(t, cells);
        disk_rows(t, r, test, a, &f, layout);
    }
    let _ = writeln!(t, "'Time Stamp\n{}", stamp(&test.ended_at));
}

/// A worker's specification's name: its classes, in the order of its entries.
fn spec_name(job: &Job, w: &Worker) -> String {
    let mut names: Vec<&str> = Vec::new();
    for a in &w.access {
        let n = job.classes.get(a.class).map_or("?", String::as_str);
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names.join(" + ")
}

/// A worker's access entries as Iometer's lines: one per entry and block size, `% of size`
/// whole percentages adding up to 100.
fn access_lines(w: &Worker) -> Vec<String> {
    let total: f64 = w
        .access
        .iter()
        .map(|a| f64::from(a.weight))
        .sum::<f64>()
        .max(1.0);
    let mut parts: Vec<(u64, f64, &crate::job::Access)> = Vec::new();
    for a in &w.access {
        let share = f64::from(a.weight) / total * 100.0;
        if a.block_sizes.is_empty() {
            parts.push((a.block_size_bytes, share, a));
        } else {
            let sizes: f64 = a
                .block_sizes
                .iter()
                .map(|s| f64::from(s.1))
                .sum::<f64>()
                .max(1.0);
            for &(size, weight) in &a.block_sizes {
                parts.push((size, share * f64::from(weight) / sizes, a));
            }
        }
    }
    // Largest remainder: whole percentages that add up to 100.
    let mut whole: Vec<u64> = parts.iter().map(|p| p.1.floor() as u64).collect();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&i, &j| (parts[j].1.fract()).total_cmp(&parts[i].1.fract()));
    let short = 100u64.saturating_sub(whole.iter().sum());
    for &i in order.iter().cycle().take(short as usize) {
        whole[i] += 1;
    }
    let delay_ms = w.think_ns.map_or(0, |ns| ns / 1_000_000);
    (parts.iter().zip(whole))
        .map(|(&(size, _, a), of_size)| {
            format!(
                "{size},{of_size},{},{},{delay_ms},1,{},0",
                a.read_pct.round() as i64,
                a.random_pct.round() as i64,
                a.align_bytes
            )
        })
        .collect()
}

/// The first sector of a worker's span (its first entry's offset, 512-byte sectors).
fn start_sector(w: &Worker) -> i128 {
    i128::from(w.access.first().map_or(0, |a| a.offset_bytes / 512))
}

/// The sectors a worker's span covers: its first entry's length, 0 for the whole target (as
/// Iometer's `Maximum Disk Size` 0 means the whole disk).
fn max_size(_job: &Job, w: &Worker) -> i128 {
    i128::from(
        w.access
            .first()
            .and_then(|a| a.length_bytes)
            .map_or(0, |l| l / 512),
    )
}

/// A worker's starting sector, maximum size and queue depth.
fn worker_placement(job: &Job, w: &Worker) -> [Cell; 3] {
    [
        Cell::I(start_sector(w)),
        Cell::I(max_size(job, w)),
        Cell::I(i128::from(w.queue_depth)),
    ]
}

/// The CPU columns of the ALL and MANAGER rows: utilisation, user, privileged, DPC and
/// interrupt time (% of all CPUs), processor speed, interrupts a second, CPU effectiveness.
/// (The processor speed only on the MANAGER row, as Iometer writes it.)
fn cpu_cells(c: &CpuPercent, cpus: Option<&PerCpu>, iops: f64, speed: bool) -> Vec<Cell> {
    let busy = c.machine_busy_pct();
    let mean = |f: fn(&crate::stats::host::cpus::CpuShare) -> f64| -> Cell {
        match cpus.filter(|p| !p.cpus.is_empty()) {
            Some(p) => Cell::F(p.cpus.iter().map(f).sum::<f64>() / p.cpus.len() as f64),
            None => Cell::Empty,
        }
    };
    vec![
        Cell::F(busy),
        Cell::F(c.system_user_pct),
        Cell::F(c.system_system_pct),
        mean(|s| s.softirq_pct),
        mean(|s| s.irq_pct),
        if speed {
            Cell::F(TICKS_PER_S)
        } else {
            Cell::Empty
        },
        cpus.map_or(Cell::Empty, |p| Cell::F(p.interrupts_per_s)),
        if busy > 0.0 {
            Cell::F(iops / busy)
        } else {
            Cell::F(0.0)
        },
    ]
}

/// A PROCESSOR row per CPU: its utilisation, user, privileged, DPC and interrupt time, the
/// processor speed; its own interrupt rate is not measured.
fn processor_rows(t: &mut String, cpus: Option<&PerCpu>, layout: Layout) {
    let before_cpu = layout
        .columns()
        .iter()
        .position(|c| *c == "% CPU Utilization");
    for c in cpus.iter().flat_map(|p| &p.cpus) {
        let mut cells = vec![
            Cell::S("PROCESSOR".into()),
            Cell::S(format!("CPU {}", c.cpu)),
        ];
        cells.extend(std::iter::repeat_with(|| Cell::Empty).take(before_cpu.unwrap_or(48) - 2));
        cells.extend([
            Cell::F(c.busy_pct),
            Cell::F(c.user_pct),
            Cell::F(c.system_pct),
            Cell::F(c.softirq_pct),
            Cell::F(c.irq_pct),
            Cell::F(TICKS_PER_S),
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
        ]);
        row(t, cells);
    }
}

/// A DISK row per target of worker `a`: the worker's own figures when it has one target; the
/// results' counts of a target only this worker used, in a run without steps; else the
/// figures are not known per target.
fn disk_rows(t: &mut String, r: &RunResult, test: &Test, a: &Active, f: &Figures, layout: Layout) {
    for &ti in &a.job.targets {
        let Some(target) = test.job.targets.get(ti) else {
            continue;
        };
        let mut cells = vec![
            Cell::S("DISK".into()),
            Cell::S(target.path.display().to_string()),
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
        ];
        let alone = test
            .job
            .workers
            .iter()
            .filter(|w| w.targets.contains(&ti))
            .count()
            == 1;
        let counted = (r.steps.is_none() && alone)
            .then(|| r.targets.get(ti))
            .flatten();
        let width = layout.columns().len();
        if a.job.targets.len() == 1 {
            cells.extend(f.cells(layout, true));
        } else if let Some(c) = counted {
            cells.extend(Figures::counts(c, test.seconds).cells(layout, false));
        } else {
            cells.extend(std::iter::repeat_with(|| Cell::Empty).take(width - 6));
            row(t, cells);
            continue;
        }
        cells.extend(worker_placement(&test.job, a.job));
        cells.extend(std::iter::repeat_with(|| Cell::Empty).take(5));
        cells.extend([Cell::F(TICKS_PER_S), Cell::Empty, Cell::Empty]);
        cells.extend([Cell::Empty, Cell::Empty, Cell::Empty]);
        if a.job.targets.len() == 1 {
            cells.extend(f.bins(layout));
        } else {
            cells.extend(std::iter::repeat_with(|| Cell::Empty).take(width.saturating_sub(59)));
        }
        row(t, cells);
    }
}

fn row(t: &mut String, cells: Vec<Cell>) {
    let text: Vec<String> = cells.iter().map(Cell::text).collect();
    t.push_str(&text.join(","));
    t.push('\n');
}

/// What one row says of reads and writes (flushes are not I/Os in Iometer).
struct Figures {
    read: Dir,
    write: Dir,
    iops: f64,
    seconds: f64,
    /// Reads' and writes' histograms together (the latency bins), when known.
    histogram: Option<Histogram>,
    /// Whether latencies are known (not for a target's counts alone).
    latency: bool,
}

/// One direction's figures.
#[derive(Default)]
struct Dir {
    ops: u64,
    bytes: u64,
    errors: u64,
    iops: f64,
    bytes_per_s: f64,
    mean_ns: f64,
    max_ns: u64,
    sum_ns: u128,
}

impl Dir {
    fn of(d: &DirSummary) -> Dir {
        let sum_ns = (d.histogram.as_ref())
            .and_then(|h| h.sum_ns.parse::<u128>().ok())
            .unwrap_or((d.latency_ns.mean * d.ops as f64).round() as u128);
        Dir {
            ops: d.ops,
            bytes: d.bytes,
            errors: d.errors,
            iops: d.iops,
            bytes_per_s: d.bytes_per_s,
            mean_ns: d.latency_ns.mean,
            max_ns: d.latency_ns.max,
            sum_ns,
        }
    }
}

impl Figures {
    fn of(s: &ClassSummary, seconds: f64) -> Figures {
        let (read, write) = (Dir::of(&s.read), Dir::of(&s.write));
        let mut all = Histogram::new();
        let mut any = false;
        for d in [&s.read, &s.write] {
            if let Some(h) = d.histogram.as_ref().and_then(|h| Histogram::decode(h).ok()) {
                all.add(&h);
                any = true;
            }
        }
        Figures {
            iops: read.iops + write.iops,
            read,
            write,
            seconds,
            histogram: any.then_some(all),
            latency: true,
        }
    }

    /// A target's counts over `seconds`: no latencies.
    fn counts(t: &crate::results::TargetResult, seconds: f64) -> Figures {
        let per_s = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let dir = |ops: u64, bytes: u64, errors: u64| Dir {
            ops,
            bytes,
            errors,
            iops: per_s(ops),
            bytes_per_s: per_s(bytes),
            ..Dir::default()
        };
        let (read, write) = (
            dir(t.ops.read, t.bytes.read, t.errors.read),
            dir(t.ops.write, t.bytes.write, t.errors.write),
        );
        Figures {
            iops: read.iops + write.iops,
            read,
            write,
            seconds,
            histogram: None,
            latency: false,
        }
    }

    /// From `IOps` to the raw run time (the raw columns only with `raw`: the ALL row leaves
    /// them empty, as Iometer does).
    fn cells(&self, layout: Layout, raw: bool) -> Vec<Cell> {
        let (r, w) = (&self.read, &self.write);
        let ms = |ns: f64| ns / 1e6;
        let n = r.ops + w.ops;
        let mean = if n > 0 {
            (r.mean_ns * r.ops as f64 + w.mean_ns * w.ops as f64) / n as f64
        } else {
            0.0
        };
        let max = r.max_ns.max(w.max_ns) as f64;
        let bytes = r.bytes_per_s + w.bytes_per_s;
        let mut c = vec![Cell::F(self.iops), Cell::F(r.iops), Cell::F(w.iops)];
        let mib = |b: f64| Cell::F(b / 1_048_576.0);
        c.extend([mib(bytes), mib(r.bytes_per_s), mib(w.bytes_per_s)]);
        if layout == Layout::V1_1_0 {
            let mb = |b: f64| Cell::F(b / 1e6);
            c.extend([mb(bytes), mb(r.bytes_per_s), mb(w.bytes_per_s)]);
        }
        // A disk worker's transaction is one I/O: its rate and times are the I/Os'.
        c.extend([Cell::F(self.iops), Cell::F(0.0)]);
        let lat = |v: f64| {
            if self.latency {
                Cell::F(v)
            } else {
                Cell::Empty
            }
        };
        c.extend([
            lat(ms(mean)),
            lat(ms(r.mean_ns)),
            lat(ms(w.mean_ns)),
            lat(ms(mean)),
            Cell::F(0.0),
            lat(ms(max)),
            lat(ms(r.max_ns as f64)),
            lat(ms(w.max_ns as f64)),
            lat(ms(max)),
            Cell::F(0.0),
        ]);
        let i = |v: u64| Cell::I(i128::from(v));
        c.extend([
            i(r.errors + w.errors),
            i(r.errors),
            i(w.errors),
            i(r.bytes),
            i(w.bytes),
            i(r.ops),
            i(w.ops),
            i(0),
            Cell::I(i128::from(AMBIGUOUS)),
        ]);
        if raw && self.latency {
            let sum = |v: u128| Cell::I(i128::try_from(v).unwrap_or(i128::MAX));
            c.extend([
                sum(r.sum_ns),
                sum(w.sum_ns),
                sum(r.sum_ns + w.sum_ns),
                i(0),
                i(r.max_ns),
                i(w.max_ns),
                i(r.max_ns.max(w.max_ns)),
                i(0),
                i((self.seconds * TICKS_PER_S).round() as u64),
            ]);
        } else {
            c.extend(std::iter::repeat_with(|| Cell::Empty).take(9));
        }
        c
    }

    /// The latency bins (1.1.0): reads and writes counted by the upper bound of storlab's
    /// bucket they are in.
    fn bins(&self, layout: Layout) -> Vec<Cell> {
        if layout != Layout::V1_1_0 {
            return Vec::new();
        }
        let mut counts = [0u64; 21];
        if let Some(h) = &self.histogram {
            for (ns, n) in h.buckets() {
                let bin = BINS.iter().position(|b| ns < b.1).unwrap_or(20);
                counts[bin] += n;
            }
        } else if !self.latency {
            return std::iter::repeat_with(|| Cell::Empty).take(21).collect();
        }
        counts.iter().map(|&n| Cell::I(i128::from(n))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> RunResult {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(format!("{name}.json"));
        crate::results::file::load(&path).unwrap()
    }

    #[test]
    fn every_row_has_its_layouts_columns_and_numbers_their_decimals() {
        for layout in [Layout::V1_1_0, Layout::V2008, Layout::V2006] {
            let width = layout.columns().len();
            assert_eq!(width, if layout == Layout::V1_1_0 { 80 } else { 56 });
            for name in ["plain", "exchange", "steps"] {
                let text = render(&fixture(name), layout);
                let mut lines = text.lines();
                assert_eq!(lines.next(), Some("'Test Type,Test Description"));
                for line in text.lines() {
                    let kind = line.split(',').next().unwrap();
                    let n = line.split(',').count();
                    match kind {
                        "ALL" | "MANAGER" | "WORKER" | "DISK" => {
                            assert_eq!(n, width, "{name} {layout:?}: {line}")
                        }
                        "PROCESSOR" => assert_eq!(n, 59 - (80 - width).min(3), "{line}"),
                        _ => {}
                    }
                    if kind == "ALL" {
                        let iops = line.split(',').nth(6).unwrap();
                        assert!(
                            iops.split('.').nth(1).is_some_and(|d| d.len() == 6),
                            "{line}"
                        );
                    }
                }
                assert!(text.ends_with("'End Test\n"));
            }
        }
    }

    #[test]
    fn percentages_of_size_add_up_and_access_lines_are_whole_numbers() {
        let r = fixture("exchange");
        for w in &r.job.workers {
            let lines = access_lines(w);
            let sum: u64 = lines
                .iter()
                .map(|l| l.split(',').nth(1).unwrap().parse::<u64>().unwrap())
                .sum();
            assert_eq!(sum, 100, "{lines:?}");
        }
        assert_eq!(Cell::S("a,b\nc".into()).text(), "a b c");
        assert_eq!(Cell::F(30006.0).text(), "30006.000000");
    }
}
