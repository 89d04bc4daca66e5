//! Built-in test setups from published studies and classic workload mixes. Each preset is an
//! ordinary job file (so `storlab presets show NAME` prints something a user can copy and
//! edit); sources of every number are in docs/profiles.md. Presets default to small, quick
//! sizes and durations: scale them with `--size`, `--duration` and `--target`.

/// A built-in job file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Preset {
    /// Name for `--preset`.
    pub name: &'static str,
    /// One line: what it is.
    pub description: &'static str,
    /// Where its numbers come from.
    pub source: &'static str,
    /// The job file.
    pub toml: &'static str,
}

/// Every preset, in the order `storlab presets` lists them.
pub(crate) const PRESETS: &[Preset] = &[
    Preset {
        name: "exchange-2007-iometer",
        description: "Exchange 2007 emulation: 4 workers of 8 KiB random 35% read on 4 database targets, 1 worker of 4 KiB random reads on 4 log targets, database:log IOPS 4:1, repeated and averaged",
        source: "QLogic, 'QLogic 2500 Series 8Gb Fibre Channel Adapter of Choice in Microsoft Exchange Environments', white paper, 2013: its Iometer Exchange test procedure",
        toml: include_str!("presets/exchange-2007-iometer.toml"),
    },
    Preset {
        name: "exchange-cache-levels",
        description: "Exchange 2010 database I/O (32 KiB, 60% read, hot bands) on one LUN at 0, 25, 30, 50, 75 and 100% of it cached, a step per level",
        source: "QLogic, 'QLogic 2500 Series 8Gb Fibre Channel Adapter of Choice in Microsoft Exchange Environments', white paper, 2013: figures 2 and 3 (Jetstress at varying cache levels)",
        toml: include_str!("presets/exchange-cache-levels.toml"),
    },
    Preset {
        name: "exchange-cache-mailboxes",
        description: "Exchange 2010 maximum-mailboxes search without a cache and with one (50% of each database, write-back) in front of each database, compared",
        source: "NetApp, Wei Liu, 'Using Flash Cache for Exchange 2010', technical report TR-3867, 2011 (7,200 → 12,000 mailboxes)",
        toml: include_str!("presets/exchange-cache-mailboxes.toml"),
    },
    Preset {
        name: "cna-database-mix",
        description: "database mix: 60% read, 50% random, block size 4 KiB → 128 KiB, 12 workers × queue depth 15 on 12 targets",
        source: "IT Brand Pulse Labs for Brocade, 'CNA Performance with Exchange and Oracle', test report, c. 2010",
        toml: include_str!("presets/cna-database-mix.toml"),
    },
    Preset {
        name: "hba-scaling",
        description: "full duplex 50/50 by separate reader and writer workers, block size 512 B → 1 MiB, 1+1, 2+2, 4+4 and 8+8 workers",
        source: "Jack Fegreus, 'Do you need a 4Gbps FC SAN?', openBench Labs, 2006",
        toml: include_str!("presets/hba-scaling.toml"),
    },
    Preset {
        name: "exchange-heavy-20",
        description: "heavy Exchange model: 20 workers each on its own target: 12 × 4 KiB random reads, 6 × 4 KiB random writes, 2 × 64 KiB sequential log writes",
        source: "Jack Fegreus, 'Do you need a 4Gbps FC SAN?', openBench Labs, 2006",
        toml: include_str!("presets/exchange-heavy-20.toml"),
    },
    Preset {
        name: "oltp-8k",
        description: "OLTP database: 8 KiB random, 70% read / 30% write",
        source: "the classic Iometer and SNIA OLTP mix (storlab's reading; docs/profiles.md)",
        toml: include_str!("presets/oltp-8k.toml"),
    },
    Preset {
        name: "db-log",
        description: "database log: 64 KiB sequential writes, durable (O_DSYNC)",
        source: "database log writers (storlab's choice of size; docs/profiles.md)",
        toml: include_str!("presets/db-log.toml"),
    },
    Preset {
        name: "data-warehouse",
        description: "data warehouse scans: sequential reads, block size 64 KiB → 1 MiB",
        source: "decision-support scan sizes (storlab's choice; docs/profiles.md)",
        toml: include_str!("presets/data-warehouse.toml"),
    },
    Preset {
        name: "backup",
        description: "backup stream: 256 KiB sequential reads",
        source: "backup readers (storlab's choice of size; docs/profiles.md)",
        toml: include_str!("presets/backup.toml"),
    },
    Preset {
        name: "file-server",
        description: "the classic Iometer file-server mix: 512 B to 64 KiB, 80% read, 100% random",
        source: "Intel, the Iometer file-server access specification (docs/profiles.md)",
        toml: include_str!("presets/file-server.toml"),
    },
    Preset {
        name: "iometer-default",
        description: "Iometer's Default access specification: 2 KiB, 67% read, 100% random, one worker at queue depth 1",
        source: "Iometer's Default access specification, as Iometer 2004.07.30 to 1.1.0 save it in .icf files (docs/profiles.md)",
        toml: include_str!("presets/iometer-default.toml"),
    },
    Preset {
        name: "iometer-database",
        description: "the classic Iometer Database pattern: 8 KiB, 67% read, 100% random",
        source: "the Iometer Database access specification, as in Tom's Hardware's Iometer profiles (docs/profiles.md)",
        toml: include_str!("presets/iometer-database.toml"),
    },
    Preset {
        name: "iometer-workstation",
        description: "the classic Iometer Workstation pattern: 8 KiB, 80% read, 80% random",
        source: "the Iometer Workstation access specification, as in Tom's Hardware's Iometer profiles (docs/profiles.md)",
        toml: include_str!("presets/iometer-workstation.toml"),
    },
    Preset {
        name: "iometer-web-server",
        description: "the classic Iometer Web Server mix: 512 B to 512 KiB, 100% read, 100% random",
        source: "the Iometer Web Server access specification, as in Tom's Hardware's Iometer profiles (docs/profiles.md)",
        toml: include_str!("presets/iometer-web-server.toml"),
    },
    Preset {
        name: "iometer-sweep",
        description: "512 B, 4 KiB, 32 KiB, 64 KiB and 256 KiB, each sequential and random, read and write: 20 steps",
        source: "the block-size sets of Iometer studies (docs/profiles.md); the five sizes are storlab's choice",
        toml: include_str!("presets/iometer-sweep.toml"),
    },
    Preset {
        name: "data-reduction",
        description: "8 KiB random 70/30 with the written data at 1:1, compressing 3:1, deduplicating 3:1 and both: a step each",
        source: "storlab's choice, for arrays that compress and deduplicate inline (docs/profiles.md)",
        toml: include_str!("presets/data-reduction.toml"),
    },
    Preset {
        name: "database-sqlserver-oltp",
        description: "SQL Server validation: 8 KiB pages at 200 transactions/s, a write-through log with group commit, checkpoints; judged on Microsoft's 20 ms data-file and 5 ms log limits",
        source: "Microsoft's SQL Server I/O guidance for the limits; the I/Os per transaction are storlab's choice (docs/profiles.md)",
        toml: include_str!("presets/database-sqlserver-oltp.toml"),
    },
    Preset {
        name: "database-oracle-oltp",
        description: "Oracle validation: 8 KiB blocks at 200 transactions/s, O_DSYNC redo of 2 to 64 KiB with group commit, checkpoints; judged on 10 ms single-block reads and log writes",
        source: "IT Brand Pulse Labs for Brocade, 'CNA Performance with Exchange and Oracle' (redo 2–64 KB, reads 8 KB); Oracle's wait-event guidance for the limits (docs/profiles.md)",
        toml: include_str!("presets/database-oracle-oltp.toml"),
    },
    Preset {
        name: "database-postgresql",
        description: "PostgreSQL validation: 8 KiB pages at 200 transactions/s, 8 KiB WAL pages written then fdatasync with group commit, checkpoints; limits storlab's choice",
        source: "PostgreSQL's documentation for the page, WAL and sync method; the limits are storlab's choice (docs/profiles.md)",
        toml: include_str!("presets/database-postgresql.toml"),
    },
    Preset {
        name: "database-mysql",
        description: "MySQL (InnoDB) validation: 16 KiB pages at 200 transactions/s, redo flushed at each commit with group commit, checkpoints; limits storlab's choice",
        source: "MySQL's InnoDB documentation for the page and redo; the limits are storlab's choice (docs/profiles.md)",
        toml: include_str!("presets/database-mysql.toml"),
    },
    Preset {
        name: "orion-oltp",
        description: "ORION's oltp run level: 8 KiB random reads alone at rising loads (1 to 5 outstanding per disk), 60 s a point: the maximum IOPS",
        source: "Oracle ORION (Oracle I/O Numbers): its run levels and defaults (docs/profiles.md)",
        toml: include_str!("presets/orion-oltp.toml"),
    },
    Preset {
        name: "orion-dss",
        description: "ORION's dss run level: 1 MiB random reads alone at rising loads (1 to 2 outstanding per disk), 60 s a point: the maximum MB/s",
        source: "Oracle ORION (Oracle I/O Numbers): its run levels and defaults (docs/profiles.md)",
        toml: include_str!("presets/orion-dss.toml"),
    },
    Preset {
        name: "orion-simple",
        description: "ORION's simple run level: small 8 KiB random reads alone, then large 1 MiB random reads alone, at rising loads, 60 s a point",
        source: "Oracle ORION (Oracle I/O Numbers): its run levels and defaults (docs/profiles.md)",
        toml: include_str!("presets/orion-simple.toml"),
    },
    Preset {
        name: "orion-normal",
        description: "ORION's normal run level: every combination of small 8 KiB and large 1 MiB random read loads, 60 s a point",
        source: "Oracle ORION (Oracle I/O Numbers): its run levels and defaults (docs/profiles.md)",
        toml: include_str!("presets/orion-normal.toml"),
    },
    Preset {
        name: "etcd",
        description: "etcd disk check: a new 22 MiB log written in 2300-byte writes, each followed by fdatasync; p99 of the sync ≤ 10 ms, ≥ 50 synced writes/s",
        source: "etcd's documentation (WAL fsync p99 under 10 ms); IBM Cloud blog, 'Using Fio to Tell Whether Your Storage is Fast Enough for Etcd', 2019 (docs/profiles.md)",
        toml: include_str!("presets/etcd.toml"),
    },
    Preset {
        name: "etcd-openshift",
        description: "OpenShift's etcd disk check: 8000-byte writes, each followed by fdatasync; p99 of the sync ≤ 10 ms, ≥ 50 synced writes/s (500 with --heavy)",
        source: "OpenShift / OKD 4.14, 'Recommended etcd practices' (docs/profiles.md)",
        toml: include_str!("presets/etcd-openshift.toml"),
    },
];

