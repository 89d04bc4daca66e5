//! The storlab job (TOML) of DiskSpd's time spans: job-wide settings from the first span
//! (the others must agree), a `[[target]]` for each target, a `[[worker]]` for each target
//! of each span (or one for all of a span's targets with `-O`), each part after a comment
//! naming where DiskSpd's profile or command line said it.

use super::{Out, Params, Span, place, source_compress};
use crate::import::{Options, source_comment};
use std::fmt::Write as _;

/// A target as placed: its name, path, size and where it was first written.
struct Placed {
    name: String,
    path: String,
    size: Option<u64>,
    at: String,
}

fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn secs(s: u64) -> String {
    q(&format!("{s}s"))
}

/// What the spans ask for together that storlab sets once for the whole job.
fn job_wide(spans: &[Span], out: &mut Out) -> bool {
    let first = &spans[0];
    for s in &spans[1..] {
        if (s.duration, s.warmup, s.cooldown, s.seed, s.interval_ms)
            != (
                first.duration,
                first.warmup,
                first.cooldown,
                first.seed,
                first.interval_ms,
            )
        {
            out.bad(&s.at, "<TimeSpan>", "its Duration, Warmup, Cooldown, RandSeed or IoBucketDuration differ from the first time span's; storlab runs its steps for one duration: give every time span the same, or convert them apart");
        }
    }
    let mut targets = spans.iter().flat_map(|s| &s.targets);
    let uncached = targets.next().is_some_and(|t| t.params.uncached);
    for t in targets {
        if t.params.uncached != uncached {
            out.bad(&t.at, &format!("target {}", t.name), "its caching (on, or off with -Su, -Sh, DisableOSCache) differs from the first target's; storlab uses the page cache or O_DIRECT for the whole job");
        }
    }
    uncached
}

/// The storlab job of `spans` (`what`: the source, for the first comment).
pub(super) fn render(what: &str, spans: &[Span], out: &mut Out, opts: &Options) -> String {
    let uncached = job_wide(spans, out);
    let data = source_compress(spans, out, opts);
    let mut placed: Vec<Placed> = Vec::new();
    // Each name's place in `placed`: one look-up per target, however many there are.
    let mut index: std::collections::HashMap<&str, usize> = Default::default();
    for t in spans.iter().flat_map(|s| &s.targets) {
        let size = t.params.size;
        if let Some(&i) = index.get(t.name.as_str()) {
            placed[i].size = placed[i].size.max(size);
            continue;
        }
        index.insert(&t.name, placed.len());
        let before = out.notes.len();
        let path = place(&t.name, placed.len(), opts, &mut out.notes);
        let scratch = out.notes.len() > before;
        let size = match size {
            None if scratch => {
                out.note(format!("target {}: 1 GiB (DiskSpd tests the whole disk or volume; give -c or FileSize for another size)", t.name));
                Some(1 << 30)
            }
            s => s,
        };
        placed.push(Placed {
            name: t.name.clone(),
            path: path.display().to_string(),
            size,
            at: t.at.clone(),
        });
    }
    let mut workers = String::new();
    for (g, s) in spans.iter().enumerate() {
        span_workers(g, spans.len(), s, out, &mut workers);
    }
    let first = &spans[0];
    let mut t = format!("# Converted from {what} by storlab.\n");
    for n in &out.notes {
        let _ = writeln!(t, "# {n}");
    }
    for u in &out.unsupported {
        let _ = writeln!(t, "# left out ({}): {}: {}", u.at, u.option, u.why);
    }
    t.push('\n');
    t.push_str(&source_comment(&first.at, &first.source));
    let _ = writeln!(t, "duration = {}", secs(first.duration));
    if first.warmup > 0 {
        let _ = writeln!(t, "ramp = {}", secs(first.warmup));
    }
    if first.cooldown > 0 {
        let _ = writeln!(t, "cooldown = {}", secs(first.cooldown));
    }
    if let Some(seed) = first.seed {
        let _ = writeln!(t, "seed = {seed}");
    }
    if let Some(ms) = first.interval_ms {
        let _ = writeln!(t, "interval = {}", q(&format!("{ms}ms")));
    }
    // DiskSpd caches unless told not to (-Su, -Sh, DisableOSCache): storlab's page cache.
    if !uncached {
        t.push_str("buffered = true\n");
    }
    if let Some((ratio, from)) = data {
        let _ = writeln!(
            t,
            "\n# DiskSpd's writes from {from}: data as compressible\n[data]\ncompress = {}",
            (ratio * 100.0).round() / 100.0
        );
    }
    if spans.len() > 1 {
        let list: Vec<String> = (1..=spans.len()).map(|g| g.to_string()).collect();
        let _ = writeln!(
            t,
            "\n# DiskSpd's time spans: one after another, a step each.\n[cycle]\ngroup = [{}]",
            list.join(", ")
        );
    }
    for p in &placed {
        t.push('\n');
        t.push_str(&source_comment(&p.at, &format!("target {}", p.name)));
        let _ = write!(
            t,
            "[[target]]\nname = {}\npath = {}\n",
            q(&p.name),
            q(&p.path)
        );
        if let Some(s) = p.size {
            let _ = writeln!(t, "size = {s}");
        }
    }
    t.push_str(&workers);
    t
}

