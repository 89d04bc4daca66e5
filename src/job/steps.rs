//! Step sequences: the resolved `[cycle]` table and run-control keys (`repeat`, `curve`,
//! `until_steady`, `precondition`), and the expansion of a job into its steps: every
//! combination of the cycled values, outermost cycle first. Pure: no syscalls.

use super::file::Source;
use super::spec::{CountCycle, CycleSpec, JobSpec, SizeCycle};
use super::{Job, JobError, Target, Worker};
use crate::units::{format_size, parse_duration};
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// A cycled parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Param {
    /// Number of targets each worker uses.
    Targets,
    /// Count of every worker group.
    Workers,
    /// Queue depth of every worker.
    QueueDepth,
    /// Block size of every access entry, bytes.
    BlockSize,
    /// Read share of every access entry, percent.
    Read,
    /// Random share of every access entry, percent.
    Random,
    /// Open-loop rate of every worker, IOPS.
    Rate,
    /// Size of every cache tier, percent of its target (0: no cache).
    Cache,
    /// The worker group that runs (workers without a group run in every step).
    Group,
    /// Compression ratio of the written data, N:1.
    Compress,
    /// Dedupe ratio of the written data, N:1.
    Dedupe,
}

impl Param {
    /// Default nesting order, outermost first.
    pub const DEFAULT_ORDER: [Param; 11] = [
        Param::Group,
        Param::Compress,
        Param::Dedupe,
        Param::Cache,
        Param::Targets,
        Param::Workers,
        Param::QueueDepth,
        Param::BlockSize,
        Param::Read,
        Param::Random,
        Param::Rate,
    ];

    /// The key's name in `[cycle]` and in step parameters.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Param::Targets => "targets",
            Param::Workers => "workers",
            Param::QueueDepth => "queue_depth",
            Param::BlockSize => "block_size",
            Param::Read => "read",
            Param::Random => "random",
            Param::Rate => "rate",
            Param::Cache => "cache",
            Param::Group => "group",
            Param::Compress => "compress",
            Param::Dedupe => "dedupe",
        }
    }

    /// Parses a key name.
    pub(crate) fn parse(s: &str) -> Option<Param> {
        Self::DEFAULT_ORDER.into_iter().find(|p| p.name() == s)
    }

    /// A value as a person reads it.
    pub(crate) fn show(self, v: f64) -> String {
        match self {
            Param::BlockSize => format_size(v as u64),
            Param::Read | Param::Random => format!("{v}%"),
            Param::Rate => format!("{v} IOPS"),
            Param::Cache if v == 0.0 => "no cache".into(),
            Param::Cache => format!("{v}% cached"),
            Param::Compress | Param::Dedupe => format!("{v}:1"),
            _ => format!("{v}"),
        }
    }
}

/// One cycled parameter and its values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cycle {
    /// The parameter.
    pub parameter: Param,
    /// Its values, in order.
    pub values: Vec<f64>,
}

/// The statistic a stop rule looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// Mean latency.
    Mean,
    /// Median.
    P50,
    /// 90th percentile.
    P90,
    /// 95th percentile.
    P95,
    /// 99th percentile.
    P99,
    /// 99.9th percentile.
    P99_9,
    /// 99.99th percentile.
    P99_99,
    /// Maximum.
    Max,
}

/// `stop_when = "[class:]statistic > duration"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopRule {
    /// Class name; `None`: every class together.
    pub class: Option<String>,
    /// The statistic.
    pub statistic: Statistic,
    /// Stop when the statistic exceeds this, ns.
    pub threshold_ns: u64,
}

impl StopRule {
    /// Parses `p99 > 20ms`, `db:mean > 5ms`, `p99.9 > 1s`.
    pub(crate) fn parse(s: &str) -> Result<StopRule, String> {
        let help = "write e.g. \"p99 > 20ms\" or \"db:mean > 5ms\" (statistics: mean, p50, p90, p95, p99, p99.9, p99.99, max)";
        let (lhs, rhs) = s.split_once('>').ok_or_else(|| format!("`{s}`: {help}"))?;
        let lhs = lhs.trim();
        let (class, stat) = match lhs.rsplit_once(':') {
            Some((c, st)) => (Some(c.trim().to_string()), st.trim()),
            None => (None, lhs),
        };
        let statistic = match stat {
            "mean" => Statistic::Mean,
            "p50" => Statistic::P50,
            "p90" => Statistic::P90,
            "p95" => Statistic::P95,
            "p99" => Statistic::P99,
            "p99.9" => Statistic::P99_9,
            "p99.99" => Statistic::P99_99,
            "max" => Statistic::Max,
            o => return Err(format!("`{s}`: unknown statistic `{o}`; {help}")),
        };
        let threshold = parse_duration(rhs.trim()).map_err(|e| format!("`{s}`: {e}"))?;
        Ok(StopRule {
            class,
            statistic,
            threshold_ns: threshold.as_nanos() as u64,
        })
    }
}

