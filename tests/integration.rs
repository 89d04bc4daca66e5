//! The integration tests: one binary that drives the real `storlab` binary with
//! `std::process::Command` on real files in temporary directories (on a real disk, never tmpfs),
//! with real io_uring and, when the machine allows it (root, `losetup`, `mkfs.ext4`), real loop
//! devices. Kernel- and privilege-dependent tests probe first and skip with a reason (see
//! below: skips are counted, and fail under CI).
//!
//! Each module owns one area (a folder module's parts in brackets):
//!
//! - `run`: one-line runs, engines (io_uring's fast paths and what the results say of them),
//!   output modes, open loop;
//! - `jobfile`: a job file with several targets, workers and classes;
//! - `badjobs`: validation errors and exit code 2;
//! - `fuzz` (`grammar`, `job_files`, `command_lines`): thousands of generated and mutated job
//!   files and command lines: no panic, every error names its place;
//! - `guard`: the destroy-data guard;
//! - `corpus`: the tools' own files (fio's and vdbench's examples, VM Fleet's and StorScore's
//!   DiskSpd profiles, DiskSpd's documented command lines) convert and dry-run, or are refused
//!   for the reason `tests/fixtures/corpus/expected.txt` lists.
//! - `importing`: other tools' job files recognised from their content (`storlab import`,
//!   `storlab run FILE`), and the flags that only apply to them;
//! - `hostile`: a hostile scratch directory: links planted at the names storlab writes, pipes
//!   and sockets as targets, two runs on one target or results file, a full results
//!   filesystem;
//! - `planted`: what another user (nobody, through `setpriv`) plants where root's storlab
//!   goes: links and directories for its scratch and results directories, a manifest naming
//!   root's file; and device nodes as outputs;
//! - `interrupt` (`one_run`, `sequences`, `exchange`, `time_series`, `failures`): Ctrl-C and
//!   SIGTERM in every phase, step and Exchange stage; kill -9 and reports from the time series;
//!   a panic in each kind of thread and a stuck worker end the run (nothing hangs);
//! - `loopdev`: device counters on a loop device;
//! - `cost`: storlab's own cost: a paced, thinking or idle worker sleeps (at most 3 system
//!   calls per I/O on every engine and in every workload, checked against /proc);
//! - `examples`: every example job resolves;
//! - `database`: the database validation: a pass on the scratch disk, a fail (exit 3) and the
//!   capacity search on blkio-throttled loop devices, the dry run and refused input;
//! - `exchange` (`profile`, `verdict`, `initialisation`, `search`, `backup`, with `devices`):
//!   the Exchange model, verdicts, throttled devices, the maximum-mailboxes search, thread
//!   tuning, backup and recovery;
//! - `steps` (`cycles`, `curves`, `steady`, `precondition`, `presets`): cycles, repetitions,
//!   rate curves, steady state, preconditioning and presets;
//! - `reports` (`scanner`, `html`, `comparison`, `tables`, `browser`): HTML reports,
//!   comparisons, CSV and Markdown from fixed results files in tests/fixtures/, and the same
//!   pages in headless Chromium;
//! - `live`, `live_limits`: the live view in headless Chromium and its metrics against the
//!   results file; the server against hostile clients (stalls, floods, huge requests, markup
//!   in names);
//! - `faultfs`: a FUSE filesystem that fails, loses, tears or misdirects chosen I/Os;
//! - `errors`: real I/O errors and `on_error`;
//! - `fs` (`views`): the file-system workload on tmpfs, ext4, xfs, btrfs and FUSE, each
//!   operation reported in every view, a full file system during the format, the hostile
//!   cases, vdbench's file-system examples run;
//! - `verify`: data verification;
//! - `placement`: warnings for tmpfs, btrfs and small data sets;
//! - `longrun`: flat memory over minutes; 1,000 targets and 256 workers;
//! - `cache`: block samples and cache curves;
//! - `trace`: replaying block traces (a recorded run replayed gives the same requests);
//! - `iometer`: Iometer `.icf` files converted, run briefly and refused; the Iometer CSV report;
//! - `tier`: the cache tier on a memory-backed loop device in front of a blkio-throttled one;
//! - `calibrate`: the ORION-class calibration on a blkio-throttled loop device (its maximum
//!   IOPS and MB/s are the throttle's), its numbers in every view, its dry run;
//! - `etcd`, `walsync`: etcd's disk check (a pass on a scratch directory, every view the same,
//!   a throttled loop device failing the rate with exit 3, dry runs) and PostgreSQL's WAL
//!   sync methods compared (every method listed with its numbers, the fastest named);
//! - `users`: simulated mailbox users: the model alone, real files, a throttled loop device
//!   (Send Mail p95 and overload, exit 3), bad input;
//! - `ux` (`numbers`): what a new user reads: snapshots of summaries, the verdict, dry runs
//!   and error messages, every number with its unit;
//! - `views` (`checks`): one truth, every view: each kind of run, small, its dry run, console,
//!   `storlab report`, HTML, CSV and fio's json+ against its results file;
//! - `layout`: the shape of the code: dependency direction, the file map, file length, where
//!   `unsafe` is; `cycles`: the modules' graph (`crate::`, `super::`, `self::` and child
//!   paths resolved), no cycle across top-level modules, each one within a module said why.
//!
//! `harness` holds the scratch directory, the command runner and the command lines and job
//! file most tests build on (`RunArgs`, `ExchangeArgs`, `JobFile`), JSON access, the
//! loop-device guard, the open-loop accounting check and the counting-statistics tolerance
//! they share, and `skip`.
//!
//! # No test asserts the machine's speed
//!
//! The suite runs on small machines that it loads itself (two test threads, each running the
//! storlab binary, beside whatever else the machine does), so a test asserts what storlab
//! guarantees on any machine, and never how fast this one is: an open-loop rate is checked by
//! its accounting (every scheduled I/O counted, reported unissued, or in flight at the end;
//! none more: `harness::check_open_loop_accounting`), not by how close the achieved rate
//! came; a share of random draws by counting statistics over the I/Os the run made
//! (`harness::share_tolerance`); a fault by a fixed number of I/Os (`io_limit`), not by what a
//! second of them reaches; a run that must pass a rate rule runs at one I/O a second per
//! worker, so that only an I/O late by a second can fail it. Where a bound on time remains,
//! its comment says why load cannot reach it.
//!
//! # Skipped tests are counted
//!
//! A test that needs what this machine lacks (root, loop devices, FUSE, btrfs-progs, cgroup v1
//! blkio throttling, tracefs, Chromium, a high open-file limit) calls [`harness::skip`] with
//! its name and the reason, and returns. Under CI (`CI=true` or `CI=1`) `skip` panics instead:
//! CI (`.ci/run`) installs what the tests need, so there a missing capability is a failure.
//! Elsewhere libtest counts the test as passed, so `skip` also appends a line (test, reason)
//! to a ledger named after the test process's parent pid: the `cargo test` process, the
//! parent of every test binary of one run (`tests/skipped/ledger.rs`). The test target
//! `skipped` (`tests/skipped.rs`, `harness = false`) reads and removes that ledger and prints
//! one line per skipped test and a last line `N tests skipped: ...` with each reason and how
//! many tests gave it, or `no test was skipped`. Cargo runs the test targets of a package one
//! after the other in name order, after the unit tests of the library and the binary, so
//! `skipped` runs after `integration` and its line is the last of `cargo test --locked`. It
//! is not printed when `cargo test` stops early (a failing test binary) or when only this
//! binary runs (`cargo test --test integration`); the next summary removes such a stale
//! ledger without counting it. The README's test command (`.ci/test`, cargo-nextest: a
//! process per test) names the ledger in `STORLAB_SKIPPED_LEDGER` and runs `skipped` after
//! the tests.

