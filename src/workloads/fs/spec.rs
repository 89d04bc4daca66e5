//! The `[fs]` section as written, and `storlab fs`'s flags: one struct, [`FsSpec`], is both
//! (each key is declared once, its flag is its name in kebab case: `files_per_dir` nowhere,
//! `xfersize` is `--xfersize`), so a flag can only set what the file can and the two cannot
//! drift. Lists of workloads (`[[fs.workload]]`, vdbench's `fwd`s) and of runs
//! (`[[fs.run]]`, its `rd`s) are the file's alone; the section's own keys are their defaults.
//! Validated without syscalls by [`super::config::resolve`].

use crate::units::{Dur, Size};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A job file with an `[fs]` section.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FsFile {
    /// The section.
    pub fs: FsSpec,
    /// What the written data is like (compression and dedupe ratios), as a plain job's.
    pub data: Option<crate::job::data::DataSpec>,
}

/// The mdtest flags given set their keys over the file's `[fs.mdtest]`.
impl super::super::Overlay for Option<MdtestSpec> {
    fn overlay(&mut self, over: &Self) {
        let Some(o) = over else { return };
        let m = self.get_or_insert_with(MdtestSpec::default);
        macro_rules! keys {
            ($($k:ident),*) => { $( if o.$k.is_some() { m.$k.clone_from(&o.$k); } )* };
        }
        keys!(
            items,
            io500,
            unique_dir,
            write_bytes,
            read_bytes,
            phases,
            shift,
            iterations
        );
    }
}