/// Appends the workers of span `g` (of `spans`) to `t` (their threads counted and capped
/// before: `Span::threads`).
fn span_workers(g: usize, spans: usize, s: &Span, out: &mut Out, t: &mut String) {
    let prefix = if spans > 1 {
        format!("span{}-", g + 1)
    } else {
        String::new()
    };
    let group = |t: &mut String| {
        if spans > 1 {
            let _ = writeln!(t, "group = {}", g + 1);
        }
    };
    // -F with -O: every thread drives every target, at most -O I/Os in flight over them.
    if let (Some(threads), Some(requests)) = (s.total_threads, s.thread_requests) {
        pooled_workers(s, threads, requests, &prefix, &group, out, t);
        return;
    }
    let mut first_thread = 0u32;
    for (j, tg) in s.targets.iter().enumerate() {
        let p = &tg.params;
        let name = format!("{prefix}target{}", j + 1);
        t.push('\n');
        let (threads, start) = match s.total_threads {
            // -F: each of the span's threads drives this target too (as many in flight).
            Some(f) => (f, 0),
            None => (p.threads, first_thread),
        };
        let (t_key, o_key) = match (s.xml, s.total_threads.is_some()) {
            (true, true) => ("ThreadCount", "RequestCount"),
            (true, false) => ("ThreadsPerFile", "RequestCount"),
            (false, true) => ("-F", "-o"),
            (false, false) => ("-t", "-o"),
        };
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        let text = format!(
            "target {}: {threads} thread{} ({t_key}), {} I/O{} in flight each ({o_key})",
            tg.name,
            plural(threads),
            p.requests,
            plural(p.requests),
        );
        t.push_str(&source_comment(&tg.at, &text));
        let _ = write!(t, "[[worker]]\nname = {}\n", q(&name));
        group(t);
        let names = [q(&tg.name)];
        // -si: the threads share one sequential stream: one worker with all their I/Os.
        if p.interlocked && p.random.is_none() {
            out.note(format!("target {}: DiskSpd's threads share one sequential stream (-si); storlab runs it as one worker with all their I/Os in flight", tg.name));
            let cpus = cpus_of(s, start, 1);
            let rate = p.rate_iops.map(|r| r * f64::from(threads));
            let depth = threads.saturating_mul(p.requests).min(super::MAX_REQUESTS);
            worker(t, 1, depth, rate, p, cpus.as_deref(), &names);
        } else if p.thread_stride > 0 && p.random.is_none() {
            // -T: thread k starts k × T into the target and keeps to its lane, the stride
            // apart: a worker each, its span starting at its lane (k × T modulo the stride),
            // its first I/O the rest of k × T in, wrapping to its lane's start, as DiskSpd.
            let step = p.stride.unwrap_or(p.block).max(1);
            for k in 0..threads.min(super::MAX_THREADS) {
                let into = u64::from(k).saturating_mul(p.thread_stride);
                if k > 0 {
                    let _ = write!(
                        t,
                        "\n# thread {} of target {}: starts {into} bytes in (-T)\n[[worker]]\nname = {}\n",
                        k + 1,
                        tg.name,
                        q(&format!("{name}-thread{}", k + 1))
                    );
                    group(t);
                }
                let cpus = cpus_of(s, start.saturating_add(k), 1);
                worker(t, 1, p.requests, p.rate_iops, p, cpus.as_deref(), &names);
                let lane = Lane {
                    offset: into % step,
                    start: into - into % step,
                };
                access(t, &name, p, lane);
            }
            first_thread = first_thread.saturating_add(p.threads);
            continue;
        } else {
            let cpus = cpus_of(s, start, threads);
            worker(
                t,
                threads,
                p.requests,
                p.rate_iops,
                p,
                cpus.as_deref(),
                &names,
            );
        }
        access(t, &name, p, Lane::default());
        first_thread = first_thread.saturating_add(p.threads);
    }
}

