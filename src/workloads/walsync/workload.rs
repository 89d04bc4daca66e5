//! The WAL sync comparison as a workload: its description, one run per method (each a job
//! of its own, on the same file), the results section built from what each run's source
//! timed, and the way in from a job file.

use super::section::{self, MethodResult, WalSyncResult};
use super::source::{PointSources, Tally};
use super::{Method, Point, WalSyncConfig, WalSyncFile};
use crate::job::{EngineKind, Job};
use crate::results::description::{Description, Line};
use crate::results::verdict::{self, Comparison, Rule, Verdict};
use crate::results::{ClassResult, JobSource, RunResult};
use crate::run::{Execute, RunOptions, Workload};
use crate::stats::summary::ClassSummary;
use crate::units::{format_count, format_ms, format_size};
use crate::workloads::{JobText, Keys, Overrides};
use anyhow::Result;
use std::sync::Mutex;

/// A WAL sync comparison ready to run.
#[derive(Debug)]
pub(crate) struct WalSync {
    /// Its configuration, resolved.
    pub cfg: WalSyncConfig,
}

impl Workload for WalSync {
    fn kind(&self) -> &'static str {
        "wal-sync"
    }

    fn describe(&self) -> Description {
        describe(&self.cfg)
    }

    fn jobs(&self) -> Vec<Job> {
        // Every point opens the same file; the first one's job shows what happens to it.
        self.cfg
            .points
            .first()
            .map(|p| self.cfg.job(p))
            .into_iter()
            .collect()
    }

    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> Result<RunResult> {
        let cfg = &self.cfg;
        let mut methods = Vec::new();
        let mut runs: Vec<RunResult> = Vec::new();
        for p in &cfg.points {
            if p.direct {
                if let Some(why) = crate::engine::target::direct_refusal(&cfg.file.path) {
                    methods.push(unavailable(p, why));
                    continue;
                }
            }
            let tally = Mutex::new(Tally::default());
            let sources = PointSources {
                point: *p,
                block_bytes: cfg.block_bytes,
                tally: &tally,
            };
            let r = match exec.execute(&cfg.job(p), opts, &sources) {
                Ok(r) => r,
                Err(e) if p.direct && format!("{e:#}").contains("O_DIRECT") => {
                    methods.push(unavailable(
                        p,
                        crate::units::strip_os_error(&format!("{e:#}")),
                    ));
                    continue;
                }
                Err(e) => return Err(e),
            };
            let tally = tally.into_inner().unwrap_or_default();
            methods.push(measured(p, &tally, &r));
            let stopped = r.interrupted.stopped_early();
            runs.push(r);
            if stopped {
                break;
            }
        }
        let Some(mut r) = combine(runs) else {
            anyhow::bail!(
                "no WAL sync method could be measured on {}: {}",
                cfg.file.path.display(),
                methods
                    .iter()
                    .filter_map(|m| m.unavailable.as_ref().map(|u| format!("{}: {u}", m.name())))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        };
        let failed: u64 = methods.iter().map(|m| m.failed_ops).sum();
        let mut rules = vec![Rule::judge(
            verdict::IO_ERRORS,
            r.totals.errors().max(failed) as f64,
            Comparison::AtMost,
            0.0,
            "errors",
        )];
        rules.extend(r.verdict.take().into_iter().flat_map(|v| v.rules));
        let verdict = Verdict::weighed(rules, r.cost.as_ref());
        r.judge_unless_stopped(
            exec.signals().signalled(),
            verdict,
            "the comparison was interrupted: the methods after the one that was stopped were not measured",
        );
        r.wal_sync = Some(WalSyncResult {
            block_bytes: cfg.block_bytes,
            file_bytes: cfg.file_bytes,
            seconds_per_method: cfg.point_ms as f64 / 1e3,
            fastest: section::fastest(&methods),
            methods,
        });
        exec.save(&opts.results_path, &r)?;
        Ok(r)
    }
}

/// A method the filesystem refused.
fn unavailable(p: &Point, why: String) -> MethodResult {
    MethodResult {
        method: p.method.name().into(),
        direct: p.direct,
        writes_per_sync: p.writes_per_sync,
        unavailable: Some(why),
        ops: 0,
        failed_ops: 0,
        seconds: 0.0,
        ops_per_s: 0.0,
        latency_ns: Default::default(),
    }
}

/// A method's figures from its source's tally and its run's measured time.
fn measured(p: &Point, tally: &Tally, r: &RunResult) -> MethodResult {
    let seconds = r.measured_ms as f64 / 1e3;
    let ops = tally.latency.count();
    MethodResult {
        method: p.method.name().into(),
        direct: p.direct,
        writes_per_sync: p.writes_per_sync,
        unavailable: None,
        ops,
        failed_ops: tally.failed,
        seconds,
        ops_per_s: crate::stats::per_second(ops, seconds),
        latency_ns: tally.latency.summary(),
    }
}

