//! The report renderers on fixed results files (`tests/fixtures/*.json`, produced by real runs
//! of this binary and committed): the HTML report (`html`), the comparison (`comparison`), and
//! the CSV and Markdown tables (`tables`). The tests snapshot their STRUCTURE, never their numbers: the `<h2>` headings in
//! order, the charts (`<figure class="chart" data-chart="ID">`) in order, the series each chart
//! draws (`data-series="NAME"`), the table headers and how many rows each table has. Every
//! drawn series must have real geometry (a polyline with points, a path, a bar with a size) and
//! no NaN or infinity in it; no page may load anything from anywhere (`scanner` reads the
//! pages; the structure each fixture's page must have is below).
//!
//! A real browser then loads every page (`browser`): headless Chromium prints each to PNG and PDF and dumps
//! its DOM, in which the charts must be there again. The reports of a run and of an Exchange
//! validation must fit 1280 and 800 px wide (`fit`): no element wider than its container
//! outside a sideways-scrolling table wrapper, no sideways scrolling page. Without Chromium those tests skip
//! (`harness::skip`), except under CI (`CI=true`), where `.ci/run` installs it and its absence
//! is a failure.
//!
//! The fixtures: `plain.json` (a one-line 70 % read run, queue depth 1) and `plain-b.json` (the
//! same at queue depth 8), `steps.json` (a `[cycle]` over two block sizes, `repeat = 3`),
//! `curve.json` (a rate curve at 25 % and 50 % on the null engine) and `exchange.json` (an
//! Exchange validation with two databases and a PASS verdict) and `steady.json` (a run until
//! steady state, in rounds), `tier.json` (a cache tier in front of a file) and `compare.json`
//! (the maximum-mailboxes search without a cache and with one, `--compare-cache`) and
//! `hosts.json` (a run of three ranks on MPI, on one host named `vm`). They ran on a virtual disk
//! `vda`, which is why the device charts and columns are named so.
//!
//! `groups.json` (a fio file of two stonewall groups), `backup.json` (the Exchange backup
//! test) and `users.json` (20 simulated users) complete the set.
//!
//! Regenerating them (when the results schema changes: the loader is strict):
//! `tests/fixtures/regenerate.sh` (`MPI=1` for `hosts.json` too) runs every command, with the
//! job files it writes, and copies the results here.

mod browser;
mod comparison;
mod fit;
mod html;
mod scanner;
mod tables;

use crate::harness::{Outcome, run_in, scratch};
use scanner::Expected;
use std::path::{Path, PathBuf};

// ---- The fixtures -----------------------------------------------------------------------

/// Every fixture, by file stem.
const FIXTURES: [&str; 12] = [
    "plain", "plain-b", "steps", "curve", "exchange", "steady", "tier", "compare", "hosts",
    "groups", "backup", "users",
];

/// `tests/fixtures/NAME.json`.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.json"))
}

#[test]
fn fixtures_are_small_and_load() {
    let dir = scratch();
    for name in FIXTURES {
        let path = fixture(name);
        let size = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
            .len();
        assert!(size < 300 * 1024, "fixture {name} is {size} bytes");
        let out = run_in(dir.path(), [Path::new("report"), &path]);
        out.expect_ok();
        assert!(
            !out.stdout.trim().is_empty(),
            "`storlab report {name}.json` printed nothing"
        );
    }
}

// ---- Rendering --------------------------------------------------------------------------

/// `storlab report FIXTURE -o DIR/NAME.html`; the HTML.
fn render_report(dir: &Path, name: &str) -> (PathBuf, String) {
    let out = dir.join(format!("{name}.html"));
    run_in(
        dir,
        [Path::new("report"), &fixture(name), Path::new("-o"), &out],
    )
    .expect_ok();
    let html = std::fs::read_to_string(&out)
        .unwrap_or_else(|e| panic!("no HTML report {}: {e}", out.display()));
    (out, html)
}