/// The preset named `name`.
pub(crate) fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// The refusal of an unknown preset `name` among `names` (every preset, or a workload's):
/// `--preset: no preset is named `oltp`; did you mean oltp-8k? presets: …`. The nearest name is
/// one that `name` begins, or the most alike (Jaro-Winkler) when it is alike enough.
pub(crate) fn unknown(name: &str, what: &str, names: &[&str]) -> String {
    let lower = name.to_ascii_lowercase();
    let near = (names.iter())
        .find(|n| n.starts_with(&lower))
        .or_else(|| {
            (names.iter())
                .map(|n| (n, strsim::jaro_winkler(&lower, n)))
                .filter(|(_, score)| *score >= 0.8)
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(n, _)| n)
        })
        .map_or(String::new(), |n| format!("did you mean {n}? "));
    let what = if what.is_empty() {
        String::new()
    } else {
        format!("{what} ")
    };
    format!(
        "--preset: no {what}preset is named `{name}`; {near}{what}presets: {}",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_unknown_preset_suggests_the_nearest() {
        let all: Vec<&str> = super::PRESETS.iter().map(|p| p.name).collect();
        let m = super::unknown("oltp", "", &all);
        assert!(m.contains("did you mean oltp-8k?"), "{m}");
        assert!(super::unknown("oltp-8", "", &all).contains("did you mean oltp-8k?"));
        assert!(
            super::unknown("exchange-cache", "", &all)
                .contains("did you mean exchange-cache-levels?")
        );
        assert!(super::unknown("etdc", "", &all).contains("did you mean etcd?"));
        assert!(!super::unknown("zzzzzz", "", &all).contains("did you mean"));
    }

    use super::*;
    use std::path::Path;

    #[test]
    fn every_preset_resolves() {
        for p in PRESETS {
            let name = Path::new(p.name);
            assert!(p.toml.contains("# Source"), "{} names its source", p.name);
            // A workload's job file loads as `storlab run --preset` loads it.
            if let Some(room) = crate::workloads::room_of(p.toml) {
                let text = crate::workloads::JobText {
                    path: name,
                    text: p.toml,
                };
                let w = (room.load)(&text, &Default::default())
                    .unwrap_or_else(|e| panic!("{}: {e:#}", p.name));
                assert!(!w.jobs().is_empty(), "{}", p.name);
                continue;
            }
            let spec =
                crate::job::file::parse(name, p.toml).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let job = crate::job::resolve(&spec, Some((name, p.toml)))
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(!job.workers.is_empty(), "{}", p.name);
        }
    }

    #[test]
    fn published_shapes() {
        let job = |n: &str| {
            let p = find(n).unwrap();
            let spec = crate::job::file::parse(Path::new(n), p.toml).unwrap();
            crate::job::resolve(&spec, Some((Path::new(n), p.toml))).unwrap()
        };
        let hba = job("hba-scaling");
        assert_eq!(crate::job::steps::expand(&hba).len(), 12 * 4);
        let cna = job("cna-database-mix");
        assert_eq!(crate::job::steps::expand(&cna).len(), 6);
        assert_eq!(cna.workers.len(), 12);
        assert_eq!(cna.workers[0].queue_depth, 15);
        let levels = job("exchange-cache-levels");
        let steps = crate::job::steps::expand(&levels);
        let sizes: Vec<f64> = steps.iter().map(|s| s.parameters[0].1).collect();
        assert_eq!(sizes, [0.0, 25.0, 30.0, 50.0, 75.0, 100.0]);
        let cache = |s: &crate::job::steps::Step| s.job.targets[0].cache.clone().unwrap().size;
        assert_eq!(cache(&steps[2]), crate::job::cache::CacheSize::Pct(30.0));
        assert_eq!(
            levels.targets[0].cache.as_ref().unwrap().line_bytes,
            32 << 10
        );
        let sweep = job("iometer-sweep");
        assert_eq!(crate::job::steps::expand(&sweep).len(), 5 * 2 * 2);
        let web = job("iometer-web-server");
        let shares: u32 = web.workers[0].access[0]
            .block_sizes
            .iter()
            .map(|b| b.1)
            .sum();
        assert_eq!(shares, 100);
        let heavy = job("exchange-heavy-20");
        assert_eq!(heavy.workers.len(), 20);
        assert_eq!(heavy.targets.len(), 20);
        let mut used: Vec<usize> = heavy.workers.iter().map(|w| w.targets[0]).collect();
        assert!(heavy.workers.iter().all(|w| w.targets.len() == 1));
        used.sort();
        used.dedup();
        assert_eq!(used.len(), 20, "each worker on its own target");
        let ex = job("exchange-2007-iometer");
        let db: f64 = ex
            .workers
            .iter()
            .filter(|w| w.name.starts_with("db"))
            .map(|w| w.rate.unwrap().iops)
            .sum();
        let log: f64 = ex
            .workers
            .iter()
            .filter(|w| w.name.starts_with("log"))
            .map(|w| w.rate.unwrap().iops)
            .sum();
        assert!((db / log - 4.0).abs() < 1e-9);
    }
}