/// Steady-state rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Steady {
    /// Length of a round, ms.
    pub round_ms: u64,
    /// Rounds in the window.
    pub window: u32,
    /// Every round within ± this percent of the window average.
    pub range_pct: f64,
    /// Fit excursion within ± this percent of the window average.
    pub slope_pct: f64,
    /// Rounds at most.
    pub max_rounds: u32,
    /// What the window judges (schema 1.22; absent: IOPS).
    #[serde(default, skip_serializing_if = "SteadyMetric::is_iops")]
    pub metric: SteadyMetric,
}

/// What a steady-state window judges.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SteadyMetric {
    /// Each round's IOPS.
    #[default]
    Iops,
    /// Each round's mean completion latency, reads and writes together.
    Latency,
}

impl SteadyMetric {
    /// Whether it is IOPS (the default).
    pub(crate) fn is_iops(&self) -> bool {
        *self == SteadyMetric::Iops
    }

    /// What views call it: `IOPS` or `mean latency`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            SteadyMetric::Iops => "IOPS",
            SteadyMetric::Latency => "mean latency",
        }
    }
}

/// Preconditioning: full writes of every target before measuring.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Precondition {
    /// Full passes.
    pub passes: u32,
    /// Random (true) or sequential (false) writes.
    pub random: bool,
    /// Write size, bytes.
    pub block_bytes: u64,
}

/// How a job's measurement is sequenced. The default is one step, run once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sequence {
    /// Cycles, outermost first.
    pub cycles: Vec<Cycle>,
    /// Runs of each step.
    pub repeat: u32,
    /// Pause between runs, ms.
    pub pause_ms: u64,
    /// Rate-curve levels, percent of the closed-loop maximum.
    pub curve: Vec<f64>,
    /// Ends the curve early.
    pub stop_when: Option<StopRule>,
    /// Steady-state rounds.
    pub steady: Option<Steady>,
    /// Preconditioning.
    pub precondition: Option<Precondition>,
    /// Each step's label, in step order, when the workload that made the cycles names its
    /// steps itself (a calibration's `small 5 × large 2`); else made from the parameters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_labels: Vec<String>,
}

impl Default for Sequence {
    fn default() -> Self {
        Sequence {
            cycles: Vec::new(),
            repeat: 1,
            pause_ms: 0,
            curve: Vec::new(),
            stop_when: None,
            steady: None,
            precondition: None,
            step_labels: Vec::new(),
        }
    }
}

impl Sequence {
    /// Whether the job is more than one plain run.
    pub(crate) fn is_sequence(&self) -> bool {
        !self.cycles.is_empty()
            || self.repeat > 1
            || !self.curve.is_empty()
            || self.steady.is_some()
            || self.precondition.is_some()
    }
}

/// One step: its parameters and the job that measures it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    /// 0-based index.
    pub index: usize,
    /// (parameter, value) in cycle order.
    pub parameters: Vec<(Param, f64)>,
    /// The job of this step.
    pub job: Job,
}

/// Doubling values from `from` to `to` inclusive (512 → 1 MiB is 12 values).
pub(crate) fn doubling(from: u64, to: u64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut v = from.max(1);
    while v <= to {
        out.push(v as f64);
        match v.checked_mul(2) {
            Some(n) => v = n,
            None => break,
        }
    }
    out
}

