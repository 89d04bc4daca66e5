//! The runs of an `[fs]` section as passes: each run's workloads, rate and times, and its
//! cycles (vdbench's `for` parameters) expanded, each combination of values a pass of its own,
//! the first list in `order` outermost.

use super::config::{MAX_THREADS, MAX_XFER, Pass, WorkloadConfig, ms};
use super::op::FsOp;
use super::spec::{FsSpec, RunSpec, weighted};
use crate::job::{Arrivals, JobError, SectionErrors};
use crate::units::format_size;

/// Passes a job makes at most.
pub(super) const MAX_PASSES: usize = 10_000;

/// The cycles' lists `axes` with those named in `order` first, in its order.
fn ordered<'a>(
    mut axes: Vec<(&'a str, Vec<Axis>)>,
    order: &[String],
) -> Result<Vec<(&'a str, Vec<Axis>)>, String> {
    let mut sorted = Vec::new();
    for o in order {
        let Some(pos) = axes.iter().position(|(n, _)| n == o) else {
            return Err(format!("`{o}` is not one of this run's for_ lists"));
        };
        sorted.push(axes.remove(pos));
    }
    sorted.append(&mut axes);
    Ok(sorted)
}

/// Run `i` from `r`, its keys defaulting to the section's, as its passes.
pub(super) fn run(
    e: &SectionErrors,
    s: &FsSpec,
    r: &RunSpec,
    i: usize,
    workloads: &[WorkloadConfig],
) -> Result<Vec<Pass>, JobError> {
    let key = |k: &str| {
        if s.run.is_empty() {
            k.to_string()
        } else {
            format!("run[{i}].{k}")
        }
    };
    let name = r.name.clone().unwrap_or_else(|| format!("r{}", i + 1));
    if matches!(name.as_str(), "format" | "clean") || name.starts_with("mdtest ") {
        return Err(e.error(
            &key("name"),
            format!("`{name}` names storlab's own runs (the format, the removal, mdtest's phases); give this run another name"),
        ));
    }
    let chosen: Vec<WorkloadConfig> = match &r.workloads {
        None => workloads.to_vec(),
        Some(names) => names
            .iter()
            .map(|n| {
                (workloads.iter().find(|w| &w.name == n))
                    .cloned()
                    .ok_or_else(|| {
                        e.error(&key("workloads"), format!("no workload is named `{n}`"))
                    })
            })
            .collect::<Result<_, _>>()?,
    };
    if chosen.is_empty() {
        return Err(e.error(&key("workloads"), "give at least one workload".into()));
    }
    let rate = r.rate.or(s.rate).and_then(|r| r.0);
    let arrivals = match r
        .arrivals
        .as_deref()
        .or(s.arrivals.as_deref())
        .unwrap_or("uniform")
    {
        "uniform" => Arrivals::Uniform,
        "poisson" => Arrivals::Poisson,
        other => {
            return Err(e.error(
                &key("arrivals"),
                format!("`{other}`: use uniform or poisson"),
            ));
        }
    };
    let duration_ms = ms(r.duration.or(s.duration), crate::job::defaults::DURATION_MS);
    if !(100..=30 * 86_400_000).contains(&duration_ms) {
        return Err(e.error(&key("duration"), "give 100 ms to 30 days".into()));
    }
    let ramp_ms = ms(r.ramp.or(s.ramp), 0);
    let interval_ms = ms(r.interval.or(s.interval), crate::job::defaults::INTERVAL_MS);
    if interval_ms < 100 {
        return Err(e.error(
            &key("interval"),
            "give an interval of at least 100 ms".into(),
        ));
    }
    let mut base: Vec<WorkloadConfig> = chosen;
    if let Some(m) = &r.mix {
        let mix = weighted(m, FsOp::parse).map_err(|m| e.error(&key("mix"), m))?;
        for w in &mut base {
            w.mix.clone_from(&mix);
        }
    }
    let skews: f64 = base.iter().filter_map(|w| w.skew).sum();
    if skews > 100.0 + 1e-9 {
        return Err(e.error(
            &key("workloads"),
            format!("the workloads' skews add up to {skews}%, more than 100%"),
        ));
    }
    let axes = cycles(e, r, &key)?;
    if axes.iter().any(|(_, v)| v.is_empty()) {
        return Err(e.error(&key("for_"), "a for_ list is empty".into()));
    }
    let total: usize = axes.iter().map(|(_, v)| v.len()).product();
    if total > MAX_PASSES {
        return Err(e.error(
            &key("for_"),
            format!("the cycles make {total} passes, more than {MAX_PASSES}"),
        ));
    }
    let mut passes = Vec::with_capacity(total);
    for n in 0..total {
        let mut label = name.clone();
        let mut ws = base.clone();
        let mut pass_rate = rate;
        let mut k = n;
        let mut picks = Vec::new();
        for (_, values) in axes.iter().rev() {
            picks.push(&values[k % values.len()]);
            k /= values.len();
        }
        picks.reverse();
        for axis in picks {
            label.push(' ');
            label.push_str(&axis.apply(&mut ws, &mut pass_rate));
        }
        passes.push(Pass {
            label,
            workloads: ws,
            rate: pass_rate,
            arrivals,
            duration_ms,
            ramp_ms,
            interval_ms,
        });
    }
    Ok(passes)
}

