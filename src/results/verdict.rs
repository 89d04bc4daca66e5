//! Verdicts: threshold rules judged against measured values, giving PASS, FAIL or
//! INCONCLUSIVE with the measured value of every rule. Rules are made by profiles (e.g. the
//! Exchange model); this module only judges, and weighs a failed rule against the host's own
//! delays ([`HostDelay`]): a latency or rate that missed its limit by less than storlab's I/O
//! threads waited for a CPU is the host's doing as much as the storage's, so that rule is
//! inconclusive, not failed (docs/methodology.md, "When the host is the limit").

use super::cost::CostResult;
use serde::{Deserialize, Serialize};

/// The rule on failed I/Os (threshold 0): any error fails a verdict.
pub const IO_ERRORS: &str = "I/O errors";
/// The rule on data verification errors (threshold 0).
pub const VERIFY_ERRORS: &str = "data verification errors";

/// How a measured value is compared with its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// Passes when measured ≤ threshold (latencies, errors).
    AtMost,
    /// Passes when measured ≥ threshold (throughput).
    AtLeast,
}

/// One judged rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// What is judged, e.g. `db1 average database read latency`.
    pub rule: String,
    /// The limit, in `unit`.
    pub threshold: f64,
    /// The measured value, in `unit`.
    pub measured: f64,
    /// `ms`, `IOPS`, `errors`...
    pub unit: String,
    /// How measured and threshold compare.
    pub comparison: Comparison,
    /// Whether it passed.
    pub pass: bool,
    /// What it judges, for the rules a host's delays can bend: a latency's mean, percentile
    /// or maximum, or a rate (schema 1.18; absent: a count, never weighed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measures: Option<Measure>,
    /// Set when the rule failed by less than the host's own delays could account for: why
    /// the failure is the host's as much as the storage's (schema 1.18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inconclusive: Option<String>,
}

/// What a rule that a host can bend measures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// A mean latency.
    MeanLatency,
    /// A percentile of latency (the percentile).
    PercentileLatency(f64),
    /// A maximum latency.
    MaxLatency,
    /// A rate achieved (I/Os or transactions a second).
    Rate,
}

/// The host's own delays to storlab's I/O threads over a measured time, from its cost
/// ([`CostResult`]): what a failed rule is weighed against.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HostDelay {
    /// The mean wait for a CPU of an I/O thread that became ready to run, ns: what the mean
    /// latency of an I/O may include (the thread that reaps it waits that long to run).
    pub mean_wait_ns: f64,
    /// The latest wake-up past its deadline of a storlab thread (an I/O thread's timed sleep,
    /// the collector's at an interval's end), ns: what one I/O's latency (a maximum, a high
    /// percentile) may include.
    pub max_wait_ns: f64,
    /// Share of the I/O threads' time spent waiting for a CPU, percent: what a rate may lose.
    pub wait_pct: f64,
    /// Share of the time some task on the machine waited for a CPU, percent (PSI).
    pub pressure_pct: Option<f64>,
}

impl HostDelay {
    /// The delays of the measured time of a run whose cost is `cost`.
    pub fn of(cost: &CostResult) -> HostDelay {
        let m = &cost.measure;
        HostDelay {
            mean_wait_ns: m.run_queue_wait_mean_ns,
            max_wait_ns: (m
                .threads
                .wake_lateness_max_ns
                .max(cost.probe_lateness_max_ns) as f64)
                .max(m.run_queue_wait_mean_ns),
            wait_pct: m.run_queue_wait_pct,
            pressure_pct: m.cpu_pressure_pct,
        }
    }

    /// Why rule `r`, which failed, may be the host's doing: `None` when its miss is larger
    /// than the host's delays could make it (or it is not a rule a host bends).
    pub fn excuses(&self, r: &Rule) -> Option<String> {
        let measure = r.measures?;
        if r.pass || r.is_integrity() || !r.measured.is_finite() {
            return None;
        }
        let pressure = match self.pressure_pct {
            Some(p) => format!(
                "; the machine's CPUs were contended {} of the time",
                crate::units::format_pct(p)
            ),
            None => String::new(),
        };
        let advice = "run it again on a quieter host, with fewer workers, or with its threads on CPUs of their own (`cpus`)";
        match measure {
            Measure::Rate => {
                let share = self.wait_pct / 100.0;
                let could = r.measured * (1.0 + share);
                (r.comparison == Comparison::AtLeast && share > 0.0 && could >= r.threshold)
                    .then(|| {
                        format!(
                            "storlab's I/O threads waited for a CPU {} of their time{pressure}, enough to miss {} {} by; {advice}",
                            crate::units::format_pct(self.wait_pct),
                            crate::units::format_number(r.threshold - r.measured),
                            r.unit
                        )
                    })
            }
            Measure::MeanLatency | Measure::PercentileLatency(_) | Measure::MaxLatency => {
                let scale = unit_ns(&r.unit)?;
                let (delay, what) = if measure == Measure::MeanLatency {
                    (self.mean_wait_ns, "on average")
                } else {
                    (self.max_wait_ns, "at worst")
                };
                let delay_in_unit = delay / scale;
                (r.comparison == Comparison::AtMost
                    && delay > 0.0
                    && r.measured - delay_in_unit <= r.threshold)
                    .then(|| {
                        format!(
                            "storlab's I/O threads waited {} for a CPU {what} once ready to run, more than the {} the rule missed by{pressure}; {advice}",
                            crate::units::format_ns(delay),
                            crate::units::format_ns((r.measured - r.threshold) * scale),
                        )
                    })
            }
        }
    }
}