/// Every combination of the cycles, outermost first; a job without cycles is one step.
pub(crate) fn expand(job: &Job) -> Vec<Step> {
    let cycles = &job.sequence.cycles;
    let total: usize = cycles.iter().map(|c| c.values.len()).product();
    (0..total.max(1))
        .map(|index| {
            let mut rest = index;
            let mut parameters = vec![(Param::Targets, 0.0); cycles.len()];
            for (i, c) in cycles.iter().enumerate().rev() {
                parameters[i] = (c.parameter, c.values[rest % c.values.len()]);
                rest /= c.values.len();
            }
            let mut step = job.clone();
            for &(p, v) in &parameters {
                apply(&mut step, p, v);
            }
            Step {
                index,
                parameters,
                job: step,
            }
        })
        .collect()
}

/// Sets parameter `p` to `v` everywhere it applies in `job`.
pub(crate) fn apply(job: &mut Job, p: Param, v: f64) {
    match p {
        Param::Targets => {
            for w in &mut job.workers {
                w.targets.truncate((v as usize).max(1));
            }
        }
        Param::Compress => job.data.compress = v,
        Param::Dedupe => job.data.dedupe = v,
        Param::Group => job
            .workers
            .retain(|w| w.group.is_none_or(|g| f64::from(g) == v)),
        Param::Workers => {
            // Copies of a group are `name#i`; new copy i takes the settings (targets, CPU) of
            // old copy i modulo the old count.
            let mut groups: Vec<(String, Vec<super::Worker>)> = Vec::new();
            for w in &job.workers {
                let group = w.name.split('#').next().unwrap_or(&w.name).to_string();
                match groups.iter_mut().find(|g| g.0 == group) {
                    Some(g) => g.1.push(w.clone()),
                    None => groups.push((group, vec![w.clone()])),
                }
            }
            let n = (v as usize).max(1);
            job.workers = groups
                .into_iter()
                .flat_map(|(name, copies)| {
                    (0..n).map(move |i| {
                        let mut w = copies[i % copies.len()].clone();
                        w.name = if n > 1 {
                            format!("{name}#{i}")
                        } else {
                            name.clone()
                        };
                        w
                    })
                })
                .collect();
        }
        Param::QueueDepth => {
            for w in &mut job.workers {
                w.queue_depth = (v as u32).max(1);
            }
        }
        Param::BlockSize => {
            for a in job.workers.iter_mut().flat_map(|w| &mut w.access) {
                a.block_size_bytes = v as u64;
                a.block_sizes.clear();
                a.align_bytes = v as u64;
            }
        }
        Param::Read => {
            for a in job.workers.iter_mut().flat_map(|w| &mut w.access) {
                a.read_pct = v;
            }
        }
        Param::Random => {
            for a in job.workers.iter_mut().flat_map(|w| &mut w.access) {
                a.random_pct = v;
            }
        }
        Param::Cache => {
            for c in job.targets.iter_mut().filter_map(|t| t.cache.as_mut()) {
                c.size = super::cache::CacheSize::Pct(v);
            }
        }
        Param::Rate => {
            for w in &mut job.workers {
                w.rate = Some(super::Rate {
                    iops: v,
                    arrivals: w
                        .rate
                        .map(|r| r.arrivals)
                        .unwrap_or(super::Arrivals::Uniform),
                });
            }
        }
    }
}

/// The sequence a job asks for: its cycles, its run control (`repeat`, `pause`, `curve`,
/// `stop_when`, `until_steady`) and its preconditioning.
pub(super) fn resolve_sequence(
    spec: &JobSpec,
    src: &Source,
    workers: &[Worker],
    targets: &[Target],
) -> Result<Sequence, JobError> {
    let mut seq = Sequence {
        repeat: spec.repeat.unwrap_or(1),
        pause_ms: spec.pause.map(|d| d.0.as_millis() as u64).unwrap_or(0),
        ..Sequence::default()
    };
    if seq.repeat == 0 || seq.repeat > 1000 {
        return Err(
            src.top_level_error("repeat", format!("repeat is {}; use 1 to 1000", seq.repeat))
        );
    }
    if let Some(c) = &spec.cycle {
        seq.cycles = resolve_cycles(c, src, workers, targets)?;
    }
    seq.curve = resolve_curve(spec, src, workers, &seq.cycles)?;
    if let Some(s) = &spec.stop_when {
        if seq.curve.is_empty() && seq.cycles.is_empty() {
            return Err(src.top_level_error(
                "stop_when",
                "stop_when ends a rate curve or a cycle; add curve = [...] or a [cycle]".into(),
            ));
        }
        seq.stop_when = Some(StopRule::parse(s).map_err(|m| src.top_level_error("stop_when", m))?);
    }
    seq.steady = resolve_steady(spec, src, &seq)?;
    if !seq.curve.is_empty() && seq.repeat > 1 {
        return Err(src.top_level_error("repeat", "repeat cannot be combined with curve".into()));
    }
    seq.precondition = resolve_precondition(spec, src)?;
    Ok(seq)
}

