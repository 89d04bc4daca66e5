//! The importers' layer as a whole: what every converter writes is a job storlab reads back
//! (the committed fuzz corpus round-trips), files from Windows read in their encodings, inputs
//! that were slow take time in proportion to their size, and the refusals issue 44 found
//! wrong say what is wrong.

use super::{Format, ImportError, Options, convert, convert_diskspd_line, decode, parse_map};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn strict() -> Options {
    Options::default()
}

/// A converted job read back as `storlab run` reads a job file.
fn reads_back(toml: &str) -> Result<(), String> {
    let name = Path::new("converted.toml");
    // A file-system job (vdbench's fsd/fwd/rd) is the `[fs]` section `storlab fs` reads.
    if let Ok(file) = ::toml::from_str::<crate::workloads::fs::spec::FsFile>(toml) {
        let data = crate::job::data::resolve_in(file.data.as_ref(), name, Some(toml))
            .map_err(|e| e.to_string())?;
        return crate::workloads::fs::config::resolve(&file.fs, "converted.toml", data)
            .map(drop)
            .map_err(|e| e.to_string());
    }
    let spec = crate::job::file::parse(name, toml).map_err(|e| e.to_string())?;
    crate::job::resolve(&spec, Some((name, toml)))
        .map(drop)
        .map_err(|e| e.to_string())
}

#[test]
fn every_converting_fuzz_corpus_input_gives_a_job_storlab_reads_back() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let dir = tempfile::tempdir().unwrap();
    let mut converted = 0;
    for (target, format) in [
        ("fio_job", Some(Format::Fio)),
        ("iometer_icf", Some(Format::Iometer)),
        ("vdbench_job", Some(Format::Vdbench)),
        ("diskspd_profile", Some(Format::DiskSpd)),
        ("diskspd_args", None),
    ] {
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(corpus.join(target))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        inputs.sort();
        for input in inputs {
            let bytes = std::fs::read(&input).unwrap();
            for lenient in [false, true] {
                let opts = Options {
                    lenient,
                    map: vec![],
                };
                let result = match format {
                    Some(f) => {
                        // Beside its includes' names, in a directory of its own.
                        let path = dir.path().join(input.file_name().unwrap());
                        std::fs::write(&path, &bytes).unwrap();
                        decode(&path, &bytes).and_then(|text| convert(&path, &text, f, &opts))
                    }
                    None => convert_diskspd_line(&String::from_utf8_lossy(&bytes), &opts),
                };
                if let Ok(c) = result {
                    converted += 1;
                    if let Err(e) = reads_back(&c.toml) {
                        panic!(
                            "{} (lenient {lenient}) converts to a job storlab refuses: {e}\n{}",
                            input.display(),
                            c.toml
                        );
                    }
                }
            }
        }
    }
    assert!(converted >= 10, "only {converted} conversions succeeded");
}

#[test]
fn an_iometer_queue_depth_cycle_beyond_storlab_s_deepest_queue_is_refused_at_its_line() {
    let icf = "Version 1.1.0\n'TEST SETUP ===\n'Test Type\n\tCYCLE_OUTSTANDING_IOS\n\
               'Queue Depth Cycling\n'\tstart,end,step,step type\n\t1 18446744073709551615 2 EXPONENTIAL\n\
               'ACCESS SPECIFICATIONS ===\n'Access specification name,default assignment\n\tA,ALL\n\
               'size,% of size,% reads,% random\n\t4096,100,100,100\n\
               'MANAGER LIST ===\n'Manager ID, manager name\n\t1,m\n'Worker\n\tWorker 1\n\
               'Worker type\n\tDISK\n'Target\n\tC: \"d\"\n'End manager list\n";
    let e = convert(Path::new("qd.icf"), icf, Format::Iometer, &strict())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("qd.icf:7: queue depth cycling from 1 to 18446744073709551615")
            && e.contains("at most 32768"),
        "{e}"
    );
}

#[test]
fn a_fio_block_size_storlab_cannot_run_is_refused_when_converted_not_when_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.fio");
    let text = "[j]\nbs=1000000000g\nsize=1m\nfilename=x.dat\n";
    let e = convert(&path, text, Format::Fio, &strict())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("storlab cannot run what it converts to") && e.contains("block_size"),
        "{e}"
    );
}

#[test]
fn a_diskspd_rate_beyond_storlab_s_fastest_says_so() {
    let e = convert_diskspd_line("-g99999999999999i -c1M t.dat", &strict())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("-g99999999999999i: a rate of at most 10^9 I/Os a second"),
        "{e}"
    );
    assert!(!e.contains("above 0"), "{e}");
}

#[test]
fn a_map_that_places_no_target_is_an_error_naming_the_targets() {
    let o = Options {
        lenient: false,
        map: vec![parse_map("E:=/mnt/e").unwrap()],
    };
    let e = convert_diskspd_line("-c1M -d1 D:\\test.dat", &o)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--map \"E:=/mnt/e\"") && e.contains("`D:\\test.dat`"),
        "{e}"
    );
}

