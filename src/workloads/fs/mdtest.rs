//! mdtest-class phases (IO500's mdtest-easy and mdtest-hard): their configuration, the tree
//! they make (a directory per thread of every rank, or one for all), and the file each
//! thread's operation of each phase acts on.

use super::spec::MdtestSpec;
use super::tree::{Shape, Spread};
use crate::job::{JobError, SectionErrors};

/// The mdtest phases, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MdtestConfig {
    /// Files of each thread.
    pub items: u64,
    /// Each thread in its own directory.
    pub unique_dir: bool,
    /// Bytes written to each file as it is created.
    pub write_bytes: u64,
    /// Bytes read from each file in the read phase.
    pub read_bytes: u64,
    /// The phases, in order.
    pub phases: Vec<MdPhase>,
    /// Ranks between a thread and the files it stats, reads and removes.
    pub shift: u64,
    /// Iterations.
    pub iterations: u32,
    /// The IO500 preset, when one was given: `easy` or `hard`.
    pub io500: Option<String>,
    /// Threads of each rank.
    pub threads: u32,
}

/// One mdtest phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MdPhase {
    /// File creation.
    Create,
    /// File stat.
    Stat,
    /// File read.
    Read,
    /// File removal.
    Remove,
}

impl MdPhase {
    /// Its name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            MdPhase::Create => "create",
            MdPhase::Stat => "stat",
            MdPhase::Read => "read",
            MdPhase::Remove => "remove",
        }
    }
}

