//! DiskSpd command lines and profiles, written from DiskSpd's documented options and profile
//! schema, converted; the jobs parsed back and checked key by key, and resolved by storlab.

use super::args::{tokenize, zones};
use super::{convert, convert_args};
use crate::import::{ImportError, Options, parse_map};
use std::path::Path;

fn opts(map: &[&str]) -> Options {
    Options {
        lenient: false,
        map: map.iter().map(|m| parse_map(m).unwrap()).collect(),
    }
}

/// The converted job parsed back (and resolved by storlab: it must be a valid job).
fn job(toml: &str) -> toml::Table {
    let spec = crate::job::file::parse(Path::new("converted.toml"), toml)
        .unwrap_or_else(|e| panic!("{e}\n{toml}"));
    crate::job::resolve(&spec, Some((Path::new("converted.toml"), toml)))
        .unwrap_or_else(|e| panic!("{e}\n{toml}"));
    toml.parse().unwrap()
}

fn line(args: &str, map: &[&str]) -> (String, toml::Table) {
    let c = convert_args(args, &opts(map)).unwrap_or_else(|e| panic!("{e}"));
    let t = job(&c.toml);
    (c.toml, t)
}

fn refusals(e: ImportError) -> Vec<(String, String, String)> {
    match e {
        ImportError::Unsupported(list, _) => {
            list.into_iter().map(|u| (u.at, u.option, u.why)).collect()
        }
        ImportError::Read(m) => panic!("a read error: {m}"),
    }
}

/// A worker's rate, I/Os a second (TOML writes a whole number without a point).
fn rate(w: &toml::Value) -> Option<f64> {
    let r = &w["rate_iops"];
    r.as_float().or(r.as_integer().map(|i| i as f64))
}

fn workers(t: &toml::Table) -> &Vec<toml::Value> {
    t["worker"].as_array().unwrap()
}

