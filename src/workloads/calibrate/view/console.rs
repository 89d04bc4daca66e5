//! A calibration in the summary: its three matrices (small IOPS, large MB/s, small latency;
//! small loads across, large loads down), its best figures with their loads, the CSV files.

use crate::workloads::calibrate::section::{CalibrateResult, Figure};
use std::fmt::Write as _;

/// The matrices and the best figures.
pub(super) fn section(out: &mut String, c: &CalibrateResult) {
    let _ = writeln!(
        out,
        "\ncalibration: {} level ({} points), {} disk{}, columns: outstanding small I/Os, rows: outstanding large I/Os",
        c.level,
        c.matrix,
        c.disks,
        if c.disks == 1 { "" } else { "s" }
    );
    if c.grid(Figure::Iops).is_none() {
        points(out, c);
    }
    for f in Figure::ALL {
        let Some((smalls, larges, cells)) = c.grid(f) else {
            continue;
        };
        let _ = writeln!(out, "{}", f.title());
        let mut head = format!("{:>12}", "large\\small");
        for s in &smalls {
            let _ = write!(head, "{s:>10}");
        }
        let _ = writeln!(out, "{head}");
        for (l, row) in larges.iter().zip(cells) {
            let mut line = format!("{l:>12}");
            for v in row {
                let text = v.map_or_else(|| "—".to_string(), |v| f.text(v));
                let _ = write!(line, "{text:>10}");
            }
            let _ = writeln!(out, "{line}");
        }
    }
    for (label, text) in c.summary_rows() {
        let _ = writeln!(out, "{label:<18}{text}");
    }
    if !c.csv_files.is_empty() {
        let _ = writeln!(out, "{:<18}{}", "matrices (CSV)", c.csv_files.join(", "));
    }
    for n in &c.notes {
        let _ = writeln!(out, "note: {n}");
    }
}

/// The points, one a row, when they do not fill a matrix.
fn points(out: &mut String, c: &CalibrateResult) {
    let _ = writeln!(
        out,
        "points ({}: they fill no matrix)\n{:>8}{:>8}{:>12}{:>12}{:>12}",
        c.points.len(),
        "small",
        "large",
        "small IOPS",
        "large MB/s",
        "latency ms"
    );
    for (small, large, figures) in c.rows() {
        let mut line = format!("{small:>8}{large:>8}");
        for (f, v) in Figure::ALL.iter().zip(figures) {
            let text = v.map_or_else(|| "—".to_string(), |v| f.text(v));
            let _ = write!(line, "{text:>12}");
        }
        let _ = writeln!(out, "{line}");
    }
}
