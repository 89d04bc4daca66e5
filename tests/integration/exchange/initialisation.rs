//! Database initialisation and the profiles refused before it: databases are reused when the
//! layout is the same and rebuilt when it changes; a bad profile exits 2 with a clear message
//! and creates nothing; a page smaller than the device's logical block is refused with advice
//! `storlab exchange` accepts.

use super::devices::LoopFs;
use super::judged;
use crate::harness::{
    ExchangeArgs, MIB, array_at, at, f64_at, loop_skip_reason, run_in, scratch, skip, str_at,
    u64_at,
};
use serde_json::Value;
use std::path::Path;

#[test]
fn initialisation_is_reused_and_rebuilt_when_the_databases_change_size() {
    let dir = scratch();
    let run = |mailbox_size: &str, name: &str| {
        let command = ExchangeArgs::sized(100, mailbox_size, "2%", 2)
            .measure("1s")
            .db_path(dir.path())
            .lenient()
            .results(&dir.path().join(name));
        judged(dir.path(), &command).1
    };
    let init = |v: &Value| {
        (
            at(v, "/exchange/initialisation/reused").as_bool().unwrap(),
            f64_at(v, "/exchange/initialisation/seconds"),
            u64_at(v, "/exchange/initialisation/written_bytes"),
        )
    };
    let reused_targets = |v: &Value| -> Vec<(String, bool)> {
        array_at(v, "/targets")
            .iter()
            .map(|t| {
                (
                    str_at(t, "/name").to_string(),
                    at(t, "/prepare/reused").as_bool().unwrap(),
                )
            })
            .collect()
    };

    // 100 × 16 MiB × 2% = 32 MiB: two 16 MiB databases and two 64 MiB log streams.
    let first = run("16MiB", "first.json");
    let (reused, first_s, written) = init(&first);
    assert!(!reused, "nothing to reuse on the first run");
    assert_eq!(written, 2 * 16 * MIB + 2 * 64 * MIB);

    // Reused as it is: nothing written. (How long the two took is printed, not judged: it is
    // the machine's, and a loaded one can stretch opening four files past writing 160 MiB on
    // a quiet disk.)
    let second = run("16MiB", "second.json");
    let (reused, second_s, written) = init(&second);
    assert!(
        reused,
        "same layout, not reused: {:?}",
        reused_targets(&second)
    );
    assert_eq!(written, 0);
    eprintln!("initialisation: built in {first_s} s, reused in {second_s} s");

    // A new mailbox size: the databases are rebuilt at 24 MiB, the log streams kept.
    let third = run("24MiB", "third.json");
    let (reused, _, written) = init(&third);
    assert!(!reused, "databases of a new size were reused");
    assert_eq!(written, 2 * 24 * MIB, "{:?}", reused_targets(&third));
    assert_eq!(
        reused_targets(&third),
        [
            ("db1".to_string(), false),
            ("db1-logs".to_string(), true),
            ("db2".to_string(), false),
            ("db2-logs".to_string(), true),
        ]
    );
    assert_eq!(u64_at(&third, "/exchange/database_size_bytes"), 24 * MIB);
}

// ---- Bad profiles -----------------------------------------------------------------------

#[test]
fn bad_profiles_exit_2_with_clear_messages() {
    let dir = scratch();
    let db = dir.path().to_str().unwrap();
    let missing = dir.path().join("no-such-dir");
    let missing = missing.to_str().unwrap();
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["--mailboxes", "0", "--db-path", db],
            vec!["mailboxes", "at least 1"],
        ),
        (
            vec![
                "--mailboxes",
                "1000000",
                "--mailbox-size",
                "10GiB",
                "--capacity",
                "100%",
                "--db-path",
                db,
            ],
            vec!["free", db],
        ),
        (
            vec![
                "--mailboxes",
                "100",
                "--mailbox-size",
                "32MiB",
                "--capacity",
                "1%",
            ]
            .into_iter()
            .chain(["--db-path", missing])
            .collect(),
            vec![missing, "does not exist"],
        ),
        (
            vec!["--version", "2003", "--db-path", db],
            vec!["2003", "2007, 2010, 2013, 2016 or 2019"],
        ),
        (
            vec!["--version", "2007", "--maintenance", "on", "--db-path", db],
            vec!["maintenance", "2007"],
        ),
    ];
    for (args, message) in cases {
        let mut all = args.clone();
        all.extend(["--duration", "3s", "-q", "-o", "r.json"]);
        let out = run_in(dir.path(), std::iter::once("exchange").chain(all));
        assert_eq!(
            out.code,
            Some(2),
            "{args:?}: exit code\n--- stderr\n{}",
            out.stderr
        );
        out.stderr_has(&message);
        assert!(
            !out.stderr.contains("panicked"),
            "{args:?}: panic\n{}",
            out.stderr
        );
    }
    // Nothing was created: every check came before initialisation.
    let made: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(made.is_empty(), "files left behind: {made:?}");
}

/// `storlab exchange` with 512-byte pages on one database on `fs`, results in `r.json`: on a
/// device of 4 KiB logical blocks, a page it cannot take.
fn small_pages_on(fs: &LoopFs) -> ExchangeArgs {
    ExchangeArgs::sized(100, "16MiB", "1%", 1)
        .flags(&["--page-size", "512"])
        .measure("3s")
        .db_path(&fs.mount_point)
        .results(Path::new("r.json"))
}

/// A 4 KiB-sector loop device with ext4, mounted; `None` after [`skip`] said why `test` cannot
/// run when the machine cannot make one.
fn four_k_fs(dir: &Path, test: &str) -> Option<LoopFs> {
    if let Some(reason) = loop_skip_reason(&["mkfs.ext4"]) {
        skip(test, &reason);
        return None;
    }
    match LoopFs::create(dir, "4k", 256, &["--sector-size", "4096"], &[]) {
        Ok(fs) => Some(fs),
        Err(e) => {
            skip(test, &e);
            None
        }
    }
}

#[test]
fn a_page_smaller_than_the_logical_block_is_refused() {
    let dir = scratch();
    let Some(fs) = four_k_fs(
        dir.path(),
        "a_page_smaller_than_the_logical_block_is_refused",
    ) else {
        return;
    };
    let out = small_pages_on(&fs).run(dir.path());
    out.expect_code(2)
        .stderr_has(&["logical block size is 4096", "512"]);
}

/// The refusal's advice must be something `storlab exchange` accepts: a `--page-size`, not
/// `buffered = true (--buffered)`, which the exchange command has no flag or key for.
#[test]
fn the_page_size_refusal_suggests_a_fix_the_exchange_command_has() {
    let dir = scratch();
    let Some(fs) = four_k_fs(
        dir.path(),
        "the_page_size_refusal_suggests_a_fix_the_exchange_command_has",
    ) else {
        return;
    };
    let out = small_pages_on(&fs).run(dir.path());
    out.expect_code(2).stderr_has(&["--page-size"]);
    // Following the advice must not be a usage error.
    let tried = small_pages_on(&fs).flags(&["--buffered"]).run(dir.path());
    assert!(
        !out.stderr.contains("--buffered") || tried.code != Some(2),
        "the error suggests --buffered, which `storlab exchange` rejects:\n{}\n--- with \
         --buffered:\n{}",
        out.stderr.trim(),
        tried.stderr.trim()
    );
}
