//! CSV and Markdown export of a results file's tables: the summary (per class and direction),
//! the steps, and the time series, for spreadsheets and wikis.
//!
//! Units are in the column names: `_us` microseconds, `mb_per_s` 10^6 bytes per second, `_s`
//! seconds, `_ms` milliseconds, `_pct` percent. Numbers carry no thousands separators; floats
//! have at most 3 decimals (trailing zeros trimmed). An absent or unknown value is an empty cell
//! (a latency of a direction without I/O, a percentile a run rebuilt from its time series
//! does not know), never a 0.
//!
//! A table without rows (a run without steps, say) is, in CSV, the header row alone; in
//! Markdown, a one-line note in place of the table.

use super::tables::{known_mean, known_ns, summary_mean};
use crate::results::steps::StepResult;
use crate::results::{ClassResult, RunResult};
use crate::stats::Dir;
use crate::stats::summary::ClassSummary;
use crate::stats::timeseries::IntervalRecord;
use std::collections::{BTreeMap, BTreeSet};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Comma-separated values (RFC 4180 quoting).
    Csv,
    /// A GitHub-flavoured Markdown table.
    Markdown,
}

/// Which table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Table {
    /// Per class and direction.
    Summary,
    /// One row per step.
    Steps,
    /// One row per interval and class.
    Timeseries,
    /// A file-system workload: one row per operation of each workload of each run.
    Fs,
}

/// The table of `r` in `format`.
///
/// A run without steps gives, for [`Table::Steps`], a header-only CSV table or a one-line
/// Markdown note (see the module documentation).
pub(crate) fn render(r: &RunResult, format: Format, table: Table) -> String {
    let t = match table {
        Table::Summary => summary_table(&r.classes, &r.totals),
        Table::Steps => steps_table(r.steps.as_deref().unwrap_or(&[])),
        Table::Timeseries => {
            timeseries_table(&r.timeseries.records(), r.steps.as_deref().unwrap_or(&[]))
        }
        Table::Fs => fs_table(r),
    };
    match format {
        Format::Csv => t.csv(),
        Format::Markdown => t.markdown(match table {
            Table::Summary => "No I/O: the summary has no rows.",
            Table::Steps => "No steps: this run is not a step sequence.",
            Table::Timeseries => "No time series: the run recorded no intervals.",
            Table::Fs => "No file-system operations: this run is not a file-system workload.",
        }),
    }
}

/// A column: its name and whether it holds numbers (right-aligned in Markdown).
struct Col {
    name: String,
    numeric: bool,
}

/// A table of formatted cells.
#[derive(Default)]
struct Tab {
    cols: Vec<Col>,
    rows: Vec<Vec<String>>,
}

impl Tab {
    fn text(&mut self, name: &str) {
        self.cols.push(Col {
            name: name.into(),
            numeric: false,
        });
    }

    fn num(&mut self, name: &str) {
        self.cols.push(Col {
            name: name.into(),
            numeric: true,
        });
    }

    fn csv(&self) -> String {
        let mut out = String::new();
        let mut line = |cells: &mut dyn Iterator<Item = &str>| {
            let v: Vec<String> = cells.map(csv_field).collect();
            out.push_str(&v.join(","));
            out.push('\n');
        };
        line(&mut self.cols.iter().map(|c| c.name.as_str()));
        for r in &self.rows {
            line(&mut r.iter().map(String::as_str));
        }
        out
    }

    fn markdown(&self, empty_note: &str) -> String {
        if self.rows.is_empty() {
            return format!("{empty_note}\n");
        }
        let mut out = String::new();
        let mut line = |cells: Vec<String>| {
            out.push_str("| ");
            out.push_str(&cells.join(" | "));
            out.push_str(" |\n");
        };
        line(self.cols.iter().map(|c| md_cell(&c.name)).collect());
        line(
            self.cols
                .iter()
                .map(|c| if c.numeric { "---:" } else { "---" }.to_string())
                .collect(),
        );
        for r in &self.rows {
            line(r.iter().map(|c| md_cell(c)).collect());
        }
        out
    }
}

