//! One truth, every view: for each kind of run (a plain run, fio stonewall groups, cycled steps
//! with repetitions, a cache tier, the Exchange validation's performance, backup and recovery
//! tests, simulated users, a database validation), run it small, then check that every view carries what the results
//! file says and what the dry run said it would do:
//!
//! - the dry run printed every line of the description the results file keeps, and the
//!   workers, timing and targets of the job that ran;
//! - the console summary the run printed is the one `storlab report FILE` prints;
//! - the class table of the console and of the HTML report show each class's counts, rates and
//!   percentiles as the results file has them (to display rounding), and the CSV and fio's
//!   json+ the same figures unrounded;
//! - the verdict's rules are the same, pass or fail, in the JSON, the console and the HTML;
//!   the exit code is the verdict's.
//!
//! The live view (`/live.json`, `/metrics`) is checked against the results in `live.rs`.

pub(crate) mod checks;

use crate::harness::{ExchangeArgs, run_in, scratch, users_args, write_job};
use checks::{Kind, check_views};
use std::path::Path;

#[test]
fn a_plain_run_says_the_same_in_every_view() {
    let dir = scratch();
    let target = dir.path().join("plain.dat");
    let args = [
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "16MiB",
        "--duration",
        "1s",
        "--ramp",
        "0s",
        "--read",
        "70",
    ];
    check_views(dir.path(), &args, Kind::Plain);
}

#[test]
fn fio_stonewall_groups_give_each_class_the_rate_of_the_step_it_ran_in() {
    let dir = scratch();
    let fio = dir.path().join("two.fio");
    std::fs::write(
        &fio,
        format!(
            "[global]\nioengine=io_uring\ndirect=1\nfilename={}\nsize=16m\nruntime=1\ntime_based\n\
             [a]\nrw=randread\nbs=4k\niodepth=4\nstonewall\n[b]\nrw=randwrite\nbs=4k\niodepth=4\nstonewall\n",
            dir.path().join("two.dat").display()
        ),
    )
    .unwrap();
    let r = check_views(
        dir.path(),
        &["run", "--fio", fio.to_str().unwrap()],
        Kind::Steps,
    );
    // Each class ran in its own group's step: its rate is that step's, not half of it.
    let steps = r.steps.as_ref().expect("a step per group");
    assert_eq!(steps.len(), 2);
    for (class, step, read) in [("a", 0, true), ("b", 1, false)] {
        let c = &r.classes[class];
        assert_eq!(c.steps.as_deref(), Some(&[step][..]), "{class}");
        assert_eq!(c.measured_ms, Some(steps[step].measured_ms), "{class}");
        let (whole, in_step) = match read {
            true => (&c.read, &steps[step].classes[class].read),
            false => (&c.write, &steps[step].classes[class].write),
        };
        assert_eq!(whole.ops, in_step.ops, "{class}");
        assert!(
            (whole.iops - in_step.iops).abs() <= 1e-9 * in_step.iops.max(1.0),
            "{class}: {} IOPS across the steps, {} in its step",
            whole.iops,
            in_step.iops
        );
    }
}

#[test]
fn cycled_steps_with_repetitions_say_the_same_in_every_view() {
    let dir = scratch();
    let job = write_job(
        dir.path(),
        "steps.toml",
        &format!(
            "duration = \"500ms\"\nramp = \"0s\"\ninterval = \"250ms\"\nrepeat = 2\npause = \"0s\"\n\
             [cycle]\nblock_size = [\"4k\", \"16k\"]\n\
             [[target]]\npath = \"{}\"\nsize = \"16MiB\"\n\
             [[worker]]\nqueue_depth = 2\n[[worker.access]]\nclass = \"db\"\nread = 70\nrandom = 100\n",
            dir.path().join("steps.dat").display()
        ),
    );
    check_views(dir.path(), &["run", job.to_str().unwrap()], Kind::Steps);
}

#[test]
fn a_cache_tier_says_the_same_in_every_view() {
    let dir = scratch();
    let job = write_job(
        dir.path(),
        "tier.toml",
        &format!(
            "duration = \"1s\"\nramp = \"0s\"\n\
             [[target]]\nname = \"lun\"\npath = \"{}\"\nsize = \"16MiB\"\ncache = {{ device = \"{}\", size = \"50%\" }}\n\
             [[worker]]\nqueue_depth = 2\n[[worker.access]]\nclass = \"db\"\nread = 70\nrandom = 100\n",
            dir.path().join("lun.dat").display(),
            dir.path().join("ssd.dat").display()
        ),
    );
    let r = check_views(dir.path(), &["run", job.to_str().unwrap()], Kind::Plain);
    assert_eq!(r.cache_tiers.len(), 1, "the run had its tier");
}