/// Iometer's minimal file (its access specifications only) as Windows writes it: UTF-16 with
/// its byte-order mark, CRLF line ends, and in Windows-1252 with a `µ`.
#[test]
fn files_from_windows_are_read_in_their_encodings() {
    let icf = "Version 1.1.0 \r\n'TEST SETUP ====\r\n'Test Description\r\n\tlatency in µs\r\n\
               'ACCESS SPECIFICATIONS ====\r\n'Access specification name,default assignment\r\n\tA,ALL\r\n\
               'size,% of size,% reads,% random\r\n\t4096,100,100,100\r\n\
               'Default Disk Workers to Spawn\r\n\t1\r\n";
    let mut utf16 = vec![0xFF, 0xFE];
    for u in icf.encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    let cp1252: Vec<u8> = icf
        .chars()
        .map(|c| if c == 'µ' { 0xB5 } else { c as u8 })
        .collect();
    for bytes in [utf16, cp1252] {
        let text = decode(Path::new("w.icf"), &bytes).unwrap();
        let c = convert(Path::new("w.icf"), &text, Format::Iometer, &strict()).unwrap();
        assert!(c.toml.contains("latency in µs"), "{}", c.toml);
    }
    let xml = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\r\n<Profile><TimeSpans><TimeSpan>\
               <Duration>5</Duration><Targets><Target><Path>t.dat</Path><FileSize>1048576</FileSize>\
               </Target></Targets></TimeSpan></TimeSpans></Profile>\r\n";
    let mut utf16 = vec![0xFE, 0xFF];
    for u in xml.encode_utf16() {
        utf16.extend_from_slice(&u.to_be_bytes());
    }
    let text = decode(Path::new("p.xml"), &utf16).unwrap();
    convert(Path::new("p.xml"), &text, Format::DiskSpd, &strict()).unwrap();
    let vdb = b"* r\xe9sum\xe9 of the test\nsd=sd1,lun=/dev/sdb,size=1g\nwd=wd1,sd=sd1,xfersize=4k\nrd=rd1,wd=wd1,iorate=max,elapsed=10\n";
    let text = decode(Path::new("v.vdb"), vdb).unwrap();
    convert(Path::new("v.vdb"), &text, Format::Vdbench, &strict()).unwrap();
}

/// The least time of three runs of `f`.
fn least(mut f: impl FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// A DiskSpd profile of one element with `n` attributes (the shape that took 34 s at 150 000).
fn attributes(n: usize) -> String {
    let attrs: Vec<String> = (0..n).map(|i| format!("a{i}=\"x\"")).collect();
    format!("<Profile {}><TimeSpans/></Profile>\n", attrs.join(" "))
}

#[test]
fn a_profile_of_150000_attributes_is_refused_in_time_linear_in_its_size() {
    let big = attributes(150_000);
    let e = convert(Path::new("a.xml"), &big, Format::DiskSpd, &strict())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("a.xml:1: an element with 150000 attributes"),
        "{e}"
    );
    // Linear: ten times the attributes take about ten times as long (a quadratic parse took
    // a hundred times); the floor keeps a busy machine's scheduling noise out of the ratio.
    let small = attributes(15_000);
    let run = |t: &str| {
        let _ = convert(Path::new("a.xml"), t, Format::DiskSpd, &strict());
    };
    let (s, b) = (least(|| run(&small)), least(|| run(&big)));
    let floor = Duration::from_millis(5);
    assert!(
        b <= s.max(floor) * 40,
        "15 000 attributes: {s:?}, 150 000: {b:?}"
    );
}

#[test]
fn storlab_s_own_job_files_stay_utf8() {
    let e = crate::job::file::decode(Path::new("j.toml"), b"duration = \"1s\" # \xe9\n".to_vec())
        .unwrap_err();
    assert!(
        e.message.contains("a job file is TOML, which is UTF-8"),
        "{e}"
    );
    let e: ImportError = decode(Path::new("x.xml"), &[0xFF, 0xFE, 0x41]).unwrap_err();
    assert!(e.to_string().starts_with("x.xml: "), "{e}");
}

/// A DiskSpd profile of `n` targets in one time span (the shape the fuzz target found: 30 583
/// targets took 54 s, a line number looked up from the file's start for each worker).
fn targets(n: usize) -> String {
    let t: String = (0..n)
        .map(|i| format!("<Target><Path>t{i}</Path></Target>"))
        .collect();
    format!("<Profile><TimeSpans><TimeSpan><Targets>{t}</Targets></TimeSpan></TimeSpans></Profile>")
}

#[test]
fn a_profile_of_thousands_of_targets_converts_in_time_linear_in_its_size() {
    let lenient = Options {
        lenient: true,
        map: vec![],
    };
    let run = |t: &str| {
        let c = convert(Path::new("t.xml"), t, Format::DiskSpd, &lenient).unwrap();
        assert!(c.toml.contains("[[worker]]"));
    };
    let (small, big) = (targets(400), targets(4000));
    let (s, b) = (least(|| run(&small)), least(|| run(&big)));
    let floor = Duration::from_millis(20);
    assert!(b <= s.max(floor) * 40, "400 targets: {s:?}, 4000: {b:?}");
}
