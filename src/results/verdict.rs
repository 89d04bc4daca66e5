//! Verdicts: threshold rules judged against measured values, giving PASS or FAIL with the
//! measured value of every rule. Rules are made by profiles (e.g. the Exchange model); this
//! module only judges.

use serde::{Deserialize, Serialize};

/// The rule on failed I/Os (threshold 0): any error fails a verdict.
pub const IO_ERRORS: &str = "I/O errors";
/// The rule on data verification errors (threshold 0).
pub const VERIFY_ERRORS: &str = "data verification errors";
/// The rule of a verifying run whose final read-back was cut short: blocks written and never
/// read back.
pub const NOT_READ_BACK: &str = "written blocks the read-back did not check";

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
        }
    }
}

/// PASS when every rule passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// `PASS` or `FAIL`.
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

    /// Whether the verdict is PASS.
    pub fn passed(&self) -> bool {
        self.result == "PASS"
    }
}

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
}