/// `storlab exchange` at a small size in `dir`, at latency limits no disk misses.
fn exchange(dir: &Path, test: &str, extra: &[&str]) -> Vec<String> {
    let args = ExchangeArgs::sized(100, "32MiB", "1%", 1)
        .measure("2s")
        .db_path(dir)
        .lenient()
        .flags(&["--threads", "1", "--test", test])
        .flags(extra);
    args.args()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn an_exchange_performance_test_says_the_same_in_every_view() {
    let dir = scratch();
    let args = exchange(dir.path(), "performance", &[]);
    let r = check_views(dir.path(), &args, Kind::Exchange);
    assert!(r.exchange.as_ref().unwrap().backup.is_none());
}

#[test]
fn an_exchange_backup_test_is_described_timed_and_scaled_as_it_ran() {
    let dir = scratch();
    let args = exchange(dir.path(), "backup", &[]);
    let r = check_views(dir.path(), &args, Kind::Exchange);
    let x = r.exchange.as_ref().unwrap();
    let b = x.backup.as_ref().expect("backup figures");
    // Every database read once: its size as built, over the time the readers took (not the
    // duration's minute), and a full backup of the real size at that rate.
    assert!(b.complete && b.databases_complete == 1, "{b:?}");
    assert_eq!(b.read_bytes, x.database_size_bytes);
    assert!((b.read_seconds - r.measured_ms as f64 / 1e3).abs() < 1e-9);
    assert_eq!(
        b.real_bytes,
        (x.database_size_bytes as f64 / x.capacity_fraction) as u64
    );
    let at_rate = b.real_bytes as f64 / (b.mb_per_s_total * 1e6);
    assert!((b.full_backup_real_seconds - at_rate).abs() <= 1e-6 * at_rate);
    // No transactional figures: no per-database table of zeros.
    assert!(x.databases.is_empty());
    let rule = &r.verdict.as_ref().unwrap().rules[1];
    assert_eq!(
        (rule.rule.as_str(), rule.measured, rule.threshold),
        ("databases read completely", 1.0, 1.0)
    );
}

#[test]
fn an_exchange_recovery_test_says_the_same_in_every_view() {
    let dir = scratch();
    let args = exchange(dir.path(), "recovery", &["--log-files", "4"]);
    let r = check_views(dir.path(), &args, Kind::Exchange);
    let rule = &r.verdict.as_ref().unwrap().rules[1];
    assert_eq!(
        (rule.rule.as_str(), rule.threshold),
        ("log files replayed", 4.0)
    );
}

#[test]
fn a_database_validation_says_the_same_in_every_view() {
    let dir = scratch();
    let path = dir.path().to_str().unwrap();
    let args = [
        "database",
        "--engine",
        "postgresql",
        "--data-path",
        path,
        "--data-size",
        "16MiB",
        "--log-size",
        "4MiB",
        "--tps",
        "25",
        "--checkpoint-interval",
        "500ms",
        "--duration",
        "2s",
        "--ramp",
        "0s",
        "--data-read-latency",
        "10s",
        "--data-write-latency",
        "10s",
        "--log-write-latency",
        "10s",
    ];
    let r = check_views(dir.path(), &args, Kind::Database);
    let d = r.database.as_ref().unwrap();
    assert_eq!(d.files.len(), 2);
}

#[test]
fn simulated_users_say_the_same_in_every_view() {
    let dir = scratch();
    let results = dir.path().join("unused.json");
    // 10 users for a simulated 20 minutes in 2 s of dispatch.
    let mut args = users_args(
        dir.path(),
        &results,
        &[
            "--users",
            "10",
            "--databases",
            "1",
            "--duration",
            "20m",
            "--compress",
            "600",
        ],
    );
    // check_views gives its own results path and quiet flag.
    let at = args.iter().position(|a| a == "-o").unwrap();
    args.drain(at..at + 2);
    args.retain(|a| a != "--quiet");
    let r = check_views(dir.path(), &args, Kind::Users);
    let u = r.users.as_ref().unwrap();
    // The overload rule judges the most tasks unfinished at once, which the tasks table and
    // the JSON show beside those unfinished at the end.
    let overload = (r.verdict.as_ref().unwrap().rules.iter())
        .find(|rule| rule.rule.starts_with("not overloaded"))
        .expect("the overload rule");
    assert_eq!(overload.measured, u.peak_unfinished as f64);
    assert!(u.peak_unfinished >= u.unfinished);
    let summary = run_in(
        dir.path(),
        ["report", dir.path().join("views.json").to_str().unwrap()],
    );
    assert!(
        summary.stdout.contains(&format!(
            "unfinished at the end: {}, at most {} at once",
            u.unfinished, u.peak_unfinished
        )),
        "{}",
        summary.stdout
    );
}
