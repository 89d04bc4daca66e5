//! vdbench parameter files written from vdbench's public description, converted: the TOML
//! asserted, and the job read back by storlab (apart from its `[data]` table).

use super::convert;
use crate::import::{Converted, ImportError, Options, parse_map};
use std::path::Path;

fn conv(text: &str, opts: &Options) -> Result<Converted, ImportError> {
    convert(Path::new("t.vdb"), text, opts)
}

fn strict(text: &str) -> (String, toml::Table) {
    let c = conv(text, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let t = c.toml.parse().unwrap_or_else(|e| panic!("{e}\n{}", c.toml));
    (c.toml, t)
}

/// storlab reads the converted job (without a `[data]` table, another part's).
fn resolves(t: &toml::Table) {
    let mut t = t.clone();
    t.remove("data");
    let job = crate::job::file::parse(Path::new("x.toml"), &toml::to_string(&t).unwrap())
        .and_then(|s| crate::job::resolve(&s, None));
    assert!(job.is_ok(), "{job:?}\n{t:#?}");
}

fn num(v: &toml::Value) -> f64 {
    v.as_float().or(v.as_integer().map(|i| i as f64)).unwrap()
}

const OLTP: &str = "\
* OLTP-like mix on two LUNs, the array's proof of concept
compratio=2
dedupratio=3
dedupunit=8k
messagescan=no
sd=default,openflags=o_direct,threads=16
sd=sd1,lun=/dev/sdb,size=10g
sd=sd2,lun=/dev/sdc,size=10g,
   threads=4
wd=wd_oltp,sd=(sd1,sd2),xfersize=(4k,50,8k,30,64k,20),rdpct=70,seekpct=100,skew=80
wd=wd_log,sd=sd1,xfersize=64k,rdpct=0,seekpct=seq,skew=20,range=(0,10)
rd=run1,wd=wd*,iorate=5000,elapsed=600,interval=5,warmup=60
";

#[test]
fn an_oltp_mix_becomes_workers_per_lun_with_weighted_entries_and_the_data_table() {
    let (text, t) = strict(OLTP);
    assert_eq!(t["duration"].as_str(), Some("600s"));
    assert_eq!(t["interval"].as_str(), Some("5s"));
    assert_eq!(t["ramp"].as_str(), Some("60s"));
    assert!(t.get("buffered").is_none(), "o_direct everywhere");
    let data = &t["data"];
    assert_eq!(num(&data["compress"]), 2.0);
    assert_eq!(num(&data["dedupe"]), 3.0);
    assert_eq!(data["dedupe_unit"].as_str(), Some("8 KiB"));
    let targets = t["target"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    assert_eq!(targets[1]["path"].as_str(), Some("/dev/sdc"));
    assert_eq!(targets[1]["size"].as_str(), Some("10 GiB"));
    let w = t["worker"].as_array().unwrap();
    assert_eq!(w.len(), 2, "one worker per sd");
    // threads: the default's 16 on sd1, sd2's own 4.
    assert_eq!(w[0]["queue_depth"].as_integer(), Some(16));
    assert_eq!(w[1]["queue_depth"].as_integer(), Some(4));
    // wd_oltp's 80 % is spread over two sds (40 % each), wd_log's 20 % on sd1 alone: sd1
    // runs 60 % of the 5000 I/Os a second, sd2 40 %.
    assert_eq!(num(&w[0]["rate_iops"]), 3000.0);
    assert_eq!(num(&w[1]["rate_iops"]), 2000.0);
    assert_eq!(
        w[0]["arrivals"].as_str(),
        Some("poisson"),
        "vdbench's exponential default"
    );
    let a = w[0]["access"].as_array().unwrap();
    assert_eq!(a.len(), 2);
    assert_eq!(
        (a[0]["weight"].as_integer(), a[1]["weight"].as_integer()),
        (Some(4000), Some(2000))
    );
    assert_eq!(a[0]["block_sizes"]["64 KiB"].as_integer(), Some(20));
    assert_eq!(
        (a[0]["read"].as_str(), a[0]["random"].as_str()),
        (Some("70%"), Some("100%"))
    );
    assert_eq!(
        (a[1]["read"].as_str(), a[1]["random"].as_str()),
        (Some("0%"), Some("0%"))
    );
    assert_eq!(a[1]["length"].as_str(), Some("1 GiB"), "10 % of 10 GiB");
    assert!(
        w[1]["access"][0].get("weight").is_none(),
        "one entry: no weight"
    );
    // Every part names its source line.
    assert!(
        text.contains("# t.vdb:2: compratio=2\ncompress = 2.0"),
        "{text}"
    );
    assert!(
        text.contains("# t.vdb:8: sd=sd2,lun=/dev/sdc,size=10g,threads=4\n[[target]]"),
        "{text}"
    );
    assert!(
        text.contains(
            "# t.vdb:9: threads=4: vdbench's outstanding I/Os on sd=sd2\nqueue_depth = 4"
        ),
        "{text}"
    );
    assert!(text.contains("# t.vdb:10: wd=wd_oltp"), "{text}");
    assert!(
        text.contains("t.vdb:5: messagescan=no: no effect"),
        "{text}"
    );
    resolves(&t);
}

#[test]
fn for_lists_become_cycles_in_the_order_written_and_max_is_closed_loop() {
    let (text, t) = strict(
        "sd=sd1,lun=/data/vdb.file,size=1g,openflags=o_direct\n\
         wd=wd1,sd=sd1,rdpct=100,seekpct=random\n\
         rd=sweep,wd=wd1,iorate=max,elapsed=30,interval=1,\n\
         forthreads=(1-64,d),forxfersize=(4k,8k,64k),forrdpct=(100,70,0),forseekpct=(0,100)\n",
    );
    let c = &t["cycle"];
    let qd: Vec<i64> = c["queue_depth"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_integer().unwrap())
        .collect();
    assert_eq!(qd, [1, 2, 4, 8, 16, 32, 64]);
    assert_eq!(c["block_size"][2].as_str(), Some("64 KiB"));
    assert_eq!(c["read"][1].as_str(), Some("70%"));
    assert_eq!(c["random"][0].as_str(), Some("0%"));
    let order: Vec<&str> = c["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(order, ["queue_depth", "block_size", "read", "random"]);
    let w = &t["worker"][0];
    assert!(w.get("rate_iops").is_none(), "iorate=max: closed loop");
    assert!(
        text.contains("# t.vdb:4: forthreads=(1-64,d)\nqueue_depth = ["),
        "{text}"
    );
    resolves(&t);
}

#[test]
fn iorate_curve_is_storlabs_rate_curve_and_a_list_is_a_rate_cycle() {
    let base = "sd=sd1,lun=/tmp/a,size=64m,openflags=o_direct\nsd=sd2,lun=/tmp/b,size=64m,openflags=o_direct\nwd=wd1,sd=sd*,xfersize=8k,rdpct=50\n";
    let (_, t) = strict(&format!(
        "{base}rd=rd1,wd=wd1,iorate=curve,elapsed=60,stopcurve=5\n"
    ));
    let curve: Vec<f64> = t["curve"].as_array().unwrap().iter().map(num).collect();
    assert_eq!(
        curve,
        [10.0, 50.0, 70.0, 80.0, 90.0, 100.0],
        "vdbench's default curve"
    );
    assert_eq!(t["stop_when"].as_str(), Some("mean > 5ms"));
    resolves(&t);
    let (_, t) = strict(&format!(
        "{base}rd=rd1,wd=wd1,iorate=curve,curve=(25,50,100)\n"
    ));
    assert_eq!(t["curve"].as_array().unwrap().len(), 3);
    assert_eq!(
        t["duration"].as_str(),
        Some("30s"),
        "vdbench's default elapsed"
    );
    // Three rates of the whole run, each split over the two sds' workers.
    let (_, t) = strict(&format!("{base}rd=rd1,wd=wd1,iorate=(1000,2000,4000)\n"));
    let rates: Vec<f64> = t["cycle"]["rate"]
        .as_array()
        .unwrap()
        .iter()
        .map(num)
        .collect();
    assert_eq!(rates, [500.0, 1000.0, 2000.0]);
    resolves(&t);
}

#[test]
fn several_run_definitions_run_one_after_another_as_groups() {
    let (_, t) = strict(
        "sd=sd1,lun=/tmp/a,size=64m,openflags=o_direct\n\
         wd=seqw,sd=sd1,xfersize=128k,rdpct=0,seekpct=0\n\
         wd=randr,sd=sd1,xfersize=4k,rdpct=100\n\
         rd=default,elapsed=10,interval=1\n\
         rd=fill,wd=seqw,iorate=max\n\
         rd=read,wd=randr,iorate=200,distribution=deterministic\n",
    );
    let g: Vec<i64> = t["cycle"]["group"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_integer().unwrap())
        .collect();
    assert_eq!(g, [1, 2]);
    let w = t["worker"].as_array().unwrap();
    assert_eq!(w[0]["name"].as_str(), Some("fill.sd1"));
    assert_eq!(
        (w[0]["group"].as_integer(), w[1]["group"].as_integer()),
        (Some(1), Some(2))
    );
    assert_eq!(num(&w[1]["rate_iops"]), 200.0);
    assert_eq!(w[1]["arrivals"].as_str(), Some("uniform"));
    assert_eq!(t["duration"].as_str(), Some("10s"));
    resolves(&t);
    resolves(&t);
}

#[test]
fn windows_luns_are_placed_by_map_and_buffered_without_o_direct() {
    let text = "sd=sd1,lun=\\\\.\\PhysicalDrive1\nsd=sd2,lun=E:\\vdb.dat,size=1g\nwd=wd1,sd=(sd1,sd2)\nrd=rd1,wd=wd1,iorate=max\n";
    let opts = Options {
        lenient: false,
        map: vec![parse_map("\\\\.\\PhysicalDrive1=/dev/loop7").unwrap()],
    };
    let c = conv(text, &opts).unwrap();
    let t: toml::Table = c.toml.parse().unwrap();
    assert_eq!(t["target"][0]["path"].as_str(), Some("/dev/loop7"));
    assert_eq!(t["target"][1]["path"].as_str(), Some("storlab-sd2.dat"));
    assert!(c.toml.contains("--map \"E:\\vdb.dat=PATH\""), "{}", c.toml);
    assert_eq!(t["buffered"].as_bool(), Some(true));
    // vdbench's defaults: 4k random reads, 8 threads.
    let w = &t["worker"][0];
    assert_eq!(w["queue_depth"].as_integer(), Some(8));
    assert_eq!(w["access"][0]["block_size"].as_str(), Some("4 KiB"));
    assert_eq!(w["access"][0]["random"].as_str(), Some("100%"));
}

#[test]
fn what_storlab_cannot_do_is_refused_with_line_and_reason_unless_lenient() {
    // A file with file-system definitions is a file-system job: its block definitions, its
    // hosts and a run of no file-system workload are what storlab cannot convert.
    let text = "hd=default,vdbench=/opt/vdbench,shell=ssh\nhd=host1,system=10.0.0.1\n\
                sd=sd1,lun=/tmp/a,size=64m,openflags=o_direct\n\
                fsd=fsd1,anchor=/mnt/fs,depth=2,width=4,files=100,size=1m\n\
                wd=wd1,sd=sd1,rhpct=50,xfersize=(4k,64k,4k)\n\
                rd=rd1,wd=wd1,iorate=max,forwhpct=(10,20)\n";
    let e = conv(text, &Options::default()).unwrap_err().to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert!(lines[0].starts_with("4 options of t.vdb"), "{e}");
    let said = |at: &str, why: &str| lines.iter().any(|l| l.contains(at) && l.contains(why));
    assert!(said("t.vdb:2: hd=host1", "docs/multihost.md"), "{e}");
    assert!(said("t.vdb:3: sd=sd1", "not both"), "{e}");
    assert!(said("t.vdb:5: wd=wd1", "not both"), "{e}");
    assert!(
        said("rd=", "no run definition runs the file-system workloads"),
        "{e}"
    );
    assert!(e.contains("--lenient"), "{e}");
}

#[test]
fn a_file_of_file_system_workloads_only_is_storlab_s_fs_section() {
    let (toml, t) = strict(
        "fsd=fsd1,anchor=/mnt/fs,depth=1,width=1,files=10,size=1m\nfwd=fwd1,fsd=fsd1,operation=read\nrd=rd1,fwd=fwd1,fwdrate=max,format=yes\n",
    );
    let fs = &t["fs"];
    assert_eq!(fs["anchor"].as_str(), Some("/mnt/fs"), "{toml}");
    assert_eq!(fs["files"].as_integer(), Some(10), "{toml}");
    assert_eq!(fs["workload"][0]["mix"].as_str(), Some("read"), "{toml}");
    assert_eq!(
        fs["run"][0]["workloads"][0].as_str(),
        Some("fwd1"),
        "{toml}"
    );
    assert!(toml.contains("# t.vdb:2: fwd=fwd1"), "{toml}");
    let file: crate::workloads::fs::spec::FsFile = ::toml::from_str(&toml).unwrap();
    let data = crate::job::data::DataReduction::default;
    crate::workloads::fs::config::resolve(&file.fs, "t.vdb", data()).unwrap();
    // Leniently, a run of no workload is left in the job, and storlab fs refuses it.
    let c = conv(
        "fsd=fsd1,anchor=/mnt/fs,files=10,size=1m\nrd=rd1,fwd=fwd1\n",
        &Options {
            lenient: true,
            map: vec![],
        },
    )
    .unwrap();
    assert_eq!(c.left_out.len(), 2, "{}", c.toml);
    let file: crate::workloads::fs::spec::FsFile = ::toml::from_str(&c.toml).unwrap();
    let e = crate::workloads::fs::config::resolve(&file.fs, "t.vdb", data())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("fs.run[0].workloads") && e.contains("at least one"),
        "{e}"
    );
    // Control characters in what is left out stay out of the job's comments.
    let c = conv(
        "sd=sd1,lun=/tmp/a,size=1m,bogus=a\u{7}b\nwd=wd1,sd=sd1\nrd=a,wd=wd1,iorate=max\n",
        &Options {
            lenient: true,
            map: vec![],
        },
    )
    .unwrap();
    assert!(c.toml.parse::<toml::Table>().is_ok(), "{}", c.toml);
}

#[test]
fn run_definitions_that_disagree_on_the_job_wide_settings_are_refused() {
    let e = conv(
        "sd=sd1,lun=/tmp/a,size=1m\nwd=wd1,sd=sd1\nrd=a,wd=wd1,iorate=max,elapsed=10\nrd=b,wd=wd1,iorate=max,elapsed=20\n",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("t.vdb:4: rd=b: its elapsed") && e.contains("differ from rd=a's"),
        "{e}"
    );
    // Left out whole when lenient: one group, rd=a's.
    let c = conv(
        "sd=sd1,lun=/tmp/a,size=1m\nwd=wd1,sd=sd1\nrd=a,wd=wd1,iorate=max,elapsed=10\nrd=b,wd=wd1,iorate=max,elapsed=20\n",
        &Options { lenient: true, map: vec![] },
    )
    .unwrap();
    let t: toml::Table = c.toml.parse().unwrap();
    assert_eq!(t["worker"].as_array().unwrap().len(), 1, "{}", c.toml);
    assert_eq!(t["duration"].as_str(), Some("10s"));
}

#[test]
fn bounds_are_kept_before_anything_is_made() {
    // 100 × 100 × 100 runs: over storlab's 10000 steps.
    let e = conv(
        "sd=sd1,lun=/tmp/a,size=1m\nwd=wd1,sd=sd1\nrd=a,wd=wd1,iorate=max,forthreads=(1-100,1),forrdpct=(1-100,1),forseekpct=(1-100,1)\n",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("t.vdb:3: rd=a makes 1000000 runs"), "{e}");
    // 3 runs of 1500 sds: 4500 workers and access entries, over storlab's 4096.
    let mut text = String::new();
    for i in 0..1500 {
        text.push_str(&format!("sd=s{i},lun=/tmp/x{i},size=1m\n"));
    }
    text.push_str(
        "wd=wd1,sd=*\nrd=a,wd=wd1,iorate=max\nrd=b,wd=wd1,iorate=max\nrd=c,wd=wd1,iorate=max\n",
    );
    let e = conv(&text, &Options::default()).unwrap_err().to_string();
    assert!(e.contains("rd=c make 4500 access entries"), "{e}");
    // 100 workloads on each of 50 sds: 5000 access entries.
    let mut text = String::new();
    for i in 0..50 {
        text.push_str(&format!("sd=s{i},lun=/tmp/x{i},size=1m\n"));
    }
    for i in 0..100 {
        text.push_str(&format!("wd=w{i},sd=*\n"));
    }
    text.push_str("rd=a,iorate=max\n");
    let e = conv(&text, &Options::default()).unwrap_err().to_string();
    assert!(e.contains("5000 access entries"), "{e}");
    // A default's list counted in every definition it applies to.
    let names: Vec<String> = (0..1000).map(|i| format!("s{i}")).collect();
    let mut text = format!("wd=default,sd=({})\n", names.join(","));
    for i in 0..20 {
        text.push_str(&format!("wd=w{i}\n"));
    }
    let e = conv(&text, &Options::default()).unwrap_err().to_string();
    assert!(e.contains("more than 16384 values"), "{e}");
    assert!(
        conv(
            "* nothing but a comment\nsd=sd1,lun=/x\n",
            &Options::default()
        )
        .is_err()
    );
}

#[test]
fn seekpct_eof_runs_once_through_and_sync_flags_carry() {
    let (_, t) = strict(
        "sd=sd1,lun=/tmp/a,size=1m,openflags=(o_direct,o_sync)\nwd=wd1,sd=sd1,xfersize=64k,rdpct=0,seekpct=eof\nrd=rd1,wd=wd1,iorate=max,threads=2\n",
    );
    let w = &t["worker"][0];
    assert_eq!(
        w["io_limit"].as_integer(),
        Some(16),
        "1 MiB in 64 KiB writes"
    );
    assert_eq!(w["queue_depth"].as_integer(), Some(2), "the rd's threads");
    assert_eq!(w["access"][0]["sync"].as_bool(), Some(true));
    resolves(&t);
}
