//! The workloads: each room owns its whole path, from what the user writes to what the results
//! say: its spec and its resolution, the ordinary [`crate::job::Job`]s it produces, the request
//! sources it builds for each worker, its verdict rules (each carrying its threshold, unit and
//! measured value), its section of the results file (`section.rs`) and its description. `run`
//! drives any of them through `run::Workload`; `report` and `live` render what they
//! leave in the results file and tell the observer.
//!
//! - [`plain`]: a job file, a preset, a converted fio file or a one-line job, with its steps and
//!   fio groups;
//! - [`exchange`]: the Exchange mailbox database validation (Jetstress-class);
//! - [`users`]: simulated mailbox users (LoadGen-class);
//! - [`database`]: database storage validation (Oracle, SQL Server, PostgreSQL, MySQL).
//! - [`calibrate`]: database storage calibration (ORION-class).
//! - [`etcd`]: etcd's disk check (small log writes, each followed by fdatasync, judged on the
//!   sync time's 99th percentile and the rate);
//! - [`walsync`]: PostgreSQL's WAL sync methods compared (pg_test_fsync's question);
//! - [`fs`]: file-system workloads (vdbench's fsd/fwd, IO500's mdtest, fio's file engines).
//!
//! [`presets`] are built-in job files of published studies, each selecting its workload as any
//! job file does.
//!
//! Adding a workload is one new folder here and one line in `rooms()`: a job file holding its
//! section then runs with `storlab run FILE` (its dry run, results, reports and exit code as
//! for any other); a subcommand with flags of its own ([`Subcommand`]) and a run over many
//! hosts (`OverHosts`, listed in `over_hosts()`) are optional, each declared in the room's
//! folder.

pub(crate) mod calibrate;
pub(crate) mod database;
pub(crate) mod etcd;
pub(crate) mod exchange;
pub(crate) mod fs;
pub(crate) mod plain;
pub(crate) mod presets;
pub(crate) mod sync_check;
#[cfg(test)]
pub(crate) mod tiny;
pub(crate) mod users;
pub(crate) mod walsync;

use crate::job::JobError;
use crate::run::Workload;
use crate::units::Dur;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Declares a room's spec from one list of its keys: the struct is its job file's section
/// (serde, schemars) and its subcommand's flags (clap) at once, so a flag and its key cannot
/// drift (a key's flag is its name in kebab case unless its `#[arg]` says otherwise:
/// [`flag_of`]); and it gets what a flag given over the file's value needs: `overlay` (the
/// flags' values over the file's), `given` (the keys the flags set) and `KEYS`. Keys after a
/// `;` are parts the flags set in part ([`Overlay`]).
macro_rules! spec {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $key:ident : Option<$ty:ty>, )*
            $( ;
            $( $(#[$lmeta:meta])* $list:ident : $lty:ty, )* )?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$fmeta])* $vis $key: Option<$ty>, )*
            $( $( $(#[$lmeta])* $vis $list: $lty, )* )?
        }

        impl $name {
            /// Every key that has a flag, as written in the file.
            #[allow(dead_code)] // a room's command may not list them
            $vis const KEYS: &'static [&'static str] = &[$(stringify!($key)),*];

            /// Sets every key `over` has over this one's (the flags over the file).
            $vis fn overlay(&mut self, over: &$name) {
                $( if over.$key.is_some() { self.$key.clone_from(&over.$key); } )*
                $( $( $crate::workloads::Overlay::overlay(&mut self.$list, &over.$list); )* )?
            }

            /// The keys this one sets (the flags given, `--xfersize` for `xfersize`).
            $vis fn given(&self) -> Vec<&'static str> {
                let mut keys = Vec::new();
                $( if self.$key.is_some() { keys.push(stringify!($key)); } )*
                keys
            }

            /// The flags of the keys this one sets, as clap declares them (`--data-path`
            /// for `data_paths`): the results' invocation.
            $vis fn given_flags(&self) -> Vec<String> {
                (self.given().iter())
                    .filter_map(|k| $crate::workloads::flag_of::<$name>(k))
                    .collect()
            }
        }
    };
}
pub(crate) use spec;

/// A part of a spec that flags may set in part: what the flags give replaces the file's.
pub(crate) trait Overlay {
    /// Sets what `over` gives over `self`.
    fn overlay(&mut self, over: &Self);
}

/// A table the flags give replaces the file's (the tables no flag sets, `#[arg(skip)]`, stay
/// the file's: `[users]`'s tasks and their limits).
impl<K: Clone, V: Clone> Overlay for Option<std::collections::BTreeMap<K, V>> {
    fn overlay(&mut self, over: &Self) {
        if over.is_some() {
            self.clone_from(over);
        }
    }
}

/// A size no flag sets (`#[arg(skip)]`) stays the file's: `[exchange]`'s backup read size.
impl Overlay for Option<crate::units::Size> {
    fn overlay(&mut self, over: &Self) {
        if over.is_some() {
            self.clone_from(over);
        }
    }
}

/// A list the flags give replaces the file's.
impl<T: Clone> Overlay for Vec<T> {
    fn overlay(&mut self, over: &Self) {
        if !over.is_empty() {
            self.clone_from(over);
        }
    }
}

/// The flag that sets key `key` of the spec `S` (`--data-path` for `data_paths`), as clap
/// declares it: the one place a flag's name is written.
pub(crate) fn flag_of<S: clap::Args>(key: &str) -> Option<String> {
    let command = S::augment_args(clap::Command::new("spec"));
    let arg = command.get_arguments().find(|a| a.get_id() == key)?;
    arg.get_long().map(|l| format!("--{l}"))
}

/// A workload that a job file's section selects.
pub(crate) struct Room {
    /// Its section in a job file (`exchange` for `[exchange]`).
    pub section: &'static str,
    /// What it is, as a refusal names it: "an Exchange job (its I/O comes from the mailbox
    /// profile)".
    pub what: &'static str,
    /// How to change what the flags of `storlab run` cannot: "storlab exchange FILE
    /// --mailboxes ...".
    pub hint: &'static str,
    /// The flags of `storlab run` it takes ([`Overrides`]); output flags always apply.
    pub flags: &'static [&'static str],
    /// Reads its section from a job file, with those flags.
    pub load: fn(&JobText, &Overrides) -> Result<Box<dyn Workload>>,
    /// Its job file's JSON Schema (a part of `storlab schema job`), derived from the type the
    /// file is read into.
    pub schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    /// Its own part of the views of its results (the console summary, the HTML report, the
    /// comparison of runs), which the report calls without knowing the room.
    pub view: &'static dyn crate::report::view::View,
    /// A subcommand of its own whose flags are its spec's, which the command line adds and
    /// runs through its common path (`None`: a job file runs it, with `storlab run FILE`).
    pub subcommand: Option<Subcommand>,
    /// Another tool's own file it reads as its job file, if any ([`Foreign`]).
    pub foreign: Option<Foreign>,
}