/// One results file of every method's run: the last run's, with every run's classes (each
/// method is a class, over its own measured time), the totals of them all and their measured
/// time added.
fn combine(runs: Vec<RunResult>) -> Option<RunResult> {
    let measured_ms: u64 = runs.iter().map(|r| r.measured_ms).sum();
    let totals: Vec<ClassSummary> = runs.iter().map(|r| r.totals.clone()).collect();
    let mut classes = std::collections::BTreeMap::new();
    for r in &runs {
        for (name, c) in &r.classes {
            classes.insert(
                name.clone(),
                ClassResult {
                    measured_ms: Some(r.measured_ms),
                    ..c.clone()
                },
            );
        }
    }
    let errors: Vec<_> = runs.iter().flat_map(|r| r.errors.clone()).collect();
    // Each device's counters over every method's measured time, so that its rates (counts
    // over `measured_ms`) are of the same window as the methods' own.
    let mut devices: Vec<crate::results::DeviceResult> = Vec::new();
    for d in runs.iter().flat_map(|r| &r.devices) {
        match devices.iter_mut().find(|x| x.name == d.name) {
            Some(x) => x.delta.add(&d.delta),
            None => devices.push(d.clone()),
        }
    }
    for d in &mut devices {
        d.delta.util_pct = if measured_ms > 0 {
            (d.delta.busy_ms as f64 * 100.0 / measured_ms as f64).min(100.0)
        } else {
            0.0
        };
    }
    let count = runs.len();
    let mut r = runs.into_iter().last()?;
    r.devices = devices;
    r.totals = ClassSummary::merge(&totals.iter().collect::<Vec<_>>(), measured_ms as f64 / 1e3);
    r.measured_ms = measured_ms;
    r.classes = classes;
    r.errors = errors;
    if count > 1 {
        r.warnings.push(format!(
            "each method ran on its own for its own time; the device counters are every method's, over their measured times together; the time series and the CPU use are those of the last one ({})",
            r.job.classes.first().map_or("", String::as_str)
        ));
    }
    Some(r)
}

/// Loads a job file's `[wal_sync]` section with the flags of `storlab run` that apply.
pub(crate) fn load(file: &JobText, o: &Overrides) -> Result<Box<dyn Workload>> {
    let parsed: WalSyncFile = crate::job::file::parse_toml(file.path, file.text)?;
    let mut spec = parsed.wal_sync;
    let (mut verify, mut sample_blocks) = (None, None);
    o.apply(Keys {
        duration: None,
        ramp: None,
        interval: &mut spec.interval,
        engine: &mut spec.engine,
        seed: &mut spec.seed,
        destroy_data: &mut spec.destroy_data,
        verify: &mut verify,
        sample_blocks: &mut sample_blocks,
    });
    let cfg = super::resolve(&spec, &file.path.display().to_string())
        .map_err(|e| o.blame(e, file, "wal_sync"))?;
    Ok(Box::new(WalSync { cfg }))
}

/// Where a WAL sync comparison came from, as its results record it.
pub(crate) fn source(path: Option<&std::path::Path>, preset: Option<&str>) -> JobSource {
    JobSource::of(path, preset, |path| JobSource::WalSync { path })
}

/// What the comparison does: the file and the writes, every method it measures, then the
/// engine.
pub(crate) fn describe(cfg: &WalSyncConfig) -> Description {
    let mut d = Description::default();
    if let Some(text) = &cfg.description {
        d.head.push(Line::new("job", text.trim()));
    }
    d.head.push(Line::new(
        "wal sync",
        format!(
            "PostgreSQL's WAL sync methods compared (pg_test_fsync's question): writes of {} at the start of a {} file, each method for {}",
            format_size(cfg.block_bytes),
            format_size(cfg.file_bytes),
            format_ms(cfg.point_ms)
        ),
    ));
    let mut label = "methods";
    for p in &cfg.points {
        let how = match p.method {
            Method::OpenDatasync => "the file opened with O_DSYNC",
            Method::Fdatasync => "fdatasync after the writes",
            Method::Fsync => "fsync after the writes",
            Method::OpenSync => "the file opened with O_SYNC",
            Method::NoSync => "never synced (the baseline)",
        };
        d.head.push(Line::new(
            label,
            format!(
                "{}: {} write{} per operation, {how}, {}",
                p.label(),
                p.writes_per_sync,
                if p.writes_per_sync == 1 { "" } else { "s" },
                if p.direct {
                    "O_DIRECT (where the filesystem takes it)"
                } else {
                    "through the page cache"
                }
            ),
        ));
        label = "";
    }
    d.body.push(Line::new(
        "timing",
        format!(
            "{} methods, each measured for {} ({} in all)",
            format_count(cfg.points.len() as u64),
            format_ms(cfg.point_ms),
            format_ms(cfg.point_ms * cfg.points.len() as u64)
        ),
    ));
    d.body.push(Line::new(
        "engine",
        match cfg.file.engine {
            EngineKind::IoUring => "io_uring, one I/O at a time",
            _ => "psync (one I/O at a time, as PostgreSQL's WAL writer)",
        },
    ));
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of 1 s whose device did `reads` reads and `writes` writes, busy `busy_ms`.
    fn run(reads: u64, writes: u64, busy_ms: u64) -> RunResult {
        let mut r: RunResult =
            serde_json::from_value(crate::results::sample_json("io_uring", &["m"])).unwrap();
        r.measured_ms = 1000;
        r.devices = vec![crate::results::DeviceResult {
            name: "vda".into(),
            model: None,
            delta: crate::stats::host::DiskDelta {
                reads,
                writes,
                busy_ms,
                util_pct: busy_ms as f64 / 10.0,
                ..Default::default()
            },
        }];
        r
    }

    /// The device line is over the same window as the methods: every method's counters over
    /// their measured times together, not the last method's over all of them.
    #[test]
    fn the_device_counters_are_every_methods_over_their_time() {
        let r = combine(vec![
            run(100, 1000, 500),
            run(20, 3000, 900),
            run(0, 2000, 100),
        ])
        .unwrap();
        assert_eq!(r.measured_ms, 3000);
        let d = &r.devices[0].delta;
        assert_eq!((d.reads, d.writes, d.busy_ms), (120, 6000, 1500));
        assert!((d.util_pct - 50.0).abs() < 1e-9);
        crate::workloads::install_views();
        let text = crate::report::console::summary(&r, 0);
        let line = text.lines().find(|l| l.starts_with("device")).unwrap();
        assert!(
            line.contains("vda: 50% busy · 40 reads/s, 2000 writes/s"),
            "{line}"
        );
    }
}
