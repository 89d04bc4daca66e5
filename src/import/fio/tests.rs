//! The conversion of fio job files: what each option becomes, and what is refused.

use super::{Converted, FioError, Options, bssplit, convert, duration, size};
use crate::import::parse_map;

mod jobs;

/// Converts the fio job file `text` (written as `job.fio` in a scratch directory, beside
/// `extra` files).
fn conv(text: &str, extra: &[(&str, &str)], lenient: bool) -> Result<Converted, FioError> {
    let dir = tempfile::tempdir().unwrap();
    for (name, t) in extra {
        std::fs::write(dir.path().join(name), t).unwrap();
    }
    let path = dir.path().join("job.fio");
    std::fs::write(&path, text).unwrap();
    let opts = Options {
        lenient,
        map: Vec::new(),
    };
    convert(&path, text, &opts)
}

/// A number of the converted job, integer or not.
fn num(v: &toml::Value) -> Option<f64> {
    v.as_float().or(v.as_integer().map(|i| i as f64))
}

/// The converted job, parsed back as TOML.
fn toml_of(text: &str) -> toml::Table {
    let c = conv(text, &[], false).unwrap_or_else(|e| panic!("{e}"));
    c.toml.parse().unwrap_or_else(|e| panic!("{e}\n{}", c.toml))
}

#[test]
fn sizes_times_and_splits_read_as_fio_reads_them() {
    assert_eq!(size("4k"), Some(4096));
    assert_eq!(size("64KiB"), Some(65536));
    assert_eq!(size("1m"), Some(1 << 20));
    assert_eq!(size("512"), Some(512));
    // Beyond 2^64 bytes: refused, never saturated.
    assert_eq!(size("1e26"), None);
    assert_eq!(size("16384p"), None);
    assert_eq!(size("inf"), None);
    assert_eq!(size("nan"), None);
    assert_eq!(duration("60"), Some("60s".into()));
    assert_eq!(duration("500ms"), Some("500ms".into()));
    assert_eq!(duration("2m"), Some("120s".into()));
    assert_eq!(bssplit("4k/50:8k/"), Some(vec![(4096, 50), (8192, 50)]));
    assert_eq!(
        bssplit("4k/10:64k/50:32k/40,4k/10:64k/50:32k/40").map(|l| l.len()),
        Some(3)
    );
    assert_eq!(
        bssplit("4k/50:8k/50,16k/100"),
        None,
        "reads and writes differ"
    );
    assert_eq!(bssplit("4k/70:8k/40"), None, "over 100 %");
}

#[test]
fn a_job_becomes_a_worker_with_its_clones_mix_depth_and_files() {
    let t = toml_of(
        "[global]\nioengine=libaio\ndirect=1\nruntime=30\ntime_based\nsize=64m\ndirectory=/data\n\
         [oltp]\nrw=randrw\nrwmixread=70\nbs=8k\niodepth=16\nnumjobs=4\nnorandommap\n",
    );
    assert_eq!(t["engine"].as_str(), Some("io_uring"));
    assert_eq!(t["duration"].as_str(), Some("30s"));
    let w = &t["worker"][0];
    assert_eq!(w["count"].as_integer(), Some(4));
    assert_eq!(w["queue_depth"].as_integer(), Some(16));
    assert_eq!(w["one_target_each"].as_bool(), Some(true));
    assert!(w.get("io_limit").is_none(), "time_based: no limit");
    let a = &w["access"][0];
    assert_eq!(a["block_size"].as_integer(), Some(8192));
    assert_eq!(a["read"].as_str(), Some("70%"));
    assert_eq!(a["random"].as_str(), Some("100%"));
    assert!(a.get("distribution").is_none(), "norandommap: uniform");
    // fio's own file names, one a clone.
    let targets = t["target"].as_array().unwrap();
    assert_eq!(targets.len(), 4);
    assert_eq!(targets[3]["path"].as_str(), Some("/data/oltp.3.0"));
    assert_eq!(targets[0]["size"].as_integer(), Some(64 << 20));
}