super::super::spec! {
    /// The `[fs]` section: the tree (anchor, depth, width, files, sizes), the defaults of
    /// its workloads and runs, and the rules. Every key is optional.
    #[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, clap::Args, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct FsSpec {
        /// Free text.
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// The directory the tree is made in: a new directory, or one storlab made (default
        /// ./storlab-scratch/fs).
        #[arg(long, value_name = "DIR")]
        anchor: Option<PathBuf>,
        /// Levels of directories under the anchor (default 1).
        #[arg(long, value_name = "N")]
        depth: Option<u32>,
        /// Directories in each directory above the deepest level (default 4).
        #[arg(long, value_name = "N")]
        width: Option<u32>,
        /// Files in each directory that holds files (default 100).
        #[arg(long, value_name = "N")]
        files: Option<u64>,
        /// File sizes: one size, or sizes with weights, e.g. 4k:50,64k:50 (default 4KiB).
        #[arg(long, value_name = "SIZE[:WEIGHT],...")]
        sizes: Option<String>,
        /// Which directories hold files: bottom (the deepest, default) or all.
        #[arg(long, value_name = "bottom|all")]
        distribution: Option<String>,
        /// How files are opened: none (default), or any of o_direct, o_dsync, o_sync, fsync
        /// (fsync before each close of a written file), e.g. o_direct,fsync.
        #[arg(long, value_name = "FLAG,...")]
        openflags: Option<String>,
        /// Ranks of a run over many hosts share the tree, each its own files (vdbench's
        /// `shared=yes`).
        #[arg(long, value_name = "true|false")]
        shared: Option<bool>,
        /// What to do with the tree before the runs: restart (default: make what is missing,
        /// reuse the rest), yes (remove it and make it anew), no (use it as it is), only
        /// (as yes, then stop), clean (remove it and stop).
        #[arg(long, value_name = "restart|yes|no|only|clean")]
        format: Option<String>,
        /// Threads of each workload (default 1).
        #[arg(long, value_name = "N")]
        threads: Option<u32>,
        /// The operations, one or several with weights: read, write, create, delete, open,
        /// close, getattr, setattr, access, mkdir, rmdir, copy, rename, e.g.
        /// create:20,getattr:50,delete:20,read:10 (default read).
        #[arg(long, alias = "operation", value_name = "OP[:WEIGHT],...")]
        #[serde(alias = "operation", alias = "operations")]
        mix: Option<String>,
        /// Reads, percent, of the transfers of a read or write (vdbench's rdpct; default:
        /// every transfer is the operation's).
        #[arg(long, value_name = "PCT")]
        rdpct: Option<f64>,
        /// How a file is read or written: sequential (default, from its start to its end),
        /// random (as many transfers as it has, at random offsets) or random,shared (several
        /// threads on one file at once).
        #[arg(long, value_name = "sequential|random|random,shared")]
        fileio: Option<String>,
        /// Which file comes next: random (default) or sequential.
        #[arg(long, value_name = "random|sequential")]
        fileselect: Option<String>,
        /// Random file I/O: transfers before a file is closed and another chosen (vdbench's
        /// stopafter; default: as many as the file holds).
        #[arg(long, value_name = "N")]
        stopafter: Option<u64>,
        /// Bytes of each read or write: one size, or sizes with weights (default 128KiB, as
        /// vdbench's).
        #[arg(long, value_name = "SIZE[:WEIGHT],...")]
        xfersize: Option<String>,
        /// Operations a second of each run, all its threads together, or max (closed loop,
        /// the default).
        #[arg(long, value_name = "OPS|max")]
        rate: Option<RateSpec>,
        /// Open loop: uniform (default) or poisson arrivals.
        #[arg(long, value_name = "uniform|poisson")]
        arrivals: Option<String>,
        /// Measured time of each run (vdbench's elapsed; default 30s).
        #[arg(long, value_name = "TIME")]
        duration: Option<Dur>,
        /// Warm-up before each run's measured time (vdbench's warmup; default 0).
        #[arg(long, value_name = "TIME")]
        ramp: Option<Dur>,
        /// Time-series interval (default 1s).
        #[arg(long, value_name = "TIME")]
        interval: Option<Dur>,
        /// Engine: psync (default: each operation a system call of its own) or null (no
        /// system call: storlab's own cost per operation).
        #[arg(long, value_name = "psync|null")]
        engine: Option<String>,
        /// Seed of every random choice and of the data written.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Limits on the 99th percentile of operations' latency, e.g. create=5ms,getattr=1ms
        /// (`*` for every operation).
        #[arg(long, value_name = "OP=TIME,...")]
        p99: Option<String>,
        /// Limits on operations' mean latency, e.g. read=2ms.
        #[arg(long, value_name = "OP=TIME,...")]
        mean: Option<String>,
        /// Operations a second each operation must reach, e.g. create=1000.
        #[arg(long, value_name = "OP=N,...")]
        min_rate: Option<String>,
        /// Failed operations allowed before the verdict fails (default 0).
        #[arg(long, value_name = "N")]
        max_errors: Option<u64>,
        /// Bytes of each write of the format (default: the largest transfer size).
        #[arg(long, value_name = "SIZE")]
        format_xfersize: Option<Size>,
        /// Threads of the format (default: the most threads of any workload).
        #[arg(long, value_name = "N")]
        format_threads: Option<u32>,
        ;
        /// Workloads (vdbench's fwd): each its own threads and operations, its keys
        /// defaulting to the section's.
        #[arg(skip)]
        #[serde(default)]
        workload: Vec<WorkloadSpec>,
        /// Runs (vdbench's rd), one after another; none: one run of every workload.
        #[arg(skip)]
        #[serde(default)]
        run: Vec<RunSpec>,
        /// mdtest-class phases instead of runs (see [`MdtestSpec`]).
        #[command(flatten)]
        #[serde(default)]
        mdtest: Option<MdtestSpec>,
    }
}

/// One workload (vdbench's `fwd`): its threads do its operations on the tree.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkloadSpec {
    /// Its name, which its operations are reported under (default `w1`, `w2`…).
    pub name: Option<String>,
    /// The operations, with weights (see [`FsSpec::mix`]).
    #[serde(alias = "operation", alias = "operations")]
    pub mix: Option<String>,
    /// Reads, percent, of a read's or a write's transfers.
    pub rdpct: Option<f64>,
    /// sequential, random or random,shared.
    pub fileio: Option<String>,
    /// random or sequential.
    pub fileselect: Option<String>,
    /// Random file I/O: transfers before a file is closed.
    pub stopafter: Option<u64>,
    /// Transfer sizes, with weights.
    pub xfersize: Option<String>,
    /// Threads.
    pub threads: Option<u32>,
    /// Its share of an open-loop run's rate, percent (vdbench's skew; default: the share
    /// left over by the other workloads' skews, evenly).
    pub skew: Option<f64>,
}

