//! fio's `flow`: the jobs of one `flow_id` held to the ratio of their weights (fio 3.34 on:
//! `flow=3`, `flow=2` and `flow=1` run 3:2:1), as one worker whose access entries are the
//! jobs, each weighted by its `flow`: every I/O is one job's in that ratio, kept per I/O where
//! fio stalls the job that is ahead (`flow_sleep`).

use super::{JobOpts, Opt, Out, Worker};

/// A job's flow: its `flow_id` (default 0), its weight, and the `flow` option.
#[derive(Debug)]
pub(super) struct Flow {
    id: u64,
    weight: u32,
    opt: Opt,
}

/// fio's largest flow weight (`FLOW_MAX_WEIGHT`).
const MAX_WEIGHT: u32 = 1000;

/// The job's flow (`None`: it has none, `flow=0`, or a refused value).
pub(super) fn of(job: &JobOpts<'_>, out: &mut Out) -> Option<Flow> {
    let id = job.get("flow_id");
    if job.get("flow_sleep").is_some() {
        out.note(
            "flow_sleep: no effect (storlab keeps a flow's ratio I/O by I/O, never stalling a job)",
        );
    }
    let Some(o) = job.get("flow") else {
        if id.is_some() {
            out.note("flow_id: no effect (without flow)");
        }
        return None;
    };
    let weight = match o.value.as_deref().map(str::trim).map(str::parse::<u32>) {
        Some(Ok(0)) => return None,
        Some(Ok(w)) if w <= MAX_WEIGHT => w,
        _ => {
            out.bad(o, "flow", "a weight from 1 to 1000 (fio 3.34 on: the jobs of a flow_id run in the ratio of their weights)");
            return None;
        }
    };
    let id = match id.map(|i| i.value.as_deref().unwrap_or("").trim().parse::<u64>()) {
        None => 0,
        Some(Ok(i)) => i,
        Some(Err(_)) => {
            if let Some(i) = job.get("flow_id") {
                out.bad(i, "flow_id", "a whole number");
            }
            return None;
        }
    };
    Some(Flow {
        id,
        weight,
        opt: o.clone(),
    })
}

/// `workers` with the jobs of each flow (one `flow_id` in one step) made one worker: its
/// queue depth and I/O limit the jobs' together, an access entry each weighted by its flow.
/// The jobs must otherwise agree (targets, clones, rate and the other worker keys): refused
/// where they do not.
pub(super) fn merge(workers: Vec<Worker>, engine: Option<&str>, out: &mut Out) -> Vec<Worker> {
    let mut left: Vec<Option<Worker>> = workers.into_iter().map(Some).collect();
    let mut merged = Vec::with_capacity(left.len());
    for i in 0..left.len() {
        let Some(first) = left[i].take() else {
            continue;
        };
        let Some((key, at)) = (first.flow.as_ref()).map(|f| ((f.id, first.group), f.opt.clone()))
        else {
            merged.push(first);
            continue;
        };
        let mut members = vec![first];
        for w in left.iter_mut().skip(i + 1) {
            if w.as_ref()
                .and_then(|w| w.flow.as_ref().map(|f| (f.id, w.group)))
                == Some(key)
            {
                members.extend(w.take());
            }
        }
        if members.len() == 1 {
            out.note("flow: no effect (the only job of its flow_id runs as fast as it can)");
            merged.extend(members);
            continue;
        }
        merged.push(join(members, &at, engine == Some("psync"), out));
    }
    merged
}

/// The worker keys of a converted job (before its first access entry) and its entries.
fn split(toml: &str) -> (&str, &str) {
    toml.split_at(toml.find("\n[[worker.access]]").unwrap_or(toml.len()))
}

/// The number a `key = N` line of `head` gives.
fn number(head: &str, key: &str) -> Option<u64> {
    head.lines().find_map(|l| {
        l.strip_prefix(key)?
            .strip_prefix(" = ")?
            .trim()
            .parse()
            .ok()
    })
}

/// The jobs of one flow as one worker; a refusal names `at`, the first job's `flow` (or the
/// second job's, where the jobs disagree).
fn join(mut members: Vec<Worker>, at: &Opt, one_at_a_time: bool, out: &mut Out) -> Worker {
    let keep = |l: &&str| !l.starts_with("queue_depth = ") && !l.starts_with("io_limit = ");
    let heads: Vec<Vec<&str>> = (members.iter())
        .map(|w| split(&w.toml).0.lines().filter(keep).collect())
        .collect();
    let limits: Vec<Option<u64>> = (members.iter())
        .map(|w| number(split(&w.toml).0, "io_limit"))
        .collect();
    let agree = heads.windows(2).all(|p| p[0] == p[1])
        && members.iter().all(|w| w.clones == 1)
        && (limits.iter().all(Option::is_some) || limits.iter().all(Option::is_none));
    if !agree {
        let second = members.iter().filter_map(|w| w.flow.as_ref()).nth(1);
        out.bad(second.map_or(at, |f| &f.opt), "flow", "storlab runs a flow's jobs as one worker, an access entry each: give them the same files, numjobs (1), rate and other job options, differing only in what they do and their iodepth");
        return members.remove(0);
    }
    let depth: u64 = (members.iter())
        .map(|w| number(split(&w.toml).0, "queue_depth").unwrap_or(1))
        .sum();
    if one_at_a_time {
        out.bad(at, "flow", format!("fio runs a flow's jobs as threads at once, {depth} I/Os in flight; storlab runs them as one worker, and with the psync engine it does one I/O at a time: give the jobs ioengine=libaio or io_uring"));
        return members.remove(0);
    }
    let mut toml = format!(
        "# fio's flow: the jobs {} as one worker, an access entry each in the ratio of their flow weights\nqueue_depth = {depth}\n",
        (members.iter())
            .map(|w| w.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(total) = limits.iter().copied().sum::<Option<u64>>() {
        toml.push_str(&format!("io_limit = {total}\n"));
    }
    for line in &heads[0] {
        toml.push_str(line);
        toml.push('\n');
    }
    for w in &members {
        let weight = w.flow.as_ref().map_or(1, |f| f.weight);
        let entries = split(&w.toml).1.replacen(
            "[[worker.access]]\n",
            &format!("[[worker.access]]\n# fio's flow={weight}\nweight = {weight}\n"),
            1,
        );
        toml.push_str(&entries);
    }
    let mut first = members.remove(0);
    for w in &members {
        first.sources.push_str(&w.sources);
    }
    first.toml = toml;
    first
}