#[test]
fn clones_with_an_offset_increment_each_start_further_into_one_file() {
    // fio: clone n's offset is offset + n × offset_increment (its examples'
    // cross-stripe-verify.fio splits a drive this way among 30 clones).
    let text = "[global]\nfilename=/tmp/stripes\nsize=1g\nbs=16k\nrw=write\noffset=128k\n\
                offset_increment=256m\n[w]\nnumjobs=4\n";
    let t = toml_of(text);
    let a = &t["worker"][0]["access"][0];
    assert_eq!(t["worker"][0]["count"].as_integer(), Some(4));
    assert_eq!(a["offset"].as_integer(), Some(128 << 10));
    assert_eq!(a["offset_increment"].as_integer(), Some(256 << 20));
    // The converted job's four workers, each on its own quarter of the file.
    let job = resolves(&conv(text, &[], false).unwrap().toml);
    let starts: Vec<u64> = (job.workers.iter())
        .map(|w| w.access[0].offset_bytes)
        .collect();
    assert_eq!(
        starts,
        (0..4)
            .map(|n| (128 << 10) + n * (256 << 20))
            .collect::<Vec<_>>()
    );
    let e = conv(&text.replace("256m", "25%"), &[], false).unwrap_err();
    assert!(
        e.to_string()
            .contains("offset_increment=25%: bytes between clones"),
        "{e}"
    );
}

#[test]
fn what_a_job_does_not_say_is_fios_default() {
    // fio: ioengine=psync, direct=0 (the page cache), rw=read, bs=4k, iodepth=1.
    let t = toml_of("[j]\nfilename=/tmp/x\nsize=1m\n");
    assert_eq!(t["engine"].as_str(), Some("psync"));
    assert_eq!(t["buffered"].as_bool(), Some(true));
    let w = &t["worker"][0];
    assert_eq!(w["queue_depth"].as_integer(), Some(1));
    let a = &w["access"][0];
    assert_eq!(
        (a["read"].as_str(), a["random"].as_str()),
        (Some("100%"), Some("0%"))
    );
    assert_eq!(a["block_size"].as_integer(), Some(4096));
    // A job that says otherwise than the first, where the first said nothing: refused.
    let e = conv(
        "[a]\nfilename=/tmp/x\nsize=1m\n[b]\nioengine=io_uring\nfilename=/tmp/x\n",
        &[],
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("job.fio:5") && e.contains("differ from the jobs before it"),
        "{e}"
    );
}

#[test]
fn without_time_based_a_job_stops_after_its_data_and_random_visits_each_block_once() {
    let t = toml_of("[j]\nrw=randread\nbs=4k\nsize=1m\nfilename=/tmp/x\n");
    let w = &t["worker"][0];
    assert_eq!(w["io_limit"].as_integer(), Some(256));
    assert_eq!(w["access"][0]["distribution"].as_str(), Some("shuffle"));
}

#[test]
fn rates_are_per_direction_in_fio_and_of_all_ios_in_storlab() {
    // 150 reads and 60 writes a second: 210 I/Os, 71.4 % reads.
    let t = toml_of("[j]\nrw=randrw\nrwmixread=90\nrate_iops=150,60\nfilename=/tmp/x\nsize=1m\n");
    let w = &t["worker"][0];
    assert_eq!(num(&w["rate_iops"]), Some(210.0));
    let read: f64 = (w["access"][0]["read"]
        .as_str()
        .unwrap()
        .trim_end_matches('%'))
    .parse()
    .unwrap();
    assert!((read - 71.43).abs() < 0.01, "{read}");
    // One value: as many reads as writes.
    let t = toml_of("[j]\nrw=randrw\nrate_iops=100\nfilename=/tmp/x\nsize=1m\n");
    assert_eq!(num(&t["worker"][0]["rate_iops"]), Some(200.0));
    // Paced by bytes: 300 × 4 KiB over a mean of 6 KiB.
    let t =
        toml_of("[j]\nrw=randread\nbssplit=4k/50:8k/50\nrate_iops=300\nfilename=/tmp/x\nsize=1m\n");
    assert_eq!(num(&t["worker"][0]["rate_iops"]), Some(200.0));
    // A bandwidth: 1 MiB/s of 4 KiB.
    let t = toml_of("[j]\nrw=read\nbs=4k\nrate=1m\nfilename=/tmp/x\nsize=1m\n");
    assert_eq!(num(&t["worker"][0]["rate_iops"]), Some(256.0));
}

