//! Jobs resolved from their text: what resolves, and each refusal with its key and line.

use super::*;
use crate::job::file::{decode, key_line, locate, parse};

fn resolve_text(text: &str) -> Result<Job, JobError> {
    let p = Path::new("job.toml");
    let spec = parse(p, text)?;
    resolve(&spec, Some((p, text)))
}

const GOOD: &str = r#"
duration = "10s"
[[target]]
name = "db"
path = "/tmp/x.dat"
size = "1GiB"
[[worker]]
name = "w"
count = 2
queue_depth = 8
[[worker.access]]
class = "db"
block_size = "8k"
read = "70%"
weight = 9
[[worker.access]]
class = "log"
block_size = "64k"
read = 0
random = 0
"#;

#[test]
fn keys_of_issue_6_are_checked() {
    let with = |extra: &str| resolve_text(&format!("{extra}\n{GOOD}"));
    let job = with("verify = true\non_error = \"stop\"").unwrap();
    assert!(job.verify);
    assert_eq!(job.on_error, OnError::Stop);
    assert_eq!(
        with("max_errors = 5").unwrap().on_error,
        OnError::Continue { max_errors: 5 }
    );
    assert_eq!(with("").unwrap().on_error.limit(), defaults::MAX_ERRORS);
    for (extra, key) in [
        ("max_errors = 0", "max_errors"),
        ("on_error = \"stop\"\nmax_errors = 3", "max_errors"),
        ("on_error = \"retry\"", "on_error"),
        ("verify = true\nengine = \"null\"", "verify"),
    ] {
        let e = with(extra).unwrap_err();
        assert_eq!(e.key, key, "{extra}: {e}");
        assert!(e.to_string().contains("job.toml:"), "{e}");
    }
    let e = resolve_text(&format!("{GOOD}\n[cycle]\nrate = [100, 2e9]")).unwrap_err();
    assert_eq!(e.key, "cycle.rate", "{e}");
}

#[test]
fn a_floor_on_the_rate_is_checked_against_the_workers_own_pace() {
    let with = |keys: &str| resolve_text(&GOOD.replace("queue_depth = 8", keys));
    let job = with("min_iops = 20\nrate_cycle = \"500ms\"").unwrap();
    let floor = job.workers[1].min_rate.expect("each copy has the floor");
    assert_eq!((floor.iops, floor.cycle_ns), (20.0, 500_000_000));
    assert_eq!(
        with("min_iops = 5").unwrap().workers[0]
            .min_rate
            .unwrap()
            .cycle_ns,
        1_000_000_000
    );
    for (keys, key, says) in [
        ("min_iops = 0", "min_iops", "above 0"),
        // Issue 44: refused for what it is, not as if it were not above 0.
        (
            "rate_iops = 1e300",
            "rate_iops",
            "rate_iops is 1e300, more I/Os per second than storlab paces a worker at (at most 1e9",
        ),
        ("min_iops = 1e300", "min_iops", "at most 1e9"),
        ("rate_iops = -3", "rate_iops", "above 0"),
        (
            "rate_iops = 10\nmin_iops = 20",
            "min_iops",
            "could never be met",
        ),
        ("rate_cycle = \"1s\"", "rate_cycle", "set min_iops too"),
        (
            "min_iops = 5\nrate_cycle = \"1ms\"",
            "rate_cycle",
            "10ms or more",
        ),
    ] {
        let e = with(keys).unwrap_err();
        assert_eq!(e.key, format!("worker[0].{key}"), "{keys}: {e}");
        assert!(e.message.contains(says), "{keys}: {e}");
        assert!(e.location.starts_with("job.toml:"), "{e}");
    }
}

#[test]
fn resolves_a_good_job() {
    let job = resolve_text(GOOD).unwrap();
    assert_eq!(job.duration_ms, 10_000);
    assert_eq!(job.workers.len(), 2);
    assert_eq!(job.workers[1].name, "w#1");
    assert_eq!(job.classes, vec!["db", "log"]);
    assert_eq!(job.workers[0].access[1].block_size_bytes, 65536);
    assert_eq!(job.targets[0].size_bytes, Some(1 << 30));
}

