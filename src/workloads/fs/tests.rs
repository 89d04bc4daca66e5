//! The file-system workload end to end in-process: small trees in the tests' own directory,
//! made, run and judged through the common path.

use crate::results::RunResult;
use crate::results::progress::Quiet;
use crate::run::{RunOptions, Runner, Signals};
use crate::workloads::fs::section::TreeCounts;
use crate::workloads::{JobText, Overrides};
use std::path::Path;

/// Runs the `[fs]` job `text` (in `dir`), its results in `dir/NAME.json`.
pub(crate) fn run(dir: &Path, name: &str, text: &str) -> anyhow::Result<RunResult> {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let room = crate::workloads::room_of(text).expect("registered");
    assert_eq!(room.section, "fs");
    let w = (room.load)(&JobText { path: &path, text }, &Overrides::default())?;
    let mut opts = RunOptions::new(dir.join(format!("{name}.json")), vec!["storlab".into()]);
    opts.description = Some(w.describe());
    let signals = Signals::none();
    w.run(&mut Runner::new(&signals, &mut Quiet), &opts)
}

/// An `[fs]` section on `anchor` with `rest`.
pub(crate) fn job(anchor: &Path, rest: &str) -> String {
    format!("[fs]\nanchor = \"{}\"\n{rest}", anchor.display())
}

fn op<'r>(
    r: &'r crate::workloads::fs::section::FsRun,
    name: &str,
) -> &'r crate::stats::summary::DirSummary {
    &r.operations
        .iter()
        .find(|o| o.operation == name)
        .unwrap_or_else(|| panic!("{name} in {r:?}"))
        .figures
}

/// The operations `name` of run `r` that ran and bytes they moved: none when the results list
/// no such operation (they list only those a run did, or chose and could not do).
fn done(r: &crate::workloads::fs::section::FsRun, name: &str) -> (u64, u64) {
    (r.operations.iter())
        .find(|o| o.operation == name)
        .map_or((0, 0), |o| (o.figures.ops, o.figures.bytes))
}

#[test]
fn a_tree_is_made_then_a_metadata_mix_runs_with_every_operation_counted() {
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("tree");
    let text = job(
        &anchor,
        "depth = 1\nwidth = 2\nfiles = 10\nsizes = \"8k\"\nthreads = 2\nmix = \"create:1,delete:1,getattr:2,read:1\"\nxfersize = \"4k\"\nduration = \"1s\"\n",
    );
    let r = run(dir.path(), "mix", &text).unwrap();
    let fs = r.fs.as_ref().expect("the section");
    let format = fs.run("format").expect("the format ran");
    assert_eq!(op(format, "mkdir").ops, 2);
    assert_eq!(op(format, "create").ops, 20);
    assert_eq!(op(format, "write").ops, 40);
    assert_eq!(op(format, "write").bytes, 20 * 8192);
    assert_eq!(op(format, "close").ops, 20);
    assert_eq!(fs.start.files, 20);
    assert_eq!(fs.start.bytes, 20 * 8192);
    let mix = fs.run("r1").expect("the run");
    for name in ["create", "delete", "getattr", "open", "read", "close"] {
        let o = op(mix, name);
        assert!(o.ops > 0, "{name}: {o:?}");
        assert_eq!(o.errors, 0, "{name}: {:?}", fs.failures);
    }
    // Each read of a file is its open, two 4 KiB reads and its close.
    let (opens, reads) = (op(mix, "open").ops, op(mix, "read").ops);
    assert!(
        reads <= 2 * opens && reads + 2 >= 2 * opens,
        "{opens} opens, {reads} reads"
    );
    // The tree at the end is what its operations left: creates add files, deletes remove.
    let created = op(mix, "create").ops as i64;
    let deleted = op(mix, "delete").ops as i64;
    assert!(
        (fs.end.files as i64 - (20 + created - deleted)).abs() <= 2,
        "{:?}",
        fs.end
    );
    assert!(r.verdict.as_ref().unwrap().passed(), "{:?}", r.verdict);
    // Every rate of a run is over the same time, to the nanosecond: each operation's (the
    // class's), the run's total, and the seconds the run reports.
    for run in &fs.runs {
        for o in &run.operations {
            let over = o.figures.ops as f64 / run.seconds;
            assert!(
                (o.figures.iops - over).abs() <= 1e-9 * over,
                "{}: {o:?} over {} s",
                run.name,
                run.seconds
            );
        }
        let total = run.total.ops as f64 / run.seconds;
        assert!(
            (run.total.iops - total).abs() <= 1e-9 * total,
            "{}: {:?}",
            run.name,
            run.total
        );
    }
    // The marker says the tree is storlab's and whole; a second run reuses it, its format
    // making only what the mix left missing or cut short (when the mix's creates and deletes
    // left every file there, it creates none: then the results list no create).
    let again = run(dir.path(), "again", &text).unwrap();
    let fs2 = again.fs.unwrap();
    let format2 = fs2.run("format").unwrap();
    assert_eq!(
        fs2.start,
        TreeCounts {
            files: 20,
            dirs: 2,
            bytes: 20 * 8192
        }
    );
    let (created, written) = (done(format2, "create").0, done(format2, "write").1);
    assert_eq!(created, 20 - fs.end.files, "{format2:?} after {:?}", fs.end);
    assert_eq!(written, 20 * 8192 - fs.end.bytes, "{format2:?}");
    assert_eq!(
        done(format2, "close").0,
        created + done(format2, "open").0,
        "{format2:?}"
    );
    assert_eq!(done(format2, "mkdir").0, 0, "{format2:?}");
}