/// Errors about the keys of the `[cycle]` table: located at the table, keyed `cycle.KEY`.
struct CycleErrors {
    location: String,
}

impl CycleErrors {
    fn error(&self, key: &str, message: String) -> JobError {
        JobError {
            location: self.location.clone(),
            key: format!("cycle.{key}"),
            message,
        }
    }
}

/// The cycles of the `[cycle]` table, outermost first.
fn resolve_cycles(
    c: &Spanned<CycleSpec>,
    src: &Source,
    workers: &[Worker],
    targets: &[Target],
) -> Result<Vec<Cycle>, JobError> {
    let errors = CycleErrors {
        location: src.at(c.span()),
    };
    let c = c.get_ref();
    let mut found = cycled_values(c, &errors, workers, targets)?;
    let order = cycle_order(c.order.as_deref(), &found, &errors)?;
    let mut cycles = Vec::new();
    for p in order {
        if let Some(i) = found.iter().position(|(f, _)| *f == p) {
            let (parameter, values) = found.remove(i);
            cycles.push(Cycle { parameter, values });
        }
    }
    let steps = cycles
        .iter()
        .fold(1usize, |n, c| n.saturating_mul(c.values.len()));
    if steps > 10_000 {
        return Err(errors.error(
            "order",
            format!("the cycles make {steps} steps; keep it under 10000"),
        ));
    }
    Ok(cycles)
}

/// The values of every parameter the `[cycle]` table cycles, checked, in the order of
/// [`Param::DEFAULT_ORDER`].
fn cycled_values(
    c: &CycleSpec,
    errors: &CycleErrors,
    workers: &[Worker],
    targets: &[Target],
) -> Result<Vec<(Param, Vec<f64>)>, JobError> {
    let mut found: Vec<(Param, Vec<f64>)> = Vec::new();
    if let Some(groups) = &c.group {
        let missing = groups
            .iter()
            .find(|&&g| !workers.iter().any(|w| w.group == Some(g)));
        if groups.is_empty() {
            return Err(errors.error("group", "the list is empty".into()));
        }
        if let Some(g) = missing {
            return Err(errors.error(
                "group",
                format!("no worker is in group {g}; give workers `group = {g}`, or leave {g} out"),
            ));
        }
        found.push((Param::Group, groups.iter().map(|&g| f64::from(g)).collect()));
    }
    if let Some(v) = count_values(errors, "targets", &c.targets, targets.len() as u32)? {
        found.push((Param::Targets, v));
    }
    if let Some(v) = count_values(errors, "workers", &c.workers, 4096)? {
        if workers.iter().any(|w| w.name.split('#').count() > 2) {
            return Err(errors.error(
                "workers",
                "worker names used with a workers cycle must not contain `#`".into(),
            ));
        }
        found.push((Param::Workers, v));
    }
    if let Some(v) = count_values(errors, "queue_depth", &c.queue_depth, 32768)? {
        found.push((Param::QueueDepth, v));
    }
    if let Some(b) = &c.block_size {
        found.push((Param::BlockSize, block_size_values(errors, b, targets)?));
    }
    for (key, v, p) in [
        ("read", &c.read, Param::Read),
        ("random", &c.random, Param::Random),
    ] {
        if let Some(l) = v {
            if l.is_empty() {
                return Err(errors.error(key, "the list is empty".into()));
            }
            found.push((p, l.iter().map(|p| p.0).collect()));
        }
    }
    if let Some(l) = &c.cache {
        if !targets.iter().any(|t| t.cache.is_some()) {
            return Err(errors.error(
                "cache",
                "no target has a cache to size; give one a cache = { device = ..., size = ... }"
                    .into(),
            ));
        }
        if l.is_empty() || l.iter().any(|p| !(0.0..=100.0).contains(&p.0)) {
            return Err(errors.error(
                "cache",
                "cache sizes are percentages of the target from 0% (no cache) to 100%, at least one"
                    .into(),
            ));
        }
        found.push((Param::Cache, l.iter().map(|p| p.0).collect()));
    }
    for (key, v, p, max) in [
        (
            "compress",
            &c.compress,
            Param::Compress,
            super::data::MAX_COMPRESS,
        ),
        ("dedupe", &c.dedupe, Param::Dedupe, super::data::MAX_RATIO),
    ] {
        if let Some(l) = v {
            if l.is_empty()
                || l.iter()
                    .any(|r| !(r.is_finite() && (1.0..=max).contains(r)))
            {
                return Err(errors.error(
                    key,
                    format!("{key} ratios are N:1 from 1 to {max} (as [data] {key}), at least one"),
                ));
            }
            found.push((p, l.clone()));
        }
    }
    if let Some(l) = &c.rate {
        if l.is_empty() || l.iter().any(|r| !(*r > 0.0 && r.is_finite() && *r <= 1e9)) {
            return Err(errors.error(
                "rate",
                "rates must be IOPS above 0 and at most 1e9 (as rate_iops), at least one".into(),
            ));
        }
        found.push((Param::Rate, l.clone()));
    }
    Ok(found)
}

