//! The backup and recovery tests: each database read once sequentially, as fast as it can
//! be (the time of a full backup scaled to the databases' real size), and log files replayed
//! with the page reads and writes their replay causes; each judged on finishing its work.

use super::validation::{Context, Stage};
use super::{RECOVERY_READS_PER_LOG, RECOVERY_WRITES_PER_LOG};
use crate::results::RunResult;
use crate::results::verdict::Verdict;
use crate::workloads::exchange as model;
use crate::workloads::exchange::section::{BackupFigures, RecoveryFigures};
use anyhow::Result;

impl Context<'_> {
    /// The backup test.
    pub(super) fn backup(&mut self) -> Result<RunResult> {
        let cfg = self.cfg;
        let job = model::backup_job(cfg, self.db_bytes);
        let mut r = self.exec(&job, Stage::Test, "the backup test")?;
        // Each database's rate over its own reader's time (readers finish at different times).
        let per_db: Vec<f64> = (0..cfg.databases)
            .map(|db| {
                let name = format!("db{}-backup", db + 1);
                r.workers
                    .iter()
                    .find(|w| w.name == name)
                    .map(|w| w.totals.read.bytes_per_s / 1e6)
                    .unwrap_or(0.0)
            })
            .collect();
        // All databases together: bytes over the time until the last reader finished.
        let total = r.totals.read.bytes_per_s / 1e6;
        let read: u64 = r.totals.read.bytes;
        let all_bytes = self.db_bytes * cfg.databases as u64;
        let complete = read >= all_bytes;
        let databases_complete = (0..cfg.databases)
            .filter(|db| {
                let name = format!("db{}-backup", db + 1);
                (r.workers.iter())
                    .find(|w| w.name == name)
                    .is_some_and(|w| w.totals.read.bytes >= self.db_bytes)
            })
            .count() as u32;
        let errors = r.totals.errors();
        // No transactional I/O: the per-database figures are the backup's own, above.
        let mut ex = self.summary(cfg.mailboxes, 0.0, 0.0, 0, Vec::new(), Vec::new(), None);
        let read_seconds = r.measured_ms as f64 / 1e3;
        let real_bytes = (all_bytes as f64 / cfg.capacity_fraction) as u64;
        let at_rate = |bytes: u64| {
            if total > 0.0 {
                bytes as f64 / (total * 1e6)
            } else {
                0.0
            }
        };
        ex.backup = Some(BackupFigures {
            block_size_bytes: cfg.backup_block_bytes,
            mb_per_s_per_database: per_db,
            mb_per_s_total: total,
            full_backup_seconds: if complete {
                read_seconds
            } else {
                at_rate(all_bytes)
            },
            complete,
            read_bytes: read,
            read_seconds,
            databases_complete,
            real_bytes,
            full_backup_real_seconds: at_rate(real_bytes),
        });
        let verdict = completion_verdict(
            &r,
            errors,
            ("databases read completely", "databases"),
            (databases_complete as f64, cfg.databases as f64),
        );
        self.judge(&mut r, verdict);
        r.exchange = Some(ex);
        self.exec.save(&self.opts.results_path, &r)?;
        Ok(r)
    }

    /// The recovery test.
    pub(super) fn recovery(&mut self) -> Result<RunResult> {
        let cfg = self.cfg;
        let job = model::recovery_job(cfg, self.db_bytes);
        let mut r = self.exec(&job, Stage::Test, "the recovery test")?;
        let dbs = model::database_figures(cfg, self.db_bytes, &r.classes);
        let errors = r.totals.errors();
        let seconds = r.measured_ms as f64 / 1e3;
        let log_reads: u64 = (0..cfg.databases)
            .filter_map(|db| r.classes.get(&model::class_name(db, "log-read")))
            .map(|c| c.read.ops)
            .sum();
        let expected_logs = cfg.log_files as u64 * cfg.databases as u64;
        let mut ex = self.summary(cfg.mailboxes, 0.0, 0.0, 0, dbs, Vec::new(), None);
        ex.recovery = Some(RecoveryFigures {
            log_files: cfg.log_files,
            reads_per_log_file: RECOVERY_READS_PER_LOG,
            writes_per_log_file: RECOVERY_WRITES_PER_LOG,
            seconds,
            seconds_per_log_file: seconds / cfg.log_files as f64,
        });
        let verdict = completion_verdict(
            &r,
            errors,
            ("log files replayed", "log files"),
            (log_reads.min(expected_logs) as f64, expected_logs as f64),
        );
        self.judge(&mut r, verdict);
        r.exchange = Some(ex);
        self.exec.save(&self.opts.results_path, &r)?;
        Ok(r)
    }
}

/// The verdict of a test that must finish its work without errors (backup, recovery), and
/// without verification errors when it verifies: `what` (the rule, in `unit`) done of all.
fn completion_verdict(
    r: &RunResult,
    errors: u64,
    (what, unit): (&str, &str),
    (done, all): (f64, f64),
) -> Verdict {
    use crate::results::verdict::{Comparison, Rule};
    let mut rules = vec![
        Rule::judge(
            crate::results::verdict::IO_ERRORS,
            errors as f64,
            Comparison::AtMost,
            0.0,
            "errors",
        ),
        Rule::judge(what, done, Comparison::AtLeast, all, unit),
    ];
    rules.extend(crate::run::verification_rule(r));
    Verdict::of(rules)
}