/// Another tool's own file that a room reads as its job file (Jetstress's JetstressConfig.xml
/// for `[exchange]`): `storlab import FILE` writes the job it describes, `storlab run FILE`
/// and the room's own subcommand run it. The importers' layer (`crate::import`) has the other
/// tools' plain jobs; a file in this table is the room's.
pub(crate) struct Foreign {
    /// The format's name as the results record it (`invocation.source.format`): `jetstress`.
    pub format: &'static str,
    /// The tool, as people write it: `Jetstress`.
    pub tool: &'static str,
    /// Whether a file's text is of the format.
    pub detect: fn(&str) -> bool,
    /// The room's job file (TOML) that a file of the format describes, its paths placed with
    /// `--map FROM=TO`; what it assumes and leaves out printed as notes.
    pub convert: fn(&Path, &str, &PathMap) -> Result<String>,
}

/// Paths placed by `--map FROM=TO`: each (FROM, TO).
pub(crate) type PathMap = [(String, PathBuf)];

/// The room whose foreign format a file's text is in, and the format, if any.
pub(crate) fn foreign_of(text: &str) -> Option<(&'static Room, &'static Foreign)> {
    (rooms().into_iter()).find_map(|r| Some((r, r.foreign.as_ref().filter(|f| (f.detect)(text))?)))
}

/// How a room runs over many hosts (an MPI launcher's ranks, [`over_hosts`]): rank 0 reads its
/// job file and flags into one section that every rank reads for its own place (its paths'
/// `{rank}`, `{host}`, `{node}`).
#[cfg(feature = "mpi")]
pub(crate) struct OverHosts {
    /// The room's section (and subcommand).
    pub section: &'static str,
    /// Rank 0: the section as its subcommand's flags leave it (a job file's text), checked as
    /// a run checks it.
    pub text: fn(&clap::ArgMatches) -> Result<String>,
    /// Every rank: what started it, as the results record it (reads no file).
    pub invocation: fn(&clap::ArgMatches) -> Result<crate::results::Invocation>,
    /// A rank's workload from that text (`storlab run FILE` over many hosts too).
    pub for_rank: ForRank,
}

/// A rank's workload from the text all ranks share, for its place.
#[cfg(feature = "mpi")]
pub(crate) type ForRank =
    fn(&str, &Path, &crate::run::cluster::Place) -> Result<Box<dyn Workload>, String>;

/// The rooms that run over many hosts: how room `section` does, if it does.
#[cfg(feature = "mpi")]
pub(crate) fn over_hosts(section: &str) -> Option<&'static OverHosts> {
    [&exchange::OVER_HOSTS, &fs::OVER_HOSTS]
        .into_iter()
        .find(|o| o.section == section)
}