/// One run (vdbench's `rd`): the workloads it runs, its rate and times, and cycles over
/// values (vdbench's `for` parameters), each value a run of its own.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunSpec {
    /// Its name (default `r1`, `r2`…).
    pub name: Option<String>,
    /// The workloads it runs, by name (default: every one).
    pub workloads: Option<Vec<String>>,
    /// Operations a second of all its threads together, or `max`.
    pub rate: Option<RateSpec>,
    /// uniform or poisson.
    pub arrivals: Option<String>,
    /// Measured time.
    pub duration: Option<Dur>,
    /// Warm-up.
    pub ramp: Option<Dur>,
    /// Time-series interval.
    pub interval: Option<Dur>,
    /// Every workload's operations replaced by these (vdbench's `rd` `operations=`).
    #[serde(alias = "operation", alias = "operations")]
    pub mix: Option<String>,
    /// Threads of each workload, a run each.
    pub for_threads: Option<Vec<u32>>,
    /// Transfer sizes, a run each.
    pub for_xfersize: Option<Vec<Size>>,
    /// Read percentages, a run each.
    pub for_rdpct: Option<Vec<f64>>,
    /// Operations (each a mix), a run each.
    #[serde(alias = "for_operations")]
    pub for_mix: Option<Vec<String>>,
    /// Rates (operations a second, or `max`), a run each.
    pub for_rate: Option<Vec<RateSpec>>,
    /// Which `for_` list is outermost, then the next…: `["xfersize", "threads"]` (default:
    /// rate, mix, xfersize, threads, rdpct).
    pub order: Option<Vec<String>>,
}

/// mdtest-class phases (IO500's mdtest-easy and mdtest-hard): each thread (and each rank of a
/// run over many hosts) creates, stats, reads and removes its own `items` files, in a
/// directory of its own or all in one, each phase timed as mdtest times it, from the start of
/// every thread to the end of the last.
#[derive(
    Debug, Clone, Default, PartialEq, Deserialize, Serialize, clap::Args, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub(crate) struct MdtestSpec {
    /// Files of each thread (mdtest's `-n`); gives the mdtest phases.
    #[arg(long = "mdtest-items", value_name = "N")]
    pub items: Option<u64>,
    /// A preset: easy (a directory per thread, empty files, as IO500's mdtest-easy) or hard
    /// (one directory for all, 3901 bytes written and read, as mdtest-hard).
    #[arg(long = "mdtest-io500", value_name = "easy|hard")]
    pub io500: Option<String>,
    /// Each thread in a directory of its own (mdtest's `-u`; default true, false with
    /// io500 = hard).
    #[arg(long = "mdtest-unique-dir", value_name = "true|false")]
    pub unique_dir: Option<bool>,
    /// Bytes written to each file as it is created (mdtest's `-w`).
    #[arg(long = "mdtest-write-bytes", value_name = "SIZE")]
    pub write_bytes: Option<Size>,
    /// Bytes read from each file in the read phase (mdtest's `-e`).
    #[arg(long = "mdtest-read-bytes", value_name = "SIZE")]
    pub read_bytes: Option<Size>,
    /// The phases, in order: create, stat, read, remove (default all four).
    #[arg(
        long = "mdtest-phases",
        value_name = "PHASE,...",
        value_delimiter = ','
    )]
    pub phases: Option<Vec<String>>,
    /// Ranks between a thread and the files it stats, reads and removes (mdtest's `-N`, so
    /// a host does not find them in its own cache; default 0).
    #[arg(long = "mdtest-shift", value_name = "N")]
    pub shift: Option<u64>,
    /// Iterations of every phase (mdtest's `-i`; default 1).
    #[arg(long = "mdtest-iterations", value_name = "N")]
    pub iterations: Option<u32>,
}

/// A rate as written: operations a second, or `max` (closed loop; `None`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RateSpec(pub Option<f64>);

impl std::str::FromStr for RateSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "max" {
            return Ok(RateSpec(None));
        }
        s.parse::<f64>()
            .ok()
            .filter(|r| r.is_finite() && *r > 0.0 && *r <= 1e9)
            .map(|r| RateSpec(Some(r)))
            .ok_or_else(|| format!("`{s}`: give operations a second above 0, or max"))
    }
}

/// A number above 0, or the word `max`.
impl schemars::JsonSchema for RateSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RateSpec".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Operations a second (above 0), or `max` (closed loop).",
            "anyOf": [
                { "type": "number", "exclusiveMinimum": 0 },
                { "type": "string", "pattern": "^\\s*(max|[0-9.eE+-]+)\\s*$" }
            ]
        })
    }
}

