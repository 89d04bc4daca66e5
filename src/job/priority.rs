//! I/O priority (`io_priority = "be:4"`, `"rt:0"`, `"idle"` on a worker, and
//! `io_priority_mix = { share = "10%", priority = "rt:0" }`): the Linux I/O priority classes
//! and levels, as `ionice` and fio's `prioclass`/`prio` name them, and the value the kernel
//! takes (`ioprio_set`, an io_uring entry's `ioprio`).

use serde::{Deserialize, Serialize};

/// An I/O priority: a class and, for real time and best effort, a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IoPriority {
    /// 1 real time, 2 best effort, 3 idle (the kernel's IOPRIO_CLASS_*).
    pub class: u8,
    /// 0 (highest) to 7; 0 for idle.
    pub level: u8,
}

impl IoPriority {
    /// Reads `rt:N`, `be:N` (N from 0, highest, to 7) or `idle`.
    pub(crate) fn parse(s: &str) -> Result<IoPriority, String> {
        let t = s.trim().to_ascii_lowercase();
        let help = "write rt:LEVEL (real time), be:LEVEL (best effort) or idle, LEVEL from 0 (highest) to 7";
        if t == "idle" {
            return Ok(IoPriority { class: 3, level: 0 });
        }
        let (class, level) = t.split_once(':').ok_or_else(|| format!("`{s}`: {help}"))?;
        let class = match class.trim() {
            "rt" => 1,
            "be" => 2,
            _ => return Err(format!("`{s}`: {help}")),
        };
        match level.trim().parse::<u8>() {
            Ok(level) if level <= 7 => Ok(IoPriority { class, level }),
            _ => Err(format!("`{s}`: {help}")),
        }
    }

    /// The kernel's value: the class in the top 3 bits of 16, the level below.
    pub(crate) fn value(self) -> u16 {
        (u16::from(self.class) << 13) | u16::from(self.level)
    }

    /// As written: `rt:0`, `be:4`, `idle`.
    pub(crate) fn show(self) -> String {
        match self.class {
            1 => format!("rt:{}", self.level),
            2 => format!("be:{}", self.level),
            _ => "idle".into(),
        }
    }
}

/// A share of a worker's I/Os at another priority (fio's `cmdprio_percentage`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PriorityMix {
    /// The share, percent of the worker's I/Os (every `100 / share`-th I/O, evenly spread).
    pub share_pct: f64,
    /// Their priority.
    pub priority: IoPriority,
}

/// A worker's `io_priority` and `io_priority_mix` (`uring`: on the io_uring engine); an error
/// names the key.
#[allow(clippy::type_complexity)]
pub(crate) fn of_worker(
    spec: &crate::job::spec::WorkerSpec,
    uring: bool,
) -> Result<(Option<IoPriority>, Option<PriorityMix>), (&'static str, String)> {
    let p = (spec.io_priority.as_deref())
        .map(IoPriority::parse)
        .transpose()
        .map_err(|m| ("io_priority", m))?;
    let mix = (spec.io_priority_mix.as_ref())
        .map(|m| mix(m, uring))
        .transpose()
        .map_err(|m| ("io_priority_mix", m))?;
    Ok((p, mix))
}

/// The mix a worker asks for (`io_priority_mix`), on an io_uring worker (`uring`): per-I/O
/// priorities are an io_uring entry's; psync sets one priority per thread.
pub(crate) fn mix(
    spec: &crate::job::spec::PriorityMixSpec,
    uring: bool,
) -> Result<PriorityMix, String> {
    if !uring {
        return Err("a share of I/Os at another priority needs the io_uring engine (psync sets one priority per thread: io_priority)".into());
    }
    let share_pct = spec
        .share
        .map(|p| p.0)
        .ok_or("give share, e.g. share = \"10%\"")?;
    if share_pct <= 0.0 {
        return Err("share is 0%; give a share above 0, or remove io_priority_mix".into());
    }
    let priority = IoPriority::parse(
        spec.priority
            .as_deref()
            .ok_or("give priority, e.g. priority = \"rt:0\"")?,
    )?;
    Ok(PriorityMix {
        share_pct,
        priority,
    })
}

#[cfg(test)]
mod tests {
    use super::IoPriority;

    #[test]
    fn priorities_read_as_ionice_names_them() {
        assert_eq!(IoPriority::parse("be:4").unwrap().value(), (2 << 13) | 4);
        assert_eq!(IoPriority::parse("RT:0").unwrap().value(), 1 << 13);
        assert_eq!(IoPriority::parse("idle").unwrap().value(), 3 << 13);
        assert_eq!(IoPriority::parse(" be:7 ").unwrap().show(), "be:7");
        for bad in ["be:8", "rt", "high:1", "be:-1", ""] {
            assert!(IoPriority::parse(bad).is_err(), "{bad}");
        }
    }
}