/// A room's own subcommand: the command line adds it (and the output flags every run takes)
/// to `storlab`, and runs the workload it loads as it runs any other.
pub(crate) struct Subcommand {
    /// `storlab NAME`.
    pub name: &'static str,
    /// What it does, as `storlab --help` lists it.
    pub about: &'static str,
    /// Its flags, added to the command: the room's spec's (`Spec::augment_args`), so that a
    /// flag and its job key are one declaration.
    pub args: fn(clap::Command) -> clap::Command,
    /// The workload its flags ask for, and the flags given (the results' invocation).
    pub load: fn(&clap::ArgMatches) -> Result<Loaded>,
}

/// A workload a subcommand's flags ask for, and what started it (the results' invocation).
pub(crate) type Loaded = (Box<dyn Workload>, crate::results::Invocation);

/// A job file of any kind, as `storlab run` reads it: a plain job, or a file holding one
/// room's section. Only its JSON Schema is used ([`job_schema`]).
struct JobFile;

impl schemars::JsonSchema for JobFile {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "JobFile".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut kinds = vec![generator.subschema_for::<crate::job::spec::JobSpec>()];
        kinds.extend(rooms().iter().map(|r| (r.schema)(generator)));
        let sections: Vec<String> = rooms().iter().map(|r| format!("[{}]", r.section)).collect();
        schemars::json_schema!({
            "description": format!("A storlab job file, its TOML as JSON: a plain job, or a file holding one workload's section ({}). The keys and values as written, before they are validated.", sections.join(", ")),
            "anyOf": kinds,
        })
    }
}

/// The JSON Schema of a job file (`storlab schema job`): a plain job's or any room's, each
/// derived from the types storlab reads it into (unknown keys refused, as storlab refuses
/// them).
pub(crate) fn job_schema() -> serde_json::Value {
    // A job file has no schema version of its own: its schema is this storlab's.
    crate::results::schema::stamped(
        schemars::schema_for!(JobFile),
        "job",
        env!("CARGO_PKG_VERSION"),
    )
}

/// Every workload a job file can select by a section of its own; a file with none of these
/// sections is a plain job.
pub(crate) fn rooms() -> Vec<&'static Room> {
    #[cfg_attr(not(test), allow(unused_mut))]
    let mut all = vec![
        &exchange::ROOM,
        &users::ROOM,
        &database::ROOM,
        &calibrate::ROOM,
        &etcd::ROOM,
        &walsync::ROOM,
        &fs::ROOM,
    ];
    #[cfg(test)]
    all.push(&tiny::ROOM);
    all
}

/// Installs every room's view for the report, in the rooms' order
/// ([`crate::report::view::install`]): the command line does before it renders anything.
pub(crate) fn install_views() {
    crate::report::view::install(rooms().iter().map(|r| r.view).collect());
}

/// The job file a workload's command reads: the preset `preset` (one of those with a `section`
/// section), the file `job`, or none (flags only). `what` names the workload in the refusal:
/// "--preset: no database preset is named `x`; database presets: ...".
pub(crate) fn section_file(
    job: Option<&Path>,
    preset: Option<&str>,
    section: &str,
    what: &str,
) -> Result<Option<(PathBuf, String)>> {
    let ours = |text: &str| room_of(text).is_some_and(|r| r.section == section);
    Ok(match (job, preset) {
        (_, Some(name)) => {
            let p = presets::find(name)
                .filter(|p| ours(p.toml))
                .ok_or_else(|| {
                    let names: Vec<&str> = (presets::PRESETS.iter())
                        .filter(|p| ours(p.toml))
                        .map(|p| p.name)
                        .collect();
                    crate::Usage(presets::unknown(name, what, &names))
                })?;
            Some((PathBuf::from(format!("preset:{name}")), p.toml.to_string()))
        }
        (Some(path), None) => Some((path.to_path_buf(), crate::job::file::read_text(path)?)),
        (None, None) => None,
    })
}

/// The key an error about `SECTION.KEY` names, without its section.
fn key_in(e: &JobError, section: &str) -> String {
    (e.key.strip_prefix(section))
        .and_then(|k| k.strip_prefix('.'))
        .unwrap_or(&e.key)
        .to_string()
}

/// Points an error about key `SECTION.KEY` at `flag_of(KEY)` (the flag given that set it), or
/// else at the key's line in the job file.
pub(crate) fn blame_key(
    mut e: JobError,
    file: Option<(&Path, &str)>,
    section: &str,
    flag_of: impl Fn(&str) -> Option<String>,
) -> JobError {
    let key = key_in(&e, section);
    let top = key.split(['.', '[']).next().unwrap_or(&key);
    if let Some(flag) = flag_of(top) {
        e.location = "command line".into();
        e.key = flag;
    } else if let Some((path, text)) = file {
        e.location = crate::job::file::locate(path, text, Some(section), top);
    }
    e
}