/// The cycles of run `r` (its `for_` lists): each value of each list a pass, the first list in
/// `order` outermost.
fn cycles(
    e: &SectionErrors,
    r: &RunSpec,
    key: &dyn Fn(&str) -> String,
) -> Result<Vec<(&'static str, Vec<Axis>)>, JobError> {
    let mut axes: Vec<(&'static str, Vec<Axis>)> = Vec::new();
    if let Some(v) = &r.for_rate {
        axes.push(("rate", v.iter().map(|x| Axis::Rate(x.0)).collect()));
    }
    if let Some(v) = &r.for_mix {
        let mixes = (v.iter())
            .map(|m| {
                weighted(m, FsOp::parse)
                    .map(Axis::Mix)
                    .map_err(|x| e.error(&key("for_mix"), x))
            })
            .collect::<Result<Vec<_>, _>>()?;
        axes.push(("mix", mixes));
    }
    if let Some(v) = &r.for_xfersize {
        if let Some(b) = v.iter().find(|b| b.0 == 0 || b.0 > MAX_XFER) {
            return Err(e.error(
                &key("for_xfersize"),
                format!("{} bytes is out of range; give 1 byte to 64 MiB", b.0),
            ));
        }
        axes.push(("xfersize", v.iter().map(|b| Axis::Xfer(b.0)).collect()));
    }
    if let Some(v) = &r.for_threads {
        if v.iter().any(|&t| t == 0 || t > MAX_THREADS) {
            return Err(e.error(
                &key("for_threads"),
                format!("give 1 to {MAX_THREADS} threads"),
            ));
        }
        axes.push(("threads", v.iter().map(|&t| Axis::Threads(t)).collect()));
    }
    if let Some(v) = &r.for_rdpct {
        if v.iter().any(|p| !(0.0..=100.0).contains(p)) {
            return Err(e.error(&key("for_rdpct"), "give percentages from 0 to 100".into()));
        }
        axes.push(("rdpct", v.iter().map(|&p| Axis::Rdpct(p)).collect()));
    }
    if let Some(order) = &r.order {
        axes = ordered(axes, order).map_err(|m| e.error(&key("order"), m))?;
    }
    Ok(axes)
}

/// One value of a cycle.
#[derive(Debug, Clone)]
enum Axis {
    Rate(Option<f64>),
    Mix(Vec<(FsOp, u32)>),
    Xfer(u64),
    Threads(u32),
    Rdpct(f64),
}

impl Axis {
    /// Applies the value to the pass; its label.
    fn apply(&self, ws: &mut [WorkloadConfig], rate: &mut Option<f64>) -> String {
        match self {
            Axis::Rate(r) => {
                *rate = *r;
                match r {
                    Some(r) => format!("rate={}", crate::units::format_number(*r)),
                    None => "rate=max".into(),
                }
            }
            Axis::Mix(m) => {
                for w in ws.iter_mut() {
                    w.mix.clone_from(m);
                }
                let names: Vec<String> = m.iter().map(|(o, w)| format!("{o}:{w}")).collect();
                format!("mix={}", names.join(","))
            }
            Axis::Xfer(b) => {
                for w in ws.iter_mut() {
                    w.xfer = vec![(*b, 1)];
                }
                format!("xfersize={}", format_size(*b))
            }
            Axis::Threads(t) => {
                for w in ws.iter_mut() {
                    w.threads = *t;
                }
                format!("threads={t}")
            }
            Axis::Rdpct(p) => {
                for w in ws.iter_mut() {
                    w.rdpct = Some(*p);
                }
                format!("rdpct={}", crate::units::format_number(*p))
            }
        }
    }
}