#[test]
fn a_restart_completes_the_files_cut_short_and_reports_only_what_it_did() {
    // The tree as a mix can leave it: every file there, some cut short by the run's end (a
    // create made its file and had written part of it). The format then creates nothing.
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("tree");
    let text = job(
        &anchor,
        "depth = 1\nwidth = 2\nfiles = 3\nsizes = \"8k\"\nthreads = 2\nmix = \"getattr\"\nxfersize = \"4k\"\nduration = \"200ms\"\ninterval = \"100ms\"\n",
    );
    let whole = TreeCounts {
        files: 6,
        dirs: 2,
        bytes: 6 * 8192,
    };
    let fs = run(dir.path(), "made", &text).unwrap().fs.unwrap();
    assert_eq!((fs.start, fs.end), (whole, whole));
    let cut = [
        (anchor.join("d01/f0002"), 0),
        (anchor.join("d02/f0003"), 4096),
    ];
    for (path, len) in &cut {
        let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.set_len(*len).unwrap();
    }
    let fs = run(dir.path(), "again", &text).unwrap().fs.unwrap();
    assert_eq!(fs.start, whole);
    for (path, _) in &cut {
        assert_eq!(std::fs::metadata(path).unwrap().len(), 8192, "{path:?}");
    }
    let format = fs.run("format").unwrap();
    let ops: Vec<(&str, u64, u64)> = (format.operations.iter())
        .map(|o| (o.operation.as_str(), o.figures.ops, o.figures.bytes))
        .collect();
    // Each file opened, written from where it ends (2 + 1 transfers of 4 KiB) and closed.
    assert_eq!(
        ops,
        [("open", 2, 0), ("write", 3, 3 * 4096), ("close", 2, 0)],
        "{format:?}"
    );
    assert_eq!(format.total.ops, 7);
    // A third run finds the tree whole: its format does nothing and says nothing ran.
    let fs = run(dir.path(), "whole", &text).unwrap().fs.unwrap();
    assert_eq!(fs.start, whole);
    let format = fs.run("format").unwrap();
    assert!(format.operations.is_empty(), "{format:?}");
    assert_eq!(format.total.ops, 0);
}

/// The error of running `text`, as the user sees it, and that it is a refusal (exit 2).
fn refused(dir: &Path, text: &str) -> String {
    let e = run(dir, "refused", text).expect_err("refused");
    assert_eq!(
        crate::exit::of_error(&e),
        crate::exit::USAGE,
        "not a refusal: {e:#}"
    );
    format!("{e:#}")
}

/// A small tree's job: a format, then reads and getattrs (the tree stays as made).
fn small(anchor: &Path) -> String {
    job(
        anchor,
        "depth = 1\nwidth = 2\nfiles = 4\nsizes = \"4k\"\nmix = \"read:2,getattr:1\"\nxfersize = \"4k\"\nduration = \"300ms\"\ninterval = \"100ms\"\n",
    )
}

