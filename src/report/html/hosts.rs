//! A run over many hosts: each host side by side, in a table (its own figures, CPU and clock
//! against rank 0's), in charts over time (`hosts-iops`, `hosts-p99`: one series per host,
//! `rank R on HOST`) and in a table of every host's devices.

use crate::report::svg::{self, Band, LineOptions};
use crate::results::RunResult;
use crate::results::hosts::{HostInterval, HostResult};
use crate::units::{format_ns, format_pct, format_rate};
use maud::{Markup, html};
use std::fmt::Write as _;

/// The hosts section: nothing unless the run was over many hosts.
pub(super) fn hosts_section(r: &RunResult) -> Markup {
    if r.hosts.is_empty() {
        return html! {};
    }
    let columns = (crate::report::tables::HOST_COLUMNS.iter()).chain(&["CPU busy", "clock"]);
    let row = |h: &HostResult| {
        let busy = if h.present {
            format_pct(h.host_cpu.machine_busy_pct())
        } else {
            "-".into()
        };
        let cells = crate::report::tables::host_cells(h);
        cells.into_iter().chain([busy, clock(h)])
    };
    html! {
        h2 { "Hosts" }
        p {
            (r.hosts.len())
            " ranks; the figures of this report are all of them, merged (histograms added, never averaged)."
        }
        div class="table" {
            table {
                tr { @for c in columns { th { (c) } } }
                @for h in &r.hosts {
                    tr { @for c in row(h) { td { (c) } } }
                }
            }
        }
        (charts(r))
        (devices(r))
    }
}

/// A host's clock against rank 0's: `+0.21 ms ± 1.68 ms`, and how far it moved during the run.
fn clock(h: &HostResult) -> String {
    if h.rank == 0 {
        return "time base".into();
    }
    let ns = |v: u64| format_ns(v as f64);
    let sign = if h.clock_offset_ns < 0 { "-" } else { "+" };
    let mut s = format!(
        "{sign}{} ± {}",
        ns(h.clock_offset_ns.unsigned_abs()),
        ns(h.clock_uncertainty_ns)
    );
    let checks = match h.clock_checks.len() {
        0 => return s,
        1 => "1 check".to_string(),
        n => format!("{n} checks"),
    };
    match h.clock_drift_ns() {
        0 => {
            let _ = write!(s, ", steady ({checks})");
        }
        drift => {
            let _ = write!(s, ", moved ≥ {} ({checks})", ns(drift));
        }
    }
    s
}

/// Each host's IOPS and p99 over time, one series per host.
fn charts(r: &RunResult) -> Markup {
    let hosts: Vec<&HostResult> = r
        .hosts
        .iter()
        .filter(|h| !h.timeseries.is_empty())
        .collect();
    if hosts.is_empty() {
        return html! {};
    }
    let name = |h: &HostResult| format!("rank {} on {}", h.rank, h.host);
    let names: Vec<String> = hosts.iter().map(|h| name(h)).collect();
    let line = |h: &HostResult, f: &dyn Fn(&HostInterval) -> Option<f64>| -> Vec<(f64, f64)> {
        (h.timeseries.iter())
            .filter_map(|i| f(i).map(|v| (i.t_end_ms as f64 / 1e3, v)))
            .collect()
    };
    // The ramp, from the first host that has one: every host ramps alike.
    let interval_s = r.job.interval_ms as f64 / 1e3;
    let ramp_end = (hosts[0].timeseries.iter())
        .filter(|i| i.ramp)
        .map(|i| i.t_end_ms as f64 / 1e3)
        .fold(0.0, f64::max);
    let bands = if ramp_end > 0.0 {
        vec![Band {
            from: 0.0,
            to: ramp_end,
            label: "ramp".into(),
        }]
    } else {
        Vec::new()
    };
    let end = (hosts.iter().flat_map(|h| h.timeseries.last()))
        .map(|i| i.t_end_ms as f64 / 1e3)
        .fold(interval_s, f64::max);
    let opts = |format: fn(f64) -> String| LineOptions {
        x_range: Some((0.0, end)),
        bands: bands.clone(),
        y_format: Some(format),
        ..Default::default()
    };
    let iops: Vec<(&str, Vec<(f64, f64)>)> = (hosts.iter().zip(&names))
        .map(|(h, n)| {
            let points = line(h, &|i| Some(i.read_iops + i.write_iops));
            (n.as_str(), points)
        })
        .collect();
    let iops = svg::time_chart(
        "hosts-iops",
        "IOPS of each host (reads and writes)",
        "IOPS",
        iops,
        &opts(format_rate),
    );
    // Reads' p99 where the host read, else its writes'.
    let p99: Vec<(&str, Vec<(f64, f64)>)> = (hosts.iter().zip(&names))
        .map(|(h, n)| {
            let points = line(h, &|i| {
                let v = if i.read_iops > 0.0 {
                    i.read_p99_ns
                } else {
                    i.write_p99_ns
                };
                (v > 0).then_some(v as f64)
            });
            (n.as_str(), points)
        })
        .collect();
    let p99 = svg::time_chart(
        "hosts-p99",
        "99th percentile latency of each host (reads; writes where it did not read)",
        "latency",
        p99,
        &opts(format_ns),
    );
    html! { (iops) (p99) }
}

/// Every host's block devices over the measured phase.
fn devices(r: &RunResult) -> Markup {
    if r.hosts.iter().all(|h| h.devices.is_empty()) {
        return html! {};
    }
    let columns = [
        "rank", "host", "device", "reads", "writes", "read", "written", "busy",
    ];
    html! {
        h3 { "Devices of each host" }
        div class="table" {
            table {
                (super::heading_row(&columns))
                @for h in &r.hosts {
                    @let rank = h.rank.to_string();
                    @for d in &h.devices {
                        (super::device_row(&[&rank, &h.host, &d.name], d))
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::clock;
    use crate::results::hosts::{ClockCheck, HostResult};

    #[test]
    fn the_clock_cell_gives_the_offset_and_how_it_held_during_the_run() {
        let mut h = HostResult {
            rank: 1,
            clock_offset_ns: -15_900,
            clock_uncertainty_ns: 103_000,
            ..HostResult::default()
        };
        assert_eq!(clock(&h), "-15.9 µs ± 103 µs");
        let check = |offset_ns| ClockCheck {
            interval: 59,
            offset_ns,
            uncertainty_ns: 100_000,
        };
        h.clock_checks = vec![check(20_000)];
        assert_eq!(clock(&h), "-15.9 µs ± 103 µs, steady (1 check)");
        h.clock_checks.push(check(2_000_000));
        assert_eq!(clock(&h), "-15.9 µs ± 103 µs, moved ≥ 1.81 ms (2 checks)");
        assert_eq!(clock(&HostResult::default()), "time base");
    }
}