#[test]
fn unknown_key_names_line() {
    let e = resolve_text("duration = \"1s\"\nbogus = 1\n").unwrap_err();
    assert!(e.location.starts_with("job.toml:2"), "{e}");
    assert!(e.message.contains("bogus"), "{e}");
}

#[test]
fn bad_unit_names_line() {
    let text = GOOD.replace("\"8k\"", "\"8q\"");
    let e = resolve_text(&text).unwrap_err();
    assert!(e.to_string().contains("unknown size unit `q`"), "{e}");
    assert!(e.location.starts_with("job.toml:13"), "{e}");
}

#[test]
fn validation_errors_name_table_and_key() {
    let text = GOOD.replace("queue_depth = 8", "queue_depth = 0");
    let e = resolve_text(&text).unwrap_err();
    assert_eq!(e.key, "worker[0].queue_depth");
    assert_eq!(e.location, "job.toml:7");
    let text = GOOD.replace("block_size = \"64k\"", "block_size = \"2GiB\"");
    let e = resolve_text(&text).unwrap_err();
    assert_eq!(e.key, "worker[0].access[1].block_size");
    assert_eq!(e.location, "job.toml:16");
}

#[test]
fn distributions_parse() {
    assert_eq!(Distribution::parse("uniform"), Ok(Distribution::Uniform));
    assert_eq!(
        Distribution::parse("zipf:1.2"),
        Ok(Distribution::Zipf { theta: 1.2 })
    );
    let Distribution::Zoned { bands } = Distribution::parse("zoned:80/10:20/90").unwrap() else {
        panic!()
    };
    assert_eq!(bands.len(), 2);
    assert!(Distribution::parse("zoned:80/10:10/90").is_err());
    assert!(Distribution::parse("zipf:-1").is_err());
    assert!(Distribution::parse("pareto").is_err());
}

#[test]
fn keys_are_located_in_their_table() {
    let text =
        "duration = \"1s\"\n\"ramp\" = 1\n[precondition]\npasses = 2\n[exchange]\nmailboxes = 0\n";
    assert_eq!(key_line(text, None, "duration"), Some(1));
    assert_eq!(key_line(text, None, "ramp"), Some(2));
    assert_eq!(key_line(text, None, "precondition"), Some(3));
    assert_eq!(key_line(text, None, "passes"), None);
    assert_eq!(key_line(text, Some("exchange"), "mailboxes"), Some(6));
    let p = Path::new("x.toml");
    assert_eq!(locate(p, text, Some("exchange"), "mailboxes"), "x.toml:6");
    assert_eq!(locate(p, text, Some("exchange"), "capacity"), "x.toml:5");
    assert_eq!(locate(p, text, None, "target"), "x.toml:1");
}

#[test]
fn whole_file_errors_name_a_line() {
    let e = resolve_text("duration = \"1s\"\n").unwrap_err();
    assert_eq!(
        (e.location.as_str(), e.key.as_str()),
        ("job.toml:1", "target")
    );
    let text = GOOD.replace("duration", "round");
    let e = resolve_text(&text).unwrap_err();
    assert_eq!(
        (e.location.as_str(), e.key.as_str()),
        ("job.toml:2", "round")
    );
    let text = format!("{GOOD}[[worker]]\nname = \"w#1\"\n[[worker.access]]\n");
    let e = resolve_text(&text).unwrap_err();
    assert_eq!(
        (e.location.as_str(), e.key.as_str()),
        ("job.toml:21", "worker[1].name")
    );
}

#[test]
fn text_that_is_not_utf8_or_has_control_characters_names_its_line() {
    let e = decode(Path::new("j.toml"), b"a = 1\nb = \"\xff\"\n".to_vec()).unwrap_err();
    assert_eq!(e.location, "j.toml:2");
    let e = resolve_text("# \u{1}\n").unwrap_err();
    assert!(e.location.starts_with("job.toml:1:"), "{e}");
    assert!(e.message.contains("U+0001"), "{e}");
}

