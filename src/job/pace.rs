//! A worker's pace, resolved from its spec: its open-loop rate (`rate_iops`, `arrivals`), the
//! floor on its rate (`min_iops`, `rate_cycle`) and its think time (`think_time`).

use super::spec::WorkerSpec;
use super::{Arrivals, MinRate, Rate};

/// The highest rate a worker is paced at, I/Os per second (one I/O a nanosecond).
const MAX_IOPS: f64 = 1e9;

/// Why `iops`, the value of `key`, is not a rate a worker can be paced at: none, or not above
/// 0, or above [`MAX_IOPS`]; each with what to give instead.
fn rate_refusal(key: &str, iops: f64) -> Option<String> {
    if !(iops > 0.0 && iops.is_finite()) {
        return Some(format!(
            "{key} is {iops}; use a number of I/Os per second above 0"
        ));
    }
    (iops > MAX_IOPS).then(|| {
        format!(
            "{key} is {iops:e}, more I/Os per second than storlab paces a worker at (at most {MAX_IOPS:e}, one a nanosecond); use at most {MAX_IOPS:e}, or leave {key} out to run a closed loop"
        )
    })
}

/// A worker's open-loop rate (`rate_iops`, `arrivals`); an error names the key.
pub(super) fn rate_of(spec: &WorkerSpec) -> Result<Option<Rate>, (&'static str, String)> {
    Ok(match spec.rate_iops {
        None => {
            if spec.arrivals.is_some() {
                return Err((
                    "arrivals",
                    "arrivals applies to open loop only; set rate_iops too".into(),
                ));
            }
            None
        }
        Some(iops) => Some(Rate {
            iops: match rate_refusal("rate_iops", iops) {
                Some(why) => return Err(("rate_iops", why)),
                None => iops,
            },
            arrivals: match spec.arrivals.as_deref() {
                None | Some("uniform") => Arrivals::Uniform,
                Some("poisson") => Arrivals::Poisson,
                Some(o) => {
                    return Err((
                        "arrivals",
                        format!("unknown arrivals `{o}`; use uniform or poisson"),
                    ));
                }
            },
        }),
    })
}

/// A worker's floor on its rate (`min_iops`, `rate_cycle`); an error names the key.
pub(super) fn min_rate_of(
    spec: &WorkerSpec,
    rate: Option<&Rate>,
) -> Result<Option<MinRate>, (&'static str, String)> {
    let cycle = spec.rate_cycle.map(|d| d.0);
    let Some(iops) = spec.min_iops else {
        return match cycle {
            Some(_) => Err((
                "rate_cycle",
                "rate_cycle is the cycle min_iops is judged over; set min_iops too, or remove it"
                    .into(),
            )),
            None => Ok(None),
        };
    };
    if let Some(why) = rate_refusal("min_iops", iops) {
        return Err(("min_iops", why));
    }
    if let Some(r) = rate.filter(|r| r.iops < iops) {
        return Err((
            "min_iops",
            format!(
                "min_iops is {iops}, above the worker's own rate_iops of {}: it could never be met; lower it",
                r.iops
            ),
        ));
    }
    let cycle = cycle.unwrap_or(std::time::Duration::from_secs(1));
    if cycle < std::time::Duration::from_millis(10) {
        return Err((
            "rate_cycle",
            format!(
                "rate_cycle is {}; use 10ms or more",
                crate::units::format_duration(cycle)
            ),
        ));
    }
    Ok(Some(MinRate {
        iops,
        cycle_ns: cycle.as_nanos().min(u64::MAX as u128) as u64,
    }))
}

/// A worker's think time, ns (`None`: none): closed loop only, and one I/O at a time, so a
/// larger `queue_depth` is run as 1 (said in `warnings`).
pub(super) fn think_ns(
    spec: &WorkerSpec,
    name: &str,
    queue_depth: &mut u32,
    warnings: &mut Vec<String>,
) -> Result<Option<u64>, String> {
    match (spec.think_time, spec.rate_iops) {
        (Some(_), Some(_)) => Err(
            "think_time paces a closed loop; an open-loop worker (rate_iops) has its own pace: remove one".into(),
        ),
        (Some(d), None) if !d.0.is_zero() => {
            if *queue_depth > 1 {
                warnings.push(format!(
                    "worker `{name}`: with think_time the worker has one I/O in flight at a time (as fio's thinktime); queue_depth {queue_depth} is run as 1"
                ));
                *queue_depth = 1;
            }
            Ok(Some(d.0.as_nanos() as u64))
        }
        _ => Ok(None),
    }
}
