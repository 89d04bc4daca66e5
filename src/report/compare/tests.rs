//! Tests of comparisons: differences, noise, regressions, tables and the page.

use super::*;
use serde_json::{Value, json};

fn dir(iops: f64, p99: u64) -> Value {
    let ops = (iops * 2.0) as u64;
    json!({
        "ops": ops, "bytes": ops * 4096, "errors": 0, "iops": iops,
        "bytes_per_s": iops * 4096.0,
        "latency_ns": {
            "min": 10, "mean": p99 as f64 / 3.0, "max": p99 * 10, "stddev": 1.0,
            "p50": p99 / 4, "p90": p99 / 2, "p95": p99 * 2 / 3, "p99": p99,
            "p99_9": p99 * 2, "p99_99": p99 * 3
        }
    })
}

fn run(engine: &str, iops: f64, p99: u64) -> RunResult {
    let class = json!({"read": dir(iops, p99), "write": dir(0.0, 0), "flush": dir(0.0, 0)});
    let mut with_durability = class.clone();
    with_durability["write_durability"] = json!("none");
    let mut v = crate::results::sample_json(engine, &["worker"]);
    v["totals"] = class;
    v["classes"] = json!({"worker": with_durability});
    serde_json::from_value(v).expect("a valid results file")
}

fn pair(a: RunResult, b: RunResult) -> Vec<(String, RunResult)> {
    vec![("a".into(), a), ("b".into(), b)]
}

#[test]
fn identical_runs_are_noise() {
    let c = compare(
        &pair(run("io_uring", 1000.0, 800), run("io_uring", 1000.0, 800)),
        2.0,
    );
    assert!(c.job_differences.is_empty());
    assert!(!c.tables.is_empty());
    assert!(
        c.tables
            .iter()
            .flat_map(|t| &t.rows)
            .flat_map(|r| &r.others)
            .all(|x| x.mark == Mark::Noise)
    );
    assert!(regressions(&c, 10.0).is_empty());
    assert!(regressions(&c, 0.0).is_empty());
    assert!(console(&c).contains("noise"));
}

#[test]
fn slower_run_is_worse_and_a_regression() {
    let c = compare(
        &pair(run("io_uring", 1000.0, 1000), run("io_uring", 800.0, 1300)),
        2.0,
    );
    let t = &c.tables[0];
    assert_eq!(t.title, "totals read");
    let row = |n: &str| t.rows.iter().find(|r| r.name == n).unwrap();
    let iops = row("IOPS").others[0];
    assert!((iops.diff_pct + 20.0).abs() < 1e-9);
    assert_eq!(iops.mark, Mark::Worse);
    let p99 = row("p99").others[0];
    assert!((p99.diff_pct - 30.0).abs() < 1e-9);
    assert_eq!(p99.mark, Mark::Worse);
    let found = regressions(&c, 10.0);
    assert!(
        found.iter().any(|l| l.starts_with("totals read IOPS:")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|l| l.starts_with("totals read p99:")),
        "{found:?}"
    );
    assert!(regressions(&c, 50.0).is_empty());
    // The other way round it is better.
    let c = compare(
        &pair(run("io_uring", 800.0, 1300), run("io_uring", 1000.0, 1000)),
        2.0,
    );
    assert_eq!(c.tables[0].rows[0].others[0].mark, Mark::Better);
    assert!(regressions(&c, 10.0).is_empty());
    // A large noise threshold hides it.
    let c = compare(
        &pair(run("io_uring", 1000.0, 1000), run("io_uring", 800.0, 1300)),
        40.0,
    );
    assert!(regressions(&c, 10.0).is_empty());
}

#[test]
fn job_differences_are_listed() {
    let c = compare(
        &pair(run("io_uring", 1000.0, 800), run("psync", 1000.0, 800)),
        2.0,
    );
    assert_eq!(
        c.job_differences,
        vec!["engine: io_uring vs psync".to_string()]
    );
    assert!(console(&c).contains("the jobs differ"));
    let page = html(&c);
    assert!(page.contains("engine: io_uring vs psync"));
    assert!(page.contains("class=\"noise\""));
    for bad in ["<script", "src=", "href="] {
        assert!(!page.contains(bad), "{bad}");
    }
}