#[test]
fn stonewall_makes_groups_run_one_after_another_and_jobs_on_one_file_share_it() {
    let t = toml_of(
        "[global]\nfilename=/tmp/ssd\nsize=1m\ntime_based\nruntime=5\n\
         [a]\nrw=read\n[b]\nrw=randread\n[c]\nstonewall\nrw=write\n",
    );
    let groups: Vec<i64> = (t["cycle"]["group"].as_array().unwrap().iter())
        .map(|v| v.as_integer().unwrap())
        .collect();
    assert_eq!(groups, vec![1, 2]);
    let w = t["worker"].as_array().unwrap();
    let of = |i: usize| w[i]["group"].as_integer().unwrap();
    assert_eq!(
        (of(0), of(1), of(2)),
        (1, 1, 2),
        "a and b run together, c after"
    );
    assert_eq!(
        t["target"].as_array().unwrap().len(),
        1,
        "one file, one target"
    );
    // And storlab reads the job: three steps' worth of workers in two groups.
    let job = crate::job::file::parse(
        std::path::Path::new("x.toml"),
        &toml::to_string(&t).unwrap(),
    )
    .and_then(|s| crate::job::resolve(&s, None));
    assert!(job.is_ok(), "{job:?}");
}

#[test]
fn includes_and_the_environment_are_read_as_fio_reads_them() {
    // Not set: an error naming it (a set one is read in the integration tests, which set
    // STORLAB_FIO_DIR for fio and storlab alike).
    let e = conv(
        "[j]\ndirectory=${STORLAB_TEST_FIO_UNSET_7731}\n",
        &[],
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("STORLAB_TEST_FIO_UNSET_7731"), "{e}");
    let c = conv(
        "[global]\ninclude common.inc\n[j]\nrw=read\nfilename=/tmp/x\n",
        &[("common.inc", "bs=16k\nsize=1m\n")],
        false,
    )
    .unwrap();
    assert!(c.toml.contains("block_size = 16384"), "{}", c.toml);
    let e = conv(
        "[global]\ninclude bad.inc\n[j]\n",
        &[("bad.inc", "[x]\nbs=4k\n")],
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("bad.inc:1"), "{e}");
}

#[test]
fn unsupported_options_are_listed_once_in_file_order_and_left_out_when_lenient() {
    let text = "[global]\nzonemode=zbd\nsize=1m\n[a]\nrw=randtrim\n[b]\nrw=read\nfoo=1\n";
    let e = conv(text, &[], false).unwrap_err().to_string();
    assert!(e.starts_with("3 options of"), "{e}");
    let lines: Vec<&str> = e.lines().skip(1).take(3).collect();
    assert!(lines[0].contains("job.fio:2: zonemode=zbd"), "{e}");
    assert!(lines[1].contains("job.fio:5: rw=randtrim"), "{e}");
    assert!(
        lines[2].contains("job.fio:8: foo=1: not an option storlab converts"),
        "{e}"
    );
    let c = conv(text, &[], true).unwrap();
    assert_eq!(c.left_out.len(), 3);
    assert!(c.toml.contains("# left out"), "{}", c.toml);
}