/// The values of a cycled count (`key`), each 1 to `max`; `None` when it is not cycled.
fn count_values(
    errors: &CycleErrors,
    key: &str,
    v: &Option<CountCycle>,
    max: u32,
) -> Result<Option<Vec<f64>>, JobError> {
    let values = match v {
        None => return Ok(None),
        Some(CountCycle::List(l)) => l.iter().map(|&n| n as f64).collect::<Vec<_>>(),
        Some(CountCycle::Doubling { from, to }) => {
            if *from == 0 || to < from {
                return Err(errors.error(
                    key,
                    format!(
                        "{{ from = {from}, to = {to} }}: from must be at least 1 and to at least from"
                    ),
                ));
            }
            doubling(*from as u64, *to as u64)
        }
    };
    if values.is_empty() || values.iter().any(|&n| n < 1.0 || n > max as f64) {
        return Err(errors.error(key, format!("values must be 1 to {max}, at least one")));
    }
    Ok(Some(values))
}

/// The cycled block sizes, bytes: 1 B to 64 MiB, the largest fitting in every target of known
/// size.
fn block_size_values(
    errors: &CycleErrors,
    b: &SizeCycle,
    targets: &[Target],
) -> Result<Vec<f64>, JobError> {
    let values: Vec<f64> = match b {
        SizeCycle::List(l) => l.iter().map(|s| s.0 as f64).collect(),
        SizeCycle::Doubling { from, to } => {
            if from.0 == 0 || to.0 < from.0 {
                return Err(errors.error(
                    "block_size",
                    "from must be more than 0 and to at least from".into(),
                ));
            }
            doubling(from.0, to.0)
        }
    };
    if values.is_empty() || values.iter().any(|&b| b < 1.0 || b > (64 << 20) as f64) {
        return Err(errors.error(
            "block_size",
            "block sizes must be 1 B to 64 MiB, at least one".into(),
        ));
    }
    for t in targets {
        if let (Some(size), Some(max)) = (t.size_bytes, values.iter().cloned().reduce(f64::max)) {
            if max > size as f64 {
                return Err(errors.error(
                    "block_size",
                    format!(
                        "the largest block size ({max} bytes) does not fit in target `{}` ({size} bytes)",
                        t.name
                    ),
                ));
            }
        }
    }
    Ok(values)
}

/// The nesting order of the cycles, outermost first: `order` as written (naming every cycled
/// parameter and nothing else), or the default.
fn cycle_order(
    names: Option<&[String]>,
    found: &[(Param, Vec<f64>)],
    errors: &CycleErrors,
) -> Result<Vec<Param>, JobError> {
    let Some(names) = names else {
        return Ok(Param::DEFAULT_ORDER.to_vec());
    };
    let mut order = Vec::new();
    for n in names {
        let p = Param::parse(n).ok_or_else(|| {
            errors.error("order", format!("unknown parameter `{n}`; use cache, targets, workers, queue_depth, block_size, read, random or rate"))
        })?;
        if !found.iter().any(|(f, _)| *f == p) {
            return Err(errors.error(
                "order",
                format!("`{n}` is in the order but has no values in [cycle]"),
            ));
        }
        order.push(p);
    }
    if let Some((missing, _)) = found.iter().find(|(f, _)| !order.contains(f)) {
        return Err(errors.error(
            "order",
            format!("`{}` is cycled but missing from the order", missing.name()),
        ));
    }
    Ok(order)
}

