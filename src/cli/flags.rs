//! Flags onto job keys: one table per subcommand says, for each flag, which job keys it sets
//! and how. The same table applies the flags over the job file's values and blames a flag for
//! an error about a value it set (`command line: --qd: ...` rather than the job file's line it
//! overrode). A unit test checks the tables against clap's definitions, so a new flag cannot be
//! forgotten.

use super::RunArgs;
use crate::job::JobError;
use crate::job::spec::{AccessSpec, JobSpec, TargetSpec, WorkerSpec};
use toml::Spanned;

/// A flag and the job keys it sets.
pub(super) struct Flag<Args, Spec> {
    /// As written, e.g. `--qd`.
    pub flag: &'static str,
    /// The keys it sets (their last segment, e.g. `queue_depth`): an error about one of them
    /// is the flag's when the flag was given.
    pub keys: &'static [&'static str],
    /// Whether the flag was given.
    pub given: fn(&Args) -> bool,
    /// Sets the keys from the flag (only called when given).
    pub apply: fn(&mut Spec, &Args),
}

/// A flag of `storlab run`.
type RunFlag = Flag<RunArgs, JobSpec>;

fn set<T: Clone>(field: &mut Option<T>, value: &Option<T>) {
    if value.is_some() {
        field.clone_from(value);
    }
}

fn workers(spec: &mut JobSpec) -> impl Iterator<Item = &mut WorkerSpec> {
    spec.worker.iter_mut().map(Spanned::get_mut)
}

fn entries(spec: &mut JobSpec) -> impl Iterator<Item = &mut AccessSpec> {
    workers(spec).flat_map(|w| w.access.iter_mut().map(Spanned::get_mut))
}

fn targets(spec: &mut JobSpec) -> impl Iterator<Item = &mut TargetSpec> {
    spec.target.iter_mut().map(Spanned::get_mut)
}

/// A flag that sets the key of the same name as the argument's field (or `keys`), at the top
/// level of the spec (`spec.FIELD = args.FIELD`).
macro_rules! top_level {
    ($flag:literal, $field:ident) => {
        top_level!($flag, $field, [stringify!($field)])
    };
    ($flag:literal, $field:ident, [$($key:expr),+]) => {
        Flag {
            flag: $flag,
            keys: &[$($key),+],
            given: |a| a.$field.is_some(),
            apply: |s, a| set(&mut s.$field, &a.$field),
        }
    };
}

/// A flag that sets key `$key` of every item `$items` yields (workers, access entries).
macro_rules! each {
    ($flag:literal, $items:ident, $arg:ident => $key:ident) => {
        Flag {
            flag: $flag,
            keys: &[stringify!($key)],
            given: |a| a.$arg.is_some(),
            apply: |s, a| $items(s).for_each(|x| set(&mut x.$key, &a.$arg)),
        }
    };
}

/// A switch that sets a boolean key to true.
macro_rules! switch {
    ($flag:literal, $field:ident) => {
        Flag {
            flag: $flag,
            keys: &[stringify!($field)],
            given: |a| a.$field,
            apply: |s, _| s.$field = Some(true),
        }
    };
}

/// A flag that sets key `$key` of the `[io_uring]` table: from the argument's value, or to
/// true for a switch.
macro_rules! uring {
    ($flag:literal, $arg:ident => $key:ident) => {
        Flag {
            flag: $flag,
            keys: &[stringify!($key)],
            given: |a| a.uring.$arg.is_some(),
            apply: |s, a| {
                set(
                    &mut s.io_uring.get_or_insert_with(Default::default).$key,
                    &a.uring.$arg,
                )
            },
        }
    };
    (switch $flag:literal, $arg:ident => $key:ident) => {
        Flag {
            flag: $flag,
            keys: &[stringify!($key)],
            given: |a| a.uring.$arg,
            apply: |s, _| s.io_uring.get_or_insert_with(Default::default).$key = Some(true),
        }
    };
}