/// Nanoseconds in one `unit` of a latency rule (`None`: not a time).
fn unit_ns(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1.0),
        "µs" | "us" => Some(1e3),
        "ms" => Some(1e6),
        "s" => Some(1e9),
        _ => None,
    }
}

impl Rule {
    /// Whether this is a rule on errors (I/O or verification): such a failure is definitive
    /// even for a run that stopped early.
    pub fn is_integrity(&self) -> bool {
        self.rule == IO_ERRORS || self.rule == VERIFY_ERRORS
    }

    /// Judges `measured` against `threshold`.
    pub fn judge(
        rule: impl Into<String>,
        measured: f64,
        comparison: Comparison,
        threshold: f64,
        unit: &str,
    ) -> Rule {
        let pass = match comparison {
            Comparison::AtMost => measured <= threshold,
            Comparison::AtLeast => measured >= threshold,
        } && measured.is_finite();
        Rule {
            rule: rule.into(),
            threshold,
            measured,
            unit: unit.into(),
            comparison,
            pass,
            measures: None,
            inconclusive: None,
        }
    }

    /// The rule, marked as judging `what` (a latency's statistic or a rate): a failure can
    /// then be weighed against the host's delays.
    pub fn measuring(mut self, what: Measure) -> Rule {
        self.measures = Some(what);
        self
    }

    /// Its outcome as views show it: `ok`, `FAIL` or `INCONCLUSIVE`.
    pub fn outcome(&self) -> &'static str {
        if self.pass {
            "ok"
        } else if self.inconclusive.is_some() {
            "INCONCLUSIVE"
        } else {
            "FAIL"
        }
    }
}

/// PASS when every rule passes; INCONCLUSIVE when every rule that failed may be the host's
/// doing; FAIL otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// `PASS`, `FAIL` or `INCONCLUSIVE` (schema 1.18).
    pub result: String,
    /// Every rule, in order.
    pub rules: Vec<Rule>,
}

impl Verdict {
    /// The verdict of `rules` (FAIL when there is none: nothing was shown to pass).
    pub fn of(rules: Vec<Rule>) -> Verdict {
        let pass = !rules.is_empty() && rules.iter().all(|r| r.pass);
        Verdict {
            result: if pass { "PASS" } else { "FAIL" }.into(),
            rules,
        }
    }

    /// The verdict of `rules`, each failed rule weighed against the host's delays of the
    /// run whose cost is `cost` (none: judged as they are).
    pub fn weighed(mut rules: Vec<Rule>, cost: Option<&CostResult>) -> Verdict {
        if let Some(host) = cost.map(HostDelay::of) {
            for r in &mut rules {
                r.inconclusive = host.excuses(r);
            }
        }
        let failed: Vec<&Rule> = rules.iter().filter(|r| !r.pass).collect();
        let result = if rules.is_empty() || failed.iter().any(|r| r.inconclusive.is_none()) {
            "FAIL"
        } else if failed.is_empty() {
            "PASS"
        } else {
            INCONCLUSIVE
        };
        Verdict {
            result: result.into(),
            rules,
        }
    }

    /// Whether the verdict is PASS.
    pub fn passed(&self) -> bool {
        self.result == "PASS"
    }

    /// Whether the verdict is INCONCLUSIVE: no rule failed that the host's delays could not
    /// account for.
    pub fn inconclusive(&self) -> bool {
        self.result == INCONCLUSIVE
    }

    /// What an inconclusive verdict means and what to do, as every view says it (`None` for
    /// any other verdict).
    pub fn inconclusive_note(&self) -> Option<String> {
        self.inconclusive().then(|| {
            "INCONCLUSIVE: every rule that failed missed by less than the host's own delays to storlab's I/O threads (their wait for a CPU) could account for, so the host, not the storage, may have been the limit (exit code 4); run it again on a quieter host, with fewer workers, or with the workers on CPUs of their own (`cpus`)".to_string()
        })
    }
}