#[test]
fn a_link_planted_anywhere_in_the_tree_is_refused_and_what_it_points_at_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"someone's data").unwrap();
    for (name, plant) in [
        ("symlink as a file", "d01/f0002"),
        ("symlink as a directory", "d02"),
        ("symlink beside the files", "d01/extra"),
    ] {
        let anchor = dir.path().join(name.replace(' ', "-"));
        run(dir.path(), "made", &small(&anchor)).unwrap();
        let at = anchor.join(plant);
        let _ = std::fs::remove_file(&at);
        let _ = std::fs::remove_dir_all(&at);
        std::os::unix::fs::symlink(&victim, &at).unwrap();
        let e = refused(dir.path(), &small(&anchor));
        assert!(
            e.contains("symbolic link") && e.contains(plant),
            "{name}: {e}"
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"someone's data", "{name}");
        assert!(
            std::fs::symlink_metadata(&at)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{name}: the link was left as it was"
        );
    }
    // A second name of someone's file (a hard link) where a file of the tree goes.
    let anchor = dir.path().join("hard");
    run(dir.path(), "made", &small(&anchor)).unwrap();
    let at = anchor.join("d02/f0001");
    std::fs::remove_file(&at).unwrap();
    std::fs::hard_link(&victim, &at).unwrap();
    let e = refused(dir.path(), &small(&anchor));
    assert!(e.contains("2 links"), "{e}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"someone's data");
    // The anchor itself a link to a directory of someone's.
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    let anchor = dir.path().join("link-anchor");
    std::os::unix::fs::symlink(&theirs, &anchor).unwrap();
    let e = refused(dir.path(), &small(&anchor));
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
    // A FIFO where a file goes.
    let anchor = dir.path().join("fifo");
    run(dir.path(), "made", &small(&anchor)).unwrap();
    let at = anchor.join("d01/f0003");
    std::fs::remove_file(&at).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &at,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let e = refused(dir.path(), &small(&anchor));
    assert!(e.contains("not part of the tree"), "{e}");
}

#[test]
fn an_anchor_of_another_user_or_with_files_of_others_is_refused_untouched() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    // Another user's directory (as root, one chowned to nobody).
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("notes"), b"x").unwrap();
    rustix::fs::chown(&theirs, Some(rustix::process::Uid::from_raw(65534)), None).unwrap();
    let e = refused(dir.path(), &small(&theirs));
    assert!(e.contains("belongs to user 65534"), "{e}");
    assert_eq!(std::fs::read(theirs.join("notes")).unwrap(), b"x");
    // A directory of this user's holding files storlab did not make.
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep"), b"mine").unwrap();
    let e = refused(dir.path(), &small(&full));
    assert!(e.contains("did not make"), "{e}");
    assert_eq!(std::fs::read_dir(&full).unwrap().count(), 1);
    // One others may write in.
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = refused(dir.path(), &small(&open));
    assert!(e.contains("others may write"), "{e}");
    // A marker someone else put there.
    let planted = dir.path().join("planted");
    std::fs::create_dir(&planted).unwrap();
    std::fs::write(planted.join(".storlab-fs.json"), b"{}").unwrap();
    rustix::fs::chown(
        planted.join(".storlab-fs.json"),
        Some(rustix::process::Uid::from_raw(65534)),
        None,
    )
    .unwrap();
    let e = refused(dir.path(), &small(&planted));
    assert!(e.contains("someone else put it there"), "{e}");
    assert_eq!(
        std::fs::metadata(planted.join(".storlab-fs.json"))
            .unwrap()
            .uid(),
        65534
    );
}

#[test]
fn a_tree_of_another_shape_is_removed_only_when_asked_and_clean_leaves_the_anchor_empty() {
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("tree");
    run(dir.path(), "small", &small(&anchor)).unwrap();
    let other = job(
        &anchor,
        "depth = 2\nwidth = 2\nfiles = 3\nsizes = \"8k\"\nmix = \"getattr\"\nduration = \"200ms\"\ninterval = \"100ms\"\n",
    );
    let e = refused(dir.path(), &other);
    assert!(
        e.contains("another shape") && e.contains("format = \"yes\""),
        "{e}"
    );
    assert!(anchor.join("d01/f0001").exists(), "nothing removed");
    let r = run(dir.path(), "yes", &format!("{other}format = \"yes\"\n")).unwrap();
    let fs = r.fs.unwrap();
    assert!(fs.removed.files > 0, "{:?}", fs.removed);
    assert_eq!(op(fs.run("clean").unwrap(), "rmdir").ops, 2);
    assert_eq!((fs.start.files, fs.start.dirs), (12, 6));
    assert!(anchor.join("d02/d01/f0003").exists());
    let r = run(dir.path(), "clean", &format!("{other}format = \"clean\"\n")).unwrap();
    let fs = r.fs.unwrap();
    assert_eq!(fs.end, Default::default());
    let left: Vec<_> = std::fs::read_dir(&anchor)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from(".storlab-fs.json")]);
}

