//! The planned job as storlab TOML, each part preceded by the `.icf` line it came from.

use super::parse::Icf;
use super::plan::Job;
use crate::import::source_comment;
use crate::units::format_size_exact;
use std::fmt::Write as _;

fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn seconds(s: u64) -> String {
    format!("{s}s")
}

/// The storlab job of `job`, planned from `icf` read from `file`.
pub(super) fn render(file: &str, icf: &Icf, job: &Job) -> String {
    let at = |line: usize| format!("{file}:{line}");
    let mut t =
        format!("# Converted from the Iometer configuration file {file} by storlab import.\n");
    if let Some(v) = &icf.version {
        t.push_str(&source_comment(&at(v.line), &format!("Version {}", v.v)));
    }
    for n in &job.notes {
        let _ = writeln!(t, "# {}", n.replace('\n', " "));
    }
    if job
        .workers
        .iter()
        .any(|w| w.access.iter().any(|a| a.align == 0 && a.random > 0))
    {
        t.push_str("# align 0 (Iometer: sector boundaries): storlab aligns random I/O to its block size (storlab's choice: O_DIRECT needs whole logical blocks)\n");
    }
    for u in &job.unsupported {
        let _ = writeln!(t, "# left out ({}): {}: {}", u.at, u.option, u.why);
    }
    let d = icf.setup.description.as_ref();
    if let Some(d) = d.filter(|d| !d.v.trim().is_empty()) {
        t.push_str(&source_comment(&at(d.line), "Test Description"));
        let _ = writeln!(t, "description = {}", q(d.v.trim()));
    } else {
        let _ = writeln!(t, "description = {}", q(&format!("Iometer test {file}")));
    }
    match &icf.setup.run_time {
        Some(r) if r.v > 0 => {
            t.push_str(&source_comment(
                &at(r.line),
                "Run Time (hours minutes seconds)",
            ));
            let _ = writeln!(t, "duration = {}", q(&seconds(r.v)));
        }
        Some(r) => {
            t.push_str(&source_comment(&at(r.line), "Run Time 0: Iometer runs until stopped; storlab's choice: 30 s (change with --duration)"));
            t.push_str("duration = \"30s\"\n");
        }
        None => {
            t.push_str("# no Run Time: Iometer runs until stopped; storlab's choice: 30 s (change with --duration)\nduration = \"30s\"\n");
        }
    }
    if let Some(r) = icf.setup.ramp.as_ref().filter(|r| r.v > 0) {
        t.push_str(&source_comment(&at(r.line), "Ramp Up Time (s)"));
        let _ = writeln!(t, "ramp = {}", q(&seconds(r.v)));
    }
    if let Some(s) = &job.seed {
        t.push_str(&source_comment(&at(s.line), "use fixed seed ENABLED"));
        let _ = writeln!(t, "seed = {}", s.v);
    }
    if job.groups > 1 || !job.cycles.is_empty() {
        t.push_str("\n[cycle]\n");
        if job.groups > 1 {
            t.push_str("# Iometer runs the access specifications assigned to a worker one after another, a test each: a group each.\n");
            let list: Vec<String> = (1..=job.groups).map(|g| g.to_string()).collect();
            let _ = writeln!(t, "group = [{}]", list.join(", "));
        }
        if let Some(tt) = &icf.setup.test_type {
            t.push_str(&source_comment(
                &at(tt.line),
                &format!("Test Type {}", tt.v),
            ));
        }
        for c in &job.cycles {
            t.push_str(&source_comment(&c.at, &c.text));
            let list: Vec<String> = c.values.iter().map(u64::to_string).collect();
            let _ = writeln!(t, "{} = [{}]", c.key, list.join(", "));
        }
    }
    for x in &job.targets {
        t.push_str("\n[[target]]\n");
        t.push_str(&source_comment(&x.at, &x.text));
        let _ = writeln!(t, "name = {}", q(&x.name));
        let _ = writeln!(t, "path = {}", q(&x.path.display().to_string()));
        if x.scratch_size {
            t.push_str("# Disk maximum size 0: Iometer fills the disk; storlab's choice for a scratch file: 1 GiB\n");
        }
        if let Some(s) = x.size {
            let _ = writeln!(t, "size = {}", q(&format_size_exact(s)));
        }
    }
    for w in &job.workers {
        t.push_str("\n[[worker]]\n");
        t.push_str(&source_comment(&w.at, &w.text));
        let _ = writeln!(t, "name = {}", q(&w.name));
        if let Some(g) = w.group {
            let _ = writeln!(t, "group = {g}");
        }
        if w.count > 1 {
            let _ = writeln!(t, "count = {}", w.count);
        }
        let list: Vec<String> = w.targets.iter().map(|n| q(n)).collect();
        let _ = writeln!(t, "targets = [{}]", list.join(", "));
        if w.one_target_each {
            t.push_str("one_target_each = true\n");
        }
        let _ = writeln!(t, "queue_depth = {}", w.queue_depth);
        if let Some(ms) = w.think_ms {
            let _ = writeln!(t, "think_time = {}", q(&format!("{ms}ms")));
        }
        t.push_str(&source_comment(
            &w.spec.1,
            &format!("assigned access specification {}", w.spec.0),
        ));
        for a in &w.access {
            t.push_str("[[worker.access]]\n");
            t.push_str(&source_comment(
                &a.at,
                &format!(
                    "{} (size,% of size,% reads,% random,delay,burst,align,reply)",
                    a.text
                ),
            ));
            let _ = writeln!(t, "class = {}", q(&a.class));
            let _ = writeln!(t, "weight = {}", a.weight);
            let _ = writeln!(t, "block_size = {}", q(&format_size_exact(a.block)));
            let _ = writeln!(t, "read = \"{}%\"", a.read);
            let _ = writeln!(t, "random = \"{}%\"", a.random);
            if a.align > 0 {
                let _ = writeln!(t, "align = {}", q(&format_size_exact(a.align)));
            }
            if a.offset > 0 {
                let _ = writeln!(t, "offset = {}", q(&format_size_exact(a.offset)));
            }
            if let Some(l) = a.length {
                let _ = writeln!(t, "length = {}", q(&format_size_exact(l)));
            }
        }
    }
    t
}
