//! Each CPU's use and the machine's interrupt rate over the measured phase, from `/proc/stat`'s
//! `cpuN` and `intr` lines: what Iometer's PROCESSOR rows report (its `% User Time`,
//! `% Privileged Time`, `% DPC Time`, `% Interrupt Time`, `Interrupts per Second`).

use serde::{Deserialize, Serialize};

/// Cumulative clock ticks of every CPU (`user nice system idle iowait irq softirq steal`) and
/// the interrupts served since boot.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CpuTicks {
    cpus: Vec<(usize, [u64; 8])>,
    interrupts: u64,
}

/// Reads [`CpuTicks`] from `/proc/stat`; `None` where it cannot be read.
pub(crate) fn cpu_ticks() -> Option<CpuTicks> {
    parse(&super::read(std::path::Path::new("/proc/stat"))?)
}

fn parse(text: &str) -> Option<CpuTicks> {
    let mut out = CpuTicks::default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("intr ") {
            out.interrupts = rest.split_whitespace().next()?.parse().ok()?;
            continue;
        }
        // `cpuN ...` (the machine's `cpu ...` line has a space after `cpu`).
        let Some(rest) = line
            .strip_prefix("cpu")
            .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let Some(Ok(cpu)) = fields.next().map(str::parse::<usize>) else {
            continue;
        };
        let mut v = [0u64; 8];
        for (slot, field) in v.iter_mut().zip(fields) {
            *slot = field.parse().ok()?;
        }
        out.cpus.push((cpu, v));
    }
    (!out.cpus.is_empty()).then_some(out)
}

/// Each CPU's use and the machine's interrupts over a stretch of time (added in 1.18).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PerCpu {
    /// Interrupts the machine served per second (`/proc/stat`'s `intr`).
    pub interrupts_per_s: f64,
    /// Each CPU, by its number.
    pub cpus: Vec<CpuShare>,
}

/// One CPU's time, percent of that CPU's time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuShare {
    /// The CPU's number (`cpuN`).
    pub cpu: usize,
    /// Busy: everything but idle and iowait.
    pub busy_pct: f64,
    /// User mode (user and nice).
    pub user_pct: f64,
    /// Kernel mode, interrupts included (system, irq, softirq: Windows' privileged time).
    pub system_pct: f64,
    /// Hardware interrupts (irq: Windows' interrupt time).
    pub irq_pct: f64,
    /// Software interrupts (softirq: the nearest to Windows' DPC time).
    pub softirq_pct: f64,
    /// Idle with I/O pending.
    pub iowait_pct: f64,
}

impl PerCpu {
    /// The use between two readings `wall_ns` apart (CPUs present in both).
    pub(crate) fn between(before: &CpuTicks, after: &CpuTicks, wall_ns: u64) -> PerCpu {
        let cpus = (after.cpus.iter())
            .filter_map(|(n, a)| {
                let b = before.cpus.iter().find(|(m, _)| m == n)?.1;
                let d: Vec<u64> = a.iter().zip(b).map(|(x, y)| x.saturating_sub(y)).collect();
                let total = d.iter().fold(0u64, |s, x| s.saturating_add(*x)) as f64;
                let pct = |x: u64| {
                    if total > 0.0 {
                        x as f64 * 100.0 / total
                    } else {
                        0.0
                    }
                };
                let [user, nice, system, _idle, iowait, irq, softirq, steal] =
                    [d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]];
                Some(CpuShare {
                    cpu: *n,
                    busy_pct: pct(user + nice + system + irq + softirq + steal),
                    user_pct: pct(user + nice),
                    system_pct: pct(system + irq + softirq),
                    irq_pct: pct(irq),
                    softirq_pct: pct(softirq),
                    iowait_pct: pct(iowait),
                })
            })
            .collect();
        let secs = wall_ns as f64 / 1e9;
        PerCpu {
            interrupts_per_s: if secs > 0.0 {
                after.interrupts.saturating_sub(before.interrupts) as f64 / secs
            } else {
                0.0
            },
            cpus,
        }
    }

    /// The average of `parts`, each weighted by its `f64` (its measured time); `None` without
    /// any.
    pub(crate) fn weighted<'a>(
        parts: impl IntoIterator<Item = (&'a PerCpu, f64)>,
    ) -> Option<PerCpu> {
        let parts: Vec<(&PerCpu, f64)> = parts.into_iter().collect();
        let total: f64 = parts.iter().map(|p| p.1).sum();
        let first = parts.first()?.0;
        if total <= 0.0 {
            return Some(first.clone());
        }
        let mut out = PerCpu {
            interrupts_per_s: 0.0,
            cpus: (first.cpus.iter())
                .map(|c| CpuShare {
                    cpu: c.cpu,
                    ..CpuShare::default()
                })
                .collect(),
        };
        for (p, w) in &parts {
            let w = w / total;
            out.interrupts_per_s += p.interrupts_per_s * w;
            for c in &mut out.cpus {
                if let Some(s) = p.cpus.iter().find(|s| s.cpu == c.cpu) {
                    c.busy_pct += s.busy_pct * w;
                    c.user_pct += s.user_pct * w;
                    c.system_pct += s.system_pct * w;
                    c.irq_pct += s.irq_pct * w;
                    c.softirq_pct += s.softirq_pct * w;
                    c.iowait_pct += s.iowait_pct * w;
                }
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cpus_share_and_the_interrupt_rate() {
        let a = parse(
            "cpu  1 2 3 4 5 6 7 8\ncpu0 0 0 0 0 0 0 0 0\ncpu1 10 0 10 70 10 0 0 0\nintr 1000 5 6\n",
        )
        .unwrap();
        let b = parse("cpu  1 2 3 4 5 6 7 8\ncpu0 50 10 20 10 0 5 5 0\ncpu1 10 0 10 170 10 0 0 0\nintr 3000 5 6\n").unwrap();
        let p = PerCpu::between(&a, &b, 2_000_000_000);
        assert_eq!(p.interrupts_per_s, 1000.0);
        let c0 = &p.cpus[0];
        assert_eq!((c0.cpu, c0.user_pct, c0.system_pct), (0, 60.0, 30.0));
        assert_eq!((c0.irq_pct, c0.softirq_pct, c0.busy_pct), (5.0, 5.0, 90.0));
        assert_eq!(p.cpus[1].busy_pct, 0.0);
        let w = PerCpu::weighted([(&p, 1.0), (&PerCpu::between(&a, &a, 1), 3.0)]).unwrap();
        assert!((w.cpus[0].busy_pct - 22.5).abs() < 1e-9, "{w:?}");
        assert!(parse("nothing").is_none());
    }
}
