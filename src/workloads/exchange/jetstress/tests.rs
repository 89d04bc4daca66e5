//! Jetstress files read as Jetstress reads them: a real `JetstressConfig.xml` (the template
//! of tests/fixtures/jetstress/, byte for byte as published) and files written from its format
//! with published tests' profiles (NetApp TR-3867, NetApp's Jetstress 2013 test), each run as
//! the same job as the flags that say the same.

use super::*;
use crate::units::Percent;
use crate::workloads::exchange::cli::{ExchangeArgs, build as build_exchange};
use crate::workloads::exchange::{ExchangeFile, TestType, Version, resolve, transactional_job};

const TEMPLATE: &str = include_str!("../../../../tests/fixtures/jetstress/automation-template.xml");
const TR3867: &str = include_str!("../../../../tests/fixtures/jetstress/tr3867-2010.xml");
const TR3867_FLASH: &str =
    include_str!("../../../../tests/fixtures/jetstress/tr3867-flash-cache-2010.xml");
const NETAPP_2013: &str =
    include_str!("../../../../tests/fixtures/jetstress/netapp-2013-global-threads.xml");

fn map(dir: &Path) -> Vec<(String, PathBuf)> {
    vec![(r"C:\ExchangeVolumes".to_string(), dir.to_path_buf())]
}

/// Writes `text` to `dir/name` (and the directories its databases and logs map to).
fn written(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn the_published_template_is_refused_for_its_placeholder_with_its_line() {
    assert!(is_config(TEMPLATE));
    let e = read(Path::new("JetstressConfig.xml"), TEMPLATE, &[]).unwrap_err();
    assert_eq!(e.location, "JetstressConfig.xml:6");
    assert_eq!(e.key, "configuration/TestDesignInfo/Type");
    assert!(
        e.message.contains("`asfdsa`") && e.message.contains("Performance, Stress"),
        "{e}"
    );
}

#[test]
fn the_published_template_filled_in_reads_as_jetstress_2013() {
    let text = TEMPLATE.replace("asfdsa", "Stress");
    let c = read(Path::new("JetstressConfig.xml"), &text, &[]).unwrap();
    let s = &c.spec;
    assert_eq!(s.version, Some(ThreadsSpec::Word("2013".into())));
    assert_eq!(s.test.as_deref(), Some("stress"));
    assert_eq!(s.duration.map(|d| d.0.as_secs()), Some(7200));
    assert_eq!(
        (s.maintenance, s.verify, s.copies),
        (Some(true), Some(true), Some(2))
    );
    assert_eq!(s.page_size.map(|p| p.0), Some(32768));
    // The stress test's thresholds ("Lenient"), not the performance test's.
    assert_eq!(s.max_latency.map(|d| d.0.as_millis()), Some(200));
    assert_eq!(s.db_read_latency.map(|d| d.0.as_millis()), Some(20));
    assert_eq!(s.log_write_latency.map(|d| d.0.as_millis()), Some(10));
    // The template's blanks set nothing.
    assert_eq!((s.threads.clone(), s.mailboxes), (None, None));
    let left: Vec<&str> = c.left_out.iter().map(|l| l.1.as_str()).collect();
    for element in [
        "<MaximumLogWriteLatency>200",
        "<OperationMix",
        "<MarginIops>",
        "<MaxVerPages>",
    ] {
        assert!(
            left.iter().any(|l| l.starts_with(element)),
            "{element}: {left:?}"
        );
    }
    // Every line named is the element's own.
    for (at, element, _) in &c.left_out {
        let line: usize = at.rsplit(':').next().unwrap().parse().unwrap();
        let name = element
            .trim_start_matches('<')
            .split([' ', '>', '/'])
            .next()
            .unwrap();
        assert!(
            text.lines().nth(line - 1).unwrap().contains(name),
            "{at} {element}"
        );
    }
    let cfg = resolve(s, "JetstressConfig.xml").unwrap();
    assert_eq!(
        (cfg.version, cfg.test, cfg.copies),
        (Version::V2013, TestType::Stress, 2)
    );
}

/// NetApp TR-3867's servers as Jetstress 2010 files: 3,600 and 6,000 mailboxes a server at
/// 0.12 and 0.15 IOPS, two servers each: 864 and 1,800 transactional IOPS in all.
#[test]
fn tr_3867_files_are_sized_as_jetstress_sizes_them() {
    let dir = tempfile::tempdir().unwrap();
    for (text, dbs, threads, per_server) in [(TR3867, 4, 5, 432.0), (TR3867_FLASH, 6, 6, 900.0)] {
        let c = read(Path::new("tr3867.xml"), text, &map(dir.path())).unwrap();
        let cfg = resolve(&c.spec, "tr3867.xml").unwrap();
        assert_eq!(cfg.version, Version::V2010);
        assert_eq!(cfg.databases, dbs);
        assert_eq!(cfg.threads, Some(threads));
        assert!(!cfg.global_threads());
        assert!((cfg.target_iops(cfg.mailboxes) - per_server).abs() < 1e-9);
        assert!(
            (2.0 * cfg.target_iops(cfg.mailboxes) - [864.0, 1800.0][dbs as usize / 6]).abs() < 1e-9
        );
        assert_eq!(cfg.mailbox_size_bytes, 2000 << 20);
        assert_eq!(cfg.db_paths[0], dir.path().join("EXVOL1").join("DB1"));
        assert_eq!(
            cfg.log_paths[dbs as usize - 1],
            dir.path()
                .join(format!("LOGVOL{}", dbs / 2))
                .join(format!("Log{dbs}"))
        );
        assert!(c.notes.is_empty(), "{:?}", c.notes);
    }
}

/// NetApp's Jetstress 2013 test: 7 threads shared by 7 databases, 2 copies each.
#[test]
fn a_jetstress_2013_file_shares_its_threads_and_keeps_its_copies() {
    let c = read(Path::new("netapp.xml"), NETAPP_2013, &[]).unwrap();
    let cfg = resolve(&c.spec, "netapp.xml").unwrap();
    assert!(cfg.global_threads());
    assert_eq!(cfg.threads_of_databases(cfg.threads.unwrap()), [1; 7]);
    assert_eq!(cfg.copies, 2);
    assert!((cfg.target_iops(7000) - 420.0).abs() < 1e-9);
    // Its Windows paths go to the scratch directory, and a note says how to place them.
    assert!(
        cfg.db_paths
            .iter()
            .all(|p| p == Path::new(crate::workloads::exchange::quick::DIR))
    );
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains(r"C:\ExchangeVolumes\EXVOL1\DB1") && n.contains("--map"))
    );
}