/// The rate-curve levels (`curve`), percent of the closed-loop maximum; empty without a curve.
fn resolve_curve(
    spec: &JobSpec,
    src: &Source,
    workers: &[Worker],
    cycles: &[Cycle],
) -> Result<Vec<f64>, JobError> {
    let Some(levels) = &spec.curve else {
        return Ok(Vec::new());
    };
    if levels.is_empty() || levels.iter().any(|l| !(*l > 0.0 && *l <= 200.0)) {
        return Err(src.top_level_error("curve", "levels are percentages of the maximum above 0 and at most 200, e.g. curve = [10, 50, 90, 100]".into()));
    }
    if workers.iter().any(|w| w.rate.is_some()) || cycles.iter().any(|c| c.parameter == Param::Rate)
    {
        return Err(src.top_level_error(
            "curve",
            "a curve finds the maximum closed loop first; remove rate_iops and the rate cycle"
                .into(),
        ));
    }
    Ok(levels.clone())
}

/// Steady-state rounds (`until_steady` and its keys), given the sequence's curve and repeat.
fn resolve_steady(
    spec: &JobSpec,
    src: &Source,
    seq: &Sequence,
) -> Result<Option<Steady>, JobError> {
    if spec.until_steady == Some(true) {
        if !seq.curve.is_empty() || seq.repeat > 1 {
            return Err(src.top_level_error(
                "until_steady",
                "until_steady cannot be combined with curve or repeat".into(),
            ));
        }
        let pct = |p: Option<crate::units::Percent>, d: f64| p.map(|p| p.0).unwrap_or(d);
        let steady = Steady {
            round_ms: spec.round.map(|d| d.0.as_millis() as u64).unwrap_or(60_000),
            window: spec.steady_rounds.unwrap_or(5),
            range_pct: pct(spec.steady_range, 10.0),
            slope_pct: pct(spec.steady_slope, 5.0),
            max_rounds: spec.max_rounds.unwrap_or(25),
            metric: match spec.steady_metric.as_deref() {
                None | Some("iops") => SteadyMetric::Iops,
                Some("latency") => SteadyMetric::Latency,
                Some(other) => {
                    return Err(src.top_level_error(
                        "steady_metric",
                        format!("unknown steady_metric `{other}`; use iops or latency"),
                    ));
                }
            },
        };
        if steady.round_ms < 100 || steady.window < 2 || steady.max_rounds < steady.window {
            return Err(src.top_level_error("until_steady", "round must be at least 100ms, steady_rounds at least 2 and max_rounds at least steady_rounds".into()));
        }
        Ok(Some(steady))
    } else if let Some(key) = [
        ("round", spec.round.is_some()),
        ("steady_rounds", spec.steady_rounds.is_some()),
        ("max_rounds", spec.max_rounds.is_some()),
        ("steady_metric", spec.steady_metric.is_some()),
    ]
    .iter()
    .find_map(|(k, set)| set.then_some(*k))
    {
        Err(src.top_level_error(
            key,
            "round, steady_rounds, max_rounds and steady_metric apply to until_steady = true"
                .into(),
        ))
    } else {
        Ok(None)
    }
}

/// Preconditioning (`precondition`): passes, pattern and write size.
fn resolve_precondition(spec: &JobSpec, src: &Source) -> Result<Option<Precondition>, JobError> {
    let Some(p) = &spec.precondition else {
        return Ok(None);
    };
    let block = p.block_size.map(|s| s.0).unwrap_or(128 << 10);
    let passes = p.passes.unwrap_or(1);
    if passes == 0 || passes > 100 || block == 0 || block > 64 << 20 {
        return Err(src.top_level_error(
            "precondition",
            "passes must be 1 to 100 and block_size 512 B to 64 MiB".into(),
        ));
    }
    let random = match p.pattern.as_deref() {
        None | Some("sequential") => false,
        Some("random") => true,
        Some(o) => {
            return Err(src.top_level_error(
                "precondition",
                format!("pattern `{o}`: use sequential or random"),
            ));
        }
    };
    Ok(Some(Precondition {
        passes,
        random,
        block_bytes: block,
    }))
}