/// Resolves `[fs.mdtest]` for `threads` threads a rank.
pub(super) fn mdtest(
    e: &SectionErrors,
    m: &MdtestSpec,
    threads: u32,
) -> Result<MdtestConfig, JobError> {
    let hard = match m.io500.as_deref() {
        None => None,
        Some("easy") => Some(false),
        Some("hard") => Some(true),
        Some(other) => {
            return Err(e.error("mdtest.io500", format!("`{other}`: use easy or hard")));
        }
    };
    let items = m.items.ok_or_else(|| {
        e.error(
            "mdtest.items",
            "give the files of each thread (mdtest's -n), e.g. items = 1000".into(),
        )
    })?;
    if items == 0 || items > super::tree::MAX_FILES {
        return Err(e.error(
            "mdtest.items",
            format!("give 1 to {} files a thread", super::tree::MAX_FILES),
        ));
    }
    // IO500's mdtest-hard: 3901 bytes written and read, one directory for every task.
    let preset_bytes = if hard == Some(true) { 3901 } else { 0 };
    let write_bytes = m.write_bytes.map_or(preset_bytes, |s| s.0);
    let read_bytes = m.read_bytes.map_or(preset_bytes, |s| s.0);
    for (k, v) in [("write_bytes", write_bytes), ("read_bytes", read_bytes)] {
        if v > super::config::MAX_XFER {
            return Err(e.error(&format!("mdtest.{k}"), "give at most 64 MiB".into()));
        }
    }
    if read_bytes > write_bytes {
        return Err(e.error(
            "mdtest.read_bytes",
            format!("{read_bytes} bytes is more than each file holds ({write_bytes}, write_bytes)"),
        ));
    }
    let phases = match &m.phases {
        None if hard == Some(false) => vec![MdPhase::Create, MdPhase::Stat, MdPhase::Remove],
        None => vec![
            MdPhase::Create,
            MdPhase::Stat,
            MdPhase::Read,
            MdPhase::Remove,
        ],
        Some(list) => list
            .iter()
            .map(|p| match p.trim() {
                "create" | "write" => Ok(MdPhase::Create),
                "stat" => Ok(MdPhase::Stat),
                "read" => Ok(MdPhase::Read),
                "remove" | "delete" => Ok(MdPhase::Remove),
                other => Err(e.error(
                    "mdtest.phases",
                    format!("`{other}`: use create, stat, read and remove"),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    if phases.first() != Some(&MdPhase::Create) {
        return Err(e.error(
            "mdtest.phases",
            "the phases start with create: the others act on the files it makes".into(),
        ));
    }
    let iterations = m.iterations.unwrap_or(1);
    if !(1..=100).contains(&iterations) {
        return Err(e.error("mdtest.iterations", "give 1 to 100 iterations".into()));
    }
    if threads == 0 || threads > super::config::MAX_THREADS {
        return Err(e.error(
            "threads",
            format!("give 1 to {} threads", super::config::MAX_THREADS),
        ));
    }
    Ok(MdtestConfig {
        items,
        unique_dir: m.unique_dir.unwrap_or(hard != Some(true)),
        write_bytes,
        read_bytes,
        phases,
        shift: m.shift.unwrap_or(0),
        iterations,
        io500: m.io500.clone(),
        threads,
    })
}

impl MdtestConfig {
    /// The tree of `ranks` ranks of these phases: a directory per thread of every rank under
    /// the anchor, or the anchor itself for all; `items` files each, of `write_bytes`.
    pub(crate) fn shape(&self, seed: u64, ranks: u64) -> Shape {
        let tasks = u64::from(self.threads) * ranks;
        let (depth, width, files) = if self.unique_dir {
            (1, u32::try_from(tasks).unwrap_or(u32::MAX), self.items)
        } else {
            (0, 0, self.items.saturating_mul(tasks))
        };
        Shape {
            depth,
            width,
            files,
            sizes: vec![(self.write_bytes, 1)],
            spread: Spread::Bottom,
            seed,
        }
    }
}

/// Runs the phases of `cfg`'s mdtest on `tree`, iteration by iteration: each task's
/// directory made (with a directory per task), then each phase, then the directories
/// removed after a remove phase. Every phase is a run of its own: on many hosts each starts
/// on every rank at once, as mdtest's barriers.
pub(super) fn run_phases(
    runner: &mut super::workload::Runner<'_>,
    tree: &super::anchor::Tree,
) -> anyhow::Result<()> {
    let cfg = runner.cfg;
    let Some(m) = &cfg.mdtest else {
        return Ok(());
    };
    for it in 1..=m.iterations {
        if m.unique_dir
            && !runner.execute(tree, &super::jobs::mdtest_tree_job(cfg, true, it), true)?
        {
            return Ok(());
        }
        for &phase in &m.phases {
            runner.execute(tree, &super::jobs::mdtest_job(cfg, phase, it), true)?;
            if runner.stopped() {
                return Ok(());
            }
        }
        if m.unique_dir && m.phases.contains(&MdPhase::Remove) {
            runner.execute(tree, &super::jobs::mdtest_tree_job(cfg, false, it), true)?;
            if runner.stopped() {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// mdtest's figures from the phases' runs (`mdtest PHASE ITERATION`, `mdtest tree create
/// ITERATION`): each phase's items and rate, the summary over iterations, IO500's lines.
pub(super) fn summary(
    m: &MdtestConfig,
    runs: &[super::section::FsRun],
    ranks: u64,
) -> super::section::MdtestResult {
    let mut out = super::section::MdtestResult {
        io500: m.io500.clone(),
        tasks: u64::from(m.threads) * ranks,
        items: m.items,
        unique_dir: m.unique_dir,
        write_bytes: m.write_bytes,
        read_bytes: m.read_bytes,
        ..Default::default()
    };
    out.fill(runs);
    out
}

/// The description's lines of the phases.
pub(super) fn describe(
    cfg: &super::config::FsConfig,
    m: &MdtestConfig,
    d: &mut crate::results::description::Description,
) {
    use crate::results::description::Line;
    use crate::units::{format_count, format_size};
    let tasks = u64::from(m.threads) * cfg.rank.ranks;
    let phases: Vec<&str> = m.phases.iter().map(|p| p.name()).collect();
    d.head.push(Line::new(
        "mdtest",
        format!(
            "{}{} task{} ({} thread{} a rank), {} files each, {}; {}{}",
            m.io500
                .as_ref()
                .map(|p| format!("IO500's mdtest-{p}: "))
                .unwrap_or_default(),
            format_count(tasks),
            if tasks == 1 { "" } else { "s" },
            m.threads,
            if m.threads == 1 { "" } else { "s" },
            format_count(m.items),
            if m.unique_dir {
                "each task in a directory of its own"
            } else {
                "every task in one directory"
            },
            if m.write_bytes > 0 {
                format!("{} written to each file", format_size(m.write_bytes))
            } else {
                "empty files".into()
            },
            if m.read_bytes > 0 {
                format!(", {} read of each", format_size(m.read_bytes))
            } else {
                String::new()
            }
        ),
    ));
    d.head.push(Line::new(
        "phases",
        format!(
            "{} ({} iteration{}), each from every task's start to the last one's end{}",
            phases.join(", "),
            m.iterations,
            if m.iterations == 1 { "" } else { "s" },
            if m.shift > 0 {
                format!(
                    "; stat, read and remove act on the files of the rank {} on",
                    m.shift
                )
            } else {
                String::new()
            }
        ),
    ));
}
