//! A workload that exists only in the tests, to show what adding one takes: this folder and
//! one line in `super::rooms`. A `[tiny]` job file writes `blocks` 4 KiB blocks of one file
//! and reads each back once its write completed (a source of its own, whose next I/O depends
//! on the last completion), and is judged on every block read back. Everything else (the dry
//! run, the results file, the console and HTML reports, the exit code) comes from the common
//! path.

use crate::engine::source::{Next, Request, RequestSource};
use crate::engine::worker::WorkerReport;
use crate::engine::{IoOp, OpKind};
use crate::job::{Access, Job, Target, Worker};
use crate::results::RunResult;
use crate::results::description::{self, Description, Line};
use crate::results::verdict::{Comparison, Rule, Verdict};
use crate::run::{Driver, Execute, RunOptions, Sources, WorkerInput, Workload};
use crate::workloads::{JobText, Overrides, Room};
use anyhow::Result;
use serde::Deserialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// `[tiny]` job files.
pub(crate) const ROOM: Room = Room {
    section: "tiny",
    what: "a tiny test job",
    hint: "storlab run FILE",
    flags: &[],
    load,
    schema: schemars::SchemaGenerator::subschema_for::<TinyFile>,
    view: &view::TinyView,
    subcommand: Some(crate::workloads::Subcommand {
        name: "tiny",
        about: "A tiny test job: write each block, then read it back",
        args: |c| {
            <TinySpec as clap::Args>::augment_args(c).arg(
                clap::Arg::new("job")
                    .value_name("FILE")
                    .help("Job file with a [tiny] section; the flags override its keys"),
            )
        },
        load: from_flags,
    }),
    foreign: None,
};

mod view;

/// Bytes of each block.
const BLOCK: u64 = 4096;

use view::RULE;

/// The `[tiny]` section.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TinyFile {
    tiny: TinySpec,
}

crate::workloads::spec! {
    /// The `[tiny]` section, and the flags of `storlab tiny`: one declaration of each key.
    #[derive(Debug, Default, Clone, Deserialize, schemars::JsonSchema, clap::Args)]
    #[serde(deny_unknown_fields)]
    struct TinySpec {
        /// The file to write.
        #[arg(long, value_name = "FILE")]
        path: Option<PathBuf>,
        /// How many blocks (1 to 1024).
        #[arg(long, value_name = "N")]
        blocks: Option<u64>,
    }
}

/// The workload: its spec, resolved.
struct Tiny {
    path: PathBuf,
    blocks: u64,
    /// Blocks read back, counted by the source.
    read_back: AtomicU64,
}

fn load(file: &JobText, _: &Overrides) -> Result<Box<dyn Workload>> {
    let parsed: TinyFile = crate::job::file::parse_toml(file.path, file.text)?;
    resolve(&parsed.tiny)
}

/// `storlab tiny [FILE] [--path FILE] [--blocks N]`: the flags over the file's keys.
fn from_flags(m: &clap::ArgMatches) -> Result<crate::workloads::Loaded> {
    let flags = <TinySpec as clap::FromArgMatches>::from_arg_matches(m)?;
    let mut spec = match m.get_one::<String>("job") {
        Some(path) => {
            let path = std::path::Path::new(path);
            let text = std::fs::read_to_string(path)?;
            crate::job::file::parse_toml::<TinyFile>(path, &text)?.tiny
        }
        None => TinySpec::default(),
    };
    spec.overlay(&flags);
    let invocation = crate::results::Invocation {
        source: crate::results::JobSource::Flags,
        flags: flags.given_flags(),
    };
    Ok((resolve(&spec)?, invocation))
}

fn resolve(spec: &TinySpec) -> Result<Box<dyn Workload>> {
    let (Some(path), Some(blocks)) = (&spec.path, spec.blocks) else {
        return Err(crate::Usage("a tiny job needs its path and its blocks".into()).into());
    };
    Ok(Box::new(Tiny {
        path: path.clone(),
        blocks: blocks.clamp(1, 1024),
        read_back: AtomicU64::new(0),
    }))
}

impl Tiny {
    fn job(&self) -> Job {
        let mut job = Job {
            description: Some("tiny: write each block, then read it back".into()),
            duration_ms: 30_000,
            ramp_ms: 0,
            interval_ms: 1000,
            targets: vec![Target::file(
                "tiny".into(),
                self.path.clone(),
                Some(self.blocks * BLOCK),
            )],
            ..Job::default()
        };
        let class = job.class("tiny");
        job.workers.push(Worker {
            driven_by: Some("write-then-read-back pairs".into()),
            ..Worker::closed_loop(
                "tiny",
                vec![0],
                1,
                vec![Access::new(class, BLOCK, 50.0, 0.0)],
            )
        });
        job
    }
}

impl Workload for Tiny {
    fn kind(&self) -> &'static str {
        "tiny"
    }

    fn describe(&self) -> Description {
        let job = self.job();
        let mut d = Description::default();
        d.head.push(Line::new(
            "job",
            format!(
                "tiny: {} blocks of 4 KiB, each written then read back",
                self.blocks
            ),
        ));
        d.body = description::workers(&job);
        d
    }

    fn jobs(&self) -> Vec<Job> {
        vec![self.job()]
    }

    fn run(&self, exec: &mut dyn Execute, opts: &RunOptions) -> Result<RunResult> {
        let mut r = exec.execute(&self.job(), opts, self)?;
        let back = self.read_back.load(Ordering::Relaxed);
        let mut rules = vec![Rule::judge(
            RULE,
            back as f64,
            Comparison::AtLeast,
            self.blocks as f64,
            "blocks",
        )];
        rules.extend(r.verdict.take().into_iter().flat_map(|v| v.rules));
        r.verdict = Some(Verdict::weighed(rules, r.cost.as_ref()));
        exec.save(&opts.results_path, &r)?;
        Ok(r)
    }
}