#[test]
fn command_lines_split_as_windows_splits_them() {
    let t = tokenize(r#"-b8K "D:\my dir\test.dat" a\\"b c" x\"y "#).unwrap();
    assert_eq!(t, ["-b8K", r"D:\my dir\test.dat", r#"a\b c"#, r#"x"y"#]);
    assert_eq!(tokenize("  ").unwrap(), Vec::<String>::new());
    assert_eq!(tokenize(r#""""#).unwrap(), [""]);
    assert!(tokenize(&"a ".repeat(5000)).is_err());
}

#[test]
fn a_random_mixed_test_converts_option_by_option() {
    let (text, t) = line(
        r"diskspd.exe -b4K -d60 -W10 -C3 -o4 -t2 -r -w30 -Sh -L -c16M -z7 -D500 D:\test.dat",
        &["D:=/mnt/x"],
    );
    assert_eq!(t["duration"].as_str(), Some("60s"));
    assert_eq!(t["ramp"].as_str(), Some("10s"));
    // -C: I/O goes on for 3 s after the measurement, not counted.
    assert_eq!(t["cooldown"].as_str(), Some("3s"));
    assert_eq!(t["seed"].as_integer(), Some(7));
    assert_eq!(t["interval"].as_str(), Some("500ms"));
    // -Sh: no page cache (O_DIRECT, storlab's default) and every write durable.
    assert!(t.get("buffered").is_none(), "{text}");
    let target = &t["target"].as_array().unwrap()[0];
    assert_eq!(target["path"].as_str(), Some("/mnt/x/test.dat"));
    assert_eq!(target["size"].as_integer(), Some(16 << 20));
    let w = &workers(&t)[0];
    assert_eq!(w["count"].as_integer(), Some(2));
    assert_eq!(w["queue_depth"].as_integer(), Some(4));
    let a = &w["access"].as_array().unwrap()[0];
    assert_eq!(a["block_size"].as_integer(), Some(4096));
    assert_eq!(a["read"].as_str(), Some("70%"));
    assert_eq!(a["random"].as_str(), Some("100%"));
    assert_eq!(a["sync"].as_bool(), Some(true));
    assert!(
        text.contains("# command line, argument 14: target D:\\test.dat"),
        "{text}"
    );
    assert!(text.contains("-L: no effect"), "{text}");
}

#[test]
fn defaults_are_diskspds() {
    // DiskSpd: 64 KiB sequential reads, 2 in flight, 1 thread, 10 s after a 5 s warm-up,
    // through the cache.
    let (text, t) = line("-c1M f.dat", &[]);
    assert_eq!(t["duration"].as_str(), Some("10s"));
    assert_eq!(t["ramp"].as_str(), Some("5s"));
    assert!(t.get("cooldown").is_none(), "{text}");
    assert_eq!(t["buffered"].as_bool(), Some(true), "{text}");
    let w = &workers(&t)[0];
    assert!(w.get("count").is_none());
    assert_eq!(w["queue_depth"].as_integer(), Some(2));
    let a = &w["access"].as_array().unwrap()[0];
    assert_eq!(a["block_size"].as_integer(), Some(65536));
    assert_eq!(a["read"].as_str(), Some("100%"));
    assert_eq!(a["random"].as_str(), Some("0%"));
    assert_eq!(t["target"][0]["path"].as_str(), Some("f.dat"));
}

#[test]
fn sizes_rates_bounds_and_affinity() {
    // -g in bytes per ms: 8192 B/ms of 8 KiB blocks = 1000 I/Os a second per thread.
    let (_, t) = line(
        "-b8K -g8192 -B1M:4M -r16K -a2,3 -t3 -Su -c64M #1 E:",
        &["#1=/tmp/disk1", "E:=/tmp/e.dat"],
    );
    let ws = workers(&t);
    assert_eq!(ws.len(), 2);
    assert_eq!(rate(&ws[0]), Some(1000.0));
    // Threads numbered across the targets, CPUs in turn: 2,3,2 then 3,2,3.
    let cpus = |w: &toml::Value| w["cpus"].clone().try_into::<Vec<usize>>().unwrap();
    assert_eq!(cpus(&ws[0]), [2, 3, 2]);
    assert_eq!(cpus(&ws[1]), [3, 2, 3]);
    let a = &ws[0]["access"][0];
    assert_eq!(a["offset"].as_integer(), Some(1 << 20));
    assert_eq!(a["length"].as_integer(), Some(4 << 20));
    assert_eq!(a["align"].as_integer(), Some(16384));
    assert_eq!(t["target"][1]["path"].as_str(), Some("/tmp/e.dat"));
    // -g...i: I/Os a second; -f: the end of the span; sizes in blocks (b) of -b.
    let (_, t) = line("-b4K -g250i -B2b -f10b -c1M x.dat", &[]);
    let w = &workers(&t)[0];
    assert_eq!(rate(w), Some(250.0));
    assert_eq!(w["access"][0]["offset"].as_integer(), Some(8192));
    assert_eq!(w["access"][0]["length"].as_integer(), Some(8 * 4096));
}

#[test]
fn threads_in_all_interlocked_streams_and_think_time() {
    // -F4: every thread drives both targets: 4 threads a target, 3 in flight each.
    let (_, t) = line("-F4 -o3 -c1M a.dat b.dat", &[]);
    for w in workers(&t) {
        assert_eq!(w["count"].as_integer(), Some(4));
        assert_eq!(w["queue_depth"].as_integer(), Some(3));
    }
    // -F with -O: one set of threads over both targets.
    let (_, t) = line("-F2 -O8 -g100i -c1M a.dat b.dat", &[]);
    let ws = workers(&t);
    assert_eq!(ws.len(), 1);
    assert_eq!(ws[0]["queue_depth"].as_integer(), Some(8));
    assert_eq!(rate(&ws[0]), Some(200.0));
    // -si: one shared stream of 2 × 4 I/Os in flight.
    let (text, t) = line("-t2 -o4 -si -c1M a.dat", &[]);
    let w = &workers(&t)[0];
    assert!(w.get("count").is_none());
    assert_eq!(w["queue_depth"].as_integer(), Some(8));
    assert!(text.contains("one sequential stream"), "{text}");
    // -j: a think time after each I/O, one at a time.
    let (_, t) = line("-j10 -i1 -o4 -c1M a.dat", &[]);
    let w = &workers(&t)[0];
    assert_eq!(w["think_time"].as_str(), Some("10ms"));
    assert_eq!(w["queue_depth"].as_integer(), Some(1));
}

#[test]
fn zones_add_the_rest_of_the_target() {
    assert_eq!(zones("90/10").as_deref(), Some("zoned:90/10:10/90"));
    assert_eq!(
        zones("90/10:0/10:5/20").as_deref(),
        Some("zoned:90/10:0/10:5/20:5/60")
    );
    assert_eq!(zones("50/50:50/50").as_deref(), Some("zoned:50/50:50/50"));
    assert_eq!(zones("90/100"), None);
    assert_eq!(zones("x"), None);
    let (_, t) = line("-rdpct90/10 -c1M a.dat", &[]);
    assert_eq!(
        workers(&t)[0]["access"][0]["distribution"].as_str(),
        Some("zoned:90/10:10/90")
    );
}

#[test]
fn what_cannot_be_converted_is_named_with_its_argument() {
    let e = convert_args("-b4K -Sm -p -Z -Yx -c1M a.dat", &opts(&[])).unwrap_err();
    let r = refusals(e);
    let options: Vec<&str> = r.iter().map(|(_, o, _)| o.as_str()).collect();
    assert_eq!(options, ["-Sm", "-p", "-Z", "-Yx"], "{r:?}");
    assert_eq!(r[0].0, "command line, argument 2");
    assert!(r[0].2.contains("memory-mapped"), "{r:?}");
    // --lenient: left out, listed in the job.
    let lenient = Options {
        lenient: true,
        ..opts(&[])
    };
    let c = convert_args("-Sm -c1M a.dat", &lenient).unwrap();
    assert_eq!(c.left_out.len(), 1);
    assert!(
        c.toml
            .contains("# left out (command line, argument 1): -Sm")
    );
    job(&c.toml);
}

#[test]
fn malformed_command_lines_say_how_to_write_them() {
    let msg = |a: &str| convert_args(a, &opts(&[])).unwrap_err().to_string();
    assert!(
        msg("-b 8K a.dat").contains("write -b8K"),
        "{}",
        msg("-b 8K a.dat")
    );
    assert!(msg("-b8K").contains("names no target"));
    assert!(msg("a.dat -d5").contains("before them"));
    let r = refusals(convert_args("-t2 -F2 -w120 -bx a.dat", &opts(&[])).unwrap_err());
    let options: Vec<&str> = r.iter().map(|(_, o, _)| o.as_str()).collect();
    assert_eq!(options, ["-bx", "-w120", "-t2"], "{r:?}");
}

#[test]
fn unmapped_windows_targets_become_scratch_files() {
    let (text, t) = line(r"-w50 D:\data\test.dat #2", &[]);
    assert_eq!(t["target"][0]["path"].as_str(), Some("diskspd-target1.dat"));
    assert_eq!(t["target"][1]["path"].as_str(), Some("diskspd-target2.dat"));
    assert_eq!(t["target"][1]["size"].as_integer(), Some(1 << 30));
    assert!(text.contains("--map \"#2=PATH\""), "{text}");
    assert!(text.contains("incompressible"), "{text}");
}

const PROFILE: &str = r#"<?xml version="1.0"?>
<Profile>
  <Progress>0</Progress>
  <ResultFormat>xml</ResultFormat>
  <TimeSpans>
    <TimeSpan>
      <CompletionRoutines>false</CompletionRoutines>
      <MeasureLatency>true</MeasureLatency>
      <Duration>30</Duration>
      <Warmup>0</Warmup>
      <Cooldown>5</Cooldown>
      <RandSeed>42</RandSeed>
      <Affinity>
        <AffinityGroupAssignment Group="0" Processor="1"/>
        <AffinityGroupAssignment Group="0" Processor="0"/>
      </Affinity>
      <Targets>
        <Target>
          <Path>C:\test\data.dat</Path>
          <BlockSize>8192</BlockSize>
          <Random>8192</Random>
          <ThreadsPerFile>2</ThreadsPerFile>
          <RequestCount>8</RequestCount>
          <WriteRatio>30</WriteRatio>
          <FileSize>1048576</FileSize>
          <DisableOSCache>true</DisableOSCache>
          <WriteThrough>true</WriteThrough>
          <WriteBufferContent><Pattern>random</Pattern></WriteBufferContent>
          <Throughput unit="IOPS">500</Throughput>
        </Target>
        <Target>
          <Path>C:\test\log.dat</Path>
          <BlockSize>65536</BlockSize>
          <WriteRatio>100</WriteRatio>
          <FileSize>1048576</FileSize>
          <DisableOSCache>true</DisableOSCache>
          <RequestCount>1</RequestCount>
          <Throughput>6554</Throughput>
        </Target>
      </Targets>
    </TimeSpan>
    <TimeSpan>
      <Duration>30</Duration>
      <Warmup>0</Warmup>
      <Cooldown>5</Cooldown>
      <RandSeed>42</RandSeed>
      <DisableAffinity>true</DisableAffinity>
      <Targets>
        <Target>
          <Path>C:\test\data.dat</Path>
          <BlockSize>4096</BlockSize>
          <Random>4096</Random>
          <RandomRatio>80</RandomRatio>
          <DisableOSCache>true</DisableOSCache>
          <Distribution><Percent><Range IO="90">10</Range></Percent></Distribution>
        </Target>
      </Targets>
    </TimeSpan>
  </TimeSpans>
</Profile>
"#;

fn profile(text: &str, o: &Options) -> Result<super::Converted, ImportError> {
    convert(Path::new("profile.xml"), text, o)
}

#[test]
fn a_profile_of_two_time_spans_becomes_two_steps() {
    let c = profile(PROFILE, &opts(&["C:=/mnt/c"])).unwrap_or_else(|e| panic!("{e}"));
    let t = job(&c.toml);
    let text = &c.toml;
    assert_eq!(t["duration"].as_str(), Some("30s"));
    assert!(t.get("ramp").is_none());
    assert!(t.get("buffered").is_none(), "{text}");
    assert_eq!(t["seed"].as_integer(), Some(42));
    assert_eq!(t["cycle"]["group"].as_array().unwrap().len(), 2);
    let targets = t["target"].as_array().unwrap();
    assert_eq!(targets.len(), 2, "the same path twice is one target");
    assert_eq!(targets[0]["path"].as_str(), Some("/mnt/c/test/data.dat"));
    let ws = workers(&t);
    assert_eq!(ws.len(), 3);
    assert_eq!(ws[0]["name"].as_str(), Some("span1-target1"));
    assert_eq!(ws[0]["group"].as_integer(), Some(1));
    assert_eq!(ws[0]["count"].as_integer(), Some(2));
    assert_eq!(ws[0]["queue_depth"].as_integer(), Some(8));
    assert_eq!(rate(&ws[0]), Some(500.0));
    assert_eq!(
        ws[0]["cpus"].clone().try_into::<Vec<usize>>().unwrap(),
        [1, 0]
    );
    let a = &ws[0]["access"][0];
    assert_eq!(a["read"].as_str(), Some("70%"));
    assert_eq!(a["align"].as_integer(), Some(8192));
    assert_eq!(a["sync"].as_bool(), Some(true));
    // 6554 bytes per ms of 64 KiB: 100.006 I/Os a second.
    assert_eq!(rate(&ws[1]), Some(100.006));
    // Its thread is the span's third: the CPUs' list again from its start.
    assert_eq!(ws[1]["cpus"].clone().try_into::<Vec<usize>>().unwrap(), [1]);
    assert_eq!(ws[1]["access"][0]["random"].as_str(), Some("0%"));
    assert_eq!(ws[2]["group"].as_integer(), Some(2));
    assert!(ws[2].get("cpus").is_none());
    let a = &ws[2]["access"][0];
    assert_eq!(a["random"].as_str(), Some("80%"));
    assert_eq!(a["distribution"].as_str(), Some("zoned:90/10:10/90"));
    // Source lines: the first target's <Target> is on line 18.
    assert!(
        text.contains("# profile.xml:18: target C:\\test\\data.dat"),
        "{text}"
    );
    assert_eq!(t["cooldown"].as_str(), Some("5s"), "{text}");
}

#[test]
fn profile_elements_storlab_cannot_honour_are_named_with_their_line() {
    let p = PROFILE
        .replace(
            "<Warmup>0</Warmup>\n      <Cooldown>5</Cooldown>\n      <RandSeed>42</RandSeed>\n      <DisableAffinity>",
            "<Warmup>3</Warmup>\n      <Cooldown>5</Cooldown>\n      <RandSeed>42</RandSeed>\n      <DisableAffinity>",
        )
        .replace(
            "<RequestCount>1</RequestCount>",
            "<MemoryMappedIo>true</MemoryMappedIo><Bogus/>",
        );
    let r = refusals(profile(&p, &opts(&[])).unwrap_err());
    let got: Vec<(&str, &str)> = r.iter().map(|(a, o, _)| (a.as_str(), o.as_str())).collect();
    assert_eq!(
        got,
        [
            ("profile.xml:37", "<MemoryMappedIo>true</MemoryMappedIo>"),
            ("profile.xml:37", "<Bogus>"),
            ("profile.xml:42", "<TimeSpan>"),
        ],
        "{r:?}"
    );
}

#[test]
fn broken_profiles_are_refused_with_the_place() {
    let msg = |t: &str| profile(t, &opts(&[])).unwrap_err().to_string();
    assert!(msg("<Profile><TimeSpans>").contains("profile.xml: not an XML document"));
    assert!(msg("<Other/>").contains("<Profile>"));
    assert!(msg("<Profile/>").contains("no <TimeSpans>"));
    let no_path = "<Profile><TimeSpans><TimeSpan><Targets><Target><BlockSize>4096</BlockSize></Target><Target><Path>*1</Path></Target></Targets></TimeSpan></TimeSpans></Profile>";
    let r = refusals(profile(no_path, &opts(&[])).unwrap_err());
    assert!(
        r[0].2
            .contains("a template path after a <Target> with no <Path>"),
        "{r:?}"
    );
    let dtd = "<!DOCTYPE p [<!ENTITY a \"aaaa\">]><Profile/>";
    assert!(msg(dtd).contains("not an XML document"));
    // Nesting deep enough to exhaust a parser's stack is refused before parsing.
    let deep = format!(
        "<Profile>{}{}</Profile>",
        "<a>".repeat(5000),
        "</a>".repeat(5000)
    );
    assert!(msg(&deep).contains("nest more than 64"), "{}", msg(&deep));
    let comment = format!(
        "<Profile><!-- {} --><TimeSpans/></Profile>",
        "</a>".repeat(99)
    );
    assert!(msg(&comment).contains("no <TimeSpans><TimeSpan>"));
}

#[test]
fn targets_are_placed_by_the_map_or_kept_when_they_are_paths_here() {
    let o = opts(&[r"D:\exact.dat=/mnt/exact.dat", "D:=/mnt/d"]);
    let mut notes = Vec::new();
    let place = |n: &str, notes: &mut Vec<String>| super::place(n, 0, &o, notes);
    assert_eq!(
        place(r"d:\EXACT.dat", &mut notes),
        Path::new("/mnt/exact.dat")
    );
    assert_eq!(
        place(r"D:\a\b.dat", &mut notes),
        Path::new("/mnt/d/a/b.dat")
    );
    assert_eq!(place("D:", &mut notes), Path::new("/mnt/d"));
    assert_eq!(place(r"dir\f.dat", &mut notes), Path::new("dir/f.dat"));
    assert_eq!(place("/srv/f.dat", &mut notes), Path::new("/srv/f.dat"));
    assert!(notes.is_empty(), "{notes:?}");
    for windows in [r"\\server\share\f.dat", "E:", r"C:\f.dat", "*1", "#3"] {
        assert_eq!(place(windows, &mut notes), Path::new("diskspd-target1.dat"));
    }
    assert_eq!(notes.len(), 5, "{notes:?}");
    // `/d5` is DiskSpd's -d5; `/srv/f.dat` (a second `/`) a target.
    let (_, t) = line("/d5 /b4K /c1M /srv/f.dat", &[]);
    assert_eq!(t["duration"].as_str(), Some("5s"));
    assert_eq!(t["target"][0]["path"].as_str(), Some("/srv/f.dat"));
}

#[test]
fn threads_beyond_what_storlab_runs_are_refused_before_the_job_is_written() {
    let e = convert_args("-t4096 -c1M a.dat b.dat", &opts(&[])).unwrap_err();
    assert!(e.to_string().contains("8192 threads in all"), "{e}");
    let targets = "<Target><Path>t.dat</Path><ThreadsPerFile>4096</ThreadsPerFile></Target>";
    let xml = format!(
        "<Profile><TimeSpans><TimeSpan><Targets>{}</Targets></TimeSpan></TimeSpans></Profile>",
        targets.repeat(5000)
    );
    let e = profile(&xml, &opts(&[])).unwrap_err();
    assert!(e.to_string().contains("profile.xml:1"), "{e}");
    // A span of threads over every target but with none: refused, not a panic.
    let lenient = Options {
        lenient: true,
        ..opts(&[])
    };
    let empty = "<Profile><TimeSpans><TimeSpan><ThreadCount>2</ThreadCount><RequestCount>4</RequestCount></TimeSpan></TimeSpans></Profile>";
    let r = refusals(profile(empty, &opts(&[])).unwrap_err());
    assert!(
        r.iter().any(|(_, _, why)| why.contains("names no target")),
        "{r:?}"
    );
    let _ = profile(empty, &lenient);
}

// Issue 46: what real command lines and profiles hold.

fn int(v: &toml::Value, key: &str) -> Option<i64> {
    v.get(key).and_then(toml::Value::as_integer)
}

#[test]
fn threads_started_apart_keep_their_lanes_as_diskspd_runs_them() {
    // DiskSpd's documentation: three threads interleaved, each 12 KiB on from its last.
    let (_, t) = line(r"-t3 -T4k -b4k -s12k C:\testfile", &["C:=/mnt/c"]);
    let w = workers(&t);
    assert_eq!(w.len(), 3, "a worker each thread");
    for (k, w) in w.iter().enumerate() {
        let a = &w["access"][0];
        assert_eq!(int(a, "offset").unwrap_or(0), 4096 * k as i64, "{w}");
        assert_eq!(int(a, "gap"), Some(8192), "{w}");
        assert_eq!(int(a, "start"), None, "{w}");
        assert_eq!(
            a["class"].as_str(),
            Some("target1"),
            "one class: the target's"
        );
    }
    // Threads a gigabyte apart, each 4 KiB on (the block size): a lane each at the same
    // place, started 1 and 2 GiB in, wrapping to the start.
    let (_, t) = line(r"-c3G -t3 -T1G -b4K -s c:\testfile", &["c:=/mnt/c"]);
    let starts: Vec<Option<i64>> = workers(&t)
        .iter()
        .map(|w| int(&w["access"][0], "start"))
        .collect();
    assert_eq!(starts, [None, Some(1 << 30), Some(2 << 30)]);
    // -T13k -s with 4 KiB blocks: lanes 1 KiB apart, thread k's span k KiB in (13k × k
    // modulo the 4 KiB stride) and its first I/O the rest of 13k × k further.
    let (_, t) = line(r"-c3G -t3 -T13k -b4K -s c:\testfile", &["c:=/mnt/c"]);
    let lanes: Vec<(Option<i64>, Option<i64>)> = workers(&t)
        .iter()
        .map(|w| {
            (
                int(&w["access"][0], "offset"),
                int(&w["access"][0], "start"),
            )
        })
        .collect();
    assert_eq!(
        lanes,
        [
            (None, None),
            (Some(1024), Some(12 << 10)),
            (Some(2048), Some(24 << 10))
        ]
    );
    // Off a 512-byte sector: what O_DIRECT cannot do.
    let e = convert_args(
        r"-c3G -t3 -T1000 -b4K -s c:\testfile",
        &opts(&["c:=/mnt/c"]),
    );
    assert!(
        refusals(e.unwrap_err())[0]
            .2
            .contains("off a 512-byte sector")
    );
    // With -F, every thread has its lane on every target.
    let (_, t) = line(
        "-c100b -b4K -o32 -F8 -T1b -s8b -W60 -d60 -Sh testfile.dat",
        &[],
    );
    assert_eq!(workers(&t).len(), 8);
    assert_eq!(int(&workers(&t)[7]["access"][0], "offset"), Some(7 * 4096));
}

#[test]
fn real_lines_convert_bare_interval_random_target_choice_and_absolute_zones() {
    // VM Fleet's peak profile: a bare -D is DiskSpd's 1 s interval.
    let (_, t) = line(
        "-t1 -b4k -o32 -w0 -r -Suw -D -L -Z10m *1",
        &["*1=/mnt/x.dat"],
    );
    assert_eq!(t["interval"].as_str(), Some("1000ms"));
    // -F -O: two threads share four I/Os in flight over five files, each I/O's file at random.
    let (_, t) = line("-F2 -O4 -c1M file1 file2 file3 file4 file5", &[]);
    let w = &workers(&t)[0];
    assert_eq!(w["target_choice"].as_str(), Some("random"));
    assert_eq!(w["targets"].as_array().unwrap().len(), 5);
    // -rdabs with the file's size: shares of it (90 % of I/O in the first 10 GiB of 40).
    let (_, t) = line("-c40G -r -rdabs90/10G:0/10G:5/20G t.dat", &[]);
    let d = workers(&t)[0]["access"][0]["distribution"]
        .as_str()
        .unwrap();
    assert!(d.starts_with("zoned:94.73"), "{d}");
    let e = convert_args("-r -rdabs90/10G t.dat", &opts(&[])).unwrap_err();
    assert!(refusals(e)[0].2.contains("give -c<size>"));
}

#[test]
fn a_line_that_runs_a_profile_never_panics_on_what_it_holds() {
    // A letter of two bytes beside -X: refused, not cut in the middle.
    for line in ["-\u{e9} -Xp.xml a.bin", "-X\u{e9}.xml", "-X -Xp.xml", "/X"] {
        assert!(convert_args(line, &opts(&[])).is_err(), "{line}");
    }
}

#[test]
fn a_dash_from_a_web_page_is_called_what_it_is() {
    let e = convert_args("\u{2013}b8K \u{2013}d60 D:\\test.dat", &opts(&[]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("argument 1: `\u{2013}b8K` starts with an en dash (\u{2013})")
            && e.contains("write -b8K"),
        "{e}"
    );
}

#[test]
fn a_template_profile_is_completed_and_targets_without_paths_are_its_templates_in_order() {
    let vmfleet = "<Profile><TimeSpans><TimeSpan><Duration></Duration><Warmup></Warmup>\
                   <Cooldown></Cooldown><Targets><Target><Path>*1</Path><BlockSize>4096</BlockSize>\
                   <ThreadStride>0</ThreadStride></Target></Targets></TimeSpan></TimeSpans></Profile>";
    let c = convert(Path::new("p.xml"), vmfleet, &opts(&["*1=/mnt/x.dat"])).unwrap();
    let t = job(&c.toml);
    assert_eq!(t["duration"].as_str(), Some("10s"));
    assert!(c.toml.contains("<Duration> is empty"), "{}", c.toml);
    // StorScore's: no <Path>, its script writes one file per target: they are *1, *2 in order.
    let storscore = "<Profile><TimeSpans><TimeSpan><Targets><Target><BlockSize>4096</BlockSize>\
                     </Target><Target><BlockSize>8192</BlockSize></Target></Targets></TimeSpan>\
                     </TimeSpans></Profile>";
    let c = convert(
        Path::new("s.xml"),
        storscore,
        &opts(&["*2=/mnt/second.dat"]),
    )
    .unwrap();
    let t = job(&c.toml);
    let paths: Vec<&str> = (t["target"].as_array().unwrap().iter())
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["diskspd-target1.dat", "/mnt/second.dat"],
        "{}",
        c.toml
    );
    assert!(c.toml.contains("it is the template *1"), "{}", c.toml);
    // Beside a template path the numbering would be ambiguous: refused.
    let mixed = "<Profile><TimeSpans><TimeSpan><Targets><Target><Path>*1</Path></Target>\
                 <Target><BlockSize>8192</BlockSize></Target></Targets></TimeSpan></TimeSpans></Profile>";
    let e = convert(Path::new("m.xml"), mixed, &opts(&[])).unwrap_err();
    assert!(refusals(e)[0].2.contains("names no <Path>"));
}

#[test]
fn weights_and_thread_targets_are_read_as_diskspd_reads_them() {
    let span = |head: &str, target: &str| {
        format!(
            "<Profile><TimeSpans><TimeSpan>{head}<Targets>\
             <Target><Path>a.dat</Path>{target}</Target>\
             <Target><Path>b.dat</Path></Target></Targets></TimeSpan></TimeSpans></Profile>"
        )
    };
    let pool = "<ThreadCount>2</ThreadCount><RequestCount>4</RequestCount>";
    // With the span's threads and requests: one worker weighing a 5 to b's 1.
    let c = convert(
        Path::new("w.xml"),
        &span(pool, "<Weight>5</Weight>"),
        &opts(&[]),
    )
    .unwrap();
    let t = job(&c.toml);
    let w = &workers(&t)[0];
    assert_eq!(w["count"].as_integer(), Some(2));
    assert_eq!(w["target_weights"].as_array().unwrap().len(), 2);
    assert_eq!(w["target_weights"][0].as_integer(), Some(5));
    // Without them DiskSpd ignores a weight: noted, and the targets are taken as before.
    let c = convert(
        Path::new("w.xml"),
        &span("", "<Weight>5</Weight>"),
        &opts(&[]),
    )
    .unwrap();
    assert!(c.toml.contains("<Weight> has no effect"), "{}", c.toml);
    assert!(!c.toml.contains("target_weights"), "{}", c.toml);
    // What DiskSpd refuses, storlab refuses too, with the target's line.
    let thread = |n: u32| {
        format!("<ThreadTargets><ThreadTarget><Thread>{n}</Thread></ThreadTarget></ThreadTargets>")
    };
    for (head, target, says) in [
        (
            pool,
            "<Weight>0</Weight>".to_string(),
            "a weight of at least 1",
        ),
        ("", thread(0), "go with a time span's <ThreadCount>"),
        (
            pool,
            thread(2),
            "thread 2: the time span's <ThreadCount> is 2",
        ),
    ] {
        let e = convert(Path::new("w.xml"), &span(head, &target), &opts(&[])).unwrap_err();
        let r = refusals(e);
        assert!(
            r.iter()
                .any(|x| x.2.contains(says) && x.0.starts_with("w.xml:1")),
            "{target}: {r:?}"
        );
    }
    // A thread every target's <ThreadTargets> leaves out has nothing to do: refused.
    let none = format!(
        "<Profile><TimeSpans><TimeSpan>{pool}<Targets><Target><Path>a.dat</Path>{}</Target>\
         </Targets></TimeSpan></TimeSpans></Profile>",
        thread(0)
    );
    let r = refusals(convert(Path::new("w.xml"), &none, &opts(&[])).unwrap_err());
    assert!(r.iter().any(|x| x.2.contains("has no target")), "{r:?}");
}

#[test]
fn writes_from_a_file_ask_for_data_as_compressible_as_the_file() {
    let dir = tempfile::tempdir().unwrap();
    // 1 MiB of 512 random bytes then 512 zeros, again and again: about 2:1.
    let mut half = Vec::new();
    let mut x = 7u64;
    for _ in 0..1024 {
        for _ in 0..64 {
            x = crate::engine::buf::splitmix(x);
            half.extend_from_slice(&x.to_le_bytes());
        }
        half.extend_from_slice(&[0u8; 512]);
    }
    let file = dir.path().join("entropy50.bin");
    std::fs::write(&file, &half).unwrap();
    let map = format!("C:\\ss\\e.bin={}", file.display());
    let (toml, t) = line("-b8K -w100 -r -c16M -Z20M,C:\\ss\\e.bin t.dat", &[&map]);
    let asked = t["data"]["compress"].as_float().unwrap();
    assert!((1.8..=2.1).contains(&asked), "{asked}\n{toml}");
    assert!(
        toml.contains("as compressible as the file's first 1048576 bytes"),
        "{toml}"
    );
    // A file that does not compress: storlab's own data, said so; reads only: no [data].
    let random: Vec<u8> = (0..1u64 << 17)
        .flat_map(|i| crate::engine::buf::splitmix(i).to_le_bytes())
        .collect();
    std::fs::write(&file, &random).unwrap();
    let (toml, t) = line("-b8K -w100 -r -c16M -Z1M,C:\\ss\\e.bin t.dat", &[&map]);
    assert!(
        t.get("data").is_none() && toml.contains("(1.00:1"),
        "{toml}"
    );
    let (_, t) = line("-b8K -r -c16M -Z1M,C:\\ss\\e.bin t.dat", &[]);
    assert!(t.get("data").is_none());
    // Refused, each for its reason: an unmapped Windows path, a file that cannot be read, a
    // size of 0, two targets writing from different files.
    let why = |args: &str, map: &[&str]| {
        refusals(convert_args(args, &opts(map)).unwrap_err())[0]
            .2
            .clone()
    };
    assert!(why("-w100 -Z1M,C:\\ss\\e.bin t.dat", &[]).contains("place it with --map"));
    let missing = format!("-w100 -Z1M,{} t.dat", dir.path().join("none.bin").display());
    assert!(why(&missing, &[]).contains("cannot be read"));
    assert!(why("-w100 -Z0,e.bin t.dat", &[]).contains("a buffer size above 0"));
    let two = format!(
        "<Profile><TimeSpans><TimeSpan><Targets>{}{}</Targets></TimeSpan></TimeSpans></Profile>",
        "<Target><Path>a.dat</Path><WriteRatio>100</WriteRatio><WriteBufferContent><Pattern>random</Pattern>\
         <RandomDataSource><SizeInBytes>1048576</SizeInBytes><FilePath>x.bin</FilePath></RandomDataSource>\
         </WriteBufferContent></Target>",
        "<Target><Path>b.dat</Path><WriteRatio>100</WriteRatio></Target>"
    );
    let r = refusals(convert(Path::new("two.xml"), &two, &opts(&[])).unwrap_err());
    assert!(
        r.iter().any(|x| x.2.contains("[data] is the job's")),
        "{r:?}"
    );
}