#[test]
fn a_format_that_cannot_fit_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("big");
    let text = job(&anchor, "depth = 0\nfiles = 4\nsizes = \"8TiB\"\n");
    let e = refused(dir.path(), &text);
    assert!(e.contains("needs") && e.contains("free"), "{e}");
    // Only the anchor and its marker-to-be: no file was made.
    assert!(!anchor.join("f0001").exists());
}

#[test]
fn every_operation_of_a_mix_runs_on_the_null_engine_without_a_system_call() {
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("tree");
    run(dir.path(), "made", &small(&anchor)).unwrap();
    let before = std::fs::read_dir(anchor.join("d01")).unwrap().count();
    let r = run(
        dir.path(),
        "null",
        &job(
            &anchor,
            "depth = 1\nwidth = 2\nfiles = 4\nsizes = \"4k\"\nengine = \"null\"\nformat = \"no\"\nmix = \"create,delete,getattr,read,write,copy,rename,setattr,access\"\nxfersize = \"4k\"\nduration = \"300ms\"\ninterval = \"100ms\"\n",
        ),
    )
    .unwrap();
    let fs = r.fs.unwrap();
    let run1 = fs.run("r1").unwrap();
    for name in [
        "getattr", "read", "write", "copy", "rename", "create", "delete",
    ] {
        assert!(
            run1.operations
                .iter()
                .any(|o| o.operation == name && o.figures.ops > 0),
            "{name}"
        );
    }
    // Nothing on disk changed.
    assert_eq!(
        std::fs::read_dir(anchor.join("d01")).unwrap().count(),
        before
    );
}

#[test]
fn an_open_loop_run_is_paced_and_timed_from_each_intended_start() {
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("tree");
    let r = run(
        dir.path(),
        "paced",
        &job(
            &anchor,
            "depth = 1\nwidth = 2\nfiles = 8\nsizes = \"4k\"\nmix = \"getattr\"\nthreads = 2\nrate = 400\nduration = \"500ms\"\ninterval = \"100ms\"\n",
        ),
    )
    .unwrap();
    let fs = r.fs.unwrap();
    let g = op(fs.run("r1").unwrap(), "getattr");
    // 400 a second for half a second: 200 due, each issued or, on a host too busy to keep
    // the rate, counted as never issued.
    let unissued: u64 = r.workers.iter().map(|w| w.unissued).sum();
    assert!(
        (196..=202).contains(&(g.ops + unissued)),
        "{} + {unissued}",
        g.ops
    );
    assert!(
        g.service_latency_ns.is_some(),
        "open loop keeps the service time too"
    );
    assert!(
        r.job
            .workers
            .iter()
            .all(|w| w.rate.map(|x| x.iops) == Some(200.0))
    );
}

/// Runs the `[fs]` text on `n` in-process ranks (threads, each a real run on the shared
/// tree); the root's merged results.
fn over_ranks(dir: &Path, text: &str, n: usize) -> RunResult {
    let opts = RunOptions::new(dir.join("merged.json"), vec!["storlab".into()]);
    let decode = |t: &str, label: &Path, place: &crate::run::cluster::Place| {
        crate::workloads::fs::workload::for_rank(t, label, place)
    };
    let mut out = crate::run::cluster::in_process(n, text, &opts, &decode).into_iter();
    let root = out.next().unwrap().unwrap().expect("the root's results");
    assert!(out.all(|r| r.unwrap().is_none()));
    root
}