/// `storlab compare A B --label ... [-o DIR/cmp.html] [extra]`.
fn compare(dir: &Path, files: &[&str], labels: &[&str], html: bool, extra: &[&str]) -> Outcome {
    let mut args: Vec<String> = vec!["compare".into()];
    args.extend(files.iter().map(|f| fixture(f).display().to_string()));
    for l in labels {
        args.extend(["--label".to_string(), l.to_string()]);
    }
    if html {
        args.extend(["-o".into(), dir.join("cmp.html").display().to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    run_in(dir, &args)
}

// ---- Expected structure -----------------------------------------------------------------

/// The CPU chart's series, and the fixtures' one device (they ran on `vda`).
const CPU_SERIES: &[&str] = &["machine busy", "machine iowait (idle)", "storlab user+sys"];
const DEVICES: &[&str] = &["vda"];

const PLAIN: Expected = Expected {
    headings: &["Warnings", "Classes", "Charts", "Targets", "Devices", "CPU"],
    charts: &[
        ("iops-over-time", &["total"]),
        ("mbps-over-time", &["total"]),
        (
            "latency-over-time",
            &[
                "worker read mean",
                "worker read p99",
                "worker write mean",
                "worker write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        ("latency-distribution", &["worker read", "worker write"]),
    ],
};

const STEPS: Expected = Expected {
    headings: &[
        "Warnings",
        "Steps",
        "Classes across the steps",
        "Charts",
        "Targets",
        "Devices",
        "CPU",
    ],
    charts: &[
        ("steps-iops", &["total"]),
        ("steps-mbps", &["total"]),
        ("iops-over-time", &["total"]),
        ("mbps-over-time", &["total"]),
        (
            "latency-over-time",
            &[
                "worker0 read mean",
                "worker0 read p99",
                "worker0 write mean",
                "worker0 write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        ("latency-distribution", &["worker0 read", "worker0 write"]),
    ],
};

const CURVE: Expected = Expected {
    headings: &[
        "Warnings",
        "Steps",
        "Classes across the steps",
        "Charts",
        "Targets",
        "Devices",
        "CPU",
    ],
    charts: &[
        ("curve-latency", &["mean", "p99"]),
        ("iops-over-time", &["total"]),
        ("mbps-over-time", &["total"]),
        ("latency-over-time", &["db read mean", "db read p99"]),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        ("latency-distribution", &["db read"]),
    ],
};

const STEADY: Expected = Expected {
    headings: &[
        "Warnings",
        "Steps",
        "Classes across the steps",
        "Charts",
        "Targets",
        "Devices",
        "CPU",
    ],
    charts: &[
        ("steady-rounds", &["rounds", "window"]),
        ("iops-over-time", &["total"]),
        ("mbps-over-time", &["total"]),
        (
            "latency-over-time",
            &[
                "worker0 read mean",
                "worker0 read p99",
                "worker0 write mean",
                "worker0 write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        ("latency-distribution", &["worker0 read", "worker0 write"]),
    ],
};

/// A write-back cache tier in front of a file (`tier.json`): its section and charts first.
const TIER: Expected = Expected {
    headings: &[
        "Warnings",
        "Cache tier: lun",
        "Classes",
        "Charts",
        "Targets",
        "Devices",
        "CPU",
    ],
    charts: &[
        ("tier-hits-0", &["read hit %"]),
        ("tier-latency-0", &["backing read mean", "cache read mean"]),
        ("tier-traffic-0", &["filled MB/s", "written back MB/s"]),
        ("iops-over-time", &["total"]),
        ("mbps-over-time", &["total"]),
        (
            "latency-over-time",
            &[
                "db read mean",
                "db read p99",
                "db write mean",
                "db write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        ("latency-distribution", &["db read", "db write"]),
    ],
};

/// The Exchange classes: per database, its reads, writes, log writes and maintenance.
const EXCHANGE_CLASSES: &[&str] = &[
    "db1/log-write",
    "db1/maintenance",
    "db1/read",
    "db1/write",
    "db2/log-write",
    "db2/maintenance",
    "db2/read",
    "db2/write",
    "total",
];

const EXCHANGE: Expected = Expected {
    headings: &[
        "Warnings",
        "Exchange 2010 performance test",
        "Databases",
        "Verdict rules",
        "Classes",
        "Charts",
        "Targets",
        "Devices",
        "CPU",
    ],
    charts: &[
        ("iops-over-time", EXCHANGE_CLASSES),
        ("mbps-over-time", EXCHANGE_CLASSES),
        (
            "latency-over-time",
            &[
                "db1/log-write write mean",
                "db1/log-write write p99",
                "db1/maintenance read mean",
                "db1/maintenance read p99",
                "db1/read read mean",
                "db1/read read p99",
                "db1/write write mean",
                "db1/write write p99",
                "db2/log-write write mean",
                "db2/log-write write p99",
                "db2/maintenance read mean",
                "db2/maintenance read p99",
                "db2/read read mean",
                "db2/read read p99",
                "db2/write write mean",
                "db2/write write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        (
            "latency-distribution",
            &[
                "db1/log-write write",
                "db1/maintenance read",
                "db1/read read",
                "db1/write write",
                "db2/log-write write",
                "db2/maintenance read",
                "db2/read read",
                "db2/write write",
            ],
        ),
    ],
};

/// The database classes of a one-database validation with a cache (no maintenance).
const CACHED_DB_CLASSES: &[&str] = &["db1/log-write", "db1/read", "db1/write", "total"];

/// `--find-max-mailboxes --compare-cache` (`compare.json`): the comparison after the trials,
/// then the tier.
const COMPARE: Expected = Expected {
    headings: &[
        "Warnings",
        "Exchange 2010 performance test",
        "Databases",
        "Trials",
        "Cache off and on",
        "Cache tier: db1",
        "Verdict rules",
        "Classes",
        "Charts",
        "Targets",
        "Devices",
        "CPU",
    ],
    charts: &[
        ("cache-mailboxes", &["maximum mailboxes that pass"]),
        ("cache-iops", &["achieved transactional IOPS"]),
        ("tier-hits-0", &["read hit %"]),
        ("tier-latency-0", &["backing read mean", "cache read mean"]),
        ("tier-traffic-0", &["filled MB/s", "written back MB/s"]),
        ("iops-over-time", CACHED_DB_CLASSES),
        ("mbps-over-time", CACHED_DB_CLASSES),
        (
            "latency-over-time",
            &[
                "db1/log-write write mean",
                "db1/log-write write p99",
                "db1/read read mean",
                "db1/read read p99",
                "db1/write write mean",
                "db1/write write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", DEVICES),
        (
            "latency-distribution",
            &["db1/log-write write", "db1/read read", "db1/write write"],
        ),
    ],
};

/// A run over three ranks on MPI (`hosts.json`): the hosts table, the merged figures.
const HOSTS: Expected = Expected {
    headings: &[
        "Warnings",
        "Hosts",
        "Verdict rules",
        "Classes",
        "Charts",
        "Targets",
        "CPU",
    ],
    charts: &[
        ("hosts-iops", HOST_SERIES),
        ("hosts-p99", HOST_SERIES),
        ("iops-over-time", &["total"]),
        ("mbps-over-time", &["total"]),
        (
            "latency-over-time",
            &[
                "db read mean",
                "db read p99",
                "db write mean",
                "db write p99",
            ],
        ),
        ("cpu-over-time", CPU_SERIES),
        ("device-util-over-time", &["vm/vda"]),
        ("latency-distribution", &["db read", "db write"]),
    ],
};

/// The hosts of `hosts.json`, one series each.
const HOST_SERIES: &[&str] = &["rank 0 on vm", "rank 1 on vm", "rank 2 on vm"];

/// Labels of the plain comparison.
const CMP_LABELS: [&str; 2] = ["qd1", "qd8"];

/// plain.json against plain-b.json: no steps, so no step charts.
const COMPARISON: Expected = Expected {
    headings: &["totals read", "totals write", "Charts"],
    charts: &[
        ("cmp-iops-over-time", &CMP_LABELS),
        ("cmp-latency-distribution", &CMP_LABELS),
    ],
};

/// steps.json against itself (labels a and b): a table and a chart per step metric.
const STEPS_COMPARISON: Expected = Expected {
    headings: &[
        "totals read",
        "totals write",
        "steps: IOPS",
        "steps: MB/s",
        "steps: mean",
        "steps: p99",
        "Charts",
    ],
    charts: &[
        ("cmp-steps-iops", &["a", "b"]),
        ("cmp-steps-mbps", &["a", "b"]),
        ("cmp-iops-over-time", &["a", "b"]),
        ("cmp-latency-distribution", &["a", "b"]),
    ],
};

/// What each fixture's report must look like.
fn expected(name: &str) -> &'static Expected<'static> {
    match name {
        "plain" | "plain-b" => &PLAIN,
        "steps" => &STEPS,
        "curve" => &CURVE,
        "exchange" => &EXCHANGE,
        "steady" => &STEADY,
        "tier" => &TIER,
        "compare" => &COMPARE,
        "hosts" => &HOSTS,
        _ => unreachable!("no fixture {name}"),
    }
}