#[test]
fn unknown_target_reference() {
    let text = GOOD.replace("count = 2", "count = 2\ntargets = [\"nope\"]");
    let e = resolve_text(&text).unwrap_err();
    assert!(e.message.contains("no target is named `nope`"), "{e}");
}

#[test]
fn target_weights_are_one_for_each_target_and_weigh_a_random_choice() {
    let two = GOOD.replace(
        "size = \"1GiB\"\n",
        "size = \"1GiB\"\n[[target]]\nname = \"log\"\npath = \"/tmp/y.dat\"\nsize = \"1GiB\"\n",
    );
    let with = |keys: &str| two.replace("count = 2", &format!("count = 2\n{keys}"));
    let job = resolve_text(&with("target_weights = [3, 1]")).unwrap();
    assert_eq!(job.workers[0].target_weights, [3, 1]);
    assert_eq!(
        job.workers[0].target_choice,
        TargetChoice::Random,
        "implied"
    );
    for (keys, key, says) in [
        (
            "target_weights = [3]",
            "target_weights",
            "1 weights for 2 targets",
        ),
        ("target_weights = [3, 0]", "target_weights", "a weight is 0"),
        (
            "target_weights = [1, 2]\none_target_each = true",
            "target_weights",
            "one_target_each",
        ),
        (
            "target_weights = [1, 2]\ntarget_choice = \"round-robin\"",
            "target_choice",
            "target_choice = \"random\"",
        ),
    ] {
        let e = resolve_text(&with(keys)).unwrap_err();
        assert_eq!(e.key, format!("worker[0].{key}"), "{keys}: {e}");
        assert!(e.message.contains(says), "{keys}: {e}");
        assert!(e.location.starts_with("job.toml:"), "{keys}: {e}");
    }
}

#[test]
fn copies_with_an_offset_increment_work_on_their_own_parts_of_the_target() {
    let job = |count: u32, inc: &str| {
        format!(
            "duration = \"1s\"\n[[target]]\nname = \"t\"\npath = \"/tmp/x.dat\"\nsize = \"1GiB\"\n\
             [[worker]]\nname = \"w\"\ncount = {count}\n[[worker.access]]\nblock_size = \"16k\"\n\
             random = 0\nalign = \"4k\"\noffset = \"120k\"\noffset_increment = \"{inc}\"\nlength = \"64MiB\"\n\
             [[worker.access]]\nblock_size = \"4k\"\n"
        )
    };
    let j = resolve_text(&job(4, "256MiB")).unwrap();
    let offsets: Vec<(u64, u64)> = (j.workers.iter())
        .map(|w| (w.access[0].offset_bytes, w.access[1].offset_bytes))
        .collect();
    let (k, m) = (120 << 10, 256 << 20);
    assert_eq!(
        offsets,
        [(k, 0), (k + m, 0), (k + 2 * m, 0), (k + 3 * m, 0)]
    );
    // Copy 4 of 5 would start at 1 GiB + 120 KiB: past the end.
    let e = resolve_text(&job(5, "256MiB")).unwrap_err();
    assert_eq!(e.key, "worker[0].access[0].offset_increment");
    assert!(e.message.contains("copy 4 of `w`"), "{}", e.message);
    assert_eq!(e.location, "job.toml:9");
    // A multiple of 512 bytes, as `offset` is.
    let e = resolve_text(&job(2, "1000")).unwrap_err();
    assert!(e.message.contains("not a multiple"), "{}", e.message);
}