/// `storlab exchange JetstressConfig.xml` runs the job that `storlab exchange` with the same
/// values as flags runs: the same configuration, hence the same jobs.
#[test]
fn a_jetstress_file_runs_the_same_job_as_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let file = written(dir.path(), "JetstressConfig.xml", TR3867);
    let dbs: Vec<PathBuf> = ["EXVOL1/DB1", "EXVOL1/DB2", "EXVOL2/DB3", "EXVOL2/DB4"]
        .iter()
        .map(|p| dir.path().join(p))
        .collect();
    let logs: Vec<PathBuf> = [
        "LOGVOL1/Log1",
        "LOGVOL1/Log2",
        "LOGVOL2/Log3",
        "LOGVOL2/Log4",
    ]
    .iter()
    .map(|p| dir.path().join(p))
    .collect();
    let from_file = build_exchange(&ExchangeArgs {
        job: Some(file),
        spec: ExchangeSpec {
            db_paths: Some(dbs.clone()),
            log_paths: Some(logs.clone()),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let ms = |v: u64| Some(crate::units::Dur(Duration::from_millis(v)));
    let word = |w: &str| Some(ThreadsSpec::Word(w.into()));
    let from_flags = build_exchange(&ExchangeArgs {
        spec: ExchangeSpec {
            version: word("2010"),
            test: Some("performance".into()),
            mailboxes: Some(3600),
            mailbox_size: Some(Size(2000 << 20)),
            iops_per_mailbox: Some(0.12),
            databases: Some(4),
            threads: word("5"),
            copies: Some(1),
            maintenance: Some(true),
            verify: Some(true),
            duration: ms(7_200_000),
            db_read_latency: ms(20),
            max_latency: ms(100),
            log_write_latency: ms(10),
            page_size: Some(Size(32768)),
            db_paths: Some(dbs),
            log_paths: Some(logs),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    assert_eq!(from_file, from_flags);
    let job = |c: &crate::workloads::exchange::ExchangeConfig| {
        let t = c.target_iops(c.mailboxes);
        transactional_job(
            c,
            5,
            crate::workloads::exchange::Load::Rate(t),
            c.database_bytes(),
            c.duration_ms,
            0,
        )
    };
    assert_eq!(
        format!("{:?}", job(&from_file)),
        format!("{:?}", job(&from_flags))
    );
}

/// `storlab import` writes an `[exchange]` job that reads back to the same configuration, each
/// key under the element and line it came from.
#[test]
fn the_imported_job_reads_back_to_the_same_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let path = Path::new("tr3867.xml");
    let c = read(path, TR3867, &map(dir.path())).unwrap();
    let toml = to_toml(&c, path);
    assert!(
        toml.contains("# tr3867.xml:59: <MailboxCount>3600</MailboxCount>\nmailboxes = 3600\n"),
        "{toml}"
    );
    assert!(toml.contains("# left out (tr3867.xml:"), "{toml}");
    let parsed: ExchangeFile = crate::job::file::parse_toml(Path::new("job.toml"), &toml).unwrap();
    assert_eq!(
        resolve(&parsed.exchange, "job.toml").unwrap(),
        resolve(&c.spec, "tr3867.xml").unwrap()
    );
}

#[test]
fn bad_values_name_their_element_and_line() {
    let cases = [
        (
            "<Duration>P0Y0M0DT2H0M0S</Duration>",
            "<Duration>P0Y1M0DT0H0M0S</Duration>",
            "years or months",
        ),
        (
            "<Duration>P0Y0M0DT2H0M0S</Duration>",
            "<Duration>two hours</Duration>",
            "not a duration",
        ),
        (
            "<MailboxCount>3600</MailboxCount>",
            "<MailboxCount>many</MailboxCount>",
            "not a number of mailboxes",
        ),
        (
            "<ThreadCount>5</ThreadCount>",
            "<ThreadCount>-1</ThreadCount>",
            "not a thread count",
        ),
        (
            "<VerifyChecksum>true</VerifyChecksum>",
            "<VerifyChecksum>maybe</VerifyChecksum>",
            "true or false",
        ),
        (
            "<EseVersionGenerated>14.00.0639.019</EseVersionGenerated>",
            "<EseVersionGenerated>6.5.1</EseVersionGenerated>",
            "give --version",
        ),
    ];
    for (from, to, says) in cases {
        let text = TR3867.replace(from, to);
        let line = text.lines().position(|l| l.contains(to)).unwrap() + 1;
        let e = read(Path::new("j.xml"), &text, &[]).unwrap_err();
        assert_eq!(e.location, format!("j.xml:{line}"), "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    // A value storlab's own checks refuse names the element it came from.
    let dir = tempfile::tempdir().unwrap();
    let file = written(
        dir.path(),
        "j.xml",
        &TR3867.replace("<MailboxCount>3600<", "<MailboxCount>0<"),
    );
    let e = build_exchange(&ExchangeArgs {
        job: Some(file),
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("j.xml:59") && e.contains("MailboxCount (exchange.mailboxes)"),
        "{e}"
    );
    // Not XML, or not Jetstress's.
    assert!(read(Path::new("x.xml"), "<configuration><", &[]).is_err());
    assert!(!is_config("<Profile><TimeSpans/></Profile>"));
    assert!(!is_config("[exchange]\nmailboxes = 1\n"));
    let _ = Percent(0.0);
}