#[test]
fn a_think_time_is_one_io_at_a_time_that_long_after_each() {
    for (v, want) in [("2000", "2000us"), ("2ms", "2000us"), ("1s", "1000000us")] {
        let t = toml_of(&format!(
            "[j]\nrw=read\niodepth=8\nthinktime={v}\nfilename=/tmp/x\nsize=1m\n"
        ));
        let w = &t["worker"][0];
        assert_eq!(w["think_time"].as_str(), Some(want), "{v}");
        assert_eq!(w["queue_depth"].as_integer(), Some(1), "{v}");
    }
    let e = conv(
        "[j]\nrate_iops=10\nthinktime=5\nthinktime_blocks=4\nfilename=/tmp/x\n",
        &[],
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("thinktime=5: storlab does not pace a worker both"),
        "{e}"
    );
    assert!(e.contains("thinktime_blocks=4"), "{e}");
}

#[test]
fn jobs_that_disagree_on_what_storlab_sets_for_the_whole_job_are_refused() {
    let e = conv(
        "[a]\nioengine=psync\nfilename=/tmp/x\nsize=1m\n[b]\nioengine=io_uring\nfilename=/tmp/x\n",
        &[],
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("job.fio:6") && e.contains("differ from the jobs before it"),
        "{e}"
    );
}

// The options of issue 34: verification, steady state, latency target, holes, sizes,
// priorities, delays, groups, NUMA, data reduction, --map.

fn conv_with(text: &str, opts: &Options) -> Result<Converted, FioError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.fio");
    std::fs::write(&path, text).unwrap();
    convert(&path, text, opts)
}

/// The converted text (strict) of a job with `extra` options.
fn text(extra: &str) -> String {
    let t = format!("[global]\nioengine=io_uring\nfilename=/tmp/x\nsize=1m\n[j]\n{extra}");
    match conv_with(&t, &Options::default()) {
        Ok(c) => c.toml,
        Err(e) => panic!("{e}"),
    }
}