#![allow(clippy::print_stderr)]
// Fault ranges are lists of byte ranges; a one-element list is meant as such.
#![allow(clippy::single_range_in_vec_init)]

#[path = "integration/badjobs.rs"]
mod badjobs;
#[path = "integration/cache.rs"]
mod cache;
#[path = "integration/calibrate.rs"]
mod calibrate;
#[path = "integration/corpus.rs"]
mod corpus;
#[path = "integration/cost.rs"]
mod cost;
#[path = "integration/cycles.rs"]
mod cycles;
#[path = "integration/database.rs"]
mod database;
#[path = "integration/datareduction.rs"]
mod datareduction;
#[path = "integration/diskspdimport.rs"]
mod diskspdimport;
#[path = "integration/errors.rs"]
mod errors;
#[path = "integration/etcd.rs"]
mod etcd;
#[path = "integration/examples.rs"]
mod examples;
#[path = "integration/exchange/mod.rs"]
mod exchange;
#[path = "integration/faultfs/mod.rs"]
mod faultfs;
#[path = "integration/fioimport.rs"]
mod fioimport;
#[path = "integration/fiojson.rs"]
mod fiojson;
#[path = "integration/fs/mod.rs"]
mod fs;
#[path = "integration/fuzz/mod.rs"]
mod fuzz;
#[path = "integration/guard.rs"]
mod guard;
#[path = "integration/harness.rs"]
mod harness;
#[path = "integration/hostile.rs"]
mod hostile;
#[path = "integration/importing.rs"]
mod importing;
#[path = "integration/inputs.rs"]
mod inputs;
#[path = "integration/interrupt/mod.rs"]
mod interrupt;
#[path = "integration/iometer.rs"]
mod iometer;
#[path = "integration/jobfile.rs"]
mod jobfile;
#[path = "integration/layout.rs"]
mod layout;
#[path = "skipped/ledger.rs"]
mod ledger;
#[path = "integration/live.rs"]
mod live;
#[path = "integration/live_limits.rs"]
mod live_limits;
#[path = "integration/longrun.rs"]
mod longrun;
#[path = "integration/loopdev.rs"]
mod loopdev;
#[path = "integration/multihost/mod.rs"]
mod multihost;
#[path = "integration/packages.rs"]
mod packages;
#[path = "integration/placement.rs"]
mod placement;
#[path = "integration/planted.rs"]
mod planted;
#[path = "integration/reports/mod.rs"]
mod reports;
#[path = "integration/run.rs"]
mod run;
#[path = "integration/schema.rs"]
mod schema;
#[path = "integration/steps/mod.rs"]
mod steps;
#[path = "integration/terminal.rs"]
mod terminal;
#[path = "integration/tier.rs"]
mod tier;
#[path = "integration/trace.rs"]
mod trace;
#[path = "integration/users.rs"]
mod users;
#[path = "integration/ux/mod.rs"]
mod ux;
#[path = "integration/vdbench.rs"]
mod vdbench;
#[path = "integration/verify.rs"]
mod verify;
#[path = "integration/views/mod.rs"]
mod views;
#[path = "integration/walsync.rs"]
mod walsync;