/// The workers of a span with `ThreadCount` (`-F`) `threads` and `RequestCount` (`-O`)
/// `requests`: each thread drives its targets (every one, or those whose `ThreadTargets`
/// name it), picking each I/O's target by weight, at most `requests` in flight over them.
fn pooled_workers(
    s: &Span,
    threads: u32,
    requests: u32,
    prefix: &str,
    group: &dyn Fn(&mut String),
    out: &mut Out,
    t: &mut String,
) {
    let p = &s
        .targets
        .first()
        .map(|t| t.params.clone())
        .unwrap_or_default();
    for tg in s.targets.iter().skip(1) {
        if tg.params != *p {
            out.bad(&tg.at, &format!("target {}", tg.name), "with -O (a span's RequestCount) storlab runs one set of threads over every target, so the targets' parameters must be the same");
        }
    }
    // Thread k's targets and their weights, as DiskSpd gives them: every target without
    // <ThreadTargets> and those that name k, each of its <Weight> or k's own.
    let of_thread = |k: u32| -> (Vec<String>, Vec<u32>) {
        (s.targets.iter())
            .filter_map(|tg| {
                let own = tg.threads.iter().find(|th| th.0 == k);
                if !tg.threads.is_empty() && own.is_none() {
                    return None;
                }
                let w = own.map_or(0, |th| th.1);
                Some((q(&tg.name), if w > 0 { w } else { tg.weight.unwrap_or(1) }))
            })
            .unzip()
    };
    let chosen = s.targets.iter().any(|tg| !tg.threads.is_empty());
    let mut k = 0;
    while k < threads {
        // Threads in a row with the same targets and weights are one worker.
        let (names, weights) = of_thread(k);
        let n = (k + 1..threads)
            .take_while(|&j| of_thread(j) == (names.clone(), weights.clone()))
            .count() as u32
            + 1;
        let name = match (chosen, n) {
            (false, _) => format!("{prefix}threads"),
            (true, 1) => format!("{prefix}thread{}", k + 1),
            (true, _) => format!("{prefix}threads{}-{}", k + 1, k + n),
        };
        t.push('\n');
        let whose = match (chosen, n) {
            (false, _) => String::new(),
            (true, 1) => format!("thread {} of ", k + 1),
            (true, _) => format!("threads {} to {} of ", k + 1, k + n),
        };
        t.push_str(&source_comment(
            &s.at,
            &format!("{whose}{threads} threads (-F, ThreadCount), {requests} I/Os in flight each (-O, RequestCount), over {}", if chosen { "their targets (ThreadTargets)" } else { "every target" }),
        ));
        if names.is_empty() {
            let what = format!("thread {} (from 0) of <ThreadCount>", k);
            out.bad(
                &s.at,
                &what,
                "has no target: every target's <ThreadTargets> leaves it out",
            );
            k += n;
            continue;
        }
        let _ = write!(t, "[[worker]]\nname = {}\n", q(&name));
        group(t);
        let per_thread_rate = p.rate_iops.map(|r| r * names.len() as f64);
        let cpus = cpus_of(s, k, n);
        worker(t, n, requests, per_thread_rate, p, cpus.as_deref(), &names);
        if names.len() > 1 {
            // DiskSpd picks the target of each I/O at random, by the targets' weights.
            t.push_str("target_choice = \"random\"\n");
            if weights.iter().any(|&w| w != weights[0]) {
                let list: Vec<String> = weights.iter().map(u32::to_string).collect();
                let _ = writeln!(t, "target_weights = [{}]", list.join(", "));
            }
        }
        access(t, &name, p, Lane::default());
        k += n;
    }
}