impl Serialize for RateSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => s.serialize_str("max"),
            Some(r) => s.serialize_f64(r),
        }
    }
}

impl<'de> Deserialize<'de> for RateSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => n.to_string().parse(),
            Raw::Text(t) => t.parse(),
        }
        .map_err(serde::de::Error::custom)
    }
}

/// Parses `VALUE[:WEIGHT],...` with `value` for each value: weights default to 1.
pub(crate) fn weighted<T>(
    text: &str,
    value: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<(T, u32)>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (v, w) = match part.rsplit_once(':') {
            Some((v, w)) => {
                let w: f64 = w
                    .trim()
                    .parse()
                    .map_err(|_| format!("`{part}`: the weight `{w}` is not a number"))?;
                if !(w.is_finite() && w > 0.0 && w <= 1e6) || w.fract() != 0.0 {
                    return Err(format!(
                        "`{part}`: a weight is a whole number from 1 to 1000000"
                    ));
                }
                (v, w as u32)
            }
            None => (part, 1),
        };
        out.push((value(v.trim())?, w));
    }
    if out.is_empty() {
        return Err(format!("`{text}` lists nothing"));
    }
    if out.len() > 64 {
        return Err(format!("`{text}` lists more than 64 values"));
    }
    Ok(out)
}

/// Parses `OP=VALUE,...` (`*` for every operation).
pub(crate) fn per_op<T>(
    text: &str,
    value: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<(Option<super::op::FsOp>, T)>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (op, v) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}`: write OP=VALUE, e.g. create=5ms"))?;
        let op = match op.trim() {
            "*" | "all" => None,
            name => Some(super::op::FsOp::parse(name)?),
        };
        out.push((op, value(v.trim())?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_over_the_file_sets_its_key_only() {
        let mut file: FsSpec = toml::from_str::<FsFile>(
            "[fs]\nanchor = \"/a\"\ndepth = 2\nmix = \"read\"\n[[fs.workload]]\nname = \"w\"\n",
        )
        .unwrap()
        .fs;
        let flags = FsSpec {
            depth: Some(3),
            ..FsSpec::default()
        };
        assert_eq!(flags.given(), vec!["depth"]);
        file.overlay(&flags);
        assert_eq!(
            (file.anchor.as_deref(), file.depth, file.mix.as_deref()),
            (Some(std::path::Path::new("/a")), Some(3), Some("read"))
        );
        assert_eq!(file.workload.len(), 1);
        assert!(FsSpec::KEYS.contains(&"xfersize"));
    }

    #[test]
    fn weighted_lists_and_limits_parse() {
        let sizes = weighted("4k:50, 64k:50", crate::units::parse_size).unwrap();
        assert_eq!(sizes, vec![(4096, 50), (65536, 50)]);
        assert_eq!(
            weighted("read", super::super::op::FsOp::parse).unwrap(),
            vec![(super::super::op::FsOp::Read, 1)]
        );
        assert!(weighted("4k:0", crate::units::parse_size).is_err());
        assert!(weighted("", crate::units::parse_size).is_err());
        let p99 = per_op("create=5ms,*=1s", crate::units::parse_duration).unwrap();
        assert_eq!(p99.len(), 2);
        assert_eq!(p99[1].0, None);
        assert!(per_op("create", crate::units::parse_duration).is_err());
    }

    #[test]
    fn a_section_written_back_reads_the_same() {
        let text = "[fs]\nanchor = \"/a/{rank}\"\ndepth = 2\nrate = 500\nduration = \"2s\"\nsizes = \"4k:1,8k:2\"\n\
                    [[fs.workload]]\nname = \"w\"\nthreads = 3\n[[fs.run]]\nfor_threads = [1, 2]\nrate = \"max\"\n\
                    [fs.mdtest]\nitems = 10\n";
        let spec = toml::from_str::<FsFile>(text).unwrap().fs;
        let mut table = toml::Table::new();
        table.insert("fs".into(), toml::Value::try_from(&spec).unwrap());
        let again = toml::from_str::<FsFile>(&toml::to_string(&table).unwrap())
            .unwrap()
            .fs;
        assert_eq!(again, spec);
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<FsFile>("[fs]\nblock_size = 4096\n").is_err());
        assert!(toml::from_str::<FsFile>("[fs]\n[[fs.workload]]\nqd = 1\n").is_err());
    }
}