/// One RFC 4180 field: control characters written as text (`crate::units::escape_text`),
/// quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    let s = crate::units::escape_text(s);
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One Markdown cell: `|` escaped, line breaks as spaces, other control characters written
/// as text (`crate::units::escape_text`).
fn md_cell(s: &str) -> String {
    let s = s
        .replace('|', "\\|")
        .replace("\r\n", " ")
        .replace(['\n', '\r'], " ");
    crate::units::escape_text(&s).into_owned()
}

/// A float with at most 3 decimals, trailing zeros trimmed; empty when not finite.
fn f(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    let s = format!("{x:.3}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" { "0".into() } else { s }
}

/// An optional float.
fn of(x: Option<f64>) -> String {
    x.map(f).unwrap_or_default()
}

/// Nanoseconds as microseconds; an unknown value (`None`: see [`known_ns`]) is an empty cell.
fn us(ns: Option<f64>) -> String {
    of(ns.map(|ns| ns / 1e3))
}

/// Bytes per second as MB/s (10^6 bytes/s).
fn mb(bytes_per_s: f64) -> String {
    f(bytes_per_s / 1e6)
}

/// Per class and direction, then every class together as `(all)`.
fn summary_table(classes: &BTreeMap<String, ClassResult>, totals: &ClassSummary) -> Tab {
    let mut t = Tab::default();
    t.text("class");
    t.text("op");
    for c in [
        "ops",
        "bytes",
        "errors",
        "iops",
        "mb_per_s",
        "mean_us",
        "p50_us",
        "p90_us",
        "p95_us",
        "p99_us",
        "p99_9_us",
        "p99_99_us",
        "max_us",
    ] {
        t.num(c);
    }
    t.num("service_mean_us");
    t.num("service_p99_us");
    let mut add = |class: &str, s: &ClassSummary| {
        for (op, d) in s.dirs() {
            if d.ops == 0 && d.errors == 0 {
                continue;
            }
            let l = &d.latency_ns;
            let mut row = vec![
                class.to_string(),
                op.to_string(),
                d.ops.to_string(),
                d.bytes.to_string(),
                d.errors.to_string(),
                f(d.iops),
                mb(d.bytes_per_s),
                us(summary_mean(l)),
            ];
            row.extend(
                [l.p50, l.p90, l.p95, l.p99, l.p99_9, l.p99_99, l.max].map(|v| us(known_ns(v))),
            );
            match &d.service_latency_ns {
                Some(sv) => {
                    row.push(us(summary_mean(sv)));
                    row.push(us(known_ns(sv.p99)));
                }
                None => row.extend([String::new(), String::new()]),
            }
            t.rows.push(row);
        }
    };
    for (name, c) in classes {
        add(name, &c.summary());
    }
    add("(all)", totals);
    t
}

/// A file-system workload's operations: per run, each operation of each workload, each
/// workload's together (`(all)` operation) and the run's (`(all)`, `(all)`).
fn fs_table(r: &RunResult) -> Tab {
    let mut t = Tab::default();
    t.text("run");
    t.text("workload");
    t.text("operation");
    for c in [
        "ops",
        "bytes",
        "errors",
        "unavailable",
        "ops_per_s",
        "mb_per_s",
        "mean_us",
        "p50_us",
        "p90_us",
        "p95_us",
        "p99_us",
        "p99_9_us",
        "p99_99_us",
        "max_us",
        "service_mean_us",
        "service_p99_us",
    ] {
        t.num(c);
    }
    let Some(fs) = &r.fs else { return t };
    for run in &fs.runs {
        let mut add = |w: &str, op: &str, d: &crate::stats::summary::DirSummary, u: Option<u64>| {
            let l = &d.latency_ns;
            let mut row = vec![
                run.name.clone(),
                w.to_string(),
                op.to_string(),
                d.ops.to_string(),
                d.bytes.to_string(),
                d.errors.to_string(),
                u.map(|u| u.to_string()).unwrap_or_default(),
                f(d.iops),
                mb(d.bytes_per_s),
                us(summary_mean(l)),
            ];
            row.extend(
                [l.p50, l.p90, l.p95, l.p99, l.p99_9, l.p99_99, l.max].map(|v| us(known_ns(v))),
            );
            match &d.service_latency_ns {
                Some(sv) => {
                    row.push(us(summary_mean(sv)));
                    row.push(us(known_ns(sv.p99)));
                }
                None => row.extend([String::new(), String::new()]),
            }
            t.rows.push(row);
        };
        for o in &run.operations {
            add(&o.workload, &o.operation, &o.figures, Some(o.unavailable));
        }
        if run.workloads.len() > 1 {
            for w in &run.workloads {
                add(&w.workload, "(all)", &w.figures, None);
            }
        }
        add("(all)", "(all)", &run.total, None);
    }
    t
}

/// Mean and p99 latency of reads and writes together, ns, when known.
fn step_latency(s: &ClassSummary) -> (Option<f64>, Option<f64>) {
    let l = s.reads_and_writes();
    (summary_mean(&l), known_ns(l.p99))
}

/// The steps table's fixed columns (parameters go between `kind` and `curve_level_pct`).
const STEP_COLUMNS: [&str; 19] = [
    "index",
    "label",
    "kind",
    "curve_level_pct",
    "target_iops",
    "measured_s",
    "iops",
    "mb_per_s",
    "mean_us",
    "p99_us",
    "cpu_busy_pct",
    "ios_per_cpu_pct",
    "runs",
    "iops_mean",
    "iops_stddev",
    "iops_ci95_low",
    "iops_ci95_high",
    "iops_cv_pct",
    "steady_at_round",
];

/// One row per step; every parameter of any step is a column (sorted by name).
fn steps_table(steps: &[StepResult]) -> Tab {
    let params: BTreeSet<&str> = steps
        .iter()
        .flat_map(|s| s.parameters.keys().map(String::as_str))
        .collect();
    let mut t = Tab::default();
    t.num("index");
    t.text("label");
    t.text("kind");
    // A parameter named like a fixed column (`curve_level_pct`) is prefixed with `param_`.
    for p in &params {
        if STEP_COLUMNS.contains(p) {
            t.num(&format!("param_{p}"));
        } else {
            t.num(p);
        }
    }
    for c in STEP_COLUMNS.iter().skip(3) {
        t.num(c);
    }
    for s in steps {
        let mut row = vec![s.index.to_string(), s.label.clone(), s.kind.to_string()];
        row.extend(params.iter().map(|p| of(s.parameters.get(*p).copied())));
        let (mean, p99) = step_latency(&s.totals);
        row.extend([
            of(s.curve_level_pct),
            of(s.target_iops),
            f(s.measured_ms as f64 / 1e3),
            f(s.totals.iops()),
            mb(s.totals.bytes_per_s()),
            us(mean),
            us(p99),
            f(s.cpu_busy_pct),
            f(s.ios_per_cpu_pct),
        ]);
        match &s.repetitions {
            Some(r) => row.extend([
                r.runs.len().to_string(),
                f(r.iops.mean),
                f(r.iops.stddev),
                f(r.iops.ci95_low),
                f(r.iops.ci95_high),
                f(r.iops.cv_pct),
            ]),
            None => row.extend(std::iter::repeat_n(String::new(), 6)),
        }
        row.push(
            s.steady
                .as_ref()
                .and_then(|st| st.steady_at_round)
                .map(|n| n.to_string())
                .unwrap_or_default(),
        );
        t.rows.push(row);
    }
    t
}

/// The time-series table in long form, stable from host to host: one row per interval, class
/// and direction with I/O (then `(all)`), and one per interval and device (its `device` and
/// `util_pct`), each with the interval's CPU use. `label` is the step's (its cycled
/// parameters), `run` which run of it (`run`, `rep 2`, `curve 50%`); `t_end_ms` is from the
/// start of the first run (the runs of a sequence one after another, as the live page draws
/// them), `run_t_end_ms` from the start of the interval's own run.
fn timeseries_table(records: &[IntervalRecord], steps: &[StepResult]) -> Tab {
    let mut t = Tab::default();
    t.num("index");
    t.num("step");
    t.text("label");
    t.text("run");
    t.text("phase");
    t.num("t_end_ms");
    t.num("run_t_end_ms");
    t.num("interval_ms");
    t.text("class");
    t.text("op");
    t.text("device");
    for c in [
        "ops",
        "iops",
        "mb_per_s",
        "mean_us",
        "p99_us",
        "max_us",
        "process_user_pct",
        "process_system_pct",
        "system_busy_pct",
        "util_pct",
    ] {
        t.num(c);
    }
    let (mut offset, mut last_end) = (0u64, 0u64);
    for (n, rec) in records.iter().enumerate() {
        if n > 0 && rec.index == 0 {
            offset += last_end;
        }
        last_end = rec.t_end_ms;
        let label = (rec.step)
            .and_then(|i| steps.iter().find(|s| s.index == i))
            .map(|s| s.label.clone())
            .unwrap_or_default();
        let head = |class: &str, op: &str, device: &str| {
            vec![
                rec.index.to_string(),
                rec.step.map(|s| s.to_string()).unwrap_or_default(),
                label.clone(),
                rec.label.map(|l| l.to_string()).unwrap_or_default(),
                rec.phase.to_string(),
                (offset + rec.t_end_ms).to_string(),
                rec.t_end_ms.to_string(),
                rec.interval_ms.to_string(),
                class.to_string(),
                op.to_string(),
                device.to_string(),
            ]
        };
        let cpu = [
            f(rec.cpu.process_user_pct),
            f(rec.cpu.process_system_pct),
            f(rec.cpu.machine_busy_pct()),
        ];
        let classes = rec
            .classes
            .iter()
            .map(|(n, c)| (n.as_str(), c))
            .chain([("(all)", &rec.total)]);
        for (name, c) in classes {
            for op in Dir::ALL {
                let d = c.dir(op);
                if d.ops == 0 {
                    continue;
                }
                let mut row = head(name, &op.to_string(), "");
                row.extend([
                    d.ops.to_string(),
                    f(d.iops),
                    mb(d.bytes_per_s),
                    us(known_mean(d.latency_mean_ns, d.latency_max_ns)),
                    us(known_ns(d.latency_p99_ns)),
                    us(known_ns(d.latency_max_ns)),
                ]);
                row.extend(cpu.iter().cloned());
                row.push(String::new());
                t.rows.push(row);
            }
        }
        for (device, d) in &rec.devices {
            let mut row = head("", "", device);
            row.extend(std::iter::repeat_n(String::new(), 6));
            row.extend(cpu.iter().cloned());
            row.push(f(d.util_pct));
            t.rows.push(row);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::timeseries::{IntervalClass, IntervalDir};
    use serde_json::json;

    fn lat() -> serde_json::Value {
        json!({"min": 1000, "mean": 2500.5, "max": 90000, "stddev": 10.0, "p50": 2000,
               "p90": 3000, "p95": 4000, "p99": 8000, "p99_9": 9000, "p99_99": 10000})
    }

    fn dir(ops: u64) -> serde_json::Value {
        json!({"ops": ops, "bytes": ops * 4096, "errors": 0, "iops": ops as f64 / 2.0,
               "bytes_per_s": ops as f64 * 2048.0, "latency_ns": lat(),
               "service_latency_ns": null})
    }

    /// Classes `a,"b"` (reads and writes) and `log|x` (writes only), and their totals.
    fn classes() -> (BTreeMap<String, ClassResult>, ClassSummary) {
        let classes: BTreeMap<String, ClassResult> = serde_json::from_value(json!({
            "a,\"b\"": {"read": dir(100), "write": dir(50), "flush": dir(0),
                        "write_durability": "none"},
            "log|x": {"read": dir(0), "write": dir(10), "flush": dir(0),
                      "write_durability": "none"},
        }))
        .unwrap();
        let totals: ClassSummary =
            serde_json::from_value(json!({"read": dir(100), "write": dir(60), "flush": dir(0)}))
                .unwrap();
        (classes, totals)
    }

    fn step(index: usize, params: serde_json::Value) -> StepResult {
        StepResult {
            index,
            label: format!("step {index}"),
            kind: crate::results::steps::StepKind::Step,
            parameters: serde_json::from_value(params).unwrap(),
            measured_ms: 2500,
            totals: serde_json::from_value(json!({"read": dir(10), "write": dir(0),
                                                  "flush": dir(0)}))
            .unwrap(),
            ..Default::default()
        }
    }

    #[test]
    fn summary_csv_quotes_and_counts() {
        let (c, t) = classes();
        let out = summary_table(&c, &t).csv();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "class,op,ops,bytes,errors,iops,mb_per_s,mean_us,p50_us,p90_us,p95_us,p99_us,\
             p99_9_us,p99_99_us,max_us,service_mean_us,service_p99_us"
        );
        // 2 + 1 class rows, 2 (all) rows.
        assert_eq!(lines.len(), 1 + 5);
        assert!(out.ends_with('\n') && !out.contains('\r'));
        assert_eq!(
            lines[1],
            "\"a,\"\"b\"\"\",read,100,409600,0,50,0.205,2.501,2,3,4,8,9,10,90,,"
        );
        assert!(lines[2].starts_with("\"a,\"\"b\"\"\",write,50,"));
        assert!(lines[3].starts_with("log|x,write,10,"));
        assert!(lines[4].starts_with("(all),read,100,"));
        assert!(lines[5].starts_with("(all),write,60,"));
    }

    #[test]
    fn summary_markdown_escapes_and_aligns() {
        let (c, t) = classes();
        let out = summary_table(&c, &t).markdown("none");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2 + 5);
        assert!(lines[0].starts_with("| class | op | ops | bytes |"));
        assert!(lines[1].starts_with("| --- | --- | ---: | ---: |"));
        assert_eq!(lines[1].matches("---:").count(), 15);
        assert!(lines[4].starts_with("| log\\|x | write | 10 |"));
        // Every row has as many unescaped pipes as the header.
        let pipes = |l: &str| l.replace("\\|", "").matches('|').count();
        assert!(lines.iter().all(|l| pipes(l) == pipes(lines[0])));
    }

    #[test]
    fn steps_columns_union_and_empty() {
        let steps = vec![
            step(0, json!({"block_size": 4096.0, "read": 100.0})),
            step(1, json!({"block_size": 65536.0, "queue_depth": 8.0})),
        ];
        let clash = steps_table(&[step(0, json!({"curve_level_pct": 100.0}))]).csv();
        assert!(clash.starts_with("index,label,kind,param_curve_level_pct,curve_level_pct,"));
        let out = steps_table(&steps).csv();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            "index,label,kind,block_size,queue_depth,read,curve_level_pct,target_iops,\
             measured_s,iops,mb_per_s,mean_us,p99_us,cpu_busy_pct,ios_per_cpu_pct,runs,\
             iops_mean,iops_stddev,iops_ci95_low,iops_ci95_high,iops_cv_pct,steady_at_round"
        );
        assert_eq!(
            lines[1],
            "0,step 0,step,4096,,100,,,2.5,5,0.02,2.501,8,0,0,,,,,,,"
        );
        assert!(lines[2].starts_with("1,step 1,step,65536,8,,"));
        // No steps: header only in CSV, a note in Markdown.
        assert_eq!(steps_table(&[]).csv().lines().count(), 1);
        assert_eq!(steps_table(&[]).markdown("No steps.").trim(), "No steps.");
    }

    #[test]
    fn timeseries_rows_and_devices() {
        use crate::stats::host::DiskDelta;
        let d = |ops: u64| IntervalDir {
            ops,
            bytes: ops * 4096,
            iops: ops as f64,
            bytes_per_s: ops as f64 * 4096.0,
            latency_mean_ns: 1500.0,
            latency_p99_ns: 3000,
            latency_max_ns: 4000,
            ..Default::default()
        };
        let c = |r: u64, w: u64| IntervalClass {
            read: d(r),
            write: d(w),
            flush: d(0),
        };
        let mut rec = IntervalRecord {
            index: 3,
            phase: crate::stats::timeseries::IntervalPhase::Measure,
            step: Some(1),
            label: Some(crate::stats::timeseries::SequenceRun::Rep(2)),
            t_end_ms: 4000,
            interval_ms: 1000,
            total: c(5, 2),
            ..Default::default()
        };
        rec.classes.insert("a".into(), c(5, 0));
        rec.classes.insert("b".into(), c(0, 2));
        rec.cpu.process_user_pct = 12.5;
        rec.cpu.process_system_pct = 30.0;
        rec.cpu.system_user_pct = 5.0;
        rec.cpu.system_system_pct = 7.25;
        let disk = DiskDelta {
            util_pct: 42.123_456,
            ..Default::default()
        };
        rec.devices.insert("sda".into(), disk);
        let mut other = rec.clone();
        other.index = 4;
        other.devices.clear();
        other.devices.insert("nvme0n1".into(), disk);
        let step = StepResult {
            index: 1,
            label: "queue_depth=4".into(),
            ..StepResult::default()
        };
        let mut first = rec.clone();
        first.index = 0;
        first.t_end_ms = 1000;
        first.step = Some(0);
        first.devices.clear();
        let out = timeseries_table(&[first, rec, other], &[step]).csv();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "index,step,label,run,phase,t_end_ms,run_t_end_ms,interval_ms,class,op,device,ops,iops,\
             mb_per_s,mean_us,p99_us,max_us,process_user_pct,process_system_pct,system_busy_pct,\
             util_pct"
        );
        // The first record: 4 rows; then per record: a read, b write, (all) read and write,
        // and its device.
        assert_eq!(lines.len(), 1 + 4 + 2 * 5);
        assert_eq!(
            lines[5],
            "3,1,queue_depth=4,rep 2,measure,4000,4000,1000,a,read,,5,5,0.02,1.5,3,4,12.5,30,12.25,"
        );
        assert!(
            lines[8].starts_with("3,1,queue_depth=4,rep 2,measure,4000,4000,1000,(all),write,,2,")
        );
        assert_eq!(
            lines[9],
            "3,1,queue_depth=4,rep 2,measure,4000,4000,1000,,,sda,,,,,,,12.5,30,12.25,42.123"
        );
        assert!(lines[14].contains(",,,nvme0n1,"), "{}", lines[14]);
    }

    #[test]
    fn unknown_latencies_are_empty_cells_never_zero() {
        // As a run rebuilt from its time series has them: mean, p99 (a bound) and max known,
        // the other percentiles 0 (unknown).
        let mut rebuilt = dir(100);
        rebuilt["latency_ns"] = json!({"min": 0, "mean": 2500.0, "max": 90000, "stddev": 0.0,
            "p50": 0, "p90": 0, "p95": 0, "p99": 8000, "p99_9": 0, "p99_99": 0});
        let totals: ClassSummary =
            serde_json::from_value(json!({"read": rebuilt, "write": dir(0), "flush": dir(0)}))
                .unwrap();
        let out = summary_table(&BTreeMap::new(), &totals).csv();
        let row = out.lines().nth(1).unwrap();
        assert_eq!(row, "(all),read,100,409600,0,50,0.205,2.5,,,,8,,,90,,");
        // A step without reads or writes has no latency at all.
        let mut flushes = step(0, json!({}));
        flushes.totals.read = serde_json::from_value(dir(0)).unwrap();
        let out = steps_table(&[flushes]).csv();
        assert_eq!(
            out.lines().nth(1).unwrap(),
            "0,step 0,step,,,2.5,0,0,,,0,0,,,,,,,"
        );
    }

    #[test]
    fn number_formatting() {
        assert_eq!(f(1234567.0), "1234567");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(2.0 / 3.0), "0.667");
        assert_eq!(f(-0.0001), "0");
        assert_eq!(f(f64::NAN), "");
    }
}