/// Points an error about key `SECTION.KEY` of a job file's `[SECTION]` at what set the value:
/// the flag of the spec `S` when `given` (the keys its flags set, `S::given`) holds the key,
/// or the key's line in the job file (as `cli`'s flag tables do).
pub(crate) fn blame_spec<S: clap::Args>(
    e: JobError,
    given: &[&str],
    file: Option<(&Path, &str)>,
    section: &str,
) -> JobError {
    blame_key(e, file, section, |top| {
        given.contains(&top).then(|| flag_of::<S>(top)).flatten()
    })
}

/// The room whose section a job file's text holds, if any.
pub(crate) fn room_of(text: &str) -> Option<&'static Room> {
    let table = text.parse::<toml::Table>().ok()?;
    rooms().into_iter().find(|r| table.contains_key(r.section))
}

/// A job file's text and where it came from (a path, or `preset:NAME`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct JobText<'a> {
    /// The file, as given (`preset:NAME` for a preset).
    pub path: &'a Path,
    /// Its text.
    pub text: &'a str,
}

/// The flags of `storlab run` that [`Overrides`] carries: those a workload's job file may take.
pub(crate) const OVERRIDE_FLAGS: &[&str] = &[
    "--duration",
    "--ramp",
    "--interval",
    "--engine",
    "--seed",
    "--destroy-data",
    "--verify",
    "--sample-blocks",
];

/// The flags of `storlab run` that any workload's job file takes (each overrides the file's
/// value).
#[derive(Debug, Clone, Default)]
pub(crate) struct Overrides {
    /// `--duration`.
    pub duration: Option<Dur>,
    /// `--ramp`.
    pub ramp: Option<Dur>,
    /// `--interval`.
    pub interval: Option<Dur>,
    /// `--engine`.
    pub engine: Option<String>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--destroy-data`.
    pub destroy_data: bool,
    /// `--verify`.
    pub verify: bool,
    /// `--sample-blocks`.
    pub sample_blocks: bool,
}

/// A workload's section's keys that [`Overrides`] sets (`None`: a key the section has not).
pub(crate) struct Keys<'a> {
    /// `duration`.
    pub duration: Option<&'a mut Option<Dur>>,
    /// `ramp`.
    pub ramp: Option<&'a mut Option<Dur>>,
    /// `interval`.
    pub interval: &'a mut Option<Dur>,
    /// `engine`.
    pub engine: &'a mut Option<String>,
    /// `seed`.
    pub seed: &'a mut Option<u64>,
    /// `destroy_data`.
    pub destroy_data: &'a mut Option<bool>,
    /// `verify`.
    pub verify: &'a mut Option<bool>,
    /// `sample_blocks`.
    pub sample_blocks: &'a mut Option<bool>,
}

impl Overrides {
    /// Sets `keys` to the flags given, over the file's values.
    pub(crate) fn apply(&self, keys: Keys) {
        let set = |key: &mut Option<Dur>, given: Option<Dur>| {
            if given.is_some() {
                *key = given;
            }
        };
        if let Some(k) = keys.duration {
            set(k, self.duration);
        }
        if let Some(k) = keys.ramp {
            set(k, self.ramp);
        }
        set(keys.interval, self.interval);
        if self.engine.is_some() {
            *keys.engine = self.engine.clone();
        }
        if self.seed.is_some() {
            *keys.seed = self.seed;
        }
        for (key, given) in [
            (keys.destroy_data, self.destroy_data),
            (keys.verify, self.verify),
            (keys.sample_blocks, self.sample_blocks),
        ] {
            if given {
                *key = Some(true);
            }
        }
    }

    /// Blames a flag for an error in a key it set (`--duration` for `duration`), or else
    /// places the error at its key's line in `file`'s `section`.
    pub(crate) fn blame(&self, mut e: JobError, file: &JobText, section: &str) -> JobError {
        let key = key_in(&e, section);
        let given = match key.as_str() {
            "duration" => self.duration.is_some().then_some("--duration"),
            "ramp" => self.ramp.is_some().then_some("--ramp"),
            "interval" => self.interval.is_some().then_some("--interval"),
            "engine" => self.engine.is_some().then_some("--engine"),
            "seed" => self.seed.is_some().then_some("--seed"),
            _ => None,
        };
        match given {
            Some(flag) => {
                e.location = "command line".into();
                e.key = flag.into();
            }
            None => {
                e.location = crate::job::file::locate(file.path, file.text, Some(section), &key);
            }
        }
        e
    }
}