#[test]
fn mdtest_phases_over_ranks_share_one_tree_and_report_as_io500_does() {
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("tree");
    for (preset, unique) in [("easy", true), ("hard", false)] {
        let text = job(
            &anchor,
            &format!("threads = 2\n[fs.mdtest]\nitems = 25\nio500 = \"{preset}\"\nshift = 1\n"),
        );
        let r = over_ranks(dir.path(), &text, 2);
        let m =
            r.fs.as_ref()
                .unwrap()
                .mdtest
                .as_ref()
                .expect("mdtest's figures");
        assert_eq!(
            (m.tasks, m.items, m.unique_dir),
            (4, 25, unique),
            "{preset}"
        );
        // Every phase did each task's items, every rank's merged: 2 ranks × 2 threads × 25.
        let phases: Vec<&str> = m.phases.iter().map(|p| p.phase.as_str()).collect();
        let want: &[&str] = if unique {
            &["tree create", "create", "stat", "remove", "tree remove"]
        } else {
            &["create", "stat", "read", "remove"]
        };
        assert_eq!(phases, want, "{preset}");
        for p in &m.phases {
            let items = if p.phase.starts_with("tree") { 4 } else { 100 };
            assert_eq!((p.items, p.errors), (items, 0), "{preset} {}", p.phase);
            assert!((p.items_per_s - items as f64 / p.seconds).abs() < 1e-6 * p.items_per_s);
        }
        // IO500's lines, one per phase, their rate in kIOPS.
        let names: Vec<&str> = m.io500_results.iter().map(|l| l.name.as_str()).collect();
        let want: Vec<String> = want
            .iter()
            .filter(|p| !p.starts_with("tree"))
            .map(|p| {
                let what = match *p {
                    "create" => "write",
                    "remove" => "delete",
                    x => x,
                };
                format!("mdtest-{preset}-{what}")
            })
            .collect();
        assert_eq!(names, want);
        let create = &m.phases.iter().find(|p| p.phase == "create").unwrap();
        assert!((m.io500_results[0].kiops - create.items_per_s / 1e3).abs() < 1e-9);
        assert!(m.io500_score().is_some());
        // The merged figures are every rank's: each rank's own file holds its half.
        let run = r.fs.as_ref().unwrap().run("mdtest create 1").unwrap();
        let creates = run
            .operations
            .iter()
            .find(|o| o.operation == "create")
            .unwrap();
        assert_eq!(creates.figures.ops, 100);
        let mine = crate::results::file::load(&dir.path().join("merged.rank1.json")).unwrap();
        let theirs = mine.fs.unwrap();
        let rank1 = theirs.run("mdtest create 1").unwrap();
        assert_eq!(
            rank1
                .operations
                .iter()
                .find(|o| o.operation == "create")
                .unwrap()
                .figures
                .ops,
            50
        );
        // mdtest-hard writes 3901 bytes to each file and reads them back.
        if !unique {
            let w = run
                .operations
                .iter()
                .find(|o| o.operation == "write")
                .unwrap();
            assert_eq!(w.figures.bytes, 100 * 3901);
            let read = r.fs.as_ref().unwrap().run("mdtest read 1").unwrap();
            let rd = read
                .operations
                .iter()
                .find(|o| o.operation == "read")
                .unwrap();
            assert_eq!(
                (rd.figures.ops, rd.figures.bytes, rd.figures.errors),
                (100, 100 * 3901, 0)
            );
        }
        // Nothing is left of the tasks' files but the anchor and its marker.
        let fs = r.fs.unwrap();
        assert_eq!((fs.end.files, fs.end.dirs), (0, 0), "{preset}");
    }
}

#[test]
fn ranks_sharing_a_tree_each_act_on_their_own_files_after_the_first_made_it() {
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("tree");
    let text = job(
        &anchor,
        "shared = true\ndepth = 1\nwidth = 2\nfiles = 10\nsizes = \"4k\"\nmix = \"getattr:3,read:1\"\nduration = \"300ms\"\ninterval = \"100ms\"\n",
    );
    let r = over_ranks(dir.path(), &text, 2);
    let fs = r.fs.unwrap();
    // The first rank made the tree, the other ran the format with nothing to do.
    let format = fs.run("format").unwrap();
    assert_eq!(op(format, "create").ops, 20);
    let rank1 = crate::results::file::load(&dir.path().join("merged.rank1.json")).unwrap();
    let rank1 = rank1.fs.unwrap();
    assert!(rank1.run("format").unwrap().operations.is_empty());
    // Then each rank read its own half of the files, none missing.
    let run = fs.run("r1").unwrap();
    for o in &run.operations {
        assert_eq!(o.figures.errors, 0, "{o:?}");
        assert_eq!(o.unavailable, 0, "{o:?}");
    }
    assert!(op(rank1.run("r1").unwrap(), "getattr").ops > 0);
    // Another rank's anchor is needed otherwise.
    let e = crate::workloads::fs::workload::for_rank(
        &job(&anchor, "depth = 1\n"),
        Path::new("fs.toml"),
        &crate::run::cluster::Place {
            rank: 0,
            ranks: 2,
            host: "h".into(),
            node: 0,
        },
    )
    .err()
    .unwrap();
    assert!(e.contains("its own anchor"), "{e}");
}