impl Sources for Tiny {
    fn drive(&self, _: WorkerInput<'_>, driver: Driver<'_, '_, '_>) -> WorkerReport {
        driver.run(&mut Pairs {
            tiny: self,
            next: 0,
            busy: false,
        })
    }
}

/// Block `n / 2` written (even `n`), then read (odd `n`), one at a time.
struct Pairs<'s> {
    tiny: &'s Tiny,
    next: u64,
    busy: bool,
}

impl RequestSource for Pairs<'_> {
    fn next(&mut self, _now_ns: u64) -> Next {
        if self.busy {
            return Next::AwaitCompletion;
        }
        if self.next == self.tiny.blocks * 2 {
            return Next::Done;
        }
        self.busy = true;
        let n = self.next;
        self.next += 1;
        Next::Issue(Request {
            op: IoOp {
                kind: if n % 2 == 0 {
                    OpKind::Write
                } else {
                    OpKind::Read
                },
                target: 0,
                offset: n / 2 * BLOCK,
                len: BLOCK as u32,
                dsync: false,
                atomic: false,
                class: 0,
            },
            intended_ns: None,
            tag: n,
            home: None,
        })
    }

    fn completed(&mut self, request: &Request, result: i32, _now_ns: u64) {
        self.busy = false;
        if request.op.kind == OpKind::Read && result == BLOCK as i32 {
            self.tiny.read_back.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::results::progress::Quiet;
    use crate::run::{Runner, Signals};

    /// The tiny job file in `dir`.
    pub(crate) fn job_file(dir: &std::path::Path) -> (PathBuf, String) {
        let text = format!(
            "[tiny]\npath = \"{}\"\nblocks = 8\n",
            dir.join("tiny.dat").display()
        );
        let path = dir.join("tiny.toml");
        std::fs::write(&path, &text).unwrap();
        (path, text)
    }

    #[test]
    fn a_new_workload_runs_through_the_common_path_with_its_own_source_and_rules() {
        let dir = tempfile::tempdir().unwrap();
        let (path, text) = job_file(dir.path());
        // One line of registration: the file's section finds it.
        let room = crate::workloads::room_of(&text).expect("registered");
        assert_eq!(room.section, "tiny");
        let w = (room.load)(
            &JobText {
                path: &path,
                text: &text,
            },
            &Overrides::default(),
        )
        .unwrap();
        let described = w.describe();
        let results = dir.path().join("tiny.json");
        let mut opts = RunOptions::new(results.clone(), vec!["storlab".into()]);
        opts.description = Some(described.clone());
        let signals = Signals::none();
        let r = w
            .run(&mut Runner::new(&signals, &mut Quiet), &opts)
            .unwrap();
        // Its own source drove the worker: 8 writes and 8 reads of 4 KiB, each read after its
        // write, and its rule judged what the source counted.
        let c = &r.classes["tiny"];
        assert_eq!((c.read.ops, c.write.ops), (8, 8), "{c:?}");
        let verdict = r.verdict.as_ref().expect("a verdict");
        assert!(verdict.passed(), "{verdict:?}");
        let rule = &verdict.rules[0];
        assert_eq!(
            (rule.rule.as_str(), rule.measured, rule.threshold),
            ("blocks read back", 8.0, 8.0)
        );
        // The results file keeps the description every view prints, the dry run's.
        let saved = crate::results::file::load(&results).unwrap();
        assert_eq!(saved.description.as_ref(), Some(&described));
    }

    /// Its own subcommand, whose flags are its spec's keys over a job file's, and its own
    /// console line, HTML section and comparison row: all from this folder and the one line
    /// that registers the room.
    #[test]
    fn its_flag_console_section_html_section_and_comparison_row_are_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = job_file(dir.path());
        let run = |name: &str, extra: &[&str]| {
            let results = dir.path().join(format!("{name}.json"));
            let html = dir.path().join(format!("{name}.html"));
            let mut args = vec!["storlab", "tiny", path.to_str().unwrap(), "-q"];
            args.extend(extra);
            args.extend([
                "-o",
                results.to_str().unwrap(),
                "--html",
                html.to_str().unwrap(),
            ]);
            assert_eq!(
                crate::cli::run(args.into_iter().map(Into::into)).unwrap(),
                crate::exit::OK
            );
            let r = crate::results::file::load(&results).unwrap();
            (r, std::fs::read_to_string(&html).unwrap())
        };
        // The flag over the file's key (8 blocks): 3 written and read back.
        let (three, html) = run("three", &["--blocks", "3"]);
        assert_eq!(three.classes["tiny"].read.ops, 3);
        assert_eq!(three.invocation.flags, vec!["--blocks".to_string()]);
        let text = crate::report::console::summary(&three, 0);
        assert!(text.contains("\ntiny       3 blocks read back\n"), "{text}");
        assert!(
            html.contains("<h2>Tiny</h2><p>3 blocks read back</p>"),
            "{html}"
        );
        // The file's own key.
        let (eight, _) = run("eight", &[]);
        let c = crate::report::compare::compare(
            &[("three".into(), three), ("eight".into(), eight)],
            5.0,
        );
        assert!(
            c.job_differences
                .contains(&"tiny blocks read back: 3 vs 8".to_string()),
            "{:?}",
            c.job_differences
        );
        // A bad value is a usage error, as any flag's.
        let bad = crate::cli::run(["storlab", "tiny", "--blocks", "many"].map(Into::into)).unwrap();
        assert_eq!(bad, crate::exit::USAGE);
    }
}