#[test]
fn strided_zones_are_checked_against_the_block_and_the_span() {
    let job = |keys: &str| {
        format!(
            "duration = \"1s\"\n[[target]]\nname = \"t\"\npath = \"/tmp/x.dat\"\nsize = \"1GiB\"\n\
             [[worker]]\nname = \"w\"\n[[worker.access]]\nblock_size = \"64k\"\nlength = \"1MiB\"\n{keys}\n"
        )
    };
    let j = resolve_text(&job("zone_size = \"256k\"\nzone_skip = \"128k\"")).unwrap();
    let z = j.workers[0].access[0].zones.unwrap();
    assert_eq!(
        (z.size_bytes, z.transfer_bytes, z.skip_bytes),
        (256 << 10, 256 << 10, 128 << 10)
    );
    for (keys, key, says) in [
        ("zone_size = \"32k\"", "zone_size", "at least one block"),
        ("zone_size = \"2MiB\"", "zone_size", "at most the span"),
        ("zone_size = \"100000\"", "zone_size", "multiple of 512"),
        ("zone_skip = \"64k\"", "zone_skip", "needs zone_size"),
        (
            "zone_transfer = \"64k\"",
            "zone_transfer",
            "needs zone_size",
        ),
        (
            "zone_size = \"64k\"\nzone_transfer = \"0\"",
            "zone_transfer",
            "more than 0",
        ),
        (
            "zone_size = \"64k\"\nzone_skip = \"1000\"",
            "zone_skip",
            "multiple of 512",
        ),
    ] {
        let e = resolve_text(&job(keys)).unwrap_err();
        assert_eq!(e.key, format!("worker[0].access[0].{key}"), "{keys}: {e}");
        assert!(e.message.contains(says), "{keys}: {e}");
    }
}

#[test]
fn on_done_needs_an_io_limit_and_a_known_value() {
    let job = |keys: &str| {
        format!(
            "duration = \"1s\"\n[[target]]\nname = \"t\"\npath = \"/tmp/x.dat\"\nsize = \"1GiB\"\n\
             [[worker]]\nname = \"w\"\n{keys}\n[[worker.access]]\nblock_size = \"4k\"\n"
        )
    };
    let j = resolve_text(&job("io_limit = 10\non_done = \"end-run\"")).unwrap();
    assert_eq!(j.workers[0].on_done, crate::job::OnDone::EndRun);
    let j = resolve_text(&job("io_limit = 10")).unwrap();
    assert_eq!(j.workers[0].on_done, crate::job::OnDone::Continue);
    for (keys, says) in [
        ("on_done = \"end-step\"", "give it one"),
        (
            "io_limit = 10\non_done = \"stop\"",
            "continue, end-step or end-run",
        ),
    ] {
        let e = resolve_text(&job(keys)).unwrap_err();
        assert_eq!(e.key, "worker[0].on_done", "{keys}: {e}");
        assert!(e.message.contains(says), "{keys}: {e}");
    }
}

#[test]
fn atomic_writes_are_one_power_of_two_size_at_multiples_of_it() {
    let job = |top: &str, keys: &str| {
        format!(
            "duration = \"1s\"\n{top}\n[[target]]\nname = \"t\"\npath = \"/tmp/x.dat\"\nsize = \"1GiB\"\n\
             [[worker]]\nname = \"w\"\n[[worker.access]]\nread = 0\natomic = true\n{keys}\n"
        )
    };
    let j = resolve_text(&job("", "block_size = \"16k\"\nrandom = 0\ngap = \"16k\"")).unwrap();
    assert!(j.workers[0].access[0].atomic);
    for (keys, key, says) in [
        ("block_size = \"12k\"", "atomic", "power-of-two"),
        (
            "block_sizes = { \"4k\" = 1, \"8k\" = 1 }",
            "atomic",
            "in a mix",
        ),
        (
            "block_size = \"16k\"\nalign = \"4k\"",
            "align",
            "a multiple of its size",
        ),
        (
            "block_size = \"16k\"\noffset = \"8k\"",
            "offset",
            "a multiple of its size",
        ),
        (
            "block_size = \"16k\"\nrandom = 0\ngap = \"4k\"",
            "gap",
            "a multiple of its size",
        ),
        (
            "block_size = \"16k\"\nzone_size = \"1MiB\"\nzone_skip = \"8k\"",
            "zone_skip",
            "a multiple",
        ),
    ] {
        let e = resolve_text(&job("", keys)).unwrap_err();
        assert_eq!(e.key, format!("worker[0].access[0].{key}"), "{keys}: {e}");
        assert!(e.message.contains(says), "{keys}: {e}");
    }
    let e = resolve_text(&job("buffered = true", "block_size = \"16k\"")).unwrap_err();
    assert_eq!(e.key, "buffered", "{e}");
    assert!(e.message.contains("needs O_DIRECT"), "{e}");
}