/// The flags of `storlab run` that change the job, in the order they are applied (`--target`
/// first: `--size` and `--sync` apply to the targets it gives).
pub(super) const RUN_FLAGS: &[RunFlag] = &[
    Flag {
        flag: "--target",
        // A target the flag gives is named by its path: a name two of them share is the
        // flag's to answer for.
        keys: &["path", "name"],
        given: |a| !a.targets.is_empty(),
        apply: |s, a| {
            if a.targets.len() == s.target.len() {
                // As many paths as the job has targets: each replaces one path, in order;
                // names, sizes and worker assignments stay.
                for (t, p) in targets(s).zip(&a.targets) {
                    t.path = Some(p.clone());
                }
            } else {
                s.target = a
                    .targets
                    .iter()
                    .map(|p| {
                        let target = TargetSpec {
                            path: Some(p.clone()),
                            ..Default::default()
                        };
                        Spanned::new(0..0, target)
                    })
                    .collect();
                workers(s).for_each(|w| w.targets = None);
            }
        },
    },
    Flag {
        flag: "--size",
        keys: &["size", "length"],
        given: |a| a.size.is_some(),
        apply: |s, a| targets(s).for_each(|t| set(&mut t.size, &a.size)),
    },
    Flag {
        flag: "--sync",
        keys: &["sync"],
        given: |a| a.sync,
        apply: |s, _| targets(s).for_each(|t| t.sync = Some(true)),
    },
    Flag {
        flag: "--bs",
        keys: &["block_size", "align"],
        given: |a| a.bs.is_some(),
        apply: |s, a| {
            for e in entries(s) {
                e.block_sizes = None;
                e.align = None;
                set(&mut e.block_size, &a.bs);
            }
        },
    },
    each!("--read", entries, read => read),
    each!("--random", entries, random => random),
    each!("--distribution", entries, distribution => distribution),
    each!("--fsync-every", entries, fsync_every => fsync_every),
    each!("--qd", workers, qd => queue_depth),
    each!("--workers", workers, workers => count),
    each!("--rate", workers, rate => rate_iops),
    each!("--arrivals", workers, arrivals => arrivals),
    top_level!("--duration", duration),
    top_level!("--ramp", ramp),
    top_level!("--cooldown", cooldown),
    top_level!("--interval", interval),
    top_level!("--engine", engine),
    top_level!("--seed", seed),
    top_level!("--batch", batch),
    uring!(switch "--hipri", hipri => poll),
    uring!(switch "--sqpoll", sqpoll => sqpoll),
    uring!("--sqpoll-cpu", sqpoll_cpu => sqpoll_cpu),
    uring!("--sqpoll-idle", sqpoll_idle => sqpoll_idle),
    uring!("--task-run", task_run => task_run),
    uring!("--batch-complete-min", batch_complete_min => batch_complete_min),
    uring!("--batch-complete-max", batch_complete_max => batch_complete_max),
    switch!("--buffered", buffered),
    switch!("--destroy-data", destroy_data),
    switch!("--verify", verify),
    switch!("--sample-blocks", sample_blocks),
    top_level!("--on-error", on_error),
    top_level!("--max-errors", max_errors),
];

/// Sets the values the flags in `args` give over those of `spec`.
pub(super) fn apply_run(spec: &mut JobSpec, args: &RunArgs) {
    apply(RUN_FLAGS, spec, args);
}

/// Points an error about a value a flag set at the flag (`command line: --qd: ...`) rather
/// than at the job file's line the flag overrode.
pub(super) fn blame_run(mut e: JobError, args: &RunArgs) -> JobError {
    if e.key.starts_with("cycle.") || e.key.starts_with("precondition") {
        return e;
    }
    let last = e.key.rsplit('.').next().unwrap_or(&e.key);
    let last = last.split('[').next().unwrap_or(last);
    if let Some(f) = blamed(RUN_FLAGS, args, last) {
        e.message = format!("{} (`{}`)", e.message, e.key);
        e.location = "command line".into();
        e.key = f.into();
    }
    e
}

/// The flags of `table` given in `args`.
pub(super) fn given<A, S>(table: &[Flag<A, S>], args: &A) -> Vec<String> {
    table
        .iter()
        .filter(|f| (f.given)(args))
        .map(|f| f.flag.to_string())
        .collect()
}

/// The flag given in `args` that sets `key`.
fn blamed<A, S>(table: &[Flag<A, S>], args: &A, key: &str) -> Option<&'static str> {
    table
        .iter()
        .find(|f| (f.given)(args) && f.keys.contains(&key))
        .map(|f| f.flag)
}

/// Sets the values the flags of `table` given in `args` give over those of `spec`.
pub(super) fn apply<A, S>(table: &[Flag<A, S>], spec: &mut S, args: &A) {
    for f in table.iter().filter(|f| (f.given)(args)) {
        (f.apply)(spec, args);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::job_flags;
    use super::*;

    fn table_flags<A, S>(table: &[Flag<A, S>]) -> Vec<String> {
        let mut flags: Vec<String> = table.iter().map(|f| f.flag.to_string()).collect();
        flags.sort();
        flags
    }

    #[test]
    fn every_flag_that_changes_a_job_is_in_its_table() {
        // Flags that choose where the job comes from, not what it does.
        let run_only = [
            "--preset",
            "--fio",
            "--diskspd",
            "--from",
            "--map",
            "--lenient",
        ];
        assert_eq!(table_flags(RUN_FLAGS), job_flags("run", &run_only));
        // The run flags a workload's job file takes are run flags, each also a flag of the
        // workload's own command.
        for f in crate::workloads::OVERRIDE_FLAGS {
            assert!(RUN_FLAGS.iter().any(|r| r.flag == *f), "{f}");
        }
    }
}
