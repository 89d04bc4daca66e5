//! The etcd check as a workload: its description (from the same job it runs), the run, the
//! figures of its results section and its rules, and the way in from a job file.

use super::section::{self, EtcdResult};
use super::{CLASS, EtcdConfig, EtcdFile};
use crate::job::Job;
use crate::results::description::{self, Description, Line};
use crate::results::verdict::{self, Comparison, Measure, Rule, Verdict};
use crate::results::{JobSource, RunResult};
use crate::run::{Execute, FromAccess, RunOptions, Workload};
use crate::units::{format_count, format_ms, format_ns, format_number, format_size};
use crate::workloads::{JobText, Keys, Overrides};
use anyhow::Result;

/// The rule on the 99th percentile of the sync time.
pub(crate) const P99_RULE: &str = "99th percentile of fdatasync time";
/// The rule on the rate of synced writes.
pub(crate) const RATE_RULE: &str = "synced writes per second";

/// An etcd check ready to run.
#[derive(Debug)]
pub(crate) struct Etcd {
    /// Its configuration, resolved.
    pub cfg: EtcdConfig,
}

impl Workload for Etcd {
    fn kind(&self) -> &'static str {
        "etcd"
    }

    fn describe(&self) -> Description {
        describe(&self.cfg)
    }

    fn jobs(&self) -> Vec<Job> {
        vec![self.cfg.job()]
    }

    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> Result<RunResult> {
        let job = self.cfg.job();
        let mut r = exec.execute(&job, opts, &FromAccess)?;
        let figures = figures(&self.cfg, &r);
        let mut rules = rules(&figures, &r);
        rules.extend(r.verdict.take().into_iter().flat_map(|v| v.rules));
        let verdict = Verdict::weighed(rules, r.cost.as_ref());
        r.judge_unless_stopped(
            exec.signals().signalled(),
            verdict,
            "the check was interrupted: it gives no verdict (only a check that runs to the end is judged)",
        );
        if figures.writes < figures.planned_writes && !r.interrupted.stopped_early() {
            r.warnings.push(format!(
                "the log file was not written to its end: {} of {} writes in the {} the check may take; its figures are over the writes made (give a longer --duration or a smaller --file-size to write it all)",
                format_count(figures.writes),
                format_count(figures.planned_writes),
                format_ms(self.cfg.max_duration_ms)
            ));
        }
        r.etcd = Some(figures);
        exec.save(&opts.results_path, &r)?;
        Ok(r)
    }
}

/// The section's figures from what ran.
fn figures(cfg: &EtcdConfig, r: &RunResult) -> EtcdResult {
    let class = r.classes.get(CLASS);
    let (write, flush) = match class {
        Some(c) => (c.write.clone(), c.flush.clone()),
        None => Default::default(),
    };
    EtcdResult {
        write_bytes: cfg.write_bytes,
        file_bytes: cfg.file_bytes,
        planned_writes: cfg.planned_writes(),
        writes: write.ops,
        syncs: flush.ops,
        seconds: r.measured_ms as f64 / 1e3,
        syncs_per_s: flush.iops,
        sync_latency_ns: flush.latency_ns,
        write_latency_ns: write.latency_ns,
        sync_p99_limit_ns: cfg.sync_p99_ns,
        min_syncs_per_s: cfg.min_rate,
        sync_histogram: section::bins_of(&flush),
    }
}

/// The check's rules: the sync time's 99th percentile, the rate, and no failed I/O.
fn rules(f: &EtcdResult, r: &RunResult) -> Vec<Rule> {
    vec![
        Rule::judge(
            P99_RULE,
            f.sync_latency_ns.p99 as f64 / 1e6,
            Comparison::AtMost,
            f.sync_p99_limit_ns as f64 / 1e6,
            "ms",
        )
        .measuring(Measure::PercentileLatency(99.0)),
        Rule::judge(
            RATE_RULE,
            f.syncs_per_s,
            Comparison::AtLeast,
            f.min_syncs_per_s,
            "writes/s",
        )
        .measuring(Measure::Rate),
        Rule::judge(
            verdict::IO_ERRORS,
            r.totals.errors() as f64,
            Comparison::AtMost,
            0.0,
            "errors",
        ),
    ]
}

/// Loads a job file's `[etcd]` section with the flags of `storlab run` that apply.
pub(crate) fn load(file: &JobText, o: &Overrides) -> Result<Box<dyn Workload>> {
    let parsed: EtcdFile = crate::job::file::parse_toml(file.path, file.text)?;
    let mut spec = parsed.etcd;
    let (mut verify, mut sample_blocks) = (None, None);
    o.apply(Keys {
        duration: Some(&mut spec.duration),
        ramp: None,
        interval: &mut spec.interval,
        engine: &mut spec.engine,
        seed: &mut spec.seed,
        destroy_data: &mut spec.destroy_data,
        verify: &mut verify,
        sample_blocks: &mut sample_blocks,
    });
    let cfg = super::resolve(&spec, &file.path.display().to_string())
        .map_err(|e| o.blame(e, file, "etcd"))?;
    Ok(Box::new(Etcd { cfg }))
}

/// Where an etcd check came from, as its results record it.
pub(crate) fn source(path: Option<&std::path::Path>, preset: Option<&str>) -> JobSource {
    JobSource::of(path, preset, |path| JobSource::Etcd { path })
}

/// What the check does: the log written, the limits, then the worker, timing and engine.
pub(crate) fn describe(cfg: &EtcdConfig) -> Description {
    let job = cfg.job();
    let mut d = Description::default();
    if let Some(text) = &cfg.description {
        d.head.push(Line::new("job", text.trim()));
    }
    d.head.push(Line::new(
        "etcd",
        format!(
            "a new {} log file written once from its start in {} writes of {} bytes, each followed by fdatasync (as etcd appends to its WAL)",
            format_size(cfg.file_bytes),
            format_count(cfg.planned_writes()),
            cfg.write_bytes
        ),
    ));
    d.head.push(Line::new(
        "limits",
        format!(
            "99th percentile of fdatasync time at most {}; at least {} synced writes/s{}",
            format_ns(cfg.sync_p99_ns as f64),
            format_number(cfg.min_rate),
            if cfg.heavy {
                " (a heavily loaded cluster)"
            } else {
                ""
            }
        ),
    ));
    d.body = description::job_body(&job);
    d
}