#[test]
fn repeated_steps_use_their_own_spread() {
    let spread = |mean: f64, half: f64| Spread {
        n: 3,
        mean,
        stddev: half / 2.0,
        min: mean - half,
        max: mean + half,
        ci95_low: mean - half,
        ci95_high: mean + half,
        cv_pct: half / 2.0 / mean * 100.0,
    };
    assert!((own_spread_pct(&spread(1000.0, 200.0)) - 10.0).abs() < 1e-9);
    assert_eq!(own_spread_pct(&Spread::default()), 0.0);
    let step = |iops: f64| {
        let r = run("io_uring", iops, 1000);
        StepResult {
            label: "bs=4KiB".into(),
            totals: r.totals.clone(),
            repetitions: Some(crate::results::steps::Repetitions {
                iops: spread(iops, iops * 0.2),
                ..Default::default()
            }),
            ..Default::default()
        }
    };
    let mut a = run("io_uring", 1000.0, 1000);
    let mut b = run("io_uring", 1000.0, 1000);
    a.steps = Some(vec![step(1000.0)]);
    b.steps = Some(vec![step(950.0)]);
    let c = compare(&pair(a, b), 2.0);
    let t = c.tables.iter().find(|t| t.title == "steps: IOPS").unwrap();
    assert_eq!(t.rows[0].others[0].mark, Mark::Noise);
    assert_eq!(c.steps, vec!["bs=4KiB".to_string()]);
    let page = html(&c);
    assert!(page.contains("data-chart=\"cmp-steps-iops\""));
    assert!(page.contains("data-chart=\"cmp-steps-mbps\""));
    assert!(page.contains("data-series=\"b\""));
    // Beyond the repetitions' spread it is a change.
    let mut a = run("io_uring", 1000.0, 1000);
    let mut b = run("io_uring", 1000.0, 1000);
    a.steps = Some(vec![step(1000.0)]);
    b.steps = Some(vec![step(700.0)]);
    let c = compare(&pair(a, b), 2.0);
    let t = c.tables.iter().find(|t| t.title == "steps: IOPS").unwrap();
    assert_eq!(t.rows[0].others[0].mark, Mark::Worse);
    assert!(
        regressions(&c, 10.0)
            .iter()
            .any(|l| l.starts_with("steps: IOPS step bs=4KiB"))
    );
}

/// `run` over hosts `names`, each with `iops[i]` read IOPS and p99 `p99`.
fn over_hosts(names: &[&str], iops: &[f64], p99: u64) -> RunResult {
    let mut r = run("io_uring", iops.iter().sum(), p99);
    r.hosts = names
        .iter()
        .zip(iops)
        .enumerate()
        .map(|(rank, (host, &i))| crate::results::hosts::HostResult {
            rank,
            host: host.to_string(),
            present: true,
            totals: run("io_uring", i, p99).totals,
            ..Default::default()
        })
        .collect();
    r
}

#[test]
fn hosts_are_compared_side_by_side_when_the_runs_have_the_same_ones() {
    let a = over_hosts(&["ex1", "ex2"], &[1000.0, 1000.0], 800);
    let b = over_hosts(&["ex1", "ex2"], &[1000.0, 500.0], 800);
    let c = compare(&pair(a.clone(), b), 2.0);
    let t = c
        .tables
        .iter()
        .find(|t| t.title == "hosts: read IOPS")
        .expect("a hosts table");
    let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["rank 0 (ex1)", "rank 1 (ex2)"]);
    assert_eq!(t.rows[0].others[0].mark, Mark::Noise);
    assert_eq!(t.rows[1].others[0].mark, Mark::Worse, "ex2 halved");
    let other = over_hosts(&["ex1", "ex3"], &[1000.0, 1000.0], 800);
    let c = compare(&pair(a, other), 2.0);
    assert!(!c.tables.iter().any(|t| t.title.starts_with("hosts:")));
    assert!(
        c.notes.iter().any(|n| n.contains("not the same ranks"))
            || c.notes
                .iter()
                .any(|n| n.contains("do not have the same ranks")),
        "{:?}",
        c.notes
    );
}

#[test]
fn labels_and_differences_are_text_on_the_page() {
    const HOSTILE: &str = "<img src=x onerror=document.title='pwned'>\"><script>x</script>";
    const ESCAPED: &str =
        "&lt;img src=x onerror=document.title='pwned'&gt;&quot;&gt;&lt;script&gt;x&lt;/script&gt;";
    // A label (a file's name) and a class (from a results file) that are markup.
    let mut a = run("io_uring", 1000.0, 800);
    let class = a.classes["worker"].clone();
    a.classes.insert(HOSTILE.to_string(), class);
    let runs = vec![
        (HOSTILE.to_string(), a),
        ("b".to_string(), run("io_uring", 1000.0, 800)),
    ];
    let c = compare(&runs, 2.0);
    let page = html(&c);
    assert!(
        !page.contains("<img") && !page.contains("<script"),
        "{page}"
    );
    assert!(page.contains(&format!("<title>storlab compare: {ESCAPED} vs b</title>")));
    assert!(page.contains(&format!("<strong>{ESCAPED}</strong>")));
    assert!(page.contains(&format!("<th>{ESCAPED}</th>")));
    assert!(page.contains(&format!("Note: class {ESCAPED} is not in every run")));
    // Nowhere but in the escaped text.
    assert_eq!(
        page.matches("onerror").count(),
        page.matches(ESCAPED).count()
    );
}