/// The converted job without its `[data]` table (which another part of storlab reads),
/// parsed as a storlab job and resolved.
fn resolves(toml: &str) -> crate::job::Job {
    let toml = match toml.find("\n[data]") {
        Some(i) => {
            let rest = &toml[i + 1..];
            let end = rest.find("\n\n").map_or(rest.len(), |e| e + 1);
            format!("{}{}", &toml[..i + 1], &rest[end..])
        }
        None => toml.to_string(),
    };
    let p = std::path::Path::new("x.toml");
    let spec = crate::job::file::parse(p, &toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    crate::job::resolve(&spec, Some((p, &toml))).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

fn refused(extra: &str) -> String {
    let t = format!("[global]\nioengine=io_uring\nfilename=/tmp/x\nsize=1m\n[j]\n{extra}");
    conv_with(&t, &Options::default()).unwrap_err().to_string()
}

#[test]
fn every_verify_checksum_is_storlabs_stronger_verification() {
    for sum in [
        "md5",
        "crc32c",
        "crc32c-intel",
        "crc64",
        "crc32",
        "crc16",
        "crc7",
        "xxhash",
        "sha1",
        "sha256",
        "sha512",
        "sha3-256",
        "meta",
        "pattern",
    ] {
        let t = text(&format!(
            "rw=randwrite\nverify={sum}\nverify_fatal=1\nverify_backlog=16\n"
        ));
        assert!(t.contains(&format!("job.fio:7: verify={sum}\n")), "{t}");
        assert!(t.contains("stronger") && t.contains("verify = true"), "{t}");
        assert!(t.contains("verify_fatal: no effect"), "{t}");
        assert!(resolves(&t).verify, "{sum}");
    }
    assert!(!text("verify=0\n").contains("verify = true"));
    assert!(!text("verify=crc32c\ndo_verify=0\n").contains("verify = true"));
    let e = refused("verify=crc32c\nverify_pattern=0xff\n");
    assert!(
        e.contains("job.fio:7: verify_pattern=0xff: storlab writes its own"),
        "{e}"
    );
    assert!(refused("verify=adler\n").contains("verify=adler"));
}

#[test]
fn steady_state_becomes_one_second_rounds_over_ss_dur() {
    let t = text("rw=randread\nruntime=600\nss=iops:10%\nss_dur=30\nss_ramp=5\n");
    let job = resolves(&t);
    let st = job.sequence.steady.unwrap();
    assert_eq!(
        (st.round_ms, st.window, st.range_pct, st.slope_pct),
        (1000, 30, 10.0, 100.0)
    );
    assert_eq!(st.max_rounds, 600);
    assert_eq!(job.ramp_ms, 5000);
    // The slope per second, over the window's 29 steps.
    let t = text("rw=randread\nss=iops_slope:0.1%\nss_dur=30\n");
    let st = resolves(&t).sequence.steady.unwrap();
    assert!(
        (st.slope_pct - 2.9).abs() < 1e-9 && st.range_pct == 100.0,
        "{st:?}"
    );
    // Bandwidth is IOPS with one block size only; an absolute limit has no equal.
    assert!(text("bs=8k\nss=bw:5%\nss_dur=10\n").contains("until_steady = true"));
    assert!(refused("bssplit=4k/50:8k/50\nss=bw:5%\nss_dur=10\n").contains("one block size"));
    assert!(refused("ss=iops:200\nss_dur=10\n").contains("relative"));
    assert!(refused("ss=iops:10%\n").contains("ss_dur"));
}

#[test]
fn steady_state_on_latency_samples_each_check_interval() {
    // fio's own names, as its examples write them: a 300 s window of 10 s samples, each the
    // interval's mean completion latency.
    let t = text(
        "rw=randread\nruntime=3600\nsteadystate=lat:5%\nsteadystate_duration=300\nsteadystate_check_interval=10\n",
    );
    assert!(t.contains("steadystate=lat:5%"), "{t}");
    let st = resolves(&t).sequence.steady.unwrap();
    assert_eq!(
        (
            st.round_ms,
            st.window,
            st.range_pct,
            st.slope_pct,
            st.max_rounds
        ),
        (10_000, 30, 5.0, 100.0, 360)
    );
    assert_eq!(st.metric, crate::job::steps::SteadyMetric::Latency);
    // The slope per sample, over the window's 29 steps; 500 ms samples.
    let t = text("rw=randread\nss=lat_slope:0.1%\nss_dur=15\nss_interval=500ms\n");
    let st = resolves(&t).sequence.steady.unwrap();
    assert_eq!((st.round_ms, st.window), (500, 30));
    assert!((st.slope_pct - 2.9).abs() < 1e-9, "{st:?}");
    // fio's integer division: 25 s of 10 s samples is a window of 2.
    let st = resolves(&text("ss=iops:10%\nss_dur=25\nss_interval=10\n"))
        .sequence
        .steady
        .unwrap();
    assert_eq!((st.round_ms, st.window), (10_000, 2));
    assert_eq!(st.metric, crate::job::steps::SteadyMetric::Iops);
    for (job, says) in [
        (
            "ss=lat:5%\nss_dur=10\nss_interval=10\n",
            "job.fio:7: ss_dur=10: at least two",
        ),
        (
            "ss=lat:5%\nss_dur=10\nss_interval=50ms\n",
            "job.fio:8: ss_interval=50ms: a time",
        ),
        (
            "steadystate=clat:5%\nss_dur=10\n",
            "job.fio:6: steadystate=clat:5%: iops",
        ),
    ] {
        let e = refused(job);
        assert!(e.contains(says), "{job}: {e}");
    }
}

#[test]
fn a_latency_target_is_a_queue_depth_search_that_stops_over_the_target() {
    let t = text(
        "rw=randread\niodepth=32\nlatency_target=10ms\nlatency_window=2s\nlatency_percentile=99\n",
    );
    assert!(t.contains("queue_depth = { from = 1, to = 32 }"), "{t}");
    let job = resolves(&t);
    assert_eq!(job.duration_ms, 2000);
    let rule = job.sequence.stop_when.unwrap();
    assert_eq!(rule.threshold_ns, 10_000_000);
    assert_eq!(rule.statistic, crate::job::steps::Statistic::P99);
    let e = refused("iodepth=8\nlatency_target=500\nlatency_percentile=97.5\n");
    assert!(e.contains("latency_percentile=97.5"), "{e}");
    assert!(refused("latency_target=500\n").contains("iodepth above 1"));
}

#[test]
fn holes_and_backwards_become_a_gap_and_random_modifiers_are_refused() {
    let t = text("rw=read:-8k\nbs=4k\n");
    assert_eq!(resolves(&t).workers[0].access[0].gap_bytes, -8192);
    assert_eq!(
        resolves(&text("rw=write:4k\n")).workers[0].access[0].gap_bytes,
        4096
    );
    assert!(refused("rw=randread:8\n").contains("new random offset"));
    assert!(refused("rw=read\nrw_sequencer=identical\n").contains("rw_sequencer"));
}

#[test]
fn a_size_range_is_fios_distribution_of_multiples_of_the_smallest() {
    assert_eq!(
        super::features::bsrange("4k-16k").unwrap(),
        vec![(4096, 4096), (8192, 4096), (12288, 4096), (16384, 4096)]
    );
    // MAX not a multiple of MIN: 12 KiB and above are capped at 10 KiB.
    assert_eq!(
        super::features::bsrange("4k-10k").unwrap(),
        vec![(4096, 4096), (8192, 4096), (10240, 2048)]
    );
    let w = &resolves(&text("rw=randread\nbs=4k-8k\nblockalign=4k\n")).workers[0];
    assert_eq!(w.access[0].block_sizes, vec![(4096, 4096), (8192, 4096)]);
    assert_eq!(w.access[0].align_bytes, 4096);
    assert!(
        super::features::bsrange("3k-9k").is_err(),
        "not a power of two"
    );
    assert!(
        super::features::bsrange("512-1m").is_err(),
        "too many sizes"
    );
    assert!(refused("bsrange=4k-8k,16k-32k\n").contains("one range"));
}

#[test]
fn priorities_become_the_workers_and_a_share_of_its_ios() {
    let t = text("prioclass=1\nprio=2\ncmdprio_percentage=25\ncmdprio_class=3\n");
    let w = &resolves(&t).workers[0];
    assert_eq!(w.io_priority.unwrap().show(), "rt:2");
    let mix = w.io_priority_mix.unwrap();
    assert_eq!((mix.share_pct, mix.priority.show()), (25.0, "idle".into()));
    // prio alone: best effort; cmdprio_percentage alone: real time, level 0.
    let w = &resolves(&text("prio=6\ncmdprio_percentage=5\n")).workers[0];
    assert_eq!(w.io_priority.unwrap().show(), "be:6");
    assert_eq!(w.io_priority_mix.unwrap().priority.show(), "rt:0");
    assert!(refused("prio=9\n").contains("prio=9"));
    assert!(refused("cmdprio_bssplit=4k/10\n").contains("cmdprio_bssplit"));
    let e = conv_with(
        "[j]\nfilename=/tmp/x\nsize=1m\ncmdprio_percentage=5\n",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("io_uring"), "{e}");
}

#[test]
fn start_delay_loops_and_the_random_share_are_fios() {
    let w = &resolves(&text("startdelay=2\n")).workers[0];
    assert_eq!(w.start_delay_ns, Some(2_000_000_000));
    assert!(refused("startdelay=1-5\n").contains("range"));
    // loops: the job's data that many times.
    let w = &resolves(&text("rw=read\nloops=3\n")).workers[0];
    assert_eq!(w.io_limit, Some(crate::job::IoLimit::Ios(3 * 256)));
    let w = &resolves(&text("rw=randread\npercentage_random=30\n")).workers[0];
    assert_eq!(w.access[0].random_pct, 30.0);
    let w = &resolves(&text("rw=read\npercentage_random=30\n")).workers[0];
    assert_eq!(w.access[0].random_pct, 0.0, "fio: random jobs only");
}

#[test]
fn options_without_effect_are_named_and_what_storlab_lacks_is_refused() {
    let t = text("thread\nrandom_generator=lfsr\nio_submit_mode=offload\nexitall\n");
    // exitall with one job, alone in its reporting group: it stops no other.
    for key in ["thread", "random_generator", "io_submit_mode", "exitall"] {
        assert!(t.contains(&format!("# {key}: no effect")), "{key}\n{t}");
    }
    let e = refused("zonemode=zbd\n");
    assert!(e.contains("zonemode=zbd") && e.contains("zoned"), "{e}");
    assert!(refused("numa_cpu_nodes=999\n").contains("no NUMA node 999"));
    if std::path::Path::new("/sys/devices/system/node/node0/cpulist").exists() {
        let w = &resolves(&text("numa_cpu_nodes=0\n")).workers[0];
        assert!(w.cpu.is_some());
    }
}

#[test]
fn a_floor_on_the_rate_is_one_on_all_io_weighted_by_the_mix() {
    let floor = |extra: &str| resolves(&text(extra)).workers[0].min_rate;
    let f = floor("rw=randread\nrate_iops_min=50\n").expect("a floor");
    assert_eq!(
        (f.iops, f.cycle_ns),
        (50.0, 1_000_000_000),
        "fio's ratecycle: 1 s"
    );
    // 70 % reads: writes are 30 % of all I/Os, so 30 writes a second take 100 I/Os.
    let f = floor("rw=randrw\nrwmixread=70\nrate_iops_min=50,30\nratecycle=500\n").unwrap();
    assert_eq!((f.iops, f.cycle_ns), (100.0, 500_000_000));
    // ratemin is bytes a second: 1 MiB/s of 4 KiB reads is 256 I/Os a second.
    let f = floor("rw=read\nratemin=1m\nratecycle=2s\n").unwrap();
    assert_eq!((f.iops, f.cycle_ns), (256.0, 2_000_000_000));
    // A floor on writes alone, in a job that only reads: fio never judges it.
    assert_eq!(floor("rw=read\nrate_iops_min=,10\n"), None);
    let t = text("rw=read\nrate_iops_min=5\n");
    assert!(t.contains(": rate_iops_min=5\n# fio judges"), "{t}");
    assert!(text("rw=read\nratecycle=100\n").contains("ratecycle: no effect"));
    assert!(refused("rate_iops_min=lots\n").contains("rate_iops_min=lots"));
    assert!(refused("rate_iops_min=5\nratecycle=fast\n").contains("ratecycle=fast"));
}

#[test]
fn wait_for_puts_a_job_in_the_group_after_the_one_it_names() {
    let t = text("rw=read\n[k]\nrw=write\n[l]\nwait_for=j\nrw=randread\n");
    let job = resolves(&t);
    let groups: Vec<Option<u32>> = job.workers.iter().map(|w| w.group).collect();
    assert_eq!(groups, vec![Some(1), Some(1), Some(2)]);
    assert!(refused("wait_for=nobody\n").contains("wait_for=nobody"));
}

#[test]
fn data_reduction_percentages_are_ratios() {
    let t = text("rw=write\nbuffer_compress_percentage=75\ndedupe_percentage=50\n");
    assert!(t.contains("[data]\n# "), "{t}");
    assert!(
        t.contains("job.fio:7: buffer_compress_percentage=75\ncompress = 4\n"),
        "{t}"
    );
    assert!(
        t.contains("job.fio:8: dedupe_percentage=50\ndedupe = 2\n"),
        "{t}"
    );
    assert!(refused("buffer_compress_percentage=100\n").contains("ratio without end"));
}

#[test]
fn windows_filenames_are_placed_with_map() {
    let text = "[j]\nfilename=\\\\.\\PhysicalDrive1:C\\:\\test\nsize=1m\n";
    let e = conv_with(text, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("--map \"\\\\.\\PhysicalDrive1=PATH\""), "{e}");
    assert!(e.contains("job.fio:2: filename="), "{e}");
    let opts = Options {
        lenient: false,
        map: vec![
            parse_map("\\\\.\\PhysicalDrive1=/dev/sdz").unwrap(),
            parse_map("C:\\test=/mnt/t/file").unwrap(),
        ],
    };
    let c = conv_with(text, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert!(c.toml.contains("path = \"/dev/sdz\""), "{}", c.toml);
    assert!(c.toml.contains("path = \"/mnt/t/file\""), "{}", c.toml);
    assert!(c.toml.contains("job.fio:2: filename="), "{}", c.toml);
}

#[test]
fn completion_batching_and_io_uring_options_convert() {
    let base =
        "[j]\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4k\niodepth=32\nsize=1m\nfilename=f\n";
    let uring = |extra: &str| {
        let t = toml_of(&format!("{base}{extra}"));
        let table = t.get("io_uring").and_then(|u| u.as_table()).cloned();
        (t, table.unwrap_or_default())
    };
    // A minimum alone: fio then reaps at most that many too.
    let (t, u) = uring("iodepth_batch_submit=8\niodepth_batch_complete_min=4\n");
    assert_eq!(t["batch"].as_integer(), Some(8));
    assert_eq!(u["batch_complete_min"].as_integer(), Some(4));
    assert_eq!(u["batch_complete_max"].as_integer(), Some(4));
    // Both, and fio's older name of the minimum; 0: never wait.
    let (_, u) = uring("iodepth_batch_complete=0\niodepth_batch_complete_max=32\n");
    assert_eq!(u["batch_complete_min"].as_integer(), Some(0));
    assert_eq!(u["batch_complete_max"].as_integer(), Some(32));
    // The engine's fast paths.
    let (_, u) = uring("hipri\nsqthread_poll=1\nsqthread_poll_cpu=1\nfixedbufs\nregisterfiles\n");
    assert_eq!(u["poll"].as_bool(), Some(true));
    assert_eq!(u["sqpoll"].as_bool(), Some(true));
    assert_eq!(u["sqpoll_cpu"].as_integer(), Some(1));
    // Off is off; nothing to write.
    let (t, _) = uring("hipri=0\nsqthread_poll=0\n");
    assert!(t.get("io_uring").is_none());
    // The converted job resolves: the keys are storlab's.
    let c = conv(
        &format!("{base}iodepth_batch_complete_min=2\niodepth_batch_complete_max=16\nhipri\n"),
        &[],
        false,
    )
    .unwrap();
    let p = std::path::Path::new("converted.toml");
    let job = crate::job::file::parse(p, &c.toml)
        .and_then(|s| crate::job::resolve(&s, Some((p, &c.toml))))
        .unwrap_or_else(|e| panic!("{e}\n{}", c.toml));
    assert_eq!(
        (
            job.io_uring.batch_complete_min,
            job.io_uring.batch_complete_max,
            job.io_uring.poll
        ),
        (2, Some(16), true)
    );
    // A maximum below the minimum: refused with the line.
    let Err(e) = conv(
        &format!("{base}iodepth_batch_complete_min=8\niodepth_batch_complete_max=2\n"),
        &[],
        false,
    ) else {
        panic!("a maximum below the minimum was converted")
    };
    assert!(e.to_string().contains("iodepth_batch_complete_max"), "{e}");
}
