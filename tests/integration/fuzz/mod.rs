//! Hostile input: thousands of generated and mutated job files and command lines fed to the
//! same parsing and resolving code the `storlab` binary runs (in process, so they take seconds).
//! None may panic, and every error must say where it is: a job-file error names the file and
//! line (`job.toml:12`) and, once past TOML syntax, the key; a command-line error names the
//! flag (`--qd`) or says `command line` and the key. A last test runs the real binary on the
//! nastiest inputs found and checks exit code 2 and `file:line` on stderr.
//!
//! Each run draws fresh cases (set `PROPTEST_RNG_SEED` to repeat one); a failure prints the
//! shrunk input, the job file or command line, and what was wrong.
//!
//! `grammar` holds the job-file keys and the values each kind of key is given; `job_files`
//! generates and mutates job files, `command_lines` command lines.

mod command_lines;
mod grammar;
mod job_files;

use proptest::test_runner::{Config, TestRunner};

/// What `--dry-run` does with a resolved job (small jobs only: expansion clones per step).
fn dry_run(job: &storlab::testing::Job) {
    let steps: usize = job.sequence.cycles.iter().map(|c| c.values.len()).product();
    if steps * job.workers.len().max(1) <= 20_000 {
        let _ = storlab::cli::describe(job);
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    })
}