/// The result of a verdict whose every failed rule may be the host's doing.
pub const INCONCLUSIVE: &str = "INCONCLUSIVE";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_decides() {
        let ok = Rule::judge("lat", 5.0, Comparison::AtMost, 20.0, "ms");
        let bad = Rule::judge("iops", 90.0, Comparison::AtLeast, 100.0, "IOPS");
        assert!(ok.pass);
        assert!(!bad.pass);
        assert!(Rule::judge("edge", 20.0, Comparison::AtMost, 20.0, "ms").pass);
        assert!(!Rule::judge("nan", f64::NAN, Comparison::AtMost, 20.0, "ms").pass);
        assert!(Verdict::of(vec![ok.clone()]).passed());
        assert!(!Verdict::of(vec![ok, bad]).passed());
        assert!(!Verdict::of(vec![]).passed());
    }

    /// A run's cost whose I/O threads waited `mean_ns` for a CPU on average, `max_ns` at worst,
    /// `pct` % of their time.
    fn cost(mean_ns: f64, max_ns: u64, pct: f64) -> CostResult {
        let mut c = CostResult::default();
        c.measure.run_queue_wait_mean_ns = mean_ns;
        c.measure.threads.wake_lateness_max_ns = max_ns;
        c.measure.run_queue_wait_pct = pct;
        c.measure.cpu_pressure_pct = Some(80.0);
        c
    }

    #[test]
    fn a_failure_within_the_hosts_delays_is_inconclusive_and_one_beyond_them_fails() {
        let mean = |ms: f64| {
            Rule::judge("avg", ms, Comparison::AtMost, 10.0, "ms").measuring(Measure::MeanLatency)
        };
        let max = |ms: f64| {
            Rule::judge("max", ms, Comparison::AtMost, 100.0, "ms").measuring(Measure::MaxLatency)
        };
        let rate = |iops: f64| {
            Rule::judge("rate", iops, Comparison::AtLeast, 100.0, "IOPS").measuring(Measure::Rate)
        };
        // Waited 3 ms on average, 40 ms at worst, 20 % of the time.
        let busy = cost(3e6, 40_000_000, 20.0);
        let v = Verdict::weighed(vec![mean(12.0), max(130.0), rate(90.0)], Some(&busy));
        assert!(v.inconclusive(), "{v:?}");
        assert!(v.rules.iter().all(|r| r.inconclusive.is_some()));
        assert_eq!(v.rules[0].outcome(), "INCONCLUSIVE");
        assert!(v.inconclusive_note().is_some());
        let why = v.rules[0].inconclusive.as_deref().unwrap();
        assert!(why.contains("3.00 ms") && why.contains("2.00 ms"), "{why}");
        // A miss larger than the delays stays a failure, and so the verdict.
        let v = Verdict::weighed(vec![mean(14.0), max(130.0)], Some(&busy));
        assert_eq!(v.result, "FAIL");
        assert_eq!(v.rules[0].outcome(), "FAIL");
        assert!(v.rules[1].inconclusive.is_some());
        assert!(!Verdict::weighed(vec![rate(70.0)], Some(&busy)).inconclusive());
        // A pass stays a pass, whatever the host did.
        let v = Verdict::weighed(vec![mean(9.0), max(99.0), rate(100.0)], Some(&busy));
        assert!(v.passed() && v.rules.iter().all(|r| r.inconclusive.is_none()));
        // A quiet host excuses nothing but a miss within its few microseconds.
        let quiet = cost(5e3, 50_000, 0.01);
        assert_eq!(
            Verdict::weighed(vec![mean(10.1)], Some(&quiet)).result,
            "FAIL"
        );
        assert!(Verdict::weighed(vec![mean(10.000_001)], Some(&quiet)).inconclusive());
    }

    #[test]
    fn counts_errors_and_unmarked_rules_are_never_excused() {
        let busy = cost(1e9, 10_000_000_000, 100.0);
        let errors = Rule::judge(IO_ERRORS, 1.0, Comparison::AtMost, 0.0, "errors")
            .measuring(Measure::MeanLatency);
        let unmarked = Rule::judge("lat", 11.0, Comparison::AtMost, 10.0, "ms");
        let not_a_time = Rule::judge("tasks", 11.0, Comparison::AtMost, 10.0, "tasks")
            .measuring(Measure::MaxLatency);
        for r in [errors, unmarked, not_a_time] {
            let v = Verdict::weighed(vec![r], Some(&busy));
            assert_eq!(v.result, "FAIL", "{v:?}");
        }
        // Without a cost (an older file, a fake run) rules are judged as they are.
        let r = Rule::judge("lat", 11.0, Comparison::AtMost, 10.0, "ms")
            .measuring(Measure::MeanLatency);
        assert_eq!(Verdict::weighed(vec![r], None).result, "FAIL");
        assert_eq!(Verdict::weighed(vec![], Some(&busy)).result, "FAIL");
    }
}