/// The CPUs of `threads` threads numbered from `start`, DiskSpd's round-robin over its list.
fn cpus_of(s: &Span, start: u32, threads: u32) -> Option<Vec<usize>> {
    let cpus = s.cpus.as_ref()?;
    Some(
        (0..threads.min(4096))
            .map(|k| cpus[(start as usize + k as usize) % cpus.len()])
            .collect(),
    )
}

fn worker(
    t: &mut String,
    count: u32,
    depth: u32,
    rate: Option<f64>,
    p: &Params,
    cpus: Option<&[usize]>,
    targets: &[String],
) {
    if count > 1 {
        let _ = writeln!(t, "count = {count}");
    }
    match p.think_ms {
        // A think time: one I/O at a time, as DiskSpd waits before issuing the next.
        Some(ms) => {
            let _ = writeln!(t, "queue_depth = 1\nthink_time = {}", q(&format!("{ms}ms")));
        }
        None => {
            let _ = writeln!(t, "queue_depth = {depth}");
        }
    }
    if let Some(r) = rate {
        let _ = writeln!(t, "rate_iops = {}", (r * 1000.0).round() / 1000.0);
    }
    if let Some(c) = cpus {
        let list: Vec<String> = c.iter().map(ToString::to_string).collect();
        let _ = writeln!(t, "cpus = [{}]", list.join(", "));
    }
    let _ = writeln!(t, "targets = [{}]", targets.join(", "));
}

/// Where one thread's sequential stream runs (DiskSpd's `-T`): its span starts `offset`
/// bytes further in, its first I/O `start` bytes into the span.
#[derive(Default, Clone, Copy)]
struct Lane {
    offset: u64,
    start: u64,
}

fn access(t: &mut String, class: &str, p: &Params, lane: Lane) {
    let _ = write!(
        t,
        "\n[[worker.access]]\nclass = {}\nblock_size = {}\nread = \"{}%\"\nrandom = \"{}%\"\n",
        q(class),
        p.block,
        100.0 - p.write,
        p.random.unwrap_or(0.0)
    );
    if let (Some(a), Some(_)) = (p.align, p.random) {
        let _ = writeln!(t, "align = {a}");
    }
    if let Some(z) = &p.zones {
        let _ = writeln!(t, "distribution = {}", q(z));
    }
    if let Some(stride) = p
        .stride
        .filter(|s| *s != p.block && p.random != Some(100.0))
    {
        // -s: each sequential I/O `stride` on from the one before (gap: what the block leaves).
        let _ = writeln!(t, "gap = {}", i128::from(stride) - i128::from(p.block));
    }
    let offset = p.base.saturating_add(lane.offset);
    if offset > 0 {
        let _ = writeln!(t, "offset = {offset}");
    }
    if lane.start > 0 {
        let _ = writeln!(t, "start = {}", lane.start);
    }
    let length = p.length.or(p.max.map(|m| m.saturating_sub(p.base)));
    if let Some(l) = length
        .map(|l| l.saturating_sub(lane.offset))
        .filter(|l| *l > 0)
    {
        let _ = writeln!(t, "length = {l}");
    }
    if p.write_through && p.write > 0.0 {
        // -Sw: every write durable when it completes (RWF_DSYNC, the O_DSYNC of one write).
        t.push_str("sync = true\n");
    }
}
